import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// A client's `required_roles`: an admin console only for the accounts an operator gave one of
/// its roles, refused `role_required` at every grant and at `/authorize`, before anything is used.
@Suite(.enabled(if: SMTPServer.available, "needs python3-aiosmtpd (scripts/bootstrap.sh installs it)"))
struct RequiredRoleTests {
    static let console = "https://console.signet.test/cb"

    static func server(smtp: SMTPServer? = nil, sharing: URL? = nil, appRoles: [String]? = nil) throws -> TestServer {
        try TestServer.withOperators(smtp: smtp, sharing: sharing) { c in
            TestServer.webClients(&c)
            var client = ClientConfiguration(id: "console", grants: GrantNames.all)
            client.redirectURIs = [Self.console]
            client.requiredRoles = ["Admin", "Operator"]
            c.clients.append(client)
            if let appRoles, let index = c.clients.firstIndex(where: { $0.id == "app" }) { c.clients[index].requiredRoles = appRoles }
        }
    }

    /// Gives (or takes) the role named `name`, made if need be, to the account.
    static func role(_ server: TestServer, _ name: String, _ user: String, give: Bool = true) throws {
        let ops = try server.managementToken()
        let existing = try server.api("GET", "/api/v2/roles?name_filter=\(name)", token: ops).json.array?.first { $0["name"] == .string(name) }?["id"]?.string
        let id = try existing ?? #require(try server.api("POST", "/api/v2/roles", token: ops, .object(["name": .string(name)])).json["id"]?.string)
        let changed = try server.api(give ? "POST" : "DELETE", "/api/v2/users/\(user)/roles", token: ops, .object(["roles": .array([.string(id)])]))
        try #require(changed.status == 204, "\(changed.json.serialized)")
    }

    static func refused(_ answer: (status: Int, json: JSONValue)) -> Bool {
        answer.status == 403 && answer.json["reason"] == .string("role_required") && answer.json["error"] == .string("access_denied")
    }

    @Test("required_roles in the file: 1 to 20 role names, each once; anything else refused")
    func configuration() throws {
        func load(_ roles: String) throws -> ServerConfiguration {
            try ConfigurationLoader.load(file: try ConfigurationTests.write(#"""
                {"issuer": "https://a.example.com", "relying_party": {"id": "example.com", "origins": ["https://example.com"]},
                 "clients": [{"client_id": "console", "required_roles": \#(roles)}]}
                """#), environment: [:])
        }
        #expect(try load(#"["Admin", "Branch manager"]"#).clients.first?.requiredRoles == ["Admin", "Branch manager"])
        #expect(try load(#"["Admin"]"#).clients.first?.requiredRoles == ["Admin"])
        for bad in [#"[]"#, #""Admin""#, #"["Admin", 7]"#, #"["Admin", "Admin"]"#, #"[""]"#, #"["\#(String(repeating: "r", count: 257))"]"#,
                    "[" + (0...20).map { #""r\#($0)""# }.joined(separator: ", ") + "]", #"["two\nlines"]"#] {
            do {
                _ = try load(bad)
                Issue.record("accepted \(bad.prefix(40))")
            } catch let error as ConfigurationError {
                #expect(error.message.contains("required_roles"), "\(error.message)")
            }
        }
    }

    @Test("a passkey, an email code, a recovery code, a refresh and a code exchange for the client: refused without one of its roles, nothing used; given with one; a role taken away ends the client's session")
    func grants() throws {
        let smtp = try SMTPServer()
        let server = try Self.server(smtp: smtp)
        let account = try SignedIn(server, email: "ada@bank.example")
        let ada = try #require(jwtClaims(account.access)["sub"]?.string)
        let codes = try #require(try account.call("POST", "/me/recovery-codes").json["codes"]?.array?.compactMap(\.string))
        var phone = account.phone
        phone.clientID = "console"

        // A passkey: refused and audited; the app the account signed up with is not the console.
        let (session, credential, _) = try phone.startSignIn()
        #expect(Self.refused(try phone.exchange(session: session, credential: credential)))
        let events = try server.store.auditEvents(limit: 20)
        #expect(events.contains { $0.kind == "sign_in" && $0.outcome == "failure" && $0.reason == "role_required" && $0.clientID == "console" }, "\(events.map(\.kind))")
        // An email code: refused, and still good once the account has the role.
        _ = try server.startEmail("ada@bank.example", client: "console")
        let code = try smtp.code(for: "ada@bank.example")
        #expect(Self.refused(try server.signIn(email: "ada@bank.example", code: code, client: "console")))
        // A recovery code: refused, not used.
        let recovery: (String) throws -> (status: Int, json: JSONValue) = { given in
            try server.post("/oauth/token", .object(["grant_type": .string(GrantNames.recoveryCode), "client_id": .string("console"),
                                                     "username": .string("ada@bank.example"), "recovery_code": .string(given)]))
        }
        #expect(Self.refused(try recovery(codes[0])))
        #expect(try account.call("GET", "/me/recovery-codes").json["remaining"] == .int(10))
        // A role the client does not name changes nothing; one it names lets each in.
        try Self.role(server, "Auditor", ada)
        let (again, signed, _) = try phone.startSignIn()
        #expect(Self.refused(try phone.exchange(session: again, credential: signed)))
        try Self.role(server, "Operator", ada)
        let (third, assertion, _) = try phone.startSignIn()
        let tokens = try phone.exchange(session: third, credential: assertion)
        #expect(tokens.status == 200, "\(tokens.json.serialized)")
        #expect(try server.signIn(email: "ada@bank.example", code: code, client: "console").status == 200, "the refused code was kept")
        #expect(try recovery(codes[0]).status == 200)

        // The role taken away: the next refresh is refused and ends the session.
        let refresh = try #require(tokens.json["refresh_token"]?.string)
        try Self.role(server, "Operator", ada, give: false)
        let refreshed = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("console"), "refresh_token": .string(refresh)]))
        #expect(Self.refused(refreshed), "\(refreshed.json.serialized)")
        try Self.role(server, "Operator", ada)
        let revoked = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("console"), "refresh_token": .string(refresh)]))
        #expect(revoked.status == 400 && revoked.json["reason"] == .string("refresh_token_revoked"), "\(revoked.json.serialized)")
        // Tokens for the app it signed up with never needed a role.
        phone.clientID = "app"
        #expect(try phone.signIn()["access_token"]?.string != nil)
    }

    @Test("/authorize: an account without one of the roles goes back to the console with access_denied and no code; with one it gets a code; a role taken before the exchange burns the code")
    func browserFlow() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "lin@bank.example")
        let pkce = PKCE()
        let denied = try server.authorize(browser, client: "console", redirect: Self.console, pkce: pkce)
        let query = WebBrowser.query(denied.headers["location"])
        #expect(denied.status == 303 && denied.headers["location"]?.hasPrefix(Self.console + "?") == true, "\(denied.headers)")
        #expect(query["error"] == "access_denied" && query["reason"] == "role_required" && query["code"] == nil && query["state"] == "st-1", "\(query)")
        let user = try #require(try server.store.user(email: "lin@bank.example")?.id)
        #expect(try server.store.auditEvents(limit: 10).contains { $0.kind == "authorization_code_issued" && $0.outcome == "failure" && $0.reason == "role_required" })

        try Self.role(server, "Admin", user)
        let granted = try server.authorize(browser, client: "console", redirect: Self.console, pkce: pkce)
        let code = try #require(WebBrowser.query(granted.headers["location"])["code"], "\(granted.headers)")
        let exchanged = try server.exchange(code: code, client: "console", redirect: Self.console, verifier: pkce.verifier)
        #expect(exchanged.status == 200, "\(exchanged.json.serialized)")
        // A code issued, then the role taken: the exchange is refused and the code burnt.
        let late = try #require(WebBrowser.query(try server.authorize(browser, client: "console", redirect: Self.console, pkce: pkce).headers["location"])["code"])
        try Self.role(server, "Admin", user, give: false)
        #expect(Self.refused(try server.exchange(code: late, client: "console", redirect: Self.console, verifier: pkce.verifier)))
        try Self.role(server, "Admin", user)
        #expect(try server.exchange(code: late, client: "console", redirect: Self.console, verifier: pkce.verifier).json["reason"] == .string("code_invalid"))
    }

    @Test("the directory decides who may use the console: a SCIM Group the console requires, a member's session ending at its next refresh once the directory takes them out")
    func directoryGroup() throws {
        let server = try TestServer.withOperators { c in
            c.scimTokenHash = Digest.sha256.hash(Array(SCIMTests.token.utf8))
            var client = ClientConfiguration(id: "console", grants: GrantNames.all)
            client.requiredRoles = ["Console users"]
            c.clients.append(client)
        }
        func scim(_ method: String, _ path: String, _ body: String) throws -> (status: Int, json: JSONValue) {
            let response = try server.send(method, "/scim/v2" + path, headers: [("Authorization", "Bearer " + SCIMTests.token), ("Content-Type", "application/scim+json")],
                                           body: Array(body.utf8))
            return (response.status, (try? StrictJSON().parse(response.body)) ?? .null)
        }
        var phone = Phone(server)
        let ada = try #require(jwtClaims(try phone.signUp(email: "ada@corp.example")["access_token"]?.string)["sub"]?.string)
        phone.clientID = "console"
        let (first, firstCredential, _) = try phone.startSignIn()
        #expect(Self.refused(try phone.exchange(session: first, credential: firstCredential)), "not in the group yet")
        // The directory pushes the group with Ada in it: the console lets her in.
        let group = try scim("POST", "/Groups", #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "Console users", "members": [{"value": "\#(ada)"}]}"#)
        let id = try #require(group.json["id"]?.string, "\(group.json.serialized)")
        let (second, secondCredential, _) = try phone.startSignIn()
        let tokens = try phone.exchange(session: second, credential: secondCredential)
        #expect(tokens.status == 200, "\(tokens.json.serialized)")
        // Taken out of the group in the directory: her console session ends at its next refresh.
        #expect(try scim("PATCH", "/Groups/\(id)", #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "Remove", "path": "members", "value": [{"value": "\#(ada)"}]}]}"#).status == 200)
        let refreshed = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("console"),
                                                                 "refresh_token": try #require(tokens.json["refresh_token"])]))
        #expect(Self.refused(refreshed), "\(refreshed.json.serialized)")
    }

    @Test("the device grant: approved by the phone, refused to a new device of a client the account has no role for")
    func deviceGrant() throws {
        let before = try Self.server()
        let (phone, key, keyID) = try DeviceGrantTests.phoneWithKey(before, email: "kim@bank.example")
        let user = try #require(jwtClaims(phone.access)["sub"]?.string)
        // The same database, where the app's tokens need the role Admin.
        let server = try Self.server(sharing: before.directory, appRoles: ["Admin"])
        let started = try DeviceGrantTests.start(server)
        _ = try DeviceGrantTests.decide(phone, key: key, keyID: keyID, userCode: try #require(started["user_code"]?.string))
        server.clock.advance(6)
        #expect(Self.refused(try DeviceGrantTests.poll(server, try #require(started["device_code"]?.string))))
        try Self.role(server, "Admin", user)
        let next = try DeviceGrantTests.start(server)
        _ = try DeviceGrantTests.decide(phone, key: key, keyID: keyID, userCode: try #require(next["user_code"]?.string))
        server.clock.advance(6)
        #expect(try DeviceGrantTests.poll(server, try #require(next["device_code"]?.string)).status == 200)
    }

    @Test("a client of the database: required_roles through the Management API and signet admin clients, shown, changed, removed with null; bad lists refused")
    func storedClients() throws {
        let server = try Self.server()
        let ops = try server.managementToken()
        let made = try server.api("POST", "/api/v2/clients", token: ops, .object([
            "name": .string("Back office"), "token_endpoint_auth_method": .string("none"), "grant_types": .array([.string(GrantType.webauthn), .string("refresh_token")]),
            "required_roles": .array([.string("Admin")]),
        ]))
        #expect(made.status == 201 && made.json["required_roles"] == .array([.string("Admin")]), "\(made.json.serialized)")
        let id = try #require(made.json["client_id"]?.string)
        #expect(try server.api("GET", "/api/v2/clients/\(id)", token: ops).json["required_roles"] == .array([.string("Admin")]))
        #expect(try server.api("GET", "/api/v2/clients/console", token: ops).json["required_roles"] == .array([.string("Admin"), .string("Operator")]))
        // It refuses an account without the role.
        var phone = Phone(server)
        let user = try #require(jwtClaims(try phone.signUp(email: "sam@bank.example")["access_token"]?.string)["sub"]?.string)
        phone.clientID = id
        let (session, credential, _) = try phone.startSignIn()
        #expect(Self.refused(try phone.exchange(session: session, credential: credential)))
        // Renamed roles and refusals.
        let changed = try server.api("PATCH", "/api/v2/clients/\(id)", token: ops, .object(["required_roles": .array([.string("Admin"), .string("Branch manager")])]))
        #expect(changed.status == 200 && changed.json["required_roles"] == .array([.string("Admin"), .string("Branch manager")]), "\(changed.json.serialized)")
        for bad in [JSONValue.array([]), .array([.string("Admin"), .string("Admin")]), .string("Admin"), .array([.number("1")])] {
            let answer = try server.api("PATCH", "/api/v2/clients/\(id)", token: ops, .object(["required_roles": bad]))
            #expect(answer.status == 400 && answer.json["reason"] == .string("malformed"), "\(bad.serialized): \(answer.json.serialized)")
        }
        #expect(try server.api("GET", "/api/v2/clients/\(id)", token: ops).json["required_roles"] == .array([.string("Admin"), .string("Branch manager")]))
        try Self.role(server, "Branch manager", user)
        let (next, signed, _) = try phone.startSignIn()
        #expect(try phone.exchange(session: next, credential: signed).status == 200)
        // null: any account again.
        let open = try server.api("PATCH", "/api/v2/clients/\(id)", token: ops, .object(["required_roles": .null]))
        #expect(open.status == 200 && open.json["required_roles"] == nil)

        // The command line.
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        let added = try runProcess(ProcessTests.binary.path, ["admin", "clients", "add", "--name", "Console", "--type", "public", "--grant", GrantType.webauthn,
                                                              "--require-role", "Admin", "--require-role", "Branch manager"] + database, in: server.directory)
        #expect(added.status == 0 && added.output.contains("required roles Admin, Branch manager"), "\(added.output) \(added.errors)")
        // No role is named Admin here: said at once, as a misspelt name would be.
        #expect(added.errors.contains(#"no role is named "Admin" yet"#) && !added.errors.contains("Branch manager"), "\(added.errors)")
        let cli = try #require(added.output.split(separator: "\n").first { $0.hasPrefix("client_id") }?.split(separator: " ").last.map(String.init))
        let opened = try runProcess(ProcessTests.binary.path, ["admin", "clients", "update", cli, "--any-role", "--json"] + database, in: server.directory)
        #expect(opened.status == 0 && !opened.output.contains("required_roles"), "\(opened.output) \(opened.errors)")
        let both = try runProcess(ProcessTests.binary.path, ["admin", "clients", "update", cli, "--any-role", "--require-role", "Admin"] + database, in: server.directory)
        #expect(both.status != 0 && both.errors.contains("not both"))
    }
}
