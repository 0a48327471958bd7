import Foundation
import SignetAuth
import SignetStore
import SignetTestSupport
import Synchronization
import Testing

/// The group commit's queue, without a database: who leads, what shares a batch, who gets what.
@Suite struct CommitBatcherTests {
    /// Items are (key, number): two of one key never share a batch.
    typealias Item = (key: Int, n: Int)

    @Test("a caller alone runs a batch of one and gets its own result, also an error")
    func alone() throws {
        let batcher = CommitBatcher<Int, Int>(maxBatch: 4) { _, _ in true }
        let sizes = Mutex<[Int]>([])
        for n in 0..<3 {
            let result = batcher.submit(n) { batch in
                sizes.withLock { $0.append(batch.count) }
                return batch.map { $0 == 1 ? .failure(StoreError(.conflict, "one")) : .success($0 * 10) }
            }
            if n == 1 {
                #expect(throws: StoreError.self) { try result.get() }
            } else {
                #expect(try result.get() == n * 10)
            }
        }
        #expect(sizes.withLock { $0 } == [1, 1, 1])
        #expect(batcher.batches == 3 && batcher.items == 3 && batcher.largest == 1)
    }

    @Test("callers that arrive while a batch runs share the next: each answered once with its own result, no batch too large or mixed")
    func shared() throws {
        let batcher = CommitBatcher<Item, Int>(maxBatch: 5) { item, batch in !batch.contains { $0.key == item.key } }
        batcher.holdBeforeBatch = 0.02
        let batches = Mutex<[[Item]]>([])
        let results = simultaneously(40) { n in
            try batcher.submit((key: n % 8, n: n)) { batch in
                batches.withLock { $0.append(batch) }
                Thread.sleep(forTimeInterval: 0.002)
                return batch.map { .success($0.n * 3) }
            }.get()
        }
        // Every caller got the result computed for its own item.
        for (n, result) in results.enumerated() { #expect(try result.get() == n * 3) }
        let ran = batches.withLock { $0 }
        #expect(ran.flatMap { $0.map(\.n) }.sorted() == Array(0..<40), "every item ran exactly once")
        #expect(ran.allSatisfy { $0.count <= 5 }, "no batch over the limit")
        #expect(ran.allSatisfy { Set($0.map(\.key)).count == $0.count }, "no two of one key in a batch")
        #expect(ran.count < 40, "callers shared batches")
        #expect(batcher.largest > 1 && batcher.items == 40 && batcher.batches == ran.count)
    }

    @Test("an item that fits no batch with the oldest waits for the next, and still runs")
    func deferred() throws {
        // All of one key: none may share, so each runs alone, in turn, and all are answered.
        let batcher = CommitBatcher<Item, Int>(maxBatch: 8) { item, batch in !batch.contains { $0.key == item.key } }
        batcher.holdBeforeBatch = 0.005
        let results = simultaneously(6) { n in try batcher.submit((key: 0, n: n)) { batch in batch.map { .success($0.n) } }.get() }
        for (n, result) in results.enumerated() { #expect(try result.get() == n) }
        #expect(batcher.batches == 6 && batcher.largest == 1)
    }

    @Test("a batch that answers too few results gives the rest an error, not a hang")
    func shortAnswer() {
        let batcher = CommitBatcher<Int, Int>(maxBatch: 8) { _, _ in true }
        batcher.holdBeforeBatch = 0.02
        let results = simultaneously(4) { n in try batcher.submit(n) { _ in [] }.get() }
        #expect(results.allSatisfy { if case .failure(let error as StoreError) = $0 { error.code == .internalError } else { false } })
    }
}
