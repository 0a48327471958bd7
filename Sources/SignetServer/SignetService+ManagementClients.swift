package import SignetAPI
package import SignetAuth
import SignetHTTP
package import SignetWebAuthn

/// `/api/v2/clients`: every client, as `signet admin clients` sees them, with Auth0's paths and
/// names. Those of the configuration file come first and are only read here (they are changed
/// there); those kept in the database follow, oldest first, and are made and changed here.
extension SignetService {
    static func addManagementClientRoutes(_ r: inout Router<SignetService>) {
        r.add("GET", "/api/v2/clients", needs: .management(.readClients)) { s, call in
            let q = call.request.query
            let fields = try Self.userFields(q)
            let page = try Self.integer(q["page"], "page", default: 0), perPage = try Self.integer(q["per_page"], "per_page", default: 50)
            guard page >= 0, (1...100).contains(perPage) else { throw AuthError.malformed("page must be 0 or more and per_page 1 to 100") }
            let found = try s.ceremonies.clientPage(offset: page * perPage, limit: perPage)
            let slice = found.configured.map(ManagementClient.init) + found.stored.map { ManagementClient($0) }
            let clients = JSONValue.array(try slice.map { try Self.selecting(fields, Wire.value($0)) })
            guard q["include_totals"] == "true" else { return .json(200, Array(clients.serialized.utf8)) }
            let totals: JSONObject = ["start": .number(String(page * perPage)), "limit": .number(String(perPage)), "length": .number(String(slice.count)),
                                      "total": .number(String(found.total)), "clients": clients]
            return .json(200, Array(JSONValue.object(totals).serialized.utf8))
        }
        r.add("GET", "/api/v2/clients/{id}", needs: .management(.readClients)) { s, call in
            let id = call.parameter("id")
            let client = try Wire.value(s.ceremonies.configuredClient(id: id).map(ManagementClient.init) ?? ManagementClient(s.ceremonies.storedClient(id: id)))
            return .json(200, Array(try Self.selecting(try Self.userFields(call.request.query), client).serialized.utf8))
        }
        r.add("POST", "/api/v2/clients", needs: .management(.createClients)) { s, call in
            let new = try NewClient(wire: s.body(call))
            let added = try s.ceremonies.addClient(
                name: new.name, type: new.type, grants: new.patch.grants ?? [], scopes: new.patch.scopes ?? [], redirectURIs: new.patch.redirectURIs ?? [],
                audiences: new.patch.audiences ?? nil, postLogoutRedirectURIs: new.patch.postLogoutRedirectURIs ?? [],
                backchannelLogoutURI: new.patch.backchannelLogoutURI ?? nil, jwks: new.patch.jwks, jwksURI: new.patch.jwksURI,
                requirePushedRequests: new.patch.requirePushedRequests ?? false, requiredRoles: new.patch.requiredRoles ?? nil, minimumACR: new.patch.minimumACR ?? nil,
                refreshLifetimes: new.patch.refreshLifetimes,
                by: call.administrator, context: call.context)
            return try Wire.encode(ManagementClient(added.client, secret: added.secret), status: 201)
        }
        r.add("PATCH", "/api/v2/clients/{id}", needs: .management(.updateClients)) { s, call in
            try Wire.encode(ManagementClient(s.ceremonies.updateClient(id: call.parameter("id"), ClientPatch(wire: s.body(call)), by: call.administrator, context: call.context)))
        }
        r.add("DELETE", "/api/v2/clients/{id}", needs: .management(.deleteClients)) { s, call in
            try s.ceremonies.removeClient(id: call.parameter("id"), by: call.administrator, context: call.context)
            return HTTPResponse(status: 204)
        }
        r.add("POST", "/api/v2/clients/{id}/rotate-secret", needs: .management(.updateClientKeys)) { s, call in
            let rotated = try s.ceremonies.rotateClientSecret(id: call.parameter("id"), by: call.administrator, context: call.context)
            return try Wire.encode(ManagementClient(rotated.client, secret: rotated.secret))
        }
    }
}

extension ManagementClient {
    /// A client of the database: the configuration's shape, with its time and, in the answers
    /// that make one, its secret.
    init(_ row: ClientRow, secret: String? = nil) {
        self.init(ClientConfiguration(row))
        client_secret = secret
        created_at = Ceremonies.iso(row.createdAt)
        source = "database"
    }

    /// A client as the API shows it, by default one of the configuration file's (never a
    /// secret or its hash).
    init(_ client: ClientConfiguration) {
        self.init(client_id: client.id, name: client.name ?? client.id, client_secret: nil, token_endpoint_auth_method: client.authenticationMethod,
                  grant_types: client.grants, callbacks: client.redirectURIs, allowed_logout_urls: client.postLogoutRedirectURIs,
                  oidc_logout: client.backchannelLogoutURI.map { OIDCLogout(backchannel_logout_urls: [$0]) },
                  require_pushed_authorization_requests: client.requirePushedRequests, scopes: client.scopes, audiences: client.audiences,
                  keys: Key.keys(of: client), jwks_uri: client.jwksURI, required_roles: client.requiredRoles, minimum_acr: client.minimumACR,
                  refresh_token: RefreshTokenLifetimes(of: client), created_at: nil, source: "configuration")
    }
}

extension RefreshTokenLifetimes {
    /// A client's own refresh-token settings in Auth0's shape (`refresh_token`); `nil` when it
    /// has none, and the deployment's apply.
    package init?(of client: ClientConfiguration) {
        guard client.refreshTokenLifetime != nil || client.refreshTokenAbsoluteLifetime != nil || client.refreshTokenRetryWindow != nil else { return nil }
        self.init(idle_token_lifetime: client.refreshTokenLifetime, token_lifetime: client.refreshTokenAbsoluteLifetime, leeway: client.refreshTokenRetryWindow)
    }
}

extension ManagementClient.Key {
    /// A `private_key_jwt` client's keys by type, `kid` and `alg` (`nil` for a client without
    /// keys): what the API and `signet admin clients --json` show of them.
    package static func keys(of client: ClientConfiguration) -> [Self]? {
        client.jwks.isEmpty ? nil : client.jwks.map { Self(kty: $0["kty"]?.string ?? "?", kid: $0["kid"]?.string, alg: $0["alg"]?.string) }
    }
}

/// `POST /api/v2/clients`: a name, how the client authenticates, and the settings a patch has.
package struct NewClient {
    package let name: String
    /// `confidential` or `public`.
    package let type: String
    package let patch: ClientPatch

    package init(wire json: JSONValue) throws {
        patch = try ClientPatch(wire: json, also: ["token_endpoint_auth_method"])
        guard let name = patch.name else { throw AuthError.malformed("missing member \"name\"") }
        self.name = name
        let keys = patch.jwks != nil || patch.jwksURI != nil
        let method = try json.optionalMember("token_endpoint_auth_method") ?? (keys ? "private_key_jwt" : "client_secret_basic")
        switch method {
        case "none": type = "public"
        case "client_secret_basic", "client_secret_post", "private_key_jwt": type = "confidential"
        default: throw AuthError.malformed("token_endpoint_auth_method must be none, client_secret_basic, client_secret_post or private_key_jwt")
        }
        // Keys and private_key_jwt go together: a client has keys or a secret, never both.
        guard keys == (method == "private_key_jwt") else {
            throw AuthError.malformed(keys ? "jwks and jwks_uri are for a private_key_jwt client" : "private_key_jwt needs jwks (the client's public keys) or jwks_uri (where it publishes them)")
        }
    }
}

extension ClientPatch {
    /// The members a client's body may hold, by Auth0's names.
    static let wireMembers: Set<String> = [
        "name", "grant_types", "scopes", "callbacks", "allowed_logout_urls", "oidc_logout", "audiences", "require_pushed_authorization_requests", "jwks", "jwks_uri",
        "required_roles", "minimum_acr", "refresh_token",
    ]

    /// The body of `PATCH /api/v2/clients/{id}`: any other member is refused, so a setting Signet
    /// does not have is never silently dropped.
    init(wire json: JSONValue, also: Set<String> = []) throws {
        guard let object = json.object else { throw AuthError.malformed("the body must be a JSON object") }
        if let unknown = object.keys.first(where: { !Self.wireMembers.contains($0) && !also.contains($0) }) {
            throw AuthError.malformed("\"\(unknown.prefix(40))\" is not a client setting Signet has (\(Self.wireMembers.sorted().joined(separator: ", ")))")
        }
        func strings(_ name: String, _ value: JSONValue?) throws -> [String]? {
            guard let value, value != .null else { return nil }
            guard let list = value.array, list.count <= 100, list.allSatisfy({ $0.string != nil }) else {
                throw AuthError.malformed("\(name) must be a list of at most 100 strings")
            }
            return list.compactMap(\.string)
        }
        self.init()
        name = try json.optionalMember("name")
        grants = try strings("grant_types", json["grant_types"])
        scopes = try strings("scopes", json["scopes"])
        redirectURIs = try strings("callbacks", json["callbacks"])
        postLogoutRedirectURIs = try strings("allowed_logout_urls", json["allowed_logout_urls"])
        switch json["audiences"] {
        case nil: break
        case .null?: audiences = .some(nil)
        case let value?: audiences = .some(try strings("audiences", value))
        }
        switch json["required_roles"] {
        case nil: break
        case .null?: requiredRoles = .some(nil)
        case let value?: requiredRoles = .some(try strings("required_roles", value))
        }
        switch json["refresh_token"] {
        case nil: break
        case .null?: refreshLifetimes = RefreshLifetimes(idle: nil, absolute: nil)
        case let value?:
            // Auth0's member names; its rotation and expiration types are Signet's always (rotating, expiring).
            guard let object = value.object, object.keys.allSatisfy({ ["idle_token_lifetime", "token_lifetime", "leeway"].contains($0) }) else {
                throw AuthError.malformed("refresh_token takes idle_token_lifetime, token_lifetime and leeway (seconds), or null for the deployment's")
            }
            func seconds(_ name: String) throws -> Int? {
                guard let member = object[name], member != .null else { return nil }
                guard let number = member.int64 else { throw AuthError.malformed("refresh_token.\(name) must be a whole number of seconds") }
                return Int(clamping: number)
            }
            refreshLifetimes = RefreshLifetimes(idle: try seconds("idle_token_lifetime"), absolute: try seconds("token_lifetime"), retryWindow: try seconds("leeway"))
        }
        switch json["minimum_acr"] {
        case nil: break
        case .null?: minimumACR = .some(nil)
        case .string(let value)?: minimumACR = .some(value)
        default: throw AuthError.malformed("minimum_acr must be \(AuthenticationContext.supported.joined(separator: " or ")), or null")
        }
        switch json["oidc_logout"] {
        case nil: break
        case .null?: backchannelLogoutURI = .some(nil)
        case let value?:
            guard value.object != nil, value.object?.keys.allSatisfy({ $0 == "backchannel_logout_urls" }) == true,
                  let urls = try strings("oidc_logout.backchannel_logout_urls", value["backchannel_logout_urls"]), urls.count <= 1 else {
                throw AuthError.malformed("oidc_logout must be {\"backchannel_logout_urls\": [at most one URI]}")
            }
            backchannelLogoutURI = .some(urls.first)
        }
        switch json["require_pushed_authorization_requests"] {
        case nil, .null?: break
        case .bool(let flag)?: requirePushedRequests = flag
        default: throw AuthError.malformed("require_pushed_authorization_requests must be true or false")
        }
        switch json["jwks"] {
        case nil, .null?: break
        case let value?:
            guard value.object != nil else { throw AuthError.malformed("jwks must be a JWK Set: {\"keys\": [...]}") }
            jwks = value.serialized
        }
        jwksURI = try json.optionalMember("jwks_uri")
    }
}
