public import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// Refresh tokens (RFC 6749 §6): the grant that rotates them, and the purge of those nothing can
/// use any more.
extension Ceremonies {
    /// The refresh grant (RFC 6749 §6): rotate (the presented token dies, a new one is born in its
    /// family); presenting a rotated token again revokes the whole family, except as a retry
    /// within `tokens.refresh_token_retry_window` (``ServerConfiguration/refreshTokenRetryWindow``).
    public func refreshGrant(_ request: TokenRequest, context: RequestContext) throws -> TokenResponse {
        do {
            return try rotate(request, context: context)
        } catch {
            throw failed(AuthError(error), context: context)
        }
    }

    func rotate(_ request: TokenRequest, context: RequestContext) throws -> TokenResponse {
        let client = try tokenClient(request, grant: GrantNames.refreshToken, context: context)
        guard let presented = request.refresh_token.flatMap({ Base64URL.decode($0) }).flatMap(RefreshToken.key) else {
            throw AuthError(.refreshTokenUnknown, "the refresh token is not one Signet issued")
        }
        // An audience that is not the client's, and a bad DPoP proof, are refused before the token
        // is rotated.
        let binding = try tokenGrant(scope: nil, audience: request.audience, client: client, context: context).binding
        // A device-key refresh: the proof is the device key's, the token stays bound to the
        // session's own key (so the app's calls need no biometric check).
        let sessionKey = client.refreshProof == "device_key" ? try requireDeviceKeyProof(binding, refreshKey: presented) : nil
        let narrowed = try narrowedScope(request.scope, refreshKey: presented)
        try requireClientPolicy(refreshKey: presented, client: client)
        // One draw for the new refresh token and the access token's ID.
        let fresh = random(48)
        let (newToken, newKey) = RefreshToken.make(name: timeOrderedID(), secret: Array(fresh[16..<48]))
        let now = nowMillis
        let (sliding, absolute) = refreshLifetimes(client)
        let retryWindow = Int64(client.refreshTokenRetryWindow ?? configuration.refreshTokenRetryWindow) * 1000
        let outcome = try store.rotateRefreshToken(hash: presented, proof: sessionKey ?? binding?.jkt, retryWindow: retryWindow, next: { current in
            RefreshTokenRow(hash: newKey, family: current.family, userID: current.userID, clientID: current.clientID,
                            scope: current.scope, authTime: current.authTime, amr: current.amr,
                            expiresAt: min(now + sliding, current.authTime * 1000 + absolute), createdAt: now, credential: current.credential, jkt: current.jkt,
                            origin: context.origin)
        }, now: now, writes: proofMark(binding))
        switch outcome {
        case .rotated(let row), .retried(let row):
            guard row.clientID == client.id else {
                _ = try store.revokeRefreshFamily(hash: row.hash, now: now)
                audit(.refresh, "failure", reason: Reason.refreshTokenClientMismatch.rawValue, user: row.userID, client: client.id, context: context)
                throw AuthError(.refreshTokenClientMismatch, "the refresh token was issued to \(row.clientID)")
            }
            // The session ends with the credential that started it.
            if let credential = row.credential, try !isLive(credential: credential) {
                _ = try store.revokeRefreshFamily(hash: row.hash, now: now)
                audit(.refresh, "failure", reason: Reason.refreshTokenRevoked.rawValue, user: row.userID, client: client.id, credential: credential,
                      detail: "the credential that started the session was revoked", context: context)
                throw AuthError(.refreshTokenRevoked, "the credential \(credential) that started this session was revoked")
            }
            guard let user = try store.user(id: row.userID) else { throw AuthError(.refreshTokenUnknown, "the account no longer exists") }
            guard !user.blocked else {
                _ = try store.revokeRefreshFamily(hash: row.hash, now: now)
                throw AuthError(.userBlocked, "the account is blocked")
            }
            if user.endedSession(row.family) {
                _ = try store.revokeRefreshFamily(hash: row.hash, now: now)
                audit(.refresh, "failure", reason: Reason.refreshTokenRevoked.rawValue, user: row.userID, client: client.id,
                      detail: "an administrator ended the account's sessions", context: context)
                throw AuthError(.refreshTokenRevoked, "an administrator ended this session")
            }
            var grant = try tokenGrant(scope: narrowed ?? row.scope, audience: request.audience, client: client)
            grant.binding = binding
            grant.sessionKey = sessionKey
            var tokens = try issueTokens(user: user, client: client, grant: grant, amr: row.amr, authTime: row.authTime, jti: Array(fresh[0..<16]),
                                         session: SessionRef(sid: row.family, credential: row.credential))
            tokens.refresh_token = Base64URL.encode(newToken)
            if case .retried = outcome {
                audit(.refresh, "success", user: row.userID, client: client.id, credential: row.credential,
                      detail: "a retry of a refresh whose answer was lost: the token it gave is withdrawn", context: context)
            }
            return tokens
        case .reused(_, let userID):
            if let user = try? store.user(id: userID) { try? store.perform(notice(.refreshTokenReused, to: user)) }
            audit(.refreshTokenReused, "failure", reason: Reason.refreshTokenReused.rawValue, user: userID, client: client.id, context: context)
            throw AuthError(.refreshTokenReused, "a rotated refresh token was presented again; its family is revoked")
        case .revoked(let userID):
            // A blocked account's families end: say why.
            if try store.user(id: userID)?.blocked == true { throw AuthError(.userBlocked, "the account is blocked") }
            throw AuthError(.refreshTokenRevoked, "the refresh token was revoked")
        case .expired: throw AuthError(.refreshTokenExpired, "the refresh token has expired")
        case .keyMismatch:
            throw binding == nil
                ? AuthError(.dpopInvalid, "the refresh token is bound to a DPoP key and the request has no proof")
                : AuthError(.dpopKeyMismatch, "the refresh token is bound to another DPoP key than the proof's")
        case .unknown: throw AuthError(.refreshTokenUnknown, "the refresh token is not one Signet issued")
        }
    }

    /// A refresh's `scope` (RFC 6749 §6): the access token may ask for less than the sign-in
    /// granted, never more; the refresh token keeps the sign-in's scope. A scope the sign-in was
    /// not granted is `scope_invalid`, checked before the token is used (a token's scope never
    /// changes, so reading it first is safe). `nil` without a scope, or for a token the rotation
    /// will answer for.
    func narrowedScope(_ requested: String?, refreshKey: [UInt8]) throws -> String? {
        guard let requested, !requested.isEmpty else { return nil }
        guard let granted = try store.refreshTokenOwner(hash: refreshKey)?.scope.split(separator: " ") else { return nil }
        let asked = requested.split(separator: " ")
        if let extra = asked.first(where: { !granted.contains($0) }) {
            throw AuthError(.scopeInvalid, "scope \(extra.prefix(40)) was not granted to this sign-in (granted: \(granted.joined(separator: " ")))",
                            publicDetail: "scope \(extra.prefix(40)) was not granted to this sign-in")
        }
        return asked.joined(separator: " ")
    }

    /// `refresh_proof: "device_key"`: the refresh's DPoP proof must be signed by one of the
    /// account's live device keys (found by its JWK thumbprint), so that every refresh is a
    /// fresh, biometric-gated approval on an enrolled phone. Checked before the token is used.
    /// Returns the key the refresh token is bound to, if any, which the new tokens keep.
    func requireDeviceKeyProof(_ binding: DPoPProof?, refreshKey: [UInt8]) throws -> String? {
        guard let binding else { throw AuthError(.dpopInvalid, "this client refreshes only with a DPoP proof by a device key") }
        guard let owner = try store.refreshTokenOwner(hash: refreshKey) else { return nil }  // the rotation answers for an unknown token
        let thumbprints = try store.deviceKeys(userID: owner.userID).filter { $0.revokedAt == nil }.compactMap { row in
            (try? PublicKey(spki: row.publicKey)).flatMap { DPoP.thumbprint(p256: $0) }
        }
        guard thumbprints.contains(binding.jkt) else {
            throw AuthError(.dpopKeyMismatch, "the proof's key is not one of the account's \(thumbprints.count) live device keys")
        }
        return owner.jkt
    }

    /// Deletes refresh tokens that nothing can use or end any more, so the table holds the live
    /// sessions and not every token ever issued. A family's tokens are all made within
    /// `refreshTokenAbsoluteLifetime` of its sign-in and expire by its end, so a token made
    /// longer ago than that, plus a day, belongs to a family that has been dead for a day: no
    /// refresh, no reuse to detect, and no access token of its session still valid (they live
    /// minutes), so no revocation left to enforce. Only tokens that expired a day ago go, so one
    /// still live under an earlier, longer lifetime stays. Batches of `batch` rows, each its own
    /// transaction, at most `batches` of them a call; returns how many went.
    public func purgeRefreshTokens(batch: Int = 5_000, batches: Int = 100) throws -> Int {
        let now = nowMillis
        let day: Int64 = 86_400_000
        let expiredBefore = now - day
        let below = RefreshToken.lowestKey(madeAt: now - Int64(configuration.refreshTokenAbsoluteLifetime) * 1000 - day)
        var purged = 0
        // The older format's keys are random SHA-256s: those from 2 up, until 2039 none of the
        // current format, are taken by expiry alone.
        for (from, until) in [([UInt8](), Optional(below)), ([2], nil)] {
            for _ in 0..<batches {
                let gone = try store.purgeRefreshTokens(from: from, below: until, expiredBefore: expiredBefore, limit: batch)
                purged += gone
                if gone < batch { break }
            }
        }
        return purged
    }
}
