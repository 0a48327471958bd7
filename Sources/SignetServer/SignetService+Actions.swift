import Foundation
import SignetAPI
import SignetCrypto
import SignetHTTP
import SignetStore
import SignetWebAuthn

extension SignetService {
    /// Largest action accepted, as canonical JSON bytes, and its deepest nesting.
    static let maxActionBytes = 4096
    static let maxActionDepth = 8

    /// The action of a request: a JSON object of bounded size and depth with a string `type`, in
    /// RFC 8785 canonical form, and the SHA-256 of that form.
    func action(_ body: JSONValue) throws -> (canonical: String, hash: [UInt8]) {
        guard let action = body["action"], action.object != nil else { throw APIError(400, "invalid_request", "action_invalid", "action must be a JSON object") }
        func depth(_ v: JSONValue) -> Int {
            switch v {
            case .object(let o): 1 + (o.values.map(depth).max() ?? 0)
            case .array(let a): 1 + (a.map(depth).max() ?? 0)
            default: 0
            }
        }
        guard depth(action) <= Self.maxActionDepth else { throw APIError(400, "invalid_request", "action_invalid", "action is nested deeper than \(Self.maxActionDepth)") }
        guard let type = action["type"]?.string, (1...64).contains(type.count) else {
            throw APIError(400, "invalid_request", "action_invalid", "action needs a string type of 1 to 64 characters")
        }
        let canonical: String
        do {
            canonical = try action.canonical()
        } catch {
            throw APIError(400, "invalid_request", "action_invalid", "action cannot be canonicalized: \(error.detail)")
        }
        guard canonical.utf8.count <= Self.maxActionBytes else {
            throw APIError(400, "invalid_request", "action_invalid", "action is larger than \(Self.maxActionBytes) bytes")
        }
        return (canonical, Digest.sha256.hash(Array(canonical.utf8)))
    }

    var actionAudience: String { configuration.actionAudience ?? configuration.issuer + "/actions" }

    /// `POST /actions/challenge`: a single-use challenge bound to the account, one key and the
    /// action's hash. With `device_key_id` the device key signs it; with `"method": "passkey"` the
    /// answer also carries WebAuthn request options limited to the account's passkeys.
    func actionChallenge(_ request: HTTPRequest) throws -> HTTPResponse {
        let (user, _) = try account(request)
        let body = try self.body(request)
        let (canonical, hash) = try action(body)
        let method = try body.optionalMember("method") ?? "device_key"
        var deviceKeyID: String?
        var passkeys: [CredentialRow] = []
        switch method {
        case "device_key":
            let id = try body.member("device_key_id")
            guard id.count <= 64, let key = try store.deviceKey(id: id), key.userID == user.id else {
                throw APIError(400, "invalid_request", "device_key_unknown", "no such device key on this account")
            }
            guard key.revokedAt == nil else { throw APIError(400, "invalid_request", "device_key_revoked", "this device key was revoked; enrol the device again") }
            deviceKeyID = id
        case "passkey":
            passkeys = try store.credentials(userID: user.id).filter { $0.revokedAt == nil }
            guard !passkeys.isEmpty else { throw APIError(400, "invalid_request", "credential_unknown", "this account has no passkey") }
        default:
            throw APIError.malformed("method must be device_key or passkey")
        }
        let challenge = random(32)
        let row = ActionChallengeRow(
            id: "ac_" + Base64URL.encode(random(15)), userID: user.id, deviceKeyID: deviceKeyID, challenge: challenge, actionHash: hash, action: canonical,
            expiresAt: nowMillis + Int64(configuration.actionChallengeLifetime) * 1000, createdAt: nowMillis)
        do {
            try store.createActionChallenge(row, limit: configuration.actionRateLimit, windowStart: nowMillis - 60_000)
        } catch {
            guard error.code == .conflict, error.detail == "rate_limited" else { throw error }
            audit("action_challenge", "failure", reason: "rate_limited", user: user.id, request: request)
            var limited = APIError(429, "slow_down", "rate_limited", "at most \(configuration.actionRateLimit) action challenges a minute")
            limited.headers = [("Retry-After", "60")]
            throw limited
        }
        var answer: [String: JSONValue] = [
            "challenge_id": .string(row.id), "challenge": .string(Base64URL.encode(challenge)),
            "expires_in": .int(configuration.actionChallengeLifetime), "action_hash": .string(Base64URL.encode(hash)),
        ]
        if method == "passkey" {
            answer["authn_params_public_key"] = rp.requestOptions(
                allowCredentials: passkeys.map { CredentialDescriptor(id: $0.id, transports: $0.transports) }, userVerification: configuration.userVerification,
                timeout: configuration.actionChallengeLifetime * 1000, random: { _ in challenge }).json
        }
        return Self.json(200, .object(answer))
    }

    /// `POST /actions/approve`: uses the challenge (once), checks the proof and answers with an
    /// action token good for that one action.
    func approveAction(_ request: HTTPRequest) throws -> HTTPResponse {
        let (user, claims) = try account(request)
        let body = try self.body(request)
        let challengeID = try body.member("challenge_id")
        do {
            guard challengeID.count <= 64, let row = try store.useActionChallenge(id: challengeID, at: nowMillis) else {
                throw APIError(400, "invalid_grant", "action_challenge_unknown", "the challenge is unknown or was already used")
            }
            guard row.userID == user.id else {
                throw APIError(400, "invalid_grant", "action_challenge_account_mismatch", "the challenge belongs to another account")
            }
            guard row.expiresAt > nowMillis else { throw APIError(400, "invalid_grant", "action_challenge_expired", "the challenge has expired") }
            let (amr, binding) = try row.deviceKeyID.map { try approveWithDeviceKey(row, keyID: $0, body: body) }
                ?? approveWithPasskey(row, user: user, body: body)
            let action = try StrictJSON().parse(Array(row.action.utf8))
            let now = nowMillis / 1000
            var tokenClaims: [String: JSONValue] = [
                "iss": .string(configuration.issuer), "sub": .string(user.id), "aud": .string(actionAudience), "iat": .int(now),
                "exp": .int(now + Int64(configuration.actionTokenLifetime)), "jti": .string(Base64URL.encode(random(16))),
                "action": action, "action_hash": .string(Base64URL.encode(row.actionHash)), "amr": .array(amr.map(JSONValue.string)),
                "challenge_id": .string(row.id),
            ]
            if let client = claims["client_id"] { tokenClaims["client_id"] = client }
            for (k, v) in binding { tokenClaims[k] = v }
            let token = try JWT.sign(claims: tokenClaims, type: "action+jwt", keys: keys)
            audit("action_approved", "success", user: user.id, client: claims["client_id"]?.string, credential: Array(row.id.utf8), request: request)
            return Self.json(200, .object([
                "action_token": .string(token), "token_type": .string("Bearer"), "expires_in": .int(configuration.actionTokenLifetime), "action": action,
            ]))
        } catch let error as APIError {
            audit("action_approved", "failure", reason: error.reason, user: user.id, credential: Array(challengeID.utf8.prefix(64)), request: request)
            throw error
        }
    }

    /// The device-key proof: a DER ECDSA P-256/SHA-256 signature over the challenge bytes.
    func approveWithDeviceKey(_ row: ActionChallengeRow, keyID: String, body: JSONValue) throws -> ([String], [String: JSONValue]) {
        guard let key = try store.deviceKey(id: keyID) else { throw APIError(400, "invalid_grant", "device_key_unknown", "the device key is gone") }
        guard key.revokedAt == nil else { throw APIError(400, "invalid_grant", "device_key_revoked", "the device key was revoked") }
        guard let signature = try body.optionalMember("signature").flatMap({ Base64URL.decode($0) }) else {
            throw APIError.malformed("signature must be base64url")
        }
        guard ECDSASignature.raw(fromDER: signature, width: 32) != nil else { throw APIError.malformed("signature is not a DER ECDSA signature") }
        guard try PublicKey(spki: key.publicKey).verify(signature: signature, message: row.challenge, scheme: .ecdsa(.sha256)) else {
            throw APIError(400, "invalid_grant", "signature_invalid", "the signature does not verify with the device key")
        }
        try store.touchDeviceKey(id: keyID, at: nowMillis)
        return (["hwk"], ["device_key_id": .string(keyID)])
    }

    /// The passkey proof: a WebAuthn assertion over the challenge by one of the account's passkeys.
    func approveWithPasskey(_ row: ActionChallengeRow, user: UserRecord, body: JSONValue) throws -> ([String], [String: JSONValue]) {
        guard let json = body["authn_response"], json.object != nil else { throw APIError.malformed("missing member \"authn_response\"") }
        let credential = try CredentialJSON(wire: json)
        let rawID = try Self.bytes(credential.rawId, "rawId")
        guard let (stored, owner) = try store.credentialAndUser(credentialID: rawID), owner.id == user.id else {
            throw APIError.grant("credential_unknown", "this passkey is not one of the account's")
        }
        guard stored.revokedAt == nil else { throw APIError.grant("credential_revoked", "this passkey was revoked") }
        let handle = try credential.response.userHandle.map { try Self.bytes($0, "userHandle") }
        let assertion = AuthenticationRequest(
            credentialID: rawID, clientDataJSON: try Self.bytes(credential.response.clientDataJSON, "clientDataJSON"),
            authenticatorData: try Self.bytes(credential.response.authenticatorData, "authenticatorData"),
            signature: try Self.bytes(credential.response.signature, "signature"), userHandle: handle?.isEmpty == true ? nil : handle,
            expectedChallenge: row.challenge, requireUserVerification: configuration.userVerification == "required")
        let record = CredentialRecord(id: stored.id, publicKey: stored.publicKey, signCount: UInt32(clamping: stored.signCount),
                                      backupEligible: stored.backupEligible, userHandle: owner.handle)
        let result = try verifyAssertion(assertion, record)
        if case .regression = result.signCount { throw APIError.grant("counter_regression", "signature counter went backwards") }
        // The counter check again, atomic with the write: two approvals at once with one counter
        // value cannot both pass.
        guard try store.recordUse(credentialID: rawID, signCount: Int64(result.newSignCount), backupState: result.backupState, at: nowMillis) else {
            if try store.credential(id: rawID)?.revokedAt != nil { throw APIError.grant("credential_revoked", "this passkey was revoked") }
            throw APIError.grant("counter_regression", "signature counter went backwards")
        }
        return (result.userVerified ? ["pop", "user"] : ["pop"], ["credential_id": .string(credential.rawId)])
    }

    func verifyAssertion(_ assertion: AuthenticationRequest, _ record: CredentialRecord) throws -> AuthenticationResult {
        do {
            return try rp.verifyAuthentication(assertion, credential: record, userIdentified: true)
        } catch {
            throw APIError.webAuthn(error)
        }
    }

    /// `POST /actions/verify` `{action_token, action}`: for the service about to perform the action.
    /// Checks the token (signature, issuer, audience, expiry), that it was made for exactly this
    /// action, and uses it up: an action token works once.
    func verifyActionToken(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try self.body(request)
        let claims: [String: JSONValue]
        do {
            claims = try JWT.verify(try body.member("action_token"), type: "action+jwt", issuer: configuration.issuer, keys: keys, now: clock())
        } catch let error as JWT.Invalid {
            throw APIError(401, "invalid_token", "token_invalid", "the action token is not valid: \(error.detail)")
        }
        guard claims["aud"] == .string(actionAudience) else { throw APIError(401, "invalid_token", "token_invalid", "the action token is for another audience") }
        let (_, hash) = try action(body)
        guard claims["action_hash"] == .string(Base64URL.encode(hash)) else {
            throw APIError(400, "invalid_grant", "action_mismatch", "the action token was issued for a different action")
        }
        guard let jti = claims["jti"]?.string, let exp = claims["exp"]?.int64,
              try store.useSession(id: Array(Digest.sha256.hash(Array(("action-token:" + jti).utf8)).prefix(16)), expiresAt: exp * 1000)
        else { throw APIError(400, "invalid_grant", "action_token_used", "this action token was already used") }
        return Self.json(200, .object(["valid": .bool(true), "sub": claims["sub"] ?? .null, "action_hash": claims["action_hash"] ?? .null, "amr": claims["amr"] ?? .null]))
    }
}
