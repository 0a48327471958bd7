import SignetAPI
import SignetCrypto
public import SignetWebAuthn

/// SCIM 2.0 provisioning (RFC 7644 §3): a company's identity provider keeps its people's
/// accounts, through the same operations, checks and audit rows as the Management API's users.
/// An account is a SCIM User named by its address (`userName`), or, when the provider sends the
/// address apart (`emails`), by the provider's own name for it, kept in `app_metadata`
/// (``SCIM/userNameKey``): Microsoft Entra ID's default `userName` is the user principal name,
/// which need not be the person's mail. `active: false` blocks it (its sessions end); its
/// provider's own ID (`externalId`) is kept in `app_metadata` too.
extension Ceremonies {
    /// The scopes a provisioning token (`scim.token_hash`) carries.
    static let provisioningScopes: [ManagementScope] = [.readUsers, .createUsers, .updateUsers, .deleteUsers, .readRoles, .createRoles, .updateRoles, .deleteRoles,
                                                        .readRoleMembers, .createRoleMembers, .deleteRoleMembers]

    /// The caller a provisioning token names, audited as the client `scim`; `nil` for another
    /// token (a Management API token is then tried). Compared as SHA-256 in constant time.
    public func provisioningCaller(token: String, scope: ManagementScope) throws -> ManagementCaller? {
        guard let hash = configuration.scimTokenHash, ConstantTime.equals(Digest.sha256.hash(Array(token.utf8)), hash) else { return nil }
        guard Self.provisioningScopes.contains(scope) else { throw AuthError(.insufficientScope, "a provisioning token does not carry \(scope.rawValue)") }
        return ManagementCaller(clientID: "scim", scopes: Self.provisioningScopes.map(\.rawValue))
    }

    /// `GET /scim/v2/Users/{id}`.
    public func scimUser(id: String) throws -> JSONValue { try scimResource(try managedUser(id: id)) }

    /// `GET /scim/v2/Users` (RFC 7644 §3.4.2): with `filter`, the accounts it names; without,
    /// every account, oldest first. `startIndex` counts from 1; `count` is at most 100.
    public func scimUsers(filter: String?, startIndex: Int, count: Int) throws -> JSONValue {
        let start = max(1, startIndex), take = min(max(0, count), 100)
        var found: [ManagementUser]
        let total: Int
        if let filter, !filter.isEmpty {
            switch try SCIM.filter(filter) {
            case .userName(let text):
                found = try scimNamed(text).map { [$0] } ?? []
            case .email(let text):
                // A value that is no address names no account.
                guard let email = try? Self.emailAddress(text, member: "emails.value") else { found = []; break }
                found = try store.users(UserQuery(email: .exactly(email), limit: 1)).users.map(Self.wire)
            case .externalID(let value):
                let match = UserQuery.MetadataMatch(column: "app_metadata", path: [SCIM.externalIDKey], value: value)
                found = value.contains("\"") ? [] : try store.users(UserQuery(metadata: match, limit: 100)).users.map(Self.wire)
            case .id(let id):
                found = id.utf8.count <= 128 ? try store.managedUser(id: id).map { [Self.wire($0)] } ?? [] : []
            case .displayName:
                throw SCIM.Failure(AuthError.malformed(#"a User filter is userName, emails.value, externalId or id eq "VALUE""#), scimType: "invalidFilter")
            }
            total = found.count
            found = Array(found.dropFirst(start - 1).prefix(take))
        } else {
            let page = try store.users(UserQuery(offset: start - 1, limit: max(take, 1)))
            total = page.total
            found = take == 0 ? [] : page.users.map(Self.wire)
        }
        return .object([
            "schemas": .array([.string(SCIM.listSchema)]), "totalResults": .int(Int64(total)), "startIndex": .int(Int64(start)),
            "itemsPerPage": .int(Int64(found.count)), "Resources": .array(try scimResources(found)),
        ])
    }

    /// `POST /scim/v2/Users`: an account as `POST /api/v2/users` makes one (its address told,
    /// where mail goes, and verified with `scim.email_verified`), made blocked when `active` is
    /// false. Its address is the primary email, else `userName`; with both, `userName` is kept
    /// as the provider's name for it, and a later `userName` alone changes that name, not the
    /// address. An address or a `userName` another account has is 409 `user_exists`.
    public func scimCreate(_ body: JSONValue, by caller: ManagementCaller, context: RequestContext) throws -> JSONValue {
        let input = try SCIM.user(body)
        guard let address = input.email ?? input.userName else { throw SCIM.Failure(AuthError.malformed("userName is required"), scimType: "invalidValue") }
        let email = try Self.emailAddress(address, member: input.email == nil ? "userName" : "emails.value")
        let kept = input.email == nil ? nil : input.userName
        try scimUserNameFree(kept ?? email, for: nil)
        var new = ManagementNewUser(email: email, name: input.name, email_verified: configuration.scimEmailVerified ? true : nil, locale: input.language)
        var app: [String: JSONDocument] = [:]
        if case .some(.some(let external)) = input.externalID { app[SCIM.externalIDKey] = .string(external) }
        if let kept { app[SCIM.userNameKey] = .string(kept) }
        if !app.isEmpty { new.app_metadata = .object(app) }
        return try scimResource(try makeAccount(new, createdAt: nil, blocked: input.active == false, by: caller, context: context))
    }

    /// `PUT /scim/v2/Users/{id}` and `PATCH`: what the body sets, as `PATCH /api/v2/users/{id}`
    /// changes it (an attribute it leaves out stays as it is). What is already so is no change:
    /// a provider's sync that sends the whole user again writes nothing, and is not audited.
    /// `userName` is the provider's own name for the account when the request sends the
    /// address apart or the account keeps one already; else it is the address.
    public func scimUpdate(id: String, _ body: JSONValue, patch: Bool, by caller: ManagementCaller, context: RequestContext) throws -> JSONValue {
        let input = patch ? try SCIM.patch(body) : try SCIM.user(body)
        let current = try managedUser(id: id)
        let kept = Self.keptUserName(current)
        var change = ManagementUserPatch()
        if let active = input.active, active == current.blocked { change.blocked = !active }
        if let name = input.name, try Self.displayName(name, member: "name", limit: 256) != current.name { change.name = name }
        var app: [String: JSONDocument] = [:]
        var address = try input.email.map { try Self.emailAddress($0, member: "emails.value") }
        if let userName = input.userName {
            if input.email != nil || kept != nil {
                if userName != kept {
                    try scimUserNameFree(userName, for: id)
                    app[SCIM.userNameKey] = .string(userName)
                }
            } else {
                address = try Self.emailAddress(userName, member: "userName")
            }
        }
        if let address, address != current.email {
            // An account that keeps no name of its provider's is named by its address.
            if kept == nil, app[SCIM.userNameKey] == nil { try scimUserNameFree(address, for: id) }
            change.email = address
            if configuration.scimEmailVerified { change.email_verified = true }
        }
        if let external = input.externalID, external != current.app_metadata?[SCIM.externalIDKey].flatMap(Self.string) {
            app[SCIM.externalIDKey] = external.map(JSONDocument.string) ?? .null
        }
        if !app.isEmpty { change.app_metadata = .object(app) }
        guard change != ManagementUserPatch() else { return try scimResource(current) }
        return try scimResource(try updateUser(id: id, change, by: caller, context: context))
    }

    /// A page of accounts as SCIM Users, their Groups read for the whole page at once.
    func scimResources(_ users: [ManagementUser]) throws -> [JSONValue] {
        let roles = try store.userRoles(userIDs: users.map(\.user_id), at: nowMillis)
        return try users.map { try scimResource($0, roles: roles[$0.user_id] ?? []) }
    }

    /// An account as a SCIM User (RFC 7643 §4.1), its `meta.location` under the issuer, with the
    /// Groups (roles) it is in (§4.1.2 `groups`, read-only: membership changes through the Group),
    /// when it is in any: `roles` when the caller read them, else its own read.
    func scimResource(_ user: ManagementUser, roles given: [RoleRow]? = nil) throws -> JSONValue {
        var members: [(String, JSONValue)] = [("schemas", .array([.string(SCIM.userSchema)])), ("id", .string(user.user_id))]
        if case .string(let external)? = user.app_metadata?[SCIM.externalIDKey] { members.append(("externalId", .string(external))) }
        members.append(("userName", .string(Self.keptUserName(user) ?? user.email)))
        if let name = user.name { members += [("displayName", .string(name)), ("name", .object(["formatted": .string(name)]))] }
        members += [
            ("emails", .array([.object(["value": .string(user.email), "primary": .bool(true), "type": .string("work")])])),
            ("active", .bool(!user.blocked)),
        ]
        let roles = try given ?? currentRoles(user.user_id)
        if !roles.isEmpty {
            members.append(("groups", .array(roles.map { role in
                .object(["value": .string(role.id), "display": .string(role.name), "$ref": .string(configuration.issuer + "/scim/v2/Groups/" + role.id),
                         "type": .string("direct")])
            })))
        }
        members.append(("meta", .object(["resourceType": .string("User"), "created": .string(user.created_at), "lastModified": .string(user.updated_at),
                                         "location": .string(configuration.issuer + "/scim/v2/Users/" + user.user_id)])))
        return .object(JSONObject(uniqueKeysWithValues: members))
    }

    /// The provider's own name for an account, when it keeps one apart from the address.
    static func keptUserName(_ user: ManagementUser) -> String? { user.app_metadata?[SCIM.userNameKey].flatMap(string) }

    static func string(_ value: JSONDocument) -> String? { if case .string(let text) = value { text } else { nil } }

    /// The account `userName` names: the one keeping it as the provider's name (in any case),
    /// else the one with it as its address that keeps no other name.
    func scimNamed(_ userName: String) throws -> ManagementUser? {
        // The index reads a number there as its text; only a string is a name.
        if let kept = try store.users(UserQuery(directoryName: userName, limit: 1)).users.first.map(Self.wire), Self.keptUserName(kept) != nil { return kept }
        guard let email = try? Self.emailAddress(userName, member: "userName"),
              let user = try store.users(UserQuery(email: .exactly(email), limit: 1)).users.first.map(Self.wire),
              Self.keptUserName(user) == nil else { return nil }
        return user
    }

    /// Refuses a `userName` another account than `id` has (409 `user_exists`, SCIM's `uniqueness`).
    func scimUserNameFree(_ userName: String, for id: String?) throws {
        if let other = try scimNamed(userName), other.user_id != id {
            throw AuthError(.userExists, "another account has this userName")
        }
    }
}
