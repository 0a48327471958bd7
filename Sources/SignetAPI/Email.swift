// Email codes, recovery codes and recovery (DESIGN.md, "Email codes, recovery codes and
// recovery"): Auth0's passwordless API and Signet's recovery endpoints.

/// `POST /passwordless/start` body (Auth0 Authentication API, passwordless start).
public struct PasswordlessStartRequest: Codable, Sendable {
    public struct AuthParams: Codable, Sendable {
        public var scope: String?
        public var audience: String?
        public init(scope: String? = nil, audience: String? = nil) {
            self.scope = scope
            self.audience = audience
        }
    }
    public var client_id: String
    /// `email`.
    public var connection: String
    public var email: String
    /// `code` (Signet sends no magic links).
    public var send: String?
    public var authParams: AuthParams?
    /// A confidential client's secret in the body (or `Authorization: Basic`), as Auth0 asks of
    /// a confidential application here.
    public var client_secret: String?
    public init(client_id: String, connection: String = "email", email: String, send: String? = "code", authParams: AuthParams? = nil, client_secret: String? = nil) {
        self.client_secret = client_secret
        self.client_id = client_id
        self.connection = connection
        self.email = email
        self.send = send
        self.authParams = authParams
    }
}

/// `POST /passwordless/start` answer: the same for every well-formed request, whether or not
/// the address has an account.
public struct PasswordlessStartResponse: Codable, Sendable, Equatable {
    public var _id: String
    public var email: String
    public var email_verified: Bool
    public init(_id: String, email: String, email_verified: Bool) {
        self._id = _id
        self.email = email
        self.email_verified = email_verified
    }
}

/// `POST /me/recovery-codes` answer: shown once.
public struct RecoveryCodes: Codable, Sendable, Equatable {
    public var codes: [String]
    public init(codes: [String]) { self.codes = codes }
}

/// `GET /me/recovery-codes` answer.
public struct RecoveryCodesStatus: Codable, Sendable, Equatable {
    public var remaining: Int
    /// Seconds since 1970; null when the account has none.
    public var created_at: Int64?
    public init(remaining: Int, created_at: Int64?) {
        self.remaining = remaining
        self.created_at = created_at
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(remaining, forKey: .remaining)
        try c.encode(created_at, forKey: .created_at)
    }
}

/// An open recovery, as `GET /me/recovery` shows it.
public struct RecoveryInfo: Codable, Sendable, Equatable {
    public var id: String
    /// Seconds since 1970.
    public var opened_at: Int64
    public var hold_until: Int64
    /// What it added: passkey IDs and device key IDs.
    public var passkeys: [String]
    public var device_keys: [String]
    public init(id: String, opened_at: Int64, hold_until: Int64, passkeys: [String], device_keys: [String]) {
        self.id = id
        self.opened_at = opened_at
        self.hold_until = hold_until
        self.passkeys = passkeys
        self.device_keys = device_keys
    }
}

/// `GET /me/recovery` answer: `recovery` is null when none is open.
public struct RecoveryState: Codable, Sendable, Equatable {
    public var recovery: RecoveryInfo?
    public init(recovery: RecoveryInfo?) { self.recovery = recovery }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(recovery, forKey: .recovery)
    }
}
