import Foundation
@testable import SignetCrypto
import Testing

/// ES256 from values made ahead (``PrecomputedSigner``, off unless `SIGNET_ECDSA_PRECOMPUTE=1`):
/// right signatures, each pair used once. The tests make the signer themselves.
@Suite struct PrecomputedSignerTests {
    /// The raw `r || s` as DER, for OpenSSL's ordinary verification.
    static func verifies(_ key: PublicKey, _ raw: [UInt8], _ message: [UInt8]) -> Bool {
        guard raw.count == 64, let der = ECDSASignature.der(fromRaw: raw) else { return false }
        return key.verify(signature: der, message: message, scheme: .ecdsa(.sha256))
    }

    @Test("one thread: a batch is made when the pool is empty and one pair is used per signature; each signature verifies and only for its message and key")
    func batches() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let other = try PrivateKey.generate(.ec(.p256))
        let signer = try #require(PrecomputedSigner(pkey: key.pkey))
        let batch = PrecomputedSigner.batch
        var seen = Set<[UInt8]>()
        for n in 0..<(2 * batch + 3) {
            let message = Array("token \(n)".utf8)
            let raw = try #require(signer.sign(message))
            #expect(raw.count == 64)
            #expect(Self.verifies(key.publicKey, raw, message))
            #expect(!Self.verifies(key.publicKey, raw, message + [0]))
            #expect(!Self.verifies(other.publicKey, raw, message))
            var bent = raw
            bent[40] ^= 1
            #expect(!Self.verifies(key.publicKey, bent, message))
            // r = x(k·G): a repeated r is a repeated k, which would give the key away.
            #expect(seen.insert(Array(raw.prefix(32))).inserted)
            #expect(signer.pooled == (batch - 1 - n % batch))
        }
    }

    @Test("64 threads sign with one key at once: every signature verifies, and no r appears twice across 512 signatures")
    func acrossThreads() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let signer = try #require(PrecomputedSigner(pkey: key.pkey))
        final class Results: @unchecked Sendable {
            let lock = NSLock()
            var wrong = 0
            var rs = Set<[UInt8]>()
            var total = 0
        }
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 64) { n in
            for i in 0..<8 {
                let message = Array("thread \(n) token \(i)".utf8)
                guard let raw = signer.sign(message), Self.verifies(key.publicKey, raw, message) else {
                    results.lock.withLock { results.wrong += 1 }
                    continue
                }
                results.lock.withLock {
                    results.rs.insert(Array(raw.prefix(32)))
                    results.total += 1
                }
            }
        }
        #expect(results.wrong == 0)
        #expect(results.total == 512)
        #expect(results.rs.count == 512)
    }

    @Test("a key that is not P-256 gets no pool, and cannot make an ES256 signature: P-384, Ed25519")
    func otherKeys() throws {
        for kind in [PrivateKey.Kind.ec(.p384), .edwards(.ed25519)] {
            let key = try PrivateKey.generate(kind)
            #expect(PrecomputedSigner(pkey: key.pkey) == nil)
            #expect(throws: CryptoError.self) { try key.signES256(Array("x".utf8)) }
        }
    }

    @Test("the pool's signature and signES256's (EVP_DigestSign by default) are the same scheme: each verifies, and each differs from the last")
    func sameAsEVP() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let signer = try #require(PrecomputedSigner(pkey: key.pkey))
        let message = Array(String(repeating: "e", count: 420).utf8)
        let pooled = try #require(signer.sign(message))
        // The default: signES256 is EVP_DigestSign's signature in JWS form, and the pool is off.
        #expect(!PrecomputedSigner.enabled)
        let evp = try key.signES256(message)
        #expect(Self.verifies(key.publicKey, evp, message))
        #expect(Self.verifies(key.publicKey, pooled, message))
        #expect(pooled != evp)
        #expect(try #require(signer.sign(message)) != pooled)
    }
}
