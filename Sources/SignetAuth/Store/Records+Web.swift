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
    /// The browser's SSO session the code was issued to (``WebSessionRow/id``).
    public var webSession: String?
    public init(hash: [UInt8], clientID: String, redirectURI: String, codeChallenge: String?, nonce: String?, scope: String, audience: String?, userID: String,
                authTime: Int64, amr: [String], credential: String?, family: String, createdAt: Int64, expiresAt: Int64, dpopJKT: String? = nil,
                webSession: String? = nil) {
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
        self.webSession = webSession
    }
}


/// A client's wish to hear when a session it signed in to ends (OpenID Connect Back-Channel
/// Logout 1.0 §2.3, "Remembering Logged-In RPs"): written when an authorization code of a client
/// with a `backchannel_logout_uri` is exchanged, and taken when that session ends, in the same
/// transaction as the logout token's place in the outbox (``StoreWrite/logoutSubscription(_:)``).
public struct LogoutSubscriptionRow: Sendable, Equatable {
    /// The session's ID, the `sid` of its tokens (its refresh-token family).
    public var sid: String
    public var clientID: String
    public var userID: String
    /// The passkey that signed the browser in: revoking it ends the session.
    public var credential: [UInt8]?
    /// The browser's SSO session (``WebSessionRow/id``) the code came from: ending it ends this.
    public var webSession: String?
    /// Whether the session holds a refresh token (`offline_access`): one that outlives the
    /// browser's sign-in (Back-Channel Logout §2.7), so ending the browser's session leaves it.
    public var offline: Bool
    /// Milliseconds: the session's start (its ID's time), and when it ends by itself.
    public var createdAt: Int64
    public var expiresAt: Int64
    public init(sid: String, clientID: String, userID: String, credential: [UInt8]?, webSession: String?, offline: Bool, createdAt: Int64, expiresAt: Int64) {
        self.sid = sid
        self.clientID = clientID
        self.userID = userID
        self.credential = credential
        self.webSession = webSession
        self.offline = offline
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// What an outbox row of kind `backchannel_logout` holds: the account and the session a logout
/// token is to name. The token itself is signed when it is sent, so its `iat` and `exp` are those
/// of the delivery (Back-Channel Logout §2.4).
public struct LogoutNotice: Sendable, Equatable {
    public var subject: String
    public var sid: String
    public init(subject: String, sid: String) {
        self.subject = subject
        self.sid = sid
    }

    /// `subject`, a line feed, `sid`: neither an account ID nor a session ID holds a line feed.
    public var encoded: [UInt8] { Array(subject.utf8) + [0x0a] + Array(sid.utf8) }

    public init?(encoded: [UInt8]) {
        guard let n = encoded.firstIndex(of: 0x0a), n > 0, n + 1 < encoded.count,
              let subject = String(validating: encoded[..<n], as: UTF8.self), let sid = String(validating: encoded[(n + 1)...], as: UTF8.self)
        else { return nil }
        self.init(subject: subject, sid: sid)
    }
}
