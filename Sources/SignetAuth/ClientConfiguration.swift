public import SignetWebAuthn

/// An app allowed to use Signet: its OAuth client and, for native apps, the platform identity
/// that the association files and Android origins are made from.
public struct ClientConfiguration: Sendable, Equatable {
    public struct IOSApp: Sendable, Equatable {
        public var teamID: String
        public var bundleID: String
        /// Whether the app opens Signet's enrollment links (`{issuer}/enroll#…`) as universal
        /// links (`enrollment_links`): apple-app-site-association lists `/enroll` for it under
        /// `applinks`, so the link opens the app's onboarding rather than the page.
        public var enrollmentLinks: Bool
        public init(teamID: String, bundleID: String, enrollmentLinks: Bool = false) {
            self.teamID = teamID
            self.bundleID = bundleID
            self.enrollmentLinks = enrollmentLinks
        }
        /// `TEAMID.bundle.id`, as apple-app-site-association lists it.
        public var appID: String { "\(teamID).\(bundleID)" }
    }

    public struct AndroidApp: Sendable, Equatable {
        public var packageName: String
        /// SHA-256 fingerprints of the signing certificates, as 32 bytes each.
        public var fingerprints: [[UInt8]]
        public init(packageName: String, fingerprints: [[UInt8]]) {
            self.packageName = packageName
            self.fingerprints = fingerprints
        }
    }

    public var id: String
    public var grants: [String]
    public var iosApps: [IOSApp] = []
    public var androidApps: [AndroidApp] = []
    /// The audiences (RFC 8707 resource indicators) this client's access tokens may carry besides
    /// Signet's own `{issuer}/me`; `nil` means the deployment's `audiences`.
    public var audiences: [String]?
    /// A confidential client's secret, as its SHA-256 (RFC 6749 §2.3.1, `client_secret_basic`);
    /// `nil` for a public client. A secret is 32 random bytes, so a plain hash suffices.
    public var secretHash: [UInt8]?
    /// What an administrator calls the client (`signet admin clients list`).
    public var name: String?
    /// The scopes a machine client's `client_credentials` tokens may carry (`read:users ...`).
    public var scopes: [String] = []
    /// Where the browser flow may send the user back (exact match; a loopback URI registered
    /// without a port matches any port, RFC 8252 §7.3).
    public var redirectURIs: [String] = []
    /// Where `/logout` may send the user afterwards (OIDC RP-Initiated Logout §3, exact match).
    public var postLogoutRedirectURIs: [String] = []
    /// Web origins whose scripts may call the JSON API (CORS); none by default.
    public var allowedOrigins: [String] = []
    /// Development: any `http` loopback redirect URI, on any port and path.
    public var anyLoopbackRedirect = false
    /// DPoP (RFC 9449) at the token endpoint: `allowed` (a proof binds the tokens) or
    /// `required` (a grant without one is refused).
    public var dpop = "allowed"
    /// `device_key`: a refresh needs a DPoP proof by one of the account's enrolled device keys.
    public var refreshProof: String?
    /// Where the client hears that a session it signed in to through the browser ended
    /// (OpenID Connect Back-Channel Logout 1.0 §2.2, `backchannel_logout_uri`): `https`, or
    /// `http` to a loopback address; never with a fragment.
    public var backchannelLogoutURI: String?
    /// The public keys a client that authenticates with `private_key_jwt` (OIDC Core §9) signs
    /// its assertions with, as a JWK Set's keys; empty for every other client. A client has
    /// keys or a secret, never both.
    public var jwks: [JSONObject] = []
    /// Where a `private_key_jwt` client publishes its keys instead (OIDC Dynamic Client
    /// Registration §2, `jwks_uri`): a JWK Set fetched, kept a while, and fetched again when an
    /// assertion names a key it lacks, so the client rotates its keys on its own. `https`, or
    /// `http` to a loopback address. A client has `jwks`, `jwks_uri` or a secret.
    public var jwksURI: String?
    /// Whether the client's authorization requests must come through the pushed authorization
    /// request endpoint (RFC 9126 §6, `require_pushed_authorization_requests`).
    public var requirePushedRequests = false
    /// The roles, by name, an account needs one of for any token of this client
    /// (``Ceremonies/requireRole(userID:client:)``): an admin console for administrators only.
    /// `nil`: any account.
    public var requiredRoles: [String]?
    /// The least a sign-in must reach for this client's tokens: `phr` (a passkey) or `phrh` (a
    /// hardware-bound passkey), RFC 9470's classes; `nil`: any sign-in (codes too).
    public var minimumACR: String?
    /// Its sessions' lifetimes in seconds, idle (`refresh_token_ttl`) and absolute
    /// (`refresh_token_absolute_ttl`), where shorter than the deployment's; `nil`: the deployment's.
    public var refreshTokenLifetime: Int?
    public var refreshTokenAbsoluteLifetime: Int?
    /// Its own `refresh_token_retry_window` (seconds, 0 to 300); `nil`: the deployment's
    /// ``ServerConfiguration/refreshTokenRetryWindow``.
    public var refreshTokenRetryWindow: Int?

    /// Whether the client authenticates (RFC 6749 §2.1), with a secret or with its keys.
    public var isConfidential: Bool { secretHash != nil || usesKeys }
    /// Whether it authenticates with `private_key_jwt`: keys registered, or published at a URI.
    public var usesKeys: Bool { !jwks.isEmpty || jwksURI != nil }
    /// How the client authenticates at the token endpoint (OIDC Dynamic Client Registration
    /// §2, `token_endpoint_auth_method`): `private_key_jwt`, `client_secret_basic` (or `_post`),
    /// or `none`.
    public var authenticationMethod: String { usesKeys ? "private_key_jwt" : secretHash != nil ? "client_secret_basic" : "none" }

    public init(id: String, grants: [String], iosApps: [IOSApp] = [], androidApps: [AndroidApp] = [], audiences: [String]? = nil, secretHash: [UInt8]? = nil) {
        self.id = id
        self.grants = grants
        self.iosApps = iosApps
        self.androidApps = androidApps
        self.audiences = audiences
        self.secretHash = secretHash
    }
}
