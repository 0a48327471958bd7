// Wire types of Signet's HTTP API (../shared/DESIGN.md, "HTTP API"), shared by the server and
// the SDK. Field names are the JSON names: snake_case where Auth0's native passkey API uses it,
// WebAuthn's own camelCase inside the WebAuthn JSON structures.

/// `user_profile` of a sign-up.
public struct UserProfile: Codable, Sendable, Equatable {
    public var email: String
    public var name: String?
    public init(email: String, name: String? = nil) {
        self.email = email
        self.name = name
    }
}

/// `POST /passkey/register` body (Auth0 native passkeys: signup challenge).
public struct PasskeyRegisterRequest: Codable, Sendable {
    public var client_id: String
    public var realm: String?
    public var user_profile: UserProfile
    public init(client_id: String, realm: String? = nil, user_profile: UserProfile) {
        self.client_id = client_id
        self.realm = realm
        self.user_profile = user_profile
    }
}

/// `POST /passkey/challenge` body (Auth0 native passkeys: login challenge).
public struct PasskeyChallengeRequest: Codable, Sendable {
    public var client_id: String
    public var realm: String?
    public var username: String?
    public init(client_id: String, realm: String? = nil, username: String? = nil) {
        self.client_id = client_id
        self.realm = realm
        self.username = username
    }
}

/// `PublicKeyCredentialDescriptorJSON` (WebAuthn L3 §5.1).
public struct CredentialDescriptorJSON: Codable, Sendable, Equatable {
    public var type: String
    public var id: String
    public var transports: [String]?
}

/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn L3 §5.1).
public struct CreationOptionsJSON: Codable, Sendable {
    public struct RP: Codable, Sendable { public var id: String; public var name: String }
    public struct User: Codable, Sendable { public var id: String; public var name: String; public var displayName: String }
    public struct Parameter: Codable, Sendable { public var type: String; public var alg: Int }
    public struct Selection: Codable, Sendable {
        public var residentKey: String?
        public var requireResidentKey: Bool?
        public var userVerification: String?
    }
    public var rp: RP
    public var user: User
    public var challenge: String
    public var pubKeyCredParams: [Parameter]
    public var timeout: Int?
    public var excludeCredentials: [CredentialDescriptorJSON]?
    public var authenticatorSelection: Selection?
    public var attestation: String?
}

/// `PublicKeyCredentialRequestOptionsJSON` (WebAuthn L3 §5.1).
public struct RequestOptionsJSON: Codable, Sendable {
    public var challenge: String
    public var timeout: Int?
    public var rpId: String?
    public var userVerification: String?
    public var allowCredentials: [CredentialDescriptorJSON]?
}

/// Answer to `POST /passkey/register`.
public struct PasskeyRegisterResponse: Codable, Sendable {
    public var authn_params_public_key: CreationOptionsJSON
    public var auth_session: String
}

/// Answer to `POST /passkey/challenge`.
public struct PasskeyChallengeResponse: Codable, Sendable {
    public var authn_params_public_key: RequestOptionsJSON
    public var auth_session: String
}

/// The `response` member of a credential's `toJSON()`: attestation or assertion.
public struct AuthenticatorResponseJSON: Codable, Sendable {
    public var clientDataJSON: String
    public var attestationObject: String?
    public var transports: [String]?
    public var authenticatorData: String?
    public var signature: String?
    public var userHandle: String?
    public init(clientDataJSON: String, attestationObject: String? = nil, transports: [String]? = nil, authenticatorData: String? = nil, signature: String? = nil, userHandle: String? = nil) {
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.transports = transports
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }
}

/// `RegistrationResponseJSON` or `AuthenticationResponseJSON` (WebAuthn L3 §5.1).
public struct CredentialJSON: Codable, Sendable {
    public var id: String
    public var rawId: String
    public var type: String
    public var authenticatorAttachment: String?
    public var response: AuthenticatorResponseJSON
    public init(id: String, rawId: String, type: String = "public-key", authenticatorAttachment: String? = nil, response: AuthenticatorResponseJSON) {
        self.id = id
        self.rawId = rawId
        self.type = type
        self.authenticatorAttachment = authenticatorAttachment
        self.response = response
    }
}
