import Foundation
import SignetAuth
import SignetStore
import Testing

/// The store's part of forgetting refresh tokens (``Store/purgeRefreshTokens(from:below:expiredBefore:limit:)``).
@Suite struct RefreshPurgeStoreTests {
    static let day: Int64 = 86_400_000

    /// A key of the current format for a token made at `ms`.
    static func key(_ ms: Int64, _ tag: UInt8) -> [UInt8] { Array(RefreshToken.lowestKey(madeAt: ms).prefix(6)) + [UInt8](repeating: tag, count: 26) }

    @Test("a purge takes expired tokens inside the key range, lowest first and at most its limit; live ones and those outside stay", arguments: Backend.available)
    func purge(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(1)
        try store.createUser(u, credential: credential(u.id))
        let t = now()
        func insert(_ hash: [UInt8], expires: Int64) throws {
            try store.insertRefreshToken(RefreshTokenRow(hash: hash, family: "f-\(hash[6])-\(hash[0])", userID: u.id, clientID: "app", scope: "openid",
                                                         authTime: 1, amr: ["pop"], expiresAt: expires, createdAt: t))
        }
        let old = [Self.key(t - 100 * Self.day, 1), Self.key(t - 99 * Self.day, 2), Self.key(t - 98 * Self.day, 3)]
        for hash in old { try insert(hash, expires: t - 10 * Self.day) }
        let oldLive = Self.key(t - 97 * Self.day, 4)
        try insert(oldLive, expires: t + Self.day)
        let recentExpired = Self.key(t - 2 * Self.day, 5)
        try insert(recentExpired, expires: t - Self.day - 1)
        let legacy = [0xAB] + [UInt8](repeating: 6, count: 31), legacyLive = [0xAC] + [UInt8](repeating: 7, count: 31)
        try insert(legacy, expires: t - 10 * Self.day)
        try insert(legacyLive, expires: t + Self.day)

        let below = RefreshToken.lowestKey(madeAt: t - 91 * Self.day)
        #expect(try store.purgeRefreshTokens(from: [], below: below, expiredBefore: t - Self.day, limit: 2) == 2)
        #expect(try store.refreshTokenOwner(hash: old[0]) == nil && store.refreshTokenOwner(hash: old[1]) == nil && store.refreshTokenOwner(hash: old[2]) != nil)
        #expect(try store.purgeRefreshTokens(from: [], below: below, expiredBefore: t - Self.day, limit: 2) == 1)
        #expect(try store.purgeRefreshTokens(from: [], below: below, expiredBefore: t - Self.day, limit: 2) == 0)
        // Made before the cut but live: stays. Expired but made after the cut: stays.
        #expect(try store.refreshTokenOwner(hash: oldLive) != nil && store.refreshTokenOwner(hash: recentExpired) != nil)
        #expect(try store.refreshTokenOwner(hash: legacy) != nil)
        #expect(try store.purgeRefreshTokens(from: [2], below: nil, expiredBefore: t - Self.day, limit: 10) == 1)
        #expect(try store.refreshTokenOwner(hash: legacy) == nil && store.refreshTokenOwner(hash: legacyLive) != nil)
        #expect(try store.rowCounts()["refresh_tokens"] == 3)
    }

    @Test("the minute's purge forgets email codes a day after they expire, and keeps newer ones", arguments: Backend.available)
    func emailCodes(_ backend: Backend) throws {
        let store = try backend.open()
        let t = now()
        for (email, expires) in [("old@signet.test", t - 2 * Self.day), ("recent@signet.test", t - 60_000), ("live@signet.test", t + 60_000)] {
            #expect(try store.issueEmailCode(EmailCodeRow(email: email, id: email, codeHash: [1], clientID: "app", createdAt: expires - 300_000, expiresAt: expires),
                                             interval: 0, mail: nil))
        }
        _ = try store.purgeUsedSessions(now: t)
        #expect(try store.emailCode(email: "old@signet.test") == nil)
        #expect(try store.emailCode(email: "recent@signet.test") != nil && store.emailCode(email: "live@signet.test") != nil)
    }
}
