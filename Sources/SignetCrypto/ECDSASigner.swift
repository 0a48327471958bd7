internal import COpenSSL
import Foundation

/// ES256 signatures (RFC 7518 §3.4) made through a P-256 key's `EC_KEY`, straight into the
/// 64-byte `r || s` that JWS carries: the same ECDSA as `EVP_DigestSign`, whose k OpenSSL derives
/// from the key, the digest and fresh random bytes (`BN_generate_dsa_nonce`), without the
/// provider's dispatch and the DER encoding that would only be taken apart again (callgrind: about
/// 11k instructions less a signature). `SIGNET_ECDSA_DIRECT=0` signs through `EVP_DigestSign`.
///
/// It can also sign from per-signature values made ahead (``signAhead(_:)``), k⁻¹ mod n and
/// r = x(k·G) mod n, sixteen at a time. FIPS 186-4 §6.3 allows that: both may be computed before
/// the message is known, kept secret and used once; here each pair leaves the pool under the lock
/// for exactly one signature, which clears and frees it. A batch finds OpenSSL's fixed-base table
/// (about 150 KB) in the caches where one signature at a time finds it pushed out by the rest of
/// a request. It is off unless `SIGNET_ECDSA_PRECOMPUTE=1`, a measurement and not a setting: a
/// pair made before the message cannot depend on it, so it gives up OpenSSL's mixing of the digest
/// into k, which keeps two signatures from sharing a k even when the random generator repeats
/// itself, as it does in two clones of one running machine's snapshot. Such clones would share the
/// pool as well. Two signatures with one k give the signing key away.
final class ECDSASigner: @unchecked Sendable {
    /// `SIGNET_ECDSA_DIRECT=0` turns the direct signature off, so the benchmarks can measure both ways.
    static let direct = ProcessInfo.processInfo.environment["SIGNET_ECDSA_DIRECT"] != "0"
    /// `SIGNET_ECDSA_PRECOMPUTE=1` turns the pool on, to measure it.
    static let precompute = ProcessInfo.processInfo.environment["SIGNET_ECDSA_PRECOMPUTE"] == "1"
    /// Pairs made at once when the pool is empty: the first signature to find it empty pays about
    /// 16 × 20 µs.
    static let batch = 16

    private typealias Pair = (kinv: OpaquePointer, r: OpaquePointer)
    private let key: OpaquePointer
    private let lock = NSLock()
    private var pairs: [Pair] = []

    /// A signer for `pkey`, or `nil` when it is not a P-256 key.
    init?(pkey: OpaquePointer) {
        guard let key = signet_p256_key(pkey) else { return nil }
        self.key = key
    }

    deinit {
        for pair in pairs { signet_ecdsa_discard(pair.kinv, pair.r) }
        signet_p256_key_free(key)
    }

    /// `r || s` over SHA-256(`message`), k mixed from the key, the digest and fresh random bytes;
    /// `nil` when the library refused (the caller then signs through `EVP_DigestSign`).
    func sign(_ message: [UInt8]) -> [UInt8]? {
        Self.raw(message) { signet_ecdsa_sign_p256(key, $0, $1, $2) }
    }

    /// `r || s` over SHA-256(`message`) from a pair made ahead (measurements only, see above), or
    /// `nil` when the library refused.
    func signAhead(_ message: [UInt8]) -> [UInt8]? {
        guard let pair = take() else { return nil }
        return Self.raw(message) { signet_ecdsa_sign_precomputed(key, $0, $1, pair.kinv, pair.r, $2) }
    }

    /// The 64 bytes `sign` writes for `message` (its bytes, their count, the output), or `nil`
    /// when it returns anything but 1.
    private static func raw(_ message: [UInt8], _ sign: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?) -> Int32) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 64)
        let rc = message.withUnsafeBufferPointer { m in out.withUnsafeMutableBufferPointer { sign(m.baseAddress, m.count, $0.baseAddress) } }
        return rc == 1 ? out : nil
    }

    /// Pairs in the pool now (tests).
    var pooled: Int {
        lock.lock()
        defer { lock.unlock() }
        return pairs.count
    }

    /// One pair, out of the pool; when it is empty, a new batch made outside the lock, whose
    /// first member is used now and the rest pooled.
    private func take() -> Pair? {
        lock.lock()
        if let pair = pairs.popLast() {
            lock.unlock()
            return pair
        }
        lock.unlock()
        var kinv = [OpaquePointer?](repeating: nil, count: Self.batch)
        var r = [OpaquePointer?](repeating: nil, count: Self.batch)
        let made = Int(signet_ecdsa_precompute(key, &kinv, &r, Int32(Self.batch)))
        guard made > 0, let firstK = kinv[0], let firstR = r[0] else { return nil }
        lock.lock()
        for i in 1..<made {
            if let k = kinv[i], let x = r[i] { pairs.append((k, x)) }
        }
        lock.unlock()
        return (firstK, firstR)
    }
}

/// A key's ``ECDSASigner``, made on first use; `nil` when not a P-256 key.
final class ECDSASignerSlot: @unchecked Sendable {
    private let lock = NSLock()
    private var signer: ECDSASigner?
    private var made = false

    func signer(pkey: OpaquePointer) -> ECDSASigner? {
        lock.lock()
        defer { lock.unlock() }
        if !made {
            signer = ECDSASigner(pkey: pkey)
            made = true
        }
        return signer
    }
}
