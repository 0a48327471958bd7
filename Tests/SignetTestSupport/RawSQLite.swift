import CSQLite

/// A failure of ``rawSQLite(_:_:)``, with SQLite's message.
public struct RawSQLiteError: Error, CustomStringConvertible {
    public let description: String
}

/// Runs `sql` (one or more statements) on the SQLite file at `path`, from outside any store, and
/// returns every row as text, its columns joined by `|` (`NULL` for null). For tests that make a file
/// look as an older build left it. In a process that has not opened a store yet, touch
/// `SQLiteLibrary.configured` first: SQLite's settings must come before its first use.
public func rawSQLite(_ path: String, _ sql: String) throws -> [String] {
    var db: OpaquePointer?
    guard sqlite3_open(path, &db) == SQLITE_OK else { throw RawSQLiteError(description: "cannot open \(path)") }
    defer { sqlite3_close(db) }
    // A running store may hold the write lock for a moment (a commit, a checkpoint).
    sqlite3_busy_timeout(db, 5000)
    var statement: OpaquePointer?
    var rows: [String] = []
    var rest = sql[...]
    while !rest.allSatisfy(\.isWhitespace) {
        var tail: UnsafePointer<CChar>?
        let text = String(rest)
        let consumed = text.withCString { start -> Int in
            guard sqlite3_prepare_v2(db, start, -1, &statement, &tail) == SQLITE_OK else { return -1 }
            return tail.map { $0 - start } ?? text.utf8.count
        }
        guard consumed >= 0 else { throw RawSQLiteError(description: String(cString: sqlite3_errmsg(db))) }
        var step = statement == nil ? SQLITE_DONE : sqlite3_step(statement)
        while step == SQLITE_ROW {
            rows.append((0..<sqlite3_column_count(statement)).map { sqlite3_column_text(statement, $0).map { String(cString: $0) } ?? "NULL" }.joined(separator: "|"))
            step = sqlite3_step(statement)
        }
        sqlite3_finalize(statement)
        guard step == SQLITE_DONE else { throw RawSQLiteError(description: String(cString: sqlite3_errmsg(db))) }
        rest = String(decoding: text.utf8.dropFirst(consumed), as: UTF8.self)[...]
    }
    return rows
}
