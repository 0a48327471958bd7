import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// `private_key_jwt` (OIDC Core §9, RFC 7523): a confidential client that authenticates with a
/// JWT signed by its own key, at every endpoint where a client authenticates, each assertion
/// once across instances, and clients whose keys are kept in the database.
@Suite struct PrivateKeyJWTTests {
    static let issuer = "https://signet.test"
    static let tokenEndpoint = issuer + "/oauth/token"
    static let key = try! SoftwareClientKey(algorithm: "ES256", kid: "svc-1")

    /// A server with `svc`, a machine client with the key above, and `portal-jwt`, an app's
    /// client with every grant that authenticates the same way.
    static func server(sharing: URL? = nil) throws -> TestServer {
        try TestServer.withOperators(sharing: sharing) { c in
            var svc = ClientConfiguration(id: "svc", grants: [GrantNames.clientCredentials])
            svc.scopes = ["read:users"]
            svc.jwks = [key.jwk]
            var portal = ClientConfiguration(id: "portal-jwt", grants: GrantNames.all)
            portal.jwks = [key.jwk]
            c.clients += [svc, portal]
        }
    }

    static let jwtBearer: JSONObject = ["client_assertion_type": .string(ClientAssertion.jwtBearer)]

    static func assertion(_ client: String = "svc", audience: String = tokenEndpoint, by signer: SoftwareClientKey = key) throws -> JSONValue {
        .string(try signer.assertion(clientID: client, audience: audience))
    }

    static func grant(_ server: TestServer, _ members: JSONObject) throws -> (status: Int, json: JSONValue) {
        var body: JSONObject = ["grant_type": .string(GrantNames.clientCredentials)]
        for (name, value) in members { body[name] = value }
        return try server.post("/oauth/token", .object(body))
    }

    @Test("client_credentials by private_key_jwt: the assertion names the client, the token works, a second use is refused and audited")
    func clientCredentials() throws {
        let server = try Self.server()
        let jwt = try Self.assertion()
        let (status, tokens) = try Self.grant(server, Self.jwtBearer.merging(["client_assertion": jwt]))
        #expect(status == 200, "\(tokens.serialized)")
        let token = try #require(tokens["access_token"]?.string)
        #expect(jwtClaims(token)["client_id"] == .string("svc") && jwtClaims(token)["scope"] == .string("read:users"))
        #expect(try server.api("GET", "/api/v2/users", token: token).status == 200)
        // A form body, with client_id as well, works the same.
        let form = "grant_type=client_credentials&client_id=svc&client_assertion_type=" + ClientAssertion.jwtBearer.formEscaped
            + "&client_assertion=" + (try Self.key.assertion(clientID: "svc", audience: Self.tokenEndpoint))
        let formed = try server.send("POST", "/oauth/token", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(form.utf8))
        #expect(formed.status == 200, "\(String(decoding: formed.body, as: UTF8.self))")

        // The same assertion again: refused, and the log says so with the client it named.
        let (replayed, refusal) = try Self.grant(server, Self.jwtBearer.merging(["client_assertion": jwt]))
        #expect(replayed == 401 && refusal["reason"] == .string("client_assertion_replayed") && refusal["error"] == .string("invalid_client"), "\(refusal.serialized)")
        let failures = try server.store.auditEvents(limit: 20).filter { $0.kind == "client_authentication" && $0.outcome == "failure" }
        #expect(failures.count == 1 && failures[0].clientID == "svc" && failures[0].reason == "client_assertion_replayed")
        // The client has no secret: one is refused, as is no authentication at all.
        #expect(try Self.grant(server, ["client_id": .string("svc"), "client_secret": .string("guess")]).json["reason"] == .string("client_secret_invalid"))
        #expect(try Self.grant(server, ["client_id": .string("svc")]).json["reason"] == .string("client_secret_invalid"))
    }

    @Test("every refusal: two methods at once, a wrong or missing type, no assertion, a secret client, another endpoint's aud, another key, an unknown client")
    func refusals() throws {
        let server = try Self.server()
        let stranger = try SoftwareClientKey(kid: "svc-1")
        let cases: [(String, JSONObject, Int, String)] = [
            ("an assertion and a secret", Self.jwtBearer.merging(["client_assertion": try Self.assertion(), "client_secret": .string("x")]), 400, "malformed"),
            ("a SAML assertion type", ["client_assertion_type": .string("urn:ietf:params:oauth:client-assertion-type:saml2-bearer"),
                                       "client_assertion": try Self.assertion()], 401, "client_assertion_invalid"),
            ("an assertion without its type", ["client_assertion": try Self.assertion()], 401, "client_assertion_invalid"),
            ("a type without an assertion", Self.jwtBearer.merging(["client_id": .string("svc")]), 400, "malformed"),
            ("an assertion by a client that has a secret", Self.jwtBearer.merging(["client_assertion": try Self.assertion("ops")]), 401, "client_assertion_invalid"),
            ("aud of the revocation endpoint, sent to the token endpoint",
             Self.jwtBearer.merging(["client_assertion": try Self.assertion(audience: Self.issuer + "/oauth/revoke")]), 401, "client_assertion_invalid"),
            ("signed by a key the client never registered", Self.jwtBearer.merging(["client_assertion": try Self.assertion(by: stranger)]), 401, "client_assertion_invalid"),
            ("an unknown client", Self.jwtBearer.merging(["client_assertion": try Self.assertion("nobody")]), 401, "client_unknown"),
            ("client_id that differs from iss", Self.jwtBearer.merging(["client_id": .string("portal-jwt"), "client_assertion": try Self.assertion()]),
             401, "client_assertion_invalid"),
            ("not a JWT at all", Self.jwtBearer.merging(["client_id": .string("svc"), "client_assertion": .string("eyJ.x")]), 401, "client_assertion_invalid"),
        ]
        for (name, body, status, reason) in cases {
            let (got, json) = try Self.grant(server, body)
            #expect(got == status && json["reason"] == .string(reason), "\(name): \(got) \(json.serialized)")
        }
        // The refused assertions used no jti: the one signed for the token endpoint still works.
        #expect(try Self.grant(server, Self.jwtBearer.merging(["client_assertion": try Self.assertion()])).status == 200)
        let logged = try server.store.auditEvents(limit: 50).filter { $0.kind == "client_authentication" }
        #expect(logged.filter { $0.reason == "client_assertion_invalid" }.count == 7, "\(logged.map { "\($0.clientID ?? "-") \($0.reason ?? "-")" })")
    }

    @Test("an app's client: the passkey grant, refresh, introspection and revocation, each with an assertion for its own endpoint")
    func everyEndpoint() throws {
        let server = try Self.server()
        var phone = Phone(server)
        phone.clientID = "portal-jwt"
        let (session, credential) = try phone.startSignUp(email: "jwt@signet.test")
        let signUp: JSONObject = ["grant_type": .string(GrantType.webauthn), "client_id": .string("portal-jwt"), "auth_session": .string(session),
                                  "authn_response": credential]
        #expect(try server.post("/oauth/token", .object(signUp)).json["reason"] == .string("client_secret_invalid"))
        var signed = signUp.merging(Self.jwtBearer)
        signed["client_assertion"] = try Self.assertion("portal-jwt")
        let (status, tokens) = try server.post("/oauth/token", .object(signed))
        #expect(status == 200, "\(tokens.serialized)")
        let refreshToken = try #require(tokens["refresh_token"]?.string)

        let refresh: JSONObject = ["grant_type": .string("refresh_token"), "refresh_token": .string(refreshToken)]
        #expect(try server.post("/oauth/token", .object(refresh.merging(["client_id": .string("portal-jwt")]))).json["reason"] == .string("client_secret_invalid"))
        var refreshed = refresh.merging(Self.jwtBearer)
        refreshed["client_assertion"] = try Self.assertion("portal-jwt")
        let (again, rotated) = try server.post("/oauth/token", .object(refreshed))
        #expect(again == 200 && rotated["refresh_token"]?.string != nil, "\(rotated.serialized)")

        // Introspection, with the introspection endpoint as the audience and no client_id.
        let access = try #require(rotated["access_token"]?.string)
        var introspect = Self.jwtBearer.merging(["token": .string(access)])
        introspect["client_assertion"] = try Self.assertion("portal-jwt", audience: Self.issuer + "/oauth/introspect")
        let (looked, answer) = try server.post("/oauth/introspect", .object(introspect))
        #expect(looked == 200 && answer["active"] == .bool(true) && answer["client_id"] == .string("portal-jwt"), "\(answer.serialized)")

        // Revocation, with the issuer as the audience.
        var revoke = Self.jwtBearer.merging(["token": rotated["refresh_token"] ?? .null, "client_id": .string("portal-jwt")])
        revoke["client_assertion"] = try Self.assertion("portal-jwt", audience: Self.issuer)
        #expect(try server.post("/oauth/revoke", .object(revoke)).status == 200)
        introspect["client_assertion"] = try Self.assertion("portal-jwt", audience: Self.issuer + "/oauth/introspect")
        #expect(try server.post("/oauth/introspect", .object(introspect)).json["active"] == .bool(false))
    }

    @Test("a resource server with keys verifies an action token by an assertion for /actions/verify, once; Basic and no authentication are refused")
    func resourceServer() throws {
        let server = try TestServer { c in
            var bank = ClientConfiguration(id: "bank-jwt", grants: [])
            bank.jwks = [Self.key.jwk]
            c.clients.append(bank)
        }
        let account = try SignedIn(server, email: "pay-jwt@signet.test")
        let device = try SoftwareDeviceKey(deviceID: "iphone")
        let keyID = try account.enroll(device)
        func actionToken() throws -> String {
            let (status, answer) = try account.approveAction(keyID, key: device)
            try #require(status == 200, "\(answer.serialized)")
            return try #require(answer["action_token"]?.string)
        }
        let user = try #require(try server.store.user(email: "pay-jwt@signet.test"))
        func verify(_ token: String, _ extra: JSONObject, headers: [(String, String)] = []) throws -> (status: Int, json: JSONValue) {
            let body: JSONObject = ["action_token": .string(token), "action": Transfer.action, "sub": .string(user.id)]
            return try server.post("/actions/verify", .object(body.merging(extra)), headers: headers)
        }
        let token = try actionToken()
        #expect(try verify(token, [:]).json["reason"] == .string("client_secret_invalid"))
        let basic = ("Authorization", "Basic " + Data("bank-jwt:guess".utf8).base64EncodedString())
        #expect(try verify(token, [:], headers: [basic]).json["reason"] == .string("client_secret_invalid"))
        let assertion = try Self.assertion("bank-jwt", audience: Self.issuer + "/actions/verify")
        let (status, verified) = try verify(token, Self.jwtBearer.merging(["client_assertion": assertion]))
        #expect(status == 200 && verified["sub"] == .string(user.id), "\(verified.serialized)")
        // The same assertion for the next action: refused before the token is looked at.
        let next = try actionToken()
        #expect(try verify(next, Self.jwtBearer.merging(["client_assertion": assertion])).json["reason"] == .string("client_assertion_replayed"))
        let fresh = try Self.assertion("bank-jwt", audience: Self.issuer)
        #expect(try verify(next, Self.jwtBearer.merging(["client_assertion": fresh])).status == 200)
    }

    @Test("two instances on one database, given the same assertion at the same moment, accept it once")
    func onceAcrossInstances() throws {
        let first = try Self.server()
        let second = try Self.server(sharing: first.directory)
        for round in 0..<5 {
            let body = Self.jwtBearer.merging(["client_assertion": try Self.assertion()])
            let servers = [first, second, first, second]
            let results = concurrentlyRun(servers.count) { i in (try? Self.grant(servers[i], body).status) ?? 0 }
            #expect(results.sorted() == [200, 401, 401, 401], "round \(round): \(results)")
        }
    }

    @Test("keys kept in the database: a client added with a JWK Set and no secret, its keys replaced, the old key refused, a bad set refused")
    func storedClients() throws {
        let server = try Self.server()
        let ceremonies = server.app.service.ceremonies
        let context = RequestContext(remoteAddress: "127.0.0.1", requestID: "test")
        let added = try ceremonies.addClient(name: "Batch", type: "confidential", grants: [GrantNames.clientCredentials], scopes: ["read:users"], redirectURIs: [],
                                             audiences: nil, jwks: Self.key.jwks.serialized, by: .commandLine, context: context)
        #expect(added.secret == nil && added.client.secretHash == nil)
        let id = added.client.id
        #expect(try Self.grant(server, Self.jwtBearer.merging(["client_assertion": try Self.assertion(id)])).status == 200)

        let next = try SoftwareClientKey(algorithm: "EdDSA", kid: "batch-2")
        #expect(try ceremonies.setClientKeys(id: id, jwks: next.jwks.serialized, by: .commandLine, context: context) == 1)
        #expect(try Self.grant(server, Self.jwtBearer.merging(["client_assertion": try Self.assertion(id)])).json["reason"] == .string("client_assertion_invalid"))
        #expect(try Self.grant(server, Self.jwtBearer.merging(["client_assertion": try Self.assertion(id, by: next)])).status == 200)

        // A set with a private key, a client without keys, or a public client with keys: refused, nothing changed.
        var leaked = next.jwk
        leaked["d"] = .string("AAAA")
        #expect(throws: AuthError.self) { try ceremonies.setClientKeys(id: id, jwks: JSONValue.object(["keys": .array([.object(leaked)])]).serialized, by: .commandLine, context: context) }
        #expect(throws: AuthError.self) { try ceremonies.setClientKeys(id: "ops", jwks: next.jwks.serialized, by: .commandLine, context: context) }
        #expect(throws: AuthError.self) {
            try ceremonies.addClient(name: "Bad", type: "public", grants: [GrantNames.webauthn], scopes: [], redirectURIs: [], audiences: nil,
                                     jwks: next.jwks.serialized, by: .commandLine, context: context)
        }
        #expect(try Self.grant(server, Self.jwtBearer.merging(["client_assertion": try Self.assertion(id, by: next)])).status == 200)
        // Nor does it gain a secret beside its keys.
        #expect(throws: AuthError.self) { try ceremonies.rotateClientSecret(id: id, by: .commandLine, context: context) }
        let kinds = try server.store.auditEvents(limit: 30).map(\.kind)
        #expect(kinds.contains("admin_client_added") && kinds.filter { $0 == "admin_client_keys_set" }.count == 1)

        // A stored set that no longer reads as one (written by hand, say) leaves its client
        // confidential with no key that verifies: never a public client for want of keys. A
        // public client's refresh with an unknown token would be refresh_token_unknown.
        try server.store.insertClient(ClientRow(id: "broken", name: "Broken", type: "confidential", secretHash: nil,
                                                grants: [GrantNames.clientCredentials, GrantNames.refreshToken], scopes: ["read:users"], redirectURIs: [],
                                                audiences: nil, createdAt: 0, jwks: "{not json"))
        func refresh() throws -> JSONValue? {
            try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("broken"), "refresh_token": .string("x")])).json["reason"]
        }
        // Running servers read the stored clients again within 2 seconds.
        #expect(eventually(timeout: 5) { try refresh() != .string("client_unknown") })
        #expect(try refresh() == .string("client_secret_invalid"))
        let broken = try Self.grant(server, Self.jwtBearer.merging(["client_assertion": try Self.assertion("broken")])).json
        #expect(broken["reason"] == .string("client_assertion_invalid"), "\(broken.serialized)")
    }

    @Test("a configuration file's client with a jwks: confidential, private_key_jwt, no secret")
    func configured() throws {
        let json = #"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "svc", "type": "confidential", "grants": ["client_credentials"], "jwks": "#
            + Self.key.jwks.serialized + "}]}"
        let client = try #require(try ConfigurationLoader.load(file: try ConfigurationTests.write(json), environment: [:]).client("svc"))
        #expect(client.isConfidential && client.secretHash == nil && client.authenticationMethod == "private_key_jwt" && client.jwks == [Self.key.jwk])
    }

    @Test("the command line as the README shows it: client-key new, admin clients add --jwks, client-key assertion, then set-keys; list shows the method",
          arguments: ["ES256", "RS256"])
    func commandLine(_ alg: String) throws {
        let server = try TestServer()
        let directory = server.directory
        let database = ["--database", "sqlite:" + directory.appendingPathComponent("signet.db").path]
        func signet(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) { try OperationsTests.signet(arguments, in: directory) }

        let made = try signet(["client-key", "new", "--alg", alg, "--out", "svc.pem"])
        #expect(made.status == 0, "\(made.errors)")
        try Data(made.output.utf8).write(to: directory.appendingPathComponent("svc.jwks.json"))
        let mode = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("svc.pem").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try signet(["client-key", "new", "--out", "svc.pem"]).errors.contains("not overwritten"))
        let added = try OperationsTests.json(try signet(["admin", "clients", "add", "--name", "Batch", "--type", "confidential", "--grant", "client_credentials",
                                                         "--scope", "read:users", "--jwks", "svc.jwks.json", "--json"] + database).output)
        let id = try #require(added["client_id"]?.string)
        #expect(added["client_secret"] == nil && added["token_endpoint_auth_method"] == .string("private_key_jwt"), "\(added.serialized)")
        #expect(added["keys"]?.array?.first?["alg"] == .string(alg))
        #expect(try signet(["admin", "clients", "list"] + database).output.contains("private_key_jwt"))

        func token() throws -> Int {
            let made = try signet(["client-key", "assertion", "--key", "svc.pem", "--client-id", id, "--audience", Self.tokenEndpoint]
                                  + (alg == "RS256" ? ["--alg", "RS256"] : []))
            return try Self.grant(server, Self.jwtBearer.merging(["client_assertion": .string(made.output.trimmingCharacters(in: .whitespacesAndNewlines))])).status
        }
        #expect(eventually(timeout: 5) { try token() == 200 })

        // Replaced by another key: the first one's assertions are refused.
        let next = try SoftwareClientKey(algorithm: "EdDSA", kid: "next")
        try Data(next.jwks.serialized.utf8).write(to: directory.appendingPathComponent("next.json"))
        let set = try signet(["admin", "clients", "set-keys", id, "--jwks", "next.json"] + database)
        #expect(set.status == 0 && set.output.contains("keys           1"), "\(set.errors)")
        #expect(eventually(timeout: 5) { try token() == 401 })
        #expect(try Self.grant(server, Self.jwtBearer.merging(["client_assertion": try Self.assertion(id, by: next)])).status == 200)
        let refused = try signet(["admin", "clients", "set-keys", id, "--jwks", "svc.pem"] + database)
        #expect(refused.status != 0 && refused.errors.contains("JWK Set"), "\(refused.errors)")
    }

    /// Authlib's client-side `PrivateKeyJWT` (`scripts/private-key-jwt-check.py`) against Signet
    /// on a loopback port: a library that was not written with Signet signs the assertions.
    @Test("Authlib's private_key_jwt: a token, the Management API, introspection, and an assertion refused the second time",
          .enabled(if: Self.authlibAvailable, "needs the venv with authlib and requests that scripts/test.sh makes"), arguments: ["ES256", "PS256", "EdDSA"])
    func authlib(_ alg: String) throws {
        let key = try SoftwareClientKey(algorithm: alg, kid: "authlib-\(alg)")
        let port = freeLoopbackPort()
        let issuer = "http://127.0.0.1:\(port)"
        let server = try TestServer(.socket) { c in
            c.listenPort = port
            c.issuer = issuer
            var svc = ClientConfiguration(id: "svc", grants: [GrantNames.clientCredentials])
            svc.scopes = ["read:users"]
            svc.jwks = [key.jwk]
            c.clients.append(svc)
        }
        let pem = server.directory.appendingPathComponent("svc.pem")
        try Data(key.privateKeyPEM.utf8).write(to: pem)
        let script = WebBrowserTests.root.appendingPathComponent("scripts/private-key-jwt-check.py").path
        let run = try runProcess(WebBrowserTests.python, [script, issuer, "svc", pem.path, alg])
        let line = try #require(run.output.split(separator: "\n").last { $0.hasPrefix("report ") }, "no report: \(run.errors.suffix(2000))")
        let r = try StrictJSON().parse(Array(line.dropFirst(7).utf8))
        #expect(r["failed"] == nil, "\(r["failed"]?.string ?? "") \(run.errors.suffix(1500))")
        #expect(r["methods"]?.array?.contains(.string("private_key_jwt")) == true && r["algorithms"]?.array?.contains(.string(alg)) == true)
        #expect(r["token_type"] == .string("Bearer") && r["scope"] == .string("read:users") && r["users_status"] == .number("200"), "\(r.serialized)")
        #expect(r["introspection_active"] == .bool(true) && r["introspection_client"] == .string("svc"), "\(r.serialized)")
        #expect(r["first_status"] == .number("200") && r["second_status"] == .number("401") && r["second_reason"] == .string("client_assertion_replayed")
                && r["second_error"] == .string("invalid_client"), "\(r.serialized)")
    }

    static var authlibAvailable: Bool {
        if ProcessInfo.processInfo.environment["SIGNET_REQUIRE_BROWSER"] == "1" { return true }
        return FileManager.default.isExecutableFile(atPath: WebBrowserTests.python)
            && (try? runProcess(WebBrowserTests.python, ["-c", "import authlib, requests"]).status) == 0
    }

    @Test("discovery names private_key_jwt and its algorithms for the token, revocation and introspection endpoints")
    func discovery() throws {
        let server = try Self.server()
        let document = try StrictJSON().parse(try server.get("/.well-known/openid-configuration").body)
        for endpoint in ["token", "revocation", "introspection"] {
            #expect(document["\(endpoint)_endpoint_auth_methods_supported"]?.array?.contains(.string("private_key_jwt")) == true)
            #expect(document["\(endpoint)_endpoint_auth_signing_alg_values_supported"] == .array(ClientAssertion.algorithms.map(JSONValue.string)))
        }
    }
}

extension JSONObject {
    func merging(_ other: JSONObject) -> JSONObject {
        var merged = self
        for (name, value) in other { merged[name] = value }
        return merged
    }
}

extension String {
    var formEscaped: String { addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? self }
}

/// `body(i)` for i in 0..<n, each on its own thread, started together.
func concurrentlyRun<T: Sendable>(_ n: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
    let results = LockedBox([T?](repeating: nil, count: n))
    let group = DispatchGroup()
    for i in 0..<n {
        group.enter()
        Thread {
            let value = body(i)
            results.with { $0[i] = value }
            group.leave()
        }.start()
    }
    group.wait()
    return results.with { $0.compactMap { $0 } }
}

final class LockedBox<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func with<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
