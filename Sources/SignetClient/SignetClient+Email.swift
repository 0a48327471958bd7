import Foundation
public import SignetAPI

/// Sign-in by email code, recovery codes and recovery (DESIGN.md, "Email codes, recovery codes
/// and recovery"). Every refusal is a ``SignetError`` whose code is the server's reason
/// (`otp_invalid`, `otp_expired`, `otp_attempts_exceeded`, `recovery_code_invalid`,
/// `recovery_hold`, `rate_limited`).
extension SignetClient {
    /// Asks for a code by mail (Auth0 `POST /passwordless/start`). The answer is the same
    /// whether or not the address has an account.
    @discardableResult
    public func startEmailSignIn(email: String) async throws -> PasswordlessStartResponse {
        try decode(PasswordlessStartResponse.self, try await send("POST", "passwordless/start",
            body: PasswordlessStartRequest(client_id: clientID, email: email)))
    }

    /// Signs in with the code from the mail (Auth0's passwordless grant); with sign-up by code on,
    /// an address without an account gets one. The session's `amr` is `otp`: offer
    /// ``addPasskey(name:)`` next.
    @discardableResult
    public func signIn(email: String, code: String) async throws -> TokenResponse {
        try begin(try decode(TokenResponse.self, try await send("POST", "oauth/token", body: TokenRequest(
            grant_type: GrantType.passwordlessOTP, client_id: clientID, scope: signInScope, username: email, otp: code, realm: "email"))))
    }

    /// Signs in with one of the account's recovery codes (each works once).
    @discardableResult
    public func signIn(email: String, recoveryCode: String) async throws -> TokenResponse {
        try begin(try decode(TokenResponse.self, try await send("POST", "oauth/token", body: TokenRequest(
            grant_type: GrantType.recoveryCode, client_id: clientID, scope: signInScope, username: email, recovery_code: recoveryCode))))
    }

    /// A new set of 10 recovery codes, to show the user once; the earlier set stops working.
    /// Needs a fresh passkey check, which the SDK runs by itself when the server asks.
    public func createRecoveryCodes() async throws -> [String] {
        try decode(RecoveryCodes.self, try await authorized("POST", "me/recovery-codes", body: [String: String]())).codes
    }

    /// How many recovery codes are left.
    public func recoveryCodesStatus() async throws -> RecoveryCodesStatus {
        try decode(RecoveryCodesStatus.self, try await authorized("GET", "me/recovery-codes"))
    }

    /// The recovery holding the account, if any: when it ends and what it added.
    public func recovery() async throws -> RecoveryInfo? {
        try decode(RecoveryState.self, try await authorized("GET", "me/recovery")).recovery
    }

    /// Cancels the recovery, revoking what it added; needs a session from a passkey or device
    /// key that predates it (else `recovery_hold`).
    public func cancelRecovery() async throws {
        let answer = try await authorized("DELETE", "me/recovery")
        guard answer.status == 204 else { throw Self.error(answer) }
    }
}
