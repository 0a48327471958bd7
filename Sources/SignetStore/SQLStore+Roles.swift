public import SignetAuth

/// Roles (``RoleRow``), their permissions and their members.
extension SQLStore {
    static let roleColumns = "id, name, description, external_id, created_at, updated_at"

    static func roleRow(_ r: [SQLValue]) -> RoleRow {
        RoleRow(id: r[0].text ?? "", name: r[1].text ?? "", description: r[2].text, externalID: r[3].text, createdAt: r[4].int ?? 0, updatedAt: r[5].int ?? 0)
    }

    public func insertRole(_ role: RoleRow, writes: [StoreWrite]) throws(StoreError) {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) in
                try db.query("INSERT INTO roles (\(Self.roleColumns)) VALUES (?, ?, ?, ?, ?, ?)",
                             [.text(role.id), .text(role.name), Self.text(role.description), Self.text(role.externalID), .int(role.createdAt), .int(role.updatedAt)])
                for write in writes { try Self.apply(write, db) }
            }
        }
    }

    public func roles(nameFilter: String?, offset: Int, limit: Int) throws(StoreError) -> (roles: [RoleRow], total: Int) {
        // A name holds the filter in any case: as text with `LIKE`'s wildcards escaped.
        let (filter, arguments): (String, [SQLValue]) = nameFilter.map {
            (#" WHERE lower(name) LIKE lower(?) ESCAPE '\'"#, [.text("%" + Self.likePrefix($0))])
        } ?? ("", [])
        return try reading { db throws(StoreError) in
            let total = try db.query("SELECT COUNT(*) FROM roles" + filter, arguments).first?[0].int ?? 0
            let rows = try db.query("SELECT \(Self.roleColumns) FROM roles\(filter) ORDER BY name, id LIMIT ? OFFSET ?", arguments + [.int(Int64(limit)), .int(Int64(offset))])
            return (rows.map(Self.roleRow), Int(total))
        }
    }

    public func role(id: String) throws(StoreError) -> RoleRow? {
        try reading { db throws(StoreError) in try db.query("SELECT \(Self.roleColumns) FROM roles WHERE id = ?", [.text(id)]).first.map(Self.roleRow) }
    }

    public func updateRole(id: String, name: String, description: String?, externalID: String?, at: Int64, writes: [StoreWrite]) throws(StoreError) -> RoleRow? {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> RoleRow? in
                guard let row = try db.query("UPDATE roles SET name = ?, description = ?, external_id = ?, updated_at = ? WHERE id = ? RETURNING \(Self.roleColumns)",
                                             [.text(name), Self.text(description), Self.text(externalID), .int(at), .text(id)]).first else { return nil }
                for write in writes { try Self.apply(write, db) }
                return Self.roleRow(row)
            }
        }
    }

    public func deleteRole(id: String, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                // Its permissions and memberships first: the same on both databases, whatever
                // their foreign-key settings.
                try db.query("DELETE FROM role_permissions WHERE role_id = ?", [.text(id)])
                try db.query("DELETE FROM user_roles WHERE role_id = ?", [.text(id)])
                try db.query("DELETE FROM roles WHERE id = ?", [.text(id)])
                guard db.changes == 1 else { return false }
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    public func rolePermissions(roleID: String) throws(StoreError) -> [Permission] {
        try reading { db throws(StoreError) in
            try db.query("SELECT audience, permission FROM role_permissions WHERE role_id = ? ORDER BY audience, permission", [.text(roleID)])
                .map { Permission(audience: $0[0].text ?? "", name: $0[1].text ?? "") }
        }
    }

    public func changeRolePermissions(roleID: String, adding: [Permission], removing: [Permission], at: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                // The role's row first: it is there, and a change beside this one waits for it.
                try db.query("UPDATE roles SET updated_at = ? WHERE id = ?", [.int(at), .text(roleID)])
                guard db.changes == 1 else { return false }
                for p in adding {
                    try db.query("INSERT INTO role_permissions (role_id, audience, permission) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                                 [.text(roleID), .text(p.audience), .text(p.name)])
                }
                for p in removing {
                    try db.query("DELETE FROM role_permissions WHERE role_id = ? AND audience = ? AND permission = ?", [.text(roleID), .text(p.audience), .text(p.name)])
                }
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    /// A membership that has not ended at the query's time (the argument after the others').
    static let current = "(m.expires_at IS NULL OR m.expires_at > ?)"

    /// Gives the role, or sets the end of a membership there already: an ended one not purged
    /// yet lives again until the new end.
    static let giveRole = """
        INSERT INTO user_roles (user_id, role_id, created_at, expires_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (user_id, role_id) DO UPDATE SET expires_at = excluded.expires_at
        """

    public func changeUserRoles(userID: String, roleIDs: [String], give: Bool, expiresAt: Int64?, at: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                try db.query("UPDATE users SET updated_at = ? WHERE id = ?", [.int(at), .text(userID)])
                guard db.changes == 1 else { return false }
                for role in roleIDs {
                    if give {
                        // A role gone meanwhile fails its foreign key: a conflict, nothing written.
                        try db.query(Self.giveRole, [.text(userID), .text(role), .int(at), expiresAt.map(SQLValue.int) ?? .null])
                    } else {
                        try db.query("DELETE FROM user_roles WHERE user_id = ? AND role_id = ?", [.text(userID), .text(role)])
                    }
                }
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    public func changeRoleMembers(roleID: String, adding: [String], removing: [String], expiresAt: Int64?, at: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                try db.query("UPDATE roles SET updated_at = ? WHERE id = ?", [.int(at), .text(roleID)])
                guard db.changes == 1 else { return false }
                for user in adding {
                    // An account gone meanwhile fails its foreign key: a conflict, nothing written.
                    try db.query(Self.giveRole, [.text(user), .text(roleID), .int(at), expiresAt.map(SQLValue.int) ?? .null])
                }
                for user in removing { try db.query("DELETE FROM user_roles WHERE user_id = ? AND role_id = ?", [.text(user), .text(roleID)]) }
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    public func userRoles(userID: String, at: Int64) throws(StoreError) -> [RoleRow] {
        try reading { db throws(StoreError) in
            try db.query("""
                SELECT \(Self.prefixed(Self.roleColumns, "r")), m.expires_at FROM user_roles m JOIN roles r ON r.id = m.role_id
                WHERE m.user_id = ? AND \(Self.current) ORDER BY r.name, r.id
                """, [.text(userID), .int(at)]).map { row in
                var role = Self.roleRow(row)
                role.expiresAt = row[6].int
                return role
            }
        }
    }

    public func userRoles(userIDs: [String], at: Int64) throws(StoreError) -> [String: [RoleRow]] {
        guard !userIDs.isEmpty else { return [:] }
        let marks = Array(repeating: "?", count: userIDs.count).joined(separator: ", ")
        return try reading { db throws(StoreError) in
            var roles: [String: [RoleRow]] = [:]
            for row in try db.query("""
                SELECT \(Self.prefixed(Self.roleColumns, "r")), m.expires_at, m.user_id FROM user_roles m JOIN roles r ON r.id = m.role_id
                WHERE m.user_id IN (\(marks)) AND \(Self.current) ORDER BY m.user_id, r.name, r.id
                """, userIDs.map(SQLValue.text) + [.int(at)]) {
                var role = Self.roleRow(row)
                role.expiresAt = row[6].int
                roles[row[7].text ?? "", default: []].append(role)
            }
            return roles
        }
    }

    public func roleMembers(roleID: String, at: Int64, offset: Int, limit: Int) throws(StoreError) -> (members: [RoleMember], total: Int) {
        try reading { db throws(StoreError) in
            let total = try db.query("SELECT COUNT(*) FROM user_roles m WHERE m.role_id = ? AND \(Self.current)", [.text(roleID), .int(at)]).first?[0].int ?? 0
            let rows = try db.query("""
                SELECT \(Self.prefixed(Self.userSelect, "u")), m.expires_at FROM user_roles m JOIN users u ON u.id = m.user_id
                WHERE m.role_id = ? AND \(Self.current) ORDER BY m.created_at, u.id LIMIT ? OFFSET ?
                """, [.text(roleID), .int(at), .int(Int64(limit)), .int(Int64(offset))])
            return (rows.map { RoleMember(user: Self.user($0), expiresAt: $0.last?.int) }, Int(total))
        }
    }

    public func userPermissions(userID: String, at: Int64) throws(StoreError) -> [GrantedPermission] {
        try reading { db throws(StoreError) in
            try db.query("""
                SELECT p.audience, p.permission, r.id, r.name FROM user_roles m JOIN roles r ON r.id = m.role_id JOIN role_permissions p ON p.role_id = m.role_id
                WHERE m.user_id = ? AND \(Self.current) ORDER BY p.audience, p.permission, r.name, r.id
                """, [.text(userID), .int(at)]).map {
                GrantedPermission(permission: Permission(audience: $0[0].text ?? "", name: $0[1].text ?? ""), roleID: $0[2].text ?? "", roleName: $0[3].text ?? "")
            }
        }
    }

    public func permissionNames(userID: String, audience: String, at: Int64) throws(StoreError) -> [String] {
        try reading { db throws(StoreError) in
            try db.query("""
                SELECT DISTINCT p.permission FROM user_roles m JOIN role_permissions p ON p.role_id = m.role_id
                WHERE m.user_id = ? AND p.audience = ? AND \(Self.current) ORDER BY p.permission
                """, [.text(userID), .text(audience), .int(at)]).compactMap { $0[0].text }
        }
    }

    public func endedRoles(before: Int64, limit: Int) throws(StoreError) -> [EndedRole] {
        try reading { db throws(StoreError) in
            try db.query("""
                SELECT m.user_id, m.role_id, r.name, m.expires_at FROM user_roles m JOIN roles r ON r.id = m.role_id
                WHERE m.expires_at IS NOT NULL AND m.expires_at <= ? ORDER BY m.expires_at LIMIT ?
                """, [.int(before), .int(Int64(limit))]).map {
                EndedRole(userID: $0[0].text ?? "", roleID: $0[1].text ?? "", roleName: $0[2].text ?? "", expiresAt: $0[3].int ?? 0)
            }
        }
    }

    public func deleteEndedRoles(_ ended: [(role: EndedRole, writes: [StoreWrite])]) throws(StoreError) -> [EndedRole] {
        guard !ended.isEmpty else { return [] }
        return try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> [EndedRole] in
                var deleted: [EndedRole] = []
                for (role, writes) in ended {
                    try db.query("DELETE FROM user_roles WHERE user_id = ? AND role_id = ? AND expires_at = ?", [.text(role.userID), .text(role.roleID), .int(role.expiresAt)])
                    guard db.changes == 1 else { continue }
                    deleted.append(role)
                    for write in writes { try Self.apply(write, db) }
                }
                return deleted
            }
        }
    }
}
