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

extension SignedIn {
    @discardableResult
    func enroll(_ key: SoftwareDeviceKey, x963: Bool = false, platform: String = "ios") throws -> String {
        let (status, json) = try call("POST", "/me/device-keys", .object([
            "public_key": .string(Base64URL.encode(x963 ? key.publicKeyX963 : key.publicKeySPKI)), "device_id": .string(key.deviceID),
            "platform": .string(platform), "name": .string("Test phone"),
        ]))
        try #require(status == 201, "enrol: \(json.serialized)")
        return try #require(json["id"]?.string)
    }

    func challenge(_ keyID: String, _ action: JSONValue = Transfer.action) throws -> (status: Int, json: JSONValue) {
        try call("POST", "/actions/challenge", .object(["device_key_id": .string(keyID), "action": action]))
    }

    func approve(_ challengeID: String, signature: [UInt8]) throws -> (status: Int, json: JSONValue) {
        try call("POST", "/actions/approve", .object(["challenge_id": .string(challengeID), "signature": .string(Base64URL.encode(signature))]))
    }

    /// Challenge, sign with `signer` (default: the enrolled key) over `bytes` (default: the challenge), approve.
    func approveAction(_ keyID: String, key: SoftwareDeviceKey, signer: SoftwareDeviceKey? = nil, over bytes: [UInt8]? = nil) throws -> (status: Int, json: JSONValue) {
        let (_, challenge) = try self.challenge(keyID)
        let id = try #require(challenge["challenge_id"]?.string)
        let raw = try #require(challenge["challenge"]?.string.flatMap { Base64URL.decode($0) })
        return try approve(id, signature: (signer ?? key).sign(bytes ?? raw))
    }
}

enum Transfer {
    static let action = JSONValue.object(["type": .string("payment"), "amount": .number("200.00"), "currency": .string("EUR"), "to": .string("DE89370400440532013000")])
    /// SHA-256 of the canonical JSON, written out by hand (RFC 8785: sorted members, 200.00 → 200).
    static let canonical = #"{"amount":200,"currency":"EUR","to":"DE89370400440532013000","type":"payment"}"#
}

@Suite struct DeviceKeyTests {
    @Test("enrol SPKI and X9.63 keys; list; revoke")
    func enrolListRevoke() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "dk@signet.test")
        let phone = try SoftwareDeviceKey(deviceID: "iphone-1"), android = try SoftwareDeviceKey(deviceID: "pixel-1")
        let a = try account.enroll(phone)
        let b = try account.enroll(android, x963: true, platform: "android")
        let list = try account.call("GET", "/me/device-keys").json["device_keys"]?.array ?? []
        #expect(Set(list.compactMap { $0["id"]?.string }) == [a, b])
        #expect(list.first { $0["id"]?.string == b }?["platform"] == .string("android"))
        #expect(try account.call("DELETE", "/me/device-keys/\(a)").status == 204)
        #expect(try account.call("DELETE", "/me/device-keys/\(a)").json["reason"] == .string("device_key_unknown"))
        #expect(try account.call("GET", "/me/device-keys").json["device_keys"]?.array?.count == 1)
        let events = try server.store.auditEvents(limit: 10).map(\.kind)
        #expect(events.contains("device_key_enrolled") && events.contains("device_key_revoked"))
    }

    @Test("bad keys are refused with a clear reason and leave nothing behind", arguments: [
        ("P-384 key", "device_key_unsupported"), ("Ed25519 key", "device_key_unsupported"), ("point off the curve", "device_key_invalid"),
        ("garbage", "device_key_invalid"), ("truncated SPKI", "device_key_invalid"), ("not base64url", "device_key_invalid"),
    ])
    func badKeys(_ name: String, _ reason: String) throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "bad@signet.test")
        let good = try SoftwareDeviceKey(deviceID: "x")
        let text: String
        switch name {
        case "P-384 key": text = Base64URL.encode(try PrivateKey.generate(.ec(.p384)).publicKey.spki)
        case "Ed25519 key": text = Base64URL.encode(try PrivateKey.generate(.edwards(.ed25519)).publicKey.spki)
        case "point off the curve":
            var point = good.publicKeyX963
            point[64] ^= 1
            text = Base64URL.encode(point)
        case "garbage": text = Base64URL.encode(SecureRandom.bytes(70))
        case "truncated SPKI": text = Base64URL.encode(Array(good.publicKeySPKI.dropLast(3)))
        default: text = "!!!"
        }
        let (status, json) = try account.call("POST", "/me/device-keys", .object(["public_key": .string(text), "device_id": .string("d"), "platform": .string("ios")]))
        #expect(status == 400 && json["reason"] == .string(reason), "\(name): \(json.serialized)")
        #expect(server.counts["device_keys"] == 0)
    }

    @Test("keys per account are capped")
    func cap() throws {
        let server = try TestServer { $0.maxDeviceKeys = 2 }
        let account = try SignedIn(server, email: "cap@signet.test")
        try account.enroll(try SoftwareDeviceKey(deviceID: "a"))
        try account.enroll(try SoftwareDeviceKey(deviceID: "b"))
        let (status, json) = try account.call("POST", "/me/device-keys", .object([
            "public_key": .string(Base64URL.encode(try SoftwareDeviceKey(deviceID: "c").publicKeySPKI)), "device_id": .string("c"), "platform": .string("ios"),
        ]))
        #expect(status == 409 && json["reason"] == .string("device_key_limit"))
        #expect(server.counts["device_keys"] == 2)
    }

    @Test("re-enrolling a device (biometric set changed) revokes its old key")
    func reEnrol() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "re@signet.test")
        let old = try SoftwareDeviceKey(deviceID: "iphone")
        let oldID = try account.enroll(old)
        let (_, pending) = try account.challenge(oldID)
        let new = try SoftwareDeviceKey(deviceID: "iphone")
        let (status, json) = try account.call("POST", "/me/device-keys", .object([
            "public_key": .string(Base64URL.encode(new.publicKeySPKI)), "device_id": .string("iphone"), "platform": .string("ios"),
        ]))
        #expect(status == 201 && json["replaced"] == .array([.string(oldID)]))
        // The old key can neither start nor finish an approval.
        #expect(try account.challenge(oldID).json["reason"] == .string("device_key_revoked"))
        let raw = try #require(pending["challenge"]?.string.flatMap { Base64URL.decode($0) })
        let (refused, answer) = try account.approve(try #require(pending["challenge_id"]?.string), signature: try old.sign(raw))
        #expect(refused == 400 && answer["reason"] == .string("device_key_revoked"))
        #expect(try account.approveAction(try #require(json["id"]?.string), key: new).status == 200)
    }
}

@Suite struct ActionTests {
    @Test("approve once: the action token verifies with the JWKS and carries the action")
    func approve() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "pay@signet.test")
        let key = try SoftwareDeviceKey(deviceID: "iphone")
        let keyID = try account.enroll(key, x963: true)
        let (status, challenge) = try account.challenge(keyID)
        #expect(status == 200 && challenge["expires_in"] == .number("120"))
        let expectedHash = Base64URL.encode(Digest.sha256.hash(Array(Transfer.canonical.utf8)))
        #expect(challenge["action_hash"] == .string(expectedHash))
        #expect(challenge["challenge"]?.string.flatMap { Base64URL.decode($0) }?.count == 32)
        let raw = try #require(challenge["challenge"]?.string.flatMap { Base64URL.decode($0) })
        let (approved, answer) = try account.approve(try #require(challenge["challenge_id"]?.string), signature: try key.sign(raw))
        #expect(approved == 200, "\(answer.serialized)")
        let token = try #require(answer["action_token"]?.string)
        let jwks = try StrictJSON().parse(try server.get("/.well-known/jwks.json").body)
        let (header, claims) = try IndependentTokenTests.verify(token, jwks: jwks)
        #expect(header["typ"] == .string("action+jwt"))
        #expect(claims["aud"] == .string("https://signet.test/actions"))
        #expect(claims["action_hash"] == .string(expectedHash))
        #expect(claims["action"] == Transfer.action.canonicalized)
        #expect(claims["amr"] == .array([.string("hwk")]))
        #expect(claims["device_key_id"] == .string(keyID))
        #expect(try #require(claims["exp"]?.int64) - (try #require(claims["iat"]?.int64)) == 300)
        #expect(claims["jti"]?.string != nil)
        let user = try #require(try server.store.user(email: "pay@signet.test"))
        #expect(claims["sub"] == .string(user.id))
        #expect(try server.store.auditEvents(limit: 5).contains { $0.kind == "action_approved" && $0.outcome == "success" })

        // The service about to pay checks the token for this action: once.
        // Only a confidential client may use it up, and only for the account that approved it.
        #expect(try server.verifyAction(token, Transfer.action, sub: user.id, headers: []).json["reason"] == .string("client_secret_invalid"))
        let wrongSecret = ("Authorization", "Basic " + Data("bank:guess".utf8).base64EncodedString())
        #expect(try server.verifyAction(token, Transfer.action, sub: user.id, headers: [wrongSecret]).status == 401)
        let (other, otherSub) = try server.verifyAction(token, Transfer.action, sub: "someone-else")
        #expect(other == 400 && otherSub["reason"] == .string("action_subject_mismatch"))
        let (ok, verified) = try server.verifyAction(token, Transfer.action, sub: user.id)
        #expect(ok == 200 && verified["valid"] == .bool(true))
        let (again, reused) = try server.verifyAction(token, Transfer.action, sub: user.id)
        #expect(again == 400 && reused["reason"] == .string("action_token_used"))
    }

    @Test("an action token presented for a different action is refused")
    func otherAction() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "other@signet.test")
        let key = try SoftwareDeviceKey(deviceID: "p")
        let (_, answer) = try account.approveAction(try account.enroll(key), key: key)
        let token = try #require(answer["action_token"]?.string)
        let bigger = JSONValue.object(["type": .string("payment"), "amount": .number("2000"), "currency": .string("EUR"), "to": .string("DE89370400440532013000")])
        let sub = try #require(try server.store.user(email: "other@signet.test")).id
        let (status, json) = try server.verifyAction(token, bigger, sub: sub)
        #expect(status == 400 && json["reason"] == .string("action_mismatch"))
        // Member order and number spelling do not matter: the canonical form does.
        let reordered = try StrictJSON().parse(Array(#"{"to":"DE89370400440532013000","currency":"EUR","amount":2e2,"type":"payment"}"#.utf8))
        #expect(try server.verifyAction(token, reordered, sub: sub).status == 200)
    }

    @Test("an approval is withdrawn when its device key is revoked or the account blocked before the service checks it")
    func withdrawnApproval() throws {
        let server = try TestServer.withOperators()
        let account = try SignedIn(server, email: "stolen@signet.test")
        let sub = try #require(try server.store.user(email: "stolen@signet.test")).id
        let lost = try SoftwareDeviceKey(deviceID: "lost-phone")
        let lostID = try account.enroll(lost)
        let first = try #require(try account.approveAction(lostID, key: lost).json["action_token"]?.string)
        let second = try #require(try account.approveAction(lostID, key: lost).json["action_token"]?.string)
        // The phone is reported stolen: what it approved a moment ago no longer passes.
        #expect(try account.call("DELETE", "/me/device-keys/\(lostID)").status == 204)
        let (status, json) = try server.verifyAction(first, Transfer.action, sub: sub)
        #expect(status == 400 && json["reason"] == .string("device_key_revoked"), "\(json.serialized)")
        // A refusal does not use the token up; it stays refused for the same reason.
        #expect(try server.verifyAction(first, Transfer.action, sub: sub).json["reason"] == .string("device_key_revoked"))
        #expect(try server.verifyAction(second, Transfer.action, sub: sub).json["reason"] == .string("device_key_revoked"))
        // A key still enrolled approves; then the account is blocked before the check.
        let kept = try SoftwareDeviceKey(deviceID: "new-phone")
        let keptID = try account.enroll(kept)
        let third = try #require(try account.approveAction(keptID, key: kept).json["action_token"]?.string)
        #expect(try server.api("PATCH", "/api/v2/users/\(sub)", token: try server.managementToken(), .object(["blocked": .bool(true)])).status == 200)
        let (blocked, refusal) = try server.verifyAction(third, Transfer.action, sub: sub)
        #expect(blocked == 403 && refusal["reason"] == .string("user_blocked"), "\(refusal.serialized)")
        // Unblocked within the token's life, the approval counts again (once).
        #expect(try server.api("PATCH", "/api/v2/users/\(sub)", token: try server.managementToken(), .object(["blocked": .bool(false)])).status == 200)
        #expect(try server.verifyAction(third, Transfer.action, sub: sub).status == 200)
        #expect(try server.verifyAction(third, Transfer.action, sub: sub).json["reason"] == .string("action_token_used"))
    }

    @Test("a replayed challenge is unknown the second time")
    func replay() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "replay@signet.test")
        let key = try SoftwareDeviceKey(deviceID: "p")
        let keyID = try account.enroll(key)
        let (_, challenge) = try account.challenge(keyID)
        let id = try #require(challenge["challenge_id"]?.string)
        let signature = try key.sign(try #require(challenge["challenge"]?.string.flatMap { Base64URL.decode($0) }))
        #expect(try account.approve(id, signature: signature).status == 200)
        let (status, json) = try account.approve(id, signature: signature)
        #expect(status == 400 && json["reason"] == .string("action_challenge_unknown"))
    }

    @Test("an expired challenge")
    func expired() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "late@signet.test")
        let key = try SoftwareDeviceKey(deviceID: "p")
        let keyID = try account.enroll(key)
        let (_, challenge) = try account.challenge(keyID)
        server.clock.advance(121)
        let signature = try key.sign(try #require(challenge["challenge"]?.string.flatMap { Base64URL.decode($0) }))
        let (status, json) = try account.approve(try #require(challenge["challenge_id"]?.string), signature: signature)
        #expect(status == 400 && json["reason"] == .string("action_challenge_expired"))
    }

    @Test("signature by another key, over other bytes, with another enrolled key of the account, or not DER")
    func badSignatures() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "sig@signet.test")
        let key = try SoftwareDeviceKey(deviceID: "phone"), second = try SoftwareDeviceKey(deviceID: "tablet")
        let keyID = try account.enroll(key)
        try account.enroll(second)
        let stranger = try SoftwareDeviceKey(deviceID: "stranger")
        #expect(try account.approveAction(keyID, key: key, signer: stranger).json["reason"] == .string("signature_invalid"))
        #expect(try account.approveAction(keyID, key: key, over: SecureRandom.bytes(32)).json["reason"] == .string("signature_invalid"))
        #expect(try account.approveAction(keyID, key: key, signer: second).json["reason"] == .string("signature_invalid"))
        let (_, challenge) = try account.challenge(keyID)
        let (status, json) = try account.approve(try #require(challenge["challenge_id"]?.string), signature: [0x30, 0x05, 0x02, 0x01, 0x01])
        #expect(status == 400 && json["reason"] == .string("malformed"))
        #expect(try server.store.auditEvents(limit: 10).contains { $0.kind == "action_approved" && $0.reason == "signature_invalid" })
    }

    @Test("a challenge of another account")
    func otherAccount() throws {
        let server = try TestServer()
        let alice = try SignedIn(server, email: "alice3@signet.test"), mallory = try SignedIn(server, email: "mallory3@signet.test")
        let key = try SoftwareDeviceKey(deviceID: "p")
        let (_, challenge) = try alice.challenge(try alice.enroll(key))
        let signature = try key.sign(try #require(challenge["challenge"]?.string.flatMap { Base64URL.decode($0) }))
        let (status, json) = try mallory.approve(try #require(challenge["challenge_id"]?.string), signature: signature)
        #expect(status == 400 && json["reason"] == .string("action_challenge_account_mismatch"))
        // Mallory cannot ask for a challenge on Alice's key either.
        let aliceKeyID = try #require(alice.call("GET", "/me/device-keys").json["device_keys"]?.array?.first?["id"]?.string)
        #expect(try mallory.challenge(aliceKeyID).json["reason"] == .string("device_key_unknown"))
    }

    @Test("a key revoked between challenge and approval")
    func revokedKey() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "rev@signet.test")
        let key = try SoftwareDeviceKey(deviceID: "p")
        let keyID = try account.enroll(key)
        let (_, challenge) = try account.challenge(keyID)
        #expect(try account.call("DELETE", "/me/device-keys/\(keyID)").status == 204)
        let signature = try key.sign(try #require(challenge["challenge"]?.string.flatMap { Base64URL.decode($0) }))
        #expect(try account.approve(try #require(challenge["challenge_id"]?.string), signature: signature).json["reason"] == .string("device_key_revoked"))
    }

    @Test("challenge creation is rate limited per account")
    func rateLimit() throws {
        let server = try TestServer { $0.actionRateLimit = 3 }
        let account = try SignedIn(server, email: "rl@signet.test"), other = try SignedIn(server, email: "rl2@signet.test")
        let keyID = try account.enroll(try SoftwareDeviceKey(deviceID: "p"))
        for _ in 0..<3 { #expect(try account.challenge(keyID).status == 200) }
        let response = try server.send("POST", "/actions/challenge", headers: account.bearer,
                                                body: Array(JSONValue.object(["device_key_id": .string(keyID), "action": Transfer.action]).serialized.utf8))
        #expect(response.status == 429 && response.headers["retry-after"] == "60")
        #expect(try StrictJSON().parse(response.body)["reason"] == .string("rate_limited"))
        // Another account is not affected; and a minute later this one may ask again.
        #expect(try other.challenge(try other.enroll(try SoftwareDeviceKey(deviceID: "q"))).status == 200)
        server.clock.advance(61)
        #expect(try account.challenge(keyID).status == 200)
    }

    @Test("actions of any shape are refused clearly", arguments: [
        ("not an object", JSONValue.string("pay 200")), ("no type", .object(["amount": .number("1")])),
        ("type not a string", .object(["type": .number("1")])),
        ("too deep", .object(["type": .string("t"), "a": .array([.array([.array([.array([.array([.array([.array([.array([.number("1")])])])])])])])])])),
        ("too big", .object(["type": .string("t"), "memo": .string(String(repeating: "x", count: 5000))])),
        ("number out of range", .object(["type": .string("t"), "n": .number("1e999")])),
    ])
    func badActions(_ name: String, _ action: JSONValue) throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "shape@signet.test")
        let keyID = try account.enroll(try SoftwareDeviceKey(deviceID: "p"))
        let (status, json) = try account.challenge(keyID, action)
        #expect(status == 400 && json["reason"] == .string("action_invalid"), "\(name): \(json.serialized)")
        #expect(server.counts["action_challenges"] == 0)
    }

    @Test("no bearer, no approval")
    func unauthenticated() throws {
        let server = try TestServer()
        #expect(try server.post("/actions/challenge", .object(["device_key_id": .string("x"), "action": Transfer.action])).status == 401)
        #expect(try server.post("/actions/approve", .object(["challenge_id": .string("x"), "signature": .string("AA")])).status == 401)
    }
}

@Suite struct PasskeyActionTests {
    static func start(_ account: SignedIn) throws -> (id: String, challenge: [UInt8], options: JSONValue) {
        let (status, json) = try account.call("POST", "/actions/challenge", .object(["method": .string("passkey"), "action": Transfer.action]))
        try #require(status == 200, "\(json.serialized)")
        let options = try #require(json["authn_params_public_key"])
        let challenge = try #require(json["challenge"]?.string.flatMap { Base64URL.decode($0) })
        #expect(options["challenge"] == json["challenge"])
        return (try #require(json["challenge_id"]?.string), challenge, options)
    }

    static func approve(_ account: SignedIn, _ id: String, _ assertion: SoftwareAuthenticator.AssertionResponse) throws -> (status: Int, json: JSONValue) {
        try account.call("POST", "/actions/approve", .object(["challenge_id": .string(id), "authn_response": assertion.json]))
    }

    @Test("approve with a passkey on the web: options limited to the account's passkeys, amr pop + user")
    func approve() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "web@signet.test")
        let (id, challenge, options) = try Self.start(account)
        #expect(options["allowCredentials"]?.array?.count == 1)
        let assertion = try account.phone.authenticator.authenticate(rpID: TestServer.rpID, origin: TestServer.origin, challenge: challenge)
        let (status, json) = try Self.approve(account, id, assertion)
        #expect(status == 200, "\(json.serialized)")
        let jwks = try StrictJSON().parse(try server.get("/.well-known/jwks.json").body)
        let (_, claims) = try IndependentTokenTests.verify(try #require(json["action_token"]?.string), jwks: jwks)
        #expect(claims["amr"] == .array([.string("pop"), .string("user")]))
        #expect(claims["action_hash"] == .string(Base64URL.encode(Digest.sha256.hash(Array(Transfer.canonical.utf8)))))
        #expect(try Self.approve(account, id, assertion).json["reason"] == .string("action_challenge_unknown"))
    }

    @Test("a passkey's approval is withdrawn when the passkey is revoked before the service checks it")
    func withdrawnByRevocation() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "webw@signet.test")
        let sub = try #require(try server.store.user(email: "webw@signet.test")).id
        let (id, challenge, _) = try Self.start(account)
        let assertion = try account.phone.authenticator.authenticate(rpID: TestServer.rpID, origin: TestServer.origin, challenge: challenge)
        let token = try #require(try Self.approve(account, id, assertion).json["action_token"]?.string)
        // A second passkey keeps the account reachable, so the first may go.
        #expect(try account.addPasskey(SoftwareAuthenticator()).status == 201)
        let first = Base64URL.encode(assertion.credentialID)
        #expect(try account.call("DELETE", "/me/passkeys/\(first)").status == 204)
        let (status, json) = try server.verifyAction(token, Transfer.action, sub: sub)
        #expect(status == 400 && json["reason"] == .string("credential_revoked"), "\(json.serialized)")
    }

    @Test("passkey approval refusals: another account's passkey, a tampered signature, an expired challenge")
    func refusals() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "webr@signet.test"), mallory = try SignedIn(server, email: "webm@signet.test")
        var (id, challenge, _) = try Self.start(account)
        let foreign = try mallory.phone.authenticator.authenticate(rpID: TestServer.rpID, origin: TestServer.origin, challenge: challenge)
        #expect(try Self.approve(account, id, foreign).json["reason"] == .string("credential_unknown"))
        (id, challenge, _) = try Self.start(account)
        var tamper = Tamper()
        tamper.signature = { $0[$0.count - 2] ^= 1 }
        let bent = try account.phone.authenticator.authenticate(rpID: TestServer.rpID, origin: TestServer.origin, challenge: challenge, tamper: tamper)
        #expect(try Self.approve(account, id, bent).json["reason"] == .string("signature_invalid"))
        (id, challenge, _) = try Self.start(account)
        let other = try account.phone.authenticator.authenticate(rpID: TestServer.rpID, origin: TestServer.origin, challenge: SecureRandom.bytes(32))
        #expect(try Self.approve(account, id, other).json["reason"] == .string("challenge_mismatch"))
        (id, challenge, _) = try Self.start(account)
        server.clock.advance(121)
        let late = try account.phone.authenticator.authenticate(rpID: TestServer.rpID, origin: TestServer.origin, challenge: challenge)
        #expect(try Self.approve(account, id, late).json["reason"] == .string("action_challenge_expired"))
    }
}

extension JSONValue {
    /// The value after a canonical round trip (how the server stores an action).
    var canonicalized: JSONValue { (try? StrictJSON().parse(Array(((try? canonical()) ?? "").utf8))) ?? .null }
}
