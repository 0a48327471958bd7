import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// `signup: false`: only operators make accounts (`POST /api/v2/users`, `signet admin users
/// add`), over a real socket with a real SMTP server; every way an account was made by its owner
/// refused, and the way in for an account an operator made.
@Suite(.enabled(if: SMTPServer.available, "needs python3-aiosmtpd (scripts/bootstrap.sh installs it)"))
struct ClosedSignUpTests {
    static func server(_ smtp: SMTPServer, open: Bool = false, sharing: URL? = nil) throws -> TestServer {
        try TestServer.withOperators(.socket, smtp: smtp, sharing: sharing) { c in
            c.signUp = open
            TestServer.webClients(&c)
        }
    }

    static func users(_ server: TestServer) throws -> Int { try server.store.users(UserQuery()).total }

    @Test("signup: false refuses every way an owner makes an account, before reading the address: the native sign-up, one begun while open, the page, its form and script call, prompt=create and a code for a new address")
    func closed() throws {
        let smtp = try SMTPServer()
        let open = try Self.server(smtp, open: true)
        let server = try Self.server(smtp, sharing: open.directory)
        let taken = try Phone(open).signUp(email: "taken@signet.test")
        let users = try Self.users(server)
        #expect(taken["access_token"] != nil && users == 1)

        // The native passkey sign-up: refused for a new address and a taken one alike.
        for email in ["new@signet.test", "taken@signet.test"] {
            let answer = try server.post("/passkey/register", .object(["client_id": .string("app"), "user_profile": .object(["email": .string(email)])]))
            #expect(answer.status == 403 && answer.json["reason"] == .string("signup_disabled") && answer.json["error"] == .string("invalid_request"), "\(email)")
        }
        #expect(try server.store.auditEvents(limit: 100).contains { $0.kind == AuditKind.signUpChallenge.rawValue && $0.reason == "signup_disabled" })
        // A sign-up begun on an instance still open and finished on a closed one makes nothing.
        let phone = Phone(open)
        let begun = try phone.startSignUp(email: "begun@signet.test")
        var closedPhone = phone
        closedPhone.server = server
        let finished = try closedPhone.exchange(session: begun.session, credential: begun.credential)
        #expect(finished.status == 403 && finished.json["reason"] == .string("signup_disabled"))
        #expect(try server.store.user(email: "begun@signet.test") == nil)

        // The pages: no link to sign up, the sign-up page is the sign-in page saying why, and
        // its form and script call are refused.
        let browser = WebBrowser(server)
        let login = try browser.page("/login")
        #expect(login.status == 200 && !login.html.contains("data-testid=\"create-account\"") && !login.html.contains("href=\"/signup"))
        #expect(try WebBrowser(open).page("/login").html.contains("data-testid=\"create-account\""))
        let signup = try browser.page("/signup")
        #expect(signup.status == 403 && signup.html.contains("data-reason=\"signup_disabled\"") && signup.html.contains("data-testid=\"send-code\""))
        let script = try browser.json("/signup/options", .object(["email": .string("script@signet.test")]))
        #expect(script.status == 403 && script.json["reason"] == .string("signup_disabled"))
        let form = try browser.form("/signup", [("email", "form@signet.test"), ("name", "Form")])
        #expect(form.status == 403 && form.html.contains("data-reason=\"signup_disabled\""))

        // Discovery leaves `create` out, and an app's prompt=create goes back to it refused.
        let discovery = try StrictJSON().parse(try server.get("/.well-known/openid-configuration").body)
        #expect(discovery["prompt_values_supported"] == .array(["none", "login", "select_account", "consent"].map(JSONValue.string)))
        let openDiscovery = try StrictJSON().parse(try open.get("/.well-known/openid-configuration").body)
        #expect(openDiscovery["prompt_values_supported"]?.array?.contains(.string("create")) == true)
        let created = try server.authorize(browser, extra: [("prompt", "create")])
        let query = WebBrowser.query(created.headers["location"])
        #expect(created.status == 303 && created.headers["location"]?.hasPrefix("https://app.signet.test/callback?") == true)
        #expect(query["error"] == "invalid_request" && query["state"] == "st-1")
        #expect(try server.authorize(browser, extra: [("prompt", "login")]).headers["location"]?.hasPrefix("/login?authorization=") == true)

        // An email code: the start answers alike, but only the address with an account is sent
        // one, and a guess for the other makes nothing.
        let unknown = try server.startEmail("stranger@signet.test")
        let known = try server.startEmail("taken@signet.test")
        #expect(unknown.status == 200 && known.status == 200 && unknown.json["email"] == .string("stranger@signet.test"))
        let code = try smtp.code(for: "taken@signet.test")
        #expect(try server.signIn(email: "taken@signet.test", code: code).status == 200)
        #expect(smtp.messages(to: "stranger@signet.test").isEmpty && smtp.messages(to: "form@signet.test").isEmpty)
        let guess = try server.signIn(email: "stranger@signet.test", code: "123456")
        #expect(guess.status == 403 && guess.json["reason"] == .string("otp_invalid"))
        #expect(try Self.users(server) == 1)
    }

    @Test("an operator makes an account: 201 in Auth0's shape, audited, its owner told in its language; the owner signs in by code, which verifies the address, and adds a passkey that then signs in")
    func operatorMakesAccount() throws {
        let smtp = try SMTPServer()
        let server = try Self.server(smtp)
        let ops = try server.managementToken()
        let made = try server.api("POST", "/api/v2/users", token: ops, .object([
            "email": .string(" Grace@Signet.test "), "name": .string("Grace Hopper"), "locale": .string("es_MX"), "connection": .string("email"),
        ]))
        #expect(made.status == 201, "\(made.json.serialized)")
        let id = try #require(made.json["user_id"]?.string)
        #expect(made.json["email"] == .string("grace@signet.test") && made.json["email_verified"] == .bool(false) && made.json["name"] == .string("Grace Hopper"))
        #expect(made.json["logins_count"] == .number("0") && made.json["blocked"] == .bool(false) && made.json["last_login"] == nil)
        #expect(try server.api("GET", "/api/v2/users/\(id)", token: ops).json == made.json)
        let audit = try #require(try server.store.auditEvents(limit: 100).first { $0.kind == AuditKind.adminUserCreated.rawValue })
        #expect(audit.userID == id && audit.clientID == "ops" && audit.detail == "the address told" && audit.outcome == "success")
        #expect(eventually { smtp.messages(to: "grace@signet.test").contains { $0.kind == "account_created" } })
        let told = try #require(smtp.messages(to: "grace@signet.test").first { $0.kind == "account_created" })
        #expect(told.subject.hasPrefix("Su cuenta de") && told.body.contains("pida un código por correo"))
        #expect(try server.store.user(email: "grace@signet.test")?.locale == "es")

        // Found by its address (Auth0's users-by-email), in any case; another address finds none.
        let found = try server.api("GET", "/api/v2/users-by-email?email=GRACE%40signet.test&fields=user_id,email", token: ops)
        #expect(found.status == 200 && found.json == .array([.object(["user_id": .string(id), "email": .string("grace@signet.test")])]))
        #expect(try server.api("GET", "/api/v2/users-by-email?email=nobody%40signet.test", token: ops).json == .array([]))
        for query in ["", "?email=", "?email=not-an-address", "?email=a%40b%40signet.test"] {
            let refused = try server.api("GET", "/api/v2/users-by-email" + query, token: ops)
            #expect(refused.status == 400 && refused.json["reason"] == .string("malformed"), "\(query)")
        }
        #expect(try server.api("GET", "/api/v2/users-by-email?email=grace%40signet.test", token: nil).status == 401)

        // The same address again, in any case, is taken.
        let again = try server.api("POST", "/api/v2/users", token: ops, .object(["email": .string("GRACE@signet.test")]))
        #expect(again.status == 409 && again.json["reason"] == .string("user_exists"))

        // The way in: a code, then a passkey, which signs in from then on.
        #expect(try server.startEmail("grace@signet.test").status == 200)
        let signedIn = try server.signIn(email: "grace@signet.test", code: try smtp.code(for: "grace@signet.test"))
        let idToken = try #require(signedIn.json["id_token"]?.string)
        #expect(signedIn.status == 200 && jwtClaims(idToken)["sub"] == .string(id))
        #expect(try server.store.user(email: "grace@signet.test")?.emailVerified == true)
        let phone = Phone(server)
        let account = SignedIn(server, phone: phone, access: try #require(signedIn.json["access_token"]?.string))
        let added = try account.addPasskey(phone.authenticator, name: "Phone")
        #expect(added.status == 201, "\(added.json.serialized)")
        let passkey = try phone.signIn(username: "grace@signet.test")
        let passkeyToken = try #require(passkey["id_token"]?.string)
        #expect(passkey["access_token"] != nil && jwtClaims(passkeyToken)["sub"] == .string(id))

        // verify_email false mails nothing; email_verified true makes the address verified.
        let quiet = try server.api("POST", "/api/v2/users", token: ops, .object([
            "email": .string("quiet@signet.test"), "verify_email": .bool(false), "email_verified": .bool(true),
        ]))
        #expect(quiet.status == 201 && quiet.json["email_verified"] == .bool(true) && quiet.json["name"] == nil)
        let loud = try server.api("POST", "/api/v2/users", token: ops, .object(["email": .string("loud@signet.test")]))
        #expect(loud.status == 201)
        #expect(eventually { smtp.messages(to: "loud@signet.test").contains { $0.kind == "account_created" && $0.subject == "Your Signet Test account" } })
        #expect(smtp.messages(to: "quiet@signet.test").isEmpty)
        #expect(try server.store.auditEvents(limit: 100).contains { $0.kind == AuditKind.adminUserCreated.rawValue && $0.detail == "nothing mailed" })
    }

    @Test("creating users: no token, a token without create:users, and each malformed body are refused with their reason, and nothing is made")
    func refusals() throws {
        let smtp = try SMTPServer()
        let server = try Self.server(smtp)
        let ops = try server.managementToken()
        let reader = try server.managementToken("reader", secret: TestServer.readerSecret)
        let body = JSONValue.object(["email": .string("someone@signet.test")])
        let none = try server.api("POST", "/api/v2/users", token: nil, body)
        #expect(none.status == 401 && none.json["reason"] == .string("token_missing"))
        let scoped = try server.api("POST", "/api/v2/users", token: reader, body)
        #expect(scoped.status == 403 && scoped.json["reason"] == .string("insufficient_scope"))
        let long = String(repeating: "x", count: 257)
        let bad: [JSONValue] = [
            .array([]), .string("someone@signet.test"), .object([:]), .object(["email": .number("5")]), .object(["email": .null]),
            .object(["email": .string("not-an-address")]), .object(["email": .string("a@b@signet.test")]), .object(["email": .string("a@exa mple.test")]),
            .object(["email": .string("a@signet.test\r\nBcc: x@y.test")]), .object(["email": .string(String(repeating: "a", count: 250) + "@signet.test")]),
            .object(["email": .string("a@signet.test"), "name": .string("\u{202E}gnp.exe")]), .object(["email": .string("a@signet.test"), "name": .string(long)]),
            .object(["email": .string("a@signet.test"), "name": .number("1")]),
            .object(["email": .string("a@signet.test"), "email_verified": .string("yes")]), .object(["email": .string("a@signet.test"), "verify_email": .number("1")]),
            .object(["email": .string("a@signet.test"), "locale": .string("")]), .object(["email": .string("a@signet.test"), "locale": .string("es;q=1")]),
            .object(["email": .string("a@signet.test"), "locale": .string(String(repeating: "e", count: 36))]),
            .object(["email": .string("a@signet.test"), "connection": .string("")]), .object(["email": .string("a@signet.test"), "connection": .string(long)]),
            .object(["email": .string("a@signet.test"), "password": .string("hunter2")]), .object(["email": .string("a@signet.test"), "blocked": .bool(true)]),
            .object(["email": .string("a@signet.test"), "user_id": .string("chosen")]),
        ]
        for value in bad {
            let answer = try server.api("POST", "/api/v2/users", token: ops, value)
            #expect(answer.status == 400 && answer.json["reason"] == .string("malformed"), "\(value.serialized.prefix(80)): \(answer.json.serialized)")
        }
        #expect(try Self.users(server) == 0)
        #expect(!(try server.store.auditEvents(limit: 1000).contains { $0.kind == AuditKind.adminUserCreated.rawValue }))
        #expect(smtp.messages().isEmpty)
        // Without mail an account is made all the same, and nothing is mailed: its owner gets in by an enrollment link.
        let mailless = try TestServer.withOperators { c in c.signUp = false }
        let made = try mailless.api("POST", "/api/v2/users", token: try mailless.managementToken(), body)
        let count = try Self.users(mailless)
        #expect(made.status == 201 && count == 1)
        #expect(try mailless.store.auditEvents(limit: 10).contains { $0.kind == AuditKind.adminUserCreated.rawValue && $0.detail == "nothing mailed" })
    }

    @Test("signet admin users add: the account made on the database, printed or as JSON; the same address again or no --email refused")
    func commandLine() throws {
        let server = try TestServer { c in c.signUp = false }
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        func signet(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
            try OperationsTests.signet(["admin", "users"] + arguments + database, in: server.directory)
        }
        let added = try signet(["add", "--email", "cli@signet.test", "--name", "Cli", "--verified", "--no-mail", "--json"])
        #expect(added.status == 0, "\(added.errors)")
        let json = try OperationsTests.json(added.output)
        #expect(json["email"] == .string("cli@signet.test") && json["email_verified"] == .bool(true) && json["name"] == .string("Cli"))
        let row = try #require(try server.store.user(email: "cli@signet.test"))
        #expect(json["user_id"] == .string(row.id) && row.emailVerified)
        let audit = try #require(try server.store.auditEvents(limit: 100).first { $0.kind == AuditKind.adminUserCreated.rawValue })
        #expect(audit.clientID == "signet-admin" && audit.userID == row.id && audit.detail == "nothing mailed")
        let table = try signet(["add", "--email", "table@signet.test"])
        #expect(table.status == 0 && table.output.contains("table@signet.test") && table.output.contains("email code"))
        let again = try signet(["add", "--email", "CLI@signet.test"])
        #expect(again.status == 1 && again.errors.contains("user_exists"))
        #expect(try signet(["add", "--name", "Nobody"]).status == 2)
        #expect(try signet(["add", "--email", "x@signet.test", "extra"]).status == 2)
    }

    @Test("signet admin users import: Auth0's export as JSON lines or an array; each record made (blocked ones blocked), passed over (address here) or refused with its line; creation times kept; a second run makes nothing twice")
    func importExport() throws {
        let server = try TestServer()
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        let file = server.directory.appendingPathComponent("export.json")
        try """
            {"user_id": "auth0|1", "email": "one@signet.test", "email_verified": true, "name": "One", "created_at": "2021-03-04T10:20:30.123Z", "logins_count": 5, "identities": [{"provider": "auth0"}]}

            {"user_id": "auth0|2", "email": "TWO@signet.test", "locale": "es-ES", "created_at": "2022-01-02T03:04:05Z"}
            {"user_id": "auth0|3", "email": "one@signet.test"}
            {"user_id": "auth0|4", "email": "blocked@signet.test", "blocked": true}
            not json at all
            {"user_id": "auth0|6"}
            {"user_id": "auth0|7", "email": "not-an-address"}
            {"user_id": "auth0|8", "email": "when@signet.test", "created_at": "yesterday"}
            {"user_id": "auth0|9", "email": "later@signet.test", "created_at": "2999-01-01T00:00:00Z"}
            ["an array on a line"]
            """.write(to: file, atomically: true, encoding: .utf8)
        let run = try OperationsTests.signet(["admin", "users", "import", file.path, "--json"] + database, in: server.directory)
        #expect(run.status == 2 && run.errors.contains("5 record(s) refused"), "\(run.errors)")
        let report = try #require(try OperationsTests.json(run.output).array)
        #expect(report.map { $0["line"]?.int64 ?? 0 } == [1, 3, 4, 5, 6, 7, 8, 9, 10, 11])
        #expect(report.map { $0["outcome"]?.string ?? "" } == ["made", "made", "exists", "made", "refused", "refused", "refused", "refused", "made", "refused"])
        #expect(report.map { $0["source_user_id"]?.string } == ["auth0|1", "auth0|2", "auth0|3", "auth0|4", nil, "auth0|6", "auth0|7", "auth0|8", "auth0|9", nil])
        let one = try #require(try server.store.user(email: "one@signet.test"))
        #expect(report[0]["user_id"] == .string(one.id) && one.emailVerified && one.name == "One" && one.createdAt == 1_614_853_230_123)
        let two = try #require(try server.store.user(email: "two@signet.test"))
        #expect(two.locale == "es" && !two.emailVerified && two.createdAt == 1_641_092_645_000)
        #expect(try server.store.user(email: "later@signet.test").map { $0.createdAt <= Int64(Date().timeIntervalSince1970 * 1000) } == true)
        let blocked = try #require(try server.store.user(email: "blocked@signet.test"))
        #expect(blocked.blocked && report[3]["detail"] == .string("blocked, as in the export") && !one.blocked)
        #expect(try server.store.users(UserQuery()).total == 4)
        let imported = try server.store.auditEvents(limit: 100).filter { $0.kind == AuditKind.adminUserCreated.rawValue }
        #expect(imported.count == 4 && imported.allSatisfy { $0.clientID == "signet-admin" })
        #expect(imported.map { $0.detail ?? "" }.sorted() == ["imported blocked; nothing mailed", "imported; nothing mailed", "imported; nothing mailed", "imported; nothing mailed"])
        // Run again: nothing is made twice.
        let again = try OperationsTests.signet(["admin", "users", "import", file.path] + database, in: server.directory)
        #expect(again.status == 2 && again.output.contains("10 record(s): 0 made, 5 exists, 5 refused; nothing mailed"), "\(again.output)")
        #expect(try server.store.users(UserQuery()).total == 4)
        // A JSON array, all made: exit 0.
        let array = server.directory.appendingPathComponent("array.json")
        try #"[{"email": "arr@signet.test", "name": "Arr"}, {"email": "ray@signet.test"}]"#.write(to: array, atomically: true, encoding: .utf8)
        let arrayRun = try OperationsTests.signet(["admin", "users", "import", array.path] + database, in: server.directory)
        #expect(arrayRun.status == 0 && arrayRun.output.contains("2 record(s): 2 made, 0 exists, 0 refused"), "\(arrayRun.output) \(arrayRun.errors)")
        let broken = server.directory.appendingPathComponent("broken.json")
        try "[{\"email\": \"x@signet.test\"},".write(to: broken, atomically: true, encoding: .utf8)
        #expect(try OperationsTests.signet(["admin", "users", "import", broken.path] + database, in: server.directory).status == 2)
        #expect(try OperationsTests.signet(["admin", "users", "import", server.directory.appendingPathComponent("none.json").path] + database, in: server.directory).status == 2)
        #expect(try server.store.users(UserQuery()).total == 6)
    }
}
