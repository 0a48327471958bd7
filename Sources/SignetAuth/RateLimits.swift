import Foundation

/// A request bucket's limit: at most `limit` in each window of `window` seconds.
public struct RateLimit: Sendable, Equatable {
    public var limit: Int
    public var window: Int
    public init(limit: Int, window: Int) {
        self.limit = limit
        self.window = window
    }
}

/// Rate limits (DESIGN.md, "Security rules"): they protect secrets and accounts, not throughput.
/// A successful sign-in is never throttled per IP.
public struct RateLimits: Sendable, Equatable {
    /// Off for load tests and benchmarks (`SIGNET_RATE_LIMITS_ENABLED=false`).
    public var enabled = true
    /// Sign-up starts (`/passkey/register`) for one email address.
    public var signUpPerIdentifier = RateLimit(limit: 10, window: 3600)
    /// Sign-up starts from one client address.
    public var signUpPerIP = RateLimit(limit: 100, window: 3600)
    /// Failed ceremonies and token grants from one client address; past it a failure answers
    /// `rate_limited` instead of its reason.
    public var failuresPerIP = RateLimit(limit: 100, window: 300)
    /// Audit rows written for unauthenticated failures from one client address.
    public var auditFailuresPerIP = RateLimit(limit: 60, window: 60)
    /// `/passwordless/start` calls from one client address (each may send a mail).
    public var passwordlessPerIP = RateLimit(limit: 50, window: 3600)
    /// The prefix length of the IPv6 network that every per-address limit counts as one address
    /// (`rate_limits.ipv6_prefix`): a subscriber is given a /64 or more (RFC 6177) and picks
    /// addresses in it at will, so counting single IPv6 addresses would limit nothing.
    public var ipv6Prefix = 64
    public init() {}
}

/// An IPv4 or IPv6 network in CIDR notation (RFC 4632), for `trusted_proxies`.
public struct CIDR: Sendable, Equatable, CustomStringConvertible {
    public let address: [UInt8]
    public let prefix: Int

    public init?(_ text: String) {
        guard text.utf8.count <= CIDR.maxLength else { return nil }
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let address = CIDR.parse(String(first)) else { return nil }
        let prefix = parts.count == 2 ? Int(parts[1]) : address.count * 8
        guard let prefix, (0...(address.count * 8)).contains(prefix) else { return nil }
        self.address = address
        self.prefix = prefix
    }

    /// Whether `ip` (text) is inside the network.
    public func contains(_ ip: String) -> Bool {
        guard let other = CIDR.parse(ip), other.count == address.count else { return false }
        var bits = prefix
        for (a, b) in zip(address, other) {
            if bits <= 0 { return true }
            let mask: UInt8 = bits >= 8 ? 0xff : ~(0xff >> UInt8(bits))
            if a & mask != b & mask { return false }
            bits -= 8
        }
        return true
    }

    public var description: String { "\(CIDR.format(address))/\(prefix)" }

    /// Longer text is refused before any parsing: no address or network is written longer.
    static let maxLength = 64

    /// The bytes of a dotted IPv4 or a colon IPv6 address (`::` allowed; an IPv4-mapped address
    /// becomes its IPv4 form, as a dual-stack socket reports it).
    package static func parse(_ text: String) -> [UInt8]? {
        // The longest form, eight full IPv6 groups with a prefix, is 43 characters.
        guard text.utf8.count <= CIDR.maxLength else { return nil }
        if !text.contains(":") {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4 else { return nil }
            let bytes = parts.compactMap { $0.count <= 3 ? UInt8($0) : nil }
            return bytes.count == 4 ? bytes : nil
        }
        if text.lowercased().hasPrefix("::ffff:"), text.contains("."), let v4 = parse(String(text.dropFirst(7))) { return v4 }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ s: String) -> [UInt16]? {
            if s.isEmpty { return [] }
            let items = s.split(separator: ":", omittingEmptySubsequences: false)
            let values = items.compactMap { $0.count <= 4 ? UInt16($0, radix: 16) : nil }
            return values.count == items.count ? values : nil
        }
        guard let head = groups(halves[0]) else { return nil }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count < 8 else { return nil }
            all += [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard all.count == 8 else { return nil }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }

    /// What a per-address limit counts `address` (text) under: an IPv4 address (also written
    /// IPv4-mapped) as itself, an IPv6 address as its network of `ipv6Prefix` bits
    /// (`2001:db8:1:2:0:0:0:0/64`), anything else as given.
    public static func limitKey(_ address: String, ipv6Prefix: Int) -> String {
        guard let bytes = parse(address) else { return address }
        guard bytes.count == 16 else { return format(bytes) }
        let kept = bytes.enumerated().map { i, b -> UInt8 in
            let bits = ipv6Prefix - i * 8
            return bits >= 8 ? b : bits <= 0 ? 0 : b & ~(0xff >> UInt8(bits))
        }
        return format(kept) + "/\(ipv6Prefix)"
    }

    package static func format(_ bytes: [UInt8]) -> String {
        bytes.count == 4 ? bytes.map(String.init).joined(separator: ".")
            : stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(separator: ":")
    }
}
