public import SignetAuth

/// Device-bound keys and the single-use action challenges they sign: enrolment under the
/// per-account limit, revocation with what it approved, and each challenge used once.
extension SQLStore {
    static let deviceKeyColumns = "id, user_id, device_id, platform, name, public_key, created_at, last_used_at, revoked_at, recovery_id, approved_by"

    static func deviceKey(_ r: [SQLValue]) -> DeviceKeyRow {
        DeviceKeyRow(id: r[0].text ?? "", userID: r[1].text ?? "", deviceID: r[2].text ?? "", platform: r[3].text ?? "", name: r[4].text,
                     publicKey: r[5].blob ?? [], createdAt: r[6].int ?? 0, lastUsedAt: r[7].int, revokedAt: r[8].int, recoveryID: r[9].text,
                     approvedBy: r[10].text)
    }

    public func enrollDeviceKey(_ k: DeviceKeyRow, limit: Int, writes: (_ revoked: [String]) -> [StoreWrite]) throws(StoreError) -> [String] {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> [String] in
                try db.lockForTransaction("user:" + k.userID)
                let replaced = try db.query(
                    "UPDATE device_keys SET revoked_at = ? WHERE user_id = ? AND device_id = ? AND revoked_at IS NULL RETURNING id",
                    [.int(k.createdAt), .text(k.userID), .text(k.deviceID)]).compactMap { $0[0].text }
                let live = try db.query("SELECT COUNT(*) FROM device_keys WHERE user_id = ? AND revoked_at IS NULL", [.text(k.userID)]).first?[0].int ?? 0
                guard live < Int64(limit) else { throw StoreError(.deviceKeyLimit, "\(live) live device keys") }
                try db.query(
                    "INSERT INTO device_keys (\(Self.deviceKeyColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [.text(k.id), .text(k.userID), .text(k.deviceID), .text(k.platform), k.name.map(SQLValue.text) ?? .null, .blob(k.publicKey),
                     .int(k.createdAt), .null, .null, k.recoveryID.map(SQLValue.text) ?? .null, k.approvedBy.map(SQLValue.text) ?? .null])
                for write in writes(replaced) { try Self.apply(write, db) }
                return replaced
            }
        }
    }

    public func deviceKeys(userID: String) throws(StoreError) -> [DeviceKeyRow] {
        try locked { db throws(StoreError) in
            try db.query("SELECT \(Self.deviceKeyColumns) FROM device_keys WHERE user_id = ? ORDER BY created_at", [.text(userID)]).map(Self.deviceKey)
        }
    }

    public func deviceKey(id: String) throws(StoreError) -> DeviceKeyRow? {
        try locked { db throws(StoreError) in try db.query("SELECT \(Self.deviceKeyColumns) FROM device_keys WHERE id = ?", [.text(id)]).first.map(Self.deviceKey) }
    }

    public func revokeDeviceKey(id: String, userID: String, at: Int64, writes: (_ cascaded: [String]) -> [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                try db.query("UPDATE device_keys SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL", [.int(at), .text(id), .text(userID)])
                guard db.changes == 1 else { return false }
                let cascaded = try Self.revokeApproved(by: id, userID: userID, at: at, db)
                for write in writes(cascaded) { try Self.apply(write, db) }
                return true
            }
        }
    }

    /// Revokes the device keys enrolled by devices that `credential` approved (``DeviceKeyRow/
    /// approvedBy``), and those their keys approved, and so on; their IDs. Bounded to 16
    /// generations (a device approved by a device approved by ...).
    static func revokeApproved(by credential: String, userID: String, at: Int64, _ db: any SQLSession) throws(StoreError) -> [String] {
        var frontier = [credential]
        var revoked: [String] = []
        for _ in 0..<16 where !frontier.isEmpty {
            var next: [String] = []
            for approver in frontier {
                next += try db.query("UPDATE device_keys SET revoked_at = ? WHERE user_id = ? AND approved_by = ? AND revoked_at IS NULL RETURNING id",
                                     [.int(at), .text(userID), .text(approver)]).compactMap { $0[0].text }
            }
            revoked += next
            frontier = next
        }
        return revoked
    }

    public func touchDeviceKey(id: String, at: Int64) throws(StoreError) {
        try locked { db throws(StoreError) in try db.query("UPDATE device_keys SET last_used_at = ? WHERE id = ?", [.int(at), .text(id)]) }
    }

    public func createActionChallenge(_ c: ActionChallengeRow, limit: Int, windowStart: Int64) throws(StoreError) {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) in
                try db.lockForTransaction("user:" + c.userID)
                let recent = try db.query("SELECT COUNT(*) FROM action_challenges WHERE user_id = ? AND created_at >= ?", [.text(c.userID), .int(windowStart)]).first?[0].int ?? 0
                guard recent < Int64(limit) else { throw StoreError(.rateLimited, "\(recent) action challenges in the window") }
                try db.query(
                    "INSERT INTO action_challenges (id, user_id, device_key_id, challenge, action_hash, action, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [.text(c.id), .text(c.userID), c.deviceKeyID.map(SQLValue.text) ?? .null, .blob(c.challenge), .blob(c.actionHash), .text(c.action),
                     .int(c.expiresAt), .int(c.createdAt)])
            }
        }
    }

    public func useActionChallenge(id: String, at: Int64) throws(StoreError) -> ActionChallengeRow? {
        try locked { db throws(StoreError) in
            try db.query(
                "UPDATE action_challenges SET used_at = ? WHERE id = ? AND used_at IS NULL RETURNING user_id, device_key_id, challenge, action_hash, action, expires_at, created_at",
                [.int(at), .text(id)]).first.map { r in
                ActionChallengeRow(id: id, userID: r[0].text ?? "", deviceKeyID: r[1].text, challenge: r[2].blob ?? [], actionHash: r[3].blob ?? [],
                                   action: r[4].text ?? "", expiresAt: r[5].int ?? 0, createdAt: r[6].int ?? 0)
            }
        }
    }
}
