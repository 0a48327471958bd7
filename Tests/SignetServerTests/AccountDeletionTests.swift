import SignetAuth
import Foundation
import SignetAPI
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// `DELETE /me` and the account page's "Delete account": the owner erases the account.
@Suite(.enabled(if: SMTPServer.available, "needs python3-aiosmtpd (scripts/bootstrap.sh installs it)"))
struct AccountDeletionTests {
    @Test("the owner erases the account after a fresh passkey check: every way in ends, the audit keeps a pseudonym, a last notice goes out")
    func erase() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let phone = Phone(server)
        let tokens = try phone.signUp(email: "leaving@signet.test")
        let account = SignedIn(server, phone: phone, access: try #require(tokens["access_token"]?.string))
        let user = try #require(try server.store.user(email: "leaving@signet.test"))
        try account.enroll(try SoftwareDeviceKey(deviceID: "phone"))
        #expect(try account.call("POST", "/me/recovery-codes").status == 201)
        // A pending move to another address: its code is kept under that address, not the account's.
        #expect(try account.startEmailChange("leaving-next@signet.test").status == 202)
        #expect(server.counts["email_codes"] == 1)

        let (status, json) = try account.call("DELETE", "/me")
        #expect(status == 204, "\(json.serialized)")
        #expect(try server.store.user(id: user.id) == nil && server.store.credentials(userID: user.id).isEmpty && server.store.deviceKeys(userID: user.id).isEmpty)
        // Every way in ends: the access token, the refresh token, the passkey.
        let me = try account.call("GET", "/me/passkeys")
        #expect(me.status == 401 && me.json["reason"] == .string("token_invalid"), "\(me.json.serialized)")
        let refreshed = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(tokens["refresh_token"]),
        ]))
        #expect(refreshed.status == 400 && refreshed.json["reason"] == .string("refresh_token_unknown"), "\(refreshed.json.serialized)")
        let (session, credential, _) = try phone.startSignIn()
        #expect(try phone.exchange(session: session, credential: credential).json["reason"] == .string("credential_unknown"))
        // The audit trail keeps the events under a pseudonym, none under the ID.
        let events = try server.store.auditEvents(limit: 50)
        #expect(!events.contains { $0.userID == user.id })
        let deleted = try #require(events.first { $0.kind == "account_deleted" })
        #expect(deleted.outcome == "success" && deleted.userID?.hasPrefix("deleted:") == true)
        #expect(events.filter { $0.userID == deleted.userID }.count > 1, "the account's earlier events read together under the pseudonym")
        // A last message to the address, and nothing of the account is left in the database file.
        #expect(eventually { smtp.messages(to: "leaving@signet.test").contains { $0.kind == "account_deleted" } })
        #expect(eventually { server.counts["outbox"] == 0 } && server.counts["email_codes"] == 0)
        // The address is free again: a new account, a new ID.
        let again = try Phone(server).signUp(email: "leaving@signet.test")
        #expect(jwtClaims(again["access_token"]?.string)["sub"] != .string(user.id))
    }

    @Test("deleting is refused without a fresh passkey check: a stale session, an email-code session")
    func needsStepUp() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let account = try SignedIn(server, email: "stale@signet.test")
        server.clock.advance(Double(server.app.configuration.stepUpMaxAge + 1))
        let (status, json) = try account.call("DELETE", "/me")
        #expect(status == 401 && json["reason"] == .string("step_up_required"))
        // Someone with only the mailbox cannot erase the account.
        server.clock.advance(31)
        let code = try server.codeSession("stale@signet.test", smtp: smtp)
        #expect(try code.call("DELETE", "/me").json["reason"] == .string("step_up_required"))
        #expect(try server.store.user(email: "stale@signet.test") != nil)
        // Without a token at all.
        #expect(try server.send("DELETE", "/me").status == 401)
    }

    @Test("the account page: the address typed wrong changes nothing; typed right, the account goes and the sign-in page says so")
    func page() throws {
        let smtp = try SMTPServer()
        let server = try TestServer(smtp: smtp)
        let browser = WebBrowser(server)
        try browser.signUp(email: "page-leaver@signet.test")
        let page = try browser.page("/account")
        #expect(page.html.contains("data-testid=\"delete-section\"") && !page.html.contains("data-testid=\"delete-error\""))
        let wrong = try browser.form("/account/delete", [("confirm", "someone@signet.test")])
        #expect(wrong.status == 400 && wrong.html.contains("data-testid=\"delete-error\"") && wrong.html.contains("delete-section\" open"))
        #expect(try server.store.user(email: "page-leaver@signet.test") != nil)
        // Stale: the step-up prompt first, with the typed address kept for after it.
        server.clock.advance(Double(server.app.configuration.stepUpMaxAge + 1))
        try browser.page("/account")
        let stale = try browser.form("/account/delete", [("confirm", "Page-Leaver@signet.test ")])
        #expect(stale.status == 200 && stale.html.contains("data-testid=\"step-up-prompt\"") && stale.html.contains("action=\"/account/delete\""))
        #expect(try server.store.user(email: "page-leaver@signet.test") != nil)
        try browser.stepUp()
        try browser.page("/account")
        let done = try browser.form("/account/delete", [("confirm", "Page-Leaver@signet.test ")])
        #expect(done.response.headers["location"] == "/login?notice=account_deleted")
        #expect(try server.store.user(email: "page-leaver@signet.test") == nil)
        #expect(done.response.headers["set-cookie"]?.contains("Max-Age=0") == true)
        let login = try browser.page("/login?notice=account_deleted")
        #expect(login.status == 200 && login.html.contains("Your account was deleted."))
        #expect(try browser.page("/account").status == 303)
    }
}
