import Foundation
import SignetAuth
import SignetStore
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
}
