import SignetAuth
import Foundation
import Synchronization

/// Hands out database sessions, one caller at a time each.
protocol SessionPool: Sendable {
    func withSession<T>(_ body: (any SQLSession) throws(StoreError) -> T) throws(StoreError) -> T
    /// A session for a read that may be long (a scan), which must not hold up writers.
    func reading<T>(_ body: (any SQLSession) throws(StoreError) -> T) throws(StoreError) -> T
}

extension SessionPool {
    func reading<T>(_ body: (any SQLSession) throws(StoreError) -> T) throws(StoreError) -> T { try withSession(body) }
}

/// SQLite: one connection behind a lock, a second one that checkpoints in the background, and a
/// third, query-only, for the reads that scan (``reading(_:)``).
///
/// SQLite's automatic checkpoint runs inside whichever commit crosses 1,000 WAL pages: that
/// commit then copies the pages back and waits for two `fdatasync`s while holding the lock every
/// request needs. Here commits only append to the WAL; every `interval` seconds the checkpointer
/// copies the WAL back (a passive checkpoint, which never blocks a writer), so a page written
/// by many commits in between is copied once and requests seldom wait for the disk.
///
/// Durable writes whose answers are held (``DeferredDurability``) share one transaction as
/// well as one sync: the first statement that writes opens it (`BEGIN IMMEDIATE`; a request that
/// only reads takes no write lock), each later write runs in it (its own
/// transactions become savepoints), and ``GroupSync`` commits it right before the `fdatasync`
/// that makes it durable. Nothing changes for what is answered: an answer still goes after the
/// sync of everything it wrote. What changes is the cost: one COMMIT, one set of WAL locks and
/// one WAL write for the batch, and a page that several writes changed (the right edge of an
/// append-only table) goes to the WAL once. Other processes see the batch when it commits,
/// a sync's time after the write. Any other caller commits the open batch with its own write.
final class SQLitePool: SessionPool, @unchecked Sendable {
    private let connection: SQLiteConnection
    private let lock = NSLock()
    private let checkpointer: SQLiteConnection
    /// Reads that scan (an account's audit rows and sessions, which SQLite has no index for):
    /// a reader of the WAL, so the writer's lock is never held for them.
    private let reader: SQLiteConnection
    private let readerLock = NSLock()
    private let queue = DispatchQueue(label: "signet.sqlite.checkpoint", qos: .utility)
    private let timer: any DispatchSourceTimer
    /// With durability: every write is on disk before ``withSession(_:)`` returns (group commit).
    let groupSync: GroupSync?
    /// How long the checkpoint's last part held the lock every request needs.
    let lockedCheckpointTimes = DurationHistogram(buckets: GroupSync.buckets)
    /// The open batch of held writes (guarded by `lock`): the number its first write took, or 0
    /// when no batch is open.
    private var batchFirst = 0
    /// The timer found a batch open: the checkpoint's locked part runs after the batch commits.
    private var checkpointDue = false
    /// Calls that wrote, counted under the lock; read by the timer without it.
    private let writes = Atomic<Int>(0)
    /// The write count when the timer last took the lock (the timer's queue only).
    private var writesAtLockedCheckpoint = -1
    /// Batches committed, the writes they held and the most one held (for tests and the benchmark).
    private var batches = 0
    private var batchedWrites = 0
    private var largestBatch = 0
    var batchCounts: (batches: Int, writes: Int, largest: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (batches, batchedWrites, largestBatch)
    }
    /// Makes every batch's COMMIT fail as on a full disk, rolling the batch back (for tests).
    var failingCommits: Bool {
        get { lock.withLock { failCommits } }
        set { lock.withLock { failCommits = newValue } }
    }
    private var failCommits = false

    init(path: String, interval: TimeInterval = 0.25, durable: Bool = true) throws(StoreError) {
        // Commits append to the WAL without a sync; ``GroupSync`` makes them durable outside the lock.
        connection = try SQLiteConnection(path: path, autoCheckpoint: false, synchronous: "NORMAL")
        checkpointer = try SQLiteConnection(path: path, synchronous: "NORMAL")
        reader = try SQLiteConnection(path: path, synchronous: "NORMAL")
        try reader.exec("PRAGMA query_only = ON")
        groupSync = durable ? GroupSync(databasePath: path) : nil
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
        // The handler holds nothing of the pool's but weakly: a dispatch source lets go of its
        // handler only once its cancellation is delivered, on the queue, a moment after the
        // pool's end; a connection it held would keep the file open that long.
        timer.setEventHandler { [weak self] in
            // Most of the copying happens while requests go on. The WAL can start over only
            // once it is copied back whole, which needs a moment without commits: the few
            // frames written meanwhile are copied with the lock held. An idle store (the WAL copied
            // whole, nothing written since the lock was last taken for it) is left alone.
            guard let self, let wal = self.checkpointer.checkpoint(), wal.frames > 0 else { return }
            let written = writes.load(ordering: .relaxed)
            if wal.copied == wal.frames, written == writesAtLockedCheckpoint { return }
            writesAtLockedCheckpoint = written
            lock.lock()
            if batchFirst > 0 {
                checkpointDue = true
            } else {
                lockedCheckpoint()
            }
            lock.unlock()
        }
        timer.resume()
        groupSync?.prepare = { [weak self] in self?.commitBatch() ?? 0 }
    }

    deinit {
        timer.cancel()
        lock.lock()
        _ = commitBatchLocked()
        lock.unlock()
        // The last commits go back into the database file before it is closed, on this
        // thread: a block sent to the queue is let go when dispatch gets round to it, which
        // kept the connection (and the file) open a moment after the pool's end. No tick
        // overlaps this: a tick holds the pool from its start, so the pool ends either here
        // with no tick running, or on the timer's queue at the end of the tick that held it.
        _ = checkpointer.checkpoint()
    }

    /// The checkpoint's last part, with the lock held and no batch open.
    private func lockedCheckpoint() {
        let started = DispatchTime.now().uptimeNanoseconds
        connection.checkpoint()
        lockedCheckpointTimes.observe(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
    }

    /// Commits the open batch, if any, and returns the last commit number now on the WAL (what
    /// the next sync covers). Called by ``GroupSync`` before each sync.
    private func commitBatch() -> Int {
        lock.lock()
        defer { lock.unlock() }
        _ = commitBatchLocked()
        return groupSync?.commits ?? 0
    }

    /// With the lock held: commits the open batch; when that fails, rolls it back, reports its
    /// writes lost and returns the error.
    private func commitBatchLocked() -> StoreError? {
        guard batchFirst > 0 else { return nil }
        let first = batchFirst
        batchFirst = 0
        let last = groupSync?.commits ?? 0
        var failure: StoreError?
        if connection.autocommit {
            // SQLite rolled the batch back itself (a full disk, an I/O error in a later write).
            failure = StoreError(.unavailable, "the batch of writes was rolled back")
        } else {
            do throws(StoreError) {
                if failCommits { throw StoreError(.storageFull, "COMMIT refused: the disk is full (test)") }
                try connection.query("COMMIT")
                if last >= first {
                    batches += 1
                    batchedWrites += last - first + 1
                    largestBatch = max(largestBatch, last - first + 1)
                }
            } catch {
                // Lost writes are a durability failure whatever COMMIT said: a full disk, or unavailable.
                failure = error.code == .storageFull ? error : StoreError(.unavailable, "the batch of writes could not commit: \(error.detail)")
                if !connection.autocommit { _ = try? connection.query("ROLLBACK") }
            }
        }
        if let failure { groupSync?.lose(from: first, through: last, failure) }
        if checkpointDue {
            checkpointDue = false
            lockedCheckpoint()
        }
        return failure
    }

    /// On the reader, unless this thread's request wrote into the batch still open: the reader
    /// sees only what has committed, so such a request reads on the writer's connection, which
    /// holds its writes (a request's answer shows what it wrote).
    func reading<T>(_ body: (any SQLSession) throws(StoreError) -> T) throws(StoreError) -> T {
        let mine = DeferredDurability.lastRecorded
        if mine > 0, lock.withLock({ batchFirst > 0 && mine >= batchFirst }) { return try withSession(body) }
        readerLock.lock()
        defer { readerLock.unlock() }
        return try body(reader)
    }

    func withSession<T>(_ body: (any SQLSession) throws(StoreError) -> T) throws(StoreError) -> T {
        lock.lock()
        let held = groupSync != nil && DeferredDurability.active
        // A held request's first write opens the batch (``SQLiteConnection/batching``).
        connection.batching = held && batchFirst == 0
        let before = connection.totalChanges
        let result: T
        do {
            result = try body(connection)
        } catch {
            adoptBatch()
            closeUnusedBatch()
            lock.unlock()
            throw error
        }
        adoptBatch()
        let wrote = connection.totalChanges != before
        if wrote { writes.add(1, ordering: .relaxed) }
        var number = 0
        if held {
            if wrote, batchFirst > 0, !connection.autocommit {
                number = groupSync!.commit()
            } else if wrote {
                // The batch was rolled back under this write: it is lost with the batch.
                _ = commitBatchLocked()
                lock.unlock()
                throw StoreError(.unavailable, "the batch of writes was rolled back")
            } else {
                closeUnusedBatch()
            }
        } else {
            if let failure = commitBatchLocked() {
                lock.unlock()
                throw failure
            }
            // A write: its number, taken in commit order, then the wait for its sync without the lock.
            if groupSync != nil, wrote { number = groupSync!.commit() }
        }
        lock.unlock()
        if number > 0, !DeferredDurability.record(number) { try groupSync!.waitUntilDurable(number) }
        return result
    }

    /// With the lock held, after a held request's body: a transaction it opened is the batch,
    /// numbered from the next commit.
    private func adoptBatch() {
        guard connection.batching else { return }
        connection.batching = false
        if batchFirst == 0, !connection.autocommit { batchFirst = (groupSync?.commits ?? 0) + 1 }
    }

    /// With the lock held: a batch that no write has joined yet ends now, so that no transaction
    /// stays open without a sync coming to commit it; one that SQLite rolled back is lost.
    private func closeUnusedBatch() {
        guard batchFirst > 0 else { return }
        if batchFirst > (groupSync?.commits ?? 0) || connection.autocommit { _ = commitBatchLocked() }
    }
}

/// PostgreSQL: a fixed number of connections. When the database is unreachable, callers fail at
/// once with `database_unavailable`: the whole pool makes one reconnection attempt every half
/// second (each bounded by libpq's `connect_timeout`), so no worker thread after another blocks
/// on connecting, and the pool is whole again soon after the database is back.
final class PostgresPool: SessionPool, @unchecked Sendable {
    private let url: String
    private let lock = NSLock()
    private var idle: [PostgresConnection?]
    private let available: DispatchSemaphore
    private var downSince: Date?
    private var lastAttempt = Date.distantPast

    init(url: String, size: Int) throws(StoreError) {
        var full = url
        if !url.contains("connect_timeout") { full += (url.contains("?") ? "&" : "?") + "connect_timeout=2" }
        self.url = full
        idle = Array(repeating: nil, count: max(1, size))
        available = DispatchSemaphore(value: max(1, size))
        idle[0] = try PostgresConnection(url: full)
    }

    func withSession<T>(_ body: (any SQLSession) throws(StoreError) -> T) throws(StoreError) -> T {
        guard available.wait(timeout: .now() + 5) == .success else { throw StoreError(.unavailable, "no database connection free within 5 s") }
        lock.lock()
        let slot = idle.removeLast()
        let now = Date()
        // While down, only one caller at a time may try to connect, twice a second at most.
        let mayConnect = downSince == nil || now.timeIntervalSince(lastAttempt) > 0.5
        if downSince != nil && mayConnect && !(slot?.isConnected ?? false) { lastAttempt = now }
        lock.unlock()
        var connection = slot
        defer {
            lock.lock()
            idle.append(connection)
            lock.unlock()
            available.signal()
        }
        do {
            if !(connection?.isConnected ?? false) && !mayConnect { throw StoreError(.unavailable, "PostgreSQL is unreachable") }
            if let existing = connection {
                try existing.ensureConnected()
            } else {
                connection = try PostgresConnection(url: url)
            }
            let result = try body(connection!)
            lock.lock()
            downSince = nil
            lock.unlock()
            return result
        } catch {
            let failure = (error as? StoreError) ?? StoreError(.internalError, "\(error)")
            if failure.code == .unavailable {
                lock.lock()
                downSince = downSince ?? Date()
                lock.unlock()
                connection = nil
            }
            throw failure
        }
    }
}

/// Administration of a PostgreSQL server for tests and benchmarks.
public enum PostgresAdmin {
    /// Creates a fresh database named `name` through the admin URL (`.../postgres`) and returns its URL.
    public static func createDatabase(adminURL: String, name: String) throws -> String {
        let admin = try PostgresConnection(url: adminURL)
        try admin.query("CREATE DATABASE \(name)")
        guard let slash = adminURL.range(of: "/", options: .backwards) else { return adminURL }
        let suffix = adminURL[slash.upperBound...].split(separator: "?", maxSplits: 1)
        return String(adminURL[..<slash.upperBound]) + name + (suffix.count > 1 ? "?" + suffix[1] : "")
    }

    /// Whether the database at `url` holds Signet's tables (its `schema_migrations`): the commands
    /// that read or change a database a server made refuse an empty one instead of migrating it.
    public static func holdsSignet(url: String) throws -> Bool {
        try PostgresConnection(url: url).query("SELECT CASE WHEN to_regclass('schema_migrations') IS NULL THEN 0 ELSE 1 END").first?[0].int == 1
    }

    /// Runs one statement on the database at `url`, outside any store.
    public static func execute(url: String, _ sql: String) throws {
        try PostgresConnection(url: url).query(sql)
    }
}
