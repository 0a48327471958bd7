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

/// One device key of the signed-in account.
public struct DeviceKeyInfo: Codable, Sendable, Equatable {
    public var id: String
    public var device_id: String
    public var platform: String
    public var name: String?
    public var created_at: Int64
    public var last_used_at: Int64?
}

/// Answer to `POST /actions/challenge` with a device key.
public struct ActionChallengeResponse: Codable, Sendable {
    public var challenge_id: String
    /// base64url of the 32 bytes the device key signs.
    public var challenge: String
    public var expires_in: Int
    /// base64url SHA-256 of the action's canonical JSON (RFC 8785).
    public var action_hash: String
}

/// Answer to `POST /actions/approve`.
public struct ActionApproval: Codable, Sendable {
    public var action_token: String
    public var token_type: String
    public var expires_in: Int
}
