import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// A client added by an administrator, with its secret: shown this once, kept only as a hash.
public struct AddedClient: Sendable {
    public let client: ClientRow
    public let secret: String?
}

/// Clients kept in the database (DESIGN.md, "Management API and operations": `signet admin
/// clients`). A running server sees a change within ``ClientDirectory``'s refresh interval.
extension Ceremonies {
    /// Adds a client. A confidential client gets a new 32-byte secret, or authenticates with
    /// `jwks` or `jwksURI` alone (`private_key_jwt`); `client_credentials` is for confidential
    /// clients only.
    /// The caller grants no Management API scope it lacks itself.
    public func addClient(name: String, type: String, grants: [String], scopes: [String], redirectURIs: [String], audiences: [String]?,
                          postLogoutRedirectURIs: [String] = [], backchannelLogoutURI: String? = nil, jwks: String? = nil, jwksURI: String? = nil,
                          requirePushedRequests: Bool = false, requiredRoles: [String]? = nil, minimumACR: String? = nil,
                          refreshLifetimes: RefreshLifetimes? = nil, by caller: ManagementCaller, context: RequestContext) throws -> AddedClient {
        guard type == "confidential" || type == "public" else { throw AuthError.malformed("the type must be confidential or public") }
        let keys = try jwks.map(Self.keySet)?.text
        // A client with keys authenticates with them alone: it has no secret to leak.
        let secret = type == "confidential" && keys == nil && jwksURI == nil ? Base64URL.encode(random(32)) : nil
        let row = ClientRow(id: "c_" + Base64URL.encode(random(12)), name: name, type: type, secretHash: secret.map { Digest.sha256.hash(Array($0.utf8)) },
                            grants: grants, scopes: scopes, redirectURIs: redirectURIs, audiences: audiences, createdAt: nowMillis,
                            postLogoutRedirectURIs: postLogoutRedirectURIs, backchannelLogoutURI: backchannelLogoutURI, jwks: keys,
                            requirePushedRequests: requirePushedRequests, jwksURI: jwksURI, requiredRoles: requiredRoles, minimumACR: minimumACR,
                            refreshTokenLifetime: refreshLifetimes?.idle, refreshTokenAbsoluteLifetime: refreshLifetimes?.absolute,
                            refreshTokenRetryWindow: refreshLifetimes?.retryWindow)
        try Self.validate(row, permissions: apiPermissionNames)
        try Self.requireHeld(scopes, by: caller)
        // Each change to the clients commits with its audit row.
        let method = keys != nil ? ", private_key_jwt" : jwksURI != nil ? ", private_key_jwt by jwks_uri" : ""
        let event = pendingAuditEvent(.adminClientAdded, client: caller.clientID, detail: "client \(row.id) (\(type)\(method)): \(grants.joined(separator: " "))", context: context)
        try store.insertClient(row, writes: [.audit(event)])
        counted(event)
        clients.invalidate()
        if let uri = row.jwksURI { clientKeys.prefetch([(row.id, uri)]) }
        return AddedClient(client: row, secret: secret)
    }

    /// What a client kept in the database may hold, whoever sets it: checked when it is added and
    /// after every change. Lists are stored as words, so no element may hold a space. Its scopes
    /// are the Management API's, or `permissions` (the names `tokens.permissions` gives your APIs:
    /// a machine client's, in its tokens for them).
    package static func validate(_ row: ClientRow, permissions: Set<String> = []) throws {
        if row.jwks != nil || row.jwksURI != nil, row.type != "confidential" { throw AuthError.malformed("keys (private_key_jwt) are for a confidential client") }
        if row.jwks != nil, row.jwksURI != nil { throw AuthError.malformed("give the keys (jwks) or where they are published (jwks_uri), not both") }
        if let uri = row.jwksURI, !Self.isClientEndpointURI(uri) {
            throw AuthError.malformed("jwks_uri (--jwks-uri) must be an https URI without a fragment (http only to a loopback address)")
        }
        guard !row.name.isEmpty, row.name.count <= 100 else { throw AuthError.malformed("the name must be 1 to 100 characters") }
        guard !row.grants.isEmpty else { throw AuthError.malformed("give at least one grant (\(GrantNames.known.joined(separator: ", ")))") }
        if let unknown = row.grants.first(where: { !GrantNames.known.contains($0) }) {
            throw AuthError.malformed("unknown grant \"\(unknown.prefix(100))\" (known: \(GrantNames.known.joined(separator: ", ")))")
        }
        if row.grants.contains(GrantNames.clientCredentials), row.type != "confidential" {
            throw AuthError.malformed("client_credentials is for a confidential client")
        }
        if let unknown = row.scopes.first(where: { ManagementScope(rawValue: $0) == nil && !permissions.contains($0) }) {
            throw AuthError.malformed("unknown scope \"\(unknown.prefix(100))\" (known: \(ManagementScope.allCases.map(\.rawValue).joined(separator: " ")), and the permissions of tokens.permissions)")
        }
        for (list, what) in [(row.redirectURIs, "redirect URIs"), (row.postLogoutRedirectURIs, "post-logout redirect URIs"), (row.audiences ?? [], "audiences")]
        where list.count > 100 {
            throw AuthError.malformed("at most 100 \(what)")
        }
        for uri in row.redirectURIs + row.postLogoutRedirectURIs where !Self.isRedirectURI(uri) {
            throw AuthError.malformed("\"\(uri.prefix(100))\" is not an absolute redirect URI without a fragment")
        }
        if let audience = row.audiences?.first(where: { $0.isEmpty || $0.utf8.count > 500 || $0.utf8.contains(where: Self.isSpaceOrControl) }) {
            throw AuthError.malformed("the audience \"\(audience.prefix(100))\" must be 1 to 500 bytes without spaces or control characters")
        }
        if row.requirePushedRequests, !row.grants.contains(GrantNames.authorizationCode) {
            throw AuthError.malformed("pushed authorization requests are for a client with the authorization_code grant")
        }
        if let uri = row.backchannelLogoutURI, !Self.isClientEndpointURI(uri) {
            throw AuthError.malformed("the back-channel logout URI (--backchannel-logout-uri, oidc_logout) must be an https URI without a fragment (http only to a loopback address)")
        }
        if let roles = row.requiredRoles, let problem = requiredRolesProblem(roles) { throw AuthError.malformed("required_roles (--require-role): \(problem)") }
        if let acr = row.minimumACR, let problem = minimumACRProblem(acr) { throw AuthError.malformed("\(problem) (--minimum-acr)") }
        for (seconds, what) in [(row.refreshTokenLifetime, "idle_token_lifetime (--refresh-ttl)"), (row.refreshTokenAbsoluteLifetime, "token_lifetime (--refresh-absolute-ttl)")] {
            if let seconds, !refreshLifetimeRange.contains(seconds) {
                throw AuthError.malformed("refresh_token.\(what) must be \(refreshLifetimeRange.lowerBound) to \(refreshLifetimeRange.upperBound) seconds")
            }
        }
        if let window = row.refreshTokenRetryWindow, !refreshRetryWindowRange.contains(window) {
            throw AuthError.malformed("refresh_token.leeway (--refresh-retry-window) must be \(refreshRetryWindowRange.lowerBound) to \(refreshRetryWindowRange.upperBound) seconds")
        }
    }

    /// A space, a control character or DEL: never part of a URI (RFC 3986 §2), nor of a word of
    /// a stored list.
    static func isSpaceOrControl(_ byte: UInt8) -> Bool { byte <= 0x20 || byte == 0x7F }

    /// A caller that gives or touches a client's Management API scopes must hold each of them
    /// itself: a token for clients cannot make a client, or a credential, worth more than it.
    static func requireHeld(_ scopes: [String], by caller: ManagementCaller) throws {
        if let missing = scopes.first(where: { ManagementScope(rawValue: $0) != nil && !caller.scopes.contains($0) }) {
            throw AuthError(.insufficientScope, "the caller does not hold \(missing), which the client has or would have")
        }
    }

    /// An absolute URI with a scheme, no fragment and no space (RFC 6749 §3.1.2): `https://...`, a loopback
    /// `http://127.0.0.1/...`, or an app's private-use scheme (RFC 8252 §7.1).
    public static func isRedirectURI(_ uri: String) -> Bool {
        // `#` as a byte: followed by a combining mark it is part of another Character.
        guard uri.utf8.count <= 2000, !uri.utf8.contains(where: { $0 == UInt8(ascii: "#") || isSpaceOrControl($0) }), let colon = uri.firstIndex(of: ":"), colon != uri.startIndex else { return false }
        let scheme = uri[..<colon]
        return scheme.allSatisfy { $0.isLetter || $0.isNumber || $0 == "." || $0 == "+" || $0 == "-" } && uri.index(after: colon) != uri.endIndex
    }

    /// Every client in the database.
    public func storedClients() throws -> [ClientRow] { try store.clientRows() }

    /// `GET /api/v2/clients`: `limit` clients from `offset` of every client, the configuration
    /// file's first, then the database's oldest first (only that page read from it), and how
    /// many there are in all.
    public func clientPage(offset: Int, limit: Int) throws -> (configured: ArraySlice<ClientConfiguration>, stored: [ClientRow], total: Int) {
        let configured = configuration.clients.dropFirst(min(offset, configuration.clients.count)).prefix(limit)
        let storedOffset = max(0, offset - configuration.clients.count), storedLimit = limit - configured.count
        let stored = storedLimit > 0 ? try store.clientRows(offset: storedOffset, limit: storedLimit) : []
        return (configured, stored, configuration.clients.count + (try store.clientCount()))
    }

    /// The client the configuration file sets under `id`, if any: the API reads it, never changes it.
    public func configuredClient(id: String) -> ClientConfiguration? { configuration.clients.first { $0.id == id } }

    /// The client kept in the database under `id`; one from the configuration file is 409
    /// `client_configured` (it is changed there), and none 404 `client_not_found`.
    public func storedClient(id: String) throws -> ClientRow {
        if configuredClient(id: id) != nil { throw AuthError(.clientConfigured, "client \(id) is set in the configuration file") }
        guard id.utf8.count <= ClientDirectory.maxStoredID, let row = try store.clientRow(id: id) else { throw AuthError(.clientNotFound, "no client \(id.prefix(64)) in the database") }
        return row
    }

    /// `signet admin clients remove`: a client added to the database goes, and every session
    /// issued to it ends in the same transaction (an app withdrawn, or its secret leaked).
    public func removeClient(id: String, by caller: ManagementCaller, context: RequestContext) throws {
        try Self.requireHeld(try storedClient(id: id).scopes, by: caller)
        // Its sessions end with it: their access tokens are refused at once, not only at the next refresh.
        var event: AuditEvent?
        guard try store.deleteClient(id: id, at: nowMillis, writes: { ended in
            let removed = pendingAuditEvent(.adminClientRemoved, client: caller.clientID, detail: "client \(id), \(ended) session(s) ended", context: context)
            event = removed
            return [.audit(removed)]
        }) != nil else { throw AuthError(.clientNotFound, "no client \(id.prefix(64)) in the database") }
        event.map(counted)
        clients.invalidate()
    }

    /// Changes a client kept in the database: `change` edits a copy of its row, which is checked
    /// as a new client is (``validate(_:)``) and written only if the row is still as read, with
    /// its `kind` audit row. The caller must hold every Management API scope the client has
    /// before and after.
    @discardableResult
    func changeClient(id: String, _ kind: AuditKind, detail: String, by caller: ManagementCaller, context: RequestContext,
                      _ change: (inout ClientRow) throws -> Void) throws -> ClientRow {
        let before = try storedClient(id: id)
        var after = before
        try change(&after)
        after.id = before.id
        after.type = before.type
        after.createdAt = before.createdAt
        try Self.validate(after, permissions: apiPermissionNames)
        try Self.requireHeld(before.scopes + after.scopes, by: caller)
        let event = pendingAuditEvent(kind, client: caller.clientID, detail: "client \(id): \(detail)", context: context)
        switch try store.updateClient(after, expected: before, writes: [.audit(event)]) {
        case nil: throw AuthError(.clientNotFound, "no client \(id.prefix(64)) in the database")
        case false?: throw AuthError(.conflict, "client \(id.prefix(64)) changed meanwhile: read it again and repeat the change")
        case true?: break
        }
        counted(event)
        clients.invalidate()
        if let uri = after.jwksURI { clientKeys.prefetch([(id, uri)]) }
        return after
    }

    /// At start: the published keys of every client with a `jwks_uri` (the file's and the
    /// database's) fetched in the background, so that no client's first assertion after a
    /// restart waits for its key server.
    public func prefetchClientKeys() {
        let stored = ((try? storedClients()) ?? []).compactMap { row in row.jwksURI.map { (clientID: row.id, uri: $0) } }
        clientKeys.prefetch(configuration.clients.compactMap { client in client.jwksURI.map { (clientID: client.id, uri: $0) } } + stored)
    }

    /// `PATCH /api/v2/clients/{id}`: the settings `patch` names, changed together.
    public func updateClient(id: String, _ patch: ClientPatch, by caller: ManagementCaller, context: RequestContext) throws -> ClientRow {
        guard patch != ClientPatch() else { throw AuthError.malformed("send at least one setting to change") }
        let keys = try patch.jwks.map(Self.keySet)
        if keys != nil || patch.jwksURI != nil, !caller.scopes.contains(ManagementScope.updateClientKeys.rawValue) {
            throw AuthError(.insufficientScope, "new keys need update:client_keys")
        }
        guard keys == nil || patch.jwksURI == nil else { throw AuthError.malformed("give the keys (jwks) or where they are published (jwks_uri), not both") }
        return try changeClient(id: id, .adminClientUpdated, detail: patch.names.joined(separator: ", "), by: caller, context: context) { row in
            if keys != nil || patch.jwksURI != nil {
                guard row.usesKeys else { throw AuthError.malformed("client \(id.prefix(64)) authenticates with a secret, not keys") }
                // One place for the keys: the set given, or where the client publishes it.
                (row.jwks, row.jwksURI) = (keys?.text, patch.jwksURI)
            }
            patch.apply(to: &row)
        }
    }

    /// New keys for a `private_key_jwt` client (a JWK Set; OIDC Core §9): assertions signed by a
    /// key it no longer lists stop verifying within the refresh interval of every running
    /// server. To roll a key over without a gap, list the old and the new key, move the client
    /// to the new one, then list the new one alone.
    public func setClientKeys(id: String, jwks: String, by caller: ManagementCaller, context: RequestContext) throws -> Int {
        let (keys, count) = try Self.keySet(jwks)
        try changeClient(id: id, .adminClientKeysSet, detail: "\(count) key(s)", by: caller, context: context) { row in
            guard row.usesKeys else { throw AuthError(.clientNotFound, "no private_key_jwt client \(id.prefix(64)) in the database") }
            (row.jwks, row.jwksURI) = (keys, nil)
        }
        return count
    }

    /// A JWK Set given by an administrator, checked (``JWKSet/keys(text:)``) and written back as
    /// compact JSON of its keys alone, with how many there are.
    static func keySet(_ text: String) throws -> (text: String, count: Int) {
        do {
            let keys = try JWKSet.keys(text: text)
            return (JSONValue.object(["keys": .array(keys.map(JSONValue.object))]).serialized, keys.count)
        } catch {
            throw AuthError.malformed("the JWK Set: \(error.detail)")
        }
    }

    /// A new secret for a confidential client; the old one stops working within the refresh
    /// interval of every running server.
    public func rotateClientSecret(id: String, by caller: ManagementCaller, context: RequestContext) throws -> (client: ClientRow, secret: String) {
        let secret = Base64URL.encode(random(32))
        let row = try changeClient(id: id, .adminClientSecretRotated, detail: "new secret", by: caller, context: context) { row in
            guard row.type == "confidential", !row.usesKeys else { throw AuthError(.clientNotFound, "no confidential client with a secret \(id.prefix(64)) in the database") }
            row.secretHash = Digest.sha256.hash(Array(secret.utf8))
        }
        return (row, secret)
    }
}

/// The settings `PATCH /api/v2/clients/{id}` may change; `nil` leaves one as it is. A client's
/// ID, type and creation time never change; its secret and keys change by their own calls or
/// with `jwks`.
public struct ClientPatch: Sendable, Equatable {
    public var name: String?
    public var grants: [String]?
    public var scopes: [String]?
    public var redirectURIs: [String]?
    public var postLogoutRedirectURIs: [String]?
    /// `.some(nil)` removes the client's back-channel logout URI.
    public var backchannelLogoutURI: String??
    /// `.some(nil)`: the deployment's audiences again.
    public var audiences: [String]??
    public var requirePushedRequests: Bool?
    /// A new JWK Set for a `private_key_jwt` client (needs `update:client_keys`).
    public var jwks: String?
    /// Where a `private_key_jwt` client publishes its keys from now on (needs
    /// `update:client_keys`); replaces its registered keys.
    public var jwksURI: String?
    /// `.some(nil)`: any account again.
    public var requiredRoles: [String]??
    /// `.some(nil)`: any sign-in again.
    public var minimumACR: String??
    /// Its sessions' idle and absolute lifetimes and retry window (Auth0's `refresh_token`),
    /// replaced together; all `nil`: the deployment's again.
    public var refreshLifetimes: RefreshLifetimes?
    public init() {}

    /// The settings named, for the audit row.
    var names: [String] {
        [("name", name != nil), ("grant_types", grants != nil), ("scopes", scopes != nil), ("callbacks", redirectURIs != nil),
         ("allowed_logout_urls", postLogoutRedirectURIs != nil), ("oidc_logout", backchannelLogoutURI != nil), ("audiences", audiences != nil),
         ("require_pushed_authorization_requests", requirePushedRequests != nil), ("jwks", jwks != nil), ("jwks_uri", jwksURI != nil),
         ("required_roles", requiredRoles != nil), ("minimum_acr", minimumACR != nil), ("refresh_token", refreshLifetimes != nil)].filter(\.1).map(\.0)
    }

    func apply(to row: inout ClientRow) {
        if let name { row.name = name }
        if let grants { row.grants = grants }
        if let scopes { row.scopes = scopes }
        if let redirectURIs { row.redirectURIs = redirectURIs }
        if let postLogoutRedirectURIs { row.postLogoutRedirectURIs = postLogoutRedirectURIs }
        if let backchannelLogoutURI { row.backchannelLogoutURI = backchannelLogoutURI }
        if let audiences { row.audiences = audiences }
        if let requirePushedRequests { row.requirePushedRequests = requirePushedRequests }
        if let requiredRoles { row.requiredRoles = requiredRoles }
        if let minimumACR { row.minimumACR = minimumACR }
        if let refreshLifetimes {
            (row.refreshTokenLifetime, row.refreshTokenAbsoluteLifetime, row.refreshTokenRetryWindow) = (refreshLifetimes.idle, refreshLifetimes.absolute, refreshLifetimes.retryWindow)
        }
    }
}

/// A client's own session lifetimes in seconds (Auth0's `refresh_token.idle_token_lifetime` and
/// `token_lifetime`), and the window in which a refresh whose answer was lost may be sent again
/// (`leeway`); `nil` for the deployment's.
public struct RefreshLifetimes: Sendable, Equatable {
    public var idle: Int?
    public var absolute: Int?
    public var retryWindow: Int?
    public init(idle: Int?, absolute: Int?, retryWindow: Int? = nil) {
        self.idle = idle
        self.absolute = absolute
        self.retryWindow = retryWindow
    }
}
