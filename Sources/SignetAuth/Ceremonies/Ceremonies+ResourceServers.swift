public import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// The APIs tokens may be for, as Auth0's `/api/v2/resource-servers` lists them, so that a
/// tool written for Auth0 (an admin console choosing a role's permissions, a deployment check)
/// finds each API and its permissions. Signet keeps no API records: they are the audiences of
/// the configuration (`audiences`, each client's `audiences`, `tokens.permissions`) and of the
/// clients kept in the database, with Signet's own two first.
extension Ceremonies {
    /// `GET /api/v2/resource-servers`: a page of ``allResourceServers()`` (Auth0's `page` and
    /// `per_page`), and how many there are.
    public func resourceServers(page: Int, perPage: Int) throws -> (servers: ArraySlice<ManagementResourceServer>, total: Int) {
        let window = try Self.page(page, perPage)
        let all = try allResourceServers()
        return (all.dropFirst(window.offset).prefix(window.limit), all.count)
    }

    /// Every API, Signet's own first (the account API, then the Management API), then the others
    /// by identifier.
    func allResourceServers() throws -> [ManagementResourceServer] {
        var audiences = Set(configuration.audiences).union(configuration.apiPermissions.keys).union(configuration.apiTokenLifetimes.keys)
        for client in configuration.clients { audiences.formUnion(client.audiences ?? []) }
        for row in try storedClients() { audiences.formUnion(row.audiences ?? []) }
        audiences.subtract([configuration.accountAudience, configuration.managementAudience])
        let management = ManagementScope.allCases.map { ManagementResourceServer.Scope(value: $0.rawValue, description: Self.describe($0.rawValue)) }
        return [
            resourceServer(configuration.accountAudience, system: true, scopes: [], offline: true),
            resourceServer(configuration.managementAudience, system: true, scopes: management, offline: false),
        ] + audiences.sorted().map { audience in
            let permissions = configuration.apiPermissions[audience]
            let scopes = (permissions ?? [:]).sorted { $0.key < $1.key }.map { ManagementResourceServer.Scope(value: $0.key, description: $0.value) }
            return resourceServer(audience, system: false, scopes: scopes, offline: true, permissions: permissions != nil)
        }
    }

    /// One API by its ``ManagementResourceServer/id`` or, as Auth0 also takes, its identifier;
    /// 404 `resource_server_not_found` for another.
    public func resourceServer(id: String) throws -> ManagementResourceServer {
        guard let found = try allResourceServers().first(where: { $0.id == id || $0.identifier == id }) else {
            throw AuthError(.resourceServerNotFound, "no API \(id.prefix(64))")
        }
        return found
    }

    private func resourceServer(_ audience: String, system: Bool, scopes: [ManagementResourceServer.Scope], offline: Bool, permissions: Bool = false) -> ManagementResourceServer {
        ManagementResourceServer(id: Self.resourceServerID(audience), identifier: audience, system: system, scopes: scopes, offline: offline,
                                 lifetime: configuration.accessTokenLifetime(for: audience), permissions: permissions)
    }

    /// `rs_` and the first 16 characters of the identifier's SHA-256 in base64url: the same on
    /// every instance and after a restart, and safe in a path.
    static func resourceServerID(_ audience: String) -> String {
        "rs_" + Base64URL.encode(Digest.sha256.hash(Array(audience.utf8))).prefix(16)
    }

    /// `read:role_members` as `Read role members`.
    static func describe(_ scope: String) -> String {
        let words = String(scope.map { $0 == ":" || $0 == "_" ? " " : $0 })
        return words.prefix(1).uppercased() + words.dropFirst()
    }
}
