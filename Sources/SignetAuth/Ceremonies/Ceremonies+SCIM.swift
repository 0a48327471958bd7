import SignetAPI
import SignetCrypto
public import SignetWebAuthn

/// SCIM 2.0 provisioning (RFC 7644 §3): a company's identity provider keeps its people's
/// accounts, through the same operations, checks and audit rows as the Management API's users.
/// An account is a SCIM User named by its address (`userName`); `active: false` blocks it (its
/// sessions end); its provider's own ID (`externalId`) is kept in `app_metadata`.
extension Ceremonies {
    /// The scopes a provisioning token (`scim.token_hash`) carries.
    static let provisioningScopes: [ManagementScope] = [.readUsers, .createUsers, .updateUsers, .deleteUsers]

    /// The caller a provisioning token names, audited as the client `scim`; `nil` for another
    /// token (a Management API token is then tried). Compared as SHA-256 in constant time.
    public func provisioningCaller(token: String, scope: ManagementScope) throws -> ManagementCaller? {
        guard let hash = configuration.scimTokenHash, ConstantTime.equals(Digest.sha256.hash(Array(token.utf8)), hash) else { return nil }
        guard Self.provisioningScopes.contains(scope) else { throw AuthError(.insufficientScope, "a provisioning token does not carry \(scope.rawValue)") }
        return ManagementCaller(clientID: "scim", scopes: Self.provisioningScopes.map(\.rawValue))
    }

    /// `GET /scim/v2/Users/{id}`.
    public func scimUser(id: String) throws -> JSONValue { scimResource(try managedUser(id: id)) }

    /// `GET /scim/v2/Users` (RFC 7644 §3.4.2): with `filter`, the accounts it names; without,
    /// every account, oldest first. `startIndex` counts from 1; `count` is at most 100.
    public func scimUsers(filter: String?, startIndex: Int, count: Int) throws -> JSONValue {
        let start = max(1, startIndex), take = min(max(0, count), 100)
        var found: [ManagementUser]
        let total: Int
        if let filter, !filter.isEmpty {
            switch try SCIM.filter(filter) {
            case .userName(let text):
                // A value that is no address names no account.
                guard let email = try? Self.emailAddress(text, member: "userName") else { found = []; break }
                found = try store.users(UserQuery(email: .exactly(email), limit: 1)).users.map(Self.wire)
            case .externalID(let value):
                let match = UserQuery.MetadataMatch(column: "app_metadata", path: [SCIM.externalIDKey], value: value)
                found = value.contains("\"") ? [] : try store.users(UserQuery(metadata: match, limit: 100)).users.map(Self.wire)
            case .id(let id):
                found = id.utf8.count <= 128 ? try store.managedUser(id: id).map { [Self.wire($0)] } ?? [] : []
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
            "itemsPerPage": .int(Int64(found.count)), "Resources": .array(found.map(scimResource)),
        ])
    }

    /// `POST /scim/v2/Users`: an account as `POST /api/v2/users` makes one (its address told,
    /// where mail goes, and verified with `scim.email_verified`), made blocked when `active` is
    /// false. An address with an account is 409 `user_exists`.
    public func scimCreate(_ body: JSONValue, by caller: ManagementCaller, context: RequestContext) throws -> JSONValue {
        let input = try SCIM.user(body)
        guard let email = input.email else { throw SCIM.Failure(AuthError.malformed("userName is required"), scimType: "invalidValue") }
        var new = ManagementNewUser(email: email, name: input.name, email_verified: configuration.scimEmailVerified ? true : nil, locale: input.language)
        if case .some(.some(let external)) = input.externalID { new.app_metadata = .object([SCIM.externalIDKey: .string(external)]) }
        return scimResource(try makeAccount(new, createdAt: nil, blocked: input.active == false, by: caller, context: context))
    }

    /// `PUT /scim/v2/Users/{id}` and `PATCH`: what the body sets, as `PATCH /api/v2/users/{id}`
    /// changes it (an attribute it leaves out stays as it is).
    public func scimUpdate(id: String, _ body: JSONValue, patch: Bool, by caller: ManagementCaller, context: RequestContext) throws -> JSONValue {
        let input = patch ? try SCIM.patch(body) : try SCIM.user(body)
        // A provider's PUT sends the address at every sync: the account's own is no new address
        // (``updateUser``), and one the setting trusts is verified.
        var change = ManagementUserPatch(blocked: input.active.map { !$0 }, name: input.name, email: input.email)
        if input.email != nil, configuration.scimEmailVerified { change.email_verified = true }
        if let external = input.externalID { change.app_metadata = .object([SCIM.externalIDKey: external.map(JSONDocument.string) ?? .null]) }
        guard change != ManagementUserPatch() else { return try scimUser(id: id) }
        return scimResource(try updateUser(id: id, change, by: caller, context: context))
    }

    /// An account as a SCIM User (RFC 7643 §4.1), its `meta.location` under the issuer.
    func scimResource(_ user: ManagementUser) -> JSONValue {
        var members: [(String, JSONValue)] = [("schemas", .array([.string(SCIM.userSchema)])), ("id", .string(user.user_id))]
        if case .string(let external)? = user.app_metadata?[SCIM.externalIDKey] { members.append(("externalId", .string(external))) }
        members.append(("userName", .string(user.email)))
        if let name = user.name { members += [("displayName", .string(name)), ("name", .object(["formatted": .string(name)]))] }
        members += [
            ("emails", .array([.object(["value": .string(user.email), "primary": .bool(true), "type": .string("work")])])),
            ("active", .bool(!user.blocked)),
            ("meta", .object(["resourceType": .string("User"), "created": .string(user.created_at), "lastModified": .string(user.updated_at),
                              "location": .string(configuration.issuer + "/scim/v2/Users/" + user.user_id)])),
        ]
        return .object(JSONObject(uniqueKeysWithValues: members))
    }
}
