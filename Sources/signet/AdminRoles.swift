import Foundation
import SignetAPI
import SignetAuth
import SignetServer

/// `signet admin roles`: what `/api/v2/roles` does. Permissions granted must be ones
/// `tokens.permissions` names, so the command reads the deployment's configuration
/// (`--config`, or the environment).
extension Admin {
    func listRoles() throws {
        let found = try ceremonies.roles(nameFilter: options.one("--query"), page: try Self.integer(options.one("--page"), "--page", default: 0), perPage: 100)
        let roles = found.roles.map(ManagementRole.init)
        if options.json { return try emit(roles) }
        print(Self.table(["ID", "NAME", "DESCRIPTION"], roles.map { [$0.id, Self.printable($0.name), Self.printable($0.description ?? "-")] }))
        print("\(roles.count) of \(found.total) role(s)")
    }

    func addRole() throws {
        guard options.positional.count == 2 else { throw AuthError.malformed("roles add takes --name NAME [--description TEXT]") }
        let role = try ceremonies.createRole(name: options.one("--name"), description: options.one("--description"), by: .commandLine, context: context)
        if options.json { return try emit(ManagementRole(role)) }
        print("added role \(role.id): \(Self.printable(role.name))")
    }

    /// The role, what it grants, and its first 100 members.
    func showRole(_ id: String) throws {
        let role = ManagementRole(try ceremonies.role(id: id))
        let permissions = try ceremonies.rolePermissions(id: id)
        let members = try ceremonies.roleMembers(id: id, page: 0, perPage: 100)
        if options.json {
            struct Shown: Encodable {
                let role: ManagementRole
                let permissions: [ManagementPermission]
                let users: [ManagementRoleMember]
                let users_total: Int
            }
            return try emit(Shown(role: role, permissions: permissions.map { ManagementPermission($0, ceremonies.configuration) },
                                  users: members.members.map(ManagementRoleMember.init), users_total: members.total))
        }
        print("role \(role.id): \(Self.printable(role.name))" + (role.description.map { " (\(Self.printable($0)))" } ?? ""))
        print(Self.table(["API", "PERMISSION", "DESCRIPTION"], permissions.map {
            [Self.printable($0.audience), Self.printable($0.name), Self.printable(ceremonies.configuration.apiPermissions[$0.audience]?[$0.name] ?? "(not in tokens.permissions)")]
        }))
        print(Self.table(["USER", "EMAIL", "UNTIL"], members.members.map { [$0.user.id, Self.printable($0.user.email), $0.expiresAt.map(Ceremonies.iso) ?? "-"] }))
        print("\(permissions.count) permission(s), \(members.total) member(s)")
    }

    /// `grant` and `revoke`: `--api AUDIENCE --permission NAME [--permission NAME]...`.
    func changeRolePermissions(_ id: String, add: Bool) throws {
        guard let api = options.one("--api"), let names = options.values["--permission"] else {
            throw AuthError.malformed("roles \(add ? "grant" : "revoke") takes ID --api AUDIENCE --permission NAME [--permission NAME]...")
        }
        try ceremonies.changeRolePermissions(id: id, names.map { Permission(audience: api, name: $0) }, add: add, by: .commandLine, context: context)
        if !options.json { print("\(add ? "granted" : "revoked") \(names.joined(separator: ", ")) of \(api) \(add ? "to" : "from") role \(id)") }
    }

    /// `assign` and `unassign`: `ID USER_ID [USER_ID]...`, in one transaction, each account
    /// checked before; `assign` takes `--for DURATION` or `--until TIME` for a role that ends.
    func changeRoleMembers(give: Bool) throws {
        let users = Array(options.positional.dropFirst(3))
        guard let id = options.positional.dropFirst(2).first, !users.isEmpty else {
            throw AuthError.malformed("roles \(give ? "assign" : "unassign") takes ID USER_ID [USER_ID]...\(give ? " [--for DURATION | --until TIME]" : "")")
        }
        let now = ceremonies.nowMillis
        let end: Int64?
        switch (options.one("--for"), options.one("--until")) {
        case (nil, nil): end = nil
        case (let duration?, nil) where give:
            guard let seconds = Self.duration(duration) else { throw AuthError.malformed("--for takes a duration such as 90m, 4h or 7d") }
            end = now + seconds * 1000
        case (nil, let time?) where give: end = try Ceremonies.roleEnd(time, now: now)
        default: throw AuthError.malformed(give ? "give --for or --until, not both" : "unassign takes no --for or --until: it takes the role now")
        }
        try ceremonies.changeRoleMembers(id: id, users: users, give: give, until: end, by: .commandLine, context: context)
        if !options.json { print("\(give ? "gave" : "took") role \(id) \(give ? "to" : "from") \(users.count) user(s)" + (end.map { " until \(Ceremonies.iso($0))" } ?? "")) }
    }

    /// `90m`, `4h`, `7d` (or `300s`) as seconds: a whole number of at most six digits and its unit.
    static func duration(_ text: String) -> Int64? {
        guard let unit = text.last, let count = Int64(text.dropLast()), count > 0, text.count <= 7 else { return nil }
        switch unit {
        case "s": return count
        case "m": return count * 60
        case "h": return count * 3600
        case "d": return count * 86_400
        default: return nil
        }
    }

    func removeRole(_ id: String) throws {
        try ceremonies.deleteRole(id: id, by: .commandLine, context: context)
        if !options.json { print("removed role \(id)") }
    }
}
