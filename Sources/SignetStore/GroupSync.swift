internal import CSystem
import Foundation
import SignetAuth
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Group commit for a durable SQLite database: every write transaction is on disk before the
/// store call that made it returns, and concurrent commits share one `fdatasync` of the WAL.
///
/// The connection runs with `synchronous=NORMAL`: a commit appends its frames to the WAL (one
/// write, ``WALWriteVFS``) without syncing, so the store lock is never held through a disk flush.
/// Each commit then takes a number, and after the lock is released waits until a sync that
/// started after its commit has finished; whoever finds no sync running starts one, which covers
/// every commit numbered before it began. `fdatasync` on a descriptor of the WAL file flushes the
/// file's data whoever wrote it. With frames and the header that names them on disk, recovery
/// finds the commit (SQLite file format §4.3); checkpoints still sync the WAL before copying it and
/// the database before the WAL is reused, as SQLite does with `NORMAL`.
///
/// Held answers go one step further (``SQLitePool``): their writes wait in one open transaction,
/// which ``prepare`` commits right before the sync that covers them. A commit number then marks a
/// write in that batch; one the batch lost (its COMMIT failed, or SQLite rolled it back) is
/// reported through ``lose(from:through:_:)`` and its callback gets the error.
final class GroupSync: @unchecked Sendable {
    private let walPath: String
    /// Numbers handed to commits, in commit order (taken under the store lock).
    private let committed = Atomic<Int>(0)
    /// Guards the fields below and wakes the waiters when a sync ends.
    private let condition = NSCondition()
    private var synced = 0
    private var syncing = false
    private var descriptor: Int32 = -1
    /// Seconds each sync takes at least (tests make the disk slow to see commits share a sync).
    var minimumSyncTime: TimeInterval = 0
    /// Makes every sync fail as a dying disk's would (EIO), for tests of what a failed sync answers.
    var failingSyncs = false
    /// Callbacks of ``whenDurable(_:_:)`` waiting for their commits' sync, in commit order.
    private var callbacks: [(number: Int, done: @Sendable (StoreError?) -> Void)] = []
    /// Commits that will never be on disk, with why (batches lost; rare: a full disk, an I/O error).
    /// Kept, up to ``maxLost``, for callbacks registered after the sync that passed them.
    private var lost: [(from: Int, through: Int, error: StoreError)] = []
    private static let maxLost = 1024
    /// Run before each sync without this object's lock: commits what waits in an open batch and
    /// returns the last commit number on the WAL (the sync covers up to it). Unset: every
    /// numbered commit is on the WAL already.
    var prepare: (@Sendable () -> Int)?
    private var syncerRunning = false
    /// Syncs made (for tests and the benchmark).
    private let syncCount = Atomic<Int>(0)
    var syncs: Int { syncCount.load(ordering: .relaxed) }
    /// Commits numbered so far.
    var commits: Int { committed.load(ordering: .relaxed) }
    /// How long each sync took: the disk's stalls show here, and each holds every commit waiting.
    let syncTimes = DurationHistogram(buckets: GroupSync.buckets)
    /// From 0.1 ms (this disk's fastest sync) to 1 s.
    static let buckets: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

    init(databasePath: String) {
        walPath = databasePath + "-wal"
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// A number for a commit that has just returned; call with the store lock held.
    func commit() -> Int { committed.add(1, ordering: .sequentiallyConsistent).newValue }

    /// Returns once commit `number` is on disk.
    func waitUntilDurable(_ number: Int) throws(StoreError) {
        condition.lock()
        defer { condition.unlock() }
        while synced < number {
            guard !syncing else {
                condition.wait()
                continue
            }
            guard let error = leadSync() else { continue }
            throw error
        }
        if let error = lostError(number) { throw error }
    }

    /// Commits `from...through` were rolled back with their batch: their callbacks get `error`.
    func lose(from: Int, through: Int, _ error: StoreError) {
        guard from <= through else { return }
        condition.lock()
        lost.append((from, through, error))
        if lost.count > GroupSync.maxLost { lost.removeFirst(lost.count - GroupSync.maxLost) }
        condition.unlock()
    }

    /// Why commit `number` was lost, if it was; call with the lock held.
    private func lostError(_ number: Int) -> StoreError? {
        lost.last { $0.from <= number && number <= $0.through }?.error
    }

    /// Calls `done` once commit `number` is on disk (nil) or cannot be (the error): at once
    /// when it already is, otherwise on the thread whose sync covers it. Nobody waits meanwhile;
    /// a syncer thread makes the syncs that only callbacks wait for.
    func whenDurable(_ number: Int, _ done: @escaping @Sendable (StoreError?) -> Void) {
        condition.lock()
        guard synced < number else {
            let error = lostError(number)
            condition.unlock()
            done(error)
            return
        }
        callbacks.append((number, done))
        if !syncerRunning {
            syncerRunning = true
            let thread = Thread { [self] in
                // Foundation's `Thread.name` does not reach Linux's name of the thread.
                _ = signet_name_thread("signet.sync")
                syncLoop()
            }
            thread.start()
        }
        condition.broadcast()
        condition.unlock()
    }

    /// The syncer: one sync after another while callbacks wait; it ends after a second without any.
    private func syncLoop() {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if callbacks.isEmpty {
                _ = condition.wait(until: Date().addingTimeInterval(1))
                if callbacks.isEmpty {
                    syncerRunning = false
                    return
                }
            }
            if syncing {
                condition.wait()
                continue
            }
            // Woken by a commit, the syncer first lets the workers that are ready run (three
            // yields, each a scheduler turn for whoever is runnable; at once when nobody is), so
            // they reach their commits and one sync covers them all. Measured at 16 clients on
            // one core, three rounds: 0.07-0.09 syncs per sign-in, against 0.13-0.14 with the
            // syncer at nice 19 instead (which also delays its wake-up after the disk's answer)
            // and 0.55 when workers waited for their own syncs.
            condition.unlock()
            for _ in 0..<3 { sched_yield() }
            condition.lock()
            if syncing || callbacks.isEmpty { continue }
            _ = leadSync()
        }
    }

    /// One sync, for every commit numbered before it starts (the open batch committed first);
    /// called and returning with the lock held, which it lets go while the database and the disk
    /// work. Calls the callbacks the sync covered (with the lock let go) and wakes the waiters.
    /// Returns nil, or the error of a failed sync.
    private func leadSync() -> StoreError? {
        syncing = true
        if descriptor < 0 { descriptor = open(walPath, O_RDONLY | O_CLOEXEC) }
        let fd = descriptor
        condition.unlock()
        let target = prepare?() ?? committed.load(ordering: .sequentiallyConsistent)
        let started = DispatchTime.now().uptimeNanoseconds
        var ok = fd >= 0 && fdatasync(fd) == 0
        var code = errno
        if failingSyncs { (ok, code) = (false, EIO) }
        if minimumSyncTime > 0 { Thread.sleep(forTimeInterval: minimumSyncTime) }
        syncTimes.observe(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        condition.lock()
        syncing = false
        if ok {
            synced = max(synced, target)
            syncCount.add(1, ordering: .relaxed)
        }
        // A failed sync fails the callbacks it would have covered: their answers report it.
        let failure = ok ? nil : StoreError(.unavailable, "cannot sync \(walPath): errno \(code)")
        var covered: [(done: @Sendable (StoreError?) -> Void, error: StoreError?)] = []
        callbacks.removeAll { entry in
            guard entry.number <= target else { return false }
            covered.append((entry.done, failure ?? lostError(entry.number)))
            return true
        }
        condition.broadcast()
        if !covered.isEmpty {
            condition.unlock()
            for entry in covered { entry.done(entry.error) }
            condition.lock()
        }
        return failure
    }
}
