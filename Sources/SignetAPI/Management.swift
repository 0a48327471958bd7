// The Management API's bodies (DESIGN.md, "Management API"): the members and names of Auth0's
// Management API v2 for the calls Signet answers, so a script written for Auth0 reads them as
// is. Absent members are left out, as Auth0 does; times are ISO 8601 strings in UTC.

/// A user (`GET /api/v2/users/{id}`).
public struct ManagementUser: Codable, Sendable, Equatable {
    public var user_id: String
    public var email: String
    public var email_verified: Bool
    public var name: String?
    public var created_at: String
    public var updated_at: String
    public var last_login: String?
    public var logins_count: Int64
    public var blocked: Bool
    /// Auth0's metadata objects; absent when empty.
    public var app_metadata: JSONDocument?
    public var user_metadata: JSONDocument?
    public init(user_id: String, email: String, email_verified: Bool, name: String?, created_at: String, updated_at: String, last_login: String?,
                logins_count: Int64, blocked: Bool, app_metadata: JSONDocument? = nil, user_metadata: JSONDocument? = nil) {
        self.app_metadata = app_metadata
        self.user_metadata = user_metadata
        self.user_id = user_id
        self.email = email
        self.email_verified = email_verified
        self.name = name
        self.created_at = created_at
        self.updated_at = updated_at
        self.last_login = last_login
        self.logins_count = logins_count
        self.blocked = blocked
    }
}

/// `GET /api/v2/users?include_totals=true`: one page and the count of all matches.
public struct ManagementUserPage: Codable, Sendable, Equatable {
    public var start: Int
    public var limit: Int
    public var length: Int
    public var total: Int
    public var users: [ManagementUser]
    public init(start: Int, limit: Int, length: Int, total: Int, users: [ManagementUser]) {
        self.start = start
        self.limit = limit
        self.length = length
        self.total = total
        self.users = users
    }
}

/// `GET /api/v2/users/{id}/logs?include_totals=true`: a page of a user's log events, with
/// where it starts and how many there are in all (Auth0's form).
public struct ManagementLogPage: Codable, Sendable, Equatable {
    public var start: Int
    public var limit: Int
    public var length: Int
    /// How many events there are in all; nil when not counted.
    public var total: Int?
    public var logs: [LogEvent]
    public init(start: Int, limit: Int, length: Int, total: Int?, logs: [LogEvent]) {
        self.start = start
        self.limit = limit
        self.length = length
        self.total = total
        self.logs = logs
    }
}

/// The body of `POST /api/v2/users`, with Auth0's names: an account for an address, made by an
/// operator (where `signup: false`, the only way one is made). `verify_email` (true unless sent
/// false) mails the address that the account exists and how to sign in; `locale` (OIDC Core §5.1,
/// a BCP 47 tag) picks the language of its messages; `connection` is taken and not used, since
/// Signet keeps one kind of account.
public struct ManagementNewUser: Codable, Sendable, Equatable {
    public var email: String
    public var name: String?
    public var email_verified: Bool?
    public var verify_email: Bool?
    public var locale: String?
    public var connection: String?
    /// Auth0's metadata objects the account starts with.
    public var app_metadata: JSONDocument?
    public var user_metadata: JSONDocument?
    public init(email: String, name: String? = nil, email_verified: Bool? = nil, verify_email: Bool? = nil, locale: String? = nil, connection: String? = nil,
                app_metadata: JSONDocument? = nil, user_metadata: JSONDocument? = nil) {
        self.app_metadata = app_metadata
        self.user_metadata = user_metadata
        self.email = email
        self.name = name
        self.email_verified = email_verified
        self.verify_email = verify_email
        self.locale = locale
        self.connection = connection
    }
}

/// The answer of `POST /api/v2/tickets/passkey-enrollment` (Signet's, shaped as Auth0's tickets):
/// the link that adds a first passkey to the account, and until when it works.
public struct EnrollmentLink: Codable, Sendable, Equatable {
    /// `{issuer}/enroll#…`: the part after `#` never reaches a server's log or a `Referer`.
    public var ticket: String
    public var expires_at: String
    public init(ticket: String, expires_at: String) {
        self.ticket = ticket
        self.expires_at = expires_at
    }
}

/// `PATCH /api/v2/users/{id}` body: only these members may be sent.
public struct ManagementUserPatch: Codable, Sendable, Equatable {
    public var blocked: Bool?
    public var name: String?
    public var email: String?
    public var email_verified: Bool?
    /// Signet's own: whether email codes sign in to the account (the owner's `PUT
    /// /me/email-sign-in`), for an operator helping an owner who turned it off and lost the way back.
    public var email_sign_in: Bool?
    /// Merged into the account's at the top level (a key set to `null` goes).
    public var app_metadata: JSONDocument?
    public var user_metadata: JSONDocument?
    public init(blocked: Bool? = nil, name: String? = nil, email: String? = nil, email_verified: Bool? = nil, email_sign_in: Bool? = nil,
                app_metadata: JSONDocument? = nil, user_metadata: JSONDocument? = nil) {
        self.app_metadata = app_metadata
        self.user_metadata = user_metadata
        self.blocked = blocked
        self.name = name
        self.email = email
        self.email_verified = email_verified
        self.email_sign_in = email_sign_in
    }
}

/// One way the user signs in (`GET /api/v2/users/{id}/authentication-methods`). `type` is
/// Auth0's (`passkey`, `email`, `recovery-code`) or Signet's `device-key`.
public struct AuthenticationMethod: Codable, Sendable, Equatable {
    public var id: String
    public var type: String
    public var name: String?
    public var created_at: String?
    public var last_auth_at: String?
    /// A passkey's authenticator model, a device key's platform.
    public var aaguid: String?
    public var platform: String?
    public var confirmed: Bool?
    /// A passkey's only: false when `allowed_aaguids` / `denied_aaguids` no longer admit its
    /// model, so it cannot sign in. Optional, so that a server without the member still decodes.
    public var allowed: Bool?
    /// A passkey's only: whether its sign-ins are hardware-bound (`acr` `phrh`).
    public var hardware_bound: Bool?
    public init(id: String, type: String, name: String? = nil, created_at: String? = nil, last_auth_at: String? = nil, aaguid: String? = nil,
                platform: String? = nil, confirmed: Bool? = nil, allowed: Bool? = nil, hardware_bound: Bool? = nil) {
        self.id = id
        self.type = type
        self.name = name
        self.created_at = created_at
        self.last_auth_at = last_auth_at
        self.aaguid = aaguid
        self.platform = platform
        self.confirmed = confirmed
        self.allowed = allowed
        self.hardware_bound = hardware_bound
    }
}

/// A session of the user (`GET /api/v2/users/{id}/sessions`, `GET /api/v2/sessions/{id}`), in
/// Auth0's shape: an app's refresh-token family (`kind` "app", its client in `clients`) or a
/// browser's sign-in to the hosted pages (`kind` "browser", with `device` and `idle_expires_at`).
public struct ManagementSession: Codable, Sendable, Equatable {
    public struct Client: Codable, Sendable, Equatable {
        public var client_id: String
        public init(client_id: String) { self.client_id = client_id }
    }
    public struct Method: Codable, Sendable, Equatable {
        public var name: String
        public var timestamp: String
        public init(name: String, timestamp: String) {
            self.name = name
            self.timestamp = timestamp
        }
    }
    public struct Authentication: Codable, Sendable, Equatable {
        public var methods: [Method]
        public init(methods: [Method]) { self.methods = methods }
    }
    /// What the session's first request came with (a browser's sign-in, an app's), and an
    /// app's last (its newest refresh); a browser session keeps only the first.
    public struct Device: Codable, Sendable, Equatable {
        public var initial_user_agent: String?
        public var initial_ip: String?
        public var last_user_agent: String?
        public var last_ip: String?
        public init(initial_user_agent: String?, initial_ip: String?, last_user_agent: String? = nil, last_ip: String? = nil) {
            self.initial_user_agent = initial_user_agent
            self.initial_ip = initial_ip
            self.last_user_agent = last_user_agent
            self.last_ip = last_ip
        }
    }
    public var id: String
    public var user_id: String
    /// Signet's own: "app" or "browser".
    public var kind: String
    public var created_at: String
    public var updated_at: String
    public var authenticated_at: String
    public var last_interacted_at: String
    /// A browser session's end when it is not used again; an app's refresh sets its own.
    public var idle_expires_at: String?
    public var expires_at: String
    public var device: Device?
    public var clients: [Client]
    public var authentication: Authentication
    public init(id: String, user_id: String, kind: String, created_at: String, updated_at: String, authenticated_at: String, last_interacted_at: String,
                idle_expires_at: String? = nil, expires_at: String, device: Device? = nil, clients: [Client], authentication: Authentication) {
        self.id = id
        self.user_id = user_id
        self.kind = kind
        self.created_at = created_at
        self.updated_at = updated_at
        self.authenticated_at = authenticated_at
        self.last_interacted_at = last_interacted_at
        self.idle_expires_at = idle_expires_at
        self.expires_at = expires_at
        self.device = device
        self.clients = clients
        self.authentication = authentication
    }
}

/// `GET /api/v2/user-blocks/{id}` (Auth0's shape): the attempt limits an account has used up
/// in their current window, each with Signet's `attempts`, `limit` and `until`.
public struct UserBlocks: Codable, Sendable, Equatable {
    public struct Block: Codable, Sendable, Equatable {
        /// The account's address.
        public var identifier: String
        /// Which limit: `email` (codes mailed to the address), `email-change` (codes for a new
        /// address), `recovery` (recovery-code tries) or `device` (unknown device user codes).
        public var connection: String
        public var attempts: Int
        public var limit: Int
        /// When the window ends and the limit lifts on its own.
        public var until: String
        public init(identifier: String, connection: String, attempts: Int, limit: Int, until: String) {
            self.identifier = identifier
            self.connection = connection
            self.attempts = attempts
            self.limit = limit
            self.until = until
        }
    }
    public var blocked_for: [Block]
    public init(blocked_for: [Block]) { self.blocked_for = blocked_for }
}

/// `GET /api/v2/users/{id}/sessions`: a page of sessions, and `next`, the `from` of the next
/// page, when there is one (Auth0's checkpoint paging).
public struct ManagementSessionList: Codable, Sendable, Equatable {
    public var sessions: [ManagementSession]
    public var next: String?
    public init(sessions: [ManagementSession], next: String? = nil) {
        self.sessions = sessions
        self.next = next
    }
}

/// One audit event (`GET /api/v2/logs`). `type` is Auth0's code where one exists (`s`, `f`,
/// `ss`, `fs`, ...), else Signet's event name, which `signet_event` always carries.
public struct LogEvent: Codable, Sendable, Equatable {
    public var log_id: String
    public var date: String
    public var type: String
    public var signet_event: String
    public var outcome: String
    public var reason: String?
    public var description: String?
    public var client_id: String?
    public var user_id: String?
    public var ip: String?
    public var request_id: String?
    public init(log_id: String, date: String, type: String, signet_event: String, outcome: String, reason: String?, description: String?,
                client_id: String?, user_id: String?, ip: String?, request_id: String?) {
        self.log_id = log_id
        self.date = date
        self.type = type
        self.signet_event = signet_event
        self.outcome = outcome
        self.reason = reason
        self.description = description
        self.client_id = client_id
        self.user_id = user_id
        self.ip = ip
        self.request_id = request_id
    }
}

/// The `client_credentials` grant's answer (RFC 6749 §4.4.3): an access token, no refresh token.
public struct ClientCredentialsResponse: Codable, Sendable, Equatable {
    public var access_token: String
    public var token_type: String
    public var expires_in: Int
    public var scope: String
    public init(access_token: String, token_type: String = "Bearer", expires_in: Int, scope: String) {
        self.access_token = access_token
        self.token_type = token_type
        self.expires_in = expires_in
        self.scope = scope
    }
}

/// A client kept in the database (`/api/v2/clients`), with Auth0's names where Auth0 has the
/// setting and Signet's for the rest (`scopes`, `audiences`, `keys`, `created_at`).
public struct ManagementClient: Codable, Sendable, Equatable {
    /// OpenID Connect Back-Channel Logout 1.0 §2.2: where the client hears that a session ended.
    public struct OIDCLogout: Codable, Sendable, Equatable {
        public var backchannel_logout_urls: [String]
        public init(backchannel_logout_urls: [String]) { self.backchannel_logout_urls = backchannel_logout_urls }
    }
    /// A `private_key_jwt` client's public key, by type, `kid` and `alg`.
    public struct Key: Codable, Sendable, Equatable {
        public var kty: String
        public var kid: String?
        public var alg: String?
        public init(kty: String, kid: String?, alg: String?) {
            self.kty = kty
            self.kid = kid
            self.alg = alg
        }
    }
    public var client_id: String
    public var name: String
    /// Only in the answers that make it (creation, rotation): Signet keeps its hash alone.
    public var client_secret: String?
    /// `none` (a public client), `client_secret_basic` (`client_secret_post` is accepted too) or
    /// `private_key_jwt` (RFC 7591 §2).
    public var token_endpoint_auth_method: String
    public var grant_types: [String]
    /// The redirect URIs (RFC 6749 §3.1.2).
    public var callbacks: [String]
    /// The post-logout redirect URIs (OpenID Connect RP-Initiated Logout 1.0 §3).
    public var allowed_logout_urls: [String]
    public var oidc_logout: OIDCLogout?
    /// RFC 9126 §5: authorization requests through `/oauth/par` only.
    public var require_pushed_authorization_requests: Bool
    /// The Management API scopes the client may ask for with `client_credentials`.
    public var scopes: [String]
    /// The audiences it may ask for; absent: the deployment's.
    public var audiences: [String]?
    public var keys: [Key]?
    /// Where a `private_key_jwt` client publishes its keys (RFC 7591 §2), instead of `keys`.
    public var jwks_uri: String?
    /// Signet's own: the roles, by name, an account needs one of for the client's tokens
    /// (an admin console for administrators); absent: any account.
    public var required_roles: [String]?
    /// Signet's own: the least class of sign-in (`phr`, `phrh`; RFC 9470) the client's tokens are
    /// given for; absent: any.
    public var minimum_acr: String?
    /// Its own session lifetimes, where shorter than the deployment's; absent: the deployment's.
    public var refresh_token: RefreshTokenLifetimes?
    /// When it was added to the database; a client of the configuration file has none.
    public var created_at: String?
    /// Signet's own: `database` (made by the API or `signet admin clients`, changed the same
    /// ways) or `configuration` (set in the configuration file, read here and changed there).
    public var source: String
    public init(client_id: String, name: String, client_secret: String?, token_endpoint_auth_method: String, grant_types: [String], callbacks: [String],
                allowed_logout_urls: [String], oidc_logout: OIDCLogout?, require_pushed_authorization_requests: Bool, scopes: [String], audiences: [String]?,
                keys: [Key]?, jwks_uri: String? = nil, required_roles: [String]? = nil, minimum_acr: String? = nil, refresh_token: RefreshTokenLifetimes? = nil, created_at: String?, source: String) {
        self.refresh_token = refresh_token
        self.minimum_acr = minimum_acr
        self.jwks_uri = jwks_uri
        self.required_roles = required_roles
        self.client_id = client_id
        self.name = name
        self.client_secret = client_secret
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.grant_types = grant_types
        self.callbacks = callbacks
        self.allowed_logout_urls = allowed_logout_urls
        self.oidc_logout = oidc_logout
        self.require_pushed_authorization_requests = require_pushed_authorization_requests
        self.scopes = scopes
        self.audiences = audiences
        self.keys = keys
        self.created_at = created_at
        self.source = source
    }
}

/// A client's own session lifetimes in seconds (Auth0's `refresh_token` of a client): idle (a
/// refresh token unused that long expires) and absolute (from the sign-in). Each takes effect
/// only where shorter than the deployment's; absent: the deployment's.
public struct RefreshTokenLifetimes: Codable, Sendable, Equatable {
    public var idle_token_lifetime: Int?
    public var token_lifetime: Int?
    /// Seconds after a rotation in which a refresh whose answer was lost may be sent again.
    public var leeway: Int?
    public init(idle_token_lifetime: Int?, token_lifetime: Int?, leeway: Int? = nil) {
        self.idle_token_lifetime = idle_token_lifetime
        self.token_lifetime = token_lifetime
        self.leeway = leeway
    }
}

/// One day of `GET /api/v2/stats/daily` (Auth0's shape): sign-ins and sign-ups that day (UTC).
/// `leaked_passwords` is always 0: Signet keeps no passwords.
public struct DailyStats: Codable, Sendable, Equatable {
    /// The day's start, ISO 8601.
    public var date: String
    public var logins: Int
    public var signups: Int
    public var leaked_passwords: Int
    /// The day's first and last counted event; absent for a day without one.
    public var created_at: String?
    public var updated_at: String?

    public init(date: String, logins: Int, signups: Int, leaked_passwords: Int = 0, created_at: String?, updated_at: String?) {
        self.date = date
        self.logins = logins
        self.signups = signups
        self.leaked_passwords = leaked_passwords
        self.created_at = created_at
        self.updated_at = updated_at
    }
}

/// `PUT /api/v2/keys/signing/{kid}/revoke`'s answer: the key revoked, when, and the key that
/// signs from now on.
public struct ManagementRevokedSigningKey: Codable, Sendable, Equatable {
    public var kid: String
    public var revoked_at: String
    public var current: String?
    public init(kid: String, revoked_at: String, current: String?) {
        self.kid = kid
        self.revoked_at = revoked_at
        self.current = current
    }
}

/// A token-signing key (`GET /api/v2/keys/signing`, Auth0's flags): `current` signs new tokens,
/// `next` is published and signs from `current_since`, `previous` stopped signing at
/// `current_until` and stays published while tokens it signed can be valid. Times are ISO 8601.
public struct ManagementSigningKey: Codable, Sendable, Equatable {
    public var kid: String
    public var alg: String
    public var current: Bool
    public var next: Bool
    public var previous: Bool
    public var created_at: String
    public var current_since: String
    public var current_until: String?
    /// When the retired key and its sealed private key are deleted.
    public var destroyed_at: String?
    public init(kid: String, alg: String, current: Bool, next: Bool, previous: Bool, created_at: String, current_since: String,
                current_until: String?, destroyed_at: String?) {
        self.kid = kid
        self.alg = alg
        self.current = current
        self.next = next
        self.previous = previous
        self.created_at = created_at
        self.current_since = current_since
        self.current_until = current_until
        self.destroyed_at = destroyed_at
    }
}
