import SignetAuth
import Foundation
import SignetStore
import Testing

/// SSO sessions and authorization codes, on both databases.
@Suite struct WebStoreContractTests {
    static func session(_ userID: String, at: Int64 = now()) -> WebSessionRow {
        WebSessionRow(hash: (0..<32).map { _ in UInt8.random(in: 0...255) }, id: "ws-\(UUID().uuidString.prefix(8))", userID: userID, authTime: at / 1000,
                      amr: ["pop", "user"], credential: "cred", createdAt: at, lastSeenAt: at, expiresAt: at + 3_600_000, userAgent: "Chrome é", remote: "127.0.0.1")
    }

    /// A browser session `web` and an app session (the refresh family `family`, its one token
    /// `hash`, good until `expiresAt`) of `userID`, both made at `at`.
    static func sessionPair(_ userID: String, web: String, family: String, hash: [UInt8], at: Int64, expiresAt: Int64) -> [StoreWrite] {
        var browser = session(userID, at: at)
        browser.id = web
        return [.webSession(browser), .refreshToken(RefreshTokenRow(hash: hash, family: family, userID: userID, clientID: "app", scope: "openid",
                                                                    authTime: 1, amr: ["pop"], expiresAt: expiresAt, createdAt: at))]
    }

    @Test("SSO sessions: stored with the sign-in, touched (and stepped up) only while live, listed, revoked once, gone with the account", arguments: Backend.available)
    func webSessions(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(1)
        try store.createUser(u, credential: credential(u.id))
        let a = Self.session(u.id), b = Self.session(u.id, at: now() + 1)
        try store.perform([.webSession(a), .webSession(b)])
        #expect(try store.webSession(hash: a.hash) == a)
        #expect(try store.webSessions(userID: u.id, now: now(), SessionQuery(limit: 100)).map(\.id) == [b.id, a.id])
        #expect(try store.touchWebSession(hash: a.hash, now: now() + 10, authTime: nil, amr: [], credential: nil))
        #expect(try store.webSession(hash: a.hash)?.amr == ["pop", "user"], "a touch keeps the check")
        #expect(try store.touchWebSession(hash: a.hash, now: now() + 20, authTime: 42, amr: ["pop"], credential: "other"))
        let stepped = try #require(try store.webSession(hash: a.hash))
        #expect(stepped.authTime == 42 && stepped.amr == ["pop"] && stepped.credential == "other")
        #expect(try !store.touchWebSession(hash: a.hash, now: a.expiresAt + 1, authTime: nil, amr: [], credential: nil), "past its end")
        // Revocation: once, only by its owner, in one transaction with its writes.
        #expect(try !store.revokeWebSession(id: a.id, userID: "someone-else", at: now(), writes: []))
        let results = concurrently(8) { try store.revokeWebSession(id: a.id, userID: u.id, at: now(), writes: []) }
        #expect(results.filter { (try? $0.get()) == true }.count == 1)
        #expect(try !store.touchWebSession(hash: a.hash, now: now(), authTime: nil, amr: [], credential: nil))
        #expect(try store.webSessions(userID: u.id, now: now(), SessionQuery(limit: 100)).map(\.id) == [b.id])
        #expect(try store.rowCounts()["web_sessions"] == 2)
        #expect(try store.deleteUser(id: u.id, pseudonym: "deleted:x", at: 1, writes: []))
        #expect(try store.rowCounts()["web_sessions"] == 0)
    }

    @Test("an account's lists stop at their limit, newest first, ties in a fixed order, and go on after a place in it; one session is found by its ID, only on its own account and while live", arguments: Backend.available)
    func listLimits(_ backend: Backend) throws {
        let store = try backend.open()
        let (u, v) = (user(1), user(2))
        for x in [u, v] { try store.createUser(x, credential: credential(x.id)) }
        let start = now()
        // Five of each, the last two at the same millisecond.
        var writes: [StoreWrite] = []
        for i in 0..<5 {
            writes += Self.sessionPair(u.id, web: "ws-\(i)", family: "fam-\(i)", hash: [UInt8(i), 1], at: start + Int64(min(i, 3)), expiresAt: start + 60_000)
        }
        try store.perform(writes)
        let later = start + 10
        #expect(try store.webSessions(userID: u.id, now: later, SessionQuery(limit: 3)).map(\.id) == ["ws-3", "ws-4", "ws-2"])
        #expect(try store.sessions(userID: u.id, now: later, SessionQuery(limit: 3)).map(\.id) == ["fam-3", "fam-4", "fam-2"])
        #expect(try store.webSessions(userID: u.id, now: later, SessionQuery(limit: 0)).isEmpty && store.sessions(userID: u.id, now: later, SessionQuery(limit: 0)).isEmpty)
        #expect(try store.webSessions(userID: u.id, now: later, SessionQuery(limit: 100)).count == 5 && store.sessions(userID: u.id, now: later, SessionQuery(limit: 100)).count == 5)
        // After a place: those later in the order, ties by ID included.
        let tie = start + 3
        #expect(try store.webSessions(userID: u.id, now: later, SessionQuery(after: SessionPosition(createdAt: tie, id: "ws-3"), limit: 9)).map(\.id) == ["ws-4", "ws-2", "ws-1", "ws-0"])
        #expect(try store.sessions(userID: u.id, now: later, SessionQuery(after: SessionPosition(createdAt: tie, id: "fam-3"), limit: 9)).map(\.id) == ["fam-4", "fam-2", "fam-1", "fam-0"])
        #expect(try store.webSessions(userID: u.id, now: later, SessionQuery(after: SessionPosition(createdAt: tie, id: "ws-4"), limit: 2)).map(\.id) == ["ws-2", "ws-1"])
        #expect(try store.sessions(userID: u.id, now: later, SessionQuery(after: SessionPosition(createdAt: tie, id: "fam-4"), limit: 2)).map(\.id) == ["fam-2", "fam-1"])
        #expect(try store.webSessions(userID: u.id, now: later, SessionQuery(after: SessionPosition(createdAt: start, id: "ws-0"), limit: 9)).isEmpty)
        #expect(try store.sessions(userID: u.id, now: later, SessionQuery(after: SessionPosition(createdAt: start, id: "fam-0"), limit: 9)).isEmpty)
        // Browsers seen only after a time: the idle ones take no place (apps have no such clock).
        #expect(try store.webSessions(userID: u.id, now: later, SessionQuery(limit: 9, seenAfter: start + 2)).map(\.id) == ["ws-3", "ws-4"])
        #expect(try store.sessions(userID: u.id, now: later, SessionQuery(limit: 9, seenAfter: start + 2)).count == 5)
        // By ID: the oldest, past any short list; not another account's; not once ended.
        #expect(try store.webSessions(userID: u.id, now: later, SessionQuery(id: "ws-0", limit: 1)).map(\.id) == ["ws-0"])
        #expect(try store.sessions(userID: u.id, now: later, SessionQuery(id: "fam-0", limit: 1)).map(\.id) == ["fam-0"])
        #expect(try store.webSessions(userID: v.id, now: later, SessionQuery(id: "ws-0", limit: 1)).isEmpty && store.sessions(userID: v.id, now: later, SessionQuery(id: "fam-0", limit: 1)).isEmpty)
        #expect(try store.revokeWebSession(id: "ws-0", userID: u.id, at: later, writes: []))
        #expect(try store.revokeRefreshFamily(hash: [0, 1], now: later, writes: []))
        #expect(try store.webSessions(userID: u.id, now: later, SessionQuery(id: "ws-0", limit: 1)).isEmpty && store.sessions(userID: u.id, now: later, SessionQuery(id: "fam-0", limit: 1)).isEmpty)
        #expect(try store.sessions(userID: u.id, now: start + 60_000, SessionQuery(id: "fam-1", limit: 1)).isEmpty, "expired")
    }

    @Test("many of an account's sessions end in one transaction: its live browsers' and its refresh families, each with its writes; another account's, an unknown or an ended one passed over; a failed write ends none", arguments: Backend.available)
    func endSessions(_ backend: Backend) throws {
        let store = try backend.open()
        let (u, v) = (user(1), user(2))
        for x in [u, v] { try store.createUser(x, credential: credential(x.id)) }
        let start = now()
        var writes: [StoreWrite] = []
        for (owner, name) in [(u, "u"), (v, "v")] {
            for i in 0..<3 {
                writes += Self.sessionPair(owner.id, web: "ws-\(name)\(i)", family: "fam-\(name)\(i)", hash: Array("\(name)\(i)".utf8), at: start + Int64(i), expiresAt: start + 60_000)
            }
        }
        try store.perform(writes)
        #expect(try store.endSession("fam-u2", at: start, until: start + 60_000, writes: []))
        func audit(_ id: String) -> [StoreWrite] { [.audit(AuditEvent(at: start, kind: "session_revoked", outcome: "success", userID: u.id, detail: "session \(id)"))] }
        // A write that fails takes the whole transaction with it.
        let clash = try #require(try store.webSessions(userID: v.id, now: start, SessionQuery(id: "ws-v0", limit: 1)).first)
        #expect(throws: StoreError.self) {
            try store.endSessions(userID: u.id, web: ["ws-u0"], apps: ["fam-u0"], at: start + 5, until: start + 60_000) { $0 == "fam-u0" ? [.webSession(clash)] : audit($0) }
        }
        #expect(try store.webSessions(userID: u.id, now: start + 5, SessionQuery(limit: 9)).count == 3 && !store.sessionEnded("fam-u0"))
        // The account's own: ended, each audited; the other account's, the unknown and the ended passed over.
        let ended = try store.endSessions(userID: u.id, web: ["ws-u0", "ws-u1", "ws-v0", "ws-none"], apps: ["fam-u0", "fam-u1", "fam-u2", "fam-v0", "fam-none"],
                                          at: start + 5, until: start + 60_000, writes: audit)
        #expect(ended == ["ws-u0", "ws-u1", "fam-u0", "fam-u1"])
        #expect(try store.webSessions(userID: u.id, now: start + 5, SessionQuery(limit: 9)).map(\.id) == ["ws-u2"])
        #expect(try store.sessions(userID: u.id, now: start + 5, SessionQuery(limit: 9)).isEmpty)
        #expect(try store.sessionEnded("fam-u0") && store.sessionEnded("fam-u1") && !store.sessionEnded("fam-v0"))
        #expect(try store.liveRefreshToken(hash: Array("u0".utf8), now: start + 5) == nil && store.liveRefreshToken(hash: Array("v0".utf8), now: start + 5) != nil)
        #expect(try store.webSessions(userID: v.id, now: start + 5, SessionQuery(limit: 9)).count == 3 && store.sessions(userID: v.id, now: start + 5, SessionQuery(limit: 9)).count == 3)
        #expect(try store.auditEvents(limit: 20).compactMap(\.detail).sorted() == ["session fam-u0", "session fam-u1", "session ws-u0", "session ws-u1"])
        // Again: nothing left of them to end, nothing written.
        #expect(try store.endSessions(userID: u.id, web: ["ws-u0"], apps: ["fam-u0"], at: start + 6, until: start + 60_000, writes: audit).isEmpty)
        #expect(try store.auditEvents(limit: 20).count == 4)
    }

    @Test("a session ID names its account, a browser's or an app's refresh family, live or not; an unknown ID, or one gone with its account, names none", arguments: Backend.available)
    func sessionOwner(_ backend: Backend) throws {
        let store = try backend.open()
        let (a, b) = (user(1), user(2))
        for u in [a, b] { try store.createUser(u, credential: credential(u.id)) }
        let web = Self.session(a.id)
        let family = "fam-\(UUID().uuidString.prefix(8))"
        try store.perform([.webSession(web), .refreshToken(RefreshTokenRow(hash: [9, 9], family: family, userID: b.id, clientID: "app", scope: "openid",
                                                                           authTime: 1, amr: ["pop"], expiresAt: now() + 60_000, createdAt: now()))])
        #expect(try store.sessionOwner(id: web.id) == a.id)
        #expect(try store.sessionOwner(id: family) == b.id)
        #expect(try store.sessionOwner(id: "ws-none") == nil && store.sessionOwner(id: "") == nil)
        // Ended: still named (the caller decides it is not live).
        #expect(try store.revokeWebSession(id: web.id, userID: a.id, at: now(), writes: []))
        #expect(try store.sessionOwner(id: web.id) == a.id)
        #expect(try store.deleteUser(id: b.id, pseudonym: "deleted:b", at: now(), writes: []))
        #expect(try store.sessionOwner(id: family) == nil)
    }

    @Test("authorization codes: of 16 concurrent uses one wins, inside its transaction; expired codes cannot be used; a family is revoked", arguments: Backend.available)
    func codes(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(2)
        try store.createUser(u, credential: credential(u.id))
        let row = AuthorizationCodeRow(hash: (0..<32).map { _ in UInt8.random(in: 0...255) }, clientID: "spa", redirectURI: "https://a.example/cb",
                                       codeChallenge: "c", nonce: nil, scope: "openid", audience: nil, userID: u.id, authTime: 1, amr: ["otp"], credential: nil,
                                       family: "fam-1", createdAt: now(), expiresAt: now() + 60_000)
        try store.perform([.authorizationCode(row)])
        #expect(try store.authorizationCode(hash: row.hash)?.row == row && store.authorizationCode(hash: row.hash)?.usedAt == nil)
        let token = RefreshTokenRow(hash: [9, 9], family: "fam-1", userID: u.id, clientID: "spa", scope: "openid", authTime: 1, amr: ["otp"],
                                    expiresAt: now() + 60_000, createdAt: now())
        let results = concurrently(16) { try store.perform([.useAuthorizationCode(hash: row.hash, at: now()), .refreshToken(RefreshTokenRow(
            hash: (0..<32).map { _ in UInt8.random(in: 0...255) }, family: "fam-1", userID: u.id, clientID: "spa", scope: "openid", authTime: 1, amr: ["otp"],
            expiresAt: now() + 60_000, createdAt: now()))]) }
        #expect(results.filter { (try? $0.get()) != nil }.count == 1)
        #expect(results.compactMap { result -> StoreError.Code? in if case .failure(let e as StoreError) = result { return e.code } else { return nil } }
            .allSatisfy { $0 == .sessionUsed })
        #expect(try store.authorizationCode(hash: row.hash)?.usedAt != nil)
        #expect(try store.sessions(userID: u.id, now: now(), SessionQuery(limit: 100)).count == 1, "only the winner's refresh token was stored")
        try store.insertRefreshToken(token)
        #expect(try store.endSession("fam-1", at: now(), until: now() + 60_000, writes: []))
        #expect(try store.sessions(userID: u.id, now: now(), SessionQuery(limit: 100)).isEmpty)
        var expired = row
        expired.hash = [1, 2, 3]
        expired.expiresAt = now() - 1
        try store.perform([.authorizationCode(expired)])
        #expect(throws: StoreError.self) { try store.perform([.useAuthorizationCode(hash: expired.hash, at: now())]) }
        // A code bound to a DPoP key (RFC 9449 §10) keeps the key's thumbprint.
        var bound = row
        bound.hash = [4, 5, 6]
        bound.dpopJKT = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
        try store.perform([.authorizationCode(bound)])
        #expect(try store.authorizationCode(hash: bound.hash)?.row == bound)
        #expect(try store.authorizationCode(hash: [7]) == nil)
    }
}
