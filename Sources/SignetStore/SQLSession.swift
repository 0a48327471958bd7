import SignetAuth
/// One database connection as the store uses it: statements with `?` placeholders, the rows they
/// return, how many rows the last one changed, and transactions.
protocol SQLSession: AnyObject {
    @discardableResult
    func query(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [[SQLValue]]
    /// Rows changed by the last statement.
    var changes: Int { get }
    /// The statement that opens a transaction taking the write lock at once.
    var beginStatement: String { get }
    /// Serializes, until the end of the current transaction, every transaction that locks the same
    /// key (PostgreSQL advisory lock); SQLite needs nothing, its writers are serialized already.
    func lockForTransaction(_ key: String) throws(StoreError)
    /// Whether a transaction is open that ``transaction(_:)`` must nest in (SQLite's batch of
    /// held answers, ``SQLitePool``); never on PostgreSQL.
    var inTransaction: Bool { get }
    /// Before a transaction: opens SQLite's batch when the caller's writes go into one.
    func beginBatchIfBatching() throws(StoreError)
}

extension SQLSession {
    @discardableResult
    func query(_ sql: String) throws(StoreError) -> [[SQLValue]] { try query(sql, []) }

    /// Runs `body` in a transaction, rolling back when it throws. (The statements are prepared
    /// once, like every other.) Inside an open transaction it is a savepoint (SQLite, "SAVEPOINT"):
    /// all or nothing of `body` as before, kept or lost with the transaction around it.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try beginBatchIfBatching()
        let nested = inTransaction
        try query(nested ? "SAVEPOINT signet_nested" : beginStatement)
        do {
            let result = try body()
            try query(nested ? "RELEASE signet_nested" : "COMMIT")
            return result
        } catch {
            if nested {
                _ = try? query("ROLLBACK TO signet_nested")
                _ = try? query("RELEASE signet_nested")
            } else {
                _ = try? query("ROLLBACK")
            }
            throw error
        }
    }
}

extension SQLiteConnection: SQLSession {
    var beginStatement: String { "BEGIN IMMEDIATE" }
    var inTransaction: Bool { !autocommit }
    func lockForTransaction(_ key: String) throws(StoreError) {}
}
