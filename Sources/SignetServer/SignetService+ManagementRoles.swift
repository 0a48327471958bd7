package import SignetAPI
package import SignetAuth
import SignetHTTP
import SignetWebAuthn

/// `/api/v2/roles` and a user's roles and permissions: Auth0's paths, scopes and shapes for
/// role-based access control (``Ceremonies/createRole(name:description:by:context:)``).
extension SignetService {
    static func addManagementRoleRoutes(_ r: inout Router<SignetService>) {
        r.add("GET", "/api/v2/roles", needs: .management(.readRoles)) { s, call in
            let q = call.request.query
            let (page, perPage) = (try Self.integer(q["page"], "page", default: 0), try Self.integer(q["per_page"], "per_page", default: 50))
            let found = try s.ceremonies.roles(nameFilter: q["name_filter"], page: page, perPage: perPage)
            return try Self.listed("roles", try found.roles.map { try Wire.value(ManagementRole($0)) }, page: page, perPage: perPage, total: found.total, totals: q["include_totals"] == "true")
        }
        r.add("POST", "/api/v2/roles", needs: .management(.createRoles)) { s, call in
            let body = try Self.members(try s.body(call), ["name", "description"])
            let role = try s.ceremonies.createRole(name: try Self.text(body["name"], "name"), description: try Self.text(body["description"], "description"),
                                                   by: call.administrator, context: call.context)
            return try Wire.encode(ManagementRole(role), status: 201)
        }
        r.add("GET", "/api/v2/roles/{id}", needs: .management(.readRoles)) { s, call in try Wire.encode(ManagementRole(s.ceremonies.role(id: call.parameter("id")))) }
        r.add("PATCH", "/api/v2/roles/{id}", needs: .management(.updateRoles)) { s, call in
            let body = try Self.members(try s.body(call), ["name", "description"])
            var description: String?? = nil
            if let value = body["description"] { description = .some(try Self.text(value, "description")) }
            let role = try s.ceremonies.updateRole(id: call.parameter("id"), name: try Self.text(body["name"], "name"), description: description,
                                                   by: call.administrator, context: call.context)
            return try Wire.encode(ManagementRole(role))
        }
        r.add("DELETE", "/api/v2/roles/{id}", needs: .management(.deleteRoles)) { s, call in
            try s.ceremonies.deleteRole(id: call.parameter("id"), by: call.administrator, context: call.context)
            return HTTPResponse(status: 204)
        }
        r.add("GET", "/api/v2/roles/{id}/permissions", needs: .management(.readRoles)) { s, call in
            let permissions = try s.ceremonies.rolePermissions(id: call.parameter("id")).map { try s.wire($0) }
            return try Self.listed("permissions", permissions, page: 0, perPage: max(permissions.count, 1), total: permissions.count,
                                   totals: call.request.query["include_totals"] == "true")
        }
        for (method, add) in [("POST", true), ("DELETE", false)] {
            r.add(method, "/api/v2/roles/{id}/permissions", needs: .management(.updateRoles)) { s, call in
                let body = try Self.members(try s.body(call), ["permissions"])
                guard let list = body["permissions"]?.array else { throw AuthError.malformed("send {\"permissions\": [{\"resource_server_identifier\": …, \"permission_name\": …}]}") }
                let permissions = try list.map { item in
                    guard let object = item.object, object.count == 2, let audience = item["resource_server_identifier"]?.string, let name = item["permission_name"]?.string else {
                        throw AuthError.malformed("each permission is {\"resource_server_identifier\": API, \"permission_name\": NAME}")
                    }
                    return Permission(audience: audience, name: name)
                }
                try s.ceremonies.changeRolePermissions(id: call.parameter("id"), permissions, add: add, by: call.administrator, context: call.context)
                return HTTPResponse(status: add ? 201 : 204)
            }
        }
        r.add("GET", "/api/v2/roles/{id}/users", needs: .management(.readRoleMembers)) { s, call in
            let q = call.request.query
            let (page, perPage) = (try Self.integer(q["page"], "page", default: 0), try Self.integer(q["per_page"], "per_page", default: 50))
            let found = try s.ceremonies.roleMembers(id: call.parameter("id"), page: page, perPage: perPage)
            let users = try found.members.map { try Wire.value(ManagementRoleMember($0)) }
            return try Self.listed("users", users, page: page, perPage: perPage, total: found.total, totals: q["include_totals"] == "true")
        }
        r.add("POST", "/api/v2/roles/{id}/users", needs: .management(.createRoleMembers)) { s, call in
            let (users, end) = try Self.given(try s.body(call), "users", now: s.ceremonies.nowMillis)
            try s.ceremonies.changeRoleMembers(id: call.parameter("id"), users: users, give: true, until: end, by: call.administrator, context: call.context)
            return HTTPResponse(status: 200)
        }
        r.add("GET", "/api/v2/users/{id}/roles", needs: .management(.readRoleMembers)) { s, call in
            let roles = try s.ceremonies.userRoles(userID: call.parameter("id")).map { try Wire.value(ManagementRole($0)) }
            return try Self.listed("roles", roles, page: 0, perPage: max(roles.count, 1), total: roles.count, totals: call.request.query["include_totals"] == "true")
        }
        for (method, give) in [("POST", true), ("DELETE", false)] {
            r.add(method, "/api/v2/users/{id}/roles", needs: .management(give ? .createRoleMembers : .deleteRoleMembers)) { s, call in
                let (roles, end) = give ? try Self.given(try s.body(call), "roles", now: s.ceremonies.nowMillis) : (try Self.identifiers(try s.body(call), "roles"), nil)
                try s.ceremonies.changeUserRoles(userID: call.parameter("id"), roleIDs: roles, give: give, until: end, by: call.administrator, context: call.context)
                return HTTPResponse(status: 204)
            }
        }
        r.add("GET", "/api/v2/users/{id}/permissions", needs: .management(.readRoleMembers)) { s, call in
            let permissions = try s.ceremonies.userPermissions(userID: call.parameter("id")).map { granted in
                try Wire.value(ManagementUserPermission(ManagementPermission(granted.permission, s.configuration),
                                                        sources: granted.roles.map { ManagementUserPermission.Source(source_id: $0.id, source_name: $0.name) }))
            }
            return try Self.listed("permissions", permissions, page: 0, perPage: max(permissions.count, 1), total: permissions.count,
                                   totals: call.request.query["include_totals"] == "true")
        }
    }

    func wire(_ p: Permission) throws -> JSONValue { try Wire.value(ManagementPermission(p, configuration)) }

    /// A list as Auth0 answers it: the items alone, or with `include_totals=true` in an object
    /// with `start`, `limit`, `length` and `total`.
    static func listed(_ key: String, _ items: [JSONValue], page: Int, perPage: Int, total: Int, totals: Bool) throws -> HTTPResponse {
        guard totals else { return .json(200, Array(JSONValue.array(items).serialized.utf8)) }
        let object: JSONObject = ["start": .int(Int64(page * perPage)), "limit": .int(Int64(perPage)), "length": .int(Int64(items.count)), "total": .int(Int64(total)),
                                  key: .array(items)]
        return .json(200, Array(JSONValue.object(object).serialized.utf8))
    }

    /// A body that is an object with no members but `allowed`.
    static func members(_ body: JSONValue, _ allowed: [String]) throws -> JSONObject {
        guard let object = body.object else { throw AuthError.malformed("the body must be a JSON object") }
        if let unknown = object.keys.first(where: { !allowed.contains($0) }) {
            throw AuthError.malformed("\"\(unknown.prefix(40))\" is not taken here: send \(allowed.joined(separator: " or "))")
        }
        return object
    }

    static func text(_ value: JSONValue?, _ name: String) throws -> String? {
        guard let value, value != .null else { return nil }
        guard let text = value.string else { throw AuthError.malformed("\(name) must be a string") }
        return text
    }

    /// `{"KEY": ["ID", …]}`: the IDs, each a string.
    static func identifiers(_ body: JSONValue, _ key: String) throws -> [String] {
        try identifiers(members(body, [key]), key)
    }

    static func identifiers(_ object: JSONObject, _ key: String) throws -> [String] {
        guard let list = object[key]?.array, list.allSatisfy({ $0.string != nil }) else { throw AuthError.malformed("send {\"\(key)\": [ID, …]}") }
        return list.compactMap(\.string)
    }

    /// `{"KEY": ["ID", …], "expires_at": TIME}`: roles given, and with `expires_at` (ISO 8601,
    /// Signet's own member) until when, for just-in-time access.
    static func given(_ body: JSONValue, _ key: String, now: Int64) throws -> (ids: [String], end: Int64?) {
        let object = try members(body, [key, "expires_at"])
        return (try identifiers(object, key), try text(object["expires_at"], "expires_at").map { try Ceremonies.roleEnd($0, now: now) })
    }
}

extension ManagementRole {
    package init(_ row: RoleRow) { self.init(id: row.id, name: row.name, description: row.description, expires_at: row.expiresAt.map(Ceremonies.iso)) }
}

extension ManagementRoleMember {
    package init(_ member: RoleMember) {
        self.init(user_id: member.user.id, email: member.user.email, name: member.user.name, expires_at: member.expiresAt.map(Ceremonies.iso))
    }
}

extension ManagementPermission {
    /// With its description from `tokens.permissions`; none for one the setting no longer names.
    package init(_ p: Permission, _ configuration: ServerConfiguration) {
        self.init(permission_name: p.name, description: configuration.apiPermissions[p.audience]?[p.name], resource_server_identifier: p.audience)
    }
}
