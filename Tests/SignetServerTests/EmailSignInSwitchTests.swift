import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetTestSupport
import SignetWebAuthn
import Testing

/// `GET`/`PUT /me/email-sign-in` and the account page's switch: an owner who keeps passkeys
/// turns sign-in by email code off, so that whoever reads the mailbox cannot sign in with a code.
@Suite(.enabled(if: SMTPServer.available, "needs python3-aiosmtpd (scripts/bootstrap.sh installs it)"))
struct EmailSignInSwitchTests {
    @Test("off: no code goes out and none signs in, also one mailed before; the answers stay alike; recovery codes still sign in; on again: codes work")
    func offAndOn() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let account = try SignedIn(server, email: "careful@signet.test")
        #expect(try account.call("GET", "/me/email-sign-in").json == .object(["enabled": .bool(true)]))

        // A code asked for while it is still on, not yet typed.
        try server.startEmail("careful@signet.test")
        let early = try smtp.code(for: "careful@signet.test")

        // Without a way back in besides this one passkey: refused, nothing changes.
        let alone = try account.call("PUT", "/me/email-sign-in", .object(["enabled": .bool(false)]))
        #expect(alone.status == 409 && alone.json["reason"] == .string("backup_method_required"), "\(alone.json.serialized)")
        #expect(try account.call("GET", "/me/email-sign-in").json["enabled"] == .bool(true))
        let codes = try account.call("POST", "/me/recovery-codes").json["codes"]?.array?.compactMap(\.string) ?? []
        #expect(codes.count == 10)
        let off = try account.call("PUT", "/me/email-sign-in", .object(["enabled": .bool(false)]))
        #expect(off.status == 200 && off.json == .object(["enabled": .bool(false)]), "\(off.json.serialized)")
        #expect(eventually { smtp.messages(to: "careful@signet.test").contains { $0.kind == "email_sign_in_off" } })

        // The code mailed before no longer signs in.
        #expect(try server.signIn(email: "careful@signet.test", code: early).json["reason"] == .string("otp_invalid"))
        // A new start answers as for anyone, and mails nothing.
        server.clock.advance(31)
        let sent = smtp.messages(to: "careful@signet.test").count
        let started = try server.startEmail("careful@signet.test")
        let stranger = try server.startEmail("nobody-here@signet.test")
        #expect(started.status == 200 && stranger.status == 200 && Set(started.json.object?.keys.map { $0 } ?? []) == Set(stranger.json.object?.keys.map { $0 } ?? []))
        Thread.sleep(forTimeInterval: 1.5)
        #expect(smtp.messages(to: "careful@signet.test").count == sent)
        let id = try #require(try server.store.user(email: "careful@signet.test")?.id)
        let audited = try #require(try server.store.auditEvents(limit: 30).first { $0.kind == "otp_sent" && $0.userID == id })
        #expect(audited.detail?.contains("sign-in by email code is off") == true)
        // A recovery code still signs in; the passkey too.
        let recovered = try server.post("/oauth/token", .object([
            "grant_type": .string(GrantNames.recoveryCode), "client_id": .string("app"), "username": .string("careful@signet.test"), "recovery_code": .string(codes[0]),
        ]))
        #expect(recovered.status == 200, "\(recovered.json.serialized)")
        #expect(try account.phone.signIn()["access_token"] != nil)

        // A code session cannot turn it back on: a passkey check first.
        let codeSession = SignedIn(server, phone: account.phone, access: try #require(recovered.json["access_token"]?.string))
        #expect(try codeSession.call("PUT", "/me/email-sign-in", .object(["enabled": .bool(true)])).json["reason"] == .string("step_up_required"))
        let on = try account.call("PUT", "/me/email-sign-in", .object(["enabled": .bool(true)]))
        #expect(on.status == 200 && on.json["enabled"] == .bool(true))
        server.clock.advance(31)
        try server.startEmail("careful@signet.test")
        let code = try smtp.code(for: "careful@signet.test", after: 1)
        #expect(try server.signIn(email: "careful@signet.test", code: code).status == 200)
        let kinds = try server.store.auditEvents(limit: 50).map(\.kind)
        #expect(kinds.contains("email_sign_in_off") && kinds.contains("email_sign_in_on"))
        #expect(eventually { smtp.messages(to: "careful@signet.test").contains { $0.kind == "email_sign_in_on" } })
    }

    @Test("refusals: a bad body, a stale sign-in, no token; two passkeys are way back enough; the account page's switch steps up and says so")
    func refusalsAndPage() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let account = try SignedIn(server, email: "switch@signet.test")
        for body: JSONValue in [.object([:]), .object(["enabled": .string("false")]), .object(["enabled": .bool(false), "x": .null]), .array([])] {
            #expect(try account.call("PUT", "/me/email-sign-in", body).json["reason"] == .string("malformed"), "\(body.serialized)")
        }
        #expect(try server.send("PUT", "/me/email-sign-in", body: Array(#"{"enabled": false}"#.utf8)).status == 401)
        #expect(try account.addPasskey(SoftwareAuthenticator()).status == 201)
        server.clock.advance(Double(server.app.configuration.stepUpMaxAge + 1))
        #expect(try account.call("PUT", "/me/email-sign-in", .object(["enabled": .bool(false)])).json["reason"] == .string("step_up_required"))
        #expect(try account.call("GET", "/me/email-sign-in").json["enabled"] == .bool(true))

        // The page, in a browser with a fresh passkey sign-in: two passkeys are enough.
        let browser = WebBrowser(server, authenticator: account.phone.authenticator)
        #expect(try browser.signIn().status == 200)
        var page = try browser.page("/account").html
        #expect(page.contains(#"data-testid="email-sign-in" data-enabled="true""#) && page.contains("Turn off sign-in by email"))
        let unclear = try browser.form("/account/email-sign-in", [("enabled", "maybe")])
        #expect(unclear.status == 400 && unclear.html.contains(#"data-reason="malformed""#), "\(unclear.status)")
        #expect(try account.call("GET", "/me/email-sign-in").json["enabled"] == .bool(true))
        let done = try browser.form("/account/email-sign-in", [("enabled", "false")])
        #expect(done.status == 303 && done.response.headers["location"] == "/account?notice=email_sign_in", "\(done.html.prefix(400))")
        page = try browser.page("/account?notice=email_sign_in").html
        #expect(page.contains(#"data-enabled="false""#) && page.contains("Turn on sign-in by email") && page.contains("Sign-in by email turned off"))
        #expect(try account.call("GET", "/me/email-sign-in").json["enabled"] == .bool(false))
        // Old by now: the switch asks for the passkey first and changes nothing.
        server.clock.advance(Double(server.app.configuration.stepUpMaxAge + 1))
        _ = try browser.page("/account")
        let stale = try browser.form("/account/email-sign-in", [("enabled", "true")])
        #expect(stale.status == 200 && stale.html.contains("data-testid=\"step-up-prompt\""))
        #expect(try account.call("GET", "/me/email-sign-in").json["enabled"] == .bool(false))
    }

    @Test("an operator turns it back on for an owner who lost the way back (PATCH email_sign_in), audited, and the address is told")
    func byOperator() throws {
        let smtp = try SMTPServer()
        let server = try TestServer.withOperators(smtp: smtp)
        let account = try SignedIn(server, email: "locked@signet.test")
        _ = try account.call("POST", "/me/recovery-codes")
        #expect(try account.call("PUT", "/me/email-sign-in", .object(["enabled": .bool(false)])).status == 200)
        let id = try #require(try server.store.user(email: "locked@signet.test")?.id)
        let token = try server.managementToken()
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: token, .object(["email_sign_in": .string("yes")])).json["reason"] == .string("malformed"))
        let patched = try server.api("PATCH", "/api/v2/users/\(id)", token: token, .object(["email_sign_in": .bool(true)]))
        #expect(patched.status == 200, "\(patched.json.serialized)")
        #expect(try account.call("GET", "/me/email-sign-in").json["enabled"] == .bool(true))
        let audited = try #require(try server.store.auditEvents(limit: 20).first { $0.kind == "admin_user_updated" })
        #expect(audited.detail == "changed: email_sign_in on" && audited.clientID == "ops")
        #expect(eventually { smtp.messages(to: "locked@signet.test").contains { $0.kind == "email_sign_in_on" } })
    }
}
