import Foundation
package import SignetAuth
import Synchronization

/// Group commit for work that reaches the database while other work of its kind is committing:
/// the first caller to find no batch running leads; it takes every waiting item that may share a
/// statement with the ones taken before it (up to ``maxBatch``), runs them as one, and hands each
/// caller its own result. Callers that arrive meanwhile wait and form the next batch. A caller
/// alone is a batch of one, so under light load nothing waits longer than before.
///
/// Every item is answered exactly once, in a batch that ``compatible`` accepted; the queue is
/// first come, first served, and the oldest waiting item always starts the next batch.
package final class CommitBatcher<Item: Sendable, Outcome: Sendable>: @unchecked Sendable {
    private final class Slot {
        let item: Item
        var result: Result<Outcome, StoreError>?
        init(_ item: Item) { self.item = item }
    }

    /// Whether an item may join a batch that already holds the given items (it may always start
    /// an empty one).
    private let compatible: @Sendable (Item, [Item]) -> Bool
    package let maxBatch: Int
    /// Guards the queue and `running`, and wakes the waiters when a batch ends.
    private let condition = NSCondition()
    private var queue: [Slot] = []
    private var running = false
    /// Seconds a leader waits before taking its batch (tests: to see callers share a batch).
    package var holdBeforeBatch: Double = 0
    private let batchCount = Atomic<Int>(0)
    private let itemCount = Atomic<Int>(0)
    private let largestBatch = Atomic<Int>(0)
    /// Batches run, items they carried, and the largest (for metrics and tests).
    package var batches: Int { batchCount.load(ordering: .relaxed) }
    package var items: Int { itemCount.load(ordering: .relaxed) }
    package var largest: Int { largestBatch.load(ordering: .relaxed) }

    package init(maxBatch: Int, compatible: @escaping @Sendable (Item, [Item]) -> Bool) {
        precondition(maxBatch >= 1)
        self.maxBatch = maxBatch
        self.compatible = compatible
    }

    /// Runs `item` in a batch and returns its result. `execute` receives a batch and returns one
    /// result per item, in order; whichever caller leads runs its own `execute`, so every caller
    /// must pass one that does the same thing.
    package func submit(_ item: Item, execute: ([Item]) -> [Result<Outcome, StoreError>]) -> Result<Outcome, StoreError> {
        let slot = Slot(item)
        condition.lock()
        defer { condition.unlock() }
        queue.append(slot)
        while slot.result == nil {
            if running {
                condition.wait()
                continue
            }
            running = true
            if holdBeforeBatch > 0 {
                condition.unlock()
                Thread.sleep(forTimeInterval: holdBeforeBatch)
                condition.lock()
            }
            let batch = takeBatch()
            condition.unlock()
            let results = execute(batch.map(\.item))
            condition.lock()
            for (n, member) in batch.enumerated() {
                member.result = n < results.count ? results[n] : .failure(StoreError(.internalError, "the batch gave no result for an item"))
            }
            running = false
            batchCount.add(1, ordering: .relaxed)
            itemCount.add(batch.count, ordering: .relaxed)
            if batch.count > largestBatch.load(ordering: .relaxed) { largestBatch.store(batch.count, ordering: .relaxed) }
            condition.broadcast()
        }
        return slot.result!
    }

    /// The oldest waiting item and every later one that fits with those taken, in queue order;
    /// the rest stay queued in their order. Call with the lock held.
    private func takeBatch() -> [Slot] {
        var batch: [Slot] = []
        var items: [Item] = []
        var rest: [Slot] = []
        for slot in queue {
            if batch.count < maxBatch, batch.isEmpty || compatible(slot.item, items) {
                batch.append(slot)
                items.append(slot.item)
            } else {
                rest.append(slot)
            }
        }
        queue = rest
        return batch
    }
}
