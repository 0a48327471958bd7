public import SignetAuth

/// Used sign-in sessions and what expires: the marks that make a session single-use, and the
/// purges of expired rows, rate windows and old audit events.
extension SQLStore {
    public func useSession(id: [UInt8], expiresAt: Int64) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.query("INSERT INTO used_sessions (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING", [.blob(id), .int(expiresAt)])
            return db.changes == 1
        }
    }

    public func purgeUsedSessions(now: Int64) throws(StoreError) -> Int {
        let sessions = try purgeExpired("used_sessions", key: "id", before: now, batch: 500)
        for (table, key, after) in Self.purgedAfterExpiry {
            _ = try purgeExpired(table, key: key, before: now - after, batch: 500)
        }
        return sessions
    }

    /// The tables ``purgeUsedSessions(now:)`` also deletes from, each with its key and how long
    /// after its rows expire they go (milliseconds).
    static let purgedAfterExpiry: [(table: String, key: String, after: Int64)] = [
        // Action challenges count towards the rate limit for a day after they expire.
        ("action_challenges", "id", 86_400_000),
        // Codes live a minute; an hour later nothing can replay them.
        ("authorization_codes", "hash", 3_600_000),
        ("web_sessions", "hash", 86_400_000),
        ("ended_sessions", "sid", 0),
        // A subscription outlives its session's possible end by nothing; a notice or a code's
        // message nobody sent in its time (no sender running) goes a day after.
        ("logout_subscriptions", "sid", 0),
        ("outbox", "id", 86_400_000),
        // An address's code is replaced by its next one; one that expired a day ago throttles
        // nothing any more (an address's sends are counted in rate_counters).
        ("email_codes", "email", 86_400_000),
    ]

    /// The rows of `table` that expired before `before`, `batch` at a time. These tables have no
    /// index on their expiry (a used mark is written by every sign-in, and an index would be one
    /// more page written at random), so finding the rows reads them all: some 300,000 used marks
    /// at 1,000 sign-ins a second. That scan runs on the reading connection, which holds up no
    /// writer; each batch is then deleted by key under the lock, its expiry checked again.
    /// Used marks' keys begin with a time, so their scan meets the expired ones first.
    func purgeExpired(_ table: String, key: String, before: Int64, batch: Int) throws(StoreError) -> Int {
        let batch = max(1, batch)
        let scan = batch * 10
        var purged = 0
        while true {
            let found = try reading { db throws(StoreError) in
                try db.query("SELECT \(key) FROM \(table) WHERE expires_at < ? LIMIT ?", [.int(before), .int(Int64(scan))]).map { $0[0] }
            }
            var start = 0
            var deleted = 0
            while start < found.count {
                let keys = found[start..<min(found.count, start + batch)]
                start += keys.count
                let marks = Array(repeating: "?", count: keys.count).joined(separator: ", ")
                deleted += try locked { db throws(StoreError) -> Int in
                    try db.query("DELETE FROM \(table) WHERE expires_at < ? AND \(key) IN (\(marks))", [.int(before)] + keys)
                    return db.changes
                }
            }
            purged += deleted
            // A round that deleted nothing found only what is gone already: no second look.
            if found.count < scan || deleted == 0 { return purged }
        }
    }

    public func purge(now: Int64, auditBefore: Int64, batch: Int = 5_000) throws(StoreError) -> Int {
        // Rows are numbered in time order: the first row new enough is found by reading only the
        // rows that go (no index on the time, which every sign-in would update), and every row
        // below it goes. A row new enough stays so, and later rows have higher numbers.
        let (keep, bounds) = try locked { db throws(StoreError) -> (Int64?, [SQLValue]?) in
            // Windows are at most a day long.
            try db.query("DELETE FROM rate_counters WHERE window_start < ?", [.int(now - 86_400_000)])
            var keep = try db.query("SELECT id FROM audit_events WHERE at >= ? ORDER BY id LIMIT 1", [.int(auditBefore)]).first?[0].int
            // An active log stream keeps every event its endpoint has not taken yet.
            if let held = try db.query("SELECT MIN(last_log_id) FROM log_streams WHERE status = 'active'").first?[0].int {
                keep = min(keep ?? .max, held + 1)
            }
            return (keep, try db.query("SELECT MIN(id), MAX(id) FROM audit_events").first)
        }
        guard var next = bounds?[0].int, let newest = bounds?[1].int else { return 0 }
        // Nothing new enough: every row there was goes but the newest, which always stays. On
        // SQLite a row's ID is one more than the highest left, so an empty table would number
        // events from 1 again, behind every log stream's and checkpoint reader's last ID.
        let end = min(keep ?? newest, newest)
        var purged = 0
        while next < end {
            next = min(end, next + Int64(max(1, batch)))
            purged += try locked { db throws(StoreError) -> Int in
                try db.query("DELETE FROM audit_events WHERE id < ? AND at < ?", [.int(next), .int(auditBefore)])
                return db.changes
            }
        }
        return purged
    }
}
