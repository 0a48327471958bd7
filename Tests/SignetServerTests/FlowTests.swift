import SignetAuth
import Foundation
import SignetAPI
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetStore
import SignetWebAuthn
import Testing

/// Complete flows over a real socket, as an app would run them.
@Suite struct FlowTests {
    @Test("sign up, sign in discoverable and username-first, read userinfo")
    func signUpAndSignIn() throws {
        let server = try TestServer()
        let phone = Phone(server)
        let signedUp = try phone.signUp(email: "ada@signet.test")
        #expect(signedUp["token_type"] == .string("Bearer"))
        #expect(signedUp["expires_in"] == .number("900"))
        #expect(signedUp["refresh_token"]?.string != nil)
        #expect(signedUp["id_token"]?.string != nil)
        #expect(server.counts["users"] == 1 && server.counts["credentials"] == 1)

        let discoverable = try phone.signIn()
        let access = try #require(discoverable["access_token"]?.string)
        let info = try server.get("/userinfo", headers: [("Authorization", "Bearer \(access)")])
        #expect(info.status == 200)
        let user = try JSONDecoder().decode(UserInfo.self, from: Data(info.body))
        #expect(user.email == "ada@signet.test" && user.name == "Ada" && user.email_verified == false)
        // OIDC Core §5.3.1: POST too, with no body or a form body, and the same refusals.
        for (headers, body) in [([(String, String)](), ""), ([("Content-Type", "application/x-www-form-urlencoded")], "a=1")] {
            let posted = try server.send("POST", "/userinfo", headers: headers + [("Authorization", "Bearer \(access)")], body: Array(body.utf8))
            #expect(posted.status == 200 && posted.body == info.body, "\(headers): \(posted.status)")
        }
        let unsigned = try server.send("POST", "/userinfo")
        // Both schemes are offered (RFC 9449 §7.1), as two challenges.
        #expect(unsigned.status == 401 && unsigned.headers["www-authenticate"] == #"Bearer, DPoP algs="ES256 EdDSA""#)

        let (_, _, options) = try phone.startSignIn(username: "ada@signet.test")
        #expect(options["allowCredentials"]?.array?.count == 1)
        let named = try phone.signIn(username: "ADA@signet.test")
        #expect(named["access_token"]?.string != nil)

        // An unknown username gets an answer of the same shape: no account probing (NoProbingTests).
        let (status, unknown) = try server.post("/passkey/challenge", .object(["client_id": .string("app"), "username": .string("nobody@signet.test")]))
        #expect(status == 200 && unknown["authn_params_public_key"]?["allowCredentials"]?.array?.count == 1)
        let events = try server.store.auditEvents(limit: 10).map { "\($0.kind):\($0.outcome)" }
        #expect(events.filter { $0 == "sign_in:success" }.count == 2 && events.contains("sign_up:success"))
    }

    @Test("refresh rotates; reusing a rotated token revokes the whole family")
    func refreshRotationAndReuse() throws {
        let server = try TestServer()
        let tokens = try Phone(server).signUp(email: "bob@signet.test")
        let first = try #require(tokens["refresh_token"]?.string)
        func refresh(_ token: String) throws -> (Int, JSONValue) {
            try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": .string(token)]))
        }
        let (status, rotated) = try refresh(first)
        #expect(status == 200)
        let second = try #require(rotated["refresh_token"]?.string)
        #expect(second != first)
        #expect(rotated["access_token"]?.string != tokens["access_token"]?.string)
        let (reuseStatus, reuse) = try refresh(first)
        #expect(reuseStatus == 400 && reuse["reason"] == .string("refresh_token_reused"))
        // The attacker's use killed the legitimate successor too.
        let (_, afterReuse) = try refresh(second)
        #expect(afterReuse["reason"] == .string("refresh_token_reused") || afterReuse["reason"] == .string("refresh_token_revoked"))
        #expect(try server.store.auditEvents(limit: 20).contains { $0.kind == "refresh_token_reused" })
        let (_, garbage) = try refresh("not-a-token")
        #expect(garbage["reason"] == .string("refresh_token_unknown"))
    }

    @Test("refresh tokens: a name and a secret; the name with another secret is unknown and revokes nothing; a token of the earlier format still rotates")
    func refreshTokenFormat() throws {
        let server = try TestServer()
        let tokens = try Phone(server).signUp(email: "format@signet.test")
        let token = try #require(tokens["refresh_token"]?.string.flatMap { Base64URL.decode($0) })
        #expect(token.count == 48)
        func refresh(_ token: [UInt8]) throws -> (Int, JSONValue) {
            try server.post("/oauth/token", .object([
                "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": .string(Base64URL.encode(token)),
            ]))
        }
        // The name with a wrong secret, in every byte of the secret: unknown, and the family lives.
        for position in [16, 30, 47] {
            var forged = token
            forged[position] ^= 0x01
            let (status, json) = try refresh(forged)
            #expect(status == 400 && json["reason"] == .string("refresh_token_unknown"), "byte \(position)")
            #expect(try server.post("/oauth/revoke", .object(["token": .string(Base64URL.encode(forged)), "client_id": .string("app")])).status == 200)
        }
        // Cut or lengthened: unknown.
        #expect(try refresh(Array(token.prefix(47))).1["reason"] == .string("refresh_token_unknown"))
        #expect(try refresh(token + [0]).1["reason"] == .string("refresh_token_unknown"))
        let (status, rotated) = try refresh(token)
        #expect(status == 200)
        let next = try #require(rotated["refresh_token"]?.string.flatMap { Base64URL.decode($0) })
        // Names are time-ordered: a later token sorts after an earlier one.
        #expect(next.count == 48 && next[0..<6].lexicographicallyPrecedes(token[0..<6]) == false)

        // A token issued in the earlier format (32 random bytes, stored by its SHA-256) rotates
        // into the current format, and its reuse revokes its family.
        let account = try #require(try server.store.user(email: "format@signet.test"))
        let legacy = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try server.store.insertRefreshToken(RefreshTokenRow(
            hash: Digest.sha256.hash(legacy), family: "legacy-family", userID: account.id, clientID: "app", scope: "openid offline_access",
            authTime: now / 1000, amr: ["pop"], expiresAt: now + 3_600_000, createdAt: now))
        let (legacyStatus, fromLegacy) = try refresh(legacy)
        #expect(legacyStatus == 200 && fromLegacy["refresh_token"]?.string.flatMap { Base64URL.decode($0) }?.count == 48)
        #expect(try refresh(legacy).1["reason"] == .string("refresh_token_reused"))
        let successor = try #require(fromLegacy["refresh_token"]?.string.flatMap { Base64URL.decode($0) })
        #expect(try refresh(successor).1["reason"] == .string("refresh_token_revoked"))
    }

    @Test("a refresh token works only for its own client")
    func refreshOtherClient() throws {
        let server = try TestServer()
        let tokens = try Phone(server).signUp(email: "cy@signet.test")
        let (status, json) = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("other"), "refresh_token": tokens["refresh_token"]!,
        ]))
        #expect(status == 400 && json["reason"] == .string("refresh_token_client_mismatch"))
    }

    @Test("revocation (RFC 7009) ends the refresh family; form encoding is accepted")
    func revoke() throws {
        let server = try TestServer()
        let tokens = try Phone(server).signUp(email: "dee@signet.test")
        let refresh = try #require(tokens["refresh_token"]?.string)
        let answer = try server.send("POST", "/oauth/revoke", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                              body: Array("token=\(refresh)&client_id=app&token_type_hint=refresh_token".utf8))
        #expect(answer.status == 200)
        let (status, json) = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": .string(refresh)]))
        #expect(status == 400 && json["reason"] == .string("refresh_token_revoked"))
        let unknown = try server.post("/oauth/revoke", .object(["token": .string("whatever"), "client_id": .string("app")]))
        #expect(unknown.status == 200)
    }

    @Test("revocation (RFC 7009 §2.1): the client names itself, a confidential one authenticates, and another client's token is left alone")
    func revokeClient() throws {
        let server = try TestServer { c in
            var rp = ClientConfiguration(id: "rp", grants: GrantNames.all)
            rp.secretHash = Digest.sha256.hash(Array("rp-secret".utf8))
            c.clients.append(rp)
        }
        let refresh = try #require(try Phone(server).signUp(email: "rev@signet.test")["refresh_token"]?.string)
        func revoke(_ body: JSONObject, headers: [(String, String)] = []) throws -> (status: Int, json: JSONValue) {
            try server.post("/oauth/revoke", .object(body), headers: headers)
        }
        func rotate(_ token: String) throws -> (status: Int, json: JSONValue) {
            try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": .string(token)]))
        }
        // Without a client, refused; by another client (public, or confidential with its secret), a
        // success that revokes nothing.
        #expect(try revoke(["token": .string(refresh)]).json["reason"] == .string("malformed"))
        #expect(try revoke(["token": .string(refresh), "client_id": .string("other")]).status == 200)
        let basic = "Basic " + Data("rp:rp-secret".utf8).base64EncodedString()
        #expect(try revoke(["token": .string(refresh)], headers: [("Authorization", basic)]).status == 200)
        // A confidential client without its secret, or with a wrong one: 401 with a Basic challenge.
        let unauthenticated = try server.send("POST", "/oauth/revoke", body: Array(#"{"token":"x","client_id":"rp"}"#.utf8))
        #expect(unauthenticated.status == 401 && unauthenticated.headers["www-authenticate"] == #"Basic realm="signet""#)
        #expect(try revoke(["token": .string(refresh), "client_id": .string("rp"), "client_secret": .string("wrong")]).json["reason"] == .string("client_secret_invalid"))
        #expect(try revoke(["token": .string(refresh), "client_id": .string("nobody")]).json["reason"] == .string("client_unknown"))
        // None of it touched the token; its own client revokes it.
        let rotated = try rotate(refresh)
        let next = try #require(rotated.json["refresh_token"]?.string, "\(rotated.json.serialized)")
        #expect(try revoke(["token": .string(next), "client_id": .string("app")]).status == 200)
        #expect(try rotate(next).json["reason"] == .string("refresh_token_revoked"))
        // The attempts are audited with the client that made them.
        #expect(try server.store.auditEvents(limit: 20).contains { $0.kind == "refresh_token_revoked" && $0.outcome == "failure" && $0.clientID == "rp" })
    }

    @Test("userinfo refuses missing, forged and expired tokens with 401")
    func userInfoRefusals() throws {
        let server = try TestServer()
        let tokens = try Phone(server).signUp(email: "eve@signet.test")
        let access = try #require(tokens["access_token"]?.string)
        #expect(try server.get("/userinfo").status == 401)
        var forged = Array(access.utf8)
        forged[forged.count - 5] = forged[forged.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let bad = try server.get("/userinfo", headers: [("Authorization", "Bearer " + String(decoding: forged, as: UTF8.self))])
        #expect(bad.status == 401 && bad.headers["www-authenticate"]?.contains("invalid_token") == true)
        let idToken = try #require(tokens["id_token"]?.string)
        #expect(try server.get("/userinfo", headers: [("Authorization", "Bearer \(idToken)")]).status == 401)
        server.clock.advance(901)
        #expect(try server.get("/userinfo", headers: [("Authorization", "Bearer \(access)")]).status == 401)
    }

    @Test("scope narrows the tokens; without offline_access there is no refresh token")
    func scopes() throws {
        let server = try TestServer()
        let phone = Phone(server)
        _ = try phone.signUp(email: "fay@signet.test")
        let (session, credential, _) = try phone.startSignIn()
        let (status, json) = try server.post("/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("app"), "auth_session": .string(session),
            "authn_response": credential, "scope": .string("openid email"),
        ]))
        #expect(status == 200)
        #expect(json["refresh_token"] == nil && json["scope"] == .string("openid email"))
    }

    @Test("a refresh may ask for less scope than the sign-in granted, never more; the refresh token keeps the sign-in's")
    func refreshScope() throws {
        let server = try TestServer()
        var refresh = try #require(try Phone(server).signUp(email: "hal@signet.test")["refresh_token"])
        func rotate(_ scope: String?) throws -> (status: Int, json: JSONValue) {
            var body: JSONObject = ["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": refresh]
            if let scope { body["scope"] = .string(scope) }
            let answer = try server.post("/oauth/token", .object(body))
            if answer.status == 200, let next = answer.json["refresh_token"] { refresh = next }
            return answer
        }
        // More than granted, or a scope Signet does not know: refused, and the token is not used.
        for wider in ["openid email offline_access read:users", "openid admin"] {
            let refused = try rotate(wider)
            #expect(refused.status == 400 && refused.json["reason"] == .string("scope_invalid") && refused.json["error"] == .string("invalid_scope"), "\(wider)")
        }
        // Less: the access token carries only that, and without openid there is no id token.
        let narrow = try rotate("email offline_access")
        #expect(narrow.status == 200 && narrow.json["scope"] == .string("email offline_access") && narrow.json["id_token"] == nil)
        #expect(jwtClaims(narrow.json["access_token"]?.string)["scope"] == .string("email offline_access"))
        // The rotated refresh token still holds the sign-in's whole scope.
        let whole = try rotate(nil)
        #expect(whole.status == 200 && whole.json["scope"] == .string("openid profile email offline_access") && whole.json["id_token"] != nil)
        #expect(try rotate("openid").json["scope"] == .string("openid"))
    }

    @Test("discovery, health and metrics")
    func operational() throws {
        let server = try TestServer()
        _ = try Phone(server).signUp(email: "gus@signet.test")
        let discovery = try StrictJSON().parse(try server.get("/.well-known/openid-configuration").body)
        // RFC 8414 §3: the same metadata where a plain OAuth client looks.
        #expect(try StrictJSON().parse(try server.get("/.well-known/oauth-authorization-server").body) == discovery)
        #expect(discovery["issuer"] == .string("https://signet.test"))
        #expect(discovery["jwks_uri"] == .string("https://signet.test/.well-known/jwks.json"))
        let health = try server.get("/healthz")
        #expect(health.status == 200 && health.text.contains("\"database\":\"ok\""))
        let metrics = try server.get("/metrics")
        #expect(metrics.headers["content-type"]?.hasPrefix("text/plain") == true)
        #expect(metrics.text.contains("signet_http_requests_total{route=\"/oauth/token\",status=\"200\"} 1"))
        #expect(metrics.text.contains("signet_ceremonies_total{ceremony=\"sign_up\",outcome=\"success\",reason=\"\"} 1"))
        #expect(metrics.text.contains("signet_http_request_duration_seconds_bucket{le=\"+Inf\"}"))
        #expect(try server.get("/nowhere").status == 404)
        #expect(try server.send("DELETE", "/oauth/token").status == 405)
    }

    @Test("every answer carries a request id; the access log holds no token, challenge or body")
    func logsAreClean() throws {
        let server = try TestServer(.socket)
        let phone = Phone(server)
        let (session, credential) = try phone.startSignUp(email: "hal@signet.test")
        let response = try server.send("POST", "/oauth/token", body: Array(JSONValue.object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("app"), "auth_session": .string(session), "authn_response": credential,
        ]).serialized.utf8))
        #expect(response.status == 200)
        let requestID = try #require(response.headers["x-request-id"])
        let tokens = try StrictJSON().parse(response.body)
        // The access line is written once the answer has been sent.
        var log = ""
        #expect(eventually {
            log = try String(contentsOf: server.logFile, encoding: .utf8)
            return log.contains(requestID)
        })
        for secret in [tokens["access_token"]?.string, tokens["refresh_token"]?.string, tokens["id_token"]?.string, session,
                       credential["response"]?["clientDataJSON"]?.string, "hal@signet.test"].compactMap({ $0 }) {
            #expect(!log.contains(secret), "the access log contains a secret")
        }
    }
}
