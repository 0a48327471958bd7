import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetSoftware
import SignetWebAuthn
import Testing

/// `/login/recovery`: a recovery code on the hosted pages, for someone without their passkeys.
@Suite(.enabled(if: SMTPServer.available, "needs python3-aiosmtpd (scripts/bootstrap.sh installs it)"))
struct WebRecoveryTests {
    /// An account with a passkey and a set of recovery codes, and a server mailing to `smtp`.
    static func account(_ smtp: SMTPServer, email: String, _ edit: @escaping (inout ServerConfiguration) -> Void = { _ in })
        throws -> (server: TestServer, account: SignedIn, codes: [String]) {
        let server = try TestServer(smtp: smtp) { c in
            TestServer.webClients(&c)
            edit(&c)
        }
        let account = try SignedIn(server, email: email)
        let codes = try account.call("POST", "/me/recovery-codes").json["codes"]?.array?.compactMap(\.string) ?? []
        try #require(codes.count == 10)
        return (server, account, codes)
    }

    /// A passkey made on the passkey offer's page, as its script makes it.
    static func addPasskey(_ browser: WebBrowser, email: String) throws -> (status: Int, json: JSONValue) {
        let start = try browser.json("/account/passkeys/options")
        let options = try #require(start.json["authn_params_public_key"], "\(start.json.serialized)")
        let registration = try browser.authenticator.register(
            rpID: TestServer.rpID, origin: TestServer.origin, challenge: try #require(options["challenge"]?.string.flatMap { Base64URL.decode($0) }),
            userHandle: try #require(options["user"]?["id"]?.string.flatMap { Base64URL.decode($0) }), userName: email)
        let done = try browser.json("/account/passkeys", .object(["auth_session": start.json["auth_session"]!, "authn_response": registration.json]))
        return (done.status, done.json)
    }

    @Test("the sign-in page leads to it; a right code signs in once, goes on to the passkey offer, tells the owner; the passkey it adds opens a recovery; the code, spent, is refused")
    func signsIn() throws {
        let smtp = try SMTPServer()
        let (server, _, codes) = try Self.account(smtp, email: "lost@signet.test")
        let browser = WebBrowser(server)
        let login = try browser.page("/login")
        #expect(login.html.contains(#"href="/login/recovery" data-testid="use-recovery-code""#))
        let page = try browser.page("/login/recovery")
        #expect(page.status == 200 && page.html.contains(#"action="/login/recovery""#) && page.html.contains(#"data-testid="recovery-code""#))
        #expect(page.response.headers["content-security-policy"]?.contains("script-src 'self'") == true)

        // Typed as people type it: lower case, spaces for dashes.
        let typed = codes[3].lowercased().replacingOccurrences(of: "-", with: " ")
        let signedIn = try browser.form("/login/recovery", [("email", "Lost@Signet.test"), ("code", typed), ("authorization", ""), ("return_to", "")])
        #expect(signedIn.status == 303 && signedIn.response.headers["location"] == "/account/passkey-offer?next=%2Faccount", "\(signedIn.status) \(signedIn.html.prefix(600))")
        #expect(try browser.page("/account").status == 200)
        let already = try browser.page("/login/recovery")
        #expect(already.status == 303 && already.response.headers["location"] == "/account", "signed in: nothing to recover")
        #expect(try server.store.auditEvents(limit: 20).contains { $0.kind == "recovery_code_sign_in" && $0.outcome == "success" && $0.clientID == Ceremonies.webClient.id })
        #expect(eventually { smtp.messages(to: "lost@signet.test").contains { $0.kind == "recovery_code_used" } })
        // A passkey added now opens a recovery: the account still has one from before.
        let added = try Self.addPasskey(browser, email: "lost@signet.test")
        #expect(added.status == 201, "\(added.json.serialized)")
        let user = try #require(try server.store.user(email: "lost@signet.test"))
        #expect(try server.store.activeRecoveries(userID: user.id, now: Int64(server.clock.now.timeIntervalSince1970 * 1000)).count == 1)

        // Spent: the same code again is refused, on a fresh browser, with the page shown again.
        let other = WebBrowser(server)
        try other.page("/login/recovery")
        let again = try other.form("/login/recovery", [("email", "lost@signet.test"), ("code", codes[3])])
        #expect(again.status == 403 && again.html.contains(#"data-reason="recovery_code_invalid""#) && again.html.contains(#"value="lost@signet.test""#))
        #expect(!again.html.contains(codes[3]), "the code is never shown back")
        #expect(try other.page("/account").status == 303)
    }

    @Test("refused: a wrong code, an unknown address, a bad address, a forged form; past the address's budget even a right code waits; Spanish; a pending authorization is carried and its app named; an app that asks for a passkey offers no code")
    func refused() throws {
        let smtp = try SMTPServer()
        let (server, _, codes) = try Self.account(smtp, email: "held@signet.test") { $0.rateLimits.enabled = false }
        let now = server.clock.now.timeIntervalSince1970
        server.clock.advance(3600 - now.truncatingRemainder(dividingBy: 3600) + 1)
        let browser = WebBrowser(server)
        try browser.page("/login/recovery")
        for (email, code, reason, status) in [("held@signet.test", "AAAA-AAAA-AAAA", "recovery_code_invalid", 403), ("nobody@signet.test", codes[0], "recovery_code_invalid", 403),
                                              ("not an address", codes[0], "malformed", 400)] {
            let answer = try browser.form("/login/recovery", [("email", email), ("code", code)])
            #expect(answer.status == status && answer.html.contains("data-reason=\"\(reason)\""), "\(email): \(answer.status)")
        }
        #expect(try browser.form("/login/recovery", [("email", "held@signet.test"), ("code", codes[0])], csrf: "forged").status == 403)
        // Four wrong tries so far for this address (one was another address's): the fifth is the
        // last the hour allows, then even a right code waits.
        for _ in 0..<4 { _ = try browser.form("/login/recovery", [("email", "held@signet.test"), ("code", "BBBB-BBBB-BBBB")]) }
        let waiting = try browser.form("/login/recovery", [("email", "held@signet.test"), ("code", codes[0])])
        #expect(waiting.status == 429 && waiting.html.contains(#"data-reason="rate_limited""#), "\(waiting.status)")
        #expect(try browser.page("/account").status == 303)
        // Spanish, from the browser's language.
        let spanish = WebBrowser(server)
        let es = try spanish.send("GET", "/login/recovery", headers: [("Accept-Language", "es")])
        #expect(String(decoding: es.body, as: UTF8.self).contains("Inicia sesión con un código de recuperación"))

        // A pending authorization: carried on the way in; an app that asks for a passkey offers no code.
        let pending = WebBrowser(server)
        let location = try #require(try server.authorize(pending).headers["location"])
        let sealed = try #require(WebBrowser.query(location)["authorization"])
        let login = try pending.page(location).html
        #expect(login.contains("href=\"/login/recovery?authorization=\(sealed)\""))
        // The app the sign-in leads to is named (its ID, where it has no name), on each page.
        #expect(login.contains(#"data-testid="app-name">to continue to <strong>spa</strong>"#))
        let form = try pending.page("/login/recovery?authorization=\(sealed)")
        #expect(form.html.contains("name=\"authorization\" value=\"\(sealed)\"") && form.html.contains(#"data-testid="app-name""#))
        #expect(try pending.page("/signup?authorization=\(sealed)").html.contains(#"<strong>spa</strong>"#))
        #expect(try WebBrowser(server).page("/login").html.contains("app-name") == false, "no app without an authorization")
        let strict = WebBrowser(server)
        let passkeyOnly = try #require(try server.authorize(strict, extra: [("acr_values", "phr")]).headers["location"])
        let strictPage = try strict.page(passkeyOnly).html
        #expect(strictPage.contains("passkey-required") && !strictPage.contains("use-recovery-code"))
    }
}
