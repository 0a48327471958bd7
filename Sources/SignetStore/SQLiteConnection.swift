import SignetAuth
internal import CSQLite
import Foundation

/// A value bound to or read from a statement.
enum SQLValue: Equatable, Sendable {
    case int(Int64), text(String), blob([UInt8]), null

    var int: Int64? { if case .int(let v) = self { v } else { nil } }
    var text: String? { if case .text(let v) = self { v } else { nil } }
    var blob: [UInt8]? {
        switch self {
        case .blob(let v): v
        case .null: nil
        default: nil
        }
    }
    var bool: Bool { int.map { $0 != 0 } ?? false }
}

/// One SQLite connection (`sqlite3*`) with its prepared statements. Not thread-safe by itself:
/// ``SQLiteStore`` serializes access.
final class SQLiteConnection {
    private let db: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    /// - Parameter autoCheckpoint: whether a commit that grows the WAL past 1,000 pages copies it
    ///   back into the database itself (SQLite's default). ``SQLitePool`` turns this off and
    ///   checkpoints from a background connection instead.
    /// - Parameter synchronous: `FULL` syncs the WAL inside every commit (durable before the
    ///   answer); `NORMAL` leaves the sync to checkpoints (SQLite's WAL documentation).
    init(path: String, autoCheckpoint: Bool = true, synchronous: String = "FULL") throws(StoreError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        // Commits reach the WAL in one write each (``WALWriteVFS``).
        let vfs = WALWriteVFS.registered ? WALWriteVFS.name : nil
        guard sqlite3_open_v2(path, &handle, flags, vfs) == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw StoreError(.unavailable, "cannot open SQLite database \(path): \(message)")
        }
        db = handle
        sqlite3_busy_timeout(db, 5000)
        // For a database created now: 1 KiB pages. A sign-in's commit changes about five pages
        // (its rows are small), and each changed page goes to the WAL whole, copied and
        // checksummed; 1 KiB pages make that a quarter of the bytes of the default 4 KiB (the
        // store's share of a sign-in, measured by `signet bench breakdown`: about 44 -> 35 us).
        // An existing database keeps its page size.
        do {
            try exec("PRAGMA page_size = 1024")
            try exec("PRAGMA journal_mode = WAL")
        } catch where sqlite3_errcode(db) & 0xff == SQLITE_NOTADB {
            // The first read of the file: a path that names some other file is said so.
            throw StoreError(.internalError, "\(path) is not a SQLite database (another kind of file, or a damaged one): \(error.detail)")
        }
        try exec("PRAGMA synchronous = \(synchronous == "NORMAL" ? "NORMAL" : "FULL")")
        try exec("PRAGMA foreign_keys = ON")
        if !autoCheckpoint { try exec("PRAGMA wal_autocheckpoint = 0") }
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close(db)
    }

    /// Runs SQL with no parameters and no rows (may hold several statements).
    func exec(_ sql: String) throws(StoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "error \(rc)"
            sqlite3_free(message)
            throw error(rc, text)
        }
    }

    /// Set by ``SQLitePool`` while a held request runs: its first statement that writes (or its
    /// first transaction, ``SQLSession/transaction(_:)``) opens the batch's transaction, so a
    /// request that only reads takes no write lock.
    var batching = false

    /// Opens the batch's transaction (`BEGIN IMMEDIATE`) when ``batching`` and none is open.
    func beginBatchIfBatching() throws(StoreError) {
        guard batching, autocommit else { return }
        // `BEGIN IMMEDIATE` itself counts as a write for `sqlite3_stmt_readonly`.
        batching = false
        defer { batching = true }
        try query("BEGIN IMMEDIATE")
    }

    /// Runs one statement with `parameters` and returns every row.
    @discardableResult
    func query(_ sql: String, _ parameters: [SQLValue] = []) throws(StoreError) -> [[SQLValue]] {
        let statement = try prepare(sql)
        if batching, autocommit, sqlite3_stmt_readonly(statement) == 0 { try beginBatchIfBatching() }
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in parameters.enumerated() {
            let position = Int32(index + 1)
            let rc: Int32
            switch value {
            case .int(let v): rc = sqlite3_bind_int64(statement, position, v)
            case .text(var v):
                // The bytes with their length: no C string made, no strlen.
                rc = v.withUTF8 { text in
                    guard let base = text.baseAddress else { return sqlite3_bind_text(statement, position, "", 0, signet_sqlite_transient()) }
                    return sqlite3_bind_text(statement, position, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(text.count), signet_sqlite_transient())
                }
            case .blob(let v): rc = v.withUnsafeBytes { sqlite3_bind_blob(statement, position, $0.baseAddress, Int32($0.count), signet_sqlite_transient()) }
            case .null: rc = sqlite3_bind_null(statement, position)
            }
            guard rc == SQLITE_OK else { throw error(rc, "bind") }
        }
        var rows: [[SQLValue]] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw error(rc, String(cString: sqlite3_errmsg(db))) }
            let count = sqlite3_column_count(statement)
            var row: [SQLValue] = []
            row.reserveCapacity(Int(count))
            for column in 0..<count {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.int(sqlite3_column_int64(statement, column)))
                case SQLITE_TEXT: row.append(.text(String(cString: sqlite3_column_text(statement, column))))
                case SQLITE_BLOB:
                    let n = Int(sqlite3_column_bytes(statement, column))
                    let bytes = sqlite3_column_blob(statement, column)
                    row.append(.blob(n == 0 ? [] : Array(UnsafeRawBufferPointer(start: bytes, count: n))))
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// Copies what the WAL holds back into the database as far as readers allow, without waiting
    /// for any lock (`SQLITE_CHECKPOINT_PASSIVE`); returns the frames the WAL holds and how many
    /// of them are now in the database, or `nil` when the checkpoint could not run.
    @discardableResult
    func checkpoint() -> (frames: Int, copied: Int)? {
        var log: Int32 = 0, done: Int32 = 0
        guard sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &done) == SQLITE_OK else { return nil }
        return (Int(log), Int(done))
    }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(db)) }
    /// No transaction is open (SQLite's autocommit mode; also after SQLite itself rolled one back).
    var autocommit: Bool { sqlite3_get_autocommit(db) != 0 }
    /// Rows changed by every statement since the connection opened.
    var totalChanges: Int64 { sqlite3_total_changes64(db) }

    /// The last statements used, by their text's length: a statement text the store keeps in a
    /// constant is the same string every time, and comparing a string with itself costs nothing,
    /// where hashing it for the dictionary costs a pass over its bytes.
    private var recent = [(sql: String, statement: OpaquePointer)?](repeating: nil, count: 64)

    private func prepare(_ sql: String) throws(StoreError) -> OpaquePointer {
        let slot = sql.utf8.count & 63
        if let hit = recent[slot], hit.sql == sql { return hit.statement }
        if let cached = statements[sql] {
            recent[slot] = (sql, cached)
            return cached
        }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc, String(cString: sqlite3_errmsg(db))) }
        statements[sql] = statement
        recent[slot] = (sql, statement)
        return statement
    }

    private func error(_ rc: Int32, _ detail: String) -> StoreError {
        switch rc & 0xff {
        case SQLITE_CONSTRAINT:
            // A key taken (UNIQUE 2067, PRIMARY KEY 1555) or a row gone (FOREIGN KEY 787) is a
            // conflict, as PostgreSQL's 23505 and 23503 are; a CHECK, NOT NULL or trigger refusal
            // is the database's, not the request's.
            [2067, 1555, 787].contains(sqlite3_extended_errcode(db)) ? StoreError(.conflict, detail) : StoreError(.internalError, detail)
        case SQLITE_FULL: StoreError(.storageFull, detail)
        case SQLITE_BUSY, SQLITE_LOCKED, SQLITE_CANTOPEN, SQLITE_IOERR: StoreError(.unavailable, detail)
        default: StoreError(.internalError, detail)
        }
    }
}
