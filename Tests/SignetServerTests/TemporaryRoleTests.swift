import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// Roles given for a time (`expires_at`; `signet admin roles assign --for`, `--until`): an
/// on-call engineer's admin access that ends by itself, in every token, policy and list at its
/// end, and on the account's history when the purge takes it.
@Suite struct TemporaryRoleTests {
    static let api = RoleTests.api
    static let hour: Int64 = 3_600_000

    /// The console of `RequiredRoleTests` (roles Admin or Operator), `RoleTests`' permissions
    /// and a roles claim.
    static func server() throws -> TestServer {
        try TestServer.withOperators { c in
            var console = ClientConfiguration(id: "console", grants: GrantNames.all)
            console.requiredRoles = ["Admin"]
            c.clients.append(console)
            c.apiPermissions = [api: RoleTests.permissions]
            c.rolesClaim = "https://signet.test/roles"
        }
    }

    /// The role `Admin`, which grants `admin:users`, made.
    static func admin(_ server: TestServer, _ ops: String) throws -> String {
        let id = try #require(try server.api("POST", "/api/v2/roles", token: ops, .object(["name": .string("Admin")])).json["id"]?.string)
        let granted = try server.api("POST", "/api/v2/roles/\(id)/permissions", token: ops, .object(["permissions": .array([
            .object(["resource_server_identifier": .string(api), "permission_name": .string("admin:users")]),
        ])]))
        try #require(granted.status == 201, "\(granted.json.serialized)")
        return id
    }

    static func now(_ server: TestServer) -> Int64 { server.app.service.ceremonies.nowMillis }

    static func signIn(_ phone: Phone, client: String) throws -> (status: Int, json: JSONValue) {
        var phone = phone
        phone.clientID = client
        let (session, credential, _) = try phone.startSignIn()
        var body: JSONObject = ["grant_type": .string(GrantType.webauthn), "client_id": .string(client), "auth_session": .string(session), "authn_response": credential]
        body["audience"] = .string(api)
        return try phone.server.post("/oauth/token", .object(body))
    }

    static func refresh(_ server: TestServer, _ tokens: JSONValue) throws -> (status: Int, json: JSONValue) {
        try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("console"), "refresh_token": try #require(tokens["refresh_token"])]))
    }

    @Test("given until a time through the API: in the account's roles with its end, its tokens' permissions and roles claim, and the console's policy; gone from each at its end, the console's session with it")
    func givenForATime() throws {
        let server = try Self.server()
        let ops = try server.managementToken()
        let admin = try Self.admin(server, ops)
        let phone = Phone(server)
        let ada = try #require(jwtClaims(try phone.signUp(email: "ada@bank.example")["access_token"]?.string)["sub"]?.string)
        #expect(try Self.signIn(phone, client: "console").json["reason"] == .string("role_required"))

        let end = Self.now(server) + Self.hour
        let given = try server.api("POST", "/api/v2/users/\(ada)/roles", token: ops, .object(["roles": .array([.string(admin)]), "expires_at": .string(Ceremonies.iso(end))]))
        #expect(given.status == 204, "\(given.json.serialized)")
        let roles = try server.api("GET", "/api/v2/users/\(ada)/roles", token: ops).json
        #expect(roles == .array([.object(["id": .string(admin), "name": .string("Admin"), "expires_at": .string(Ceremonies.iso(end))])]), "\(roles.serialized)")
        let events = try server.store.auditEvents(limit: 5)
        #expect(events.contains { $0.kind == "admin_user_roles_changed" && $0.detail == "roles given until \(Ceremonies.iso(end)): Admin (\(admin))" }, "\(events.map(\.detail))")

        // The account's own view: the role, its end, what it grants.
        let own = try RoleTests.signIn(server, phone, audience: nil)["access_token"]?.string
        let mine = try server.api("GET", "/me/roles", token: own)
        #expect(mine.json == .object(["roles": .array([.object(["id": .string(admin), "name": .string("Admin"), "expires_at": .string(Ceremonies.iso(end)), "permissions": .array([
            .object(["permission_name": .string("admin:users"), "description": .string(""), "resource_server_identifier": .string(Self.api), "resource_server_name": .string(Self.api)]),
        ])])])]), "\(mine.json.serialized)")

        let console = try Self.signIn(phone, client: "console")
        #expect(console.status == 200, "\(console.json.serialized)")
        let claims = jwtClaims(console.json["access_token"]?.string)
        #expect(claims["permissions"] == .array([.string("admin:users")]) && claims["https://signet.test/roles"] == .array([.string("Admin")]))

        // Just before its end, all of it holds; at its end, none of it does, purged or not.
        server.clock.advance(to: Double(end) / 1000 - 10)
        let late = try Self.refresh(server, console.json)
        #expect(late.status == 200, "\(late.json.serialized)")
        server.clock.advance(to: Double(end) / 1000)
        #expect(try server.api("GET", "/api/v2/users/\(ada)/roles", token: try server.managementToken()).json == .array([]))
        #expect(try server.api("GET", "/api/v2/roles/\(admin)/users", token: try server.managementToken()).json == .array([]))
        #expect(try server.api("GET", "/api/v2/users/\(ada)/permissions", token: try server.managementToken()).json == .array([]))
        #expect(try Self.refresh(server, late.json).json["reason"] == .string("role_required"))
        #expect(try Self.signIn(phone, client: "console").json["reason"] == .string("role_required"))
        let app = jwtClaims(try Self.signIn(phone, client: "app").json["access_token"]?.string)
        #expect(app["permissions"] == .array([]) && app["https://signet.test/roles"] == .array([]))
        let after = try RoleTests.signIn(server, phone, audience: nil)["access_token"]?.string
        #expect(try server.api("GET", "/me/roles", token: after).json == .object(["roles": .array([])]))
    }

    @Test("the purge takes an ended role with role_expired on the account's history, once; a role given again before it ran stays; one given for good never goes")
    func purge() throws {
        let server = try Self.server()
        let ops = try server.managementToken()
        let admin = try Self.admin(server, ops)
        let operatorRole = try #require(try server.api("POST", "/api/v2/roles", token: ops, .object(["name": .string("Operator")])).json["id"]?.string)
        let browser = WebBrowser(server)
        _ = try browser.signUp(email: "ada@bank.example")
        let ada = try #require(try server.store.user(email: "ada@bank.example")?.id)
        let grace = try #require(jwtClaims(try Phone(server).signUp(email: "grace@bank.example")["access_token"]?.string)["sub"]?.string)
        let end = Ceremonies.iso(Self.now(server) + Self.hour)
        #expect(try server.api("POST", "/api/v2/roles/\(admin)/users", token: ops, .object(["users": .array([.string(ada), .string(grace)]), "expires_at": .string(end)])).status == 200)
        #expect(try server.api("POST", "/api/v2/users/\(ada)/roles", token: ops, .object(["roles": .array([.string(operatorRole)])])).status == 204)
        let members = try server.api("GET", "/api/v2/roles/\(admin)/users", token: ops).json.array?.map { "\($0["user_id"]?.string ?? "") \($0["expires_at"]?.string ?? "-")" }
        #expect(members.map(Set.init) == ["\(ada) \(end)", "\(grace) \(end)"])
        // The account page says when each ends.
        let rows = try browser.page("/account").html.components(separatedBy: "data-testid=\"role-row\"")
        #expect(rows.contains { $0.contains("Admin") && $0.contains("role-until") && $0.contains("Ends ") } && rows.contains { $0.contains("Operator") && !$0.contains("role-until") },
                "\(rows.dropFirst())")

        // Not yet ended: the purge takes nothing.
        server.app.purgeExpired(now: Self.now(server))
        #expect(try server.store.auditEvents(limit: 50).filter { $0.kind == "role_expired" }.isEmpty)
        // Ended; Grace is given it again, for good, before the purge runs.
        server.clock.advance(3_601)
        let again = try server.managementToken()
        #expect(try server.api("POST", "/api/v2/users/\(grace)/roles", token: again, .object(["roles": .array([.string(admin)])])).status == 204)
        server.app.purgeExpired(now: Self.now(server))
        let expired = try server.store.auditEvents(limit: 50).filter { $0.kind == "role_expired" }
        #expect(expired.map(\.userID) == [ada] && expired.first?.detail == "role Admin (\(admin)) ended at \(end)", "\(expired.map(\.detail))")
        server.app.purgeExpired(now: Self.now(server))
        #expect(try server.store.auditEvents(limit: 50).filter { $0.kind == "role_expired" }.count == 1)
        let metrics = String(decoding: try server.get("/metrics").body, as: UTF8.self)
        #expect(PurgeTests.metric(metrics, "signet_purged_rows_total{what=\"ended_roles\"}") == 1, "\(metrics)")
        #expect(try server.api("GET", "/api/v2/users/\(ada)/roles", token: again).json.array?.compactMap { $0["name"]?.string } == ["Operator"])
        #expect(try server.api("GET", "/api/v2/users/\(grace)/roles", token: again).json == .array([.object(["id": .string(admin), "name": .string("Admin")])]))
        // Its line on the account's own page, in the history's words.
        #expect(try browser.page("/account").html.contains("A role given to you for a time ended"))
        #expect(try browser.page("/account?ui_locales=fr").html.contains("Un rôle qui vous était donné pour un temps a pris fin"))
    }

    @Test("giving again sets the new end, for good lifts it, the same end writes nothing; a bad expires_at is 400 malformed and changes nothing")
    func changesAndRefusals() throws {
        let server = try Self.server()
        let ops = try server.managementToken()
        let admin = try Self.admin(server, ops)
        let ada = try #require(jwtClaims(try Phone(server).signUp(email: "ada@bank.example")["access_token"]?.string)["sub"]?.string)
        func give(_ extra: JSONObject, path: String = "/api/v2/users/\(ada)/roles", key: String = "roles", method: String = "POST", id: String? = nil) throws -> (status: Int, json: JSONValue) {
            var body: JSONObject = [key: .array([.string(id ?? admin)])]
            for (key, value) in extra { body[key] = value }
            return try server.api(method, path, token: ops, .object(body))
        }
        func ends() throws -> String? { try server.api("GET", "/api/v2/users/\(ada)/roles", token: ops).json.array?.first?["expires_at"]?.string }
        func changes() throws -> Int { try server.store.auditEvents(limit: 100).filter { $0.kind == "admin_user_roles_changed" }.count }

        let now = Self.now(server)
        #expect(try give(["expires_at": .string(Ceremonies.iso(now + Self.hour))]).status == 204)
        #expect(try give(["expires_at": .string(Ceremonies.iso(now + Self.hour))]).status == 204 && changes() == 1)
        #expect(try give(["expires_at": .string("2099-01-01T00:00:00+01:00")], path: "/api/v2/roles/\(admin)/users", key: "users", id: ada).json["reason"] == .string("malformed"))
        #expect(try give(["expires_at": .string(Ceremonies.iso(now + 8 * Self.hour))], path: "/api/v2/roles/\(admin)/users", key: "users", id: ada).status == 200)
        #expect(try ends() == Ceremonies.iso(now + 8 * Self.hour) && changes() == 2)
        #expect(try give([:]).status == 204)
        #expect(try ends() == nil && changes() == 3)
        #expect(try give([:]).status == 204 && changes() == 3)

        // Each refused, nothing changed, no row written.
        let refusals: [(JSONObject, String)] = [
            (["expires_at": .string(Ceremonies.iso(now - 1_000))], "past"),
            (["expires_at": .string(Ceremonies.iso(now + 367 * 24 * Self.hour))], "366 days"),
            (["expires_at": .string("tomorrow")], "ISO 8601"),
            (["expires_at": .string("2026-12-05T18:00:00")], "ISO 8601"),
            (["expires_at": .number("1796505434")], "string"),
            (["expires_at": .string(String(repeating: "9", count: 41))], "ISO 8601"),
        ]
        for (extra, says) in refusals {
            for (path, key, id) in [("/api/v2/users/\(ada)/roles", "roles", admin), ("/api/v2/roles/\(admin)/users", "users", ada)] {
                let refused = try give(extra, path: path, key: key, id: id)
                #expect(refused.status == 400 && refused.json["reason"] == .string("malformed") && (refused.json["error_description"]?.string ?? "").contains(says),
                        "\(extra) at \(path): \(refused.json.serialized)")
            }
        }
        let taking = try give(["expires_at": .string(Ceremonies.iso(now + Self.hour))], method: "DELETE")
        #expect(taking.status == 400 && taking.json["reason"] == .string("malformed"), "\(taking.json.serialized)")
        #expect(try ends() == nil && changes() == 3)
    }

    @Test("signet admin roles assign --for and --until give a role for a time; show lists each member's end; users show says it; bad ones refused")
    func commandLine() throws {
        let server = try Self.server()
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        func admin(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
            try runProcess(ProcessTests.binary.path, ["admin"] + arguments + database, in: server.directory)
        }
        let role = try #require(try OperationsTests.json(try admin(["roles", "add", "--name", "Admin", "--json"]).output)["id"]?.string)
        let ada = try #require(jwtClaims(try Phone(server).signUp(email: "ada@bank.example")["access_token"]?.string)["sub"]?.string)
        let lin = try #require(jwtClaims(try Phone(server).signUp(email: "lin@bank.example")["access_token"]?.string)["sub"]?.string)

        let given = try admin(["roles", "assign", role, ada, "--for", "4h"])
        #expect(given.status == 0 && given.output.contains("gave role \(role) to 1 user(s) until 20"), "\(given)")
        let far = try admin(["roles", "assign", role, lin, "--until", "2099-01-01T00:00:00Z"])
        #expect(far.status != 0 && far.errors.contains("366 days"), "\(far)")
        #expect(try admin(["roles", "assign", role, lin]).status == 0)
        let shown = try admin(["roles", "show", role])
        let lines = shown.output.split(separator: "\n")
        #expect(shown.output.contains("UNTIL") && lines.contains { $0.contains(ada) && $0.hasSuffix("Z") } && lines.contains { $0.contains(lin) && $0.hasSuffix("-") }, "\(shown.output)")
        let json = try OperationsTests.json(try admin(["roles", "show", role, "--json"]).output)
        #expect(json["users"]?.array?.map { $0["expires_at"] != nil } == [true, false], "\(json.serialized)")
        let user = try admin(["users", "show", ada])
        #expect(user.output.contains("Admin (\(role)) until 20"), "\(user.output)")
        for bad in [["--for", "4 hours"], ["--for", "0h"], ["--for", "4w"], ["--for", "4h", "--until", "2026-12-06T00:00:00Z"], ["--until", "soon"]] {
            let refused = try admin(["roles", "assign", role, ada] + bad)
            #expect(refused.status != 0 && !refused.errors.isEmpty, "\(bad): \(refused)")
        }
        #expect(try admin(["roles", "unassign", role, ada, "--for", "1h"]).status != 0)
        #expect(try admin(["roles", "show", role, "--json"]).output.contains(ada))
    }

    @Test("/me/roles answers only the account's own token: none, a token for another API, an operator's token or a forged one is 401 with its reason, and nothing else is taken there")
    func ownRolesRefusals() throws {
        let server = try Self.server()
        let phone = Phone(server)
        _ = try phone.signUp(email: "ada@bank.example")
        let own = try RoleTests.signIn(server, phone, audience: nil)["access_token"]?.string
        #expect(try server.api("GET", "/me/roles", token: own).status == 200)
        let refusals: [(String?, String)] = [
            (nil, "token_missing"),
            (try RoleTests.signIn(server, phone)["access_token"]?.string, "token_audience_invalid"),
            (try server.managementToken(), "token_invalid"),
            ((own ?? "") + "x", "token_invalid"),
        ]
        for (token, reason) in refusals {
            let refused = try server.api("GET", "/me/roles", token: token)
            #expect(refused.status == 401 && refused.json["reason"] == .string(reason), "\(reason): \(refused.status) \(refused.json.serialized)")
        }
        for method in ["POST", "PUT", "DELETE"] {
            let refused = try server.api(method, "/me/roles", token: own, .object(["roles": .array([])]))
            #expect((400..<500).contains(refused.status) && refused.json["reason"]?.string != nil, "\(method): \(refused.status) \(refused.json.serialized)")
        }
    }
}
