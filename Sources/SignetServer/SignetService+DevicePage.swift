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
                guard browser.session != nil else {
                    return .redirect(to: "/login?return_to=" + Ceremonies.formEncoded("/device" + (code.isEmpty ? "" : "?user_code=" + Ceremonies.formEncoded(code))))
                }
                return s.devicePage(browser: browser, values: ["userCode": .text(code)])
            }
        }
        r.add("POST", "/device") { s, call in
            s.pageOrError(call) {
                let form = try s.body(call, form: true)
                let (session, browser) = try s.signedInForm(call, form: form)
                let code = form["user_code"]?.string ?? ""
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
                return s.devicePage(browser: browser, values: ["notice": .text(strings[approve ? "device_done" : "device_denied"] ?? "")])
            }
        }
    }

    func devicePage(browser: Browser, values: [String: TemplateValue], status: Int = 200) -> HTTPResponse {
        page("device", title: "device_title", Pages.device, values, browser: browser, status: status, signedIn: true, url: "/device")
    }
}
