public import SignetAPI

/// This device's key in the secure hardware, the account's other devices' keys, and the
/// approvals they sign.
extension SignetClient {
    /// Makes a new device key and enrols it; a key this device had before is replaced, on the
    /// device and on the server. This is the answer to `.deviceKeyInvalidated`.
    @discardableResult
    public func enrollDeviceKey(name: String? = nil) async throws -> DeviceKeyInfo {
        guard let deviceKeys = deviceKeyStore else { throw SignetError(.deviceKeyInvalidated, "this client has no device key store") }
        let publicKey = try await deviceKeys.createKey()
        let request = EnrollDeviceKeyRequest(public_key: Self.base64url(publicKey), device_id: deviceKeys.deviceID, platform: deviceKeys.platform, name: name)
        let info = try decode(DeviceKeyInfo.self, try await authorized("POST", "me/device-keys", body: request))
        if var stored = try tokens.load() {
            stored.deviceKeyID = info.id
            stored.deviceKeyPublicKey = publicKey
            try tokens.save(stored)
        }
        return info
    }

    /// The account's live device keys (`GET /me/device-keys`): the phones whose secure hardware
    /// approves its actions. This device's own has its ``DeviceKeyStore/deviceID``.
    public func deviceKeys() async throws -> [DeviceKeyInfo] {
        try decode(DeviceKeyList.self, try await authorized("GET", "me/device-keys")).device_keys
    }

    /// Revokes one of the account's device keys (`DELETE /me/device-keys/{id}`; a sensitive
    /// change: steps up if asked), with the keys of the devices it approved: a lost phone's, from
    /// another. When it is this device's own, the key is deleted here too and the session forgets
    /// it, so ``approve(action:reason:)`` asks for a passkey until ``enrollDeviceKey(name:)``.
    public func revokeDeviceKey(id: String) async throws {
        let answer = try await authorized("DELETE", "me/device-keys/\(id)")
        guard answer.status == 204 else { throw Self.error(answer) }
        guard try tokens.load()?.deviceKeyID == id else { return }
        try? await deviceKeyStore?.deleteKey()
        // Read again after the wait: a refresh meanwhile stored new tokens.
        if var stored = try tokens.load() {
            stored.deviceKeyID = nil
            stored.deviceKeyPublicKey = nil
            try tokens.save(stored)
        }
    }

    /// Approves `action` with this device's key behind a biometric check, or with a passkey when
    /// the device has no enrolled key. Returns the action token for that one action.
    public func approve(action: JSONDocument, reason: String = "Approve this action") async throws -> ActionApproval {
        let keyID = try tokens.load()?.deviceKeyID
        if let deviceKeys = deviceKeyStore, let keyID, await deviceKeys.hasKey() {
            let answer = try await authorized("POST", "actions/challenge", body: ActionChallengeRequest(device_key_id: keyID, action: action))
            let start: ActionChallengeResponse
            do {
                start = try decode(ActionChallengeResponse.self, answer)
            } catch let error as SignetError where error.code == .deviceKeyRevoked || error.code == .deviceKeyUnknown {
                throw SignetError(.deviceKeyInvalidated, status: error.status, "the server no longer accepts this device's key; enrol it again")
            }
            guard let challenge = Self.unbase64url(start.challenge) else { throw SignetError(.invalidResponse, "challenge is not base64url") }
            let signature = try await deviceKeys.sign(challenge, reason: reason)
            return try decode(ActionApproval.self, try await authorized("POST", "actions/approve",
                body: ActionApproveRequest(challenge_id: start.challenge_id, signature: Self.base64url(signature))))
        }
        let start = try decode(ActionChallengeResponse.self, try await authorized("POST", "actions/challenge",
            body: ActionChallengeRequest(method: "passkey", action: action)))
        guard let options = start.authn_params_public_key else { throw SignetError(.invalidResponse, "the passkey challenge carries no request options") }
        let credential = try await passkeys.assertPasskey(options)
        return try decode(ActionApproval.self, try await authorized("POST", "actions/approve",
            body: ActionApproveRequest(challenge_id: start.challenge_id, authn_response: credential)))
    }
}
