// The account and action endpoints' bodies (DESIGN.md, "Account", "High-risk actions"). Members
// that may be absent are sent as JSON null, so an answer always has the same members.

/// One passkey of the signed-in account (`GET /me/passkeys`).
public struct PasskeyInfo: Codable, Sendable, Equatable {
    public var id: String
    public var name: String?
    /// Seconds since 1970.
    public var created_at: Int64
    public var last_used_at: Int64?
    public var aaguid: String
    /// The authenticator's name, where its AAGUID is a known one.
    public var authenticator: String?
    public var backup_eligible: Bool
    public var backup_state: Bool
    public var transports: [String]
    /// Whether the server's AAGUID policy (`allowed_aaguids`, `denied_aaguids`) admits this
    /// passkey's model: one that is not allowed can no longer sign in. `nil` from a server
    /// that predates the member.
    public var allowed: Bool?
    /// Whether its sign-ins are hardware-bound (`acr` `phrh`): its attestation chained to one of
    /// the server's trust anchors and it cannot be backed up. `nil` from a server that predates
    /// the member.
    public var hardware_bound: Bool?

    public init(id: String, name: String?, created_at: Int64, last_used_at: Int64?, aaguid: String, authenticator: String?,
                backup_eligible: Bool, backup_state: Bool, transports: [String], allowed: Bool? = true, hardware_bound: Bool? = false) {
        self.id = id
        self.name = name
        self.created_at = created_at
        self.last_used_at = last_used_at
        self.aaguid = aaguid
        self.authenticator = authenticator
        self.backup_eligible = backup_eligible
        self.backup_state = backup_state
        self.transports = transports
        self.allowed = allowed
        self.hardware_bound = hardware_bound
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(created_at, forKey: .created_at)
        try c.encode(last_used_at, forKey: .last_used_at)
        try c.encode(aaguid, forKey: .aaguid)
        try c.encode(authenticator, forKey: .authenticator)
        try c.encode(backup_eligible, forKey: .backup_eligible)
        try c.encode(backup_state, forKey: .backup_state)
        try c.encode(transports, forKey: .transports)
        try c.encode(allowed, forKey: .allowed)
        try c.encode(hardware_bound, forKey: .hardware_bound)
    }
}

/// `GET /me/passkeys` answer.
public struct PasskeyList: Codable, Sendable, Equatable {
    public var passkeys: [PasskeyInfo]
    public init(passkeys: [PasskeyInfo]) { self.passkeys = passkeys }
}

/// `POST /me/passkeys` body: the registration for the options of `POST /me/passkeys/options`.
public struct AddPasskeyRequest: Codable, Sendable {
    public var auth_session: String
    public var authn_response: CredentialJSON
    public var name: String?
    public init(auth_session: String, authn_response: CredentialJSON, name: String? = nil) {
        self.auth_session = auth_session
        self.authn_response = authn_response
        self.name = name
    }
}

/// `PATCH /me/passkeys/{id}` body.
public struct RenameRequest: Codable, Sendable {
    public var name: String
    public init(name: String) { self.name = name }
}

/// `PATCH /me` body: the account's display name; `null` (always sent) clears it.
public struct NameChangeRequest: Codable, Sendable {
    public var name: String?
    public init(name: String?) { self.name = name }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
    }
}

/// `POST /me/email` body (`code` absent) and `POST /me/email/verify` body (with the code the new
/// address received).
public struct EmailChangeRequest: Codable, Sendable {
    public var email: String
    public var code: String?
    public init(email: String, code: String? = nil) {
        self.email = email
        self.code = code
    }
}

/// `POST /me/email` answer (a code is on its way, `expires_in` seconds) and `POST
/// /me/email/verify` answer (the address is the account's, verified).
public struct EmailChangeStatus: Codable, Sendable, Equatable {
    public var email: String
    public var email_verified: Bool
    public var expires_in: Int?
    public init(email: String, email_verified: Bool, expires_in: Int?) {
        self.email = email
        self.email_verified = email_verified
        self.expires_in = expires_in
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(email, forKey: .email)
        try c.encode(email_verified, forKey: .email_verified)
        try c.encode(expires_in, forKey: .expires_in)
    }
}

/// One place the account is signed in (`GET /me/sessions`): a browser's SSO session or an
/// app's refresh-token family.
public struct SessionInfo: Codable, Sendable, Equatable {
    public var id: String
    /// `browser` or `app`.
    public var kind: String
    /// The browser and system (`Chrome · macOS`), or the app's client name.
    public var name: String
    public var client_id: String?
    /// Seconds since 1970: the sign-in, and the last request (a browser) or refresh (an app).
    public var created_at: Int64
    public var last_seen_at: Int64
    /// The session of the token that asked.
    public var current: Bool
    /// The address the session signed in from, a browser's or an app's (an app's that signed in
    /// before Signet kept it has none).
    public var address: String?

    public init(id: String, kind: String, name: String, client_id: String?, created_at: Int64, last_seen_at: Int64, current: Bool, address: String? = nil) {
        self.id = id
        self.kind = kind
        self.name = name
        self.client_id = client_id
        self.created_at = created_at
        self.last_seen_at = last_seen_at
        self.current = current
        self.address = address
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(kind, forKey: .kind)
        try c.encode(name, forKey: .name)
        try c.encode(client_id, forKey: .client_id)
        try c.encode(created_at, forKey: .created_at)
        try c.encode(last_seen_at, forKey: .last_seen_at)
        try c.encode(current, forKey: .current)
        try c.encodeIfPresent(address, forKey: .address)
    }
}

/// `GET /me/roles` answer: the signed-in account's roles, for an app that shows what its user
/// may do and until when.
public struct AccountRoles: Codable, Sendable, Equatable {
    /// One role: as the Management API writes it, with what it grants.
    public struct Role: Codable, Sendable, Equatable {
        public var id: String
        public var name: String
        public var description: String?
        /// When it ends (ISO 8601), for a role given for a time; absent for one given for good.
        public var expires_at: String?
        /// What it grants that the deployment's `tokens.permissions` names, by API.
        public var permissions: [ManagementPermission]
        public init(id: String, name: String, description: String?, expires_at: String?, permissions: [ManagementPermission]) {
            self.id = id
            self.name = name
            self.description = description
            self.expires_at = expires_at
            self.permissions = permissions
        }
    }
    public var roles: [Role]
    public init(roles: [Role]) { self.roles = roles }
}

/// `GET /me/sessions` answer: at most 100 sessions of each kind, newest first, and the
/// caller's own; `truncated` when the account has more (each still ends by its ID).
public struct SessionList: Codable, Sendable, Equatable {
    public var sessions: [SessionInfo]
    public var truncated: Bool
    public init(sessions: [SessionInfo], truncated: Bool = false) {
        self.sessions = sessions
        self.truncated = truncated
    }

    /// A server from before `truncated` sends none: its list was not cut.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        sessions = try c.decode([SessionInfo].self, forKey: .sessions)
        truncated = try c.decodeIfPresent(Bool.self, forKey: .truncated) ?? false
    }
}

/// `GET /me/email-sign-in` answer and `PUT /me/email-sign-in` body: whether email codes sign
/// in to the account.
public struct EmailSignIn: Codable, Sendable, Equatable {
    public var enabled: Bool
    public init(enabled: Bool) { self.enabled = enabled }
}

/// `POST /passkey/enroll` body: an operator's enrollment link, whole or the part after `#`;
/// the answer is `/passkey/register`'s.
public struct PasskeyEnrollRequest: Codable, Sendable, Equatable {
    public var client_id: String
    public var ticket: String
    public init(client_id: String, ticket: String) {
        self.client_id = client_id
        self.ticket = ticket
    }
}

/// `DELETE /me/sessions` answer: how many of the account's other sessions ended.
public struct SessionsEnded: Codable, Sendable, Equatable {
    public var ended: Int
    public init(ended: Int) { self.ended = ended }
}

/// `POST /me/device-keys` body.
public struct EnrollDeviceKeyRequest: Codable, Sendable {
    /// base64url of a P-256 key: SubjectPublicKeyInfo DER (Android `getEncoded()`, CryptoKit
    /// `derRepresentation`) or X9.63 `04 || X || Y` (`SecKeyCopyExternalRepresentation`).
    public var public_key: String
    public var device_id: String
    /// `ios` or `android`.
    public var platform: String
    public var name: String?
    public init(public_key: String, device_id: String, platform: String, name: String? = nil) {
        self.public_key = public_key
        self.device_id = device_id
        self.platform = platform
        self.name = name
    }
}

/// One device key of the signed-in account; after an enrolment, `replaced` lists the keys of the
/// same device that it revoked.
public struct DeviceKeyInfo: Codable, Sendable, Equatable {
    public var id: String
    public var device_id: String
    public var platform: String
    public var name: String?
    public var created_at: Int64
    public var last_used_at: Int64?
    public var replaced: [String]?

    public init(id: String, device_id: String, platform: String, name: String?, created_at: Int64, last_used_at: Int64?, replaced: [String]? = nil) {
        self.id = id
        self.device_id = device_id
        self.platform = platform
        self.name = name
        self.created_at = created_at
        self.last_used_at = last_used_at
        self.replaced = replaced
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(device_id, forKey: .device_id)
        try c.encode(platform, forKey: .platform)
        try c.encode(name, forKey: .name)
        try c.encode(created_at, forKey: .created_at)
        try c.encode(last_used_at, forKey: .last_used_at)
        try c.encodeIfPresent(replaced, forKey: .replaced)
    }
}

/// `GET /me/device-keys` answer.
public struct DeviceKeyList: Codable, Sendable, Equatable {
    public var device_keys: [DeviceKeyInfo]
    public init(device_keys: [DeviceKeyInfo]) { self.device_keys = device_keys }
}

/// `POST /actions/challenge` body: `device_key_id` for the device-key method, or
/// `method: "passkey"`.
public struct ActionChallengeRequest: Codable, Sendable {
    public var device_key_id: String?
    /// `device_key` (the default) or `passkey`.
    public var method: String?
    public var action: JSONDocument
    public init(device_key_id: String? = nil, method: String? = nil, action: JSONDocument) {
        self.device_key_id = device_key_id
        self.method = method
        self.action = action
    }
}

/// Answer to `POST /actions/challenge`; with the passkey method it carries WebAuthn request
/// options limited to the account's passkeys, over the same challenge.
public struct ActionChallengeResponse: Codable, Sendable {
    public var challenge_id: String
    /// base64url of the 32 bytes the device key signs.
    public var challenge: String
    public var expires_in: Int
    /// base64url SHA-256 of the action's canonical JSON (RFC 8785).
    public var action_hash: String
    public var authn_params_public_key: RequestOptionsJSON?
    /// For a device approval: which client, device and address asked, to show before signing.
    public var device_request: DeviceRequest?
    public init(challenge_id: String, challenge: String, expires_in: Int, action_hash: String, authn_params_public_key: RequestOptionsJSON? = nil,
                device_request: DeviceRequest? = nil) {
        self.device_request = device_request
        self.challenge_id = challenge_id
        self.challenge = challenge
        self.expires_in = expires_in
        self.action_hash = action_hash
        self.authn_params_public_key = authn_params_public_key
    }
}

/// `POST /actions/approve` body: a device key's `signature` (DER ECDSA over the challenge), or a
/// passkey's `authn_response`.
public struct ActionApproveRequest: Codable, Sendable {
    public var challenge_id: String
    public var signature: String?
    public var authn_response: CredentialJSON?
    /// For a device approval (`signet.device_approval`): deny the new device instead, signed the same way.
    public var deny: Bool?
    public init(challenge_id: String, signature: String? = nil, authn_response: CredentialJSON? = nil, deny: Bool? = nil) {
        self.challenge_id = challenge_id
        self.signature = signature
        self.authn_response = authn_response
        self.deny = deny
    }
}

/// Answer to `POST /actions/approve`.
public struct ActionApproval: Codable, Sendable {
    public var action_token: String
    public var token_type: String
    public var expires_in: Int
    /// The action the token is for, as approved.
    public var action: JSONDocument?
    public init(action_token: String, token_type: String = "Bearer", expires_in: Int, action: JSONDocument?) {
        self.action_token = action_token
        self.token_type = token_type
        self.expires_in = expires_in
        self.action = action
    }
}

/// `POST /actions/verify` body: for the service about to perform the action.
public struct ActionVerifyRequest: Codable, Sendable {
    public var action_token: String
    public var action: JSONDocument
    public init(action_token: String, action: JSONDocument) {
        self.action_token = action_token
        self.action = action
    }
}

/// Answer to `POST /actions/verify`.
public struct ActionVerification: Codable, Sendable {
    public var valid: Bool
    public var sub: String
    public var action_hash: String
    public var amr: [String]
    public init(valid: Bool, sub: String, action_hash: String, amr: [String]) {
        self.valid = valid
        self.sub = sub
        self.action_hash = action_hash
        self.amr = amr
    }
}

/// A new device's sign-in waiting for approval, as the approving phone is shown it.
public struct DeviceRequest: Codable, Sendable, Equatable {
    public var client_id: String
    public var client_name: String?
    /// The new device's User-Agent.
    public var user_agent: String?
    /// The address it asked from.
    public var address: String
    public var requested_at: String
    public var scope: String
}

/// `GET` and `PATCH /me/metadata`: the account's Auth0-style metadata. The owner changes
/// `user_metadata`; `app_metadata` is the operators' and only read here.
public struct AccountMetadata: Codable, Sendable, Equatable {
    public var app_metadata: JSONDocument?
    public var user_metadata: JSONDocument?
    public init(app_metadata: JSONDocument?, user_metadata: JSONDocument?) {
        self.app_metadata = app_metadata
        self.user_metadata = user_metadata
    }
}
