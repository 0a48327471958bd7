import Foundation
import SignetAuth
@testable import SignetStore
import SignetTestSupport
import Testing

/// The purge of rows past their expiry: found on the reading connection, deleted a batch at a time.
@Suite struct ExpiryPurgeTests {
    /// A mark's key as Signet makes them: a millisecond time (6 bytes), then 10 random bytes.
    static func key(_ ms: Int64) -> [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: ms >> (8 * (5 - $0))) } + (0..<10).map { _ in UInt8.random(in: 0...255) }
    }

    @Test("a backlog many batches and many scans long goes whole; marks with random keys among them go; live marks stay marked", arguments: Backend.available)
    func backlog(_ backend: Backend) throws {
        let store = try #require(try backend.open() as? SQLStore)
        let t: Int64 = 1_800_000_000_000
        // 2,345 expired marks in time order, 7 expired ones whose keys sort anywhere, 50 live.
        var expired = (0..<2_345).map { Self.key(t + Int64($0)) }
        expired += (0..<7).map { _ in (0..<16).map { _ in UInt8.random(in: 0...255) } }
        let live = (0..<50).map { Self.key(t + 10_000 + Int64($0)) }
        for (n, id) in expired.enumerated() { #expect(try store.useSession(id: id, expiresAt: t + 1_000 + Int64(n % 100))) }
        for id in live { #expect(try store.useSession(id: id, expiresAt: t + 600_000)) }
        // Batches of 100, scans of 1,000: three full scans and a last short one.
        #expect(try store.purgeExpired("used_sessions", key: "id", before: t + 2_000, batch: 100) == 2_352)
        #expect(try store.purgeExpired("used_sessions", key: "id", before: t + 2_000, batch: 100) == 0)
        // A live mark is still used; an expired one is gone (its session would have expired too).
        for id in live { #expect(try store.useSession(id: id, expiresAt: t + 600_000) == false) }
        for id in expired.suffix(10) { #expect(try store.useSession(id: id, expiresAt: t + 600_000)) }
    }

    @Test("the edge: a mark expiring at `now` stays, one a millisecond earlier goes", arguments: Backend.available)
    func edge(_ backend: Backend) throws {
        let store = try #require(try backend.open() as? SQLStore)
        let t: Int64 = 1_800_000_000_000
        let early = Self.key(t), onTime = Self.key(t + 1)
        #expect(try store.useSession(id: early, expiresAt: t + 999))
        #expect(try store.useSession(id: onTime, expiresAt: t + 1_000))
        #expect(try store.purgeExpired("used_sessions", key: "id", before: t + 1_000, batch: 1) == 1)
        #expect(try store.useSession(id: onTime, expiresAt: t + 5_000) == false)
        #expect(try store.useSession(id: early, expiresAt: t + 5_000))
    }

    @Test("a table keyed by text in random order (ended sessions): 1,234 expired go in batches of 50, the 5 still in force stay", arguments: Backend.available)
    func textKeys(_ backend: Backend) throws {
        let store = try #require(try backend.open() as? SQLStore)
        let t: Int64 = 1_800_000_000_000
        let gone = (0..<1_234).map { _ in UUID().uuidString }
        let kept = (0..<5).map { _ in UUID().uuidString }
        for sid in gone { #expect(try store.endSession(sid, at: t, until: t + 1_000, writes: [])) }
        for sid in kept { #expect(try store.endSession(sid, at: t, until: t + 900_000, writes: [])) }
        #expect(try store.purgeExpired("ended_sessions", key: "sid", before: t + 2_000, batch: 50) == 1_234)
        #expect(try kept.allSatisfy { try store.sessionEnded($0) })
        #expect(try gone.prefix(20).allSatisfy { try !store.sessionEnded($0) })
    }
}
