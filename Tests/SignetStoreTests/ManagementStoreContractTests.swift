import SignetAuth
import Foundation
import SignetStore
import Testing

/// The Management API's searches, on both databases.
@Suite struct ManagementStoreContractTests {
    @Test("users sort the same on both databases by each field, with no value where a field was never set", arguments: Backend.available)
    func userOrder(_ backend: Backend) throws {
        let store = try backend.open()
        let t = now()
        // Made in this order, one millisecond apart.
        var made: [(UserRecord, CredentialRow)] = []
        for (n, email) in ["carol", "alice", "dave", "bob"].enumerated() {
            var u = user(n)
            u.email = email + "-\(UUID().uuidString.prefix(6))@signet.test"
            u.createdAt = t + Int64(n)
            var c = credential(u.id)
            c.createdAt = u.createdAt
            try store.createUser(u, credential: c)
            made.append((u, c))
        }
        let (carol, alice, dave, bob) = (made[0].0, made[1].0, made[2].0, made[3].0)
        // alice was changed later; dave signed in with his passkey, then carol with a code, later still.
        _ = try store.updateUser(id: alice.id, UserChange(name: .some("Alice")), at: t + 100, writes: [])
        let daveKey = made[2].1
        #expect(try store.recordUse(CredentialUse(credentialID: daveKey.id, userID: dave.id, publicKey: daveKey.publicKey, signCount: 0,
                                                  backupState: true, at: t + 200)) == nil)
        try store.perform([.recordLogin(userID: carol.id, at: t + 300)])

        func ids(_ order: UserQuery.Order, _ descending: Bool) throws -> [String] {
            try store.users(UserQuery(order: order, descending: descending)).users.map(\.user.id)
        }
        #expect(try ids(.createdAt, false) == [carol.id, alice.id, dave.id, bob.id])
        #expect(try ids(.email, false) == [alice.id, bob.id, carol.id, dave.id])
        // Never changed: updated when made.
        #expect(try ids(.updatedAt, false) == [carol.id, dave.id, bob.id, alice.id])
        #expect(try ids(.updatedAt, true) == [alice.id, bob.id, dave.id, carol.id])
        // Never signed in (bob, alice: their passkeys were never used) sorts as the oldest; ties by ID.
        let never = [alice.id, bob.id].sorted()
        #expect(try ids(.lastLogin, false) == never + [dave.id, carol.id])
        #expect(try ids(.lastLogin, true) == [carol.id, dave.id] + never.reversed())
        let shown = try #require(try store.managedUser(id: dave.id))
        #expect(shown.lastLogin == t + 200)
    }

    @Test("rate counters read back as counted, absent when never counted; cleared with the writes in one transaction, only those named", arguments: Backend.available)
    func rateCounters(_ backend: Backend) throws {
        let store = try backend.open()
        let (a, b, never) = (RateCounterKey(bucket: "recovery_attempts", key: [1, 2, 3]), RateCounterKey(bucket: "user_code_guesses", key: [4]),
                             RateCounterKey(bucket: "recovery_attempts", key: [9]))
        for _ in 0..<3 { _ = try store.count(bucket: a.bucket, key: a.key, windowStart: 7_200_000) }
        _ = try store.count(bucket: b.bucket, key: b.key, windowStart: 3_600_000)
        #expect(try store.rateCounts([a, b, never]) == [RateCount(counter: a, windowStart: 7_200_000, count: 3), RateCount(counter: b, windowStart: 3_600_000, count: 1)])
        let u = user(1)
        try store.createUser(u, credential: credential(u.id))
        let event = AuditEvent(at: now(), kind: "admin_attempt_limits_cleared", outcome: "success", userID: u.id)
        #expect(try store.clearRateCounts([a, never], writes: [.audit(event)]) == 1)
        #expect(try store.rateCounts([a, b]) == [RateCount(counter: b, windowStart: 3_600_000, count: 1)])
        #expect(try store.auditEvents(limit: 10).contains { $0.kind == "admin_attempt_limits_cleared" && $0.userID == u.id })
        // A write that fails takes the clearing back with it.
        #expect(throws: StoreError.self) { try store.clearRateCounts([b], writes: [.audit(event), .recordLogin(userID: "nobody", at: 0), .refreshToken(RefreshTokenRow(
            hash: [1], family: "f", userID: "no-such-user", clientID: "app", scope: "openid", authTime: 1, amr: [], expiresAt: 1, createdAt: 1))]) }
        #expect(try store.rateCounts([b]).count == 1)
    }

    @Test("a metadata search finds a string at a path alike on both databases: not a number, not another path, not the other object", arguments: Backend.available)
    func metadataSearch(_ backend: Backend) throws {
        let store = try backend.open()
        let documents: [(String?, String?)] = [
            (#"{"plan":"pro","limits":{"tier":"gold"}}"#, nil), (#"{"plan":"free","n":3}"#, #"{"plan":"pro"}"#), (#"{"plan":"pro"}"#, nil), (nil, nil),
            (#"{"n":"3","limits":{"tier":"silver"}}"#, nil),
        ]
        var ids: [String] = []
        for (n, (app, own)) in documents.enumerated() {
            let u = user(n)
            try store.perform([.createAccount(u), .userMetadata(userID: u.id, app: app, user: own)])
            ids.append(u.id)
        }
        func found(_ column: String, _ path: [String], _ value: String) throws -> Set<String> {
            Set(try store.users(UserQuery(metadata: .init(column: column, path: path, value: value), limit: 100)).users.map(\.user.id))
        }
        #expect(try found("app_metadata", ["plan"], "pro") == [ids[0], ids[2]])
        #expect(try found("user_metadata", ["plan"], "pro") == [ids[1]])
        #expect(try found("app_metadata", ["limits", "tier"], "gold") == [ids[0]])
        #expect(try found("app_metadata", ["n"], "3") == [ids[4]], "the string, not the number")
        #expect(try found("app_metadata", ["tier"], "gold").isEmpty && (try found("app_metadata", ["plan"], "PRO")).isEmpty)
        #expect(try store.users(UserQuery(metadata: .init(column: "app_metadata", path: ["plan"], value: "pro"), limit: 1)).total == 2)
        #expect(try store.managedUser(id: ids[1])?.userMetadata == #"{"plan":"pro"}"#)
    }

    @Test("a metadata change is written only over what it was merged from; daily counts and active accounts read alike on both databases", arguments: Backend.available)
    func metadataChangesAndStats(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(1)
        try store.perform([.createAccount(u), .userMetadata(userID: u.id, app: nil, user: #"{"a":1}"#)])
        #expect(throws: StoreError.self) { _ = try store.updateUser(id: u.id, UserChange(userMetadata: MetadataChange(from: nil, to: #"{"b":2}"#)), at: 1, writes: []) }
        let changed = try store.updateUser(id: u.id, UserChange(appMetadata: MetadataChange(from: nil, to: #"{"r":"x"}"#),
                                                                userMetadata: MetadataChange(from: #"{"a":1}"#, to: nil)), at: 2, writes: [])
        #expect(changed?.appMetadata == #"{"r":"x"}"# && changed?.userMetadata == nil)
        // Two days of events: the kinds asked for, successes only, by UTC day.
        let day = Int64(20_000) * 86_400_000
        for (at, kind, outcome) in [(day + 5, "sign_in", "success"), (day + 9, "sign_in", "success"), (day + 7, "sign_in", "failure"), (day + 8, "sign_up", "success"),
                                    (day + 86_400_000, "otp_sign_in", "success"), (day + 86_400_001, "refresh", "success")] {
            try store.appendAudit(AuditEvent(at: at, kind: kind, outcome: outcome))
        }
        let counts = try store.dailyEventCounts(from: day, to: day + 2 * 86_400_000, kinds: ["sign_in", "sign_up", "otp_sign_in"])
        #expect(counts == [DailyEventCount(day: 20_000, kind: "sign_in", count: 2, first: day + 5, last: day + 9),
                           DailyEventCount(day: 20_000, kind: "sign_up", count: 1, first: day + 8, last: day + 8),
                           DailyEventCount(day: 20_001, kind: "otp_sign_in", count: 1, first: day + 86_400_000, last: day + 86_400_000)])
        // Active: a code sign-in recorded on the account, or a passkey's use (its sign-up counts).
        let other = user(2)
        try store.createUser(other, credential: credential(other.id))
        try store.perform([.recordLogin(userID: u.id, at: 1_000)])
        #expect(try store.activeUsers(since: 500) == 2 && (try store.activeUsers(since: Int64.max / 2)) == 0)
    }

    @Test("audit rows page by offset in either order, filter by kind and outcome, and are counted alike on both databases", arguments: Backend.available)
    func auditPaging(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(9)
        try store.createUser(u, credential: credential(u.id))
        for at in 1...7 {
            try store.appendAudit(AuditEvent(at: Int64(at), kind: at % 2 == 0 ? "sign_in" : "refresh", outcome: at == 4 ? "failure" : "success", userID: u.id))
        }
        try store.appendAudit(AuditEvent(at: 8, kind: "sign_in", outcome: "success", userID: "someone else"))
        func ats(_ q: AuditQuery) throws -> [Int64] { try store.auditEntries(q).map(\.event.at) }
        #expect(try ats(AuditQuery(userID: u.id, limit: 3)) == [7, 6, 5])
        #expect(try ats(AuditQuery(userID: u.id, limit: 3, offset: 3)) == [4, 3, 2])
        #expect(try ats(AuditQuery(userID: u.id, limit: 3, offset: 6)) == [1])
        #expect(try ats(AuditQuery(userID: u.id, limit: 3, offset: 3, oldestFirst: true)) == [4, 5, 6])
        #expect(try store.auditCount(AuditQuery(userID: u.id, limit: 1, offset: 5)) == 7)
        let failedSignIns = AuditQuery(userID: u.id, events: [AuditMatch(kind: "sign_in", outcome: "failure")], limit: 10)
        #expect(try ats(failedSignIns) == [4] && store.auditCount(failedSignIns) == 1)
        let any = AuditQuery(events: [AuditMatch(kind: "sign_in"), AuditMatch(kind: "nothing")], limit: 10)
        #expect(try ats(any) == [8, 6, 4, 2] && store.auditCount(any) == 4)
        #expect(try ats(AuditQuery(events: [], limit: 10)).isEmpty && store.auditCount(AuditQuery(events: [])) == 0)
    }
}
