import Foundation
import SignetAPI
import SignetAuth
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// `/api/v2/stats` (Auth0's): sign-ins and sign-ups a UTC day from the audit trail, and the
/// accounts active in the last 30 days; with the server's clock moved across days.
@Suite struct StatsTests {
    static func today(_ server: TestServer) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day], from: server.clock.now)
        return String(format: "%04d%02d%02d", c.year!, c.month!, c.day!)
    }

    @Test("a day's sign-ins and sign-ups, nothing else counted; days apart; every day of the range; accounts active in 30 days")
    func counts() throws {
        let server = try TestServer.withOperators()
        var token = try server.managementToken()
        let first = Self.today(server)
        let ada = Phone(server), bob = Phone(server)
        _ = try ada.signUp(email: "ada@example.com")
        _ = try bob.signUp(email: "bob@example.com")
        _ = try ada.signIn()
        _ = try ada.signIn()
        // Not counted: a refused sign-in, a refresh, a machine's token.
        var tampered = Tamper()
        tampered.signature = { $0[$0.count - 1] ^= 1 }
        let (session, credential, _) = try bob.startSignIn(tamper: tampered)
        #expect(try bob.exchange(session: session, credential: credential).status == 400)
        var day = try server.api("GET", "/api/v2/stats/daily?from=\(first)&to=\(first)", token: token)
        #expect(day.status == 200 && day.json.array?.count == 1, "\(day.json.serialized)")
        #expect(day.json.array?.first?["logins"] == .number("2") && day.json.array?.first?["signups"] == .number("2") && day.json.array?.first?["leaked_passwords"] == .number("0"))
        #expect(day.json.array?.first?["date"]?.string?.hasSuffix("T00:00:00.000Z") == true && day.json.array?.first?["created_at"]?.string != nil)
        #expect(try server.api("GET", "/api/v2/stats/active-users", token: token).json == .number("2"))

        // The next day: one sign-in; the range has both days, oldest first, and the default is
        // the last 30 days to today.
        server.clock.advance(86_400)
        let second = Self.today(server)
        token = try server.managementToken()
        _ = try bob.signIn()
        day = try server.api("GET", "/api/v2/stats/daily?from=\(first)&to=\(second)", token: token)
        #expect(day.json.array?.map { $0["logins"] } == [.number("2"), .number("1")] && day.json.array?.map { $0["signups"] } == [.number("2"), .number("0")])
        let month = try server.api("GET", "/api/v2/stats/daily", token: token).json.array ?? []
        #expect(month.count == 30 && month.last?["logins"] == .number("1") && month.first?["created_at"] == nil)
        // 31 days on, nobody has signed in for 30.
        server.clock.advance(31 * 86_400)
        token = try server.managementToken()
        #expect(try server.api("GET", "/api/v2/stats/active-users", token: token).json == .number("0"))
        _ = try ada.signIn()
        #expect(try server.api("GET", "/api/v2/stats/active-users", token: token).json == .number("1"))
    }

    @Test("bad days and ranges are 400 malformed; the scope is read:stats")
    func refusals() throws {
        let server = try TestServer.withOperators()
        let token = try server.managementToken()
        for query in ["from=2026-12-01", "from=20261301", "from=20260230", "to=2026120", "from=20261202&to=20261201", "from=20250101&to=20260102", "from=19691231"] {
            let answer = try server.api("GET", "/api/v2/stats/daily?\(query)", token: token)
            #expect(answer.status == 400 && answer.json["reason"] == .string("malformed"), "\(query)")
        }
        #expect(try server.api("GET", "/api/v2/stats/daily?from=20240229&to=20240229", token: token).status == 200)
        let logs = try server.managementToken(scope: "read:logs")
        #expect(try server.api("GET", "/api/v2/stats/daily", token: logs).json["reason"] == .string("insufficient_scope"))
        #expect(try server.api("GET", "/api/v2/stats/active-users", token: logs).status == 403)
    }

    @Test("signet admin stats: the same figures, as a table or JSON")
    func commandLine() throws {
        let server = try TestServer()
        _ = try Phone(server).signUp(email: "ada@example.com")
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        let table = try OperationsTests.signet(["admin", "stats"] + database, in: server.directory)
        #expect(table.status == 0 && table.output.contains("accounts active in the last 30 days: 1") && table.output.contains("0 sign-in(s), 1 sign-up(s) in 30 day(s)"), "\(table.output)\(table.errors)")
        let json = try OperationsTests.json(try OperationsTests.signet(["admin", "stats", "--json", "--from", "20260101", "--to", "20260107"] + database, in: server.directory).output)
        #expect(json["active_users"] == .number("1") && json["daily"]?.array?.count == 7)
        #expect(try OperationsTests.signet(["admin", "stats", "--from", "2026"] + database, in: server.directory).status == 2)
    }
}
