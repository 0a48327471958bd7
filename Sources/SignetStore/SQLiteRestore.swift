internal import CSQLite
import Foundation
public import SignetAuth

/// `signet restore`: a copy that `signet backup` made put back in a SQLite database's place, in
/// two steps with the caller's own checks between them.
///
/// 1. ``stage(copy:target:)`` checks the copy (SQLite's `integrity_check`, a Signet schema no
///    newer than this build's) and writes it beside the database as `FILE.restoring`, which the
///    caller may open as a store (it is then upgraded to this build's schema, as a start would).
/// 2. ``swap(staged:target:stamp:)`` takes the database from every other process, folds its WAL
///    back into it, keeps it whole as `FILE.replaced-STAMP`, and renames the staged file to
///    `FILE`. Nothing is deleted but SQLite's shared-memory index.
///
/// The copy itself is only read.
public enum SQLiteRestore {
    /// The file the copy is staged in, beside `target`.
    public static func staging(_ target: String) -> String { target + ".restoring" }

    /// Checks `copy` and writes it to `staged` (``staging(_:)`` for a restore); refuses a copy
    /// that is not whole, holds no Signet schema or one newer than this build's
    /// (``StoreError/Code/schemaNewer``), and (unless `target` is `nil`: a check alone) a
    /// `target` that another process has open. A sealed copy (``SealedBackup``) is opened with
    /// `kek` into `STAGED.unsealed` first, and refused whole when it does not open. What it
    /// returns describes the copy as read.
    public static func stage(copy: String, target: String?, into staged: String, kek: [UInt8]? = nil) throws(StoreError) -> BackupReport {
        guard FileManager.default.fileExists(atPath: copy) else { throw StoreError(.unavailable, "no SQLite database at \(copy)") }
        guard SealedBackup.isSealed(copy) else { return try stagePlain(copy: copy, named: copy, target: target, into: staged) }
        guard let kek else {
            throw StoreError(.conflict, "\(copy) is sealed under key-encryption key \(try SealedBackup.keyID(copy)); give that key (SIGNET_KEK or key_encryption_key_file)")
        }
        let unsealed = staged + ".unsealed"
        try? FileManager.default.removeItem(atPath: unsealed)
        defer { try? FileManager.default.removeItem(atPath: unsealed) }
        try SealedBackup.open(copy, to: unsealed, kek: kek)
        return try stagePlain(copy: unsealed, named: copy, target: target, into: staged)
    }

    /// ``stage(copy:target:into:kek:)`` of a SQLite file; its report names the copy `named`
    /// (the sealed file an unsealed one came from).
    static func stagePlain(copy: String, named: String, target: String?, into staged: String) throws(StoreError) -> BackupReport {
        let start = Date()
        try? FileManager.default.removeItem(atPath: staged)
        let read = try SQLiteBackup.check(copy, start: start, target: target ?? named)
        guard read.schemaVersion <= SQLStore.knownSchemaVersion else {
            throw StoreError(.schemaNewer, "the copy is at schema \(read.schemaVersion), and this signet knows schemas up to "
                + "\(SQLStore.knownSchemaVersion): restore it with the release that made it (or a newer one)")
        }
        if let target { try refuseIfOpen(target) }
        do throws(StoreError) {
            try SQLiteBackup.snapshot(copy, into: staged, sourceFlags: SQLITE_OPEN_READONLY)
            _ = try SQLiteBackup.check(staged, start: start, target: staged)
        } catch {
            try? FileManager.default.removeItem(atPath: staged)
            throw error
        }
        return read
    }

    /// Puts the staged file in `target`'s place. The database there (if any) is taken from
    /// every other process first (refused with ``StoreError/Code/unavailable`` while a server
    /// has it open), its WAL folded back in, and it is kept as `TARGET.replaced-STAMP`, whose
    /// path is returned. The staged file leaves without a WAL, so no stale one is ever read
    /// with it.
    public static func swap(staged: String, target: String, stamp: String) throws(StoreError) -> String? {
        // Closed before it is renamed into place. A store that staged it closes its
        // connections when it ends, at once, unless its checkpoint was running then (it ends
        // with that checkpoint, on its timer's queue), and leaving WAL mode needs the file
        // alone, a lock SQLite does not wait for: so a few tries, a moment apart.
        let alone = try SQLiteBackup.open(staged, flags: SQLITE_OPEN_READWRITE)
        let deadline = Date().addingTimeInterval(10)
        var standalone: Result<Void, StoreError>
        repeat {
            standalone = Result { () throws(StoreError) in try SQLiteBackup.exec(alone, "PRAGMA journal_mode = DELETE") }
            guard case .failure = standalone, [SQLITE_BUSY, SQLITE_LOCKED].contains(sqlite3_errcode(alone) & 0xFF), Date() < deadline else { break }
            usleep(10_000)
        } while true
        sqlite3_close(alone)
        try standalone.get()
        try SQLiteBackup.sync(staged)
        var aside: String?
        var held: OpaquePointer?
        defer { sqlite3_close(held) }
        if FileManager.default.fileExists(atPath: target) {
            held = try exclusive(target, fold: true)
            let kept = target + ".replaced-" + stamp
            guard !FileManager.default.fileExists(atPath: kept) else { throw StoreError(.conflict, "\(kept) exists; try again in a second") }
            try move(target, to: kept)
            // Empty after the fold; kept beside the old file rather than deleted, all the same.
            if FileManager.default.fileExists(atPath: target + "-wal") { try move(target + "-wal", to: kept + "-wal") }
            try? FileManager.default.removeItem(atPath: target + "-shm")
            aside = kept
        }
        try move(staged, to: target)
        SQLiteBackup.sync(directoryOf: target)
        return aside
    }

    /// The `kid`s of the signing keys the database at `path` holds now, its WAL read but not
    /// folded in; `nil` when there is no database there or it cannot be read (a restore's
    /// reason, often). A restore keeps out of the copy every key that is gone from here: one
    /// revoked after the copy was made must not come back with it.
    public static func signingKeyIDs(_ path: String) -> Set<String>? { texts(path, "SELECT kid FROM signing_keys") }

    /// The account IDs the database at `path` holds, read as ``signingKeyIDs(_:)`` reads: a
    /// restore names how many of the database it replaces the copy lacks.
    public static func userIDs(_ path: String) -> Set<String>? { texts(path, "SELECT id FROM users") }

    /// The first column of `sql`'s rows in the database at `path`, its WAL read but not folded
    /// in; `nil` when there is none there or it cannot be read.
    static func texts(_ path: String, _ sql: String) -> Set<String>? {
        guard FileManager.default.fileExists(atPath: path), let db = try? SQLiteBackup.open(path, flags: SQLITE_OPEN_READWRITE) else { return nil }
        if FileManager.default.fileExists(atPath: path + "-wal") { signet_sqlite_no_checkpoint_on_close(db) }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else { return nil }
        defer { sqlite3_finalize(statement) }
        var values: Set<String> = []
        var rc = sqlite3_step(statement)
        while rc == SQLITE_ROW {
            if let text = sqlite3_column_text(statement, 0) { values.insert(String(cString: text)) }
            rc = sqlite3_step(statement)
        }
        return rc == SQLITE_DONE ? values : nil
    }

    /// Refuses a database that another process (a running `signet serve`) has open: in WAL
    /// mode each connection holds a shared lock on the file for as long as it is open, so an
    /// exclusive one is refused at once. Nothing is changed (not even the WAL folded in) or held afterwards.
    static func refuseIfOpen(_ path: String) throws(StoreError) {
        guard FileManager.default.fileExists(atPath: path) else { return }
        sqlite3_close(try exclusive(path, fold: false))
    }

    /// A connection holding `path` alone (SQLite's `locking_mode = EXCLUSIVE`,
    /// sqlite.org/pragma.html); with `fold`, until it is closed, with its WAL folded back into
    /// the file and the file out of WAL mode.
    static func exclusive(_ path: String, fold: Bool) throws(StoreError) -> OpaquePointer {
        let db = try SQLiteBackup.open(path, flags: SQLITE_OPEN_READWRITE)
        sqlite3_busy_timeout(db, 0)
        // Only a look: the last connection to close would otherwise fold a WAL left by a server
        // that was killed into the file. One that was not there is made at the open and
        // removed again at the close.
        if !fold, FileManager.default.fileExists(atPath: path + "-wal") { signet_sqlite_no_checkpoint_on_close(db) }
        do throws(StoreError) {
            try SQLiteBackup.exec(db, "PRAGMA locking_mode = EXCLUSIVE")
            guard sqlite3_exec(db, "BEGIN EXCLUSIVE; COMMIT", nil, nil, nil) == SQLITE_OK else {
                let busy = sqlite3_errcode(db) == SQLITE_BUSY
                throw StoreError(busy ? .unavailable : .internalError, busy
                    ? "\(path) is open in another process (a signet serve?): stop every server on it, then restore"
                    : "cannot lock \(path): \(String(cString: sqlite3_errmsg(db)))")
            }
            guard fold else { return db }
            try SQLiteBackup.exec(db, "PRAGMA journal_mode = DELETE")
            // Rollback mode from here: the exclusive lock is taken at the first write and held.
            try SQLiteBackup.exec(db, "BEGIN EXCLUSIVE; COMMIT")
        } catch {
            sqlite3_close(db)
            throw error
        }
        return db
    }

    static func move(_ from: String, to: String) throws(StoreError) {
        guard rename(from, to) == 0 else { throw StoreError(.internalError, "cannot rename \(from) to \(to): \(String(cString: strerror(errno)))") }
    }
}
