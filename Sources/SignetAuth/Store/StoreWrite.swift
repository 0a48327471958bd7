/// One write of a batch given to ``Store/perform(_:)``.
public enum StoreWrite: Sendable {
    /// Marks an auth session used. If it already was, the whole batch fails with
    /// ``StoreError/Code/sessionUsed``: single use, decided by the primary key.
    case useSession(id: [UInt8], expiresAt: Int64)
    /// Creates an account with its first passkey; ``StoreError/Code/emailTaken`` or
    /// ``StoreError/Code/credentialTaken`` fail the batch.
    case createUser(UserRecord, CredentialRow)
    /// Adds a passkey to an existing account; ``StoreError/Code/credentialTaken`` fails the
    /// batch, and so does ``StoreError/Code/passkeyLimit`` when `limit` is given and the account
    /// has that many live passkeys already (counted in the batch's transaction, the account's
    /// rows locked: two additions at once cannot both pass). An operator's import gives none.
    case addCredential(CredentialRow, limit: Int?)
    case refreshToken(RefreshTokenRow)
    case audit(AuditEvent)
    /// Creates an account with no credential yet (a sign-up by email code, an operator's, or
    /// an imported one, which may be blocked already);
    /// ``StoreError/Code/emailTaken`` fails the batch.
    case createAccount(UserRecord)
    /// Marks the account's email address verified.
    case verifyEmail(userID: String)
    /// Uses the address's code `id`; if it was used already (or replaced), the batch fails with
    /// ``StoreError/Code/sessionUsed``.
    case useEmailCode(email: String, id: String, at: Int64)
    /// Deletes the email codes `holder` holds (an erased account's pending address change).
    case discardEmailCodes(holder: String)
    /// Uses one recovery code; ``StoreError/Code/sessionUsed`` if it was used already.
    case useRecoveryCode(userID: String, hash: [UInt8], at: Int64)
    /// Opens a recovery.
    case openRecovery(RecoveryRow)
    /// Queues a message in the outbox.
    case mail(OutboxRow)
    /// Counts a code sign-in on the account; ``StoreError/Code/userBlocked`` fails the batch
    /// when the account is blocked, so nothing of the sign-in is written.
    case recordLogin(userID: String, at: Int64)
    /// Sets an account's `app_metadata` and `user_metadata` (JSON object text, `nil` for none):
    /// an account made with them (an operator's, an import).
    case userMetadata(userID: String, app: String?, user: String?)
    /// Uses an approved device code; ``StoreError/Code/sessionUsed`` if it was used already.
    case useDeviceCode(hash: [UInt8])
    /// Marks a DPoP proof used (its key and `jti`); ``StoreError/Code/proofUsed`` if it was:
    /// in the grant's own transaction, so a proof costs no commit of its own.
    case useProof(id: [UInt8], expiresAt: Int64)
    /// Starts a browser's SSO session.
    case webSession(WebSessionRow)
    /// Stores an authorization code.
    case authorizationCode(AuthorizationCodeRow)
    /// Uses an unexpired code, in the same transaction as the tokens it gives; if it was used
    /// already (or expired), the batch fails with ``StoreError/Code/sessionUsed``.
    case useAuthorizationCode(hash: [UInt8], at: Int64)
    /// Remembers that a client wants a logout token when this session ends (Back-Channel Logout
    /// §2.3).
    case logoutSubscription(LogoutSubscriptionRow)
    /// Adds a device key as it was elsewhere (an imported account's), revoked or not;
    /// ``StoreError/Code/conflict`` when a key with its ID exists.
    case importDeviceKey(DeviceKeyRow)
    /// Gives an account a role until `expiresAt` (milliseconds; `nil`: for good), as
    /// ``Store/changeUserRoles(userID:roleIDs:give:expiresAt:at:writes:)`` does:
    /// ``StoreError/Code/conflict`` when the role is gone.
    case giveRole(userID: String, roleID: String, expiresAt: Int64?, at: Int64)
}
