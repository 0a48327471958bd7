import Foundation
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWeb
import SignetWebAuthn
import Testing

/// The hosted pages' rules (DESIGN.md, "The web"): headers, cookies, CSRF, escaping, the SSO
/// session's lifetimes and ends, logout, step-up on the account page, related origins, CORS,
/// conditional creation, and the device page.
@Suite struct WebPageTests {
    static func server(_ edit: (inout ServerConfiguration) -> Void = { _ in }) throws -> TestServer {
        try TestServer { c in
            TestServer.webClients(&c)
            edit(&c)
        }
    }

    @Test("pages carry a strict CSP (no inline script or style), no-referrer, nosniff, no framing; assets are ours")
    func headers() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        for path in ["/login", "/signup", "/authorize?client_id=nobody"] {
            let page = try browser.page(path)
            let csp = try #require(page.response.headers["content-security-policy"])
            #expect(csp.contains("default-src 'self'") && csp.contains("script-src 'self'") && csp.contains("object-src 'none'"))
            #expect(csp.contains("base-uri 'none'") && csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"))
            #expect(page.response.headers["referrer-policy"] == "no-referrer" && page.response.headers["x-content-type-options"] == "nosniff")
            #expect(page.response.headers["cache-control"] == "no-store")
            // No inline script, no inline style, no script from elsewhere.
            #expect(!page.html.contains("<script>") && !page.html.contains("style=") && !page.html.contains("<style") && page.html.range(of: #" on[a-z]+="#, options: .regularExpression) == nil)
            #expect(page.html.contains("<script src=\"/assets/signet.js\" defer></script>"))
        }
        let script = try browser.send("GET", "/assets/signet.js")
        #expect(script.status == 200 && script.headers["content-type"] == "text/javascript; charset=utf-8")
        #expect(try browser.send("GET", "/assets/signet.css").headers["content-type"] == "text/css; charset=utf-8")
    }

    @Test("a browser's refusals before any route runs (a body too large) are the templated error page too")
    func bodyTooLargePage() throws {
        let server = try TestServer(.socket) { c in c.maxBodyBytes = 1024 }
        let response = try server.client().send("POST", "/login/code", headers: [("Accept", "text/html"), ("Content-Type", "application/x-www-form-urlencoded")],
                                                body: Array(repeating: UInt8(ascii: "a"), count: 4096))
        #expect(response.status == 413 && response.headers["content-security-policy"]?.contains("frame-ancestors 'none'") == true)
        #expect(String(decoding: response.body, as: UTF8.self).contains("data-reason=\"body_too_large\""))
    }

    @Test("the session cookie is __Host-, Secure, HttpOnly, SameSite=Lax, Path=/; the plain name on http://localhost")
    func cookieAttributes() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        let page = try browser.page("/login")
        #expect(page.response.headers["set-cookie"]?.hasPrefix("__Host-signet_browser=") == true)
        try browser.page("/signup")
        let start = try browser.json("/signup/options", .object(["email": .string("cookie@signet.test")]))
        let options = try #require(start.json["authn_params_public_key"])
        let registration = try browser.authenticator.register(
            rpID: TestServer.rpID, origin: TestServer.origin, challenge: Base64URL.decode(options["challenge"]!.string!)!,
            userHandle: Base64URL.decode(options["user"]!["id"]!.string!)!, userName: "cookie@signet.test")
        let done = try browser.json("/login/passkey", .object(["auth_session": start.json["auth_session"]!, "authn_response": registration.json]))
        let cookie = try #require(done.response.headers["set-cookie"])
        #expect(cookie.hasPrefix("__Host-signet_session=") && cookie.contains("; Path=/") && cookie.contains("; HttpOnly") && cookie.contains("; SameSite=Lax"))
        #expect(cookie.contains("; Secure") && !cookie.contains("Domain="))
        #expect(done.json["redirect"] == .string("/account"))
        // Development on http://localhost: no prefix, no Secure.
        let local = try TestServer { c in c.issuer = "http://localhost:8080" }
        let set = try WebBrowser(local).page("/login").response.headers["set-cookie"] ?? ""
        #expect(set.hasPrefix("signet_browser=") && !set.contains("Secure"))
    }

    @Test("every POST needs the CSRF token bound to this browser: none, another browser's, or a pre-sign-in one after sign-in is 403 csrf_invalid")
    func csrf() throws {
        let server = try Self.server()
        let ada = WebBrowser(server)
        try ada.signUp(email: "csrf@signet.test")
        try ada.page("/account")
        let other = WebBrowser(server)
        try other.page("/login")
        // Script calls.
        #expect(try other.json("/login/options", csrf: "").json["reason"] == .string("csrf_invalid"))
        #expect(try other.json("/login/options", csrf: ada.csrf).status == 403)
        let fresh = WebBrowser(server)
        #expect(try fresh.json("/login/options", csrf: ada.csrf).status == 403, "a browser without the pre-session cookie")
        #expect(try ada.json("/account/passkeys/options", csrf: other.csrf).json["reason"] == .string("csrf_invalid"))
        // Forms (a page answers).
        let passkeys = try server.store.credentials(userID: try #require(try server.store.user(email: "csrf@signet.test")).id)
        let id = Base64URL.encode(passkeys[0].id)
        let name = passkeys[0].name
        let forged = try ada.form("/account/passkeys/\(id)/rename", [("name", "owned")], csrf: other.csrf)
        #expect(forged.status == 403 && forged.html.contains("data-reason=\"csrf_invalid\""))
        #expect(try ada.form("/logout", [], csrf: "").status == 403)
        #expect(try other.form("/login/code", [("email", "x@signet.test")], csrf: "nope").status == 403)
        #expect(try server.store.credentials(userID: passkeys[0].userID)[0].name == name, "nothing changed")
    }

    @Test("accessible forms: every visible input has a label, every button a text, the page a language and a title")
    func labels() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "labels@signet.test")
        for path in ["/account", "/device", "/account/passkey-offer"] {
            try checkLabels(try browser.page(path).html, path)
        }
        let stranger = WebBrowser(server)
        for path in ["/login", "/signup"] { try checkLabels(try stranger.page(path).html, path) }
    }

    func checkLabels(_ html: String, _ path: String) throws {
        #expect(html.contains("<html lang=\"en\">") && html.contains("<title>"), "\(path)")
        let inputs = html.components(separatedBy: "<input").dropFirst().map { $0.prefix { $0 != ">" } }.filter { !$0.contains("type=\"hidden\"") }
        for input in inputs {
            let id = try #require(WebBrowser.attribute("id", in: String(input)), "\(path): an input without an id: \(input)")
            #expect(html.contains("<label for=\"\(id)\"") || html.contains("<label class=\"visually-hidden\" for=\"\(id)\""), "\(path): no label for \(id)")
        }
        #expect(!html.contains("<button type=\"submit\"></button>") && !html.contains("<button type=\"button\"></button>"), "\(path)")
    }

    @Test("values are escaped by the template layer: a name with markup shows as text")
    func escaping() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "esc@signet.test", name: "<script>alert(1)</script>\"'&")
        let user = try #require(try server.store.user(email: "esc@signet.test"))
        let id = Base64URL.encode(try server.store.credentials(userID: user.id)[0].id)
        try browser.page("/account")
        try browser.form("/account/passkeys/\(id)/rename", [("name", "<img src=x onerror=alert(1)>")])
        let page = try browser.page("/account")
        #expect(!page.html.contains("<img src=x") && page.html.contains("&lt;img src=x onerror=alert(1)&gt;"))
        #expect(page.html.contains("data-display-name=\"&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;\""))
        #expect(Template.escape("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
    }

    @Test("templates: sections, inverted sections, lists with outer values, text by language")
    func templates() {
        let t = Template("{{#items}}[{{name}}{{#flag}}!{{/flag}}/{{outer}}]{{/items}}{{^items}}none{{/items}}{{^missing}}-{{/missing}}{{t.hello}}")
        let rendered = t.render(["items": .list([["name": .text("a<"), "flag": .bool(true)], ["name": .text("b")]]), "outer": .text("o")], strings: ["hello": "hi"])
        #expect(rendered.html == "[a&lt;!/o][b/o]-hi")
        #expect(t.render(["items": .list([])]).html == "none-t.hello")
        // Every text exists in every language.
        for language in Strings.languages { #expect(Set(Strings.table("en").keys) == Set(Strings.table(language).keys), "\(language)") }
        #expect(Strings.language(uiLocales: "it es-MX", acceptLanguage: "en") == "es")
        #expect(Strings.language(uiLocales: nil, acceptLanguage: "it, es;q=0.8, en;q=0.5") == "es")
        #expect(Strings.language(uiLocales: nil, acceptLanguage: "en;q=0.2, es;q=0") == "en")
        #expect(Strings.language(uiLocales: nil, acceptLanguage: nil) == "en")
        // Every page renders in every language, and all its texts are found.
        for language in Strings.languages {
            for page in [Pages.login, Pages.signup, Pages.code, Pages.offer, Pages.account, Pages.device, Pages.signOut, Pages.error] {
                let html = page.render(["stepUp": .bool(true), "newCodes": .bool(true)], strings: Strings.table(language)).html
                let missing = html.range(of: #"\bt\.[a-z_]+"#, options: .regularExpression).map { String(html[$0]) }
                #expect(missing == nil, "\(missing ?? "") has no text in \(language)")
            }
        }
    }

    @Test("passkey-endpoints names the offer and the account's passkeys; the offer, signed out, comes back after the sign-in, and never leads to itself")
    func passkeyEndpoints() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp) { c in TestServer.webClients(&c) }
        let served = try server.get("/.well-known/passkey-endpoints")
        #expect(served.status == 200 && served.headers["content-type"] == "application/json")
        let document = try StrictJSON().parse(served.body)
        #expect(document == .object(["enroll": .string("https://signet.test/account/passkey-offer"), "manage": .string("https://signet.test/account#h-passkeys")]))
        let browser = WebBrowser(server)
        let signedOut = try browser.page("/account/passkey-offer")
        #expect(signedOut.status == 303 && signedOut.response.headers["location"] == "/login?return_to=%2Faccount%2Fpasskey-offer")
        // Signed in by code from there: the offer, whose way on is the account, not the offer again.
        _ = try browser.page("/login?return_to=%2Faccount%2Fpasskey-offer")
        _ = try browser.form("/login/code", [("email", "offer@signet.test"), ("authorization", ""), ("return_to", "/account/passkey-offer")])
        let verified = try browser.form("/login/code/verify", [("email", "offer@signet.test"), ("code", try smtp.code(for: "offer@signet.test")),
                                                               ("return_to", "/account/passkey-offer")])
        let location = try #require(verified.response.headers["location"])
        #expect(verified.status == 303 && location == "/account/passkey-offer?next=%2Faccount%2Fpasskey-offer", "\(location)")
        let offer = try browser.page(location)
        #expect(offer.status == 200 && offer.html.contains("data-testid=\"create-passkey\"") && offer.html.contains("href=\"/account\""))
    }

    @Test("the email-code path works without the script: code page, wrong code, right code, then the passkey offer")
    func emailCodeForms() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp) { c in TestServer.webClients(&c) }
        let browser = WebBrowser(server)
        try browser.page("/login")
        let sent = try browser.form("/login/code", [("email", "Forms@Signet.test"), ("authorization", ""), ("return_to", "")])
        #expect(sent.status == 200 && sent.html.contains("data-testid=\"code\"") && sent.html.contains("forms@signet.test"))
        let code = try smtp.code(for: "forms@signet.test")
        let wrong = try browser.form("/login/code/verify", [("email", "forms@signet.test"), ("code", code == "000000" ? "111111" : "000000")])
        #expect(wrong.status == 403 && wrong.html.contains("data-reason=\"otp_invalid\""))
        let right = try browser.form("/login/code/verify", [("email", "forms@signet.test"), ("code", code)])
        #expect(right.status == 303 && right.response.headers["location"] == "/account/passkey-offer?next=%2Faccount")
        let offer = try browser.page("/account/passkey-offer?next=%2Faccount")
        #expect(offer.html.contains("data-testid=\"create-passkey\"") && offer.html.contains("href=\"/account\""))
        #expect(try browser.page("/account/passkey-offer?next=https%3A%2F%2Fevil.example").html.contains("href=\"/account\""), "next never leaves the site")
        #expect(try browser.page("/account/passkey-offer?next=%2Fauthorize%2Fcontinue%3F%5C%CC%81x").html.contains("href=\"/account\""), "a backslash, even with a mark on it")
        let sealed = String(repeating: "A", count: 1200)
        #expect(try browser.page("/account/passkey-offer?next=%2Fauthorize%2Fcontinue%3Fauthorization%3D" + sealed).html.contains("href=\"/authorize/continue?authorization=\(sealed)\""),
                "a sealed authorization is longer than a page's address")
        // A fresh code session may add its first passkey (no recovery: there was none before).
        let start = try browser.json("/account/passkeys/options")
        #expect(start.status == 200, "\(start.json.serialized)")
        // A bad address shows the sign-in page again, with its reason.
        let stranger = WebBrowser(server)
        try stranger.page("/login")
        let bad = try stranger.form("/login/code", [("email", "not an address")])
        #expect(bad.status == 400 && bad.html.contains("data-reason=\"malformed\"") && bad.html.contains("data-testid=\"send-code\""), "\(bad.status) \(bad.html.prefix(2000))")
    }

    @Test("the SSO session ends: sign-out, idle and absolute lifetimes, a blocked account, the passkey that signed in revoked")
    func sessionEnds() throws {
        let server = try Self.server { c in
            c.webSessionIdle = 600
            c.webSessionLifetime = 3600
        }
        func signedIn(_ browser: WebBrowser) throws -> Bool { try browser.page("/account").status == 200 }
        let a = WebBrowser(server)
        try a.signUp(email: "ends@signet.test")
        #expect(try signedIn(a))
        try a.page("/account")
        let out = try a.form("/logout", [])
        #expect(out.status == 303 && out.response.headers["location"] == "/login")
        #expect(try a.page("/account").response.headers["location"] == "/login?return_to=%2Faccount")
        // return_to: only this site's own pages, and nothing that leaves it or ends the Location line.
        let r = WebBrowser(server)
        try r.signUp(email: "returns@signet.test")
        for bad in ["//evil.test/account", "/\\evil.test", "https://evil.test/account", "/accountx", "/account?\r\nSet-Cookie: a=b",
                    "/account?\u{0}", "/account?\\\u{301}evil", "/device?code=\u{212A}"] {
            let location = try r.page("/login?return_to=\(Ceremonies.formEncoded(bad))").response.headers["location"]
            #expect(location == "/account", "\(bad.debugDescription): \(location ?? "no Location")")
        }
        #expect(try r.page("/login?return_to=%2Faccount%3Ftab%3Dkeys").response.headers["location"] == "/account?tab=keys")
        // Idle: 10 minutes without a request.
        let b = WebBrowser(server, authenticator: a.authenticator)
        #expect(try b.signIn().status == 200)
        server.clock.advance(500)
        #expect(try signedIn(b))
        server.clock.advance(500)
        #expect(try signedIn(b), "each request moves the idle clock")
        server.clock.advance(601)
        #expect(try !signedIn(b))
        // Absolute: an hour however busy.
        let c = WebBrowser(server, authenticator: a.authenticator)
        _ = try c.signIn()
        for _ in 0..<8 {
            server.clock.advance(500)
            _ = try c.page("/account")
        }
        #expect(try !signedIn(c))
        // Blocked, and the passkey revoked.
        let d = WebBrowser(server, authenticator: a.authenticator)
        _ = try d.signIn()
        let user = try #require(try server.store.user(email: "ends@signet.test"))
        _ = try server.store.updateUser(id: user.id, UserChange(blocked: true), at: Int64(server.clock.now.timeIntervalSince1970 * 1000), writes: [])
        #expect(try !signedIn(d))
        _ = try server.store.updateUser(id: user.id, UserChange(blocked: false), at: Int64(server.clock.now.timeIntervalSince1970 * 1000), writes: [])
        server.clock.advance(1)
        let e = WebBrowser(server, authenticator: a.authenticator)
        #expect(try e.signIn().status == 200 && signedIn(e))
        let credential = try server.store.credentials(userID: user.id)[0]
        _ = try server.store.adminRevokeCredential(id: credential.id, userID: user.id, at: Int64(server.clock.now.timeIntervalSince1970 * 1000), writes: [])
        #expect(try !signedIn(e))
    }

    @Test("the account page: a stale session sees the step-up prompt and the change waits for it; another account's passkey cannot step up")
    func accountStepUp() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "stepup@signet.test")
        let user = try #require(try server.store.user(email: "stepup@signet.test"))
        let id = Base64URL.encode(try server.store.credentials(userID: user.id)[0].id)
        try browser.page("/account")
        #expect(try browser.form("/account/passkeys/\(id)/rename", [("name", "Fresh")]).response.headers["location"] == "/account?notice=renamed")
        server.clock.advance(Double(server.app.configuration.stepUpMaxAge + 1))
        try browser.page("/account")
        let stale = try browser.form("/account/passkeys/\(id)/rename", [("name", "Stale")])
        #expect(stale.status == 200 && stale.html.contains("data-testid=\"step-up-prompt\""))
        #expect(stale.html.contains("action=\"/account/passkeys/\(id)/rename\"") && stale.html.contains("name=\"name\" value=\"Stale\""), "the change is kept")
        #expect(try server.store.credentials(userID: user.id)[0].name == "Fresh")
        #expect(try browser.json("/account/passkeys/options").json["reason"] == .string("step_up_required"))
        // Another account's passkey is refused.
        let mallory = WebBrowser(server)
        try mallory.signUp(email: "mallory@signet.test")
        let start = try browser.json("/account/step-up/options")
        let options = try #require(start.json["authn_params_public_key"])
        let assertion = try mallory.authenticator.authenticate(rpID: TestServer.rpID, origin: TestServer.origin, challenge: Base64URL.decode(options["challenge"]!.string!)!)
        let refused = try browser.json("/account/step-up", .object(["auth_session": start.json["auth_session"]!, "authn_response": assertion.json]))
        #expect(refused.status == 400 && refused.json["reason"] == .string("user_mismatch"))
        // Refused for the signed-in account, and audited under it (its owner sees the try).
        let refusal = try server.store.auditEvents(limit: 100).first { $0.kind == "step_up" && $0.outcome == "failure" }
        #expect(refusal?.reason == "user_mismatch" && refusal?.userID == user.id, "\(String(describing: refusal))")
        try browser.stepUp()
        try browser.page("/account")
        #expect(try browser.form("/account/passkeys/\(id)/rename", [("name", "Stale")]).response.headers["location"] == "/account?notice=renamed")
        #expect(try server.store.credentials(userID: user.id)[0].name == "Stale")
        // The account page lists this browser's session, marked, and ending it signs out.
        let page = try browser.page("/account")
        #expect(page.html.contains("data-current=\"true\"") && page.html.contains("Chrome · Linux"))
        #expect(page.html.range(of: #"created <span class="when">\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC</span>"#, options: .regularExpression) != nil, "times as 2026-12-01 16:09 UTC, each kept on one line")
        let session = try #require(try server.store.webSessions(userID: user.id, now: Int64(server.clock.now.timeIntervalSince1970 * 1000), SessionQuery(limit: 1)).first)
        let ended = try browser.form("/account/sessions/\(session.id)/revoke", [])
        #expect(ended.response.headers["location"] == "/login?notice=session_revoked")
        #expect(try browser.page("/account").status == 303)
        // Recovery codes are shown once, after a fresh check.
        let again = WebBrowser(server, authenticator: browser.authenticator)
        _ = try again.signIn()
        try again.page("/account")
        let codes = try again.form("/account/recovery-codes", [])
        #expect(codes.html.contains("data-testid=\"recovery-codes\"") && codes.html.components(separatedBy: "<li><code>").count == 11)
        #expect(!(try again.page("/account").html.contains("data-testid=\"recovery-codes\"")))
    }

    @Test("RP-initiated logout: a registered post_logout_redirect_uri with state; anything else is refused, never followed; only the user's own hint ends a session unasked")
    func logout() throws {
        let server = try Self.server()
        let pkce = PKCE()
        let (code, browser) = try AuthorizeTests.code(server, pkce: pkce)
        let idToken = try #require(try server.exchange(code: code, verifier: pkce.verifier).json["id_token"]?.string)
        let evil = try browser.send("GET", "/logout?id_token_hint=\(idToken)&post_logout_redirect_uri=https%3A%2F%2Fevil.example%2F&state=z", headers: [("Accept", "text/html")])
        #expect(evil.headers["location"] == nil && String(decoding: evil.body, as: UTF8.self).contains("redirect_uri_invalid"))
        #expect(try browser.page("/account").status == 200, "a refused logout ends nothing")
        let forged = try browser.send("GET", "/logout?id_token_hint=\(idToken.dropLast(4))AAAA&post_logout_redirect_uri=https%3A%2F%2Fapp.signet.test%2Fbye")
        #expect(forged.headers["location"] == nil)
        // A hint is checked with or without a redirect URI, and only one issued to the signed-in
        // user ends the session unasked: any page could otherwise sign a visitor out with an
        // image whose source is /logout?id_token_hint=x, or with its own user's id token.
        for hint in ["x", String(idToken.dropLast(4)) + "AAAA"] {
            let answer = try browser.send("GET", "/logout?id_token_hint=\(hint)", headers: [("Accept", "text/html")])
            #expect(answer.headers["location"] == nil && String(decoding: answer.body, as: UTF8.self).contains("data-reason=\"token_invalid\""), "\(hint.prefix(8))")
        }
        let stranger = PKCE()
        let (strangerCode, _) = try AuthorizeTests.code(server, pkce: stranger)
        let strangerToken = try #require(try server.exchange(code: strangerCode, verifier: stranger.verifier).json["id_token"]?.string)
        let asked = try browser.page("/logout?id_token_hint=\(strangerToken)&post_logout_redirect_uri=https%3A%2F%2Fapp.signet.test%2Fbye&state=s")
        #expect(asked.status == 200 && asked.html.contains("data-testid=\"signout\"") && asked.html.contains("value=\"spa\""), "the client comes from the hint")
        #expect(try browser.page("/account").status == 200, "another user's hint ended nothing")
        server.clock.advance(7200)  // an expired id token is still a good hint
        let ok = try browser.send("GET", "/logout?id_token_hint=\(idToken)&post_logout_redirect_uri=https%3A%2F%2Fapp.signet.test%2Fbye&state=z")
        #expect(ok.status == 303 && ok.headers["location"] == "https://app.signet.test/bye?state=z")
        #expect(try browser.page("/account").status == 303, "the session ended")
        // The user's own hint without a redirect URI: signed out, to the sign-in page.
        #expect(try browser.signIn().status == 200)
        let plain = try browser.send("GET", "/logout?id_token_hint=\(idToken)")
        #expect(plain.status == 303 && plain.headers["location"] == "/login")
        #expect(try browser.page("/account").status == 303, "the session ended")
        // A client may POST the same parameters (RP-Initiated Logout §2): no CSRF token, the
        // same rules; a form value that reads as a number keeps its text.
        func post(_ fields: [(String, String)]) throws -> HTTPClient.Response {
            let body = fields.map { "\($0.0)=\(Ceremonies.formEncoded($0.1))" }.joined(separator: "&")
            return try browser.send("POST", "/logout", headers: [("Accept", "text/html")], body: Array(body.utf8), contentType: "application/x-www-form-urlencoded")
        }
        #expect(try browser.signIn().status == 200)
        #expect(try post([("id_token_hint", "x")]).status == 401)
        let postedStranger = try post([("id_token_hint", strangerToken)])
        #expect(postedStranger.status == 200 && String(decoding: postedStranger.body, as: UTF8.self).contains("data-testid=\"signout\""))
        #expect(try browser.page("/account").status == 200, "asking ended nothing")
        let posted = try post([("id_token_hint", idToken), ("post_logout_redirect_uri", "https://app.signet.test/bye"), ("state", "42")])
        #expect(posted.status == 303 && posted.headers["location"] == "https://app.signet.test/bye?state=42")
        #expect(try browser.page("/account").status == 303, "the session ended")
        #expect(try WebBrowser(server).send("GET", "/logout").headers["location"] == "/login")
        // Without an id_token_hint the user is asked first: a link elsewhere ends nothing.
        let other = WebBrowser(server, authenticator: browser.authenticator)
        #expect(try other.signIn().status == 200)
        let ask = try other.page("/logout?client_id=spa&post_logout_redirect_uri=https%3A%2F%2Fapp.signet.test%2Fbye&state=q")
        #expect(ask.status == 200 && ask.html.contains("data-testid=\"signout\"") && ask.html.contains("value=\"https://app.signet.test/bye\""))
        #expect(try other.page("/account").status == 200, "asking ended nothing")
        let confirmed = try other.form("/logout", [("client_id", "spa"), ("post_logout_redirect_uri", "https://app.signet.test/bye"), ("state", "q")])
        #expect(confirmed.response.headers["location"] == "https://app.signet.test/bye?state=q")
        #expect(try other.page("/account").status == 303)
        #expect(try other.form("/logout", [], csrf: "forged").status == 403)
    }

    @Test("related origins: /.well-known/webauthn lists them, their ceremonies are accepted; more than 5 labels refuse to start")
    func relatedOrigins() throws {
        let server = try Self.server { c in c.relatedOrigins = ["https://signet-shop.example", "https://signet.co.uk"] }
        let document = try StrictJSON().parse(try server.get("/.well-known/webauthn").body)
        #expect(document == .object(["origins": .array([.string("https://signet-shop.example"), .string("https://signet.co.uk")])]))
        let browser = WebBrowser(server)
        try browser.signUp(email: "related@signet.test")
        #expect(try browser.signIn(origin: "https://signet-shop.example").status == 200)
        #expect(try browser.signIn(origin: "https://unrelated.example").json["reason"] == .string("origin_not_allowed"))
        #expect(RelatedOrigins.label(host: "shop.example.co.uk") == "example" && RelatedOrigins.label(host: "a.b.example.com") == "example")
        // A dot after a mark that joins the next character (U+0600) still separates labels.
        #expect(RelatedOrigins.label(host: "shop\u{0600}.example.com") == "example")
        let six = ["https://a.example", "https://b.example", "https://c.example", "https://d.example", "https://e.example", "https://f.example", "https://www.a.example"]
        #expect(RelatedOrigins.problem(Array(six.prefix(5)) + ["https://www.a.example"]) == nil)
        #expect(RelatedOrigins.problem(six)?.contains("6 registrable labels") == true)
        #expect(RelatedOrigins.problem(["http://example.com"]) != nil && RelatedOrigins.problem(["https://example.com/path"]) != nil)
    }

    @Test("CORS: a client's allowed_origins may call the JSON API; other origins and the pages get no CORS headers")
    func cors() throws {
        let server = try Self.server()
        let preflight = try server.send("OPTIONS", "/oauth/token", headers: [("Origin", "https://app.signet.test"), ("Access-Control-Request-Method", "POST")])
        #expect(preflight.status == 204 && preflight.headers["access-control-allow-origin"] == "https://app.signet.test")
        #expect(preflight.headers["access-control-allow-headers"]?.contains("DPoP") == true)
        let call = try server.send("GET", "/.well-known/jwks.json", headers: [("Origin", "https://app.signet.test")])
        #expect(call.headers["access-control-allow-origin"] == "https://app.signet.test" && call.headers["vary"] == "Origin")
        let stranger = try server.send("OPTIONS", "/oauth/token", headers: [("Origin", "https://evil.example")])
        #expect(stranger.headers["access-control-allow-origin"] == nil)
        #expect(try server.send("GET", "/.well-known/jwks.json", headers: [("Origin", "https://evil.example")]).headers["access-control-allow-origin"] == nil)
        #expect(try server.send("GET", "/login", headers: [("Origin", "https://app.signet.test")]).headers["access-control-allow-origin"] == nil)
        let none = try TestServer()
        #expect(try none.send("GET", "/.well-known/jwks.json", headers: [("Origin", "https://signet.test")]).headers["access-control-allow-origin"] == nil, "none by default")
    }

    @Test("conditional creation after a code sign-in: its UP=0 registration is accepted; a modal one with UP=0 is refused")
    func conditionalCreate() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp) { c in TestServer.webClients(&c) }
        let browser = WebBrowser(server)
        try browser.page("/login")
        try browser.form("/login/code", [("email", "cond@signet.test")])
        try browser.form("/login/code/verify", [("email", "cond@signet.test"), ("code", try smtp.code(for: "cond@signet.test"))])
        try browser.page("/account/passkey-offer")
        var noGesture = Tamper()
        noGesture.authenticatorData = { $0.flags.remove(.userPresent) }
        func add(conditional: Bool) throws -> (status: Int, json: JSONValue) {
            let start = try browser.json("/account/passkeys/options", .object(["conditional": .bool(conditional)]))
            let options = try #require(start.json["authn_params_public_key"])
            let registration = try browser.authenticator.register(
                rpID: TestServer.rpID, origin: TestServer.origin, challenge: Base64URL.decode(options["challenge"]!.string!)!,
                userHandle: Base64URL.decode(options["user"]!["id"]!.string!)!, userName: "cond@signet.test", tamper: noGesture)
            let done = try browser.json("/account/passkeys", .object(["auth_session": start.json["auth_session"]!, "authn_response": registration.json]))
            return (done.status, done.json)
        }
        #expect(try add(conditional: false).json["reason"] == .string("user_not_present"))
        let conditional = try add(conditional: true)
        #expect(conditional.status == 201, "\(conditional.json.serialized)")
    }

    @Test("/device: a signed-in browser approves another device's sign-in after a passkey check; the poll gets tokens")
    func devicePage() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "device@signet.test")
        let start = try server.post("/oauth/device/code", .object(["client_id": .string("app"), "scope": .string("openid offline_access")]))
        let userCode = try #require(start.json["user_code"]?.string)
        #expect(try WebBrowser(server).page("/device?user_code=\(userCode)").response.headers["location"]?.hasPrefix("/login?return_to=%2Fdevice") == true)
        // The link with the code shows who asks (RFC 8628 §5.4) before any button decides.
        let page = try browser.page("/device?user_code=\(userCode)")
        #expect(page.html.contains("data-testid=\"device-request\"") && page.html.contains("value=\"\(userCode)\""))
        #expect(page.html.contains("data-testid=\"device-request-address\">127.0.0.1<") && page.html.contains("data-testid=\"device-request-device\">Not given<"))
        #expect(page.html.contains("data-testid=\"device-request-app\">") && page.html.contains("data-testid=\"device-approve\""))
        // Without a code: the code field and Continue, no decision yet; Continue is the same review.
        let blank = try browser.page("/device")
        #expect(blank.html.contains("data-testid=\"device-continue\"") && !blank.html.contains("data-testid=\"device-approve\""))
        let reviewed = try browser.form("/device", [("user_code", userCode.lowercased().replacingOccurrences(of: "-", with: " ")), ("decision", "review")])
        #expect(reviewed.status == 200 && reviewed.html.contains("data-testid=\"device-request-code\">\(userCode)<"))
        let unknown = try browser.form("/device", [("user_code", "BBBB-BBBB"), ("decision", "review")])
        #expect(unknown.status == 400 && unknown.html.contains("data-reason=\"user_code_unknown\"") && !unknown.html.contains("data-testid=\"device-approve\""))
        #expect(try browser.form("/device", [("user_code", "BBBB-BBBB"), ("decision", "approve")]).html.contains("data-reason=\"user_code_unknown\""))
        server.clock.advance(Double(server.app.configuration.stepUpMaxAge + 1))
        let stale = try browser.form("/device", [("user_code", userCode), ("decision", "approve")])
        #expect(stale.html.contains("data-testid=\"step-up-prompt\""))
        try browser.stepUp()
        try browser.page("/device")
        let done = try browser.form("/device", [("user_code", userCode), ("decision", "approve")])
        #expect(done.status == 200 && done.html.contains("data-testid=\"notice\""), "\(done.html.prefix(600))")
        #expect(done.html.contains("data-testid=\"device-account\"") && !done.html.contains("data-testid=\"device-code\""), "the outcome, not another form")
        server.clock.advance(6)
        let poll = try server.post("/oauth/token", .object([
            "grant_type": .string(GrantNames.deviceCode), "client_id": .string("app"), "device_code": start.json["device_code"]!,
        ]))
        #expect(poll.status == 200 && poll.json["access_token"]?.string != nil, "\(poll.json.serialized)")
        #expect(jwtClaims(poll.json["access_token"]?.string)["amr"] == .array([.string("pop"), .string("mca")]), "approved by a passkey")
        // Revoking the passkey that approved it ends the new device's session.
        let user = try #require(try server.store.user(email: "device@signet.test"))
        _ = try server.store.adminRevokeCredential(id: try server.store.credentials(userID: user.id)[0].id, userID: user.id,
                                                   at: Int64(server.clock.now.timeIntervalSince1970 * 1000), writes: [])
        let refresh = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": poll.json["refresh_token"]!]))
        #expect(refresh.json["reason"] == .string("refresh_token_revoked"))
    }
}
