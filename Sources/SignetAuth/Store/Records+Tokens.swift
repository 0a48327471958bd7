import SignetWebAuthn

/// A credential a token names (its `cred` claim): a passkey by its ID, or a device key.
public enum CredentialReference: Sendable, Equatable {
    case passkey([UInt8])
    case deviceKey(String)

    /// `dk_…` is a device key; anything else a passkey's ID in base64url (`nil` if it is not).
    public init?(_ claim: String) {
        if claim.hasPrefix("dk_") { self = .deviceKey(claim) } else if let id = Base64URL.decode(claim) { self = .passkey(id) } else { return nil }
    }
}

/// ``Store/tokenHolder(userID:credential:sid:)``'s answer.
public struct TokenHolder: Sendable, Equatable {
    public var user: UserRecord
    /// `true` as well when no credential was asked about.
    public var credentialLive: Bool
    public var sessionEnded: Bool

    public init(user: UserRecord, credentialLive: Bool, sessionEnded: Bool) {
        self.user = user
        self.credentialLive = credentialLive
        self.sessionEnded = sessionEnded
    }
}
