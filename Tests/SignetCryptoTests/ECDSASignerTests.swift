import Foundation
@testable import SignetCrypto
import Testing

/// ES256 through a key's `EC_KEY` (``ECDSASigner``): the direct signature, Signet's default, and
/// the one from values made ahead (off unless `SIGNET_ECDSA_PRECOMPUTE=1`): right signatures, k
/// never repeated, each pair used once. The tests make the signer themselves.
@Suite struct ECDSASignerTests {
    /// The raw `r || s` as DER, for OpenSSL's ordinary verification.
    static func verifies(_ key: PublicKey, _ raw: [UInt8], _ message: [UInt8]) -> Bool {
        guard raw.count == 64, let der = ECDSASignature.der(fromRaw: raw) else { return false }
        return key.verify(signature: der, message: message, scheme: .ecdsa(.sha256))
    }

    @Test("the direct signature: 64 threads × 4 with one key, each verifies only for its message and key, no r twice, and signES256 is it")
    func direct() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let other = try PrivateKey.generate(.ec(.p256))
        let signer = try #require(ECDSASigner(pkey: key.pkey))
        final class Results: @unchecked Sendable {
            let lock = NSLock()
            var wrong = 0
            var rs = Set<[UInt8]>()
        }
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 64) { n in
            for i in 0..<4 {
                let message = Array("thread \(n) token \(i)".utf8)
                let raw = (n % 2 == 0 ? signer.sign(message) : try? key.signES256(message)) ?? []
                var bent = raw
                if !bent.isEmpty { bent[50] ^= 1 }
                let right = Self.verifies(key.publicKey, raw, message) && !Self.verifies(key.publicKey, raw, message + [0])
                    && !Self.verifies(other.publicKey, raw, message) && !Self.verifies(key.publicKey, bent, message)
                results.lock.withLock {
                    if !right { results.wrong += 1 }
                    results.rs.insert(Array(raw.prefix(32)))
                }
            }
        }
        #expect(results.wrong == 0)
        #expect(results.rs.count == 256)
        // The direct way signs the same message differently each time (k is fresh).
        let message = Array("same".utf8)
        #expect(try #require(signer.sign(message)) != (try #require(signer.sign(message))))
        #expect(signer.pooled == 0)
    }

    @Test("one thread: a batch is made when the pool is empty and one pair is used per signature; each signature verifies and only for its message and key")
    func batches() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let other = try PrivateKey.generate(.ec(.p256))
        let signer = try #require(ECDSASigner(pkey: key.pkey))
        let batch = ECDSASigner.batch
        var seen = Set<[UInt8]>()
        for n in 0..<(2 * batch + 3) {
            let message = Array("token \(n)".utf8)
            let raw = try #require(signer.signAhead(message))
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
        let signer = try #require(ECDSASigner(pkey: key.pkey))
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
                guard let raw = signer.signAhead(message), Self.verifies(key.publicKey, raw, message) else {
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
            #expect(ECDSASigner(pkey: key.pkey) == nil)
            #expect(throws: CryptoError.self) { try key.signES256(Array("x".utf8)) }
        }
    }

    @Test("the three ways are one scheme: EVP_DigestSign's DER, the direct r || s and the pool's each verify; the pool is off by default")
    func sameScheme() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let signer = try #require(ECDSASigner(pkey: key.pkey))
        let message = Array(String(repeating: "e", count: 420).utf8)
        let evp = try #require(ECDSASignature.raw(fromDER: try key.sign(message, scheme: .ecdsa(.sha256)), width: 32))
        let direct = try #require(signer.sign(message))
        let pooled = try #require(signer.signAhead(message))
        for raw in [evp, direct, pooled, try key.signES256(message)] { #expect(Self.verifies(key.publicKey, raw, message)) }
        #expect(Set([evp, direct, pooled].map { Array($0.prefix(32)) }).count == 3)
        // The test run never sets SIGNET_ECDSA_PRECOMPUTE: a signature from a key leaves no pool.
        #expect(!ECDSASigner.precompute)
        _ = try key.signES256(message)
        #expect(key.ecdsa.signer(pkey: key.pkey)?.pooled == 0)
    }
}
