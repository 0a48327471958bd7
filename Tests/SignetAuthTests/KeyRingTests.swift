import Foundation
import SignetAuth
import SignetCrypto
import SignetStore
import SignetTestSupport
import SignetWebAuthn
import Testing

/// The signing-key ring's reloads: a key already loaded is kept, a new one is imported.
@Suite struct KeyRingTests {
    let kek = Array(repeating: UInt8(9), count: 32)

    func store() throws -> SQLStore {
        try SQLStore(path: Scratch.directory.appendingPathComponent("signet-keyring-\(UUID().uuidString).db").path)
    }

    @Test("a reload of unchanged rows keeps the imported keys; a rotation imports only the new one")
    func reloadKeepsKeys() throws {
        let store = try store()
        let clock = CeremonyTests.Clock()
        let ring = try KeyRing(store: store, kek: kek, retentionSeconds: 3600, clock: { clock.now })
        let first = ring.signingKey
        let firstPublic = try #require(ring.publicKey(kid: first.kid))
        let reloads = ring.reloads

        // Stale by the clock: the ring reads the table again, and keeps what it had.
        clock.now += 11
        let again = ring.signingKey
        #expect(ring.reloads == reloads + 1)
        #expect(again.kid == first.kid)
        #expect(again.key === first.key)
        #expect(ring.publicKey(kid: first.kid) === firstPublic)

        // A rotation by another instance: the new key is published at once, the old one signs
        // until every cached JWKS can hold the new one, then the new one signs.
        let newKid = try KeyRing.create(store: store, kek: kek, retireOthers: true, now: clock.now)
        try ring.reload()
        #expect(ring.publicKey(kid: newKid) != nil)
        #expect(ring.jwks["keys"]?.array?.compactMap { $0["kid"]?.string }.sorted() == [first.kid, newKid].sorted())
        #expect(ring.signingKey.kid == first.kid)
        clock.now += Double(KeyRing.signingDelay) - 1
        try ring.reload()
        #expect(ring.signingKey.kid == first.kid)
        clock.now += 1
        try ring.reload()
        let rotated = ring.signingKey
        #expect(rotated.kid == newKid)
        #expect(rotated.key !== first.key)
        #expect(ring.publicKey(kid: first.kid) === firstPublic)
        let message = Array("header.payload".utf8)
        let signature = try rotated.key.sign(message, scheme: .ecdsa(.sha256))
        #expect(try #require(ring.publicKey(kid: newKid)).verify(signature: signature, message: message, scheme: .ecdsa(.sha256)))
        #expect(!firstPublic.verify(signature: signature, message: message, scheme: .ecdsa(.sha256)))

        // The retired key stays published for the retention after its last possible signature
        // (the delay and one reload after it was retired), then leaves the set.
        clock.now += 3600 + Double(KeyRing.reloadInterval) - 1
        try ring.reload()
        #expect(ring.publicKey(kid: first.kid) === firstPublic)
        clock.now += 2
        try ring.reload()
        #expect(ring.publicKey(kid: first.kid) == nil)
    }

    @Test("rotations in quick succession: the key published longest signs until one has been published for the delay")
    func quickRotations() throws {
        let store = try store()
        let clock = CeremonyTests.Clock()
        let ring = try KeyRing(store: store, kek: kek, retentionSeconds: 600, clock: { clock.now })
        let first = ring.signingKey.kid
        clock.now += 5
        let second = try KeyRing.create(store: store, kek: kek, retireOthers: true, now: clock.now)
        clock.now += 5
        let third = try KeyRing.create(store: store, kek: kek, retireOthers: true, now: clock.now)
        try ring.reload()
        // The first key, created at start, is the only one any verifier can have seen.
        #expect(ring.signingKey.kid == first)
        clock.now += Double(KeyRing.signingDelay) - 5
        try ring.reload()
        #expect(ring.signingKey.kid == second)
        clock.now += 5
        try ring.reload()
        #expect(ring.signingKey.kid == third)
        #expect(ring.jwks["keys"]?.array?.count == 3)
    }

    @Test("scheduled rotation: nothing until the newest key is old enough, then one new key, published at once and signing after the delay")
    func scheduledRotation() throws {
        let store = try store()
        let clock = CeremonyTests.Clock()
        let ring = try KeyRing(store: store, kek: kek, retentionSeconds: 3600, clock: { clock.now })
        let first = ring.signingKey.kid
        let ninetyDays: Int64 = 90 * 86_400
        clock.now += Double(ninetyDays) - 1
        #expect(try ring.rotateIfOlder(than: ninetyDays) == nil)
        #expect(try store.signingKeys().count == 1)
        clock.now += 1
        let second = try #require(try ring.rotateIfOlder(than: ninetyDays))
        let rows = try store.signingKeys()
        #expect(rows.map(\.kid) == [first, second])
        #expect(rows[0].retiredAt == rows[1].createdAt && rows[1].retiredAt == nil)
        #expect(ring.jwks["keys"]?.array?.compactMap { $0["kid"]?.string }.sorted() == [first, second].sorted(), "published at once")
        #expect(ring.signingKey.kid == first)
        // Due again only ninety days after the new key, not after the first.
        clock.now += Double(KeyRing.signingDelay)
        #expect(try ring.rotateIfOlder(than: ninetyDays) == nil)
        try ring.reload()
        #expect(ring.signingKey.kid == second)
        // The new key opens under the key-encryption key: a fresh ring signs with it.
        let fresh = try KeyRing(store: store, kek: kek, retentionSeconds: 3600, clock: { clock.now })
        #expect(fresh.signingKey.kid == second)
    }

    @Test("a retired key is destroyed a day and 80 s after its retirement, not a moment before; the key that signs is never destroyed")
    func destroyRetired() throws {
        let store = try store()
        let clock = CeremonyTests.Clock()
        let ring = try KeyRing(store: store, kek: kek, retentionSeconds: 3600, clock: { clock.now })
        let first = ring.signingKey.kid
        clock.now += 3 * 86_400
        let second = try #require(try ring.rotateIfOlder(than: 86_400))
        clock.now += 3 * 86_400
        let third = try #require(try ring.rotateIfOlder(than: 86_400))
        // `second` was retired by `third` just now; `first` three days ago.
        #expect(try ring.destroyRetired() == [first])
        #expect(try store.signingKeys().map(\.kid) == [second, third])
        #expect(try ring.destroyRetired() == [], "each key is destroyed once")
        func published() -> [String] { ring.jwks["keys"]?.array?.compactMap { $0["kid"]?.string }.sorted() ?? [] }
        // This ring (tokens of an hour) stops publishing it long before; an instance with
        // day-long tokens may not have.
        clock.now += Double(KeyRing.signingDelay) + KeyRing.reloadInterval + 3600 + 1
        try ring.reload()
        #expect(published() == [third] && ring.signingKey.kid == third)
        #expect(try ring.destroyRetired() == [])
        let retired = try #require(try store.signingKeys().first { $0.kid == second }?.retiredAt)
        let destroyAt = KeyRing.destroyedAt(retiredAt: retired)
        #expect(destroyAt == retired + (KeyRing.signingDelay + Int64(KeyRing.reloadInterval) + 86_400) * 1000)
        clock.now = Date(timeIntervalSince1970: Double(destroyAt) / 1000 - 0.001)
        #expect(try ring.destroyRetired() == [])
        clock.now = Date(timeIntervalSince1970: Double(destroyAt) / 1000 + 0.002)
        #expect(try ring.destroyRetired() == [second])
        #expect(try store.signingKeys().map(\.kid) == [third], "the key that signs is never retired, so never destroyed")
        clock.now += 10 * 365 * 86_400
        #expect(try ring.destroyRetired() == [] && store.signingKeys().count == 1)
    }

    @Test("scheduled rotation: rings that find it due at once add one key between them")
    func scheduledRotationOnce() throws {
        let store = try store()
        let clock = CeremonyTests.Clock()
        let rings = try (0..<8).map { _ in try KeyRing(store: store, kek: kek, retentionSeconds: 3600, clock: { clock.now }) }
        clock.now += 86_400
        let added = simultaneously(rings.count) { i in try rings[i].rotateIfOlder(than: 86_400) }
        #expect(added.compactMap { try? $0.get() }.compactMap { $0 }.count == 1)
        #expect(try store.signingKeys().count == 2)
    }

    @Test("scheduled rotation adds no key while the key that signs does not open under this ring's key-encryption key")
    func scheduledRotationStaleKEK() throws {
        let path = Scratch.directory.appendingPathComponent("signet-keyring-\(UUID().uuidString).db").path
        let store = try SQLStore(path: path)
        let clock = CeremonyTests.Clock()
        let ring = try KeyRing(store: store, kek: kek, retentionSeconds: 3600, clock: { clock.now })
        // The database was re-keyed while this server ran: its key is sealed under another key.
        let other = Array(repeating: UInt8(8), count: 32)
        let kid = ring.signingKey.kid
        let reSealed = try AESGCM.seal(PrivateKey.generate(.ec(.p256)).der, key: other, aad: Array(kid.utf8))
        _ = try rawSQLite(path, "UPDATE signing_keys SET private_key = x'\(reSealed.map { String(format: "%02x", $0) }.joined())'")
        clock.now += 91 * 86_400
        #expect(throws: ConfigurationError.self) { try ring.rotateIfOlder(than: 90 * 86_400) }
        #expect(try store.signingKeys().count == 1)
    }

    @Test("a ring with another key-encryption key cannot load the keys")
    func wrongKEK() throws {
        let store = try store()
        _ = try KeyRing(store: store, kek: kek, retentionSeconds: 3600)
        #expect(throws: ConfigurationError.self) {
            _ = try KeyRing(store: store, kek: Array(repeating: UInt8(8), count: 32), retentionSeconds: 3600)
        }
    }
}
