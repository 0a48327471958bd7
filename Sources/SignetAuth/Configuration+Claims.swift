/// One claim of `tokens.app_metadata_claims`: the member `key` of an account's `app_metadata`
/// (what operators set, never the owner's `user_metadata`), put into its access and ID tokens
/// as the claim `claim`, a URI so that it never collides with a registered or another party's
/// claim (OIDC Core §5.1.2, RFC 7519 §4.2). An account without the member gets no such claim.
public struct MetadataClaim: Sendable, Equatable {
    public var claim: String
    public var key: String
    public init(claim: String, key: String) {
        self.claim = claim
        self.key = key
    }

    /// At most this many claims: each is copied into every token.
    public static let maximum = 20
    /// A member larger than this, as JSON, goes into no token (``Ceremonies/operatorClaims(userID:)``).
    public static let maxValueBytes = 1024
    /// The claims' names and values together, as JSON, at most this: members after that go
    /// into no token.
    public static let maxTotalBytes = 4096

    /// Why `claim` and `key` cannot be one (`nil`: they can): the claim as ``problem(claim:)``
    /// has it; the key 1 to 100 bytes.
    public static func problem(claim: String, key: String) -> String? {
        if let problem = problem(claim: claim) { return problem }
        guard (1...100).contains(key.utf8.count) else { return "the app_metadata key of \(claim) must be 1 to 100 bytes" }
        return nil
    }

    /// Why `claim` cannot name an operator's claim (`nil`: it can): it must be an `https` or
    /// `http` URI with a host, up to 200 bytes of visible ASCII.
    public static func problem(claim: String) -> String? {
        guard claim.utf8.count <= 200, let scheme = claim.split(separator: ":", maxSplits: 1).first, ["https", "http"].contains(scheme),
              claim.hasPrefix(scheme + "://"), let host = claim.dropFirst(scheme.count + 3).split(separator: "/", omittingEmptySubsequences: false).first,
              !host.isEmpty, claim.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            return "the claim \"\(claim.prefix(60))\" must be a URI such as https://example.com/roles (a name of your own, OIDC Core §5.1.2)"
        }
        return nil
    }
}
