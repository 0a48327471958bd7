import Foundation
import SignetAuth
import SignetCrypto
import SignetStore
import SignetWebAuthn
import Testing

/// The signing-key ring's reloads: a key already loaded is kept, a new one is imported.
@Suite struct KeyRingTests {
    let kek = Array(repeating: UInt8(9), count: 32)

    func store() throws -> SQLStore {
        try SQLStore(path: FileManager.default.temporaryDirectory.appendingPathComponent("signet-keyring-\(UUID().uuidString).db").path)
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

    @Test("a ring with another key-encryption key cannot load the keys")
    func wrongKEK() throws {
        let store = try store()
        _ = try KeyRing(store: store, kek: kek, retentionSeconds: 3600)
        #expect(throws: ConfigurationError.self) {
            _ = try KeyRing(store: store, kek: Array(repeating: UInt8(8), count: 32), retentionSeconds: 3600)
        }
    }
}
