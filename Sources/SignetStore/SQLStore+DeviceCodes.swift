public import SignetAuth

/// Device codes (RFC 8628): each guard — the poll interval, the one approval, the one use — is
/// one statement, so it holds across instances.
extension SQLStore {
    static let deviceCodeColumns = "hash, user_code, client_id, scope, remote, user_agent, created_at, expires_at, poll_interval, status, user_id, approved_by"

    static func deviceCode(_ r: [SQLValue]) -> DeviceCodeRow {
        DeviceCodeRow(hash: r[0].blob ?? [], userCode: r[1].text ?? "", clientID: r[2].text ?? "", scope: r[3].text ?? "", remote: r[4].text ?? "",
                      userAgent: r[5].text, createdAt: r[6].int ?? 0, expiresAt: r[7].int ?? 0, interval: Int(r[8].int ?? 5),
                      status: DeviceCodeRow.Status(rawValue: r[9].text ?? "") ?? .denied, userID: r[10].text, approvedBy: r[11].text)
    }

    static func applyDevice(_ write: StoreWrite, _ db: any SQLSession) throws(StoreError) {
        switch write {
        case .useProof(let id, let expiresAt):
            try db.query("INSERT INTO used_sessions (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING", [.blob(id), .int(expiresAt)])
            guard db.changes == 1 else { throw StoreError(.proofUsed, "the DPoP proof was already used") }
        case .useDeviceCode(let hash):
            try db.query("UPDATE device_codes SET status = 'used' WHERE hash = ? AND status = 'approved'", [.blob(hash)])
            guard db.changes == 1 else { throw StoreError(.sessionUsed, "the device code was already used") }
        default:
            try applyEmail(write, db)
        }
    }

    public func createDeviceCode(_ d: DeviceCodeRow, writes: [StoreWrite]) throws(StoreError) {
        try locked { db throws(StoreError) in
            // Expired codes free their user codes.
            try db.query("DELETE FROM device_codes WHERE expires_at < ?", [.int(d.createdAt - 3_600_000)])
            try db.transaction { () throws(StoreError) in
                try db.query(
                    "INSERT INTO device_codes (\(Self.deviceCodeColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL) ON CONFLICT DO NOTHING",
                    [.blob(d.hash), .text(d.userCode), .text(d.clientID), .text(d.scope), .text(d.remote), Self.text(d.userAgent), .int(d.createdAt),
                     .int(d.expiresAt), .int(Int64(d.interval)), .text(d.status.rawValue)])
                guard db.changes == 1 else { throw StoreError(.conflict, "the user code is taken") }
                for write in writes { try Self.apply(write, db) }
            }
        }
    }

    public func deviceCode(userCode: String) throws(StoreError) -> DeviceCodeRow? {
        try locked { db throws(StoreError) in
            try db.query("SELECT \(Self.deviceCodeColumns) FROM device_codes WHERE user_code = ?", [.text(userCode)]).first.map(Self.deviceCode)
        }
    }

    public func decideDeviceCode(userCode: String, approve: Bool, userID: String, approvedBy: String, now: Int64) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.query(
                "UPDATE device_codes SET status = ?, user_id = ?, approved_by = ? WHERE user_code = ? AND status = 'pending' AND expires_at > ?",
                [.text(approve ? "approved" : "denied"), .text(userID), .text(approvedBy), .text(userCode), .int(now)])
            return db.changes == 1
        }
    }

    public func pollDeviceCode(hash: [UInt8], clientID: String, now: Int64) throws(StoreError) -> DevicePoll {
        try locked { db throws(StoreError) in
            // SET's right-hand sides all read the row as it was: `slowed` says whether this poll
            // came sooner than the interval before it was raised.
            let rows = try db.query(
                """
                UPDATE device_codes SET
                    slowed = CASE WHEN last_poll_at IS NOT NULL AND ? - last_poll_at < poll_interval * 1000 THEN 1 ELSE 0 END,
                    poll_interval = CASE WHEN last_poll_at IS NOT NULL AND ? - last_poll_at < poll_interval * 1000 THEN poll_interval + 5 ELSE poll_interval END,
                    last_poll_at = ?
                WHERE hash = ? AND client_id = ?
                RETURNING \(Self.deviceCodeColumns), slowed
                """, [.int(now), .int(now), .int(now), .blob(hash), .text(clientID)])
            guard let r = rows.first else { return .unknown }
            let row = Self.deviceCode(r)
            if row.status == .used { return .unknown }
            if row.expiresAt <= now { return .expired }
            if row.status == .denied { return .denied }
            if r[12].bool { return .slowDown(interval: row.interval) }
            return row.status == .approved ? .approved(row) : .pending
        }
    }
}
