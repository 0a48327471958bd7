import Foundation
import SignetAuth
import SignetStore
import Testing

/// Durable SQLite: writes whose answers are held (a server's, inside ``DeferredDurability``)
/// share one transaction, which the sync that covers them commits first (``SQLitePool``).
/// Another connection reads the file as another process would.
@Suite struct WriteBatchTests {
    /// A store without background checkpoints, its file, and a second connection to read it.
    static func open() throws -> (SQLStore, String, WALWriteTests.Connection) {
        let path = TemporaryDatabase.path("signet-batch")
        let store = try SQLStore(path: path, durable: true, checkpointInterval: 3600)
        return (store, path, try WALWriteTests.Connection(path, vfs: nil))
    }

    static func usedSessions(_ reader: WALWriteTests.Connection) throws -> String {
        try reader.run("SELECT count(*) FROM used_sessions").first ?? ""
    }

    /// A held write: whether the session was newly used, and its commit number.
    static func held(_ store: SQLStore, _ id: UInt8) -> (used: Bool?, number: Int) {
        let (used, number) = DeferredDurability.run { try? store.useSession(id: [id], expiresAt: 4_000_000_000) }
        return (used, number)
    }

    /// What ``SQLStore/whenDurable(_:_:)`` reports for commit `number` (waits for the callback).
    static func outcome(_ store: SQLStore, _ number: Int) -> StoreError? {
        let box = Outcome()
        store.whenDurable(number) { box.set($0) }
        return box.wait()
    }

    final class Outcome: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var error: StoreError?
        func set(_ error: StoreError?) {
            self.error = error
            done.signal()
        }
        func wait() -> StoreError? {
            done.wait()
            return error
        }
    }

    @Test("held writes wait in one open transaction, which their sync commits; a caller that waits for its own write commits them with it")
    func heldWritesShareATransaction() throws {
        let (store, path, reader) = try Self.open()
        defer { TemporaryDatabase.remove(path) }
        let a = Self.held(store, 1)
        let b = Self.held(store, 2)
        #expect(a.used == true && b.used == true && a.number > 0 && b.number == a.number + 1)
        // Not committed yet: another connection sees neither, the store's own sees both (a
        // second use of the same session is refused).
        #expect(try Self.usedSessions(reader) == "0")
        #expect(Self.held(store, 1).used == false)
        // A caller outside a request waits for its write: the batch commits with it, one sync.
        let syncs = store.durableSyncs
        #expect(try store.useSession(id: [3], expiresAt: 4_000_000_000))
        #expect(try Self.usedSessions(reader) == "3")
        #expect(store.durableSyncs == syncs + 1)
        #expect(store.writeBatches.batches == 1 && store.writeBatches.writes == 2 && store.writeBatches.largest == 2)
        #expect(Self.outcome(store, b.number) == nil)

        // A batch committed by its sync: the callback comes after it, and the rows are there.
        let c = Self.held(store, 4)
        #expect(try Self.usedSessions(reader) == "3")
        #expect(Self.outcome(store, c.number) == nil)
        #expect(try Self.usedSessions(reader) == "4")
        #expect(store.writeBatches.batches == 2)
    }

    @Test("a held call that writes nothing takes no write lock and leaves no transaction open")
    func noIdleTransaction() throws {
        let (store, path, reader) = try Self.open()
        defer { TemporaryDatabase.remove(path) }
        #expect(try store.useSession(id: [1], expiresAt: 4_000_000_000))
        // A refused use, a read, and an update that matched no row: none keeps the lock.
        #expect(Self.held(store, 1).used == false)
        _ = DeferredDurability.run { try? store.user(email: "nobody@signet.test") }
        _ = DeferredDurability.run { try? store.renameCredential(id: [9], userID: "nobody", name: "x") }
        // The reader has no busy timeout: a held write lock would fail this at once (SQLITE_BUSY).
        try reader.run("BEGIN IMMEDIATE")
        // And a held request that only reads needs no write lock: it is served while another
        // process holds it (a write lock taken for it would wait out the busy timeout, then fail).
        let (read, number) = DeferredDurability.run { () -> Bool in
            do {
                return try store.user(email: "nobody@signet.test") == nil
            } catch {
                return false
            }
        }
        #expect(read && number == 0)
        try reader.run("ROLLBACK")
        #expect(store.writeBatches.batches == 0)
    }

    @Test("a batch whose COMMIT fails loses exactly its writes: their callbacks get the error, even registered late, and the next batch commits")
    func lostBatch() throws {
        let (store, path, reader) = try Self.open()
        defer { TemporaryDatabase.remove(path) }
        #expect(try store.useSession(id: [1], expiresAt: 4_000_000_000))
        store.failBatchCommits(true)
        let lost = Self.held(store, 2)
        let alsoLost = Self.held(store, 3)
        #expect(lost.used == true && alsoLost.used == true)
        #expect(Self.outcome(store, lost.number)?.code == .storageFull)
        store.failBatchCommits(false)
        #expect(Self.outcome(store, alsoLost.number)?.code == .storageFull)
        // Rolled back: neither row is in the file, and the sessions can be used (once) again.
        #expect(try Self.usedSessions(reader) == "1")
        let again = Self.held(store, 2)
        #expect(again.used == true)
        #expect(Self.outcome(store, again.number) == nil)
        #expect(try Self.usedSessions(reader) == "2")
        // A callback registered after a later sync passed the lost number still hears of the loss.
        #expect(Self.outcome(store, lost.number)?.code == .storageFull)
        // A caller that waits for its own write inside a failing batch gets the error itself.
        _ = Self.held(store, 5)
        store.failBatchCommits(true)
        #expect(throws: StoreError.self) { try store.useSession(id: [6], expiresAt: 4_000_000_000) }
        store.failBatchCommits(false)
        #expect(try Self.usedSessions(reader) == "2")
        #expect(try store.integrityCheck() == "ok")
    }
}

/// The background checkpoint (``SQLitePool``): it copies the WAL back while writes go on, and
/// leaves an idle store alone.
@Suite struct CheckpointTests {
    /// Checkpoints that took the store's lock so far, from the store's histogram.
    static func lockedCheckpoints(_ store: SQLStore) -> Int {
        let line = store.sqliteTimings.split(separator: "\n").first { $0.hasPrefix("signet_sqlite_locked_checkpoint_seconds_count ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
    }

    static func within(_ seconds: TimeInterval, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition()
    }

    @Test("writes are copied back into the database; once the WAL is copied whole, the timer no longer takes the store's lock")
    func idleStoreIsLeftAlone() throws {
        let path = TemporaryDatabase.path("signet-checkpoint")
        defer { TemporaryDatabase.remove(path) }
        let store = try SQLStore(path: path, durable: true, checkpointInterval: 0.02)
        for i in 0..<50 { try store.appendAudit(AuditEvent(at: Int64(i), kind: "sign_in", outcome: "success")) }
        // Within a few ticks the database file alone (copied without its WAL) holds every write.
        func inFile() throws -> [String] {
            let copy = path + "-alone"
            defer { TemporaryDatabase.remove(copy) }
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            return try WALWriteTests.Connection(copy, vfs: nil).run("SELECT count(*) FROM audit_events")
        }
        #expect(Self.within(5) { (try? inFile()) == ["50"] })
        // Idle: over 25 ticks, not one takes the lock.
        Thread.sleep(forTimeInterval: 0.1)
        let before = Self.lockedCheckpoints(store)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(before >= 0 && Self.lockedCheckpoints(store) == before, "\(before) locked checkpoints, then \(Self.lockedCheckpoints(store))")
        // A write brings it back to work.
        try store.appendAudit(AuditEvent(at: 99, kind: "sign_in", outcome: "success"))
        #expect(Self.within(5) { (try? inFile()) == ["51"] })
    }
}
