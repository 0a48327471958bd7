public import SignetAPI

/// The Management API's sessions (Auth0's `/api/v2/users/{id}/sessions` and `/api/v2/sessions/{id}`):
/// browsers' sign-ins to the hosted pages and apps' refresh-token families.
extension Ceremonies {
    /// `GET /api/v2/users/{id}/sessions`: the live sessions, browsers' (newest first) then apps'
    /// refresh-token families (newest first), as the account's own list has them: at most
    /// ``sessionsListed`` of each kind, `truncated` when there are more.
    public func sessions(userID: String) throws -> ManagementSessionList {
        let sessions = try accountSessions(existingUser(userID).user)
        return ManagementSessionList(sessions: managementSessions(sessions, userID: userID), truncated: sessions.truncated)
    }

    /// `GET /api/v2/sessions/{id}`: one live session, a browser's or an app's.
    public func managedSession(id: String) throws -> ManagementSession {
        try liveSession(id: id, userID: nil)
    }

    /// `DELETE /api/v2/sessions/{id}` (and `signet admin users sign-out ID --session SESSION`,
    /// which names the account too): one session ends at once, as its owner ends it on the
    /// account page: an app's refresh token and access tokens are refused, a browser signs in
    /// again, and clients that asked for back-channel logout are told.
    public func adminRevokeSession(id: String, userID: String? = nil, by caller: ManagementCaller, context: RequestContext) throws {
        let session = try liveSession(id: id, userID: userID)
        let event = pendingAuditEvent(.adminSessionRevoked, user: session.user_id, client: caller.clientID, detail: "session \(id)", context: context)
        let ended = session.kind == "browser"
            ? try store.revokeWebSession(id: id, userID: session.user_id, at: nowMillis, writes: [.audit(event)])
            : try endSession(id, writes: [.audit(event)])
        guard ended else { throw AuthError(.sessionNotFound, "session \(id.prefix(64)) ended meanwhile") }
        counted(event)
    }

    /// The live session `id`, of `userID`'s account when that is given.
    private func liveSession(id: String, userID: String?) throws -> ManagementSession {
        let unknown = AuthError(.sessionNotFound, "no live session \(id.prefix(64))")
        guard !id.isEmpty, id.utf8.count <= 128, let owner = try store.sessionOwner(id: id), userID == nil || userID == owner,
              let user = try store.user(id: owner),
              let session = managementSessions(try accountSessions(user, limit: 1, only: id), userID: owner).first(where: { $0.id == id }) else { throw unknown }
        return session
    }

    /// The account's sessions in the Management API's shape.
    func managementSessions(_ sessions: AccountSessions, userID: String) -> [ManagementSession] {
        let idle = Int64(configuration.webSessionIdle) * 1000
        let browsers = sessions.web.map { w in
            ManagementSession(
                id: w.id, user_id: userID, kind: "browser", created_at: Self.iso(w.createdAt), updated_at: Self.iso(w.lastSeenAt),
                authenticated_at: Self.iso(w.authTime * 1000), last_interacted_at: Self.iso(w.lastSeenAt),
                idle_expires_at: Self.iso(min(w.lastSeenAt + idle, w.expiresAt)), expires_at: Self.iso(w.expiresAt),
                device: .init(initial_user_agent: w.userAgent, initial_ip: w.remote), clients: [],
                authentication: .init(methods: w.amr.map { .init(name: $0, timestamp: Self.iso(w.authTime * 1000)) }))
        }
        return browsers + sessions.apps.map { s in
            ManagementSession(
                id: s.id, user_id: userID, kind: "app", created_at: Self.iso(s.createdAt), updated_at: Self.iso(s.updatedAt),
                authenticated_at: Self.iso(s.authTime * 1000), last_interacted_at: Self.iso(s.updatedAt), expires_at: Self.iso(s.expiresAt),
                device: s.initial == RequestOrigin() && s.last == RequestOrigin() ? nil
                    : .init(initial_user_agent: s.initial.userAgent, initial_ip: s.initial.remote, last_user_agent: s.last.userAgent, last_ip: s.last.remote),
                clients: [.init(client_id: s.clientID)],
                authentication: .init(methods: s.amr.map { .init(name: $0, timestamp: Self.iso(s.authTime * 1000)) }))
        }
    }

    /// `DELETE /api/v2/users/{id}/sessions`: every session that started until now ends at once:
    /// their refresh tokens and, at Signet's own endpoints, their access tokens are refused.
    public func revokeSessions(userID: String, by caller: ManagementCaller, context: RequestContext) throws {
        let event = pendingAuditEvent(.adminSessionsRevoked, user: userID, client: caller.clientID, context: context)
        guard userID.utf8.count <= 128, try store.revokeSessions(userID: userID, at: nowMillis, writes: [.audit(event)]) else {
            throw AuthError(.userUnknown, "no user \(userID.prefix(64))")
        }
        counted(event)
    }
}
