public import SignetAuth

/// SSO sessions and authorization codes (DESIGN.md, "The web"): a code's one use and a
/// session's revocation are each one statement, so they hold across instances.
extension SQLStore {
    static let webSessionColumns = "hash, id, user_id, auth_time, amr, credential_id, created_at, last_seen_at, expires_at, revoked_at, user_agent, remote"
    static let authorizationCodeColumns = "hash, client_id, redirect_uri, code_challenge, nonce, scope, audience, user_id, auth_time, amr, credential_id, family, created_at, expires_at, dpop_jkt, web_session"

    /// A new session's values for ``webSessionColumns``, without `revoked_at` (always NULL).
    static func webSessionValues(_ w: WebSessionRow) -> [SQLValue] {
        [.blob(w.hash), .text(w.id), .text(w.userID), .int(w.authTime), .text(w.amr.joined(separator: " ")), text(w.credential), .int(w.createdAt),
         .int(w.lastSeenAt), .int(w.expiresAt), text(w.userAgent), .text(w.remote)]
    }

    /// The values of a list's `after` condition (``SessionQuery/after``): its time twice, then its ID.
    static func positionValues(_ position: SessionPosition?) -> [SQLValue] {
        position.map { [.int($0.createdAt), .int($0.createdAt), .text($0.id)] } ?? []
    }

    static func webSession(_ r: [SQLValue]) -> WebSessionRow {
        WebSessionRow(hash: r[0].blob ?? [], id: r[1].text ?? "", userID: r[2].text ?? "", authTime: r[3].int ?? 0,
                      amr: (r[4].text ?? "").split(separator: " ").map(String.init), credential: r[5].text, createdAt: r[6].int ?? 0,
                      lastSeenAt: r[7].int ?? 0, expiresAt: r[8].int ?? 0, revokedAt: r[9].int, userAgent: r[10].text, remote: r[11].text ?? "")
    }

    static func authorizationCode(_ r: [SQLValue]) -> AuthorizationCodeRow {
        AuthorizationCodeRow(hash: r[0].blob ?? [], clientID: r[1].text ?? "", redirectURI: r[2].text ?? "", codeChallenge: r[3].text, nonce: r[4].text,
                             scope: r[5].text ?? "", audience: r[6].text, userID: r[7].text ?? "", authTime: r[8].int ?? 0,
                             amr: (r[9].text ?? "").split(separator: " ").map(String.init), credential: r[10].text, family: r[11].text ?? "",
                             createdAt: r[12].int ?? 0, expiresAt: r[13].int ?? 0, dpopJKT: r[14].text, webSession: r[15].text)
    }

    static func applyWeb(_ write: StoreWrite, _ db: any SQLSession) throws(StoreError) {
        switch write {
        case .webSession(let w):
            try db.query("INSERT INTO web_sessions (\(webSessionColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)", webSessionValues(w))
        case .authorizationCode(let c):
            try db.query(
                "INSERT INTO authorization_codes (\(authorizationCodeColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [.blob(c.hash), .text(c.clientID), .text(c.redirectURI), text(c.codeChallenge), text(c.nonce), .text(c.scope), text(c.audience),
                 .text(c.userID), .int(c.authTime), .text(c.amr.joined(separator: " ")), text(c.credential), .text(c.family), .int(c.createdAt),
                 .int(c.expiresAt), text(c.dpopJKT), text(c.webSession)])
        case .logoutSubscription(let s):
            try insert(s, db)
        case .useAuthorizationCode(let hash, let at):
            // One statement decides the one use, inside the transaction that stores the tokens.
            try db.query("UPDATE authorization_codes SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ?", [.int(at), .blob(hash), .int(at)])
            guard db.changes == 1 else { throw StoreError(.sessionUsed, "the authorization code was already used or expired") }
        default:
            preconditionFailure("applyWeb was given a write it does not own")
        }
    }

    public func webSession(hash: [UInt8]) throws(StoreError) -> WebSessionRow? {
        try locked { db throws(StoreError) in
            try db.query("SELECT \(Self.webSessionColumns) FROM web_sessions WHERE hash = ?", [.blob(hash)]).first.map(Self.webSession)
        }
    }

    public func touchWebSession(hash: [UInt8], now: Int64, authTime: Int64?, amr: [String], credential: String?) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            if let authTime {
                try db.query(
                    "UPDATE web_sessions SET last_seen_at = ?, auth_time = ?, amr = ?, credential_id = ? WHERE hash = ? AND revoked_at IS NULL AND expires_at > ?",
                    [.int(now), .int(authTime), .text(amr.joined(separator: " ")), Self.text(credential), .blob(hash), .int(now)])
            } else {
                try db.query("UPDATE web_sessions SET last_seen_at = ? WHERE hash = ? AND revoked_at IS NULL AND expires_at > ?", [.int(now), .blob(hash), .int(now)])
            }
            return db.changes == 1
        }
    }

    public func webSessions(userID: String, now: Int64, _ query: SessionQuery) throws(StoreError) -> [WebSessionRow] {
        let only = query.id == nil ? "" : "AND id = ? "
        let after = query.after == nil ? "" : "AND (created_at < ? OR (created_at = ? AND id > ?)) "
        let seen = query.seenAfter == nil ? "" : "AND last_seen_at > ? "
        return try locked { db throws(StoreError) in
            try db.query(
                "SELECT \(Self.webSessionColumns) FROM web_sessions WHERE user_id = ? \(only)AND revoked_at IS NULL AND expires_at > ? \(seen)\(after)ORDER BY created_at DESC, id LIMIT ?",
                [.text(userID)] + (query.id.map { [.text($0)] } ?? []) + [.int(now)] + (query.seenAfter.map { [.int($0)] } ?? []) + Self.positionValues(query.after)
                    + [.int(Int64(max(0, query.limit)))]
            ).map(Self.webSession)
        }
    }

    public func revokeWebSession(id: String, userID: String, at: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                guard try Self.revokeWebSession(id: id, userID: userID, at: at, db) else { return false }
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    /// Inside a transaction: revokes the account's live browser session `id` and ends the
    /// sessions begun from it; `false`, with nothing written, when it has none live by that name.
    static func revokeWebSession(id: String, userID: String, at: Int64, _ db: any SQLSession) throws(StoreError) -> Bool {
        try db.query("UPDATE web_sessions SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL", [.int(at), .text(id), .text(userID)])
        guard db.changes == 1 else { return false }
        try endBrowserSessions(webSession: id, userID: userID, at: at, db)
        return true
    }

    /// Inside a transaction: marks `sid` ended until `until`, revokes its refresh tokens and
    /// queues its logout notice; `false`, with nothing written, when it was marked before.
    static func endSession(_ sid: String, at: Int64, until: Int64, _ db: any SQLSession) throws(StoreError) -> Bool {
        try db.query("INSERT INTO ended_sessions (sid, ended_at, expires_at) VALUES (?, ?, ?) ON CONFLICT (sid) DO NOTHING", [.text(sid), .int(at), .int(until)])
        guard db.changes == 1 else { return false }
        try db.query("UPDATE refresh_tokens SET revoked_at = ? WHERE family = ? AND revoked_at IS NULL", [.int(at), .text(sid)])
        try queueLogout(sid: sid, at: at, db)
        return true
    }

    public func endSessions(userID: String, web: [String], apps: [String], at: Int64, until: Int64, writes: (String) -> [StoreWrite]) throws(StoreError) -> [String] {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> [String] in
                var ended: [String] = []
                for id in web where try Self.revokeWebSession(id: id, userID: userID, at: at, db) {
                    ended.append(id)
                }
                for sid in apps {
                    // Only a family of this account's refresh tokens.
                    guard try !db.query("SELECT 1 FROM refresh_tokens WHERE family = ? AND user_id = ? LIMIT 1", [.text(sid), .text(userID)]).isEmpty,
                          try Self.endSession(sid, at: at, until: until, db) else { continue }
                    ended.append(sid)
                }
                for id in ended {
                    for write in writes(id) { try Self.apply(write, db) }
                }
                return ended
            }
        }
    }

    public func authorizationCode(hash: [UInt8]) throws(StoreError) -> (row: AuthorizationCodeRow, usedAt: Int64?)? {
        try locked { db throws(StoreError) in
            try db.query("SELECT \(Self.authorizationCodeColumns), used_at FROM authorization_codes WHERE hash = ?", [.blob(hash)]).first.map { (Self.authorizationCode($0), $0[16].int) }
        }
    }

    public func endSession(_ sid: String, at: Int64, until: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                guard try Self.endSession(sid, at: at, until: until, db) else { return false }
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }
}
