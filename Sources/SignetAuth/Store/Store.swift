/// Signet's persistence. Every method is one transaction; single use is one atomic statement
/// in the database (never a read followed by a write), so it holds across processes.
/// It is declared here, with the ceremonies that use it; SignetStore's `SQLStore` implements it
/// for SQLite and PostgreSQL, and one contract suite runs against both.
public protocol Store: Sendable {
    /// Writes that belong together, in one transaction: all of them or none.
    func perform(_ writes: [StoreWrite]) throws(StoreError)

    // Users and credentials.
    /// Creates a user together with the first passkey, or neither (conflict on email or credential ID).
    func createUser(_ user: UserRecord, credential: CredentialRow) throws(StoreError)
    func user(id: String) throws(StoreError) -> UserRecord?
    func user(email: String) throws(StoreError) -> UserRecord?
    func credential(id: [UInt8]) throws(StoreError) -> CredentialRow?
    func credentials(userID: String) throws(StoreError) -> [CredentialRow]
    /// Records a passkey's use: the new sign count, backup state and time, in one guarded
    /// statement, only while the passkey is live, still the one verified, and its counter moves
    /// forward (WebAuthn §7.2 step 23; both zero for an authenticator without a counter). `nil`
    /// when it happened, else why not (revoked, gone, or another use overtook the counter).
    func recordUse(_ use: CredentialUse) throws(StoreError) -> UseRefusal?

    /// A credential together with the account that owns it, in one read.
    func credentialAndUser(credentialID: [UInt8]) throws(StoreError) -> (CredentialRow, UserRecord)?

    /// A sign-in's commit, in one transaction: uses the auth session
    /// (``StoreError/Code/sessionUsed`` if it already was), then records the passkey's use with the
    /// same guarded statement as ``recordUse(_:)``, then applies `writes` and reads the account.
    /// Any other outcome than `.signedIn` rolls everything back, the session included.
    func completeSignIn(_ use: SignInUse, writes: [StoreWrite]) throws(StoreError) -> SignInOutcome

    /// Renames a passkey of `userID`; `false` when there is no such passkey.
    func renameCredential(id: [UInt8], userID: String, name: String) throws(StoreError) -> Bool
    /// Revokes a passkey of `userID`, unless it is the account's last live one (decided in the
    /// same statement, so two concurrent revocations cannot remove the last two), with the device
    /// keys it approved (``DeviceKeyRow/approvedBy``, and theirs in turn), and
    /// `writes(those keys' IDs)` in the same transaction when it was revoked.
    func revokeCredential(id: [UInt8], userID: String, at: Int64, writes: (_ cascaded: [String]) -> [StoreWrite]) throws(StoreError) -> CredentialRevocation

    // Device keys.
    /// Enrols a key: revokes the live key of the same device (a re-enrolment after the biometric
    /// set changed), refuses past `limit` live keys (``StoreError/Code/deviceKeyLimit``), inserts.
    /// Returns the IDs of the keys it revoked; `writes(revoked)` go in the same transaction (the
    /// closure must not call the store).
    func enrollDeviceKey(_ key: DeviceKeyRow, limit: Int, writes: (_ revoked: [String]) -> [StoreWrite]) throws(StoreError) -> [String]
    func deviceKeys(userID: String) throws(StoreError) -> [DeviceKeyRow]
    func deviceKey(id: String) throws(StoreError) -> DeviceKeyRow?
    /// Revokes a live device key of `userID`, with the device keys it approved (and theirs in
    /// turn), and `writes(those keys' IDs)` in the same transaction; `false` (and nothing
    /// written) when there is none.
    func revokeDeviceKey(id: String, userID: String, at: Int64, writes: (_ cascaded: [String]) -> [StoreWrite]) throws(StoreError) -> Bool

    // Action challenges.
    /// Stores a challenge unless the account made `limit` or more since `windowStart`
    /// (``StoreError/Code/rateLimited``); counted and inserted in one transaction.
    func createActionChallenge(_ challenge: ActionChallengeRow, limit: Int, windowStart: Int64) throws(StoreError)
    /// Marks the challenge used and returns it; `nil` when unknown or already used. Of many
    /// concurrent callers exactly one gets it.
    func useActionChallenge(id: String, at: Int64) throws(StoreError) -> ActionChallengeRow?
    /// Records a device key's use.
    func touchDeviceKey(id: String, at: Int64) throws(StoreError)

    // Auth sessions travel sealed inside the auth_session string; the store only remembers which
    // were used, until they expire.
    /// Marks a session used; `false` when it already was (one atomic insert).
    func useSession(id: [UInt8], expiresAt: Int64) throws(StoreError) -> Bool
    /// Forgets used-session marks that expired before `now`; returns how many.
    func purgeUsedSessions(now: Int64) throws(StoreError) -> Int

    // Refresh tokens.
    func insertRefreshToken(_ token: RefreshTokenRow) throws(StoreError)
    /// Marks `hash` used and stores `next` in the same family, atomically; finds reuse, revocation
    /// and expiry. A reused token revokes its whole family.
    /// A token bound to a DPoP key (``RefreshTokenRow/jkt``) rotates only when `proof` is that
    /// key's thumbprint, decided in the same statement (else ``RefreshRotation/keyMismatch``,
    /// nothing written).
    /// `writes` go into the same transaction when the token rotates.
    ///
    /// With a `retryWindow` (milliseconds, above 0), a rotation records the token it made, and a
    /// token rotated less than `retryWindow` before `now` whose successor is still unused (its
    /// holder never had it: the answer was lost) rotates again: the successor is marked used, so
    /// that whoever shows it later revokes the family, and `next` takes its place
    /// (``RefreshRotation/retried(_:)``). Only one successor is ever live.
    func rotateRefreshToken(hash: [UInt8], proof: String?, retryWindow: Int64, next: @Sendable (RefreshTokenRow) -> RefreshTokenRow, now: Int64,
                            writes: [StoreWrite]) throws(StoreError) -> RefreshRotation
    /// The account a refresh token belongs to and the DPoP key it is bound to, whatever its
    /// state; `nil` when unknown.
    func refreshTokenOwner(hash: [UInt8]) throws(StoreError) -> (userID: String, jkt: String?, scope: String, clientID: String)?
    /// The token with `hash` while it is live at `now`: not yet rotated, its family not revoked,
    /// not expired; `nil` otherwise or when unknown. Writes nothing.
    func liveRefreshToken(hash: [UInt8], now: Int64) throws(StoreError) -> RefreshTokenRow?
    /// Revokes the family of the token with `hash`, with `writes` in the same transaction;
    /// returns whether such a token existed (nothing is written when none did).
    func revokeRefreshFamily(hash: [UInt8], now: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool
    /// Deletes up to `limit` refresh tokens that expired before `expiredBefore` and whose key is
    /// at least `from` and, when given, below `below` (keys sort by creation time,
    /// ``RefreshToken``), the lowest keys first, in one transaction; returns how many went.
    func purgeRefreshTokens(from: [UInt8], below: [UInt8]?, expiredBefore: Int64, limit: Int) throws(StoreError) -> Int

    // Rate limits.
    /// Counts one event in `bucket` for `key` in the window that starts at `windowStart`, in one
    /// atomic statement (parallel requests across instances share one count); returns the count
    /// including this one. A new window starts over.
    func count(bucket: String, key: [UInt8], windowStart: Int64) throws(StoreError) -> Int
    /// The counters kept for these buckets and keys (SHA-256 of the identifier), whatever their
    /// window; a counter never counted is absent.
    func rateCounts(_ keys: [RateCounterKey]) throws(StoreError) -> [RateCount]
    /// Deletes those counters, with `writes`, in one transaction; returns how many went.
    func clearRateCounts(_ keys: [RateCounterKey], writes: [StoreWrite]) throws(StoreError) -> Int
    /// Forgets rate-limit windows older than a day and audit rows from before `auditBefore` that
    /// every active log stream has delivered (``LogStreamRow/lastLogID``), all but the newest
    /// (IDs never go back, as they would on SQLite in an empty table), the audit rows `batch`
    /// IDs at a time, each batch its own transaction (a long backlog, say after
    /// a shorter retention, never holds the writers up for long); returns how many audit rows went.
    func purge(now: Int64, auditBefore: Int64, batch: Int) throws(StoreError) -> Int

    // Signing keys.
    func insertSigningKey(_ key: SigningKeyRow) throws(StoreError)
    /// Adds `key` and retires every other key at its creation time, in one transaction, unless a
    /// key was created after `unlessCreatedAfter`; returns whether it was added. Instances
    /// that find a scheduled rotation due at once add one key between them. Refused with
    /// ``StoreError/Code/signingKeyLimit`` while `limit` keys are held (retired ones count until
    /// they are deleted). `writes` (its audit row) go in the same transaction when it was added.
    func rotateSigningKey(_ key: SigningKeyRow, unlessCreatedAfter: Int64, limit: Int, writes: [StoreWrite]) throws(StoreError) -> Bool
    func signingKeys() throws(StoreError) -> [SigningKeyRow]
    /// Deletes the keys retired before `retiredBefore`, sealed private key and all (a key never
    /// retired is never deleted); returns the `kid`s this call deleted, so instances that do it
    /// at once report each key once. `writes(kids)` (their audit rows) go in the same
    /// transaction (the closure must not call the store).
    func deleteSigningKeys(retiredBefore: Int64, writes: (_ kids: [String]) -> [StoreWrite]) throws(StoreError) -> [String]
    /// Deletes the key `kid` now, sealed private key and all (a revocation), when another key
    /// that was never retired remains to sign, with `writes` (its audit row) in the same
    /// transaction. Refused with ``StoreError/Code/conflict`` when it is the last such key, and
    /// `false` when there is no such key.
    func revokeSigningKey(kid: String, writes: [StoreWrite]) throws(StoreError) -> Bool

    // Audit.
    func appendAudit(_ event: AuditEvent) throws(StoreError)
    func auditEvents(limit: Int) throws(StoreError) -> [AuditEvent]
    /// Successful audit events of `kinds` from `from` (inclusive) to `to` (exclusive), in
    /// milliseconds, counted by UTC day and kind, with each group's first and last time.
    func dailyEventCounts(from: Int64, to: Int64, kinds: [String]) throws(StoreError) -> [DailyEventCount]
    /// Accounts signed in since `since` (milliseconds): by a passkey (its last use) or otherwise
    /// (the account's last sign-in).
    func activeUsers(since: Int64) throws(StoreError) -> Int

    // Email codes, recovery codes, recoveries and the outbox (DESIGN.md, "Email codes, recovery
    // codes and recovery").
    /// Stores `code` as its address's only code, unless the address has one younger than
    /// `interval` ms (then `false`, nothing written); `writes` (its mail, its audit row) go in
    /// the same transaction.
    func issueEmailCode(_ code: EmailCodeRow, interval: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool
    /// The address's code, if any (for a throttle's `Retry-After`).
    func emailCode(email: String) throws(StoreError) -> EmailCodeRow?
    /// Counts one try against the address's code in one atomic statement, only while the code is
    /// unused, unexpired and has tries left: parallel tries on any number of instances share the
    /// budget, and at most `maxAttempts` are ever compared.
    func attemptEmailCode(email: String, maxAttempts: Int, now: Int64) throws(StoreError) -> EmailCodeAttempt
    /// Replaces the account's recovery codes with `hashes`, made under the code key `keyID`,
    /// with `writes` in the same transaction.
    func replaceRecoveryCodes(userID: String, hashes: [[UInt8]], keyID: String, at: Int64, writes: [StoreWrite]) throws(StoreError)
    func recoveryCodes(userID: String) throws(StoreError) -> [RecoveryCodeRow]
    /// The account's recoveries still holding at `now`, newest first.
    func activeRecoveries(userID: String, now: Int64) throws(StoreError) -> [RecoveryRow]
    /// Cancels every recovery of the account holding at `at`, and in the same transaction
    /// revokes every credential they added and every refresh-token family started by those
    /// credentials or by the sessions that opened them. `nil` when none was holding.
    func cancelRecoveries(userID: String, at: Int64, writes: [StoreWrite]) throws(StoreError) -> RecoveryCancellation?
    /// Marks recoveries whose hold ended by `now` finished, with `writes(row, account)` for each
    /// (its audit row, its notice) in the same transaction (the closure must not call the
    /// store); returns them.
    func finishRecoveries(now: Int64, writes: (RecoveryRow, UserRecord) -> [StoreWrite]) throws(StoreError) -> [RecoveryRow]
    /// Whether the session `sid` was ended: marked so (``endSession(_:at:until:writes:)``), its
    /// refresh family revoked, or a recovery it opened cancelled.
    func sessionEnded(_ sid: String) throws(StoreError) -> Bool
    /// The account `userID`, with whether `credential` is live (not revoked, still there) and
    /// whether the session `sid` was ended (``sessionEnded(_:)``), in one read: what every call
    /// with an access token, and every introspection, checks. `nil` when the account is gone.
    func tokenHolder(userID: String, credential: CredentialReference?, sid: String?) throws(StoreError) -> TokenHolder?
    /// Drops code mail whose code has expired, then claims up to `limit` due messages for
    /// `lease` ms (on PostgreSQL `FOR UPDATE SKIP LOCKED`, so instances never claim the same):
    /// mail, or with `logouts` the logout tokens' notices (``LogoutNotice``) instead.
    func claimMail(now: Int64, lease: Int64, limit: Int, logouts: Bool) throws(StoreError) -> MailClaim
    /// OpenID Connect Back-Channel Logout 1.0 §2.3: forgets subscriptions whose sessions expired,
    /// and queues a notice for up to `limit` whose sessions ended some other way than those that
    /// queue their own (an account blocked, a passkey revoked, a session ended: each queues in
    /// its own transaction). Returns how many were queued: a backstop, so that no way of ending
    /// a session goes unnoticed.
    func sweepLogouts(now: Int64, limit: Int) throws(StoreError) -> Int
    /// What waits in the outbox, mail and logout tokens' notices apart: how many, and when the
    /// oldest was queued (milliseconds), for `/metrics`.
    func outboxBacklog() throws(StoreError) -> [OutboxBacklog]
    /// Whether any session waits to be announced, or any notice to be sent: a sender has work.
    func hasLogoutWork() throws(StoreError) -> Bool
    /// The account's sessions whose clients want a logout token when they end, oldest first.
    func logoutSubscriptions(userID: String) throws(StoreError) -> [LogoutSubscriptionRow]
    /// A delivered message leaves the outbox.
    func mailDelivered(id: String) throws(StoreError)
    /// A failed delivery: tried again at `retryAt`, or dropped.
    func mailFailed(id: String, retryAt: Int64?, error: String) throws(StoreError)

    // MARK: device sign-in (RFC 8628)

    /// Stores a new device code, with `writes` (its audit row) in the same transaction;
    /// ``StoreError/Code/conflict`` (and nothing written) if its user code is taken.
    func createDeviceCode(_ row: DeviceCodeRow, writes: [StoreWrite]) throws(StoreError)
    /// The device code with this user code, whatever its state.
    func deviceCode(userCode: String) throws(StoreError) -> DeviceCodeRow?
    /// Approves (or denies) a pending, unexpired device code for `userID`, in one statement;
    /// `false` when it is no longer pending.
    func decideDeviceCode(userCode: String, approve: Bool, userID: String, approvedBy: String, now: Int64) throws(StoreError) -> Bool
    /// One poll by `clientID`, with the interval enforced in the same statement.
    func pollDeviceCode(hash: [UInt8], clientID: String, now: Int64) throws(StoreError) -> DevicePoll

    // MARK: administration (DESIGN.md, "Management API and operations")

    /// Accounts matching `query`, oldest first, and how many match in all.
    func users(_ query: UserQuery) throws(StoreError) -> (users: [ManagedUser], total: Int)

    /// For each of `models` (AAGUIDs in lower case) with a passkey not revoked: how many such
    /// passkeys there are, and on how many accounts.
    func livePasskeys(models: [String]) throws(StoreError) -> [String: (passkeys: Int, accounts: Int)]
    /// Keeps `number` as the highest serial number of a Metadata Service BLOB that verified under
    /// the root whose certificate's SHA-256 is `root`, when it is above the one kept, in one
    /// statement; returns the highest kept after it, `number` or above (FIDO MDS 3.0 §3.1.7: a
    /// BLOB numbered below the last one seen is ignored). Every instance shares it.
    func raiseMetadataNumber(root: [UInt8], number: Int64, at: Int64) throws(StoreError) -> Int64
    /// Marks the passkeys in use of `model` (an AAGUID in lower case) whose owners were not told
    /// yet that the Metadata Service's BLOB refuses it as told (an account blocked is passed over
    /// unmarked, so that it is told once unblocked), `batch` at a time in account
    /// order, each batch in one transaction with `writes` for it (the notices), so that each
    /// owner is told once, by one instance, also across restarts. They are found in one read
    /// that holds no write back; a passkey revoked since, or marked by another instance first,
    /// is passed over. Returns how many were marked.
    func tellRefusedPasskeys(model: String, at: Int64, batch: Int,
                             writes: (_ passkeys: [(passkey: CredentialRow, owner: UserRecord)]) -> [StoreWrite]) throws(StoreError) -> Int
    /// Up to `limit` accounts in ID order after `id` (from the first without it): the pages of an
    /// export of every account, each one range of the primary key, with no count or offset, so
    /// the millionth page costs what the first does.
    func users(after id: String?, limit: Int) throws(StoreError) -> [ManagedUser]
    /// Every passkey of the accounts whose IDs are after `id` (from the first without it) and up
    /// to `last`, in ID order: one page of that export's passkeys, one range of the index by
    /// account.
    func credentials(usersAfter id: String?, through last: String) throws(StoreError) -> [CredentialRow]
    /// How many unused recovery codes each account after `id` and up to `last` has, those with
    /// none left out: one range of the codes' primary key.
    func unusedRecoveryCodes(usersAfter id: String?, through last: String) throws(StoreError) -> [String: Int]
    /// Every device key of the same range of accounts, in ID order.
    func deviceKeys(usersAfter id: String?, through last: String) throws(StoreError) -> [DeviceKeyRow]
    /// Whether the account of `email` (or with ID `userID`) turned sign-in by email code off;
    /// `false` without such an account. Read apart from ``UserRecord``, so that no other read of
    /// an account pays for it.
    func emailSignInOff(email: String) throws(StoreError) -> Bool
    func emailSignInOff(userID: String) throws(StoreError) -> Bool
    /// Turns the account's sign-in by email code off or on, with `writes`; `false` when there is
    /// no such account.
    func setEmailSignIn(userID: String, off: Bool, writes: [StoreWrite]) throws(StoreError) -> Bool
    func managedUser(id: String) throws(StoreError) -> ManagedUser?
    /// The account's `app_metadata` as stored (a JSON object's text), `nil` for none or no such
    /// account: what ``ServerConfiguration/appMetadataClaims`` copy into tokens.
    func appMetadata(userID: String) throws(StoreError) -> String?
    /// Applies `change` with `writes` in one transaction. Blocking also ends every session that
    /// started before it (``UserRecord/sessionsRevokedAt``). `nil` when there is no such account;
    /// ``StoreError/Code/emailTaken`` when the new address is another account's.
    func updateUser(id: String, _ change: UserChange, at: Int64, writes: [StoreWrite]) throws(StoreError) -> ManagedUser?
    /// Erases the account and every row bound to it (credentials, device keys, tokens, codes,
    /// challenges, recoveries, queued mail, device sign-ins it approved), and replaces its ID in the audit trail with
    /// `pseudonym` (its details cleared), with `writes`, in one transaction; `false` when there
    /// is no such account. The clients it was signed in to that asked for logout tokens get
    /// theirs, naming it by its ID, queued at `at`.
    func deleteUser(id: String, pseudonym: String, at: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool
    /// The account's refresh-token families with a token neither used, revoked nor expired at
    /// `now` (the caller drops those that ``UserRecord/sessionsRevokedAt`` ended), as `query`
    /// picks them; one family by its ID is found by its index. A list is a scan of the
    /// account's refresh tokens: an owner's or an administrator's read, which no sign-in pays an
    /// index for on SQLite.
    func sessions(userID: String, now: Int64, _ query: SessionQuery) throws(StoreError) -> [SessionRow]
    /// The account a session ID belongs to, a browser's (``WebSessionRow/id``) or an app's
    /// refresh-token family, live or not; `nil` when no row has it. Both are indexed.
    func sessionOwner(id: String) throws(StoreError) -> String?
    /// Ends every session the account started before `at` (``UserRecord/sessionsRevokedAt``),
    /// with `writes`; `false` when there is no such account.
    func revokeSessions(userID: String, at: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool
    /// Revokes a passkey of the account, even its last (an administrator's removal), with the
    /// device keys it approved, and `writes(their IDs)`.
    func adminRevokeCredential(id: [UInt8], userID: String, at: Int64, writes: (_ cascaded: [String]) -> [StoreWrite]) throws(StoreError) -> Bool
    /// Deletes the account's recovery codes, with `writes`; returns how many unused ones went.
    func deleteRecoveryCodes(userID: String, writes: [StoreWrite]) throws(StoreError) -> Int
    func auditEntries(_ query: AuditQuery) throws(StoreError) -> [AuditEntry]
    /// How many rows `query` matches, whatever its limit and offset.
    func auditCount(_ query: AuditQuery) throws(StoreError) -> Int
    /// Adds a client, with `writes` in the same transaction.
    func insertClient(_ client: ClientRow, writes: [StoreWrite]) throws(StoreError)
    /// The clients kept in the database, oldest first, `limit` of them from `offset`.
    func clientRows(offset: Int, limit: Int) throws(StoreError) -> [ClientRow]
    /// How many clients the database keeps.
    func clientCount() throws(StoreError) -> Int
    /// Deletes a client added to the database and, in the same transaction, ends every session
    /// issued to it (its refresh-token families revoked at `at`); returns how many it ended, or
    /// `nil` when there is no such client; `writes(ended)` go in the same transaction (the
    /// closure must not call the store).
    func deleteClient(id: String, at: Int64, writes: (_ ended: Int) -> [StoreWrite]) throws(StoreError) -> Int?
    /// The client kept in the database under `id`, if any.
    func clientRow(id: String) throws(StoreError) -> ClientRow?
    /// Writes `client`'s settings (name, secret, grants, scopes, addresses, audiences, keys) over the row
    /// with its ID, with `writes` in the same transaction, only while that row still reads as
    /// `expected`: `true` when written, `false` (nothing written) when it changed meanwhile, `nil`
    /// when there is no such client.
    func updateClient(_ client: ClientRow, expected: ClientRow, writes: [StoreWrite]) throws(StoreError) -> Bool?

    // MARK: the web (DESIGN.md, "The web")

    /// The SSO session whose cookie hashes to `hash`, whatever its state.
    func webSession(hash: [UInt8]) throws(StoreError) -> WebSessionRow?
    /// Records a request on a live session (its idle clock) and, with `authTime`, a step-up
    /// (`amr`, `credential`); `false` when the session is no longer live at `now`.
    func touchWebSession(hash: [UInt8], now: Int64, authTime: Int64?, amr: [String], credential: String?) throws(StoreError) -> Bool
    /// The account's SSO sessions not revoked and not past their absolute end at `now`, as
    /// `query` picks them.
    func webSessions(userID: String, now: Int64, _ query: SessionQuery) throws(StoreError) -> [WebSessionRow]
    /// Revokes the account's session `id`, with `writes`; `false` when it has none live by that name.
    func revokeWebSession(id: String, userID: String, at: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool
    /// The code with this hash and when it was used, if it was; `nil` when unknown.
    func authorizationCode(hash: [UInt8]) throws(StoreError) -> (row: AuthorizationCodeRow, usedAt: Int64?)?
    /// Ends the session `sid` (OIDC `sid`, its refresh family) at `at`: marks it ended until
    /// `until`, a time after which none of its access tokens is valid, and in the same
    /// transaction revokes every refresh token of the family and applies `writes`. The mark is
    /// what ends a session that has no refresh token (RFC 7009 §2.1). `false`, with nothing
    /// written, when the session was marked ended before.
    func endSession(_ sid: String, at: Int64, until: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool
    /// Ends many of the account `userID`'s sessions in one transaction: each browser session of
    /// `web` as ``revokeWebSession(id:userID:at:writes:)`` ends one, each app session of `apps`
    /// (a refresh family of the account's) as ``endSession(_:at:until:writes:)`` does, and
    /// `writes(id)` applied for each one ended. Returns the IDs it ended, browsers' first; one
    /// already ended, unknown, or another account's is passed over.
    func endSessions(userID: String, web: [String], apps: [String], at: Int64, until: Int64, writes: (String) -> [StoreWrite]) throws(StoreError) -> [String]

    // MARK: roles

    /// Adds a role, with `writes`: a conflict when its name (or ID) is taken.
    func insertRole(_ role: RoleRow, writes: [StoreWrite]) throws(StoreError)
    /// The roles whose name contains `nameFilter` (any case; every role without it), by name,
    /// a page at a time, and how many there are.
    func roles(nameFilter: String?, offset: Int, limit: Int) throws(StoreError) -> (roles: [RoleRow], total: Int)
    func role(id: String) throws(StoreError) -> RoleRow?
    /// Renames and redescribes a role (and sets its provider's ID), with `writes`: the row as
    /// written, `nil` when there is none; a conflict when the name is another role's.
    func updateRole(id: String, name: String, description: String?, externalID: String?, at: Int64, writes: [StoreWrite]) throws(StoreError) -> RoleRow?
    /// Deletes a role, its permissions and every account's membership, with `writes`: `false`
    /// when there is none.
    func deleteRole(id: String, writes: [StoreWrite]) throws(StoreError) -> Bool
    /// A role's permissions, by API and name.
    func rolePermissions(roleID: String) throws(StoreError) -> [Permission]
    /// Adds and removes a role's permissions (one already there, or not there, is passed over),
    /// with `writes`: `false`, with nothing written, when there is no such role.
    func changeRolePermissions(roleID: String, adding: [Permission], removing: [Permission], at: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool
    /// Gives an account roles until `expiresAt` (milliseconds; `nil`: for good), or takes them,
    /// with `writes`: a role it has already is given the new end. `false`, with nothing
    /// written, when there is no such account; a conflict when a role to give is gone.
    func changeUserRoles(userID: String, roleIDs: [String], give: Bool, expiresAt: Int64?, at: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool
    /// Gives a role to accounts until `expiresAt` (`nil`: for good) and takes it from others in
    /// one transaction, with `writes` (an account that has it already is given the new end):
    /// `false`, with nothing written, when there is no such role; a conflict when an account to
    /// give it is not there.
    func changeRoleMembers(roleID: String, adding: [String], removing: [String], expiresAt: Int64?, at: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool
    /// An account's roles at `at` (milliseconds: one that ended by then is not), by name, each
    /// with when the account's membership ends.
    func userRoles(userID: String, at: Int64) throws(StoreError) -> [RoleRow]
    /// The roles at `at` of each of `userIDs` (at most 100), by account, each account's by name:
    /// one read for a page of accounts. An account with none is absent.
    func userRoles(userIDs: [String], at: Int64) throws(StoreError) -> [String: [RoleRow]]
    /// The accounts that have a role at `at`, in the order they were given it, a page at a time,
    /// and how many.
    func roleMembers(roleID: String, at: Int64, offset: Int, limit: Int) throws(StoreError) -> (members: [RoleMember], total: Int)
    /// Every permission an account's roles grant at `at`, with the role each comes from.
    func userPermissions(userID: String, at: Int64) throws(StoreError) -> [GrantedPermission]
    /// The names of the permissions an account's roles grant at `at` for one API, each once,
    /// sorted: what its access tokens for that API list.
    func permissionNames(userID: String, audience: String, at: Int64) throws(StoreError) -> [String]
    /// At most `limit` memberships that ended by `before` (their end at or before it: a role
    /// counts until its end, not at it), the earliest first.
    func endedRoles(before: Int64, limit: Int) throws(StoreError) -> [EndedRole]
    /// Deletes each of `ended` still as it was read (a membership given a new end meanwhile
    /// stays), with `writes` for those deleted: the `writes` of one not deleted are left out,
    /// so an account's history says only what happened. Returns those deleted.
    func deleteEndedRoles(_ ended: [(role: EndedRole, writes: [StoreWrite])]) throws(StoreError) -> [EndedRole]

    // MARK: log streams

    /// Adds a stream that starts after the newest audit event (its `lastLogID` is set to that
    /// event's ID), with `writes` in the same transaction; returns the row as written.
    func insertLogStream(_ stream: LogStreamRow, writes: [StoreWrite]) throws(StoreError) -> LogStreamRow
    /// Every stream, oldest first.
    func logStreams() throws(StoreError) -> [LogStreamRow]
    /// Writes `stream`'s settings (name, status, endpoint, content type and format, filters, authorization)
    /// over the row with its ID while that row's settings still read as `expected`'s, with
    /// `writes` in the same transaction: `true` when written, `false` when it changed meanwhile,
    /// `nil` when there is no such stream. Its delivery (last event, failures) is kept; a stream
    /// made active again is tried at once.
    func updateLogStream(_ stream: LogStreamRow, expected: LogStreamRow, writes: [StoreWrite]) throws(StoreError) -> Bool?
    /// Moves a stream back so that it sends again every event after `after` (at most its last
    /// delivered one), with `writes`: `false` when there is no such stream or it is not that far.
    func rewindLogStream(id: String, after: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool
    /// Deletes a stream, with `writes`; `false` when there is none.
    func deleteLogStream(id: String, writes: [StoreWrite]) throws(StoreError) -> Bool
    /// Takes (or renews) the lease on an active stream whose back-off is over, for `owner` until
    /// `until`, unless another owner's lease holds at `now`: the stream as it is then, or `nil`.
    /// One instance sends a stream at a time.
    func claimLogStream(id: String, owner: String, now: Int64, until: Int64) throws(StoreError) -> LogStreamRow?
    /// Records that the endpoint took every event up to `lastLogID`, while `owner`'s lease holds
    /// and the stream has not moved past it: `false` when it did not hold.
    func logStreamDelivered(id: String, owner: String, lastLogID: Int64, at: Int64) throws(StoreError) -> Bool
    /// Records a failed POST while `owner`'s lease holds: one more failure, `error`, and no try
    /// before `retryAt`.
    func logStreamFailed(id: String, owner: String, error: String, retryAt: Int64) throws(StoreError)
    /// How many audit events there are after `id`, counting at most `limit`.
    func auditEventsPending(after id: Int64, limit: Int) throws(StoreError) -> Int
    /// The ID of the first audit event written at or after `at` (milliseconds), or `nil`.
    func firstAuditID(atOrAfter at: Int64) throws(StoreError) -> Int64?
    /// Moves an active stream forward from `from` to `to` (its endpoint will not get the events
    /// between: the purge takes them), with `writes`: `false` when the stream is not active at
    /// `from` any more (delivered, rewound, paused or removed meanwhile).
    func skipLogStream(id: String, from: Int64, to: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool

    // MARK: the key-encryption key

    /// The keys sealed under the key-encryption key (``SealedKeyRow``).
    func sealedKeys() throws(StoreError) -> [SealedKeyRow]
    /// Unused recovery codes by the code key they were made under (``RecoveryCodeRow/keyID``).
    func codeKeyUsage() throws(StoreError) -> [CodeKeyUsage]
    /// Everything sealed under the key-encryption key, for ``rekey(_:from:)``.
    func sealedMaterial() throws(StoreError) -> SealedMaterial
    /// Writes `change` over `read` (what ``sealedMaterial()`` returned) in one transaction and
    /// discards every pending email code (its hash is keyed by the old key); unused recovery
    /// codes without a key ID get `change.unlabelledCodeKeyID`. Throws
    /// ``StoreError/Code/conflict``, changing nothing, when a signing key or a queued message
    /// appeared or changed since `read` (something still writes under the old key), or when an
    /// unused recovery code's key ID is not in `change.codeKeyIDs`. A message delivered in
    /// between is no conflict.
    func rekey(_ change: SealedMaterial, from read: SealedMaterial) throws(StoreError)

    /// Rows per table (users, credentials, used_sessions, refresh_tokens, signing_keys, audit_events).
    func rowCounts() throws(StoreError) -> [String: Int]

    /// A cheap round trip, for health checks.
    func ping() throws(StoreError)
}
