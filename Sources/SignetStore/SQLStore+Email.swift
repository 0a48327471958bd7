public import SignetAuth
import SignetWebAuthn

/// Email codes, recovery codes, recoveries and the outbox (DESIGN.md, "Email codes, recovery
/// codes and recovery"): each guard (single use, the attempt budget, the claim of a message) is
/// one statement, so it holds across instances.
extension SQLStore {
    static func text(_ s: String?) -> SQLValue { s.map(SQLValue.text) ?? .null }

    static func applyEmail(_ write: StoreWrite, _ db: any SQLSession) throws(StoreError) {
        switch write {
        case .createAccount(let user):
            try db.query(
                "INSERT INTO users (\(userColumns), blocked) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (email) DO NOTHING",
                [.text(user.id), .blob(user.handle), .text(user.email), text(user.name), .int(user.emailVerified ? 1 : 0), .int(user.createdAt), text(user.locale),
                 .int(user.blocked ? 1 : 0)])
            guard db.changes == 1 else { throw StoreError(.emailTaken, "an account with this email exists") }
        case .verifyEmail(let userID):
            try db.query("UPDATE users SET email_verified = 1 WHERE id = ?", [.text(userID)])
        case .useEmailCode(let email, let id, let at):
            try db.query("UPDATE email_codes SET used_at = ? WHERE email = ? AND id = ? AND used_at IS NULL", [.int(at), .text(email), .text(id)])
            guard db.changes == 1 else { throw StoreError(.sessionUsed, "the code was already used or replaced") }
        case .discardEmailCodes(let holder):
            try db.query("DELETE FROM email_codes WHERE client_id = ?", [.text(holder)])
        case .useRecoveryCode(let userID, let hash, let at):
            try db.query("UPDATE recovery_codes SET used_at = ? WHERE user_id = ? AND code_hash = ? AND used_at IS NULL", [.int(at), .text(userID), .blob(hash)])
            guard db.changes == 1 else { throw StoreError(.sessionUsed, "the recovery code was already used") }
        case .openRecovery(let r):
            try db.query(
                "INSERT INTO recoveries (id, user_id, opened_at, hold_until, session, state, closed_at) VALUES (?, ?, ?, ?, ?, ?, NULL)",
                [.text(r.id), .text(r.userID), .int(r.openedAt), .int(r.holdUntil), text(r.session), .text(r.state.rawValue)])
        case .mail(let m):
            try insert(m, db)
        default:
            try apply(write, db)
        }
    }

    static func insert(_ m: OutboxRow, _ db: any SQLSession) throws(StoreError) {
        try db.query(
            "INSERT INTO outbox (id, kind, recipient, message, created_at, due_at, expires_at, attempts, claimed_until, last_error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, NULL)",
            [.text(m.id), .text(m.kind), .text(m.recipient), .blob(m.message), .int(m.createdAt), .int(m.dueAt), m.expiresAt.map(SQLValue.int) ?? .null,
             .int(Int64(m.attempts))])
    }

    static let codeColumns = "email, id, code_hash, client_id, attempts, created_at, expires_at, used_at"

    static func code(_ r: [SQLValue]) -> EmailCodeRow {
        EmailCodeRow(email: r[0].text ?? "", id: r[1].text ?? "", codeHash: r[2].blob ?? [], clientID: r[3].text ?? "", attempts: Int(r[4].int ?? 0),
                     createdAt: r[5].int ?? 0, expiresAt: r[6].int ?? 0, usedAt: r[7].int)
    }

    public func issueEmailCode(_ c: EmailCodeRow, interval: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                // The new code replaces the old one in the same statement, unless the old one is
                // younger than the interval: the throttle and the newest-code rule in one step.
                try db.query(
                    """
                    INSERT INTO email_codes (\(Self.codeColumns)) VALUES (?, ?, ?, ?, 0, ?, ?, NULL)
                    ON CONFLICT (email) DO UPDATE SET id = excluded.id, code_hash = excluded.code_hash, client_id = excluded.client_id,
                        attempts = 0, created_at = excluded.created_at, expires_at = excluded.expires_at, used_at = NULL
                    WHERE email_codes.created_at <= ?
                    """, [.text(c.email), .text(c.id), .blob(c.codeHash), .text(c.clientID), .int(c.createdAt), .int(c.expiresAt), .int(c.createdAt - interval)])
                guard db.changes == 1 else { return false }
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    public func emailCode(email: String) throws(StoreError) -> EmailCodeRow? {
        try locked { db throws(StoreError) in try db.query("SELECT \(Self.codeColumns) FROM email_codes WHERE email = ?", [.text(email)]).first.map(Self.code) }
    }

    public func attemptEmailCode(email: String, maxAttempts: Int, now: Int64) throws(StoreError) -> EmailCodeAttempt {
        try locked { db throws(StoreError) in
            let counted = try db.query(
                """
                UPDATE email_codes SET attempts = attempts + 1
                WHERE email = ? AND used_at IS NULL AND expires_at > ? AND attempts < ?
                RETURNING \(Self.codeColumns)
                """, [.text(email), .int(now), .int(Int64(maxAttempts))])
            if let row = counted.first { return .counted(Self.code(row)) }
            guard let row = try db.query("SELECT \(Self.codeColumns) FROM email_codes WHERE email = ?", [.text(email)]).first.map(Self.code) else { return .none }
            if row.usedAt != nil { return .used }
            if row.expiresAt <= now { return .expired }
            return .exhausted
        }
    }

    public func replaceRecoveryCodes(userID: String, hashes: [[UInt8]], keyID: String, at: Int64, writes: [StoreWrite]) throws(StoreError) {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) in
                try db.query("DELETE FROM recovery_codes WHERE user_id = ?", [.text(userID)])
                for hash in hashes {
                    try db.query("INSERT INTO recovery_codes (user_id, code_hash, created_at, used_at, key_id) VALUES (?, ?, ?, NULL, ?)",
                                 [.text(userID), .blob(hash), .int(at), .text(keyID)])
                }
                for write in writes { try Self.apply(write, db) }
            }
        }
    }

    public func recoveryCodes(userID: String) throws(StoreError) -> [RecoveryCodeRow] {
        try locked { db throws(StoreError) in
            try db.query("SELECT code_hash, created_at, used_at, key_id FROM recovery_codes WHERE user_id = ?", [.text(userID)]).map {
                RecoveryCodeRow(hash: $0[0].blob ?? [], createdAt: $0[1].int ?? 0, usedAt: $0[2].int, keyID: $0[3].text)
            }
        }
    }

    static let recoveryColumns = "id, user_id, opened_at, hold_until, session, state, closed_at"

    static func recovery(_ r: [SQLValue]) -> RecoveryRow {
        RecoveryRow(id: r[0].text ?? "", userID: r[1].text ?? "", openedAt: r[2].int ?? 0, holdUntil: r[3].int ?? 0, session: r[4].text,
                    state: RecoveryRow.State(rawValue: r[5].text ?? "") ?? .finished, closedAt: r[6].int)
    }

    public func activeRecoveries(userID: String, now: Int64) throws(StoreError) -> [RecoveryRow] {
        try locked { db throws(StoreError) in
            try db.query(
                "SELECT \(Self.recoveryColumns) FROM recoveries WHERE user_id = ? AND state = 'open' AND hold_until > ? ORDER BY opened_at DESC",
                [.text(userID), .int(now)]).map(Self.recovery)
        }
    }

    public func cancelRecoveries(userID: String, at: Int64, writes: [StoreWrite]) throws(StoreError) -> RecoveryCancellation? {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> RecoveryCancellation? in
                try db.lockForTransaction("user:" + userID)
                let cancelled = try db.query(
                    "UPDATE recoveries SET state = 'cancelled', closed_at = ? WHERE user_id = ? AND state = 'open' AND hold_until > ? RETURNING \(Self.recoveryColumns)",
                    [.int(at), .text(userID), .int(at)]).map(Self.recovery)
                guard !cancelled.isEmpty else { return nil }
                var credentials: [[UInt8]] = []
                var keys: [String] = []
                for r in cancelled {
                    credentials += try db.query(
                        "UPDATE credentials SET revoked_at = ? WHERE user_id = ? AND recovery_id = ? AND revoked_at IS NULL RETURNING id",
                        [.int(at), .text(userID), .text(r.id)]).compactMap { $0[0].blob }
                    keys += try db.query(
                        "UPDATE device_keys SET revoked_at = ? WHERE user_id = ? AND recovery_id = ? AND revoked_at IS NULL RETURNING id",
                        [.int(at), .text(userID), .text(r.id)]).compactMap { $0[0].text }
                    if let session = r.session {
                        try db.query("UPDATE refresh_tokens SET revoked_at = ? WHERE family = ? AND revoked_at IS NULL", [.int(at), .text(session)])
                    }
                }
                // What they approved goes with them (``DeviceKeyRow/approvedBy``).
                for approver in credentials.map(Base64URL.encode) + keys {
                    keys += try Self.revokeApproved(by: approver, userID: userID, at: at, db)
                }
                // Every session a revoked credential started ends with it.
                for credential in credentials.map(Base64URL.encode) + keys {
                    try db.query("UPDATE refresh_tokens SET revoked_at = ? WHERE user_id = ? AND credential_id = ? AND revoked_at IS NULL",
                                 [.int(at), .text(userID), .text(credential)])
                }
                try Self.queueLogouts(userID: userID, at: at, db)
                for write in writes { try Self.apply(write, db) }
                return RecoveryCancellation(recoveries: cancelled, credentials: credentials, deviceKeys: keys)
            }
        }
    }

    public func finishRecoveries(now: Int64, writes: (RecoveryRow, UserRecord) -> [StoreWrite]) throws(StoreError) -> [RecoveryRow] {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> [RecoveryRow] in
                let finished = try db.query(
                    "UPDATE recoveries SET state = 'finished', closed_at = ? WHERE state = 'open' AND hold_until <= ? RETURNING \(Self.recoveryColumns)",
                    [.int(now), .int(now)]).map(Self.recovery)
                for r in finished {
                    guard let user = try db.query("SELECT \(Self.userSelect) FROM users WHERE id = ?", [.text(r.userID)]).first.map(Self.user) else { continue }
                    for write in writes(r, user) { try Self.apply(write, db) }
                }
                return finished
            }
        }
    }

    /// The ways a session ends, as one condition on a session ID (three parameters).
    static let sessionEndedCondition = """
        EXISTS (SELECT 1 FROM ended_sessions WHERE sid = ?)
        OR EXISTS (SELECT 1 FROM recoveries WHERE session = ? AND state = 'cancelled')
        OR EXISTS (SELECT 1 FROM refresh_tokens WHERE family = ? AND revoked_at IS NOT NULL)
        """

    // Constants, as the statement cache keys on the text (``SQLiteConnection``).
    static let sessionEndedSQL = "SELECT CASE WHEN \(sessionEndedCondition) THEN 1 ELSE 0 END"

    public func sessionEnded(_ sid: String) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.query(Self.sessionEndedSQL, [.text(sid), .text(sid), .text(sid)]).first?[0].int == 1
        }
    }

    static let tokenHolderSQL = """
        SELECT \(userSelect),
            (SELECT CASE WHEN revoked_at IS NULL THEN 1 ELSE 0 END FROM credentials WHERE id = ?),
            (SELECT CASE WHEN revoked_at IS NULL THEN 1 ELSE 0 END FROM device_keys WHERE id = ?),
            CASE WHEN \(sessionEndedCondition) THEN 1 ELSE 0 END
        FROM users WHERE id = ?
        """

    public func tokenHolder(userID: String, credential: CredentialReference?, sid: String?) throws(StoreError) -> TokenHolder? {
        var passkey = SQLValue.null, deviceKey = SQLValue.null
        switch credential {
        case .passkey(let id): passkey = .blob(id)
        case .deviceKey(let id): deviceKey = .text(id)
        case nil: break
        }
        let session = SQLValue.text(sid ?? "")
        return try locked { db throws(StoreError) in
            guard let row = try db.query(Self.tokenHolderSQL, [passkey, deviceKey, session, session, session, .text(userID)]).first else { return nil }
            let n = row.count
            let live: Bool
            switch credential {
            case .passkey: live = row[n - 3].int == 1
            case .deviceKey: live = row[n - 2].int == 1
            case nil: live = true
            }
            return TokenHolder(user: Self.user(Array(row[0..<(n - 3)])), credentialLive: live, sessionEnded: sid != nil && row[n - 1].int == 1)
        }
    }

    static let outboxColumns = "id, kind, recipient, message, created_at, due_at, expires_at, attempts"

    public func claimMail(now: Int64, lease: Int64, limit: Int, logouts: Bool) throws(StoreError) -> MailClaim {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> MailClaim in
                // A code's message is worth nothing once the code has expired; a logout token's
                // notice is dropped after a day of tries.
                try db.query("DELETE FROM outbox WHERE expires_at IS NOT NULL AND expires_at <= ?", [.int(now)])
                let dropped = db.changes
                let skipLocked = backend == "postgres" ? " FOR UPDATE SKIP LOCKED" : ""
                let claimed = try db.query(
                    """
                    UPDATE outbox SET claimed_until = ?, attempts = attempts + 1
                    WHERE id IN (SELECT id FROM outbox WHERE due_at <= ? AND claimed_until <= ? AND kind \(logouts ? "=" : "<>") ? ORDER BY due_at LIMIT ?\(skipLocked))
                    RETURNING \(Self.outboxColumns)
                    """, [.int(now + lease), .int(now), .int(now), .text(Self.logoutKind), .int(Int64(limit))]).map {
                    OutboxRow(id: $0[0].text ?? "", kind: $0[1].text ?? "", recipient: $0[2].text ?? "", message: $0[3].blob ?? [], createdAt: $0[4].int ?? 0,
                              dueAt: $0[5].int ?? 0, expiresAt: $0[6].int, attempts: Int($0[7].int ?? 0))
                }
                return MailClaim(claimed: claimed.sorted { $0.dueAt < $1.dueAt }, dropped: dropped)
            }
        }
    }

    public func mailDelivered(id: String) throws(StoreError) {
        try locked { db throws(StoreError) in _ = try db.query("DELETE FROM outbox WHERE id = ?", [.text(id)]) }
    }

    public func mailFailed(id: String, retryAt: Int64?, error: String) throws(StoreError) {
        try locked { db throws(StoreError) in
            if let retryAt {
                _ = try db.query("UPDATE outbox SET due_at = ?, claimed_until = 0, last_error = ? WHERE id = ?", [.int(retryAt), .text(String(error.prefix(500))), .text(id)])
            } else {
                _ = try db.query("DELETE FROM outbox WHERE id = ?", [.text(id)])
            }
        }
    }
}
