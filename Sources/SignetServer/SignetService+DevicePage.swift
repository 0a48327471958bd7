import SignetAPI
import SignetAuth
import SignetHTTP
import SignetWeb
import SignetWebAuthn

/// `/device` (RFC 8628 §3.3, `verification_uri`): a signed-in browser approves another device's
/// sign-in with a passkey.
extension SignetService {
    static func addDeviceRoutes(_ r: inout Router<SignetService>) {
        r.add("GET", "/device") { s, call in
            s.pageOrError(call) {
                let browser = try s.browser(call.request)
                let code = String((call.request.query["user_code"] ?? "").prefix(16))
                guard let session = browser.session else {
                    return .redirect(to: "/login?return_to=" + Ceremonies.formEncoded("/device" + (code.isEmpty ? "" : "?user_code=" + Ceremonies.formEncoded(code))))
                }
                guard !code.isEmpty else { return s.devicePage(browser: browser, values: ["userCode": .text("")]) }
                return s.deviceReview(code, session: session, browser: browser, request: call.request)
            }
        }
        r.add("POST", "/device") { s, call in
            s.pageOrError(call) {
                let form = try s.body(call, form: true)
                let (session, browser) = try s.signedInForm(call, form: form)
                let code = form["user_code"]?.string ?? ""
                // The first step shows who asks before anything is decided.
                if form["decision"]?.string == "review" { return s.deviceReview(code, session: session, browser: browser, request: call.request) }
                let approve = form["decision"]?.string != "deny"
                do {
                    try s.ceremonies.webDecideDevice(userCode: code, approve: approve, session: session, context: call.context)
                } catch let error as AuthError where error.reason == .stepUpRequired {
                    return s.devicePage(browser: browser, values: [
                        "userCode": .text(code), "stepUp": .bool(true),
                        "pendingFields": .list([["field": .text("user_code"), "value": .text(code)], ["field": .text("decision"), "value": .text(approve ? "approve" : "deny")]]),
                    ])
                } catch let error as AuthError where error.status < 500 {
                    return s.devicePage(browser: browser, values: ["userCode": .text(code), "error": .text(s.pageText(error, language: browser.language)),
                                                                   "reason": .text(error.reason.rawValue)], status: error.status)
                }
                let strings = Strings.table(browser.language)
                // Decided: the outcome and the way back, not another code form.
                return s.devicePage(browser: browser, values: ["notice": .text(strings[approve ? "device_done" : "device_denied"] ?? ""), "done": .bool(true)])
            }
        }
    }

    /// The second step: which app, device and address asked, and when, with the approve and deny
    /// buttons; an unknown or expired code is the first step again, with the reason.
    func deviceReview(_ code: String, session: WebSession, browser: Browser, request: HTTPRequest) -> HTTPResponse {
        let strings = Strings.table(browser.language)
        do {
            let asking = try ceremonies.webDeviceRequest(userCode: code, session: session)
            // `2026-12-03T13:28:11.924Z` as `2026-12-03 13:28 UTC`.
            let asked = asking["requested_at"]?.string.map { "\($0.prefix(10)) \($0.dropFirst(11).prefix(5)) UTC" } ?? ""
            return devicePage(browser: browser, values: [
                "request": .bool(true), "code": .text(Ceremonies.shownUserCode(Ceremonies.normalizedUserCode(code))),
                "app": .text(asking["client_name"]?.string ?? asking["client_id"]?.string ?? ""),
                "device": .text(asking["user_agent"]?.string ?? strings["device_unnamed"] ?? ""),
                "address": .text(asking["address"]?.string ?? ""), "asked": .text(asked),
            ])
        } catch let error as AuthError where error.status < 500 {
            return devicePage(browser: browser, values: ["userCode": .text(code), "error": .text(pageText(error, language: browser.language)),
                                                         "reason": .text(error.reason.rawValue)], status: error.status)
        } catch {
            return errorPage(error, request: request)
        }
    }

    func devicePage(browser: Browser, values: [String: TemplateValue], status: Int = 200) -> HTTPResponse {
        page("device", title: "device_title", Pages.device, values, browser: browser, status: status, signedIn: true, url: "/device")
    }
}
