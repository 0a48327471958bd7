public import SignetAPI
import SignetCrypto

/// The attempt limits one account can use up (Auth0's `/api/v2/user-blocks/{id}`): codes mailed
/// to its address, codes for a new address, recovery-code tries, unknown device user codes.
/// Each lifts on its own when its hour ends; an operator who has checked who is asking can lift
/// them at once. Per-address limits (a network's failures) are not an account's, and stay.
extension Ceremonies {
    /// Each limit of the account: its name in the API, its bucket and what it counts for.
    func attemptLimits(_ user: UserRecord) -> [(connection: String, bucket: Bucket, key: String)] {
        [("email", .codesPerIdentifier, user.email), ("email-change", .codesPerIdentifier, Self.emailChangeHolder(user.id)),
         ("recovery", .recoveryAttempts, user.email), ("device", .userCodeGuesses, user.id)]
    }

    static func counterKey(_ bucket: Bucket, _ key: String) -> RateCounterKey {
        RateCounterKey(bucket: bucket.rawValue, key: Digest.sha256.hash(Array(key.utf8)))
    }

    /// `GET /api/v2/user-blocks/{id}`: the limits whose next attempt would be refused now.
    public func userBlocks(userID: String) throws -> UserBlocks {
        let user = try existingUser(userID).user
        let limits = attemptLimits(user)
        let counts = try store.rateCounts(limits.map { Self.counterKey($0.bucket, $0.key) })
        let now = nowMillis
        return UserBlocks(blocked_for: limits.compactMap { limit in
            let rate = rate(limit.bucket), window = Int64(rate.window) * 1000
            guard let count = counts.first(where: { $0.counter == Self.counterKey(limit.bucket, limit.key) }),
                  count.windowStart == now - now % window, count.count >= rate.limit else { return nil }
            return UserBlocks.Block(identifier: user.email, connection: limit.connection, attempts: count.count, limit: rate.limit,
                                    until: Self.iso(count.windowStart + window))
        })
    }

    /// `DELETE /api/v2/user-blocks/{id}` (and `signet admin users unlock ID`): the account's
    /// counters start over, in one transaction with the audit row that names the limits that
    /// were used up.
    public func clearUserBlocks(userID: String, by caller: ManagementCaller, context: RequestContext) throws {
        let user = try existingUser(userID).user
        let blocked = try userBlocks(userID: userID).blocked_for.map(\.connection)
        let event = pendingAuditEvent(.adminAttemptLimitsCleared, user: user.id, client: caller.clientID,
                                      detail: blocked.isEmpty ? "none was used up" : "used up: " + blocked.joined(separator: ", "), context: context)
        _ = try store.clearRateCounts(attemptLimits(user).map { Self.counterKey($0.bucket, $0.key) }, writes: [.audit(event)])
        counted(event)
    }
}
