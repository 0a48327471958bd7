import Foundation
import SignetAuth
import SignetWebAuthn
import SignetSoftware
import SignetCrypto
import SignetStore

#if SIGNET_LIBFUZZER
/// libFuzzer's per-input callback (scripts/fuzz.sh builds with -sanitize=fuzzer,address).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    // With SIGNET_FUZZ_KIND=N every input goes to parser N (one target at a time). Without, the
    // parsers share the run and the service is left to a run of its own (scripts/fuzz.sh).
    if let kind = onlyKind {
        FuzzTarget.run([kind] + input.dropFirst())
    } else if FuzzTarget.kind(of: input) != .service {
        FuzzTarget.run(input)
    }
    return 0
}

let onlyKind: UInt8? = ProcessInfo.processInfo.environment["SIGNET_FUZZ_KIND"].flatMap { UInt8($0) }

/// libFuzzer's driver, from the toolchain's compiler-rt.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// SwiftPM links executables through a renamed entry point (`<target>_main`), so libFuzzer's
/// own `main` is never used; this one hands control to libFuzzer's driver instead.
@_cdecl("SignetFuzz_main")
public func signetFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var vector = argv
    return LLVMFuzzerRunDriver(&count, &vector, fuzzOneInput)
}
#else
/// Without libFuzzer the same code replays a corpus (`replay DIR...`), makes the seed corpus
/// from the WebAuthn fixtures (`seed FIXTURES OUT`), or prints how many parsers it has (`kinds`)
/// or the number of one (`kind service`).
@main
enum FuzzReplay {
    static func main() throws {
        let args = Array(CommandLine.arguments.dropFirst())
        switch args.first {
        case "seed" where args.count == 3: try seed(fixtures: URL(fileURLWithPath: args[1]), out: URL(fileURLWithPath: args[2]))
        case "replay":
            var count = 0
            for dir in args.dropFirst() {
                for file in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
                    guard let data = FileManager.default.contents(atPath: dir + "/" + file) else { continue }
                    FuzzTarget.run([UInt8](data))
                    count += 1
                }
            }
            print("replayed \(count) inputs without a crash")
        case "kinds": print(FuzzTarget.Kind.allCases.count)
        case "kind" where args.count == 2:
            guard let kind = FuzzTarget.Kind.allCases.first(where: { "\($0)" == args[1] }) else { exit(2) }
            print(kind.rawValue)
        default:
            FileHandle.standardError.write(Data("usage: SignetFuzz seed FIXTURES OUT | replay DIR... | kinds | kind NAME\n".utf8))
            exit(2)
        }
    }

    /// Writes one input per parser and fixture field: attestation objects, authenticator data,
    /// client data, COSE keys and the fixture JSON itself.
    static func seed(fixtures: URL, out: URL) throws {
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        var n = 0
        func write(_ kind: FuzzTarget.Kind, _ bytes: [UInt8]) throws {
            n += 1
            try Data([kind.rawValue] + bytes).write(to: out.appendingPathComponent(String(format: "seed-%04d", n)))
        }
        let enumerator = FileManager.default.enumerator(at: fixtures, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "json", let data = FileManager.default.contents(atPath: url.path),
                  let json = try? StrictJSON(maxLength: 1 << 20).parse([UInt8](data)) else { continue }
            if data.count < 16 * 1024 { try write(.json, [UInt8](data)) }
            let response = json["credential"]?["response"]
            func field(_ value: JSONValue?) -> [UInt8]? { value?.string.flatMap { Base64URL.decode($0) } }
            if let object = field(response?["attestationObject"]) {
                try write(.attestationObject, object)
                try write(.cbor, object)
            }
            if let authData = field(response?["authenticatorData"]) {
                try write(.authenticatorData, authData)
                try write(.assertion, authData)
            }
            if let clientData = field(response?["clientDataJSON"]) { try write(.clientData, clientData) }
            if let key = field(json["credential_public_key"]) ?? field(json["expect"]?["credential_public_key"]) { try write(.coseKey, key) }
            if let challenge = json["expected_challenge"]?.string { try write(.base64url, Array(challenge.utf8)) }
        }
        // The adapter's parsers, seeded with what real requests carry.
        for form in ["grant_type=refresh_token&client_id=app&refresh_token=abc%2Bdef", "a=%7B%22b%22%3A1%7D&c=", "x=%zz&=&&"] {
            try write(.form, Array(form.utf8))
        }
        for basic in ["Basic YmFuazpzM2NyZXQ=", "basic Ym9i", "Basic Oj%41"] { try write(.basicAuthorization, Array(basic.utf8)) }
        for header in [#"for=192.0.2.60;proto=https, for="[2001:db8::17]:4711""#, "198.51.100.1, 10.1.2.3", #"for=unknown;by="_hidden""#] {
            try write(.forwarded, Array(header.utf8))
        }
        for agent in ["SignetClient (iOS 18.1)", "SignetClient (", "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP2A.240905.003)",
                      "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0 Mobile/15E148 Safari/604.1",
                      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0"] {
            try write(.userAgent, Array(agent.utf8))
        }
        for cidr in ["10.0.0.0/8", "2001:db8::/32", "::ffff:127.0.0.1", "::1", "0.0.0.0/0"] { try write(.cidr, Array(cidr.utf8)) }
        // What operators page and search with: a page of sessions' `from` (browsers' from the
        // start, apps' after one), a search, a day, a metadata match, a sort.
        let cursors = [SessionCursor(apps: false, after: nil), SessionCursor(apps: true, after: SessionPosition(createdAt: 1_765_000_000_000, id: "AZrC3sid:x"))]
        for query in cursors.map(\.text) + ["email:ada*", #"user_id:"auth0|abc" AND type:f"#, "20261207", "app_metadata.plan:pro", "created_at:-1"] {
            try write(.managementQuery, Array(query.utf8))
        }
        let session = AuthSession(
            id: Array(repeating: 1, count: 16), kind: .stepUp, clientID: "app", challenge: Array(repeating: 2, count: 32), userID: "u", userHandle: [3],
            email: "a@b.c", name: "A", allowCredentials: [[4, 5]], requireUserVerification: true, expiresAt: 1_800_000_000_000)
        if let plain = SessionSealer.encode(session) { try write(.sealedSession, plain) }
        // Adding a passkey: the beginning session's sid rides along (flag bit 5).
        let adding = AuthSession(id: Array(repeating: 6, count: 16), kind: .addPasskey, clientID: "app", challenge: Array(repeating: 7, count: 32), userID: "u",
                                 userHandle: [8], requireUserVerification: false, expiresAt: 1_800_000_000_000, beganBy: "AZrC3sid")
        if let plain = SessionSealer.encode(adding) { try write(.sealedSession, plain) }
        for cookie in ["__Host-signet_session=abc; signet_browser=def", "a=b;;c", "=x; y=", String(repeating: "k=v; ", count: 80)] {
            try write(.cookieHeader, Array(cookie.utf8))
        }
        for uri in ["https://app.signet.test/callback", "http://127.0.0.1:53211/cb", "com.example.app:/oauth", "http://localhost:1/cb?x=1", "https://evil.example/#x"] {
            try write(.redirectURI, Array(uri.utf8))
        }
        for locales in ["es-MX fr\nen;q=0.5", "\nde, es;q=0.8, en;q=0.2", "zz\nq=1;es"] { try write(.uiLocales, Array(locales.utf8)) }
        for request in ["POST /oauth/token HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
                        "POST /passkey/challenge HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\n{}\r\n0\r\nT: 1\r\n\r\n",
                        "GET http://a/me%7Cx?q=%2F HTTP/1.0\r\nConnection: keep-alive\r\nExpect: 100-continue\r\n\r\n"] {
            try write(.httpRequest, Array(request.utf8))
        }
        try write(.relatedOrigins, Array("https://shop.example.co.uk\nhttps://a.example\nhttp://localhost\nhttps://1.2.3.4".utf8))
        try write(.publicSuffixList, Array("// rules, then hosts\ncom\nco.uk\n*.ck\n!www.ck\ngithub.io extra\nme.github.io\nx.www.ck\na.b.ck\nShop.Example.CO.UK.\n".utf8))
        let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"k1","typ":"at+jwt"}"#.utf8))
        let claims = Base64URL.encode(Array(#"{"iss":"https://signet.test","sub":"u","aud":["https://signet.test/me"],"exp":1800000000,"sid":"s","cnf":{"jkt":"x"}}"#.utf8))
        try write(.accessToken, Array("\(header).\(claims).\(Base64URL.encode([UInt8](repeating: 0x81, count: 64)))".utf8))
        try write(.accessToken, Array(Base64URL.encode([UInt8](repeating: 7, count: 48)).utf8))
        // A client's key and an assertion it signed, for each algorithm, valid at the fuzz target's `now`.
        for alg in ClientAssertion.algorithms {
            let key = try SoftwareClientKey(algorithm: alg, kid: "k-" + alg)
            let jwt = try key.assertion(clientID: "svc", audience: "https://signet.test", lifetime: 60, now: Date(timeIntervalSince1970: 1_800_000_000))
            try write(.clientAssertion, Array((key.jwks.serialized + "\n" + jwt).utf8))
            try write(.clientSettings, Array(#"{"name":"Batch","grant_types":["client_credentials"],"scopes":["read:users"],"jwks":"#.utf8) + Array(key.jwks.serialized.utf8) + [UInt8(ascii: "}")])
        }
        // A new client's body: a public web client with its addresses.
        try write(.clientSettings, Array(#"{"name":"Published","grant_types":["client_credentials"],"jwks_uri":"https://keys.example/jwks.json"}"#.utf8))
        try write(.clientSettings, Array(#"{"name":"Console","token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"required_roles":["Admin","Branch manager"],"minimum_acr":"phrh","refresh_token":{"idle_token_lifetime":28800,"token_lifetime":86400,"leeway":30}}"#.utf8))
        try write(.clientSettings, Array(#"{"name":"Web","token_endpoint_auth_method":"none","grant_types":["authorization_code"],"callbacks":["https://a.example/cb"],"audiences":["https://api.example"],"oidc_logout":{"backchannel_logout_urls":["https://a.example/logout"]}}"#.utf8))
        // Branding: colours in each form, with a PNG's, a JPEG's, a WebP's and an SVG's first bytes.
        for (color, image) in [("#0a7d5a", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), ("#FA0", [0xFF, 0xD8, 0xFF, 0xE0]),
                               ("#f7f3ea", Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)), ("#fff", Array("<svg>".utf8))] as [(String, [UInt8])] {
            try write(.branding, Array(color.utf8) + [0x0A] + image)
        }
        // SCIM: a filter, an Okta-like User and an Entra-like PATCH.
        try write(.scim, [0] + Array(#"userName eq "ada@example.com""#.utf8))
        try write(.scim, [1] + Array(#"{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"ada@example.com","name":{"givenName":"Ada","familyName":"L"},"emails":[{"primary":true,"value":"ada@example.com"}],"active":true,"externalId":"00u1"}"#.utf8))
        try write(.scim, [2] + Array(#"{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"active","value":"False"},{"op":"remove","path":"externalId"}]}"#.utf8))
        // A Metadata Service payload, and a BLOB signed by a key of its own x5c.
        let statement = #"{"no":12,"nextUpdate":"2027-01-01","entries":[{"aaguid":"cb69481e-8ff7-4039-93ec-0a2729a154a8","metadataStatement":{"description":"Key","attestationRootCertificates":[]},"statusReports":[{"status":"FIDO_CERTIFIED","effectiveDate":"2024-01-01"},{"status":"REVOKED"}]},{"aaid":"4e4e#4005"}]}"#
        try write(.metadataBLOB, [0] + Array(statement.utf8))
        let signing = try PrivateKey.generate(.ec(.p256))
        let leaf = try CertificateBuilder(subject: [("2.5.4.3", "Seed")], notBefore: Date(timeIntervalSince1970: 1_700_000_000), notAfter: Date(timeIntervalSince1970: 1_900_000_000))
            .sign(publicKey: signing.publicKey, issuer: nil, issuerKey: signing)
        let blobHeader = Base64URL.encode(JSONValue.object(["alg": .string("ES256"), "typ": .string("JWT"), "x5c": .array([.string(Data(leaf.der).base64EncodedString())])]).serializedBytes)
        let signingInput = blobHeader + "." + Base64URL.encode(Array(statement.utf8))
        try write(.metadataBLOB, [1] + Array((signingInput + "." + Base64URL.encode(try signing.signES256(Array(signingInput.utf8)))).utf8))
        // A certificate naming two distribution points, and a list revoking two serial numbers.
        var named = CertificateBuilder(subject: [("2.5.4.3", "Seed CA")], notBefore: Date(timeIntervalSince1970: 1_700_000_000), notAfter: Date(timeIntervalSince1970: 1_900_000_000))
        let points = ["http://crl.example/ca.crl", "ldap://crl.example/cn=ca"].map { DER.tagged(6, constructed: false, Array($0.utf8)) }
        named.extensions = [("2.5.29.31", false, DER.sequence([DER.sequence([DER.tagged(0, DER.tagged(0, points.flatMap { $0 }))])]))]
        let ca = try named.sign(publicKey: signing.publicKey, issuer: nil, issuerKey: signing)
        try write(.revocation, [0] + ca.der)
        try write(.revocation, [1] + CertificateRevocationList.sign(issuer: ca, issuerKey: signing, revoked: [2, 70_000],
                                                                    thisUpdate: Date(timeIntervalSince1970: 1_700_000_000), nextUpdate: Date(timeIntervalSince1970: 1_900_000_000)).der)
        // Times: a role's end with a zone, an offset and a fraction.
        for time in ["2026-12-05T22:25:45.405Z", "2026-12-06T01:00:00+01:00", "2027-01-01T00:00:00Z"] { try write(.isoTime, Array(time.utf8)) }
        for name in ["signet-20261206T010000Z.db", "signet-20261231T235959Z.db.part", "signet-20260230T000000Z.db"] { try write(.backupName, Array(name.utf8)) }
        // An export's record with a passkey of each key type.
        var passkeys: [String] = []
        for (kind, algorithm) in [(PrivateKey.Kind.ec(.p256), COSEAlgorithm.es256), (.edwards(.ed25519), .eddsa), (.rsa(bits: 2048), .rs256)] {
            let key = Base64URL.encode(try PrivateKey.generate(kind).publicKey.coseKey(algorithm: algorithm))
            passkeys.append(#"{"id":"\#(Base64URL.encode(Array(repeating: UInt8(passkeys.count), count: 16)))","public_key":"\#(key)","algorithm":\#(algorithm.rawValue),"sign_count":7,"aaguid":"fbfc3007-154e-4ecc-8c0b-6e020557d7bd","attestation_format":"none","backup_eligible":true,"backup_state":true,"transports":["internal","hybrid"],"name":"Laptop","created_at":1790000000,"last_used_at":1790000100\#(passkeys.isEmpty ? #","attestation_root":"\#(Base64URL.encode([UInt8](repeating: 0x11, count: 32)))""# : "")}"#)
        }
        try write(.importRecord, Array(#"{"user_id":"0002e7a6-9ad8-45b0-9988-7617ba8a5766","email":"ada@example.com","user_handle":"xWapA9L1Ntoux7-iAY5V1lwC9O-NqIB7Fgu_ckfdLF4","rp_id":"example.com","passkeys":[\#(passkeys.joined(separator: ","))],"device_keys":[{"id":"dk_AAAAAAAAAAAAAAAAAAAA","device_id":"iPhone","platform":"ios","name":"Phone","public_key":"\#(Base64URL.encode(try PrivateKey.generate(.ec(.p256)).publicKey.spki))","created_at":1790000000,"approved_by":"AAAAAAAAAAAAAAAAAAAAAA"}],"roles":[{"name":"support"},{"name":"auditor","expires_at":"2027-01-01T00:00:00.000Z"}],"unused_recovery_codes":7}"#.utf8))
        // Configurations: a deployment with apps, mail and branding; a web client's; and settings
        // given as the environment's text (numbers and lists as strings).
        try write(.configuration, Array(##"{"issuer":"https://auth.example.com","listen":"0.0.0.0:9000","database":"sqlite:/var/lib/signet/signet.db","relying_party":{"id":"example.com","name":"Example","origins":["https://example.com"],"related_origins":["https://example.co.uk"]},"clients":[{"client_id":"mobile","ios":[{"team_id":"ABCDE12345","bundle_id":"com.example.app"}],"android":[{"package_name":"com.example.app","sha256_cert_fingerprints":["B3:5D:8D:A5:8A:F0:E4:59:8A:B9:2C:40:05:BE:D4:06:CD:87:CE:65:E7:5C:2A:48:E9:7C:DA:98:6B:A9:1B:5E"]}],"dpop":"required"}],"tokens":{"access_token_ttl":600,"refresh_token_retry_window":30,"roles_claim":"https://example.com/roles"},"user_verification":"required","email":{"smtp_url":"smtps://mail.example.com:465","from":"login@example.com","username":"login"},"branding":{"primary_color":"#0a7d5a","page_background":"#f7f3ea"},"rate_limits":{"failures_per_ip":{"limit":20,"window":60},"ipv6_prefix":56},"trusted_proxies":["10.0.0.0/8"],"recovery":{"hold":86400}}"##.utf8))
        try write(.configuration, Array(#"{"issuer":"https://auth.example.com","relying_party":{"id":"example.com","origins":["https://example.com"]},"clients":[{"client_id":"web","type":"public","grants":["authorization_code","refresh_token"],"redirect_uris":["https://example.com/cb","http://127.0.0.1/cb"],"post_logout_redirect_uris":["https://example.com/"],"allowed_origins":["https://example.com"]},{"client_id":"svc","client_secret_hash":"sha256:n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg","grants":["client_credentials"],"scopes":["read:users"]}],"web":{"session_ttl":86400,"session_idle_ttl":3600,"code_ttl":30},"signup":false,"signup_domains":["example.com"],"audiences":["https://api.example.com"]}"#.utf8))
        try write(.configuration, Array(#"{"issuer":"https://auth.example.com","relying_party":{"id":"example.com","origins":"https://example.com, https://www.example.com"},"clients":[{"client_id":"mobile"}],"tokens":{"access_token_ttl":"900"},"dpop":{"nonce":"true"},"limits":{"max_body_bytes":"32768"},"denied_aaguids":["fbfc3007-154e-4ecc-8c0b-6e020557d7bd"],"algorithms":["ES256","EdDSA"]}"#.utf8))
        try write(.configuration, Array(#"{"listen":"[::]:8080","metrics":{"listen":"[::1]:9100"}}"#.utf8))
        // Requests to every route, as an account, as an operator, as an operator naming the
        // account and as the signed-in browser's form; writes with an empty object, a few with
        // the body a caller would send.
        let bodies: [String: String] = [
            "PATCH /me": #"{"name":"Ada Lovelace","user_metadata":{"theme":"dark"}}"#,
            "POST /api/v2/users": #"{"email":"new@signet.test","name":"New","app_metadata":{"plan":"pro"}}"#,
            "PATCH /api/v2/users/{id}": #"{"name":"Ada","blocked":false,"app_metadata":{"tier":2}}"#,
            "POST /api/v2/clients": #"{"name":"Web","app_type":"spa","callbacks":["https://app.signet.test/cb"],"grant_types":["authorization_code"]}"#,
            "POST /api/v2/roles": #"{"name":"Teller","description":"counter staff"}"#,
            "POST /api/v2/log-streams": #"{"name":"siem","type":"http","sink":{"httpEndpoint":"https://siem.signet.test/in","httpContentFormat":"JSONLINES"}}"#,
            "POST /scim/v2/Users": #"{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"scim@signet.test","active":true}"#,
            "POST /passkey/challenge": #"{"client_id":"app"}"#,
            "POST /passkey/register": #"{"client_id":"app","user_profile":{"email":"reg@signet.test"}}"#,
            "POST /actions/challenge": #"{"client_id":"app","action":{"type":"transfer","amount":"10.00"}}"#,
        ]
        for (index, route) in FuzzTarget.Service.routes.enumerated() {
            let body = route.method == "GET" || route.method == "DELETE" ? "" : bodies["\(route.method) \(route.pattern)"] ?? "{}"
            for choices: UInt8 in [0x01, 0x02, 0x22, 0x4C] { try write(.service, [UInt8(index), choices, 7, 0] + Array(body.utf8)) }
        }
        // A sealed backup of three chunks under the fuzzer's key.
        let folder = NSTemporaryDirectory() + "signet-seed-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = FileManager.default.createFile(atPath: folder + "/plain", contents: Data(FuzzTarget.sealedBackupContent))
        try SealedBackup.seal(folder + "/plain", to: folder + "/sealed", kek: FuzzTarget.sealedBackupKEK, chunkSize: 200)
        try write(.sealedBackup, Array(FileManager.default.contents(atPath: folder + "/sealed") ?? Data()))
        print("wrote \(n) seeds to \(out.path)")
    }
}
#endif
