/// One database connection as the store uses it: statements with `?` placeholders, the rows they
/// return, how many rows the last one changed, and transactions.
protocol SQLSession: AnyObject {
    @discardableResult
    func query(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [[SQLValue]]
    /// Rows changed by the last statement.
    var changes: Int { get }
    /// Runs `body` in a transaction that takes the write lock at once, rolling back when it throws.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T
    /// Serializes, until the end of the current transaction, every transaction that locks the same
    /// key (PostgreSQL advisory lock); SQLite needs nothing, its writers are serialized already.
    func lockForTransaction(_ key: String) throws(StoreError)
}

extension SQLSession {
    @discardableResult
    func query(_ sql: String) throws(StoreError) -> [[SQLValue]] { try query(sql, []) }
}

extension SQLiteConnection: SQLSession {
    func lockForTransaction(_ key: String) throws(StoreError) {}
}
