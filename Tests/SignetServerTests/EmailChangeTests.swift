import SignetAuth
import Foundation
import SignetAPI
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

extension SignedIn {
    func startEmailChange(_ email: String) throws -> (status: Int, json: JSONValue) {
        try call("POST", "/me/email", .object(["email": .string(email)]))
    }

    func finishEmailChange(_ email: String, _ code: String) throws -> (status: Int, json: JSONValue) {
        try call("POST", "/me/email/verify", .object(["email": .string(email), "code": .string(code)]))
    }
}

extension SMTPServer {
    /// The newest address-change code mailed to `address`, once `count` have been mailed before it.
    func changeCode(for address: String, after count: Int = 0) throws -> String {
        var found: String?
        _ = eventually {
            let codes = messages(to: address).filter { $0.kind == "email_change_code" }
            guard codes.count > count else { return false }
            found = codes.last?.code
            return found != nil
        }
        return try #require(found, "no address-change code reached \(address)")
    }
}

/// `POST /me/email` and `POST /me/email/verify`: the owner moves the account to a new address.
@Suite(.enabled(if: SMTPServer.available, "needs python3-aiosmtpd (scripts/bootstrap.sh installs it)"))
struct EmailChangeTests {
    @Test("a code to the new address makes it the account's, verified; the old address is told; sign-in by code follows the address")
    func change() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let account = try SignedIn(server, email: "old@signet.test")
        let user = try #require(try server.store.user(email: "old@signet.test"))
        let (status, started) = try account.startEmailChange("New@Signet.test")
        #expect(status == 202 && started["email"] == .string("new@signet.test") && started["expires_in"]?.int64 == 300, "\(started.serialized)")
        let code = try smtp.changeCode(for: "new@signet.test")
        // Nothing changes before the code comes back.
        #expect(try server.store.user(id: user.id)?.email == "old@signet.test")
        let (done, changed) = try account.finishEmailChange("new@signet.test", String(code.prefix(3) + " " + code.dropFirst(3)))
        #expect(done == 200 && changed == .object(["email": .string("new@signet.test"), "email_verified": .bool(true), "expires_in": .null]), "\(changed.serialized)")
        let moved = try #require(try server.store.user(id: user.id))
        let gone = try server.store.user(email: "old@signet.test")
        #expect(moved.email == "new@signet.test" && moved.emailVerified && gone == nil)
        // The old address hears of it, naming the new one; the code worked once.
        #expect(eventually { smtp.messages(to: "old@signet.test").contains { $0.kind == "email_changed" } })
        let notice = try #require(smtp.messages(to: "old@signet.test").last { $0.kind == "email_changed" })
        #expect(notice.body.contains("new@signet.test"))
        #expect(try account.finishEmailChange("new@signet.test", code).json["reason"] == .string("otp_invalid"))
        // The audit trail says from what to what, for whoever looks into a takeover later.
        let audited = try #require(try server.store.auditEvents(limit: 20).first { $0.kind == "email_changed" && $0.outcome == "success" })
        #expect(audited.userID == user.id && audited.detail == "from old@signet.test to new@signet.test")
        // A sign-in code now goes to the new address and signs in the same account.
        server.clock.advance(31)
        try server.startEmail("new@signet.test")
        let signIn = try server.signIn(email: "new@signet.test", code: try smtp.code(for: "new@signet.test"))
        #expect(signIn.status == 200 && jwtClaims(signIn.json["access_token"]?.string)["sub"] == .string(user.id))
    }

    @Test("an account may ask for at most sends_per_hour address changes an hour, to any addresses")
    func perAccountBudget() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp) { $0.rateLimits.enabled = false }
        let account = try SignedIn(server, email: "bomber@signet.test")
        let now = server.clock.now.timeIntervalSince1970
        server.clock.advance(3600 - now.truncatingRemainder(dividingBy: 3600) + 1)
        let fresh = SignedIn(server, phone: account.phone, access: try #require(try account.phone.signIn()["access_token"]?.string))
        let statuses = try (0..<11).map { try fresh.startEmailChange("victim\($0)@signet.test").status }
        #expect(statuses == Array(repeating: 202, count: 10) + [429], "\(statuses)")
        #expect(eventually { smtp.messages().filter { $0.kind == "email_change_code" }.count == 10 })
    }

    @Test("starting needs a fresh passkey check: a stale session and an email-code session are refused")
    func needsStepUp() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let account = try SignedIn(server, email: "stepup-change@signet.test")
        server.clock.advance(Double(server.app.configuration.stepUpMaxAge + 1))
        #expect(try account.startEmailChange("elsewhere@signet.test").json["reason"] == .string("step_up_required"))
        let code = try server.codeSession("stepup-change@signet.test", smtp: smtp)
        #expect(try code.startEmailChange("elsewhere@signet.test").json["reason"] == .string("step_up_required"))
        #expect(smtp.messages(to: "elsewhere@signet.test").isEmpty)
    }

    @Test("refusals: the same address, a taken one, a wrong, expired or spent code, another account's code, a sign-in code, and the other way round")
    func refusals() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let ada = try SignedIn(server, email: "ada-change@signet.test")
        let bob = try SignedIn(server, email: "bob-change@signet.test")
        let adaID = try #require(try server.store.user(email: "ada-change@signet.test")).id
        #expect(try ada.startEmailChange("ADA-change@signet.test").json["reason"] == .string("malformed"))
        #expect(try ada.startEmailChange("not an address").json["reason"] == .string("malformed"))
        // A taken address gets a code like any other (no enumeration); using it is refused.
        #expect(try ada.startEmailChange("bob-change@signet.test").status == 202)
        let taken = try ada.finishEmailChange("bob-change@signet.test", try smtp.changeCode(for: "bob-change@signet.test"))
        #expect(taken.status == 409 && taken.json["reason"] == .string("user_exists"), "\(taken.json.serialized)")
        #expect(try server.store.user(id: adaID)?.email == "ada-change@signet.test")
        // Throttled like sign-in codes: one per 30 s an address.
        #expect(try ada.startEmailChange("fresh@signet.test").status == 202)
        let again = try ada.startEmailChange("fresh@signet.test")
        #expect(again.status == 429 && again.json["reason"] == .string("rate_limited"))
        let code = try smtp.changeCode(for: "fresh@signet.test")
        // Another account cannot use Ada's code, and the code cannot sign anyone in.
        #expect(try bob.finishEmailChange("fresh@signet.test", code).json["reason"] == .string("otp_invalid"))
        #expect(try server.signIn(email: "fresh@signet.test", code: code).json["reason"] == .string("otp_invalid"))
        // Every try at the code counts against its budget of 5, Bob's included (the sign-in try
        // was at the address's sign-in code, of which there is none): then even the right code is refused.
        let wrong = code == "000000" ? "111111" : "000000"
        for _ in 0..<4 { #expect(try ada.finishEmailChange("fresh@signet.test", wrong).json["reason"] == .string("otp_invalid")) }
        #expect(try ada.finishEmailChange("fresh@signet.test", code).json["reason"] == .string("otp_attempts_exceeded"))
        // Expired.
        server.clock.advance(31)
        #expect(try ada.startEmailChange("later@signet.test").status == 202)
        let late = try smtp.changeCode(for: "later@signet.test")
        server.clock.advance(301)
        #expect(try ada.finishEmailChange("later@signet.test", late).json["reason"] == .string("otp_expired"))
        #expect(try server.store.user(id: adaID)?.email == "ada-change@signet.test")
        // A sign-in code for an address cannot move an account to it.
        try server.startEmail("signin-only@signet.test")
        let signInCode = try smtp.code(for: "signin-only@signet.test")
        #expect(try ada.finishEmailChange("signin-only@signet.test", signInCode).json["reason"] == .string("otp_invalid"))
        #expect(try server.store.user(id: adaID)?.email == "ada-change@signet.test")
    }

    @Test("a change code and a sign-in code for one address are kept apart: asking for either leaves the other pending")
    func codesKeptApart() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let ada = try SignedIn(server, email: "ada-apart@signet.test")
        let adaID = try #require(try server.store.user(email: "ada-apart@signet.test")).id
        // Ada asks to move to an address; a stranger asks a sign-in code for it at once.
        #expect(try ada.startEmailChange("moving@signet.test").status == 202)
        let change = try smtp.changeCode(for: "moving@signet.test")
        #expect(try server.startEmail("moving@signet.test").status == 200)
        _ = try smtp.code(for: "moving@signet.test")
        // Ada's code still moves the account.
        #expect(try ada.finishEmailChange("moving@signet.test", change).status == 200)
        #expect(try server.store.user(id: adaID)?.email == "moving@signet.test")
        // The other way round: Carol's pending sign-in code survives another account asking to move
        // to Bob's address (a taken address gets a code like any other).
        let carol = try SignedIn(server, email: "carol-apart@signet.test")
        #expect(try server.startEmail("carol-apart@signet.test").status == 200)
        let carolCode = try smtp.code(for: "carol-apart@signet.test")
        #expect(try ada.startEmailChange("carol-apart@signet.test").status == 202)
        _ = try smtp.changeCode(for: "carol-apart@signet.test")
        let (status, tokens) = try server.signIn(email: "carol-apart@signet.test", code: carolCode)
        #expect(status == 200 && jwtClaims(tokens["access_token"]?.string)["sub"] == jwtClaims(carol.access)["sub"], "\(tokens.serialized)")
    }

    @Test("the account page: a step-up, then the code's question; a mistyped code asks again; the right one moves the account")
    func page() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let browser = WebBrowser(server)
        try browser.signUp(email: "page-old@signet.test")
        let id = try #require(try server.store.user(email: "page-old@signet.test")).id
        server.clock.advance(Double(server.app.configuration.stepUpMaxAge + 1))
        #expect(try browser.page("/account").html.contains("data-testid=\"email-section\""))
        let stale = try browser.form("/account/email", [("email", "page-new@signet.test")])
        #expect(stale.html.contains("data-testid=\"step-up-prompt\"") && stale.html.contains("name=\"email\" value=\"page-new@signet.test\""))
        #expect(smtp.messages(to: "page-new@signet.test").isEmpty)
        try browser.stepUp()
        try browser.page("/account")
        let asked = try browser.form("/account/email", [("email", "page-new@signet.test")])
        #expect(asked.status == 200 && asked.html.contains("data-testid=\"email-pending\">page-new@signet.test<") && asked.html.contains("data-testid=\"email-code\""))
        let code = try smtp.changeCode(for: "page-new@signet.test")
        let wrong = try browser.form("/account/email/verify", [("email", "page-new@signet.test"), ("code", code == "000000" ? "111111" : "000000")])
        #expect(wrong.status == 403 && wrong.html.contains("data-testid=\"email-error\"") && wrong.html.contains("data-testid=\"email-code\""))
        let done = try browser.form("/account/email/verify", [("email", "page-new@signet.test"), ("code", code)])
        #expect(done.response.headers["location"] == "/account?notice=email_changed")
        let after = try browser.page("/account?notice=email_changed")
        #expect(after.html.contains("data-testid=\"account-email\">page-new@signet.test<") && after.html.contains("Email address changed."))
        #expect(try server.store.user(id: id)?.email == "page-new@signet.test")
        // An address another account has: said in the page's words, nothing changes.
        _ = try SignedIn(server, email: "page-taken@signet.test")
        server.clock.advance(31)
        try browser.stepUp()
        try browser.page("/account")
        #expect(try browser.form("/account/email", [("email", "page-taken@signet.test")]).status == 200)
        let taken = try browser.form("/account/email/verify", [("email", "page-taken@signet.test"), ("code", try smtp.changeCode(for: "page-taken@signet.test"))])
        #expect(taken.status == 409 && taken.html.contains("data-testid=\"email-taken\"") && taken.html.contains("Another account has that address"))
        #expect(try server.store.user(id: id)?.email == "page-new@signet.test")
    }
}

/// `PATCH /me` and the account page's "Name": the account's display name.
@Suite struct NameChangeTests {
    @Test("the name is set, shown in /userinfo and the next tokens, cleared with null; bad names and bodies are refused")
    func rename() throws {
        let server = try TestServer()
        let phone = Phone(server)
        let tokens = try phone.signUp(email: "named@signet.test")
        let account = SignedIn(server, phone: phone, access: try #require(tokens["access_token"]?.string))
        let (status, json) = try account.call("PATCH", "/me", .object(["name": .string("  Ada Lovelace ")]))
        #expect(status == 200 && json["name"] == .string("Ada Lovelace") && json["email"] == .string("named@signet.test"), "\(json.serialized)")
        #expect(try account.call("GET", "/userinfo").json["name"] == .string("Ada Lovelace"))
        let refreshed = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(tokens["refresh_token"]),
        ]))
        #expect(jwtClaims(refreshed.json["id_token"]?.string)["name"] == .string("Ada Lovelace"))
        #expect(try server.store.auditEvents(limit: 10).contains { $0.kind == "name_changed" && $0.outcome == "success" })
        for bad: JSONValue in [.object([:]), .object(["name": .int(5)]), .object(["name": .string(String(repeating: "a", count: 201))]),
                               .object(["name": .string("evil\u{202E}gpj.exe")]), .array([])] {
            let refused = try account.call("PATCH", "/me", bad)
            #expect(refused.status == 400 && refused.json["reason"] == .string("malformed"), "\(bad.serialized)")
        }
        let cleared = try account.call("PATCH", "/me", .object(["name": .null]))
        #expect(cleared.status == 200 && cleared.json["name"] == nil, "\(cleared.json.serialized)")
        #expect(try server.store.user(email: "named@signet.test")?.name == nil)
        #expect(try server.send("PATCH", "/me", body: Array(#"{"name":"x"}"#.utf8)).status == 401)
    }

    @Test("the account page's name form saves it without a step-up")
    func page() throws {
        let server = try TestServer()
        let browser = WebBrowser(server)
        try browser.signUp(email: "page-named@signet.test", name: "Ada")
        server.clock.advance(Double(server.app.configuration.stepUpMaxAge + 1))
        #expect(try browser.page("/account").html.contains("value=\"Ada\" maxlength=\"200\" autocomplete=\"name\""))
        let saved = try browser.form("/account/name", [("name", "Ada King")])
        #expect(saved.response.headers["location"] == "/account?notice=name_changed")
        #expect(try browser.page("/account?notice=name_changed").html.contains("Name saved."))
        #expect(try server.store.user(email: "page-named@signet.test")?.name == "Ada King")
    }
}
