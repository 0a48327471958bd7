import Foundation
import SignetAuth
import SignetCrypto
import SignetServer
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
        // A `User-Agent`, as the names of sessions and passkeys are made from it.
        case userAgent
        // `signet.json` and its `SIGNET_` environment, as `signet serve` loads them.
        case configuration
        // Any request to any route of the service, as a nobody, an account, an operator or a
        // signed-in browser.
        case service
        // The Public Suffix List (`relying_party.public_suffix_list`), and its own lines as hosts.
        case publicSuffixList
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

    /// The parser an input goes to: its first byte, modulo the number of parsers.
    static func kind(of input: [UInt8]) -> Kind? {
        input.first.map { Kind(rawValue: $0 % UInt8(Kind.allCases.count))! }
    }

    static func run(_ input: [UInt8]) {
        guard let kind = kind(of: input) else { return }
        let body = Array(input.dropFirst())
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
        case .emailAddress: checkEmailAddress(body)
        case .acceptLanguage:
            precondition(Notice.languages.contains(Notice.language(acceptLanguage: String(decoding: body, as: UTF8.self))), "a language Signet does not write in")
        case .recoveryCode:
            let once = Ceremonies.normalizedRecoveryCode(String(decoding: body, as: UTF8.self))
            precondition(once.count <= 64 && Ceremonies.normalizedRecoveryCode(once) == once, "recovery-code normalization is not idempotent")
        case .mailText: checkMailText(body)
        case .queryString: checkQueryString(body)
        case .managementQuery: checkManagementQuery(body)
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
        case .clientAssertion: checkClientAssertion(body)
        case .wwwAuthenticate:
            let challenges = AuthenticationChallenge.parse(String(decoding: body, as: UTF8.self))
            precondition(challenges.count <= 16 && challenges.allSatisfy { $0.parameters.count <= 32 }, "unbounded challenges")
            precondition(challenges.allSatisfy { !$0.scheme.isEmpty && $0.scheme == $0.scheme.lowercased() && $0.parameters.keys.allSatisfy { $0 == $0.lowercased() } },
                         "a scheme or a parameter name not lower-cased")
            for challenge in challenges { _ = (challenge.acrValues, challenge.maxAge, challenge.error) }
        case .cookieHeader:
            let jar = SignetService.cookies(String(decoding: body, as: UTF8.self))
            precondition(jar.count <= 64 && jar.keys.allSatisfy { !$0.utf8.contains(0x3B) }, "unbounded or split cookies")
        case .redirectURI: checkRedirectURI(body)
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
        case .httpRequest: checkHTTPRequest(body)
        case .clientSettings: checkClientSettings(body)
        case .newUser: checkNewUser(body)
        case .logStreamSettings: checkLogStreamSettings(body)
        case .branding: checkBranding(body)
        case .scim: checkSCIM(body)
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
        case .importRecord: checkImportRecord(body)
        case .sealedBackup: checkSealedBackup(body)
        case .revocation: checkRevocation(body)
        case .userAgent: checkUserAgent(body)
        case .configuration: checkConfiguration(body)
        case .service: checkService(body)
        case .publicSuffixList: checkPublicSuffixList(body)
        case .metadataBLOB: checkMetadataBLOB(body)
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
