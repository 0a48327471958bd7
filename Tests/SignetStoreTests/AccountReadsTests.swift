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
        #expect(try store.sessions(userID: u.id, now: now()).isEmpty)
        #expect(!writing.isDone, "the write still waits: the reads did not need its lock")
        try other.exec("ROLLBACK")
        try writing.wait()
        #expect(try store.auditEntries(AuditQuery(userID: u.id, limit: 10)).map(\.event.at) == [2, 1])
    }

    @Test("PostgreSQL: the indexes on an account's audit rows and refresh tokens exist", .enabled(if: Backend.available.contains(.postgres)))
    func postgresIndexes() throws {
        let admin = ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"]!
        let url = try PostgresAdmin.createDatabase(adminURL: admin, name: "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20))
        _ = try SQLStore(postgres: url, connections: 1)
        let connection = try PostgresConnection(url: url)
        let names = try connection.query("SELECT indexname FROM pg_indexes WHERE indexname IN ('audit_events_user', 'refresh_tokens_user') ORDER BY indexname", []).map { $0[0].text ?? "" }
        #expect(names == ["audit_events_user", "refresh_tokens_user"])
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
