import Foundation
import SignetAPI
import SignetAuth
import SignetServer
import SignetWebAuthn
import SignetTestSupport
import Testing

/// The hosted pages and the code flow in real headless Chromium with its WebAuthn virtual
/// authenticator, and Authlib as the relying party (`scripts/browser-check.py`), against a
/// Signet on a loopback port with a real SMTP server. The screenshots it takes at desktop and
/// phone width are kept in `.build/screenshots`.
@Suite("Hosted pages in Chromium, with Authlib as the client", .serialized)
struct WebBrowserTests {
    static let root = ProcessTests.binary.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The Python with Selenium and Authlib: `SIGNET_PYTHON`, else the venv scripts/test.sh makes.
    static let python = ProcessInfo.processInfo.environment["SIGNET_PYTHON"] ?? root.appendingPathComponent(".build/pyenv/bin/python").path

    /// scripts/test.sh sets `SIGNET_REQUIRE_BROWSER=1`: there the test runs (and fails if
    /// something is missing) instead of being skipped.
    static var available: Bool {
        if ProcessInfo.processInfo.environment["SIGNET_REQUIRE_BROWSER"] == "1" { return true }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"),
              FileManager.default.isExecutableFile(atPath: python), SMTPServer.available else { return false }
        return (try? runProcess(python, ["-c", "import selenium, authlib, requests"]).status) == 0
    }

    /// A role of two of the API's permissions, given to the account at `email` by an operator,
    /// and one given for four hours (an on-call rota's).
    static func giveRole(_ server: TestServer, email: String) throws {
        let ceremonies = server.app.service.ceremonies, context = RequestContext(remoteAddress: "local", requestID: "test")
        let user = try #require(try server.store.users(UserQuery(email: .exactly(email), limit: 1)).users.first).user
        let role = try ceremonies.createRole(name: "Teller", description: "Front desk of the branch", by: .commandLine, context: context)
        try ceremonies.changeRolePermissions(id: role.id, [Permission(audience: "https://api.signet.test", name: "transfer:funds"),
                                                           Permission(audience: "https://api.signet.test", name: "admin:users")], add: true, by: .commandLine, context: context)
        try ceremonies.changeUserRoles(userID: user.id, roleIDs: [role.id], give: true, by: .commandLine, context: context)
        let onCall = try ceremonies.createRole(name: "On call", description: nil, by: .commandLine, context: context)
        try ceremonies.changeUserRoles(userID: user.id, roleIDs: [onCall.id], give: true, until: ceremonies.nowMillis + 4 * 3_600_000, by: .commandLine, context: context)
    }

    @Test("sign-up, sign-in, email code, passkey offer, account changes, step-up and refusals, through Authlib and Chromium",
          .enabled(if: available, "needs chromium, chromium-driver and the venv with selenium and authlib that scripts/test.sh makes"))
    func browserFlows() throws {
        let smtp = try SMTPServer()
        let port = freeLoopbackPort()
        let callbackPort = freeLoopbackPort()
        let issuer = "http://localhost:\(port)"
        let server = try TestServer(.socket, smtp: smtp) { c in
            c.listenPort = port
            c.issuer = issuer
            c.rpID = "localhost"
            c.webOrigins = [issuer]
            var web = ClientConfiguration(id: "web", grants: GrantNames.all)
            web.redirectURIs = ["http://127.0.0.1/callback"]  // loopback: any port (RFC 8252 §7.3)
            web.name = "Example web app"
            web.backchannelLogoutURI = "http://127.0.0.1:\(callbackPort)/backchannel"
            c.clients.append(web)
            c.apiPermissions = ["https://api.signet.test": ["read:reports": "Read the reports", "transfer:funds": "Move money", "admin:users": ""]]
        }
        // An account an operator made, and the link that adds its first passkey (step 11).
        let operatorMade = try server.app.service.ceremonies.createUser(ManagementNewUser(email: "lin@example.test", name: "Lin", verify_email: false),
                                                                        by: .commandLine, context: RequestContext(remoteAddress: "local", requestID: "test"))
        let enrollment = try server.app.service.ceremonies.createEnrollmentLink(userID: operatorMade.user_id, lifetime: nil, by: .commandLine,
                                                                                context: RequestContext(remoteAddress: "local", requestID: "test"))
        // A second deployment whose accounts are for one domain, each starting with a code (step 12).
        let codeFirstPort = freeLoopbackPort()
        let codeFirst = try TestServer(.socket, smtp: smtp) { c in
            c.listenPort = codeFirstPort
            c.issuer = "http://localhost:\(codeFirstPort)"
            c.rpID = "localhost"
            c.webOrigins = [c.issuer]
            c.signUpDomains = ["acme.test"]
            // An organization's own look: its logo and colours (branding).
            c.branding = Branding(primaryColor: Color(hex: "#0a7d5a"), pageBackground: Color(hex: "#f7f3ea"),
                                  logo: .init(bytes: PNGSupport.logo((10, 125, 90)), contentType: "image/png"))
        }
        let shots = Self.root.appendingPathComponent(".build/screenshots")
        let script = Self.root.appendingPathComponent("scripts/browser-check.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [script, issuer, smtp.maildir.path, shots.path, "web", "http://127.0.0.1:\(callbackPort)/callback", "https://api.signet.test", "bank"]
        var environment = ProcessInfo.processInfo.environment
        environment["SIGNET_RS_SECRET"] = TestServer.bankSecret
        environment["SIGNET_ENROLLMENT_LINK"] = enrollment.ticket
        environment["SIGNET_CODE_FIRST_BASE"] = codeFirst.app.configuration.issuer
        environment["SE_OFFLINE"] = "true"  // Selenium Manager must not look for drivers online
        environment["TMPDIR"] = Scratch.directory.path  // Chromium's profile and the downloads go with the test's other files
        process.environment = environment
        let output = Pipe(), input = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = errors
        try process.run()
        var report: JSONValue?
        var buffer = Data()
        // The script asks for the clock to move (`advance N`) or for an account to be given a
        // role (`role EMAIL`), and ends with `report {...}`.
        while report == nil {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: 0x0a) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                if line.hasPrefix("advance "), let seconds = Double(line.dropFirst(8)) {
                    server.clock.advance(seconds)
                    input.fileHandleForWriting.write(Data("ok\n".utf8))
                } else if line.hasPrefix("role ") {
                    try Self.giveRole(server, email: String(line.dropFirst(5)))
                    input.fileHandleForWriting.write(Data("ok\n".utf8))
                } else if line.hasPrefix("report ") {
                    report = try StrictJSON(maxDepth: 8, maxLength: 1 << 20).parse(Array(line.dropFirst(7).utf8))
                }
            }
        }
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let r = try #require(report, "no report from browser-check.py: \(stderr.suffix(2000))")
        let log = (try? String(contentsOf: server.logFile, encoding: .utf8)) ?? ""
        #expect(r["failed"] == nil, "\(r["failed"]?.string ?? "") \(stderr.suffix(1500)) access log: \(log.split(separator: "\n").filter { $0.contains("\"path\"") }.suffix(12))")
        // Sign-up through /authorize, the code exchanged by Authlib, the id token verified.
        #expect(r["passkey_button_shown"] == .bool(true) && r["email_autocomplete"] == .string("username webauthn"))
        #expect(r["signup_state_matches"] == .bool(true) && r["signup_iss"] == .string(issuer))
        #expect(r["signup_id_token"]?["email"] == .string("ada@example.test") && r["signup_id_token"]?["name"] == .string("Ada <Lovelace>"))
        #expect(r["signup_id_token"]?["nonce_ok"] == .bool(true) && r["signup_id_token"]?["amr"] == .array([.string("pop"), .string("user")]))
        #expect(r["signup_refresh_token"] == .bool(true) && r["userinfo_email"] == .string("ada@example.test"))
        // Refusals.
        #expect(r["code_reused"] == .string("400 invalid_grant code_invalid"))
        #expect(r["reuse_revoked_refresh"] == .string("400 invalid_grant refresh_token_revoked"))
        #expect(r["sso_skips_page"] == .bool(true))
        #expect(r["wrong_verifier"] == .string("400 invalid_grant pkce_invalid"))
        #expect(r["burnt_after_wrong_verifier"] == .string("400 invalid_grant code_invalid"))
        #expect(r["wrong_redirect_uri"] == .string("400 invalid_request redirect_uri_invalid"))
        #expect(r["missing_pkce"] == .string("invalid_request"))
        // A pushed authorization request: pushed (201), then the browser with request_uri alone.
        #expect(r["par"] == .object(["pushed": .number("201"), "state_ok": .bool(true), "nonce_ok": .bool(true)]), "\(r["par"]?.serialized ?? "")")
        // The API's resource server, through Authlib's introspection: active, then not once the app signed out.
        #expect(r["introspected"] == .object(["active": .bool(true), "aud": .array([.string("https://api.signet.test")]), "client_id": .string("web"),
                                                "token_type": .string("Bearer"), "amr": .array([.string("pop"), .string("user")]),
                                                "acr": .string("phr")]), "\(r["introspected"] ?? .null)")
        #expect(r["introspected_after_sign_out"] == .object(["active": .bool(false)]), "\(r["introspected_after_sign_out"] ?? .null)")
        #expect(r["prompt_none"] == .string("login_required"))
        // acr_values=phr: the passkey alone (no autofill without the email field), the way back, then acr phr.
        #expect(r["phr_page"] == .object(["notice": .bool(true), "email_code": .bool(false), "autofill": .null]), "\(r["phr_page"] ?? .null)")
        #expect(r["phr_cancelled"] == .object(["error": .string("unmet_authentication_requirements"), "state_ok": .bool(true), "code": .null]),
                "\(r["phr_cancelled"] ?? .null)")
        #expect(r["phr_id_token_acr"] == .string("phr"))
        // The account page.
        #expect(r["account_passkeys_before"] == .number("1") && r["account_passkeys_after_add"] == .number("2"))
        // Made in headless Chromium on Linux, the virtual authenticator's AAGUID all zeros.
        #expect(r["names_after_add"] == .array([.string("Chrome · Linux"), .string("Chrome · Linux 2")]), "\(r["names_after_add"] ?? .null)")
        // Roles: no section before an operator gives one; then the role, with what it grants
        // described as tokens.permissions describes it (a name where the description is empty);
        // one given for a time says when it ends, one given for good does not.
        #expect(r["roles_before"] == .number("0"))
        let roles = r["roles"]?.array?.compactMap { $0.array?.compactMap(\.string) } ?? []
        #expect(roles.count == 2 && roles.last == ["Teller", "admin:users · Move money", ""], "\(roles)")
        let onCall = roles.first ?? []
        #expect(onCall.count == 3 && onCall[0] == "On call" && onCall[1].isEmpty && onCall[2].hasPrefix("Ends 20") && onCall[2].hasSuffix(" UTC"), "\(roles)")
        #expect(r["renamed"]?.array?.first == .string("Work laptop"))
        #expect(r["account_passkeys_after_revoke"] == .number("1"))
        #expect(r["delete_refused"] == .bool(true))
        #expect(r["email_change_step_up"] == .bool(true) && r["email_pending"] == .string("grace.hopper@example.test"))
        #expect(r["email_changed_to"] == .string("grace.hopper@example.test"))
        #expect(r["last_passkey_buttons"] == .number("0") && r["last_passkey_hint"]?.array?.count == 1, "\(r["last_passkey_hint"] ?? .null)")
        #expect(r["current_session_marked"] == .number("1") && r["current_session_actions"] == .array([.string("session-sign-out")]), "\(r["current_session_actions"] ?? .null)")
        #expect(r["app_sessions_listed"]?.int64 ?? 0 >= 1)
        #expect((r["sessions_after_revoke"]?.int64 ?? 0) == (r["account_sessions_before"]?.int64 ?? 0) - 1)
        #expect(r["events_listed"]?.int64 ?? 0 >= 3)
        // The account page keeps the passkey provider's list in step (Signal API).
        #expect(r["signals"] == .array([.string("signalAllAcceptedCredentials"), .string("signalCurrentUserDetails")]), "\(r["signals"]?.serialized ?? "")")
        #expect(r["signal_accepted_ids"] == .number("1"), "the one passkey left after the removal")
        #expect(r["step_up_prompt"] == .bool(true) && r["renamed_after_step_up"]?.array?.first == .string("Home desktop"))
        // /device from the TV's link: the code, the device and its address shown before approving.
        #expect(r["device_request_shown"]?["code"] == r["device_user_code"] && r["device_request_shown"]?["device"] == .string("Living room TV/2.1"))
        #expect(r["device_request_shown"]?["address"] == .string("127.0.0.1") && r["device_signed_in"] == .bool(true), "\(r["device_request_shown"]?.serialized ?? "")")
        // The file a browser saved from "Download your data", and the page stayed where it was.
        let export = r["export"]
        #expect(export?["format"] == .string("signet.account-export.v1") && export?["email"] == .string("ada@example.test") && export?["passkeys"]?.int64 ?? 0 >= 2
                && export?["events"]?.int64 ?? 0 > 5 && export?["url"]?.string?.hasSuffix("/account") == true, "\(export?.serialized ?? "no export")")
        #expect(r["device_done_leads_to_account"] == .bool(true))
        // Back-Channel Logout: the sign-out reached the app's back-channel URI once, as a token
        // Authlib verified; the app's session without a refresh token ended with the browser's.
        #expect(r["backchannel_logout"] == .object(["path": .string("/backchannel"), "typ": .string("logout+jwt"), "sub": .bool(true), "sid": r["backchannel_logout"]?["sid"] ?? .null,
                                                    "event": .bool(true), "nonce": .null, "lifetime": .number("120"), "jti": .bool(true), "count": .number("1")]),
                "\(r["backchannel_logout"]?.serialized ?? "none")")
        #expect(r["backchannel_logout"]?["sid"]?.string != nil && r["backchannel_failures"] == .array([]), "\(r["backchannel_failures"]?.serialized ?? "")")
        #expect(r["backchannel_userinfo_after"] == .number("401"))
        #expect(r["signout_apps"] == .array([.string("Example web app")]), "\(r["signout_apps"]?.serialized ?? "")")
        #expect(r["autofill_signin"] == .string("ada@example.test") && r["passkey_button_signin"] == .string("ada@example.test"))
        #expect(r["passkey_button_by_keyboard"] == .bool(true), "the passkey button is reached with Tab and pressed with Enter")
        // Email code, the passkey offer, a wrong code, Spanish, the error page.
        #expect(r["login_hint_prefilled"] == .string("grace@example.test"))
        #expect(r["code_signin_amr"] == .array([.string("otp")]) && r["offer_created_passkey"] == .number("1"))
        #expect(r["wrong_code_reason"] == .string("otp_invalid"))
        #expect(r["signal_unknown"] == .bool(true), "signalUnknownCredential names the passkey Signet does not know")
        #expect(r["unknown_passkey_status"] == .string("This passkey is not registered."))
        #expect(r["spanish_title"] == .string("Iniciar sesión") && r["spanish_lang"] == .string("es"))
        #expect(r["french_title"] == .string("Connexion") && r["french_current"] == .string("fr"))
        #expect(r["german_title"] == .string("Anmelden") && r["german_account_title"] == .string("Ihr Konto"))
        #expect(r["unknown_client_page"] == .string("client_unknown") && r["unknown_client_stayed"] == .bool(true))
        #expect(r["par_invalid_page"] == .string("request_uri_invalid") && r["par_invalid_text"]?.string?.contains("start again") == true, "\(r["par_invalid_text"]?.serialized ?? "")")
        // An operator's enrollment link: the address shown, the link out of the address bar, the
        // first passkey made and the browser signed in; then spent.
        #expect(r["enroll_email"] == .string("lin@example.test") && r["enroll_link_hidden"] == .bool(true), "\(r["enroll_email"] ?? .null)")
        #expect(r["login_app_name"] == .string("to continue to Example web app"), "\(r["login_app_name"] ?? .null)")
        #expect(r["enroll_signed_in"] == .string("lin@example.test") && r["enroll_passkeys"] == .number("1"), "\(r["enroll_signed_in"] ?? .null)")
        #expect(r["recovery_signed_in"] == .string("lin@example.test") && r["recovery_open"] == .bool(true) && r["recovery_passkeys"] == .number("2"),
                "\(r["recovery_signed_in"] ?? .null) \(r["recovery_open"] ?? .null) \(r["recovery_passkeys"] ?? .null)")
        #expect(r["enroll_again"]?.string?.contains("passkey already") == true, "\(r["enroll_again"] ?? .null)")
        // A passkey the server refused (its options had expired): the provider is told to forget
        // it (and Chromium's authenticator then holds none), and the server has no such passkey.
        let forgotten = r["enroll_refused_forgotten"]?.array?.compactMap { $0.string.flatMap { Base64URL.decode($0) } } ?? []
        #expect(forgotten.count == 1 && r["enroll_refused_status"]?.string?.contains("expired") == true, "\(r["enroll_refused_forgotten"] ?? .null) \(r["enroll_refused_status"] ?? .null)")
        for id in forgotten { #expect(try server.store.credential(id: id) == nil) }
        // Sign-up for one domain: the code first, a stranger's address refused, then the passkey.
        #expect(r["code_first_hint"] == .bool(true) && r["code_first_button"] == .string("Create account with an email code"), "\(r["code_first_button"] ?? .null)")
        #expect(r["brand_logo_width"] == .number("160"), "\(r["brand_logo_width"] ?? .null)")
        #expect(r["brand_button"] == .array([.string("rgb(10, 125, 90)"), .string("rgb(255, 255, 255)")]) && r["brand_page"] == .string("rgb(247, 243, 234)"),
                "\(r["brand_button"] ?? .null) \(r["brand_page"] ?? .null)")
        #expect(r["code_first_refused"] == .string("signup_domain_not_allowed"), "\(r["code_first_refused"] ?? .null)")
        #expect(r["code_first_signed_in"] == .string("ada@acme.test") && r["code_first_passkeys"] == .number("1"), "\(r["code_first_signed_in"] ?? .null)")
        // The history pages back: 15 events, then the older ones, then the newest again.
        #expect(r["newest_events_listed"] == .number("15") && r["back_to_newest"] == .number("15"), "\(r["newest_events_listed"] ?? .null)")
        #expect((r["older_events_listed"]?.int64 ?? 0) >= 1 && r["older_events_scrolled"] == .bool(true), "\(r["older_events_listed"] ?? .null)")
        #expect(r["horizontal_overflow"] == .array([]), "pages wider than the window: \(r["horizontal_overflow"]?.serialized ?? "")")
        // Dates and times stay whole on a phone: "2026-12-08 00:29 UTC", never "2026-12-" over "08".
        #expect(r["broken_dates"] == .array([]) && (r["dates_seen"]?.int64 ?? 0) > 20, "dates broken across lines: \(r["broken_dates"]?.serialized ?? "")")
        #expect(r["console_errors"] == .array([]), "\(r["console_errors"]?.serialized ?? "")")
        // axe-core's WCAG 2.x A and AA rules and best practices, over every page shot, at both widths and dark.
        #expect(r["accessibility"] == .array([]), "\(r["accessibility"]?.array?.compactMap(\.string).joined(separator: "\n") ?? "not audited")")
        for page in ["login", "signup", "code", "offer", "account", "account-older", "step-up", "login-passkey-only", "login-es", "login-fr", "login-de", "account-de", "error", "signout", "enroll", "signup-code-first", "signup-domain-refused"] {
            #expect(FileManager.default.fileExists(atPath: shots.appendingPathComponent("\(page)-phone.png").path), "no screenshot of \(page)")
        }
    }
}
