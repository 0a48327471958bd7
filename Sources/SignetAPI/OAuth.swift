/// Grant types Signet accepts at `/oauth/token`.
public enum GrantType {
    /// Auth0's native passkey grant (a WebAuthn registration or assertion).
    public static let webauthn = "urn:okta:params:oauth:grant-type:webauthn"
    public static let refreshToken = "refresh_token"
    /// Auth0's passwordless grant: an email address and the code mailed to it.
    public static let passwordlessOTP = "http://auth0.com/oauth/grant-type/passwordless/otp"
    /// Signet's recovery-code grant.
    public static let recoveryCode = "urn:signet:params:oauth:grant-type:recovery-code"
}

/// `POST /oauth/token` body.
public struct TokenRequest: Codable, Sendable {
    public var grant_type: String
    public var client_id: String
    /// A confidential client's secret in the body (RFC 6749 §2.3.1 `client_secret_post`); or
    /// `Authorization: Basic`.
    public var client_secret: String?
    public var auth_session: String?
    public var authn_response: CredentialJSON?
    public var refresh_token: String?
    public var scope: String?
    public var audience: String?
    /// The email address (passwordless and recovery-code grants).
    public var username: String?
    public var otp: String?
    /// `email` for the passwordless grant.
    public var realm: String?
    public var recovery_code: String?
    public init(grant_type: String, client_id: String, auth_session: String? = nil, authn_response: CredentialJSON? = nil, refresh_token: String? = nil, scope: String? = nil, audience: String? = nil,
                username: String? = nil, otp: String? = nil, realm: String? = nil, recovery_code: String? = nil, client_secret: String? = nil) {
        self.client_secret = client_secret
        self.username = username
        self.otp = otp
        self.realm = realm
        self.recovery_code = recovery_code
        self.grant_type = grant_type
        self.client_id = client_id
        self.auth_session = auth_session
        self.authn_response = authn_response
        self.refresh_token = refresh_token
        self.scope = scope
        self.audience = audience
    }
}

/// Successful token answer (RFC 6749 §5.1, OIDC Core §3.1.3.3).
public struct TokenResponse: Codable, Sendable {
    public var access_token: String
    public var refresh_token: String?
    public var id_token: String?
    public var token_type: String
    public var expires_in: Int
    public var scope: String?
    public init(access_token: String, refresh_token: String?, id_token: String?, token_type: String = "Bearer", expires_in: Int, scope: String?) {
        self.access_token = access_token
        self.refresh_token = refresh_token
        self.id_token = id_token
        self.token_type = token_type
        self.expires_in = expires_in
        self.scope = scope
    }
}

/// `POST /oauth/revoke` body (RFC 7009 §2.1).
public struct RevokeRequest: Codable, Sendable {
    public var token: String
    public var token_type_hint: String?
    public var client_id: String?
    public init(token: String, token_type_hint: String? = nil, client_id: String? = nil) {
        self.token = token
        self.token_type_hint = token_type_hint
        self.client_id = client_id
    }
}

/// `POST /oauth/introspect` answer (RFC 7662 §2.2). An inactive token, an unknown one and one
/// the caller may not see all get `active: false` alone; an active one its claims besides.
public struct TokenIntrospection: Codable, Sendable, Equatable {
    /// RFC 9449 §6.2: the DPoP key an access or refresh token is bound to.
    public struct Confirmation: Codable, Sendable, Equatable {
        public var jkt: String
        public init(jkt: String) { self.jkt = jkt }
    }
    public var active: Bool
    public var scope: String?
    public var client_id: String?
    /// `Bearer` or `DPoP` for an access token (RFC 6749 §5.1, RFC 9449 §5); absent for a
    /// refresh token, which is no access token of either kind.
    public var token_type: String?
    public var exp: Int64?
    public var iat: Int64?
    public var sub: String?
    public var aud: [String]?
    public var iss: String?
    public var jti: String?
    public var auth_time: Int64?
    /// The sign-in's class (RFC 9470 §6.2): `phr` for a passkey's, absent otherwise.
    public var acr: String?
    public var amr: [String]?
    public var sid: String?
    public var cnf: Confirmation?
    /// An access token's `permissions` claim (for an API of `tokens.permissions`): what the
    /// account's roles granted there when it was issued.
    public var permissions: [String]?

    /// What every token that is not active gets: nothing but `active: false`.
    public static let inactive = TokenIntrospection(active: false)

    public init(active: Bool, scope: String? = nil, client_id: String? = nil, token_type: String? = nil, exp: Int64? = nil, iat: Int64? = nil,
                sub: String? = nil, aud: [String]? = nil, iss: String? = nil, jti: String? = nil, auth_time: Int64? = nil, acr: String? = nil,
                amr: [String]? = nil, sid: String? = nil, cnf: Confirmation? = nil, permissions: [String]? = nil) {
        self.permissions = permissions
        self.active = active
        self.scope = scope
        self.client_id = client_id
        self.token_type = token_type
        self.exp = exp
        self.iat = iat
        self.sub = sub
        self.aud = aud
        self.iss = iss
        self.jti = jti
        self.auth_time = auth_time
        self.acr = acr
        self.amr = amr
        self.sid = sid
        self.cnf = cnf
    }
}

/// Every error answer: OAuth's `error` and `error_description` (RFC 6749 §5.2) plus Signet's
/// machine-readable `reason`.
public struct ErrorBody: Codable, Sendable, Equatable {
    public var error: String
    public var error_description: String
    public var reason: String
    public init(error: String, error_description: String, reason: String) {
        self.error = error
        self.error_description = error_description
        self.reason = reason
    }
}

/// `GET /userinfo` answer (OIDC Core §5.3.2).
public struct UserInfo: Codable, Sendable, Equatable {
    public var sub: String
    public var email: String?
    public var email_verified: Bool?
    public var name: String?
    public init(sub: String, email: String?, email_verified: Bool?, name: String?) {
        self.sub = sub
        self.email = email
        self.email_verified = email_verified
        self.name = name
    }
}

/// The pushed authorization request endpoint's answer (RFC 9126 §2.2): the reference the
/// browser brings to `/authorize` with `client_id`, and how many seconds it is good for.
public struct PushedAuthorizationResponse: Codable, Sendable, Equatable {
    public var request_uri: String
    public var expires_in: Int
    public init(request_uri: String, expires_in: Int) {
        self.request_uri = request_uri
        self.expires_in = expires_in
    }
}

/// The OIDC scopes Signet understands (OIDC Core §5.4, §11), in its order: what a request
/// without `scope` is granted, and what the SDK asks for.
public enum OIDCScopes {
    public static let all = ["openid", "profile", "email", "offline_access"]
    /// ``all``, space-separated, as a `scope` parameter.
    public static let text = all.joined(separator: " ")
}
