import Foundation
public import SignetAPI
import SignetWebAuthn

/// The owner changes the account's address (a code to the new address proves it is theirs, and
/// the old address hears of the change) or its name. Both halves are refused to a session a recovery holds,
/// since moving the address would move every later notice away from the owner.
extension Ceremonies {
    /// Whose change a code is for: stored as the code row's holder, where a sign-in code names
    /// its client, so neither kind of code can stand in for the other.
    static func emailChangeHolder(_ userID: String) -> String { "email-change:" + userID }

    /// `POST /me/email` `{email}` (step-up): mails a code to the new address, under the same
    /// throttles as a sign-in code. The answer does not say whether another account has the
    /// address; the code's owner learns that when it is used.
    public func startEmailChange(_ principal: Principal, email text: String, context: RequestContext) throws -> EmailChangeStatus {
        guard configuration.email.canSend else { throw AuthError(.connectionDisabled, "no email.smtp_url is configured") }
        let user = principal.user
        if let held = try heldRecovery(principal) { throw AuthError(.recoveryHold, "recovery \(held.id) holds this session") }
        let email = try Self.emailAddress(text, member: "email")
        guard email != user.email else { throw AuthError.malformed("that is already the account's address") }
        // Each address has its own throttle; this one keeps an account from mailing codes to a
        // new address after another (Signet's relay as someone's mail bomb).
        let budget = rate(.codesPerIdentifier)
        if let wait = try attempts(.codesPerIdentifier, budget, key: Self.emailChangeHolder(user.id)) {
            throw Self.rateLimited(wait, "more than \(budget.limit) address changes asked for this account in an hour")
        }
        let event = pendingAuditEvent(.emailChangeStarted, user: user.id, client: principal.clientID, context: context)
        _ = try queueCode(to: email, purpose: "email-change", holder: Self.emailChangeHolder(user.id), mailed: true,
                          language: user.locale ?? context.language, event: event) { .emailChangeCode($0, minutes: $1) }
        return EmailChangeStatus(email: email, email_verified: false, expires_in: configuration.passwordless.codeTTL)
    }

    /// `POST /me/email/verify` `{email, code}`: the code the new address received makes it the
    /// account's, verified, in one transaction with the code's use, the audit row and the notice
    /// to the old address. Tries are counted as for a sign-in code.
    public func finishEmailChange(_ principal: Principal, email text: String, code: String, context: RequestContext) throws -> EmailChangeStatus {
        let user = principal.user
        do {
            if let held = try heldRecovery(principal) { throw AuthError(.recoveryHold, "recovery \(held.id) holds this session") }
            let email = try Self.emailAddress(text, member: "email")
            let row = try countedCode(email: email, code: Self.typedCode(code), purpose: "email-change")
            guard row.clientID == Self.emailChangeHolder(user.id) else { throw AuthError(.otpInvalid, "the code is not for this account's change") }
            let now = nowMillis
            guard try store.updateUser(id: user.id, UserChange(email: email, emailVerified: true), at: now, writes: [
                .useEmailCode(email: row.email, id: row.id, at: now),
                .audit(auditEvent(.emailChanged, user: user.id, client: principal.clientID, detail: "from \(user.email) to \(email)", context: context)),
            ] + notice(.emailChanged(to: email), to: user)) != nil else { throw AuthError(.userUnknown, "the account is gone") }
            return EmailChangeStatus(email: email, email_verified: true, expires_in: nil)
        } catch {
            let failure = AuthError(error)
            audit(.emailChanged, refused: failure, user: user.id, context: context)
            throw failure
        }
    }

    /// `PATCH /me` `{name}`: the account's display name, as sign-up takes it (trimmed, at most 200
    /// characters, no control or bidirectional characters); empty or `null` clears it. Tokens
    /// carry the new name from the next sign-in or refresh; passkeys made before keep the name
    /// their authenticator stored.
    public func rename(_ principal: Principal, name: String?, context: RequestContext) throws -> UserInfo {
        let user = principal.user
        let cleaned = try Self.displayName(name, member: "name", limit: 200)
        guard let updated = try store.updateUser(id: user.id, UserChange(name: .some(cleaned)), at: nowMillis, writes: [
            .audit(auditEvent(.nameChanged, user: user.id, client: principal.clientID, context: context)),
        ]) else { throw AuthError(.userUnknown, "the account is gone") }
        return UserInfo(sub: user.id, email: updated.user.email, email_verified: updated.user.emailVerified, name: updated.user.name)
    }
}
