import SignetAuth
import Foundation
import SignetAPI
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetStore
import SignetTestSupport
import SignetWebAuthn
import Testing

@Suite struct ConcurrencyTests {
    @Test("32 simultaneous token requests on one auth session: exactly one succeeds")
    func singleUse() throws {
        let server = try TestServer(.socket)
        let phone = Phone(server)
        _ = try phone.signUp(email: "race@signet.test")
        let (session, credential, _) = try phone.startSignIn()
        let body = Array(JSONValue.object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("app"), "auth_session": .string(session), "authn_response": credential,
        ]).serialized.utf8)
        let clients = (0..<32).map { _ in server.client() }
        for client in clients { try client.connect() }
        let responses = simultaneously(clients.count) { try clients[$0].send("POST", "/oauth/token", body: body) }
        let statuses = responses.map { (try? $0.get().status) ?? -1 }
        let reasons = responses.compactMap { try? $0.get() }.filter { $0.status != 200 }.map { (try? StrictJSON().parse($0.body)["reason"]?.string) ?? "none" }
        #expect(statuses.filter { $0 == 200 }.count == 1)
        #expect(statuses.filter { $0 == 400 }.count == 31, "\(statuses) \(responses.compactMap { if case .failure(let e) = $0 { "\(e)" } else { nil } })")
        #expect(Set(reasons) == ["auth_session_unknown"])
    }
}

/// Tokens checked as a resource server would: from the JWKS over HTTP, with nothing else.
@Suite struct IndependentTokenTests {
    static func verify(_ token: String, jwks: JSONValue) throws -> (header: JSONValue, claims: JSONValue) {
        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let header = try StrictJSON().parse(try #require(Base64URL.decode(parts[0])))
        let claims = try StrictJSON().parse(try #require(Base64URL.decode(parts[1])))
        let jwk = try #require(jwks["keys"]?.array?.first { $0["kid"] == header["kid"] }, "kid not in the JWKS")
        #expect(jwk["kty"] == .string("EC") && jwk["crv"] == .string("P-256") && jwk["alg"] == .string("ES256"))
        let x = try #require(jwk["x"]?.string.flatMap { Base64URL.decode($0) })
        let y = try #require(jwk["y"]?.string.flatMap { Base64URL.decode($0) })
        let key = try PublicKey(curve: .p256, x: x, y: y)
        let raw = try #require(Base64URL.decode(parts[2]))
        #expect(raw.count == 64)
        let der = try #require(ECDSASignature.der(fromRaw: raw))
        #expect(key.verify(signature: der, message: Array((parts[0] + "." + parts[1]).utf8), scheme: .ecdsa(.sha256)), "signature")
        #expect(header["alg"] == .string("ES256"))
        return (header, claims)
    }

    @Test("access and id tokens verify with the published key and carry the DESIGN.md claims")
    func claims() throws {
        let server = try TestServer()
        let tokens = try Phone(server).signUp(email: "ivy@signet.test")
        let jwks = try StrictJSON().parse(try server.get("/.well-known/jwks.json").body)
        let now = Int64(Date().timeIntervalSince1970)
        let (accessHeader, access) = try Self.verify(try #require(tokens["access_token"]?.string), jwks: jwks)
        #expect(accessHeader["typ"] == .string("at+jwt"))
        #expect(access["iss"] == .string("https://signet.test"))
        // No audience asked: Signet's own account audience (DESIGN.md, "Audiences and step-up").
        #expect(access["aud"] == .string("https://signet.test/me"))
        #expect(access["client_id"] == .string("app"))
        #expect(access["scope"] == .string("openid profile email offline_access"))
        let found = try server.store.user(email: "ivy@signet.test")
        let user = try #require(found)
        #expect(access["sub"] == .string(user.id))
        let exp = try #require(access["exp"]?.int64), iat = try #require(access["iat"]?.int64)
        #expect(exp - iat == 900 && abs(iat - now) < 5)
        #expect(access["jti"]?.string?.count ?? 0 >= 16)
        #expect(access["auth_time"]?.int64 != nil)
        #expect(access["amr"] == .array([.string("pop"), .string("user")]))
        let (_, id) = try Self.verify(try #require(tokens["id_token"]?.string), jwks: jwks)
        #expect(id["aud"] == .string("app") && id["sub"] == .string(user.id))
        #expect(id["email"] == .string("ivy@signet.test") && id["email_verified"] == .bool(false) && id["name"] == .string("Ada"))
        #expect(try #require(id["exp"]?.int64) - (try #require(id["iat"]?.int64)) == 3600)
        // A claim without a value is left out, not null (OIDC Core §5.3.2), in the ID token as in userinfo.
        let phone = Phone(server)
        let (session, credential) = try phone.startSignUp(email: "noname@signet.test", name: nil)
        let (status, nameless) = try phone.exchange(session: session, credential: credential)
        try #require(status == 200, "\(nameless.serialized)")
        let (_, unnamed) = try Self.verify(try #require(nameless["id_token"]?.string), jwks: jwks)
        #expect(unnamed["email"] == .string("noname@signet.test") && unnamed.object?.keys.contains("name") == false, "\(unnamed.serialized)")
        let info = try StrictJSON().parse(try server.get("/userinfo", headers: [("Authorization", "Bearer " + (nameless["access_token"]?.string ?? ""))]).body)
        #expect(info["email"] == .string("noname@signet.test") && info.object?.keys.contains("name") == false, "\(info.serialized)")
    }

    @Test("an asked-for audience must be configured")
    func audience() throws {
        let server = try TestServer()
        let phone = Phone(server)
        _ = try phone.signUp(email: "jo@signet.test")
        let (session, credential, _) = try phone.startSignIn()
        let (status, json) = try server.post("/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("app"), "auth_session": .string(session),
            "authn_response": credential, "audience": .string("https://elsewhere.test"),
        ]))
        #expect(status == 400 && json["reason"] == .string("audience_not_allowed"))
    }

    @Test("key rotation: the new key is published first and signs after the JWKS cache time; old tokens still verify until they expire")
    func rotation() throws {
        let server = try TestServer()
        let phone = Phone(server)
        let before = try phone.signUp(email: "kim@signet.test")
        let kek = try KeyEncryptionKey.load(environment: [:], file: server.app.configuration.keyEncryptionKeyFile)
        let newKid = try KeyRing.create(store: server.store, kek: kek, retireOthers: true, now: server.clock.now)
        try server.app.service.keys.reload()
        // Published at once, for as long as a verifier may cache the set; not yet signing.
        let published = try server.get("/.well-known/jwks.json")
        #expect(published.headers["cache-control"] == "public, max-age=\(KeyRing.jwksMaxAge)")
        let jwks = try StrictJSON().parse(published.body)
        #expect(jwks["keys"]?.array?.count == 2)
        let meanwhile = try phone.signIn()
        #expect(try Self.verify(try #require(meanwhile["access_token"]?.string), jwks: jwks).0["kid"] != .string(newKid))
        server.clock.advance(Double(KeyRing.signingDelay))
        try server.app.service.keys.reload()
        let after = try phone.signIn()
        let (newHeader, _) = try Self.verify(try #require(after["access_token"]?.string), jwks: jwks)
        #expect(newHeader["kid"] == .string(newKid))
        let (oldHeader, _) = try Self.verify(try #require(before["access_token"]?.string), jwks: jwks)
        #expect(oldHeader["kid"] != .string(newKid))
        let old = try #require(before["access_token"]?.string)
        #expect(try server.get("/userinfo", headers: [("Authorization", "Bearer \(old)")]).status == 200)
    }
}

@Suite struct AssociationTests {
    @Test("apple-app-site-association: exact JSON, application/json, 200 without redirect")
    func apple() throws {
        let server = try TestServer()
        let response = try server.get("/.well-known/apple-app-site-association")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.headers["location"] == nil)
        #expect(try StrictJSON().parse(response.body) == .object(["webcredentials": .object(["apps": .array([.string("ABCDE12345.test.signet.app")])])]))
    }

    @Test("assetlinks.json: one statement with both relations and the fingerprint")
    func android() throws {
        let server = try TestServer()
        let response = try server.get("/.well-known/assetlinks.json")
        #expect(response.status == 200 && response.headers["content-type"] == "application/json")
        let expected = JSONValue.array([.object([
            "relation": .array([.string("delegate_permission/common.handle_all_urls"), .string("delegate_permission/common.get_login_creds")]),
            "target": .object([
                "namespace": .string("android_app"), "package_name": .string("test.signet.app"),
                "sha256_cert_fingerprints": .array([.string(TestServer.androidFingerprint)]),
            ]),
        ])])
        #expect(try StrictJSON().parse(response.body) == expected)
    }

    @Test("the Android app's origin signs up and in; the hash is derived from the fingerprint")
    func androidOrigin() throws {
        let server = try TestServer()
        var phone = Phone(server)
        phone.origin = "android:apk-key-hash:" + Base64URL.encode(parseFingerprint(TestServer.androidFingerprint)!)
        #expect(phone.origin == "android:apk-key-hash:s12NpYrw5FmKuSxABb7UBs2HzmXnXCpI6XzamGupG14")
        _ = try phone.signUp(email: "droid@signet.test")
        #expect(try phone.signIn()["access_token"] != nil)
    }
}
