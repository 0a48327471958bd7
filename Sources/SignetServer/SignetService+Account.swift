import Foundation
import SignetAPI
import SignetCrypto
import SignetHTTP
import SignetStore
import SignetWebAuthn

extension SignetService {
    /// The signed-in account behind the request's Bearer access token, and the token's claims.
    func account(_ request: HTTPRequest) throws -> (UserRecord, [String: JSONValue]) {
        let claims = try bearer(request)
        guard let sub = claims["sub"]?.string, let user = try store.user(id: sub) else { throw unauthorized("the token's subject no longer exists") }
        return (user, claims)
    }

    func passkeyJSON(_ c: CredentialRow) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(Base64URL.encode(c.id)), "created_at": .int(c.createdAt / 1000), "aaguid": .string(c.aaguid),
            "backup_eligible": .bool(c.backupEligible), "backup_state": .bool(c.backupState), "transports": .array(c.transports.map(JSONValue.string)),
            "name": c.name.map(JSONValue.string) ?? .null, "authenticator": KnownAuthenticators.names[c.aaguid].map(JSONValue.string) ?? .null,
        ]
        object["last_used_at"] = c.lastUsedAt.map { .int($0 / 1000) } ?? .null
        return .object(object)
    }

    /// `GET /me/passkeys`: the account's live passkeys.
    func listPasskeys(_ request: HTTPRequest) throws -> HTTPResponse {
        let (user, _) = try account(request)
        let live = try store.credentials(userID: user.id).filter { $0.revokedAt == nil }
        return Self.json(200, .object(["passkeys": .array(live.map(passkeyJSON))]))
    }

    /// `POST /me/passkeys/options`: creation options to add a passkey; the existing ones are excluded.
    func addPasskeyOptions(_ request: HTTPRequest) throws -> HTTPResponse {
        let (user, claims) = try account(request)
        let existing = try store.credentials(userID: user.id).filter { $0.revokedAt == nil }
        var settings = CreationSettings()
        settings.residentKey = configuration.residentKey
        settings.userVerification = configuration.userVerification
        settings.attestation = configuration.attestation
        settings.timeout = configuration.sessionTimeout * 1000
        let options = rp.creationOptions(
            user: UserEntity(id: user.handle, name: user.email, displayName: user.name ?? user.email),
            excludeCredentials: existing.map { CredentialDescriptor(id: $0.id, transports: $0.transports) }, settings: settings, random: random)
        let session = AuthSession(
            id: timeOrderedID(), kind: .addPasskey, clientID: claims["client_id"]?.string ?? "", challenge: options.challenge, userID: user.id,
            userHandle: user.handle, requireUserVerification: configuration.userVerification == "required",
            expiresAt: nowMillis + Int64(configuration.sessionTimeout) * 1000)
        return Self.json(200, .object(["authn_params_public_key": options.json, "auth_session": .string(try sessions.seal(session))]))
    }

    /// `POST /me/passkeys`: verifies the registration against its session and adds the passkey.
    func addPasskey(_ request: HTTPRequest) throws -> HTTPResponse {
        let (user, claims) = try account(request)
        let body = try self.body(request)
        let sessionText = try body.member("auth_session")
        guard let credentialJSON = body["authn_response"], credentialJSON.object != nil else { throw APIError.malformed("missing member \"authn_response\"") }
        let credential = try CredentialJSON(wire: credentialJSON)
        let name = try body.optionalMember("name").map { String($0.prefix(100)) }
        return try redeem(sessionText, clientID: claims["client_id"]?.string ?? "", ceremony: "add_passkey", credentialID: credential.rawId, request: request) { session in
            guard session.kind == .addPasskey, session.userID == user.id else {
                throw APIError.grant("ceremony_mismatch", "the auth_session is not for adding a passkey to this account")
            }
            guard credential.response.attestationObject != nil else { throw APIError.malformed("authn_response must be a registration") }
            let registration = RegistrationRequest(
                clientDataJSON: try Self.bytes(credential.response.clientDataJSON, "clientDataJSON"),
                attestationObject: try Self.bytes(credential.response.attestationObject, "attestationObject"),
                rawID: try Self.bytes(credential.rawId, "rawId"), expectedChallenge: session.challenge,
                requireUserVerification: session.requireUserVerification)
            let result: RegistrationResult
            do {
                result = try rp.verifyRegistration(registration, now: clock())
            } catch let error as WebAuthnError {
                throw APIError.webAuthn(error)
            }
            if try store.credential(id: result.credentialID) != nil {
                throw APIError(409, "invalid_request", "credential_exists", "this passkey is already registered")
            }
            let row = CredentialRow(
                id: result.credentialID, userID: user.id, publicKey: result.publicKey, algorithm: result.algorithm.rawValue,
                signCount: Int64(result.signCount), aaguid: result.aaguid.uuidString.lowercased(), format: result.format,
                backupEligible: result.backupEligible, backupState: result.backupState,
                transports: (credential.response.transports ?? []).filter { $0.count <= 32 }.prefix(8).map { $0 }, name: name, createdAt: nowMillis)
            try commit([.useSession(id: session.id, expiresAt: session.expiresAt), .addCredential(row),
                        auditEvent("passkey_added", user: user.id, client: session.clientID, credential: row.id, request: request)], signUp: false)
            return Self.json(201, passkeyJSON(row))
        }
    }

    func credentialID(_ text: String) throws -> [UInt8] {
        guard let id = Base64URL.decode(text), !id.isEmpty, id.count <= AuthenticatorData.maxCredentialIDLength else {
            throw APIError(404, "invalid_request", "credential_unknown", "no such passkey")
        }
        return id
    }

    /// `PATCH /me/passkeys/{id}` with `{"name": ...}`.
    func renamePasskey(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let (user, _) = try account(request)
        let name = try self.body(request).member("name").trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...100).contains(name.count) else { throw APIError.malformed("name must be 1 to 100 characters") }
        let credentialID = try credentialID(id)
        guard try store.renameCredential(id: credentialID, userID: user.id, name: name),
              let row = try store.credential(id: credentialID)
        else { throw APIError(404, "invalid_request", "credential_unknown", "no such passkey on this account") }
        return Self.json(200, passkeyJSON(row))
    }

    /// `DELETE /me/passkeys/{id}`: revokes a passkey; the last one stays while it is the only way in.
    func revokePasskey(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let (user, claims) = try account(request)
        let credentialID = try credentialID(id)
        switch try store.revokeCredential(id: credentialID, userID: user.id, at: nowMillis) {
        case .revoked:
            audit("passkey_revoked", "success", user: user.id, client: claims["client_id"]?.string, credential: credentialID, request: request)
            return HTTPResponse(status: 204)
        case .lastCredential:
            audit("passkey_revoked", "failure", reason: "last_credential", user: user.id, credential: credentialID, request: request)
            throw APIError(409, "invalid_request", "last_credential", "this is the account's last passkey and its only way in; add another first")
        case .notFound:
            throw APIError(404, "invalid_request", "credential_unknown", "no such passkey on this account")
        }
    }

    // MARK: device keys

    /// A P-256 public key from SPKI DER or an X9.63 uncompressed point; other curves, points off
    /// the curve and malformed bytes are refused.
    static func deviceKey(_ text: String) throws -> PublicKey {
        guard let bytes = Base64URL.decode(text), !bytes.isEmpty, bytes.count <= 1024 else {
            throw APIError(400, "invalid_request", "device_key_invalid", "public_key must be base64url")
        }
        let key: PublicKey
        do {
            key = bytes.count == 65 && bytes[0] == 0x04 ? try PublicKey(curve: .p256, x963: bytes) : try PublicKey(spki: bytes)
        } catch {
            throw APIError(400, "invalid_request", "device_key_invalid", "public_key is not a valid P-256 key (SPKI DER or X9.63 point on the curve)")
        }
        guard key.kind == .ec(.p256) else {
            throw APIError(400, "invalid_request", "device_key_unsupported", "device keys must be P-256 (the Secure Enclave and Android Keystore kind)")
        }
        return key
    }

    func deviceKeyJSON(_ k: DeviceKeyRow) -> JSONValue {
        .object([
            "id": .string(k.id), "device_id": .string(k.deviceID), "platform": .string(k.platform), "name": k.name.map(JSONValue.string) ?? .null,
            "created_at": .int(k.createdAt / 1000), "last_used_at": k.lastUsedAt.map { .int($0 / 1000) } ?? .null,
        ])
    }

    /// `POST /me/device-keys`: enrols a device key; a new key for the same device replaces the old.
    func enrollDeviceKey(_ request: HTTPRequest) throws -> HTTPResponse {
        let (user, claims) = try account(request)
        let body = try self.body(request)
        let key = try Self.deviceKey(try body.member("public_key"))
        let deviceID = try body.member("device_id")
        guard (1...128).contains(deviceID.count) else { throw APIError.malformed("device_id must be 1 to 128 characters") }
        let platform = try body.member("platform")
        guard platform == "ios" || platform == "android" else { throw APIError.malformed("platform must be ios or android") }
        let name = try body.optionalMember("name")
        guard (name?.count ?? 0) <= 100 else { throw APIError.malformed("name must be at most 100 characters") }
        let row = DeviceKeyRow(id: "dk_" + Base64URL.encode(random(15)), userID: user.id, deviceID: deviceID, platform: platform, name: name,
                               publicKey: key.spki, createdAt: nowMillis)
        let replaced: [String]
        do {
            replaced = try store.enrollDeviceKey(row, limit: configuration.maxDeviceKeys)
        } catch {
            guard error.code == .conflict, error.detail == "device_key_limit" else { throw error }
            throw APIError(409, "invalid_request", "device_key_limit", "this account has \(configuration.maxDeviceKeys) device keys; revoke one first")
        }
        for old in replaced { audit("device_key_revoked", "success", reason: "re_enrolled", user: user.id, credential: Array(old.utf8), request: request) }
        audit("device_key_enrolled", "success", user: user.id, client: claims["client_id"]?.string, credential: Array(row.id.utf8), request: request)
        var json = deviceKeyJSON(row)
        if case .object(var object) = json {
            object["replaced"] = .array(replaced.map(JSONValue.string))
            json = .object(object)
        }
        return Self.json(201, json)
    }

    /// `GET /me/device-keys`.
    func listDeviceKeys(_ request: HTTPRequest) throws -> HTTPResponse {
        let (user, _) = try account(request)
        return Self.json(200, .object(["device_keys": .array(try store.deviceKeys(userID: user.id).filter { $0.revokedAt == nil }.map(deviceKeyJSON))]))
    }

    /// `DELETE /me/device-keys/{id}`.
    func revokeDeviceKey(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let (user, _) = try account(request)
        guard id.count <= 64, try store.revokeDeviceKey(id: id, userID: user.id, at: nowMillis) else {
            throw APIError(404, "invalid_request", "device_key_unknown", "no such device key on this account")
        }
        audit("device_key_revoked", "success", user: user.id, credential: Array(id.utf8), request: request)
        return HTTPResponse(status: 204)
    }
}
