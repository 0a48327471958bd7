import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetWeb
import SignetWebAuthn

/// What a page request carries: the SSO session its cookie names, the pre-session cookie that
/// CSRF tokens are bound to before sign-in, and the language the page speaks.
struct Browser {
    var session: WebSession?
    /// The pre-session cookie's value; a new one when the request had none (set by ``SignetService/page``).
    var preSession: String
    var newPreSession: Bool
    var language: String
    /// `Set-Cookie` values the answer carries.
    var cookies: [String] = []
}

extension SignetService {
    /// `__Host-` cookies need `Secure`, which needs https; on `http://localhost` in development
    /// the plain names are used (DESIGN.md, "The SSO session").
    var secureCookies: Bool { configuration.issuer.hasPrefix("https://") }
    var sessionCookieName: String { secureCookies ? "__Host-signet_session" : "signet_session" }
    var preSessionCookieName: String { secureCookies ? "__Host-signet_browser" : "signet_browser" }

    /// `name=value` with the attributes every Signet cookie has (RFC 6265bis §4.1).
    func cookie(_ name: String, _ value: String, maxAge: Int?) -> String {
        var text = "\(name)=\(value); Path=/; HttpOnly; SameSite=Lax"
        if secureCookies { text += "; Secure" }
        if let maxAge { text += "; Max-Age=\(maxAge)" }
        return text
    }

    /// The request's cookies (RFC 6265 §5.4): `a=b; c=d`, split on the octets `;` and `=` (a
    /// cookie is octets, so a `;` is a separator even where a combining mark follows it), bounded
    /// to 8 KiB and 64 pairs; a repeated name keeps its first value.
    package static func cookies(_ header: String?) -> [String: String] {
        var out: [String: String] = [:]
        for pair in Array((header ?? "").utf8.prefix(8192)).split(separator: UInt8(ascii: ";")).prefix(64) {
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { continue }
            func trimmed(_ bytes: ArraySlice<UInt8>) -> String {
                String(decoding: bytes.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed(), as: UTF8.self)
            }
            let name = trimmed(pair[..<equals])
            if out[name] == nil { out[name] = trimmed(pair[(equals + 1)...]) }
        }
        return out
    }

    /// The browser behind a page request. `uiLocales` (from the pending authorization or the
    /// query) wins over `Accept-Language`.
    func browser(_ request: HTTPRequest, uiLocales: String? = nil) throws -> Browser {
        let jar = Self.cookies(request.header("cookie"))
        let session = try ceremonies.webSession(cookie: jar[sessionCookieName])
        var pre = jar[preSessionCookieName] ?? ""
        let fresh = pre.utf8.count != 43 || Base64URL.decode(pre)?.count != 32
        if fresh { pre = Base64URL.encode(ceremonies.randomBytes(32)) }
        return Browser(session: session, preSession: pre, newPreSession: fresh,
                       language: Strings.language(uiLocales: uiLocales ?? request.query["ui_locales"], acceptLanguage: request.header("accept-language")))
    }

    /// The CSRF token of a page for a signed-in browser (bound to its session) or not (bound to
    /// its pre-session cookie).
    func csrf(_ browser: Browser, signedIn: Bool) -> String {
        ceremonies.csrfToken(binding: signedIn ? browser.session?.row.id ?? browser.preSession : browser.preSession)
    }

    /// Refuses a POST whose CSRF token (form field `csrf` or header `X-CSRF-Token`) is not this
    /// browser's. Before sign-in the token is bound to the pre-session cookie, after to the session.
    func checkCSRF(_ request: HTTPRequest, form: JSONValue?, signedIn: Bool) throws -> Browser {
        let browser = try self.browser(request)
        let token = request.header("x-csrf-token") ?? form?["csrf"]?.string
        // A pre-session cookie made just now was never on a page, so no token can be bound to it.
        let binding = signedIn ? browser.session?.row.id : browser.newPreSession ? nil : browser.preSession
        try ceremonies.checkCSRF(token, binding: binding)
        return browser
    }

    /// The headers every page has: a strict Content-Security-Policy with no inline script or
    /// style, no framing, no referrer, no sniffing, no caching.
    static let pageHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"),
        ("Referrer-Policy", "no-referrer"), ("X-Content-Type-Options", "nosniff"), ("X-Frame-Options", "DENY"),
        ("Cross-Origin-Opener-Policy", "same-origin"), ("Cache-Control", "no-store"),
    ]

    /// A hosted page: `template` inside the layout, in the browser's language.
    func page(_ name: String, title: String, _ template: Template, _ values: [String: TemplateValue], browser: Browser, status: Int = 200,
              signedIn: Bool = false, url: String = "/login") -> HTTPResponse {
        let strings = Strings.table(browser.language)
        var all = values
        all["csrf"] = .text(csrf(browser, signedIn: signedIn))
        let body = template.render(all, strings: strings)
        var layout = all
        layout["body"] = .html(body)
        layout["lang"] = .text(browser.language)
        layout["title"] = .text(strings[title] ?? title)
        layout["service"] = .text(configuration.rpName)
        if let url = brand.stylesheetURL { layout["brandCSS"] = .text(url) }
        if let url = brand.logoURL { layout["logoURL"] = .text(url) }
        layout["page"] = .text(name)
        layout["rpID"] = .text(configuration.rpID)
        let base = url.split(separator: "?").first.map(String.init) ?? url
        var query = url.contains("?") ? String(url[url.index(after: url.firstIndex(of: "?")!)...]) : ""
        query = query.split(separator: "&").filter { !$0.hasPrefix("ui_locales=") }.joined(separator: "&")
        let same = base + "?" + (query.isEmpty ? "" : query + "&") + "ui_locales="
        layout["languages"] = .list(Languages.spoken.enumerated().map { index, language in
            ["code": .text(language.code), "name": .text(language.name), "url": .text(same + language.code),
             "separator": .bool(index > 0), "current": .bool(language.code == browser.language)]
        })
        var response = HTTPResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8")] + Self.pageHeaders,
                                    body: Array(Pages.layout.render(layout, strings: strings).html.utf8))
        if browser.newPreSession { response.headers.append(("Set-Cookie", cookie(preSessionCookieName, browser.preSession, maxAge: 30 * 86400))) }
        for value in browser.cookies { response.headers.append(("Set-Cookie", value)) }
        return response
    }

    /// The error page for a refusal, in the request's language (a bad client or redirect URI, a
    /// stale form, a missing page).
    func errorPage(_ error: any Error, request: HTTPRequest) -> HTTPResponse {
        let failure = AuthError(error)
        let browser = (try? self.browser(request)) ?? Browser(session: nil, preSession: "", newPreSession: false, language: "en")
        var response = page("error", title: "error_title", Pages.error, ["error": .text(pageText(failure, language: browser.language)), "reason": .text(failure.reason.rawValue)],
                            browser: browser, status: failure.status)
        response.logDetail = "\(failure.reason.rawValue): \(failure.detail)"
        return response
    }

    /// What a page says about a refusal: the reason's text in the page's language where the
    /// pages have it, else the error's own (English) words.
    func pageText(_ error: AuthError, language: String) -> String {
        Strings.refusal(error.reason, language: language) ?? error.publicDetail ?? error.reason.text
    }


    /// Where a sign-in on the pages goes next: back into the pending authorization, to an own
    /// page named by `return_to` (only `/account` and `/device`), or to the account page.
    func next(authorization: String?, returnTo: String?) -> String {
        if let authorization, ceremonies.openAuthorization(authorization) != nil { return "/authorize/continue?authorization=" + authorization }
        if let returnTo, Self.isOwnPage(returnTo) { return returnTo }
        return "/account"
    }

    /// `/account…` (its page, or the passkey offer) or `/device…`, and nothing that could leave
    /// the site (`//host`, `/\host`) or end the `Location` line: visible ASCII only, judged by
    /// bytes (a backslash with a combining mark after it is one Character that `contains("\\")`
    /// does not find).
    static func isOwnPage(_ path: String) -> Bool {
        isPlainPath(path) && (path == "/account" || path.hasPrefix("/account?") || path == "/device" || path.hasPrefix("/device?")
            || path == "/account/passkey-offer" || path.hasPrefix("/account/passkey-offer?"))
    }

    /// Under `limit` bytes of visible ASCII with no backslash: a path that is only what it shows.
    static func isPlainPath(_ path: String, under limit: Int = 300) -> Bool {
        path.utf8.count < limit && path.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\\") }
    }

    /// A signed-in answer: the session cookie set (and any earlier session of this browser ended).
    func signedIn(_ signIn: WebSignIn, browser: Browser, context: RequestContext) -> [(String, String)] {
        if let old = browser.session { try? ceremonies.endWebSession(old, context: context) }
        return [("Set-Cookie", cookie(sessionCookieName, signIn.cookie, maxAge: configuration.webSessionLifetime))]
    }
}
