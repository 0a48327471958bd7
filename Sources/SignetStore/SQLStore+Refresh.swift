public import SignetAuth

/// Refresh tokens: rotation in one guarded statement, families revoked together, and the
/// purge of expired ones by ranges of the key.
extension SQLStore {
    static let purgeRefreshBelowSQL = """
        DELETE FROM refresh_tokens WHERE hash IN
            (SELECT hash FROM refresh_tokens WHERE hash >= ? AND hash < ? AND expires_at < ? ORDER BY hash LIMIT ?)
        """
    static let purgeRefreshFromSQL = """
        DELETE FROM refresh_tokens WHERE hash IN
            (SELECT hash FROM refresh_tokens WHERE hash >= ? AND expires_at < ? ORDER BY hash LIMIT ?)
        """

    public func purgeRefreshTokens(from: [UInt8], below: [UInt8]?, expiredBefore: Int64, limit: Int) throws(StoreError) -> Int {
        try locked { db throws(StoreError) in
            // A range of the primary key, so only the rows in it are read.
            if let below {
                try db.query(Self.purgeRefreshBelowSQL, [.blob(from), .blob(below), .int(expiredBefore), .int(Int64(limit))])
            } else {
                try db.query(Self.purgeRefreshFromSQL, [.blob(from), .int(expiredBefore), .int(Int64(limit))])
            }
            return db.changes
        }
    }

    static func insert(_ t: RefreshTokenRow, _ db: any SQLSession) throws(StoreError) {
        try db.query("INSERT INTO refresh_tokens (\(refreshTokenColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", refreshTokenValues(t))
    }

    public func insertRefreshToken(_ token: RefreshTokenRow) throws(StoreError) {
        try locked { db throws(StoreError) in try Self.insert(token, db) }
    }

    public func rotateRefreshToken(hash: [UInt8], proof: String?, retryWindow: Int64, next: @Sendable (RefreshTokenRow) -> RefreshTokenRow, now: Int64,
                                   writes: [StoreWrite]) throws(StoreError) -> RefreshRotation {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> RefreshRotation in
                let live = try db.query(Self.rotateSQL, [.int(now), .blob(hash), .int(now), proof.map(SQLValue.text) ?? .null])
                if let r = live.first {
                    let current = Self.refreshToken(hash: hash, r)
                    let successor = next(current)
                    try Self.insert(successor, db)
                    // The link a retry follows; without a window nothing retries, so none is kept.
                    if retryWindow > 0 { try db.query("UPDATE refresh_tokens SET successor = ? WHERE hash = ?", [.blob(successor.hash), .blob(hash)]) }
                    for write in writes { try Self.apply(write, db) }
                    return .rotated(successor)
                }
                guard let r = try db.query("SELECT family, user_id, used_at, revoked_at, expires_at, jkt FROM refresh_tokens WHERE hash = ?", [.blob(hash)]).first else {
                    return .unknown
                }
                // Live, but bound to another key: refused without using it, so a thief without
                // the key can neither refresh nor burn the owner's token.
                if r[2].int == nil, r[3].int == nil, (r[4].int ?? 0) > now, let bound = r[5].text, bound != proof { return .keyMismatch }
                // A retry of a rotation whose answer was lost: the token it made was never shown.
                // The claim locks the token's row, so that of concurrent retries each follows the
                // link the one before it left (PostgreSQL reads the row again after the wait).
                if retryWindow > 0, r[2].int != nil,
                   let previous = try db.query(Self.claimRetrySQL, [.blob(hash), .int(now - retryWindow), .int(now), proof.map(SQLValue.text) ?? .null]).first?[0].blob,
                   let withdrawn = try db.query(Self.withdrawSuccessorSQL, [.int(now), .blob(previous), .int(now)]).first {
                    let successor = next(Self.refreshToken(hash: previous, withdrawn))
                    try Self.insert(successor, db)
                    try db.query("UPDATE refresh_tokens SET successor = ? WHERE hash = ?", [.blob(successor.hash), .blob(hash)])
                    for write in writes { try Self.apply(write, db) }
                    return .retried(successor)
                }
                if r[2].int != nil {
                    try db.query("UPDATE refresh_tokens SET revoked_at = ? WHERE family = ? AND revoked_at IS NULL", [.int(now), r[0]])
                    try Self.queueLogout(sid: r[0].text ?? "", at: now, db)
                    return .reused(family: r[0].text ?? "", userID: r[1].text ?? "")
                }
                return r[3].int != nil ? .revoked(userID: r[1].text ?? "") : .expired
            }
        }
    }

    public func refreshTokenOwner(hash: [UInt8]) throws(StoreError) -> (userID: String, jkt: String?, scope: String, clientID: String)? {
        try locked { db throws(StoreError) in
            try db.query("SELECT user_id, jkt, scope, client_id FROM refresh_tokens WHERE hash = ?", [.blob(hash)]).first.map {
                ($0[0].text ?? "", $0[1].text, $0[2].text ?? "", $0[3].text ?? "")
            }
        }
    }

    /// The columns ``refreshToken(hash:_:)`` reads, in its order.
    static let refreshTokenFields = "family, user_id, client_id, scope, auth_time, amr, expires_at, created_at, credential_id, jkt"
    // Kept as constants: the statement cache finds a constant text by identity (``SQLiteConnection``).
    static let rotateSQL = """
        UPDATE refresh_tokens SET used_at = ? WHERE hash = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ? AND (jkt IS NULL OR jkt = ?)
        RETURNING \(refreshTokenFields)
        """
    /// A rotated token that may be retried: rotated after the window's start, its family not
    /// revoked, not expired, bound to no key or to the proof's, with the link its rotation kept.
    /// The no-op write locks the row; returns the link.
    static let claimRetrySQL = """
        UPDATE refresh_tokens SET successor = successor
        WHERE hash = ? AND used_at > ? AND revoked_at IS NULL AND expires_at > ? AND successor IS NOT NULL AND (jkt IS NULL OR jkt = ?)
        RETURNING successor
        """
    /// Marks a retried rotation's successor used, while it is still live: whoever shows it later
    /// is then a reuse, which revokes the family.
    static let withdrawSuccessorSQL = """
        UPDATE refresh_tokens SET used_at = ? WHERE hash = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?
        RETURNING \(refreshTokenFields)
        """
    static let liveRefreshTokenSQL =
        "SELECT \(refreshTokenFields) FROM refresh_tokens WHERE hash = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?"

    static func refreshToken(hash: [UInt8], _ r: [SQLValue]) -> RefreshTokenRow {
        RefreshTokenRow(
            hash: hash, family: r[0].text ?? "", userID: r[1].text ?? "", clientID: r[2].text ?? "", scope: r[3].text ?? "",
            authTime: r[4].int ?? 0, amr: (r[5].text ?? "").split(separator: " ").map(String.init), expiresAt: r[6].int ?? 0,
            createdAt: r[7].int ?? 0, credential: r[8].text, jkt: r[9].text)
    }

    public func liveRefreshToken(hash: [UInt8], now: Int64) throws(StoreError) -> RefreshTokenRow? {
        try locked { db throws(StoreError) in
            try db.query(Self.liveRefreshTokenSQL, [.blob(hash), .int(now)]).first.map { Self.refreshToken(hash: hash, $0) }
        }
    }

    public func revokeRefreshFamily(hash: [UInt8], now: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                guard let family = try db.query("SELECT family FROM refresh_tokens WHERE hash = ?", [.blob(hash)]).first?[0] else { return false }
                try db.query("UPDATE refresh_tokens SET revoked_at = ? WHERE family = ? AND revoked_at IS NULL", [.int(now), family])
                try Self.queueLogout(sid: family.text ?? "", at: now, db)
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }
}
