public import SignetAuth

/// Rate counters: one statement counts a request into its window, across instances.
extension SQLStore {
    public func count(bucket: String, key: [UInt8], windowStart: Int64) throws(StoreError) -> Int {
        try locked { db throws(StoreError) in
            // One statement: a new window starts over at 1, the current one counts up.
            let rows = try db.query(
                """
                INSERT INTO rate_counters (bucket, key, window_start, count) VALUES (?, ?, ?, 1)
                ON CONFLICT (bucket, key) DO UPDATE SET
                    count = CASE WHEN rate_counters.window_start = excluded.window_start THEN rate_counters.count + 1 ELSE 1 END,
                    window_start = excluded.window_start
                RETURNING count
                """, [.text(bucket), .blob(key), .int(windowStart)])
            return Int(rows.first?[0].int ?? 1)
        }
    }

    public func rateCounts(_ keys: [RateCounterKey]) throws(StoreError) -> [RateCount] {
        try reading { db throws(StoreError) in
            var counts: [RateCount] = []
            for k in keys {
                let rows = try db.query("SELECT window_start, count FROM rate_counters WHERE bucket = ? AND key = ?", [.text(k.bucket), .blob(k.key)])
                if let row = rows.first { counts.append(RateCount(counter: k, windowStart: row[0].int ?? 0, count: Int(row[1].int ?? 0))) }
            }
            return counts
        }
    }

    public func clearRateCounts(_ keys: [RateCounterKey], writes: [StoreWrite]) throws(StoreError) -> Int {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Int in
                var cleared = 0
                for k in keys {
                    try db.query("DELETE FROM rate_counters WHERE bucket = ? AND key = ?", [.text(k.bucket), .blob(k.key)])
                    cleared += db.changes
                }
                for write in writes { try Self.apply(write, db) }
                return cleared
            }
        }
    }
}
