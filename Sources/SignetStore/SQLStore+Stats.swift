public import SignetAuth

/// Figures for operators (`/api/v2/stats`): read on the reading connection, never under the
/// writers' lock. They scan (no index on an event's time or an account's last sign-in, which
/// every sign-in would then update), bounded by the audit retention and the accounts.
extension SQLStore {
    public func dailyEventCounts(from: Int64, to: Int64, kinds: [String]) throws(StoreError) -> [DailyEventCount] {
        guard !kinds.isEmpty else { return [] }
        let marks = Array(repeating: "?", count: kinds.count).joined(separator: ", ")
        return try reading { db throws(StoreError) in
            try db.query(
                """
                SELECT at / 86400000, kind, COUNT(*), MIN(at), MAX(at) FROM audit_events
                WHERE at >= ? AND at < ? AND outcome = 'success' AND kind IN (\(marks)) GROUP BY at / 86400000, kind ORDER BY 1, 2
                """, [.int(from), .int(to)] + kinds.map(SQLValue.text)
            ).map { r in
                DailyEventCount(day: r[0].int ?? 0, kind: r[1].text ?? "", count: Int(r[2].int ?? 0), first: r[3].int ?? 0, last: r[4].int ?? 0)
            }
        }
    }

    /// A passkey's sign-up counts as its first use (``managedUserSelect`` reads it so too).
    public func activeUsers(since: Int64) throws(StoreError) -> Int {
        try reading { db throws(StoreError) in
            Int(try db.query(
                """
                SELECT COUNT(*) FROM (SELECT id FROM users WHERE last_login >= ? UNION
                    SELECT user_id FROM credentials WHERE COALESCE(last_used_at, CASE WHEN use_count > 0 THEN created_at END) >= ?) AS active
                """,
                [.int(since), .int(since)]
            ).first?[0].int ?? 0)
        }
    }
}
