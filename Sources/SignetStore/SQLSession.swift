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
}

extension SQLSession {
    @discardableResult
    func query(_ sql: String) throws(StoreError) -> [[SQLValue]] { try query(sql, []) }

    /// Runs `body` in a transaction, rolling back when it throws. (The statements are prepared
    /// once, like every other.)
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try query(beginStatement)
        do {
            let result = try body()
            try query("COMMIT")
            return result
        } catch {
            _ = try? query("ROLLBACK")
            throw error
        }
    }
}

extension SQLiteConnection: SQLSession {
    var beginStatement: String { "BEGIN IMMEDIATE" }
    func lockForTransaction(_ key: String) throws(StoreError) {}
}
