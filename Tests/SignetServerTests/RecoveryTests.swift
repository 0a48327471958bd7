import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import SignetTestSupport
import Testing

extension TestServer {
    /// A code session for `email`: start, read the code from `smtp`, redeem it.
    func codeSession(_ email: String, smtp: SMTPServer) throws -> SignedIn {
        let before = smtp.messages(to: email).filter { $0.kind == "otp" }.count
        let (started, json) = try startEmail(email)
        try #require(started == 200, "\(json.serialized)")
        let (status, tokens) = try signIn(email: email, code: try smtp.code(for: email, after: before), scope: "openid email offline_access")
        try #require(status == 200, "\(tokens.serialized)")
        return SignedIn(self, phone: Phone(self), access: try #require(tokens["access_token"]?.string))
    }
}

/// DESIGN.md, "Recovery codes" and "Recovery, slower and stricter than sign-in".
@Suite(.enabled(if: SMTPServer.available, "needs python3-aiosmtpd (scripts/bootstrap.sh installs it)"))
struct RecoveryTests {
    static func recoveryGrant(_ server: TestServer, _ email: String, _ code: String) throws -> (status: Int, json: JSONValue) {
        try server.post("/oauth/token", .object([
            "grant_type": .string(GrantNames.recoveryCode), "client_id": .string("app"), "username": .string(email), "recovery_code": .string(code),
        ]))
    }

    @Test("recovery codes: 10 shown once after a step-up, each signs in once, the count goes down, a new set replaces the old")
    func recoveryCodes() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let account = try SignedIn(server, email: "codes@signet.test")
        #expect(try account.call("GET", "/me/recovery-codes").json == .object(["remaining": .int(0), "created_at": .null]))
        let (status, made) = try account.call("POST", "/me/recovery-codes")
        #expect(status == 201)
        let codes = made["codes"]?.array?.compactMap(\.string) ?? []
        #expect(codes.count == 10 && Set(codes).count == 10 && codes.allSatisfy { $0.count == 14 && $0.split(separator: "-").count == 3 })
        #expect(try account.call("GET", "/me/recovery-codes").json["remaining"] == .int(10))
        // Typed in lower case and without dashes, it still works; once.
        let typed = codes[0].lowercased().replacingOccurrences(of: "-", with: "")
        let (granted, tokens) = try Self.recoveryGrant(server, "codes@signet.test", typed)
        #expect(granted == 200 && jwtClaims(tokens["access_token"]?.string)["amr"] == .array([.string("otp")]))
        #expect(try Self.recoveryGrant(server, "codes@signet.test", codes[0]).json["reason"] == .string("recovery_code_invalid"))
        #expect(try account.call("GET", "/me/recovery-codes").json["remaining"] == .int(9))
        // The owner hears of the use, with the count left; the refused second try sends nothing.
        #expect(eventually { smtp.messages(to: "codes@signet.test").contains { $0.kind == "recovery_code_used" } })
        let used = smtp.messages(to: "codes@signet.test").filter { $0.kind == "recovery_code_used" }
        #expect(used.count == 1 && used[0].body.contains("Recovery codes left: 9."), "\(used.map(\.body))")
        #expect(!used[0].raw.contains(codes[0]) && !used[0].raw.contains(typed))
        // The stored form is an HMAC: no code appears in the database file.
        let db = try Data(contentsOf: server.directory.appendingPathComponent("signet.db"))
        #expect(!codes.contains { db.range(of: Data($0.replacingOccurrences(of: "-", with: "").utf8)) != nil })
        // A stale session may not make new ones; a new set replaces the old.
        server.clock.advance(301)
        #expect(try account.call("POST", "/me/recovery-codes").json["reason"] == .string("step_up_required"))
        let fresh = SignedIn(server, phone: account.phone, access: try #require(try account.phone.stepUp(account.access).json["access_token"]?.string))
        #expect(try fresh.call("POST", "/me/recovery-codes").status == 201)
        #expect(try Self.recoveryGrant(server, "codes@signet.test", codes[1]).json["reason"] == .string("recovery_code_invalid"))
        #expect(smtp.messages(to: "codes@signet.test").contains { $0.kind == "recovery_codes_created" } || eventually { smtp.messages(to: "codes@signet.test").contains { $0.kind == "recovery_codes_created" } })
    }

    @Test("recovery-code tries are counted per address: after max_attempts wrong ones in an hour, even a right one waits")
    func recoveryCodeBudget() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp) { $0.rateLimits.enabled = false }
        let account = try SignedIn(server, email: "budget@signet.test")
        let codes = try account.call("POST", "/me/recovery-codes").json["codes"]?.array?.compactMap(\.string) ?? []
        let now = server.clock.now.timeIntervalSince1970
        server.clock.advance(3600 - now.truncatingRemainder(dividingBy: 3600) + 1)
        let reasons = simultaneously(8) { _ in
            (try? Self.recoveryGrant(server, "budget@signet.test", "AAAA-AAAA-AAAA").json["reason"]?.string) ?? "error"
        }.map { (try? $0.get()) ?? "error" }
        let counted = reasons.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        #expect(counted == ["recovery_code_invalid": 5, "rate_limited": 3], "\(counted)")
        #expect(try Self.recoveryGrant(server, "budget@signet.test", codes[0]).json["reason"] == .string("rate_limited"))
        server.clock.advance(3600)
        #expect(try Self.recoveryGrant(server, "budget@signet.test", codes[0]).status == 200)
    }

    @Test("an account with no credential yet opens no recovery")
    func noHoldWithoutCredential() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let session = try server.codeSession("first@signet.test", smtp: smtp)
        #expect(try session.addPasskey(SoftwareAuthenticator()).status == 201)
        #expect(try session.call("GET", "/me/recovery").json == .object(["recovery": .null]))
    }

    /// An account with a passkey and a device key, then a code session that adds a passkey:
    /// the owner's sign-in, the recovery session, and what the recovery added.
    struct Recovered {
        let owner: SignedIn
        let ownerKey: SoftwareDeviceKey
        let ownerKeyID: String
        let code: SignedIn
        let newPasskey: SoftwareAuthenticator
        let newPasskeyID: String
    }

    static func recovered(_ server: TestServer, _ smtp: SMTPServer, email: String) throws -> Recovered {
        let owner = try SignedIn(server, email: email)
        let ownerKey = try SoftwareDeviceKey(deviceID: "old-phone")
        let ownerKeyID = try owner.enroll(ownerKey)
        let code = try server.codeSession(email, smtp: smtp)
        let laptop = SoftwareAuthenticator()
        let (status, added) = try code.addPasskey(laptop, name: "New laptop")
        try #require(status == 201, "\(added.serialized)")
        return Recovered(owner: owner, ownerKey: ownerKey, ownerKeyID: ownerKeyID, code: code, newPasskey: laptop,
                         newPasskeyID: try #require(added["id"]?.string))
    }

    @Test("a code session adding a passkey opens a recovery: what it added cannot approve actions, touch older credentials or make recovery codes")
    func holdRefuses() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let r = try Self.recovered(server, smtp, email: "held@signet.test")
        let state = try r.code.call("GET", "/me/recovery").json["recovery"]
        #expect(state?["passkeys"] == .array([.string(r.newPasskeyID)]))
        #expect(state?["hold_until"]?.int64 == state?["opened_at"]?.int64.map { $0 + 86400 })
        #expect(eventually { smtp.messages(to: "held@signet.test").contains { $0.kind == "recovery_opened" } })
        // A sign-in with the new passkey is a held session.
        let held = SignedIn(server, phone: Phone(server, authenticator: r.newPasskey),
                            access: try #require(try Phone(server, authenticator: r.newPasskey).signIn()["access_token"]?.string))
        let newKey = try SoftwareDeviceKey(deviceID: "new-phone")
        let newKeyID = try held.enroll(newKey)
        let oldPasskey = try #require(try r.owner.passkeys().first { $0["id"]?.string != r.newPasskeyID }?["id"]?.string)
        let refusals: [(String, (status: Int, json: JSONValue))] = [
            ("action with the new device key", try held.challenge(newKeyID)),
            ("the new device key from the owner's session", try r.owner.challenge(newKeyID)),
            ("action challenge in the held session", try held.challenge(r.ownerKeyID)),
            ("revoke the old passkey", try held.call("DELETE", "/me/passkeys/\(oldPasskey)")),
            ("rename the old passkey", try held.call("PATCH", "/me/passkeys/\(oldPasskey)", .object(["name": .string("x")]))),
            ("revoke the old device key", try held.call("DELETE", "/me/device-keys/\(r.ownerKeyID)")),
            ("recovery codes", try held.call("POST", "/me/recovery-codes")),
            ("cancel from the held session", try held.call("DELETE", "/me/recovery")),
            ("cancel from the code session", try r.code.call("DELETE", "/me/recovery")),
            ("delete the account", try held.call("DELETE", "/me")),
            ("move the account to another address", try held.call("POST", "/me/email", .object(["email": .string("thief@signet.test")]))),
            ("finish a move", try held.call("POST", "/me/email/verify", .object(["email": .string("thief@signet.test"), "code": .string("123456")]))),
        ]
        for (name, (status, json)) in refusals {
            #expect(status == 403 && json["reason"] == .string("recovery_hold"), "\(name): \(json.serialized)")
        }
        // The held session may manage what the recovery itself added.
        #expect(try held.call("PATCH", "/me/passkeys/\(r.newPasskeyID)", .object(["name": .string("Mine")])).status == 200)
        // The owner's old credentials are untouched and still approve.
        #expect(try r.owner.approveAction(r.ownerKeyID, key: r.ownerKey).status == 200)
    }

    @Test("the owner's passkey cancels the recovery: everything it added and every session it started end at once")
    func cancel() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let r = try Self.recovered(server, smtp, email: "cancel@signet.test")
        let heldTokens = try Phone(server, authenticator: r.newPasskey).signIn()
        let held = SignedIn(server, phone: Phone(server, authenticator: r.newPasskey), access: try #require(heldTokens["access_token"]?.string))
        let newKeyID = try held.enroll(try SoftwareDeviceKey(deviceID: "new-phone"))
        // A fresh sign-in with the owner's passkey cancels.
        let owner = SignedIn(server, phone: r.owner.phone, access: try #require(try r.owner.phone.signIn()["access_token"]?.string))
        let (status, json) = try owner.call("DELETE", "/me/recovery")
        #expect(status == 204, "\(json.serialized)")
        #expect(try owner.call("GET", "/me/recovery").json == .object(["recovery": .null]))
        // The new passkey no longer signs in; its sessions and the code session are over.
        let (session, credential, _) = try Phone(server, authenticator: r.newPasskey).startSignIn()
        #expect(try Phone(server, authenticator: r.newPasskey).exchange(session: session, credential: credential).json["reason"] == .string("credential_revoked"))
        #expect(try held.call("GET", "/me/passkeys").json["reason"] == .string("token_invalid"))
        #expect(try r.code.call("GET", "/me/passkeys").json["reason"] == .string("token_invalid"))
        let refreshed = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(heldTokens["refresh_token"]),
        ]))
        #expect(refreshed.json["reason"] == .string("refresh_token_revoked"))
        // The device key it added is revoked too; the owner's are all there.
        let keys = try owner.call("GET", "/me/device-keys").json["device_keys"]?.array?.compactMap { $0["id"]?.string } ?? []
        #expect(keys == [r.ownerKeyID] && !keys.contains(newKeyID))
        #expect(try owner.passkeys().count == 1)
        #expect(eventually { smtp.messages(to: "cancel@signet.test").contains { $0.kind == "recovery_cancelled" } })
        #expect(try owner.call("DELETE", "/me/recovery").status == 404)
    }

    @Test("the hold ends with its time: a notice goes out and what the recovery added then works fully")
    func holdEnds() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp) { $0.recoveryHold = 3600 }
        let r = try Self.recovered(server, smtp, email: "ends@signet.test")
        let newKey = try SoftwareDeviceKey(deviceID: "new-phone")
        let tokens = try Phone(server, authenticator: r.newPasskey).signIn()
        let held = SignedIn(server, phone: Phone(server, authenticator: r.newPasskey), access: try #require(tokens["access_token"]?.string))
        let newKeyID = try held.enroll(newKey)
        #expect(try held.challenge(newKeyID).json["reason"] == .string("recovery_hold"))
        server.clock.advance(3601)
        _ = server.app.sendMailNow()
        #expect(eventually { smtp.messages(to: "ends@signet.test").contains { $0.kind == "recovery_finished" } })
        let later = SignedIn(server, phone: held.phone, access: try #require(try Phone(server, authenticator: r.newPasskey).signIn()["access_token"]?.string))
        #expect(try later.call("GET", "/me/recovery").json == .object(["recovery": .null]))
        #expect(try later.approveAction(newKeyID, key: newKey).status == 200)
        #expect(try server.store.auditEvents(limit: 100).contains { $0.kind == "recovery_finished" })
    }

    @Test("an operator sees a recovery and cancels it: what it added is revoked, its sessions end, the address is told, audited")
    func operatorCancels() throws {
        let smtp = try SMTPServer()
        let server = try TestServer.withOperators(smtp: smtp)
        let r = try Self.recovered(server, smtp, email: "lost@signet.test")
        let id = try #require(jwtClaims(r.owner.access)["sub"]?.string)
        let ops = try server.managementToken()
        let seen = try server.api("GET", "/api/v2/users/\(id)/recovery", token: ops).json["recovery"]
        #expect(seen?["passkeys"] == .array([.string(r.newPasskeyID)]), "\(String(describing: seen))")
        let shown = try OperationsTests.signet(["admin", "users", "show", id, "--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path],
                                               in: server.directory)
        #expect(shown.output.contains("RECOVERY OPEN") && shown.output.contains("cancel-recovery \(id)"), "\(shown.output) \(shown.errors)")
        #expect(try server.api("DELETE", "/api/v2/users/\(id)/recovery", token: ops).status == 204)
        #expect(try server.api("GET", "/api/v2/users/\(id)/recovery", token: ops).json == .object(["recovery": .null]))
        let (session, credential, _) = try Phone(server, authenticator: r.newPasskey).startSignIn()
        #expect(try Phone(server, authenticator: r.newPasskey).exchange(session: session, credential: credential).json["reason"] == .string("credential_revoked"))
        #expect(try r.code.call("GET", "/me/passkeys").json["reason"] == .string("token_invalid"))
        #expect(try r.owner.passkeys().count == 1, "the owner's own passkey stays")
        #expect(eventually { smtp.messages(to: "lost@signet.test").contains { $0.kind == "recovery_cancelled" } })
        let events = try server.store.auditEvents(limit: 50).filter { $0.kind == "admin_recovery_cancelled" }
        #expect(events.count == 1 && events.first?.userID == id && events.first?.clientID == "ops")
        let again = try server.api("DELETE", "/api/v2/users/\(id)/recovery", token: ops)
        #expect(again.status == 404 && again.json["reason"] == .string("not_found"))
        // The owner's own view: nothing holds the account any more.
        #expect(try r.owner.call("GET", "/me/recovery").json == .object(["recovery": .null]))
    }
}
