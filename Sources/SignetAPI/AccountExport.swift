// The account's own copy of its data (`GET /me/export`, `/account/export`): what Signet holds
// about the signed-in account, in one structured, machine-readable document (GDPR Art. 15(3),
// the copy of the data; Art. 20, portability). Times are seconds since 1970, as in the other
// `/me` answers; events are in the Management API's log form. No secret is in it: no token,
// code, hash of one, or private key.

/// `GET /me/export` answer.
public struct AccountExport: Codable, Sendable, Equatable {
    /// `signet.account-export.v1`: what a reader of the file checks before reading on.
    public var format: String
    /// The server's issuer: whose data this is.
    public var issuer: String
    public var exported_at: Int64
    public var account: ExportedAccount
    /// Every passkey the account has had, revoked ones with when.
    public var passkeys: [ExportedPasskey]
    /// Every device-bound key, revoked ones with when.
    public var device_keys: [ExportedDeviceKey]
    /// Where the account is signed in now: at most ``AccountExport/maxSessions`` of each kind,
    /// newest first.
    public var sessions: [SessionInfo]
    /// Whether the account had more sessions of a kind than those listed; absent in a file from before it.
    public var sessions_truncated: Bool?
    public var recovery_codes: RecoveryCodesStatus
    public var recovery: RecoveryInfo?
    /// The roles operators gave the account (`/api/v2/roles`); absent in a file from before them.
    public var roles: [ManagementRole]?
    /// The account's audit events, newest first, at most ``AccountExport/maxEvents``.
    public var events: [LogEvent]
    /// Whether older events than those listed exist.
    public var events_truncated: Bool

    public static let formatName = "signet.account-export.v1"
    public static let maxEvents = 10_000
    public static let maxSessions = 10_000

    public init(issuer: String, exported_at: Int64, account: ExportedAccount, passkeys: [ExportedPasskey], device_keys: [ExportedDeviceKey],
                sessions: [SessionInfo], sessions_truncated: Bool? = nil, recovery_codes: RecoveryCodesStatus, recovery: RecoveryInfo?, roles: [ManagementRole]? = nil,
                events: [LogEvent], events_truncated: Bool) {
        self.roles = roles
        self.format = Self.formatName
        self.issuer = issuer
        self.exported_at = exported_at
        self.account = account
        self.passkeys = passkeys
        self.device_keys = device_keys
        self.sessions = sessions
        self.sessions_truncated = sessions_truncated
        self.recovery_codes = recovery_codes
        self.recovery = recovery
        self.events = events
        self.events_truncated = events_truncated
    }
}

/// The account's own record.
public struct ExportedAccount: Codable, Sendable, Equatable {
    /// The `sub` of its tokens.
    public var user_id: String
    /// The WebAuthn user handle its passkeys hold (base64url).
    public var user_handle: String
    public var email: String
    public var email_verified: Bool
    public var name: String?
    public var locale: String?
    public var created_at: Int64
    public var updated_at: Int64?
    public var last_login: Int64?
    public var logins_count: Int64
    public var blocked: Bool
    /// Auth0's metadata objects; absent when empty.
    public var app_metadata: JSONDocument?
    public var user_metadata: JSONDocument?

    public init(user_id: String, user_handle: String, email: String, email_verified: Bool, name: String?, locale: String?, created_at: Int64,
                updated_at: Int64?, last_login: Int64?, logins_count: Int64, blocked: Bool, app_metadata: JSONDocument? = nil, user_metadata: JSONDocument? = nil) {
        self.app_metadata = app_metadata
        self.user_metadata = user_metadata
        self.user_id = user_id
        self.user_handle = user_handle
        self.email = email
        self.email_verified = email_verified
        self.name = name
        self.locale = locale
        self.created_at = created_at
        self.updated_at = updated_at
        self.last_login = last_login
        self.logins_count = logins_count
        self.blocked = blocked
    }
}

/// A passkey as stored: with its public key (COSE_Key, WebAuthn §6.5.1.1), algorithm and
/// signature counter, what a relying party for the same RP ID needs to accept it.
public struct ExportedPasskey: Codable, Sendable, Equatable {
    /// The credential ID (base64url).
    public var id: String
    public var name: String?
    public var public_key: String
    /// The COSE algorithm (-7 ES256, -8 EdDSA, -257 RS256, ...).
    public var algorithm: Int
    public var sign_count: Int64
    public var aaguid: String
    public var authenticator: String?
    public var attestation_format: String
    public var backup_eligible: Bool
    public var backup_state: Bool
    public var transports: [String]
    public var created_at: Int64
    public var last_used_at: Int64?
    public var revoked_at: Int64?
    /// When its attestation chained to one of the operator's trust anchors at registration
    /// (WebAuthn L3 §7.1 step 25): that anchor certificate's SHA-256 (base64url).
    public var attestation_root: String?

    public init(id: String, name: String?, public_key: String, algorithm: Int, sign_count: Int64, aaguid: String, authenticator: String?,
                attestation_format: String, backup_eligible: Bool, backup_state: Bool, transports: [String], created_at: Int64,
                last_used_at: Int64?, revoked_at: Int64?, attestation_root: String? = nil) {
        self.attestation_root = attestation_root
        self.id = id
        self.name = name
        self.public_key = public_key
        self.algorithm = algorithm
        self.sign_count = sign_count
        self.aaguid = aaguid
        self.authenticator = authenticator
        self.attestation_format = attestation_format
        self.backup_eligible = backup_eligible
        self.backup_state = backup_state
        self.transports = transports
        self.created_at = created_at
        self.last_used_at = last_used_at
        self.revoked_at = revoked_at
    }
}

/// One of an account's roles in `users export --all`: its name (roles are matched by name
/// between deployments, whose role IDs differ) and when the account's membership ends, ISO 8601
/// in UTC (`null`: it does not).
public struct ExportedRole: Codable, Sendable, Equatable {
    public var name: String
    public var expires_at: String?

    public init(name: String, expires_at: String?) {
        self.name = name
        self.expires_at = expires_at
    }
}

/// A device-bound key as stored, with its public key (SubjectPublicKeyInfo DER, base64url).
public struct ExportedDeviceKey: Codable, Sendable, Equatable {
    public var id: String
    public var device_id: String
    public var platform: String
    public var name: String?
    public var public_key: String
    public var created_at: Int64
    public var last_used_at: Int64?
    public var revoked_at: Int64?
    /// The passkey (its ID) or device key that approved the sign-in of the device that enrolled
    /// it, when another device approved it (RFC 8628): the key goes when that one does.
    public var approved_by: String?

    public init(id: String, device_id: String, platform: String, name: String?, public_key: String, created_at: Int64, last_used_at: Int64?,
                revoked_at: Int64?, approved_by: String? = nil) {
        self.approved_by = approved_by
        self.id = id
        self.device_id = device_id
        self.platform = platform
        self.name = name
        self.public_key = public_key
        self.created_at = created_at
        self.last_used_at = last_used_at
        self.revoked_at = revoked_at
    }
}

/// One account as Auth0's bulk user export writes it (one JSON object a line), and as `signet
/// admin users import` reads it: what `signet admin users export --all` writes.
public struct UserExportLine: Codable, Sendable, Equatable {
    public var user_id: String
    public var email: String
    public var email_verified: Bool
    public var name: String?
    public var locale: String?
    /// ISO 8601 in UTC, as the Management API writes times.
    public var created_at: String
    public var updated_at: String
    public var last_login: String?
    public var logins_count: Int64
    public var blocked: Bool
    public var app_metadata: JSONDocument?
    public var user_metadata: JSONDocument?
    /// Signet's own, absent from other services' exports: the WebAuthn user handle (base64url),
    /// the RP ID the passkeys are scoped to, and every passkey the account has had, revoked ones
    /// with when. With them another Signet for the same RP ID takes the account whole: its ID,
    /// and passkeys that sign in as before.
    public var user_handle: String?
    public var rp_id: String?
    public var passkeys: [ExportedPasskey]?
    /// Every device-bound key the account has had, revoked ones with when.
    public var device_keys: [ExportedDeviceKey]?
    /// The roles the account has, by name, each with when its membership ends: an import gives
    /// those that a role of the same name exists for there.
    public var roles: [ExportedRole]?
    /// How many recovery codes the account had not used (absent: none). The codes themselves do
    /// not move: each is kept as an HMAC under the deployment's own code key.
    public var unused_recovery_codes: Int?

    public init(user_id: String, email: String, email_verified: Bool, name: String?, locale: String?, created_at: String, updated_at: String,
                last_login: String?, logins_count: Int64, blocked: Bool, app_metadata: JSONDocument? = nil, user_metadata: JSONDocument? = nil,
                user_handle: String? = nil, rp_id: String? = nil, passkeys: [ExportedPasskey]? = nil, device_keys: [ExportedDeviceKey]? = nil,
                roles: [ExportedRole]? = nil, unused_recovery_codes: Int? = nil) {
        self.roles = roles
        self.unused_recovery_codes = unused_recovery_codes
        self.device_keys = device_keys
        self.user_handle = user_handle
        self.rp_id = rp_id
        self.passkeys = passkeys
        self.app_metadata = app_metadata
        self.user_metadata = user_metadata
        self.user_id = user_id
        self.email = email
        self.email_verified = email_verified
        self.name = name
        self.locale = locale
        self.created_at = created_at
        self.updated_at = updated_at
        self.last_login = last_login
        self.logins_count = logins_count
        self.blocked = blocked
    }
}
