/// What a verified assertion records about its passkey (WebAuthn §7.2 steps 22–24), in the one
/// guarded statement both ``Store/completeSignIn(_:writes:)`` and ``Store/recordUse(_:)`` run.
public struct CredentialUse: Sendable, Equatable {
    public var credentialID: [UInt8]
    /// The owner and public key the signature was verified with: the use is refused if the
    /// credential no longer has them.
    public var userID: String
    public var publicKey: [UInt8]
    /// The counter the authenticator sent; stored only if it is greater than the stored one, or
    /// if both are zero (an authenticator without a counter).
    public var signCount: Int64
    public var backupState: Bool
    public var at: Int64

    public init(credentialID: [UInt8], userID: String, publicKey: [UInt8], signCount: Int64, backupState: Bool, at: Int64) {
        self.credentialID = credentialID
        self.userID = userID
        self.publicKey = publicKey
        self.signCount = signCount
        self.backupState = backupState
        self.at = at
    }
}

/// A sign-in's use: the auth session it uses up and the passkey use it records.
public struct SignInUse: Sendable {
    public var sessionID: [UInt8]
    public var sessionExpiresAt: Int64
    public var credential: CredentialUse

    public init(sessionID: [UInt8], sessionExpiresAt: Int64, credential: CredentialUse) {
        self.sessionID = sessionID
        self.sessionExpiresAt = sessionExpiresAt
        self.credential = credential
    }

    public init(sessionID: [UInt8], sessionExpiresAt: Int64, credentialID: [UInt8], userID: String, publicKey: [UInt8],
                signCount: Int64, backupState: Bool, at: Int64) {
        self.init(sessionID: sessionID, sessionExpiresAt: sessionExpiresAt, credential: CredentialUse(
            credentialID: credentialID, userID: userID, publicKey: publicKey, signCount: signCount, backupState: backupState, at: at))
    }
}

/// Why the guarded use of a passkey did not happen; nothing was written.
public enum UseRefusal: Sendable, Equatable {
    /// The credential is gone, or is not the one that was verified (another owner or key).
    case credentialUnknown
    case credentialRevoked
    /// The stored counter is not below the one sent (and they are not both zero).
    case counterRegression(stored: Int64)
    /// The account is blocked (``completeSignIn(_:writes:)`` only).
    case userBlocked
}

/// The end of ``Store/completeSignIn(_:writes:)``. Only `.signedIn` wrote anything.
public enum SignInOutcome: Sendable, Equatable {
    /// Committed; the account as it is now.
    case signedIn(UserRecord)
    case refused(UseRefusal)
}
