import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetServer

/// `signet admin clients add|list|update|remove|rotate-secret|set-keys`: the clients kept in the
/// database, as `/api/v2/clients` keeps them.
extension Admin {
    struct ClientOutput: Encodable {
        let client_id: String
        let name: String
        let type: String
        let grants: [String]
        let scopes: [String]
        let redirect_uris: [String]
        let post_logout_redirect_uris: [String]
        let backchannel_logout_uri: String?
        let token_endpoint_auth_method: String
        let require_pushed_authorization_requests: Bool
        /// A `private_key_jwt` client's keys, by type, `kid` and `alg` (the keys themselves are in the database).
        let keys: [ManagementClient.Key]?
        /// Where a `private_key_jwt` client publishes its keys instead.
        let jwks_uri: String?
        let audiences: [String]?
        /// The roles an account needs one of for its tokens; absent: any account.
        let required_roles: [String]?
        /// The least class of sign-in its tokens are given for; absent: any.
        let minimum_acr: String?
        /// Its own session lifetimes; absent: the deployment's.
        let refresh_token: RefreshTokenLifetimes?
        let created_at: String
        var client_secret: String?
        init(_ row: ClientRow, secret: String? = nil) {
            let configured = ClientConfiguration(row)
            client_id = row.id
            name = row.name
            type = row.type
            grants = row.grants
            scopes = row.scopes
            redirect_uris = row.redirectURIs
            post_logout_redirect_uris = row.postLogoutRedirectURIs
            backchannel_logout_uri = row.backchannelLogoutURI
            token_endpoint_auth_method = configured.authenticationMethod
            require_pushed_authorization_requests = row.requirePushedRequests
            keys = ManagementClient.Key.keys(of: configured)
            jwks_uri = row.jwksURI
            audiences = row.audiences
            required_roles = row.requiredRoles
            minimum_acr = row.minimumACR
            refresh_token = RefreshTokenLifetimes(of: configured)
            created_at = Ceremonies.iso(row.createdAt)
            client_secret = secret
        }
    }

    func addClient() throws {
        guard options.positional.count == 2 else { throw AuthError.malformed("clients add takes options only") }
        let scopes = (options.values["--scope"] ?? []).flatMap { $0.split(separator: " ").map(String.init) }
        let added = try ceremonies.addClient(
            name: options.one("--name") ?? "", type: options.one("--type") ?? "", grants: options.values["--grant"] ?? [], scopes: scopes,
            redirectURIs: options.values["--redirect-uri"] ?? [], audiences: options.values["--audience"],
            postLogoutRedirectURIs: options.values["--post-logout-redirect-uri"] ?? [], backchannelLogoutURI: options.one("--backchannel-logout-uri"),
            jwks: try options.one("--jwks").map(Self.readKeys), jwksURI: options.one("--jwks-uri"), requirePushedRequests: options.requirePAR,
            requiredRoles: options.values["--require-role"], minimumACR: options.one("--minimum-acr"), refreshLifetimes: try refreshLifetimes(),
            by: .commandLine, context: context)
        let output = ClientOutput(added.client, secret: added.secret)
        if options.json { return try emit(output) }
        print("client_id      \(output.client_id)")
        if let secret = added.secret { print("client_secret  \(secret)   (shown once: store it now; Signet keeps only its hash)") }
        print("type           \(output.type)\nauth method    \(output.token_endpoint_auth_method)\ngrants         \(output.grants.joined(separator: " "))")
        if !output.scopes.isEmpty { print("scopes         \(output.scopes.joined(separator: " "))") }
        for uri in output.redirect_uris { print("redirect_uri   \(uri)") }
        for uri in output.post_logout_redirect_uris { print("post_logout    \(uri)") }
        if let uri = output.backchannel_logout_uri { print("backchannel    \(uri)") }
        if let uri = output.jwks_uri { print("jwks_uri       \(uri)   (its keys, fetched when it first authenticates)") }
        if let roles = output.required_roles { print("required roles \(roles.joined(separator: ", "))   (only accounts with one of them)") }
        if let acr = output.minimum_acr { print("minimum acr    \(acr)   (only sign-ins that reach it)") }
        if let sessions = output.refresh_token { print("sessions       \(Self.lifetimes(sessions))") }
        try noteMissingRoles(output.required_roles)
    }

    /// `idle 28800 s, absolute 86400 s, retry window 30 s` (`the deployment's` for one not set).
    static func lifetimes(_ sessions: RefreshTokenLifetimes) -> String {
        func seconds(_ value: Int?) -> String { value.map { "\($0) s" } ?? "the deployment's" }
        return "idle \(seconds(sessions.idle_token_lifetime)), absolute \(seconds(sessions.token_lifetime)), retry window \(seconds(sessions.leeway))"
    }

    /// `--refresh-ttl`, `--refresh-absolute-ttl` and `--refresh-retry-window`, together (`nil`
    /// when none is given).
    func refreshLifetimes() throws -> RefreshLifetimes? {
        let given = try ["--refresh-ttl", "--refresh-absolute-ttl", "--refresh-retry-window"].map { flag -> Int? in
            guard let text = options.one(flag) else { return nil }
            guard let seconds = Int(text) else { throw AuthError.malformed("\(flag) takes a number of seconds") }
            return seconds
        }
        return given.allSatisfy { $0 == nil } ? nil : RefreshLifetimes(idle: given[0], absolute: given[1], retryWindow: given[2])
    }

    /// A required role no role is named yet refuses everyone until one is: said at once, since
    /// a misspelt name would otherwise show only as every sign-in refused.
    func noteMissingRoles(_ names: [String]?) throws {
        for name in names ?? [] where try !ceremonies.roles(nameFilter: name, page: 0, perPage: 100).roles.contains(where: { $0.name == name }) {
            FileHandle.standardError.write(Data("note: no role is named \"\(name)\" yet: the client refuses every account until one is (signet admin roles add --name …)\n".utf8))
        }
    }

    func listClients() throws {
        let rows = try ceremonies.storedClients()
        if options.json { return try emit(rows.map { ClientOutput($0) }) }
        print(Self.table(["CLIENT ID", "NAME", "TYPE", "AUTH", "GRANTS", "SCOPES", "CREATED"], rows.map {
            [$0.id, $0.name, $0.type, ClientConfiguration($0).authenticationMethod, $0.grants.joined(separator: " "),
             $0.scopes.isEmpty ? "-" : $0.scopes.joined(separator: " "), Ceremonies.iso($0.createdAt)]
        }))
        let configured = ceremonies.configuration.clients.map(\.id)
        if !configured.isEmpty { print("and from the configuration file: \(configured.joined(separator: ", "))") }
    }

    /// `clients update ID`: each setting given replaces the client's whole (`PATCH
    /// /api/v2/clients/{id}`); the others stay.
    func updateClient(_ id: String) throws {
        var patch = ClientPatch()
        patch.name = options.one("--name")
        patch.grants = options.values["--grant"]
        patch.scopes = options.values["--scope"].map { $0.flatMap { $0.split(separator: " ").map(String.init) } }
        patch.redirectURIs = options.values["--redirect-uri"]
        patch.postLogoutRedirectURIs = options.values["--post-logout-redirect-uri"]
        if let uri = options.one("--backchannel-logout-uri") { patch.backchannelLogoutURI = .some(uri.isEmpty ? nil : uri) }
        guard !(options.defaultAudiences && options.values["--audience"] != nil), !(options.requirePAR && options.noRequirePAR) else {
            throw AuthError.malformed("give --audience or --default-audiences, and --require-par or --no-require-par, not both")
        }
        if options.defaultAudiences { patch.audiences = .some(nil) } else if let audiences = options.values["--audience"] { patch.audiences = .some(audiences) }
        if options.requirePAR || options.noRequirePAR { patch.requirePushedRequests = options.requirePAR }
        patch.jwksURI = options.one("--jwks-uri")
        guard !(options.anyRole && options.values["--require-role"] != nil) else { throw AuthError.malformed("give --require-role or --any-role, not both") }
        if options.anyRole { patch.requiredRoles = .some(nil) } else if let roles = options.values["--require-role"] { patch.requiredRoles = .some(roles) }
        guard !(options.anyACR && options.one("--minimum-acr") != nil) else { throw AuthError.malformed("give --minimum-acr or --any-acr, not both") }
        if options.anyACR { patch.minimumACR = .some(nil) } else if let acr = options.one("--minimum-acr") { patch.minimumACR = .some(acr) }
        let lifetimes = try refreshLifetimes()
        guard !(options.defaultRefresh && lifetimes != nil) else { throw AuthError.malformed("give --refresh-ttl, --refresh-absolute-ttl and --refresh-retry-window, or --default-refresh, not both") }
        patch.refreshLifetimes = options.defaultRefresh ? RefreshLifetimes(idle: nil, absolute: nil) : lifetimes
        guard patch != ClientPatch() else { throw AuthError.malformed("give at least one setting to change") }
        let output = ClientOutput(try ceremonies.updateClient(id: id, patch, by: .commandLine, context: context))
        if options.json { return try emit(output) }
        print("updated \(output.client_id): \(output.grants.joined(separator: " "))\(output.scopes.isEmpty ? "" : "; scopes " + output.scopes.joined(separator: " "))")
        for uri in output.redirect_uris { print("redirect_uri   \(uri)") }
        for uri in output.post_logout_redirect_uris { print("post_logout    \(uri)") }
        if let uri = output.backchannel_logout_uri { print("backchannel    \(uri)") }
        if let roles = output.required_roles { print("required roles \(roles.joined(separator: ", "))") }
        if let acr = output.minimum_acr { print("minimum acr    \(acr)") }
        if let sessions = output.refresh_token { print("sessions       \(Self.lifetimes(sessions))") }
        try noteMissingRoles(output.required_roles)
    }

    func removeClient(_ id: String) throws {
        try ceremonies.removeClient(id: id, by: .commandLine, context: context)
        if options.json { return try emit(["removed": id]) }
        print("removed \(id); running servers refuse it within 2 seconds")
    }

    func rotateSecret(_ id: String) throws {
        let secret = try ceremonies.rotateClientSecret(id: id, by: .commandLine, context: context).secret
        if options.json { return try emit(["client_id": id, "client_secret": secret]) }
        print("client_id      \(id)\nclient_secret  \(secret)   (shown once; the old secret stops working within 2 seconds)")
    }

    /// `clients set-keys ID --jwks FILE`: the client's keys replaced by the file's JWK Set.
    func setKeys(_ id: String) throws {
        guard let file = options.one("--jwks") else { throw AuthError.malformed("give --jwks FILE: the client's public keys as a JWK Set") }
        let count = try ceremonies.setClientKeys(id: id, jwks: Self.readKeys(file), by: .commandLine, context: context)
        struct KeysSet: Encodable { let client_id: String, keys: Int }
        if options.json { return try emit(KeysSet(client_id: id, keys: count)) }
        print("client_id      \(id)\nkeys           \(count)   (assertions signed by a key no longer listed stop working within 2 seconds)")
    }

    /// A JWK Set file's text (`-` for standard input).
    static func readKeys(_ path: String) throws -> String {
        guard let data = try? BoundedFile.read(path == "-" ? "/dev/stdin" : path, limit: 64 << 10) else {
            throw AuthError.malformed("cannot read the JWK Set \(path) (at most 64 KiB)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
