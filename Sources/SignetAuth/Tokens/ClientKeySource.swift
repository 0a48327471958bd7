public import SignetWebAuthn

/// The keys of clients that publish them at a `jwks_uri` (OIDC Dynamic Client Registration §2)
/// rather than registering them. The core does no I/O: the server's edge fetches and keeps the
/// sets (SignetServer's `ClientKeyCache`), and a verifier asks again, with `refresh`, when an
/// assertion's key is not in the set it has (OIDC Core §10.1.1: a new `kid` means the client
/// rotated its keys).
public protocol ClientKeySource: Sendable {
    /// The keys published at `uri` for `clientID`, each checked as a registration's are
    /// (``JWKSet/keys(_:)``). With `refresh`, a set fetched anew, unless one was fetched
    /// moments ago (so that assertions naming unknown keys cannot make every request a fetch).
    func keys(clientID: String, uri: String, refresh: Bool) throws(ClientKeyFailure) -> [JSONObject]
    /// Fetches each client's set at its `uri` ahead of its first assertion, off the caller's
    /// thread, unless one from there is kept; a failure leaves nothing behind, so the first
    /// assertion fetches for itself as it would have.
    func prefetch(_ clients: [(clientID: String, uri: String)])
}

extension ClientKeySource {
    public func prefetch(_ clients: [(clientID: String, uri: String)]) {}
}

/// Why a client's published keys could not be had: the fetch failed and no set fetched before
/// is still young enough to use.
public struct ClientKeyFailure: Error, Sendable {
    public let detail: String
    public init(_ detail: String) { self.detail = detail }
}

/// Where nothing is fetched (the command line's ceremonies, which verify no assertion).
struct NoClientKeySource: ClientKeySource {
    func keys(clientID: String, uri: String, refresh: Bool) throws(ClientKeyFailure) -> [JSONObject] {
        throw ClientKeyFailure("this process fetches no client keys")
    }
}
