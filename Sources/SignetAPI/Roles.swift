/// A role (`/api/v2/roles`, Auth0's shape).
public struct ManagementRole: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var description: String?
    /// As one account's role, given for a time: when it ends (ISO 8601). Absent for a role given
    /// for good, and for the role alone. Signet's own member: Auth0 has no role that ends.
    public var expires_at: String?
    public init(id: String, name: String, description: String?, expires_at: String? = nil) {
        self.id = id
        self.name = name
        self.description = description
        self.expires_at = expires_at
    }
}

/// One of an API's permissions, as a role holds it (`/api/v2/roles/{id}/permissions`). An API
/// has no name of its own here: `resource_server_name` is its identifier.
public struct ManagementPermission: Codable, Sendable, Equatable {
    public var permission_name: String
    /// From `tokens.permissions`; `nil` for one the setting no longer names (tokens leave it out).
    public var description: String?
    public var resource_server_identifier: String
    public var resource_server_name: String
    public init(permission_name: String, description: String?, resource_server_identifier: String) {
        self.permission_name = permission_name
        self.description = description
        self.resource_server_identifier = resource_server_identifier
        resource_server_name = resource_server_identifier
    }
}

/// A permission a user has (`/api/v2/users/{id}/permissions`), with the roles it comes from.
public struct ManagementUserPermission: Codable, Sendable, Equatable {
    /// Where the account has the permission from: a role.
    public struct Source: Codable, Sendable, Equatable {
        public var source_id: String
        public var source_name: String
        /// `ROLE`: the only source here.
        public var source_type: String
        public init(source_id: String, source_name: String) {
            self.source_id = source_id
            self.source_name = source_name
            source_type = "ROLE"
        }
    }
    public var permission_name: String
    public var description: String?
    public var resource_server_identifier: String
    public var resource_server_name: String
    public var sources: [Source]
    public init(_ permission: ManagementPermission, sources: [Source]) {
        permission_name = permission.permission_name
        description = permission.description
        resource_server_identifier = permission.resource_server_identifier
        resource_server_name = permission.resource_server_name
        self.sources = sources
    }
}

/// A member of a role (`/api/v2/roles/{id}/users`).
public struct ManagementRoleMember: Codable, Sendable, Equatable {
    public var user_id: String
    public var email: String
    public var name: String?
    /// When the account's membership ends (ISO 8601), for one given for a time; absent for good.
    public var expires_at: String?
    public init(user_id: String, email: String, name: String?, expires_at: String? = nil) {
        self.user_id = user_id
        self.email = email
        self.name = name
        self.expires_at = expires_at
    }
}

/// An API tokens may be for (`/api/v2/resource-servers`, Auth0's shape): read from the
/// configuration and the clients, never changed through the API.
public struct ManagementResourceServer: Codable, Sendable, Equatable {
    /// A permission of the API, as Auth0 calls them: a scope.
    public struct Scope: Codable, Sendable, Equatable {
        public var value: String
        public var description: String
        public init(value: String, description: String) {
            self.value = value
            self.description = description
        }
    }
    /// `rs_` and 16 characters, the same on every instance: derived from the identifier.
    public var id: String
    /// The identifier: an API has no name of its own here.
    public var name: String
    /// The audience its tokens carry (`aud`).
    public var identifier: String
    /// Signet's own APIs: its account API (`{issuer}/me`) and the Management API.
    public var is_system: Bool
    public var scopes: [Scope]
    /// `ES256`: every token Signet signs.
    public var signing_alg: String
    public var allow_offline_access: Bool
    /// Seconds its access tokens live (`tokens.api_token_ttl`, else `tokens.access_token_ttl`).
    public var token_lifetime: Int
    public var token_lifetime_for_web: Int
    public var skip_consent_for_verifiable_first_party_clients: Bool
    /// Role-based access control: on for an API of `tokens.permissions`.
    public var enforce_policies: Bool
    /// `access_token_authz` when its tokens carry `permissions`, else `access_token`.
    public var token_dialect: String
    public init(id: String, identifier: String, system: Bool, scopes: [Scope], offline: Bool, lifetime: Int, permissions: Bool) {
        self.id = id
        name = identifier
        self.identifier = identifier
        is_system = system
        self.scopes = scopes
        signing_alg = "ES256"
        allow_offline_access = offline
        token_lifetime = lifetime
        token_lifetime_for_web = lifetime
        skip_consent_for_verifiable_first_party_clients = true
        enforce_policies = permissions
        token_dialect = permissions ? "access_token_authz" : "access_token"
    }
}
