import Foundation
public import SignetWebAuthn

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
    /// The Public Suffix List the RP ID and the related origins were checked against, and where
    /// it was read (`relying_party.public_suffix_list`, by default Debian's when installed);
    /// `nil`: none was found, so only a top-level domain is known to be a public suffix.
    public var publicSuffixList: (list: PublicSuffixList, path: String)?
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
    /// Live passkeys per account that its owner (or an enrolment link) may add; an operator's
    /// import keeps every one it carries.
    public var maxPasskeys = 50
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
