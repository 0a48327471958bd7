import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetWebAuthn
import Testing

/// `/api/v2/user-blocks/{id}` (Auth0's): the attempt limits an account has used up, and an
/// operator lifting them.
@Suite(.enabled(if: SMTPServer.available, "needs python3-aiosmtpd (scripts/bootstrap.sh installs it)"))
struct UserBlocksTests {
    @Test("device user codes and recovery-code tries used up show, with their limits and when they lift; lifted, both are tried again at once; audited once; other accounts untouched; an hour lifts them too")
    func usedUpAndLifted() throws {
        let smtp = try SMTPServer()
        let server = try TestServer.withOperators(smtp: smtp) { $0.rateLimits.enabled = false }
        let now = server.clock.now.timeIntervalSince1970
        server.clock.advance(3600 - now.truncatingRemainder(dividingBy: 3600) + 1)
        let (phone, _, keyID) = try DeviceGrantTests.phoneWithKey(server, email: "ada@signet.test")
        let bystander = try SignedIn(server, email: "bob@signet.test")
        let id = try #require(jwtClaims(phone.access)["sub"]?.string), bob = try #require(jwtClaims(bystander.access)["sub"]?.string)
        var guess = 0
        func guessUserCode() throws -> String? {
            guess += 1
            let letters = Array("BCDFGHJKLMNPQRSTVWXZ")
            let code = "BCDF-GH" + String(letters[guess / 20 % 20]) + String(letters[guess % 20])
            return try phone.challenge(keyID, .object(["type": .string("signet.device_approval"), "user_code": .string(code)])).json["reason"]?.string
        }
        func recoveryTry() throws -> String? { try RecoveryTests.recoveryGrant(server, "ada@signet.test", "AAAA-AAAA-AAAA").json["reason"]?.string }
        var ops = try server.managementToken()
        func blocks(_ user: String) throws -> [JSONValue] { try server.api("GET", "/api/v2/user-blocks/\(user)", token: ops).json["blocked_for"]?.array ?? [] }

        // Nothing used up: an empty list. Under the limit: still empty.
        #expect(try blocks(id).isEmpty)
        for _ in 0..<9 { #expect(try guessUserCode() == "user_code_unknown") }
        #expect(try blocks(id).isEmpty)
        #expect(try guessUserCode() == "user_code_unknown")
        #expect(try guessUserCode() == "rate_limited")
        for _ in 0..<5 { #expect(try recoveryTry() == "recovery_code_invalid") }
        #expect(try recoveryTry() == "rate_limited")

        let listed = try blocks(id)
        let windowEnd = Ceremonies.iso(Int64((server.clock.now.timeIntervalSince1970 / 3600).rounded(.down) + 1) * 3_600_000)
        #expect(listed.compactMap { $0["connection"]?.string } == ["recovery", "device"], "\(listed)")
        #expect(listed.allSatisfy { $0["identifier"] == .string("ada@signet.test") && $0["until"] == .string(windowEnd) })
        #expect(listed.first { $0["connection"] == .string("device") }?["limit"] == .number("10"))
        #expect(listed.first { $0["connection"] == .string("recovery") }?["limit"] == .number("5"))
        #expect(listed.allSatisfy { ($0["attempts"]?.int64 ?? 0) > ($0["limit"]?.int64 ?? .max) })
        #expect(try blocks(bob).isEmpty)

        // Lifted: both are tried again at once; the audit row says which were used up.
        #expect(try server.api("DELETE", "/api/v2/user-blocks/\(id)", token: ops).status == 204)
        #expect(try blocks(id).isEmpty)
        #expect(try guessUserCode() == "user_code_unknown")
        #expect(try recoveryTry() == "recovery_code_invalid")
        let audited = try server.store.auditEvents(limit: 200).filter { $0.kind == "admin_attempt_limits_cleared" }
        #expect(audited.count == 1 && audited.first?.detail == "used up: recovery, device" && audited.first?.userID == id && audited.first?.clientID == "ops")
        #expect(try server.api("DELETE", "/api/v2/user-blocks/\(bob)", token: ops).status == 204)
        #expect(try server.store.auditEvents(limit: 200).first { $0.kind == "admin_attempt_limits_cleared" && $0.userID == bob }?.detail == "none was used up")

        // Used up again, then the hour ends: lifted on its own.
        for _ in 0..<10 { _ = try guessUserCode() }
        #expect(try blocks(id).compactMap { $0["connection"]?.string } == ["device"])
        server.clock.advance(3600)
        ops = try server.managementToken()
        #expect(try blocks(id).isEmpty)
        for unknown in ["00000000-0000-4000-8000-000000000000", String(repeating: "a", count: 300)] {
            let answer = try server.api("GET", "/api/v2/user-blocks/\(unknown)", token: ops)
            #expect(answer.status == 404 && answer.json["reason"] == .string("user_unknown"))
        }
    }
}
