public import SignetAPI

extension Ceremonies {
    /// `GET /me/email-sign-in`: whether email codes sign in to the account.
    public func emailSignIn(_ principal: Principal) throws -> EmailSignIn {
        EmailSignIn(enabled: try !store.emailSignInOff(userID: principal.user.id))
    }

    /// `PUT /me/email-sign-in`, the account page's switch: an owner who keeps passkeys turns
    /// sign-in by email code off, so that whoever reads the mailbox cannot sign in, or start a
    /// recovery, with a code (the route asks for a fresh passkey check first). Off only with
    /// another way back in: a second live passkey or an unused recovery code, else 409
    /// `backup_method_required`. Codes then neither go out to the address nor sign in, also
    /// one mailed before; recovery codes, changes of address and notices are not affected.
    /// Audited (`email_sign_in_off`, `email_sign_in_on`) and told to the address.
    public func setEmailSignIn(_ request: EmailSignIn, principal: Principal, context: RequestContext) throws -> EmailSignIn {
        let user = principal.user
        if !request.enabled {
            let passkeys = try store.credentials(userID: user.id).filter { $0.revokedAt == nil }.count
            let codes = try recoveryCodesStatus(userID: user.id).remaining
            guard passkeys >= 2 || (passkeys >= 1 && codes >= 1) else {
                throw AuthError(.backupMethodRequired, "\(passkeys) live passkey(s) and \(codes) unused recovery code(s)")
            }
        }
        let event = auditEvent(request.enabled ? .emailSignInOn : .emailSignInOff, user: user.id, client: principal.clientID, context: context)
        guard try store.setEmailSignIn(userID: user.id, off: !request.enabled, writes: [.audit(event)] + notice(.emailSignIn(enabled: request.enabled), to: user)) else {
            throw AuthError(.userUnknown, "no account \(user.id.prefix(64))")
        }
        return request
    }
}
