public import SignetAPI
import SignetCrypto
public import SignetWebAuthn

/// An action challenge as `POST /actions/challenge` answers it, before its wire form: with the
/// passkey method it carries request options over the same challenge.
public struct ActionChallenge: Sendable {
    public let challengeID: String
    public let challenge: [UInt8]
    public let expiresIn: Int
    public let actionHash: [UInt8]
    public let options: JSONValue?
    /// For a device approval: which client, device and address asked (shown before signing).
    public var deviceRequest: JSONValue? = nil
}

/// An approved action: the action token and the action it is for.
public struct ApprovedAction: Sendable {
    public let token: String
    public let expiresIn: Int
    public let action: JSONValue
}

extension Ceremonies {
    /// Largest action accepted, as canonical JSON bytes, and its deepest nesting.
    static let maxActionBytes = 4096
    static let maxActionDepth = 8

    /// An action: a JSON object of bounded size and depth with a string `type`, in RFC 8785
    /// canonical form, and the SHA-256 of that form.
    static func canonicalAction(_ action: JSONValue?) throws -> (canonical: String, hash: [UInt8]) {
        guard let action, action.object != nil else { throw AuthError(.actionInvalid, "action must be a JSON object") }
        func depth(_ v: JSONValue) -> Int {
            switch v {
            case .object(let o): 1 + (o.values.map(depth).max() ?? 0)
            case .array(let a): 1 + (a.map(depth).max() ?? 0)
            default: 0
            }
        }
        guard depth(action) <= maxActionDepth else { throw AuthError(.actionInvalid, "action is nested deeper than \(maxActionDepth)") }
        guard let type = action["type"]?.string, (1...64).contains(type.count) else {
            throw AuthError(.actionInvalid, "action needs a string type of 1 to 64 characters")
        }
        let canonical: String
        do {
            canonical = try action.canonical()
        } catch {
            throw AuthError(.actionInvalid, "action cannot be canonicalized: \(error.detail)")
        }
        guard canonical.utf8.count <= maxActionBytes else { throw AuthError(.actionInvalid, "action is larger than \(maxActionBytes) bytes") }
        return (canonical, Digest.sha256.hash(Array(canonical.utf8)))
    }

    var actionAudience: String { configuration.actionAudience ?? configuration.issuer + "/actions" }

    /// `POST /actions/challenge`: a single-use challenge bound to the account, one key and the
    /// action's hash. With a device key ID the device key signs it; with the `passkey` method the
    /// answer also carries WebAuthn request options limited to the account's passkeys.
    public func beginAction(deviceKeyID: String?, method: String?, action: JSONValue?, principal: Principal, context: RequestContext) throws -> ActionChallenge {
        let user = principal.user
        let (canonical, hash) = try Self.canonicalAction(action)
        if let held = try heldRecovery(principal) { throw AuthError(.recoveryHold, "recovery \(held.id) holds this session") }
        var boundKey: String?
        var passkeys: [CredentialRow] = []
        let isDeviceApproval = action?["type"]?.string == Self.deviceApproval
        if isDeviceApproval, (method ?? "device_key") != "device_key" { throw AuthError.malformed("a device approval is signed with a device key") }
        let deviceRequest = isDeviceApproval ? try self.deviceRequest(action, user: user) : nil
        switch method ?? "device_key" {
        case "device_key":
            guard let id = deviceKeyID else { throw AuthError.malformed("missing member \"device_key_id\"") }
            guard id.count <= 64, let key = try store.deviceKey(id: id), key.userID == user.id else {
                throw AuthError(.deviceKeyUnknown, "no such device key on this account")
            }
            guard key.revokedAt == nil else { throw AuthError(.deviceKeyRevoked, "device key \(id) was revoked") }
            try refuseHeld(credentialRecovery: key.recoveryID, userID: user.id, what: "device key \(id)")
            boundKey = id
        case "passkey":
            passkeys = try store.credentials(userID: user.id).filter { $0.revokedAt == nil }
            guard !passkeys.isEmpty else { throw AuthError(.credentialUnknown, "this account has no passkey") }
        default:
            throw AuthError.malformed("method must be device_key or passkey")
        }
        let challenge = random(32)
        let now = nowMillis
        let row = ActionChallengeRow(
            id: "ac_" + Base64URL.encode(random(15)), userID: user.id, deviceKeyID: boundKey, challenge: challenge, actionHash: hash, action: canonical,
            expiresAt: now + Int64(configuration.actionChallengeLifetime) * 1000, createdAt: now)
        do {
            try store.createActionChallenge(row, limit: configuration.actionRateLimit, windowStart: now - 60_000)
        } catch {
            guard error.code == .rateLimited else { throw error }
            audit(.actionChallenge, "failure", reason: Reason.rateLimited.rawValue, user: user.id, context: context)
            var limited = AuthError(.rateLimited, "more than \(configuration.actionRateLimit) action challenges a minute")
            limited.retryAfter = 60
            throw limited
        }
        let options = passkeys.isEmpty ? nil : rp.requestOptions(
            allowCredentials: passkeys.map { CredentialDescriptor(id: $0.id, transports: $0.transports) }, userVerification: configuration.userVerification,
            timeout: configuration.actionChallengeLifetime * 1000, random: { _ in challenge }).json
        return ActionChallenge(challengeID: row.id, challenge: challenge, expiresIn: configuration.actionChallengeLifetime, actionHash: hash, options: options,
                               deviceRequest: deviceRequest)
    }

    /// `POST /actions/approve`: uses the challenge (once), checks the proof — the device key's
    /// signature, or a passkey's assertion on the one assertion path — and issues an action token
    /// good for that one action.
    public func approveAction(_ request: ActionApproveRequest, principal: Principal, context: RequestContext) throws -> ApprovedAction {
        let user = principal.user
        do {
            guard request.challenge_id.count <= 64, let row = try store.useActionChallenge(id: request.challenge_id, at: nowMillis) else {
                throw AuthError(.actionChallengeUnknown, "the challenge is unknown or was already used")
            }
            guard row.userID == user.id else { throw AuthError(.actionChallengeAccountMismatch, "the challenge belongs to another account") }
            guard row.expiresAt > nowMillis else { throw AuthError(.actionChallengeExpired, "the challenge has expired") }
            // No action is approved by what a holding recovery added, nor in a session it holds.
            if let held = try heldRecovery(principal) { throw AuthError(.recoveryHold, "recovery \(held.id) holds this session") }
            let (amr, binding) = try row.deviceKeyID.map { try approveWithDeviceKey(row, keyID: $0, signature: request.signature) }
                ?? approveWithPasskey(row, request.authn_response, principal: principal, context: context)
            let action = try StrictJSON().parse(Array(row.action.utf8))
            if action["type"]?.string == Self.deviceApproval, let keyID = row.deviceKeyID {
                try decideDevice(action, approve: request.deny != true, user: user, deviceKeyID: keyID, context: context)
            } else if request.deny == true {
                throw AuthError.malformed("deny is for device approvals only")
            }
            let now = nowMillis / 1000
            var claims: JSONObject = [
                "iss": .string(configuration.issuer), "sub": .string(user.id), "aud": .string(actionAudience), "iat": .int(now),
                "exp": .int(now + Int64(configuration.actionTokenLifetime)), "jti": .string(Base64URL.encode(random(16))),
                "action": action, "action_hash": .string(Base64URL.encode(row.actionHash)), "amr": .array(amr.map(JSONValue.string)),
                "challenge_id": .string(row.id),
            ]
            if let client = principal.clientID { claims["client_id"] = .string(client) }
            claims[binding.claim] = .string(binding.value)
            let token = try JWT.sign(claims: claims, type: "action+jwt", keys: keys)
            // No action token goes out without its audit row.
            try recordAudit(.actionApproved, user: user.id, client: principal.clientID, credential: row.id, context: context)
            return ApprovedAction(token: token, expiresIn: configuration.actionTokenLifetime, action: action)
        } catch {
            let failure = AuthError(error)
            audit(.actionApproved, refused: failure, user: user.id, credential: String(request.challenge_id.prefix(64)), context: context)
            throw failure
        }
    }

    /// The device-key proof: a DER ECDSA P-256/SHA-256 signature over the challenge bytes.
    func approveWithDeviceKey(_ row: ActionChallengeRow, keyID: String, signature text: String?) throws -> ([String], (claim: String, value: String)) {
        guard let key = try store.deviceKey(id: keyID) else { throw AuthError(.deviceKeyUnknown, "device key \(keyID) is gone") }
        guard key.revokedAt == nil else { throw AuthError(.deviceKeyRevoked, "device key \(keyID) was revoked") }
        try refuseHeld(credentialRecovery: key.recoveryID, userID: key.userID, what: "device key \(keyID)")
        guard let signature = text.flatMap({ Base64URL.decode($0) }) else { throw AuthError.malformed("signature must be base64url") }
        guard ECDSASignature.raw(fromDER: signature, width: 32) != nil else { throw AuthError.malformed("signature is not a DER ECDSA signature") }
        guard try PublicKey(spki: key.publicKey).verify(signature: signature, message: row.challenge, scheme: .ecdsa(.sha256)) else {
            throw AuthError(.signatureInvalid, "the signature does not verify with device key \(keyID)")
        }
        try store.touchDeviceKey(id: keyID, at: nowMillis)
        return (["hwk"], ("device_key_id", keyID))
    }

    /// The passkey proof: an assertion over the challenge by one of the account's passkeys, on the
    /// same path and with the same guarded use as a sign-in.
    func approveWithPasskey(_ row: ActionChallengeRow, _ credential: CredentialJSON?, principal: Principal, context: RequestContext) throws -> ([String], (claim: String, value: String)) {
        guard let credential else { throw AuthError.malformed("missing member \"authn_response\"") }
        let verified = try verifyAssertion(
            credential, challenge: row.challenge, expectedUser: principal.user.id, allowCredentials: nil,
            requireUserVerification: requireUserVerification, client: principal.clientID, context: context)
        try refuseHeld(credentialRecovery: try store.credential(id: verified.use.credentialID)?.recoveryID, userID: principal.user.id, what: "passkey \(credential.rawId)")
        try record(verified, client: principal.clientID, context: context)
        return (verified.amr, ("credential_id", credential.rawId))
    }

    /// `POST /actions/verify`: for the resource server about to perform the action, which
    /// authenticated as a confidential client. Checks the token (signature, issuer, audience,
    /// expiry), that it was made for exactly this action and approved by `subject` (the account
    /// the service is acting for, so it cannot accept another account's approval by forgetting
    /// to compare), and uses it up: an action token works once.
    public func verifyActionToken(_ token: String, action: JSONValue?, subject: String, client: ClientConfiguration, context: RequestContext) throws -> ActionVerification {
        let claims: JSONObject
        do {
            claims = try JWT.verify(token, type: "action+jwt", issuer: configuration.issuer, keys: keys, now: clock())
        } catch {
            throw AuthError(.tokenInvalid, "the action token is not valid: \(error.detail)")
        }
        guard claims["aud"] == .string(actionAudience) else { throw AuthError(.tokenInvalid, "the action token is for another audience") }
        let (_, hash) = try Self.canonicalAction(action)
        let expected = Base64URL.encode(hash)
        guard claims["action_hash"] == .string(expected) else { throw AuthError(.actionMismatch, "the action token was issued for a different action") }
        guard claims["sub"] == .string(subject) else { throw AuthError(.actionSubjectMismatch, "approved by \(claims["sub"]?.string ?? "?"), not \(subject.prefix(64))") }
        try refuseWithdrawnApproval(claims, subject: subject)
        guard let jti = claims["jti"]?.string, let exp = claims["exp"]?.int64 else { throw AuthError(.tokenInvalid, "the action token has no jti or exp") }
        // The token's use and its audit row commit together: no "valid" without the row.
        let event = pendingAuditEvent(.actionVerified, user: subject, client: client.id, credential: claims["challenge_id"]?.string, context: context)
        do {
            try store.perform([.useSession(id: Array(Digest.sha256.hash(Array(("action-token:" + jti).utf8)).prefix(16)), expiresAt: exp * 1000), .audit(event)])
        } catch {
            throw error.code == .sessionUsed ? AuthError(.actionTokenUsed, "this action token was already used") : AuthError(error)
        }
        counted(event)
        return ActionVerification(valid: true, sub: claims["sub"]?.string ?? "", action_hash: expected,
                                  amr: claims["amr"]?.array?.compactMap(\.string) ?? [])
    }

    /// An approval stands only while what made it does: between the approval and the service's
    /// check (up to the token's lifetime), the account may have been blocked or deleted, and the
    /// key that signed may have been revoked, as when a stolen phone is reported.
    func refuseWithdrawnApproval(_ claims: JSONObject, subject: String) throws {
        guard let user = try store.user(id: subject) else { throw AuthError(.userUnknown, "the account that approved is gone") }
        guard !user.blocked else { throw AuthError(.userBlocked, "the account is blocked") }
        if let keyID = claims["device_key_id"]?.string {
            guard let key = try store.deviceKey(id: keyID), key.revokedAt == nil else { throw AuthError(.deviceKeyRevoked, "device key \(keyID) was revoked after it approved") }
        }
        if let credential = claims["credential_id"]?.string {
            guard let id = Base64URL.decode(credential), let passkey = try store.credential(id: id), passkey.revokedAt == nil else {
                throw AuthError(.credentialRevoked, "the passkey was revoked after it approved")
            }
        }
    }
}
