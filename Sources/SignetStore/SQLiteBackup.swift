internal import CSQLite
import Foundation
public import SignetAuth

/// What `signet backup` made and checked.
public struct BackupReport: Sendable {
    public let path: String
    public let bytes: Int
    public let pages: Int
    public let users: Int
    public let schemaVersion: Int
    public let seconds: Double
}

/// A consistent copy of a SQLite database while servers keep writing to it (SQLite's online
/// backup API, sqlite.org/backup.html): every page of one snapshot, taken in a single step so
/// that commits made meanwhile neither restart nor tear it. The copy is written beside the
/// target as `FILE.part` (mode 0600), opened and checked (`PRAGMA integrity_check`, its schema,
/// its accounts), synced, and only then renamed to `FILE`. With `sealing` (the key-encryption
/// key) the checked copy is sealed (``SealedBackup``) into `FILE.sealing`, which is renamed to
/// `FILE`, and the unsealed one removed; its report gives the sealed file's size.
public enum SQLiteBackup {
    public static func copy(from source: String, to target: String, sealing kek: [UInt8]? = nil) throws(StoreError) -> BackupReport {
        let start = Date()
        guard !FileManager.default.fileExists(atPath: target) else { throw StoreError(.conflict, "\(target) exists; give a new file name") }
        guard FileManager.default.fileExists(atPath: source) else { throw StoreError(.unavailable, "no SQLite database at \(source)") }
        let partial = target + ".part"
        try? FileManager.default.removeItem(atPath: partial)
        try snapshot(source, into: partial, sourceFlags: SQLITE_OPEN_READWRITE)
        // It holds every account: its owner's alone, as the database should be.
        chmod(partial, 0o600)
        var report = try check(partial, start: start, target: target)
        var finished = partial
        if let kek {
            finished = target + ".sealing"
            try? FileManager.default.removeItem(atPath: finished)
            defer { try? FileManager.default.removeItem(atPath: partial) }
            try SealedBackup.seal(partial, to: finished, kek: kek)
            let size = (try? FileManager.default.attributesOfItem(atPath: finished)[.size] as? Int) ?? report.bytes
            report = BackupReport(path: target, bytes: size, pages: report.pages, users: report.users, schemaVersion: report.schemaVersion,
                                  seconds: Date().timeIntervalSince(start))
        } else {
            try sync(partial)
        }
        guard rename(finished, target) == 0 else { throw StoreError(.internalError, "cannot rename \(finished) to \(target): \(String(cString: strerror(errno)))") }
        sync(directoryOf: target)
        return report
    }

    /// Every page of one snapshot of `source` into a new file `path`, left without a WAL: the
    /// online backup API in a single step, which commits made to the source meanwhile neither
    /// restart nor tear.
    static func snapshot(_ source: String, into path: String, sourceFlags: Int32) throws(StoreError) {
        let from = try open(source, flags: sourceFlags)
        defer { sqlite3_close(from) }
        let to = try open(path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        defer { sqlite3_close(to) }
        guard let backup = sqlite3_backup_init(to, "main", from, "main") else {
            throw StoreError(.internalError, "backup: \(String(cString: sqlite3_errmsg(to)))")
        }
        var rc: Int32
        repeat {
            rc = sqlite3_backup_step(backup, -1)
            if rc == SQLITE_BUSY || rc == SQLITE_LOCKED { usleep(20_000) }
        } while rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED
        let finished = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE, finished == SQLITE_OK else {
            throw StoreError(rc == SQLITE_FULL ? .storageFull : .internalError, "backup: \(String(cString: sqlite3_errmsg(to)))")
        }
        // A copy that stands alone: no WAL beside it.
        try exec(to, "PRAGMA journal_mode = DELETE")
    }

    /// Checks the SQLite file at `path` as a restore checks a copy (`integrity_check`, Signet's
    /// schema, its accounts), changing nothing.
    public static func inspect(_ path: String) throws(StoreError) -> BackupReport {
        try check(path, start: Date(), target: path)
    }

    /// Opens the copy anew and checks it as a restore would read it.
    static func check(_ path: String, start: Date, target: String) throws(StoreError) -> BackupReport {
        let db = try open(path, flags: SQLITE_OPEN_READONLY)
        defer { sqlite3_close(db) }
        let integrity = try scalarText(db, "PRAGMA integrity_check")
        guard integrity == "ok" else { throw StoreError(.internalError, "the copy failed its integrity check: \(integrity)") }
        let signet = try scalarText(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'") == "1"
        let version = signet ? Int(try scalarText(db, "SELECT MAX(version) FROM schema_migrations")) ?? 0 : 0
        guard version > 0 else { throw StoreError(.internalError, "the copy has no Signet schema") }
        let users = Int(try scalarText(db, "SELECT COUNT(*) FROM users")) ?? 0
        let pages = Int(try scalarText(db, "PRAGMA page_count")) ?? 0
        let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        return BackupReport(path: target, bytes: bytes, pages: pages, users: users, schemaVersion: version, seconds: Date().timeIntervalSince(start))
    }

    static func open(_ path: String, flags: Int32) throws(StoreError) -> OpaquePointer {
        _ = SQLiteLibrary.configured
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw StoreError(.unavailable, "cannot open \(path): \(message)")
        }
        sqlite3_busy_timeout(handle, 5000)
        return handle
    }

    static func exec(_ db: OpaquePointer, _ sql: String) throws(StoreError) {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw StoreError(.internalError, "\(sql): \(String(cString: sqlite3_errmsg(db)))") }
    }

    static func scalarText(_ db: OpaquePointer, _ sql: String) throws(StoreError) -> String {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw StoreError(.internalError, "\(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw StoreError(.internalError, "\(sql): no row") }
        return sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? ""
    }

    static func sync(_ path: String) throws(StoreError) {
        let fd = Foundation.open(path, O_RDONLY)
        defer { if fd >= 0 { close(fd) } }
        guard fd >= 0, fsync(fd) == 0 else { throw StoreError(.internalError, "cannot sync \(path): \(String(cString: strerror(errno)))") }
    }

    static func sync(directoryOf path: String) {
        let fd = Foundation.open((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent, O_RDONLY)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }
}
