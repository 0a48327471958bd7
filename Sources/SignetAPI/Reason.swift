/// Every machine-readable failure reason Signet answers with (DESIGN.md, "Machine-readable
/// failure reasons"), with its HTTP status, its OAuth `error` code (RFC 6749 §5.2, RFC 6750 §3.1)
/// and the text a user may be shown. This is the one list: the server answers with it, the SDK's
/// ``SignetError`` codes are it, and the README's table is checked against it by a test.
///
/// The cases after `// Client side` never come from the server: they are outcomes the SDK
/// reports on its own (the user closed the sheet, the server could not be reached, ...).
public enum Reason: String, CaseIterable, Sendable, Codable {
    // The request itself.
    case malformed
    case unsupportedMediaType = "unsupported_media_type"
    case bodyTooLarge = "body_too_large"
    case headersTooLarge = "headers_too_large"
    case notFound = "not_found"
    case methodNotAllowed = "method_not_allowed"
    // Clients, grants and tokens.
    case clientUnknown = "client_unknown"
    case grantNotAllowed = "grant_not_allowed"
    case unsupportedGrantType = "unsupported_grant_type"
    case audienceNotAllowed = "audience_not_allowed"
    case tokenMissing = "token_missing"
    case tokenInvalid = "token_invalid"
    case tokenAudienceInvalid = "token_audience_invalid"
    case stepUpRequired = "step_up_required"
    case clientSecretInvalid = "client_secret_invalid"
    case clientAssertionInvalid = "client_assertion_invalid"
    case clientAssertionReplayed = "client_assertion_replayed"
    case refreshTokenUnknown = "refresh_token_unknown"
    case refreshTokenReused = "refresh_token_reused"
    case refreshTokenRevoked = "refresh_token_revoked"
    case refreshTokenExpired = "refresh_token_expired"
    case refreshTokenClientMismatch = "refresh_token_client_mismatch"
    case scopeInvalid = "scope_invalid"
    // Auth sessions.
    case authSessionUnknown = "auth_session_unknown"
    case authSessionExpired = "auth_session_expired"
    case authSessionClientMismatch = "auth_session_client_mismatch"
    case ceremonyMismatch = "ceremony_mismatch"
    case userMismatch = "user_mismatch"
    // WebAuthn verification (WebAuthn L3 §7.1, §7.2), in the order of the steps.
    case typeMismatch = "type_mismatch"
    case challengeMismatch = "challenge_mismatch"
    case originNotAllowed = "origin_not_allowed"
    case crossOriginNotAllowed = "cross_origin_not_allowed"
    case topOriginNotAllowed = "top_origin_not_allowed"
    case tokenBindingInvalid = "token_binding_invalid"
    case rpIdHashMismatch = "rp_id_hash_mismatch"
    case userNotPresent = "user_not_present"
    case userNotVerified = "user_not_verified"
    case backupStateInvalid = "backup_state_invalid"
    case backupEligibilityChanged = "backup_eligibility_changed"
    case algorithmNotAllowed = "algorithm_not_allowed"
    case attestationInvalid = "attestation_invalid"
    case attestationUntrusted = "attestation_untrusted"
    case authenticatorNotAllowed = "authenticator_not_allowed"
    case credentialIdMismatch = "credential_id_mismatch"
    case credentialUnknown = "credential_unknown"
    case credentialRevoked = "credential_revoked"
    case credentialExists = "credential_exists"
    case userHandleMismatch = "user_handle_mismatch"
    case signatureInvalid = "signature_invalid"
    case counterRegression = "counter_regression"
    // Accounts.
    case userExists = "user_exists"
    case lastCredential = "last_credential"
    case passkeyLimit = "passkey_limit"
    /// Accounts are made by an operator here (`signup: false`): passkey and email-code sign-up,
    /// the sign-up page and `prompt=create` are refused, before anything about the address is read.
    case signupDisabled = "signup_disabled"
    /// Sign-up is for addresses at the deployment's domains (`signup_domains`), and this one is
    /// at another.
    case signupDomainNotAllowed = "signup_domain_not_allowed"
    /// With `signup_domains`, an account starts with an email code (which proves the address);
    /// its passkey is added after.
    case signupCodeRequired = "signup_code_required"
    /// An enrollment link is for an account's first passkey: this account has one (its owner adds
    /// more from the account page, or recovers the account).
    case userHasPasskey = "user_has_passkey"
    /// Sign-in by email code is turned off only for an account with another way back in: a
    /// second passkey or unused recovery codes.
    case backupMethodRequired = "backup_method_required"
    // Email codes, recovery codes and recovery.
    case connectionDisabled = "connection_disabled"
    case otpInvalid = "otp_invalid"
    case otpExpired = "otp_expired"
    case otpAttemptsExceeded = "otp_attempts_exceeded"
    case recoveryCodeInvalid = "recovery_code_invalid"
    case recoveryHold = "recovery_hold"
    // Device keys and actions.
    case deviceKeyInvalid = "device_key_invalid"
    case deviceKeyUnsupported = "device_key_unsupported"
    case deviceKeyUnknown = "device_key_unknown"
    case deviceKeyRevoked = "device_key_revoked"
    case deviceKeyLimit = "device_key_limit"
    case actionInvalid = "action_invalid"
    case actionChallengeUnknown = "action_challenge_unknown"
    case actionChallengeExpired = "action_challenge_expired"
    case actionChallengeAccountMismatch = "action_challenge_account_mismatch"
    case actionMismatch = "action_mismatch"
    case actionTokenUsed = "action_token_used"
    case actionSubjectMismatch = "action_subject_mismatch"
    case rateLimited = "rate_limited"
    case insufficientScope = "insufficient_scope"
    // Proof of possession (DPoP, RFC 9449).
    case dpopInvalid = "dpop_invalid"
    case dpopReplayed = "dpop_replayed"
    case dpopKeyMismatch = "dpop_key_mismatch"
    case useDPoPNonce = "use_dpop_nonce"
    // A new device, approved by an old one (RFC 8628).
    case authorizationPending = "authorization_pending"
    case slowDown = "slow_down"
    case expiredToken = "expired_token"
    case accessDenied = "access_denied"
    case userCodeUnknown = "user_code_unknown"
    // The web: the authorization code flow and the hosted pages.
    case redirectURIInvalid = "redirect_uri_invalid"
    case pkceInvalid = "pkce_invalid"
    case codeInvalid = "code_invalid"
    case loginRequired = "login_required"
    /// The client asked for a passkey's sign-in (`acr_values` `phr` or `phrh`) and the user left
    /// the page without one (OpenID Connect Core Error Code unmet_authentication_requirements).
    case unmetAuthenticationRequirements = "unmet_authentication_requirements"
    /// The user left the sign-in page of a pending authorization (RFC 6749 §4.1.2.1 `access_denied`).
    case signInCancelled = "sign_in_cancelled"
    case csrfInvalid = "csrf_invalid"
    case responseTypeUnsupported = "unsupported_response_type"
    case requestNotSupported = "request_not_supported"
    case requestURIInvalid = "request_uri_invalid"
    // Administration (the Management API).
    case userBlocked = "user_blocked"
    /// The client is for accounts with one of its `required_roles`, and this one has none.
    case roleRequired = "role_required"
    case userUnknown = "user_unknown"
    case authenticationMethodUnknown = "authentication_method_unknown"
    /// `/api/v2/clients/{id}`: no client with this ID is kept in the database (a client from the
    /// configuration file is changed there, not through the API).
    case clientNotFound = "client_not_found"
    /// `/api/v2/clients/{id}`: the client is set in the configuration file, which the API reads
    /// but does not change.
    case clientConfigured = "client_configured"
    /// `/api/v2/resource-servers`: the APIs are set in the configuration file (`audiences`,
    /// `tokens.permissions`) and the clients, which the API reads but does not change.
    case resourceServerConfigured = "resource_server_configured"
    /// `/api/v2/resource-servers/{id}`: no API with this ID.
    case resourceServerNotFound = "resource_server_not_found"
    /// `/api/v2/log-streams/{id}`: no log stream with this ID.
    case logStreamNotFound = "log_stream_not_found"
    case roleNotFound = "role_not_found"
    /// `/api/v2/sessions/{id}`: no live session with this ID (ended, expired, or never one).
    case sessionNotFound = "session_not_found"
    /// `/api/v2/logs/{id}`: no audit event with this `log_id` (never one, or purged).
    case logNotFound = "log_not_found"
    /// `/api/v2/keys/signing/{kid}`: no signing key with this `kid` (never one, or destroyed).
    case signingKeyNotFound = "signing_key_not_found"
    /// `PUT /api/v2/keys/signing/{kid}/revoke`: no other key that was never retired would sign
    /// after it; rotate first.
    case signingKeyInUse = "signing_key_in_use"
    /// `POST /api/v2/keys/signing/rotate`: the database holds the most signing keys allowed.
    case signingKeyLimit = "signing_key_limit"
    // The server.
    case conflict
    case databaseUnavailable = "database_unavailable"
    case storageFull = "storage_full"
    /// At `/healthz` only: the server's key-encryption key no longer opens the signing key.
    case signingKeyUnavailable = "signing_key_unavailable"
    case internalError = "internal"

    // Client side: reported by the SDK, never sent by the server.
    /// The user closed the system sheet (ASAuthorizationError 1001, Android cancellation): show
    /// the existing sign-in form, not an error.
    case canceled
    /// The device key is gone or unusable (biometric set changed, key revoked): call `enrollDeviceKey()`.
    case deviceKeyInvalidated = "device_key_invalidated"
    /// No session, or the session ended (refresh token reused, revoked or expired): sign in.
    case notSignedIn = "not_signed_in"
    /// The server could not be reached.
    case unreachable
    /// The server answered 5xx.
    case serverError = "server_error"
    /// The answer was not what the API promises.
    case invalidResponse = "invalid_response"
    /// No passkey on this device for the account (the platform reported none).
    case noCredential = "no_credential"
    /// The platform's secure storage (Keychain) refused to save, read or clear the session.
    case keychainFailed = "keychain"
    /// The platform found a passkey for this account on the device already (excludeCredentials).
    case credentialExcluded = "credential_excluded"
    /// The platform's passkey request failed for another reason than a cancel.
    case authorizationFailed = "authorization_failed"
    /// A reason this version of the SDK does not know (a newer server's); the raw text is kept
    /// in ``SignetError/serverReason``.
    case unrecognized

    /// Whether the server ever answers with this reason.
    public var isServerReason: Bool { Reason.clientSide.contains(self) == false }

    static let clientSide: Set<Reason> = [.canceled, .deviceKeyInvalidated, .notSignedIn, .unreachable, .serverError, .invalidResponse, .noCredential,
                                           .keychainFailed, .credentialExcluded, .authorizationFailed, .unrecognized]

    /// The reasons the server answers with, in the list's order.
    public static var serverReasons: [Reason] { allCases.filter(\.isServerReason) }
}

extension Reason {
    /// The HTTP status of an answer with this reason. Where an endpoint names a resource by its
    /// path (`/me/passkeys/{id}`) and it is not on the account, the answer is 404 instead.
    public var status: Int {
        switch self {
        case .notFound: 404
        case .methodNotAllowed: 405
        case .bodyTooLarge: 413
        case .headersTooLarge: 431
        case .unsupportedMediaType: 415
        case .clientUnknown, .clientSecretInvalid, .clientAssertionInvalid, .clientAssertionReplayed, .tokenMissing, .tokenInvalid, .tokenAudienceInvalid, .stepUpRequired: 401
        case .userExists, .lastCredential, .passkeyLimit, .credentialExists, .deviceKeyLimit, .conflict, .clientConfigured, .resourceServerConfigured, .userHasPasskey, .backupMethodRequired, .signingKeyInUse, .signingKeyLimit: 409
        case .rateLimited: 429
        case .userUnknown, .authenticationMethodUnknown, .clientNotFound, .logStreamNotFound, .roleNotFound, .resourceServerNotFound, .sessionNotFound, .logNotFound, .signingKeyNotFound: 404
        case .csrfInvalid, .insufficientScope, .userBlocked, .roleRequired, .signupDisabled, .signupDomainNotAllowed, .signupCodeRequired, .authenticatorNotAllowed, .otpInvalid, .otpExpired, .otpAttemptsExceeded, .recoveryCodeInvalid, .recoveryHold: 403
        case .databaseUnavailable, .storageFull, .signingKeyUnavailable: 503
        case .internalError, .serverError: 500
        default: 400
        }
    }

    /// The OAuth `error` code that goes with the reason.
    public var error: String {
        switch self {
        case .clientUnknown, .clientSecretInvalid, .clientAssertionInvalid, .clientAssertionReplayed: "invalid_client"
        case .tokenAudienceInvalid: "invalid_token"
        case .stepUpRequired: "insufficient_user_authentication"
        case .grantNotAllowed: "unauthorized_client"
        case .unsupportedGrantType: "unsupported_grant_type"
        case .tokenInvalid: "invalid_token"
        case .rateLimited: "slow_down"
        case .insufficientScope: "insufficient_scope"
        case .scopeInvalid: "invalid_scope"
        case .audienceNotAllowed: "invalid_target"
        case .recoveryHold, .userBlocked, .roleRequired, .authenticatorNotAllowed: "access_denied"
        case .dpopInvalid, .dpopReplayed, .dpopKeyMismatch: "invalid_dpop_proof"
        case .useDPoPNonce: "use_dpop_nonce"
        case .authorizationPending: "authorization_pending"
        case .slowDown: "slow_down"
        case .expiredToken: "expired_token"
        case .accessDenied: "access_denied"
        case .loginRequired: "login_required"
        case .unmetAuthenticationRequirements: "unmet_authentication_requirements"
        case .signInCancelled: "access_denied"
        case .responseTypeUnsupported: "unsupported_response_type"
        case .requestNotSupported: "request_not_supported"
        case .requestURIInvalid: "invalid_request_uri"
        case .pkceInvalid, .codeInvalid: "invalid_grant"
        case .otpInvalid, .otpExpired, .otpAttemptsExceeded, .recoveryCodeInvalid: "invalid_grant"
        case .databaseUnavailable, .storageFull, .signingKeyUnavailable: "temporarily_unavailable"
        case .internalError, .serverError: "server_error"
        case .refreshTokenUnknown, .refreshTokenReused, .refreshTokenRevoked, .refreshTokenExpired, .refreshTokenClientMismatch,
             .authSessionUnknown, .authSessionExpired, .authSessionClientMismatch, .ceremonyMismatch, .userMismatch, .actionSubjectMismatch,
             .typeMismatch, .challengeMismatch, .originNotAllowed, .crossOriginNotAllowed, .topOriginNotAllowed, .tokenBindingInvalid,
             .rpIdHashMismatch, .userNotPresent, .userNotVerified, .backupStateInvalid, .backupEligibilityChanged, .algorithmNotAllowed,
             .attestationInvalid, .attestationUntrusted, .credentialIdMismatch, .credentialUnknown, .credentialRevoked, .userHandleMismatch,
             .signatureInvalid, .counterRegression, .actionChallengeUnknown, .actionChallengeExpired, .actionChallengeAccountMismatch,
             .actionMismatch, .actionTokenUsed:
            "invalid_grant"
        default: "invalid_request"
        }
    }

    /// What a user may be shown; it never carries the detail of the failure, which goes to the
    /// log and the audit row only.
    public var text: String {
        switch self {
        case .malformed: "The request is malformed."
        case .unsupportedMediaType: "The body must be application/json (or, at the token endpoint, a form)."
        case .bodyTooLarge: "The request body is too large."
        case .headersTooLarge: "The request line and headers are too large."
        case .notFound: "There is no such endpoint."
        case .methodNotAllowed: "This method is not allowed on this endpoint."
        case .clientUnknown: "The client is not known."
        case .grantNotAllowed: "This client may not use this grant type."
        case .unsupportedGrantType: "This grant type is not supported."
        case .audienceNotAllowed: "This audience is not configured."
        case .tokenMissing: "An access token is required."
        case .tokenInvalid: "The access token is not valid."
        case .tokenAudienceInvalid: "The access token is for another audience."
        case .stepUpRequired: "This change needs a fresh passkey check: sign in with a passkey again, then retry."
        case .clientSecretInvalid: "The client's credentials are missing or wrong."
        case .clientAssertionInvalid: "The client's signed assertion (private_key_jwt) is not valid."
        case .clientAssertionReplayed: "This client assertion was already used; sign a new one, with a new jti, for each request."
        case .refreshTokenUnknown: "The refresh token is not one this server issued."
        case .refreshTokenReused: "This refresh token was already used; the whole sign-in is now revoked."
        case .refreshTokenRevoked: "The refresh token was revoked."
        case .refreshTokenExpired: "The refresh token has expired."
        case .refreshTokenClientMismatch: "The refresh token was issued to another client."
        case .scopeInvalid: "The requested scope was not granted to this refresh token's sign-in."
        case .authSessionUnknown: "The auth session is unknown or was already used."
        case .authSessionExpired: "The auth session has expired; start again."
        case .authSessionClientMismatch: "The auth session belongs to another client."
        case .ceremonyMismatch: "The response does not fit the ceremony this auth session started."
        case .userMismatch: "This passkey belongs to another account than the one signed in."
        case .typeMismatch: "The response is for another kind of WebAuthn ceremony."
        case .challengeMismatch: "The response does not answer this challenge."
        case .originNotAllowed: "The response comes from an origin that is not allowed."
        case .crossOriginNotAllowed: "Cross-origin ceremonies are not allowed."
        case .topOriginNotAllowed: "The top-level origin is not allowed."
        case .tokenBindingInvalid: "The token binding is not valid."
        case .rpIdHashMismatch: "The passkey is for another relying party."
        case .userNotPresent: "The authenticator did not see the user."
        case .userNotVerified: "The authenticator did not verify the user."
        case .backupStateInvalid: "The authenticator reported an impossible backup state."
        case .backupEligibilityChanged: "The passkey's backup eligibility changed."
        case .algorithmNotAllowed: "The passkey uses an algorithm that is not allowed."
        case .attestationInvalid: "The attestation does not verify."
        case .attestationUntrusted: "The authenticator's attestation is not from a trusted maker."
        case .authenticatorNotAllowed: "This kind of passkey or security key is not allowed here; use another."
        case .credentialIdMismatch: "The credential ID does not match the authenticator data."
        case .credentialUnknown: "This passkey is not registered."
        case .credentialRevoked: "This passkey was revoked."
        case .credentialExists: "This passkey is already registered."
        case .userHandleMismatch: "The passkey belongs to another account."
        case .signatureInvalid: "The signature does not verify."
        case .counterRegression: "The signature counter went backwards: possibly a cloned authenticator."
        case .userExists: "An account with this email exists; sign in with its passkey instead."
        case .signupDisabled: "New accounts are made by an administrator here; ask yours for one."
        case .signupDomainNotAllowed: "Accounts here are for addresses at this organization's domains; use yours."
        case .signupCodeRequired: "Sign up with a code sent to your address first; then add a passkey."
        case .userHasPasskey: "This account has a passkey already: sign in with it, and add more from the account page."
        case .backupMethodRequired: "Add a second passkey or create recovery codes first: with sign-in by email off, they are your way back in."
        case .lastCredential: "This is the account's last passkey and its only way in; add another first."
        case .passkeyLimit: "This account has the most passkeys allowed; remove one first."
        case .connectionDisabled: "Sign-in by email code is not enabled here."
        case .otpInvalid: "Wrong email or verification code."
        case .otpExpired: "The verification code has expired; ask for a new one."
        case .otpAttemptsExceeded: "Too many wrong tries for this code; ask for a new one."
        case .recoveryCodeInvalid: "Wrong email or recovery code."
        case .recoveryHold: "A recovery of this account is on hold: what it added cannot do this until the hold ends or a passkey you had before cancels it."
        case .deviceKeyInvalid: "The device key is not a valid P-256 public key."
        case .deviceKeyUnsupported: "Device keys must be P-256."
        case .deviceKeyUnknown: "There is no such device key on this account."
        case .deviceKeyRevoked: "This device key was revoked; enrol the device again."
        case .deviceKeyLimit: "This account has the most device keys allowed; revoke one first."
        case .actionInvalid: "The action must be a JSON object with a string type, of bounded size and depth."
        case .actionChallengeUnknown: "The action challenge is unknown or was already used."
        case .actionChallengeExpired: "The action challenge has expired."
        case .actionChallengeAccountMismatch: "The action challenge belongs to another account."
        case .actionMismatch: "The action token was issued for a different action."
        case .actionTokenUsed: "This action token was already used."
        case .actionSubjectMismatch: "The action was approved by another account."
        case .rateLimited: "Too many requests; try again later."
        case .insufficientScope: "The access token lacks the scope this call needs."
        case .authorizationPending: "The sign-in has not been approved yet; keep polling at the interval."
        case .slowDown: "Polling too often; wait five seconds longer between polls."
        case .expiredToken: "The device code has expired or was used; start the device sign-in again."
        case .accessDenied: "The sign-in was denied on the approving device."
        case .userCodeUnknown: "There is no pending device sign-in with this code."
        case .dpopInvalid: "The DPoP proof is missing or not valid for this request."
        case .dpopReplayed: "This DPoP proof was already used; make a new one for each request."
        case .dpopKeyMismatch: "The DPoP proof is signed by another key than the one the token is bound to."
        case .useDPoPNonce: "Send the DPoP proof again with the nonce in the DPoP-Nonce header."
        case .redirectURIInvalid: "The redirect URI is not one registered for this client."
        case .pkceInvalid: "The PKCE code verifier is missing or does not match the code challenge."
        case .codeInvalid: "The authorization code is unknown, expired, already used, or for another client or redirect URI."
        case .loginRequired: "The user is not signed in."
        case .unmetAuthenticationRequirements: "The app asked for a sign-in with a passkey, and the user left without one."
        case .signInCancelled: "The user left the sign-in page without signing in."
        case .csrfInvalid: "The form is out of date; reload the page and try again."
        case .responseTypeUnsupported: "Only response_type=code is supported."
        case .requestNotSupported: "Request objects (the request parameter) are not supported."
        case .requestURIInvalid: "This sign-in link is no longer valid. Go back to the app and start again."
        case .userBlocked: "This account is blocked; contact the service's administrator."
        case .roleRequired: "This account may not use this app; ask its administrator for access."
        case .userUnknown: "There is no such user."
        case .authenticationMethodUnknown: "The user has no such authentication method."
        case .clientNotFound: "There is no such client in the database."
        case .clientConfigured: "This client is set in the configuration file; change it there."
        case .resourceServerConfigured: "APIs are set in the configuration file (audiences, tokens.permissions); change them there."
        case .resourceServerNotFound: "There is no such API."
        case .logStreamNotFound: "There is no such log stream."
        case .roleNotFound: "There is no such role."
        case .sessionNotFound: "There is no such session: it has ended, or never was."
        case .logNotFound: "There is no such log event: it was purged, or never was."
        case .signingKeyNotFound: "There is no such signing key: it was destroyed, or never was."
        case .signingKeyInUse: "No other key would sign after this one: rotate first, then revoke it."
        case .signingKeyLimit: "The most signing keys allowed are held: revoke a retired one, or wait until one is destroyed."
        case .conflict: "The request conflicts with existing data."
        case .databaseUnavailable: "The database is unavailable; try again shortly."
        case .storageFull: "The server's storage is full; try again later."
        case .signingKeyUnavailable: "The server's key-encryption key does not open the signing key: restart it with the database's key."
        case .internalError: "Internal error."
        case .canceled: "The user canceled."
        case .deviceKeyInvalidated: "The device key is no longer usable; enrol it again."
        case .notSignedIn: "Not signed in."
        case .unreachable: "The server cannot be reached."
        case .serverError: "The server failed."
        case .invalidResponse: "The server's answer was not understood."
        case .noCredential: "There is no passkey for this account on this device."
        case .keychainFailed: "The session could not be kept on this device."
        case .credentialExcluded: "A passkey for this account is already on this device."
        case .authorizationFailed: "The passkey request failed."
        case .unrecognized: "The server refused the request."
        }
    }
}
