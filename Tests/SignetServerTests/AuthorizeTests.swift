import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWeb
import SignetWebAuthn
import SignetTestSupport
import Testing

/// The authorization code flow (RFC 6749 §4.1, RFC 7636, OIDC Core §3.1): `/authorize`, the
/// code grant, and every refusal, through the service's router.
@Suite struct AuthorizeTests {
    static func server(_ edit: (inout ServerConfiguration) -> Void = { _ in }) throws -> TestServer {
        try TestServer { c in
            TestServer.webClients(&c)
            edit(&c)
        }
    }

    /// A browser signed up through the pages, and a code for `spa` from its SSO session.
    static func code(_ server: TestServer, browser: WebBrowser? = nil, pkce: PKCE = PKCE(), scope: String = "openid email offline_access",
                     extra: [(String, String)] = []) throws -> (code: String, browser: WebBrowser) {
        let browser = try browser ?? {
            let b = WebBrowser(server)
            try b.signUp(email: "code-\(UUID().uuidString.prefix(8))@signet.test")
            return b
        }()
        let answer = try server.authorize(browser, pkce: pkce, scope: scope, extra: extra)
        try #require(answer.status == 303, "authorize: \(answer.status) \(String(decoding: answer.body, as: UTF8.self).prefix(300))")
        let query = WebBrowser.query(answer.headers["location"])
        return (try #require(query["code"], "no code in \(answer.headers["location"] ?? "")"), browser)
    }

    @Test("resource (RFC 8707) names the API at the token endpoint as audience does: the code's own, a refresh's or a machine client's; another, two different, or a repeated one refused with invalid_target")
    func resourceIndicators() throws {
        let api = "https://api.signet.test"
        let server = try TestServer.withOperators { c in
            TestServer.webClients(&c)
            c.audiences = [api, "https://other.signet.test"]
        }
        func form(_ fields: [(String, String)]) throws -> (status: Int, json: JSONValue) {
            let body = fields.map { "\($0.0)=\(Ceremonies.formEncoded($0.1))" }.joined(separator: "&")
            let response = try server.send("POST", "/oauth/token", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(body.utf8))
            return (response.status, (try? StrictJSON().parse(response.body)) ?? .null)
        }
        func refused(_ answer: (status: Int, json: JSONValue), _ reason: String, _ error: String) -> Bool {
            answer.status == 400 && answer.json["reason"] == .string(reason) && answer.json["error"] == .string(error)
        }
        // The code's own API named again: its token.
        let pkce = PKCE()
        let (code, browser) = try Self.code(server, pkce: pkce, extra: [("resource", api)])
        let exchanged = try server.exchange(code: code, verifier: pkce.verifier, extra: [("resource", api)])
        #expect(exchanged.status == 200 && jwtClaims(exchanged.json["access_token"]?.string)["aud"] == .string(api), "\(exchanged.json.serialized)")
        // Another API than the code's: refused, the code kept for the right one.
        let second = try Self.code(server, browser: browser, pkce: pkce, extra: [("resource", api)])
        #expect(refused(try server.exchange(code: second.code, verifier: pkce.verifier, extra: [("resource", "https://other.signet.test")]), "audience_not_allowed", "invalid_target"))
        #expect(try server.exchange(code: second.code, verifier: pkce.verifier, extra: [("resource", api)]).status == 200)
        // A code for Signet's own API is not one for the API.
        let third = try Self.code(server, browser: browser, pkce: pkce)
        #expect(refused(try server.exchange(code: third.code, verifier: pkce.verifier, extra: [("resource", api)]), "audience_not_allowed", "invalid_target"))
        #expect(try server.exchange(code: third.code, verifier: pkce.verifier, extra: [("resource", server.app.configuration.accountAudience)]).status == 200)

        // A refresh names its API by resource.
        let refresh = try #require(exchanged.json["refresh_token"]?.string)
        let other = try form([("grant_type", "refresh_token"), ("client_id", "spa"), ("refresh_token", refresh), ("resource", "https://other.signet.test")])
        #expect(other.status == 200 && jwtClaims(other.json["access_token"]?.string)["aud"] == .string("https://other.signet.test"), "\(other.json.serialized)")
        let next = try #require(other.json["refresh_token"]?.string)
        // Refused before the token is used: two different APIs, one repeated, one not the client's.
        #expect(refused(try form([("grant_type", "refresh_token"), ("client_id", "spa"), ("refresh_token", next), ("resource", api), ("audience", "https://other.signet.test")]),
                        "audience_not_allowed", "invalid_target"))
        #expect(refused(try form([("grant_type", "refresh_token"), ("client_id", "spa"), ("refresh_token", next), ("resource", api), ("resource", api)]), "malformed", "invalid_request"))
        #expect(refused(try form([("grant_type", "refresh_token"), ("client_id", "spa"), ("refresh_token", next), ("resource", "https://elsewhere.example")]),
                        "audience_not_allowed", "invalid_target"))
        #expect(try form([("grant_type", "refresh_token"), ("client_id", "spa"), ("refresh_token", next), ("resource", api), ("audience", api)]).status == 200,
                "the same API both ways is one API")

        // A machine client's token for the Management API, named by resource.
        let basic = "Basic " + Data("ops:\(TestServer.opsSecret)".utf8).base64EncodedString()
        let machine = try server.send("POST", "/oauth/token", headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Authorization", basic)],
                                      body: Array("grant_type=client_credentials&resource=\(Ceremonies.formEncoded(server.app.configuration.managementAudience))".utf8))
        #expect(machine.status == 200 && jwtClaims((try? StrictJSON().parse(machine.body))?["access_token"]?.string)["aud"] == .string(server.app.configuration.managementAudience))
    }

    @Test("a bad or repeated client_id or redirect_uri gets an error page and never a redirect")
    func untrustedNeverRedirects() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        for (client, redirect, reason) in [("nobody", "https://app.signet.test/callback", "client_unknown"),
                                           ("spa", "https://evil.example/callback", "redirect_uri_invalid"),
                                           ("spa", "https://app.signet.test/callback/extra", "redirect_uri_invalid"),
                                           ("spa", "https://app.signet.test/callback#frag", "redirect_uri_invalid"),
                                           ("spa", "http://127.0.0.1:8080/other", "redirect_uri_invalid"),
                                           ("backend", "https://app.signet.test/callback", "redirect_uri_invalid")] {
            let answer = try server.authorize(browser, client: client, redirect: redirect)
            #expect(answer.headers["location"] == nil, "\(client) \(redirect) redirected")
            #expect(answer.headers["content-type"]?.hasPrefix("text/html") == true)
            let page = String(decoding: answer.body, as: UTF8.self)
            #expect(page.contains("data-reason=\"\(reason)\""), "\(client) \(redirect)")
            // In a person's words ("app", "address"), not the API's ("client", "redirect URI").
            let refusal = try #require(Reason(rawValue: reason))
            #expect(page.contains(try #require(Strings.refusal(refusal, language: "en"))) && !page.contains(refusal.text), "\(client) \(redirect)")
        }
        let missing = try browser.send("GET", "/authorize?response_type=code&client_id=spa", headers: [("Accept", "text/html")])
        #expect(missing.headers["location"] == nil && missing.status == 400)
        // A client_id or redirect_uri given twice (RFC 6749 §3.1) is not one to trust, even
        // when the first is right and the second the same.
        for extra in [("redirect_uri", "https://evil.example/callback"), ("redirect_uri", "https://app.signet.test/callback"), ("client_id", "spa")] {
            let answer = try server.authorize(browser, extra: [extra])
            #expect(answer.headers["location"] == nil && answer.status == 400, "\(extra)")
            #expect(String(decoding: answer.body, as: UTF8.self).contains("data-reason=\"malformed\""), "\(extra)")
        }
    }

    @Test("redirect URIs: exact, loopback on any port (RFC 8252 §7.3), private-use schemes; parameters join a query by its bytes")
    func redirectMatching() throws {
        // Parameters join a redirect URI by its bytes, even where a prepended mark (U+0600) makes
        // one character of itself and the `?` after it.
        #expect(Ceremonies.appending(to: "http://127.0.0.1/cb\u{0600}?a=1", [("code", "x"), ("state", nil)]) == "http://127.0.0.1/cb\u{0600}?a=1&code=x")
        #expect(Ceremonies.appending(to: "http://127.0.0.1/cb\u{0600}", [("code", "x")]).utf8.elementsEqual("http://127.0.0.1/cb\u{0600}?code=x".utf8))
        // A `?` that a combining mark follows is still the query's start: one query, joined with `&`.
        #expect(Ceremonies.appending(to: "http://127.0.0.1/cb?\u{05A0}", [("code", "x")]).utf8.elementsEqual("http://127.0.0.1/cb?\u{05A0}&code=x".utf8))
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "redirects@signet.test")
        for redirect in ["https://app.signet.test/callback", "http://127.0.0.1:53211/cb", "http://127.0.0.1/cb", "com.example.app:/oauth"] {
            let answer = try server.authorize(browser, redirect: redirect)
            #expect(answer.status == 303 && answer.headers["location"]?.hasPrefix(redirect + "?code=") == true, "\(redirect): \(answer.headers["location"] ?? "")")
        }
        var client = ClientConfiguration(id: "x", grants: [])
        client.redirectURIs = ["http://127.0.0.1:9000/cb", "http://localhost/cb"]
        #expect(Ceremonies.redirectAllowed("http://127.0.0.1:9000/cb", for: client))
        #expect(!Ceremonies.redirectAllowed("http://127.0.0.1:9001/cb", for: client), "a URI registered with a port matches only it")
        #expect(Ceremonies.redirectAllowed("http://localhost:1234/cb", for: client))
        #expect(!Ceremonies.redirectAllowed("https://localhost:1234/cb", for: client), "only http loopback")
        #expect(!Ceremonies.redirectAllowed("http://localhost:1234/cb?x=1", for: client))
        client.anyLoopbackRedirect = true
        #expect(Ceremonies.redirectAllowed("http://127.0.0.1:4444/anything", for: client) && !Ceremonies.redirectAllowed("http://example.com/cb", for: client))
        // A fragment is refused also when a combining mark makes `#` part of another character.
        #expect(!Ceremonies.isRedirectURI("http://127.0.0.1:4444/cb#\u{0301}x") && !Ceremonies.redirectAllowed("http://127.0.0.1:4444/cb#\u{0301}", for: client))
    }

    @Test("other /authorize errors go back to the client with error, reason and state: repeats, request objects, response modes")
    func redirectedErrors() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        let cases: [(PKCE?, [(String, String)], String, String)] = [
            (nil, [], "invalid_request", "pkce_invalid"),
            (nil, [("code_challenge", PKCE().challenge), ("code_challenge_method", "plain")], "invalid_request", "pkce_invalid"),
            (nil, [("code_challenge", "tooshort"), ("code_challenge_method", "S256")], "invalid_request", "pkce_invalid"),
            (PKCE(), [("prompt", "sometimes")], "invalid_request", "malformed"),
            (PKCE(), [("prompt", "none login")], "invalid_request", "malformed"),
            (PKCE(), [("prompt", "consent none")], "invalid_request", "malformed"),
            (PKCE(), [("prompt", "login Login")], "invalid_request", "malformed"),
            (PKCE(), [("prompt", " ")], "invalid_request", "malformed"),
            (PKCE(), [("max_age", "soon")], "invalid_request", "malformed"),
            (PKCE(), [("prompt", "none")], "login_required", "login_required"),
            (PKCE(), [("audience", "https://elsewhere.example")], "invalid_target", "audience_not_allowed"),
            // RFC 6749 §3.1: no parameter twice (the state sent back is the first).
            (PKCE(), [("state", "st-2")], "invalid_request", "malformed"),
            (PKCE(), [("nonce", "n-2")], "invalid_request", "malformed"),
            (PKCE(), [("scope", "openid")], "invalid_request", "malformed"),
            // OIDC Core §6: without request objects, say so rather than drop what they carry.
            (PKCE(), [("request", "eyJhbGciOiJub25lIn0.eyJub25jZSI6Im4tMiJ9.")], "request_not_supported", "request_not_supported"),
            (PKCE(), [("response_mode", "fragment")], "invalid_request", "malformed"),
            (PKCE(), [("response_mode", "form_post")], "invalid_request", "malformed"),
        ]
        for (pkce, extra, error, reason) in cases {
            let answer = try server.authorize(browser, pkce: pkce, extra: extra)
            let query = WebBrowser.query(answer.headers["location"])
            #expect(answer.status == 303 && answer.headers["location"]?.hasPrefix("https://app.signet.test/callback?") == true, "\(extra): \(answer.headers["location"] ?? "")")
            #expect(query["error"] == error && query["reason"] == reason && query["state"] == "st-1", "\(extra): \(query)")
            // RFC 9207 §2: an error response names the issuer as a code does.
            #expect(query["iss"] == "https://signet.test", "\(extra): \(query)")
        }
        let token = try browser.send("GET", "/authorize?response_type=token&client_id=spa&redirect_uri=https%3A%2F%2Fapp.signet.test%2Fcallback&scope=openid&state=s")
        #expect(WebBrowser.query(token.headers["location"])["error"] == "unsupported_response_type")
        let noOpenID = try browser.send("GET", "/authorize?response_type=code&client_id=spa&redirect_uri=https%3A%2F%2Fapp.signet.test%2Fcallback&scope=email&state=s")
        #expect(WebBrowser.query(noOpenID.headers["location"])["error"] == "invalid_request")
    }

    @Test("without a session /authorize goes to the sign-in page with the request sealed; prompt=create to sign-up; after sign-in the code")
    func throughTheSignInPage() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        let pkce = PKCE()
        let first = try server.authorize(browser, pkce: pkce, extra: [("login_hint", "hint@signet.test"), ("ui_locales", "es")])
        let location = try #require(first.headers["location"])
        #expect(location.hasPrefix("/login?authorization="))
        let sealed = try #require(WebBrowser.query(location)["authorization"])
        let page = try browser.page(location)
        #expect(page.html.contains("value=\"hint@signet.test\"") && page.html.contains("lang=\"es\""), "login_hint and ui_locales reach the page")
        let created = try server.authorize(browser, extra: [("prompt", "create")])
        #expect(created.headers["location"]?.hasPrefix("/signup?authorization=") == true)
        // A tampered sealed request is refused on the page.
        var bytes = Array(sealed.utf8)
        bytes[10] = bytes[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(try browser.page("/login?authorization=" + String(decoding: bytes, as: UTF8.self)).html.contains("data-reason=\"auth_session_expired\""))
        // Sign-up carrying it goes to /authorize/continue, which answers with the code.
        let next = try browser.signUp(email: "through@signet.test", authorization: sealed)
        #expect(next == "/authorize/continue?authorization=" + sealed)
        let answer = try browser.send("GET", next)
        let query = WebBrowser.query(answer.headers["location"])
        #expect(answer.status == 303 && query["state"] == "st-1" && query["iss"] == "https://signet.test")
        let tokens = try server.exchange(code: try #require(query["code"]), verifier: pkce.verifier)
        #expect(tokens.status == 200, "\(tokens.json.serialized)")
        let claims = jwtClaims(tokens.json["id_token"]?.string)
        #expect(claims["nonce"] == .string("n-1") && claims["aud"] == .string("spa") && claims["email"] == .string("through@signet.test"))
        #expect(tokens.json["refresh_token"]?.string != nil && tokens.json["token_type"] == .string("Bearer"))
        // Without a session, the continuation is the sign-in page again.
        let stranger = WebBrowser(server)
        #expect(try stranger.send("GET", next).headers["location"] == "/login?authorization=" + sealed)
    }

    @Test("the code grant: single use (a replay revokes what it issued), 60 s, bound to client, redirect URI and verifier")
    func codeGrant() throws {
        let server = try Self.server()
        let pkce = PKCE()
        var (code, browser) = try Self.code(server, pkce: pkce)
        let tokens = try server.exchange(code: code, verifier: pkce.verifier)
        try #require(tokens.status == 200, "\(tokens.json.serialized)")
        let replay = try server.exchange(code: code, verifier: pkce.verifier)
        #expect(replay.status == 400 && replay.json["reason"] == .string("code_invalid") && replay.json["error"] == .string("invalid_grant"))
        let refresh = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("spa"), "refresh_token": tokens.json["refresh_token"]!]))
        #expect(refresh.json["reason"] == .string("refresh_token_revoked"), "a replayed code revokes the tokens it gave")
        // Each refusal below uses its code up: the right request afterwards fails too.
        let refusals: [(String?, String, String?, [(String, String)], [(String, String)], String)] = [
            ("spa", "https://app.signet.test/callback", PKCE().verifier, [], [], "pkce_invalid"),
            ("spa", "https://app.signet.test/callback", nil, [], [], "pkce_invalid"),
            ("spa", "https://app.signet.test/callback", "short", [], [], "pkce_invalid"),
            ("spa", "http://127.0.0.1/cb", pkce.verifier, [], [], "redirect_uri_invalid"),
            ("other", "https://app.signet.test/callback", pkce.verifier, [], [], "code_invalid"),
            ("spa", "https://app.signet.test/callback", pkce.verifier, [("Authorization", "Basic " + Data("spa:guess".utf8).base64EncodedString())], [], "client_secret_invalid"),
        ]
        for (client, redirect, verifier, headers, extra, reason) in refusals {
            (code, browser) = try Self.code(server, browser: browser, pkce: pkce)
            let refused = try server.exchange(code: code, client: client, redirect: redirect, verifier: verifier, headers: headers, extra: extra)
            #expect(refused.json["reason"] == .string(reason), "\(reason): \(refused.json.serialized)")
            if reason != "client_secret_invalid" {
                #expect(try server.exchange(code: code, verifier: pkce.verifier).json["reason"] == .string("code_invalid"), "\(reason) left the code usable")
            }
        }
        // Expiry: a code lives 60 s.
        (code, browser) = try Self.code(server, browser: browser, pkce: pkce)
        server.clock.advance(61)
        #expect(try server.exchange(code: code, verifier: pkce.verifier).json["reason"] == .string("code_invalid"))
        // Garbage.
        #expect(try server.exchange(code: "not-a-code", verifier: pkce.verifier).json["reason"] == .string("code_invalid"))
        // JSON bodies work as forms do.
        (code, browser) = try Self.code(server, browser: browser, pkce: pkce)
        let json = try server.post("/oauth/token", .object([
            "grant_type": .string("authorization_code"), "code": .string(code), "redirect_uri": .string("https://app.signet.test/callback"),
            "client_id": .string("spa"), "code_verifier": .string(pkce.verifier),
        ]))
        #expect(json.status == 200, "\(json.json.serialized)")
    }

    @Test("a replayed code ends the session it gave even without a refresh token: its access token stops working at once")
    func replayWithoutRefreshToken() throws {
        let server = try Self.server()
        let pkce = PKCE()
        let (code, _) = try Self.code(server, pkce: pkce, scope: "openid email")
        let tokens = try server.exchange(code: code, verifier: pkce.verifier)
        try #require(tokens.status == 200, "\(tokens.json.serialized)")
        #expect(tokens.json["refresh_token"] == nil)
        let access = try #require(tokens.json["access_token"]?.string)
        let bearer = [("Authorization", "Bearer " + access)]
        #expect(try server.get("/userinfo", headers: bearer).status == 200)
        #expect(try server.exchange(code: code, verifier: pkce.verifier).json["reason"] == .string("code_invalid"))
        let after = try server.get("/userinfo", headers: bearer)
        let reason = try StrictJSON().parse(after.body)["reason"]
        #expect(after.status == 401 && reason == .string("token_invalid"), "\(after.status)")
    }

    @Test("a replayed code racing its first use: exactly one wins, and the winner's tokens are revoked")
    func concurrentReplay() throws {
        let server = try Self.server()
        let pkce = PKCE()
        let (code, _) = try Self.code(server, pkce: pkce)
        let all = simultaneously(8) { _ in try server.exchange(code: code, verifier: pkce.verifier) }.compactMap { try? $0.get() }.map { ($0.status, $0.json) }
        #expect(all.filter { $0.0 == 200 }.count == 1 && all.filter { $0.1["reason"] == .string("code_invalid") }.count == 7)
        let winner = try #require(all.first { $0.0 == 200 }?.1)
        let refresh = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("spa"), "refresh_token": winner["refresh_token"]!]))
        #expect(refresh.json["reason"] == .string("refresh_token_revoked"))
    }

    @Test("a confidential client authenticates by client_secret_basic or client_secret_post, not both, not neither; PKCE optional")
    func confidentialClient() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "backend@signet.test")
        func code(pkce: PKCE?) throws -> String {
            let answer = try server.authorize(browser, client: "backend", redirect: "https://rp.signet.test/cb", pkce: pkce)
            return try #require(WebBrowser.query(answer.headers["location"])["code"], "\(answer.headers["location"] ?? "")")
        }
        let basic = ("Authorization", "Basic " + Data("backend:\(TestServer.webSecret)".utf8).base64EncodedString())
        let ok = try server.exchange(code: try code(pkce: nil), client: nil, redirect: "https://rp.signet.test/cb", verifier: nil, headers: [basic])
        #expect(ok.status == 200 && ok.json["id_token"]?.string != nil, "\(ok.json.serialized)")
        let post = try server.exchange(code: try code(pkce: nil), client: "backend", redirect: "https://rp.signet.test/cb", verifier: nil,
                                       extra: [("client_secret", TestServer.webSecret)])
        #expect(post.status == 200)
        let both = try server.exchange(code: try code(pkce: nil), client: "backend", redirect: "https://rp.signet.test/cb", verifier: nil, headers: [basic],
                                       extra: [("client_secret", TestServer.webSecret)])
        #expect(both.json["reason"] == .string("malformed"))
        let neither = try server.exchange(code: try code(pkce: nil), client: "backend", redirect: "https://rp.signet.test/cb", verifier: nil)
        #expect(neither.status == 401 && neither.json["reason"] == .string("client_secret_invalid"))
        let wrong = try server.exchange(code: try code(pkce: nil), client: "backend", redirect: "https://rp.signet.test/cb", verifier: nil,
                                        extra: [("client_secret", "wrong")])
        #expect(wrong.status == 401 && wrong.json["reason"] == .string("client_secret_invalid"))
        // Each failed authentication is audited once, as such, not again as a failed code grant.
        let refusals = try server.store.auditEvents(limit: 50).filter { $0.reason == "client_secret_invalid" }
        #expect(refusals.map(\.kind) == ["client_authentication", "client_authentication"], "\(refusals.map(\.kind))")
        let pkce = PKCE()
        let withPKCE = try server.exchange(code: try code(pkce: pkce), client: nil, redirect: "https://rp.signet.test/cb", verifier: pkce.verifier, headers: [basic])
        #expect(withPKCE.status == 200)
        let unasked = try server.exchange(code: try code(pkce: nil), client: nil, redirect: "https://rp.signet.test/cb", verifier: pkce.verifier, headers: [basic])
        #expect(unasked.json["reason"] == .string("pkce_invalid"), "a verifier for a code issued without a challenge")
    }

    @Test("id_token_hint: a session of the hinted account answers at once; another account's is login_required with prompt=none, the page without; a hint that is not this client's id token is refused")
    func idTokenHint() throws {
        let server = try Self.server()
        // Two accounts, each with an id token for spa from its own browser's code flow.
        func idToken(_ browser: WebBrowser) throws -> String {
            let pkce = PKCE()
            let code = try #require(WebBrowser.query(try server.authorize(browser, pkce: pkce).headers["location"])["code"])
            return try #require(try server.exchange(code: code, verifier: pkce.verifier).json["id_token"]?.string)
        }
        let ada = WebBrowser(server), bob = WebBrowser(server)
        try ada.signUp(email: "ada-hint@signet.test")
        try bob.signUp(email: "bob-hint@signet.test")
        let adaToken = try idToken(ada), bobToken = try idToken(bob)
        // The hinted account's session: a code, without a page.
        #expect(try server.authorize(ada, extra: [("prompt", "none"), ("id_token_hint", adaToken)]).headers["location"]?.contains("code=") == true)
        // Another account's session: login_required, or the sign-in page.
        let other = WebBrowser.query(try server.authorize(bob, extra: [("prompt", "none"), ("id_token_hint", adaToken)]).headers["location"])
        #expect(other["error"] == "login_required" && other["state"] == "st-1")
        #expect(try server.authorize(bob, extra: [("id_token_hint", adaToken)]).headers["location"]?.hasPrefix("/login?authorization=") == true)
        // Expired, it is still a hint (only signature and issuer count).
        server.clock.advance(7200)
        #expect(try server.authorize(bob, extra: [("prompt", "none"), ("id_token_hint", bobToken)]).headers["location"]?.contains("code=") == true)
        // Not an id token of this server, or one issued to another client: refused to the client.
        let forged = bobToken.dropLast(4) + "AAAA"
        for hint in [String(forged), "garbage", try idTokenFor(server, client: "app")] {
            let answer = WebBrowser.query(try server.authorize(bob, extra: [("prompt", "none"), ("id_token_hint", hint)]).headers["location"])
            #expect(answer["error"] == "invalid_request" && answer["reason"] == "malformed", "\(hint.prefix(20))")
        }
    }

    /// An id token of this server for `client`, from a passkey sign-up through the native API.
    func idTokenFor(_ server: TestServer, client: String) throws -> String {
        var phone = Phone(server)
        phone.clientID = client
        return try #require(try phone.signUp(email: "\(client)-hint@signet.test")["id_token"]?.string)
    }

    @Test("max_age and prompt=login or select_account send a signed-in browser back to the page; prompt=none and consent answer from the session")
    func sessionAge() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "age@signet.test")
        #expect(try server.authorize(browser, extra: [("prompt", "none")]).headers["location"]?.contains("code=") == true)
        server.clock.advance(30)
        let old = try server.authorize(browser, extra: [("max_age", "10")])
        #expect(old.headers["location"]?.hasPrefix("/login?authorization=") == true)
        #expect(WebBrowser.query(try server.authorize(browser, extra: [("max_age", "10"), ("prompt", "none")]).headers["location"])["error"] == "login_required")
        #expect(try server.authorize(browser, extra: [("max_age", "60")]).headers["location"]?.contains("code=") == true)
        #expect(try server.authorize(browser, extra: [("response_mode", "query")]).headers["location"]?.contains("code=") == true)
        // prompt is a list (OIDC Core §3.1.2.1): consent changes nothing for a client the operator
        // registered; select_account, like login, asks again.
        #expect(try server.authorize(browser, extra: [("prompt", "consent")]).headers["location"]?.contains("code=") == true)
        for prompt in ["select_account", "consent login", "login select_account"] {
            #expect(try server.authorize(browser, extra: [("prompt", prompt)]).headers["location"]?.hasPrefix("/login?authorization=") == true, "\(prompt)")
        }
        #expect(try server.authorize(browser, extra: [("prompt", "login create")]).headers["location"]?.hasPrefix("/signup?authorization=") == true)
        let login = try server.authorize(browser, extra: [("prompt", "login")])
        let sealed = try #require(WebBrowser.query(login.headers["location"])["authorization"])
        // The old session does not answer a prompt=login request; a new sign-in does.
        #expect(try browser.send("GET", "/authorize/continue?authorization=" + sealed).headers["location"]?.hasPrefix("/login") == true)
        server.clock.advance(2)
        let signIn = try browser.signIn(authorization: sealed)
        #expect(signIn.status == 200)
        #expect(try browser.send("GET", try #require(signIn.json["redirect"]?.string)).headers["location"]?.contains("code=") == true)
    }

    @Test("discovery lists the browser flow")
    func discovery() throws {
        let server = try Self.server()
        let d = try StrictJSON().parse(try server.get("/.well-known/openid-configuration").body)
        #expect(d["authorization_endpoint"] == .string("https://signet.test/authorize") && d["end_session_endpoint"] == .string("https://signet.test/logout"))
        #expect(d["response_types_supported"] == .array([.string("code")]) && d["code_challenge_methods_supported"] == .array([.string("S256")]))
        #expect(d["grant_types_supported"]?.array?.contains(.string("authorization_code")) == true)
        #expect(d["token_endpoint_auth_methods_supported"] == .array([.string("none"), .string("client_secret_basic"), .string("client_secret_post"), .string("private_key_jwt")]))
        #expect(d["authorization_response_iss_parameter_supported"] == .bool(true))
        // request_uri_parameter_supported means true when left out (OIDC Discovery §3).
        #expect(d["request_parameter_supported"] == .bool(false) && d["request_uri_parameter_supported"] == .bool(false))
        #expect(d["response_modes_supported"] == .array([.string("query")]))
        #expect(d["prompt_values_supported"] == .array(["none", "login", "select_account", "consent", "create"].map(JSONValue.string)))
    }
}
