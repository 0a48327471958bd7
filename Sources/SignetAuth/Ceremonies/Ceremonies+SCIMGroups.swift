import SignetAPI
public import SignetWebAuthn

/// SCIM Groups (RFC 7643 §4.2) as roles: an identity provider pushes its groups and their
/// members, and Signet keeps them as roles and their members. What a role grants (its
/// permissions of an API) stays the operators'; who has it follows the directory. Each account
/// whose roles change is audited as by the client `scim`, on its own history.
extension Ceremonies {
    /// Members a Group lists at most; `excludedAttributes=members` (Microsoft Entra ID's) lists none.
    public static let maxListedMembers = 10_000

    /// `GET /scim/v2/Groups/{id}`.
    public func scimGroup(id: String, members: Bool) throws -> JSONValue { try scimGroupResource(try role(id: id), members: members) }

    /// `GET /scim/v2/Groups`: with `filter` (`displayName`, in any case, `externalId` or `id`),
    /// the roles it names; without, every role by name. `startIndex` counts from 1; `count` ≤ 100.
    public func scimGroups(filter: String?, startIndex: Int, count: Int, members: Bool) throws -> JSONValue {
        let start = max(1, startIndex), take = min(max(0, count), 100)
        var found: [RoleRow]
        let total: Int
        if let filter, !filter.isEmpty {
            // At most 1,000 roles: read whole, filtered here.
            let all = { () throws -> [RoleRow] in try self.store.roles(nameFilter: nil, offset: 0, limit: 1_000).roles }
            switch try SCIM.filter(filter) {
            case .displayName(let name): found = try all().filter { $0.name.lowercased() == name.lowercased() }
            case .externalID(let value): found = try all().filter { $0.externalID == value }
            case .id(let id): found = id.utf8.count <= 64 ? try store.role(id: id).map { [$0] } ?? [] : []
            case .userName, .email: throw SCIM.Failure(AuthError.malformed(#"a Group filter is displayName, externalId or id eq "VALUE""#), scimType: "invalidFilter")
            }
            total = found.count
            found = Array(found.dropFirst(start - 1).prefix(take))
        } else {
            let page = try store.roles(nameFilter: nil, offset: start - 1, limit: max(take, 1))
            total = page.total
            found = take == 0 ? [] : page.roles
        }
        return .object([
            "schemas": .array([.string(SCIM.listSchema)]), "totalResults": .int(Int64(total)), "startIndex": .int(Int64(start)),
            "itemsPerPage": .int(Int64(found.count)), "Resources": .array(try found.map { try scimGroupResource($0, members: members) }),
        ])
    }

    /// `POST /scim/v2/Groups`: a role named `displayName` (one role's only: 409 `uniqueness`),
    /// given to `members`.
    public func scimCreateGroup(_ body: JSONValue, by caller: ManagementCaller, context: RequestContext) throws -> JSONValue {
        let input = try SCIM.group(body)
        guard let name = input.displayName else { throw SCIM.Failure(AuthError.malformed("displayName is required"), scimType: "invalidValue") }
        var seen = Set<String>()
        let members = try knownMembers((input.members ?? []).filter { seen.insert($0).inserted })
        let role = try Self.unique { try createRole(name: name, description: nil, externalID: input.externalID ?? nil, by: caller, context: context) }
        try changeMembers(of: role, adding: members, removing: [], by: caller, context: context)
        return try scimGroupResource(role, members: true)
    }

    /// `PUT /scim/v2/Groups/{id}` (the members replaced whole when sent) and `PATCH` (their
    /// additions and removals, later operations winning): the role renamed, its provider's ID
    /// set, its members changed in one transaction. What is already so is no change.
    public func scimUpdateGroup(id: String, _ body: JSONValue, patch: Bool, by caller: ManagementCaller, context: RequestContext) throws -> JSONValue {
        let input = patch ? try SCIM.groupPatch(body) : try SCIM.group(body)
        var role = try role(id: id)
        // The members first, every account checked, so that a request refused for one changes nothing.
        var adding: [String] = [], removing: [String] = []
        if input.members != nil || !input.adding.isEmpty || !input.removing.isEmpty {
            let current = try store.roleMembers(roleID: id, at: nowMillis, offset: 0, limit: Int(Int32.max)).members.map(\.user.id)
            var target = Set(input.members ?? current)
            target.formUnion(input.adding)
            target.subtract(input.removing)
            var seen = Set(current)
            adding = try knownMembers(((input.members ?? []) + input.adding).filter { target.contains($0) && seen.insert($0).inserted })
            removing = current.filter { !target.contains($0) }
        }
        let renamed = input.displayName.flatMap { $0 == role.name ? nil : $0 }
        let external = input.externalID.flatMap { $0 == role.externalID ? nil : .some($0) }
        if renamed != nil || external != nil {
            role = try Self.unique { try updateRole(id: id, name: renamed, description: nil, externalID: external, by: caller, context: context) }
        }
        try changeMembers(of: role, adding: adding, removing: removing, by: caller, context: context)
        return try scimGroupResource(try self.role(id: id), members: !patch)
    }

    /// A role as a SCIM Group: its members (`value`, `display` the address, `$ref`) unless
    /// `members` is false, at most ``maxListedMembers``.
    func scimGroupResource(_ role: RoleRow, members: Bool) throws -> JSONValue {
        var object: [(String, JSONValue)] = [("schemas", .array([.string(SCIM.groupSchema)])), ("id", .string(role.id)), ("displayName", .string(role.name))]
        if let external = role.externalID { object.append(("externalId", .string(external))) }
        if members {
            let users = try store.roleMembers(roleID: role.id, at: nowMillis, offset: 0, limit: Self.maxListedMembers).members.map(\.user)
            object.append(("members", .array(users.map { u in
                .object(["value": .string(u.id), "display": .string(u.email), "$ref": .string(configuration.issuer + "/scim/v2/Users/" + u.id)])
            })))
        }
        object.append(("meta", .object(["resourceType": .string("Group"), "created": .string(Self.iso(role.createdAt)), "lastModified": .string(Self.iso(role.updatedAt)),
                                        "location": .string(configuration.issuer + "/scim/v2/Groups/" + role.id)])))
        return .object(JSONObject(uniqueKeysWithValues: object))
    }

    /// The members named, each an account that is there (404 `user_unknown`, SCIM's `invalidValue`, else).
    func knownMembers(_ ids: [String]) throws -> [String] {
        for id in ids {
            do { try requireAccount(id) } catch let error as AuthError { throw SCIM.Failure(error, scimType: "invalidValue") }
        }
        return ids
    }

    /// A role's name taken by another is SCIM's `uniqueness`.
    static func unique(_ body: () throws -> RoleRow) throws -> RoleRow {
        do {
            return try body()
        } catch let error as AuthError where error.reason == .conflict {
            throw SCIM.Failure(error, scimType: "uniqueness")
        }
    }
}
