internal import COpenSSL

/// Bytes from OpenSSL's CSPRNG (`RAND_bytes`). Every challenge, handle and token comes from here.
public enum SecureRandom {
    /// `count` cryptographically secure random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let rc = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        precondition(rc == 1, "RAND_bytes failed")
        return out
    }
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
