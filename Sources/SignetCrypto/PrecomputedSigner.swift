internal import COpenSSL
import Foundation

/// ES256 signatures (RFC 7518 §3.4) whose per-signature values, k⁻¹ mod n and r = x(k·G) mod n,
/// are made ahead, a batch at a time. FIPS 186-4 §6.3 allows it: both may be computed before the
/// message is known, as long as they are kept secret and used once. Here each pair is taken out of
/// the pool by exactly one signature, under the lock, and cleared and freed by that signature.
///
/// Why: k·G reads OpenSSL's fixed-base table for P-256 (about 150 KB). Between two requests'
/// signatures the rest of the server pushes it out of the caches, so one signature at a time
/// pays for that table's misses each time; a batch finds it in place after its first member.
/// k comes from OpenSSL's CSPRNG (`BN_priv_rand_range`), as every other secret Signet makes.
///
/// Off unless `SIGNET_ECDSA_PRECOMPUTE=1`, a measurement and not a setting: a pair made ahead
/// cannot depend on the message, so it gives up OpenSSL's mixing of the key and the digest into k
/// (`BN_generate_dsa_nonce`), which keeps two signatures from sharing a k even when the generator
/// repeats itself, as it does in two clones of one running machine's snapshot. Such clones would
/// also share the pool itself. A shared k between two signatures gives the signing key away.
final class PrecomputedSigner: @unchecked Sendable {
    /// `SIGNET_ECDSA_PRECOMPUTE=1` turns the pool on, so the benchmarks can measure both ways.
    static let enabled = ProcessInfo.processInfo.environment["SIGNET_ECDSA_PRECOMPUTE"] == "1"
    /// Pairs made at once when the pool is empty: the first request to find it empty pays about
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
        pairs.reserveCapacity(Self.batch)
    }

    deinit {
        for pair in pairs { signet_ecdsa_discard(pair.kinv, pair.r) }
        signet_p256_key_free(key)
    }

    /// `r || s` over SHA-256(`message`), or `nil` when the library refused (the caller then
    /// signs the ordinary way).
    func sign(_ message: [UInt8]) -> [UInt8]? {
        guard let pair = take() else { return nil }
        var out = [UInt8](repeating: 0, count: 64)
        let rc = message.withUnsafeBufferPointer { m in
            out.withUnsafeMutableBufferPointer { signet_ecdsa_sign_precomputed(key, m.baseAddress, m.count, pair.kinv, pair.r, $0.baseAddress) }
        }
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

/// A key's ``PrecomputedSigner``, made on first use; `nil` when turned off or not a P-256 key.
final class PrecomputedSignerSlot: @unchecked Sendable {
    private let lock = NSLock()
    private var signer: PrecomputedSigner?
    private var made = false

    func signer(pkey: OpaquePointer) -> PrecomputedSigner? {
        guard PrecomputedSigner.enabled else { return nil }
        lock.lock()
        defer { lock.unlock() }
        if !made {
            signer = PrecomputedSigner(pkey: pkey)
            made = true
        }
        return signer
    }
}
