import Foundation
import SignetCrypto
import Testing

@Suite struct KeyTests {
    static let kinds: [PrivateKey.Kind] = [.ec(.p256), .ec(.p384), .ec(.p521), .edwards(.ed25519), .edwards(.ed448), .rsa(bits: 2048)]

    static func schemes(_ kind: PrivateKey.Kind) -> [SignatureScheme] {
        switch kind {
        case .ec: [.ecdsa(.sha256), .ecdsa(.sha384), .ecdsa(.sha512)]
        case .edwards: [.eddsa]
        case .rsa: [.rsaPKCS1(.sha256), .rsaPKCS1(.sha384), .rsaPKCS1(.sha512), .rsaPKCS1(.sha1), .rsaPSS(.sha256), .rsaPSS(.sha384), .rsaPSS(.sha512)]
        }
    }

    @Test("sign then verify; any change to message, signature or key fails", arguments: kinds)
    func signVerify(_ kind: PrivateKey.Kind) throws {
        let key = try PrivateKey.generate(kind)
        let other = try PrivateKey.generate(kind)
        let message = Array("the exact bytes".utf8)
        for scheme in Self.schemes(kind) {
            let sig = try key.sign(message, scheme: scheme)
            #expect(key.publicKey.verify(signature: sig, message: message, scheme: scheme))
            #expect(!key.publicKey.verify(signature: sig, message: message + [0], scheme: scheme))
            var bent = sig
            bent[bent.count / 2] ^= 1
            #expect(!key.publicKey.verify(signature: bent, message: message, scheme: scheme))
            #expect(!other.publicKey.verify(signature: sig, message: message, scheme: scheme))
            #expect(!key.publicKey.verify(signature: [], message: message, scheme: scheme))
        }
    }

    @Test("ES256 through the shared template contexts: 64 threads sign and verify with one key pair, each result right, tampering refused")
    func templatesAcrossThreads() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let other = try PrivateKey.generate(.ec(.p256))
        final class Results: @unchecked Sendable {
            let lock = NSLock()
            var wrong = 0
        }
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 64) { n in
            let message = Array("message \(n)".utf8)
            guard let signature = try? key.sign(message, scheme: .ecdsa(.sha256)) else {
                results.lock.withLock { results.wrong += 1 }
                return
            }
            var tampered = message
            tampered[0] ^= 1
            let right = key.publicKey.verify(signature: signature, message: message, scheme: .ecdsa(.sha256))
                && !key.publicKey.verify(signature: signature, message: tampered, scheme: .ecdsa(.sha256))
                && !other.publicKey.verify(signature: signature, message: message, scheme: .ecdsa(.sha256))
                && !key.publicKey.verify(signature: Array(signature.dropLast()), message: message, scheme: .ecdsa(.sha256))
            if !right { results.lock.withLock { results.wrong += 1 } }
        }
        #expect(results.wrong == 0)
        // The template and a freshly initialised context agree (the floor's two ways).
        let message = Array("same bytes".utf8)
        let signature = try key.sign(message, scheme: .ecdsa(.sha256))
        #expect(key.publicKey.benchmarkRawVerify(signature: signature, message: message, scheme: .ecdsa(.sha256), iterations: 3) == 3)
        #expect(key.publicKey.benchmarkTemplateVerify(signature: signature, message: message, scheme: .ecdsa(.sha256), iterations: 3) == 3)
        #expect(key.publicKey.benchmarkTemplateVerify(signature: signature, message: message + [0], scheme: .ecdsa(.sha256), iterations: 3) == 0)
    }

    @Test("a key never verifies under another family's scheme")
    func wrongFamily() throws {
        let ec = try PrivateKey.generate(.ec(.p256))
        let sig = try ec.sign([1, 2, 3], scheme: .ecdsa(.sha256))
        #expect(!ec.publicKey.verify(signature: sig, message: [1, 2, 3], scheme: .rsaPKCS1(.sha256)))
        #expect(!ec.publicKey.verify(signature: sig, message: [1, 2, 3], scheme: .eddsa))
        #expect(throws: CryptoError.self) { try ec.sign([1], scheme: .eddsa) }
    }

    @Test("SPKI, X9.63 and coordinates describe the same key", arguments: ECCurve.allCases)
    func encodings(_ curve: ECCurve) throws {
        let key = try PrivateKey.generate(.ec(curve)).publicKey
        let point = try #require(key.x963)
        #expect(point.count == 1 + 2 * curve.coordinateLength)
        let n = curve.coordinateLength
        let fromXY = try PublicKey(curve: curve, x: Array(point[1...n]), y: Array(point[(n + 1)...]))
        let fromSPKI = try PublicKey(spki: key.spki)
        #expect(fromXY.isSameKey(as: key) && fromSPKI.isSameKey(as: key))
        #expect(fromXY.kind == .ec(curve))
    }

    @Test("points off the curve, wrong lengths and compressed points are refused")
    func badPoints() throws {
        let key = try PrivateKey.generate(.ec(.p256)).publicKey
        var point = try #require(key.x963)
        point[64] ^= 1
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p256, x963: point) }
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p256, x: [UInt8](repeating: 0, count: 32), y: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p256, x: [1], y: [2]) }
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p256, x963: [0x02] + Array(point[1...32])) }
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p384, x963: point) }
    }

    @Test("malformed SPKI, Edwards and RSA inputs are refused")
    func badKeys() throws {
        let spki = try PrivateKey.generate(.ec(.p256)).publicKey.spki
        #expect(throws: CryptoError.self) { try PublicKey(spki: spki + [0]) }
        #expect(throws: CryptoError.self) { try PublicKey(spki: Array(spki.dropLast())) }
        #expect(throws: CryptoError.self) { try PublicKey(spki: []) }
        #expect(throws: CryptoError.self) { try PublicKey(edwards: .ed25519, raw: [UInt8](repeating: 1, count: 31)) }
        #expect(throws: CryptoError.self) { try PublicKey(rsaModulus: [UInt8](repeating: 0xff, count: 64), exponent: [1, 0, 1]) }
        #expect(throws: CryptoError.self) { try PublicKey(rsaModulus: [UInt8](repeating: 0xff, count: 256), exponent: [2]) }
        let rsa = try PrivateKey.generate(.rsa(bits: 2048)).publicKey
        let (n, e) = try #require(rsa.rsaComponents)
        #expect(try PublicKey(rsaModulus: n, exponent: e).isSameKey(as: rsa))
        #expect(try PublicKey(rsaModulus: [0, 0] + n, exponent: e).kind == .rsa(bits: 2048))
    }

    @Test("a private key survives its DER form")
    func privateDER() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        let copy = try PrivateKey(der: key.der)
        #expect(copy.publicKey.isSameKey(as: key.publicKey))
        #expect(throws: CryptoError.self) { try PrivateKey(der: [0x30, 0x03, 0x02, 0x01, 0x01]) }
    }

    @Test("ECDSA signatures convert between DER and r||s")
    func ecdsaConversions() throws {
        let key = try PrivateKey.generate(.ec(.p256))
        for _ in 0..<20 {
            let der = try key.sign([7], scheme: .ecdsa(.sha256))
            let raw = try #require(ECDSASignature.raw(fromDER: der, width: 32))
            #expect(raw.count == 64)
            #expect(ECDSASignature.der(fromRaw: raw) == der)
        }
        #expect(ECDSASignature.raw(fromDER: [0x30, 0x00], width: 32) == nil)
        // Short integers are left-padded, a sign byte dropped, one wider than the width refused.
        #expect(ECDSASignature.raw(fromDER: [0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x02, 0x00, 0xff], width: 2) == [0, 1, 0, 0xff])
        #expect(ECDSASignature.raw(fromDER: [0x30, 0x07, 0x02, 0x02, 0x00, 0x80, 0x02, 0x01, 0x05], width: 1) == [0x80, 0x05])
        #expect(ECDSASignature.raw(fromDER: [0x30, 0x08, 0x02, 0x03, 0x01, 0x02, 0x03, 0x02, 0x01, 0x01], width: 2) == nil)
        #expect(ECDSASignature.raw(fromDER: [0x30, 0x08, 0x02, 0x01, 0x01, 0x02, 0x03, 0x01, 0x02, 0x03], width: 2) == nil)
        #expect(ECDSASignature.der(fromRaw: [1, 2, 3]) == nil)
    }

    @Test("the key cache is bounded and returns the cached key")
    func cache() throws {
        let cache = KeyCache(capacity: 3)
        var builds = 0
        let keys = try (0..<5).map { _ in try PrivateKey.generate(.ec(.p256)).publicKey }
        for key in keys { _ = cache.value(for: key.spki) { builds += 1; return key } }
        #expect(cache.count == 3)
        let again = cache.value(for: keys[4].spki) { builds += 1; return keys[0] }
        #expect(again === keys[4])
        #expect(builds == 5)
        _ = cache.value(for: keys[0].spki) { builds += 1; return keys[0] }
        #expect(builds == 6)
        #expect(cache.count == 3)
    }

    @Test("an encoded key is found by its bytes: the same bytes hit, one byte more, less or changed misses")
    func encodedKeys() throws {
        let cache = BoundedCache<EncodedKey, PublicKey>(capacity: 8)
        let key = try PrivateKey.generate(.ec(.p256)).publicKey
        let bytes = key.spki
        var builds = 0
        _ = cache.value(for: EncodedKey(bytes)) { builds += 1; return key }
        // Another array (its own storage) with the same bytes is the same key.
        let copy = bytes.map { $0 }
        _ = cache.value(for: EncodedKey(copy)) { builds += 1; return key }
        #expect(builds == 1)
        #expect(EncodedKey(bytes).hashValue == EncodedKey(copy).hashValue)
        var changed = bytes
        changed[changed.count - 1] ^= 1
        for other in [changed, bytes + [0], Array(bytes.dropLast()), []] {
            #expect(EncodedKey(other) != EncodedKey(bytes))
            _ = cache.value(for: EncodedKey(other)) { builds += 1; return key }
        }
        #expect(builds == 5)
        #expect(cache.count == 5)
    }
}
