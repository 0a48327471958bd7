import SignetAPI
import SignetWebAuthn

/// Role-based access control, after Auth0's: roles hold permissions of the APIs
/// `tokens.permissions` names, accounts are given roles, and an access token for such an API
/// lists, in its `permissions` claim, what the account's roles grant there. Each change is
/// audited as the calling client's; a change to what an account may do is on its own history.
extension Ceremonies {
    /// Roles, permissions, users or roles named in one call, at most.
    public static let maxRoleBatch = 100

    /// `POST /api/v2/roles`: a role named `name` (one role's only: 409 `conflict` else).
    public func createRole(name: String?, description: String?, externalID: String? = nil, by caller: ManagementCaller, context: RequestContext) throws -> RoleRow {
        guard let name = try Self.displayName(name, member: "name", limit: 256) else { throw AuthError.malformed("name is required") }
        let now = nowMillis
        let role = RoleRow(id: "rol_" + Base64URL.encode(random(12)), name: name, description: try Self.displayName(description, member: "description", limit: 500),
                           externalID: try Self.displayName(externalID, member: "externalId", limit: 256), createdAt: now, updatedAt: now)
        guard try store.roles(nameFilter: nil, offset: 0, limit: 1).total < 1_000 else { throw AuthError(.conflict, "a deployment has at most 1000 roles") }
        let event = pendingAuditEvent(.adminRoleCreated, client: caller.clientID, detail: "role \(role.id) (\(name.prefix(100)))", context: context)
        do throws(StoreError) {
            try store.insertRole(role, writes: [.audit(event)])
        } catch {
            throw error.code == .conflict ? AuthError(.conflict, "a role named \(name.prefix(100)) exists") : AuthError(error)
        }
        counted(event)
        return role
    }

    /// `GET /api/v2/roles`: by name, `perPage` (at most 100) a page from `page` 0.
    public func roles(nameFilter: String?, page: Int, perPage: Int) throws -> (roles: [RoleRow], total: Int) {
        let (offset, limit) = try Self.page(page, perPage)
        return try store.roles(nameFilter: nameFilter.flatMap { $0.isEmpty ? nil : String($0.prefix(100)) }, offset: offset, limit: limit)
    }

    /// `GET /api/v2/roles/{id}`.
    public func role(id: String) throws -> RoleRow {
        guard id.utf8.count <= 64, let role = try store.role(id: id) else { throw AuthError(.roleNotFound, "no role \(id.prefix(64))") }
        return role
    }

    /// `PATCH /api/v2/roles/{id}`: its name, its description (`.some(nil)` or `""` clears it),
    /// and (SCIM) its provider's ID.
    public func updateRole(id: String, name: String?, description: String??, externalID: String?? = nil, by caller: ManagementCaller, context: RequestContext) throws -> RoleRow {
        guard name != nil || description != nil || externalID != nil else { throw AuthError.malformed("nothing to change: send name or description") }
        let before = try role(id: id)
        var newName = before.name
        if let name {
            guard let given = try Self.displayName(name, member: "name", limit: 256) else { throw AuthError.malformed("name cannot be empty") }
            newName = given
        }
        let newDescription = try description.map { try Self.displayName($0, member: "description", limit: 500) } ?? before.description
        let newExternalID = try externalID.map { try Self.displayName($0, member: "externalId", limit: 256) } ?? before.externalID
        let fields = [name.map { _ in "name" }, description.map { _ in "description" }, externalID.map { _ in "external ID" }].compactMap { $0 }
        let event = pendingAuditEvent(.adminRoleUpdated, client: caller.clientID, detail: "role \(id) (\(newName.prefix(100))): changed \(fields.joined(separator: ", "))",
                                      context: context)
        let updated: RoleRow?
        do throws(StoreError) {
            updated = try store.updateRole(id: id, name: newName, description: newDescription, externalID: newExternalID, at: nowMillis, writes: [.audit(event)])
        } catch {
            throw error.code == .conflict ? AuthError(.conflict, "a role named \(newName.prefix(100)) exists") : AuthError(error)
        }
        guard let updated else { throw AuthError(.roleNotFound, "no role \(id.prefix(64))") }
        counted(event)
        return updated
    }

    /// `DELETE /api/v2/roles/{id}`: the role goes, and with it what it granted each member.
    public func deleteRole(id: String, by caller: ManagementCaller, context: RequestContext) throws {
        let role = try role(id: id)
        let event = pendingAuditEvent(.adminRoleDeleted, client: caller.clientID, detail: "role \(id) (\(role.name.prefix(100)))", context: context)
        guard try store.deleteRole(id: id, writes: [.audit(event)]) else { throw AuthError(.roleNotFound, "no role \(id.prefix(64))") }
        counted(event)
    }

    /// `GET /api/v2/roles/{id}/permissions`.
    public func rolePermissions(id: String) throws -> [Permission] {
        _ = try role(id: id)
        return try store.rolePermissions(roleID: id)
    }

    /// `POST` and `DELETE /api/v2/roles/{id}/permissions`: permissions added must be ones
    /// `tokens.permissions` names for their API; any the role has may be removed.
    public func changeRolePermissions(id: String, _ permissions: [Permission], add: Bool, by caller: ManagementCaller, context: RequestContext) throws {
        guard (1...Self.maxRoleBatch).contains(permissions.count) else { throw AuthError.malformed("permissions must list 1 to \(Self.maxRoleBatch) permissions") }
        if add {
            for p in permissions where configuration.apiPermissions[p.audience]?[p.name] == nil {
                let known = configuration.apiPermissions[p.audience] == nil ? "names no permissions for the API \(p.audience.prefix(200))"
                    : "names no permission \(p.name.prefix(100)) for \(p.audience.prefix(200))"
                throw AuthError.malformed("tokens.permissions \(known)")
            }
        }
        let role = try role(id: id)
        let names = Set(permissions).sorted().map { "\($0.name) (\($0.audience))" }
        let event = pendingAuditEvent(.adminRoleUpdated, client: caller.clientID,
                                      detail: "role \(id) (\(role.name.prefix(100))): permissions \(add ? "added" : "removed"): \(names.joined(separator: ", "))", context: context)
        guard try store.changeRolePermissions(roleID: id, adding: add ? permissions : [], removing: add ? [] : permissions, at: nowMillis, writes: [.audit(event)]) else {
            throw AuthError(.roleNotFound, "no role \(id.prefix(64))")
        }
        counted(event)
    }

    /// `GET /api/v2/roles/{id}/users`: the accounts that have the role now, in the order they
    /// were given it.
    public func roleMembers(id: String, page: Int, perPage: Int) throws -> (members: [RoleMember], total: Int) {
        _ = try role(id: id)
        let (offset, limit) = try Self.page(page, perPage)
        return try store.roleMembers(roleID: id, at: nowMillis, offset: offset, limit: limit)
    }

    /// The longest a role may be given for: a year and a day. Access for longer is given for good,
    /// and reviewed as such.
    public static let longestRoleGrant: Int64 = 366 * 86_400_000

    /// A role's end as the Management API takes it (`expires_at`, ISO 8601 with a time zone):
    /// after `now` and within ``longestRoleGrant``; 400 `malformed` otherwise.
    public static func roleEnd(_ text: String, now: Int64) throws -> Int64 {
        guard let end = millis(iso: text) else {
            throw AuthError.malformed("expires_at must be a time in ISO 8601 with its zone, such as 2026-12-05T18:00:00Z")
        }
        try checkRoleEnd(end, now: now)
        return end
    }

    /// A role given for a time ends after `now` and within ``longestRoleGrant``.
    static func checkRoleEnd(_ end: Int64?, now: Int64) throws {
        guard let end else { return }
        guard end > now else { throw AuthError.malformed("expires_at is past: a role given for a time must end later than now") }
        guard end - now <= longestRoleGrant else { throw AuthError.malformed("expires_at is more than 366 days away: give the role for good instead, and review it as such") }
    }

    /// The time a change of roles is made at, once its `end` is checked: only a role given may
    /// end, and after now within ``longestRoleGrant``.
    func roleChangeTime(give: Bool, until end: Int64?) throws -> Int64 {
        guard give || end == nil else { throw AuthError.malformed("expires_at is for giving roles, not taking them") }
        let now = nowMillis
        try Self.checkRoleEnd(end, now: now)
        return now
    }

    /// Whether giving a role (until `end`) or taking it changes a membership that ends at `held`
    /// (`nil`: the account has not the role; `.some(nil)`: it has it for good). A role given with
    /// the end it has, or taken from an account without it, writes nothing.
    static func changes(_ held: Int64??, give: Bool, until end: Int64?) -> Bool {
        guard let ends = held else { return give }
        return !give || ends != end
    }

    /// What an audit row says of roles given until `end`.
    static func given(until end: Int64?) -> String { "roles given" + (end.map { " until \(iso($0))" } ?? "") }

    /// `POST` and `DELETE /api/v2/users/{id}/roles`: the account's roles change in one
    /// transaction with its audit row. Given `until` a time (milliseconds), each ends then, and a
    /// role it has already takes the new end; given for good, each is kept for good.
    /// Its tokens list the new permissions from its next sign-in or refresh.
    public func changeUserRoles(userID: String, roleIDs: [String], give: Bool, until end: Int64? = nil, by caller: ManagementCaller, context: RequestContext) throws {
        guard (1...Self.maxRoleBatch).contains(roleIDs.count) else { throw AuthError.malformed("roles must list 1 to \(Self.maxRoleBatch) role IDs") }
        let now = try roleChangeTime(give: give, until: end)
        try requireAccount(userID)
        // A role it has already with the same end (or has not) is passed over; nothing to
        // change writes nothing.
        let held = Dictionary(try store.userRoles(userID: userID, at: now).map { ($0.id, $0.expiresAt) }) { first, _ in first }
        let roles = try Set(roleIDs).map { try role(id: $0) }.filter { Self.changes(held[$0.id], give: give, until: end) }.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
        guard !roles.isEmpty else { return }
        let event = pendingAuditEvent(.adminUserRolesChanged, user: userID, client: caller.clientID,
                                      detail: (give ? Self.given(until: end) : "roles taken") + ": " + roles.map { "\($0.name.prefix(100)) (\($0.id))" }.joined(separator: ", "),
                                      context: context)
        let changed: Bool
        do throws(StoreError) {
            changed = try store.changeUserRoles(userID: userID, roleIDs: roles.map(\.id), give: give, expiresAt: end, at: now, writes: [.audit(event)])
        } catch {
            throw error.code == .conflict ? AuthError(.roleNotFound, "a role was deleted meanwhile") : AuthError(error)
        }
        guard changed else { throw AuthError(.userUnknown, "no user \(userID.prefix(64))") }
        counted(event)
    }

    /// `POST /api/v2/roles/{id}/users` (and `signet admin roles assign`, `unassign`): the role
    /// given to each account (`until` a time, or for good), or taken, in one transaction; every
    /// account is checked first, and one that has it already with the same end (or not) is
    /// passed over.
    public func changeRoleMembers(id: String, users: [String], give: Bool, until end: Int64? = nil, by caller: ManagementCaller, context: RequestContext) throws {
        guard (1...Self.maxRoleBatch).contains(users.count) else { throw AuthError.malformed("users must list 1 to \(Self.maxRoleBatch) user IDs") }
        let now = try roleChangeTime(give: give, until: end)
        let role = try role(id: id)
        // Each named account's own roles, not the role's every member: a role may have thousands.
        var changing: [String] = []
        for user in users where !changing.contains(user) {
            try requireAccount(user)
            let mine = try store.userRoles(userID: user, at: now).first { $0.id == id }
            if Self.changes(mine.map(\.expiresAt), give: give, until: end) { changing.append(user) }
        }
        try changeMembers(of: role, adding: give ? changing : [], removing: give ? [] : changing, until: end, by: caller, context: context)
    }

    /// Gives `role` to `adding` (until `end`, or for good) and takes it from `removing` in one
    /// transaction, with an audit row on each account's history.
    func changeMembers(of role: RoleRow, adding: [String], removing: [String], until end: Int64? = nil, by caller: ManagementCaller, context: RequestContext) throws {
        guard !adding.isEmpty || !removing.isEmpty else { return }
        // Giving and taking a role need the role members' scopes, whichever route asks (a SCIM
        // Group's members changed with a Management API token too).
        try Self.requireHeld((adding.isEmpty ? [] : [ManagementScope.createRoleMembers.rawValue]) + (removing.isEmpty ? [] : [ManagementScope.deleteRoleMembers.rawValue]),
                             by: caller)
        let label = "\(role.name.prefix(100)) (\(role.id))"
        let events = adding.map { pendingAuditEvent(.adminUserRolesChanged, user: $0, client: caller.clientID, detail: Self.given(until: end) + ": " + label, context: context) }
            + removing.map { pendingAuditEvent(.adminUserRolesChanged, user: $0, client: caller.clientID, detail: "roles taken: " + label, context: context) }
        let changed: Bool
        do throws(StoreError) {
            changed = try store.changeRoleMembers(roleID: role.id, adding: adding, removing: removing, expiresAt: end, at: nowMillis, writes: events.map(StoreWrite.audit))
        } catch {
            throw error.code == .conflict ? SCIM.Failure(AuthError(.userUnknown, "a member was deleted meanwhile"), scimType: "invalidValue") : AuthError(error)
        }
        guard changed else { throw AuthError(.roleNotFound, "no role \(role.id)") }
        events.forEach(counted)
    }

    /// `GET /api/v2/users/{id}/roles`: the account's roles now, each with its end.
    public func userRoles(userID: String) throws -> [RoleRow] {
        try requireAccount(userID)
        return try currentRoles(userID)
    }

    /// The roles an account has now: one given for a time counts until its end, whether or not
    /// the purge has taken it yet.
    func currentRoles(_ userID: String) throws -> [RoleRow] { try store.userRoles(userID: userID, at: nowMillis) }

    /// The purge's step for roles given for a time: each membership that ended goes, with a
    /// `role_expired` row on the account's history, `batch` at a time. It stopped counting at its
    /// end already; this keeps the table small and says when. Returns how many went.
    public func purgeEndedRoles(batch: Int = 500) throws -> Int {
        let now = nowMillis
        var purged = 0
        while true {
            let ended = try store.endedRoles(before: now, limit: batch)
            let events = ended.map { role in
                (role, pendingAuditEvent(.roleExpired, user: role.userID, detail: "role \(role.roleName.prefix(100)) (\(role.roleID)) ended at \(Self.iso(role.expiresAt))",
                                         context: .server))
            }
            // One given a new end meanwhile stays, and its row is not written.
            let deleted = try store.deleteEndedRoles(events.map { ($0.0, [StoreWrite.audit($0.1)]) })
            for (role, event) in events where deleted.contains(role) { counted(event) }
            purged += deleted.count
            if ended.count < batch || deleted.isEmpty { return purged }
        }
    }

    /// The signed-in account's roles (`GET /me/roles`, the account page's "Your roles"): each
    /// role it has now, with its end, and what it grants, a permission `tokens.permissions` no
    /// longer names left out as the tokens leave it out. Only to read: operators give and take
    /// roles.
    public func accountRoles(_ principal: Principal) throws -> [(role: RoleRow, permissions: [Permission])] {
        let roles = try currentRoles(principal.user.id)
        guard !roles.isEmpty else { return [] }
        let granted = try store.userPermissions(userID: principal.user.id, at: nowMillis)
        return roles.map { role in
            (role, granted.filter { $0.roleID == role.id && configuration.apiPermissions[$0.permission.audience]?[$0.permission.name] != nil }.map(\.permission))
        }
    }

    /// `GET /api/v2/users/{id}/permissions`: each permission the account's roles grant, with
    /// the roles it comes from.
    public func userPermissions(userID: String) throws -> [(permission: Permission, roles: [(id: String, name: String)])] {
        try requireAccount(userID)
        var result: [(permission: Permission, roles: [(id: String, name: String)])] = []
        for granted in try store.userPermissions(userID: userID, at: nowMillis) {
            if result.last?.permission == granted.permission {
                result[result.count - 1].roles.append((granted.roleID, granted.roleName))
            } else {
                result.append((granted.permission, [(granted.roleID, granted.roleName)]))
            }
        }
        return result
    }

    /// The `permissions` claim of an access token for `audience`: the names the account's roles
    /// grant there that `tokens.permissions` still names, sorted; `nil` (no claim, nothing read)
    /// for an API it names none for.
    func permissionsClaim(userID: String, audience: String) throws -> [String]? {
        guard !configuration.apiPermissions.isEmpty, let known = configuration.apiPermissions[audience] else { return nil }
        return try store.permissionNames(userID: userID, audience: audience, at: nowMillis).filter { known[$0] != nil }
    }

    /// Every permission name `tokens.permissions` gives an API: what a machine client's scopes may
    /// name besides the Management API's.
    var apiPermissionNames: Set<String> { Set(configuration.apiPermissions.values.flatMap(\.keys)) }

    /// 404 `user_unknown` unless the account is there: its record alone is read, not the
    /// Management API's view of it (``existingUser(_:)``, with its passkeys' counts).
    func requireAccount(_ id: String) throws {
        guard id.utf8.count <= 128, try store.user(id: id) != nil else { throw AuthError(.userUnknown, "no user \(id.prefix(64))") }
    }

    /// Auth0's `page` (from 0) and `per_page` (1 to 100) as an offset and a limit.
    static func page(_ page: Int, _ perPage: Int) throws -> (offset: Int, limit: Int) {
        guard page >= 0, page <= 100_000, (1...100).contains(perPage) else { throw AuthError.malformed("page must be 0 or more and per_page 1 to 100") }
        return (page * perPage, perPage)
    }
}
