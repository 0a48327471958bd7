import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetWeb
import SignetWebAuthn

/// The sign-in and sign-up pages (DESIGN.md, "The web"): server-rendered, each form with a
/// CSRF token, the passkey steps done by /assets/signet.js against the JSON routes here.
extension SignetService {
    static func addSignInRoutes(_ r: inout Router<SignetService>) {
        r.add("GET", "/login") { s, call in s.pageOrError(call) { try s.loginPage(call) } }
        r.add("GET", "/signup") { s, call in s.pageOrError(call) { try s.signupPage(call) } }
        // The script's calls: JSON in and out, the CSRF token in X-CSRF-Token.
        r.add("POST", "/login/options") { s, call in
            _ = try s.checkCSRF(call.request, form: nil, signedIn: false)
            return Wire.encode(try s.ceremonies.beginWebSignIn(username: nil, context: call.context))
        }
        r.add("POST", "/signup/options", needs: Needs(rateLimit: .signUpPerIP)) { s, call in
            _ = try s.checkCSRF(call.request, form: nil, signedIn: false)
            let body = try s.body(call)
            return Wire.encode(try s.ceremonies.beginWebSignUp(email: try body.member("email"), name: try body.optionalMember("name"), context: call.context))
        }
        r.add("POST", "/login/passkey") { s, call in
            let browser = try s.checkCSRF(call.request, form: nil, signedIn: false)
            let body = try s.body(call)
            guard let credential = try body.optionalCredential() else { throw AuthError.malformed("missing member \"authn_response\"") }
            let signIn = try s.ceremonies.webPasskey(authSession: try body.member("auth_session"), credential: credential,
                                                     userAgent: call.request.header("user-agent"), context: call.context)
            var response = HTTPResponse.json(200, JSONValue.object([
                "redirect": .string(s.next(authorization: try body.optionalMember("authorization"), returnTo: try body.optionalMember("return_to"))),
            ]).serializedBytes)
            response.headers += s.signedIn(signIn, browser: browser, context: call.context)
            return response
        }
        // The email code: plain forms, so the path works without the script.
        r.add("POST", "/login/code", needs: Needs(rateLimit: .passwordlessPerIP)) { s, call in s.pageOrError(call) { try s.sendCode(call, signUp: false) } }
        r.add("POST", "/signup", needs: Needs(rateLimit: .passwordlessPerIP)) { s, call in s.pageOrError(call) { try s.sendCode(call, signUp: true) } }
        r.add("POST", "/login/code/verify") { s, call in s.pageOrError(call) { try s.verifyCode(call) } }
        // A recovery code, for someone without their passkeys: plain forms too.
        r.add("GET", "/login/recovery") { s, call in s.pageOrError(call) { try s.recoveryPage(call) } }
        r.add("POST", "/login/recovery") { s, call in s.pageOrError(call) { try s.recoverySignIn(call) } }
        // An operator's link to a first passkey: the page, then the script's two calls.
        r.add("GET", "/enroll") { s, call in
            s.pageOrError(call) { s.page("enroll", title: "enroll_title", Pages.enroll, [:], browser: try s.browser(call.request), url: "/enroll") }
        }
        r.add("POST", "/enroll/options", needs: Needs(rateLimit: .signUpPerIP)) { s, call in
            _ = try s.checkCSRF(call.request, form: nil, signedIn: false)
            let (start, email) = try s.ceremonies.beginEnrollment(ticket: try s.body(call).member("ticket"))
            return .json(200, JSONValue.object(["authn_params_public_key": start.options, "auth_session": .string(start.authSession), "email": .string(email)]).serializedBytes)
        }
        r.add("POST", "/enroll/passkey") { s, call in
            let browser = try s.checkCSRF(call.request, form: nil, signedIn: false)
            let body = try s.body(call)
            guard let credential = try body.optionalCredential() else { throw AuthError.malformed("missing member \"authn_response\"") }
            let signIn = try s.ceremonies.completeEnrollment(ticket: try body.member("ticket"), authSession: try body.member("auth_session"), credential: credential,
                                                             userAgent: call.request.header("user-agent"), context: call.context)
            var response = HTTPResponse.json(200, JSONValue.object(["redirect": .string("/account?notice=added")]).serializedBytes)
            response.headers += s.signedIn(signIn, browser: browser, context: call.context)
            return response
        }
    }

    /// A page handler's refusals as the error page, never JSON.
    func pageOrError(_ call: Call, _ body: () throws -> HTTPResponse) -> HTTPResponse {
        do { return try body() } catch { return errorPage(error, request: call.request) }
    }

    /// The values every sign-in page carries: the pending authorization and where to go after.
    func carried(_ call: Call, form: JSONValue? = nil) -> (authorization: AuthorizationRequest?, sealed: String, returnTo: String) {
        let sealed = form?["authorization"]?.string ?? call.request.query["authorization"] ?? ""
        let request = ceremonies.openAuthorization(sealed)
        let returnTo = form?["return_to"]?.string ?? call.request.query["return_to"] ?? ""
        return (request, request == nil ? "" : sealed, Self.isOwnPage(returnTo) ? returnTo : "")
    }

    /// The name of the app a pending authorization is for (its ID where it has none); empty
    /// without one.
    func appName(_ request: AuthorizationRequest?) -> TemplateValue {
        .text(request.map { ceremonies.clientName($0.clientID) } ?? "")
    }

    func linkQuery(_ sealed: String, _ returnTo: String) -> String {
        var parts: [String] = []
        if !sealed.isEmpty { parts.append("authorization=" + sealed) }
        if !returnTo.isEmpty { parts.append("return_to=" + Ceremonies.formEncoded(returnTo)) }
        return parts.isEmpty ? "" : "?" + parts.joined(separator: "&")
    }

    /// The sign-in pages' way back to the app, for a pending authorization; empty without one.
    func cancelURL(_ sealed: String) -> String { sealed.isEmpty ? "" : "/authorize/cancel?authorization=" + sealed }

    func loginPage(_ call: Call, email: String? = nil, error: AuthError? = nil, status: Int = 200) throws -> HTTPResponse {
        let (request, sealed, returnTo) = carried(call)
        if call.request.query["authorization"] != nil, request == nil {
            throw AuthError.authorizationGone
        }
        let browser = try self.browser(call.request, uiLocales: request?.uiLocales)
        if browser.session != nil, request == nil, call.request.method == "GET" { return .redirect(to: returnTo.isEmpty ? "/account" : returnTo) }
        var values: [String: TemplateValue] = [
            "authorization": .text(sealed), "returnTo": .text(returnTo), "email": .text(email ?? request?.loginHint ?? ""),
            "signupURL": .text(configuration.signUp ? "/signup" + linkQuery(sealed, returnTo) : ""),
            "passkeyOnly": .bool(request?.requiresPasskey ?? false), "hardwareOnly": .bool(request?.requiresHardwareBoundPasskey ?? false),
            "cancelURL": .text(cancelURL(sealed)), "recoveryURL": .text("/login/recovery" + linkQuery(sealed, returnTo)), "appName": appName(request),
        ]
        if let error { values["error"] = .text(pageText(error, language: browser.language)); values["reason"] = .text(error.reason.rawValue) }
        // What ended the session, when the account page's change did (session ended, account deleted).
        if let notice = call.request.query["notice"], let text = Strings.table(browser.language)["notice_" + notice] { values["notice"] = .text(text) }
        return page("login", title: "signin_title", Pages.login, values, browser: browser, status: status, url: "/login" + linkQuery(sealed, returnTo))
    }

    /// `/signup`; where only operators make accounts (`signup: false`), the sign-in page saying
    /// so, the pending authorization kept, for someone who has an account after all.
    /// With `signup_domains`, the form asks for the email code at once (`codeFirst`), and an
    /// address at another domain is shown the page again with why.
    func signupPage(_ call: Call, form: JSONValue? = nil, email: String? = nil, error: AuthError? = nil) throws -> HTTPResponse {
        guard configuration.signUp else { return try loginPage(call, error: AuthError(.signupDisabled, "the sign-up page, with signup: false"), status: 403) }
        let (request, sealed, returnTo) = carried(call, form: form)
        let browser = try self.browser(call.request, uiLocales: request?.uiLocales)
        var values: [String: TemplateValue] = [
            "authorization": .text(sealed), "returnTo": .text(returnTo), "email": .text(email ?? request?.loginHint ?? ""),
            "loginURL": .text("/login" + linkQuery(sealed, returnTo)), "cancelURL": .text(cancelURL(sealed)),
            "codeFirst": .text(configuration.signUpDomains.isEmpty ? "" : "1"), "name": .text(form?["name"]?.string ?? ""), "appName": appName(request),
        ]
        if let error { values["error"] = .text(pageText(error, language: browser.language)); values["reason"] = .text(error.reason.rawValue) }
        return page("signup", title: "signup_title", Pages.signup, values, browser: browser, status: error?.status ?? 200, url: "/signup" + linkQuery(sealed, returnTo))
    }

    /// "Email me a code" (and sign-up where no passkey could be made): the code goes out, the
    /// code page follows. A refusal shows the sign-in page again with what went wrong.
    func sendCode(_ call: Call, signUp: Bool) throws -> HTTPResponse {
        let form = try body(call, form: true)
        let browser = try checkCSRF(call.request, form: form, signedIn: false)
        let (request, sealed, returnTo) = carried(call, form: form)
        let email = form["email"]?.string ?? ""
        guard !signUp || configuration.signUp else {
            return try loginPage(call, email: email, error: AuthError(.signupDisabled, "the sign-up form, with signup: false"), status: 403)
        }
        // A new account at another domain: said on the sign-up page (the policy, not whether the
        // address has an account; one that has signs in from the sign-in page).
        if signUp, let address = try? Ceremonies.emailAddress(email, member: "email"), !configuration.signUpDomainAllows(address) {
            return try signupPage(call, form: form, email: email, error: AuthError(.signupDomainNotAllowed, "the sign-up form, \(address.split(separator: "@").last ?? "") not in signup_domains"))
        }
        do {
            try ceremonies.webSendCode(email: email, context: call.context)
        } catch {
            let failure = AuthError(error)
            guard failure.reason == .malformed || failure.reason == .rateLimited || failure.reason == .connectionDisabled else { throw failure }
            return try loginPage(call, email: email, error: failure, status: failure.status)
        }
        var shown = browser
        shown.language = Strings.language(uiLocales: request?.uiLocales, acceptLanguage: call.request.header("accept-language"))
        return page("code", title: "code_title", Pages.code, ["authorization": .text(sealed), "returnTo": .text(returnTo), "email": .text(email.lowercased()),
                                                              "cancelURL": .text(cancelURL(sealed))], browser: shown)
    }

    /// The code's form: a wrong code shows the code page again; a right one signs in and offers
    /// a passkey for this device before going on.
    func verifyCode(_ call: Call) throws -> HTTPResponse {
        let form = try body(call, form: true)
        let browser = try checkCSRF(call.request, form: form, signedIn: false)
        let (request, sealed, returnTo) = carried(call, form: form)
        let email = form["email"]?.string ?? ""
        do {
            let signIn = try ceremonies.webCodeSignIn(email: email, code: form["code"]?.string ?? "", userAgent: call.request.header("user-agent"), context: call.context)
            let next = self.next(authorization: sealed, returnTo: returnTo)
            var response = HTTPResponse.redirect(to: "/account/passkey-offer?next=" + Ceremonies.formEncoded(next))
            response.headers += signedIn(signIn, browser: browser, context: call.context)
            return response
        } catch {
            let failure = AuthError(error)
            var shown = browser
            shown.language = Strings.language(uiLocales: request?.uiLocales, acceptLanguage: call.request.header("accept-language"))
            return page("code", title: "code_title", Pages.code, [
                "authorization": .text(sealed), "returnTo": .text(returnTo), "email": .text(email), "cancelURL": .text(cancelURL(sealed)),
                "error": .text(pageText(failure, language: shown.language)), "reason": .text(failure.reason.rawValue),
            ], browser: shown, status: failure.status)
        }
    }
}
