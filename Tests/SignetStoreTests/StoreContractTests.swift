import SignetAuth
import Foundation
import SignetStore
import SignetTestSupport
import Testing

/// The backends under test: SQLite always; PostgreSQL when the test command started one
/// (`SIGNET_TEST_POSTGRES`, its admin URL). CI always has it.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres
    var testDescription: String { rawValue }

    static var available: [Backend] {
        ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"]?.isEmpty == false ? [.sqlite, .postgres] : [.sqlite]
    }

    /// A fresh, empty store.
    func open() throws -> any Store {
        switch self {
        case .sqlite:
            let path = TemporaryDatabase.path("store")
            return try SQLStore(path: path)
        case .postgres:
            let admin = ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"]!
            let url = try PostgresAdmin.createDatabase(adminURL: admin, name: "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20))
            return try SQLStore(postgres: url, connections: 8)
        }
    }

}

func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

func user(_ n: Int) -> UserRecord {
    UserRecord(id: "user-\(n)-\(UUID().uuidString.prefix(6))", handle: (0..<32).map { _ in UInt8.random(in: 0...255) }, email: "u\(n)-\(UUID().uuidString.prefix(6))@signet.test", name: "U\(n)", emailVerified: false, createdAt: now())
}

func credential(_ userID: String) -> CredentialRow {
    CredentialRow(id: (0..<32).map { _ in UInt8.random(in: 0...255) }, userID: userID, publicKey: [1, 2, 3], algorithm: -7, signCount: 0,
                  aaguid: "00000000-0000-0000-0000-000000000000", format: "none", backupEligible: true, backupState: true,
                  transports: ["internal"], name: nil, createdAt: now())
}

/// A new account with one passkey whose stored counter is `signCount`.
func registered(_ store: any Store, _ n: Int, signCount: Int64) throws -> (UserRecord, CredentialRow) {
    let a = user(n)
    var c = credential(a.id)
    c.signCount = signCount
    try store.createUser(a, credential: c)
    return (a, c)
}

/// Runs `n` copies of `body` at once, each on its own thread, and returns their results.
func concurrently<T: Sendable>(_ n: Int, _ body: @escaping @Sendable () throws -> T) -> [Result<T, any Error>] {
    simultaneously(n) { _ in try body() }
}

/// One contract, two databases: every test runs unchanged against SQLite and PostgreSQL.
@Suite struct StoreContractTests {
    @Test("migrations apply once, also when two instances start at once", arguments: Backend.available)
    func migrations(_ backend: Backend) throws {
        let store = try backend.open()
        #expect(try store.rowCounts()["users"] == 0)
        if backend == .postgres, let admin = ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"] {
            let url = try PostgresAdmin.createDatabase(adminURL: admin, name: "m_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20))
            let opened = concurrently(4) { try SQLStore(postgres: url, connections: 2).schemaVersions() }
            for result in opened { #expect(try result.get() == Array(1...35)) }
        }
        if let sql = store as? SQLStore { #expect(try sql.schemaVersions() == Array(1...35)) }
    }

    @Test("a database that a newer Signet upgraded is refused at open (schema_newer)", arguments: Backend.available)
    func newerSchema(_ backend: Backend) throws {
        let next = SQLStore.knownSchemaVersion + 1
        let reopen: () throws -> SQLStore
        var sqlitePath: String?
        switch backend {
        case .sqlite:
            let path = TemporaryDatabase.path("newer")
            _ = try SQLStore(path: path)
            _ = try rawSQLite(path, "INSERT INTO schema_migrations VALUES (\(next), 0)")
            sqlitePath = path
            reopen = { try SQLStore(path: path) }
        case .postgres:
            let admin = try #require(ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"])
            let url = try PostgresAdmin.createDatabase(adminURL: admin, name: "n_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20))
            _ = try SQLStore(postgres: url, connections: 1)
            try PostgresAdmin.execute(url: url, "INSERT INTO schema_migrations VALUES (\(next), 0)")
            reopen = { try SQLStore(postgres: url, connections: 1) }
        }
        #expect {
            try reopen()
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .schemaNewer && error.detail.contains("schema \(next), and this signet knows schemas up to \(next - 1)")
        }
        // Nothing of this build's was applied to it.
        if let sqlitePath { #expect(try rawSQLite(sqlitePath, "SELECT version FROM schema_migrations ORDER BY version") == (1...next).map(String.init)) }
    }

    @Test("a user is created with its passkey or not at all", arguments: Backend.available)
    func createUser(_ backend: Backend) throws {
        let store = try backend.open()
        let a = user(1)
        let c = credential(a.id)
        try store.createUser(a, credential: c)
        #expect(try store.user(email: a.email)?.id == a.id)
        #expect(try store.credentialAndUser(credentialID: c.id)?.1.id == a.id)
        // Same email: conflict, and the second user's passkey is not left behind.
        var b = user(2)
        b.email = a.email
        #expect(code { try store.createUser(b, credential: credential(b.id)) } == .emailTaken)
        // Same credential ID for another user: conflict, and that user is not left behind.
        let d = user(3)
        var stolen = credential(d.id)
        stolen.id = c.id
        #expect(code { try store.createUser(d, credential: stolen) } == .credentialTaken)
        // And added to an existing account: the same typed refusal.
        #expect(code { try store.perform([.addCredential(stolen, limit: nil)]) } == .credentialTaken)
        #expect(try store.user(id: d.id) == nil)
        #expect(try store.rowCounts()["users"] == 1 && store.rowCounts()["credentials"] == 1)
    }

    @Test("a passkey's attestation mark round-trips, read alone and with its account", arguments: Backend.available)
    func attestedCredential(_ backend: Backend) throws {
        let store = try backend.open()
        let a = user(1)
        var c = credential(a.id)
        c.attested = true
        c.backupEligible = false
        try store.createUser(a, credential: c)
        var plain = credential(a.id)
        plain.createdAt += 1
        try store.perform([.addCredential(plain, limit: nil)])
        #expect(try store.credential(id: c.id) == c && store.credential(id: c.id)?.isHardwareBound == true)
        #expect(try store.credentialAndUser(credentialID: c.id)?.0 == c && store.credentialAndUser(credentialID: c.id)?.1.id == a.id)
        #expect(try store.credentials(userID: a.id).map(\.attested) == [true, false])
    }

    @Test("text round-trips: empty, non-ASCII, long", arguments: Backend.available)
    func textRoundTrip(_ backend: Backend) throws {
        let store = try backend.open()
        for (n, name) in ["", "Zoë Ångström 🚀", String(repeating: "ü", count: 3000), "a'b\"c\\d"].enumerated() {
            var u = user(40 + n)
            u.name = name
            try store.createUser(u, credential: credential(u.id))
            #expect(try store.user(id: u.id)?.name == name)
            #expect(try store.user(email: u.email)?.id == u.id)
        }
    }

    @Test("bytes round-trip: every byte value, zeros, one byte, and found again by them", arguments: Backend.available)
    func bytesRoundTrip(_ backend: Backend) throws {
        let store = try backend.open()
        let every = (0...255).map { UInt8($0) }
        for (n, key) in [every, [UInt8](repeating: 0, count: 65), [0], [0xff], every.reversed() + every].enumerated() {
            let u = user(60 + n)
            var c = credential(u.id)
            c.id = key
            c.publicKey = key.reversed() + [0, 0]
            try store.createUser(u, credential: c)
            let stored = try #require(try store.credential(id: key))
            #expect(stored.id == key && stored.publicKey == c.publicKey && stored.userID == u.id)
            #expect(try store.user(id: u.id)?.handle == u.handle)
        }
        // A key that is a prefix of a stored one is not that one.
        #expect(try store.credential(id: Array(every.prefix(255))) == nil)
    }

    @Test("revoking a credential takes the device keys of the devices it approved, and theirs in turn, with their IDs given to the writes; others stay", arguments: Backend.available)
    func approvalCascade(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(1)
        let c = credential(u.id)
        try store.createUser(u, credential: c)
        var second = credential(u.id)
        second.createdAt += 1
        try store.perform([.addCredential(second, limit: nil)])
        func key(_ id: String, approvedBy: String?) -> DeviceKeyRow {
            DeviceKeyRow(id: id, userID: u.id, deviceID: "device-" + id, platform: "ios", name: nil, publicKey: [4], createdAt: now(), approvedBy: approvedBy)
        }
        // A passkey approved a tablet, whose key approved a TV; a phone's own key approved nothing.
        // A passkey is named by its ID in base64url (RFC 4648 §5, no padding).
        let passkey = Data(c.id).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        for k in [key("dk_tablet", approvedBy: passkey), key("dk_tv", approvedBy: "dk_tablet"), key("dk_own", approvedBy: nil)] {
            _ = try store.enrollDeviceKey(k, limit: 10)
        }
        #expect(try store.deviceKey(id: "dk_tv")?.approvedBy == "dk_tablet")
        var given: [String] = []
        #expect(try store.revokeCredential(id: c.id, userID: u.id, at: now(), writes: { cascaded in given = cascaded; return [] }) == .revoked)
        #expect(given == ["dk_tablet", "dk_tv"])
        #expect(try store.deviceKeys(userID: u.id).filter { $0.revokedAt == nil }.map(\.id) == ["dk_own"])
        // Revoking a key whose approvals are gone takes nothing more.
        #expect(try store.revokeDeviceKey(id: "dk_own", userID: u.id, at: now(), writes: { cascaded in given = cascaded; return [] }))
        #expect(given.isEmpty)
        // A cancelled recovery takes what it added, and what that approved.
        try store.perform([.openRecovery(RecoveryRow(id: "r-held", userID: u.id, openedAt: now(), holdUntil: now() + 60_000, session: "held"))])
        var added = key("dk_recovered", approvedBy: nil)
        added.recoveryID = "r-held"
        for k in [added, key("dk_laptop", approvedBy: "dk_recovered")] { _ = try store.enrollDeviceKey(k, limit: 10) }
        let cancelled = try #require(try store.cancelRecoveries(userID: u.id, at: now(), writes: []))
        #expect(cancelled.deviceKeys == ["dk_recovered", "dk_laptop"])
        #expect(try store.deviceKeys(userID: u.id).allSatisfy { $0.revokedAt != nil })
    }

    @Test("a key written twice is a conflict, as a taken key is on either database", arguments: Backend.available)
    func takenKey(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(1)
        try store.createUser(u, credential: credential(u.id))
        let token = RefreshTokenRow(hash: [7, 7, 7], family: "fam", userID: u.id, clientID: "app", scope: "openid", authTime: 1, amr: ["pop"],
                                    expiresAt: now() + 60_000, createdAt: now())
        try store.perform([.refreshToken(token)])
        #expect(code { try store.perform([.refreshToken(token)]) } == .conflict)
    }

    @Test("a batch is all or nothing", arguments: Backend.available)
    func batch(_ backend: Backend) throws {
        let store = try backend.open()
        let session = (0..<16).map { _ in UInt8.random(in: 0...255) }
        #expect(try store.useSession(id: session, expiresAt: now() + 60_000))
        let u = user(4)
        #expect(throws: StoreError.self) {
            try store.perform([.createUser(u, credential(u.id)), .useSession(id: session, expiresAt: now() + 60_000)])
        }
        #expect(try store.user(id: u.id) == nil)
    }

    @Test("a sign-in commits only against the credential it verified, and only with a counter that moves forward", arguments: Backend.available)
    func completeSignIn(_ backend: Backend) throws {
        let store = try backend.open()
        let (a, c) = try registered(store, 5, signCount: 4)
        func session() -> [UInt8] { (0..<16).map { _ in UInt8.random(in: 0...255) } }
        func use(_ session: [UInt8], count: Int64, userID: String? = nil, key: [UInt8]? = nil) -> SignInUse {
            SignInUse(sessionID: session, sessionExpiresAt: now() + 60_000, credentialID: c.id, userID: userID ?? a.id, publicKey: key ?? c.publicKey,
                      signCount: count, backupState: false, at: 1234)
        }
        let event = StoreWrite.audit(AuditEvent(at: 1, kind: "sign_in", outcome: "success", userID: a.id))
        func unchanged(_ used: [UInt8], _ line: Int = #line) throws {
            // A refused sign-in leaves nothing: the session is still unused, no event, no count.
            #expect(try store.useSession(id: used, expiresAt: now() + 60_000), "session kept, line \(line)")
            #expect(try store.credential(id: c.id)?.signCount == 4, "count kept, line \(line)")
            #expect(try store.auditEvents(limit: 10).isEmpty, "no event, line \(line)")
        }
        // Every refusal, each with one thing wrong.
        let refusals: [(SignInUse, SignInOutcome)] = [
            (use(session(), count: 4), .refused(.counterRegression(stored: 4))),
            (use(session(), count: 3), .refused(.counterRegression(stored: 4))),
            (use(session(), count: 0), .refused(.counterRegression(stored: 4))),
            (use(session(), count: 5, userID: "someone-else"), .refused(.credentialUnknown)),
            (use(session(), count: 5, key: [9, 9, 9]), .refused(.credentialUnknown)),
        ]
        for (attempt, expected) in refusals {
            #expect(try store.completeSignIn(attempt, writes: [event]) == expected)
            try unchanged(attempt.sessionID)
        }
        var gone = use(session(), count: 5)
        gone.credential.credentialID = [1, 2, 3]
        #expect(try store.completeSignIn(gone, writes: [event]) == .refused(.credentialUnknown))
        try unchanged(gone.sessionID)

        // The counter moves forward: committed, with the account, the count, the time, the
        // backup state and the writes; the session is used.
        let first = session()
        #expect(try store.completeSignIn(use(first, count: 5), writes: [event]) == .signedIn(a))
        let stored = try #require(try store.credential(id: c.id))
        #expect(stored.signCount == 5 && stored.lastUsedAt == 1234 && stored.backupState == false)
        #expect(try store.auditEvents(limit: 10).count == 1)
        #expect(try !store.useSession(id: first, expiresAt: now() + 60_000))
        // The same session again: the typed refusal the service reports as an auth session used.
        #expect(throws: StoreError.self) { try store.completeSignIn(use(first, count: 6), writes: []) }
        do {
            _ = try store.completeSignIn(use(first, count: 6), writes: [])
        } catch {
            #expect(error.code == .sessionUsed)
        }
        #expect(code { try store.perform([.useSession(id: first, expiresAt: now() + 60_000)]) } == .sessionUsed)

        // Revoked: refused as such.
        try store.perform([.addCredential(credential(a.id), limit: nil)])
        #expect(try store.revokeCredential(id: c.id, userID: a.id, at: 99) == .revoked)
        #expect(try store.completeSignIn(use(session(), count: 6), writes: [event]) == .refused(.credentialRevoked))

        // An authenticator without a counter (0 stored, 0 sent) signs in every time.
        let b = user(6)
        let d = credential(b.id)
        try store.createUser(b, credential: d)
        for _ in 0..<2 {
            let zero = SignInUse(sessionID: session(), sessionExpiresAt: now() + 60_000, credentialID: d.id, userID: b.id, publicKey: d.publicKey,
                                 signCount: 0, backupState: true, at: 1)
            #expect(try store.completeSignIn(zero, writes: []) == .signedIn(b))
        }
    }

    @Test("a passkey's use is recorded only while it is live and its counter moves forward; of 16 at once with one value, one", arguments: Backend.available)
    func recordUse(_ backend: Backend) throws {
        let store = try backend.open()
        let (a, c) = try registered(store, 8, signCount: 4)
        func use(_ row: CredentialRow, count: Int64, backupState: Bool = true, at: Int64 = 1, userID: String? = nil, key: [UInt8]? = nil) -> CredentialUse {
            CredentialUse(credentialID: row.id, userID: userID ?? row.userID, publicKey: key ?? row.publicKey, signCount: count, backupState: backupState, at: at)
        }
        #expect(try store.recordUse(use(c, count: 4)) == .counterRegression(stored: 4))
        #expect(try store.recordUse(use(c, count: 0)) == .counterRegression(stored: 4))
        var unknown = use(c, count: 9)
        unknown.credentialID = [1, 2, 3]
        #expect(try store.recordUse(unknown) == .credentialUnknown)
        #expect(try store.recordUse(use(c, count: 9, userID: "someone-else")) == .credentialUnknown)
        #expect(try store.recordUse(use(c, count: 9, key: [9, 9, 9])) == .credentialUnknown)
        #expect(try store.credential(id: c.id)?.signCount == 4)
        #expect(try store.recordUse(use(c, count: 5, backupState: false, at: 77)) == nil)
        let used = try #require(try store.credential(id: c.id))
        #expect(used.signCount == 5 && used.backupState == false && used.lastUsedAt == 77)
        let six = use(c, count: 6, at: 2)
        let results = concurrently(16) { try store.recordUse(six) }
        #expect(results.filter { (try? $0.get()) == .some(nil) }.count == 1)
        #expect(results.filter { (try? $0.get()) == .counterRegression(stored: 6) }.count == 15)
        // Revoked: never again. Without a counter (both zero): every time.
        try store.perform([.addCredential(credential(a.id), limit: nil)])
        #expect(try store.revokeCredential(id: c.id, userID: a.id, at: 3) == .revoked)
        #expect(try store.recordUse(use(c, count: 100, at: 4)) == .credentialRevoked)
        let d = credential(a.id)
        try store.perform([.addCredential(d, limit: nil)])
        #expect(try store.recordUse(use(d, count: 0, at: 5)) == nil)
        #expect(try store.recordUse(use(d, count: 0, at: 6)) == nil)
    }

    @Test("of 16 concurrent sign-ins with one counter value over one stored count, exactly one commits", arguments: Backend.available)
    func signInCounterRace(_ backend: Backend) throws {
        let store = try backend.open()
        let (a, c) = try registered(store, 7, signCount: 0)
        let results = concurrently(16) {
            try store.completeSignIn(SignInUse(
                sessionID: (0..<16).map { _ in UInt8.random(in: 0...255) }, sessionExpiresAt: now() + 60_000, credentialID: c.id, userID: a.id,
                publicKey: c.publicKey, signCount: 1, backupState: true, at: 1), writes: [])
        }
        #expect(results.filter { (try? $0.get()) == .signedIn(a) }.count == 1)
        #expect(results.filter { (try? $0.get()) == .refused(.counterRegression(stored: 1)) }.count == 15)
    }

    @Test("a rate-limit count is one atomic statement: 16 at once count 1 to 16; a new window starts over; keys and buckets apart", arguments: Backend.available)
    func rateCounters(_ backend: Backend) throws {
        let store = try backend.open()
        let key = Array("198.51.100.7".utf8)
        let counts = concurrently(16) { try store.count(bucket: "failures_ip", key: key, windowStart: 60_000) }
        #expect(Set(counts.compactMap { try? $0.get() }) == Set(1...16))
        #expect(try store.count(bucket: "failures_ip", key: key, windowStart: 120_000) == 1)
        #expect(try store.count(bucket: "sign_up_ip", key: key, windowStart: 120_000) == 1)
        #expect(try store.count(bucket: "failures_ip", key: Array("other".utf8), windowStart: 120_000) == 1)
        #expect(try store.count(bucket: "failures_ip", key: key, windowStart: 120_000) == 2)
    }

    @Test("purge forgets old rate-limit windows and audit rows before the cut, keeping the rest in order", arguments: Backend.available)
    func purge(_ backend: Backend) throws {
        let store = try backend.open()
        for at in [10, 20, 30, 40, 50] as [Int64] { try store.appendAudit(AuditEvent(at: at, kind: "sign_in", outcome: "success")) }
        _ = try store.count(bucket: "b", key: [1], windowStart: 0)
        _ = try store.count(bucket: "b", key: [2], windowStart: 100_000_000)
        #expect(try store.purge(now: 100_000_000, auditBefore: 35, batch: 2) == 3)
        #expect(try store.auditEvents(limit: 10).map(\.at) == [50, 40])
        // The old window is gone (it counts from 1 again); the recent one is kept.
        #expect(try store.count(bucket: "b", key: [1], windowStart: 0) == 1)
        #expect(try store.count(bucket: "b", key: [2], windowStart: 100_000_000) == 2)
        // Nothing new enough: every row goes but the newest, so the next ID is past every one
        // given before (SQLite numbers a row one past the highest left).
        let highest = try #require(try store.auditEntries(AuditQuery(limit: 1)).first?.id)
        #expect(try store.purge(now: 100_000_000, auditBefore: 1000, batch: 1) == 1)
        #expect(try store.auditEvents(limit: 10).map(\.at) == [50])
        #expect(try store.purge(now: 100_000_000, auditBefore: 1000, batch: 1) == 0)
        // A backlog many batches long goes whole, and what is new enough stays.
        for at in 1...23 as ClosedRange<Int64> { try store.appendAudit(AuditEvent(at: at, kind: "sign_in", outcome: "success")) }
        try store.appendAudit(AuditEvent(at: 5000, kind: "sign_in", outcome: "success"))
        #expect(try store.auditEntries(AuditQuery(after: highest, limit: 30)).count == 24)
        #expect(try store.purge(now: 100_000_000, auditBefore: 1000, batch: 4) == 24)
        #expect(try store.auditEvents(limit: 10).map(\.at) == [5000])
    }

    @Test("of 32 concurrent uses of one session exactly one wins", arguments: Backend.available)
    func singleUse(_ backend: Backend) throws {
        let store = try backend.open()
        let session = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let results = concurrently(32) { try store.useSession(id: session, expiresAt: now() + 60_000) }
        #expect(results.filter { (try? $0.get()) == true }.count == 1)
        #expect(results.filter { (try? $0.get()) == false }.count == 31)
        #expect(try store.purgeUsedSessions(now: now() + 120_000) == 1)
    }

    @Test("email codes: one per key; a holder's codes are discarded together, others kept", arguments: Backend.available)
    func emailCodes(_ backend: Backend) throws {
        let store = try backend.open()
        let t = now()
        func code(_ key: String, holder: String) -> EmailCodeRow {
            EmailCodeRow(email: key, id: UUID().uuidString, codeHash: Array(repeating: 7, count: 32), clientID: holder, createdAt: t, expiresAt: t + 300_000)
        }
        let address = "codes-\(UUID().uuidString.prefix(6))@signet.test"
        #expect(try store.issueEmailCode(code(address, holder: "app"), interval: 30_000, mail: nil))
        #expect(try store.issueEmailCode(code("email-change:" + address, holder: "email-change:u1"), interval: 30_000, mail: nil))
        // Inside the interval, the same key is refused; the other key was not.
        #expect(try !store.issueEmailCode(code(address, holder: "app"), interval: 30_000, mail: nil))
        try store.perform([.discardEmailCodes(holder: "email-change:u1")])
        #expect(try store.emailCode(email: "email-change:" + address) == nil)
        #expect(try store.emailCode(email: address)?.clientID == "app")
    }

    @Test("deleting a client ends the families issued to it, and only those", arguments: Backend.available)
    func clientDeletion(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(6)
        try store.createUser(u, credential: credential(u.id))
        let id = "gone-\(UUID().uuidString.prefix(6))"
        try store.insertClient(ClientRow(id: id, name: "Gone", type: "public", secretHash: nil, grants: ["refresh_token"], scopes: [], redirectURIs: [],
                                         audiences: nil, createdAt: 0))
        func token(_ byte: UInt8, client: String, family: String) throws -> [UInt8] {
            let hash = [UInt8](repeating: byte, count: 31) + [UInt8.random(in: 0...255)]
            try store.insertRefreshToken(RefreshTokenRow(hash: hash, family: family + "-\(id)", userID: u.id, clientID: client, scope: "openid", authTime: 1,
                                                         amr: ["pop"], expiresAt: now() + 60_000, createdAt: now()))
            return hash
        }
        let (a, b, kept) = (try token(1, client: id, family: "a"), try token(2, client: id, family: "b"), try token(3, client: "app", family: "c"))
        _ = try token(4, client: id, family: "a")  // a second token of one family: one session
        #expect(try store.deleteClient(id: id, at: now()) == 2)
        #expect(try store.liveRefreshToken(hash: a, now: now()) == nil && store.liveRefreshToken(hash: b, now: now()) == nil)
        #expect(try store.liveRefreshToken(hash: kept, now: now()) != nil)
        #expect(try store.sessionEnded("a-\(id)") && !store.sessionEnded("c-\(id)"))
        #expect(try store.deleteClient(id: id, at: now()) == nil)
    }

    @Test("a revocation's or a client change's writes commit with it, and only when it happened", arguments: Backend.available)
    func writesRideWithTheChange(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(7)
        let first = credential(u.id)
        try store.createUser(u, credential: first)
        func audit(_ label: String) -> [StoreWrite] {
            [.audit(AuditEvent(at: now(), kind: label, outcome: "success", userID: u.id))]
        }
        func rows() throws -> Set<String> { Set(try store.auditEvents(limit: 100).map(\.kind)) }
        // Nothing to change: nothing written.
        #expect(try store.revokeCredential(id: first.id, userID: u.id, at: now(), writes: audit("last")) == .lastCredential)
        #expect(try store.revokeCredential(id: [7, 7], userID: u.id, at: now(), writes: audit("none")) == .notFound)
        #expect(try !store.revokeDeviceKey(id: "dk_none", userID: u.id, at: now(), writes: audit("no key")))
        #expect(try !store.revokeRefreshFamily(hash: [7, 7, 7], now: now(), writes: audit("no token")))
        let nobody = ClientRow(id: "no-client", name: "N", type: "public", secretHash: nil, grants: ["refresh_token"], scopes: [], redirectURIs: [], audiences: nil, createdAt: 0)
        #expect(try store.updateClient(nobody, expected: nobody, writes: audit("no client")) == nil)
        #expect(try store.deleteClient(id: "no-client", at: now(), writes: { _ in audit("no client to delete") }) == nil)
        #expect(try rows().isEmpty)
        // Each change, with its row.
        let second = credential(u.id)
        try store.perform([.addCredential(second, limit: nil)])
        #expect(try store.revokeCredential(id: second.id, userID: u.id, at: now(), writes: audit("passkey")) == .revoked)
        let key = DeviceKeyRow(id: "dk_w", userID: u.id, deviceID: "phone", platform: "ios", name: nil, publicKey: [4], createdAt: now())
        #expect(try store.enrollDeviceKey(key, limit: 5, writes: { revoked in audit("enrolled, \(revoked.count) revoked") }) == [])
        var again = key
        again.id = "dk_w2"
        #expect(try store.enrollDeviceKey(again, limit: 5, writes: { revoked in audit("enrolled, \(revoked.joined()) revoked") }) == ["dk_w"])
        #expect(try store.revokeDeviceKey(id: "dk_w2", userID: u.id, at: now(), writes: audit("key")))
        try store.insertRefreshToken(RefreshTokenRow(hash: [8, 8, 8], family: "f-\(u.id)", userID: u.id, clientID: "app", scope: "openid", authTime: 1,
                                                     amr: ["pop"], expiresAt: now() + 60_000, createdAt: now()))
        #expect(try store.revokeRefreshFamily(hash: [8, 8, 8], now: now(), writes: audit("token")))
        let id = "w-\(UUID().uuidString.prefix(6))"
        try store.insertClient(ClientRow(id: id, name: "W", type: "confidential", secretHash: [0], grants: ["client_credentials"], scopes: [], redirectURIs: [],
                                         audiences: nil, createdAt: 0), writes: audit("client"))
        let stored = try #require(try store.clientRow(id: id))
        var rotated = stored
        rotated.secretHash = [2]
        #expect(try store.updateClient(rotated, expected: stored, writes: audit("secret")) == true)
        #expect(try store.deleteClient(id: id, at: now(), writes: { ended in audit("deleted, \(ended) ended") }) == 0)
        #expect(try rows() == ["passkey", "enrolled, 0 revoked", "enrolled, dk_w revoked", "key", "token", "client", "secret", "deleted, 0 ended"])
        // A write that fails takes its change with it.
        let failing: [StoreWrite] = [.useSession(id: [5, 5], expiresAt: now() + 60_000)]
        try store.perform(failing)
        let third = credential(u.id)
        try store.perform([.addCredential(third, limit: nil)])
        #expect(throws: StoreError.self) { try store.revokeCredential(id: third.id, userID: u.id, at: now(), writes: failing) }
        #expect(try store.credentials(userID: u.id).first { $0.id == third.id }?.revokedAt == nil)
        #expect(throws: StoreError.self) { try store.insertClient(ClientRow(id: id + "x", name: "X", type: "public", secretHash: nil, grants: [], scopes: [],
                                                                             redirectURIs: [], audiences: nil, createdAt: 0), writes: failing) }
        #expect(try store.clientRows().allSatisfy { $0.id != id + "x" })
    }

    @Test("clients are read a page at a time, oldest first (the ID breaks ties), with their count", arguments: Backend.available)
    func clientPages(_ backend: Backend) throws {
        let store = try backend.open()
        #expect(try store.clientCount() == 0 && store.clientRows(offset: 0, limit: 10).isEmpty)
        for (id, at) in [("c_e", 5), ("c_a", 1), ("c_c", 3), ("c_b", 3), ("c_d", 4)] as [(String, Int64)] {
            try store.insertClient(ClientRow(id: id, name: id, type: "public", secretHash: nil, grants: [], scopes: [], redirectURIs: [], audiences: nil, createdAt: at),
                                   writes: [])
        }
        #expect(try store.clientCount() == 5)
        #expect(try store.clientRows(offset: 0, limit: 2).map(\.id) == ["c_a", "c_b"])
        #expect(try store.clientRows(offset: 2, limit: 2).map(\.id) == ["c_c", "c_d"])
        #expect(try store.clientRows(offset: 4, limit: 2).map(\.id) == ["c_e"])
        #expect(try store.clientRows(offset: 5, limit: 2).isEmpty && store.clientRows().map(\.id) == ["c_a", "c_b", "c_c", "c_d", "c_e"])
    }

    @Test("every account, a page at a time in ID order: no page overlaps another, none is left out; each page's passkeys in one read", arguments: Backend.available)
    func userPagesByID(_ backend: Backend) throws {
        let store = try backend.open()
        #expect(try store.users(after: nil, limit: 10).isEmpty)
        let made = try (0..<7).map { n in try registered(store, n, signCount: 0).0.id }
        var seen: [String] = []
        var after: String?
        while true {
            let page = try store.users(after: after, limit: 3)
            #expect(page.count <= 3)
            guard let last = page.last else { break }
            seen += page.map(\.user.id)
            after = last.user.id
        }
        #expect(seen == made.sorted())
        #expect(try store.users(after: made.sorted()[4], limit: 10).map(\.user.id) == Array(made.sorted()[5...]))
        // A page's passkeys, one range of accounts: a second passkey of one, none of any other.
        let sorted = made.sorted()
        var second = credential(sorted[3])
        second.createdAt += 5
        try store.perform([.addCredential(second, limit: nil)])
        #expect(try store.credentials(usersAfter: nil, through: sorted[2]).map(\.userID) == Array(sorted[0...2]))
        let page = try store.credentials(usersAfter: sorted[2], through: sorted[4])
        #expect(page.map(\.userID) == [sorted[3], sorted[3], sorted[4]] && page[1].id == second.id)
        #expect(try store.credentials(usersAfter: sorted[6], through: sorted[6]).isEmpty)
        // And their device keys, the same way.
        for (n, owner) in [sorted[1], sorted[4], sorted[4]].enumerated() {
            _ = try store.enrollDeviceKey(DeviceKeyRow(id: "dk_\(n)", userID: owner, deviceID: "d\(n)", platform: "ios", name: nil, publicKey: [1], createdAt: now() + Int64(n)),
                                          limit: 10) { _ in [] }
        }
        #expect(try store.deviceKeys(usersAfter: nil, through: sorted[3]).map(\.id) == ["dk_0"])
        #expect(try store.deviceKeys(usersAfter: sorted[1], through: sorted[6]).map(\.id) == ["dk_1", "dk_2"])
        #expect(try store.deviceKeys(usersAfter: sorted[4], through: sorted[6]).isEmpty)
        // And how many recovery codes each has not used: a used one is not counted, nor an account with none.
        try store.replaceRecoveryCodes(userID: sorted[2], hashes: [[1], [2], [3]], keyID: "k", at: now(), writes: [])
        try store.replaceRecoveryCodes(userID: sorted[5], hashes: [[4]], keyID: "k", at: now(), writes: [])
        try store.perform([.useRecoveryCode(userID: sorted[2], hash: [2], at: now())])
        #expect(try store.unusedRecoveryCodes(usersAfter: nil, through: sorted[6]) == [sorted[2]: 2, sorted[5]: 1])
        #expect(try store.unusedRecoveryCodes(usersAfter: sorted[2], through: sorted[4]).isEmpty)
        try store.perform([.useRecoveryCode(userID: sorted[5], hash: [4], at: now())])
        #expect(try store.unusedRecoveryCodes(usersAfter: sorted[2], through: sorted[6]).isEmpty)
    }

    @Test("a client's keys kept, or where it publishes them, and never both written back otherwise", arguments: Backend.available)
    func clientKeyURI(_ backend: Backend) throws {
        let store = try backend.open()
        try store.insertClient(ClientRow(id: "c_uri", name: "U", type: "confidential", secretHash: nil, grants: ["client_credentials"], scopes: [], redirectURIs: [],
                                         audiences: nil, createdAt: 1, jwksURI: "https://keys.example/jwks.json"), writes: [])
        let stored = try #require(try store.clientRow(id: "c_uri"))
        #expect(stored.jwksURI == "https://keys.example/jwks.json" && stored.jwks == nil && stored.usesKeys)
        var changed = stored
        (changed.jwks, changed.jwksURI) = (#"{"keys":[]}"#, nil)
        #expect(try store.updateClient(changed, expected: stored, writes: []) == true)
        let read = try #require(try store.clientRow(id: "c_uri"))
        #expect(read.jwksURI == nil && read.jwks == #"{"keys":[]}"#)
    }

    @Test("a client's change is written only over the row it was made from, with its audit row; its type and creation stay", arguments: Backend.available)
    func clientUpdates(_ backend: Backend) throws {
        let store = try backend.open()
        func audit(_ label: String) -> [StoreWrite] { [.audit(AuditEvent(at: now(), kind: label, outcome: "success"))] }
        let id = "k-\(UUID().uuidString.prefix(6))"
        let first = #"{"keys":[{"kty":"EC","kid":"1"}]}"#, second = #"{"keys":[{"kty":"OKP","kid":"2"}]}"#
        try store.insertClient(ClientRow(id: id, name: "K", type: "confidential", secretHash: nil, grants: ["client_credentials"], scopes: ["read:users"], redirectURIs: [],
                                         audiences: nil, createdAt: 5, jwks: first), writes: [])
        let stored = try #require(try store.clientRow(id: id))
        #expect(stored.jwks == first && stored.audiences == nil && stored.createdAt == 5)
        var changed = stored
        changed.name = "K2"
        changed.jwks = second
        changed.grants = ["client_credentials", "refresh_token"]
        changed.scopes = []
        changed.redirectURIs = ["https://a.example/cb", "app.example:/cb"]
        changed.postLogoutRedirectURIs = ["https://a.example/bye"]
        changed.audiences = ["https://api.example"]
        changed.backchannelLogoutURI = "https://a.example/logout"
        changed.requirePushedRequests = true
        // Not the client's type, nor when it was made.
        changed.type = "public"
        changed.createdAt = 99
        #expect(try store.updateClient(changed, expected: stored, writes: audit("keys")) == true)
        var expected = changed
        expected.type = "confidential"
        expected.createdAt = 5
        #expect(try store.clientRow(id: id) == expected)
        #expect(try store.clientRows().first { $0.id == id } == expected)
        // A change made from the row as it was before: nothing written, and its audit row neither.
        var stale = stored
        stale.name = "stale"
        #expect(try store.updateClient(stale, expected: stored, writes: audit("stale")) == false)
        #expect(try store.clientRow(id: id)?.name == "K2")
        // No such client.
        var gone = stale
        gone.id = "no-client"
        #expect(try store.updateClient(gone, expected: gone, writes: audit("no client")) == nil)
        #expect(try store.clientRow(id: "no-client") == nil)
        #expect(try store.auditEvents(limit: 10).map(\.kind) == ["keys"])
        // A write that fails takes the change with it.
        var failed = expected
        failed.name = "failed"
        try store.perform([.useSession(id: [6, 6], expiresAt: now() + 60_000)])
        #expect(throws: StoreError.self) { try store.updateClient(failed, expected: expected, writes: [.useSession(id: [6, 6], expiresAt: now() + 60_000)]) }
        #expect(try store.clientRow(id: id)?.name == "K2")
    }

    @Test("ending a session marks it once, with or without refresh tokens; the mark revokes its family and is purged when it lapses",
          arguments: Backend.available)
    func endedSessions(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(7)
        try store.createUser(u, credential: credential(u.id))
        let tag = UUID().uuidString.prefix(8)
        let (refreshless, withFamily, other) = ("none-\(tag)", "fam-\(tag)", "kept-\(tag)")
        for family in [withFamily, other] {
            try store.insertRefreshToken(RefreshTokenRow(hash: Array(family.utf8), family: family, userID: u.id, clientID: "app", scope: "openid", authTime: 1,
                                                         amr: ["pop"], expiresAt: now() + 60_000, createdAt: now()))
        }
        #expect(try !store.sessionEnded(refreshless) && !store.sessionEnded(withFamily))
        let at = now()
        let event = AuditEvent(at: at, kind: "session_revoked", outcome: "success", userID: u.id, detail: "ended \(tag)")
        #expect(try store.endSession(refreshless, at: at, until: at + 1_000, writes: [.audit(event)]))
        #expect(try store.endSession(withFamily, at: at, until: at + 1_000, writes: []))
        #expect(try store.sessionEnded(refreshless) && store.sessionEnded(withFamily) && !store.sessionEnded(other))
        #expect(try store.liveRefreshToken(hash: Array(withFamily.utf8), now: now()) == nil)
        #expect(try store.liveRefreshToken(hash: Array(other.utf8), now: now()) != nil)
        // A second end writes nothing: the audit row of the first stays the only one.
        #expect(try !store.endSession(refreshless, at: at, until: at + 1_000, writes: [.audit(event)]))
        #expect(try store.auditEvents(limit: 50).filter { $0.detail == "ended \(tag)" }.count == 1)
        // Past `until` the mark goes; a session with revoked refresh tokens stays ended by them.
        _ = try store.purgeUsedSessions(now: at + 1_001)
        #expect(try !store.sessionEnded(refreshless) && store.sessionEnded(withFamily))
    }

    @Test("a token's holder in one read: the account, its credential's liveness, each way its session ends", arguments: Backend.available)
    func tokenHolder(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(8)
        let (first, second) = (credential(u.id), credential(u.id))
        try store.createUser(u, credential: first)
        try store.perform([.addCredential(second, limit: nil)])
        _ = try store.enrollDeviceKey(DeviceKeyRow(id: "dk_a", userID: u.id, deviceID: "phone", platform: "ios", name: nil, publicKey: [4], createdAt: now()), limit: 2)
        func holder(_ credential: CredentialReference? = nil, sid: String? = nil) throws -> TokenHolder? {
            try store.tokenHolder(userID: u.id, credential: credential, sid: sid)
        }
        let plain = try #require(try holder())
        #expect(plain.user == (try store.user(id: u.id)) && plain.credentialLive && !plain.sessionEnded)
        #expect(try store.tokenHolder(userID: "nobody", credential: .passkey(first.id), sid: "s") == nil)
        // Credentials: live, revoked, unknown; a passkey and a device key.
        #expect(try holder(.passkey(first.id))?.credentialLive == true)
        #expect(try holder(.deviceKey("dk_a"))?.credentialLive == true)
        #expect(try store.revokeCredential(id: first.id, userID: u.id, at: now()) == .revoked)
        #expect(try store.revokeDeviceKey(id: "dk_a", userID: u.id, at: now()))
        #expect(try holder(.passkey(first.id))?.credentialLive == false && holder(.passkey(second.id))?.credentialLive == true)
        #expect(try holder(.deviceKey("dk_a"))?.credentialLive == false)
        #expect(try holder(.passkey([9, 9]))?.credentialLive == false && holder(.deviceKey("dk_none"))?.credentialLive == false)
        // Sessions: standing; ended by a mark, a revoked refresh family, a cancelled recovery.
        let tag = UUID().uuidString.prefix(8)
        #expect(try holder(sid: "live-\(tag)")?.sessionEnded == false)
        _ = try store.endSession("marked-\(tag)", at: now(), until: now() + 60_000, writes: [])
        #expect(try holder(sid: "marked-\(tag)")?.sessionEnded == true)
        try store.insertRefreshToken(RefreshTokenRow(hash: Array("rt-\(tag)".utf8), family: "family-\(tag)", userID: u.id, clientID: "app", scope: "openid",
                                                     authTime: 1, amr: ["pop"], expiresAt: now() + 60_000, createdAt: now()))
        #expect(try holder(sid: "family-\(tag)")?.sessionEnded == false)
        _ = try store.revokeRefreshFamily(hash: Array("rt-\(tag)".utf8), now: now())
        #expect(try holder(sid: "family-\(tag)")?.sessionEnded == true)
        try store.perform([.openRecovery(RecoveryRow(id: "r-\(tag)", userID: u.id, openedAt: now(), holdUntil: now() + 60_000, session: "held-\(tag)"))])
        #expect(try holder(sid: "held-\(tag)")?.sessionEnded == false)
        _ = try store.cancelRecoveries(userID: u.id, at: now(), writes: [])
        #expect(try holder(sid: "held-\(tag)")?.sessionEnded == true)
        // Each agrees with the store's own answer for the session alone.
        for sid in ["live-\(tag)", "marked-\(tag)", "family-\(tag)", "held-\(tag)"] {
            #expect(try holder(sid: sid)?.sessionEnded == store.sessionEnded(sid))
        }
    }

    @Test("an app's session: where its first token and its newest were asked for; a family from before they were kept has neither", arguments: Backend.available)
    func sessionOrigins(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(51)
        try store.createUser(u, credential: credential(u.id))
        @Sendable func row(_ n: UInt8, family: String, at: Int64, remote: String?, userAgent: String?) -> RefreshTokenRow {
            RefreshTokenRow(hash: Array(repeating: n, count: 32), family: family, userID: u.id, clientID: "app", scope: "openid", authTime: 1, amr: ["pop"],
                            expiresAt: now() + 60_000, createdAt: at, origin: RequestOrigin(remote: remote, userAgent: userAgent))
        }
        let start = now()
        try store.insertRefreshToken(row(1, family: "kept", at: start, remote: "203.0.113.7", userAgent: "Bank/1"))
        let rotated = try store.rotateRefreshToken(hash: Array(repeating: 1, count: 32), proof: nil,
                                                   next: { _ in row(2, family: "kept", at: start + 5, remote: "198.51.100.9", userAgent: "Bank/2") }, now: start + 5)
        guard case .rotated = rotated else { Issue.record("not rotated: \(rotated)"); return }
        try store.insertRefreshToken(row(3, family: "older", at: start - 10, remote: nil, userAgent: nil))
        let sessions = try store.sessions(userID: u.id, now: now(), SessionQuery(limit: 100))
        let kept = try #require(sessions.first { $0.id == "kept" }), older = try #require(sessions.first { $0.id == "older" })
        #expect(kept.initial == RequestOrigin(remote: "203.0.113.7", userAgent: "Bank/1") && kept.last == RequestOrigin(remote: "198.51.100.9", userAgent: "Bank/2"))
        #expect(older.initial == RequestOrigin() && older.last == RequestOrigin())
    }

    @Test("refresh tokens rotate; reuse revokes the family; of concurrent rotations one wins", arguments: Backend.available)
    func refresh(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(5)
        try store.createUser(u, credential: credential(u.id))
        let userID = u.id
        @Sendable func row(_ hash: [UInt8], family: String = "fam") -> RefreshTokenRow {
            RefreshTokenRow(hash: hash, family: family, userID: userID, clientID: "app", scope: "openid", authTime: 1, amr: ["pop"], expiresAt: now() + 60_000, createdAt: now())
        }
        let first: [UInt8] = Array(repeating: 1, count: 32)
        let firstRow = row(first)
        try store.insertRefreshToken(firstRow)
        // Live (what introspection asks): found as stored, and not used by the asking.
        #expect(try store.liveRefreshToken(hash: first, now: now()) == firstRow)
        #expect(try store.liveRefreshToken(hash: first, now: now()) == firstRow)
        #expect(try store.liveRefreshToken(hash: Array(repeating: 9, count: 32), now: now()) == nil)
        let results = concurrently(16) { () -> RefreshRotation in
            let next = (0..<32).map { _ in UInt8.random(in: 0...255) }
            return try store.rotateRefreshToken(hash: first, proof: nil, next: { row(next, family: $0.family) }, now: now())
        }
        let rotated = results.compactMap { try? $0.get() }.filter { if case .rotated = $0 { true } else { false } }
        #expect(rotated.count == 1)
        guard case .rotated(let successor) = rotated.first else { return }
        #expect(try store.liveRefreshToken(hash: first, now: now()) == nil)
        // The losers presented a used token: the family is revoked, successor included.
        #expect(try store.rotateRefreshToken(hash: successor.hash, proof: nil, next: { $0 }, now: now()) != .rotated(successor))
        #expect(try store.liveRefreshToken(hash: successor.hash, now: now()) == nil)
        #expect(try store.rotateRefreshToken(hash: Array(repeating: 9, count: 32), proof: nil, next: { $0 }, now: now()) == .unknown)
        let old: [UInt8] = Array(repeating: 2, count: 32)
        var expired = row(old, family: "other")
        expired.expiresAt = now() - 1
        try store.insertRefreshToken(expired)
        #expect(try store.rotateRefreshToken(hash: old, proof: nil, next: { $0 }, now: now()) == .expired)
        #expect(try store.liveRefreshToken(hash: old, now: now()) == nil)
        let live: [UInt8] = Array(repeating: 3, count: 32)
        try store.insertRefreshToken(row(live, family: "third"))
        #expect(try store.liveRefreshToken(hash: live, now: now()) != nil)
        #expect(try store.revokeRefreshFamily(hash: live, now: now()))
        #expect(try store.liveRefreshToken(hash: live, now: now()) == nil)
        #expect(try store.rotateRefreshToken(hash: live, proof: nil, next: { $0 }, now: now()) == .revoked(userID: userID))
        // A token bound to a DPoP key rotates only with that key's proof; another key, or none,
        // leaves it unused.
        var bound = row(Array(repeating: 4, count: 32), family: "fourth")
        bound.jkt = "key-a"
        bound.credential = "cred-id"
        try store.insertRefreshToken(bound)
        #expect(try store.liveRefreshToken(hash: bound.hash, now: now()) == bound)
        #expect(try store.rotateRefreshToken(hash: bound.hash, proof: nil, next: { $0 }, now: now()) == .keyMismatch)
        #expect(try store.rotateRefreshToken(hash: bound.hash, proof: "key-b", next: { $0 }, now: now()) == .keyMismatch)
        let successor5 = row(Array(repeating: 5, count: 32), family: "fourth")
        guard case .rotated(let rotated) = try store.rotateRefreshToken(hash: bound.hash, proof: "key-a", next: { _ in successor5 }, now: now()) else {
            Issue.record("the bound token did not rotate with its key's proof")
            return
        }
        #expect(rotated.hash == successor5.hash)
    }

    @Test("of two concurrent revocations of an account's last two passkeys one is refused", arguments: Backend.available)
    func lastCredential(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(6)
        let c1 = credential(u.id), c2 = credential(u.id)
        try store.createUser(u, credential: c1)
        try store.perform([.addCredential(c2, limit: nil)])
        #expect(try store.renameCredential(id: c1.id, userID: u.id, name: "Phone"))
        #expect(try !store.renameCredential(id: c1.id, userID: "someone-else", name: "x"))
        let ids = [c1.id, c2.id]
        let counter = Counter()
        let results = concurrently(2) { try store.revokeCredential(id: ids[counter.next() % 2], userID: u.id, at: now()) }
        let outcomes = results.compactMap { try? $0.get() }
        #expect(outcomes.filter { $0 == .revoked }.count == 1 && outcomes.filter { $0 == .lastCredential }.count == 1)
        #expect(try store.credentials(userID: u.id).filter { $0.revokedAt == nil }.count == 1)
    }

    @Test("device keys: a limit, replacement per device, revocation", arguments: Backend.available)
    func deviceKeys(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(7)
        try store.createUser(u, credential: credential(u.id))
        func key(_ id: String, device: String) -> DeviceKeyRow {
            DeviceKeyRow(id: id, userID: u.id, deviceID: device, platform: "ios", name: nil, publicKey: [4], createdAt: now())
        }
        #expect(try store.enrollDeviceKey(key("a", device: "phone"), limit: 2) == [])
        #expect(try store.enrollDeviceKey(key("b", device: "tablet"), limit: 2) == [])
        #expect(code { _ = try store.enrollDeviceKey(key("c", device: "watch"), limit: 2) } == .deviceKeyLimit)
        #expect(try store.enrollDeviceKey(key("d", device: "phone"), limit: 2) == ["a"])
        #expect(try store.deviceKey(id: "a")?.revokedAt != nil)
        #expect(try store.revokeDeviceKey(id: "b", userID: u.id, at: now()))
        #expect(try !store.revokeDeviceKey(id: "b", userID: u.id, at: now()))
        #expect(try store.deviceKeys(userID: u.id).filter { $0.revokedAt == nil }.map(\.id) == ["d"])
    }

    @Test("action challenges: a rate limit, and of 32 concurrent uses one wins", arguments: Backend.available)
    func actionChallenges(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(8)
        try store.createUser(u, credential: credential(u.id))
        func challenge(_ id: String) -> ActionChallengeRow {
            ActionChallengeRow(id: id, userID: u.id, deviceKeyID: "d", challenge: [1], actionHash: [2], action: "{}", expiresAt: now() + 60_000, createdAt: now())
        }
        for i in 0..<3 { try store.createActionChallenge(challenge("c\(i)"), limit: 3, windowStart: now() - 60_000) }
        #expect(code { try store.createActionChallenge(challenge("c3"), limit: 3, windowStart: now() - 60_000) } == .rateLimited)
        let results = concurrently(32) { try store.useActionChallenge(id: "c0", at: now()) }
        #expect(results.filter { if case .success(.some) = $0 { true } else { false } }.count == 1)
    }

    @Test("signing keys, audit, counts and ping", arguments: Backend.available)
    func keysAndAudit(_ backend: Backend) throws {
        let store = try backend.open()
        try store.insertSigningKey(SigningKeyRow(kid: "k1", algorithm: "ES256", encryptedPrivateKey: [1], publicKey: [2], createdAt: 1))
        #expect(try store.rotateSigningKey(SigningKeyRow(kid: "k2", algorithm: "ES256", encryptedPrivateKey: [3], publicKey: [4], createdAt: 5), unlessCreatedAfter: 1))
        let keys = try store.signingKeys()
        #expect(keys.map(\.kid) == ["k1", "k2"] && keys[0].retiredAt == 5 && keys[1].retiredAt == nil)
        try store.appendAudit(AuditEvent(at: 1, kind: "sign_in", outcome: "failure", reason: "signature_invalid"))
        #expect(try store.auditEvents(limit: 5).first?.reason == "signature_invalid")
        try store.ping()
        #expect(try store.rowCounts()["signing_keys"] == 2)
    }
}

final class Counter: @unchecked Sendable {
    private var value = 0
    private let lock = NSLock()
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}

/// The code of the store refusal `body` throws; `nil` when it throws none.
func code(_ body: () throws -> Void) -> StoreError.Code? {
    do {
        try body()
        return nil
    } catch {
        return (error as? StoreError)?.code ?? StoreError.Code(rawValue: "not a StoreError: \(error)")
    }
}
