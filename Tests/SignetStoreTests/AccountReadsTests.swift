import Foundation
@testable import SignetStore
import SignetAuth
import SignetTestSupport
import Testing

/// An account's audit rows and sessions: read by an index on PostgreSQL, and on SQLite (no
/// index: each would cost every sign-in a page) on a connection of their own, never holding up
/// a writer.
@Suite struct AccountReadsTests {
    @Test("SQLite: an account's audit rows and sessions are read while a write waits for the database's lock")
    func readsBesideAWaitingWrite() throws {
        let path = TemporaryDatabase.path("account-reads")
        defer { TemporaryDatabase.remove(path) }
        let store = try SQLStore(path: path, durable: false, checkpointInterval: 60)
        let u = user(1)
        try store.createUser(u, credential: credential(u.id))
        try store.appendAudit(AuditEvent(at: 1, kind: "sign_in", outcome: "success", userID: u.id))
        // Another process takes SQLite's write lock; the store's next write waits for it (up to
        // its 5 s busy timeout) holding the store's own lock.
        let other = try SQLiteConnection(path: path)
        try other.exec("BEGIN IMMEDIATE")
        let writing = BackgroundCall { try store.appendAudit(AuditEvent(at: 2, kind: "sign_in", outcome: "success", userID: u.id)) }
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try store.auditEntries(AuditQuery(userID: u.id, limit: 10)).map(\.event.at) == [1])
        #expect(try store.sessions(userID: u.id, now: now(), SessionQuery(limit: 100)).isEmpty)
        #expect(!writing.isDone, "the write still waits: the reads did not need its lock")
        try other.exec("ROLLBACK")
        try writing.wait()
        #expect(try store.auditEntries(AuditQuery(userID: u.id, limit: 10)).map(\.event.at) == [2, 1])
    }

    @Test("PostgreSQL: the indexes on an account's audit rows and refresh tokens exist and are valid", .enabled(if: Backend.available.contains(.postgres)))
    func postgresIndexes() throws {
        let url = try Self.postgresDatabase()
        _ = try SQLStore(postgres: url, connections: 1)
        #expect(try Self.indexes(PostgresConnection(url: url)) == ["audit_events_user valid", "refresh_tokens_user valid"])
    }

    @Test("PostgreSQL: an upgrade builds the indexes while other connections write to their tables; the build waits for an open transaction without holding up writes or the migrations' lock",
          .enabled(if: Backend.available.contains(.postgres)))
    func postgresIndexesBuiltBesideWrites() throws {
        let url = try Self.postgresDatabase()
        let before = try SQLStore(postgres: url, connections: 1)
        let u = user(1)
        try before.createUser(u, credential: credential(u.id))
        let admin = try PostgresConnection(url: url)
        try admin.query("DROP INDEX audit_events_user", [])
        try admin.query("DROP INDEX refresh_tokens_user", [])
        try admin.query("DELETE FROM schema_migrations WHERE version IN (15, 16)", [])
        // An instance of the old version is in a sign-in's transaction when the new one starts.
        let open = try PostgresConnection(url: url)
        try open.query("BEGIN", [])
        try open.query(Self.auditInsert, [.text(u.id)])
        let upgrading = BackgroundCall { _ = try SQLStore(postgres: url, connections: 1) }
        Thread.sleep(forTimeInterval: 0.5)
        // Another sign-in writes meanwhile. Behind a plain CREATE INDEX waiting for the open
        // transaction, this write would wait too, and time out.
        let writer = try PostgresConnection(url: url)
        try writer.query("SET statement_timeout = 3000", [])
        #expect(throws: Never.self) { try writer.query(Self.auditInsert, [.text(u.id)]) }
        #expect(throws: Never.self) { try writer.query("UPDATE refresh_tokens SET revoked_at = NULL WHERE user_id = ?", [.text(u.id)]) }
        // An instance of the old version starting now takes the migrations' lock in a transaction
        // and finds its versions applied: the build holds nothing it waits for (if it did, the
        // build would wait for this transaction's snapshot and this transaction for the lock).
        #expect(throws: Never.self) {
            try writer.query("BEGIN", [])
            try writer.query("SELECT pg_advisory_xact_lock(hashtext('signet-migrations'))", [])
            try writer.query("SELECT version FROM schema_migrations", [])
            try writer.query("COMMIT", [])
        }
        #expect(!upgrading.isDone, "the build waits for the open transaction")
        try open.query("COMMIT", [])
        try upgrading.wait()
        #expect(try Self.indexes(admin) == ["audit_events_user valid", "refresh_tokens_user valid"])
        #expect(try before.schemaVersions() == Array(1...35))
        #expect(try admin.query("SELECT count(*) FROM audit_events WHERE user_id = ?", [.text(u.id)]).first?[0].int == 2)
    }

    @Test("PostgreSQL: an index whose build stopped part-way (left invalid) is dropped and built again; a finished one whose version was not recorded is kept",
          .enabled(if: Backend.available.contains(.postgres)))
    func postgresInvalidIndexRebuilt() throws {
        let url = try Self.postgresDatabase()
        _ = try SQLStore(postgres: url, connections: 1)
        let admin = try PostgresConnection(url: url)
        try admin.query(Self.auditInsert, [.text("a")])
        try admin.query(Self.auditInsert, [.text("b")])
        try admin.query("DROP INDEX audit_events_user", [])
        try admin.query("DELETE FROM schema_migrations WHERE version IN (15, 16)", [])
        // A build that fails (two rows share a kind) leaves its index behind, marked invalid.
        #expect(throws: StoreError.self) { try admin.query("CREATE UNIQUE INDEX CONCURRENTLY audit_events_user ON audit_events(kind)", []) }
        #expect(try Self.indexes(admin) == ["audit_events_user invalid", "refresh_tokens_user valid"])
        let oid = try admin.query("SELECT 'refresh_tokens_user'::regclass::oid::bigint", []).first?[0].int
        let store = try SQLStore(postgres: url, connections: 1)
        #expect(try store.schemaVersions() == Array(1...35))
        #expect(try Self.indexes(admin) == ["audit_events_user valid", "refresh_tokens_user valid"])
        let definition = try admin.query("SELECT pg_get_indexdef('audit_events_user'::regclass)", []).first?[0].text ?? ""
        #expect(definition.contains("(user_id, id)") && !definition.contains("UNIQUE"), "\(definition)")
        #expect(try admin.query("SELECT 'refresh_tokens_user'::regclass::oid::bigint", []).first?[0].int == oid, "the valid index was not built again")
    }

    static let auditInsert = "INSERT INTO audit_events (at, kind, outcome, user_id) VALUES (1, 'sign_in', 'success', ?)"

    static func postgresDatabase() throws -> String {
        let admin = ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"]!
        return try PostgresAdmin.createDatabase(adminURL: admin, name: "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20))
    }

    /// The two account indexes that exist, each with whether PostgreSQL may use it.
    static func indexes(_ db: PostgresConnection) throws -> [String] {
        try db.query("""
            SELECT c.relname || CASE WHEN i.indisvalid THEN ' valid' ELSE ' invalid' END FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE c.relname IN ('audit_events_user', 'refresh_tokens_user') ORDER BY c.relname
            """, []).map { $0[0].text ?? "" }
    }
}

/// `body` on a thread of its own, started now; ``wait()`` returns once it has finished, with its error.
final class BackgroundCall: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var finished = false
    private var failure: (any Error)?

    init(_ body: @escaping @Sendable () throws -> Void) {
        Thread {
            var caught: (any Error)?
            do { try body() } catch { caught = error }
            self.lock.withLock { self.finished = true; self.failure = caught }
            self.done.signal()
        }.start()
    }

    var isDone: Bool { lock.withLock { finished } }

    func wait() throws {
        done.wait()
        if let failure = lock.withLock({ failure }) { throw failure }
    }
}
