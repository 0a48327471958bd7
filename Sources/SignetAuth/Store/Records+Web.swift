// The browser's rows (DESIGN.md, "The web"): SSO sessions and authorization codes.

/// A browser's sign-in (the SSO session): named by a cookie whose secret is stored only as its
/// SHA-256 (`hash`); `id` is the public, time-ordered name the account page shows and revokes.
public struct WebSessionRow: Sendable, Equatable {
    public var hash: [UInt8]
    public var id: String
    public var userID: String
    /// The last credential check, in seconds (OIDC `auth_time`), and how (RFC 8176 `amr`).
    public var authTime: Int64
    public var amr: [String]
    /// The passkey (base64url ID) that last signed in or stepped up, if any: revoking it ends
    /// the session.
    public var credential: String?
    /// Milliseconds: the start, the last request seen (for the idle lifetime), the absolute end.
    public var createdAt: Int64
    public var lastSeenAt: Int64
    public var expiresAt: Int64
    public var revokedAt: Int64?
    public var userAgent: String?
    public var remote: String
    public init(hash: [UInt8], id: String, userID: String, authTime: Int64, amr: [String], credential: String?, createdAt: Int64, lastSeenAt: Int64,
                expiresAt: Int64, revokedAt: Int64? = nil, userAgent: String?, remote: String) {
        self.hash = hash
        self.id = id
        self.userID = userID
        self.authTime = authTime
        self.amr = amr
        self.credential = credential
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.userAgent = userAgent
        self.remote = remote
    }
}

/// An authorization code (RFC 6749 §4.1.2), stored as its SHA-256, bound to what the token
/// request must repeat: the client, the redirect URI, the PKCE challenge (RFC 7636 §4.4) and the
/// nonce (OIDC Core §3.1.2.1). `family` is the `sid` its tokens get, so a second use can revoke
/// them (RFC 6749 §4.1.2, "SHOULD revoke").
public struct AuthorizationCodeRow: Sendable, Equatable {
    public var hash: [UInt8]
    public var clientID: String
    public var redirectURI: String
    /// base64url(SHA-256(verifier)) (S256); `nil` for a confidential client that sent none.
    public var codeChallenge: String?
    public var nonce: String?
    public var scope: String
    public var audience: String?
    public var userID: String
    public var authTime: Int64
    public var amr: [String]
    public var credential: String?
    public var family: String
    public var createdAt: Int64
    public var expiresAt: Int64
    /// The JWK thumbprint of the DPoP key the code is bound to (RFC 9449 §10 `dpop_jkt`): only a
    /// token request with a proof by that key may use it.
    public var dpopJKT: String?
    public init(hash: [UInt8], clientID: String, redirectURI: String, codeChallenge: String?, nonce: String?, scope: String, audience: String?, userID: String,
                authTime: Int64, amr: [String], credential: String?, family: String, createdAt: Int64, expiresAt: Int64, dpopJKT: String? = nil) {
        self.hash = hash
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.nonce = nonce
        self.scope = scope
        self.audience = audience
        self.userID = userID
        self.authTime = authTime
        self.amr = amr
        self.credential = credential
        self.family = family
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.dpopJKT = dpopJKT
    }
}

