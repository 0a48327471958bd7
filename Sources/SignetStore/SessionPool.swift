import SignetAuth
import Foundation

/// Hands out database sessions, one caller at a time each.
protocol SessionPool: Sendable {
    func withSession<T>(_ body: (any SQLSession) throws(StoreError) -> T) throws(StoreError) -> T
}

/// SQLite: one connection behind a lock, and a second one that checkpoints in the background.
///
/// SQLite's automatic checkpoint runs inside whichever commit crosses 1,000 WAL pages: that
/// commit then copies the pages back and waits for two `fdatasync`s while holding the lock every
/// request needs. Here commits only append to the WAL; every `interval` seconds the checkpointer
/// copies the WAL back (a passive checkpoint, which never blocks a writer), so a page written
/// by many commits in between is copied once and requests seldom wait for the disk.
final class SQLitePool: SessionPool, @unchecked Sendable {
    private let connection: SQLiteConnection
    private let lock = NSLock()
    private let checkpointer: SQLiteConnection
    private let queue = DispatchQueue(label: "signet.sqlite.checkpoint", qos: .utility)
    private let timer: any DispatchSourceTimer
    /// With durability: every write is on disk before ``withSession(_:)`` returns (group commit).
    let groupSync: GroupSync?
    /// How long the checkpoint's last part held the lock every request needs.
    let lockedCheckpointTimes = DurationHistogram(buckets: GroupSync.buckets)

    init(path: String, interval: TimeInterval = 0.25, durable: Bool = true) throws(StoreError) {
        // Commits append to the WAL without a sync; ``GroupSync`` makes them durable outside the lock.
        connection = try SQLiteConnection(path: path, autoCheckpoint: false, synchronous: "NORMAL")
        let checkpointer = try SQLiteConnection(path: path, synchronous: "NORMAL")
        groupSync = durable ? GroupSync(databasePath: path) : nil
        self.checkpointer = checkpointer
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
        timer.setEventHandler { [lock, connection, lockedCheckpointTimes] in
            // Most of the copying happens while requests go on. The WAL can start over only
            // once it is copied back whole, which needs a moment without commits: the few
            // frames written meanwhile are copied with the lock held.
            guard let frames = checkpointer.checkpoint(), frames > 0 else { return }
            lock.lock()
            let started = DispatchTime.now().uptimeNanoseconds
            connection.checkpoint()
            lockedCheckpointTimes.observe(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
            lock.unlock()
        }
        timer.resume()
    }

    deinit {
        timer.cancel()
        // On the timer's queue, so it never overlaps a tick: the last commits go back into the
        // database file before it is closed.
        queue.sync { _ = checkpointer.checkpoint() }
    }

    func withSession<T>(_ body: (any SQLSession) throws(StoreError) -> T) throws(StoreError) -> T {
        lock.lock()
        let before = connection.totalChanges
        let result: T
        do {
            result = try body(connection)
        } catch {
            lock.unlock()
            throw error
        }
        // A write: its number, taken in commit order, then the wait for its sync without the lock
        // (or, for a server's request, the wait of its answer: ``DeferredDurability``).
        let number = groupSync != nil && connection.totalChanges != before ? groupSync!.commit() : 0
        lock.unlock()
        if number > 0, !DeferredDurability.record(number) { try groupSync!.waitUntilDurable(number) }
        return result
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
}
