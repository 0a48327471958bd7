internal import COpenSSL
import Glibc
import Synchronization

/// Bytes from OpenSSL's CSPRNG (`RAND_bytes`). Every challenge, handle and token comes from here.
///
/// Each `RAND_bytes` call costs a few microseconds of locking and bookkeeping whatever its size,
/// and a sign-in needs several small draws; so draws of up to 64 bytes are served from a
/// 1 KiB block drawn at once. The block belongs to the process that drew it: after a `fork`
/// the child draws its own (the process ID is checked at every draw).
public enum SecureRandom {
    /// `count` cryptographically secure random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count <= 64 else { return direct(count) }
        return pool.withLock { pool in pool.take(count) }
    }

    static func direct(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let rc = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        precondition(rc == 1, "RAND_bytes failed")
        return out
    }

    struct Pool: ~Copyable {
        var block: [UInt8] = []
        var used = 0
        var owner: pid_t = 0

        mutating func take(_ count: Int) -> [UInt8] {
            let pid = getpid()
            if pid != owner || used + count > block.count {
                block = SecureRandom.direct(1024)
                used = 0
                owner = pid
            }
            defer {
                // Served bytes are wiped, so the block never holds a value handed out before.
                for i in used..<(used + count) { block[i] = 0 }
                used += count
            }
            return Array(block[used..<(used + count)])
        }
    }

    private static let pool = Mutex(Pool())
}

/// Comparison of secrets whose time does not depend on where they differ.
public enum ConstantTime {
    /// `true` when `a` and `b` are equal. Lengths are not secret; contents are.
    public static func equals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        let x = Array(a), y = Array(b)
        guard x.count == y.count else { return false }
        if x.isEmpty { return true }
        return x.withUnsafeBytes { p in
            y.withUnsafeBytes { q in CRYPTO_memcmp(p.baseAddress, q.baseAddress, x.count) == 0 }
        }
    }
}
