import Foundation
import SignetAuth
import SignetStore
import Testing

/// The store's part of a refresh retried after its answer was lost
/// (``Store/rotateRefreshToken(hash:proof:retryWindow:next:now:writes:)`` with a window).
@Suite struct RefreshRetryStoreTests {
    static let window: Int64 = 60_000

    /// An account with one live token (tag 1) in family `family`, made at `t`.
    struct Family {
        let store: any Store
        let userID: String
        let family: String
        let t: Int64

        init(_ backend: Backend, jkt: String? = nil) throws {
            store = try backend.open()
            let u = user(70)
            try store.createUser(u, credential: credential(u.id))
            (userID, family, t) = (u.id, "fam-\(UUID().uuidString.prefix(8))", now())
            var first = row(1)
            first.jkt = jkt
            try store.insertRefreshToken(first)
        }

        func hash(_ tag: UInt8) -> [UInt8] { [UInt8](repeating: tag, count: 32) }

        func row(_ tag: UInt8) -> RefreshTokenRow {
            RefreshTokenRow(hash: hash(tag), family: family, userID: userID, clientID: "app", scope: "openid", authTime: 1, amr: ["pop"],
                            expiresAt: t + 3_600_000, createdAt: t)
        }

        /// Shows token `tag` at `t + after` ms, making `successor` if it rotates.
        func show(_ tag: UInt8, after: Int64, successor: UInt8, window: Int64 = RefreshRetryStoreTests.window, proof: String? = nil) throws -> RefreshRotation {
            let made = row(successor)
            return try store.rotateRefreshToken(hash: hash(tag), proof: proof, retryWindow: window, next: { current in
                var next = made
                next.jkt = current.jkt
                return next
            }, now: t + after, writes: [])
        }

        func live(_ tag: UInt8) throws -> Bool { try store.liveRefreshToken(hash: hash(tag), now: t + 1_000) != nil }
    }

    @Test("a rotated token shown again within the window, while what it gave is unused, rotates again; what it gave is withdrawn, and showing that revokes the family",
          arguments: Backend.available)
    func retried(_ backend: Backend) throws {
        let f = try Family(backend)
        #expect(try f.show(1, after: 100, successor: 2) == .rotated(f.row(2)))
        // The answer was lost: the holder shows token 1 again, twice.
        #expect(try f.show(1, after: 5_000, successor: 3) == .retried(f.row(3)))
        #expect(try f.show(1, after: 20_000, successor: 4) == .retried(f.row(4)))
        #expect(try !f.live(2) && !f.live(3) && f.live(4))
        // Whoever had token 2 after all shows it: a reuse, and the family ends.
        #expect(try f.show(2, after: 21_000, successor: 5) == .reused(family: f.family, userID: f.userID))
        #expect(try !f.live(4) && !f.live(5))
        #expect(try f.show(1, after: 22_000, successor: 6) == .reused(family: f.family, userID: f.userID))
    }

    @Test("once what it gave was used, or after the window, a rotated token shown again is a reuse", arguments: Backend.available)
    func reuse(_ backend: Backend) throws {
        let used = try Family(backend)
        #expect(try used.show(1, after: 100, successor: 2) == .rotated(used.row(2)))
        #expect(try used.show(2, after: 200, successor: 3) == .rotated(used.row(3)))
        #expect(try used.show(1, after: 300, successor: 4) == .reused(family: used.family, userID: used.userID))
        #expect(try !used.live(3) && !used.live(4))

        let late = try Family(backend)
        #expect(try late.show(1, after: 100, successor: 2) == .rotated(late.row(2)))
        #expect(try late.show(1, after: 100 + Self.window, successor: 3) == .reused(family: late.family, userID: late.userID))
        #expect(try !late.live(2) && !late.live(3))

        // The token it gave was withdrawn by a retry: showing that one again is no retry of it.
        let withdrawn = try Family(backend)
        #expect(try withdrawn.show(1, after: 100, successor: 2) == .rotated(withdrawn.row(2)))
        #expect(try withdrawn.show(1, after: 200, successor: 3) == .retried(withdrawn.row(3)))
        #expect(try withdrawn.show(2, after: 300, successor: 4) == .reused(family: withdrawn.family, userID: withdrawn.userID))
    }

    @Test("without a window, and for a rotation made without one, a second showing is a reuse as before", arguments: Backend.available)
    func noWindow(_ backend: Backend) throws {
        let off = try Family(backend)
        #expect(try off.show(1, after: 100, successor: 2, window: 0) == .rotated(off.row(2)))
        #expect(try off.show(1, after: 200, successor: 3, window: 0) == .reused(family: off.family, userID: off.userID))

        // Rotated while the window was off: no link was kept, so turning it on retries nothing.
        let before = try Family(backend)
        #expect(try before.show(1, after: 100, successor: 2, window: 0) == .rotated(before.row(2)))
        #expect(try before.show(1, after: 200, successor: 3) == .reused(family: before.family, userID: before.userID))
    }

    @Test("a retry of a token bound to a DPoP key needs that key's proof; another key is a reuse", arguments: Backend.available)
    func bound(_ backend: Backend) throws {
        let f = try Family(backend, jkt: "key-a")
        guard case .rotated = try f.show(1, after: 100, successor: 2, proof: "key-a") else { Issue.record("the bound token did not rotate"); return }
        guard case .retried(let again) = try f.show(1, after: 200, successor: 3, proof: "key-a") else { Issue.record("no retry with the key"); return }
        #expect(again.jkt == "key-a")
        #expect(try f.show(1, after: 300, successor: 4, proof: "key-b") == .reused(family: f.family, userID: f.userID))
        #expect(try !f.live(3))
    }

    @Test("a revoked family is not retried: a rotated token of it shown again is a reuse, as before", arguments: Backend.available)
    func revoked(_ backend: Backend) throws {
        let f = try Family(backend)
        #expect(try f.show(1, after: 100, successor: 2) == .rotated(f.row(2)))
        #expect(try f.store.revokeRefreshFamily(hash: f.hash(2), now: f.t + 200))
        #expect(try f.show(1, after: 300, successor: 3) == .reused(family: f.family, userID: f.userID))
        #expect(try !f.live(3))
    }

    @Test("of concurrent retries of one token, each withdraws the one before: one token of the family stays live", arguments: Backend.available)
    func concurrent(_ backend: Backend) throws {
        let f = try Family(backend)
        #expect(try f.show(1, after: 100, successor: 2) == .rotated(f.row(2)))
        let counter = Counter()
        let results = concurrently(8) { () -> RefreshRotation in try f.show(1, after: 1_000, successor: UInt8(10 + counter.next())) }
        #expect(results.allSatisfy { if case .success(.retried) = $0 { true } else { false } }, "\(results)")
        let live = try (2...30).filter { try f.live(UInt8($0)) }
        #expect(live.count == 1, "live: \(live)")
    }
}
