import Foundation

/// Hands out database sessions, one caller at a time each.
protocol SessionPool: Sendable {
    func withSession<T>(_ body: (any SQLSession) throws(StoreError) -> T) throws(StoreError) -> T
}

/// SQLite: one connection behind a lock.
final class SQLitePool: SessionPool, @unchecked Sendable {
    private let connection: SQLiteConnection
    private let lock = NSLock()

    init(_ connection: SQLiteConnection) { self.connection = connection }

    func withSession<T>(_ body: (any SQLSession) throws(StoreError) -> T) throws(StoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(connection)
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
