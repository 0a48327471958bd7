import SignetAuth
import Foundation
import SignetAPI
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// `GET /me/sessions` and `DELETE /me/sessions/{id}`: where the account is signed in, for apps.
@Suite struct SessionListTests {
    @Test("an app's session is named after the app and the system its sign-in's User-Agent names, in the list and on the account page, so two phones show as two")
    func appSystems() throws {
        let server = try TestServer { c in
            if let app = c.clients.firstIndex(where: { $0.id == "app" }) { c.clients[app].name = "Acme" }
        }
        var phone = Phone(server)
        phone.userAgent = "SignetClient (iOS 18.1)"
        let iPhone = try phone.signUp(email: "two-phones@signet.test")
        for agent in ["Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP2A.240905.003)", "Acme/3 CFNetwork/1494.0.7 Darwin/23.4.0"] {
            phone.userAgent = agent
            _ = try phone.signIn()
        }
        let account = SignedIn(server, phone: phone, access: try #require(iPhone["access_token"]?.string))
        let names = (try account.call("GET", "/me/sessions").json["sessions"]?.array ?? []).compactMap { $0["name"]?.string }
        #expect(names.sorted() == ["Acme", "Acme · Android", "Acme · iOS"], "\(names)")
        let browser = WebBrowser(server, authenticator: phone.authenticator)
        #expect(try browser.signIn().status == 200)
        let page = try browser.page("/account").html
        for name in ["Acme · iOS", "Acme · Android"] { #expect(page.contains("<strong class=\"row-title\">\(name)</strong>"), "\(name)") }
    }

    @Test("the list names browsers and apps and marks the asking one; ending one (after a step-up) ends its tokens")
    func listAndEnd() throws {
        let server = try TestServer()
        let phone = Phone(server)
        let first = try phone.signUp(email: "sessions@signet.test")
        let second = try phone.signIn()
        let browser = WebBrowser(server, authenticator: phone.authenticator)
        #expect(try browser.signIn().status == 200)
        let account = SignedIn(server, phone: phone, access: try #require(second["access_token"]?.string))
        let firstSID = try #require(jwtClaims(first["access_token"]?.string)["sid"]?.string)
        let secondSID = try #require(jwtClaims(second["access_token"]?.string)["sid"]?.string)

        let (status, json) = try account.call("GET", "/me/sessions")
        #expect(status == 200, "\(json.serialized)")
        let sessions = json["sessions"]?.array ?? []
        #expect(sessions.count == 3)
        let browsers = sessions.filter { $0["kind"] == .string("browser") }, apps = sessions.filter { $0["kind"] == .string("app") }
        #expect(browsers.count == 1 && browsers[0]["name"] == .string("Chrome · Linux") && browsers[0]["client_id"] == .null)
        #expect(Set(apps.compactMap { $0["id"]?.string }) == [firstSID, secondSID] && apps.allSatisfy { $0["client_id"] == .string("app") })
        #expect(sessions.filter { $0["current"] == .bool(true) }.compactMap { $0["id"]?.string } == [secondSID])
        #expect(sessions.allSatisfy { ($0["created_at"]?.int64 ?? 0) > 1_700_000_000 && $0["last_seen_at"]?.int64 != nil })
        // Where each signed in from, to tell one's own from someone else's.
        #expect(browsers[0]["address"]?.string?.isEmpty == false && apps.allSatisfy { $0["address"] == .string("127.0.0.1") }, "\(json.serialized)")
        let page = try browser.page("/account").html
        #expect(page.contains("signed in from \(browsers[0]["address"]?.string ?? "-")"), "the account page says where")

        // Ending the first app session: its refresh token is refused, its access token too.
        #expect(try account.call("DELETE", "/me/sessions/\(firstSID)").status == 204)
        let refreshed = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(first["refresh_token"]),
        ]))
        #expect(refreshed.json["reason"] == .string("refresh_token_revoked"), "\(refreshed.json.serialized)")
        let old = SignedIn(server, phone: phone, access: try #require(first["access_token"]?.string))
        #expect(try old.call("GET", "/me/passkeys").json["reason"] == .string("token_invalid"))
        #expect(try old.call("GET", "/userinfo").json["reason"] == .string("token_invalid"))
        #expect(try account.call("GET", "/userinfo").status == 200)
        // Ending the browser's: the page signs in again.
        let browserID = try #require(browsers[0]["id"]?.string)
        #expect(try account.call("DELETE", "/me/sessions/\(browserID)").status == 204)
        #expect(try browser.page("/account").status == 303)
        #expect(try account.call("GET", "/me/sessions").json["sessions"]?.array?.compactMap { $0["id"]?.string } == [secondSID])
        // Unknown, another account's, and a stale session's refusals.
        #expect(try account.call("DELETE", "/me/sessions/\(firstSID)").json["reason"] == .string("not_found"))
        let other = try SignedIn(server, email: "other-sessions@signet.test")
        let otherSID = try #require(jwtClaims(other.access)["sid"]?.string)
        #expect(try account.call("DELETE", "/me/sessions/\(otherSID)").json["reason"] == .string("not_found"))
        #expect(try other.call("GET", "/me/passkeys").status == 200)
        server.clock.advance(Double(server.app.configuration.stepUpMaxAge + 1))
        #expect(try account.call("DELETE", "/me/sessions/\(secondSID)").json["reason"] == .string("step_up_required"))
    }

    @Test("sign out everywhere else: every other session, apps' and browsers', ends with its tokens; this one and other accounts' stay; a step-up operation; the page's button does the same")
    func everywhereElse() throws {
        let server = try TestServer()
        let phone = Phone(server)
        let first = try phone.signUp(email: "elsewhere@signet.test")
        let second = try phone.signIn()
        let browser = WebBrowser(server, authenticator: phone.authenticator)
        #expect(try browser.signIn().status == 200)
        let account = SignedIn(server, phone: phone, access: try #require(second["access_token"]?.string))
        let other = try SignedIn(server, email: "bystander@signet.test")

        let ended = try account.call("DELETE", "/me/sessions")
        #expect(ended.status == 200 && ended.json["ended"] == .number("2"), "\(ended.json.serialized)")
        let left = try account.call("GET", "/me/sessions").json["sessions"]?.array ?? []
        #expect(left.count == 1 && left[0]["current"] == .bool(true))
        let old = SignedIn(server, phone: phone, access: try #require(first["access_token"]?.string))
        #expect(try old.call("GET", "/me/passkeys").json["reason"] == .string("token_invalid"))
        let refreshed = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(first["refresh_token"]),
        ]))
        #expect(refreshed.json["reason"] == .string("refresh_token_revoked"))
        #expect(try browser.page("/account").status == 303)
        #expect(try other.call("GET", "/me/passkeys").status == 200 && account.call("GET", "/me/passkeys").status == 200)
        let audited = try server.store.auditEvents(limit: 50).filter { $0.kind == "session_revoked" }
        #expect(audited.count == 2)
        // Nothing else to end: none ended. A stale sign-in must step up first.
        #expect(try account.call("DELETE", "/me/sessions").json["ended"] == .number("0"))
        server.clock.advance(Double(server.app.configuration.stepUpMaxAge + 1))
        #expect(try account.call("DELETE", "/me/sessions").json["reason"] == .string("step_up_required"))

        // The page: a button only when there is another session; it ends the app's, keeps this browser's.
        let desk = WebBrowser(server, authenticator: phone.authenticator)
        #expect(try desk.signIn().status == 200)
        var page = try desk.page("/account").html
        #expect(page.contains("data-testid=\"sessions-revoke-others\"") && page.contains("Sign out everywhere else"))
        let done = try desk.form("/account/sessions/revoke-others", [])
        #expect(done.status == 303 && done.response.headers["location"] == "/account?notice=sessions_revoked", "\(done.html)")
        page = try desk.page("/account?notice=sessions_revoked").html
        #expect(page.contains("Signed out everywhere else.") && !page.contains("data-testid=\"sessions-revoke-others\""))
        #expect(try account.call("GET", "/me/passkeys").json["reason"] == .string("token_invalid"))
        #expect(try desk.form("/account/sessions/revoke-others", [], csrf: "forged").status == 403)
    }
}
