import Foundation
public import SignetAPI

extension Ceremonies {
    /// Scheduled rotation of the token-signing key (RFC 7517 §5: the JWKS holds the new key
    /// from the start, and the old one until its tokens have expired): once the newest key is
    /// `tokens.signing_key_rotation_days` old, a new one is added, published at once and signing
    /// ``KeyRing/signingDelay`` seconds later. Run from the minute's timer; audited as
    /// `signing_key_rotated` with the new `kid`. Returns that `kid`, or nil when none was due or
    /// this instance cannot open the key that signs (its `/healthz` says so).
    @discardableResult
    public func rotateSigningKeyIfDue() -> String? {
        let days = configuration.signingKeyRotationDays
        var event: AuditEvent?
        // The new key and its audit row commit together.
        guard days > 0, let kid = try? keys.rotateIfOlder(than: Int64(days) * 86_400, writes: { kid in
            let rotated = pendingAuditEvent(.signingKeyRotated, detail: "kid \(kid), after \(days) days; signs from \(nowMillis / 1000 + KeyRing.signingDelay)",
                                            context: .server)
            event = rotated
            return [.audit(rotated)]
        }) else { return nil }
        event.map(counted)
        return kid
    }

    /// Destroys the retired signing keys no instance can still publish
    /// (``KeyRing/destroyRetired()``: a day after they stopped signing, 80 s after their
    /// retirement), each audited as `signing_key_destroyed` with its `kid`. Run from the
    /// minute's timer, after the rotation; returns the `kid`s.
    @discardableResult
    public func destroyRetiredSigningKeys() -> [String] {
        // Each deletion and its audit row commit together.
        var events: [AuditEvent] = []
        let kids = (try? keys.destroyRetired { kids in
            events = kids.map { pendingAuditEvent(.signingKeyDestroyed, detail: "kid \($0): out of every JWKS, every token it signed has expired",
                                                  context: .server) }
            return events.map(StoreWrite.audit)
        }) ?? []
        events.forEach(counted)
        return kids
    }

    /// `GET /api/v2/keys/signing` (Auth0's): every signing key the database holds, newest
    /// first, with the one that signs now marked `current` (as ``KeyRing/signer(among:now:)``
    /// chooses it).
    public func signingKeys() throws -> [ManagementSigningKey] {
        let rows = try store.signingKeys()
        let now = nowMillis
        let signer = KeyRing.signer(among: rows, now: now)?.kid
        let delay = KeyRing.signingDelay * 1000
        return rows.sorted { ($0.createdAt, $0.kid) > ($1.createdAt, $1.kid) }.map { row in
            ManagementSigningKey(
                kid: row.kid, alg: row.algorithm, current: row.kid == signer, next: row.kid != signer && row.retiredAt == nil && row.createdAt + delay > now,
                previous: row.kid != signer && row.retiredAt != nil, created_at: Self.iso(row.createdAt), current_since: Self.iso(row.createdAt + delay),
                current_until: row.retiredAt.map { Self.iso($0 + delay) }, destroyed_at: row.retiredAt.map { Self.iso(KeyRing.destroyedAt(retiredAt: $0)) })
        }
    }

    /// `GET /api/v2/keys/signing/{kid}`.
    public func signingKey(kid: String) throws -> ManagementSigningKey {
        guard let key = try signingKeys().first(where: { $0.kid == kid }) else { throw AuthError(.signingKeyNotFound, "no signing key \(kid.prefix(40))") }
        return key
    }

    /// `POST /api/v2/keys/signing/rotate` (Auth0's; and `signet keys rotate`): a new key,
    /// published at once and signing ``KeyRing/signingDelay`` seconds later, the others retired,
    /// in one transaction with its `signing_key_rotated` row. Refused while this instance's
    /// key-encryption key does not open the key that signs: a key it sealed could be opened by
    /// no restarted server.
    public func rotateSigningKey(by caller: ManagementCaller, context: RequestContext) throws -> ManagementSigningKey {
        var event: AuditEvent?
        let kid: String?
        do {
            kid = try keys.rotateIfOlder(than: 0) { kid in
                let rotated = pendingAuditEvent(.signingKeyRotated, client: caller.clientID,
                                                detail: "kid \(kid), by the Management API; signs from \(nowMillis / 1000 + KeyRing.signingDelay)", context: context)
                event = rotated
                return [.audit(rotated)]
            }
        } catch let error as ConfigurationError {
            throw AuthError(.signingKeyUnavailable, error.message)
        }
        guard let kid else { throw AuthError(.conflict, "a key newer than this instance's clock was made meanwhile (another rotation)") }
        event.map(counted)
        return try signingKey(kid: kid)
    }

    /// `PUT /api/v2/keys/signing/{kid}/revoke` (Auth0's; and `signet keys revoke`): for a key
    /// that may be in other hands, the key deleted now with its sealed private key
    /// (``KeyRing/revoke(kid:writes:)``), in one transaction with its `signing_key_revoked`
    /// row, so that no token it signed verifies at any instance once it has reloaded (within
    /// ``KeyRing/reloadInterval``). The key that signs may be revoked when a newer key (a
    /// rotation's) is there, which signs at once; the last key never retired is refused with
    /// `signing_key_in_use`.
    public func revokeSigningKey(kid: String, by caller: ManagementCaller, context: RequestContext) throws -> ManagementRevokedSigningKey {
        let event = pendingAuditEvent(.signingKeyRevoked, client: caller.clientID, detail: "kid \(kid.prefix(40)), by \(caller.clientID)", context: context)
        let revoked: Bool
        do {
            revoked = try keys.revoke(kid: kid, writes: [.audit(event)])
        } catch let error as StoreError where error.code == .conflict {
            throw AuthError(.signingKeyInUse, "\(kid.prefix(40)): \(error.detail)")
        }
        guard revoked else { throw AuthError(.signingKeyNotFound, "no signing key \(kid.prefix(40))") }
        counted(event)
        return ManagementRevokedSigningKey(kid: kid, revoked_at: Self.iso(event.at), current: try signingKeys().first(where: \.current)?.kid)
    }
}
