/// A role (`/api/v2/roles`, after Auth0's role-based access control): a named set of an API's
/// permissions, given to accounts; an access token for that API lists the permissions its
/// account's roles grant (``Ceremonies/permissions(userID:audience:)``).
public struct RoleRow: Sendable, Equatable {
    /// `rol_` and 16 characters.
    public var id: String
    /// One role's only.
    public var name: String
    public var description: String?
    /// An identity provider's own ID for the role, when it pushed it as a SCIM Group.
    public var externalID: String?
    public var createdAt: Int64
    public var updatedAt: Int64
    /// Read as one account's role (``Store/userRoles(userID:at:)``): when the account's
    /// membership ends, in milliseconds; `nil` for one that does not end, and for the role alone.
    public var expiresAt: Int64?
    public init(id: String, name: String, description: String?, externalID: String? = nil, createdAt: Int64, updatedAt: Int64, expiresAt: Int64? = nil) {
        self.id = id
        self.expiresAt = expiresAt
        self.externalID = externalID
        self.name = name
        self.description = description
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// An account that has a role, as the role's members are listed, and when its membership ends
/// (milliseconds; `nil`: never).
public struct RoleMember: Sendable {
    public var user: UserRecord
    public var expiresAt: Int64?
    public init(user: UserRecord, expiresAt: Int64?) {
        self.user = user
        self.expiresAt = expiresAt
    }
}

/// A membership that ended (its `expiresAt` passed), as the purge finds it: the account, the
/// role and its name for the account's history, and the end it had.
public struct EndedRole: Sendable, Equatable {
    public var userID: String
    public var roleID: String
    public var roleName: String
    public var expiresAt: Int64
    public init(userID: String, roleID: String, roleName: String, expiresAt: Int64) {
        self.userID = userID
        self.roleID = roleID
        self.roleName = roleName
        self.expiresAt = expiresAt
    }
}

/// One permission of an API (a resource server, named by its audience).
public struct Permission: Sendable, Hashable, Comparable {
    /// The API's identifier: the `aud` of its access tokens.
    public var audience: String
    /// The permission's name, as a token lists it (`read:reports`).
    public var name: String
    public init(audience: String, name: String) {
        self.audience = audience
        self.name = name
    }
    /// By API, then by name: the order lists and tokens give them in.
    public static func < (a: Permission, b: Permission) -> Bool { (a.audience, a.name) < (b.audience, b.name) }
}

/// A permission an account has, and the role it has it from (an account with two roles that
/// grant it has two of these).
public struct GrantedPermission: Sendable, Equatable {
    public var permission: Permission
    public var roleID: String
    public var roleName: String
    public init(permission: Permission, roleID: String, roleName: String) {
        self.permission = permission
        self.roleID = roleID
        self.roleName = roleName
    }
}
