/// An account.
public struct UserRecord: Sendable, Equatable {
    public var id: String
    /// The WebAuthn user handle: 32 random bytes.
    public var handle: [UInt8]
    public var email: String
    public var name: String?
    public var emailVerified: Bool
    public var createdAt: Int64
    /// The language of the account's mail (`en`, `es`): the browser's or app's at sign-up.
    public var locale: String?
    /// Blocked by an administrator: every grant is refused (`user_blocked`).
    public var blocked: Bool
    /// Every session that started at or before this time (milliseconds) has ended: an
    /// administrator's revocation, or the block.
    public var sessionsRevokedAt: Int64?

    public init(id: String, handle: [UInt8], email: String, name: String?, emailVerified: Bool, createdAt: Int64, locale: String? = nil, blocked: Bool = false,
                sessionsRevokedAt: Int64? = nil) {
        self.id = id
        self.handle = handle
        self.email = email
        self.name = name
        self.emailVerified = emailVerified
        self.createdAt = createdAt
        self.locale = locale
        self.blocked = blocked
        self.sessionsRevokedAt = sessionsRevokedAt
    }
}

/// A registered passkey.
public struct CredentialRow: Sendable, Equatable {
    public var id: [UInt8]
    public var userID: String
    public var publicKey: [UInt8]
    public var algorithm: Int
    public var signCount: Int64
    public var aaguid: String
    public var format: String
    public var backupEligible: Bool
    public var backupState: Bool
    public var transports: [String]
    public var name: String?
    public var createdAt: Int64
    public var lastUsedAt: Int64?
    public var revokedAt: Int64?
    /// The recovery that added it, when a code session did (DESIGN.md, "Recovery").
    public var recoveryID: String?
    /// Whether its attestation chained to one of the operator's trust anchors when it was
    /// registered (WebAuthn L3 §7.1 step 25): the key was made in hardware of a vendor the
    /// operator trusts.
    public var attested: Bool
    /// The SHA-256 of the trust anchor's certificate (DER) its attestation chained to; `nil` for
    /// one registered before Signet kept it (schema 20).
    public var attestationRoot: [UInt8]?

    /// A key that cannot leave that hardware: attested, and not backup eligible (WebAuthn L3
    /// §6.1.3), so no copy of it can be synced anywhere. Whether its root is still trusted is the
    /// caller's (``Ceremonies/isHardwareBound(_:)``).
    public var isHardwareBound: Bool { attested && !backupEligible }

    public init(id: [UInt8], userID: String, publicKey: [UInt8], algorithm: Int, signCount: Int64, aaguid: String, format: String, backupEligible: Bool, backupState: Bool, transports: [String], name: String?, createdAt: Int64, lastUsedAt: Int64? = nil, revokedAt: Int64? = nil, recoveryID: String? = nil, attested: Bool = false, attestationRoot: [UInt8]? = nil) {
        self.attestationRoot = attestationRoot
        self.recoveryID = recoveryID
        self.attested = attested
        self.id = id
        self.userID = userID
        self.publicKey = publicKey
        self.algorithm = algorithm
        self.signCount = signCount
        self.aaguid = aaguid
        self.format = format
        self.backupEligible = backupEligible
        self.backupState = backupState
        self.transports = transports
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.revokedAt = revokedAt
    }
}

/// A refresh token, known to the store only by its hash.
public struct RefreshTokenRow: Sendable, Equatable {
    /// The key the token is found by: derived from it, never the token itself (the service's
    /// `RefreshToken` says how).
    public var hash: [UInt8]
    /// Every token rotated from one sign-in shares a family; reuse revokes the family.
    public var family: String
    public var userID: String
    public var clientID: String
    public var scope: String
    public var authTime: Int64
    public var amr: [String]
    public var expiresAt: Int64
    public var createdAt: Int64
    /// The credential whose sign-in started the family: the base64url of a passkey's ID, or a
    /// device key's ID. Revoking it ends the family.
    public var credential: String?
    /// The DPoP key the token is bound to (RFC 9449 §5: its JWK thumbprint): it refreshes only
    /// with a proof by that key.
    public var jkt: String?
    /// Where the request that made the token (the sign-in, or the refresh that rotated to it)
    /// came from: where the app's session is.
    public var origin: RequestOrigin

    public init(hash: [UInt8], family: String, userID: String, clientID: String, scope: String, authTime: Int64, amr: [String], expiresAt: Int64, createdAt: Int64,
                credential: String? = nil, jkt: String? = nil, origin: RequestOrigin = RequestOrigin()) {
        self.jkt = jkt
        self.origin = origin
        self.hash = hash
        self.family = family
        self.userID = userID
        self.clientID = clientID
        self.scope = scope
        self.authTime = authTime
        self.amr = amr
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.credential = credential
    }
}

/// A request's address and `User-Agent` (its first 300 characters), as a session keeps them.
public struct RequestOrigin: Sendable, Equatable {
    public var remote: String?
    public var userAgent: String?
    public init(remote: String? = nil, userAgent: String? = nil) {
        self.remote = remote
        self.userAgent = userAgent
    }
}

/// What presenting a refresh token for rotation found.
public enum RefreshRotation: Sendable, Equatable {
    /// The token was live; it is now used and `next` was stored in its place.
    case rotated(RefreshTokenRow)
    /// The token had been rotated within the retry window, and the token that rotation made was
    /// never used: that one is now used (withdrawn), and `next` was stored in its place.
    case retried(RefreshTokenRow)
    /// The token had already been rotated: its whole family is now revoked.
    case reused(family: String, userID: String)
    /// The token's family was revoked (by a sign-out, a revoked credential or an administrator).
    case revoked(userID: String)
    /// The token is bound to another DPoP key than the proof's (or the proof is missing); it
    /// was not used.
    case keyMismatch
    case expired
    case unknown
}

/// A token-signing key; the private key is encrypted by the caller before it gets here.
public struct SigningKeyRow: Sendable, Equatable {
    public var kid: String
    public var algorithm: String
    public var encryptedPrivateKey: [UInt8]
    public var publicKey: [UInt8]
    public var createdAt: Int64
    public var retiredAt: Int64?

    public init(kid: String, algorithm: String, encryptedPrivateKey: [UInt8], publicKey: [UInt8], createdAt: Int64, retiredAt: Int64? = nil) {
        self.kid = kid
        self.algorithm = algorithm
        self.encryptedPrivateKey = encryptedPrivateKey
        self.publicKey = publicKey
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}

/// One security-relevant event. Never holds a token, a challenge or a key.
public struct AuditEvent: Sendable, Equatable {
    public var at: Int64
    public var kind: String
    public var outcome: String
    public var reason: String?
    public var userID: String?
    public var clientID: String?
    public var credentialID: String?
    public var remote: String?
    public var requestID: String?
    /// What exactly failed, for a refusal: the verification step's own words (never a secret).
    public var detail: String?

    public init(at: Int64, kind: String, outcome: String, reason: String? = nil, userID: String? = nil, clientID: String? = nil, credentialID: String? = nil, remote: String? = nil, requestID: String? = nil, detail: String? = nil) {
        self.at = at
        self.kind = kind
        self.outcome = outcome
        self.reason = reason
        self.userID = userID
        self.clientID = clientID
        self.credentialID = credentialID
        self.remote = remote
        self.requestID = requestID
        self.detail = detail
    }
}

/// A device-bound key (Secure Enclave / Android Keystore P-256) enrolled to approve actions.
public struct DeviceKeyRow: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var deviceID: String
    public var platform: String
    public var name: String?
    /// SubjectPublicKeyInfo DER.
    public var publicKey: [UInt8]
    public var createdAt: Int64
    public var lastUsedAt: Int64?
    public var revokedAt: Int64?
    /// The recovery that added it, when a code session did.
    public var recoveryID: String?
    /// The credential (a device key ID, or a passkey ID in base64url) that approved the sign-in
    /// of the device that enrolled it, when that device was approved from another (RFC 8628,
    /// `amr` `mca`): the key goes when that credential does.
    public var approvedBy: String?

    public init(id: String, userID: String, deviceID: String, platform: String, name: String?, publicKey: [UInt8], createdAt: Int64, lastUsedAt: Int64? = nil, revokedAt: Int64? = nil, recoveryID: String? = nil,
                approvedBy: String? = nil) {
        self.recoveryID = recoveryID
        self.approvedBy = approvedBy
        self.id = id
        self.userID = userID
        self.deviceID = deviceID
        self.platform = platform
        self.name = name
        self.publicKey = publicKey
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.revokedAt = revokedAt
    }
}

/// A challenge for one high-risk action, bound to the account, the key (a device key ID, or
/// `passkey`) and the SHA-256 of the action's canonical JSON. Used at most once.
public struct ActionChallengeRow: Sendable, Equatable {
    public var id: String
    public var userID: String
    /// The device key ID, or nil for the passkey method.
    public var deviceKeyID: String?
    public var challenge: [UInt8]
    public var actionHash: [UInt8]
    /// The action's canonical JSON, as it goes into the action token.
    public var action: String
    public var expiresAt: Int64
    public var createdAt: Int64

    public init(id: String, userID: String, deviceKeyID: String?, challenge: [UInt8], actionHash: [UInt8], action: String, expiresAt: Int64, createdAt: Int64) {
        self.id = id
        self.userID = userID
        self.deviceKeyID = deviceKeyID
        self.challenge = challenge
        self.actionHash = actionHash
        self.action = action
        self.expiresAt = expiresAt
        self.createdAt = createdAt
    }
}

/// What revoking a passkey found.
public enum CredentialRevocation: Sendable, Equatable {
    case revoked
    /// It is the account's last passkey, which cannot go while it is the only way in.
    case lastCredential
    case notFound
}
