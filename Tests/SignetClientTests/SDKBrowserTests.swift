import Foundation
import SignetAPI
import SignetClient
import SignetHTTP
import SignetSoftware
import SignetWebAuthn
import Testing

/// The SDK's browser sign-in (`authorizationURL`, `completeBrowserSignIn`) against a real
/// `signet serve`: the system sheet's part is played by a cookie-keeping HTTP client that signs
/// in on the hosted page with the same software passkey the app made.
@Suite struct SDKBrowserTests {
    /// The browser sheet: follows `/authorize` to the sign-in page, signs in there with the
    /// passkey, and returns the URL it is finally sent to (the app's redirect URI).
    static func sheet(_ server: ServerProcess, _ url: URL, authenticator: SoftwareAuthenticator, cookies: inout [String: String]) throws -> URL {
        let http = HTTPClient(port: server.port)
        func send(_ method: String, _ path: String, _ body: JSONValue? = nil, csrf: String? = nil) throws -> HTTPClient.Response {
            var headers = [("Accept", "text/html")]
            if !cookies.isEmpty { headers.append(("Cookie", cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))) }
            if let csrf { headers += [("X-CSRF-Token", csrf), ("Content-Type", "application/json")] }
            let response = try http.send(method, path, headers: headers, body: body.map { Array($0.serialized.utf8) } ?? [])
            if let set = response.headers["set-cookie"], let pair = set.split(separator: ";").first {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { cookies[parts[0]] = parts[1] }
            }
            return response
        }
        var location = url.path + "?" + (url.query ?? "")
        for _ in 0..<6 {
            let response = try send("GET", location)
            if let next = response.headers["location"] {
                if next.hasPrefix("http") { return URL(string: next)! }
                location = next
                continue
            }
            // The sign-in page: the script's steps.
            let html = String(decoding: response.body, as: UTF8.self)
            let csrf = try #require(html.range(of: "data-csrf=\"").map { String(html[$0.upperBound...].prefix { $0 != "\"" }) })
            let authorization = html.range(of: "data-authorization=\"").map { String(html[$0.upperBound...].prefix { $0 != "\"" }) } ?? ""
            let start = try StrictJSON().parse(try send("POST", "/login/options", .object([:]), csrf: csrf).body)
            let challenge = try #require(start["authn_params_public_key"]?["challenge"]?.string.flatMap { Base64URL.decode($0) })
            let assertion = try authenticator.authenticate(rpID: "localhost", origin: server.origin, challenge: challenge)
            let done = try StrictJSON().parse(try send("POST", "/login/passkey", .object([
                "auth_session": start["auth_session"]!, "authn_response": assertion.json, "authorization": .string(authorization),
            ]), csrf: csrf).body)
            location = try #require(done["redirect"]?.string, "\(done.serialized)")
        }
        throw SignetError(.invalidResponse, "the sheet went round in circles")
    }

    @Test("authorizationURL + the hosted page + completeBrowserSignIn: a session from the browser flow, PKCE and nonce checked")
    func browserSignIn() async throws {
        let server = try ServerProcess()
        let authenticator = SoftwareAuthenticator()
        let native = try App(server, authenticator: authenticator)
        try await native.client.signUp(email: "browser@signet.test")
        // Another install of the app signs in through the browser with the same passkey.
        let app = try App(server, authenticator: authenticator)
        let signIn = try await app.client.authorizationURL(redirectURI: "http://127.0.0.1:9/callback", loginHint: "browser@signet.test")
        let query = URLComponents(url: signIn.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(query.first { $0.name == "code_challenge_method" }?.value == "S256" && query.first { $0.name == "code_challenge" }?.value?.count == 43)
        #expect(query.first { $0.name == "login_hint" }?.value == "browser@signet.test")
        var cookies: [String: String] = [:]
        let callback = try Self.sheet(server, signIn.url, authenticator: authenticator, cookies: &cookies)
        #expect(callback.absoluteString.hasPrefix("http://127.0.0.1:9/callback?code="))
        // A callback for another sign-in (its state) is refused, and leaves the code unused.
        let other = try await app.client.authorizationURL(redirectURI: "http://127.0.0.1:9/callback")
        await #expect(throws: SignetError.self) { try await app.client.completeBrowserSignIn(callback: callback, for: other) }
        let tokens = try await app.client.completeBrowserSignIn(callback: callback, for: signIn)
        #expect(tokens.id_token != nil && tokens.refresh_token != nil)
        #expect(try await app.client.userInfo().email == "browser@signet.test")
        // The code was used: a second exchange fails with the server's reason.
        let reused = await #expect(throws: SignetError.self, "a used code was accepted") { try await app.client.completeBrowserSignIn(callback: callback, for: signIn) }
        #expect(reused?.code == .codeInvalid)
        // prompt=none from a browser without a session: the error comes back as the reason.
        let silent = try await app.client.authorizationURL(redirectURI: "http://127.0.0.1:9/callback", prompt: "none")
        var empty: [String: String] = [:]
        let refused = try Self.sheet(server, silent.url, authenticator: authenticator, cookies: &empty)
        // An error names the issuer too (RFC 9207 §2), and a callback without it is refused.
        let refusedQuery = URLComponents(url: refused, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(refusedQuery.first { $0.name == "iss" }?.value == server.origin)
        var stripped = URLComponents(url: refused, resolvingAgainstBaseURL: false)!
        stripped.queryItems = refusedQuery.filter { $0.name != "iss" }
        let unnamed = await #expect(throws: SignetError.self) { try await app.client.completeBrowserSignIn(callback: stripped.url!, for: silent) }
        #expect(unnamed?.code == .invalidResponse)
        let unsigned = await #expect(throws: SignetError.self, "login_required was not reported") { try await app.client.completeBrowserSignIn(callback: refused, for: silent) }
        #expect(unsigned?.code == .loginRequired)
        // With the browser's session, prompt=none gives a code at once.
        let again = try await app.client.authorizationURL(redirectURI: "http://127.0.0.1:9/callback", prompt: "none")
        let silentCallback = try Self.sheet(server, again.url, authenticator: authenticator, cookies: &cookies)
        #expect(try await app.client.completeBrowserSignIn(callback: silentCallback, for: again).access_token.isEmpty == false)
    }

    @Test("a pushed browser sign-in (RFC 9126): the URL carries client_id and request_uri alone, and the sign-in completes as any other")
    func pushedSignIn() async throws {
        let server = try ServerProcess()
        let authenticator = SoftwareAuthenticator()
        let native = try App(server, authenticator: authenticator)
        try await native.client.signUp(email: "pushed@signet.test")
        let app = try App(server, authenticator: authenticator)
        let signIn = try await app.client.authorizationURL(redirectURI: "http://127.0.0.1:9/callback", loginHint: "pushed@signet.test", pushed: true)
        let query = URLComponents(url: signIn.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(query.map(\.name) == ["client_id", "request_uri"], "\(signIn.url)")
        #expect(query.last?.value?.hasPrefix("urn:ietf:params:oauth:request_uri:") == true)
        var cookies: [String: String] = [:]
        let callback = try Self.sheet(server, signIn.url, authenticator: authenticator, cookies: &cookies)
        let tokens = try await app.client.completeBrowserSignIn(callback: callback, for: signIn)
        #expect(tokens.id_token != nil && tokens.refresh_token != nil)
        #expect(try await app.client.userInfo().email == "pushed@signet.test")
        // A refused push is the server's reason: a redirect URI the client does not have.
        let refused = await #expect(throws: SignetError.self) {
            try await app.client.authorizationURL(redirectURI: "https://elsewhere.example/cb", pushed: true)
        }
        #expect(refused?.code == .redirectURIInvalid)
    }

    @Test("a browser sign-in that asks for a passkey (acr_values=phr) by an app with a DPoP key: the code bound to it (dpop_jkt), DPoP tokens that say acr phr")
    func boundPasskeySignIn() async throws {
        let server = try ServerProcess()
        let authenticator = SoftwareAuthenticator()
        try await App(server, authenticator: authenticator).client.signUp(email: "bound@signet.test")
        let key = try SoftwareDPoPKey()
        let client = SignetClient(baseURL: URL(string: "http://localhost:\(server.port)")!, clientID: "dev",
                                  passkeys: SoftwarePasskeyProvider(authenticator: authenticator, origin: server.origin),
                                  tokens: FileTokenStore(url: server.directory.appendingPathComponent("tokens-bound.json")), dpop: SoftwareDPoPKeyStore(key))
        let jkt = try #require(try await client.dpopThumbprint())
        #expect(jkt == key.thumbprint)
        let signIn = try await client.authorizationURL(redirectURI: "http://127.0.0.1:9/callback", acrValues: "phr")
        let query = URLComponents(url: signIn.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(query.first { $0.name == "acr_values" }?.value == "phr" && query.first { $0.name == "dpop_jkt" }?.value == jkt)
        var cookies: [String: String] = [:]
        let callback = try Self.sheet(server, signIn.url, authenticator: authenticator, cookies: &cookies)
        let tokens = try await client.completeBrowserSignIn(callback: callback, for: signIn)
        #expect(tokens.token_type == "DPoP")
        let claims = try SDKDPoPTests.claims(tokens.access_token)
        #expect((claims["cnf"] as? [String: Any])?["jkt"] as? String == jkt && claims["acr"] as? String == "phr")
        // Another install without the key cannot use such a code.
        let stranger = try App(server, authenticator: authenticator)
        let other = try await client.authorizationURL(redirectURI: "http://127.0.0.1:9/callback")
        let stolen = try Self.sheet(server, other.url, authenticator: authenticator, cookies: &cookies)
        let refused = await #expect(throws: SignetError.self) { try await stranger.client.completeBrowserSignIn(callback: stolen, for: other) }
        #expect(refused?.code == .dpopInvalid)
    }
}
