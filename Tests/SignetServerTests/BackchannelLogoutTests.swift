import Foundation
import SignetAPI
import SignetAuth
import SignetCurl
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Synchronization
import SignetTestSupport
import Testing

/// A client's back-channel logout endpoint on a real socket: what it was sent, and the answers
/// it is told to give (200 once they run out).
final class LogoutReceiver: HTTPHandler {
    struct Received {
        let path: String
        let contentType: String?
        let form: JSONValue
    }
    let received = Mutex<[Received]>([])
    let answers = Mutex<[Int]>([])
    /// Paths that answer 503 whatever `answers` says: a client that is down.
    let down = Mutex<Set<String>>([])

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let form = (try? Wire.formToJSON(request.body)) ?? .null
        received.withLock { $0.append(Received(path: request.path, contentType: request.header("content-type"), form: form)) }
        let status = down.withLock { $0.contains(request.path) } ? 503 : answers.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
        // A redirect names a page of this receiver: a sender that followed it would be seen.
        return HTTPResponse(status: status, headers: status == 302 ? [("Location", "/followed")] : [], body: [])
    }

    var tokens: [String] { received.withLock { $0.compactMap { $0.form["logout_token"]?.string } } }
}

/// OpenID Connect Back-Channel Logout 1.0: a client with a `backchannel_logout_uri` hears of
/// every end of a session it signed in to through the browser, once, with a logout token it can
/// verify; through the service's router, the receiver on a real socket.
@Suite struct BackchannelLogoutTests {
    static func receiver() throws -> (server: HTTPServer, receiver: LogoutReceiver, uri: String) {
        let receiver = LogoutReceiver()
        let (server, base) = try startLoopbackServer(receiver)
        return (server, receiver, base + "/backchannel-logout?tenant=a")
    }

    /// The web tests' clients, `spa` with a back-channel logout URI; the background sender
    /// paused, so that the test sends when it means to.
    static func server(_ uri: String) throws -> TestServer {
        let server = try TestServer { c in
            TestServer.webClients(&c)
            if let i = c.clients.firstIndex(where: { $0.id == "spa" }) { c.clients[i].backchannelLogoutURI = uri }
        }
        server.app.pauseLogouts()
        return server
    }

    /// A signed-up browser's code for `spa` exchanged: the tokens and the account.
    static func session(_ server: TestServer, browser: WebBrowser? = nil, scope: String = "openid email offline_access") throws
        -> (tokens: JSONValue, browser: WebBrowser, sid: String, user: String) {
        let pkce = PKCE()
        let (code, browser) = try AuthorizeTests.code(server, browser: browser, pkce: pkce, scope: scope)
        let exchanged = try server.exchange(code: code, verifier: pkce.verifier)
        try #require(exchanged.status == 200, "\(exchanged.json.serialized)")
        let claims = try #require(Self.claims(exchanged.json["id_token"]?.string))
        return (exchanged.json, browser, try #require(claims["sid"]?.string), try #require(claims["sub"]?.string))
    }

    static func refresh(_ server: TestServer, _ tokens: JSONValue) throws -> (status: Int, json: JSONValue) {
        try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("spa"),
                                                 "refresh_token": tokens["refresh_token"] ?? .null]))
    }

    static func claims(_ jwt: String?) -> JSONValue? {
        guard let part = jwt?.split(separator: ".").dropFirst().first, let bytes = Base64URL.decode(String(part)) else { return nil }
        return try? StrictJSON().parse(bytes)
    }

    /// Verifies a logout token as a client would (Back-Channel Logout §2.6): the signature by
    /// a key of the JWKS, `typ`, `iss`, `aud`, the times, the event, `sid`, no `nonce`.
    static func verifiedLogoutToken(_ token: String, _ server: TestServer, fresh: Bool = true, audience: String = "spa") throws -> JSONValue {
        let jwks = try StrictJSON().parse(try server.get("/.well-known/jwks.json").body)
        let (header, claims) = try IndependentTokenTests.verify(token, jwks: jwks)
        #expect(header["typ"] == .string("logout+jwt") && header["alg"] == .string("ES256"))
        #expect(claims["iss"] == .string("https://signet.test") && claims["aud"] == .string(audience))
        let iat = try #require(claims["iat"]?.int64), exp = try #require(claims["exp"]?.int64)
        #expect(exp - iat == 120)
        if fresh { #expect(abs(iat - Int64(server.clock.now.timeIntervalSince1970)) <= 1, "signed when sent") }
        #expect(claims["events"] == .object([Ceremonies.backchannelLogoutEvent: .object(JSONObject())]))
        #expect(claims["nonce"] == nil, "§2.4: a logout token never has a nonce")
        #expect(claims["jti"]?.string.flatMap { Base64URL.decode($0) }?.count == 16)
        return claims
    }

    @Test("signing out of the hosted pages: each session a subscribed client signed in to through that browser gets one verified logout token; the one without a refresh token ends, offline_access keeps its refresh token")
    func signOut() throws {
        let (listener, receiver, uri) = try Self.receiver()
        defer { listener.stop() }
        let server = try Self.server(uri)
        let online = try Self.session(server, scope: "openid email")
        let offline = try Self.session(server, browser: online.browser)
        // A client without a back-channel URI is not remembered.
        let pkce = PKCE()
        let answer = try server.authorize(online.browser, client: "backend", redirect: "https://rp.signet.test/cb", pkce: pkce)
        let backendCode = try #require(WebBrowser.query(answer.headers["location"])["code"])
        let basic = ("Authorization", "Basic " + Data("backend:\(TestServer.webSecret)".utf8).base64EncodedString())
        #expect(try server.exchange(code: backendCode, client: nil, redirect: "https://rp.signet.test/cb", verifier: pkce.verifier, headers: [basic]).status == 200)

        let subscriptions = try server.store.logoutSubscriptions(userID: online.user)
        #expect(Set(subscriptions.map(\.sid)) == [online.sid, offline.sid] && subscriptions.allSatisfy { $0.clientID == "spa" && $0.webSession != nil })
        #expect(subscriptions.first { $0.sid == offline.sid }?.offline == true && subscriptions.first { $0.sid == online.sid }?.offline == false)
        #expect(server.app.sendLogoutsNow() == 0 && receiver.tokens.isEmpty, "nothing ended yet")

        // The sign-out page an app's link leads to names the apps that will be told, once each.
        let asked = try online.browser.page("/logout?client_id=spa")
        #expect(asked.status == 200 && asked.html.contains("<ul class=\"apps\" data-testid=\"signout-apps\"><li>spa</li></ul>"), "\(asked.html)")
        #expect(try WebBrowser(server).page("/logout?client_id=spa").html.contains("signout-apps") == false, "nobody signed in: no list")
        try online.browser.page("/account")
        let out = try online.browser.form("/logout", [])
        #expect(out.status == 303)
        #expect(server.app.sendLogoutsNow() == 2)
        let received = receiver.received.withLock { $0 }
        #expect(received.count == 2 && received.allSatisfy { $0.path == "/backchannel-logout" && $0.contentType == "application/x-www-form-urlencoded" })
        let claims = try receiver.tokens.map { try Self.verifiedLogoutToken($0, server) }
        #expect(Set(claims.compactMap { $0["sid"]?.string }) == [online.sid, offline.sid])
        #expect(claims.allSatisfy { $0["sub"] == .string(online.user) })
        #expect(Set(claims.compactMap { $0["jti"]?.string }).count == 2)

        // The session without a refresh token ended with the browser's; the offline one did not.
        let bearer = { (tokens: JSONValue) in [("Authorization", "Bearer " + (tokens["access_token"]?.string ?? ""))] }
        #expect(try server.get("/userinfo", headers: bearer(online.tokens)).status == 401)
        #expect(try server.get("/userinfo", headers: bearer(offline.tokens)).status == 200)
        #expect(try Self.refresh(server, offline.tokens).status == 200)
        // Once only: the subscriptions went with their notices.
        #expect(try server.store.logoutSubscriptions(userID: online.user).isEmpty)
        #expect(server.app.sendLogoutsNow() == 0 && receiver.tokens.count == 2)
    }

    @Test("every other way a session ends sends its client one logout token: ended from the account, its passkey removed, the account blocked, signed out or erased by an operator, one session or its browser's ended by an operator, a refresh token or a code used twice, a revocation (RFC 7009)")
    func everyEnd() throws {
        let (listener, receiver, uri) = try Self.receiver()
        defer { listener.stop() }
        let server = try Self.server(uri)
        let ceremonies = server.app.service.ceremonies
        let context = RequestContext(remoteAddress: "127.0.0.1", requestID: "test")
        let admin = ManagementCaller.commandLine
        let ends: [(String, (TestServer, (tokens: JSONValue, browser: WebBrowser, sid: String, user: String)) throws -> Void)] = [
            ("ended from the account", { server, s in
                let ended = try server.send("DELETE", "/me/sessions/\(s.sid)", headers: [("Authorization", "Bearer " + (s.tokens["access_token"]?.string ?? ""))])
                #expect(ended.status == 204, "\(String(decoding: ended.body, as: UTF8.self))")
            }),
            ("its passkey removed by an operator", { _, s in
                let method = try #require(try ceremonies.authenticationMethods(userID: s.user).first { $0.type == "passkey" })
                try ceremonies.deleteAuthenticationMethod(userID: s.user, methodID: method.id, by: admin, context: context)
            }),
            ("the account blocked", { _, s in _ = try ceremonies.updateUser(id: s.user, ManagementUserPatch(blocked: true), by: admin, context: context) }),
            ("signed out by an operator", { _, s in try ceremonies.revokeSessions(userID: s.user, by: admin, context: context) }),
            ("that one session ended by an operator", { _, s in try ceremonies.adminRevokeSession(id: s.sid, by: admin, context: context) }),
            ("its browser's session ended by an operator", { _, s in
                let browser = try #require(try ceremonies.sessions(userID: s.user, from: nil, take: 100).sessions.first { $0.kind == "browser" })
                try ceremonies.adminRevokeSession(id: browser.id, userID: s.user, by: admin, context: context)
            }),
            ("the account erased", { _, s in try ceremonies.deleteUser(id: s.user, by: admin, context: context) }),
            ("a refresh token used twice", { server, s in
                let first = try Self.refresh(server, s.tokens), again = try Self.refresh(server, s.tokens)
                #expect(first.status == 200 && again.status == 400)
            }),
            ("revoked by its client", { server, s in
                let body = "token=\(s.tokens["refresh_token"]?.string ?? "")&client_id=spa"
                let revoked = try server.send("POST", "/oauth/revoke", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(body.utf8))
                #expect(revoked.status == 200)
            }),
        ]
        for (name, end) in ends {
            let session = try Self.session(server)
            let before = receiver.tokens.count
            try end(server, session)
            // Queued by the transaction that ended it, not left to the sweep.
            #expect(try server.store.logoutSubscriptions(userID: session.user).isEmpty, "\(name)")
            #expect(try server.store.rowCounts()["outbox"] == 1, "\(name)")
            #expect(server.app.sendLogoutsNow() == 1, "\(name)")
            let tokens = receiver.tokens.dropFirst(before)
            #expect(tokens.count == 1, "\(name)")
            let claims = try tokens.map { try Self.verifiedLogoutToken($0, server) }
            #expect(claims.first?["sid"] == .string(session.sid) && claims.first?["sub"] == .string(session.user), "\(name)")
        }
        // A code used twice: the session it gave ends.
        let pkce = PKCE()
        let (code, _) = try AuthorizeTests.code(server, pkce: pkce)
        let first = try server.exchange(code: code, verifier: pkce.verifier)
        let sid = try #require(Self.claims(first.json["id_token"]?.string)?["sid"]?.string)
        #expect(try server.exchange(code: code, verifier: pkce.verifier).status == 400)
        let before = receiver.tokens.count
        #expect(server.app.sendLogoutsNow() == 1)
        #expect(try receiver.tokens.dropFirst(before).map { try Self.verifiedLogoutToken($0, server)["sid"] } == [.string(sid)])
    }

    @Test("a client that fails is tried again later, a redirect is not followed, and after 40 tries the notice is dropped and the drop audited")
    func retries() throws {
        let (listener, receiver, uri) = try Self.receiver()
        defer { listener.stop() }
        let server = try Self.server(uri)
        receiver.answers.withLock { $0 = [503, 302] }
        let first = try Self.session(server)
        try first.browser.page("/account")
        #expect(try first.browser.form("/logout", []).status == 303)
        #expect(server.app.sendLogoutsNow() == 0)
        #expect(server.app.sendLogoutsNow() == 0 && receiver.tokens.count == 1, "not due again before its delay")
        server.clock.advance(5)
        // /metrics shows the waiting notice apart from mail, and how long it has waited.
        let metrics = String(decoding: try server.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains("signet_outbox_messages{queue=\"backchannel_logout\"} 1\n") && metrics.contains("signet_outbox_messages{queue=\"mail\"} 0\n"))
        let oldest = metrics.split(separator: "\n").first { $0.hasPrefix("signet_outbox_oldest_seconds{queue=\"backchannel_logout\"} ") }
        #expect(oldest.flatMap { Int($0.split(separator: " ").last ?? "") }.map { (5...7).contains($0) } == true, "\(oldest ?? "none")")
        #expect(server.app.sendLogoutsNow() == 0, "the redirect is a failure")
        server.clock.advance(10)
        #expect(server.app.sendLogoutsNow() == 1)
        #expect(receiver.received.withLock { $0.map(\.path) } == Array(repeating: "/backchannel-logout", count: 3), "the redirect was not followed")
        // Each try is signed when it is sent, for the same session.
        let tries = try receiver.tokens.map { try Self.verifiedLogoutToken($0, server, fresh: false) }
        #expect(Set(tries.map { $0["sid"]?.string }) == [first.sid])
        // The test clock is the real one moved on, so a slow run adds its own seconds.
        let gaps = tries.compactMap { $0["iat"]?.int64 }.map { $0 - tries[0]["iat"]!.int64! }
        #expect(gaps.count == 3 && (5...7).contains(gaps[1]) && (15...18).contains(gaps[2]), "\(gaps)")

        let second = try Self.session(server)
        receiver.answers.withLock { $0 = Array(repeating: 500, count: 40) }
        try second.browser.page("/account")
        #expect(try second.browser.form("/logout", []).status == 303)
        for _ in 0..<40 {
            #expect(server.app.sendLogoutsNow() == 0)
            server.clock.advance(600)
        }
        #expect(server.app.sendLogoutsNow() == 0 && receiver.tokens.count == 3 + 40, "given up after 40 tries")
        #expect(try server.store.rowCounts()["outbox"] == 0)
        #expect(String(decoding: try server.get("/metrics").body, as: UTF8.self).contains("signet_outbox_messages{queue=\"backchannel_logout\"} 0\n"))
        let dropped = try server.store.auditEvents(limit: 50).filter { $0.kind == AuditKind.backchannelLogoutDropped.rawValue }
        #expect(dropped.count == 1 && dropped.first?.clientID == "spa" && dropped.first?.outcome == "failure")
        #expect(dropped.first?.detail?.contains("500") == true)
    }

    @Test("a client that is down is tried once a pass, not once a notice, and holds up no other client's notices")
    func clientDown() throws {
        let (listener, receiver, uri) = try Self.receiver()
        defer { listener.stop() }
        let base = String(uri.prefix { $0 != "?" }).replacingOccurrences(of: "/backchannel-logout", with: "")
        let server = try TestServer { c in
            TestServer.webClients(&c)
            for (id, path) in [("spa", "/up"), ("backend", "/down")] {
                if let i = c.clients.firstIndex(where: { $0.id == id }) { c.clients[i].backchannelLogoutURI = base + path }
            }
        }
        server.app.pauseLogouts()
        receiver.down.withLock { $0 = ["/down"] }
        let session = try Self.session(server)
        let basic = ("Authorization", "Basic " + Data("backend:\(TestServer.webSecret)".utf8).base64EncodedString())
        for _ in 0..<7 {
            let pkce = PKCE()
            let answer = try server.authorize(session.browser, client: "backend", redirect: "https://rp.signet.test/cb", pkce: pkce)
            let code = try #require(WebBrowser.query(answer.headers["location"])["code"])
            #expect(try server.exchange(code: code, client: nil, redirect: "https://rp.signet.test/cb", verifier: pkce.verifier, headers: [basic]).status == 200)
        }
        try session.browser.page("/account")
        #expect(try session.browser.form("/logout", []).status == 303)
        #expect(server.app.sendLogoutsNow() == 1, "the client that is up got its notice")
        let paths = { receiver.received.withLock { $0.map(\.path) } }
        #expect(paths().filter { $0 == "/down" }.count == 1 && paths().filter { $0 == "/up" } == ["/up"], "\(paths())")
        #expect(try server.store.rowCounts()["outbox"] == 7, "the others wait for their next try")
        receiver.down.withLock { $0 = [] }
        server.clock.advance(5)
        #expect(server.app.sendLogoutsNow() == 7)
        #expect(paths().filter { $0 == "/down" }.count == 8)
    }

    @Test("a client added with signet admin takes a back-channel logout URI and post-logout redirect URIs; a running server without one configured starts sending at its first subscription")
    func storedClient() throws {
        let (listener, receiver, uri) = try Self.receiver()
        defer { listener.stop() }
        let server = try TestServer { c in TestServer.webClients(&c) }
        func admin(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
            try OperationsTests.signet(["admin", "clients", "add"] + arguments + ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path],
                                       in: server.directory)
        }
        let base = ["--name", "Stored web app", "--type", "public", "--grant", "authorization_code", "--grant", "refresh_token", "--redirect-uri", "https://db.signet.test/cb"]
        let refused = try admin(base + ["--backchannel-logout-uri", "http://rp.example/logout"])
        #expect(refused.status != 0 && refused.errors.contains("backchannel-logout-uri"), "\(refused.errors)")
        let added = try OperationsTests.json(try admin(base + ["--post-logout-redirect-uri", "https://db.signet.test/bye", "--backchannel-logout-uri", uri, "--json"]).output)
        let client = try #require(added["client_id"]?.string)
        #expect(added["backchannel_logout_uri"] == .string(uri) && added["post_logout_redirect_uris"] == .array([.string("https://db.signet.test/bye")]))

        let browser = WebBrowser(server)
        try browser.signUp(email: "stored-client@signet.test")
        let pkce = PKCE()
        var location: String?
        #expect(eventually(timeout: 5) {
            location = try server.authorize(browser, client: client, redirect: "https://db.signet.test/cb", pkce: pkce).headers["location"]
            return location?.hasPrefix("https://db.signet.test/cb?code=") == true
        })
        let code = try #require(WebBrowser.query(location)["code"])
        let tokens = try server.exchange(code: code, client: client, redirect: "https://db.signet.test/cb", verifier: pkce.verifier).json
        let idToken = try #require(tokens["id_token"]?.string)
        let sid = try #require(Self.claims(idToken)?["sid"]?.string)
        let out = try browser.send("GET", "/logout?id_token_hint=\(idToken)&post_logout_redirect_uri=https%3A%2F%2Fdb.signet.test%2Fbye&state=z")
        #expect(out.status == 303 && out.headers["location"] == "https://db.signet.test/bye?state=z")
        // Nothing sends but this server's own beat, started by the subscription.
        #expect(eventually(timeout: 10) { receiver.tokens.count == 1 })
        let claims = try receiver.tokens.map { try Self.verifiedLogoutToken($0, server, fresh: false, audience: client) }
        #expect(claims.first?["sid"] == .string(sid))
    }

    @Test("an instance whose sender is idle takes up the notices another instance's subscriptions left, once it looks for work in the database")
    func idleInstance() throws {
        let (listener, receiver, uri) = try Self.receiver()
        defer { listener.stop() }
        let a = try TestServer { c in TestServer.webClients(&c) }
        let b = try TestServer(sharing: a.directory) { c in TestServer.webClients(&c) }
        let bStarted = Date()
        let context = RequestContext(remoteAddress: "127.0.0.1", requestID: "test")
        let client = try a.app.service.ceremonies.addClient(
            name: "Stored", type: "public", grants: [GrantNames.authorizationCode], scopes: [], redirectURIs: ["https://db.signet.test/cb"], audiences: nil,
            backchannelLogoutURI: uri, by: .commandLine, context: context).client.id
        // The session is made on a, whose sender then goes away.
        let browser = WebBrowser(a)
        try browser.signUp(email: "idle-instance@signet.test")
        let pkce = PKCE()
        let code = try #require(WebBrowser.query(try a.authorize(browser, client: client, redirect: "https://db.signet.test/cb", pkce: pkce).headers["location"])["code"])
        #expect(try a.exchange(code: code, client: client, redirect: "https://db.signet.test/cb", verifier: pkce.verifier).status == 200)
        a.app.pauseLogouts()
        // b ends it; b started before any subscription existed, so its sender is idle.
        let user = try #require(try b.store.user(email: "idle-instance@signet.test"))
        try b.app.service.ceremonies.revokeSessions(userID: user.id, by: .commandLine, context: context)
        Thread.sleep(forTimeInterval: 1.5)
        // An idle sender also looks on its own once a minute (SignetApp.logoutIdleCheck): on a
        // machine so loaded that this test reached here after most of a minute, that look may
        // have come, and sending then is right.
        if Date().timeIntervalSince(bStarted) < SignetApp.logoutIdleCheck - 5 {
            #expect(receiver.tokens.isEmpty, "an idle sender sends nothing")
        }
        b.app.lookForLogoutWork()
        #expect(eventually(timeout: 10) { receiver.tokens.count == 1 })
        #expect(try receiver.tokens.map { try Self.verifiedLogoutToken($0, b, fresh: false, audience: client)["sub"] } == [.string(user.id)])
    }

    @Test("signet doctor POSTs each client's logout URI a token that is none: 400 passes; 2xx, a redirect, 404 or no answer fail, each with its fix")
    func doctor() throws {
        let (listener, receiver, uri) = try Self.receiver()
        defer { listener.stop() }
        receiver.answers.withLock { $0 = [400, 200, 302, 404] }
        let closed = "http://127.0.0.1:\(try Loopback.freePort())/bc"
        var configuration = TestServer.configuration()
        configuration.clients = ["good", "accepts", "redirects", "missing"].map {
            var client = ClientConfiguration(id: $0, grants: [GrantNames.authorizationCode])
            client.backchannelLogoutURI = uri
            return client
        }
        var down = ClientConfiguration(id: "down", grants: [GrantNames.authorizationCode])
        down.backchannelLogoutURI = closed
        configuration.clients += [down, ClientConfiguration(id: "none", grants: [GrantNames.authorizationCode])]
        let checks = Doctor(configuration: configuration, options: HTTPSOptions(timeout: 5)).backchannelChecks()
        #expect(checks.map(\.name) == ["good", "accepts", "redirects", "missing", "down"].map { "backchannel_logout." + $0 })
        #expect(checks.map(\.status) == [.pass, .fail, .fail, .fail, .fail])
        #expect(checks[1].fix?.contains("answer 400") == true && checks[2].detail.contains("redirects (302)") && checks[3].fix?.contains("nothing takes a POST") == true)
        #expect(checks[4].detail.contains("cannot reach"))
        #expect(receiver.received.withLock { $0.map { $0.form["logout_token"] } } == Array(repeating: .string(""), count: 4), "the redirect was not followed")
    }

    @Test("discovery says so; backchannel_logout_uri: https, or http only to a loopback address, never a fragment or a password")
    func settings() throws {
        let (listener, _, uri) = try Self.receiver()
        defer { listener.stop() }
        let server = try Self.server(uri)
        let discovery = try StrictJSON().parse(try server.get("/.well-known/openid-configuration").body)
        #expect(discovery["backchannel_logout_supported"] == .bool(true) && discovery["backchannel_logout_session_supported"] == .bool(true))
        for good in ["https://rp.example/logout", "https://rp.example:8443/bc?x=1", "http://127.0.0.1:9/bc", "http://localhost/bc", "http://[::1]:80/bc"] {
            #expect(Ceremonies.isClientEndpointURI(good), "\(good)")
        }
        for bad in ["http://rp.example/logout", "https://rp.example/logout#top", "https://user:pw@rp.example/x", "ftp://rp.example/x", "/relative",
                    "https://", "http://127.0.0.1.evil.example/bc", "https://rp.example/\u{0}"] {
            #expect(!Ceremonies.isClientEndpointURI(bad), "\(bad)")
        }
    }
}
