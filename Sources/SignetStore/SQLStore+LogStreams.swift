public import SignetAuth

/// Log streams (``LogStreamRow``): their settings, and each one's delivery under a lease.
extension SQLStore {
    static let logStreamColumns =
        "id, name, status, endpoint, content_type, content_format, authorization_sealed, created_at, last_log_id, failures, next_attempt_at, last_error, last_delivered_at, filters, signing_sealed, signing_previous_until"

    static func logStreamRow(_ r: [SQLValue]) -> LogStreamRow {
        LogStreamRow(id: r[0].text ?? "", name: r[1].text ?? "", status: r[2].text ?? "", endpoint: r[3].text ?? "", contentType: r[4].text ?? "",
                     contentFormat: r[5].text ?? "", filters: (r[13].text ?? "").split(separator: " ").map(String.init), authorization: r[6].blob,
                     signing: r[14].blob, signingPreviousUntil: r[15].int ?? 0,
                     createdAt: r[7].int ?? 0, lastLogID: r[8].int ?? 0, failures: Int(r[9].int ?? 0), nextAttemptAt: r[10].int ?? 0, lastError: r[11].text,
                     lastDeliveredAt: r[12].int)
    }

    public func insertLogStream(_ s: LogStreamRow, writes: [StoreWrite]) throws(StoreError) -> LogStreamRow {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> LogStreamRow in
                // It starts after the newest event, read in the same transaction as the insert.
                let newest = try db.query("SELECT COALESCE(MAX(id), 0) FROM audit_events").first?[0].int ?? 0
                try db.query(
                    "INSERT INTO log_streams (\(Self.logStreamColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, NULL, NULL, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                    [.text(s.id), .text(s.name), .text(s.status), .text(s.endpoint), .text(s.contentType), .text(s.contentFormat),
                     s.authorization.map(SQLValue.blob) ?? .null, .int(s.createdAt), .int(newest), Self.text(s.filters.isEmpty ? nil : s.filters.joined(separator: " ")),
                     s.signing.map(SQLValue.blob) ?? .null, .int(s.signingPreviousUntil)])
                guard db.changes == 1 else { throw StoreError(.conflict, "a log stream with this ID exists") }
                for write in writes { try Self.apply(write, db) }
                var written = s
                (written.lastLogID, written.failures, written.nextAttemptAt, written.lastError, written.lastDeliveredAt) = (newest, 0, 0, nil, nil)
                return written
            }
        }
    }

    public func logStreams() throws(StoreError) -> [LogStreamRow] {
        try reading { db throws(StoreError) in
            try db.query("SELECT \(Self.logStreamColumns) FROM log_streams ORDER BY created_at, id").map(Self.logStreamRow)
        }
    }

    public func updateLogStream(_ s: LogStreamRow, expected: LogStreamRow, writes: [StoreWrite]) throws(StoreError) -> Bool? {
        let lock = backend == "postgres" ? " FOR UPDATE" : ""
        return try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool? in
                guard let row = try db.query("SELECT \(Self.logStreamColumns) FROM log_streams WHERE id = ?\(lock)", [.text(s.id)]).first else { return nil }
                guard Self.logStreamRow(row).sameSettings(as: expected) else { return false }
                // A stream turned on (again), sent elsewhere, or with a new header or secret, is tried at once.
                let retryNow = s.status != expected.status || s.endpoint != expected.endpoint || s.authorization != expected.authorization
                    || s.signing != expected.signing
                try db.query(
                    """
                    UPDATE log_streams SET name = ?, status = ?, endpoint = ?, content_type = ?, content_format = ?, authorization_sealed = ?, filters = ?,
                    signing_sealed = ?, signing_previous_until = ?, next_attempt_at = CASE WHEN ? = 1 THEN 0 ELSE next_attempt_at END WHERE id = ?
                    """,
                    [.text(s.name), .text(s.status), .text(s.endpoint), .text(s.contentType), .text(s.contentFormat), s.authorization.map(SQLValue.blob) ?? .null,
                     Self.text(s.filters.isEmpty ? nil : s.filters.joined(separator: " ")), s.signing.map(SQLValue.blob) ?? .null, .int(s.signingPreviousUntil),
                     .int(retryNow ? 1 : 0), .text(s.id)])
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    public func rewindLogStream(id: String, after: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                // Back only, and tried at once; a lease another instance holds ends with its next
                // delivery, which no longer finds the stream where it left it.
                try db.query("UPDATE log_streams SET last_log_id = ?, next_attempt_at = 0, lease_until = 0 WHERE id = ? AND last_log_id >= ?",
                             [.int(after), .text(id), .int(after)])
                guard db.changes == 1 else { return false }
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    public func deleteLogStream(id: String, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                try db.query("DELETE FROM log_streams WHERE id = ?", [.text(id)])
                guard db.changes == 1 else { return false }
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    public func claimLogStream(id: String, owner: String, now: Int64, until: Int64) throws(StoreError) -> LogStreamRow? {
        try locked { db throws(StoreError) in
            // One statement: two instances that claim at once cannot both hold the lease.
            try db.query(
                """
                UPDATE log_streams SET lease_owner = ?, lease_until = ?
                WHERE id = ? AND status = 'active' AND next_attempt_at <= ? AND (lease_until < ? OR lease_owner = ?)
                RETURNING \(Self.logStreamColumns)
                """, [.text(owner), .int(until), .text(id), .int(now), .int(now), .text(owner)]
            ).first.map(Self.logStreamRow)
        }
    }

    public func logStreamDelivered(id: String, owner: String, lastLogID: Int64, at: Int64) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.query(
                """
                UPDATE log_streams SET last_log_id = ?, failures = 0, next_attempt_at = 0, last_error = NULL, last_delivered_at = ?
                WHERE id = ? AND lease_owner = ? AND lease_until >= ? AND last_log_id < ?
                """, [.int(lastLogID), .int(at), .text(id), .text(owner), .int(at), .int(lastLogID)])
            return db.changes == 1
        }
    }

    public func logStreamFailed(id: String, owner: String, error: String, retryAt: Int64) throws(StoreError) {
        try locked { db throws(StoreError) in
            try db.query("UPDATE log_streams SET failures = failures + 1, last_error = ?, next_attempt_at = ? WHERE id = ? AND lease_owner = ?",
                         [.text(String(error.prefix(300))), .int(retryAt), .text(id), .text(owner)])
        }
    }

    public func firstAuditID(atOrAfter at: Int64) throws(StoreError) -> Int64? {
        try reading { db throws(StoreError) in
            // IDs follow time: the rows before it are read, the ones the purge is about to take.
            try db.query("SELECT id FROM audit_events WHERE at >= ? ORDER BY id LIMIT 1", [.int(at)]).first?[0].int
        }
    }

    public func skipLogStream(id: String, from: Int64, to: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                try db.query("UPDATE log_streams SET last_log_id = ? WHERE id = ? AND status = 'active' AND last_log_id = ? AND ? > last_log_id",
                             [.int(to), .text(id), .int(from), .int(to)])
                guard db.changes == 1 else { return false }
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    public func auditEventsPending(after id: Int64, limit: Int) throws(StoreError) -> Int {
        try reading { db throws(StoreError) in
            // A range of the primary key, bounded: never a count of the whole trail.
            Int(try db.query("SELECT COUNT(*) FROM (SELECT id FROM audit_events WHERE id > ? ORDER BY id LIMIT ?) AS pending",
                             [.int(id), .int(Int64(limit))]).first?[0].int ?? 0)
        }
    }
}
