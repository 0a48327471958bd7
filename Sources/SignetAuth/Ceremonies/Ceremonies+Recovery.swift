import Foundation
public import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// Recovery codes and recovery (DESIGN.md, "Recovery, slower and stricter than sign-in").
extension Ceremonies {
    /// Codes in a set.
    static let recoveryCodeCount = 10
    /// Crockford's base32 alphabet: no I, L, O or U, so a code read aloud or retyped survives.
    static let recoveryAlphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// A recovery code as typed: upper case, dashes and spaces gone, O read as 0 and I, L as 1.
    package static func normalizedRecoveryCode(_ text: String) -> String {
        String(text.uppercased().prefix(64).compactMap { c -> Character? in
            switch c {
            case "-", " ": nil
            case "O": "0"
            case "I", "L": "1"
            default: c
            }
        })
    }

    /// 12 characters of base32 from the random source (60 bits), shown as `XXXX-XXXX-XXXX`.
    func newRecoveryCode() -> String {
        let chars = random(12).map { Self.recoveryAlphabet[Int($0 & 31)] }
        return stride(from: 0, to: 12, by: 4).map { String(chars[$0..<($0 + 4)]) }.joined(separator: "-")
    }

    /// `POST /me/recovery-codes` (step-up): a new set of 10, shown once and stored as HMACs; the
    /// earlier set stops working. Refused to a session under a recovery hold.
    public func createRecoveryCodes(_ principal: Principal, context: RequestContext) throws -> RecoveryCodes {
        let user = principal.user
        if let held = try heldRecovery(principal) { throw AuthError(.recoveryHold, "recovery \(held.id) holds this session") }
        let codes = (0..<Self.recoveryCodeCount).map { _ in newRecoveryCode() }
        let hashes = codes.map { codeHash("recovery", owner: user.id, code: Self.normalizedRecoveryCode($0)) }
        try store.replaceRecoveryCodes(userID: user.id, hashes: hashes, keyID: codeKeyID, at: nowMillis, writes: [
            .audit(auditEvent(.recoveryCodesCreated, user: user.id, client: principal.clientID, context: context)),
        ] + notice(.recoveryCodesCreated, to: user))
        return RecoveryCodes(codes: codes)
    }

    /// `GET /me/recovery-codes`: how many are left.
    public func recoveryCodesStatus(_ principal: Principal) throws -> RecoveryCodesStatus { try recoveryCodesStatus(userID: principal.user.id) }

    func recoveryCodesStatus(userID: String) throws -> RecoveryCodesStatus {
        let codes = try store.recoveryCodes(userID: userID)
        return RecoveryCodesStatus(remaining: codes.filter { $0.usedAt == nil }.count, created_at: codes.map(\.createdAt).max().map { $0 / 1000 })
    }

    /// The recovery-code grant (`urn:signet:params:oauth:grant-type:recovery-code`): the try is
    /// counted per address in the database first (`passwordless.max_attempts` an hour, always
    /// on), then compared in constant time with each unused code of the account, then used once
    /// in the transaction that issues the tokens (`amr: ["otp"]`).
    public func recoveryCodeGrant(_ request: TokenRequest, context: RequestContext) throws -> TokenResponse {
        do {
            let client = try tokenClient(request, grant: GrantNames.recoveryCode, context: context)
            guard let username = request.username, let given = request.recovery_code else { throw AuthError.malformed("username and recovery_code are required") }
            let email = try Self.emailAddress(username, member: "username")
            try countRecoveryTry(email)
            let grant = try tokenGrant(scope: request.scope, audience: request.audience, client: client, context: context)
            let (user, writes) = try matchRecoveryCode(email: email, given: given)
            return try codeTokens(user: user, client: client, grant: grant, kind: .recoveryCodeSignIn, writes: writes, context: context)
        } catch {
            throw recoveryRefused(error, client: request.client_id, context: context)
        }
    }

    /// A recovery-code sign-in on the pages (`/login/recovery`): the try counted and the code
    /// matched as the grant does them, then its use, the notice and the SSO session
    /// (`amr: ["otp"]`: a code session, so a passkey it adds opens a recovery) in one transaction.
    public func webRecoveryCodeSignIn(email text: String, code: String, userAgent: String?, context: RequestContext) throws -> WebSignIn {
        do {
            let email = try Self.emailAddress(text, member: "email")
            try countRecoveryTry(email)
            let (user, writes) = try matchRecoveryCode(email: email, given: code)
            return try codeWebSession(user: user, kind: .recoveryCodeSignIn, writes: writes, userAgent: userAgent, used: .recoveryCodeInvalid, context: context)
        } catch {
            throw recoveryRefused(error, client: Self.webClient.id, context: context)
        }
    }

    /// One try against the address's budget, refused past it: counted before any code is
    /// compared, so the budget holds however the tries come.
    func countRecoveryTry(_ email: String) throws {
        let budget = rate(.recoveryAttempts)
        if let wait = try attempts(.recoveryAttempts, budget, key: email) {
            throw Self.rateLimited(wait, "more than \(budget.limit) recovery-code tries for this address in an hour")
        }
    }

    /// The account and the writes that use its code (and tell its owner), when `given` is one
    /// of its unused recovery codes.
    func matchRecoveryCode(email: String, given: String) throws -> (UserRecord, [StoreWrite]) {
        guard let user = try store.user(email: email) else { throw AuthError(.recoveryCodeInvalid, "no account") }
        // Each unused code is compared, in constant time, with the HMAC under the code key it
        // was made under; one from before key IDs were stored, with the HMAC under each.
        let normalized = Self.normalizedRecoveryCode(given)
        let unused = try store.recoveryCodes(userID: user.id).filter { $0.usedAt == nil }
        let needed = Set(unused.flatMap { $0.keyID.map { [$0] } ?? Array(codeKeys.keys) })
        let candidates = Dictionary(uniqueKeysWithValues: needed.compactMap { id in
            codeKeys[id].map { (id, codeHash("recovery", owner: user.id, code: normalized, key: $0)) }
        })
        var matched: [UInt8]?
        for code in unused {
            let mine = code.keyID.map { candidates[$0].map { [$0] } ?? [] } ?? Array(candidates.values)
            for candidate in mine where ConstantTime.equals(code.hash, candidate) { matched = code.hash }
        }
        guard let hash = matched else { throw AuthError(.recoveryCodeInvalid, "no unused recovery code of the account matches") }
        // The owner hears of every use: a recovery code in someone else's hands signs in
        // without a passkey, and nothing else would tell.
        return (user, [.useRecoveryCode(userID: user.id, hash: hash, at: nowMillis)] + notice(.recoveryCodeUsed(remaining: unused.count - 1), to: user))
    }

    /// A refused recovery-code sign-in: counted against the address's failures, measured, audited.
    func recoveryRefused(_ error: any Error, client: String?, context: RequestContext) -> AuthError {
        let failure = failed(AuthError(error), context: context)
        metrics.ceremony("recovery_code", reason: failure.reason.rawValue)
        audit(.recoveryCodeSignIn, refused: failure, client: client, context: context)
        return failure
    }

    // MARK: the hold

    /// The recovery holding `principal`'s session, if one does: a code session on an account
    /// with a recovery open, or a session started by a credential a holding recovery added.
    func heldRecovery(_ principal: Principal) throws -> RecoveryRow? {
        let active = try store.activeRecoveries(userID: principal.user.id, now: nowMillis)
        guard let newest = active.first else { return nil }
        if principal.isCodeSession { return newest }
        guard let credential = principal.credential, let recoveryID = try recoveryID(of: credential) else { return nil }
        return active.first { $0.id == recoveryID }
    }

    /// When a credential (a passkey ID in base64url, or a device key ID, as `cred` names it) was
    /// added, whether it is live, and the recovery that added it; `nil` when there is none.
    func origin(of credential: String) throws -> (createdAt: Int64, live: Bool, recoveryID: String?)? {
        switch CredentialReference(credential) {
        case .deviceKey(let id): try store.deviceKey(id: id).map { ($0.createdAt, $0.revokedAt == nil, $0.recoveryID) }
        case .passkey(let id): try store.credential(id: id).map { ($0.createdAt, $0.revokedAt == nil, $0.recoveryID) }
        case nil: nil
        }
    }

    /// The recovery that added a credential.
    func recoveryID(of credential: String) throws -> String? { try origin(of: credential)?.recoveryID }

    /// Refuses with `recovery_hold` when a holding recovery added `recoveryID`'s credential.
    func refuseHeld(credentialRecovery recoveryID: String?, userID: String, what: String) throws {
        guard let recoveryID else { return }
        if try store.activeRecoveries(userID: userID, now: nowMillis).contains(where: { $0.id == recoveryID }) {
            throw AuthError(.recoveryHold, "\(what) was added by recovery \(recoveryID), which still holds")
        }
    }

    /// A held session may not change a credential that predates its recovery.
    func refuseHeldChange(_ principal: Principal, targetRecovery: String?) throws {
        guard let held = try heldRecovery(principal), targetRecovery != held.id else { return }
        throw AuthError(.recoveryHold, "a session held by recovery \(held.id) may not change a credential from before it")
    }

    /// The recovery a credential that `principal` adds belongs to, and the writes that open it:
    /// a held session's additions join its recovery; a code session adding to an account that
    /// has a live credential opens a new one (with its notice); otherwise none.
    func recoveryForAddition(_ principal: Principal, context: RequestContext) throws -> (id: String?, writes: [StoreWrite]) {
        if let held = try heldRecovery(principal) { return (held.id, []) }
        guard principal.isCodeSession else { return (nil, []) }
        let userID = principal.user.id
        let hasCredential = try store.credentials(userID: userID).contains { $0.revokedAt == nil }
            || store.deviceKeys(userID: userID).contains { $0.revokedAt == nil }
        guard hasCredential else { return (nil, []) }
        let now = nowMillis
        let recovery = RecoveryRow(id: "rc_" + Base64URL.encode(timeOrderedID()), userID: userID, openedAt: now,
                                   holdUntil: now + Int64(configuration.recoveryHold) * 1000, session: principal.sessionID)
        return (recovery.id, [
            .openRecovery(recovery),
            .audit(auditEvent(.recoveryOpened, user: userID, client: principal.clientID, detail: "hold until \(recovery.holdUntil / 1000)", context: context)),
        ] + notice(.recoveryOpened(hours: max(1, configuration.recoveryHold / 3600)), to: principal.user))
    }

    /// `GET /me/recovery`: the recovery holding the account, if any, and what it added.
    public func recovery(_ principal: Principal) throws -> RecoveryState { try recoveryState(userID: principal.user.id) }

    /// `GET /api/v2/users/{id}/recovery` and `signet admin users show`: the same, for an operator.
    public func recovery(userID: String) throws -> RecoveryState { try recoveryState(userID: existingUser(userID).user.id) }

    func recoveryState(userID: String) throws -> RecoveryState {
        guard let open = try store.activeRecoveries(userID: userID, now: nowMillis).first else { return RecoveryState(recovery: nil) }
        let passkeys = try store.credentials(userID: userID).filter { $0.recoveryID == open.id && $0.revokedAt == nil }.map { Base64URL.encode($0.id) }
        let keys = try store.deviceKeys(userID: userID).filter { $0.recoveryID == open.id && $0.revokedAt == nil }.map(\.id)
        return RecoveryState(recovery: RecoveryInfo(id: open.id, opened_at: open.openedAt / 1000, hold_until: open.holdUntil / 1000, passkeys: passkeys, device_keys: keys))
    }

    /// `DELETE /me/recovery`: with a session from a live credential that predates the recovery,
    /// cancels it, revoking in one transaction everything it added and every session those
    /// credentials, or the code session that opened it, started.
    public func cancelRecovery(_ principal: Principal, context: RequestContext) throws {
        let user = principal.user
        let active = try store.activeRecoveries(userID: user.id, now: nowMillis)
        guard let oldest = active.map(\.openedAt).min() else { throw AuthError.notFound(.notFound, "no recovery holds this account") }
        guard !principal.isCodeSession, let credential = principal.credential else {
            throw AuthError(.recoveryHold, "only a session from a credential that predates the recovery may cancel it")
        }
        guard let found = try origin(of: credential), found.live, found.createdAt < oldest,
              found.recoveryID.map({ id in !active.contains { $0.id == id } }) ?? true
        else {
            throw AuthError(.recoveryHold, "credential \(credential) does not predate the recovery")
        }
        try cancelRecoveries(of: user, event: pendingAuditEvent(.recoveryCancelled, user: user.id, client: principal.clientID, credential: credential, context: context))
    }

    /// An operator cancels the account's open recoveries (`DELETE /api/v2/users/{id}/recovery`,
    /// `signet admin users cancel-recovery`), for an owner who can no longer sign in with what
    /// predates them: as when the owner cancels, what they added is revoked and the sessions
    /// they started end, in one transaction with the audit row and the notice to the address.
    public func adminCancelRecovery(userID: String, by caller: ManagementCaller, context: RequestContext) throws {
        try cancelRecoveries(of: existingUser(userID).user, event: pendingAuditEvent(.adminRecoveryCancelled, user: userID, client: caller.clientID, context: context))
    }

    /// Cancels the account's open recoveries with `event` and the notice to its address, in one
    /// transaction; 404 when none holds it.
    func cancelRecoveries(of user: UserRecord, event: AuditEvent) throws {
        guard let cancelled = try store.cancelRecoveries(userID: user.id, at: nowMillis, writes: [.audit(event)] + notice(.recoveryCancelled, to: user)) else {
            throw AuthError.notFound(.notFound, "no recovery holds this account")
        }
        counted(event)
        for id in cancelled.credentials { credentialCache.remove(id) }
    }
}
