import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// Enrollment links over a real socket: an operator's link adds the first passkey to an account
/// without one, once, and signs the browser in; every way a link can be wrong is refused.
@Suite struct EnrollmentLinkTests {
    /// A deployment without mail where only operators make accounts.
    static func server(signUp: Bool = false) throws -> (TestServer, ops: String) {
        let server = try TestServer.withOperators(.socket) { c in c.signUp = signUp }
        return (server, try server.managementToken())
    }

    static func account(_ server: TestServer, _ ops: String, _ email: String) throws -> String {
        let made = try server.api("POST", "/api/v2/users", token: ops, .object(["email": .string(email), "name": .string("Lin")]))
        try #require(made.status == 201, "\(made.json.serialized)")
        return try #require(made.json["user_id"]?.string)
    }

    /// A link's part after `#`.
    static func link(_ server: TestServer, _ ops: String, _ userID: String, ttl: Int? = nil) throws -> String {
        var body: JSONObject = ["user_id": .string(userID)]
        if let ttl { body["ttl_sec"] = .number(String(ttl)) }
        let made = try server.api("POST", "/api/v2/tickets/passkey-enrollment", token: ops, .object(body))
        try #require(made.status == 201, "\(made.json.serialized)")
        let ticket = try #require(made.json["ticket"]?.string)
        try #require(ticket.hasPrefix("https://signet.test/enroll#"))
        return String(ticket.dropFirst("https://signet.test/enroll#".count))
    }

    /// The script's two calls with `browser`'s authenticator: the options' status and answer,
    /// and, when they were given, the completion's.
    static func enroll(_ browser: WebBrowser, _ ticket: String, session: JSONValue? = nil) throws -> (options: (Int, JSONValue), done: (Int, JSONValue)?) {
        try browser.page("/enroll")
        let start = try browser.json("/enroll/options", .object(["ticket": .string(ticket)]))
        guard start.status == 200, let options = start.json["authn_params_public_key"] else { return ((start.status, start.json), nil) }
        let registration = try browser.authenticator.register(
            rpID: TestServer.rpID, origin: TestServer.origin, challenge: try #require(options["challenge"]?.string.flatMap { Base64URL.decode($0) }),
            userHandle: try #require(options["user"]?["id"]?.string.flatMap { Base64URL.decode($0) }), userName: options["user"]?["name"]?.string ?? "")
        let done = try browser.json("/enroll/passkey", .object([
            "ticket": .string(ticket), "auth_session": session ?? start.json["auth_session"]!, "authn_response": registration.json,
        ]))
        return ((start.status, start.json), (done.status, done.json))
    }

    @Test("an operator's link adds the first passkey and signs the browser in; it is audited, works once, and the passkey signs in from then on")
    func firstPasskey() throws {
        let (server, ops) = try Self.server()
        let id = try Self.account(server, ops, "lin@signet.test")
        let before = Date()
        let made = try server.api("POST", "/api/v2/tickets/passkey-enrollment", token: ops, .object(["user_id": .string(id)]))
        #expect(made.status == 201 && made.json.object?.keys.sorted() == ["expires_at", "ticket"])
        let expires = try #require(made.json["expires_at"]?.string.flatMap { try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse($0) })
        #expect(abs(expires.timeIntervalSince(before) - 7 * 86_400) < 60)
        let ticket = String(try #require(made.json["ticket"]?.string).split(separator: "#")[1])
        let audit = try #require(try server.store.auditEvents(limit: 100).first { $0.kind == AuditKind.adminEnrollmentLink.rawValue })
        #expect(audit.userID == id && audit.clientID == "ops" && audit.detail?.hasPrefix("until ") == true)
        let log = try String(contentsOf: server.logFile, encoding: .utf8)
        #expect(!(audit.detail ?? "").contains(ticket) && !log.contains(ticket))

        // The page needs no link in its request: the script reads it from the fragment.
        let browser = WebBrowser(server)
        let page = try browser.page("/enroll")
        #expect(page.status == 200 && page.html.contains("data-page=\"enroll\"") && page.html.contains("data-testid=\"enroll\""))
        let (options, done) = try Self.enroll(browser, ticket)
        #expect(options.0 == 200 && options.1["email"] == .string("lin@signet.test") && options.1["authn_params_public_key"]?["user"]?["name"] == .string("lin@signet.test"))
        #expect(done?.0 == 200 && done?.1["redirect"] == .string("/account?notice=added"), "\(done?.1.serialized ?? "")")
        let account = try browser.page("/account")
        #expect(account.status == 200 && account.html.contains("lin@signet.test"))
        let passkeys = try server.store.credentials(userID: id)
        #expect(passkeys.count == 1 && passkeys.allSatisfy { $0.revokedAt == nil })
        #expect(passkeys.first?.name == "Chrome · Linux", "named after the browser that made it")
        #expect(try server.store.auditEvents(limit: 100).contains { $0.kind == AuditKind.passkeyAdded.rawValue && $0.userID == id && $0.detail == "by an enrollment link" })
        #expect(try server.api("GET", "/api/v2/users/\(id)", token: ops).json["logins_count"] == .number("1"))

        // Once: the account has a passkey now, so the link (and any other) adds no more.
        let again = try Self.enroll(WebBrowser(server), ticket)
        #expect(again.options.0 == 409 && again.options.1["reason"] == .string("user_has_passkey"))
        let another = try server.api("POST", "/api/v2/tickets/passkey-enrollment", token: ops, .object(["user_id": .string(id)]))
        #expect(another.status == 409 && another.json["reason"] == .string("user_has_passkey"))
        // The passkey signs in.
        try browser.send("POST", "/logout")
        let signedIn = try WebBrowser(server, authenticator: browser.authenticator).signIn()
        #expect(signedIn.status == 200, "\(signedIn.json.serialized)")
    }

    @Test("links refused: no token or scope, an unknown or blocked account or one with a passkey, a bad lifetime or body; at /enroll an expired, altered or foreign link, another account's session, a link used before, a missing CSRF token")
    func refusals() throws {
        let (server, ops) = try Self.server(signUp: true)
        let id = try Self.account(server, ops, "refused@signet.test")
        let body = JSONValue.object(["user_id": .string(id)])
        #expect(try server.api("POST", "/api/v2/tickets/passkey-enrollment", token: nil, body).json["reason"] == .string("token_missing"))
        let reader = try server.managementToken("reader", secret: TestServer.readerSecret)
        #expect(try server.api("POST", "/api/v2/tickets/passkey-enrollment", token: reader, body).json["reason"] == .string("insufficient_scope"))
        let withPasskey = try #require(try Phone(server).signUp(email: "has@signet.test")["access_token"])
        _ = withPasskey
        let hasID = try #require(try server.store.user(email: "has@signet.test")?.id)
        for (value, status, reason) in [
            (JSONValue.object(["user_id": .string("nobody")]), 404, "user_unknown"), (.object(["user_id": .string(hasID)]), 409, "user_has_passkey"),
            (.object(["user_id": .string(id), "ttl_sec": .number("10")]), 400, "malformed"), (.object(["user_id": .string(id), "ttl_sec": .number("2592001")]), 400, "malformed"),
            (.object(["user_id": .string(id), "ttl_sec": .string("600")]), 400, "malformed"), (.object(["user_id": .string(id), "ttl_sec": .number("60.5")]), 400, "malformed"),
            (.object(["user_id": .string(id), "email": .string("x@y.test")]), 400, "malformed"), (.object([:]), 400, "malformed"), (.array([]), 400, "malformed"),
        ] as [(JSONValue, Int, String)] {
            let answer = try server.api("POST", "/api/v2/tickets/passkey-enrollment", token: ops, value)
            #expect(answer.status == status && answer.json["reason"] == .string(reason), "\(value.serialized): \(answer.json.serialized)")
        }
        #expect(!(try server.store.auditEvents(limit: 100).contains { $0.kind == AuditKind.adminEnrollmentLink.rawValue }))

        // Expired.
        let short = try Self.link(server, ops, id, ttl: 300)
        server.clock.advance(301)
        let expired = try Self.enroll(WebBrowser(server), short)
        #expect(expired.options.0 == 400 && expired.options.1["reason"] == .string("auth_session_expired"))
        // Altered, or not a link at all (an ordinary auth session of the pages).
        let ticket = try Self.link(server, ops, id)
        var bytes = Array(ticket.utf8)
        bytes[20] = bytes[20] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(try Self.enroll(WebBrowser(server), String(decoding: bytes, as: UTF8.self)).options.1["reason"] == .string("auth_session_unknown"))
        let other = WebBrowser(server)
        try other.page("/login")
        let ordinary = try #require(try other.json("/login/options").json["auth_session"]?.string)
        #expect(try Self.enroll(WebBrowser(server), ordinary).options.1["reason"] == .string("auth_session_unknown"))
        // Without the page's CSRF token.
        let bare = try WebBrowser(server).json("/enroll/options", .object(["ticket": .string(ticket)]), csrf: "")
        #expect(bare.status == 403 && bare.json["reason"] == .string("csrf_invalid"))
        // Another account's session with this link: refused, and the link still works after it.
        let secondID = try Self.account(server, ops, "second@signet.test")
        let secondLink = try Self.link(server, ops, secondID)
        let foreign = WebBrowser(server)
        try foreign.page("/enroll")
        let foreignSession = try #require(try foreign.json("/enroll/options", .object(["ticket": .string(secondLink)])).json["auth_session"])
        let mixed = try Self.enroll(WebBrowser(server), ticket, session: foreignSession)
        #expect(mixed.done?.0 == 400 && mixed.done?.1["reason"] == .string("ceremony_mismatch"), "\(mixed.done?.1.serialized ?? "")")
        #expect(try server.store.credentials(userID: id).isEmpty && server.store.credentials(userID: secondID).isEmpty)
        // Audited under the link's account, whose link it was.
        let refusal = try server.store.auditEvents(limit: 100).first { $0.kind == AuditKind.passkeyAdded.rawValue && $0.outcome == "failure" }
        #expect(refusal?.reason == "ceremony_mismatch" && refusal?.userID == id, "\(String(describing: refusal))")
        #expect(try Self.enroll(WebBrowser(server), ticket).done?.0 == 200)
        // Used once, its passkey then removed by an operator: the link is still spent (the
        // database's mark), so the account's owner needs a new one.
        let method = try #require(try server.api("GET", "/api/v2/users/\(id)/authentication-methods", token: ops).json.array?.first { $0["type"] == .string("passkey") }?["id"]?.string)
        #expect(try server.api("DELETE", "/api/v2/users/\(id)/authentication-methods/\(method)", token: ops).status == 204)
        let spent = try Self.enroll(WebBrowser(server), ticket)
        #expect(spent.options.0 == 200 && spent.done?.0 == 400 && spent.done?.1["reason"] == .string("auth_session_unknown"), "\(spent.done?.1.serialized ?? "")")
        #expect(try server.store.credentials(userID: id).allSatisfy { $0.revokedAt != nil })
        #expect(try Self.enroll(WebBrowser(server), try Self.link(server, ops, id)).done?.0 == 200)
        // Blocked after the link was made.
        let blockedID = try Self.account(server, ops, "blocked@signet.test")
        let blockedLink = try Self.link(server, ops, blockedID)
        #expect(try server.api("PATCH", "/api/v2/users/\(blockedID)", token: ops, .object(["blocked": .bool(true)])).status == 200)
        let blocked = try Self.enroll(WebBrowser(server), blockedLink)
        #expect(blocked.options.0 == 403 && blocked.options.1["reason"] == .string("user_blocked"))
        #expect(try server.api("POST", "/api/v2/tickets/passkey-enrollment", token: ops, .object(["user_id": .string(blockedID)])).json["reason"] == .string("user_blocked"))
    }

    @Test("signet admin users enrollment-link: the link for an account on the database, as text or JSON; an unknown account or a bad --ttl refused")
    func commandLine() throws {
        let server = try TestServer()
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        func signet(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
            try OperationsTests.signet(["admin", "users"] + arguments + database, in: server.directory)
        }
        let added = try OperationsTests.json(try signet(["add", "--email", "cli-link@signet.test", "--no-mail", "--json"]).output)
        let id = try #require(added["user_id"]?.string)
        let link = try OperationsTests.json(try signet(["enrollment-link", id, "--ttl", "600", "--json"]).output)
        #expect(link["ticket"]?.string?.contains("/enroll#") == true && link["expires_at"]?.string != nil)
        let text = try signet(["enrollment-link", id])
        #expect(text.status == 0 && text.output.contains("/enroll#") && text.output.contains("once"))
        let unknown = try signet(["enrollment-link", "nobody"])
        #expect(unknown.status == 1 && unknown.errors.contains("user_unknown"))
        #expect(try signet(["enrollment-link", id, "--ttl", "5"]).status == 2)
        // Made and linked in one step.
        let both = try OperationsTests.json(try signet(["add", "--email", "both@signet.test", "--no-mail", "--link", "--ttl", "900", "--json"]).output)
        #expect(both["user"]?["email"] == .string("both@signet.test") && both["enrollment"]?["ticket"]?.string?.contains("/enroll#") == true)
        let bothText = try signet(["add", "--email", "text@signet.test", "--no-mail", "--link"])
        #expect(bothText.status == 0 && bothText.output.contains("link   ") && bothText.output.contains("/enroll#"))
        #expect(try signet(["add", "--email", "ttl@signet.test", "--ttl", "900"]).status == 2)
        #expect(try signet(["add", "--email", "ttl@signet.test", "--link", "--ttl", "5"]).status == 2)
        #expect(try server.store.user(email: "ttl@signet.test") == nil)
        #expect(try server.store.auditEvents(limit: 100).filter { $0.kind == AuditKind.adminEnrollmentLink.rawValue }.count == 4)
    }

    /// An app's way: `/passkey/enroll` for options, the authenticator, then the passkey grant.
    static func appEnroll(_ phone: Phone, ticket: String, client: String = "app", session: String? = nil) throws -> (start: (status: Int, json: JSONValue), done: (status: Int, json: JSONValue)?) {
        let start = try phone.server.post("/passkey/enroll", .object(["client_id": .string(client), "ticket": .string(ticket)]))
        guard start.status == 200, let options = start.json["authn_params_public_key"] else { return (start, nil) }
        let registration = try phone.authenticator.register(
            rpID: TestServer.rpID, origin: TestServer.origin, challenge: try #require(options["challenge"]?.string.flatMap { Base64URL.decode($0) }),
            userHandle: try #require(options["user"]?["id"]?.string.flatMap { Base64URL.decode($0) }), userName: options["user"]?["name"]?.string ?? "")
        return (start, try phone.exchange(session: session ?? start.json["auth_session"]?.string ?? "", credential: registration.json, clientID: client))
    }

    @Test("in an app: /passkey/enroll and the passkey grant add the first passkey and sign the app in, with sign-up closed; once; every refusal the page has")
    func inAnApp() throws {
        let (server, ops) = try Self.server()
        let id = try Self.account(server, ops, "app-lin@signet.test")
        let ticket = try Self.link(server, ops, id)
        let phone = Phone(server)
        // The whole link works as well as the part after #.
        let (start, done) = try Self.appEnroll(phone, ticket: "https://signet.test/enroll#" + ticket)
        #expect(start.status == 200 && start.json["authn_params_public_key"]?["user"]?["name"] == .string("app-lin@signet.test"), "\(start.json.serialized)")
        let tokens = try #require(done)
        #expect(tokens.status == 200 && tokens.json["refresh_token"] != nil, "\(tokens.json.serialized)")
        let claims = jwtClaims(tokens.json["access_token"]?.string)
        #expect(claims["sub"] == .string(id) && claims["amr"]?.array?.contains(.string("pop")) == true)
        #expect(try server.store.credentials(userID: id).count == 1)
        let audit = try #require(try server.store.auditEvents(limit: 30).first { $0.kind == "passkey_added" })
        #expect(audit.userID == id && audit.clientID == "app" && audit.detail == "by an enrollment link")
        // The passkey signs in from now on; the link is spent.
        #expect(try phone.signIn()["access_token"] != nil)
        #expect(try Self.appEnroll(Phone(server), ticket: ticket).start.json["reason"] == .string("user_has_passkey"))

        // Refusals: a link used meanwhile (its account's passkey removed, the link reused), a
        // session for another kind, a client without the passkey grant, an altered link.
        let other = try Self.account(server, ops, "app-other@signet.test")
        let second = try Self.link(server, ops, other)
        let first = try Self.appEnroll(Phone(server), ticket: second)
        #expect(first.done?.status == 200)
        let methods = try server.api("GET", "/api/v2/users/\(other)/authentication-methods", token: ops).json.array ?? []
        let passkey = try #require(methods.first { $0["type"] == .string("passkey") }?["id"]?.string)
        #expect(try server.api("DELETE", "/api/v2/users/\(other)/authentication-methods/\(passkey)", token: ops).status == 204)
        let reused = try Self.appEnroll(Phone(server), ticket: second)
        #expect(reused.done?.status == 400 && reused.done?.json["reason"] == .string("auth_session_unknown"), "\(reused.done?.json.serialized ?? "none")")
        let third = try Self.link(server, ops, try Self.account(server, ops, "app-third@signet.test"))
        let signInSession = try #require(try server.post("/passkey/challenge", .object(["client_id": .string("app")])).json["auth_session"]?.string)
        #expect(try Self.appEnroll(Phone(server), ticket: third, session: signInSession).done?.json["reason"] == .string("ceremony_mismatch"))
        #expect(try Self.appEnroll(Phone(server), ticket: third, client: "bank").start.json["reason"] == .string("grant_not_allowed"))
        #expect(try Self.appEnroll(Phone(server), ticket: String(third.dropLast(2)) + "AA").start.json["reason"] == .string("auth_session_unknown"))
        #expect(try server.post("/passkey/enroll", .object(["client_id": .string("app")])).json["reason"] == .string("malformed"))
        // The unused link still works after all that.
        #expect(try Self.appEnroll(Phone(server), ticket: third).done?.status == 200)
    }
}
