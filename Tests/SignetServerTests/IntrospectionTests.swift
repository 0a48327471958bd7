import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// `POST /oauth/introspect` (RFC 7662): what a resource server that asks learns, and when.
@Suite struct IntrospectionTests {
    static let ledgerSecret = "ledger-secret-0123456789abcdefgh"
    static var ledger: (String, String) { ("Authorization", "Basic " + Data("ledger:\(ledgerSecret)".utf8).base64EncodedString()) }

    /// The test server's clients, with `ledger`, a resource server for another API.
    static func server() throws -> TestServer {
        try TestServer.withOperators { c in
            var ledger = ClientConfiguration(id: "ledger", grants: [], audiences: ["https://ledger.signet.test"], secretHash: Digest.sha256.hash(Array(ledgerSecret.utf8)))
            ledger.name = "Ledger"
            c.clients.append(ledger)
            var portal = ClientConfiguration(id: "portal", grants: GrantNames.all, secretHash: Digest.sha256.hash(Array(ConfidentialClientTests.secret.utf8)))
            portal.redirectURIs = ["https://portal.signet.test/callback"]
            c.clients.append(portal)
        }
    }

    /// Asks as `bank` (whose audiences are the deployment's, `https://api.signet.test`) unless told.
    static func introspect(_ server: TestServer, _ token: String, as caller: (String, String) = TestServer.bankAuthorization) throws -> (status: Int, json: JSONValue) {
        let body = "token=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        let response = try server.send("POST", "/oauth/introspect", headers: [("Content-Type", "application/x-www-form-urlencoded"), caller], body: Array(body.utf8))
        return (response.status, (try? StrictJSON().parse(response.body)) ?? .null)
    }

    static let inactive = JSONValue.object(["active": .bool(false)])

    /// A sign-up by the phone's client (`app` unless told) with a token for the API `bank`
    /// serves; with `scope`, that scope instead of the default one.
    static func apiTokens(_ server: TestServer, email: String, phone: Phone? = nil, scope: String? = nil) throws -> (phone: Phone, tokens: JSONValue) {
        let phone = phone ?? Phone(server)
        let (session, credential) = try phone.startSignUp(email: email)
        var body: JSONObject = [
            "grant_type": .string(GrantType.webauthn), "client_id": .string(phone.clientID), "auth_session": .string(session), "authn_response": credential,
            "audience": .string("https://api.signet.test"),
        ]
        if let scope { body["scope"] = .string(scope) }
        let (status, tokens) = try server.post("/oauth/token", .object(body))
        try #require(status == 200, "\(tokens.serialized)")
        return (phone, tokens)
    }

    @Test("an active access token: its claims for the API's resource server, nothing for another's, and the answer decodes as the SDK's type")
    func activeAccessToken() throws {
        let server = try Self.server()
        let (_, tokens) = try Self.apiTokens(server, email: "intro@signet.test")
        let access = try #require(tokens["access_token"]?.string)
        let claims = jwtClaims(access)
        let response = try server.send("POST", "/oauth/introspect", headers: [("Content-Type", "application/x-www-form-urlencoded"), TestServer.bankAuthorization],
                                       body: Array("token=\(access)&token_type_hint=access_token".utf8))
        #expect(response.status == 200 && response.headers["cache-control"] == "no-store")
        let answer = try JSONDecoder().decode(TokenIntrospection.self, from: Data(response.body))
        #expect(answer.active && answer.token_type == "Bearer" && answer.client_id == "app" && answer.aud == ["https://api.signet.test"])
        #expect(answer.sub == claims["sub"]?.string && answer.scope == claims["scope"]?.string && answer.exp == claims["exp"]?.int64)
        #expect(answer.iat == claims["iat"]?.int64 && answer.jti == claims["jti"]?.string && answer.sid == claims["sid"]?.string)
        #expect(answer.iss == "https://signet.test" && answer.amr == ["pop", "user"] && answer.auth_time == claims["auth_time"]?.int64 && answer.cnf == nil)
        #expect(answer.acr == "phr" && claims["acr"] == .string("phr"), "RFC 9470 §6.2: a passkey's sign-in is phishing-resistant")
        // The hint is a hint: the wrong one changes nothing.
        let hinted = try server.send("POST", "/oauth/introspect", headers: [("Content-Type", "application/x-www-form-urlencoded"), TestServer.bankAuthorization],
                                     body: Array("token=\(access)&token_type_hint=refresh_token".utf8))
        #expect(try StrictJSON().parse(hinted.body)["active"] == .bool(true))
        // Another API's resource server is told nothing; so is it about a token for Signet's own API.
        #expect(try Self.introspect(server, access, as: Self.ledger).json == Self.inactive)
        let me = try #require(try Phone(server).signUp(email: "intro-me@signet.test")["access_token"]?.string)
        #expect(try Self.introspect(server, me).json == Self.inactive)
        // The discovery document names the endpoint and how to authenticate to it.
        let discovery = try StrictJSON().parse(try server.get("/.well-known/openid-configuration").body)
        #expect(discovery["introspection_endpoint"] == .string("https://signet.test/oauth/introspect"))
        #expect(discovery["introspection_endpoint_auth_methods_supported"] == .array([.string("client_secret_basic"), .string("client_secret_post"), .string("private_key_jwt")]))
    }

    @Test("a DPoP-bound token says so: token_type DPoP and the key's thumbprint in cnf.jkt, for the resource server to check the proof against")
    func boundToken() throws {
        let server = try Self.server()
        let key = try SoftwareDPoPKey(algorithm: "ES256")
        let phone = Phone(server)
        let (session, credential) = try phone.startSignUp(email: "bound-intro@signet.test")
        let (status, tokens) = try server.post("/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("app"), "auth_session": .string(session), "authn_response": credential,
            "audience": .string("https://api.signet.test"),
        ]), headers: [("DPoP", try key.proof(method: "POST", url: DPoPTests.tokenURL))])
        #expect(status == 200 && tokens["token_type"] == .string("DPoP"), "\(tokens.serialized)")
        let (_, seen) = try Self.introspect(server, try #require(tokens["access_token"]?.string))
        #expect(seen["active"] == .bool(true) && seen["token_type"] == .string("DPoP") && seen["cnf"] == .object(["jkt": .string(key.thumbprint)]), "\(seen.serialized)")
    }

    @Test("each end of a session makes its access token inactive at once: sign-out, a revoked passkey, a blocked or deleted account; and expiry")
    func endsOfAccessTokens() throws {
        let server = try Self.server()
        // Signed out: the refresh token revoked ends the session.
        let (_, signedOut) = try Self.apiTokens(server, email: "out@signet.test")
        let outAccess = try #require(signedOut["access_token"]?.string)
        #expect(try Self.introspect(server, outAccess).json["active"] == .bool(true))
        #expect(try server.post("/oauth/revoke", .object(["token": signedOut["refresh_token"]!, "client_id": .string("app")])).status == 200)
        #expect(try Self.introspect(server, outAccess).json == Self.inactive)

        // The passkey that started the session revoked (from a second session, after adding another).
        let (phone, revoked) = try Self.apiTokens(server, email: "revoked@signet.test")
        let revokedAccess = try #require(revoked["access_token"]?.string)
        let account = SignedIn(server, phone: phone, access: try #require(try phone.signIn()["access_token"]?.string))
        #expect(try account.addPasskey(SoftwareAuthenticator()).status == 201)
        let first = try #require(jwtClaims(revokedAccess)["cred"]?.string)
        #expect(try Self.introspect(server, revokedAccess).json["active"] == .bool(true))
        #expect(try account.call("DELETE", "/me/passkeys/\(first)").status == 204)
        #expect(try Self.introspect(server, revokedAccess).json == Self.inactive)

        // Blocked: inactive, and still so once unblocked, since blocking ended the sessions.
        let (_, blocked) = try Self.apiTokens(server, email: "blocked@signet.test")
        let blockedAccess = try #require(blocked["access_token"]?.string)
        let sub = try #require(jwtClaims(blockedAccess)["sub"]?.string)
        let admin = try server.managementToken()
        #expect(try server.api("PATCH", "/api/v2/users/\(sub)", token: admin, .object(["blocked": .bool(true)])).status == 200)
        #expect(try Self.introspect(server, blockedAccess).json == Self.inactive)
        #expect(try server.api("PATCH", "/api/v2/users/\(sub)", token: admin, .object(["blocked": .bool(false)])).status == 200)
        #expect(try Self.introspect(server, blockedAccess).json == Self.inactive)
        // Deleted, with a session started after the unblock.
        let (_, fresh) = try Self.apiTokens(server, email: "deleted@signet.test")
        let freshAccess = try #require(fresh["access_token"]?.string)
        #expect(try Self.introspect(server, freshAccess).json["active"] == .bool(true))
        #expect(try server.api("DELETE", "/api/v2/users/\(try #require(jwtClaims(freshAccess)["sub"]?.string))", token: admin).status == 204)
        #expect(try Self.introspect(server, freshAccess).json == Self.inactive)

        // Expired: past its `exp`, though nothing else ended it.
        let (_, expiring) = try Self.apiTokens(server, email: "expiring@signet.test")
        let expiringAccess = try #require(expiring["access_token"]?.string)
        #expect(try Self.introspect(server, expiringAccess).json["active"] == .bool(true))
        server.clock.advance(Double(server.app.configuration.accessTokenLifetime + 61))
        #expect(try Self.introspect(server, expiringAccess).json == Self.inactive)
    }

    @Test("a client taken out of the configuration: an instance started without it refuses its tokens at /me and calls them inactive")
    func removedClient() throws {
        let first = try Self.server()
        var phone = Phone(first)
        phone.clientID = "other"
        let (_, tokens) = try Self.apiTokens(first, email: "other-client@signet.test", phone: phone)
        let access = try #require(tokens["access_token"]?.string)
        #expect(try Self.introspect(first, access).json["active"] == .bool(true))
        // The same database, restarted with "other" gone from the configuration.
        let second = try TestServer(sharing: first.directory) { c in c.clients.removeAll { $0.id == "other" } }
        #expect(try Self.introspect(second, access).json == Self.inactive)
        let me = try second.get("/userinfo", headers: [("Authorization", "Bearer " + access)])
        let reason = try StrictJSON().parse(me.body)["reason"]
        #expect(me.status == 401 && reason == .string("token_invalid"))
    }

    @Test("revoking an access token (RFC 7009 §2.1) ends its session; by another client, or forged, it changes nothing")
    func revokedAccessToken() throws {
        let server = try Self.server()
        let (_, tokens) = try Self.apiTokens(server, email: "revoke-access@signet.test")
        let access = try #require(tokens["access_token"]?.string)
        var forged = access.split(separator: ".").map(String.init)
        forged[2] = String(forged[2].reversed())
        for (token, client) in [(access, "other"), (forged.joined(separator: "."), "app"), ("a.b.c", "app")] {
            #expect(try server.post("/oauth/revoke", .object(["token": .string(token), "client_id": .string(client)])).status == 200)
        }
        #expect(try Self.introspect(server, access).json["active"] == .bool(true))
        // By its own client: the session ends, its refresh token with it.
        #expect(try server.post("/oauth/revoke", .object(["token": .string(access), "client_id": .string("app"), "token_type_hint": .string("access_token")])).status == 200)
        #expect(try Self.introspect(server, access).json == Self.inactive)
        let refreshed = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": tokens["refresh_token"]!]))
        #expect(refreshed.json["reason"] == .string("refresh_token_revoked"), "\(refreshed.json.serialized)")
        let events = try server.store.auditEvents(limit: 20)
        #expect(events.filter { $0.kind == "session_revoked" }.map(\.detail) == ["by its access token"])
        #expect(events.contains { $0.kind == "refresh_token_revoked" && $0.outcome == "failure" && $0.clientID == "other" })
    }

    @Test("revoking the access token of a session without a refresh token ends that session too, once, until its tokens lapse")
    func revokedRefreshlessSession() throws {
        let server = try Self.server()
        let (phone, tokens) = try Self.apiTokens(server, email: "refreshless@signet.test", scope: "openid email")
        #expect(tokens["refresh_token"] == nil)
        let access = try #require(tokens["access_token"]?.string)
        let second = try #require(try phone.signIn()["access_token"]?.string)
        #expect(try Self.introspect(server, access).json["active"] == .bool(true))
        for _ in 0..<2 {
            #expect(try server.post("/oauth/revoke", .object(["token": .string(access), "client_id": .string("app")])).status == 200)
        }
        #expect(try Self.introspect(server, access).json == Self.inactive)
        let me = try server.get("/userinfo", headers: [("Authorization", "Bearer " + access)])
        let reason = try StrictJSON().parse(me.body)["reason"]
        #expect(me.status == 401 && reason == .string("token_invalid"))
        // Only that session: the same account's other sign-in goes on.
        #expect(try server.get("/userinfo", headers: [("Authorization", "Bearer " + second)]).status == 200)
        let events = try server.store.auditEvents(limit: 20)
        #expect(events.filter { $0.kind == "session_revoked" }.map(\.detail) == ["by its access token"])
    }

    @Test("not access tokens: a forged signature, an ID token, a token of another issuer's form, garbage, an over-long token")
    func forgeries() throws {
        let server = try Self.server()
        let (_, tokens) = try Self.apiTokens(server, email: "forged@signet.test")
        let access = try #require(tokens["access_token"]?.string)
        var parts = access.split(separator: ".").map(String.init)
        // The payload changed, the signature kept.
        var claims = try #require(jwtClaims(access).object)
        claims["scope"] = .string("openid admin")
        parts[1] = Base64URL.encode(Array(JSONValue.object(claims).serialized.utf8))
        #expect(try Self.introspect(server, parts.joined(separator: ".")).json == Self.inactive)
        // The ID token is signed by the same key but is no access token (`typ` JWT, `aud` the app).
        let id = try #require(tokens["id_token"]?.string)
        #expect(try Self.introspect(server, id, as: ("Authorization", "Basic " + Data("portal:\(ConfidentialClientTests.secret)".utf8).base64EncodedString())).json == Self.inactive)
        for token in ["x", "a.b.c", String(repeating: "A", count: 5000), String(repeating: "a.", count: 3000)] {
            let (status, json) = try Self.introspect(server, token)
            #expect(status == 200 && json == Self.inactive, "\(token.prefix(20))")
        }
    }

    @Test("refresh tokens: active for the client they were issued to while live; rotated, revoked or another client's are inactive")
    func refreshTokens() throws {
        let server = try Self.server()
        let tokens = try ConfidentialClientTests.signUp(server, email: "portal-refresh@signet.test")
        let refresh = try #require(tokens["refresh_token"]?.string, "\(tokens.serialized)")
        let (status, json) = try Self.introspect(server, refresh, as: ConfidentialClientTests.basic)
        #expect(status == 200 && json["active"] == .bool(true) && json["client_id"] == .string("portal") && json["token_type"] == nil && json["aud"] == nil, "\(json.serialized)")
        #expect(json["sub"] == jwtClaims(tokens["access_token"]?.string)["sub"] && json["sid"] == jwtClaims(tokens["access_token"]?.string)["sid"])
        #expect((json["exp"]?.int64 ?? 0) > (json["iat"]?.int64 ?? .max) && json["scope"]?.string?.contains("offline_access") == true)
        #expect(json["acr"] == .string("phr") && json["amr"] == .array([.string("pop"), .string("user")]), "the sign-in's class, as its tokens carry it")
        // Another confidential client learns nothing of it, not even a resource server.
        #expect(try Self.introspect(server, refresh).json == Self.inactive)
        // Rotated: the old one is inactive, the new one active.
        let rotated = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "refresh_token": .string(refresh)]), headers: [ConfidentialClientTests.basic]).json
        let next = try #require(rotated["refresh_token"]?.string)
        #expect(try Self.introspect(server, refresh, as: ConfidentialClientTests.basic).json == Self.inactive)
        #expect(try Self.introspect(server, next, as: ConfidentialClientTests.basic).json["active"] == .bool(true))
        // The access tokens of its session are the portal's to see too, and end with the session.
        let access = try #require(rotated["access_token"]?.string)
        #expect(try Self.introspect(server, access, as: ConfidentialClientTests.basic).json["active"] == .bool(true))
        #expect(try server.post("/oauth/revoke", .object(["token": .string(next)]), headers: [ConfidentialClientTests.basic]).status == 200)
        #expect(try Self.introspect(server, next, as: ConfidentialClientTests.basic).json == Self.inactive)
        #expect(try Self.introspect(server, access, as: ConfidentialClientTests.basic).json == Self.inactive)
    }

    @Test("a machine's token: active for its own client and the API it is for, while that client may use the grant")
    func machineTokens() throws {
        let server = try Self.server()
        let management = try server.managementToken()
        // The Management API's token: its own client sees it; the bank does not.
        let ops = ("Authorization", "Basic " + Data("ops:\(TestServer.opsSecret)".utf8).base64EncodedString())
        let (_, own) = try Self.introspect(server, management, as: ops)
        #expect(own["active"] == .bool(true) && own["sub"] == .string("ops@clients") && own["client_id"] == .string("ops"), "\(own.serialized)")
        #expect(try Self.introspect(server, management).json == Self.inactive)
    }

    @Test("who may ask: no credentials, a wrong secret, a public client; and no token at all")
    func callers() throws {
        let server = try Self.server()
        let form = ("Content-Type", "application/x-www-form-urlencoded")
        let anonymous = try server.send("POST", "/oauth/introspect", headers: [form], body: Array("token=x".utf8))
        let anonymousJSON = try StrictJSON().parse(anonymous.body)
        #expect(anonymous.status == 401 && anonymousJSON["reason"] == .string("client_secret_invalid"))
        #expect(anonymous.headers["www-authenticate"] == #"Basic realm="signet""#)
        let wrong = ("Authorization", "Basic " + Data("bank:wrong".utf8).base64EncodedString())
        let (status, json) = try Self.introspect(server, "x", as: wrong)
        #expect(status == 401 && json["reason"] == .string("client_secret_invalid") && json["error"] == .string("invalid_client"))
        let publicClient = try server.send("POST", "/oauth/introspect", headers: [form], body: Array("token=x&client_id=app".utf8))
        let publicJSON = try StrictJSON().parse(publicClient.body)
        #expect(publicClient.status == 401 && publicJSON["reason"] == .string("client_secret_invalid"))
        let posted = try server.send("POST", "/oauth/introspect", headers: [form], body: Array("token=x&client_id=bank&client_secret=\(TestServer.bankSecret)".utf8))
        let postedJSON = try StrictJSON().parse(posted.body)
        #expect(posted.status == 200 && postedJSON == Self.inactive)
        let empty = try server.send("POST", "/oauth/introspect", headers: [form, TestServer.bankAuthorization], body: [])
        let emptyJSON = try StrictJSON().parse(empty.body)
        #expect(empty.status == 400 && emptyJSON["reason"] == .string("malformed"))
    }
}
