import SignetAuth
import Foundation
import SignetAPI
import SignetServer
import SignetWebAuthn
import Testing

/// An account signed in more often than a list shows: the lists stop at
/// ``Ceremonies/sessionsListed`` of each kind and say so, and no session is out of reach.
@Suite struct SessionListLimitTests {
    @Test("past 100 sessions of a kind the lists show the newest and say they are cut; the caller's own is always there; an unlisted one still ends by its ID and the Management API finds it; the export holds them all; sign out everywhere else ends every one")
    func pastTheList() throws {
        let server = try TestServer.withOperators()
        let phone = Phone(server)
        let oldest = try phone.signUp(email: "busy@signet.test")
        let userID = try #require(jwtClaims(oldest["access_token"]?.string)["sub"]?.string)
        let oldestSID = try #require(jwtClaims(oldest["access_token"]?.string)["sid"]?.string)
        server.clock.advance(1)
        // The browser signs in early: 100 browser sessions come after it.
        let browser = WebBrowser(server, authenticator: phone.authenticator)
        #expect(try browser.signIn().status == 200)
        func millis() -> Int64 { Int64(server.clock.now.timeIntervalSince1970 * 1000) }
        let own = try #require(try server.store.webSessions(userID: userID, now: millis(), id: nil, limit: 2).first)
        var latest = oldest
        for _ in 0..<104 {
            server.clock.advance(1)
            latest = try phone.signIn()
        }
        for i in 0..<Ceremonies.sessionsListed {
            server.clock.advance(0.01)
            let at = millis()
            try server.store.perform([.webSession(WebSessionRow(
                hash: (0..<32).map { _ in UInt8.random(in: 0...255) }, id: "ws-busy-\(i)", userID: userID, authTime: at / 1000, amr: ["pop", "user"],
                credential: nil, createdAt: at, lastSeenAt: at, expiresAt: at + 3_600_000, userAgent: "Firefox/130.0 (X11; Linux)", remote: "192.0.2.\(i)"))])
        }
        let account = SignedIn(server, phone: phone, access: try #require(latest["access_token"]?.string))
        let currentSID = try #require(jwtClaims(latest["access_token"]?.string)["sid"]?.string)

        // The owner's list: the newest 100 of each kind, the asking one marked, cut.
        let listed = try account.call("GET", "/me/sessions").json
        let sessions = listed["sessions"]?.array ?? []
        #expect(listed["truncated"] == .bool(true))
        #expect(sessions.filter { $0["kind"] == .string("app") }.count == 100 && sessions.filter { $0["kind"] == .string("browser") }.count == 100)
        let ids = Set(sessions.compactMap { $0["id"]?.string })
        #expect(!ids.contains(oldestSID) && !ids.contains(own.id) && ids.contains("ws-busy-0"))
        #expect(sessions.filter { $0["current"] == .bool(true) }.compactMap { $0["id"]?.string } == [currentSID])

        // The Management API's: as cut, and each unlisted one still found by its ID.
        let ops = try server.managementToken()
        let managed = try server.api("GET", "/api/v2/users/\(userID)/sessions", token: ops).json
        #expect(managed["truncated"] == .bool(true) && managed["sessions"]?.array?.count == 200, "\(managed.serialized.prefix(300))")
        for sid in [oldestSID, own.id] {
            let one = try server.api("GET", "/api/v2/sessions/\(sid)", token: ops)
            #expect(one.status == 200 && one.json["id"] == .string(sid), "\(one.json.serialized)")
        }

        // The page, seen from the browser whose session is older than the 100 listed: its own
        // row is there, marked, and the page says the list is cut.
        let page = try browser.page("/account").html
        #expect(page.components(separatedBy: "data-testid=\"session-row\"").count - 1 == 201)
        #expect(page.contains("data-testid=\"session-current\"") && page.contains("data-testid=\"sessions-truncated\""))
        #expect(page.contains("Only the \(Ceremonies.sessionsListed) most recent sessions"))

        // The owner's copy holds every one (up to 10,000 of a kind).
        let export = try account.call("GET", "/me/export").json
        #expect(export["sessions"]?.array?.count == 206 && export["sessions_truncated"] == .bool(false), "\(export["sessions"]?.array?.count ?? -1)")

        // The oldest app session, not listed, ends by its ID with its refresh token.
        #expect(try account.call("DELETE", "/me/sessions/\(oldestSID)").status == 204)
        let refreshed = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(oldest["refresh_token"]),
        ]))
        #expect(refreshed.json["reason"] == .string("refresh_token_revoked"), "\(refreshed.json.serialized)")

        // Everywhere else: the 103 other apps' and all 101 browsers' sessions, past the list too.
        let ended = try account.call("DELETE", "/me/sessions")
        #expect(ended.status == 200 && ended.json["ended"] == .number("204"), "\(ended.json.serialized)")
        let left = try account.call("GET", "/me/sessions").json
        #expect(left["truncated"] == .bool(false) && left["sessions"]?.array?.compactMap { $0["id"]?.string } == [currentSID])
        #expect(try browser.page("/account").status == 303)
        #expect(try server.store.webSessions(userID: userID, now: millis(), id: nil, limit: 500).isEmpty)
        #expect(try server.store.sessions(userID: userID, now: millis(), family: nil, limit: 500).map(\.id) == [currentSID])
        #expect(try server.store.auditEvents(limit: 1_000).filter { $0.kind == "session_revoked" }.count == 205)
    }

    @Test("an account under the limit is not cut, and a list of one kind cut does not hide the other's", arguments: [1, 100, 101])
    func atTheEdge(apps: Int) throws {
        let server = try TestServer()
        let phone = Phone(server)
        var latest = try phone.signUp(email: "edge-\(apps)@signet.test")
        for _ in 1..<apps {
            server.clock.advance(1)
            latest = try phone.signIn()
        }
        let account = SignedIn(server, phone: phone, access: try #require(latest["access_token"]?.string))
        let listed = try account.call("GET", "/me/sessions").json
        #expect(listed["sessions"]?.array?.count == min(apps, 100))
        #expect(listed["truncated"] == .bool(apps > 100))
    }
}
