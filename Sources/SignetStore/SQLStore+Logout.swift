public import SignetAuth

/// OpenID Connect Back-Channel Logout 1.0: which clients want to hear of a session's end
/// (``LogoutSubscriptionRow``), and their logout tokens' places in the outbox, taken in the
/// transaction that ends the session, so a notice is neither lost nor sent twice.
extension SQLStore {
    static let logoutSubscriptionColumns = "sid, client_id, user_id, credential_id, web_session, offline, created_at, expires_at"

    static func insert(_ s: LogoutSubscriptionRow, _ db: any SQLSession) throws(StoreError) {
        try db.query(
            "INSERT INTO logout_subscriptions (\(logoutSubscriptionColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sid) DO NOTHING",
            [.text(s.sid), .text(s.clientID), .text(s.userID), s.credential.map(SQLValue.blob) ?? .null, text(s.webSession), .int(s.offline ? 1 : 0),
             .int(s.createdAt), .int(s.expiresAt)])
    }

    /// A subscribed session that has ended, as one condition on the row `s`: its account is gone
    /// or had its sessions ended after it started (``UserRecord/sessionsRevokedAt``), the
    /// session was ended (``sessionEndedCondition``'s three ways), or the passkey that signed it
    /// in was revoked or removed. Every way a session ends, read from what ended it rather than
    /// from who did, so a new way to end one is covered as long as it leaves one of these marks.
    static let subscriptionEndedCondition = """
        NOT EXISTS (SELECT 1 FROM users u WHERE u.id = s.user_id AND (u.sessions_revoked_at IS NULL OR u.sessions_revoked_at < s.created_at))
        OR EXISTS (SELECT 1 FROM ended_sessions e WHERE e.sid = s.sid)
        OR EXISTS (SELECT 1 FROM recoveries r WHERE r.session = s.sid AND r.state = 'cancelled')
        OR EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family = s.sid AND t.revoked_at IS NOT NULL)
        OR (s.credential_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM credentials c WHERE c.id = s.credential_id AND c.revoked_at IS NULL))
        """
    static let endedSubscriptionsOfUserSQL =
        "SELECT sid, client_id, user_id FROM logout_subscriptions s WHERE s.user_id = ? AND (\(subscriptionEndedCondition))"
    static let endedSubscriptionsSQL = "SELECT sid FROM logout_subscriptions s WHERE \(subscriptionEndedCondition) LIMIT ?"
    static let endedSubscriptionSQL = "SELECT sid, client_id, user_id FROM logout_subscriptions s WHERE s.sid = ? AND (\(subscriptionEndedCondition))"

    /// The outbox's kind for a logout token.
    public static let logoutKind = "backchannel_logout"
    /// How long a logout token's notice is tried before it is dropped: a day.
    static let logoutNoticeLifetime: Int64 = 86_400_000

    /// Inside the transaction that ended something of `userID`'s (and, with `webSession`, the
    /// browser session it ended): each subscribed session now ended, and each that came from
    /// that browser session, leaves a notice in the outbox and is forgotten. Returns how many.
    @discardableResult
    static func queueLogouts(userID: String, webSession: String? = nil, at: Int64, _ db: any SQLSession) throws(StoreError) -> Int {
        var ended = try db.query(endedSubscriptionsOfUserSQL, [.text(userID)])
        if let webSession {
            ended += try db.query("SELECT sid, client_id, user_id FROM logout_subscriptions WHERE web_session = ?", [.text(webSession)])
        }
        return try queueLogouts(ended, at: at, db)
    }

    /// Inside the transaction that ended the session `sid`: its notice, if its client asked.
    static func queueLogout(sid: String, at: Int64, _ db: any SQLSession) throws(StoreError) {
        _ = try queueLogouts(try db.query("SELECT sid, client_id, user_id FROM logout_subscriptions WHERE sid = ?", [.text(sid)]), at: at, db)
    }

    private static func queueLogouts(_ rows: [[SQLValue]], at: Int64, _ db: any SQLSession) throws(StoreError) -> Int {
        var seen = Set<String>()
        for r in rows {
            guard let sid = r[0].text, let client = r[1].text, let user = r[2].text, seen.insert(sid).inserted else { continue }
            let notice = LogoutNotice(subject: user, sid: sid)
            try db.query(
                """
                INSERT INTO outbox (id, kind, recipient, message, created_at, due_at, expires_at, attempts, claimed_until)
                VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0) ON CONFLICT (id) DO NOTHING
                """, [.text("logout." + sid), .text(logoutKind), .text(client), .blob(notice.encoded), .int(at), .int(at), .int(at + logoutNoticeLifetime)])
            try db.query("DELETE FROM logout_subscriptions WHERE sid = ?", [.text(sid)])
        }
        return seen.count
    }

    public func sweepLogouts(now: Int64, limit: Int) throws(StoreError) -> Int {
        // Sessions that ended by themselves end quietly (Back-Channel Logout §2.3: a notice is
        // for a logout, not for an expiry); by the index on the expiry.
        try locked { db throws(StoreError) in _ = try db.query("DELETE FROM logout_subscriptions WHERE expires_at <= ?", [.int(now)]) }
        // The scan reads every subscription: on the reading connection, so no writer waits for
        // it; only what it finds is checked again and queued under the writer's lock.
        let found = try reading { db throws(StoreError) in try db.query(Self.endedSubscriptionsSQL, [.int(Int64(limit))]).compactMap { $0[0].text } }
        guard !found.isEmpty else { return 0 }
        return try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Int in
                var ended: [[SQLValue]] = []
                for sid in found { ended += try db.query(Self.endedSubscriptionSQL, [.text(sid)]) }
                return try Self.queueLogouts(ended, at: now, db)
            }
        }
    }

    public func outboxBacklog() throws(StoreError) -> [OutboxBacklog] {
        try reading { db throws(StoreError) in
            try db.query(
                """
                SELECT queue, COUNT(*), MIN(created_at) FROM (
                    SELECT CASE WHEN kind = ? THEN 'backchannel_logout' ELSE 'mail' END AS queue, created_at FROM outbox
                ) q GROUP BY queue ORDER BY queue
                """, [.text(Self.logoutKind)]
            ).map { OutboxBacklog(queue: $0[0].text ?? "", count: Int($0[1].int ?? 0), oldestCreated: $0[2].int ?? 0) }
        }
    }

    public func hasLogoutWork() throws(StoreError) -> Bool {
        try reading { db throws(StoreError) in
            let subscribed = try db.query("SELECT 1 FROM logout_subscriptions LIMIT 1")
            let queued = try db.query("SELECT 1 FROM outbox WHERE kind = ? LIMIT 1", [.text(Self.logoutKind)])
            return !subscribed.isEmpty || !queued.isEmpty
        }
    }

    public func logoutSubscriptions(userID: String) throws(StoreError) -> [LogoutSubscriptionRow] {
        try reading { db throws(StoreError) in
            try db.query("SELECT \(Self.logoutSubscriptionColumns) FROM logout_subscriptions WHERE user_id = ? ORDER BY created_at", [.text(userID)]).map {
                LogoutSubscriptionRow(sid: $0[0].text ?? "", clientID: $0[1].text ?? "", userID: $0[2].text ?? "", credential: $0[3].blob,
                                      webSession: $0[4].text, offline: $0[5].int == 1, createdAt: $0[6].int ?? 0, expiresAt: $0[7].int ?? 0)
            }
        }
    }

    /// Ending a browser's session ends the sessions of the clients that signed in through it and
    /// asked to hear of it, except those holding a refresh token (`offline_access`, Back-Channel
    /// Logout §2.7: such a token is meant to outlive the sign-in); all of them get their notice.
    static func endBrowserSessions(webSession: String, userID: String, at: Int64, _ db: any SQLSession) throws(StoreError) {
        try db.query(
            """
            INSERT INTO ended_sessions (sid, ended_at, expires_at)
            SELECT sid, ?, expires_at FROM logout_subscriptions WHERE web_session = ? AND offline = 0 ON CONFLICT (sid) DO NOTHING
            """, [.int(at), .text(webSession)])
        try queueLogouts(userID: userID, webSession: webSession, at: at, db)
    }
}
