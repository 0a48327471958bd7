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

/// One sign-in (or sign-up) defect: how the request is spoiled and the reason it must get.
struct ServerDefect: Sendable, CustomTestStringConvertible {
    let name: String
    let status: Int
    let reason: String
    var signUp = false
    var requireUV = false
    var tamper = Tamper()
    var origin = TestServer.origin
    /// Changes the credential JSON after the authenticator made it.
    var edit: @Sendable (inout JSONValue, Phone) -> Void = { _, _ in }
    var clientID = "app"
    var testDescription: String { "\(name) → \(status) \(reason)" }

    init(_ name: String, _ status: Int, _ reason: String, build: (inout ServerDefect) -> Void = { _ in }) {
        self.name = name
        self.status = status
        self.reason = reason
        build(&self)
    }
}

extension JSONValue {
    /// Sets `response.<member>` of a credential JSON.
    mutating func setResponse(_ member: String, _ value: JSONValue) {
        guard case .object(var top) = self, case .object(var response)? = top["response"] else { return }
        response[member] = value
        top["response"] = .object(response)
        self = .object(top)
    }
}

@Suite struct RejectionTests {
    static let defects: [ServerDefect] = [
        .init("tampered signature", 400, "signature_invalid") { $0.tamper.signature = { $0[$0.count - 2] ^= 0x10 } },
        .init("wrong origin", 400, "origin_not_allowed") { $0.origin = "https://evil.test" },
        .init("unknown apk-key-hash origin", 400, "origin_not_allowed") { $0.origin = "android:apk-key-hash:" + Base64URL.encode(SecureRandom.bytes(32)) },
        .init("wrong rpIdHash", 400, "rp_id_hash_mismatch") { $0.tamper.authenticatorData = { $0.rpIdHash = Digest.sha256.hash(Array("evil.test".utf8)) } },
        .init("wrong clientData type", 400, "type_mismatch") { $0.tamper.clientData = { $0.type = "webauthn.create" } },
        .init("UP clear", 400, "user_not_present") { $0.tamper.authenticatorData = { $0.flags.remove(.userPresent) } },
        .init("BS without BE", 400, "backup_state_invalid") { $0.tamper.authenticatorData = { $0.flags.remove(.backupEligible) } },
        .init("auth session of another client", 400, "auth_session_client_mismatch") { $0.clientID = "other" },
        .init("UV clear while required", 400, "user_not_verified") {
            $0.requireUV = true
            $0.tamper.authenticatorData = { $0.flags.remove(.userVerified) }
        },
        .init("another user's userHandle", 400, "user_handle_mismatch") { defect in
            defect.edit = { credential, _ in credential.setResponse("userHandle", .string(Base64URL.encode(SecureRandom.bytes(32)))) }
        },
        .init("signature not base64url", 400, "malformed") { $0.edit = { credential, _ in credential.setResponse("signature", .string("***")) } },
        .init("sign-up: wrong origin", 400, "origin_not_allowed") {
            $0.signUp = true
            $0.origin = "https://evil.test"
        },
        .init("sign-up: tampered attestation", 400, "malformed") {
            $0.signUp = true
            $0.edit = { credential, _ in credential.setResponse("attestationObject", .string(Base64URL.encode([0xa0]))) }
        },
        .init("sign-up: UP clear", 400, "user_not_present") {
            $0.signUp = true
            $0.tamper.authenticatorData = { $0.flags.remove(.userPresent) }
        },
        .init("sign-up answered with an assertion", 400, "ceremony_mismatch") {
            $0.signUp = true
            $0.edit = { credential, _ in credential.setResponse("attestationObject", .null) }
        },
    ]

    /// Runs one defect against a server that already has one account, and checks that nothing but
    /// the auth session changed.
    @Test("rejected with its reason, nothing created or consumed", arguments: defects)
    func rejection(_ defect: ServerDefect) throws {
        let server = try TestServer { if defect.requireUV { $0.userVerification = "required" } }
        var phone = Phone(server)
        _ = try phone.signUp(email: "owner@signet.test")
        phone.origin = defect.origin
        let (session, credential): (String, JSONValue)
        if defect.signUp {
            (session, credential) = try phone.startSignUp(email: "new@signet.test", tamper: defect.tamper)
        } else {
            let started = try phone.startSignIn(tamper: defect.tamper)
            (session, credential) = (started.session, started.credential)
        }
        var spoiled = credential
        defect.edit(&spoiled, phone)
        let before = server.counts
        let ownerBefore = try server.store.user(email: "owner@signet.test")
        let signCountBefore = try server.store.credentials(userID: ownerBefore?.id ?? "").first?.signCount
        let (status, json) = try phone.exchange(session: session, credential: spoiled, clientID: defect.clientID)
        #expect(status == defect.status, "\(json.serialized)")
        #expect(json["reason"] == .string(defect.reason), "\(json.serialized)")
        #expect(json["error"]?.string?.isEmpty == false && json["error_description"]?.string?.isEmpty == false)
        let after = server.counts
        for table in ["users", "credentials", "refresh_tokens", "signing_keys"] { #expect(after[table] == before[table], "\(table) changed") }
        #expect(after["used_sessions"] == (before["used_sessions"] ?? 0) + 1, "the auth session must be used up, and nothing else")
        let owner = try server.store.user(email: "owner@signet.test")
        #expect(try server.store.credentials(userID: owner?.id ?? "").first?.signCount == signCountBefore)
        #expect(try server.store.auditEvents(limit: 1).first?.reason == defect.reason)
    }

    @Test("a forged or altered auth session is unknown")
    func forged() throws {
        let server = try TestServer()
        let phone = Phone(server)
        _ = try phone.signUp(email: "f@signet.test")
        let (session, credential, _) = try phone.startSignIn()
        var bytes = Array(session.utf8)
        bytes[bytes.count / 2] = bytes[bytes.count / 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let (status, json) = try phone.exchange(session: String(decoding: bytes, as: UTF8.self), credential: credential)
        #expect(status == 400 && json["reason"] == .string("auth_session_unknown"))
        // The genuine one is still unused.
        #expect(try phone.exchange(session: session, credential: credential).status == 200)
    }

    @Test("a failed proof uses the session up: a correct proof afterwards is refused")
    func failureConsumes() throws {
        let server = try TestServer()
        let phone = Phone(server)
        _ = try phone.signUp(email: "g@signet.test")
        let (session, credential, _) = try phone.startSignIn()
        var spoiled = credential
        spoiled.setResponse("signature", .string(Base64URL.encode([0x30, 0x00])))
        #expect(try phone.exchange(session: session, credential: spoiled).json["reason"] == .string("signature_invalid"))
        let (status, json) = try phone.exchange(session: session, credential: credential)
        #expect(status == 400 && json["reason"] == .string("auth_session_unknown"))
    }

    @Test("a replayed auth session is unknown the second time")
    func replay() throws {
        let server = try TestServer()
        let phone = Phone(server)
        _ = try phone.signUp(email: "a@signet.test")
        let (session, credential, _) = try phone.startSignIn()
        #expect(try phone.exchange(session: session, credential: credential).status == 200)
        let before = server.counts
        let (status, json) = try phone.exchange(session: session, credential: credential)
        #expect(status == 400 && json["reason"] == .string("auth_session_unknown"))
        #expect(server.counts["refresh_tokens"] == before["refresh_tokens"])
    }

    @Test("unknown and expired auth sessions")
    func unknownAndExpired() throws {
        let server = try TestServer()
        let phone = Phone(server)
        _ = try phone.signUp(email: "b@signet.test")
        let (_, credential, _) = try phone.startSignIn()
        #expect(try phone.exchange(session: "no-such-session", credential: credential).json["reason"] == .string("auth_session_unknown"))
        let (session, credential2, _) = try phone.startSignIn()
        server.clock.advance(301)
        let (status, json) = try phone.exchange(session: session, credential: credential2)
        #expect(status == 400 && json["reason"] == .string("auth_session_expired"))
    }

    @Test("an assertion over another session's challenge")
    func otherChallenge() throws {
        let server = try TestServer()
        let phone = Phone(server)
        _ = try phone.signUp(email: "c@signet.test")
        let (sessionA, _, _) = try phone.startSignIn()
        let (_, credentialB, _) = try phone.startSignIn()
        let (status, json) = try phone.exchange(session: sessionA, credential: credentialB)
        #expect(status == 400 && json["reason"] == .string("challenge_mismatch"))
    }

    @Test("an unregistered credential")
    func unregistered() throws {
        let server = try TestServer()
        _ = try Phone(server).signUp(email: "d@signet.test")
        let stranger = Phone(server)
        _ = try stranger.authenticator.register(rpID: TestServer.rpID, origin: TestServer.origin, challenge: [1], userHandle: [2], userName: "x")
        let (session, credential, _) = try stranger.startSignIn()
        let (status, json) = try stranger.exchange(session: session, credential: credential)
        #expect(status == 400 && json["reason"] == .string("credential_unknown"))
    }

    @Test("username-first: a passkey of another account is refused")
    func otherAccountsPasskey() throws {
        let server = try TestServer()
        let alice = Phone(server)
        _ = try alice.signUp(email: "alice@signet.test")
        let mallory = Phone(server)
        _ = try mallory.signUp(email: "mallory@signet.test")
        let (status, json) = try server.post("/passkey/challenge", .object(["client_id": .string("app"), "username": .string("alice@signet.test")]))
        #expect(status == 200)
        let session = try #require(json["auth_session"]?.string)
        let challenge = try #require(json["authn_params_public_key"]?["challenge"]?.string.flatMap { Base64URL.decode($0) })
        let assertion = try mallory.authenticator.authenticate(rpID: TestServer.rpID, origin: TestServer.origin, challenge: challenge)
        let (refused, answer) = try mallory.exchange(session: session, credential: assertion.json)
        #expect(refused == 400 && answer["reason"] == .string("credential_unknown"))
    }

    @Test("an existing email at sign-up is 409 user_exists")
    func existingEmail() throws {
        let server = try TestServer()
        _ = try Phone(server).signUp(email: "e@signet.test")
        let (status, json) = try server.post("/passkey/register", .object(["client_id": .string("app"), "user_profile": .object(["email": .string("E@signet.test")])]))
        #expect(status == 409 && json["reason"] == .string("user_exists"))
    }

    @Test("bad requests", arguments: [
        ("malformed JSON", "application/json", Array(#"{"client_id": "app", "#.utf8), 400, "malformed"),
        ("JSON with a duplicate member", "application/json", Array(#"{"client_id":"app","client_id":"other","user_profile":{"email":"a@b.c"}}"#.utf8), 400, "malformed"),
        ("wrong member type", "application/json", Array(#"{"client_id":5,"user_profile":{"email":"a@b.c"}}"#.utf8), 400, "malformed"),
        ("missing member", "application/json", Array(#"{"client_id":"app"}"#.utf8), 400, "malformed"),
        ("not an email", "application/json", Array(#"{"client_id":"app","user_profile":{"email":"nobody"}}"#.utf8), 400, "malformed"),
        ("unknown client", "application/json", Array(#"{"client_id":"nope","user_profile":{"email":"a@b.c"}}"#.utf8), 401, "client_unknown"),
        ("wrong content type", "text/plain", Array(#"{"client_id":"app","user_profile":{"email":"a@b.c"}}"#.utf8), 415, "unsupported_media_type"),
        ("deeply nested", "application/json", Array((String(repeating: "[", count: 200) + String(repeating: "]", count: 200)).utf8), 400, "malformed"),
    ] as [(String, String, [UInt8], Int, String)])
    func badRequest(_ name: String, _ type: String, _ body: [UInt8], _ status: Int, _ reason: String) throws {
        let server = try TestServer()
        let response = try server.send("POST", "/passkey/register", headers: [("Content-Type", type)], body: body)
        #expect(response.status == status, "\(name): \(response.text)")
        let json = try StrictJSON().parse(response.body)
        #expect(json["reason"] == .string(reason), "\(name): \(response.text)")
        #expect(server.counts["used_sessions"] == 0)
    }

    @Test("an oversized body is 413 before it is read")
    func oversized() throws {
        let server = try TestServer(.socket)
        let client = server.client()
        // Only the headers are sent: the answer must come without waiting for the body.
        try client.write(Array("POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n".utf8))
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(try StrictJSON().parse(response.body)["reason"] == .string("body_too_large"))
        // A body just over the cap, sent whole, too.
        let big = try server.send("POST", "/oauth/token", body: [UInt8](repeating: 0x20, count: 64 * 1024 + 1))
        #expect(big.status == 413)
    }

    @Test("unsupported grant type")
    func grantType() throws {
        let server = try TestServer()
        let (status, json) = try server.post("/oauth/token", .object(["grant_type": .string("password"), "client_id": .string("app")]))
        #expect(status == 400 && json["reason"] == .string("unsupported_grant_type"))
        let (refused, answer) = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("refreshless"), "refresh_token": .string("x")]))
        #expect(refused == 400 && answer["reason"] == .string("grant_not_allowed"))
    }
}
