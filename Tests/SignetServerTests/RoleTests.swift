import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// Role-based access control: roles of an API's permissions (`tokens.permissions`), given to
/// accounts, listed in the `permissions` claim of their access tokens for that API.
@Suite struct RoleTests {
    static let api = "https://api.signet.test"
    static let permissions = ["read:reports": "Read the reports", "transfer:funds": "Move money", "admin:users": ""]

    static let other = "urn:signet:ledger"

    static func server(_ transport: TestServer.Transport = .inProcess) throws -> TestServer {
        try TestServer.withOperators(transport) { c in
            c.audiences.append(other)
            c.apiPermissions = [api: permissions, other: ["post:entries": "Post ledger entries"]]
        }
    }

    /// A passkey sign-in's tokens for `audience` (none: Signet's own), and a refresh of them.
    static func signIn(_ server: TestServer, _ phone: Phone, audience: String? = api, scope: String? = nil) throws -> JSONValue {
        let (session, credential, _) = try phone.startSignIn()
        var body: JSONObject = ["grant_type": .string(GrantType.webauthn), "client_id": .string("app"), "auth_session": .string(session), "authn_response": credential]
        if let audience { body["audience"] = .string(audience) }
        if let scope { body["scope"] = .string(scope) }
        let (status, json) = try server.post("/oauth/token", .object(body))
        try #require(status == 200, "\(json.serialized)")
        return json
    }

    static func refresh(_ server: TestServer, _ tokens: JSONValue, audience: String = api, scope: String? = nil) throws -> JSONValue {
        var body: JSONObject = ["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(tokens["refresh_token"]), "audience": .string(audience)]
        if let scope { body["scope"] = .string(scope) }
        let (status, json) = try server.post("/oauth/token", .object(body))
        try #require(status == 200, "\(json.serialized)")
        return json
    }

    @Test("tokens.permissions: from the file or the environment; an API's audience, names and descriptions bounded; Signet's own APIs refused")
    func configuration() throws {
        let base = #""relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x"}]"#
        let file = try ConfigurationLoader.load(file: try ConfigurationTests.write(#"{\#(base), "tokens": {"permissions": {"https://api.example.com": {"read:reports": "Read the reports", "x": ""}}}}"#),
                                                environment: [:])
        #expect(file.apiPermissions == ["https://api.example.com": ["read:reports": "Read the reports", "x": ""]])
        let environment = try ConfigurationLoader.load(file: try ConfigurationTests.write("{\(base)}"),
                                                       environment: ["SIGNET_TOKENS_PERMISSIONS": #"{"urn:bank": {"transfer:funds": "Move money"}}"#])
        #expect(environment.apiPermissions == ["urn:bank": ["transfer:funds": "Move money"]])
        #expect(try ConfigurationLoader.load(file: try ConfigurationTests.write("{\(base)}"), environment: [:]).apiPermissions.isEmpty)
        // 200 names of up to 15 bytes fit the claim's 4 KiB; 300 do not (below).
        let many = #"{"urn:big": {\#((0..<200).map { #""permission:\#($0)": """# }.joined(separator: ", "))}}"#
        #expect(try ConfigurationLoader.load(file: try ConfigurationTests.write("{\(base)}"), environment: ["SIGNET_TOKENS_PERMISSIONS": many]).apiPermissions["urn:big"]?.count == 200)
        for (bad, says) in [(#"["read"]"#, "must be an object"), (#"{"https://api.example.com": {}}"#, "1 to 1000 permissions"),
                            (#"{"https://api.example.com": ["read"]}"#, "1 to 1000 permissions"), (#"{"api example": {"read": ""}}"#, "without spaces"),
                            (#"{"https://api.example.com": {"read reports": ""}}"#, "visible ASCII"), (#"{"https://api.example.com": {"read": 7}}"#, "the description of read"),
                            (#"{"https://api.example.com": {"read": "two\nlines"}}"#, "on one line"), (#"{"https://api.example.com": {"\#(String(repeating: "r", count: 281))": ""}}"#, "1 to 280"),
                            (#"{"https://api.example.com": {\#((0..<300).map { #""permission:\#($0)": """# }.joined(separator: ", "))}}"#, "too large for common proxies"),
                            (#"{"https://a.example.com/me": {"read": ""}}"#, "Signet's own API"), (#"{"https://a.example.com/api/v2/": {"read": ""}}"#, "Signet's own API")] {
            do {
                _ = try ConfigurationLoader.load(file: try ConfigurationTests.write(#"{\#(base), "tokens": {"permissions": \#(bad)}}"#), environment: [:])
                Issue.record("accepted: \(bad.prefix(60))")
            } catch let error as ConfigurationError {
                #expect(error.message.contains("tokens.permissions") && error.message.contains(says), "\(bad.prefix(60)): \(error.message)")
            }
        }
    }

    @Test("a role's round: made, listed, renamed, given permissions of the API, given to accounts; their tokens for the API list what it grants, from the next sign-in or refresh; audited", arguments: [TestServer.Transport.inProcess, .socket])
    func round(_ transport: TestServer.Transport) throws {
        let server = try Self.server(transport)
        let ops = try server.managementToken()
        let phone = Phone(server)
        let first = try phone.signUp(email: "ada@bank.example")
        let ada = try #require(jwtClaims(first["access_token"]?.string)["sub"]?.string)
        // No role yet: the API's tokens carry the claim, empty; Signet's own carry none.
        #expect(jwtClaims(try Self.signIn(server, phone)["access_token"]?.string)["permissions"] == .array([]))
        #expect(jwtClaims(try Self.signIn(server, phone, audience: nil)["access_token"]?.string)["permissions"] == nil)

        let made = try server.api("POST", "/api/v2/roles", token: ops, .object(["name": .string("Teller"), "description": .string("Front desk")]))
        #expect(made.status == 201 && made.json["name"] == .string("Teller") && made.json["description"] == .string("Front desk"), "\(made.json.serialized)")
        let teller = try #require(made.json["id"]?.string)
        #expect(teller.hasPrefix("rol_") && teller.count == 20)
        let auditor = try #require(try server.api("POST", "/api/v2/roles", token: ops, .object(["name": .string("Auditor")])).json["id"]?.string)
        // Listed by name, filtered in any case, paged with totals.
        #expect(try server.api("GET", "/api/v2/roles", token: ops).json.array?.compactMap { $0["name"]?.string } == ["Auditor", "Teller"])
        #expect(try server.api("GET", "/api/v2/roles?name_filter=TELL", token: ops).json.array?.compactMap { $0["id"]?.string } == [teller])
        #expect(try server.api("GET", "/api/v2/roles?name_filter=%25", token: ops).json == .array([]), "a % in the filter is a character, not a wildcard")
        let page = try server.api("GET", "/api/v2/roles?per_page=1&page=1&include_totals=true", token: ops).json
        #expect(page["total"] == .int(2) && page["start"] == .int(1) && page["limit"] == .int(1) && page["roles"]?.array?.first?["id"] == .string(teller), "\(page.serialized)")
        let renamed = try server.api("PATCH", "/api/v2/roles/\(teller)", token: ops, .object(["name": .string("Teller (branch)"), "description": .null]))
        #expect(renamed.status == 200 && renamed.json["name"] == .string("Teller (branch)") && renamed.json["description"] == nil, "\(renamed.json.serialized)")
        #expect(try server.api("GET", "/api/v2/roles/\(teller)", token: ops).json == renamed.json)

        // Permissions of the API, with their descriptions from the setting.
        func permission(_ name: String) -> JSONValue { .object(["resource_server_identifier": .string(Self.api), "permission_name": .string(name)]) }
        #expect(try server.api("POST", "/api/v2/roles/\(teller)/permissions", token: ops, .object(["permissions": .array([permission("read:reports"), permission("transfer:funds")])])).status == 201)
        #expect(try server.api("POST", "/api/v2/roles/\(auditor)/permissions", token: ops, .object(["permissions": .array([permission("read:reports"), permission("admin:users"),
            .object(["resource_server_identifier": .string(Self.other), "permission_name": .string("post:entries")])])])).status == 201)
        let held = try server.api("GET", "/api/v2/roles/\(teller)/permissions", token: ops).json
        #expect(held == .array([
            .object(["permission_name": .string("read:reports"), "description": .string("Read the reports"), "resource_server_identifier": .string(Self.api), "resource_server_name": .string(Self.api)]),
            .object(["permission_name": .string("transfer:funds"), "description": .string("Move money"), "resource_server_identifier": .string(Self.api), "resource_server_name": .string(Self.api)]),
        ]), "\(held.serialized)")

        // Given to Ada (both roles, one twice: once each).
        #expect(try server.api("POST", "/api/v2/users/\(ada)/roles", token: ops, .object(["roles": .array([.string(teller), .string(auditor), .string(teller)])])).status == 204)
        #expect(try server.api("GET", "/api/v2/users/\(ada)/roles", token: ops).json.array?.compactMap { $0["id"]?.string } == [auditor, teller])
        // Given again: nothing to change, nothing written.
        let written = try server.store.auditEvents(limit: 1000).count
        #expect(try server.api("POST", "/api/v2/users/\(ada)/roles", token: ops, .object(["roles": .array([.string(teller)])])).status == 204)
        #expect(try server.api("DELETE", "/api/v2/users/\(ada)/roles", token: ops, .object(["roles": .array([.string("rol_nope")])])).status == 404)
        #expect(try server.store.auditEvents(limit: 1000).count == written)
        let granted = try server.api("GET", "/api/v2/users/\(ada)/permissions", token: ops).json
        #expect(granted.array?.compactMap { $0["permission_name"]?.string } == ["admin:users", "read:reports", "transfer:funds", "post:entries"], "\(granted.serialized)")
        #expect(granted.array?[1]["sources"]?.array?.compactMap { $0["source_id"]?.string } == [auditor, teller])
        #expect(granted.array?[1]["sources"]?.array?.first?["source_type"] == .string("ROLE"))
        let members = try server.api("GET", "/api/v2/roles/\(teller)/users?include_totals=true", token: ops).json
        #expect(members["total"] == .int(1) && members["users"]?.array?.first?["user_id"] == .string(ada), "\(members.serialized)")
        #expect(members["users"]?.array?.first?["email"] == .string("ada@bank.example"))

        // Her copy of her data names them.
        let copy = try server.api("GET", "/api/v2/users/\(ada)/export", token: ops).json
        #expect(copy["roles"]?.array?.compactMap { $0["name"]?.string } == ["Auditor", "Teller (branch)"], "\(copy["roles"]?.serialized ?? "none")")
        // Her next sign-in's token for the API lists them, each once, sorted; an ID token does not.
        let tokens = try Self.signIn(server, phone)
        #expect(jwtClaims(tokens["access_token"]?.string)["permissions"] == .array([.string("admin:users"), .string("read:reports"), .string("transfer:funds")]))
        #expect(jwtClaims(tokens["id_token"]?.string)["permissions"] == nil)
        // An API that asks instead (RFC 7662) learns the same.
        let asked = try IntrospectionTests.introspect(server, try #require(tokens["access_token"]?.string))
        #expect(asked.json["active"] == .bool(true) && asked.json["permissions"] == .array([.string("admin:users"), .string("read:reports"), .string("transfer:funds")]), "\(asked.json.serialized)")
        // Each API's token lists its own permissions only.
        #expect(jwtClaims(try Self.signIn(server, phone, audience: Self.other)["access_token"]?.string)["permissions"] == .array([.string("post:entries")]))
        // A permission taken from a role and a role taken from her: the next refresh lists what is left.
        #expect(try server.api("DELETE", "/api/v2/roles/\(teller)/permissions", token: ops, .object(["permissions": .array([permission("transfer:funds")])])).status == 204)
        #expect(try server.api("DELETE", "/api/v2/users/\(ada)/roles", token: ops, .object(["roles": .array([.string(auditor)])])).status == 204)
        let refreshed = try Self.refresh(server, tokens)
        #expect(jwtClaims(refreshed["access_token"]?.string)["permissions"] == .array([.string("read:reports")]))
        // Another account given the role through the role.
        let grace = Phone(server)
        _ = try grace.signUp(email: "grace@bank.example")
        let graceID = try #require(jwtClaims(try Self.signIn(server, grace)["access_token"]?.string)["sub"]?.string)
        #expect(try server.api("POST", "/api/v2/roles/\(teller)/users", token: ops, .object(["users": .array([.string(graceID)])])).status == 200)
        #expect(jwtClaims(try Self.signIn(server, grace)["access_token"]?.string)["permissions"] == .array([.string("read:reports")]))
        #expect(try server.api("GET", "/api/v2/roles/\(teller)/users", token: ops).json.array?.compactMap { $0["user_id"]?.string } == [ada, graceID])

        // The role deleted: what it granted goes from the next refresh; its members keep their accounts.
        #expect(try server.api("DELETE", "/api/v2/roles/\(teller)", token: ops).status == 204)
        #expect(jwtClaims(try Self.refresh(server, refreshed)["access_token"]?.string)["permissions"] == .array([]))
        #expect(try server.api("GET", "/api/v2/users/\(ada)/roles", token: ops).json == .array([]))
        #expect(try server.api("GET", "/api/v2/roles/\(teller)", token: ops).json["reason"] == .string("role_not_found"))

        // Each change audited as the client's, the accounts' on their own history, never a token.
        let events = try server.store.auditEvents(limit: 100).filter { $0.clientID == "ops" }
        let kinds = events.map(\.kind)
        #expect(kinds.filter { $0 == "admin_role_created" }.count == 2 && kinds.filter { $0 == "admin_role_deleted" }.count == 1)
        #expect(kinds.filter { $0 == "admin_role_updated" }.count == 4 && kinds.filter { $0 == "admin_user_roles_changed" }.count == 3, "\(kinds)")
        let given = try #require(events.first { $0.kind == "admin_user_roles_changed" && $0.userID == ada && ($0.detail ?? "").hasPrefix("roles given") })
        #expect(given.detail == "roles given: Auditor (\(auditor)), Teller (branch) (\(teller))", "\(given.detail ?? "")")
        #expect(events.contains { $0.kind == "admin_role_updated" && $0.detail == "role \(teller) (Teller (branch)): permissions removed: transfer:funds (\(Self.api))" })
    }

    @Test("a scope may ask for an API's permissions: a token's scope carries those its roles grant for its audience, from the next refresh as roles change; a refresh narrows but never widens; the code flow keeps them")
    func scopes() throws {
        let server = try TestServer.withOperators { c in
            TestServer.webClients(&c)
            c.audiences.append(Self.other)
            c.apiPermissions = [Self.api: Self.permissions, Self.other: ["post:entries": "Post ledger entries"]]
        }
        let ops = try server.managementToken()
        let phone = Phone(server)
        let ada = try #require(jwtClaims(try phone.signUp(email: "ada@bank.example")["access_token"]?.string)["sub"]?.string)
        func permission(_ api: String, _ name: String) -> JSONValue { .object(["resource_server_identifier": .string(api), "permission_name": .string(name)]) }
        let teller = try #require(try server.api("POST", "/api/v2/roles", token: ops, .object(["name": .string("Teller")])).json["id"]?.string)
        #expect(try server.api("POST", "/api/v2/roles/\(teller)/permissions", token: ops,
                               .object(["permissions": .array([permission(Self.api, "read:reports"), permission(Self.api, "transfer:funds")])])).status == 201)
        func scope(_ tokens: JSONValue) -> String? {
            let claim = jwtClaims(tokens["access_token"]?.string)["scope"]?.string
            #expect(tokens["scope"]?.string == claim, "the answer's scope is the token's (RFC 6749 §5.1)")
            return claim
        }

        // Asked for before any role: none granted, and no error (RFC 6749 §3.3). Unknown words,
        // and a name no API of tokens.permissions has, are dropped.
        let asked = "transfer:funds openid bogus read:reports offline_access post:entries read:reports"
        let first = try Self.signIn(server, phone, scope: asked)
        #expect(scope(first) == "openid offline_access")
        // The role given: the next refresh grants what the sign-in asked for and the role grants,
        // in Signet's order; the permission of the other API not, since the token is not for it.
        #expect(try server.api("POST", "/api/v2/users/\(ada)/roles", token: ops, .object(["roles": .array([.string(teller)])])).status == 204)
        let second = try Self.refresh(server, first)
        #expect(scope(second) == "openid offline_access read:reports transfer:funds")
        #expect(jwtClaims(second["access_token"]?.string)["permissions"] == .array([.string("read:reports"), .string("transfer:funds")]))
        // The other API's permission, once a role grants it, in a refresh for that API only.
        let clerk = try #require(try server.api("POST", "/api/v2/roles", token: ops, .object(["name": .string("Clerk")])).json["id"]?.string)
        #expect(try server.api("POST", "/api/v2/roles/\(clerk)/permissions", token: ops, .object(["permissions": .array([permission(Self.other, "post:entries")])])).status == 201)
        #expect(try server.api("POST", "/api/v2/users/\(ada)/roles", token: ops, .object(["roles": .array([.string(clerk)])])).status == 204)
        let ledger = try Self.refresh(server, second, audience: Self.other)
        #expect(scope(ledger) == "openid offline_access post:entries")
        // A refresh may ask for less; what the sign-in did not ask for is refused, though a role grants it.
        let less = try Self.refresh(server, ledger, scope: "openid read:reports")
        #expect(scope(less) == "openid read:reports")
        let narrowed = try Self.refresh(server, try Self.signIn(server, phone, scope: "openid offline_access read:reports"))
        #expect(scope(narrowed) == "openid offline_access read:reports")
        let widened = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"),
                                                               "refresh_token": try #require(narrowed["refresh_token"]), "scope": .string("openid transfer:funds")]))
        #expect(widened.status == 400 && widened.json["reason"] == .string("scope_invalid"), "\(widened.json.serialized)")
        // A permission taken from the role leaves the scope at the next refresh, which asks for
        // the sign-in's scope again (the refresh token keeps it).
        #expect(try server.api("DELETE", "/api/v2/roles/\(teller)/permissions", token: ops, .object(["permissions": .array([permission(Self.api, "transfer:funds")])])).status == 204)
        #expect(scope(try Self.refresh(server, less)) == "openid offline_access read:reports")
        // Signet's own API grants no API's permission; without a scope, the OIDC scopes alone.
        #expect(scope(try Self.signIn(server, phone, audience: nil, scope: asked)) == "openid offline_access")
        #expect(scope(try Self.signIn(server, phone)) == "openid profile email offline_access")

        // The code flow keeps what /authorize asked for until the code is exchanged.
        let pkce = PKCE()
        let (code, browser) = try AuthorizeTests.code(server, pkce: pkce, scope: "openid offline_access read:reports bogus", extra: [("audience", Self.api)])
        let exchanged = try server.exchange(code: code, verifier: pkce.verifier)
        #expect(exchanged.status == 200 && scope(exchanged.json) == "openid offline_access", "no role yet: \(exchanged.json.serialized)")
        let browserUser = try #require(jwtClaims(exchanged.json["access_token"]?.string)["sub"]?.string)
        #expect(try server.api("POST", "/api/v2/users/\(browserUser)/roles", token: ops, .object(["roles": .array([.string(teller)])])).status == 204)
        let again = try AuthorizeTests.code(server, browser: browser, pkce: pkce, scope: "openid read:reports", extra: [("audience", Self.api)])
        #expect(scope(try server.exchange(code: again.code, verifier: pkce.verifier).json) == "openid read:reports")
        let refreshed = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("spa"),
                                                                 "refresh_token": try #require(exchanged.json["refresh_token"]), "audience": .string(Self.api)]))
        #expect(refreshed.status == 200 && scope(refreshed.json) == "openid offline_access read:reports", "\(refreshed.json.serialized)")
    }

    @Test("/api/v2/resource-servers lists Signet's own APIs, then every audience of the configuration and the clients, with an API's permissions as its scopes; read-only")
    func resourceServers() throws {
        let server = try Self.server()
        let ops = try server.managementToken()
        // A client kept in the database that names an API of its own.
        let made = try server.api("POST", "/api/v2/clients", token: ops, .object([
            "name": .string("Ledger sync"), "grant_types": .array([.string("client_credentials")]), "audiences": .array([.string("urn:db:ledger")]),
        ]))
        #expect(made.status == 201, "\(made.json.serialized)")
        let listed = try #require(try server.api("GET", "/api/v2/resource-servers", token: ops).json.array)
        let issuer = server.app.configuration.issuer
        #expect(listed.compactMap { $0["identifier"]?.string } == [issuer + "/me", issuer + "/api/v2/", Self.api, "urn:db:ledger", Self.other], "\(listed)")
        #expect(listed.map { $0["is_system"] } == [.bool(true), .bool(true), .bool(false), .bool(false), .bool(false)])
        let api = listed[2]
        #expect(api["scopes"] == .array([
            .object(["value": .string("admin:users"), "description": .string("")]),
            .object(["value": .string("read:reports"), "description": .string("Read the reports")]),
            .object(["value": .string("transfer:funds"), "description": .string("Move money")]),
        ]), "\(api.serialized)")
        #expect(api["enforce_policies"] == .bool(true) && api["token_dialect"] == .string("access_token_authz") && api["signing_alg"] == .string("ES256"))
        #expect(api["name"] == .string(Self.api) && api["token_lifetime"] == .int(Int64(server.app.configuration.accessTokenLifetime)))
        #expect(listed[3]["scopes"] == .array([]) && listed[3]["enforce_policies"] == .bool(false) && listed[3]["token_dialect"] == .string("access_token"))
        let management = try #require(listed[1]["scopes"]?.array)
        #expect(management.count == ManagementScope.allCases.count && management.contains(.object(["value": .string("read:role_members"), "description": .string("Read role members")])))
        #expect(listed[1]["allow_offline_access"] == .bool(false) && listed[0]["allow_offline_access"] == .bool(true))
        // One by its id (the same for the same identifier anywhere) or by an identifier that fits a path.
        let id = try #require(api["id"]?.string)
        #expect(id.hasPrefix("rs_") && id.count == 19 && Set(listed.compactMap { $0["id"]?.string }).count == 5)
        #expect(try server.api("GET", "/api/v2/resource-servers/\(id)", token: ops).json == api)
        #expect(try server.api("GET", "/api/v2/resource-servers/\(Self.other)", token: ops).json == listed[4])
        let again = try TestServer.withOperators { c in
            c.audiences.append(Self.other)
            c.apiPermissions = [Self.api: Self.permissions]
        }
        #expect(try again.api("GET", "/api/v2/resource-servers/\(id)", token: try again.managementToken()).json["identifier"] == .string(Self.api))
        // Paged with totals.
        let page = try server.api("GET", "/api/v2/resource-servers?page=1&per_page=2&include_totals=true", token: ops).json
        #expect(page["total"] == .int(5) && page["start"] == .int(2) && page["resource_servers"]?.array?.compactMap { $0["identifier"]?.string } == [Self.api, "urn:db:ledger"],
                "\(page.serialized)")
        // Refused: no such API, a change, a token without the scope, a page out of bounds.
        let reader = try server.managementToken(scope: "read:users")
        for (method, path, body, status, reason) in [
            ("GET", "/api/v2/resource-servers/rs_nope", nil, 404, "resource_server_not_found"),
            ("POST", "/api/v2/resource-servers", .object(["identifier": .string("urn:new")]), 409, "resource_server_configured"),
            ("PATCH", "/api/v2/resource-servers/\(id)", .object(["name": .string("Bank")]), 409, "resource_server_configured"),
            ("DELETE", "/api/v2/resource-servers/\(id)", nil, 409, "resource_server_configured"),
            ("GET", "/api/v2/resource-servers?per_page=101", nil, 400, "malformed"),
        ] as [(String, String, JSONValue?, Int, String)] {
            let answer = try server.api(method, path, token: ops, body)
            #expect(answer.status == status && answer.json["reason"] == .string(reason), "\(method) \(path): \(answer.status) \(answer.json.serialized)")
        }
        let unscoped = try server.api("GET", "/api/v2/resource-servers", token: reader)
        #expect(unscoped.status == 403 && unscoped.json["reason"] == .string("insufficient_scope"))
    }

    @Test("refused, changing nothing: no scope, no such role or account, a permission the API does not have, a taken name, bodies of the wrong shape, too many at once")
    func refusals() throws {
        let server = try Self.server()
        let ops = try server.managementToken()
        let phone = Phone(server)
        let ada = try #require(jwtClaims(try phone.signUp(email: "ada@bank.example")["access_token"]?.string)["sub"]?.string)
        let role = try #require(try server.api("POST", "/api/v2/roles", token: ops, .object(["name": .string("Teller")])).json["id"]?.string)
        let before = try server.store.auditEvents(limit: 1000).count
        func permission(_ api: String, _ name: String) -> JSONValue { .object(["resource_server_identifier": .string(api), "permission_name": .string(name)]) }
        let many = JSONValue.array((0...Ceremonies.maxRoleBatch).map { _ in .string(role) })

        for (method, path, body, status, reason) in [
            ("POST", "/api/v2/roles", JSONValue.object(["name": .string("teller")]), 201, nil),  // names differ by case: a role of its own
            ("POST", "/api/v2/roles", .object(["name": .string("Teller")]), 409, "conflict"),
            ("POST", "/api/v2/roles", .object([:]), 400, "malformed"),
            ("POST", "/api/v2/roles", .object(["name": .string("  ")]), 400, "malformed"),
            ("POST", "/api/v2/roles", .object(["name": .string(String(repeating: "n", count: 257))]), 400, "malformed"),
            ("POST", "/api/v2/roles", .object(["name": .string("Bad\u{202E}name")]), 400, "malformed"),
            ("POST", "/api/v2/roles", .object(["name": .string("X"), "permissions": .array([])]), 400, "malformed"),
            ("POST", "/api/v2/roles", .object(["name": .number("7")]), 400, "malformed"),
            ("PATCH", "/api/v2/roles/\(role)", .object([:]), 400, "malformed"),
            ("PATCH", "/api/v2/roles/\(role)", .object(["name": .string("")]), 400, "malformed"),
            ("PATCH", "/api/v2/roles/rol_nope", .object(["name": .string("Y")]), 404, "role_not_found"),
            ("DELETE", "/api/v2/roles/rol_nope", nil, 404, "role_not_found"),
            ("GET", "/api/v2/roles/" + String(repeating: "r", count: 65), nil, 404, "role_not_found"),
            ("GET", "/api/v2/roles?per_page=101", nil, 400, "malformed"),
            ("GET", "/api/v2/roles?page=-1", nil, 400, "malformed"),
            ("POST", "/api/v2/roles/\(role)/permissions", .object(["permissions": .array([permission(Self.api, "delete:everything")])]), 400, "malformed"),
            ("POST", "/api/v2/roles/\(role)/permissions", .object(["permissions": .array([permission("https://other.example", "read:reports")])]), 400, "malformed"),
            ("POST", "/api/v2/roles/\(role)/permissions", .object(["permissions": .array([])]), 400, "malformed"),
            ("POST", "/api/v2/roles/\(role)/permissions", .object(["permissions": .array([.string("read:reports")])]), 400, "malformed"),
            ("POST", "/api/v2/roles/rol_nope/permissions", .object(["permissions": .array([permission(Self.api, "read:reports")])]), 404, "role_not_found"),
            ("POST", "/api/v2/users/\(ada)/roles", .object(["roles": .array([.string("rol_nope")])]), 404, "role_not_found"),
            ("POST", "/api/v2/users/\(ada)/roles", .object(["roles": .array([.string(role), .string("rol_nope")])]), 404, "role_not_found"),
            ("POST", "/api/v2/users/nobody/roles", .object(["roles": .array([.string(role)])]), 404, "user_unknown"),
            ("POST", "/api/v2/users/\(ada)/roles", .object(["roles": .array([])]), 400, "malformed"),
            ("POST", "/api/v2/users/\(ada)/roles", .object(["roles": many]), 400, "malformed"),
            ("POST", "/api/v2/users/\(ada)/roles", .object(["roles": .string(role)]), 400, "malformed"),
            ("POST", "/api/v2/roles/\(role)/users", .object(["users": .array([.string(ada), .string("nobody")])]), 404, "user_unknown"),
            ("GET", "/api/v2/users/nobody/roles", nil, 404, "user_unknown"),
            ("GET", "/api/v2/users/nobody/permissions", nil, 404, "user_unknown"),
            ("GET", "/api/v2/roles/rol_nope/users", nil, 404, "role_not_found"),
        ] as [(String, String, JSONValue?, Int, String?)] {
            let answer = try server.api(method, path, token: ops, body)
            #expect(answer.status == status && answer.json["reason"] == reason.map(JSONValue.string), "\(method) \(path) \(body?.serialized.prefix(80) ?? ""): \(answer.json.serialized)")
        }
        // Nothing changed but the one role made; Ada has no role, the role no permission.
        #expect(try server.api("GET", "/api/v2/users/\(ada)/roles", token: ops).json == .array([]))
        #expect(try server.api("GET", "/api/v2/roles/\(role)/permissions", token: ops).json == .array([]))
        #expect(try server.store.auditEvents(limit: 1000).count == before + 1)

        // Each route's scope: a token without it is refused.
        let reader = try server.managementToken("reader", secret: TestServer.readerSecret)
        for (method, path) in [("GET", "/api/v2/roles"), ("POST", "/api/v2/roles"), ("GET", "/api/v2/roles/\(role)"), ("PATCH", "/api/v2/roles/\(role)"),
                               ("DELETE", "/api/v2/roles/\(role)"), ("GET", "/api/v2/roles/\(role)/permissions"), ("POST", "/api/v2/roles/\(role)/permissions"),
                               ("DELETE", "/api/v2/roles/\(role)/permissions"), ("GET", "/api/v2/roles/\(role)/users"), ("POST", "/api/v2/roles/\(role)/users"),
                               ("GET", "/api/v2/users/\(ada)/roles"), ("POST", "/api/v2/users/\(ada)/roles"), ("DELETE", "/api/v2/users/\(ada)/roles"),
                               ("GET", "/api/v2/users/\(ada)/permissions")] {
            let answer = try server.api(method, path, token: reader, .object(["name": .string("X")]))
            #expect(answer.status == 403 && answer.json["reason"] == .string("insufficient_scope"), "\(method) \(path): \(answer.json.serialized)")
        }
        let narrow = try server.managementToken(scope: "read:roles create:role_members")
        #expect(try server.api("GET", "/api/v2/roles", token: narrow).status == 200)
        #expect(try server.api("DELETE", "/api/v2/users/\(ada)/roles", token: narrow, .object(["roles": .array([.string(role)])])).status == 403)
        #expect(try server.api("GET", "/api/v2/roles", token: nil).status == 401)
        // A user's own token is no operator's.
        #expect(try server.api("GET", "/api/v2/roles", token: try Self.signIn(server, phone)["access_token"]?.string).status == 401)
    }

    @Test("without tokens.permissions, no token carries the claim and no role can be given a permission; a permission the setting drops leaves the tokens")
    func setting() throws {
        let off = try TestServer.withOperators()
        let phone = Phone(off)
        _ = try phone.signUp(email: "lin@bank.example")
        #expect(jwtClaims(try Self.signIn(off, phone)["access_token"]?.string)["permissions"] == nil)
        let ops = try off.managementToken()
        let role = try #require(try off.api("POST", "/api/v2/roles", token: ops, .object(["name": .string("R")])).json["id"]?.string)
        let refused = try off.api("POST", "/api/v2/roles/\(role)/permissions", token: ops,
                                  .object(["permissions": .array([.object(["resource_server_identifier": .string(Self.api), "permission_name": .string("read:reports")])])]))
        #expect(refused.status == 400 && (refused.json["error_description"]?.string ?? "").contains("names no permissions for the API"), "\(refused.json.serialized)")

        // Granted while the setting named it, then dropped from the setting: listed without a description, in no token.
        let before = try TestServer.withOperators { c in c.apiPermissions = [Self.api: Self.permissions] }
        let ada = Phone(before)
        let id = try #require(jwtClaims(try ada.signUp(email: "ada@bank.example")["access_token"]?.string)["sub"]?.string)
        let opsBefore = try before.managementToken()
        let teller = try #require(try before.api("POST", "/api/v2/roles", token: opsBefore, .object(["name": .string("Teller")])).json["id"]?.string)
        #expect(try before.api("POST", "/api/v2/roles/\(teller)/permissions", token: opsBefore, .object(["permissions": .array(["read:reports", "transfer:funds"].map {
            .object(["resource_server_identifier": .string(Self.api), "permission_name": .string($0)])
        })])).status == 201)
        #expect(try before.api("POST", "/api/v2/users/\(id)/roles", token: opsBefore, .object(["roles": .array([.string(teller)])])).status == 204)
        let after = try TestServer.withOperators(sharing: before.directory) { c in c.apiPermissions = [Self.api: ["read:reports": "Read the reports"]] }
        let listed = try after.api("GET", "/api/v2/roles/\(teller)/permissions", token: try after.managementToken()).json
        #expect(listed.array?.count == 2 && listed.array?.last?["permission_name"] == .string("transfer:funds") && listed.array?.last?["description"] == nil, "\(listed.serialized)")
        let phoneAfter = Phone(after, authenticator: ada.authenticator)
        #expect(jwtClaims(try Self.signIn(after, phoneAfter)["access_token"]?.string)["permissions"] == .array([.string("read:reports")]))
    }

    @Test("signet admin roles: add, grant (names from tokens.permissions), assign, show, list, revoke, unassign, remove; the running server's tokens follow; refusals exit non-zero")
    func commandLine() throws {
        let server = try Self.server()
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        let setting = ["SIGNET_TOKENS_PERMISSIONS": #"{"\#(Self.api)": {"read:reports": "Read the reports", "transfer:funds": "Move money"}}"#]
        func admin(_ arguments: [String], environment: [String: String] = setting) throws -> (status: Int32, output: String, errors: String) {
            try runProcess(ProcessTests.binary.path, ["admin", "roles"] + arguments + database, environment: environment, in: server.directory)
        }
        let phone = Phone(server)
        let ada = try #require(jwtClaims(try phone.signUp(email: "ada@bank.example")["access_token"]?.string)["sub"]?.string)

        let added = try OperationsTests.json(try admin(["add", "--name", "Teller", "--description", "Front desk", "--json"]).output)
        let id = try #require(added["id"]?.string)
        #expect(added["name"] == .string("Teller"))
        let granted = try admin(["grant", id, "--api", Self.api, "--permission", "read:reports", "--permission", "transfer:funds"])
        #expect(granted.status == 0 && granted.output.contains("granted read:reports, transfer:funds"), "\(granted.errors)")
        #expect(try admin(["assign", id, ada]).output.contains("gave role \(id) to 1 user(s)"))
        let shown = try admin(["show", id])
        #expect(shown.output.contains("Move money") && shown.output.contains("ada@bank.example") && shown.output.contains("2 permission(s), 1 member(s)"), "\(shown.output)")
        let user = try runProcess(ProcessTests.binary.path, ["admin", "users", "show", ada] + database, environment: setting, in: server.directory)
        #expect(user.output.contains("roles      Teller (\(id))"), "\(user.output)")
        let listed = try admin(["list", "--query", "tell"])
        #expect(listed.output.contains(id) && listed.output.contains("1 of 1 role(s)"))
        #expect(jwtClaims(try Self.signIn(server, phone)["access_token"]?.string)["permissions"] == .array([.string("read:reports"), .string("transfer:funds")]))

        // Refused: a permission the setting does not name, or any without the setting; an account or a role that is not there.
        let unknown = try admin(["grant", id, "--api", Self.api, "--permission", "delete:everything"])
        #expect(unknown.status == 2 && unknown.errors.contains("names no permission delete:everything"), "\(unknown.errors)")
        #expect(try admin(["grant", id, "--api", Self.api, "--permission", "read:reports"], environment: [:]).errors.contains("names no permissions for the API"))
        let nobody = try admin(["assign", id, ada, "nobody"])
        #expect(nobody.status == 1 && nobody.errors.contains("user_unknown"))
        #expect(try admin(["show", "rol_nope"]).errors.contains("role_not_found") && admin(["add"]).status == 2 && admin(["grant", id]).status == 2)

        #expect(try admin(["revoke", id, "--api", Self.api, "--permission", "transfer:funds"]).status == 0)
        #expect(jwtClaims(try Self.signIn(server, phone)["access_token"]?.string)["permissions"] == .array([.string("read:reports")]))
        #expect(try admin(["unassign", id, ada]).status == 0)
        #expect(jwtClaims(try Self.signIn(server, phone)["access_token"]?.string)["permissions"] == .array([]))
        #expect(try admin(["remove", id]).output.contains("removed role \(id)"))
        #expect(try admin(["list", "--json"]).output.trimmingCharacters(in: .whitespacesAndNewlines) == "[\n\n]" || admin(["list", "--json"]).output.contains("[]"))
        #expect(try server.store.auditEvents(limit: 100).filter { $0.clientID == "signet-admin" }.map(\.kind).contains("admin_role_deleted"))
    }

    @Test("an API written with PyJWT alone checks the claim: signature against the JWKS, typ, iss, aud, then the permission in permissions or scope; a token changed to grant more, or for another API, is refused",
          .enabled(if: DPoPTests.pythonAvailable, "needs python3-jwt and python3-cryptography"))
    func resourceServer() throws {
        let server = try TestServer.withOperators(.socket) { c in c.apiPermissions = [Self.api: Self.permissions] }
        let ops = try server.managementToken()
        let teller = Phone(server), visitor = Phone(server)
        let tellerID = try #require(jwtClaims(try teller.signUp(email: "teller@bank.example")["access_token"]?.string)["sub"]?.string)
        _ = try visitor.signUp(email: "visitor@bank.example")
        let role = try #require(try server.api("POST", "/api/v2/roles", token: ops, .object(["name": .string("Teller")])).json["id"]?.string)
        #expect(try server.api("POST", "/api/v2/roles/\(role)/permissions", token: ops, .object(["permissions": .array([
            .object(["resource_server_identifier": .string(Self.api), "permission_name": .string("transfer:funds")]),
        ])])).status == 201)
        #expect(try server.api("POST", "/api/v2/users/\(tellerID)/roles", token: ops, .object(["roles": .array([.string(role)])])).status == 204)

        let granted = try #require(try Self.signIn(server, teller, scope: "openid transfer:funds")["access_token"]?.string)
        let withNone = try #require(try Self.signIn(server, visitor, scope: "openid transfer:funds")["access_token"]?.string)
        let ownAPI = try #require(try Self.signIn(server, teller, audience: nil)["access_token"]?.string)
        let idToken = try #require(try Self.signIn(server, teller)["id_token"]?.string)
        // The visitor's token with its claim rewritten to grant the permission, signature kept.
        var parts = withNone.split(separator: ".").map(String.init)
        var payload = try #require(jwtClaims(withNone).object)
        payload["permissions"] = .array([.string("transfer:funds")])
        parts[1] = Base64URL.encode(Array(JSONValue.object(payload).serialized.utf8))
        let forged = parts.joined(separator: ".")

        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../scripts/resource-server-check.py").standardized.path
        let run = try runProcess("/usr/bin/python3", [script, "http://127.0.0.1:\(server.port)/.well-known/jwks.json", "https://signet.test", Self.api, "transfer:funds",
                                                      granted, withNone, ownAPI, idToken, forged])
        #expect(run.status == 0, "\(run.errors)")
        let reports = try run.output.split(separator: "\n").map { try StrictJSON().parse(Array($0.utf8)) }
        try #require(reports.count == 5, "\(run.output) \(run.errors)")
        // Both claims say so for the teller, who asked for the permission in scope and has it; neither for the visitor, who asked too.
        #expect(reports[0]["valid"] == .bool(true) && reports[0]["allowed"] == .bool(true) && reports[0]["permissions"] == .array([.string("transfer:funds")]))
        #expect(reports[0]["scope_allowed"] == .bool(true))
        #expect(reports[1]["valid"] == .bool(true) && reports[1]["allowed"] == .bool(false) && reports[1]["permissions"] == .array([]))
        #expect(reports[1]["scope_allowed"] == .bool(false))
        #expect(reports[2]["valid"] == .bool(false) && reports[2]["error"] == .string("InvalidAudienceError"), "\(reports[2].serialized)")
        #expect(reports[3]["valid"] == .bool(false) && reports[3]["error"] == .string("InvalidTokenError"), "\(reports[3].serialized)")
        #expect(reports[4]["valid"] == .bool(false) && reports[4]["error"] == .string("InvalidSignatureError"), "\(reports[4].serialized)")
    }

    @Test("a machine client's token for an API of tokens.permissions carries the permissions among its scopes, as a user's does; its Management API token only the Management API's scopes")
    func machineClient() throws {
        let secret = "backoffice-secret-0123456789abcdef"
        let server = try TestServer.withOperators { c in
            c.apiPermissions = [Self.api: Self.permissions]
            var backoffice = ClientConfiguration(id: "backoffice", grants: [GrantNames.clientCredentials], secretHash: Digest.sha256.hash(Array(secret.utf8)))
            backoffice.scopes = ["read:reports", "transfer:funds", "read:users"]
            c.clients.append(backoffice)
        }
        func token(audience: String?, scope: String? = nil) throws -> JSONValue {
            let body = "grant_type=client_credentials" + (audience.map { "&audience=" + Ceremonies.formEncoded($0) } ?? "") + (scope.map { "&scope=" + Ceremonies.formEncoded($0) } ?? "")
            let response = try server.send("POST", "/oauth/token", headers: [("Content-Type", "application/x-www-form-urlencoded"),
                                                                              ("Authorization", "Basic " + Data("backoffice:\(secret)".utf8).base64EncodedString())], body: Array(body.utf8))
            let json = try StrictJSON().parse(response.body)
            try #require(response.status == 200, "\(json.serialized)")
            return jwtClaims(json["access_token"]?.string)
        }
        let forAPI = try token(audience: Self.api)
        #expect(forAPI["scope"] == .string("read:reports transfer:funds") && forAPI["permissions"] == .array([.string("read:reports"), .string("transfer:funds")]), "\(forAPI.serialized)")
        let narrowed = try token(audience: Self.api, scope: "transfer:funds read:users")
        #expect(narrowed["permissions"] == .array([.string("transfer:funds")]) && narrowed["scope"] == .string("transfer:funds"))
        let management = try token(audience: nil)
        #expect(management["scope"] == .string("read:users") && management["permissions"] == nil, "\(management.serialized)")

        // A client kept in the database may hold the APIs' permissions too, given by an operator who need not hold them itself; a name no API has is refused.
        let ops = try server.managementToken()
        let made = try server.api("POST", "/api/v2/clients", token: ops, .object([
            "name": .string("teller-bot"), "grant_types": .array([.string("client_credentials")]), "scopes": .array([.string("read:reports")]),
        ]))
        #expect(made.status == 201 && made.json["scopes"] == .array([.string("read:reports")]), "\(made.json.serialized)")
        let unknown = try server.api("POST", "/api/v2/clients", token: ops, .object([
            "name": .string("bad"), "grant_types": .array([.string("client_credentials")]), "scopes": .array([.string("delete:everything")]),
        ]))
        #expect(unknown.status == 400 && (unknown.json["error_description"]?.string ?? "").contains("unknown scope"), "\(unknown.json.serialized)")
    }
}
