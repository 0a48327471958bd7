import Foundation
public import SignetAPI
import SignetCrypto
import SignetWebAuthn

extension Ceremonies {
    func info(_ c: CredentialRow) -> PasskeyInfo {
        PasskeyInfo(id: Base64URL.encode(c.id), name: c.name, created_at: c.createdAt / 1000, last_used_at: c.lastUsedAt.map { $0 / 1000 },
                    aaguid: c.aaguid, authenticator: authenticatorName(c.aaguid), backup_eligible: c.backupEligible,
                    backup_state: c.backupState, transports: c.transports, allowed: allowsAuthenticator(c.aaguid),
                    hardware_bound: isHardwareBound(c))
    }

    static func info(_ k: DeviceKeyRow, replaced: [String]? = nil) -> DeviceKeyInfo {
        DeviceKeyInfo(id: k.id, device_id: k.deviceID, platform: k.platform, name: k.name, created_at: k.createdAt / 1000,
                      last_used_at: k.lastUsedAt.map { $0 / 1000 }, replaced: replaced)
    }

    /// `GET /me/passkeys`: the account's live passkeys.
    public func passkeys(_ principal: Principal) throws -> PasskeyList {
        PasskeyList(passkeys: try store.credentials(userID: principal.user.id).filter { $0.revokedAt == nil }.map(info))
    }

    /// `POST /me/passkeys/options`: creation options to add a passkey; the existing ones are excluded.
    /// With `conditional`, for `mediation: "conditional"` creation (WebAuthn L3 §5.1.3): the
    /// registration it yields may have UP clear. An account with `max_passkeys` live passkeys is
    /// refused here (`passkey_limit`), before the authenticator makes one the server would not
    /// keep; the addition's own transaction counts them again.
    public func beginAddPasskey(_ principal: Principal, conditional: Bool = false) throws -> CeremonyStart {
        let user = principal.user
        let existing = try store.credentials(userID: user.id).filter { $0.revokedAt == nil }
        guard existing.count < configuration.maxPasskeys else {
            throw AuthError(.passkeyLimit, "\(existing.count) live passkeys, the most max_passkeys (\(configuration.maxPasskeys)) allows")
        }
        let options = rp.creationOptions(
            user: UserEntity(id: user.handle, name: user.email, displayName: user.name ?? user.email),
            excludeCredentials: existing.map { CredentialDescriptor(id: $0.id, transports: $0.transports) }, settings: creationSettings, random: random)
        let session = AuthSession(
            id: timeOrderedID(), kind: conditional ? .addPasskeyConditional : .addPasskey, clientID: principal.clientID ?? "", challenge: options.challenge, userID: user.id,
            userHandle: user.handle, requireUserVerification: requireUserVerification, expiresAt: sessionExpiry, beganBy: principal.sessionID)
        return CeremonyStart(options: options.json, authSession: try sessions.seal(session))
    }

    /// `POST /me/passkeys`: verifies the registration on the one registration path (the same
    /// attestation policy as sign-up) and adds the passkey; `userAgent` (the request's) and `app`
    /// (the client, when an app adds it through the API) name a passkey made without a name
    /// (``madeInName(userAgent:app:)``).
    ///
    /// The step-up (RFC 9470) is checked as of the moment the ceremony began, when
    /// `POST /me/passkeys/options` checked it too: by the time the finish comes the authenticator
    /// has made the passkey, and refusing it then for a window that passed in between would leave
    /// the user a passkey the server does not know (a conditional creation, with no sheet, may
    /// take a while). Only a token of the sign-in session that began it (its `sid`) may finish
    /// it, so a token of another session, stale or stolen, cannot finish a ceremony a fresh one
    /// began; the auth_session, single-use and alive for `session_timeout`, bounds how late the
    /// finish is. Both refusals come before the auth_session is spent.
    public func addPasskey(_ request: AddPasskeyRequest, principal: Principal, context: RequestContext, userAgent: String? = nil, app: String? = nil) throws -> PasskeyInfo {
        let begun = sessions.open(request.auth_session)
        // An auth_session this server did not seal began nothing: checked as of now, it is then refused below.
        try requireFreshAuthentication(principal, allowCode: true, asOf: begun?.startedAt)
        if let begun, let beganBy = begun.beganBy, beganBy != principal.sessionID {
            // Counted as a failure from the address and audited, like a refusal inside the ceremony.
            let failure = failed(AuthError(.ceremonyMismatch, "the auth_session was begun by another sign-in session of the account"), context: context)
            audit(.addPasskey, refused: failure, user: principal.user.id, client: principal.clientID, context: context)
            throw failure
        }
        let user = principal.user
        let name = try Self.displayName(request.name.map { String($0.prefix(100)) }, member: "name", limit: 100)
        let clientID = principal.clientID ?? ""
        return try redeem(begun, clientID: clientID, ceremony: .addPasskey, credentialID: request.authn_response.rawId, user: user.id, context: context) { session in
            guard session.kind == .addPasskey || session.kind == .addPasskeyConditional, session.userID == user.id else {
                throw AuthError(.ceremonyMismatch, "the auth_session is not for adding a passkey to this account")
            }
            guard request.authn_response.response.attestationObject != nil else { throw AuthError.malformed("authn_response must be a registration") }
            var (row, _) = try verifyRegistration(request.authn_response, session: session, owner: user.id, name: name, userAgent: userAgent, app: app)
            if name == nil, let made = row.name {
                let taken = try store.credentials(userID: user.id).filter { $0.revokedAt == nil }.compactMap { $0.name ?? authenticatorName($0.aaguid) }
                row.name = Self.unusedName(made, among: Set(taken))
            }
            // Added by a code session to an account that has a credential: a recovery, held.
            let recovery = try recoveryForAddition(principal, context: context)
            row.recoveryID = recovery.id
            try store.perform([
                .useSession(id: session.id, expiresAt: session.expiresAt), .addCredential(row, limit: configuration.maxPasskeys),
                .audit(auditEvent(.passkeyAdded, user: user.id, client: session.clientID, credential: Base64URL.encode(row.id), context: context)),
            ] + recovery.writes + notice(.passkeyAdded(name: row.name ?? authenticatorName(row.aaguid)), to: user))
            return info(row)
        }
    }

    /// A name Signet gives a passkey (``madeInName(userAgent:app:)``), numbered when the account
    /// already has a live passkey called that: a second passkey made in Chrome on Linux is
    /// "Chrome · Linux 2", so the account page tells the two apart. A name the owner gives is kept
    /// as given.
    static func unusedName(_ name: String, among taken: Set<String>) -> String {
        guard taken.contains(name) else { return name }
        var number = 2
        while taken.contains("\(name) \(number)") { number += 1 }
        return "\(name) \(number)"
    }

    /// A passkey ID from a path; anything that cannot be one is simply not on the account.
    func credentialID(_ text: String) throws -> [UInt8] {
        guard let id = Base64URL.decode(text), !id.isEmpty, id.count <= AuthenticatorData.maxCredentialIDLength else {
            throw AuthError.notFound(.credentialUnknown, "no such passkey")
        }
        return id
    }

    /// `PATCH /me/passkeys/{id}`.
    public func renamePasskey(id: String, _ request: RenameRequest, principal: Principal) throws -> PasskeyInfo {
        guard let name = try Self.displayName(request.name, member: "name", limit: 100) else { throw AuthError.malformed("name must be 1 to 100 characters") }
        let credentialID = try credentialID(id)
        try refuseHeldChange(principal, targetRecovery: try store.credential(id: credentialID)?.recoveryID)
        guard try store.renameCredential(id: credentialID, userID: principal.user.id, name: name),
              let row = try store.credential(id: credentialID)
        else { throw AuthError.notFound(.credentialUnknown, "no such passkey on this account") }
        return info(row)
    }

    /// `DELETE /me/passkeys/{id}`: revokes a passkey; the last one stays while it is the only way in.
    public func revokePasskey(id: String, principal: Principal, context: RequestContext) throws {
        let user = principal.user
        let credentialID = try credentialID(id)
        let credential = Base64URL.encode(credentialID)
        let target = try store.credential(id: credentialID).flatMap { $0.userID == user.id ? $0 : nil }
        if let target { try refuseHeldChange(principal, targetRecovery: target.recoveryID) }
        // The revocation, its audit row and the notice to the address commit together, or none does.
        let event = pendingAuditEvent(.passkeyRevoked, user: user.id, client: principal.clientID, credential: credential, context: context)
        let told = target.map { notice(.passkeyRemoved(name: $0.name ?? authenticatorName($0.aaguid), byOperator: false), to: user) } ?? []
        switch try revoking(event, approver: credential, also: told, context: context, committed: { $0 == .revoked }, { writes in
            try store.revokeCredential(id: credentialID, userID: user.id, at: nowMillis, writes: writes)
        }) {
        case .revoked:
            credentialCache.remove(credentialID)
        case .lastCredential:
            audit(.passkeyRevoked, "failure", reason: Reason.lastCredential.rawValue, user: user.id, credential: credential, context: context)
            throw AuthError(.lastCredential, "the account's last live passkey")
        case .notFound:
            throw AuthError.notFound(.credentialUnknown, "no such passkey on this account")
        }
    }

    // MARK: device keys

    /// A P-256 public key from SPKI DER or an X9.63 uncompressed point; other curves, points off
    /// the curve and malformed bytes are refused.
    static func deviceKey(_ text: String) throws -> PublicKey {
        guard let bytes = Base64URL.decode(text), !bytes.isEmpty, bytes.count <= 1024 else {
            throw AuthError(.deviceKeyInvalid, "public_key must be base64url")
        }
        let key: PublicKey
        do {
            key = bytes.count == 65 && bytes[0] == 0x04 ? try PublicKey(curve: .p256, x963: bytes) : try PublicKey(spki: bytes)
        } catch {
            throw AuthError(.deviceKeyInvalid, "public_key is not a valid P-256 key (SPKI DER or X9.63 point on the curve)")
        }
        guard key.kind == .ec(.p256) else { throw AuthError(.deviceKeyUnsupported, "the key is \(key.kind), not P-256") }
        return key
    }

    /// A device key's `device_id` (1 to 128 characters, no control characters) and `platform`
    /// (`ios` or `android`), or 400 `malformed`.
    static func checkedDevice(id: String, platform: String) throws(AuthError) {
        guard (1...128).contains(id.count), !id.unicodeScalars.contains(where: isUnsafeInText) else {
            throw AuthError.malformed("device_id must be 1 to 128 characters, without control characters")
        }
        guard platform == "ios" || platform == "android" else { throw AuthError.malformed("platform must be ios or android") }
    }

    /// `POST /me/device-keys`: enrols a device key; a new key for the same device replaces the old.
    public func enrollDeviceKey(_ request: EnrollDeviceKeyRequest, principal: Principal, context: RequestContext) throws -> DeviceKeyInfo {
        let user = principal.user
        let key = try Self.deviceKey(request.public_key)
        try Self.checkedDevice(id: request.device_id, platform: request.platform)
        let name = try Self.displayName(request.name, member: "name", limit: 100)
        let recovery = try recoveryForAddition(principal, context: context)
        // A device approved from another (RFC 8628, `mca`) holds its keys from that approval.
        let row = DeviceKeyRow(id: "dk_" + Base64URL.encode(random(15)), userID: user.id, deviceID: request.device_id, platform: request.platform,
                               name: name, publicKey: key.spki, createdAt: nowMillis, recoveryID: recovery.id,
                               approvedBy: principal.methods.contains("mca") ? principal.credential : nil)
        // A held session may not replace a key from before its recovery (same device ID).
        if let old = try store.deviceKeys(userID: user.id).first(where: { $0.deviceID == row.deviceID && $0.revokedAt == nil }) {
            try refuseHeldChange(principal, targetRecovery: old.recoveryID)
        }
        // The key, the one it replaces and both audit rows commit together.
        let writes = recovery.writes + notice(.deviceKeyAdded(name: row.name, platform: row.platform), to: user)
        var events: [AuditEvent] = []
        let replaced = try store.enrollDeviceKey(row, limit: configuration.maxDeviceKeys) { replaced in
            events = replaced.map { pendingAuditEvent(.deviceKeyRevoked, reason: "re_enrolled", user: user.id, credential: $0, context: context) }
                + [pendingAuditEvent(.deviceKeyEnrolled, user: user.id, client: principal.clientID, credential: row.id, context: context)]
            return writes + events.map(StoreWrite.audit)
        }
        events.forEach(counted)
        return Self.info(row, replaced: replaced)
    }

    /// The account page's keys, from one read of each table: the live passkeys and device keys,
    /// as `GET /me/passkeys` and `GET /me/device-keys` list them, and what each key the account
    /// has had, revoked ones too, is called, by the ID its audit events carry (a passkey's in
    /// base64url, a device key's own): its name, else its model's (a passkey) or its device's (a
    /// device key). A passkey of a model nothing names has no entry.
    public func accountKeys(_ principal: Principal) throws -> (passkeys: [PasskeyInfo], deviceKeys: [DeviceKeyInfo], names: [String: String]) {
        let passkeys = try store.credentials(userID: principal.user.id)
        let deviceKeys = try store.deviceKeys(userID: principal.user.id)
        var names: [String: String] = [:]
        for p in passkeys {
            if let name = p.name ?? authenticatorName(p.aaguid) { names[Base64URL.encode(p.id)] = name }
        }
        for k in deviceKeys { names[k.id] = k.name ?? k.deviceID }
        return (passkeys.filter { $0.revokedAt == nil }.map(info), deviceKeys.filter { $0.revokedAt == nil }.map { Self.info($0) }, names)
    }

    /// `GET /me/device-keys`.
    public func deviceKeys(_ principal: Principal) throws -> DeviceKeyList {
        DeviceKeyList(device_keys: try store.deviceKeys(userID: principal.user.id).filter { $0.revokedAt == nil }.map { Self.info($0) })
    }

    /// `DELETE /me/device-keys/{id}`.
    public func revokeDeviceKey(id: String, principal: Principal, context: RequestContext) throws {
        let target = id.count <= 64 ? try store.deviceKey(id: id).flatMap { $0.userID == principal.user.id ? $0 : nil } : nil
        if let target { try refuseHeldChange(principal, targetRecovery: target.recoveryID) }
        let event = pendingAuditEvent(.deviceKeyRevoked, user: principal.user.id, credential: id, context: context)
        let told = target.map { notice(.deviceKeyRemoved(name: $0.name, platform: $0.platform, byOperator: false), to: principal.user) } ?? []
        guard id.count <= 64, try revoking(event, approver: id, also: told, context: context, committed: { $0 }, { writes in
            try store.revokeDeviceKey(id: id, userID: principal.user.id, at: nowMillis, writes: writes)
        }) else {
            throw AuthError.notFound(.deviceKeyUnknown, "no such device key on this account")
        }
    }

    /// A revocation of the credential `approver` by `revoke`, which commits `event` with the rows
    /// of the device keys that went with it (``DeviceKeyRow/approvedBy``, reason
    /// `approver_revoked`), all counted in `/metrics` once `committed` says the change was made.
    func revoking<R>(_ event: AuditEvent, approver: String, also: [StoreWrite] = [], context: RequestContext, committed: (R) -> Bool,
                     _ revoke: (_ writes: (_ cascaded: [String]) -> [StoreWrite]) throws -> R) throws -> R {
        var events = [event]
        let result = try revoke { cascaded in
            events += cascaded.map {
                pendingAuditEvent(.deviceKeyRevoked, reason: "approver_revoked", user: event.userID, credential: $0,
                                  detail: "its device was approved by \(approver.prefix(64)), now revoked", context: context)
            }
            return events.map(StoreWrite.audit) + also
        }
        if committed(result) { events.forEach(counted) }
        return result
    }
}
