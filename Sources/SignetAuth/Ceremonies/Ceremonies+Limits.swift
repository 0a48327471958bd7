import SignetAPI
import SignetCrypto

/// The rate-limit buckets (DESIGN.md, "Security rules"), each counted in the database so that
/// every instance shares one count. A route declares the per-address ones it is counted in
/// (SignetServer's `Needs`); the ceremonies count the per-identifier ones.
public enum Bucket: String, Sendable {
    case signUpPerIdentifier = "sign_up_identifier"
    case signUpPerIP = "sign_up_ip"
    case failuresPerIP = "failures_ip"
    case auditFailuresPerIP = "audit_failures_ip"
    case passwordlessPerIP = "passwordless_ip"
    /// Email codes sent to one address.
    case codesPerIdentifier = "codes_identifier"
    /// Recovery-code tries for one address.
    case recoveryAttempts = "recovery_attempts"
    /// Approvals tried with a user code that matched no pending device sign-in, per account.
    case userCodeGuesses = "user_code_guesses"
    /// Device sign-ins started from one client address.
    case deviceCodesPerIP = "device_codes_ip"
}

extension Ceremonies {
    /// Counts one event for `key` in `bucket`; `nil` while within `rate`, else the seconds until
    /// the window ends. Keys are stored as their SHA-256, never as the address or email itself.
    func count(_ bucket: Bucket, _ rate: RateLimit, key: String) throws -> Int? {
        guard configuration.rateLimits.enabled else { return nil }
        return try attempts(bucket, rate, key: key)
    }

    /// Like ``count(_:_:key:)``, but always on: an attempt budget that guards a secret (codes
    /// per address, recovery-code tries) is not a throughput limit, so
    /// `rate_limits.enabled = false` leaves it in force.
    func attempts(_ bucket: Bucket, _ rate: RateLimit, key: String) throws -> Int? {
        let now = nowMillis
        let window = Int64(rate.window) * 1000
        let start = now - now % window
        let n = try store.count(bucket: bucket.rawValue, key: Digest.sha256.hash(Array(key.utf8)), windowStart: start)
        guard n > rate.limit else { return nil }
        return Int((start + window - now + 999) / 1000)
    }

    /// Counts the request's address in `bucket` and refuses with `rate_limited` past its limit:
    /// the middleware of a route that declares the bucket.
    public func limit(_ bucket: Bucket, context: RequestContext) throws {
        // Off for load tests: then not even the address is looked at.
        guard configuration.rateLimits.enabled else { return }
        try limit(bucket, rate(bucket), key: addressKey(context))
    }

    /// Each bucket's limit and window, from the configuration where it sets them.
    func rate(_ bucket: Bucket) -> RateLimit {
        let rates = configuration.rateLimits
        return switch bucket {
        case .signUpPerIdentifier: rates.signUpPerIdentifier
        case .signUpPerIP: rates.signUpPerIP
        case .failuresPerIP: rates.failuresPerIP
        case .auditFailuresPerIP: rates.auditFailuresPerIP
        case .passwordlessPerIP: rates.passwordlessPerIP
        case .codesPerIdentifier: RateLimit(limit: configuration.passwordless.sendsPerHour, window: 3600)
        case .recoveryAttempts: RateLimit(limit: configuration.passwordless.maxAttempts, window: 3600)
        case .userCodeGuesses: RateLimit(limit: 10, window: 3600)
        case .deviceCodesPerIP: RateLimit(limit: 30, window: 3600)
        }
    }

    /// Refuses with `rate_limited` past the bucket's limit.
    func limit(_ bucket: Bucket, _ rate: RateLimit, key: String) throws {
        if let wait = try count(bucket, rate, key: key) { throw Self.rateLimited(wait, "\(bucket.rawValue): more than \(rate.limit) in \(rate.window) s") }
    }

    /// What the request's per-address limits count it under (``CIDR/limitKey(_:ipv6Prefix:)``).
    func addressKey(_ context: RequestContext) -> String {
        CIDR.limitKey(context.remoteAddress, ipv6Prefix: configuration.rateLimits.ipv6Prefix)
    }

    static func rateLimited(_ seconds: Int, _ detail: String) -> AuthError {
        var error = AuthError(.rateLimited, detail)
        error.retryAfter = max(1, seconds)
        return error
    }

    /// A failed ceremony from the request's address: counted, and past the address's budget
    /// answered as `rate_limited` instead of its reason. Only failures count, so a successful
    /// sign-in is never throttled per address.
    func failed(_ failure: AuthError, context: RequestContext) -> AuthError {
        guard failure.reason != .databaseUnavailable, failure.reason != .storageFull, failure.reason != .rateLimited,
              let wait = try? count(.failuresPerIP, configuration.rateLimits.failuresPerIP, key: addressKey(context))
        else { return failure }
        return Self.rateLimited(wait, "failures from this address: more than \(configuration.rateLimits.failuresPerIP.limit); last was \(failure)")
    }
}
