/// Every kind of event the audit log records (DESIGN.md, "Security rules": every
/// security-relevant event): the `signet_event` of `GET /api/v2/logs`, the `event` label of
/// `signet_audit_events_total`, and what `signet admin logs` prints. This is the one list: the
/// ceremonies can write no other kind, and the README's table is checked against it by a test, so
/// an operator wiring the log into an alerting system knows every name it can see.
public enum AuditKind: String, CaseIterable, Sendable, Codable {
    // Sign-up, sign-in and sign-out.
    case signUp = "sign_up"
    case signUpChallenge = "sign_up_challenge"
    case signIn = "sign_in"
    case stepUp = "step_up"
    case possibleClonedAuthenticator = "possible_cloned_authenticator"
    case otpSent = "otp_sent"
    case otpSignIn = "otp_sign_in"
    case otpSignUp = "otp_sign_up"
    case recoveryCodeSignIn = "recovery_code_sign_in"
    case deviceCode = "device_code"
    case deviceApproved = "device_approved"
    case deviceDenied = "device_denied"
    case deviceSignIn = "device_sign_in"
    case signOut = "sign_out"
    // The browser's code flow and clients.
    case authorizationCodeIssued = "authorization_code_issued"
    case authorizationCode = "authorization_code"
    case authorizationCodeExchanged = "authorization_code_exchanged"
    case authorizationCodeReused = "authorization_code_reused"
    case clientAuthentication = "client_authentication"
    case clientCredentials = "client_credentials"
    // Refresh tokens and sessions.
    case refresh
    case refreshTokenReused = "refresh_token_reused"
    case refreshTokenRevoked = "refresh_token_revoked"
    case sessionRevoked = "session_revoked"
    // The account.
    case addPasskey = "add_passkey"
    case passkeyAdded = "passkey_added"
    case passkeyRevoked = "passkey_revoked"
    case deviceKeyEnrolled = "device_key_enrolled"
    case deviceKeyRevoked = "device_key_revoked"
    case nameChanged = "name_changed"
    case emailChangeStarted = "email_change_started"
    case emailChanged = "email_changed"
    case emailSignInOff = "email_sign_in_off"
    case emailSignInOn = "email_sign_in_on"
    case accountDeleted = "account_deleted"
    case accountExported = "account_exported"
    // Recovery.
    case recoveryCodesCreated = "recovery_codes_created"
    case recoveryOpened = "recovery_opened"
    case recoveryCancelled = "recovery_cancelled"
    case recoveryFinished = "recovery_finished"
    // High-risk actions.
    case actionChallenge = "action_challenge"
    case actionApproved = "action_approved"
    case actionVerified = "action_verified"
    // Operators: the Management API and `signet admin`.
    case adminUserCreated = "admin_user_created"
    case adminEnrollmentLink = "admin_enrollment_link"
    case adminUserExported = "admin_user_exported"
    case adminUserUpdated = "admin_user_updated"
    case adminUserBlocked = "admin_user_blocked"
    case adminUserUnblocked = "admin_user_unblocked"
    case adminUserDeleted = "admin_user_deleted"
    case adminPasskeyRevoked = "admin_passkey_revoked"
    case adminDeviceKeyRevoked = "admin_device_key_revoked"
    case adminRecoveryCodesDeleted = "admin_recovery_codes_deleted"
    case adminRecoveryCancelled = "admin_recovery_cancelled"
    case adminSessionsRevoked = "admin_sessions_revoked"
    case adminSessionRevoked = "admin_session_revoked"
    case adminAttemptLimitsCleared = "admin_attempt_limits_cleared"
    case adminClientAdded = "admin_client_added"
    case adminClientRemoved = "admin_client_removed"
    case adminClientSecretRotated = "admin_client_secret_rotated"
    case adminClientKeysSet = "admin_client_keys_set"
    case adminClientUpdated = "admin_client_updated"
    case adminLogStreamAdded = "admin_log_stream_added"
    case adminLogStreamUpdated = "admin_log_stream_updated"
    case adminLogStreamRemoved = "admin_log_stream_removed"
    case adminRoleCreated = "admin_role_created"
    case adminRoleUpdated = "admin_role_updated"
    case adminRoleDeleted = "admin_role_deleted"
    case adminUserRolesChanged = "admin_user_roles_changed"
    // The server on its own.
    case mailDropped = "mail_dropped"
    case backchannelLogoutDropped = "backchannel_logout_dropped"
    case signingKeyRotated = "signing_key_rotated"
    case signingKeyDestroyed = "signing_key_destroyed"
    case signingKeyRevoked = "signing_key_revoked"
    case logStreamDelivery = "log_stream_delivery"
    case roleExpired = "role_expired"

    /// What an event of this kind records; its `outcome` is `success` unless this says otherwise.
    public var meaning: String {
        switch self {
        case .signUp: "A passkey sign-up; a failure names the verification step's reason."
        case .signUpChallenge: "A sign-up refused before its challenge (`user_exists`); failures only."
        case .signIn: "A passkey sign-in (also from the hosted pages); a failure names the reason."
        case .stepUp: "A fresh passkey assertion for a sensitive change (RFC 9470)."
        case .possibleClonedAuthenticator: "A signature counter that went back: the passkey may have been copied; failures only."
        case .otpSent: "An email code asked for; `detail` says when nothing was sent."
        case .otpSignIn: "A sign-in by email code; a failure names the reason."
        case .otpSignUp: "An account made by an email code."
        case .recoveryCodeSignIn: "A sign-in by recovery code; a failure names the reason."
        case .deviceCode: "A device authorization started (RFC 8628)."
        case .deviceApproved: "A device's sign-in approved by a device key on a signed-in phone (RFC 8628)."
        case .deviceDenied: "A device's sign-in denied by a device key on a signed-in phone (RFC 8628)."
        case .deviceSignIn: "A device signed in with its approved device code (RFC 8628 §3.5)."
        case .signOut: "A hosted-pages session ended by its user."
        case .authorizationCodeIssued: "An authorization code issued to a client (RFC 6749 §4.1.2)."
        case .authorizationCode: "An authorization code grant refused; failures only."
        case .authorizationCodeExchanged: "An authorization code exchanged for tokens."
        case .authorizationCodeReused: "An authorization code presented again: what it issued is revoked; failures only."
        case .clientAuthentication: "A client's secret refused at the token, revocation or introspection endpoint; failures only."
        case .clientCredentials: "A machine client's token (`client_credentials`)."
        case .refresh: "A refresh refused (another client's token, or a revoked one); a success only for a retry after a lost answer (`tokens.refresh_token_retry_window`)."
        case .refreshTokenReused: "A rotated refresh token presented again: its family is revoked; failures only."
        case .refreshTokenRevoked: "A refresh token revoked by its client (RFC 7009); a failure is another client's token."
        case .sessionRevoked: "A session ended from the account, or by its access token."
        case .addPasskey: "Adding a passkey to an account refused; failures only."
        case .passkeyAdded: "A passkey added to an account."
        case .passkeyRevoked: "A passkey revoked by its user; a failure is the account's last one (`last_credential`)."
        case .deviceKeyEnrolled: "A device-bound key enrolled."
        case .deviceKeyRevoked: "A device-bound key revoked, replaced by a new enrolment (`re_enrolled`), or revoked with the credential that approved its device (`approver_revoked`)."
        case .nameChanged: "The account's name changed."
        case .emailChangeStarted: "A change of address asked for: a code went to the new address."
        case .emailChanged: "The account's address changed; a failure names the reason."
        case .emailSignInOff: "The owner turned sign-in by email code off for the account: codes neither go out nor sign in."
        case .emailSignInOn: "The owner turned sign-in by email code back on."
        case .accountDeleted: "An account erased by its user; its rows stay under a pseudonym."
        case .accountExported: "A copy of everything held about an account downloaded by its user (`GET /me/export`, the account page)."
        case .recoveryCodesCreated: "A new set of recovery codes made."
        case .recoveryOpened: "A code session added a credential to an account that had one: held until `detail`'s time."
        case .recoveryCancelled: "A holding recovery cancelled with an older credential: what it added is revoked."
        case .recoveryFinished: "A recovery's hold ended: what it added is an ordinary credential now."
        case .actionChallenge: "An action challenge refused (`rate_limited`); failures only."
        case .actionApproved: "A high-risk action approved by a device key or passkey; a failure names the reason."
        case .actionVerified: "An action token verified, and used up, by a resource server (`POST /actions/verify`)."
        case .adminUserCreated: "An operator made an account for an address; its owner signs in with an email code, then adds a passkey."
        case .adminEnrollmentLink: "An operator made a link that adds a first passkey to an account without one; `detail` says until when."
        case .adminUserExported: "An operator took a copy of everything held about an account, for its owner's request (`GET /api/v2/users/{id}/export`), or every account's record (`signet admin users export --all`, no account, `detail` the count)."
        case .adminUserUpdated: "An operator changed a user's name, address or verification."
        case .adminUserBlocked: "An operator blocked a user: every grant refused, sessions ended."
        case .adminUserUnblocked: "An operator unblocked a user."
        case .adminUserDeleted: "An operator erased a user; its rows stay under a pseudonym."
        case .adminPasskeyRevoked: "An operator revoked a user's passkey."
        case .adminDeviceKeyRevoked: "An operator revoked a user's device key."
        case .adminRecoveryCodesDeleted: "An operator deleted a user's recovery codes."
        case .adminRecoveryCancelled: "An operator cancelled a user's open recovery: what it added revoked, the sessions it started ended."
        case .adminSessionsRevoked: "An operator ended every session of a user."
        case .adminSessionRevoked: "An operator ended one session of a user (its ID in the detail)."
        case .adminAttemptLimitsCleared: "An operator lifted a user's used-up attempt limits (which, in the detail)."
        case .adminClientAdded: "A client added to the database."
        case .adminClientRemoved: "A client removed, with every session issued to it."
        case .adminClientSecretRotated: "A confidential client's secret replaced."
        case .adminClientKeysSet: "A private_key_jwt client's public keys replaced."
        case .adminClientUpdated: "A client's name, grants, scopes, audiences or addresses changed."
        case .adminLogStreamAdded: "A log stream added: the audit log is POSTed to its endpoint from this event on."
        case .adminLogStreamUpdated: "A log stream's name, status, endpoint, format or header changed, or its signing secret rotated; `detail` names what."
        case .adminLogStreamRemoved: "A log stream removed: nothing more is sent to it, and the purge no longer waits for it."
        case .adminRoleCreated: "A role added (its ID and name in the detail)."
        case .adminRoleUpdated: "A role renamed or described again, or permissions added to it or removed from it; `detail` names what."
        case .adminRoleDeleted: "A role deleted: its members' tokens no longer list what it granted from their next sign-in or refresh."
        case .adminUserRolesChanged: "An operator gave a user roles or took them (which, and until when for a role given for a time, in the detail); the user's tokens list the change from their next sign-in or refresh."
        case .mailDropped: "A message given up after its retries, or sealed under another key; failures only."
        case .backchannelLogoutDropped: "A client's logout token given up after its retries (OIDC Back-Channel Logout); failures only."
        case .signingKeyRotated: "A new token-signing key added by the scheduled rotation."
        case .signingKeyDestroyed: "A retired token-signing key deleted once no instance can publish it."
        case .signingKeyRevoked: "A token-signing key revoked by an operator: deleted at once, its tokens no longer verify."
        case .logStreamDelivery:
            "A log stream's endpoint stopped taking events (a failure, at the first POST that failed, naming the stream and what went wrong) or takes them again (a success, at the first POST taken after failures); not each retry. Also a failure when the purge took events a failing stream held past `audit.log_stream_hold_days`, naming their range."
        case .roleExpired: "A role given for a time ended: the purge took it from the user (which, and when it ended, in the detail); it stopped counting at its end, before this event."
        }
    }

    /// Auth0's log stream categories (the `filters` of `/api/v2/log-streams`, `{"type":
    /// "category", "name": …}`): every name Auth0 has, so that a stream's settings carry over,
    /// though Signet writes no event in some (`auth.silent_auth.*`, `scim.event`, `actions`).
    public static let streamCategories = [
        "auth.ancillary.fail", "auth.ancillary.success", "auth.login.fail", "auth.login.notification", "auth.login.success", "auth.logout.fail",
        "auth.logout.success", "auth.signup.fail", "auth.signup.success", "auth.silent_auth.fail", "auth.silent_auth.success", "auth.token_exchange.fail",
        "auth.token_exchange.success", "management.fail", "management.success", "scim.event", "system.notification", "user.fail", "user.notification",
        "user.success", "actions", "other",
    ]

    /// The log stream category of an event of this kind with `outcome` (one of
    /// ``streamCategories``): its group, then `.success` or `.fail`, or a notification.
    public func streamCategory(outcome: String) -> String {
        let group: String
        switch self {
        case .signIn, .stepUp, .otpSignIn, .recoveryCodeSignIn, .deviceSignIn, .deviceApproved, .deviceDenied, .authorizationCode: group = "auth.login"
        case .possibleClonedAuthenticator: return "auth.login.notification"
        case .signUp, .signUpChallenge, .otpSignUp: group = "auth.signup"
        case .signOut, .sessionRevoked: group = "auth.logout"
        case .authorizationCodeIssued, .authorizationCodeExchanged, .authorizationCodeReused, .clientAuthentication, .clientCredentials, .refresh,
             .refreshTokenReused, .refreshTokenRevoked, .deviceCode: group = "auth.token_exchange"
        case .otpSent, .actionChallenge, .actionApproved, .actionVerified: group = "auth.ancillary"
        case .addPasskey, .passkeyAdded, .passkeyRevoked, .deviceKeyEnrolled, .deviceKeyRevoked, .nameChanged, .emailChangeStarted, .emailChanged,
             .emailSignInOff, .emailSignInOn, .accountDeleted, .accountExported, .recoveryCodesCreated, .recoveryOpened, .recoveryCancelled,
             .recoveryFinished: group = "user"
        case .adminUserCreated, .adminEnrollmentLink, .adminUserExported, .adminUserUpdated, .adminUserBlocked, .adminUserUnblocked,
             .adminUserDeleted, .adminPasskeyRevoked, .adminDeviceKeyRevoked, .adminRecoveryCodesDeleted, .adminRecoveryCancelled,
             .adminSessionsRevoked, .adminSessionRevoked, .adminAttemptLimitsCleared, .adminClientAdded, .adminClientRemoved, .adminClientSecretRotated, .adminClientKeysSet, .adminClientUpdated,
             .adminLogStreamAdded, .adminLogStreamUpdated, .adminLogStreamRemoved, .adminRoleCreated, .adminRoleUpdated, .adminRoleDeleted,
             .adminUserRolesChanged: group = "management"
        case .mailDropped, .backchannelLogoutDropped, .signingKeyRotated, .signingKeyDestroyed, .signingKeyRevoked, .logStreamDelivery, .roleExpired: return "system.notification"
        }
        return group + (outcome == "success" ? ".success" : ".fail")
    }

    /// The kinds an account's owner is not shown in its history (the account page's "Recent
    /// security events", `GET /me/events`): those of no account (clients, mail, signing keys),
    /// those of an account that no longer exists, and bookkeeping: codes issued and exchanged, a
    /// code sent, a refused refresh, a refused start, an action token used by its resource server.
    /// Every other kind has a line in each of the pages' languages (a test holds the two to the list).
    public static let notInOwnHistory: Set<AuditKind> = [
        .signUpChallenge, .deviceCode, .otpSent, .authorizationCodeIssued, .authorizationCode, .authorizationCodeExchanged,
        .clientAuthentication, .clientCredentials, .refresh, .addPasskey, .actionChallenge, .actionVerified, .accountDeleted,
        .adminUserDeleted, .adminClientAdded, .adminClientRemoved, .adminClientSecretRotated, .adminClientKeysSet, .adminClientUpdated,
        .adminLogStreamAdded, .adminLogStreamUpdated, .adminLogStreamRemoved, .adminRoleCreated, .adminRoleUpdated, .adminRoleDeleted, .mailDropped,
        .signingKeyRotated, .signingKeyDestroyed, .signingKeyRevoked, .backchannelLogoutDropped, .logStreamDelivery,
    ]

    /// The kinds written only when something was refused or went wrong (their ``meaning`` ends
    /// "failures only"): their own words already say so, so the account page adds no "refused".
    public static let failuresOnly: Set<AuditKind> = [
        .signUpChallenge, .possibleClonedAuthenticator, .authorizationCode, .authorizationCodeReused, .clientAuthentication,
        .refreshTokenReused, .addPasskey, .actionChallenge, .mailDropped, .backchannelLogoutDropped,
    ]

    /// An operator's change through the Management API or `signet admin`: the address it came
    /// from is the operator's, which the account's own page does not show.
    public var byOperator: Bool { rawValue.utf8.starts(with: "admin_".utf8) }

    /// Auth0's log event type for this kind's success and failure, where Auth0 has one (the
    /// `type` of `GET /api/v2/logs`; otherwise the kind itself is the type).
    public var auth0Types: (success: String, failure: String)? {
        switch self {
        case .signIn, .stepUp, .otpSignIn, .recoveryCodeSignIn: ("s", "f")
        case .signUp, .otpSignUp: ("ss", "fs")
        case .otpSent: ("cs", "fcpn")
        case .refresh: ("sertft", "fertft")
        case .refreshTokenReused: ("fertft", "fertft")
        case .refreshTokenRevoked: ("srrt", "srrt")
        case .clientCredentials: ("seccft", "feccft")
        case .adminUserDeleted: ("sdu", "sdu")
        case .adminUserCreated, .adminEnrollmentLink, .adminUserExported, .adminUserUpdated, .adminUserBlocked, .adminUserUnblocked, .adminPasskeyRevoked, .adminDeviceKeyRevoked, .adminRecoveryCodesDeleted, .adminRecoveryCancelled,
             .adminSessionsRevoked, .adminSessionRevoked, .adminAttemptLimitsCleared, .adminClientAdded, .adminClientRemoved, .adminClientSecretRotated, .adminClientKeysSet,
             .adminClientUpdated, .adminLogStreamAdded, .adminLogStreamUpdated, .adminLogStreamRemoved, .adminRoleCreated, .adminRoleUpdated, .adminRoleDeleted,
             .adminUserRolesChanged: ("sapi", "fapi")
        default: nil
        }
    }
}
