package import SignetAPI
import SignetAuth
import SignetHTTP
package import SignetWebAuthn

/// The Management API (DESIGN.md, "Management API"): Auth0's v2 paths and shapes, each route
/// declaring the scope its token must carry.
extension SignetService {
    static func addManagementRoutes(_ r: inout Router<SignetService>) {
        r.add("GET", "/api/v2/users", needs: .management(.readUsers)) { s, call in
            let q = call.request.query
            let page = try Self.integer(q["page"], "page", default: 0)
            let perPage = try Self.integer(q["per_page"], "per_page", default: 50)
            let fields = try Self.userFields(q)
            let result = try s.ceremonies.searchUsers(q: q["q"], page: page, perPage: perPage, sort: q["sort"])
            let users = JSONValue.array(try result.users.map { try Self.selecting(fields, Wire.value($0)) })
            guard q["include_totals"] == "true" else { return .json(200, Array(users.serialized.utf8)) }
            let totals: JSONObject = ["length": .number(String(result.length)), "limit": .number(String(result.limit)), "start": .number(String(result.start)),
                                    "total": .number(String(result.total)), "users": users]
            return .json(200, Array(JSONValue.object(totals).serialized.utf8))
        }
        r.add("GET", "/api/v2/users-by-email", needs: .management(.readUsers)) { s, call in
            let fields = try Self.userFields(call.request.query)
            let users = JSONValue.array(try s.ceremonies.usersByEmail(call.request.query["email"]).map { try Self.selecting(fields, Wire.value($0)) })
            return .json(200, Array(users.serialized.utf8))
        }
        r.add("POST", "/api/v2/users", needs: .management(.createUsers)) { s, call in
            try Wire.encode(s.ceremonies.createUser(ManagementNewUser(wire: s.body(call)), by: call.administrator, context: call.context), status: 201)
        }
        // Signet's own, shaped as Auth0's tickets: a link that adds a first passkey.
        r.add("POST", "/api/v2/tickets/passkey-enrollment", needs: .management(.createUserTickets)) { s, call in
            let body = try s.body(call)
            guard let object = body.object else { throw AuthError.malformed("the body must be a JSON object") }
            if let unknown = object.keys.first(where: { !["user_id", "ttl_sec"].contains($0) }) {
                throw AuthError.malformed("\"\(unknown.prefix(40))\" is not taken here: send user_id, and ttl_sec if not 7 days")
            }
            var lifetime: Int?
            if let value = body["ttl_sec"], value != .null {
                guard let seconds = value.int64, let fits = Int(exactly: seconds) else { throw AuthError.malformed("ttl_sec must be a whole number of seconds") }
                lifetime = fits
            }
            return try Wire.encode(s.ceremonies.createEnrollmentLink(userID: try body.member("user_id"), lifetime: lifetime, by: call.administrator, context: call.context),
                                   status: 201)
        }
        r.add("GET", "/api/v2/users/{id}", needs: .management(.readUsers)) { s, call in
            let user = try Self.selecting(try Self.userFields(call.request.query), Wire.value(s.ceremonies.managedUser(id: call.parameter("id"))))
            return .json(200, Array(user.serialized.utf8))
        }
        r.add("PATCH", "/api/v2/users/{id}", needs: .management(.updateUsers)) { s, call in
            try Wire.encode(s.ceremonies.updateUser(id: call.parameter("id"), ManagementUserPatch(wire: s.body(call)), by: call.administrator, context: call.context))
        }
        r.add("DELETE", "/api/v2/users/{id}", needs: .management(.deleteUsers)) { s, call in
            try s.ceremonies.deleteUser(id: call.parameter("id"), by: call.administrator, context: call.context)
            return HTTPResponse(status: 204)
        }
        r.add("GET", "/api/v2/users/{id}/authentication-methods", needs: .management(.readAuthenticationMethods)) { s, call in
            try Wire.encode(s.ceremonies.authenticationMethods(userID: call.parameter("id")))
        }
        r.add("GET", "/api/v2/users/{id}/authentication-methods/{method_id}", needs: .management(.readAuthenticationMethods)) { s, call in
            try Wire.encode(s.ceremonies.authenticationMethod(userID: call.parameter("id"), methodID: call.parameter("method_id")))
        }
        r.add("DELETE", "/api/v2/users/{id}/authentication-methods/{method_id}", needs: .management(.deleteAuthenticationMethods)) { s, call in
            try s.ceremonies.deleteAuthenticationMethod(userID: call.parameter("id"), methodID: call.parameter("method_id"), by: call.administrator, context: call.context)
            return HTTPResponse(status: 204)
        }
        // Signet's own: everything held about an account, for its owner's request.
        r.add("GET", "/api/v2/users/{id}/export", needs: .management(.readUsers)) { s, call in
            try s.exportAnswer(s.ceremonies.accountExport(userID: call.parameter("id"), by: call.administrator, context: call.context))
        }
        // Signet's own: the recovery holding an account, and an operator's cancellation of it.
        r.add("GET", "/api/v2/users/{id}/recovery", needs: .management(.readUsers)) { s, call in
            try Wire.encode(s.ceremonies.recovery(userID: call.parameter("id")))
        }
        r.add("DELETE", "/api/v2/users/{id}/recovery", needs: .management(.updateUsers)) { s, call in
            try s.ceremonies.adminCancelRecovery(userID: call.parameter("id"), by: call.administrator, context: call.context)
            return HTTPResponse(status: 204)
        }
        r.add("GET", "/api/v2/users/{id}/sessions", needs: .management(.readSessions)) { s, call in
            let q = call.request.query
            return try Wire.encode(s.ceremonies.sessions(userID: call.parameter("id"), from: q["from"], take: try Self.integer(q["take"], "take", default: 50)))
        }
        r.add("DELETE", "/api/v2/users/{id}/sessions", needs: .management(.deleteSessions)) { s, call in
            try s.ceremonies.revokeSessions(userID: call.parameter("id"), by: call.administrator, context: call.context)
            return HTTPResponse(status: 204)
        }
        r.add("GET", "/api/v2/user-blocks/{id}", needs: .management(.readUsers)) { s, call in
            try Wire.encode(s.ceremonies.userBlocks(userID: call.parameter("id")))
        }
        r.add("DELETE", "/api/v2/user-blocks/{id}", needs: .management(.updateUsers)) { s, call in
            try s.ceremonies.clearUserBlocks(userID: call.parameter("id"), by: call.administrator, context: call.context)
            return HTTPResponse(status: 204)
        }
        r.add("GET", "/api/v2/sessions/{id}", needs: .management(.readSessions)) { s, call in
            try Wire.encode(s.ceremonies.managedSession(id: call.parameter("id")))
        }
        r.add("DELETE", "/api/v2/sessions/{id}", needs: .management(.deleteSessions)) { s, call in
            try s.ceremonies.adminRevokeSession(id: call.parameter("id"), by: call.administrator, context: call.context)
            return HTTPResponse(status: 204)
        }
        r.add("GET", "/api/v2/users/{id}/logs", needs: .management(.readLogs)) { s, call in
            let q = call.request.query
            let totals = q["include_totals"] == "true"
            let page = try s.ceremonies.userLogs(userID: call.parameter("id"), page: try Self.integer(q["page"], "page", default: 0),
                                                 perPage: try Self.integer(q["per_page"], "per_page", default: 50), sort: q["sort"], totals: totals)
            return totals ? try Wire.encode(page) : try Wire.encode(page.logs)
        }
        r.add("GET", "/api/v2/stats/daily", needs: .management(.readStats)) { s, call in
            try Wire.encode(s.ceremonies.dailyStats(from: call.request.query["from"], to: call.request.query["to"]))
        }
        r.add("GET", "/api/v2/stats/active-users", needs: .management(.readStats)) { s, _ in
            .json(200, Array(String(try s.ceremonies.activeUsers()).utf8))
        }
        r.add("GET", "/api/v2/logs", needs: .management(.readLogs)) { s, call in
            let q = call.request.query
            return try Wire.encode(s.ceremonies.logs(q: q["q"], from: q["from"], take: try Self.integer(q["take"] ?? q["per_page"], "take", default: 50)))
        }
        r.add("GET", "/api/v2/keys/signing", needs: .management(.readSigningKeys)) { s, _ in try Wire.encode(s.ceremonies.signingKeys()) }
        r.add("GET", "/api/v2/keys/signing/{kid}", needs: .management(.readSigningKeys)) { s, call in
            try Wire.encode(s.ceremonies.signingKey(kid: call.parameter("kid")))
        }
        r.add("POST", "/api/v2/keys/signing/rotate", needs: .management(.createSigningKeys)) { s, call in
            try Wire.encode(s.ceremonies.rotateSigningKey(by: call.administrator, context: call.context), status: 201)
        }
        r.add("PUT", "/api/v2/keys/signing/{kid}/revoke", needs: .management(.updateSigningKeys)) { s, call in
            try Wire.encode(s.ceremonies.revokeSigningKey(kid: call.parameter("kid"), by: call.administrator, context: call.context))
        }
        r.add("GET", "/api/v2/logs/{id}", needs: .management(.readLogs)) { s, call in
            try Wire.encode(s.ceremonies.log(id: call.parameter("id")))
        }
    }

    /// Auth0's `fields` (names, comma-separated) and `include_fields` (`true`, the default: only
    /// those members; `false`: every member but those), or `nil` for every member.
    package static func userFields(_ q: [String: String]) throws -> (names: Set<String>, include: Bool)? {
        guard let fields = q["fields"], !fields.isEmpty else { return nil }
        guard fields.utf8.count <= 1000 else { throw AuthError.malformed("fields is longer than 1000 bytes") }
        let include: Bool
        switch q["include_fields"] ?? "true" {
        case "true": include = true
        case "false": include = false
        default: throw AuthError.malformed("include_fields must be true or false")
        }
        return (Set(fields[...].split(atScalar: ",").map { String(Self.trimmedOWS($0)) }), include)
    }

    /// `user` with only the members `fields` selects.
    static func selecting(_ fields: (names: Set<String>, include: Bool)?, _ user: JSONValue) throws -> JSONValue {
        guard let fields, let object = user.object else { return user }
        return .object(try JSONObject(members: object.filter { fields.names.contains($0.key) == fields.include }))
    }

    /// A page's `before` (`GET /me/events`, the account page's `events_before`): an event's
    /// `id`, whose older events are the page; `nil` when absent.
    static func eventID(_ text: String?, _ name: String) throws -> Int64? {
        try text.map { text in
            guard text.utf8.count <= 18, let id = Int64(text), id > 0 else { throw AuthError.malformed("\(name) must be an event's id") }
            return id
        }
    }

    /// A query argument that must be a whole number when present.
    static func integer(_ text: String?, _ name: String, default value: Int) throws -> Int {
        guard let text, !text.isEmpty else { return value }
        guard text.utf8.count <= 9, let number = Int(text) else { throw AuthError.malformed("\(name) must be a number") }
        return number
    }

    /// The `client_credentials` grant (RFC 6749 §4.4) with the client's secret in
    /// `Authorization: Basic` (`client_secret_basic`) or in the body (`client_secret_post`,
    /// RFC 6749 §2.3.1), not both.
    func clientCredentials(_ body: JSONValue, context: RequestContext) throws -> HTTPResponse {
        let basic = context.basic
        let posted = (id: try body.optionalMember("client_id"), secret: try body.optionalMember("client_secret"))
        // `private_key_jwt` (OIDC Core §9): the assertion names the client when client_id does not.
        if context.assertion != nil {
            guard basic == nil, posted.secret == nil else { throw AuthError.malformed("use one client authentication method, not client_assertion and a secret") }
            guard let id = posted.id ?? context.assertionIssuer else {
                throw AuthError(.clientAssertionInvalid, "client_assertion names no client (no client_id, and no iss it can be read from)")
            }
            return try Wire.encode(ceremonies.clientCredentialsGrant(
                clientID: id, secret: nil, scope: try body.optionalMember("scope"), audience: try body.requestedAudience(), context: context))
        }
        guard let id = basic?.id ?? posted.id, let secret = basic?.secret ?? posted.secret, basic == nil || posted.secret == nil else {
            var error = AuthError(.clientSecretInvalid, "no client credentials, or both kinds",
                                  publicDetail: "authenticate with client_secret_basic or client_secret_post (one of them)")
            error.challenges = [#"Basic realm="signet""#]
            throw error
        }
        return try Wire.encode(ceremonies.clientCredentialsGrant(
            clientID: id, secret: secret, scope: try body.optionalMember("scope"), audience: try body.requestedAudience(), context: context))
    }
}

extension ManagementNewUser {
    /// The body of `POST /api/v2/users`: `email`, and optionally `name`, `email_verified`,
    /// `verify_email`, `locale` and `connection`; any other member is refused.
    package init(wire json: JSONValue) throws {
        guard let object = json.object else { throw AuthError.malformed("the body must be a JSON object") }
        let known: Set<String> = ["email", "name", "email_verified", "verify_email", "locale", "connection", "app_metadata", "user_metadata"]
        if let unknown = object.keys.first(where: { !known.contains($0) }) {
            throw AuthError.malformed("\"\(unknown.prefix(40))\" is not taken here: send email, and any of name, email_verified, verify_email, locale, connection, app_metadata and user_metadata")
        }
        self.init(email: try json.member("email"), name: try json.optionalMember("name"), email_verified: try ManagementUserPatch.flag(json, "email_verified"),
                  verify_email: try ManagementUserPatch.flag(json, "verify_email"), locale: try json.optionalMember("locale"),
                  connection: try json.optionalMember("connection"), app_metadata: try JSONDocument.metadata(json, "app_metadata"),
                  user_metadata: try JSONDocument.metadata(json, "user_metadata"))
    }
}

extension ManagementUserPatch {
    /// The body of `PATCH /api/v2/users/{id}`: any other member is refused, as Auth0 does.
    init(wire json: JSONValue) throws {
        let known: Set<String> = ["blocked", "name", "email", "email_verified", "email_sign_in", "app_metadata", "user_metadata"]
        if let unknown = json.object?.keys.first(where: { !known.contains($0) }) {
            throw AuthError.malformed("\"\(unknown.prefix(40))\" cannot be changed here: send blocked, name, email, email_verified, email_sign_in, app_metadata or user_metadata")
        }
        self.init(blocked: try Self.flag(json, "blocked"), name: try json.optionalMember("name"), email: try json.optionalMember("email"),
                  email_verified: try Self.flag(json, "email_verified"), email_sign_in: try Self.flag(json, "email_sign_in"),
                  app_metadata: try JSONDocument.metadata(json, "app_metadata"), user_metadata: try JSONDocument.metadata(json, "user_metadata"))
    }

    /// A member that is `true`, `false`, `null` or absent.
    static func flag(_ json: JSONValue, _ name: String) throws -> Bool? {
        guard let value = json[name] else { return nil }
        switch value {
        case .null: return nil
        case .bool(let value): return value
        default: throw AuthError.malformed("\(name) must be true or false")
        }
    }
}
