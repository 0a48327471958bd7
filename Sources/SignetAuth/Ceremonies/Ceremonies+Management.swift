import Foundation
public import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// The caller of the Management API: a confidential client with a `client_credentials` token
/// (RFC 6749 §4.4) for `{issuer}/api/v2/`, or `signet admin` on the database.
public struct ManagementCaller: Sendable {
    public let clientID: String
    public let scopes: [String]
    public init(clientID: String, scopes: [String]) {
        self.clientID = clientID
        self.scopes = scopes
    }
    /// `signet admin`: every scope; its changes are audited as made by the client `signet-admin`.
    public static let commandLine = ManagementCaller(clientID: "signet-admin", scopes: ManagementScope.allCases.map(\.rawValue))
}

/// The Management API's scopes, with Auth0's names.
public enum ManagementScope: String, CaseIterable, Sendable {
    case readUsers = "read:users"
    /// `POST /api/v2/users`: an account made for an address, for deployments where only
    /// operators make accounts (`signup: false`).
    case createUsers = "create:users"
    /// `POST /api/v2/tickets/passkey-enrollment`: a link that adds a first passkey (Auth0's
    /// scope for its tickets).
    case createUserTickets = "create:user_tickets"
    case updateUsers = "update:users"
    case deleteUsers = "delete:users"
    case readAuthenticationMethods = "read:authentication_methods"
    case deleteAuthenticationMethods = "delete:authentication_methods"
    case readSessions = "read:sessions"
    case deleteSessions = "delete:sessions"
    case readLogs = "read:logs"
    /// `/api/v2/stats`: sign-ins and sign-ups a day, accounts active in the last 30 days.
    case readStats = "read:stats"
    /// `/api/v2/clients`: the clients kept in the database.
    case readClients = "read:clients"
    case createClients = "create:clients"
    case updateClients = "update:clients"
    case deleteClients = "delete:clients"
    /// A client's new secret or keys: a credential handed to the caller.
    case updateClientKeys = "update:client_keys"
    /// `/api/v2/log-streams`: where the audit log is sent.
    case readLogStreams = "read:log_streams"
    case createLogStreams = "create:log_streams"
    case updateLogStreams = "update:log_streams"
    case deleteLogStreams = "delete:log_streams"
    /// `/api/v2/keys/signing`: the token-signing keys, and a rotation.
    case readSigningKeys = "read:signing_keys"
    case createSigningKeys = "create:signing_keys"
    /// A revocation (Auth0's scope for it).
    case updateSigningKeys = "update:signing_keys"
    /// `/api/v2/roles`: roles and their permissions (``Ceremonies/createRole(name:description:by:context:)``).
    case readRoles = "read:roles"
    case createRoles = "create:roles"
    case updateRoles = "update:roles"
    case deleteRoles = "delete:roles"
    /// Who has a role, and giving it or taking it (Auth0's scopes for role members).
    case readRoleMembers = "read:role_members"
    case createRoleMembers = "create:role_members"
    case deleteRoleMembers = "delete:role_members"
    /// `/api/v2/resource-servers`: the APIs tokens may be for, with their permissions.
    case readResourceServers = "read:resource_servers"
}

extension Ceremonies {
    // MARK: machine clients

    /// The `client_credentials` grant (RFC 6749 §4.4): a confidential client authenticated with
    /// its secret (`client_secret_basic` or `client_secret_post`) or its key (`private_key_jwt`,
    /// the request's ``RequestContext/assertion``) gets an access token for the Management API
    /// (or another of its audiences) with the scopes it asked for among its own; no refresh
    /// token, no id token.
    public func clientCredentialsGrant(clientID: String, secret: String?, scope: String?, audience: String?, context: RequestContext) throws -> ClientCredentialsResponse {
        do {
            let client: ClientConfiguration
            if let assertion = context.assertion {
                guard secret == nil else { throw AuthError.malformed("use one client authentication method, not client_assertion and a secret") }
                client = try assertedClient(assertion, clientID: clientID, grant: nil, context: context)
            } else {
                guard let secret else { throw AuthError(.clientSecretInvalid, "client \(clientID.prefix(64)) sent no secret") }
                client = try authenticateClient(id: clientID, secret: secret)
            }
            guard client.grants.contains(GrantNames.clientCredentials) else {
                throw AuthError(.grantNotAllowed, "client \(client.id) may not use grant client_credentials")
            }
            let aud = audience ?? configuration.managementAudience
            guard aud.isExactly(configuration.managementAudience) || (client.audiences ?? configuration.audiences).containsExactly(aud) else {
                throw AuthError(.audienceNotAllowed, "audience \"\(aud.prefix(200))\" is not one of client \(client.id)'s")
            }
            // Scopes outside the client's own are dropped (RFC 6749 §3.3); none asked: all of them.
            // The Management API's token carries only its scopes, an API of tokens.permissions's
            // only its permissions, which its `permissions` claim lists as a user's token does.
            let asked = scope.map { $0.split(separator: " ").map(String.init) } ?? client.scopes
            let known = configuration.apiPermissions[aud]
            let management = aud.isExactly(configuration.managementAudience)
            let granted = client.scopes.filter { name in
                guard asked.contains(name) else { return false }
                if let known { return known[name] != nil }
                return !management || ManagementScope(rawValue: name) != nil
            }
            let now = nowMillis / 1000
            var access = JSONObjectWriter(capacity: 400)
            access.add("iss", configuration.issuer)
            access.add("sub", client.id + "@clients")
            access.add("aud", aud)
            access.add("client_id", client.id)
            access.add("scope", granted.joined(separator: " "))
            access.add("gty", "client-credentials")
            access.add("iat", now)
            let lifetime = configuration.accessTokenLifetime(for: aud)
            access.add("exp", now + Int64(lifetime))
            access.add("jti", Base64URL.encode(random(16)))
            if known != nil { access.add("permissions", strings: granted.sorted()) }
            let token = try JWT.sign(payload: access, type: "at+jwt", keys: keys)
            try recordAudit(.clientCredentials, client: client.id, context: context)
            return ClientCredentialsResponse(access_token: token, expires_in: lifetime, scope: granted.joined(separator: " "))
        } catch {
            let failure = failed(AuthError(error), context: context)
            audit(.clientCredentials, refused: failure, client: String(clientID.prefix(64)), context: context)
            throw failure
        }
    }

    /// A Management API call's token (RFC 9068 §4): a `client_credentials` token for
    /// `{issuer}/api/v2/` that carries `scope`, from a client that still exists.
    public func authenticateManagement(accessToken token: String, scope: ManagementScope) throws -> ManagementCaller {
        let claims: JSONObject
        do {
            claims = try JWT.verify(token, type: "at+jwt", issuer: configuration.issuer, keys: keys, now: clock())
        } catch {
            throw AuthError(.tokenInvalid, "the access token is not valid: \(error.detail)")
        }
        let audiences = claims["aud"]?.string.map { [$0] } ?? claims["aud"]?.array?.compactMap(\.string) ?? []
        guard audiences.containsExactly(configuration.managementAudience), claims["gty"]?.string == "client-credentials",
              let clientID = claims["client_id"]?.string else {
            throw AuthError(.tokenAudienceInvalid, "aud \(audiences) is not the Management API's \(configuration.managementAudience)")
        }
        guard let client = clients.client(clientID), client.grants.contains(GrantNames.clientCredentials) else {
            throw AuthError(.tokenInvalid, "client \(clientID) no longer exists or may no longer use the Management API")
        }
        let scopes = (claims["scope"]?.string ?? "").split(separator: " ").map(String.init)
        guard scopes.contains(scope.rawValue) else { throw AuthError(.insufficientScope, "the token's scope lacks \(scope.rawValue)") }
        return ManagementCaller(clientID: client.id, scopes: scopes)
    }

    // MARK: users

    /// `GET /api/v2/users`: `q` is empty, `email:"ada@example.com"` (exactly) or `email:ada*`
    /// (a prefix), the only forms of Auth0's query syntax Signet answers, or Signet's
    /// `passkey_model:AAGUID` (accounts with a passkey of that model); pages from 0.
    public func searchUsers(q: String?, page: Int, perPage: Int, sort: String? = nil) throws -> ManagementUserPage {
        guard page >= 0, (1...100).contains(perPage) else { throw AuthError.malformed("page must be 0 or more and per_page 1 to 100") }
        let (order, descending) = try Self.userOrder(sort)
        var query = UserQuery(offset: page * perPage, limit: perPage, order: order, descending: descending)
        if let model = try Self.passkeyModelQuery(q) {
            query.passkeyModel = model
        } else if let match = try Self.metadataQuery(q) {
            query.metadata = match
        } else {
            query.email = try Self.emailQuery(q)
        }
        let result = try store.users(query)
        return ManagementUserPage(start: page * perPage, limit: perPage, length: result.users.count, total: result.total, users: result.users.map(Self.wire))
    }

    /// `GET /api/v2/users-by-email` (Auth0): the account with exactly this address (compared as
    /// addresses are stored), as a list: empty when there is none.
    public func usersByEmail(_ text: String?) throws -> [ManagementUser] {
        guard let text, !text.isEmpty else { throw AuthError.malformed("email is required") }
        return try store.users(UserQuery(email: .exactly(try Self.emailAddress(text, member: "email")), limit: 1)).users.map(Self.wire)
    }

    /// Auth0's `sort`: `FIELD:1` ascending or `FIELD:-1` descending, by creation when absent.
    package static func userOrder(_ sort: String?) throws -> (UserQuery.Order, Bool) {
        guard let sort, !sort.isEmpty else { return (.createdAt, false) }
        let parts = sort.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let order = UserQuery.Order(rawValue: String(parts[0])), parts[1] == "1" || parts[1] == "-1" else {
            throw AuthError.malformed("sort must be FIELD:1 or FIELD:-1, FIELD one of \(UserQuery.Order.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return (order, parts[1] == "-1")
    }

    /// `q`'s metadata form, as Auth0's search has it: `app_metadata.PATH:"VALUE"` or
    /// `user_metadata.PATH:"VALUE"`, the accounts whose metadata holds exactly that string at
    /// that path (keys of letters, digits, `_` and `-`, joined by dots, at most 5 deep); `nil`
    /// for another form.
    package static func metadataQuery(_ q: String?) throws -> UserQuery.MetadataMatch? {
        let text = (q ?? "").trimmingCharacters(in: .whitespaces)
        guard let column = ["app_metadata", "user_metadata"].first(where: { text.hasPrefix($0 + ".") }) else { return nil }
        let usage = AuthError.malformed(#"q's metadata form is app_metadata.KEY:"VALUE" (or user_metadata), keys of letters, digits, _ and - joined by dots"#)
        guard text.utf8.count <= 600, let colon = text.firstIndex(of: ":") else { throw usage }
        let path = text[text.index(text.startIndex, offsetBy: column.count + 1)..<colon].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let value = text[text.index(after: colon)...]
        guard (1...5).contains(path.count), path.allSatisfy({ key in (1...64).contains(key.utf8.count) && key.utf8.allSatisfy(Self.isMetadataKeyByte) }),
              value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\""), !value.dropFirst().dropLast().contains("\"") else { throw usage }
        return UserQuery.MetadataMatch(column: column, path: path, value: String(value.dropFirst().dropLast()))
    }

    /// `passkey_model:AAGUID` (the AAGUID quoted or not, in any case) as the model in lower
    /// case; `nil` for another form of `q`.
    package static func passkeyModelQuery(_ q: String?) throws -> String? {
        let text = (q ?? "").trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("passkey_model:") else { return nil }
        var value = text.dropFirst("passkey_model:".count)
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
        guard value.count == 36, let model = UUID(uuidString: String(value)) else {
            throw AuthError.malformed("q's model form is passkey_model:AAGUID, such as passkey_model:cb69481e-8ff7-4039-93ec-0a2729a154a8")
        }
        return model.uuidString.lowercased()
    }

    /// A byte of a metadata key a search may name: an ASCII letter or digit, `_` or `-`.
    package static func isMetadataKeyByte(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
    }

    /// The forms of `q` Signet answers, as a refusal names them.
    static let queryForms = #"q supports email:"ADDRESS", email:PREFIX*, app_metadata.KEY:"VALUE" (or user_metadata) and passkey_model:AAGUID"#

    /// The forms of `q` Signet answers.
    /// The address or prefix is compared as addresses are stored: lower case, in NFC.
    package static func emailQuery(_ q: String?) throws -> UserQuery.Email {
        let text = (q ?? "").trimmingCharacters(in: .whitespaces)
        if text.isEmpty { return .any }
        guard text.utf8.count <= 320, text.hasPrefix("email:") else {
            throw AuthError.malformed(Self.queryForms)
        }
        var value = String(text.dropFirst(6))
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
            value = String(value.dropFirst().dropLast())
            guard !value.contains("*") else { throw AuthError.malformed("a quoted address is matched exactly: no *") }
            return .exactly(value.lowercased().precomposedStringWithCanonicalMapping)
        }
        guard value.count >= 2, value.hasSuffix("*"), !value.dropLast().contains("*"), !value.contains("\"") else {
            throw AuthError.malformed(Self.queryForms)
        }
        return .prefix(String(value.dropLast()).lowercased().precomposedStringWithCanonicalMapping)
    }

    /// `GET /api/v2/users/{id}`.
    public func managedUser(id: String) throws -> ManagementUser {
        try Self.wire(existingUser(id))
    }

    func existingUser(_ id: String) throws -> ManagedUser {
        guard id.utf8.count <= 128, let user = try store.managedUser(id: id) else { throw AuthError(.userUnknown, "no user \(id.prefix(64))") }
        return user
    }

    /// `PATCH /api/v2/users/{id}`: `blocked`, `name`, `email`, `email_verified`. Blocking ends the
    /// user's refresh families in the same transaction; a new address is unverified unless the
    /// call says otherwise (the address it has already, in any case, is no new address). The
    /// change is audited as the calling client's.
    public func updateUser(id: String, _ patch: ManagementUserPatch, by caller: ManagementCaller, context: RequestContext) throws -> ManagementUser {
        var change = UserChange(blocked: patch.blocked, emailVerified: patch.email_verified, emailSignInOff: patch.email_sign_in.map { !$0 })
        if let name = patch.name {
            change.name = .some(try Self.displayName(name, member: "name", limit: 256))
        }
        if let email = patch.email {
            change.email = try Self.emailAddress(email, member: "email")
            if patch.email_verified == nil { change.emailVerified = false }
        }
        guard !change.isEmpty || patch.app_metadata != nil || patch.user_metadata != nil else {
            throw AuthError.malformed("nothing to change: send blocked, name, email, email_verified, email_sign_in, app_metadata or user_metadata")
        }
        let before = try existingUser(id)
        // The address the account has already is no new address: it stays as verified as it
        // was (a script or a provider that sends the whole user each time unverified it).
        if change.email == before.user.email, patch.email_verified == nil { change.emailVerified = nil }
        // Merged into what was read, and written only over it.
        if let app = patch.app_metadata { change.appMetadata = MetadataChange(from: before.appMetadata, to: try Self.mergedMetadata(before.appMetadata, app, member: "app_metadata")) }
        if let user = patch.user_metadata { change.userMetadata = MetadataChange(from: before.userMetadata, to: try Self.mergedMetadata(before.userMetadata, user, member: "user_metadata")) }
        let kind: AuditKind = patch.blocked == true && !before.user.blocked ? .adminUserBlocked
            : patch.blocked == false && before.user.blocked ? .adminUserUnblocked : .adminUserUpdated
        let fields = [patch.blocked.map { _ in "blocked" }, patch.name.map { _ in "name" }, patch.email.map { _ in "email" },
                      patch.email_verified.map { _ in "email_verified" }, patch.email_sign_in.map { "email_sign_in " + ($0 ? "on" : "off") },
                      patch.app_metadata.map { _ in "app_metadata" }, patch.user_metadata.map { _ in "user_metadata" }].compactMap { $0 }
        // A new address set by an operator is told to the old one: talking support staff into
        // moving an account is a takeover path, and its owner should hear of it at once.
        let moved = change.email.flatMap { $0 == before.user.email ? nil : $0 }
        guard let updated = try store.updateUser(id: id, change, at: nowMillis, writes: [
            .audit(auditEvent(kind, user: id, client: caller.clientID, detail: "changed: " + fields.joined(separator: ", "), context: context)),
        ] + (moved.map { notice(.emailChanged(to: $0), to: before.user) } ?? [])
          + (patch.email_sign_in.map { notice(.emailSignIn(enabled: $0), to: before.user) } ?? [])) else { throw AuthError(.userUnknown, "no user \(id.prefix(64))") }
        return Self.wire(updated)
    }

    /// `DELETE /api/v2/users/{id}`: the account and everything bound to it go in one
    /// transaction; its audit rows stay, under a pseudonym that no longer leads to anyone.
    public func deleteUser(id: String, by caller: ManagementCaller, context: RequestContext) throws {
        var event: AuditEvent?
        guard id.utf8.count <= 128, try erase(userID: id, writes: { pseudonym in
            let deleted = pendingAuditEvent(.adminUserDeleted, user: pseudonym, client: caller.clientID, context: context)
            event = deleted
            return [.audit(deleted)]
        }) else { throw AuthError(.userUnknown, "no user \(id.prefix(64))") }
        event.map(counted)
    }

    // MARK: authentication methods

    /// `GET /api/v2/users/{id}/authentication-methods`: passkeys, device keys, the email address,
    /// and the recovery codes when the account has unused ones. A passkey says whether the
    /// AAGUID policy still admits its model (`allowed`), so an operator can find the accounts a
    /// new `denied_aaguids` entry leaves without a passkey that signs in.
    public func authenticationMethods(userID: String) throws -> [AuthenticationMethod] {
        let managed = try existingUser(userID)
        var methods = try store.credentials(userID: userID).filter { $0.revokedAt == nil }.map { c in
            AuthenticationMethod(id: "passkey|" + Base64URL.encode(c.id), type: "passkey", name: c.name ?? authenticatorName(c.aaguid),
                                 created_at: Self.iso(c.createdAt), last_auth_at: c.lastUsedAt.map(Self.iso), aaguid: c.aaguid, confirmed: true,
                                 allowed: allowsAuthenticator(c.aaguid), hardware_bound: isHardwareBound(c))
        }
        methods += try store.deviceKeys(userID: userID).filter { $0.revokedAt == nil }.map { k in
            AuthenticationMethod(id: "device-key|" + k.id, type: "device-key", name: k.name, created_at: Self.iso(k.createdAt),
                                 last_auth_at: k.lastUsedAt.map(Self.iso), platform: k.platform, confirmed: true)
        }
        methods.append(AuthenticationMethod(id: "email|" + userID, type: "email", name: managed.user.email, created_at: Self.iso(managed.user.createdAt),
                                            confirmed: managed.user.emailVerified))
        let codes = try store.recoveryCodes(userID: userID)
        if codes.contains(where: { $0.usedAt == nil }) {
            methods.append(AuthenticationMethod(id: "recovery-code|" + userID, type: "recovery-code", created_at: codes.map(\.createdAt).min().map(Self.iso),
                                                confirmed: true))
        }
        return methods
    }

    /// `GET /api/v2/users/{id}/authentication-methods/{method_id}` (Auth0's): one method, as
    /// the list shows it; 404 `authentication_method_unknown` for one the account does not have.
    public func authenticationMethod(userID: String, methodID: String) throws -> AuthenticationMethod {
        guard let method = try authenticationMethods(userID: userID).first(where: { $0.id == methodID }) else {
            throw AuthError(.authenticationMethodUnknown, "no method \(methodID.prefix(80)) on \(userID.prefix(64))")
        }
        return method
    }

    /// `DELETE /api/v2/users/{id}/authentication-methods/{method_id}`: revokes a passkey (even
    /// the last: the user can still sign in by email code) or a device key, which ends the
    /// sessions it started; or deletes the recovery codes. The address is changed, not deleted.
    public func deleteAuthenticationMethod(userID: String, methodID: String, by caller: ManagementCaller, context: RequestContext) throws {
        let owner = try existingUser(userID).user
        let parts = methodID.split(separator: "|", maxSplits: 1).map(String.init)
        let unknown = AuthError(.authenticationMethodUnknown, "no method \(methodID.prefix(80)) on user \(userID.prefix(64))")
        guard parts.count == 2, methodID.utf8.count <= 600 else { throw unknown }
        let now = nowMillis
        // Each change commits with its audit row, which is counted in /metrics only if it did.
        switch parts[0] {
        case "passkey":
            let event = pendingAuditEvent(.adminPasskeyRevoked, user: userID, client: caller.clientID, credential: parts[1], context: context)
            // The owner is told, in the same transaction; a passkey already revoked tells nobody (it is unknown here).
            let target = try Base64URL.decode(parts[1]).flatMap { try store.credential(id: $0) }.flatMap { $0.userID == userID && $0.revokedAt == nil ? $0 : nil }
            let told = target.map { notice(.passkeyRemoved(name: $0.name ?? authenticatorName($0.aaguid), byOperator: true), to: owner) } ?? []
            guard let id = Base64URL.decode(parts[1]), try revoking(event, approver: parts[1], also: told, context: context, committed: { $0 }, { writes in
                try store.adminRevokeCredential(id: id, userID: userID, at: now, writes: writes)
            }) else { throw unknown }
            credentialCache.remove(id)
        case "device-key":
            let event = pendingAuditEvent(.adminDeviceKeyRevoked, user: userID, client: caller.clientID, credential: parts[1], context: context)
            let target = parts[1].count <= 64 ? try store.deviceKey(id: parts[1]).flatMap { $0.userID == userID && $0.revokedAt == nil ? $0 : nil } : nil
            let told = target.map { notice(.deviceKeyRemoved(name: $0.name, platform: $0.platform, byOperator: true), to: owner) } ?? []
            guard try revoking(event, approver: parts[1], also: told, context: context, committed: { $0 }, { writes in
                try store.revokeDeviceKey(id: parts[1], userID: userID, at: now, writes: writes)
            }) else { throw unknown }
        case "recovery-code":
            let event = pendingAuditEvent(.adminRecoveryCodesDeleted, user: userID, client: caller.clientID, context: context)
            guard parts[1].isExactly(userID), try store.deleteRecoveryCodes(userID: userID, writes: [.audit(event)]) > 0 else { throw unknown }
            counted(event)
        case "email":
            guard parts[1].isExactly(userID) else { throw unknown }
            throw AuthError.malformed("the email method cannot be deleted; change the user's email instead")
        default:
            throw unknown
        }
    }

    // MARK: wire forms

    static func wire(_ m: ManagedUser) -> ManagementUser {
        ManagementUser(user_id: m.user.id, email: m.user.email, email_verified: m.user.emailVerified, name: m.user.name, created_at: iso(m.user.createdAt),
                       updated_at: iso(m.updatedAt ?? m.user.createdAt), last_login: m.lastLogin.map(iso), logins_count: m.loginsCount, blocked: m.user.blocked,
                       app_metadata: metadataDocument(m.appMetadata), user_metadata: metadataDocument(m.userMetadata))
    }

    /// Milliseconds since 1970 as ISO 8601 in UTC with milliseconds, as Auth0 writes times.
    /// The milliseconds are written from the integer: the format style's own fraction, from a
    /// `Double`, truncates `.405` to `.404` for some times, so a time given back would not be the
    /// one kept.
    public static func iso(_ millis: Int64) -> String {
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let fraction = Int(millis - seconds * 1000)
        let whole = Date(timeIntervalSince1970: Double(seconds)).formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false).timeZone(separator: .omitted))
        let digits = String(fraction)
        return whole.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// ISO 8601 with its zone, with or without a fraction, as milliseconds since 1970 (to the
    /// nearest: the inverse of ``iso(_:)``); `nil` for other text, or more than 40 bytes of it.
    public static func millis(iso text: String) -> Int64? {
        guard text.utf8.count <= 40,
              let date = (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text)) else { return nil }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
