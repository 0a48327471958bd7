internal import COpenSSL
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Bytes from OpenSSL's CSPRNG (`RAND_bytes`). Every challenge, handle and token comes from here.
///
/// Each `RAND_bytes` call costs a few microseconds of locking and bookkeeping whatever its size,
/// and a sign-in needs several small draws; so draws of up to 64 bytes are served from a
/// 1 KiB block drawn at once. The block belongs to the process that drew it: after a `fork`
/// the child draws its own (a `pthread_atfork` handler counts forks in the child, so a draw
/// compares a number instead of making a `getpid` system call).
public enum SecureRandom {
    /// `count` cryptographically secure random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count <= 64, forkHandler else { return direct(count) }
        let generation = forks.load(ordering: .acquiring)
        return pool.withLock { pool in pool.take(count, generation: generation) }
    }

    /// Forks this process has gone through, as seen from the process itself: 0 in the parent,
    /// one more in each child, set before the child runs anything else.
    package static var forkCount: UInt64 { forks.load(ordering: .acquiring) }
    static let forks = Atomic<UInt64>(0)

    /// Whether the fork counter is installed (once, at first use).
    package static let forkHandler: Bool = pthread_atfork(nil, nil, { SecureRandom.forks.add(1, ordering: .releasing) }) == 0

    static func direct(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let rc = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        precondition(rc == 1, "RAND_bytes failed")
        return out
    }

    package struct Pool: ~Copyable {
        var block: [UInt8] = []
        package private(set) var used = 0
        /// The fork count when the block was drawn.
        package private(set) var generation: UInt64 = 0

        package init() {}

        package mutating func take(_ count: Int, generation current: UInt64) -> [UInt8] {
            if current != generation || used + count > block.count {
                block = SecureRandom.direct(1024)
                used = 0
                generation = current
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
