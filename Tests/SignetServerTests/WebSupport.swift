import Foundation
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetSoftware
import SignetWebAuthn
import Testing

/// A browser as the hosted pages see it: a cookie jar over a ``TestServer``, the page's CSRF
/// token, and a software authenticator for the passkey steps the page script would run.
final class WebBrowser {
    let server: TestServer
    let authenticator: SoftwareAuthenticator
    var cookies: [String: String] = [:]
    /// The CSRF token of the last page loaded.
    var csrf = ""
    var userAgent = "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0 Safari/537.36"

    init(_ server: TestServer, authenticator: SoftwareAuthenticator = SoftwareAuthenticator()) {
        self.server = server
        self.authenticator = authenticator
    }

    @discardableResult
    func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = [], contentType: String? = nil) throws -> HTTPClient.Response {
        var all = headers + [("User-Agent", userAgent)]
        if !cookies.isEmpty { all.append(("Cookie", cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))) }
        if let contentType { all.append(("Content-Type", contentType)) }
        let response = try server.send(method, path, headers: all, body: body)
        if let set = response.headers["set-cookie"], let pair = set.split(separator: ";").first {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if set.contains("Max-Age=0") || parts.count < 2 || parts[1].isEmpty { cookies[parts[0]] = nil } else { cookies[parts[0]] = parts[1] }
        }
        return response
    }

    /// GETs a page and keeps its CSRF token.
    @discardableResult
    func page(_ path: String) throws -> (status: Int, html: String, response: HTTPClient.Response) {
        let response = try send("GET", path, headers: [("Accept", "text/html")])
        let html = String(decoding: response.body, as: UTF8.self)
        if let token = Self.attribute("data-csrf", in: html) { csrf = token }
        return (response.status, html, response)
    }

    static func attribute(_ name: String, in html: String) -> String? {
        guard let start = html.range(of: "\(name)=\"") else { return nil }
        return html[start.upperBound...].prefix { $0 != "\"" }.description
    }

    /// A form POST with this page's CSRF token (unless `csrf` is given).
    @discardableResult
    func form(_ path: String, _ fields: [(String, String)], csrf: String? = nil) throws -> (status: Int, html: String, response: HTTPClient.Response) {
        let body = ([("csrf", csrf ?? self.csrf)] + fields).map { "\($0.0)=\(Ceremonies.formEncoded($0.1))" }.joined(separator: "&")
        let response = try send("POST", path, headers: [("Accept", "text/html")], body: Array(body.utf8), contentType: "application/x-www-form-urlencoded")
        let html = String(decoding: response.body, as: UTF8.self)
        if let token = Self.attribute("data-csrf", in: html) { self.csrf = token }
        return (response.status, html, response)
    }

    /// The page script's JSON call, with the CSRF token in `X-CSRF-Token`.
    func json(_ path: String, _ body: JSONValue = .object([:]), csrf: String? = nil) throws -> (status: Int, json: JSONValue, response: HTTPClient.Response) {
        let response = try send("POST", path, headers: [("X-CSRF-Token", csrf ?? self.csrf), ("Accept", "application/json")], body: Array(body.serialized.utf8),
                                contentType: "application/json")
        return (response.status, (try? StrictJSON().parse(response.body)) ?? .null, response)
    }

    /// Sign-up on `/signup` with a passkey, as the script does it; returns where it goes next.
    @discardableResult
    func signUp(email: String, name: String = "Ada", authorization: String = "", tamper: Tamper = .none) throws -> String {
        try page("/signup")
        let start = try json("/signup/options", .object(["email": .string(email), "name": .string(name)]))
        try #require(start.status == 200, "signup options: \(start.json.serialized)")
        let options = try #require(start.json["authn_params_public_key"])
        let registration = try authenticator.register(
            rpID: TestServer.rpID, origin: TestServer.origin, challenge: try #require(options["challenge"]?.string.flatMap { Base64URL.decode($0) }),
            userHandle: try #require(options["user"]?["id"]?.string.flatMap { Base64URL.decode($0) }), userName: email, tamper: tamper)
        let done = try json("/login/passkey", .object([
            "auth_session": start.json["auth_session"]!, "authn_response": registration.json, "authorization": .string(authorization),
        ]))
        try #require(done.status == 200, "signup: \(done.json.serialized)")
        return try #require(done.json["redirect"]?.string)
    }

    /// A discoverable-credential sign-in on `/login`; returns the answer.
    func signIn(authorization: String = "", origin: String = TestServer.origin, tamper: Tamper = .none) throws -> (status: Int, json: JSONValue, response: HTTPClient.Response) {
        try page("/login")
        let start = try json("/login/options")
        try #require(start.status == 200, "login options: \(start.json.serialized)")
        let challenge = try #require(start.json["authn_params_public_key"]?["challenge"]?.string.flatMap { Base64URL.decode($0) })
        let assertion = try authenticator.authenticate(rpID: TestServer.rpID, origin: origin, challenge: challenge, tamper: tamper)
        return try json("/login/passkey", .object([
            "auth_session": start.json["auth_session"]!, "authn_response": assertion.json, "authorization": .string(authorization),
        ]))
    }

    /// A step-up on the account page with this browser's passkey.
    func stepUp() throws {
        let start = try json("/account/step-up/options")
        try #require(start.status == 200, "step-up options: \(start.json.serialized)")
        let options = try #require(start.json["authn_params_public_key"])
        let allowed = (options["allowCredentials"]?.array ?? []).compactMap { $0["id"]?.string.flatMap { Base64URL.decode($0) } }
        let assertion = try authenticator.authenticate(rpID: TestServer.rpID, origin: TestServer.origin,
                                                       challenge: try #require(options["challenge"]?.string.flatMap { Base64URL.decode($0) }), allowCredentials: allowed)
        let done = try json("/account/step-up", .object(["auth_session": start.json["auth_session"]!, "authn_response": assertion.json]))
        try #require(done.status == 200, "step-up: \(done.json.serialized)")
    }

    /// The query of a redirect's `Location`.
    static func query(_ location: String?) -> [String: String] {
        guard let location, let mark = location.firstIndex(of: "?") else { return [:] }
        return HTTPRequest.parseQuery(location[location.index(after: mark)...])
    }
}

/// PKCE (RFC 7636 §4.1–4.2): a verifier and its S256 challenge.
struct PKCE {
    let verifier = Base64URL.encode(SecureRandom.bytes(32))
    var challenge: String { Base64URL.encode(Digest.sha256.hash(Array(verifier.utf8))) }
}

extension TestServer {
    /// The browser-flow clients of the web tests: a public app with an exact and a loopback
    /// redirect URI and a private-use scheme, and a confidential one.
    static let webSecret = "web-secret-0123456789abcdefghijklmnopqrstuv"
    static func webClients(_ c: inout ServerConfiguration) {
        var spa = ClientConfiguration(id: "spa", grants: GrantNames.all)
        spa.redirectURIs = ["https://app.signet.test/callback", "http://127.0.0.1/cb", "com.example.app:/oauth"]
        spa.postLogoutRedirectURIs = ["https://app.signet.test/bye"]
        spa.allowedOrigins = ["https://app.signet.test"]
        var backend = ClientConfiguration(id: "backend", grants: [GrantNames.authorizationCode, GrantNames.refreshToken],
                                          secretHash: Digest.sha256.hash(Array(webSecret.utf8)))
        backend.redirectURIs = ["https://rp.signet.test/cb"]
        c.clients += [spa, backend]
    }

    /// `/authorize` for `client` with PKCE; the answer (a redirect).
    func authorize(_ browser: WebBrowser, client: String = "spa", redirect: String = "https://app.signet.test/callback", pkce: PKCE? = PKCE(),
                   scope: String = "openid email offline_access", extra: [(String, String)] = []) throws -> HTTPClient.Response {
        var fields = [("response_type", "code"), ("client_id", client), ("redirect_uri", redirect), ("scope", scope), ("state", "st-1"),
                      ("nonce", "n-1")]
        if let pkce { fields += [("code_challenge", pkce.challenge), ("code_challenge_method", "S256")] }
        fields += extra
        return try browser.send("GET", "/authorize?" + fields.map { "\($0.0)=\(Ceremonies.formEncoded($0.1))" }.joined(separator: "&"), headers: [("Accept", "text/html")])
    }

    /// The authorization code grant, form-encoded.
    func exchange(code: String, client: String? = "spa", redirect: String = "https://app.signet.test/callback", verifier: String?,
                  headers: [(String, String)] = [], extra: [(String, String)] = []) throws -> (status: Int, json: JSONValue) {
        var fields = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect)] + extra
        if let client { fields.append(("client_id", client)) }
        if let verifier { fields.append(("code_verifier", verifier)) }
        let body = fields.map { "\($0.0)=\(Ceremonies.formEncoded($0.1))" }.joined(separator: "&")
        let response = try send("POST", "/oauth/token", headers: headers + [("Content-Type", "application/x-www-form-urlencoded")], body: Array(body.utf8))
        return (response.status, (try? StrictJSON().parse(response.body)) ?? .null)
    }
}
