import Foundation
import SignetAuth
import SignetHTTP
import SignetServer
import SignetStore
import SignetWebAuthn
import SignetTestSupport
import Testing

/// `PUT /api/v2/keys/signing/{kid}/revoke` and `signet keys revoke`: a token-signing key that may
/// be in other hands goes at once, and no token it signed verifies any more.
@Suite struct SigningKeyRevocationTests {
    func kid(_ token: JSONValue?) -> String? { SigningKeyRotationTests().kid(token) }

    func published(_ server: TestServer) throws -> [String] {
        try StrictJSON().parse(server.get("/.well-known/jwks.json").body)["keys"]?.array?.compactMap { $0["kid"]?.string }.sorted() ?? []
    }

    func userinfo(_ server: TestServer, _ tokens: JSONValue) throws -> Int {
        try server.get("/userinfo", headers: [("Authorization", "Bearer " + (tokens["access_token"]?.string ?? ""))]).status
    }

    @Test("revoking the previous key: out of the JWKS at once, its tokens refused (an operator's too), its refresh tokens still good; audited and counted; the last key never retired is refused")
    func previous() throws {
        let server = try TestServer.withOperators()
        var ops = try server.managementToken()
        let phone = Phone(server)
        _ = try phone.signUp(email: "revoke@signet.test")
        let old = try phone.signIn()
        let first = try #require(kid(old["access_token"]))
        let oldOps = ops
        // An API's token, which its resource server introspects.
        let oldAccess = try #require(try IntrospectionTests.apiTokens(server, email: "api@signet.test").tokens["access_token"]?.string)
        #expect(kid(.string(oldAccess)) == first)
        let second = try #require(try server.api("POST", "/api/v2/keys/signing/rotate", token: ops).json["kid"]?.string)
        server.clock.advance(Double(KeyRing.signingDelay))
        ops = try server.managementToken()
        let new = try phone.signIn()
        #expect(kid(new["access_token"]) == second && kid(.string(ops)) == second && kid(.string(oldOps)) == first)
        #expect(try userinfo(server, old) == 200 && published(server) == [first, second].sorted())
        #expect(try IntrospectionTests.introspect(server, oldAccess).json["active"] == .bool(true))

        let revoked = try server.api("PUT", "/api/v2/keys/signing/\(first)/revoke", token: ops)
        #expect(revoked.status == 200, "\(revoked.json.serialized)")
        #expect(revoked.json["kid"] == .string(first) && revoked.json["current"] == .string(second))
        // Out of the published set, and of the database with its sealed private key, at once.
        #expect(try published(server) == [second])
        #expect(try server.store.signingKeys().map(\.kid) == [second])
        // What it signed no longer verifies: an app's token, the ID token's key, an operator's token.
        #expect(try userinfo(server, old) == 401 && userinfo(server, new) == 200)
        let introspected = try IntrospectionTests.introspect(server, oldAccess)
        #expect(introspected.json == IntrospectionTests.inactive, "\(introspected.json.serialized)")
        #expect(try server.api("GET", "/api/v2/keys/signing", token: oldOps).status == 401)
        // The refresh token is opaque: it still gets a token, signed by the key that signs now.
        let (status, refreshed) = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string(phone.clientID), "refresh_token": try #require(old["refresh_token"]),
        ]))
        #expect(try status == 200 && kid(refreshed["access_token"]) == second && userinfo(server, refreshed) == 200, "\(refreshed.serialized)")
        let audited = try server.store.auditEvents(limit: 50).filter { $0.kind == "signing_key_revoked" }
        #expect(audited.count == 1 && audited.first?.clientID == "ops" && audited.first?.detail?.contains("kid \(first)") == true, "\(audited)")
        #expect(revoked.json["revoked_at"] == audited.first.map { .string(Ceremonies.iso($0.at)) })
        let metrics = String(decoding: try server.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"signet_audit_events_total{event="signing_key_revoked",outcome="success"} 1"#))

        // Again: not found. The last key never retired: refused, and it signs on.
        let again = try server.api("PUT", "/api/v2/keys/signing/\(first)/revoke", token: ops)
        #expect(again.status == 404 && again.json["reason"] == .string("signing_key_not_found"), "\(again.json.serialized)")
        let last = try server.api("PUT", "/api/v2/keys/signing/\(second)/revoke", token: ops)
        #expect(last.status == 409 && last.json["reason"] == .string("signing_key_in_use"), "\(last.json.serialized)")
        #expect(try server.store.signingKeys().map(\.kid) == [second] && kid(try phone.signIn()["access_token"]) == second)
        #expect(try server.store.auditEvents(limit: 50).filter { $0.kind == "signing_key_revoked" }.count == 1)
        // Scopes: reading or rotating does not revoke; other methods are not routes.
        for scope in ["read:signing_keys", "create:signing_keys"] {
            let token = try server.managementToken(scope: scope)
            #expect(try server.api("PUT", "/api/v2/keys/signing/\(second)/revoke", token: token).json["reason"] == .string("insufficient_scope"))
        }
        #expect(try server.api("PUT", "/api/v2/keys/signing/\(second)/revoke", token: nil).status == 401)
        for method in ["POST", "DELETE", "GET"] {
            #expect(try server.api(method, "/api/v2/keys/signing/\(second)/revoke", token: ops).status == 405, "\(method)")
        }
        #expect(try server.api("PUT", "/api/v2/keys/signing/\(String(repeating: "k", count: 300))/revoke", token: ops).json["reason"] == .string("signing_key_not_found"))
    }

    @Test("revoking the key that signs during a rotation: the new key signs at once, never the key retired before it (which is the newest published long enough)")
    func duringRotation() throws {
        let server = try TestServer.withOperators()
        let ops = try server.managementToken(scope: "create:signing_keys update:signing_keys read:signing_keys")
        let phone = Phone(server)
        _ = try phone.signUp(email: "swap@signet.test")
        let a = try #require(kid(try phone.signIn()["access_token"]))
        let b = try #require(try server.api("POST", "/api/v2/keys/signing/rotate", token: ops).json["kid"]?.string)
        // Past the time A, retired at B's making, may sign.
        server.clock.advance(Double(KeyRing.signingDelay + Int64(KeyRing.reloadInterval)) + 1)
        let ops2 = try server.managementToken(scope: "create:signing_keys update:signing_keys read:signing_keys")
        let c = try #require(try server.api("POST", "/api/v2/keys/signing/rotate", token: ops2).json["kid"]?.string)
        // B signs until C has been published long enough; A stays published while its tokens live.
        #expect(kid(try phone.signIn()["access_token"]) == b)
        #expect(try published(server) == [a, b, c].sorted())
        let answer = try server.api("PUT", "/api/v2/keys/signing/\(b)/revoke", token: ops2)
        #expect(answer.status == 200 && answer.json["current"] == .string(c), "\(answer.json.serialized)")
        #expect(kid(try phone.signIn()["access_token"]) == c)
        let listed = try server.api("GET", "/api/v2/keys/signing", token: try server.managementToken())
        #expect(listed.json.array?.first { $0["current"] == .bool(true) }?["kid"] == .string(c), "\(listed.json.serialized)")
        #expect(try published(server) == [a, c].sorted())
    }

    @Test("signet keys revoke: from the command line, with no key-encryption key; a running server drops it at its next reload; unknown and last keys refused")
    func commandLine() throws {
        let server = try TestServer.withOperators()
        let phone = Phone(server)
        _ = try phone.signUp(email: "cli@signet.test")
        let old = try phone.signIn()
        let first = try #require(kid(old["access_token"]))
        let ops = try server.managementToken()
        let second = try #require(try server.api("POST", "/api/v2/keys/signing/rotate", token: ops).json["kid"]?.string)
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        let done = try OperationsTests.signet(["keys", "revoke", first] + database, in: server.directory)
        #expect(done.status == 0, "\(done.errors)")
        let said = try OperationsTests.json(done.output)
        #expect(said["revoked"] == .bool(true) && said["kid"] == .string(first) && said["signing"] == .string(second), "\(done.output)")
        let audited = try server.store.auditEvents(limit: 50).filter { $0.kind == "signing_key_revoked" }
        #expect(audited.count == 1 && audited.first?.clientID == "signet-admin" && audited.first?.remote == "local")
        // The running server reloads within its interval; the old key's tokens go with it.
        server.clock.advance(Double(KeyRing.reloadInterval) + 1)
        #expect(try published(server) == [second])
        #expect(try userinfo(server, old) == 401)
        #expect(kid(try phone.signIn()["access_token"]) == second)
        let unknown = try OperationsTests.signet(["keys", "revoke", first] + database, in: server.directory)
        #expect(unknown.status == 2 && unknown.errors.contains("no signing key"), "\(unknown.errors)")
        let lastOne = try OperationsTests.signet(["keys", "revoke", second] + database, in: server.directory)
        #expect(lastOne.status == 2 && lastOne.errors.contains("signet keys rotate first"), "\(lastOne.errors)")
        #expect(try OperationsTests.signet(["keys", "revoke"] + database, in: server.directory).status == 2)
        #expect(try OperationsTests.signet(["keys", "revoke", "--database", "x"], in: server.directory).status == 2)
        #expect(try OperationsTests.signet(["keys", "revoke", first, second] + database, in: server.directory).status == 2)
    }

    @Test("signet keys revoke takes a key ID that begins with - or --, before or after the options, as one in 64 of them does")
    func dashedKeyID() throws {
        let server = try TestServer.withOperators()
        let ops = try server.managementToken()
        let path = server.directory.appendingPathComponent("signet.db").path
        let database = ["--database", "sqlite:" + path]
        for dashes in ["-", "--"] {
            let retired = try #require(try rawSQLite(path, "SELECT kid FROM signing_keys ORDER BY created_at DESC").first)
            _ = try #require(try server.api("POST", "/api/v2/keys/signing/rotate", token: ops).json["kid"]?.string)
            // The key IDs Signet makes are random base64url; this one is given its first characters.
            let dashed = dashes + String(retired.dropFirst(dashes.count))
            _ = try rawSQLite(path, "UPDATE signing_keys SET kid = '\(dashed)' WHERE kid = '\(retired)'")
            let args = dashes == "-" ? ["keys", "revoke", dashed] + database : ["keys", "revoke"] + database + [dashed]
            let done = try OperationsTests.signet(args, in: server.directory)
            #expect(done.status == 0 && (try? OperationsTests.json(done.output)["kid"]) == .string(dashed), "\(done.errors)")
            #expect(try rawSQLite(path, "SELECT count(*) FROM signing_keys WHERE kid = '\(dashed)'") == ["0"])
        }
    }
}
