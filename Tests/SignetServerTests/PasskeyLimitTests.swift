import SignetAuth
import Foundation
import SignetAPI
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// `max_passkeys`: an account stops taking passkeys at the limit, through every way one is added.
@Suite struct PasskeyLimitTests {
    @Test("at max_passkeys the options are refused 409 passkey_limit before the authenticator makes one; two additions begun under the limit cannot both finish past it; removing one makes room; the account page shows a note instead of the button")
    func limit() throws {
        let server = try TestServer { $0.maxPasskeys = 3 }
        let account = try SignedIn(server, email: "three@signet.test")
        let browser = WebBrowser(server, authenticator: account.phone.authenticator)
        #expect(try browser.signIn().status == 200)
        #expect(try account.addPasskey(SoftwareAuthenticator()).status == 201)
        var page = try browser.page("/account").html
        #expect(page.contains("data-testid=\"create-passkey\"") && !page.contains("data-testid=\"passkey-limit\""))
        // Two begun with two passkeys live: both options pass, one finish does.
        let both = [try account.makePasskey(SoftwareAuthenticator()), try account.makePasskey(SoftwareAuthenticator())]
        let finished = try both.map { try account.call("POST", "/me/passkeys", .object($0)) }
        #expect(finished.map(\.status) == [201, 409] && finished[1].json["reason"] == .string("passkey_limit"), "\(finished.map(\.json.serialized))")
        #expect(try account.passkeys().count == 3)
        // At the limit: refused at the options, and the page says why instead of offering it.
        let refused = try account.call("POST", "/me/passkeys/options", .object([:]))
        #expect(refused.status == 409 && refused.json["reason"] == .string("passkey_limit"), "\(refused.json.serialized)")
        #expect(refused.json["error_description"]?.string?.hasPrefix("This account has the most passkeys allowed; remove one first.") == true, "\(refused.json.serialized)")
        page = try browser.page("/account").html
        #expect(page.contains("data-testid=\"passkey-limit\"") && page.contains("Remove one to add another.") && !page.contains("data-testid=\"create-passkey\""))
        // Removing one makes room again.
        let last = try #require(try account.passkeys().last?["id"]?.string)
        #expect(try account.call("DELETE", "/me/passkeys/\(last)").status == 204)
        #expect(try account.addPasskey(SoftwareAuthenticator()).status == 201)
        #expect(try account.passkeys().count == 3)
        // The finish refused is audited as every refused addition is; the options refused made nothing.
        let refusals = try server.store.auditEvents(limit: 100).filter { $0.outcome == "failure" }
        #expect(refusals.map(\.kind) == ["add_passkey"] && refusals[0].reason == "passkey_limit", "\(refusals)")
        // Under the account it was refused for, so an operator finds it by the account.
        #expect(refusals.first?.userID == (try server.store.user(email: "three@signet.test"))?.id, "\(refusals)")
    }
}
