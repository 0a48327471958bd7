public import Foundation
public import SignetAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A sign-in through the browser (OIDC Core §3.1, the authorization code flow with PKCE, RFC
/// 7636; for native apps RFC 8252): open ``url`` in the system's browser sheet
/// (ASWebAuthenticationSession, Custom Tabs), then hand the URL it comes back to to
/// ``SignetClient/completeBrowserSignIn(callback:for:)``.
public struct BrowserSignIn: Sendable, Equatable {
    /// `/authorize` with the client, redirect URI, scope, `state`, `nonce` and the S256 challenge.
    public let url: URL
    public let redirectURI: String
    /// Checked against the callback's (RFC 6749 §10.12).
    public let state: String
    /// Checked against the id token's (OIDC Core §3.1.3.7 step 11).
    public let nonce: String
    /// The PKCE verifier: never leaves this object until the code is exchanged.
    let verifier: String
}

/// The token request of the authorization code grant (RFC 6749 §4.1.3, RFC 7636 §4.5).
struct AuthorizationCodeRequest: Encodable {
    let grant_type = "authorization_code"
    let client_id: String
    let code: String
    let redirect_uri: String
    let code_verifier: String
}

extension SignetClient {
    /// 32 bytes from the system's secure generator, base64url: PKCE verifiers, `state`, `nonce`.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64URLEncodedString
    }

    /// The authorization URL for a browser sign-in with PKCE (S256), `state` and `nonce`.
    /// - Parameters:
    ///   - redirectURI: registered for this client: a private-use scheme (`com.example.app:/oauth`)
    ///     or a claimed https URL for an app, a loopback URL for a desktop tool (RFC 8252 §7).
    ///   - prompt: `login` to ask for a new sign-in, `create` to open the sign-up page, `none`
    ///     for a silent check.
    ///   - acrValues: `phr` to ask for a passkey's sign-in (RFC 9470 §4), as an API's
    ///     `insufficient_user_authentication` challenge names it.
    ///
    ///   - pushed: push the request to `/oauth/par` first (RFC 9126) and open `/authorize` with
    ///     `client_id` and the `request_uri` alone: nothing of the request is in the URL the
    ///     browser shows or a system log keeps. Required of a client registered with
    ///     `require_pushed_authorization_requests`.
    ///
    /// With a DPoP key the code is bound to it (RFC 9449 §10 `dpop_jkt`): a code taken from the
    /// redirect is worth nothing to another app, which cannot sign the token request's proof.
    public func authorizationURL(redirectURI: String, scope: String = OIDCScopes.text, prompt: String? = nil,
                                 loginHint: String? = nil, uiLocales: String? = nil, acrValues: String? = nil, pushed: Bool = false) async throws -> BrowserSignIn {
        let verifier = Self.randomToken(), state = Self.randomToken(), nonce = Self.randomToken()
        let challenge = SHA256.base64url(Data(verifier.utf8))
        guard var components = URLComponents(url: baseURL.appendingPathComponent("authorize"), resolvingAgainstBaseURL: false) else {
            throw SignetError(.invalidResponse, "the base URL \(baseURL) cannot take a path")
        }
        var items = [
            URLQueryItem(name: "response_type", value: "code"), URLQueryItem(name: "client_id", value: clientID),
            URLQueryItem(name: "redirect_uri", value: redirectURI), URLQueryItem(name: "scope", value: scope), URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "nonce", value: nonce), URLQueryItem(name: "code_challenge", value: challenge),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        if let prompt { items.append(URLQueryItem(name: "prompt", value: prompt)) }
        if let loginHint { items.append(URLQueryItem(name: "login_hint", value: loginHint)) }
        if let uiLocales { items.append(URLQueryItem(name: "ui_locales", value: uiLocales)) }
        if let acrValues { items.append(URLQueryItem(name: "acr_values", value: acrValues)) }
        if let dpopJKT = try await dpopThumbprint() { items.append(URLQueryItem(name: "dpop_jkt", value: dpopJKT)) }
        if pushed {
            let answer = try await sendForm("oauth/par", items)
            items = [URLQueryItem(name: "client_id", value: clientID), URLQueryItem(name: "request_uri", value: try decode(PushedAuthorizationResponse.self, answer).request_uri)]
        }
        components.queryItems = items
        // `+` means a space in a query (RFC 3986 leaves it alone; forms do not): encode it.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let url = components.url else { throw SignetError(.invalidResponse, "the authorization URL could not be made") }
        return BrowserSignIn(url: url, redirectURI: redirectURI, state: state, nonce: nonce, verifier: verifier)
    }

    /// A `POST` of `items` as `application/x-www-form-urlencoded` (RFC 6749 Appendix B), as the
    /// pushed authorization request endpoint takes them.
    func sendForm(_ path: String, _ items: [URLQueryItem]) async throws -> Answer {
        var request = signetRequest(baseURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        var form = URLComponents()
        form.queryItems = items
        // A form's `+` is a space: encode it.
        request.httpBody = Data((form.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B").utf8)
        let (data, http) = try await transport(request, to: baseURL.absoluteString)
        return Answer(status: http.statusCode, data: data, retryAfter: nil)
    }

    /// The JWK thumbprint (RFC 7638) of the DPoP key this client binds its tokens to; `nil`
    /// without one.
    public func dpopThumbprint() async throws -> String? {
        guard let dpop else { return nil }
        return DPoPProofs.thumbprint(try await dpop.publicJWK())
    }

    /// The URL the browser came back to: its `state` must be this sign-in's and its `iss` (RFC
    /// 9207) this server's, and present when discovery says the server always sends it (§2.4);
    /// an `error` becomes a ``SignetError`` with Signet's reason; the code is exchanged
    /// (``exchange(code:for:)``).
    @discardableResult
    public func completeBrowserSignIn(callback: URL, for signIn: BrowserSignIn) async throws -> TokenResponse {
        let items = URLComponents(url: callback, resolvingAgainstBaseURL: false)?.queryItems ?? []
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        guard value("state") == signIn.state else { throw SignetError(.invalidResponse, "the callback's state is not this sign-in's") }
        let server = try await issuer()
        if let iss = value("iss"), iss != server.issuer {
            throw SignetError(.invalidResponse, "the callback names another issuer (\(iss))")
        }
        if value("iss") == nil, server.alwaysSendsIss {
            throw SignetError(.invalidResponse, "the callback has no iss, which this server always sends")
        }
        if let error = value("error") {
            throw SignetError(serverReason: value("reason") ?? error, status: 400, value("error_description") ?? error)
        }
        guard let code = value("code") else { throw SignetError(.invalidResponse, "the callback has neither a code nor an error") }
        return try await exchange(code: code, for: signIn)
    }

    /// The authorization code grant: the code and this sign-in's PKCE verifier for tokens, which
    /// become the session; the id token's `nonce` must be this sign-in's.
    @discardableResult
    public func exchange(code: String, for signIn: BrowserSignIn) async throws -> TokenResponse {
        let answer = try await send("POST", "oauth/token", body: AuthorizationCodeRequest(
            client_id: clientID, code: code, redirect_uri: signIn.redirectURI, code_verifier: signIn.verifier))
        let response = try decode(TokenResponse.self, answer)
        if let idToken = response.id_token {
            guard Self.claims(idToken)?["nonce"] as? String == signIn.nonce else { throw SignetError(.invalidResponse, "the id token's nonce is not this sign-in's") }
        }
        return try begin(response)
    }

    /// The server's issuer identifier, and whether its authorization responses always carry it
    /// (`authorization_response_iss_parameter_supported`), from its discovery document (read once).
    func issuer() async throws -> (issuer: String, alwaysSendsIss: Bool) {
        if let discoveredIssuer { return discoveredIssuer }
        struct Discovery: Decodable {
            let issuer: String
            let authorization_response_iss_parameter_supported: Bool?
        }
        let found = try decode(Discovery.self, try await send("GET", ".well-known/openid-configuration"))
        let issuer = (found.issuer, found.authorization_response_iss_parameter_supported ?? false)
        discoveredIssuer = issuer
        return issuer
    }

    /// A JWT's claims, unverified: the id token came straight from the token endpoint over TLS
    /// (OIDC Core §3.1.3.7 step 6 allows that in place of its signature).
    static func claims(_ token: String) -> [String: Any]? {
        let parts = token.split(separator: ".")
        guard parts.count == 3, let data = Data(base64URLEncoded: String(parts[1])) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }
}
