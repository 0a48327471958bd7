import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// `/api/v2/clients` over a real socket: the clients kept in the database made, read, changed,
/// given new secrets and removed by a machine client, and every refusal.
@Suite struct ManagementClientsTests {
    /// `ops` (every scope), `reader` (`read:users`), and `clients`: every client scope but no
    /// other, so that it may not make or touch a client worth more than itself.
    static func server() throws -> (TestServer, ops: String, clients: String, reader: String) {
        let server = try TestServer.withOperators(.socket) { c in
            var clients = ClientConfiguration(id: "clients", grants: [GrantNames.clientCredentials], secretHash: Digest.sha256.hash(Array("clients-secret".utf8)))
            clients.scopes = ["read:clients", "create:clients", "update:clients", "delete:clients", "update:client_keys"]
            c.clients.append(clients)
        }
        return (server, try server.managementToken(), try server.managementToken("clients", secret: "clients-secret"),
                try server.managementToken("reader", secret: TestServer.readerSecret))
    }

    static func rows(_ kind: AuditKind, in server: TestServer) throws -> Int {
        try server.store.auditEvents(limit: 1000).filter { $0.kind == kind.rawValue }.count
    }

    /// A `client_credentials` answer's status and reason for `id` with `secret`.
    static func grant(_ server: TestServer, _ id: String, _ secret: String) throws -> (Int, String?) {
        let answer = try server.post("/oauth/token", .object([
            "grant_type": .string("client_credentials"), "client_id": .string(id), "client_secret": .string(secret), "scope": .string("read:users"),
        ]))
        return (answer.status, answer.json["reason"]?.string ?? answer.json["scope"]?.string)
    }

    @Test("a machine client made, listed, read, changed, given a new secret and removed; each change with its audit row, each secret working at once")
    func lifecycle() throws {
        let (server, ops, _, _) = try Self.server()
        let made = try server.api("POST", "/api/v2/clients", token: ops, .object([
            "name": .string("Nightly export"), "grant_types": .array([.string("client_credentials")]), "scopes": .array([.string("read:users")]),
            "audiences": .array([.string("https://signet.test/api/v2/")]),
        ]))
        #expect(made.status == 201, "\(made.json.serialized)")
        let id = try #require(made.json["client_id"]?.string)
        let secret = try #require(made.json["client_secret"]?.string)
        #expect(id.hasPrefix("c_") && secret.utf8.count == 43)
        #expect(made.json["token_endpoint_auth_method"] == .string("client_secret_basic") && made.json["scopes"] == .array([.string("read:users")]))
        #expect(made.json["oidc_logout"] == nil && made.json["keys"] == nil && made.json["require_pushed_authorization_requests"] == .bool(false))
        #expect(try Self.grant(server, id, secret) == (200, "read:users"))
        // Read: never the secret; the list with totals, pages and fields.
        let read = try server.api("GET", "/api/v2/clients/\(id)", token: ops)
        #expect(read.status == 200 && read.json["client_secret"] == nil && read.json["name"] == .string("Nightly export"))
        let publicClient = try server.api("POST", "/api/v2/clients", token: ops, .object([
            "name": .string("Web"), "token_endpoint_auth_method": .string("none"), "grant_types": .array([.string("authorization_code"), .string("refresh_token")]),
            "callbacks": .array([.string("https://web.example/cb")]), "allowed_logout_urls": .array([.string("https://web.example/bye")]),
            "oidc_logout": .object(["backchannel_logout_urls": .array([.string("https://web.example/logout")])]),
            "require_pushed_authorization_requests": .bool(true),
        ]))
        #expect(publicClient.status == 201 && publicClient.json["client_secret"] == nil && publicClient.json["token_endpoint_auth_method"] == .string("none"))
        #expect(publicClient.json["oidc_logout"]?["backchannel_logout_urls"] == .array([.string("https://web.example/logout")]))
        // The list: the configuration file's clients first, read-only, then the database's, oldest first.
        let list = try #require(try server.api("GET", "/api/v2/clients", token: ops).json.array)
        let configured = server.app.configuration.clients.map(\.id)
        #expect(list.map { $0["client_id"]?.string } == (configured + [id, publicClient.json["client_id"]?.string].compactMap { $0 }).map(Optional.some))
        #expect(list.map { $0["source"]?.string } == Array(repeating: "configuration", count: configured.count) + ["database", "database"])
        #expect(list.allSatisfy { $0["client_secret"] == nil && ($0["created_at"] == nil) == ($0["source"] == .string("configuration")) })
        let opsEntry = try #require(list.first { $0["client_id"] == .string("ops") })
        #expect(opsEntry["token_endpoint_auth_method"] == .string("client_secret_basic") && opsEntry["scopes"]?.array?.count == ManagementScope.allCases.count)
        let page = try server.api("GET", "/api/v2/clients?page=\(configured.count + 1)&per_page=1&include_totals=true&fields=client_id,name", token: ops)
        #expect(page.json["total"] == .number(String(configured.count + 2)) && page.json["start"] == .number(String(configured.count + 1)) && page.json["length"] == .number("1"))
        #expect(page.json["clients"] == .array([.object(["client_id": publicClient.json["client_id"]!, "name": .string("Web")])]))
        // Pages that cross from the file's clients to the database's, and one past the end.
        let every = configured + [id, try #require(publicClient.json["client_id"]?.string)]
        for perPage in [2, 3, configured.count - 1] {
            var seen: [String] = []
            for number in 0..<((every.count + perPage - 1) / perPage) {
                seen += try #require(try server.api("GET", "/api/v2/clients?page=\(number)&per_page=\(perPage)&fields=client_id", token: ops).json.array).compactMap { $0["client_id"]?.string }
            }
            #expect(seen == every, "per_page \(perPage)")
        }
        #expect(try server.api("GET", "/api/v2/clients?page=\(every.count)&per_page=1", token: ops).json == .array([]))
        // A change: only the members sent; the back-channel URI removed with null.
        let changed = try server.api("PATCH", "/api/v2/clients/\(id)", token: ops, .object([
            "name": .string("Nightly export (v2)"), "scopes": .array([.string("read:users"), .string("read:logs")]), "oidc_logout": .null,
        ]))
        #expect(changed.status == 200 && changed.json["name"] == .string("Nightly export (v2)") && changed.json["client_secret"] == nil)
        #expect(changed.json["scopes"] == .array([.string("read:users"), .string("read:logs")]) && changed.json["audiences"] == .array([.string("https://signet.test/api/v2/")]))
        #expect(try server.store.clientRow(id: id)?.scopes == ["read:users", "read:logs"])
        let audit = try #require(try server.store.auditEvents(limit: 100).first { $0.kind == AuditKind.adminClientUpdated.rawValue })
        #expect(audit.clientID == "ops" && audit.detail == "client \(id): name, scopes, oidc_logout")
        // A new secret: the old one is refused from the next request on.
        let rotated = try server.api("POST", "/api/v2/clients/\(id)/rotate-secret", token: ops)
        let next = try #require(rotated.json["client_secret"]?.string)
        #expect(rotated.status == 200 && next != secret && rotated.json["name"] == .string("Nightly export (v2)"))
        #expect(try Self.grant(server, id, secret) == (401, "client_secret_invalid"))
        #expect(try Self.grant(server, id, next) == (200, "read:users"))
        // Removed: gone from the API and from the token endpoint.
        #expect(try server.api("DELETE", "/api/v2/clients/\(id)", token: ops).status == 204)
        let gone = try server.api("GET", "/api/v2/clients/\(id)", token: ops)
        #expect(gone.status == 404 && gone.json["reason"] == .string("client_not_found"))
        #expect(try Self.grant(server, id, next).0 == 401)
        for kind in [AuditKind.adminClientAdded: 2, .adminClientUpdated: 1, .adminClientSecretRotated: 1, .adminClientRemoved: 1] {
            #expect(try Self.rows(kind.key, in: server) == kind.value, "\(kind.key)")
        }
    }

    @Test("a private_key_jwt client: made with its keys, given new ones only with update:client_keys, never a secret")
    func keys() throws {
        let (server, ops, clients, _) = try Self.server()
        let first = try SoftwareClientKey(algorithm: "ES256", kid: "one"), second = try SoftwareClientKey(algorithm: "ES256", kid: "two")
        func set(_ key: SoftwareClientKey, kid: String) throws -> JSONValue { key.jwks }
        let made = try server.api("POST", "/api/v2/clients", token: ops, .object([
            "name": .string("Signer"), "token_endpoint_auth_method": .string("private_key_jwt"), "grant_types": .array([.string("client_credentials")]),
            "jwks": try set(first, kid: "one"),
        ]))
        #expect(made.status == 201 && made.json["client_secret"] == nil && made.json["token_endpoint_auth_method"] == .string("private_key_jwt"))
        #expect(made.json["keys"]?.array?.first?["kid"] == .string("one"))
        let id = try #require(made.json["client_id"]?.string)
        // update:clients alone cannot hand in keys; with update:client_keys it can.
        let narrow = try server.managementToken("clients", secret: "clients-secret", scope: "update:clients")
        let refused = try server.api("PATCH", "/api/v2/clients/\(id)", token: narrow, .object(["jwks": try set(second, kid: "two")]))
        #expect(refused.status == 403 && refused.json["reason"] == .string("insufficient_scope"))
        let replaced = try server.api("PATCH", "/api/v2/clients/\(id)", token: clients, .object(["jwks": try set(second, kid: "two")]))
        #expect(replaced.status == 200 && replaced.json["keys"]?.array?.map { $0["kid"] } == [.string("two")])
        // No secret for a client with keys, no keys for a client with a secret.
        let rotate = try server.api("POST", "/api/v2/clients/\(id)/rotate-secret", token: ops)
        #expect(rotate.status == 404 && rotate.json["reason"] == .string("client_not_found"))
        let secretClient = try server.api("POST", "/api/v2/clients", token: ops, .object(["name": .string("S"), "grant_types": .array([.string("client_credentials")])]))
        let secretID = try #require(secretClient.json["client_id"]?.string)
        let keysOnSecret = try server.api("PATCH", "/api/v2/clients/\(secretID)", token: ops, .object(["jwks": try set(second, kid: "two")]))
        #expect(keysOnSecret.status == 400 && keysOnSecret.json["reason"] == .string("malformed"))
        #expect(try server.store.clientRow(id: secretID)?.jwks == nil && server.store.clientRow(id: id)?.secretHash == nil)
    }

    @Test("a caller makes and touches no client with a Management API scope it lacks itself; reads need read:clients")
    func noEscalation() throws {
        let (server, ops, clients, reader) = try Self.server()
        // `clients` may not mint a client that reads users, nor give one that scope later.
        let minted = try server.api("POST", "/api/v2/clients", token: clients, .object([
            "name": .string("Mine"), "grant_types": .array([.string("client_credentials")]), "scopes": .array([.string("read:users")]),
        ]))
        #expect(minted.status == 403 && minted.json["reason"] == .string("insufficient_scope"))
        #expect(try server.store.clientRows().isEmpty && Self.rows(.adminClientAdded, in: server) == 0)
        let own = try server.api("POST", "/api/v2/clients", token: clients, .object(["name": .string("Mine"), "grant_types": .array([.string("client_credentials")])]))
        let ownID = try #require(own.json["client_id"]?.string)
        let raised = try server.api("PATCH", "/api/v2/clients/\(ownID)", token: clients, .object(["scopes": .array([.string("delete:users")])]))
        #expect(raised.status == 403 && raised.json["reason"] == .string("insufficient_scope"))
        #expect(try server.store.clientRow(id: ownID)?.scopes == [])
        // A client that reads users, made by ops: `clients` may not take its secret, change it or remove it.
        let strong = try server.api("POST", "/api/v2/clients", token: ops, .object([
            "name": .string("Strong"), "grant_types": .array([.string("client_credentials")]), "scopes": .array([.string("read:users")]),
        ]))
        let strongID = try #require(strong.json["client_id"]?.string)
        let strongSecret = try #require(strong.json["client_secret"]?.string)
        for (method, path, body) in [("POST", "/api/v2/clients/\(strongID)/rotate-secret", nil), ("PATCH", "/api/v2/clients/\(strongID)", JSONValue.object(["name": .string("x")])),
                                     ("DELETE", "/api/v2/clients/\(strongID)", nil)] as [(String, String, JSONValue?)] {
            let answer = try server.api(method, path, token: clients, body)
            #expect(answer.status == 403 && answer.json["reason"] == .string("insufficient_scope"), "\(method) \(path)")
        }
        #expect(try Self.grant(server, strongID, strongSecret) == (200, "read:users"))
        #expect(try server.store.clientRow(id: strongID)?.name == "Strong")
        // Its own: a new secret, a change, removal.
        #expect(try server.api("POST", "/api/v2/clients/\(ownID)/rotate-secret", token: clients).status == 200)
        #expect(try server.api("PATCH", "/api/v2/clients/\(ownID)", token: clients, .object(["name": .string("Renamed")])).status == 200)
        #expect(try server.api("DELETE", "/api/v2/clients/\(ownID)", token: clients).status == 204)
        // Each route and its scope: none, a user's audience, and a token without the scope.
        let routes: [(String, String, JSONValue?)] = [
            ("GET", "/api/v2/clients", nil), ("GET", "/api/v2/clients/\(strongID)", nil), ("POST", "/api/v2/clients", .object(["name": .string("n")])),
            ("PATCH", "/api/v2/clients/\(strongID)", .object(["name": .string("n")])), ("DELETE", "/api/v2/clients/\(strongID)", nil),
            ("POST", "/api/v2/clients/\(strongID)/rotate-secret", nil),
        ]
        for (method, path, body) in routes {
            #expect(try server.api(method, path, token: nil, body).json["reason"] == .string("token_missing"), "\(method) \(path)")
            let missing = try server.api(method, path, token: reader, body)
            #expect(missing.status == 403 && missing.json["reason"] == .string("insufficient_scope"), "\(method) \(path)")
        }
        #expect(try server.store.clientRow(id: strongID)?.name == "Strong")
    }

    @Test("bad bodies and unknown clients: a clear 400 or 404 with its reason, nothing written")
    func refusals() throws {
        let (server, ops, _, _) = try Self.server()
        let base: JSONObject = ["name": .string("Web"), "token_endpoint_auth_method": .string("none"), "grant_types": .array([.string("authorization_code")]),
                                "callbacks": .array([.string("https://web.example/cb")])]
        func with(_ changes: JSONObject) -> JSONValue {
            var body = base
            for (name, value) in changes { body[name] = value }
            return .object(body)
        }
        let many = JSONValue.array((0...100).map { .string("https://web.example/\($0)") })
        let bad: [(JSONValue, String)] = [
            (.array([]), "not an object"), (with(["app_type": .string("spa")]), "a setting Signet lacks"), (with(["name": .null]), "no name"),
            (with(["name": .string(String(repeating: "n", count: 101))]), "a long name"), (with(["grant_types": .array([])]), "no grant"),
            (with(["grant_types": .array([.string("password")])]), "an unknown grant"), (with(["grant_types": .string("authorization_code")]), "a grant not in a list"),
            (with(["grant_types": .array([.string("client_credentials")])]), "client_credentials for a public client"),
            (with(["callbacks": .array([.string("https://web.example/a b")])]), "a space in a redirect URI"),
            (with(["callbacks": .array([.string("https://web.example/cb#x")])]), "a fragment"), (with(["callbacks": many]), "101 redirect URIs"),
            (with(["allowed_logout_urls": .array([.string("/relative")])]), "a relative logout URI"),
            (with(["audiences": .array([.string("https://api.example two")])]), "a space in an audience"), (with(["audiences": .array([.string("")])]), "an empty audience"),
            (with(["scopes": .array([.string("write:everything")])]), "an unknown scope"),
            (with(["oidc_logout": .object(["backchannel_logout_urls": .array([.string("https://a.example/1"), .string("https://a.example/2")])])]), "two logout URIs"),
            (with(["oidc_logout": .object(["backchannel_logout_urls": .array([.string("http://web.example/logout")])])]), "http to a remote host"),
            (with(["oidc_logout": .object(["other": .array([])])]), "an unknown logout member"),
            (with(["require_pushed_authorization_requests": .string("yes")]), "a flag not a boolean"),
            (with(["token_endpoint_auth_method": .string("client_secret_jwt")]), "an unknown method"),
            (with(["token_endpoint_auth_method": .string("private_key_jwt")]), "private_key_jwt without keys"),
            (with(["jwks": .object(["keys": .array([])])]), "keys for a public client"), (with(["jwks": .string("x")]), "keys not a JWK Set"),
        ]
        for (body, label) in bad {
            let answer = try server.api("POST", "/api/v2/clients", token: ops, body)
            #expect(answer.status == 400 && answer.json["reason"] == .string("malformed"), "\(label): \(answer.status) \(answer.json.serialized)")
        }
        #expect(try server.store.clientRows().isEmpty && Self.rows(.adminClientAdded, in: server) == 0)
        let made = try server.api("POST", "/api/v2/clients", token: ops, with([:]))
        let id = try #require(made.json["client_id"]?.string)
        let before = try server.store.clientRow(id: id)
        for (body, label) in [(JSONValue.object(["token_endpoint_auth_method": .string("client_secret_basic")]), "the type"),
                              (.object(["client_id": .string("c_other")]), "the ID"), (.object(["grant_types": .array([.string("client_credentials")])]), "a grant for a public client"),
                              (.object(["callbacks": .array([.string("no-scheme")])]), "a bad redirect URI"), (.object(["name": .number("1")]), "a name not a string"),
                              (.object([:]), "nothing to change"), (.object(["name": .null]), "only nulls that change nothing")] {
            let answer = try server.api("PATCH", "/api/v2/clients/\(id)", token: ops, body)
            #expect(answer.status == 400 && answer.json["reason"] == .string("malformed"), "\(label): \(answer.json.serialized)")
        }
        #expect(try server.store.clientRow(id: id) == before && Self.rows(.adminClientUpdated, in: server) == 0)
        // No such client: 404 on every route that names one. A client of the configuration file
        // is read (never its secret) and changed nowhere but there: 409 on every other route.
        let routes: [(String, String, JSONValue?)] = [("PATCH", "", JSONValue.object(["name": .string("n")])), ("DELETE", "", nil), ("POST", "/rotate-secret", nil)]
        for missing in ["c_none", String(repeating: "x", count: 300)] {
            for (method, path, body) in [("GET", "", nil)] + routes {
                let answer = try server.api(method, "/api/v2/clients/\(missing)\(path)", token: ops, body)
                #expect(answer.status == 404 && answer.json["reason"] == .string("client_not_found"), "\(method) \(missing.prefix(8))\(path)")
            }
        }
        let configured = try server.api("GET", "/api/v2/clients/ops", token: ops)
        #expect(configured.status == 200 && configured.json["source"] == .string("configuration") && configured.json["client_secret"] == nil)
        #expect(configured.json["grant_types"] == .array([.string("client_credentials")]) && configured.json["created_at"] == nil)
        for (method, path, body) in routes {
            let answer = try server.api(method, "/api/v2/clients/ops\(path)", token: ops, body)
            #expect(answer.status == 409 && answer.json["reason"] == .string("client_configured"), "\(method) ops\(path)")
        }
        #expect(try Self.grant(server, "ops", TestServer.opsSecret) == (200, "read:users"))
        let pages = try server.api("GET", "/api/v2/clients?per_page=0", token: ops)
        #expect(pages.status == 400 && pages.json["reason"] == .string("malformed"))
    }

    @Test("signet admin clients update: the settings given replace the client's, the others stay; nothing given, both of a pair, a bad URI or no client is refused")
    func commandLine() throws {
        let server = try TestServer()
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        func signet(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
            try OperationsTests.signet(["admin", "clients"] + arguments + database, in: server.directory)
        }
        let added = try OperationsTests.json(try signet(["add", "--name", "Web", "--type", "public", "--grant", "authorization_code",
                                                         "--redirect-uri", "https://web.example/cb", "--audience", "https://api.example", "--json"]).output)
        let id = try #require(added["client_id"]?.string)
        let updated = try signet(["update", id, "--name", "Web 2", "--redirect-uri", "https://web.example/a", "--redirect-uri", "https://web.example/b",
                                  "--backchannel-logout-uri", "https://web.example/logout", "--require-par", "--default-audiences", "--json"])
        #expect(updated.status == 0, "\(updated.errors)")
        let row = try #require(try server.store.clientRow(id: id))
        #expect(row.name == "Web 2" && row.redirectURIs == ["https://web.example/a", "https://web.example/b"] && row.requirePushedRequests)
        #expect(row.backchannelLogoutURI == "https://web.example/logout" && row.audiences == nil && row.grants == ["authorization_code"] && row.type == "public")
        #expect(try OperationsTests.json(updated.output)["redirect_uris"] == .array([.string("https://web.example/a"), .string("https://web.example/b")]))
        #expect(try signet(["update", id, "--backchannel-logout-uri", "", "--no-require-par"]).status == 0)
        #expect(try server.store.clientRow(id: id).map { $0.backchannelLogoutURI == nil && !$0.requirePushedRequests } == true)
        let before = try server.store.clientRow(id: id)
        for (arguments, status, message) in [([String](), Int32(2), "at least one setting"), (["--audience", "a", "--default-audiences"], 2, "not both"),
                                             (["--require-par", "--no-require-par"], 2, "not both"), (["--redirect-uri", "https://web.example/a b"], 2, "redirect URI"),
                                             (["--grant", "client_credentials"], 2, "confidential")] {
            let refused = try signet(["update", id] + arguments)
            #expect(refused.status == status && refused.errors.contains(message), "\(arguments): \(refused.errors)")
        }
        #expect(try server.store.clientRow(id: id) == before)
        let missing = try signet(["update", "c_none", "--name", "x"])
        #expect(missing.status == 1 && missing.errors.contains("client_not_found"), "\(missing.errors)")
    }
}
