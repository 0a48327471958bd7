import Foundation
import SignetAuth
import SignetCrypto
import SignetServer
import SignetStore
import SignetWebAuthn
import SignetAPI
import SignetCurl
import SignetHTTP
import SignetWeb

/// One fuzz input: the first byte picks the parser, the rest is its input. Every parser must
/// refuse bad input with a `WebAuthnError`, never crash, hang or leak.
enum FuzzTarget {
    static let rp: RelyingParty = {
        var rp = RelyingParty(id: "signet.test", origins: ["https://signet.test"])
        rp.allowedAlgorithms = COSEAlgorithm.all
        return rp
    }()
    static let challenge = [UInt8](repeating: 0x41, count: 32)
    static let clientData = Array(#"{"type":"webauthn.create","challenge":"QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE","origin":"https://signet.test"}"#.utf8)
    static let getClientData = Array(#"{"type":"webauthn.get","challenge":"QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE","origin":"https://signet.test"}"#.utf8)
    static let storedKey: [UInt8] = Base64URL.decode("pQECAyYgASFYIKb05iJ3CIigf1LBVCpQCcfwaPlknb-qvyCNuDjWrgzVIlggDTtcqkdKBLWYTtHUyOi1UhCrIeL1YDEbAdCwK15UrZU")!

    /// Parsers by selector byte.
    enum Kind: UInt8, CaseIterable {
        case cbor = 0, authenticatorData, attestationObject, clientData, json, coseKey, assertion, base64url
        // The HTTP adapter's and the ceremony layer's own parsers.
        case form, basicAuthorization, forwarded, cidr, sealedSession
        // Email codes and recovery.
        case tokenRequest, emailAddress, acceptLanguage, recoveryCode, mailText
        // Administration: query strings, the Management API's q, served association files.
        case queryString, managementQuery, associationFile
        // Proof of possession: DPoP proof JWTs.
        case dpopProof
        // The web: Cookie headers, redirect URIs, ui_locales and acr_values, related origins.
        case cookieHeader, redirectURI, uiLocales, relatedOrigins
        // The HTTP/1.1 request parser (RFC 9112) that reads every byte a client sends.
        case httpRequest
        // Access tokens as a bearer header or an introspection request brings them, before any
        // key is looked up; and a refresh token's storage key.
        case accessToken
        // A resource server's WWW-Authenticate, as the SDK reads it (RFC 9110 §11.6.1, RFC 9470 §3).
        case wwwAuthenticate
        // private_key_jwt: a client's JWK Set, a line break, then a client assertion checked with it.
        case clientAssertion
        // `/api/v2/clients`: a new client's body, checked as the ceremonies check a stored client.
        case clientSettings
        // `POST /api/v2/users`: a new account's body, through the checks an operator's account passes.
        case newUser
        // `/api/v2/log-streams`: a new stream's body, through the checks a stream passes.
        case logStreamSettings
        // `branding`: a colour, a line break, then a logo's first bytes.
        case branding
        // SCIM provisioning: a filter, a User body or a PATCH body, by the first byte.
        case scim
        // A role's end (`expires_at`) and the ISO 8601 times `signet admin users import` reads.
        case isoTime
        // The names of scheduled backups (`backup.directory`), which decide what is removed.
        case backupName
        // A record of `signet admin users export --all` as `users import` reads it: its ID,
        // user handle, RP ID, passkeys and device keys.
        case importRecord
        // A sealed backup (`backup.seal`, `signet backup --seal`) as `signet restore` opens it.
        case sealedBackup
        // The FIDO Metadata Service's BLOB (`attestation_metadata`): after a mode byte, 0 its
        // payload alone, else the whole JWS under a throw-away root.
        case metadataBLOB
        // What the BLOB's signing chain is checked against: after a mode byte, 0 a certificate
        // whose distribution points are read, else a revocation list.
        case revocation
    }

    /// The root the fuzzed BLOBs are checked under (none of them is signed under it).
    static let metadataRoot: Certificate = {
        let key = try! PrivateKey.generate(.ec(.p256))
        let builder = CertificateBuilder(subject: [("2.5.4.3", "Signet Fuzz Metadata Root")], notBefore: Date(timeIntervalSince1970: 1_700_000_000),
                                         notAfter: Date(timeIntervalSince1970: 1_900_000_000))
        return try! builder.sign(publicKey: key.publicKey, issuer: nil, issuerKey: key)
    }()

    /// The one trust anchor (its SHA-256) an imported passkey may be attested by.
    static let fuzzAnchors: Set<[UInt8]> = [[UInt8](repeating: 0x11, count: 32)]

    /// The key the fuzzer's sealed backups are sealed under, and what they hold.
    static let sealedBackupKEK = [UInt8](repeating: 0x5A, count: 32)
    static let sealedBackupContent = Array(String(repeating: "every account of the copy; ", count: 20).utf8)

    /// A browser-flow client: an exact, a loopback (any port) and two private-use redirect URIs,
    /// one with characters that have canonical twins (U+212A for "K", U+037E for ";").
    static let webClient: ClientConfiguration = {
        var c = ClientConfiguration(id: "spa", grants: [])
        c.redirectURIs = ["https://app.signet.test/callback", "http://127.0.0.1/cb", "com.example.app:/oauth", "com.example.Kiosk:/cb;v=1"]
        return c
    }()

    /// What `signet doctor` checks served files against: the test configuration's apps.
    static let doctor = Doctor(configuration: {
        var c = ServerConfiguration(issuer: "https://signet.test")
        c.rpID = "signet.test"
        c.clients = [ClientConfiguration(id: "app", grants: [], iosApps: [.init(teamID: "ABCDE12345", bundleID: "test.signet.app")],
                                         androidApps: [.init(packageName: "test.signet.app", fingerprints: [[UInt8](repeating: 0xB3, count: 32)])])]
        return c
    }(), options: HTTPSOptions())

    static func run(_ input: [UInt8]) {
        guard let first = input.first else { return }
        let body = Array(input.dropFirst())
        let kind = Kind(rawValue: first % UInt8(Kind.allCases.count))!
        switch kind {
        case .cbor: _ = try? CBORDecoder().decode(body)
        case .authenticatorData: _ = try? AuthenticatorData(body)
        case .attestationObject:
            _ = try? rp.verifyRegistration(
                RegistrationRequest(clientDataJSON: clientData, attestationObject: body, expectedChallenge: challenge, requireUserVerification: false),
                now: Date(timeIntervalSince1970: 1_700_000_000))
        case .clientData: _ = try? CollectedClientData(body)
        case .json:
            if let value = try? StrictJSON().parse(body) {
                // What was parsed must print and parse back to the same value.
                let again = try? StrictJSON().parse(value.serializedBytes)
                precondition(again == value, "JSON round trip changed the value")
            }
        case .coseKey: _ = try? COSEKey(body)
        case .assertion:
            _ = try? rp.verifyAuthentication(
                AuthenticationRequest(credentialID: [1], clientDataJSON: getClientData, authenticatorData: body, signature: Array(body.suffix(72)), userHandle: nil, expectedChallenge: challenge, requireUserVerification: false),
                credential: CredentialRecord(id: [1], publicKey: storedKey, signCount: 0, backupEligible: nil, userHandle: [2]),
                userIdentified: true)
        case .base64url:
            if let bytes = Base64URL.decode(bytes: body, canonical: true) {
                precondition(Base64URL.decode(Base64URL.encode(bytes)) == bytes, "base64url round trip changed the bytes")
            }
        case .form: _ = try? Wire.formToJSON(body)
        case .basicAuthorization:
            let text = String(decoding: body, as: UTF8.self)
            _ = SignetService.basicCredentials(text)
            _ = SignetService.basicCredentials("Basic " + Data(body).base64EncodedString())
        case .forwarded:
            let text = String(decoding: body, as: UTF8.self)
            precondition(SignetService.forwardedChain(forwarded: text, xForwardedFor: nil).count <= 32 * 64, "unbounded Forwarded chain")
            for address in SignetService.forwardedChain(forwarded: nil, xForwardedFor: text) { _ = CIDR(address)?.contains(address) }
        case .cidr:
            if let cidr = CIDR(String(decoding: body, as: UTF8.self)) {
                // A network contains its own address, and prints as something that parses back.
                precondition(cidr.contains(CIDR.format(cidr.address)), "a network does not contain its own address")
                precondition(CIDR(cidr.description) != nil, "CIDR round trip failed")
            }
        case .tokenRequest:
            // A token or passwordless-start body, form-encoded or JSON, as the routes read it.
            for json in [try? Wire.formToJSON(body), try? StrictJSON(maxDepth: 16, maxLength: 1 << 16).parse(body)].compactMap({ $0 }) {
                _ = try? TokenRequest(wire: json)
                _ = try? PasswordlessStartRequest(wire: json)
            }
        case .emailAddress:
            if let email = try? Ceremonies.emailAddress(String(decoding: body, as: UTF8.self), member: "email") {
                // By byte and code point: "\r\n" is one Character, which neither "\r" nor "\n" equals.
                func ats(_ text: String) -> Int { text.utf8.filter { $0 == UInt8(ascii: "@") }.count }
                func breaksHeader(_ text: String) -> Bool { text.utf8.contains { $0 == 13 || $0 == 10 || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") } }
                precondition(email.utf8.count <= 254 * 4 && ats(email) == 1, "an accepted address without one @")
                precondition(!breaksHeader(email), "an accepted address that could break a mail header")
                precondition((try? Ceremonies.emailAddress(email, member: "email")) == email, "normalizing an address twice changed it")
                // The relay's form: one @, the local part as it was, nothing that could break a header.
                let relayed = MailMessage.asciiAddress(email)
                precondition(ats(relayed) == 1 && !breaksHeader(relayed) && relayed.utf8.allSatisfy({ $0 >= 0x20 }), "the relay's form of an address could break the envelope")
                let local = { (text: String) in text.utf8.prefix { $0 != UInt8(ascii: "@") } }
                precondition(local(relayed).elementsEqual(local(email)), "the relay's form changed the local part")
            }
            // An email code as typed: bounded, and only what it was without spaces and dashes.
            let typed = Ceremonies.typedCode(String(decoding: body, as: UTF8.self))
            precondition(typed.count <= 32 && !typed.contains(where: { $0.isWhitespace || $0 == "-" }), "a typed code kept a separator or grew")
        case .acceptLanguage:
            precondition(Notice.languages.contains(Notice.language(acceptLanguage: String(decoding: body, as: UTF8.self))), "a language Signet does not write in")
        case .recoveryCode:
            let once = Ceremonies.normalizedRecoveryCode(String(decoding: body, as: UTF8.self))
            precondition(once.count <= 64 && Ceremonies.normalizedRecoveryCode(once) == once, "recovery-code normalization is not idempotent")
        case .mailText:
            let text = String(decoding: body, as: UTF8.self)
            let encoded = MailMessage.quotedPrintable(text)
            precondition(encoded.utf8.allSatisfy { $0 < 0x80 }, "quoted-printable with a byte outside ASCII")
            precondition(encoded.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 76 }, "a quoted-printable line longer than 76")
            for word in [MailMessage.encodedWord(text), MailMessage.displayName(text)] {
                // Only folds: every line after the first starts with a space, and no line holds a CR or LF of its own.
                let lines = word.components(separatedBy: "\r\n")
                precondition(lines.allSatisfy { !$0.utf8.contains { $0 == 13 || $0 == 10 } }, "a header word with a line break")
                precondition(lines.dropFirst().allSatisfy { $0.hasPrefix(" =?UTF-8?B?") }, "a header line that does not fold")
                precondition(lines.allSatisfy { !$0.contains("=?") || $0.trimmingPrefix(" ").utf8.count <= 68 }, "an encoded word longer than 68")
            }
        case .queryString:
            let text = String(decoding: body, as: UTF8.self)
            let query = HTTPRequest.parseQuery(text[...])
            precondition(query.count <= 64, "unbounded query")
            // What was decoded encodes and decodes back to itself.
            let hex = Array("0123456789ABCDEF".utf8)
            for (name, value) in query {
                var encoded: [UInt8] = []
                for b in value.utf8 { if b.isASCIIAlphanumeric { encoded.append(b) } else { encoded += [37, hex[Int(b >> 4)], hex[Int(b & 15)]] } }
                precondition(HTTPRequest.percentDecoded(encoded) == value, "percent round trip changed \(name)")
            }
        case .managementQuery:
            let text = String(decoding: body, as: UTF8.self)
            if case .prefix(let prefix)? = try? Ceremonies.emailQuery(text) { precondition(!prefix.utf8.contains(UInt8(ascii: "*")), "a prefix with a wildcard") }
            // The same text as a stats day: eight digits naming a real day, which reads back as them.
            if let day = try? Ceremonies.day(text, "from") {
                let iso = Ceremonies.iso(day * 86_400_000)
                precondition(text.utf8.count == 8 && iso.prefix(10).filter { $0 != "-" } == text, "a day that is not the one written")
            }
            // The metadata form: plain keys (no quote, dot or bracket that a JSON path would read
            // otherwise), a value without a quote, one of the two objects.
            if let match = (try? Ceremonies.metadataQuery(text)) ?? nil {
                precondition(["app_metadata", "user_metadata"].contains(match.column) && (1...5).contains(match.path.count)
                             && match.path.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy(Ceremonies.isMetadataKeyByte) } && !match.value.contains("\""), "a metadata search Signet does not make")
            }
            // The model form: a UUID in lower case, nothing else.
            if let model = (try? Ceremonies.passkeyModelQuery(text)) ?? nil {
                precondition(model.utf8.count == 36 && UUID(uuidString: model)?.uuidString.lowercased() == model, "a model that is not an AAGUID")
            }
            // The same text as `sort` and as `fields`: the column named (by creation when none is),
            // field names without a comma.
            if let (order, _) = try? Ceremonies.userOrder(text) {
                precondition(text.isEmpty ? order == .createdAt : text.utf8.starts(with: (order.rawValue + ":").utf8), "a sort on another column than named")
            }
            if let fields = try? SignetService.userFields(["fields": text]) { precondition(fields.names.allSatisfy { !$0.utf8.contains(UInt8(ascii: ",")) }, "a field name with a comma") }
            // The same text as the logs' q: what it names is quoted in it, and only events Signet writes.
            var logs = AuditQuery()
            if (try? Ceremonies.narrow(&logs, text)) != nil {
                if let user = logs.userID {
                    precondition(!user.isEmpty && !user.utf8.contains(UInt8(ascii: "\"")), "a user_id with a quote")
                    precondition(Array(text.utf8).firstRange(of: Array("user_id:\"\(user)\"".utf8)) != nil, "a user_id the text does not quote")
                }
                precondition((logs.events ?? []).allSatisfy { AuditKind(rawValue: $0.kind)?.rawValue.utf8.elementsEqual($0.kind.utf8) == true }, "an event Signet does not write")
            }
        case .associationFile:
            let response = HTTPSResponse(status: 200, headers: [("content-type", "application/json")], body: body, truncated: false)
            for checks in [doctor.appleAssociation(.success(response)), doctor.assetLinks(.success(response))] {
                precondition(checks.allSatisfy { $0.status != .fail || $0.fix != nil }, "a failed check without a fix")
            }
        case .dpopProof:
            let text = String(decoding: body, as: UTF8.self)
            if let proof = try? DPoP.verify(text, for: DPoPRequest(method: "POST", url: "https://signet.test/oauth/token"), now: Date(timeIntervalSince1970: 1_800_000_000)) {
                precondition(!proof.jkt.isEmpty && proof.jkt.utf8.count == 43, "a thumbprint that is not 32 bytes")
            }
            // The htu comparison's normalization (RFC 3986 §6.2.2): no crash, and a normalized
            // path normalizes to itself.
            _ = DPoP.normalized(text)
            if let path = DPoP.normalizedPath(text) {
                precondition(DPoP.normalizedPath(path) == path, "path normalization is not idempotent")
                precondition(!path.split(separator: "/").contains { $0 == "." || $0 == ".." } || !text.hasPrefix("/"), "a dot segment left in an absolute path")
            }
        case .accessToken:
            let text = String(decoding: body, as: UTF8.self)
            if let parts = try? JWT.parse(text, type: "at+jwt") {
                precondition(text.utf8.starts(with: parts.signed) && parts.signed.count(where: { $0 == UInt8(ascii: ".") }) == 1,
                             "the signed bytes are not the token's first two parts")
                precondition(parts.signature.count <= 72 && !parts.kid.isEmpty, "a signature longer than P-256's DER, or no kid")
            }
            if let key = Base64URL.decode(text).flatMap(RefreshToken.key) { precondition(key.count == 32, "a refresh token's key of another size") }
        case .clientAssertion:
            let lines = body.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)
            let jwt = lines.count > 1 ? String(decoding: lines[1], as: UTF8.self) : ""
            _ = ClientAssertion.issuer(of: jwt)
            guard let keys = try? JWKSet.keys(text: String(decoding: lines[0], as: UTF8.self)) else { break }
            precondition((1...ClientAssertion.maxKeys).contains(keys.count), "a JWK Set of \(keys.count) keys accepted")
            precondition(keys.allSatisfy { jwk in ["d", "p", "q", "dp", "dq", "qi", "k", "oth"].allSatisfy { jwk[$0] == nil } }, "a private member accepted")
            // What a registration stores reads back as the same keys.
            let stored = JSONValue.object(["keys": .array(keys.map(JSONValue.object))])
            precondition((try? JWKSet.keys(stored)) == keys, "a stored JWK Set does not read back as itself")
            let now: Int64 = 1_800_000_000
            if let verified = try? ClientAssertion.verify(jwt, clientID: "svc", keys: keys, audiences: ["https://signet.test"], now: now) {
                precondition(!verified.jti.isEmpty && verified.jti.utf8.count <= 256, "a jti out of bounds accepted")
                precondition(verified.exp > now - ClientAssertion.leeway && verified.exp <= now + ClientAssertion.maxLifetime + ClientAssertion.leeway, "an exp out of bounds accepted")
                precondition(ClientAssertion.issuer(of: jwt) == "svc", "a verified assertion whose iss is not the client")
            }
        case .wwwAuthenticate:
            let challenges = AuthenticationChallenge.parse(String(decoding: body, as: UTF8.self))
            precondition(challenges.count <= 16 && challenges.allSatisfy { $0.parameters.count <= 32 }, "unbounded challenges")
            precondition(challenges.allSatisfy { !$0.scheme.isEmpty && $0.scheme == $0.scheme.lowercased() && $0.parameters.keys.allSatisfy { $0 == $0.lowercased() } },
                         "a scheme or a parameter name not lower-cased")
            for challenge in challenges { _ = (challenge.acrValues, challenge.maxAge, challenge.error) }
        case .cookieHeader:
            let jar = SignetService.cookies(String(decoding: body, as: UTF8.self))
            precondition(jar.count <= 64 && jar.keys.allSatisfy { !$0.utf8.contains(0x3B) }, "unbounded or split cookies")
        case .redirectURI:
            let uri = String(decoding: body, as: UTF8.self)
            // Registered means the same bytes: Swift's `contains` would take a canonical twin.
            if Ceremonies.redirectAllowed(uri, for: webClient), !webClient.redirectURIs.containsExactly(uri) {
                precondition(["http://127.0.0.1", "http://localhost", "http://[::1]"].contains { uri.utf8.starts(with: $0.utf8) }, "a non-loopback URI matched")
                precondition(!uri.utf8.contains(UInt8(ascii: "#")), "a fragment in a redirect URI")
            }
            // A back-channel logout URI goes to libcurl as it is: visible ASCII, no fragment, and
            // an `http` one's authority, read as bytes up to the path or query, is a loopback
            // address whatever URLComponents made of it.
            if Ceremonies.isClientEndpointURI(uri) {
                let bytes = Array(uri.utf8)
                precondition(bytes.allSatisfy { (0x21...0x7E).contains($0) } && !bytes.contains(UInt8(ascii: "#")), "a logout URI curl would read otherwise")
                let lower = uri.lowercased()
                if lower.hasPrefix("http://") {
                    let authority = lower.dropFirst(7).prefix { $0 != "/" && $0 != "?" }
                    let host = authority.hasPrefix("[") ? String(authority.prefix { $0 != "]" }) + "]" : String(authority.prefix { $0 != ":" })
                    precondition(["127.0.0.1", "localhost", "[::1]"].contains(host), "an http logout URI to \(host)")
                    precondition(host.count == authority.count || authority.dropFirst(host.count).first == ":", "an http logout URI's authority \(authority)")
                } else {
                    precondition(lower.hasPrefix("https://"), "a logout URI of another scheme")
                }
            }
            let target = Ceremonies.appending(to: uri, [("code", uri), ("state", nil)])
            // Compared as bytes: `hasPrefix` compares characters, and the `?` appended to a URI that
            // ends with a prepended mark (U+0600) makes one character with it.
            precondition(target.utf8.starts(with: uri.utf8), "the redirect lost its URI")
            precondition(target.utf8.filter { $0 == UInt8(ascii: "?") }.count == max(1, uri.utf8.filter { $0 == UInt8(ascii: "?") }.count),
                         "the parameters did not join the query")
        case .uiLocales:
            let text = String(decoding: body, as: UTF8.self)
            let parts = text.split(separator: "\n", maxSplits: 1).map(String.init)
            precondition(Strings.languages.contains(Strings.language(uiLocales: parts.first, acceptLanguage: parts.last)), "a language the pages do not speak")
            // The same text as acr_values: only classes Signet reaches, each named in it by its bytes.
            for value in AuthenticationContext.requested(text) ?? [] {
                precondition(AuthenticationContext.supported.contains(value), "an acr value Signet does not reach")
                precondition(text.utf8.split(separator: UInt8(ascii: " ")).contains { $0.elementsEqual(value.utf8) }, "an acr value the text does not name")
            }
        case .relatedOrigins:
            let origins = String(decoding: body, as: UTF8.self).split(separator: "\n").prefix(64).map(String.init)
            _ = RelatedOrigins.problem(origins)
            for origin in origins { if let label = RelatedOrigins.label(host: origin) { precondition(!label.utf8.contains(UInt8(ascii: ".")), "a label with a dot") } }
        case .httpRequest:
            let parse = { (bytes: [UInt8]) in bytes.withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: 2048, maxBodyBytes: 1024) } }
            if case .request(let head, let content, let consumed) = parse(body) {
                precondition(consumed > 0 && consumed <= body.count && content.count <= 1024, "a request longer than its bytes or its cap")
                // The request ends where it says: one byte short of it is not yet a request, and the
                // same bytes alone give the same request.
                let short = parse(Array(body.prefix(consumed - 1)))
                precondition(short == .incomplete(expectsContinue: false) || short == .incomplete(expectsContinue: true), "a request whole before its last byte")
                precondition(parse(Array(body.prefix(consumed))) == .request(head, body: content, consumed: consumed), "a request that depends on the bytes after it")
                precondition(!head.path.utf8.contains(0) && head.headers.count <= 100, "a NUL in a path or unbounded headers")
            }
            // Read in two pieces, split where the input's first byte says, the bytes give what
            // they give in one call.
            if !body.isEmpty {
                let split = Int(body[0]) * body.count / 256
                var progress = ParseProgress()
                let first = Array(body.prefix(split)).withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: 2048, maxBodyBytes: 1024, progress: &progress) }
                let resumed: ParsedRequest
                if case .incomplete = first {
                    resumed = body.withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: 2048, maxBodyBytes: 1024, progress: &progress) }
                } else {
                    resumed = parse(body)
                }
                precondition(resumed == parse(body), "a request read in two pieces differs from the same bytes read at once")
                // The same, with the chunks read from the first piece dropped before the second:
                // the same body, as many bytes fewer consumed as were dropped.
                if case .incomplete = first {
                    var compacted = ParseProgress()
                    var input = Array(body.prefix(split))
                    _ = input.withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: 2048, maxBodyBytes: 1024, progress: &compacted) }
                    let dropped = RequestParser.compactChunks(&input, progress: &compacted)
                    input += body[split...]
                    let after = input.withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: 2048, maxBodyBytes: 1024, progress: &compacted) }
                    switch (after, resumed) {
                    case let (.request(h1, b1, c1), .request(h2, b2, c2)):
                        precondition(h1.path == h2.path && b1 == b2 && c1 + dropped == c2, "a compacted chunked body differs")
                    case (.request, _), (_, .request):
                        preconditionFailure("compacting chunks changed whether a request was read")
                    default:
                        precondition(after == resumed, "compacting chunks changed a refusal")
                    }
                }
            }
        case .clientSettings:
            guard let json = try? StrictJSON().parse(body), let new = try? NewClient(wire: json) else { break }
            let p = new.patch
            let row = ClientRow(id: "c_fuzz", name: new.name, type: new.type, secretHash: nil, grants: p.grants ?? [], scopes: p.scopes ?? [],
                                redirectURIs: p.redirectURIs ?? [], audiences: p.audiences ?? nil, createdAt: 0, postLogoutRedirectURIs: p.postLogoutRedirectURIs ?? [],
                                backchannelLogoutURI: p.backchannelLogoutURI ?? nil, jwks: p.jwks, requirePushedRequests: p.requirePushedRequests ?? false,
                                jwksURI: p.jwksURI, requiredRoles: p.requiredRoles ?? nil, minimumACR: p.minimumACR ?? nil,
                                refreshTokenLifetime: p.refreshLifetimes?.idle, refreshTokenAbsoluteLifetime: p.refreshLifetimes?.absolute,
                                refreshTokenRetryWindow: p.refreshLifetimes?.retryWindow)
            guard (try? Ceremonies.validate(row)) != nil else { break }
            // Lists are stored as space-separated words: what is accepted reads back as itself.
            for list in [row.grants, row.scopes, row.redirectURIs, row.postLogoutRedirectURIs, row.audiences ?? []] {
                precondition(list.count <= 100, "an unbounded list accepted")
                precondition(list.joined(separator: " ").split(separator: " ").map(String.init) == list, "a stored list would read back otherwise")
            }
            precondition(row.name.count <= 100 && !(row.usesKeys && row.type == "public"), "a name too long, or keys on a public client")
            // One place for a client's keys, and a published set's address is one curl may call.
            precondition(!(row.jwks != nil && row.jwksURI != nil) && row.jwksURI.map(Ceremonies.isClientEndpointURI) != false, "two places for keys, or a bad jwks_uri")
            // The client's policy: 1 to 20 roles, once each; a class Signet reaches; lifetimes in bounds.
            precondition(row.requiredRoles.map { (1...20).contains($0.count) && Set($0).count == $0.count } != false, "required_roles out of bounds")
            precondition(row.minimumACR.map(AuthenticationContext.supported.contains) != false, "a minimum_acr Signet never reaches")
            precondition([row.refreshTokenLifetime, row.refreshTokenAbsoluteLifetime].allSatisfy { $0.map(Ceremonies.refreshLifetimeRange.contains) != false },
                         "a session lifetime out of bounds")
            precondition(row.refreshTokenRetryWindow.map(Ceremonies.refreshRetryWindowRange.contains) != false, "a retry window out of bounds")
        case .newUser:
            guard let json = try? StrictJSON().parse(body), let new = try? ManagementNewUser(wire: json),
                  let (email, name, language) = try? Ceremonies.checked(new) else { break }
            precondition(email.unicodeScalars.filter { $0 == "@" }.count == 1 && email == email.lowercased(), "an address with other than one @, or not lower case")
            precondition(!email.unicodeScalars.contains { $0.properties.isWhitespace || Ceremonies.isUnsafeInText($0) }, "an address with a space or control")
            precondition(name.map { $0.count <= 256 && !$0.isEmpty && !$0.unicodeScalars.contains(where: Ceremonies.isUnsafeInText) } ?? true, "an unsafe name")
            precondition(Notice.languages.contains(language), "a language messages are not written in")
            // Metadata accepted is an object of at most the limit that reads back as itself.
            for document in [new.app_metadata, new.user_metadata].compactMap({ $0 }) {
                guard let text = try? Ceremonies.mergedMetadata(nil, document, member: "metadata") else { continue }
                precondition(text.utf8.count <= Ceremonies.metadataLimit && Ceremonies.metadataDocument(text).map { Ceremonies.metadataDocument(try? Ceremonies.mergedMetadata(nil, $0, member: "m")) == $0 } == true,
                             "metadata over the limit, or that does not read back as itself")
            }
        case .logStreamSettings:
            guard let json = try? StrictJSON().parse(body), let settings = try? LogStreamSettings(wire: json, new: true),
                  let name = settings.name, let endpoint = settings.endpoint else { break }
            let row = LogStreamRow(id: "lst_fuzz", name: name, status: settings.status ?? "active", endpoint: endpoint, contentType: settings.contentType ?? "application/json",
                                   contentFormat: settings.contentFormat ?? "JSONARRAY", filters: settings.filters ?? [], authorization: nil, createdAt: 0)
            guard (try? Ceremonies.validate(row, authorization: settings.authorization ?? nil)) != nil else { break }
            // What goes into a request's head is one header line each: nothing can add another.
            for value in [row.contentType, (settings.authorization ?? nil) ?? ""] {
                precondition(!value.utf8.contains { $0 < 0x20 || $0 > 0x7E }, "a header value with a line break, a control or a non-ASCII byte")
            }
            precondition(Ceremonies.isClientEndpointURI(row.endpoint) && ["JSONARRAY", "JSONLINES", "JSONOBJECT"].contains(row.contentFormat), "an endpoint curl may not call, or an unknown format")
            // Filters are known categories, each once, and read back from their stored words as themselves.
            precondition(row.filters.allSatisfy(AuditKind.streamCategories.contains) && Set(row.filters).count == row.filters.count
                         && row.filters.joined(separator: " ").split(separator: " ").map(String.init) == row.filters, "a filter that is no category, or twice")
        case .branding:
            let cut = body.firstIndex(of: 0x0A) ?? body.endIndex
            if let color = Color(hex: String(decoding: body[..<cut], as: UTF8.self)) {
                // Only a colour goes into the stylesheet: it reads back as itself, six hex digits.
                let hex = color.description
                precondition(Color(hex: hex) == color && hex.utf8.count == 7 && hex.utf8.dropFirst().allSatisfy { $0.isASCIIHexLower }, "a colour written otherwise")
                precondition(color.contrast(with: color.textOn) >= Branding.minimumContrast, "button text under 4.5:1")
                let css = Stylesheet.brand(primary: hex, primaryText: color.textOn.description, accent: hex, darkAccent: hex, background: hex)
                precondition(css.utf8.allSatisfy { $0 == 0x0A || (0x20..<0x7F).contains($0) } && !css.contains("<"), "the stylesheet carries more than colours")
            }
            let image = Array(body[cut...].dropFirst())
            if let type = Branding.imageType(image) {
                precondition(["image/png", "image/jpeg", "image/webp"].contains(type) && image.first != UInt8(ascii: "<"), "an image type that may run script")
            }
        case .scim:
            guard let mode = body.first else { break }
            let rest = body.dropFirst()
            switch mode % 5 {
            case 0:
                // A filter read is one attribute and a value that is not empty.
                if let filter = try? SCIM.filter(String(decoding: rest, as: UTF8.self)) {
                    switch filter {
                    case .userName(let v), .email(let v), .displayName(let v), .externalID(let v), .id(let v): precondition(!v.isEmpty && v.utf8.count <= 512, "an empty or unbounded filter value")
                    }
                }
            case 3, 4:
                // A Group's members are bounded, each an ID of 1 to 128 bytes, never both added and removed.
                guard let json = try? StrictJSON(maxDepth: 16).parse(rest), let input = try? (mode % 5 == 3 ? SCIM.group(json) : SCIM.groupPatch(json)) else { break }
                let named = (input.members ?? []) + input.adding + input.removing
                precondition(named.count <= SCIM.maxMembers && named.allSatisfy { (1...128).contains($0.utf8.count) }, "unbounded members")
                precondition(Set(input.adding).isDisjoint(with: input.removing) && Set(input.adding).count == input.adding.count, "a member both added and removed")
            default:
                guard let json = try? StrictJSON(maxDepth: 16).parse(rest) else { break }
                // What a body sets reads back from it alone; a userName kept is bounded and has no
                // control character.
                if let input = try? (mode % 5 == 1 ? SCIM.user(json) : SCIM.patch(json)) {
                    for value in [input.email, input.userName].compactMap({ $0 }) {
                        precondition(json.serialized.contains(JSONValue.string(value).serialized), "a value from nowhere")
                    }
                    if let name = input.userName {
                        precondition((1...256).contains(name.utf8.count) && !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "an unbounded userName")
                    }
                }
            }
        case .isoTime:
            // A time read is written back as itself, to the millisecond; a role's end is within
            // a year from now, never past.
            let text = String(decoding: body, as: UTF8.self)
            if let millis = Ceremonies.millis(iso: text) {
                precondition(Ceremonies.millis(iso: Ceremonies.iso(millis)) == millis, "a time that does not read back as itself")
            }
            let now: Int64 = 1_796_509_545_405
            if let end = try? Ceremonies.roleEnd(text, now: now) {
                precondition(end > now && end - now <= Ceremonies.longestRoleGrant, "a role's end outside its bounds")
            }
        case .backupName:
            // A name taken for a copy is exactly the name of its time: no other file is ever
            // counted, or removed, as one.
            let name = String(decoding: body, as: UTF8.self)
            for suffix in ScheduledBackup.suffixes + ScheduledBackup.leftovers {
                if let at = ScheduledBackup.time(of: name, suffix: suffix) {
                    precondition(at >= 0 && at % 1000 == 0 && ScheduledBackup.prefix + ScheduledBackup.stamp(at: at) + suffix == name, "a name that is not its time's")
                }
            }
            if let at = ScheduledBackup.time(of: name) {
                precondition([true, false].contains { ScheduledBackup.name(at: at, sealed: $0) == name }, "a copy's name that is not its time's")
            }
        case .importRecord:
            // A passkey taken is one a registration could have written, and reads back as
            // itself through the export.
            guard let record = try? StrictJSON(maxDepth: 32, maxLength: 1 << 20).parse(body), let identity = try? ExportedIdentity(record: record) else { return }
            let now: Int64 = 1_796_509_545_405
            for passkey in identity.passkeys {
                guard let row = try? Ceremonies.importedPasskey(passkey, now: now, trusted: Self.fuzzAnchors) else { continue }
                precondition((1...AuthenticatorData.maxCredentialIDLength).contains(row.id.count), "a credential ID out of bounds")
                precondition((try? COSEKey(row.publicKey))?.algorithm.rawValue == row.algorithm, "a key that does not parse as its algorithm")
                precondition((0...Int64(UInt32.max)).contains(row.signCount) && (row.backupEligible || !row.backupState), "a counter or backup flags out of bounds")
                precondition([row.createdAt, row.lastUsedAt ?? 0, row.revokedAt ?? 0].allSatisfy { (0...now).contains($0) }, "a time out of bounds")
                precondition(row.transports.count <= 8 && row.transports.allSatisfy { $0.utf8.count <= 32 }, "transports out of bounds")
                precondition(row.attested == (row.attestationRoot.map(Self.fuzzAnchors.contains) ?? false), "attested without a trusted anchor")
                precondition((try? Ceremonies.importedPasskey(Ceremonies.exported(row, authenticator: nil), now: now, trusted: Self.fuzzAnchors)) == row, "a passkey that does not read back as itself")
            }
            for key in identity.deviceKeys {
                guard let row = try? Ceremonies.importedDeviceKey(key, now: now) else { continue }
                precondition((1...64).contains(row.id.utf8.count) && (try? PublicKey(spki: row.publicKey))?.kind == .ec(.p256), "a device key ID or key out of bounds")
                precondition(["ios", "android"].contains(row.platform) && (1...128).contains(row.deviceID.count), "a platform or device out of bounds")
                precondition([row.createdAt, row.lastUsedAt ?? 0, row.revokedAt ?? 0].allSatisfy { (0...now).contains($0) } && row.recoveryID == nil, "a time out of bounds")
                precondition((try? Ceremonies.importedDeviceKey(Ceremonies.exported(row), now: now)) == row, "a device key that does not read back as itself")
            }
            precondition((0...1_000).contains(identity.unusedRecoveryCodes), "a count of recovery codes out of bounds")
            for role in identity.roles {
                guard let (name, _) = try? Ceremonies.importedRole(role) else { continue }
                precondition((1...256).contains(name.count) && name == name.trimmingCharacters(in: .whitespacesAndNewlines), "a role's name out of bounds")
                precondition(!name.unicodeScalars.contains(where: Ceremonies.isUnsafeInText), "a role's name with a control character")
                precondition((try? Ceremonies.importedRole(ExportedRole(name: name, expires_at: nil)))?.name == name, "a role's name that does not read back as itself")
            }
        case .sealedBackup:
            // What opens under the key is exactly what was sealed: no altered, cut, moved or
            // spliced file opens, and none crashes the reader.
            let folder = NSTemporaryDirectory() + "signet-fuzz-\(getpid())"
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let (sealed, plain) = (folder + "/sealed", folder + "/plain")
            try? FileManager.default.removeItem(atPath: plain)
            guard FileManager.default.createFile(atPath: sealed, contents: Data(body)) else { return }
            if (try? SealedBackup.open(sealed, to: plain, kek: Self.sealedBackupKEK)) != nil {
                precondition(FileManager.default.contents(atPath: plain).map(Array.init) == Self.sealedBackupContent, "an altered sealed file opened")
            } else {
                precondition(!FileManager.default.fileExists(atPath: plain), "a refused sealed file left its output")
            }
        case .revocation:
            guard let mode = body.first else { return }
            let rest = Array(body.dropFirst())
            if mode == 0 {
                for point in (try? Certificate(der: rest))?.crlDistributionPoints ?? [] {
                    precondition(!point.isEmpty && point.utf8.allSatisfy { (0x21...0x7e).contains($0) }, "a point that is not visible ASCII")
                }
            } else if let list = try? CertificateRevocationList(der: rest) {
                precondition(list.der.count <= CertificateRevocationList.maxLength * 2, "a list that grew")
            }
        case .metadataBLOB:
            // A model refused at sign-in is refused at registration too (its statuses are a
            // subset), and every model is keyed by its AAGUID in lower case.
            guard let mode = body.first else { return }
            let rest = Array(body.dropFirst())
            let blob: MetadataBLOB?
            if mode == 0 {
                blob = (try? StrictJSON(maxLength: 1 << 20).parse(rest)).flatMap { try? MetadataBLOB(payload: $0) }
            } else {
                blob = try? MetadataBLOB(jws: rest, anchor: Self.metadataRoot, now: Date(timeIntervalSince1970: 1_800_000_000))
                precondition(blob == nil, "a BLOB not signed under the root was read")
            }
            for (aaguid, entry) in blob?.entries ?? [:] {
                precondition(UUID(uuidString: aaguid)?.uuidString.lowercased() == aaguid, "a model keyed by \(aaguid)")
                for now in [Date.distantPast, Date(timeIntervalSince1970: 1_800_000_000), .distantFuture] where entry.refusal(for: .signIn, at: now) != nil {
                    precondition(entry.refusal(for: .registration, at: now) != nil, "refused at sign-in, admitted at registration")
                }
            }
        case .sealedSession:
            if let session = SessionSealer.decode(body) {
                precondition(SessionSealer.encode(session).flatMap(SessionSealer.decode) == session, "session round trip changed it")
            }
        }
    }
}

extension UInt8 {
    var isASCIIAlphanumeric: Bool { (0x30...0x39).contains(self) || (0x41...0x5a).contains(self) || (0x61...0x7a).contains(self) }
    var isASCIIHexLower: Bool { (0x30...0x39).contains(self) || (0x61...0x66).contains(self) }
}
