import Foundation
import SignetAuth
import SignetStore
import SignetTestSupport
import Testing

/// A store's end: however it meets its background checkpoint, it closes without a trap.
@Suite struct PoolLifetimeTests {
    @Test("a SQLite store dropped while its checkpoint timer runs closes cleanly, also when the timer's own thread ends it")
    func droppedDuringCheckpoint() throws {
        // A 1 ms timer with a write to copy back: one tick in a few holds the pool while the
        // store is dropped, so the pool ends on the timer's queue.
        for n in 0..<300 {
            let path = TemporaryDatabase.path("pool-end-\(n)")
            defer { TemporaryDatabase.remove(path) }
            do {
                let store = try SQLStore(path: path, durable: n % 2 == 0, checkpointInterval: 0.001)
                let u = user(n)
                try store.createUser(u, credential: credential(u.id))
                Thread.sleep(forTimeInterval: Double(n % 4) / 2000)
            }
            let reopened = try SQLStore(path: path, durable: false, checkpointInterval: 60)
            #expect(try reopened.rowCounts()["users"] == 1)
        }
    }

    @Test("a SQLite store, once dropped, holds the file no more: at once, another connection takes it alone (what a restore's swap needs)")
    func droppedReleasesFile() throws {
        for n in 0..<40 {
            let path = TemporaryDatabase.path("pool-release-\(n)")
            defer { TemporaryDatabase.remove(path) }
            do {
                let store = try SQLStore(path: path, durable: n % 2 == 0, checkpointInterval: 60)
                let u = user(n)
                try store.createUser(u, credential: credential(u.id))
            }
            // Leaving WAL mode needs every other connection closed; SQLite does not wait for that.
            let mode = Result { try rawSQLite(path, "PRAGMA journal_mode = DELETE") }
            #expect((try? mode.get()) == ["delete"], "drop \(n) (durable: \(n % 2 == 0)): \(mode)")
        }
    }
}
