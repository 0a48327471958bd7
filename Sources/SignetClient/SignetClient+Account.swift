import Foundation
public import SignetAPI

extension SignetClient {
    /// Erases the signed-in account (`DELETE /me`, a sensitive change: steps up with a passkey
    /// when the sign-in is old), then forgets the session and this device's key. Apps that let
    /// people create an account must let them delete it from inside the app (App Store Review
    /// Guidelines 5.1.1(v)); this is that button's call.
    public func deleteAccount() async throws {
        let answer = try await authorized("DELETE", "me")
        guard answer.status == 204 else { throw Self.error(answer) }
        audienceTokens = [:]
        try tokens.clear()
        // The server has forgotten the key; the device's copy names nothing now.
        try? await deviceKeyStore?.deleteKey()
    }

    /// Asks to move the account to `email` (`POST /me/email`, a sensitive change: steps up if
    /// asked): a code goes to that address. Nothing changes until ``confirmEmailChange(email:code:)``.
    @discardableResult
    public func startEmailChange(to email: String) async throws -> EmailChangeStatus {
        try decode(EmailChangeStatus.self, try await authorized("POST", "me/email", body: EmailChangeRequest(email: email)))
    }

    /// Completes the move with the code the new address received (`POST /me/email/verify`); the
    /// old address is told. New tokens carry the new address from the next refresh on.
    @discardableResult
    public func confirmEmailChange(email: String, code: String) async throws -> EmailChangeStatus {
        try decode(EmailChangeStatus.self, try await authorized("POST", "me/email/verify", body: EmailChangeRequest(email: email, code: code)))
    }

    /// The account's security events, newest first, at most `take` (1 to 100), older than the
    /// event `before` (an event's `id`) when given, for the next page: what the account page
    /// lists under "Recent security events" (`GET /me/events`), for an app's own screen.
    public func securityEvents(take: Int = 20, before: String? = nil) async throws -> [AccountEvent] {
        let query = "take=\(take)" + (before.flatMap { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) }.map { "&before=" + $0 } ?? "")
        return try decode(AccountEventList.self, try await authorized("GET", "me/events?" + query)).events
    }

    /// Where the account is signed in (`GET /me/sessions`): browsers and apps, this one marked
    /// `current`; the newest 100 of each kind (``sessionList()`` says whether there are more).
    public func sessions() async throws -> [SessionInfo] { try await sessionList().sessions }

    /// `GET /me/sessions` whole: the sessions ``sessions()`` gives, and `truncated` when the
    /// account has more than it lists, for an app that offers "Sign out everywhere else" then.
    public func sessionList() async throws -> SessionList { try decode(SessionList.self, try await authorized("GET", "me/sessions")) }

    /// The signed-in account's roles (`GET /me/roles`): each with what it grants at each API and,
    /// for one given for a time, when it ends, for an app that shows what its user may do.
    /// Operators give and take roles; the tokens list a change from the next refresh.
    public func roles() async throws -> [AccountRoles.Role] { try decode(AccountRoles.self, try await authorized("GET", "me/roles")).roles }

    /// A copy of everything the server holds about the account (`GET /me/export`, after a fresh
    /// sign-in: steps up if asked): its record,
    /// every passkey and device key it has had with their public keys, its sessions, recovery
    /// state and audit events, for the owner to keep or take elsewhere (GDPR Art. 15(3), 20).
    /// The server records the download in the account's history.
    public func exportAccount() async throws -> AccountExport { try decode(AccountExport.self, try await authorized("GET", "me/export")) }

    /// Ends one of them (`DELETE /me/sessions/{id}`, a sensitive change: steps up if asked): its
    /// tokens are refused at once. Ending this one is ``signOut()``.
    public func revokeSession(id: String) async throws {
        let answer = try await authorized("DELETE", "me/sessions/\(id)")
        guard answer.status == 204 else { throw Self.error(answer) }
    }

    /// Ends every session of the account but this one (`DELETE /me/sessions`, a sensitive
    /// change: steps up if asked), for an owner who fears someone else is signed in; returns how
    /// many ended. Their tokens are refused at once.
    @discardableResult
    public func revokeOtherSessions() async throws -> Int {
        try decode(SessionsEnded.self, try await authorized("DELETE", "me/sessions")).ended
    }

    /// Whether email codes sign in to the account (`GET /me/email-sign-in`).
    public func emailSignIn() async throws -> Bool { try decode(EmailSignIn.self, try await authorized("GET", "me/email-sign-in")).enabled }

    /// Turns sign-in by email code off or on (`PUT /me/email-sign-in`, a sensitive change: steps
    /// up if asked). Off needs another way back in: a second passkey or unused recovery codes
    /// (else ``SignetError`` `backup_method_required`).
    public func setEmailSignIn(_ enabled: Bool) async throws {
        _ = try decode(EmailSignIn.self, try await authorized("PUT", "me/email-sign-in", body: EmailSignIn(enabled: enabled)))
    }

    /// Sets the account's display name (`PATCH /me`); `nil` or empty clears it. Tokens carry it
    /// from the next refresh.
    @discardableResult
    public func setName(_ name: String?) async throws -> UserInfo {
        try decode(UserInfo.self, try await authorized("PATCH", "me", body: NameChangeRequest(name: name)))
    }

    /// The account's `user_metadata` (the owner's) and `app_metadata` (the operators', read
    /// only): `GET /me/metadata`.
    public func metadata() async throws -> AccountMetadata { try decode(AccountMetadata.self, try await authorized("GET", "me/metadata")) }

    /// Merges `changes` into the account's `user_metadata` at its top level (a key set to
    /// `.null` goes): `PATCH /me/metadata`. Another change in between is ``SignetError``
    /// `conflict`: read it again and repeat.
    @discardableResult
    public func updateUserMetadata(_ changes: [String: JSONDocument]) async throws -> AccountMetadata {
        struct Body: Encodable { let user_metadata: JSONDocument }
        return try decode(AccountMetadata.self, try await authorized("PATCH", "me/metadata", body: Body(user_metadata: .object(changes))))
    }
}
