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
        #expect(try store.changeUserRoles(userID: ada.id, roleIDs: [teller.id, auditor.id, teller.id], give: true, expiresAt: nil, at: 3, writes: []))
        #expect(try store.changeUserRoles(userID: grace.id, roleIDs: [teller.id], give: true, expiresAt: nil, at: 4, writes: []))
        #expect(try !store.changeUserRoles(userID: "nobody", roleIDs: [teller.id], give: true, expiresAt: nil, at: 4, writes: []))
        // A role that is not there: refused, and the batch's audit row with it.
        let event = AuditEvent(at: 5, kind: "admin_user_roles_changed", outcome: "success", userID: grace.id)
        #expect(throws: StoreError.self) { _ = try store.changeUserRoles(userID: grace.id, roleIDs: [auditor.id, "rol_gone"], give: true, expiresAt: nil, at: 5, writes: [.audit(event)]) }
        #expect(try store.userRoles(userID: grace.id, at: 0).map(\.id) == [teller.id] && store.auditEvents(limit: 10).isEmpty)

        #expect(try store.userRoles(userID: ada.id, at: 0).map(\.name) == ["Auditor", "Teller"])
        #expect(try store.permissionNames(userID: ada.id, audience: api, at: 0) == ["move", "read"] && store.permissionNames(userID: ada.id, audience: other, at: 0) == ["read"])
        #expect(try store.userPermissions(userID: ada.id, at: 0).map { "\($0.permission.name)@\($0.permission.audience) \($0.roleName)" }
                == ["move@\(api) Teller", "read@\(api) Auditor", "read@\(api) Teller", "read@\(other) Auditor"])
        let members = try store.roleMembers(roleID: teller.id, at: 0, offset: 0, limit: 10)
        #expect(members.members.map(\.user.id) == [ada.id, grace.id] && members.total == 2)
        #expect(try store.roleMembers(roleID: teller.id, at: 0, offset: 1, limit: 1).members.map(\.user.id) == [grace.id])

        // Taken away; removing what is not there changes nothing.
        #expect(try store.changeRolePermissions(roleID: teller.id, adding: [], removing: [move, elsewhere], at: 6, writes: []))
        #expect(try store.changeUserRoles(userID: ada.id, roleIDs: [auditor.id, "rol_never"], give: false, expiresAt: nil, at: 6, writes: []))
        #expect(try store.permissionNames(userID: ada.id, audience: api, at: 0) == ["read"] && store.permissionNames(userID: ada.id, audience: other, at: 0).isEmpty)

        // An account erased: its memberships go; a role deleted: its permissions and members go.
        #expect(try store.deleteUser(id: grace.id, pseudonym: "deleted:x", at: 7, writes: []))
        #expect(try store.roleMembers(roleID: teller.id, at: 0, offset: 0, limit: 10).members.map(\.user.id) == [ada.id])
        #expect(try store.deleteRole(id: teller.id, writes: []))
        #expect(try !store.deleteRole(id: teller.id, writes: []))
        #expect(try store.userRoles(userID: ada.id, at: 0).isEmpty && store.permissionNames(userID: ada.id, audience: api, at: 0).isEmpty && store.rolePermissions(roleID: teller.id).isEmpty)
        // Members in one change: given and taken together; an account that is not there fails all of it.
        let cashier = Self.role("Cashier")
        try store.insertRole(cashier, writes: [])
        #expect(try store.changeRoleMembers(roleID: cashier.id, adding: [ada.id], removing: [], expiresAt: nil, at: 8, writes: []))
        let lin = user(3)
        try store.createUser(lin, credential: credential(lin.id))
        #expect(throws: StoreError.self) { _ = try store.changeRoleMembers(roleID: cashier.id, adding: [lin.id, "nobody"], removing: [ada.id], expiresAt: nil, at: 9, writes: []) }
        #expect(try store.roleMembers(roleID: cashier.id, at: 0, offset: 0, limit: 10).members.map(\.user.id) == [ada.id])
        #expect(try store.changeRoleMembers(roleID: cashier.id, adding: [lin.id, ada.id], removing: [ada.id], expiresAt: nil, at: 9, writes: []))
        #expect(try store.roleMembers(roleID: cashier.id, at: 0, offset: 0, limit: 10).members.map(\.user.id) == [lin.id])
        #expect(try !store.changeRoleMembers(roleID: "rol_none", adding: [lin.id], removing: [], expiresAt: nil, at: 9, writes: []))
        // The name is free again.
        try store.insertRole(Self.role("Teller"), writes: [])
    }

    @Test("a role given for a time counts until its end on every read, and is given a new end by giving it again; the ended are found oldest first and deleted once with their rows, never one given a new end meanwhile", arguments: Backend.available)
    func temporary(_ backend: Backend) throws {
        let store = try backend.open()
        let api = "https://api.example"
        let admin = Self.role("Admin"), teller = Self.role("Teller")
        try store.insertRole(admin, writes: [])
        try store.insertRole(teller, writes: [])
        #expect(try store.changeRolePermissions(roleID: admin.id, adding: [Permission(audience: api, name: "admin")], removing: [], at: 1, writes: []))
        let ada = user(1), grace = user(2)
        try store.createUser(ada, credential: credential(ada.id))
        try store.createUser(grace, credential: credential(grace.id))
        #expect(try store.changeUserRoles(userID: ada.id, roleIDs: [admin.id], give: true, expiresAt: 1_000, at: 2, writes: []))
        #expect(try store.changeUserRoles(userID: ada.id, roleIDs: [teller.id], give: true, expiresAt: nil, at: 2, writes: []))
        #expect(try store.changeRoleMembers(roleID: admin.id, adding: [grace.id], removing: [], expiresAt: 2_000, at: 3, writes: []))

        // Until its end (exclusive), every read counts it; from then, none.
        #expect(try store.userRoles(userID: ada.id, at: 999).map { "\($0.name) \($0.expiresAt.map(String.init) ?? "-")" } == ["Admin 1000", "Teller -"])
        #expect(try store.userRoles(userID: ada.id, at: 1_000).map(\.name) == ["Teller"])
        #expect(try store.permissionNames(userID: ada.id, audience: api, at: 999) == ["admin"] && store.permissionNames(userID: ada.id, audience: api, at: 1_000).isEmpty)
        #expect(try store.userPermissions(userID: ada.id, at: 999).count == 1 && store.userPermissions(userID: ada.id, at: 1_000).isEmpty)
        let before = try store.roleMembers(roleID: admin.id, at: 999, offset: 0, limit: 10)
        #expect(before.members.map { "\($0.user.id) \($0.expiresAt ?? 0)" } == ["\(ada.id) 1000", "\(grace.id) 2000"] && before.total == 2)
        let after = try store.roleMembers(roleID: admin.id, at: 1_000, offset: 0, limit: 10)
        #expect(after.members.map(\.user.id) == [grace.id] && after.total == 1)

        // The ended, oldest first, to a limit; the role given for good never.
        #expect(try store.endedRoles(before: 999, limit: 10).isEmpty)
        let ended = try store.endedRoles(before: 5_000, limit: 10)
        #expect(ended == [EndedRole(userID: ada.id, roleID: admin.id, roleName: "Admin", expiresAt: 1_000), EndedRole(userID: grace.id, roleID: admin.id, roleName: "Admin", expiresAt: 2_000)])
        #expect(try store.endedRoles(before: 5_000, limit: 1) == [ended[0]])

        // Grace is given it again, for good, after the purge read it: hers stays, and its row is not written.
        #expect(try store.changeUserRoles(userID: grace.id, roleIDs: [admin.id], give: true, expiresAt: nil, at: 4, writes: []))
        let rows = ended.map { (role: $0, writes: [StoreWrite.audit(AuditEvent(at: 5_000, kind: "role_expired", outcome: "success", userID: $0.userID))]) }
        #expect(try store.deleteEndedRoles(rows) == [ended[0]])
        #expect(try store.auditEvents(limit: 10).map(\.userID) == [ada.id])
        #expect(try store.deleteEndedRoles(rows).isEmpty && store.auditEvents(limit: 10).count == 1)
        #expect(try store.userRoles(userID: grace.id, at: 10_000).map { "\($0.name) \($0.expiresAt.map(String.init) ?? "-")" } == ["Admin -"])
        #expect(try store.userRoles(userID: ada.id, at: 0).map(\.name) == ["Teller"])

        // An ended membership not purged yet lives again when given anew; one for good becomes one for a time.
        #expect(try store.changeUserRoles(userID: ada.id, roleIDs: [admin.id], give: true, expiresAt: 3_000, at: 5, writes: []))
        #expect(try store.userRoles(userID: ada.id, at: 4_000).map(\.name) == ["Teller"])
        #expect(try store.changeUserRoles(userID: ada.id, roleIDs: [admin.id, teller.id], give: true, expiresAt: 8_000, at: 4_000, writes: []))
        #expect(try store.userRoles(userID: ada.id, at: 4_000).map { "\($0.name) \($0.expiresAt ?? 0)" } == ["Admin 8000", "Teller 8000"])
        #expect(try store.endedRoles(before: 10_000, limit: 10).map(\.expiresAt) == [8_000, 8_000])

        // A page's accounts at once: what each account's own read gives, at any time; none for an account without.
        let lin = user(3)
        try store.createUser(lin, credential: credential(lin.id))
        for at: Int64 in [4_000, 8_000] {
            let batch = try store.userRoles(userIDs: [ada.id, grace.id, lin.id], at: at)
            for id in [ada.id, grace.id] { #expect((batch[id] ?? []) == (try store.userRoles(userID: id, at: at)), "\(at)") }
            #expect(batch[lin.id] == nil && batch.count == (at == 4_000 ? 2 : 1), "\(at)")
        }
        #expect(try store.userRoles(userIDs: [], at: 0).isEmpty)
    }

    @Test("a role given in an account's own writes (an import's) commits with the account, until its end; a role gone refuses the account whole", arguments: Backend.available)
    func givenWithAccount(_ backend: Backend) throws {
        let store = try backend.open()
        let teller = Self.role("Teller")
        try store.insertRole(teller, writes: [])
        let ada = user(1), grace = user(2)
        try store.perform([.createAccount(ada), .giveRole(userID: ada.id, roleID: teller.id, expiresAt: 9_000, at: 3)])
        #expect(try store.userRoles(userID: ada.id, at: 8_999).map { "\($0.name) \($0.expiresAt ?? -1)" } == ["Teller 9000"])
        #expect(try store.userRoles(userID: ada.id, at: 9_000).isEmpty)
        #expect(throws: StoreError.self) {
            try store.perform([.createAccount(grace), .giveRole(userID: grace.id, roleID: teller.id, expiresAt: nil, at: 3), .giveRole(userID: grace.id, roleID: "rol_gone", expiresAt: nil, at: 3)])
        }
        #expect(try store.user(id: grace.id) == nil && store.roleMembers(roleID: teller.id, at: 0, offset: 0, limit: 10).members.map(\.user.id) == [ada.id])
    }
}
