import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetWeb
import SignetWebAuthn

/// `/account` and the passkey offer (DESIGN.md, "The web"): every change is made by the same
/// account ceremony as `/me/*`, with the SSO session as its principal, so step-up and the
/// recovery hold apply alike; a change that needs a fresh passkey check shows the step-up
/// prompt and is made after it.
extension SignetService {
    static func addAccountRoutes(_ r: inout Router<SignetService>) {
        r.add("GET", "/account") { s, call in s.pageOrError(call) { try s.accountPage(call) } }
        r.add("GET", "/account/passkey-offer") { s, call in s.pageOrError(call) { try s.offerPage(call) } }
        // The account's data as a file (the page's "Download your data"): after a fresh sign-in
        // of any kind, as for the app's call; a stale session steps up first, and the page then
        // sends the form again, whose answer the browser saves.
        r.add("POST", "/account/export") { s, call in
            s.accountForm(call, codeAllowed: true) { _, session, _ in try s.exportAnswer(s.ceremonies.accountExport(session.principal, context: call.context)) }
        }
        // The script's calls.
        r.add("POST", "/account/passkeys/options") { s, call in
            let session = try s.signedInCall(call)
            try s.ceremonies.requireFreshAuthentication(session.principal, allowCode: true)
            let conditional = try s.body(call)["conditional"] == .bool(true)
            return Wire.encode(try s.ceremonies.beginAddPasskey(session.principal, conditional: conditional))
        }
        r.add("POST", "/account/passkeys") { s, call in
            // The step-up is the ceremony's, as of the options' moment.
            let session = try s.signedInCall(call)
            return try Wire.encode(s.ceremonies.addPasskey(AddPasskeyRequest(wire: s.body(call)), principal: session.principal, context: call.context,
                                                           userAgent: call.request.header("user-agent")), status: 201)
        }
        r.add("POST", "/account/step-up/options") { s, call in
            Wire.encode(try s.ceremonies.beginWebStepUp(try s.signedInCall(call), context: call.context))
        }
        r.add("POST", "/account/step-up") { s, call in
            let session = try s.signedInCall(call)
            let body = try s.body(call)
            guard let credential = try body.optionalCredential() else { throw AuthError.malformed("missing member \"authn_response\"") }
            try s.ceremonies.webStepUp(session, authSession: try body.member("auth_session"), credential: credential, context: call.context)
            return .json(200, Array("{}".utf8))
        }
        // The page's forms.
        r.add("POST", "/account/passkeys/{id}/rename") { s, call in
            s.change(call, notice: "renamed") { session, form in
                _ = try s.ceremonies.renamePasskey(id: call.parameter("id"), RenameRequest(name: form["name"]?.string ?? ""), principal: session.principal)
            }
        }
        r.add("POST", "/account/passkeys/{id}/revoke") { s, call in
            s.change(call, notice: "revoked") { session, _ in try s.ceremonies.revokePasskey(id: call.parameter("id"), principal: session.principal, context: call.context) }
        }
        r.add("POST", "/account/device-keys/{id}/revoke") { s, call in
            s.change(call, notice: "device_key_revoked") { session, _ in
                try s.ceremonies.revokeDeviceKey(id: call.parameter("id"), principal: session.principal, context: call.context)
            }
        }
        r.add("POST", "/account/email-sign-in") { s, call in
            s.change(call, notice: "email_sign_in") { session, form in
                guard let enabled = ["true": true, "false": false][form["enabled"]?.string ?? ""] else { throw AuthError.malformed("enabled must be true or false") }
                _ = try s.ceremonies.setEmailSignIn(EmailSignIn(enabled: enabled), principal: session.principal, context: call.context)
            }
        }
        r.add("POST", "/account/sessions/revoke-others") { s, call in
            s.change(call, notice: "sessions_revoked") { session, _ in _ = try s.ceremonies.revokeOtherSessions(session.principal, context: call.context) }
        }
        r.add("POST", "/account/sessions/{id}/revoke") { s, call in
            s.change(call, notice: "session_revoked") { session, _ in
                try s.ceremonies.revokeSession(id: call.parameter("id"), principal: session.principal, context: call.context)
            }
        }
        r.add("POST", "/account/recovery/cancel") { s, call in
            s.change(call, notice: "recovery_cancelled", fresh: false) { session, _ in try s.ceremonies.cancelRecovery(session.principal, context: call.context) }
        }
        r.add("POST", "/account/recovery-codes") { s, call in
            s.accountForm(call, keep: []) { _, session, browser in
                let codes = try s.ceremonies.createRecoveryCodes(session.principal, context: call.context)
                return try s.accountPage(call, browser: browser, session: session, extra: ["newCodes": .bool(true), "codes": .list(codes.codes.map { ["code": .text($0)] })])
            }
        }
        r.add("POST", "/account/name") { s, call in
            s.change(call, notice: "name_changed", fresh: false) { session, form in
                _ = try s.ceremonies.rename(session.principal, name: form["name"]?.string, context: call.context)
            }
        }
        // A new address: after the step-up a code goes there, and the page asks for it.
        r.add("POST", "/account/email") { s, call in
            s.accountForm(call, keep: ["email"]) { form, session, browser in
                let started = try s.ceremonies.startEmailChange(session.principal, email: form["email"]?.string ?? "", context: call.context)
                return try s.accountPage(call, browser: browser, session: session, extra: ["emailPending": .text(started.email)])
            }
        }
        r.add("POST", "/account/email/verify") { s, call in
            s.accountForm(call, fresh: false) { form, session, browser in
                let email = form["email"]?.string ?? ""
                do {
                    _ = try s.ceremonies.finishEmailChange(session.principal, email: email, code: form["code"]?.string ?? "", context: call.context)
                    return .redirect(to: "/account?notice=email_changed")
                } catch let error as AuthError where error.reason == .otpInvalid {
                    // A mistyped code: the same question again, saying so.
                    return try s.accountPage(call, browser: browser, session: session, status: error.status,
                                             extra: ["emailPending": .text(email), "emailError": .text(s.pageText(error, language: browser.language))])
                } catch let error as AuthError where error.reason == .userExists {
                    // Sign-up's wording ("sign in with its passkey") does not fit here.
                    return try s.accountPage(call, browser: browser, session: session, status: error.status,
                                             extra: ["emailTaken": .text(Strings.table(browser.language)["email_taken"] ?? "")])
                }
            }
        }
        // Erasing the account: the address typed again guards against a slip, then the same
        // step-up as any change; what is left is the sign-in page, saying so.
        r.add("POST", "/account/delete") { s, call in
            s.change(call, notice: "account_deleted", unless: { session, form, browser in
                // The address as accounts are keyed: case, spaces and Unicode spelling aside.
                guard (try? Ceremonies.emailAddress(form["confirm"]?.string ?? "", member: "confirm")) != session.user.email else { return nil }
                return try s.accountPage(call, browser: browser, session: session, status: 400, extra: ["deleteError": .bool(true)])
            }) { session, _ in try s.ceremonies.deleteAccount(session.principal, context: call.context) }
        }
        r.add("POST", "/logout") { s, call in
            s.pageOrError(call) {
                let form = try s.body(call, form: true)
                // Without a CSRF token this is not the sign-out page's own form but a client's
                // RP-initiated logout, which may come as a POST too (RP-Initiated Logout 1.0 §2).
                if form["csrf"] == nil, call.request.header("x-csrf-token") == nil, let members = form.object {
                    // A form value that reads as JSON (`state=42`) was taken as JSON; its text is the parameter.
                    return s.logout(call, members.reduce(into: [:]) { $0[$1.key] = $1.value.string ?? $1.value.serialized })
                }
                let (session, _) = try s.signedInForm(call, form: form)
                // From the confirmation of an RP-initiated logout: the client's registered page.
                let target = try s.ceremonies.postLogout(
                    idTokenHint: nil, clientID: form["client_id"]?.string.flatMap { $0.isEmpty ? nil : $0 },
                    redirectURI: form["post_logout_redirect_uri"]?.string.flatMap { $0.isEmpty ? nil : $0 }, state: form["state"]?.string.flatMap { $0.isEmpty ? nil : $0 }).target
                try s.ceremonies.endWebSession(session, context: call.context)
                var response = HTTPResponse.redirect(to: target ?? "/login")
                response.headers.append(("Set-Cookie", s.cookie(s.sessionCookieName, "", maxAge: 0)))
                return response
            }
        }
    }

    /// The SSO session of a script call, whose CSRF token must be bound to it.
    func signedInCall(_ call: Call) throws -> WebSession {
        let browser = try checkCSRF(call.request, form: nil, signedIn: true)
        guard let session = browser.session else { throw AuthError(.tokenMissing, "no SSO session", publicDetail: "sign in first") }
        return session
    }

    /// The SSO session of a form post, whose CSRF token must be bound to it.
    func signedInForm(_ call: Call, form: JSONValue) throws -> (WebSession, Browser) {
        let browser = try checkCSRF(call.request, form: form, signedIn: true)
        guard let session = browser.session else { throw AuthError(.tokenMissing, "no SSO session", publicDetail: "Your session ended; sign in again.") }
        return (session, browser)
    }

    /// A form of the account page answered with the page itself: `unless` may answer first,
    /// before the step-up (the page again, saying why); then behind step-up (a stale session
    /// sees the prompt, with the `keep` fields, all of them when `nil`, sent again after it);
    /// a refusal below 500 shows the page saying why.
    func accountForm(_ call: Call, keep: [String]? = nil, fresh: Bool = true, codeAllowed: Bool = false,
                     unless: ((WebSession, JSONValue, Browser) throws -> HTTPResponse?)? = nil,
                     _ body: (JSONValue, WebSession, Browser) throws -> HTTPResponse) -> HTTPResponse {
        pageOrError(call) {
            let form = try self.body(call, form: true)
            let (session, browser) = try signedInForm(call, form: form)
            if let answer = try unless?(session, form, browser) { return answer }
            do {
                if fresh { try ceremonies.requireFreshAuthentication(session.principal, allowCode: codeAllowed) }
                return try body(form, session, browser)
            } catch let error as AuthError where error.reason == .stepUpRequired {
                let fields = keep.map { $0.map { ($0, form[$0]?.string ?? "") } }
                    ?? (form.object ?? [:]).filter { $0.key != "csrf" }.compactMap { key, value in value.string.map { (key, $0) } }
                return try accountPage(call, browser: browser, session: session, stepUp: (call.request.path, fields))
            } catch let error as AuthError where error.status < 500 && error.reason != .csrfInvalid {
                return try accountPage(call, browser: browser, session: session, error: error, status: error.status)
            }
        }
    }

    /// A change from the account page's forms (``accountForm(_:keep:fresh:codeAllowed:unless:_:)`` with the
    /// whole form kept), then back to the page with a notice, or to the sign-in page when the
    /// change ended this browser's own session.
    func change(_ call: Call, notice: String, fresh: Bool = true, unless: ((WebSession, JSONValue, Browser) throws -> HTTPResponse?)? = nil,
                _ body: (WebSession, JSONValue) throws -> Void) -> HTTPResponse {
        accountForm(call, fresh: fresh, unless: unless) { form, session, _ in
            try body(session, form)
            if try ceremonies.webSession(cookie: Self.cookies(call.request.header("cookie"))[sessionCookieName]) == nil {
                var response = HTTPResponse.redirect(to: "/login?notice=" + notice)
                response.headers.append(("Set-Cookie", cookie(sessionCookieName, "", maxAge: 0)))
                return response
            }
            return .redirect(to: "/account?notice=" + notice)
        }
    }

    func offerPage(_ call: Call) throws -> HTTPResponse {
        let browser = try self.browser(call.request)
        // Signed out (a password manager's link, `passkey-endpoints`): the offer after the sign-in.
        guard browser.session != nil else { return .redirect(to: "/login?return_to=" + Ceremonies.formEncoded("/account/passkey-offer")) }
        // After the offer comes another page, never the offer again.
        let asked = call.request.query["next"] ?? "/account"
        let next = asked.hasPrefix("/account/passkey-offer") ? "/account" : asked
        // A continuation carries a sealed authorization request, longer than any page's address;
        // the request line's own limit bounds it.
        let safe = (next.hasPrefix("/authorize/continue?") && Self.isPlainPath(next, under: .max)) || Self.isOwnPage(next) ? next : "/account"
        return page("offer", title: "offer_title", Pages.offer, ["next": .text(safe)], browser: browser, signedIn: true, url: "/account/passkey-offer")
    }

    /// ``Ceremonies/accountExport(_:context:)``'s document as a file to save, never cached.
    func exportAnswer(_ export: AccountExport) throws -> HTTPResponse {
        var response = try Wire.encode(export)
        response.headers.append(("Content-Disposition", "attachment; filename=\"account-data.json\""))
        return response
    }

    /// How many security events an account page shows at a time.
    static let eventsShown = 15

    /// The account page: passkeys, device keys, sessions (this one marked), roles (when it has
    /// some), recovery codes, the open recovery, recent security events.
    func accountPage(_ call: Call, browser: Browser? = nil, session: WebSession? = nil, error: AuthError? = nil, status: Int = 200,
                     stepUp: (action: String, fields: [(String, String)])? = nil, extra: [String: TemplateValue] = [:]) throws -> HTTPResponse {
        let browser = try browser ?? self.browser(call.request)
        guard let session = session ?? browser.session else { return .redirect(to: "/login?return_to=%2Faccount") }
        let principal = session.principal
        let strings = Strings.table(browser.language)
        let when = { (ms: Int64?) in ms.map { Self.timeText($0) } ?? (strings["never"] ?? "") }
        let keys = try ceremonies.accountKeys(principal)
        let listed = keys.passkeys
        // The last passkey cannot go (last_credential): no button that can only fail.
        let passkeys = listed.map { p -> [String: TemplateValue] in
            let provider = p.authenticator ?? strings["unknown_provider"] ?? ""
            return ["id": .text(p.id), "name": .text(p.name ?? ""), "label": .text(p.name ?? provider), "provider": .text(provider),
                    "removable": .bool(listed.count > 1), "allowed": .bool(p.allowed != false),
                    "synced": .text(strings[p.hardware_bound == true ? "hardware_bound" : p.backup_state ? "synced" : "device_bound"] ?? ""),
                    "created": .text(when(p.created_at * 1000)),
                    "lastUsed": .text(when(p.last_used_at.map { $0 * 1000 }))]
        }
        let deviceKeys = keys.deviceKeys.map { k -> [String: TemplateValue] in
            ["id": .text(k.id), "label": .text(k.name ?? k.device_id), "platform": .text(k.platform), "created": .text(when(k.created_at * 1000)),
             "lastUsed": .text(when(k.last_used_at.map { $0 * 1000 }))]
        }
        let sessions = try ceremonies.accountSessions(principal)
        let rows: [[String: TemplateValue]] = sessions.web.map { w in
            ["id": .text(w.id), "label": .text(Ceremonies.browserName(w.userAgent)), "kind": .text(strings["browser"] ?? ""), "current": .bool(w.id == session.row.id),
             "created": .text(when(w.createdAt)), "lastSeen": .text(when(w.lastSeenAt)), "address": .text(w.remote)]
        } + sessions.apps.map { a in
            ["id": .text(a.id), "label": .text(ceremonies.appSessionName(a)), "kind": .text(strings["app"] ?? ""), "current": .bool(false),
             "created": .text(when(a.createdAt)), "lastSeen": .text(when(a.updatedAt)), "address": .text(a.initial.remote ?? "")]
        }
        // The events a person would call security events (``Ceremonies/ownHistory(_:take:before:names:)``), in their words,
        // 15 at a time: `events_before` (an event's ID) is the page of older ones, and one more read says whether there is one.
        let before = try Self.eventID(call.request.query["events_before"], "events_before")
        let history = try ceremonies.ownHistory(principal, take: Self.eventsShown + 1, before: before, names: keys.names)
        let older = history.count > Self.eventsShown ? history[Self.eventsShown - 1].id : ""
        let events = history.prefix(Self.eventsShown).compactMap { e -> [String: TemplateValue]? in
            guard let text = strings["event_" + e.type] else { return nil }
            // A refusal in its own words ("Passkey not added", not "Passkey added · refused");
            // a kind without them says "refused" after its time, unless it is only ever a refusal.
            let refused = e.outcome != "success"
            let refusal = refused ? strings["event_\(e.type)_refused"] : nil
            let marked = refused && refusal == nil && !(AuditKind(rawValue: e.type).map(AuditKind.failuresOnly.contains) ?? false)
            // The app it happened in, by its name; the pages' own events name none, nor does an
            // operator's change (its client is the operator's tool, as its address is theirs).
            let app = e.by_operator || e.client_id == Ceremonies.webClient.id ? nil : e.client_name
            return ["kind": .text(refusal ?? text), "refused": .bool(refused), "what": .text(e.key_name ?? ""), "at": .text(when(e.at * 1000)), "app": .text(app ?? ""),
                    "outcome": .text(marked ? strings["failed"] ?? "" : ""), "address": .text(e.address ?? "")]
        }
        // What each grants, in the setting's descriptions (a name where one is empty).
        let roles = try ceremonies.accountRoles(principal).map { r -> [String: TemplateValue] in
            let grants = r.permissions.map { p in configuration.apiPermissions[p.audience]?[p.name].flatMap { $0.isEmpty ? nil : $0 } ?? p.name }
            return ["name": .text(r.role.name), "description": .text(r.role.description ?? ""), "grants": .text(grants.joined(separator: " · ")),
             "until": .text(r.role.expiresAt.map(Self.timeText) ?? "")]
        }
        let codes = try ceremonies.recoveryCodesStatus(principal)
        let emailSignIn = try ceremonies.emailSignIn(principal).enabled
        let recovery = try ceremonies.recovery(principal).recovery
        var values: [String: TemplateValue] = [
            "email": .text(session.user.email), "displayName": .text(session.user.name ?? session.user.email), "accountName": .text(session.user.name ?? ""),
            "userHandle": .text(Base64URL.encode(session.user.handle)), "passkeys": .list(passkeys), "deviceKeys": .list(deviceKeys), "sessions": .list(rows), "otherSessions": .bool(rows.count > 1),
            "sessionsTruncated": .bool(sessions.truncated), "passkeyLimit": .bool(listed.count >= configuration.maxPasskeys),
            "roles": .list(roles), "hasRoles": .bool(!roles.isEmpty),
            // The switch needs a passkey to confirm it: an account without one is not offered it.
            "emailSignIn": .bool(emailSignIn), "emailCodes": .bool(configuration.email.canSend && (!listed.isEmpty || !emailSignIn)),
            "events": .list(events), "olderEvents": .text(older), "eventsPaged": .bool(before != nil), "codesLeft": .text(codes.remaining > 0 ? String(codes.remaining) : ""),
            "recoveryOpen": .bool(recovery != nil), "recoveryUntil": .text(recovery.map { when($0.hold_until * 1000) } ?? ""),
        ]
        if let notice = call.request.query["notice"], let text = strings["notice_" + notice] { values["notice"] = .text(text) }
        if let error { values["error"] = .text(pageText(error, language: browser.language)); values["reason"] = .text(error.reason.rawValue) }
        if let stepUp {
            values["stepUp"] = .bool(true)
            values["pendingAction"] = .text(stepUp.action)
            values["pendingFields"] = .list(stepUp.fields.map { ["field": .text($0.0), "value": .text($0.1)] })
        } else if call.request.query["step_up"] == "1" {
            values["stepUp"] = .bool(true)
        }
        values.merge(extra) { $1 }
        return page("account", title: "account_title", Pages.account, values, browser: browser, status: status, signedIn: true, url: "/account")
    }

    /// `2026-12-01 16:09 UTC`: ISO 8601's form to the minute (a format style is a value, so one
    /// serves every page; a DateFormatter per timestamp cost more than the page's rendering).
    static let timeStyle = Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC") ?? .current)
    static func timeText(_ ms: Int64) -> String {
        let iso = Date(timeIntervalSince1970: Double(ms) / 1000).formatted(timeStyle)  // 2026-12-01T16:09:27Z
        return iso.prefix(10) + " " + iso.dropFirst(11).prefix(5) + " UTC"
    }

}
