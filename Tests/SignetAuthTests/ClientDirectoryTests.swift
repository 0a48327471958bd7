import Foundation
@testable import SignetAuth
import Synchronization
import Testing

/// The clients of the database as a running server sees them (``ClientDirectory``): one row read
/// per client asked for, kept for the refresh interval, forgotten on a change made here, and
/// matched by the ID's bytes.
@Suite struct ClientDirectoryTests {
    /// A database of clients by ID, counting the reads of each; `failing` makes every read throw.
    final class Rows: Sendable {
        let clients = Mutex<[String: ClientConfiguration]>([:])
        let reads = Mutex<[String]>([])
        let failing = Atomic<Bool>(false)
        func load(_ id: String) throws -> ClientConfiguration? {
            reads.withLock { $0.append(id) }
            if failing.load(ordering: .relaxed) { throw StoreError(.unavailable, "down") }
            // Exact, as SQL's `=` on text compares bytes.
            return clients.withLock { rows in rows.first { $0.key.utf8.elementsEqual(id.utf8) }?.value }
        }
        func put(_ id: String, grants: [String] = ["refresh_token"]) { clients.withLock { $0[id] = ClientConfiguration(id: id, grants: grants) } }
        func readCount() -> Int { reads.withLock { $0.count } }
    }

    static func directory(_ rows: Rows, refresh: TimeInterval = 60, capacity: Int = 4096) -> ClientDirectory {
        ClientDirectory(configured: [ClientConfiguration(id: "app", grants: [])], refresh: refresh, capacity: capacity) { try rows.load($0) }
    }

    @Test("a lookup reads its own row once per refresh, an unknown ID too; a configured client reads nothing; a change here is seen at once")
    func readsByID() throws {
        let rows = Rows()
        for n in 0..<1000 { rows.put("c_\(n)") }
        let directory = Self.directory(rows)
        #expect(directory.client("app")?.id == "app" && rows.readCount() == 0)
        #expect(directory.client("c_7")?.id == "c_7")
        #expect(directory.client("c_7")?.id == "c_7")
        #expect(directory.client("c_none") == nil && directory.client("c_none") == nil)
        #expect(rows.reads.withLock { $0 } == ["c_7", "c_none"], "one read each, not one of the 1,000 rows")
        rows.put("c_7", grants: ["client_credentials"])
        #expect(directory.client("c_7")?.grants == ["refresh_token"], "kept until the refresh interval")
        directory.invalidate()
        #expect(directory.client("c_7")?.grants == ["client_credentials"] && directory.count == 1)
    }

    @Test("an answer is read again after the refresh interval; a failed read keeps the last answer")
    func refreshAndFailure() throws {
        let rows = Rows()
        rows.put("c_1")
        let directory = Self.directory(rows, refresh: 0.05)
        #expect(directory.client("c_1") != nil)
        rows.clients.withLock { $0["c_1"] = nil }
        Thread.sleep(forTimeInterval: 0.06)
        #expect(directory.client("c_1") == nil, "removed: gone after the interval")
        rows.put("c_1")
        Thread.sleep(forTimeInterval: 0.06)
        #expect(directory.client("c_1") != nil)
        rows.failing.store(true, ordering: .relaxed)
        Thread.sleep(forTimeInterval: 0.06)
        #expect(directory.client("c_1") != nil, "the database down: the last answer stands")
        #expect(directory.client("c_2") == nil)
    }

    @Test("IDs match by their bytes: an ID with KELVIN SIGN neither finds nor hides the client whose ID has K")
    func exactIDs() throws {
        let rows = Rows()
        rows.put("c_K1")
        let directory = Self.directory(rows)
        let kelvin = "c_\u{212A}1"
        #expect(kelvin == "c_K1", "Swift's String equality is canonical: the reason for byte keys")
        #expect(directory.client(kelvin) == nil)
        #expect(directory.client("c_K1")?.id == "c_K1", "a \"none\" for the twin does not hide the client")
        #expect(directory.client(kelvin) == nil)
    }

    @Test("bounded: a flood of unknown IDs keeps at most the capacity, and live answers are still right")
    func bounded() throws {
        let rows = Rows()
        rows.put("c_real")
        let directory = Self.directory(rows, capacity: 64)
        #expect(directory.client("c_real") != nil)
        for n in 0..<1000 { #expect(directory.client("c_junk\(n)") == nil) }
        #expect(directory.count <= 64)
        #expect(directory.client("c_real") != nil)
        // An ID longer than any the database makes is neither read nor kept: a flood of long IDs
        // cannot fill the memory.
        let reads = rows.readCount()
        #expect(directory.client("c_" + String(repeating: "x", count: 200)) == nil && rows.readCount() == reads)
    }

    @Test("a read begun before a change here is not kept after it")
    func readDuringInvalidate() throws {
        let rows = Rows()
        rows.put("c_1")
        let gate = Mutex<Bool>(false)
        let started = Atomic<Bool>(false)
        // The first read stalls until released, after the change and its invalidation.
        let slow = ClientDirectory(configured: [], refresh: 60) { id in
            if !started.exchange(true, ordering: .relaxed) {
                while !gate.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.001) }
                return ClientConfiguration(id: id, grants: ["old"])
            }
            return try rows.load(id)
        }
        let reader = Thread { _ = slow.client("c_1") }
        reader.start()
        while !started.load(ordering: .relaxed) { Thread.sleep(forTimeInterval: 0.001) }
        slow.invalidate()
        gate.withLock { $0 = true }
        while slow.count == 0 && !reader.isFinished { Thread.sleep(forTimeInterval: 0.001) }
        Thread.sleep(forTimeInterval: 0.02)
        #expect(slow.count == 0, "the stale read was not kept")
        #expect(slow.client("c_1")?.grants == ["refresh_token"])
    }
}
