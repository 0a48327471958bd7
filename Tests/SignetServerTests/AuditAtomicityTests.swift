import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetStore
import SignetTestSupport
import SignetWebAuthn
import Testing

/// A security change and its audit row commit together: when the row cannot be written, the
/// change does not happen and no token goes out. The row is refused by a trigger put into the
/// server's SQLite file from outside, as a failing disk would refuse it.
@Suite struct AuditAtomicityTests {
    /// Runs `body` while the database refuses audit rows of `kind`.
    static func refusing<T>(_ kind: AuditKind, in server: TestServer, _ body: () throws -> T) throws -> T {
        let path = server.directory.appendingPathComponent("signet.db").path
        _ = try rawSQLite(path, """
            CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_events WHEN NEW.kind = '\(kind.rawValue)'
            BEGIN SELECT RAISE(ABORT, 'refused by the test'); END
            """)
        defer { _ = try? rawSQLite(path, "DROP TRIGGER refuse_audit") }
        return try body()
    }

    static func rows(_ kind: AuditKind, in server: TestServer) throws -> Int {
        try server.store.auditEvents(limit: 1000).filter { $0.kind == kind.rawValue }.count
    }

    @Test("passkeys and device keys: revoked, enrolled and revoked again only with their audit rows")
    func account() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "atomic@signet.test")
        // A second passkey, revoked below (revoking the first would end the session it started).
        let added = try account.addPasskey(SoftwareAuthenticator())
        let passkey = try #require(added.json["id"]?.string, "\(added.json.serialized)")

        let refused = try Self.refusing(.passkeyRevoked, in: server) { try account.call("DELETE", "/me/passkeys/\(passkey)") }
        #expect(refused.status == 500 && refused.json["reason"] == .string("internal"), "a trigger's refusal is no conflict: \(refused.json.serialized)")
        #expect(try account.passkeys().count == 2 && Self.rows(.passkeyRevoked, in: server) == 0, "the passkey lives on: no change without its row")
        #expect(try account.call("DELETE", "/me/passkeys/\(passkey)").status == 204)
        #expect(try account.passkeys().count == 1 && Self.rows(.passkeyRevoked, in: server) == 1)

        let key = try SoftwareDeviceKey(deviceID: "phone-1")
        let enrol = JSONValue.object([
            "public_key": .string(Base64URL.encode(key.publicKeySPKI)), "device_id": .string(key.deviceID), "platform": .string("ios"), "name": .string("Phone"),
        ])
        let unwritten = try Self.refusing(.deviceKeyEnrolled, in: server) { try account.call("POST", "/me/device-keys", enrol) }
        #expect(!(200..<300).contains(unwritten.status), "\(unwritten.json.serialized)")
        #expect(try account.call("GET", "/me/device-keys").json["device_keys"]?.array?.isEmpty == true)
        let keyID = try account.enroll(key)
        // A re-enrolment revokes the old key: that revocation's row is part of the same commit.
        let again = try Self.refusing(.deviceKeyRevoked, in: server) { try account.call("POST", "/me/device-keys", enrol) }
        #expect(!(200..<300).contains(again.status))
        #expect(try account.call("GET", "/me/device-keys").json["device_keys"]?.array?.compactMap { $0["id"]?.string } == [keyID])
        let kept = try Self.refusing(.deviceKeyRevoked, in: server) { try account.call("DELETE", "/me/device-keys/\(keyID)") }
        #expect(!(200..<300).contains(kept.status))
        #expect(try account.call("GET", "/me/device-keys").json["device_keys"]?.array?.count == 1 && Self.rows(.deviceKeyRevoked, in: server) == 0)
        #expect(try account.call("DELETE", "/me/device-keys/\(keyID)").status == 204)
        #expect(try Self.rows(.deviceKeyRevoked, in: server) == 1 && Self.rows(.deviceKeyEnrolled, in: server) == 1)
    }

    @Test("an action token, its verification and a machine's token go out only with their audit rows")
    func tokens() throws {
        let server = try TestServer.withOperators()
        let account = try SignedIn(server, email: "action@signet.test")
        let key = try SoftwareDeviceKey(deviceID: "phone-2")
        let keyID = try account.enroll(key)
        let refused = try Self.refusing(.actionApproved, in: server) { try account.approveAction(keyID, key: key) }
        #expect(refused.json["action_token"] == nil && !(200..<300).contains(refused.status), "\(refused.json.serialized)")
        #expect(try Self.rows(.actionApproved, in: server) == 0)
        let approved = try account.approveAction(keyID, key: key)
        #expect(try approved.status == 200 && approved.json["action_token"] != nil && Self.rows(.actionApproved, in: server) == 1)
        // The resource server's check uses the token up only with its row: refused, it can be asked again.
        let token = try #require(approved.json["action_token"]?.string)
        let sub = try #require(jwtClaims(account.access)["sub"]?.string)
        let unchecked = try Self.refusing(.actionVerified, in: server) { try server.verifyAction(token, Transfer.action, sub: sub) }
        #expect(unchecked.json["valid"] != .bool(true) && !(200..<300).contains(unchecked.status), "\(unchecked.json.serialized)")
        #expect(try server.verifyAction(token, Transfer.action, sub: sub).json["valid"] == .bool(true) && Self.rows(.actionVerified, in: server) == 1)
        #expect(try server.verifyAction(token, Transfer.action, sub: sub).json["reason"] == .string("action_token_used"))

        func machine() throws -> HTTPClient.Response {
            try server.send("POST", "/oauth/token", headers: [
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Authorization", "Basic " + Data("ops:\(TestServer.opsSecret)".utf8).base64EncodedString()),
            ], body: Array("grant_type=client_credentials&audience=\(Ceremonies.formEncoded(server.app.service.ceremonies.configuration.managementAudience))".utf8))
        }
        let unissued = try Self.refusing(.clientCredentials, in: server) { try machine() }
        #expect(!(200..<300).contains(unissued.status) && !String(decoding: unissued.body, as: UTF8.self).contains("access_token"))
        #expect(try machine().status == 200 && Self.rows(.clientCredentials, in: server) == 1)
    }

    @Test("a refresh token's revocation, an operator's removal of a device key and a client's changes commit with their rows")
    func revocations() throws {
        let server = try TestServer.withOperators()
        let tokens = try Phone(server).signUp(email: "revoke@signet.test")
        let refresh = try #require(tokens["refresh_token"]?.string)
        func revoke() throws -> Int {
            try server.send("POST", "/oauth/revoke", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                            body: Array("client_id=app&token=\(refresh)".utf8)).status
        }
        func refreshed() throws -> JSONValue {
            try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": .string(refresh)])).json
        }
        #expect(try !(200..<300).contains(Self.refusing(.refreshTokenRevoked, in: server) { try revoke() }))
        #expect(try Self.rows(.refreshTokenRevoked, in: server) == 0)
        #expect(try revoke() == 200 && Self.rows(.refreshTokenRevoked, in: server) == 1)
        #expect(try refreshed()["reason"] == .string("refresh_token_revoked"))

        let account = try SignedIn(server, email: "operated@signet.test")
        let keyID = try account.enroll(try SoftwareDeviceKey(deviceID: "phone-3"))
        let user = try #require(jwtClaims(account.access)["sub"]?.string)
        let ceremonies = server.app.service.ceremonies
        let context = RequestContext(remoteAddress: "local", requestID: "test")
        #expect(throws: (any Error).self) {
            try Self.refusing(.adminDeviceKeyRevoked, in: server) {
                try ceremonies.deleteAuthenticationMethod(userID: user, methodID: "device-key|\(keyID)", by: ManagementCaller.commandLine, context: context)
            }
        }
        #expect(try account.call("GET", "/me/device-keys").json["device_keys"]?.array?.count == 1)
        try ceremonies.deleteAuthenticationMethod(userID: user, methodID: "device-key|\(keyID)", by: ManagementCaller.commandLine, context: context)
        #expect(try account.call("GET", "/me/device-keys").json["device_keys"]?.array?.isEmpty == true && Self.rows(.adminDeviceKeyRevoked, in: server) == 1)

        // Clients: added, re-keyed and removed only with their rows.
        func add() throws -> AddedClient {
            try ceremonies.addClient(name: "Ops 2", type: "confidential", grants: [GrantNames.clientCredentials], scopes: ["read:users"],
                                     redirectURIs: [], audiences: nil, by: ManagementCaller.commandLine, context: context)
        }
        #expect(throws: (any Error).self) { try Self.refusing(.adminClientAdded, in: server) { try add() } }
        #expect(try ceremonies.storedClients().isEmpty)
        let added = try add()
        let secretHash = try #require(try ceremonies.storedClients().first?.secretHash)
        #expect(throws: (any Error).self) {
            try Self.refusing(.adminClientSecretRotated, in: server) { try ceremonies.rotateClientSecret(id: added.client.id, by: ManagementCaller.commandLine, context: context) }
        }
        #expect(try ceremonies.storedClients().first?.secretHash == secretHash, "the old secret stands")
        #expect(throws: (any Error).self) {
            try Self.refusing(.adminClientRemoved, in: server) { try ceremonies.removeClient(id: added.client.id, by: ManagementCaller.commandLine, context: context) }
        }
        #expect(try ceremonies.storedClients().count == 1)
        _ = try ceremonies.rotateClientSecret(id: added.client.id, by: ManagementCaller.commandLine, context: context)
        try ceremonies.removeClient(id: added.client.id, by: ManagementCaller.commandLine, context: context)
        #expect(try ceremonies.storedClients().isEmpty)
        for kind in [AuditKind.adminClientAdded, .adminClientSecretRotated, .adminClientRemoved] { #expect(try Self.rows(kind, in: server) == 1, "\(kind)") }
    }

    @Test("a recovery's hold ends only with its audit row: until the row can be written, the recovery stays open")
    func recoveryFinishes() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp) { $0.recoveryHold = 3600 }
        _ = try RecoveryTests.recovered(server, smtp, email: "finish@signet.test")
        // The sender's own beat would finish the recovery whenever it passed: only this test's passes do.
        server.app.pauseMail()
        server.clock.advance(3601)
        try Self.refusing(.recoveryFinished, in: server) { _ = server.app.sendMailNow() }
        let path = server.directory.appendingPathComponent("signet.db").path
        #expect(try rawSQLite(path, "SELECT state FROM recoveries") == ["open"])
        #expect(try Self.rows(.recoveryFinished, in: server) == 0)
        _ = server.app.sendMailNow()
        #expect(try rawSQLite(path, "SELECT state FROM recoveries") == ["finished"])
        #expect(try Self.rows(.recoveryFinished, in: server) == 1)
        #expect(eventually {
            _ = server.app.sendMailNow()
            return smtp.messages(to: "finish@signet.test").contains { $0.kind == "recovery_finished" }
        })
    }

    @Test("a signing key is rotated and destroyed only with its audit row")
    func signingKeys() throws {
        let server = try TestServer { $0.signingKeyRotationDays = 30 }
        let ceremonies = server.app.service.ceremonies
        let first = try #require(try server.store.signingKeys().first?.kid)
        server.clock.advance(30 * 86_400)
        #expect(try Self.refusing(.signingKeyRotated, in: server) { ceremonies.rotateSigningKeyIfDue() } == nil)
        #expect(try server.store.signingKeys().map(\.kid) == [first], "no key without its row")
        let second = try #require(ceremonies.rotateSigningKeyIfDue())
        #expect(try Self.rows(.signingKeyRotated, in: server) == 1)
        server.clock.advance(Double(ServerConfiguration.longestTokenLifetime + 3600))
        #expect(try Self.refusing(.signingKeyDestroyed, in: server) { ceremonies.destroyRetiredSigningKeys() } == [])
        #expect(try server.store.signingKeys().map(\.kid).sorted() == [first, second].sorted(), "the retired key stays until its row can be written")
        #expect(ceremonies.destroyRetiredSigningKeys() == [first])
        #expect(try server.store.signingKeys().map(\.kid) == [second] && Self.rows(.signingKeyDestroyed, in: server) == 1)
    }

    @Test("an email code is issued and mailed only with its audit row, for a sign-in and for an address change")
    func emailCodes() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let account = try SignedIn(server, email: "codes@signet.test")
        func start() throws -> Int {
            try server.post("/passwordless/start", .object(["client_id": .string("app"), "connection": .string("email"), "email": .string("codes@signet.test")])).status
        }
        #expect(try !(200..<300).contains(Self.refusing(.otpSent, in: server) { try start() }))
        // Nothing was stored: the next request is not inside the send interval, and one message goes.
        #expect(try start() == 200 && Self.rows(.otpSent, in: server) == 1)
        let change = JSONValue.object(["email": .string("codes.new@signet.test")])
        #expect(try !(200..<300).contains(Self.refusing(.emailChangeStarted, in: server) { try account.call("POST", "/me/email", change).status }))
        #expect(try account.call("POST", "/me/email", change).status == 202 && Self.rows(.emailChangeStarted, in: server) == 1)
        _ = server.app.sendMailNow()
        #expect(eventually { smtp.messages(to: "codes@signet.test").filter { $0.kind == "otp" }.count == 1 && smtp.messages(to: "codes.new@signet.test").count == 1 })
        Thread.sleep(forTimeInterval: 0.3)
        #expect(smtp.messages(to: "codes@signet.test").filter { $0.kind == "otp" }.count == 1, "the refused request mailed nothing")
    }

    @Test("an account's copy goes out only with its audit row, to its owner and to an operator")
    func accountCopy() throws {
        let server = try TestServer.withOperators()
        let account = try SignedIn(server, email: "copied@signet.test")
        let refused = try Self.refusing(.accountExported, in: server) { try server.send("GET", "/me/export", headers: account.bearer) }
        #expect(refused.status == 500 && !String(decoding: refused.body, as: UTF8.self).contains("copied@signet.test"), "\(refused.status)")
        #expect(try account.call("GET", "/me/export").status == 200 && Self.rows(.accountExported, in: server) == 1)
        let id = try #require(try server.store.user(email: "copied@signet.test")?.id)
        let token = try server.managementToken()
        let byOperator = try Self.refusing(.adminUserExported, in: server) {
            try server.send("GET", "/api/v2/users/\(id)/export", headers: [("Authorization", "Bearer " + token)])
        }
        #expect(byOperator.status == 500 && !String(decoding: byOperator.body, as: UTF8.self).contains("copied@signet.test"), "\(byOperator.status)")
        #expect(try server.api("GET", "/api/v2/users/\(id)/export", token: token).status == 200 && Self.rows(.adminUserExported, in: server) == 1)
    }

    @Test("a device code is issued only with its audit row")
    func deviceCode() throws {
        let server = try TestServer()
        let path = server.directory.appendingPathComponent("signet.db").path
        let refused = try Self.refusing(.deviceCode, in: server) {
            try server.send("POST", "/oauth/device/code", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array("client_id=app&scope=openid".utf8))
        }
        #expect(!(200..<300).contains(refused.status) && !String(decoding: refused.body, as: UTF8.self).contains("device_code"))
        // A refusal by the database is its failure, not a taken user code: one try, then 500.
        #expect(refused.status == 500 && (try? StrictJSON().parse(refused.body))?["reason"] == .string("internal"), "\(refused.status)")
        #expect(try rawSQLite(path, "SELECT count(*) FROM device_codes") == ["0"])
        let started = try DeviceGrantTests.start(server)
        #expect(try started["device_code"] != nil && Self.rows(.deviceCode, in: server) == 1)
    }
}
