import Foundation
import SignetAuth
import SignetStore
import Testing

/// Back-Channel Logout's subscriptions and notices, on both databases: a notice is queued in
/// the transaction that ends its session, once, and the sweep finds the sessions that ended
/// without queuing theirs.
@Suite struct LogoutStoreContractTests {
    static func subscription(_ userID: String, credential: [UInt8]? = nil, webSession: String? = nil, offline: Bool = true,
                             at: Int64 = now(), expiresAt: Int64? = nil) -> LogoutSubscriptionRow {
        LogoutSubscriptionRow(sid: "sid-\(UUID().uuidString.prefix(12))", clientID: "spa", userID: userID, credential: credential, webSession: webSession,
                              offline: offline, createdAt: at, expiresAt: expiresAt ?? at + 3_600_000)
    }

    /// The logout notices waiting, as a sender would claim them (and leaves them for the next).
    static func notices(_ store: any Store) throws -> [LogoutNotice] {
        try store.claimMail(now: now() + 1, lease: 0, limit: 100, logouts: true).claimed.compactMap { row in
            #expect(row.kind == "backchannel_logout" && row.recipient == "spa")
            return LogoutNotice(encoded: row.message)
        }
    }

    @Test("ending a session queues its one notice in the same transaction; mail claims never take it; eight parallel ends queue one", arguments: Backend.available)
    func endSession(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(1)
        try store.createUser(u, credential: credential(u.id))
        let s = Self.subscription(u.id)
        try store.perform([.logoutSubscription(s), .logoutSubscription(s)])
        #expect(try store.logoutSubscriptions(userID: u.id) == [s], "a second subscription of one session is the same one")
        #expect(try store.sweepLogouts(now: now(), limit: 100) == 0, "a live session is not swept")
        let results = concurrently(8) { try store.endSession(s.sid, at: now(), until: now() + 60_000, writes: []) }
        #expect(results.filter { (try? $0.get()) == true }.count == 1)
        #expect(try store.logoutSubscriptions(userID: u.id).isEmpty)
        #expect(try store.claimMail(now: now() + 1, lease: 60_000, limit: 100, logouts: false).claimed.isEmpty, "not mail")
        #expect(try Self.notices(store) == [LogoutNotice(subject: u.id, sid: s.sid)])
        #expect(try store.sweepLogouts(now: now(), limit: 100) == 0)
        #expect(try store.hasLogoutWork())
        try store.perform([.mail(OutboxRow(id: "m1", kind: "otp", recipient: "a@signet.test", message: [1], createdAt: 5, dueAt: 5))])
        #expect(try store.outboxBacklog().map { "\($0.queue) \($0.count)" } == ["backchannel_logout 1", "mail 1"])
        #expect(try store.outboxBacklog().last?.oldestCreated == 5)
    }

    @Test("ending a browser session: its clients' sessions without a refresh token end with it, those with one do not; both get a notice, other browsers' none", arguments: Backend.available)
    func browserSession(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(2)
        try store.createUser(u, credential: credential(u.id))
        let browser = WebStoreContractTests.session(u.id), other = WebStoreContractTests.session(u.id)
        try store.perform([.webSession(browser), .webSession(other)])
        let online = Self.subscription(u.id, webSession: browser.id, offline: false), offline = Self.subscription(u.id, webSession: browser.id)
        let elsewhere = Self.subscription(u.id, webSession: other.id, offline: false)
        try store.perform([.logoutSubscription(online), .logoutSubscription(offline), .logoutSubscription(elsewhere)])
        #expect(try store.revokeWebSession(id: browser.id, userID: u.id, at: now(), writes: []))
        #expect(try store.sessionEnded(online.sid) && !store.sessionEnded(offline.sid) && !store.sessionEnded(elsewhere.sid))
        #expect(Set(try Self.notices(store).map(\.sid)) == [online.sid, offline.sid])
        #expect(try store.logoutSubscriptions(userID: u.id) == [elsewhere])
    }

    @Test("a cancelled recovery: the sessions its passkey signed in, and the session that opened it, get their notices in the cancellation's transaction; others none", arguments: Backend.available)
    func cancelledRecovery(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(4), own = credential(u.id)
        try store.createUser(u, credential: own)
        var added = credential(u.id)
        added.recoveryID = "r-1"
        let opener = "recovery-session-\(UUID().uuidString.prefix(6))"
        try store.perform([.openRecovery(RecoveryRow(id: "r-1", userID: u.id, openedAt: now(), holdUntil: now() + 60_000, session: opener)), .addCredential(added, limit: nil)])
        let byAdded = Self.subscription(u.id, credential: added.id), opened = LogoutSubscriptionRow(
            sid: opener, clientID: "spa", userID: u.id, credential: nil, webSession: nil, offline: true, createdAt: now(), expiresAt: now() + 3_600_000)
        let byOwn = Self.subscription(u.id, credential: own.id)
        try store.perform([.logoutSubscription(byAdded), .logoutSubscription(opened), .logoutSubscription(byOwn)])
        #expect(try store.cancelRecoveries(userID: u.id, at: now(), writes: []) != nil)
        #expect(try store.logoutSubscriptions(userID: u.id) == [byOwn], "queued in the cancellation's transaction")
        #expect(Set(try Self.notices(store).map(\.sid)) == [byAdded.sid, opener])
    }

    @Test("the sweep: an account gone or its sessions ended, a session ended, a passkey revoked each queue a notice; an expired subscription goes quietly", arguments: Backend.available)
    func sweep(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(3), passkey = credential(u.id)
        try store.createUser(u, credential: passkey)
        let gone = Self.subscription("nobody-\(UUID().uuidString.prefix(6))")
        let expired = Self.subscription("nobody-else", at: now() - 7_200_000, expiresAt: now() - 1)
        let live = Self.subscription(u.id, credential: passkey.id)
        try store.perform([.logoutSubscription(gone), .logoutSubscription(expired), .logoutSubscription(live)])
        #expect(try store.sweepLogouts(now: now(), limit: 100) == 1)
        #expect(try Self.notices(store).map(\.sid) == [gone.sid], "the expired one went without a notice")
        #expect(try store.rowCounts()["logout_subscriptions"] == 1)
        // The passkey that signed it in revoked (by a path that queued nothing itself).
        _ = try store.perform([.addCredential(credential(u.id), limit: nil)])
        #expect(try store.revokeCredential(id: passkey.id, userID: u.id, at: now(), writes: { _ in [] }) == .revoked)
        #expect(try store.logoutSubscriptions(userID: u.id).isEmpty, "queued in the revocation's transaction")
        #expect(Set(try Self.notices(store).map(\.sid)) == [gone.sid, live.sid])
        // The account's sessions ended after this one started: swept.
        let later = Self.subscription(u.id, at: now() - 10)
        try store.perform([.logoutSubscription(later)])
        #expect(try store.revokeSessions(userID: u.id, at: now(), writes: []))
        #expect(try store.logoutSubscriptions(userID: u.id).isEmpty)
        let started = Self.subscription(u.id, at: now() + 60_000)
        try store.perform([.logoutSubscription(started)])
        #expect(try store.sweepLogouts(now: now(), limit: 100) == 0, "a session started after the account's sessions ended lives")
    }
}
