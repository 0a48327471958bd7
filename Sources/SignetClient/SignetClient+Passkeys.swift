public import SignetAPI

/// The account's passkeys: listed, added (with a sheet, or without one where the system allows),
/// renamed and revoked.
extension SignetClient {
    /// The account's live passkeys (`GET /me/passkeys`).
    public func passkeys() async throws -> [PasskeyInfo] { try decode(PasskeyList.self, try await authorized("GET", "me/passkeys")).passkeys }

    /// Adds a passkey on this device to the signed-in account.
    @discardableResult
    public func addPasskey(name: String? = nil) async throws -> PasskeyInfo {
        let start = try decode(PasskeyRegisterResponse.self, try await authorized("POST", "me/passkeys/options", body: [String: String]()))
        let credential = try await passkeys.createPasskey(start.authn_params_public_key)
        return try decode(PasskeyInfo.self, try await authorized("POST", "me/passkeys",
            body: AddPasskeyRequest(auth_session: start.auth_session, authn_response: credential, name: name)))
    }

    /// Adds a passkey without asking, where the system allows it: an automatic passkey upgrade,
    /// for right after a sign-in of another kind (an email code, a recovery code), when iOS 18 or
    /// macOS 15 make one silently with the user's password manager and tell them. The options
    /// are for a conditional registration (`POST /me/passkeys/options` `{"conditional": true}`),
    /// whose registration may come without user presence. `nil`, with nothing to show the user,
    /// when none is made: the system's conditions are unmet, the device has one for the account
    /// already, the provider cannot, or the sign-in is too old for adding a credential (this
    /// never shows the passkey sheet, not even for a step-up).
    public func upgradeToPasskey(name: String? = nil) async throws -> PasskeyInfo? {
        let answer = try await authorized("POST", "me/passkeys/options", body: ["conditional": true], stepsUp: false)
        if answer.status == 401, Self.error(answer).code == .stepUpRequired { return nil }
        let start = try decode(PasskeyRegisterResponse.self, answer)
        let credential: CredentialJSON
        do {
            guard let made = try await passkeys.createPasskeyConditionally(start.authn_params_public_key) else { return nil }
            credential = made
        } catch let error as SignetError where [.canceled, .credentialExcluded, .authorizationFailed].contains(error.code) {
            return nil
        }
        let added = try await authorized("POST", "me/passkeys", body: AddPasskeyRequest(auth_session: start.auth_session, authn_response: credential, name: name),
                                         stepsUp: false)
        if added.status == 401, Self.error(added).code == .stepUpRequired { return nil }
        return try decode(PasskeyInfo.self, added)
    }

    /// Renames a passkey (`PATCH /me/passkeys/{id}`; a sensitive change: steps up if asked).
    @discardableResult
    public func renamePasskey(id: String, name: String) async throws -> PasskeyInfo {
        try decode(PasskeyInfo.self, try await authorized("PATCH", "me/passkeys/\(id)", body: RenameRequest(name: name)))
    }

    /// Revokes a passkey (`DELETE /me/passkeys/{id}`; a sensitive change: steps up if asked).
    public func revokePasskey(id: String) async throws {
        let answer = try await authorized("DELETE", "me/passkeys/\(id)")
        guard answer.status == 204 else { throw Self.error(answer) }
    }
}
