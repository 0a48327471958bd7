import Foundation
public import SignetAPI
import SignetWebAuthn

extension Ceremonies {
    /// `GET /me/export`, `/account/export`: everything Signet holds about the signed-in account,
    /// for its owner (GDPR Art. 15(3) and Art. 20): the account, every passkey and device key it
    /// has had with their public keys, where it is signed in, its recovery codes' count and open
    /// recovery, and its audit events. No secret is in it. The download is audited
    /// (`account_exported`: it hands over the account's history and addresses) once the copy is
    /// made, and none is handed over without its row. The copy's history is as it stood before
    /// the download; the next copy shows it.
    public func accountExport(_ principal: Principal, context: RequestContext) throws -> AccountExport {
        let user = try existingUser(principal.user.id)
        let document = try exportDocument(user, current: principal.sessionID)
        try recordAudit(.accountExported, user: user.user.id, client: principal.clientID, context: context)
        return document
    }

    /// `GET /api/v2/users/{id}/export`, `signet admin users export ID`: the same document for an
    /// operator answering its owner's request for a copy, when the owner cannot sign in. It
    /// holds the account, its methods, sessions and logs, so the caller must hold each of those
    /// scopes. Audited as `admin_user_exported`, which the account page shows its owner.
    public func accountExport(userID: String, by caller: ManagementCaller, context: RequestContext) throws -> AccountExport {
        try Self.requireHeld([ManagementScope.readUsers, .readAuthenticationMethods, .readSessions, .readLogs].map(\.rawValue), by: caller)
        let user = try existingUser(userID)
        // Made before its row, as the owner's copy is (``accountExport(_:context:)``).
        let document = try exportDocument(user, current: nil)
        try recordAudit(.adminUserExported, user: user.user.id, client: caller.clientID, context: context)
        return document
    }

    /// `signet admin users export --all`: every account's record, with its user handle, passkeys,
    /// device keys, roles and how many recovery codes it has not used (not its history), in ID
    /// order, a thousand at a time, handed to `each` as Auth0's bulk export writes a user; the file `users import` reads, here or on another
    /// deployment. Audited once, as `admin_user_exported` without an account, with how many
    /// went; returns that count.
    public func exportAllUsers(by caller: ManagementCaller, context: RequestContext, _ each: (UserExportLine) throws -> Void) throws -> Int {
        try Self.requireHeld([ManagementScope.readUsers, .readAuthenticationMethods, .readRoles].map(\.rawValue), by: caller)
        var after: String?
        var count = 0
        while true {
            let page = try store.users(after: after, limit: 1_000)
            guard let last = page.last else { break }
            let passkeys = Dictionary(grouping: try store.credentials(usersAfter: after, through: last.user.id), by: \.userID)
            let deviceKeys = Dictionary(grouping: try store.deviceKeys(usersAfter: after, through: last.user.id), by: \.userID)
            let codes = try store.unusedRecoveryCodes(usersAfter: after, through: last.user.id)
            var roles: [String: [RoleRow]] = [:]
            for start in stride(from: 0, to: page.count, by: 100) {
                let ids = page[start..<min(start + 100, page.count)].map(\.user.id)
                roles.merge(try store.userRoles(userIDs: ids, at: nowMillis)) { $1 }
            }
            for m in page {
                let u = m.user
                try each(UserExportLine(user_id: u.id, email: u.email, email_verified: u.emailVerified, name: u.name, locale: u.locale,
                                        created_at: Self.iso(u.createdAt), updated_at: Self.iso(m.updatedAt ?? u.createdAt), last_login: m.lastLogin.map(Self.iso),
                                        logins_count: m.loginsCount, blocked: u.blocked, app_metadata: Self.metadataDocument(m.appMetadata),
                                        user_metadata: Self.metadataDocument(m.userMetadata), user_handle: Base64URL.encode(u.handle),
                                        rp_id: configuration.rpID, passkeys: (passkeys[u.id] ?? []).map { Self.exported($0, authenticator: authenticatorName($0.aaguid)) },
                                        device_keys: (deviceKeys[u.id] ?? []).map(Self.exported),
                                        roles: (roles[u.id] ?? []).map { ExportedRole(name: $0.name, expires_at: $0.expiresAt.map(Self.iso)) },
                                        unused_recovery_codes: codes[u.id]))
                count += 1
            }
            after = last.user.id
        }
        let event = pendingAuditEvent(.adminUserExported, client: caller.clientID, detail: "every account's record: \(count)", context: context)
        try store.appendAudit(event)
        counted(event)
        return count
    }

    /// A passkey as both exports write it, with its model's name (``authenticatorName(_:)``).
    package static func exported(_ c: CredentialRow, authenticator: String?) -> ExportedPasskey {
        ExportedPasskey(id: Base64URL.encode(c.id), name: c.name, public_key: Base64URL.encode(c.publicKey), algorithm: c.algorithm, sign_count: c.signCount,
                        aaguid: c.aaguid, authenticator: authenticator, attestation_format: c.format,
                        backup_eligible: c.backupEligible, backup_state: c.backupState, transports: c.transports, created_at: c.createdAt / 1000,
                        last_used_at: c.lastUsedAt.map { $0 / 1000 }, revoked_at: c.revokedAt.map { $0 / 1000 },
                        attestation_root: c.attested ? c.attestationRoot.map(Base64URL.encode) : nil)
    }

    /// A device key as both exports write it.
    package static func exported(_ k: DeviceKeyRow) -> ExportedDeviceKey {
        ExportedDeviceKey(id: k.id, device_id: k.deviceID, platform: k.platform, name: k.name, public_key: Base64URL.encode(k.publicKey),
                          created_at: k.createdAt / 1000, last_used_at: k.lastUsedAt.map { $0 / 1000 }, revoked_at: k.revokedAt.map { $0 / 1000 },
                          approved_by: k.approvedBy)
    }

    /// The document itself, for either caller.
    func exportDocument(_ managed: ManagedUser, current: String?) throws -> AccountExport {
        let user = managed.user
        let sessions = try accountSessions(user, limit: AccountExport.maxSessions, current: current)
        let id = user.id
        let account = ExportedAccount(
            user_id: id, user_handle: Base64URL.encode(user.handle), email: user.email, email_verified: user.emailVerified, name: user.name,
            locale: user.locale, created_at: user.createdAt / 1000, updated_at: managed.updatedAt.map { $0 / 1000 },
            last_login: managed.lastLogin.map { $0 / 1000 }, logins_count: managed.loginsCount, blocked: user.blocked,
            app_metadata: Self.metadataDocument(managed.appMetadata), user_metadata: Self.metadataDocument(managed.userMetadata))
        let passkeys = try store.credentials(userID: id).map { Self.exported($0, authenticator: authenticatorName($0.aaguid)) }
        let deviceKeys = try store.deviceKeys(userID: id).map(Self.exported)
        let events = try store.auditEntries(AuditQuery(userID: id, limit: AccountExport.maxEvents + 1))
        return AccountExport(
            issuer: configuration.issuer, exported_at: nowMillis / 1000, account: account, passkeys: passkeys, device_keys: deviceKeys,
            sessions: sessionInfos(sessions, current: current), sessions_truncated: sessions.truncated,
            recovery_codes: try recoveryCodesStatus(userID: id),
            recovery: try recoveryState(userID: id).recovery,
            roles: try currentRoles(id).map { ManagementRole(id: $0.id, name: $0.name, description: $0.description, expires_at: $0.expiresAt.map(Self.iso)) },
            events: events.prefix(AccountExport.maxEvents).map(Self.exported), events_truncated: events.count > AccountExport.maxEvents)
    }

    /// An event as the account's copy holds it: an operator's change without the operator's
    /// address, as the account page shows it.
    static func exported(_ entry: AuditEntry) -> LogEvent {
        var event = wire(entry)
        if AuditKind(rawValue: entry.event.kind)?.byOperator == true { event.ip = nil }
        return event
    }
}
