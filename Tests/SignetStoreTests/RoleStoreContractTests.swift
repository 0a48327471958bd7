import Foundation
import SignetAuth
import SignetStore
import Testing

/// Roles, their permissions and members, alike on both databases.
@Suite struct RoleStoreContractTests {
    static func role(_ name: String, at: Int64 = now()) -> RoleRow {
        RoleRow(id: "rol_" + UUID().uuidString.prefix(16), name: name, description: nil, createdAt: at, updatedAt: at)
    }

    @Test("a role's name is one role's; a filter is text in any case, its % and _ only themselves; pages by name", arguments: Backend.available)
    func names(_ backend: Backend) throws {
        let store = try backend.open()
        for name in ["Teller", "Auditor", "100%_Admin", "Branch teller"] { try store.insertRole(Self.role(name), writes: []) }
        #expect(throws: StoreError.self) { try store.insertRole(Self.role("Teller"), writes: []) }
        func names(_ filter: String?, offset: Int = 0, limit: Int = 10) throws -> [String] { try store.roles(nameFilter: filter, offset: offset, limit: limit).roles.map(\.name) }
        #expect(try names(nil) == ["100%_Admin", "Auditor", "Branch teller", "Teller"])
        #expect(try names("TELLER") == ["Branch teller", "Teller"] && names("%") == ["100%_Admin"] && names("_A") == ["100%_Admin"] && names("x").isEmpty)
        #expect(try names(nil, offset: 1, limit: 2) == ["Auditor", "Branch teller"] && store.roles(nameFilter: "e", offset: 0, limit: 1).total == 2)
        let teller = try #require(try store.roles(nameFilter: "Teller", offset: 0, limit: 10).roles.last)
        #expect(throws: StoreError.self) { _ = try store.updateRole(id: teller.id, name: "Auditor", description: nil, externalID: nil, at: 1, writes: []) }
        #expect(try store.updateRole(id: teller.id, name: "Cashier", description: "Front desk", externalID: "grp-1", at: 5, writes: [])
                == RoleRow(id: teller.id, name: "Cashier", description: "Front desk", externalID: "grp-1", createdAt: teller.createdAt, updatedAt: 5))
        #expect(try store.role(id: teller.id)?.externalID == "grp-1")
        #expect(try store.updateRole(id: "rol_none", name: "X", description: nil, externalID: nil, at: 1, writes: []) == nil)
    }

    @Test("permissions and members: added once, removed, read through every role an account has; a role gone takes them; an account erased takes its memberships", arguments: Backend.available)
    func grants(_ backend: Backend) throws {
        let store = try backend.open()
        let api = "https://api.example", other = "urn:other"
        let teller = Self.role("Teller"), auditor = Self.role("Auditor")
        try store.insertRole(teller, writes: [])
        try store.insertRole(auditor, writes: [])
        let read = Permission(audience: api, name: "read"), move = Permission(audience: api, name: "move"), elsewhere = Permission(audience: other, name: "read")
        #expect(try store.changeRolePermissions(roleID: teller.id, adding: [read, move, read], removing: [], at: 2, writes: []))
        #expect(try store.changeRolePermissions(roleID: auditor.id, adding: [read, elsewhere], removing: [], at: 2, writes: []))
        #expect(try !store.changeRolePermissions(roleID: "rol_none", adding: [read], removing: [], at: 2, writes: []))
        #expect(try store.rolePermissions(roleID: teller.id) == [move, read])

        let ada = user(1), grace = user(2)
        try store.createUser(ada, credential: credential(ada.id))
        try store.createUser(grace, credential: credential(grace.id))
        #expect(try store.changeUserRoles(userID: ada.id, roleIDs: [teller.id, auditor.id, teller.id], give: true, at: 3, writes: []))
        #expect(try store.changeUserRoles(userID: grace.id, roleIDs: [teller.id], give: true, at: 4, writes: []))
        #expect(try !store.changeUserRoles(userID: "nobody", roleIDs: [teller.id], give: true, at: 4, writes: []))
        // A role that is not there: refused, and the batch's audit row with it.
        let event = AuditEvent(at: 5, kind: "admin_user_roles_changed", outcome: "success", userID: grace.id)
        #expect(throws: StoreError.self) { _ = try store.changeUserRoles(userID: grace.id, roleIDs: [auditor.id, "rol_gone"], give: true, at: 5, writes: [.audit(event)]) }
        #expect(try store.userRoles(userID: grace.id).map(\.id) == [teller.id] && store.auditEvents(limit: 10).isEmpty)

        #expect(try store.userRoles(userID: ada.id).map(\.name) == ["Auditor", "Teller"])
        #expect(try store.permissionNames(userID: ada.id, audience: api) == ["move", "read"] && store.permissionNames(userID: ada.id, audience: other) == ["read"])
        #expect(try store.userPermissions(userID: ada.id).map { "\($0.permission.name)@\($0.permission.audience) \($0.roleName)" }
                == ["move@\(api) Teller", "read@\(api) Auditor", "read@\(api) Teller", "read@\(other) Auditor"])
        let members = try store.roleMembers(roleID: teller.id, offset: 0, limit: 10)
        #expect(members.users.map(\.id) == [ada.id, grace.id] && members.total == 2)
        #expect(try store.roleMembers(roleID: teller.id, offset: 1, limit: 1).users.map(\.id) == [grace.id])

        // Taken away; removing what is not there changes nothing.
        #expect(try store.changeRolePermissions(roleID: teller.id, adding: [], removing: [move, elsewhere], at: 6, writes: []))
        #expect(try store.changeUserRoles(userID: ada.id, roleIDs: [auditor.id, "rol_never"], give: false, at: 6, writes: []))
        #expect(try store.permissionNames(userID: ada.id, audience: api) == ["read"] && store.permissionNames(userID: ada.id, audience: other).isEmpty)

        // An account erased: its memberships go; a role deleted: its permissions and members go.
        #expect(try store.deleteUser(id: grace.id, pseudonym: "deleted:x", at: 7, writes: []))
        #expect(try store.roleMembers(roleID: teller.id, offset: 0, limit: 10).users.map(\.id) == [ada.id])
        #expect(try store.deleteRole(id: teller.id, writes: []))
        #expect(try !store.deleteRole(id: teller.id, writes: []))
        #expect(try store.userRoles(userID: ada.id).isEmpty && store.permissionNames(userID: ada.id, audience: api).isEmpty && store.rolePermissions(roleID: teller.id).isEmpty)
        // Members in one change: given and taken together; an account that is not there fails all of it.
        let cashier = Self.role("Cashier")
        try store.insertRole(cashier, writes: [])
        #expect(try store.changeRoleMembers(roleID: cashier.id, adding: [ada.id], removing: [], at: 8, writes: []))
        let lin = user(3)
        try store.createUser(lin, credential: credential(lin.id))
        #expect(throws: StoreError.self) { _ = try store.changeRoleMembers(roleID: cashier.id, adding: [lin.id, "nobody"], removing: [ada.id], at: 9, writes: []) }
        #expect(try store.roleMembers(roleID: cashier.id, offset: 0, limit: 10).users.map(\.id) == [ada.id])
        #expect(try store.changeRoleMembers(roleID: cashier.id, adding: [lin.id, ada.id], removing: [ada.id], at: 9, writes: []))
        #expect(try store.roleMembers(roleID: cashier.id, offset: 0, limit: 10).users.map(\.id) == [lin.id])
        #expect(try !store.changeRoleMembers(roleID: "rol_none", adding: [lin.id], removing: [], at: 9, writes: []))
        // The name is free again.
        try store.insertRole(Self.role("Teller"), writes: [])
    }
}
