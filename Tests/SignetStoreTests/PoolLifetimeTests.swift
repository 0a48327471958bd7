import Foundation
import SignetAuth
import SignetStore
import SignetTestSupport
import Testing

/// A store's end: however it meets its background checkpoint, it closes without a trap.
@Suite struct PoolLifetimeTests {
    /// For each of `count` new databases: a store (durable every other time) with one account
    /// written, dropped after `linger` of its `n`; then `after` with the file's path.
    static func droppedStores(_ name: String, count: Int, interval: Double, linger: (Int) -> Double = { _ in 0 }, after: (Int, String) throws -> Void) throws {
        for n in 0..<count {
            let path = TemporaryDatabase.path("\(name)-\(n)")
            defer { TemporaryDatabase.remove(path) }
            do {
                let store = try SQLStore(path: path, durable: n % 2 == 0, checkpointInterval: interval)
                let u = user(n)
                try store.createUser(u, credential: credential(u.id))
                if linger(n) > 0 { Thread.sleep(forTimeInterval: linger(n)) }
            }
            try after(n, path)
        }
    }

    @Test("a SQLite store dropped while its checkpoint timer runs closes cleanly, also when the timer's own thread ends it")
    func droppedDuringCheckpoint() throws {
        // A 1 ms timer with a write to copy back: one tick in a few holds the pool while the
        // store is dropped, so the pool ends on the timer's queue.
        try Self.droppedStores("pool-end", count: 300, interval: 0.001, linger: { Double($0 % 4) / 2000 }) { _, path in
            let reopened = try SQLStore(path: path, durable: false, checkpointInterval: 60)
            #expect(try reopened.rowCounts()["users"] == 1)
        }
    }

    @Test("a SQLite store, once dropped, holds the file no more: at once, another connection takes it alone (what a restore's swap needs)")
    func droppedReleasesFile() throws {
        try Self.droppedStores("pool-release", count: 40, interval: 60) { n, path in
            // Leaving WAL mode needs every other connection closed; SQLite does not wait for that.
            let mode = Result { try rawSQLite(path, "PRAGMA journal_mode = DELETE") }
            #expect((try? mode.get()) == ["delete"], "drop \(n) (durable: \(n % 2 == 0)): \(mode)")
        }
    }
}
