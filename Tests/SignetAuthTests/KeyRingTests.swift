import Foundation
import SignetAuth
import SignetCrypto
import SignetStore
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

        // A rotation by another instance: the new key signs, the old one stays published as it was.
        let newKid = try KeyRing.create(store: store, kek: kek, retireOthers: true, now: clock.now)
        try ring.reload()
        let rotated = ring.signingKey
        #expect(rotated.kid == newKid)
        #expect(rotated.key !== first.key)
        #expect(ring.publicKey(kid: first.kid) === firstPublic)
        let message = Array("header.payload".utf8)
        let signature = try rotated.key.sign(message, scheme: .ecdsa(.sha256))
        #expect(try #require(ring.publicKey(kid: newKid)).verify(signature: signature, message: message, scheme: .ecdsa(.sha256)))
        #expect(!firstPublic.verify(signature: signature, message: message, scheme: .ecdsa(.sha256)))

        // Past the retention the retired key leaves the set.
        clock.now += 3601
        try ring.reload()
        #expect(ring.publicKey(kid: first.kid) == nil)
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
