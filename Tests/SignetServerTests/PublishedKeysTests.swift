import Foundation
import SignetAPI
import SignetAuth
import SignetCurl
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetTestSupport
import SignetWebAuthn
import Synchronization
import Testing

/// A client's key server: `/jwks.json` answers what the test sets, and counts its requests.
final class KeyServer: HTTPHandler {
    let body = Mutex<[UInt8]>([])
    let status = Mutex(200)
    let requests = Mutex(0)

    func publish(_ keys: [SoftwareClientKey]) {
        body.withLock { $0 = Array(JSONValue.object(["keys": .array(keys.map { .object($0.jwk) })]).serialized.utf8) }
    }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        requests.withLock { $0 += 1 }
        return HTTPResponse(status: status.withLock { $0 }, headers: [("Content-Type", "application/json")], body: body.withLock { $0 })
    }

    var count: Int { requests.withLock { $0 } }
}

/// `jwks_uri` (OIDC Dynamic Client Registration §2; OIDC Core §10.1.1): a `private_key_jwt`
/// client that publishes its keys, which Signet fetches, keeps, and fetches again when the
/// client rotates them, so the operator never touches the keys.
@Suite struct PublishedKeysTests {
    static let tokenEndpoint = PrivateKeyJWTTests.tokenEndpoint

    /// A server whose client `svc-uri` publishes its keys at `uri`.
    static func server(_ uri: String, sharing: URL? = nil) throws -> TestServer {
        try TestServer.withOperators(sharing: sharing) { c in
            var client = ClientConfiguration(id: "svc-uri", grants: [GrantNames.clientCredentials])
            client.scopes = ["read:users"]
            client.jwksURI = uri
            c.clients.append(client)
        }
    }

    static func grant(_ server: TestServer, by key: SoftwareClientKey, client: String = "svc-uri") throws -> (status: Int, json: JSONValue) {
        let jwt = try key.assertion(clientID: client, audience: tokenEndpoint, now: server.clock.now)
        return try PrivateKeyJWTTests.grant(server, PrivateKeyJWTTests.jwtBearer.merging(["client_assertion": .string(jwt)]))
    }

    /// A key server publishing one new key, listening on loopback, and its set's address.
    static func keyServer(kid: String = "k1") throws -> (keys: KeyServer, listener: HTTPServer, uri: String, key: SoftwareClientKey) {
        let keys = KeyServer()
        let (listener, base) = try startLoopbackServer(keys)
        let key = try SoftwareClientKey(kid: kid)
        keys.publish([key])
        return (keys, listener, base + "/jwks.json", key)
    }

    static func lastRefusal(_ server: TestServer) throws -> AuditEvent? {
        try server.store.auditEvents(limit: 20).first { $0.kind == "client_authentication" && $0.outcome == "failure" }
    }

    @Test("fetched at the first assertion and kept; fetched anew when a key it lacks appears (the client rotated), but not twice in 30 s; again once 5 minutes old")
    func rotation() throws {
        let keys = KeyServer()
        let (listener, base) = try startLoopbackServer(keys)
        defer { listener.stop() }
        let old = try SoftwareClientKey(kid: "2026-11"), new = try SoftwareClientKey(kid: "2026-12"), stranger = try SoftwareClientKey(kid: "stolen")
        keys.publish([old])
        let server = try Self.server(base + "/jwks.json")

        let first = try Self.grant(server, by: old)
        #expect(first.status == 200 && first.json["access_token"] != nil, "\(first.json.serialized)")
        #expect(try Self.grant(server, by: old).status == 200)
        #expect(keys.count == 1)

        // The client publishes its next key and signs with it: one fetch, and it is accepted
        // (once 30 s have passed since the last fetch; within them the set is as new as it gets).
        keys.publish([new])
        #expect(try Self.grant(server, by: new).status == 401)
        #expect(keys.count == 1)
        server.clock.advance(31)
        #expect(try Self.grant(server, by: new).status == 200)
        #expect(keys.count == 2)
        // A key nobody published, at once: no second fetch within 30 s; refused.
        let refused = try Self.grant(server, by: stranger)
        #expect(refused.status == 401 && refused.json["reason"] == .string("client_assertion_invalid"))
        let why = try Self.lastRefusal(server)?.detail ?? ""
        #expect(keys.count == 2 && why.contains("no registered key has kid stolen"), "\(why)")
        // The retired key is no longer in the set fetched.
        #expect(try Self.grant(server, by: old).status == 401)
        server.clock.advance(31)
        #expect(try Self.grant(server, by: stranger).status == 401)
        #expect(keys.count == 3)
        // Five minutes old, a kept set still serves while a fetch in the background replaces it.
        server.clock.advance(301)
        keys.publish([new, stranger])
        #expect(try Self.grant(server, by: new).status == 200)
        #expect(eventually { keys.count == 4 })
        // That fetch brought the newly published key: it verifies without another fetch.
        #expect(eventually { (try? Self.grant(server, by: stranger).status) == 200 })
        #expect(keys.count == 4)
    }

    @Test("fetched at start, before any assertion, for the file's clients and the database's, and when the API adds or moves a client's jwks_uri: the first assertion waits for no fetch")
    func prefetched() throws {
        let (keys, listener, uri, key) = try Self.keyServer()
        defer { listener.stop() }
        let server = try Self.server(uri)
        #expect(eventually { keys.count == 1 })
        #expect(try Self.grant(server, by: key).status == 200)
        #expect(keys.count == 1)

        // A client the API adds, and one it moves to another address: each fetched at once.
        let token = try server.managementToken()
        let made = try server.api("POST", "/api/v2/clients", token: token, .object([
            "name": .string("Published"), "token_endpoint_auth_method": .string("private_key_jwt"), "jwks_uri": .string(uri),
            "grant_types": .array([.string("client_credentials")]), "scopes": .array([.string("read:users")]),
        ]))
        let id = try #require(made.json["client_id"]?.string, "\(made.json.serialized)")
        #expect(eventually { keys.count == 2 })
        #expect(try server.api("PATCH", "/api/v2/clients/\(id)", token: token, .object(["jwks_uri": .string(uri + "?v=2")])).status == 200)
        #expect(eventually { keys.count == 3 })
        #expect(try Self.grant(server, by: key, client: id).status == 200)
        #expect(keys.count == 3)

        // A restart fetches the database's client too, and the file's.
        let again = try Self.server(uri, sharing: server.directory)
        #expect(eventually { keys.count == 5 })
        #expect(try Self.grant(again, by: key, client: id).status == 200 && Self.grant(again, by: key).status == 200)
        #expect(keys.count == 5)
    }

    @Test("sixteen assertions at once, nothing kept yet: one fetch, and all sixteen accepted")
    func oneFetchAtOnce() throws {
        let (keys, listener, uri, key) = try Self.keyServer()
        defer { listener.stop() }
        let server = try Self.server(uri)
        let results = simultaneously(16) { _ in try Self.grant(server, by: key).status }
        #expect(results.map { try? $0.get() } == Array(repeating: 200, count: 16))
        #expect(keys.count == 1)
    }

    @Test("the key server down: the last set is used for a day; without one, refused, with why in the audit; a failed fetch at start holds off no assertion's; junk, oversize and private keys refused as at registration")
    func failures() throws {
        let (keys, listener, uri, key) = try Self.keyServer()
        defer { listener.stop() }
        keys.status.withLock { $0 = 503 }
        let server = try Self.server(uri)
        // The start's fetch fails; the first assertion fetches for itself all the same.
        #expect(eventually { keys.count == 1 })

        #expect(try Self.grant(server, by: key).json["reason"] == .string("client_assertion_invalid"))
        let down = try Self.lastRefusal(server)?.detail ?? ""
        #expect(down.contains("answered 503") && keys.count == 2, "\(down)")
        // A failed fetch is not tried again for 30 s, however many assertions come.
        #expect(try Self.grant(server, by: key).status == 401)
        #expect(keys.count == 2)
        keys.status.withLock { $0 = 200 }
        server.clock.advance(31)
        #expect(try Self.grant(server, by: key).status == 200)
        #expect(keys.count == 3)

        // Down again: the set fetched is used, stale, for a day after it was fetched.
        keys.status.withLock { $0 = 500 }
        server.clock.advance(3_600)
        #expect(try Self.grant(server, by: key).status == 200)
        #expect(eventually { keys.count == 4 })
        // That failed background fetch holds off the next for 30 s: the stale set serves alone.
        #expect(try Self.grant(server, by: key).status == 200)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(keys.count == 4)
        server.clock.advance(86_400)
        #expect(try Self.grant(server, by: key).status == 401)
        #expect(keys.count == 5)

        // What the key server sends is checked as a registration is.
        keys.status.withLock { $0 = 200 }
        var withPrivate = key.jwk
        withPrivate["d"] = .string("AAAA")
        let bodies: [([UInt8], String)] = [
            (Array("not json".utf8), "sent no JSON"),
            (Array(JSONValue.object(["keys": .array([.object(withPrivate)])]).serialized.utf8), "no usable JWK Set"),
            (Array(JSONValue.object(["keys": .array([.object(key.jwk)]), "pad": .string(String(repeating: "x", count: 70_000))]).serialized.utf8), "more than 64 KiB"),
        ]
        for (body, why) in bodies {
            keys.body.withLock { $0 = body }
            server.clock.advance(31)
            #expect(try Self.grant(server, by: key).status == 401, "\(why)")
            let detail = try Self.lastRefusal(server)?.detail ?? ""
            #expect(detail.contains(why), "\(why): \(detail)")
        }
    }

    @Test("registration: the configuration file, the API and the command; https or loopback http, one method per client; a patch moves between jwks and jwks_uri")
    func registration() throws {
        let (_, listener, uri, key) = try Self.keyServer(kid: "db-1")
        defer { listener.stop() }

        func loaded(_ client: String) throws -> ClientConfiguration? {
            let json = #"{"issuer": "https://auth.example.com", "relying_party": {"id": "example.com", "name": "E", "origins": ["https://example.com"]}, "clients": [\#(client)]}"#
            return try ConfigurationLoader.load(file: ConfigurationTests.write(json), environment: [:]).clients.first { $0.id == "m" }
        }
        #expect(try loaded(#"{"client_id": "m", "grants": ["client_credentials"], "jwks_uri": "https://keys.example.com/jwks.json"}"#)?.authenticationMethod == "private_key_jwt")
        for bad in [#""jwks_uri": "http://keys.example.com/jwks.json""#, #""jwks_uri": "https://keys.example.com/jwks.json#x""#,
                    #""jwks_uri": "https://keys.example.com/jwks.json", "jwks": {"keys": []}"#,
                    #""jwks_uri": "https://keys.example.com/jwks.json", "client_secret_hash": "sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA""#,
                    #""jwks_uri": "https://keys.example.com/jwks.json", "type": "public""#] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try loaded(#"{"client_id": "m", "grants": ["client_credentials"], \#(bad)}"#) }
        }

        let server = try TestServer.withOperators()
        let token = try server.managementToken()
        let body: JSONObject = ["name": .string("Published"), "token_endpoint_auth_method": .string("private_key_jwt"), "jwks_uri": .string(uri),
                                "grant_types": .array([.string("client_credentials")]), "scopes": .array([.string("read:users")])]
        let made = try server.api("POST", "/api/v2/clients", token: token, .object(body))
        #expect(made.status == 201 && made.json["jwks_uri"] == .string(uri) && made.json["client_secret"] == nil && made.json["keys"] == nil, "\(made.json.serialized)")
        let id = try #require(made.json["client_id"]?.string)
        #expect(try Self.grant(server, by: key, client: id).status == 200)
        #expect(try server.api("GET", "/api/v2/clients/\(id)", token: token).json["jwks_uri"] == .string(uri))

        // Refused: a public client, both ways at once, a plain-http host, and no update:client_keys.
        var bad = body
        bad["token_endpoint_auth_method"] = .string("none")
        #expect(try server.api("POST", "/api/v2/clients", token: token, .object(bad)).json["reason"] == .string("malformed"))
        bad = body
        bad["jwks"] = key.jwks
        #expect(try server.api("POST", "/api/v2/clients", token: token, .object(bad)).json["reason"] == .string("malformed"))
        bad = body
        bad["jwks_uri"] = .string("http://keys.example.com/jwks.json")
        #expect(try server.api("POST", "/api/v2/clients", token: token, .object(bad)).json["reason"] == .string("malformed"))
        let narrow = try server.managementToken(scope: "update:clients read:clients")
        #expect(try server.api("PATCH", "/api/v2/clients/\(id)", token: narrow, .object(["jwks_uri": .string(uri + "?v=2")])).json["reason"] == .string("insufficient_scope"))

        // Registered keys instead, then published again: one place for the keys at a time.
        let registered = try server.api("PATCH", "/api/v2/clients/\(id)", token: token, .object(["jwks": key.jwks]))
        #expect(registered.status == 200 && registered.json["jwks_uri"] == nil && registered.json["keys"]?.array?.count == 1, "\(registered.json.serialized)")
        let published = try server.api("PATCH", "/api/v2/clients/\(id)", token: token, .object(["jwks_uri": .string(uri)]))
        #expect(published.status == 200 && published.json["jwks_uri"] == .string(uri) && published.json["keys"] == nil)
        #expect(try Self.grant(server, by: key, client: id).status == 200)

        // The command, as an operator runs it.
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        let added = try OperationsTests.signet(["admin", "clients", "add", "--name", "Batch", "--type", "confidential", "--grant", "client_credentials",
                                                "--jwks-uri", uri, "--json"] + database, in: server.directory)
        #expect(added.status == 0, "\(added.errors)")
        let output = try OperationsTests.json(added.output)
        #expect(output["jwks_uri"] == .string(uri) && output["client_secret"] == nil && output["token_endpoint_auth_method"] == .string("private_key_jwt"))
    }

    @Test("signet doctor fetches each configured client's jwks_uri as the server would: a set passes with its kids; an error status, junk or nothing listening fails with the fix")
    func doctor() throws {
        let keys = KeyServer()
        let (listener, base) = try startLoopbackServer(keys)
        defer { listener.stop() }
        keys.publish([try SoftwareClientKey(kid: "k1"), try SoftwareClientKey(algorithm: "EdDSA", kid: "k2")])
        var configuration = TestServer.configuration()
        configuration.clients = ["good", "down"].map {
            var client = ClientConfiguration(id: $0, grants: [GrantNames.clientCredentials])
            client.jwksURI = $0 == "good" ? base + "/jwks.json" : "http://127.0.0.1:\((try? Loopback.freePort()) ?? 9)/jwks.json"
            return client
        } + [ClientConfiguration(id: "plain", grants: [GrantNames.authorizationCode])]
        let doctor = Doctor(configuration: configuration, options: HTTPSOptions(timeout: 5))
        var checks = doctor.clientKeyChecks()
        #expect(checks.map(\.name) == ["jwks_uri.good", "jwks_uri.down"] && checks.map(\.status) == [.pass, .fail])
        #expect(checks[0].detail == "2 key(s): k1, k2" && checks[1].detail.contains("failed") && checks[1].fix?.contains("JWK Set") == true, "\(checks)")
        keys.status.withLock { $0 = 404 }
        checks = doctor.clientKeyChecks()
        #expect(checks[0].status == .fail && checks[0].detail.contains("answered 404"))
        keys.status.withLock { $0 = 200 }
        keys.body.withLock { $0 = Array(#"{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}"#.utf8) }
        #expect(doctor.clientKeyChecks()[0].detail.contains("no usable JWK Set"))
    }
}
