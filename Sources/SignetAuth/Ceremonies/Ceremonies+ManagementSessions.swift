public import SignetAPI
import SignetWebAuthn

/// The Management API's sessions (Auth0's `/api/v2/users/{id}/sessions` and `/api/v2/sessions/{id}`):
/// browsers' sign-ins to the hosted pages and apps' refresh-token families.
extension Ceremonies {
    /// `GET /api/v2/users/{id}/sessions`: the live sessions, browsers' (newest first) then apps'
    /// refresh-token families (newest first), as the account's own list has them, `take` (1 to
    /// 100) at a time. `next` (absent on the last page) is where the next page starts, given
    /// back as `from` (Auth0's checkpoint paging): a place in the order, not a count, so a
    /// session that begins or ends between two pages moves none of the others. Sessions that
    /// ended but keep their rows (idle browsers, those an account's "sign out everywhere"
    /// ended) are passed over, so the last page can be empty.
    public func sessions(userID: String, from: String?, take: Int) throws -> ManagementSessionList {
        guard (1...100).contains(take) else { throw AuthError.malformed("take must be 1 to 100") }
        var place = try from.flatMap { $0.isEmpty ? nil : $0 }.map(SessionCursor.init(parsing:)) ?? SessionCursor(apps: false, after: nil)
        let user = try existingUser(userID).user
        let now = nowMillis
        var web: [WebSessionRow] = [], apps: [SessionRow] = []
        var next: String?
        paging: while true {
            let wanted = take - web.count - apps.count
            // One more than is wanted says whether there are more; a row the account's "sign
            // out everywhere" ended is passed over, and its place kept (idle browsers are left
            // out by the query).
            let query = SessionQuery(after: place.after, limit: wanted + 1, seenAfter: idleSince(now))
            func keep<Row>(_ rows: [Row], in kept: inout [Row], at position: (Row) -> SessionPosition) -> Bool {
                for row in rows.prefix(wanted) {
                    place.after = position(row)
                    if !user.endedSession(position(row).id) { kept.append(row) }
                }
                return rows.count > wanted
            }
            let more = place.apps
                ? keep(try store.sessions(userID: user.id, now: now, query), in: &apps) { SessionPosition(createdAt: $0.createdAt, id: $0.id) }
                : keep(try store.webSessions(userID: user.id, now: now, query), in: &web) { SessionPosition(createdAt: $0.createdAt, id: $0.id) }
            if more, web.count + apps.count == take {
                next = place.text
                break paging
            }
            if more { continue }
            if place.apps { break paging }
            place = SessionCursor(apps: true, after: nil)
        }
        return ManagementSessionList(sessions: managementSessions(AccountSessions(web: web, apps: apps, truncated: false), userID: userID), next: next)
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

/// Where a page of the Management API's sessions of an account starts (its `from` and `next`):
/// the browsers' list or the apps', and the place in it of the last session the page before
/// passed. Opaque to a caller: base64url of `b` or `a`, then `:` milliseconds `:` ID.
package struct SessionCursor: Equatable {
    package var apps: Bool
    package var after: SessionPosition?

    package init(apps: Bool, after: SessionPosition?) {
        self.apps = apps
        self.after = after
    }

    package var text: String {
        Base64URL.encode(Array(((apps ? "a" : "b") + (after.map { ":\($0.createdAt):\($0.id)" } ?? "")).utf8))
    }
}

extension SessionCursor {
    /// A `from` as ``text`` wrote it; anything else is 400 `malformed`.
    package init(parsing text: String) throws {
        let refused = AuthError.malformed("from must be a next the list gave")
        guard text.utf8.count <= 256, let bytes = Base64URL.decode(text, canonical: true) else { throw refused }
        let parts = bytes.split(separator: UInt8(ascii: ":"), maxSplits: 2, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard let kind = parts.first, kind == "a" || kind == "b" else { throw refused }
        switch parts.count {
        case 1: self.init(apps: kind == "a", after: nil)
        case 3:
            guard parts[1].utf8.count <= 19, parts[1].utf8.allSatisfy({ (0x30...0x39).contains($0) }), let at = Int64(parts[1]),
                  (1...128).contains(parts[2].utf8.count) else { throw refused }
            self.init(apps: kind == "a", after: SessionPosition(createdAt: at, id: parts[2]))
        default: throw refused
        }
    }
}
