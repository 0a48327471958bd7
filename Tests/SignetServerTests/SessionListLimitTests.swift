import SignetAuth
import Foundation
import SignetAPI
import SignetServer
import SignetWebAuthn
import Testing

/// An account signed in more often than a list shows: the lists stop at
/// ``Ceremonies/sessionsListed`` of each kind and say so, and no session is out of reach.
@Suite struct SessionListLimitTests {
    @Test("past 100 sessions of a kind the owner's lists show the newest and say they are cut; the caller's own is always there; an unlisted one still ends by its ID; the Management API pages through them all; the export holds them all; sign out everywhere else ends every one")
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
        let own = try #require(try server.store.webSessions(userID: userID, now: millis(), SessionQuery(limit: 2)).first)
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

        // The Management API's: every one, a page at a time, browsers first; an unlisted one
        // is found by its ID too.
        let ops = try server.managementToken()
        let first = try server.api("GET", "/api/v2/users/\(userID)/sessions", token: ops).json
        #expect(first["sessions"]?.array?.count == 50 && first["next"]?.string != nil, "the first 50 by default")
        let all = try Self.pages(server, userID, token: ops, take: 100)
        #expect(all.pages == 3 && all.ids.count == 206 && Set(all.ids).count == 206)
        #expect(all.ids.prefix(101).allSatisfy { $0.hasPrefix("ws-") || $0 == own.id } && all.ids[100] == own.id && all.ids.last == oldestSID)
        for sid in [oldestSID, own.id] {
            let one = try server.api("GET", "/api/v2/sessions/\(sid)", token: ops)
            #expect(one.status == 200 && one.json["id"] == .string(sid), "\(one.json.serialized)")
        }

        // The command line shows the first 100 and says where the list goes on; `users
        // sessions` goes on from there, a page at a time, to the same sessions in the same order.
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        let shown = try OperationsTests.signet(["admin", "users", "show", userID] + database, in: server.directory)
        #expect(shown.status == 0 && shown.output.contains("(the first 100 sessions; signet admin users sessions \(userID) --from "), "\(shown.errors)")
        #expect(shown.output.split(separator: "\n").filter { $0.contains("ws-busy-") }.count == 100)
        var paged: [String] = [], from: String?, rounds = 0
        repeat {
            let page = try OperationsTests.signet(["admin", "users", "sessions", userID, "--take", "90"] + (from.map { ["--from", $0] } ?? []) + database, in: server.directory)
            try #require(page.status == 0, "\(page.errors)")
            let lines = page.output.split(separator: "\n").map(String.init)
            paged += lines.dropFirst().dropLast().compactMap { $0.split(separator: " ").first.map(String.init) }
            from = lines.last?.components(separatedBy: " --from ").dropFirst().first?.replacingOccurrences(of: ")", with: "")
            #expect(lines.first?.hasPrefix("SESSION") == true, "\(lines.first ?? "")")
            #expect(from == nil ? lines.last == "(26 session(s); the last page)" : lines.last?.hasPrefix("(90 session(s); the next page: signet admin users sessions \(userID) --take 90 --from ") == true,
                    "\(lines.last ?? "")")
            rounds += 1
        } while from != nil && rounds < 10
        #expect(rounds == 3 && paged == all.ids, "\(rounds) pages, \(paged.count) sessions")
        let json = try OperationsTests.signet(["admin", "users", "sessions", userID, "--take", "2", "--json"] + database, in: server.directory)
        let firstTwo = try OperationsTests.json(json.output)
        #expect(firstTwo["sessions"]?.array?.compactMap { $0["id"]?.string } == Array(all.ids.prefix(2)) && firstTwo["next"]?.string != nil, "\(json.output)")
        for (arguments, status, said) in [(["--take", "0"], 2, "malformed: take must be 1 to 100"), (["--take", "x"], 2, "malformed: --take must be a number"),
                                          (["--from", "not-a-cursor"], 2, "malformed"), ([], 1, "user_unknown")] as [([String], Int32, String)] {
            let who = arguments.isEmpty ? "nobody" : userID
            let refused = try OperationsTests.signet(["admin", "users", "sessions", who] + arguments + database, in: server.directory)
            #expect(refused.status == status && refused.errors.contains("signet admin: \(said)"), "\(arguments): \(refused.status) \(refused.errors)")
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
        #expect(try server.store.webSessions(userID: userID, now: millis(), SessionQuery(limit: 500)).isEmpty)
        #expect(try server.store.sessions(userID: userID, now: millis(), SessionQuery(limit: 500)).map(\.id) == [currentSID])
        #expect(try server.store.auditEvents(limit: 1_000).filter { $0.kind == "session_revoked" }.count == 205)
    }

    @Test("sign out everywhere else, past the sessions it reads at once: every browser and app session but the caller's ends, each audited, in rounds")
    func signOutPastOneRead() throws {
        let server = try TestServer()
        let phone = Phone(server)
        let first = try phone.signUp(email: "script@signet.test")
        let userID = try #require(jwtClaims(first["access_token"]?.string)["sub"]?.string)
        let browsers = 2 * 1_000 + 50
        let at = Int64(server.clock.now.timeIntervalSince1970 * 1000)
        try server.store.perform((0..<browsers).map { i in .webSession(WebSessionRow(
            hash: (0..<32).map { _ in UInt8.random(in: 0...255) }, id: "ws-script-\(i)", userID: userID, authTime: at / 1000, amr: ["pop", "user"],
            credential: nil, createdAt: at - Int64(i), lastSeenAt: at, expiresAt: at + 3_600_000, userAgent: "curl/8.0", remote: "192.0.2.1")) })
        server.clock.advance(1)
        let current = try phone.signIn()
        let account = SignedIn(server, phone: phone, access: try #require(current["access_token"]?.string))
        let ended = try account.call("DELETE", "/me/sessions")
        #expect(ended.status == 200 && ended.json["ended"] == .number("\(browsers + 1)"), "\(ended.json.serialized)")
        let left = try account.call("GET", "/me/sessions").json
        let sid = try #require(jwtClaims(current["access_token"]?.string)["sid"]?.string)
        #expect(left["truncated"] == .bool(false) && left["sessions"]?.array?.compactMap { $0["id"]?.string } == [sid])
        #expect(try server.store.auditEvents(limit: 5_000).filter { $0.kind == "session_revoked" && $0.userID == userID }.count == browsers + 1)
        let refreshed = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(first["refresh_token"]),
        ]))
        #expect(refreshed.json["reason"] == .string("refresh_token_revoked"), "\(refreshed.json.serialized)")
    }

    /// A session ID as Signet makes them: the time it began (6 bytes, milliseconds), then 10
    /// random bytes; "sign out everywhere" ends those that began before it by this time.
    static func sessionID(at millis: Int64) -> String {
        Base64URL.encode((0..<6).reversed().map { UInt8(truncatingIfNeeded: millis >> ($0 * 8)) } + (0..<10).map { _ in UInt8.random(in: 0...255) })
    }

    /// Every page of the Management API's list of `userID`'s sessions, `take` at a time: the
    /// sessions' IDs in order, and how many pages it took.
    static func pages(_ server: TestServer, _ userID: String, token: String, take: Int, edit: (Int) throws -> Void = { _ in }) throws -> (ids: [String], pages: Int) {
        var ids: [String] = [], from: String?, pages = 0
        repeat {
            let page = try server.api("GET", "/api/v2/users/\(userID)/sessions?take=\(take)" + (from.map { "&from=" + $0 } ?? ""), token: token)
            try #require(page.status == 200, "\(page.json.serialized)")
            ids += page.json["sessions"]?.array?.compactMap { $0["id"]?.string } ?? []
            from = page.json["next"]?.string
            pages += 1
            try edit(pages)
        } while from != nil && pages < 1_000
        return (ids, pages)
    }

    @Test("the Management API's pages: a session that begins or ends between two pages moves no other; sessions an administrator ended are passed over; a page that ends where the browsers end goes on to the apps; bad paging is 400 malformed")
    func managementPages() throws {
        let server = try TestServer.withOperators()
        let phone = Phone(server)
        let signUp = try phone.signUp(email: "pages@signet.test")
        let userID = try #require(jwtClaims(signUp["access_token"]?.string)["sub"]?.string)
        let ops = try server.managementToken()
        func millis() -> Int64 { Int64(server.clock.now.timeIntervalSince1970 * 1000) }
        var names: [String: String] = [:]
        func browserSession(_ name: String) throws {
            let at = millis()
            let id = Self.sessionID(at: at)
            names[id] = name
            try server.store.perform([.webSession(WebSessionRow(
                hash: (0..<32).map { _ in UInt8.random(in: 0...255) }, id: id, userID: userID, authTime: at / 1000, amr: ["pop"],
                credential: nil, createdAt: at, lastSeenAt: at, expiresAt: at + 3_600_000, userAgent: "Firefox/130.0", remote: "192.0.2.1"))])
        }
        // Ten of each, those ended by an administrator's "sign out everywhere" among them.
        for i in 0..<4 { server.clock.advance(1); try browserSession("ws-old-\(i)"); _ = try phone.signIn() }
        server.clock.advance(1)
        #expect(try server.api("DELETE", "/api/v2/users/\(userID)/sessions", token: ops).status == 204)
        for i in 0..<6 { server.clock.advance(1); try browserSession("ws-new-\(i)"); _ = try phone.signIn() }
        let whole = try Self.pages(server, userID, token: ops, take: 100)
        #expect(whole.pages == 1 && whole.ids.count == 12, "\(whole.ids)")
        #expect(whole.ids.prefix(6).map { names[$0] ?? $0 } == (0..<6).reversed().map { "ws-new-\($0)" })
        // Six browsers: a page of 6 ends where they end, and the next page is the apps'.
        let six = try server.api("GET", "/api/v2/users/\(userID)/sessions?take=6", token: ops).json
        #expect(six["sessions"]?.array?.compactMap { $0["kind"]?.string } == Array(repeating: "browser", count: 6) && six["next"]?.string != nil)
        #expect(try Self.pages(server, userID, token: ops, take: 6).ids == whole.ids)
        #expect(try Self.pages(server, userID, token: ops, take: 5).ids == whole.ids)
        // A page at a time: sessions that ended pass over, so the last page may be empty.
        let single = try Self.pages(server, userID, token: ops, take: 1)
        #expect(single.ids == whole.ids && (12...13).contains(single.pages), "\(single.pages)")

        // Between the first page and the second, a browser signs in and a listed-later app ends.
        let ending = whole.ids[9]
        let moved = try Self.pages(server, userID, token: ops, take: 4) { page in
            guard page == 1 else { return }
            server.clock.advance(1)
            try browserSession("ws-newest")
            #expect(try server.api("DELETE", "/api/v2/sessions/\(ending)", token: ops).status == 204)
        }
        #expect(moved.ids == whole.ids.filter { $0 != ending }, "\(moved.ids)")

        // Refused: a take out of 1 to 100, and a from the list did not give.
        let bad = Base64URL.encode(Array("b:1:".utf8)), kind = Base64URL.encode(Array("x".utf8)), time = Base64URL.encode(Array("a:-5:id".utf8))
        for query in ["take=0", "take=101", "take=x", "take=1234567890", "from=!!", "from=" + bad, "from=" + kind, "from=" + time, "from=" + String(repeating: "A", count: 300)] {
            let refused = try server.api("GET", "/api/v2/users/\(userID)/sessions?" + query, token: ops)
            #expect(refused.status == 400 && refused.json["reason"] == .string("malformed"), "\(query): \(refused.json.serialized)")
        }
        #expect(try server.api("GET", "/api/v2/users/nobody/sessions", token: ops).status == 404)
    }

    @Test("browser sessions gone idle take no place in a list: 101 idle ones newer than two live browsers hide neither from the list, the Management API or sign out everywhere else")
    func idleTakeNoPlace() throws {
        let server = try TestServer.withOperators()
        let phone = Phone(server)
        let app = try phone.signUp(email: "idle@signet.test")
        let userID = try #require(jwtClaims(app["access_token"]?.string)["sub"]?.string)
        func millis() -> Int64 { Int64(server.clock.now.timeIntervalSince1970 * 1000) }
        let (desk, laptop) = (WebBrowser(server, authenticator: phone.authenticator), WebBrowser(server, authenticator: phone.authenticator))
        #expect(try desk.signIn().status == 200 && laptop.signIn().status == 200)
        for i in 0..<101 {
            server.clock.advance(1)
            let at = millis()
            try server.store.perform([.webSession(WebSessionRow(
                hash: (0..<32).map { _ in UInt8.random(in: 0...255) }, id: Self.sessionID(at: at), userID: userID, authTime: at / 1000, amr: ["pop"],
                credential: nil, createdAt: at, lastSeenAt: at, expiresAt: at + 30 * 86_400_000, userAgent: "Firefox/130.0", remote: "192.0.2.\(i)"))])
        }
        // Two days on both browsers are seen again; two more, and the 101 are idle (3 days).
        let idle = Double(server.app.configuration.webSessionIdle)
        server.clock.advance(idle * 2 / 3)
        #expect(try desk.page("/account").status == 200 && laptop.page("/account").status == 200)
        server.clock.advance(idle * 2 / 3)
        let account = SignedIn(server, phone: phone, access: try #require(try phone.signIn()["access_token"]?.string))
        let listed = try account.call("GET", "/me/sessions").json
        let sessions = listed["sessions"]?.array ?? []
        #expect(listed["truncated"] == .bool(false) && sessions.filter { $0["kind"] == .string("browser") }.count == 2, "\(listed.serialized.prefix(400))")
        let ops = try server.managementToken()
        #expect(try Self.pages(server, userID, token: ops, take: 100).ids.count == sessions.count)
        #expect(try account.call("DELETE", "/me/sessions").json["ended"] == .number("\(sessions.count - 1)"))
        #expect(try desk.page("/account").status == 303 && laptop.page("/account").status == 303)
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
