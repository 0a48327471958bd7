import Foundation
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// Redirect URIs, audiences and origins match by their bytes, not by Swift's canonical
/// equivalence, under which U+212A KELVIN SIGN equals "K" and U+037E GREEK QUESTION MARK ";".
@Suite struct ExactMatchTests {
    static let redirect = "https://Kiosk.signet.test/cb;v=1"
    static let bye = "https://Kiosk.signet.test/bye;"
    static let origin = "https://Kiosk.signet.test"
    static let audience = "https://api.signet.test/K"
    static let client = "Kiosk;1"

    /// `text` with every "K" as KELVIN SIGN, and with every ";" as GREEK QUESTION MARK: both
    /// equal to `text` for Swift's `==`, neither the same bytes.
    static func lookalikes(_ text: String) -> [String] {
        [text.replacingOccurrences(of: "K", with: "\u{212A}"), text.replacingOccurrences(of: ";", with: "\u{037E}")].filter { !$0.isExactly(text) }
    }

    static func server() throws -> TestServer {
        try TestServer.withOperators { c in
            TestServer.webClients(&c)
            var kiosk = ClientConfiguration(id: "kiosk", grants: GrantNames.all)
            kiosk.redirectURIs = [redirect]
            kiosk.postLogoutRedirectURIs = [bye]
            kiosk.allowedOrigins = [origin]
            c.clients.append(kiosk)
            c.clients.append(ClientConfiguration(id: client, grants: GrantNames.all))
            c.audiences = [audience]
        }
    }

    @Test("the helpers: equal for ==, not the same bytes")
    func helpers() {
        for lookalike in Self.lookalikes(Self.redirect) + Self.lookalikes(Self.audience) {
            let original = lookalike.contains("api.") ? Self.audience : Self.redirect
            #expect(lookalike == original, "Swift's == is canonical equivalence")
            #expect(!lookalike.isExactly(original) && ![original].containsExactly(lookalike) && !Set([original]).containsExactly(lookalike))
        }
        #expect(Set([Self.redirect]).containsExactly(Self.redirect) && [Self.audience].containsExactly(Self.audience))
        // A combining mark and its canonical twin (U+0340 is U+0300) have the same length in UTF-8.
        #expect("a\u{0340}" == "a\u{0300}" && !"a\u{0340}".isExactly("a\u{0300}"))
    }

    @Test("/authorize and the code grant: a redirect URI equivalent to the registered one is refused, never followed")
    func redirectURI() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "exact@signet.test")
        for lookalike in Self.lookalikes(Self.redirect) {
            let answer = try server.authorize(browser, client: "kiosk", redirect: lookalike)
            #expect(answer.headers["location"] == nil && String(decoding: answer.body, as: UTF8.self).contains(#"data-reason="redirect_uri_invalid""#), "\(lookalike)")
        }
        let pkce = PKCE()
        let answer = try server.authorize(browser, client: "kiosk", redirect: Self.redirect, pkce: pkce)
        let location = try #require(answer.headers["location"])
        #expect(location.hasPrefix(Self.redirect + "&code=") || location.hasPrefix(Self.redirect + "?code="), "\(location)")
        let code = try #require(WebBrowser.query(location)["code"])
        let exchanged = try server.exchange(code: code, client: "kiosk", redirect: Self.lookalikes(Self.redirect)[0], verifier: pkce.verifier)
        #expect(exchanged.status == 400 && exchanged.json["reason"] == .string("redirect_uri_invalid"), "\(exchanged.json.serialized)")
    }

    @Test("RP-initiated logout: a post_logout_redirect_uri equivalent to the registered one is refused")
    func postLogout() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "bye@signet.test")
        for lookalike in Self.lookalikes(Self.bye) {
            let answer = try browser.send("GET", "/logout?client_id=kiosk&post_logout_redirect_uri=\(Ceremonies.formEncoded(lookalike))", headers: [("Accept", "text/html")])
            #expect(answer.headers["location"] == nil && String(decoding: answer.body, as: UTF8.self).contains("redirect_uri_invalid"), "\(lookalike)")
        }
        let exact = try browser.send("GET", "/logout?client_id=kiosk&post_logout_redirect_uri=\(Ceremonies.formEncoded(Self.bye))", headers: [("Accept", "text/html")])
        #expect(!String(decoding: exact.body, as: UTF8.self).contains("redirect_uri_invalid"), "\(exact.status)")
    }

    @Test("an audience equivalent to a configured one is refused at /authorize, the native grant and client_credentials; the exact one is issued byte for byte")
    func audience() throws {
        let server = try Self.server()
        let browser = WebBrowser(server)
        try browser.signUp(email: "aud@signet.test")
        let lookalike = try #require(Self.lookalikes(Self.audience).first)
        let refused = try server.authorize(browser, client: "kiosk", redirect: Self.redirect, extra: [("audience", lookalike)])
        #expect(WebBrowser.query(refused.headers["location"])["reason"] == "audience_not_allowed", "\(refused.headers)")
        let phone = Phone(server)
        _ = try phone.signUp(email: "native@signet.test")
        func grant(_ audience: String) throws -> (status: Int, json: JSONValue) {
            let (session, credential, _) = try phone.startSignIn()
            return try server.post("/oauth/token", .object([
                "grant_type": .string(GrantNames.webauthn), "client_id": .string("app"), "auth_session": .string(session),
                "authn_response": credential, "audience": .string(audience),
            ]))
        }
        let native = try grant(lookalike)
        #expect(native.status == 400 && native.json["reason"] == .string("audience_not_allowed"), "\(native.json.serialized)")
        let issued = try grant(Self.audience)
        #expect(issued.status == 200 && jwtClaims(issued.json["access_token"]?.string)["aud"]?.string?.isExactly(Self.audience) == true)
        let machine = try server.send("POST", "/oauth/token", headers: [
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Authorization", "Basic " + Data("ops:\(TestServer.opsSecret)".utf8).base64EncodedString()),
        ], body: Array("grant_type=client_credentials&audience=\(Ceremonies.formEncoded(lookalike))".utf8))
        let reason = try StrictJSON().parse(machine.body)["reason"]
        #expect(machine.status == 400 && reason == .string("audience_not_allowed"), "\(machine.status) \(String(describing: reason))")
    }

    @Test("CORS: an Origin equivalent to an allowed one gets no CORS headers")
    func cors() throws {
        let server = try Self.server()
        func allowed(_ origin: String) throws -> String? {
            try server.send("OPTIONS", "/oauth/token", headers: [("Origin", origin), ("Access-Control-Request-Method", "POST")]).headers["access-control-allow-origin"]
        }
        #expect(try allowed(Self.origin) == Self.origin)
        for lookalike in Self.lookalikes(Self.origin) { #expect(try allowed(lookalike) == nil, "\(lookalike)") }
    }

    @Test("a client_id equivalent to a configured one names no client, at the native API, /authorize and the token endpoint")
    func clientID() throws {
        let server = try Self.server()
        func challenge(_ client: String) throws -> (status: Int, json: JSONValue) {
            try server.post("/passkey/challenge", .object(["client_id": .string(client)]))
        }
        #expect(try challenge(Self.client).status == 200)
        let browser = WebBrowser(server)
        try browser.signUp(email: "client@signet.test")
        for lookalike in Self.lookalikes(Self.client) {
            let native = try challenge(lookalike)
            #expect(native.status == 401 && native.json["reason"] == .string("client_unknown"), "\(native.json.serialized)")
            let page = try server.authorize(browser, client: lookalike, redirect: Self.redirect)
            #expect(page.headers["location"] == nil && String(decoding: page.body, as: UTF8.self).contains(#"data-reason="client_unknown""#), "\(lookalike)")
            // Basic names the client, client_id its lookalike: two names, not one.
            let token = try server.send("POST", "/oauth/token", headers: [
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Authorization", "Basic " + Data("\(Ceremonies.formEncoded(Self.client)):".utf8).base64EncodedString()),
            ], body: Array("grant_type=refresh_token&refresh_token=x&client_id=\(Ceremonies.formEncoded(lookalike))".utf8))
            let reason = try StrictJSON().parse(token.body)["reason"]
            #expect(token.status == 400 && reason == .string("malformed"), "\(token.status) \(String(describing: reason))")
        }
    }

    @Test("Basic credentials split at the first colon byte, even with a combining mark after it")
    func basicColon() throws {
        func basic(_ text: String) -> (id: String, secret: String)? { SignetService.basicCredentials("Basic " + Data(text.utf8).base64EncodedString()) }
        let marked = try #require(basic("app:\u{301}s3cret:x"))
        #expect(marked.id.isExactly("app") && marked.secret.isExactly("\u{301}s3cret:x"))
        #expect(basic("a%3Ab:c").map { [$0.id, $0.secret] } == ["a:b", "c"], "an encoded colon belongs to the ID (RFC 6749 §2.3.1)")
        #expect(basic("no colon") == nil)
    }
}
