import SignetAPI
import SignetAuth
import SignetHTTP
import SignetWeb
import SignetWebAuthn

/// `/login/recovery`: sign-in with a recovery code on the pages (DESIGN.md, "Recovery, slower
/// and stricter than sign-in"), for someone who has lost their passkeys and perhaps their
/// mailbox too. A right code signs in as an email code does (a code session) and offers a
/// passkey for this device; a passkey added then opens a recovery where the account still has
/// one. The pending authorization, if any, is carried through.
extension SignetService {
    func recoveryPage(_ call: Call, form: JSONValue? = nil, email: String? = nil, error: AuthError? = nil) throws -> HTTPResponse {
        let (request, sealed, returnTo) = carried(call, form: form)
        if form == nil, call.request.query["authorization"] != nil, request == nil { throw AuthError.authorizationGone }
        let browser = try self.browser(call.request, uiLocales: request?.uiLocales)
        if browser.session != nil, request == nil, call.request.method == "GET" { return .redirect(to: returnTo.isEmpty ? "/account" : returnTo) }
        var values: [String: TemplateValue] = [
            "authorization": .text(sealed), "returnTo": .text(returnTo), "email": .text(email ?? request?.loginHint ?? ""),
            "loginURL": .text("/login" + linkQuery(sealed, returnTo)), "cancelURL": .text(cancelURL(sealed)), "appName": appName(request),
        ]
        if let error { values["error"] = .text(pageText(error, language: browser.language)); values["reason"] = .text(error.reason.rawValue) }
        return page("recovery", title: "recovery_signin_title", Pages.recovery, values, browser: browser, status: error?.status ?? 200,
                    url: "/login/recovery" + linkQuery(sealed, returnTo))
    }

    /// The form: a right code signs in and goes on to the passkey offer; anything else shows the
    /// page again with why (the address kept, never the code).
    func recoverySignIn(_ call: Call) throws -> HTTPResponse {
        let form = try body(call, form: true)
        let browser = try checkCSRF(call.request, form: form, signedIn: false)
        let (_, sealed, returnTo) = carried(call, form: form)
        let email = form["email"]?.string ?? ""
        do {
            let signIn = try ceremonies.webRecoveryCodeSignIn(email: email, code: form["code"]?.string ?? "", userAgent: call.request.header("user-agent"),
                                                              context: call.context)
            var response = HTTPResponse.redirect(to: "/account/passkey-offer?next=" + Ceremonies.formEncoded(next(authorization: sealed, returnTo: returnTo)))
            response.headers += signedIn(signIn, browser: browser, context: call.context)
            return response
        } catch {
            return try recoveryPage(call, form: form, email: String(email.prefix(254)), error: AuthError(error))
        }
    }
}
