public import SignetAPI
import SignetCrypto

/// The attempt limits one account can use up (Auth0's `/api/v2/user-blocks/{id}`): codes mailed
/// to its address, codes for a new address, recovery-code tries, unknown device user codes.
/// Each lifts on its own when its hour ends; an operator who has checked who is asking can lift
/// them at once. Per-address limits (a network's failures) are not an account's, and stay.
extension Ceremonies {
    /// Each limit of the account: its name in the API, its bucket and its counter.
    func attemptLimits(_ user: UserRecord) -> [(connection: String, bucket: Bucket, counter: RateCounterKey)] {
        [("email", .codesPerIdentifier, user.email), ("email-change", .codesPerIdentifier, Self.emailChangeHolder(user.id)),
         ("recovery", .recoveryAttempts, user.email), ("device", .userCodeGuesses, user.id)].map { connection, bucket, key in
            (connection, bucket, RateCounterKey(bucket: bucket.rawValue, key: Digest.sha256.hash(Array(key.utf8))))
        }
    }

    /// `GET /api/v2/user-blocks/{id}`: the limits whose next attempt would be refused now.
    public func userBlocks(userID: String) throws -> UserBlocks {
        let user = try existingUser(userID).user
        return UserBlocks(blocked_for: try usedUp(user, attemptLimits(user)))
    }

    /// The limits of `limits` used up in their current window.
    func usedUp(_ user: UserRecord, _ limits: [(connection: String, bucket: Bucket, counter: RateCounterKey)]) throws -> [UserBlocks.Block] {
        let counts = try store.rateCounts(limits.map(\.counter))
        let now = nowMillis
        return limits.compactMap { limit in
            let rate = rate(limit.bucket), window = Int64(rate.window) * 1000
            guard let count = counts.first(where: { $0.counter == limit.counter }), count.windowStart == now - now % window, count.count >= rate.limit else { return nil }
            return UserBlocks.Block(identifier: user.email, connection: limit.connection, attempts: count.count, limit: rate.limit,
                                    until: Self.iso(count.windowStart + window))
        }
    }

    /// `DELETE /api/v2/user-blocks/{id}` (and `signet admin users lift-limits ID`): the
    /// account's counters start over, in one transaction with the audit row that names the
    /// limits that were used up; returns their names.
    @discardableResult
    public func clearUserBlocks(userID: String, by caller: ManagementCaller, context: RequestContext) throws -> [String] {
        let user = try existingUser(userID).user
        let limits = attemptLimits(user)
        let blocked = try usedUp(user, limits).map(\.connection)
        let event = pendingAuditEvent(.adminAttemptLimitsCleared, user: user.id, client: caller.clientID,
                                      detail: blocked.isEmpty ? "none was used up" : "used up: " + blocked.joined(separator: ", "), context: context)
        _ = try store.clearRateCounts(limits.map(\.counter), writes: [.audit(event)])
        counted(event)
        return blocked
    }
}
