import Foundation
import SignetCrypto
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

/// Everything `signet serve` runs with, validated. Built by ``ConfigurationLoader``.
public struct ServerConfiguration: Sendable {
    public var issuer: String
    public var listenHost = "127.0.0.1"
    public var listenPort: UInt16 = 8080
    /// `sqlite:PATH` or `postgres://...`.
    public var database = "sqlite:signet.db"
    /// Where the key-encryption key lives when `SIGNET_KEK` does not give it.
    public var keyEncryptionKeyFile = "signet.kek"
    /// Where `/metrics` is served instead of the main listener (`metrics.listen`), so it need
    /// not be public; `nil`: on the main listener.
    public var metricsListen: (host: String, port: UInt16)?
    /// Whether token-endpoint DPoP proofs must carry a nonce Signet issued (`DPoP-Nonce`,
    /// RFC 9449 §8), which bounds how long a proof made in advance stays usable.
    public var dpopNonce = false
    /// How many DPoP proofs one account may present at this instance's resources within a
    /// proof's window (a minute) (`dpop.proofs_per_minute`); past it, `rate_limited`. Each is
    /// held that long to refuse its replay (``ProofReplayCache``).
    public var dpopProofsPerMinute = 6_000
    public var rpID = "localhost"
    public var rpName = "Signet"
    /// Web origins as configured; ``allowedOrigins`` adds the Android ones.
    public var webOrigins: [String] = []
    /// Origins of other sites that use this RP ID (WebAuthn L3 §5.11, related origin requests):
    /// served at `/.well-known/webauthn` and accepted in `clientDataJSON.origin`.
    public var relatedOrigins: [String] = []
    /// The SSO session's lifetimes, in seconds: since its last request, and since its sign-in.
    public var webSessionIdle = 3 * 86400
    public var webSessionLifetime = 30 * 86400
    /// Seconds an authorization code lives (RFC 6749 §4.1.2: short, at most 10 minutes).
    public var authorizationCodeLifetime = 60
    /// Whether every client's authorization requests must come through `/oauth/par` (RFC 9126
    /// §5, discovery's `require_pushed_authorization_requests`); a client may be required to on
    /// its own (``ClientConfiguration/requirePushedRequests``).
    public var requirePushedRequests = false
    public var clients: [ClientConfiguration] = []
    public var audiences: [String] = []
    /// Whether people make their own accounts (`signup`): by passkey (`/passkey/register`, the
    /// sign-up page, `prompt=create`) and by email code where `passwordless.signup` allows it.
    /// `false`: only operators make accounts (`POST /api/v2/users`, `signet admin users add`).
    public var signUp = true
    /// Whether a code for an address without an account makes one (`passwordless.signup`, and
    /// sign-up open at all).
    public var codeSignUp: Bool { signUp && passwordless.signup }
    /// The mail domains whose addresses make their own accounts (`signup_domains`, lower case,
    /// each matched whole); empty: any. With any, an account starts with an email code, which
    /// proves the mailbox, and its passkey is added after: a passkey sign-up would make an
    /// account for an address nobody has shown to be theirs.
    public var signUpDomains: [String] = []
    /// SHA-256 of the static bearer token an identity provider provisions accounts with over
    /// SCIM (`scim.token_hash`); `nil`: only Management API tokens are taken there.
    public var scimTokenHash: [UInt8]?
    /// Whether an address the identity provider sets over SCIM counts as verified
    /// (`scim.email_verified`): its directory owns the company's mailboxes. Off, the first email
    /// code verifies it, as for an operator's account.
    public var scimEmailVerified = false
    /// The hosted pages' logo and colours (`branding`).
    public var branding = Branding()
    /// Whether `email` (normalized, ``Ceremonies/emailAddress(_:member:)``) is at a domain of
    /// ``signUpDomains``, or there are none.
    public func signUpDomainAllows(_ email: String) -> Bool {
        guard !signUpDomains.isEmpty else { return true }
        guard let at = email.lastIndex(of: "@") else { return false }
        return signUpDomains.contains(String(email[email.index(after: at)...]))
    }
    public var accessTokenLifetime = 900
    /// Seconds an access token for one API lives, by its audience, where shorter than
    /// ``accessTokenLifetime`` (`tokens.api_token_ttl`; Auth0's `token_lifetime` of a resource
    /// server): a payments API's five minutes beside a profile API's hour. None by default.
    public var apiTokenLifetimes: [String: Int] = [:]
    /// Seconds an access token for `audience` lives (RFC 9068 `exp`, RFC 6749 §5.1 `expires_in`):
    /// its API's own lifetime, else the deployment's. Never longer than ``accessTokenLifetime``,
    /// which bounds how long an ended session's tokens are remembered.
    public func accessTokenLifetime(for audience: String) -> Int {
        apiTokenLifetimes.isEmpty ? accessTokenLifetime : min(apiTokenLifetimes[audience] ?? accessTokenLifetime, accessTokenLifetime)
    }
    /// Claims copied from each account's `app_metadata` into its access and ID tokens
    /// (`tokens.app_metadata_claims`): none by default, and then no sign-in reads the metadata.
    public var appMetadataClaims: [MetadataClaim] = []
    /// The claim that lists an account's roles by name in its access and ID tokens and at
    /// `/userinfo` (`tokens.roles_claim`, a URI); none by default, and then no sign-in reads roles
    /// for it.
    public var rolesClaim: String?
    /// Each API's permissions, by its audience, with their descriptions (`tokens.permissions`):
    /// what roles may grant, and the APIs whose access tokens carry a `permissions` claim. None
    /// by default, and then no sign-in reads roles.
    public var apiPermissions: [String: [String: String]] = [:]
    public var idTokenLifetime = 3600
    /// The longest lifetime any configuration gives a signed token (access, ID and action
    /// tokens; `tokens.access_token_ttl` and `id_token_ttl` at most): a retired signing key is
    /// destroyed only this long after it stopped signing, so that no instance, however it is
    /// configured, still publishes it for tokens that live.
    public static let longestTokenLifetime = 86_400
    public var refreshTokenLifetime = 30 * 86400
    /// Seconds a refresh-token family lives at most from its sign-in, however often it rotates.
    public var refreshTokenAbsoluteLifetime = 90 * 86400
    /// Seconds after a rotation in which the rotated refresh token may be shown again, when what
    /// the rotation gave was never used, because its answer was lost (a phone that went out of
    /// coverage mid-refresh): it rotates again and the lost token is withdrawn
    /// (`tokens.refresh_token_retry_window`, up to 300), as the FAPI 2.0 Security Profile asks of a
    /// server that rotates. 0, the default, is strict rotation (RFC 9700 §4.14): any second
    /// showing of a rotated token revokes its family.
    public var refreshTokenRetryWindow = 0
    /// Days after which the token-signing key is replaced by a new one on its own
    /// (`tokens.signing_key_rotation_days`; 0: only by `signet keys rotate`).
    public var signingKeyRotationDays = 90
    /// Seconds since the sign-in within which a token counts as a fresh passkey check for a
    /// sensitive operation (RFC 9470 `max_age`).
    public var stepUpMaxAge = 300
    public var rateLimits = RateLimits()
    /// Days audit rows are kept.
    public var auditRetentionDays = 90
    /// Days at most that an active log stream keeps events its endpoint has not taken from the
    /// purge (when that is longer than ``auditRetentionDays``): an endpoint down longer loses
    /// the older ones, so that a stream nobody mends cannot fill the disk.
    public var logStreamHoldDays = 30
    /// SQLite: the folder the database is copied to on its own (`backup.directory`; `nil`: no
    /// scheduled copies), every ``backupIntervalHours``, the newest ``backupKeep`` kept.
    public var backupDirectory: String?
    public var backupIntervalHours = 24
    public var backupKeep = 7
    /// Whether each scheduled copy is sealed under the key-encryption key (`backup.seal`,
    /// AES-256-GCM: ``SealedBackup``), as it holds every account: on unless turned off.
    public var backupSeal = true
    /// SQLite: `full` syncs the WAL inside every commit, before the answer; `normal` leaves it to
    /// checkpoints (a power cut may lose the last commits). PostgreSQL keeps its own settings.
    public var durability = "full"
    /// Proxies whose `Forwarded` / `X-Forwarded-For` name the client.
    public var trustedProxies: [CIDR] = []
    /// Seconds an auth session (and the options' timeout) lasts.
    public var sessionTimeout = 300
    public var userVerification = "preferred"
    public var attestation = "none"
    public var residentKey = "required"
    public var algorithms: [COSEAlgorithm] = [.es256, .eddsa, .rs256]
    public var trustAnchorFiles: [String] = []
    /// The FIDO Metadata Service's BLOB (MDS 3.0 §3.1.7) and the PEM root it is signed under
    /// (`attestation_metadata.blob_file`, `.root_file`): both or neither. With them, an
    /// attestation chaining to a root the BLOB lists for its AAGUID is trusted, and a model the
    /// BLOB reports compromised is refused.
    public var attestationMetadataFile: String?
    public var attestationMetadataRootFile: String?
    /// Where each server fetches the BLOB itself into `attestationMetadataFile`
    /// (`attestation_metadata.url`, MDS 3.0 §3.2): https, or http to a loopback address. At a
    /// start without the file, and then daily.
    public var attestationMetadataURL: String?
    /// Authenticator models by AAGUID (lower-case UUID text): when `allowedAAGUIDs` is not
    /// empty only those may register or be used; `deniedAAGUIDs` never may. An authenticator
    /// that does not tell (attestation `none`, some platforms) reports the all-zero AAGUID.
    public var allowedAAGUIDs: Set<String> = []
    public var deniedAAGUIDs: Set<String> = []

    /// Whether the AAGUID policy admits `aaguid` (lower-case UUID text).
    public func allowsAuthenticator(_ aaguid: String) -> Bool {
        (allowedAAGUIDs.isEmpty || allowedAAGUIDs.contains(aaguid)) && (deniedAAGUIDs.isEmpty || !deniedAAGUIDs.contains(aaguid))
    }
    /// HTTP worker threads; `nil` picks ``workerThreads``'s default.
    public var threads: Int?
    public var maxBodyBytes = 64 * 1024
    public var requestDeadline = 30.0
    public var idleTimeout = 15
    public var maxConnections = 4096
    /// Connections one address may hold: 1/32 of the pool, so a single abusive address cannot
    /// take more than a small share (measured in the tests). Behind trusted proxies every
    /// connection comes from a proxy, so the cap is then the whole pool unless set.
    public var maxConnectionsPerIP = 128

    /// `threads`, or by default eight per processor with PostgreSQL (a worker waits for each
    /// query's round trip: while one waits, others run; and sign-ins that wait together commit in
    /// one statement, so more waiting workers make larger batches) and one per processor, at
    /// least two, with SQLite. A durable SQLite write's wait for its sync holds the answer, not the worker (the
    /// connection is suspended until the sync, ``HTTPHandler/handleHeld(_:)``), so more threads
    /// would only take turns at the store's lock.
    public var workerThreads: Int {
        let processors = ProcessInfo.processInfo.activeProcessorCount
        return threads ?? (database.hasPrefix("sqlite:") ? max(2, processors) : 8 * processors)
    }
    /// The largest request line and headers (`limits.header_bytes`; 431 `headers_too_large` past it).
    public var connectionMemoryBytes = 16 * 1024
    public var accessLog = true
    /// Seconds an action challenge lives, and an action token.
    public var actionChallengeLifetime = 120
    public var actionTokenLifetime = 300
    /// The `aud` of action tokens; the issuer + "/actions" when unset.
    public var actionAudience: String?
    /// Action challenges an account may ask for per minute.
    public var actionRateLimit = 10
    /// Live device keys per account.
    public var maxDeviceKeys = 10
    /// True when no configuration file was given.
    public var developmentMode = false
    public var passwordless = PasswordlessSettings()
    public var email = EmailSettings()
    /// Seconds what a recovery added is held (DESIGN.md, "Recovery").
    public var recoveryHold = 86400

    public init(issuer: String) { self.issuer = issuer }

    /// The origin `android:apk-key-hash:<base64url(sha256(cert))>` for a certificate fingerprint
    /// (WebAuthn on Android identifies an app this way).
    public static func androidOrigin(fingerprint: [UInt8]) -> String { "android:apk-key-hash:" + Base64URL.encode(fingerprint) }

    /// Web origins plus one Android origin per configured fingerprint, matched exactly.
    public var allowedOrigins: Set<String> {
        var origins = Set(webOrigins).union(relatedOrigins)
        for client in clients {
            for app in client.androidApps {
                for fingerprint in app.fingerprints { origins.insert(Self.androidOrigin(fingerprint: fingerprint)) }
            }
        }
        return origins
    }

    public func client(_ id: String) -> ClientConfiguration? { clients.first { $0.id == id } }

    /// The Management API's audience (Auth0's `{issuer}/api/v2/`): only `client_credentials`
    /// tokens carry it.
    public var managementAudience: String { issuer + "/api/v2/" }

    /// Signet's own audience: the account API (`/me`, `/actions`) accepts only tokens for it.
    public var accountAudience: String { issuer + "/me" }

    /// The audiences `client`'s tokens may carry: Signet's own, then the client's (or the
    /// deployment's) resource servers.
    public func audiences(of client: ClientConfiguration) -> [String] { [accountAudience] + (client.audiences ?? audiences) }

    /// The development configuration: everything on this machine, one public client `dev`.
    public static func development(host: String = "127.0.0.1", port: UInt16 = 8080, database: String? = nil) -> ServerConfiguration {
        var c = ServerConfiguration(issuer: "http://localhost:\(port)")
        c.listenHost = host
        c.listenPort = port
        c.database = database ?? "sqlite:signet.db"
        c.webOrigins = ["http://localhost:\(port)"]
        var dev = ClientConfiguration(id: "dev", grants: GrantNames.all)
        dev.anyLoopbackRedirect = true
        dev.postLogoutRedirectURIs = ["http://localhost:\(port)/login"]
        c.clients = [dev]
        c.audiences = ["http://localhost:\(port)/api"]
        c.email.outboxDirectory = "signet-mail"
        c.developmentMode = true
        return c
    }
}

/// Grant names used in client configuration.
public enum GrantNames {
    public static let webauthn = "urn:okta:params:oauth:grant-type:webauthn"
    public static let refreshToken = "refresh_token"
    /// Auth0's email-code grant.
    public static let passwordlessOTP = "http://auth0.com/oauth/grant-type/passwordless/otp"
    public static let recoveryCode = "urn:signet:params:oauth:grant-type:recovery-code"
    /// The user-facing grants (a development client has all of them).
    public static let all = [webauthn, refreshToken, passwordlessOTP, recoveryCode, deviceCode, authorizationCode]
    /// The browser flow (RFC 6749 §4.1, OIDC Core §3.1).
    public static let authorizationCode = "authorization_code"
    /// A new device's sign-in, approved on one already signed in (RFC 8628 §3.4).
    public static let deviceCode = "urn:ietf:params:oauth:grant-type:device_code"
    /// A confidential machine client's own token (RFC 6749 §4.4), for the Management API.
    public static let clientCredentials = "client_credentials"
    /// Every grant a client may be configured with.
    public static let known = all + [clientCredentials]
}

/// A configuration problem, stated so that an operator can fix it.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Parses a keytool-style fingerprint (`AB:CD:...`, or plain hex) into its 32 bytes.
public func parseFingerprint(_ text: String) -> [UInt8]? {
    let hex = text.replacingOccurrences(of: ":", with: "").replacingOccurrences(of: " ", with: "")
    guard hex.count == 64 else { return nil }
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
        bytes.append(byte)
        index = next
    }
    return bytes
}
