import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

extension Phone {
    /// A step-up (RFC 9470): `/passkey/challenge` with the bearer token, the authenticator, the
    /// token grant. Returns the grant's answer.
    func stepUp(_ access: String) throws -> (status: Int, json: JSONValue) {
        let (status, json) = try server.post("/passkey/challenge", .object(["client_id": .string(clientID)]), headers: [("Authorization", "Bearer \(access)")])
        try #require(status == 200, "step-up challenge: \(json.serialized)")
        let options = try #require(json["authn_params_public_key"])
        let challenge = try #require(options["challenge"]?.string.flatMap { Base64URL.decode($0) })
        let allowed = (options["allowCredentials"]?.array ?? []).compactMap { $0["id"]?.string.flatMap { Base64URL.decode($0) } }
        let response = try authenticator.authenticate(rpID: TestServer.rpID, origin: origin, challenge: challenge, allowCredentials: allowed)
        return try exchange(session: try #require(json["auth_session"]?.string), credential: response.json)
    }
}

/// DESIGN.md, "Audiences and step-up": sensitive changes need a fresh passkey check.
@Suite struct StepUpTests {
    /// Every sensitive operation, as a request made with `account`'s current token.
    static func sensitive(_ account: SignedIn, passkeyID: String, deviceKeyID: String) -> [(name: String, call: () throws -> (status: Int, json: JSONValue))] {
        [
            ("add passkey options", { try account.call("POST", "/me/passkeys/options", .object([:])) }),
            ("add passkey", {
                // A well-formed registration, with an auth_session that began nothing: checked as of now.
                let made = try SoftwareAuthenticator().register(rpID: TestServer.rpID, origin: TestServer.origin, challenge: [UInt8](repeating: 7, count: 32),
                                                                userHandle: [1], userName: "x")
                return try account.call("POST", "/me/passkeys", .object(["auth_session": .string("x"), "authn_response": made.json]))
            }),
            ("rename passkey", { try account.call("PATCH", "/me/passkeys/\(passkeyID)", .object(["name": .string("New")])) }),
            ("revoke passkey", { try account.call("DELETE", "/me/passkeys/\(passkeyID)") }),
            ("enrol device key", {
                let key = try SoftwareDeviceKey(deviceID: "late")
                return try account.call("POST", "/me/device-keys", .object([
                    "public_key": .string(Base64URL.encode(key.publicKeySPKI)), "device_id": .string("late"), "platform": .string("ios"),
                ]))
            }),
            ("revoke device key", { try account.call("DELETE", "/me/device-keys/\(deviceKeyID)") }),
        ]
    }

    @Test("each sensitive operation is refused with a token from a sign-in older than max_age, with the RFC 9470 challenge, and allowed after a step-up")
    func staleThenStepUp() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "stale@signet.test")
        let deviceKeyID = try account.enroll(try SoftwareDeviceKey(deviceID: "phone"))
        let passkeyID = try #require(try account.passkeys().first?["id"]?.string)
        server.clock.advance(301)
        for (name, call) in Self.sensitive(account, passkeyID: passkeyID, deviceKeyID: deviceKeyID) {
            let (status, json) = try call()
            #expect(status == 401 && json["reason"] == .string("step_up_required") && json["error"] == .string("insufficient_user_authentication"), "\(name): \(json.serialized)")
        }
        let raw = try server.send("DELETE", "/me/device-keys/\(deviceKeyID)", headers: account.bearer)
        #expect(raw.headers["www-authenticate"]?.contains(#"error="insufficient_user_authentication""#) == true)
        #expect(raw.headers["www-authenticate"]?.contains(#"max_age="300""#) == true)
        #expect(raw.headers["www-authenticate"]?.contains(#"acr_values="phr""#) == true, "RFC 9470 §3: a passkey's sign-in would do")
        // Reading is not sensitive: the same token still lists.
        #expect(try account.call("GET", "/me/passkeys").status == 200)
        #expect(try server.store.deviceKeys(userID: try #require(try server.store.user(email: "stale@signet.test")).id).first?.revokedAt == nil)

        // A refresh keeps the sign-in's auth_time: still stale.
        let (stepped, fresh) = try account.phone.stepUp(account.access)
        #expect(stepped == 200, "\(fresh.serialized)")
        let renewed = SignedIn(server, phone: account.phone, access: try #require(fresh["access_token"]?.string))
        for (name, call) in Self.sensitive(renewed, passkeyID: passkeyID, deviceKeyID: deviceKeyID) where name != "add passkey" && name != "revoke passkey" {
            let (status, json) = try call()
            #expect(status != 401, "\(name) after a step-up: \(json.serialized)")
        }
    }

    @Test("adding a passkey is finished when its options were fresh, though the window passed since; a token that could not have begun it is refused, and the auth_session stays good for one that could")
    func addingFinishesAsOfItsStart() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "slow@signet.test")
        // Options 200 s after the sign-in; the registration comes 200 s later, past the window.
        server.clock.advance(200)
        let made = try account.makePasskey(SoftwareAuthenticator())
        server.clock.advance(200)
        #expect(try account.call("POST", "/me/passkeys/options", .object([:])).json["reason"] == .string("step_up_required"), "the window has passed")
        let (added, info) = try account.call("POST", "/me/passkeys", .object(made))
        #expect(added == 201, "\(info.serialized)")
        #expect(try account.passkeys().count == 2)

        // A ceremony begun by a fresh token of the account (another sign-in) cannot be finished
        // with the stale one: as of its start, that token was past the window.
        let again = SignedIn(server, phone: account.phone, access: try #require(try account.phone.signIn()["access_token"]?.string))
        let other = try again.makePasskey(SoftwareAuthenticator())
        let raw = try server.send("POST", "/me/passkeys", headers: account.bearer, body: Array(JSONValue.object(other).serialized.utf8))
        let refusal = try StrictJSON().parse(raw.body)
        #expect(raw.status == 401 && refusal["reason"] == .string("step_up_required"), "\(refusal.serialized)")
        #expect(raw.headers["www-authenticate"]?.contains(#"error="insufficient_user_authentication""#) == true)
        // Refused before the ceremony: the auth_session is not spent, and the token that began it finishes it.
        #expect(try again.call("POST", "/me/passkeys", .object(other)).status == 201)
        #expect(try account.passkeys().count == 3)

        // How late is bounded by the auth_session's own life.
        let late = try again.makePasskey(SoftwareAuthenticator())
        server.clock.advance(Double(server.app.configuration.sessionTimeout + 1))
        #expect(try again.call("POST", "/me/passkeys", .object(late)).json["reason"] == .string("auth_session_expired"))
    }

    @Test("only a token of the sign-in session that began adding a passkey finishes it; another session's is refused before the auth_session is spent")
    func addingBoundToItsSession() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "bound@signet.test")
        // Another sign-in of the same account, as fresh: a token of another session.
        let other = SignedIn(server, phone: account.phone, access: try #require(try account.phone.signIn()["access_token"]?.string))
        let made = try other.makePasskey(SoftwareAuthenticator())
        let (refused, refusal) = try account.call("POST", "/me/passkeys", .object(made))
        #expect(refused == 400 && refusal["reason"] == .string("ceremony_mismatch"), "\(refusal.serialized)")
        #expect(try account.passkeys().count == 1)
        #expect(try server.store.auditEvents(limit: 50).contains { $0.kind == AuditKind.addPasskey.rawValue && $0.outcome == "failure" && $0.reason == "ceremony_mismatch" })
        // Not spent: the session that began it finishes it.
        #expect(try other.call("POST", "/me/passkeys", .object(made)).status == 201)
        #expect(try account.passkeys().count == 2)

        // A refreshed token is of the same session: it finishes what the token before it began.
        let tokens = try Phone(server).signUp(email: "refreshing@signet.test")
        let first = SignedIn(server, phone: account.phone, access: try #require(tokens["access_token"]?.string))
        let begun = try first.makePasskey(SoftwareAuthenticator())
        let (_, refreshed) = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": tokens["refresh_token"]!,
        ]))
        let next = SignedIn(server, phone: account.phone, access: try #require(refreshed["access_token"]?.string))
        let (added, info) = try next.call("POST", "/me/passkeys", .object(begun))
        #expect(added == 201, "\(info.serialized)")
    }

    @Test("a refreshed token keeps its sign-in's auth_time, so a refresh is no step-up")
    func refreshIsNoStepUp() throws {
        let server = try TestServer()
        let tokens = try Phone(server).signUp(email: "refresh@signet.test")
        server.clock.advance(301)
        let (_, refreshed) = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": tokens["refresh_token"]!,
        ]))
        let access = try #require(refreshed["access_token"]?.string)
        let (status, json) = try server.post("/me/passkeys/options", .object([:]), headers: [("Authorization", "Bearer \(access)")])
        #expect(status == 401 && json["reason"] == .string("step_up_required"))
    }

    @Test("a step-up lists only the account's passkeys, and another account's passkey is refused with user_mismatch")
    func otherAccountRefused() throws {
        let server = try TestServer()
        let ada = try SignedIn(server, email: "ada@signet.test")
        let eve = try SignedIn(server, email: "eve@signet.test")
        let (status, json) = try server.post("/passkey/challenge", .object(["client_id": .string("app")]), headers: ada.bearer)
        #expect(status == 200)
        let options = try #require(json["authn_params_public_key"])
        let adaPasskey = try #require(ada.phone.authenticator.credentials.first?.id)
        #expect(options["allowCredentials"]?.array?.compactMap { $0["id"]?.string } == [Base64URL.encode(adaPasskey)])
        // Eve answers Ada's step-up challenge with her own passkey.
        let challenge = try #require(options["challenge"]?.string.flatMap { Base64URL.decode($0) })
        let eves = try eve.phone.authenticator.authenticate(rpID: TestServer.rpID, origin: TestServer.origin, challenge: challenge)
        let (refused, answer) = try ada.phone.exchange(session: try #require(json["auth_session"]?.string), credential: eves.json)
        #expect(refused == 400 && answer["reason"] == .string("user_mismatch"), "\(answer.serialized)")
        // A step-up needs a valid token for Signet's own audience.
        #expect(try server.post("/passkey/challenge", .object(["client_id": .string("app")]), headers: [("Authorization", "Bearer nope")]).status == 401)
    }
}

/// Tokens for a resource server do not open Signet's account API.
@Suite struct AudienceTests {
    @Test("a token for https://api.signet.test is refused at /me/passkeys and /actions; one for {issuer}/me is accepted; a refresh mints a token per audience")
    func audiences() throws {
        let server = try TestServer()
        let phone = Phone(server)
        let (session, credential) = try phone.startSignUp(email: "aud@signet.test")
        let (status, tokens) = try server.post("/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("app"), "auth_session": .string(session), "authn_response": credential,
            "audience": .string("https://api.signet.test"),
        ]))
        #expect(status == 200, "\(tokens.serialized)")
        let api = [("Authorization", "Bearer \(try #require(tokens["access_token"]?.string))")]
        for (method, path) in [("GET", "/me/passkeys"), ("GET", "/me/device-keys"), ("POST", "/actions/challenge")] {
            let answer = try server.send(method, path, headers: api, body: method == "POST" ? Array("{}".utf8) : [])
            #expect(try answer.status == 401 && StrictJSON().parse(answer.body)["reason"] == .string("token_audience_invalid"), "\(path)")
            #expect(answer.headers["www-authenticate"] == #"Bearer error="invalid_token""#)
        }
        // /userinfo takes any Signet token with openid.
        #expect(try server.get("/userinfo", headers: api).status == 200)
        // The refresh token mints a token for Signet's own audience (and back).
        let (refreshed, me) = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": tokens["refresh_token"]!, "audience": .string("https://signet.test/me"),
        ]))
        #expect(refreshed == 200)
        #expect(try server.get("/me/passkeys", headers: [("Authorization", "Bearer \(try #require(me["access_token"]?.string))")]).status == 200)
        // An audience that is not the client's is refused, also at refresh.
        let (other, refused) = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": me["refresh_token"]!, "audience": .string("https://evil.example"),
        ]))
        #expect(other == 400 && refused["reason"] == .string("audience_not_allowed"))
    }
}

/// Sessions end with the credential that started them, and at their absolute lifetime.
@Suite struct SessionLifecycleTests {
    @Test("revoking the passkey that signed in makes that sign-in's refresh token fail; the other passkey's session lives on")
    func revokedCredentialEndsSession() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "two@signet.test")
        let laptop = SoftwareAuthenticator()
        #expect(try account.addPasskey(laptop).status == 201)
        let laptopTokens = try Phone(server, authenticator: laptop).signIn()
        let phoneTokens = try account.phone.signIn()
        let laptopID = Base64URL.encode(try #require(laptop.credentials.first?.id))
        #expect(try account.call("DELETE", "/me/passkeys/\(laptopID)").status == 204)
        func refresh(_ tokens: JSONValue) throws -> (status: Int, json: JSONValue) {
            try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": tokens["refresh_token"]!]))
        }
        let (status, json) = try refresh(laptopTokens)
        #expect(status == 400 && json["reason"] == .string("refresh_token_revoked"), "\(json.serialized)")
        #expect(try refresh(phoneTokens).status == 200)
        #expect(try server.store.auditEvents(limit: 5).contains { $0.kind == "refresh" && $0.reason == "refresh_token_revoked" })
    }

    @Test("a refresh family ends at its absolute lifetime however often it rotates")
    func absoluteLifetime() throws {
        let server = try TestServer { $0.refreshTokenLifetime = 3600; $0.refreshTokenAbsoluteLifetime = 3 * 3600 }
        var token = try #require(try Phone(server).signUp(email: "abs@signet.test")["refresh_token"])
        for _ in 0..<2 {
            server.clock.advance(3000)
            let (status, json) = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": token]))
            #expect(status == 200)
            token = try #require(json["refresh_token"])
        }
        // Rotated at 3,000 and 6,000 s; the one rotated at 9,000 s would slide to 12,600 s but ends
        // at the family's absolute 10,800 s: at 11,000 s it is expired.
        server.clock.advance(3000)
        let (status, json) = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": token]))
        #expect(status == 200)
        token = try #require(json["refresh_token"])
        server.clock.advance(2000)
        let (expired, answer) = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": token]))
        #expect(expired == 400 && answer["reason"] == .string("refresh_token_expired"), "\(answer.serialized)")
    }

    @Test("the purge forgets a refresh token a day after its family's absolute lifetime from the token's making, not before; a live session's stay")
    func purgedAfterAbsoluteLifetime() throws {
        let server = try TestServer { $0.refreshTokenLifetime = 3600; $0.refreshTokenAbsoluteLifetime = 3 * 3600 }
        func refresh(_ token: JSONValue) throws -> (status: Int, json: JSONValue) {
            try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": token]))
        }
        func count() throws -> Int { try server.store.rowCounts()["refresh_tokens"] ?? -1 }
        func purge() throws -> Int { try server.app.service.ceremonies.purgeRefreshTokens() }
        let first = try #require(try Phone(server).signUp(email: "old@signet.test")["refresh_token"])
        server.clock.advance(3000)
        let rotated = try #require(try refresh(first).json["refresh_token"])
        #expect(try count() == 2)
        // Both expired, the family ended at 10,800 s; a day after that, less 10 s: nothing goes,
        // and each is still told apart (reuse revokes the family, as ever).
        server.clock.advance(3 * 3600 + 86_400 - 3000 - 10)
        #expect(try purge() == 0)
        #expect(try refresh(rotated).json["reason"] == .string("refresh_token_expired"))
        #expect(try refresh(first).json["reason"] == .string("refresh_token_reused"))
        let live = try #require(try Phone(server).signUp(email: "new@signet.test")["refresh_token"])
        // 20 s later the first token, made at 0 s, goes; the rotated one, made at 3,000 s, stays until 3,000 s later.
        server.clock.advance(20)
        #expect(try purge() == 1)
        #expect(try refresh(first).json["reason"] == .string("refresh_token_unknown"))
        #expect(try refresh(rotated).json["reason"] == .string("refresh_token_revoked"), "the reuse above revoked the family")
        server.clock.advance(3000)
        #expect(try purge() == 1)
        #expect(try refresh(rotated).json["reason"] == .string("refresh_token_unknown"))
        #expect(try count() == 1 && refresh(live).status == 200)
    }
}
