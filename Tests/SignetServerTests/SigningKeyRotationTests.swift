import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// `tokens.signing_key_rotation_days`: the server replaces its token-signing key on its own.
@Suite struct SigningKeyRotationTests {
    /// The `kid` in a JWT's header.
    func kid(_ token: JSONValue?) -> String? {
        guard let part = token?.string?.split(separator: ".").first, let bytes = Base64URL.decode(String(part)) else { return nil }
        return (try? StrictJSON().parse(bytes))?["kid"]?.string
    }

    @Test("after the configured days a new key is published at once and signs once every cached JWKS can hold it; tokens of the old key still pass until they expire; audited")
    func scheduled() throws {
        let server = try TestServer { $0.signingKeyRotationDays = 30 }
        func rotate() -> String? { server.app.service.ceremonies.rotateSigningKeyIfDue() }
        func published() throws -> [String] {
            try StrictJSON().parse(server.get("/.well-known/jwks.json").body)["keys"]?.array?.compactMap { $0["kid"]?.string }.sorted() ?? []
        }
        let phone = Phone(server)
        _ = try phone.signUp(email: "keys@signet.test")
        // To half a minute before the key is 30 days old, counted from its own creation: the
        // sign-up before may take seconds on a loaded machine.
        let created = try #require(try server.store.signingKeys().first?.createdAt)
        server.clock.advance(to: Double(created) / 1000 + 30 * 86_400 - 30)
        #expect(rotate() == nil)
        let old = try phone.signIn()
        let first = try #require(kid(old["access_token"]))
        server.clock.advance(30)
        let second = try #require(rotate())
        #expect(try published() == [first, second].sorted())
        #expect(rotate() == nil, "due again only 30 days after the new key")
        // A verifier may hold a JWKS without the new key for a while: the old key signs on.
        #expect(kid(try phone.signIn()["access_token"]) == first)
        server.clock.advance(Double(KeyRing.signingDelay))
        let new = try phone.signIn()
        #expect(kid(new["access_token"]) == second && kid(new["id_token"]) == second)
        for token in [old, new] {
            let bearer = "Bearer " + (token["access_token"]?.string ?? "")
            #expect(try server.get("/userinfo", headers: [("Authorization", bearer)]).status == 200)
        }
        let events = try server.store.auditEvents(limit: 50).filter { $0.kind == "signing_key_rotated" }
        #expect(events.count == 1 && events.first?.detail?.contains(second) == true, "\(events)")
        // The old key leaves the set once its last tokens have expired, and is destroyed once no
        // instance, with tokens of any configured lifetime, can publish it.
        func destroy() -> [String] { server.app.service.ceremonies.destroyRetiredSigningKeys() }
        #expect(destroy() == [])
        server.clock.advance(Double(server.app.configuration.idTokenLifetime + 3 * 60))
        #expect(try published() == [second])
        #expect(destroy() == [])
        server.clock.advance(Double(ServerConfiguration.longestTokenLifetime - server.app.configuration.idTokenLifetime))
        #expect(destroy() == [first])
        #expect(try server.store.signingKeys().map(\.kid) == [second])
        let destroyed = try server.store.auditEvents(limit: 50).filter { $0.kind == "signing_key_destroyed" }
        #expect(destroyed.count == 1 && destroyed.first?.detail?.contains(first) == true, "\(destroyed)")
        #expect(kid(try phone.signIn()["access_token"]) == second)
        // The metrics tell an operator how old the key that signs is, and how many are published.
        let metrics = String(decoding: try server.get("/metrics").body, as: UTF8.self)
        let age = Int64(ServerConfiguration.longestTokenLifetime + 3 * 60) + KeyRing.signingDelay
        #expect(metrics.contains("signet_signing_key_age_seconds \(age)\n") && metrics.contains("signet_signing_keys_published 1\n"), "\(metrics)")
    }

    @Test("the Management API: the keys with Auth0's current, next and previous; a rotation publishes at once, signs after the delay, is audited; a key destroyed is not found")
    func managementAPI() throws {
        let server = try TestServer.withOperators()
        var ops = try server.managementToken()
        func keys() throws -> [JSONValue] { try server.api("GET", "/api/v2/keys/signing", token: ops).json.array ?? [] }
        func flags(_ key: JSONValue?) -> [Bool] { ["current", "next", "previous"].map { key?[$0] == .bool(true) } }
        let phone = Phone(server)
        _ = try phone.signUp(email: "keys@signet.test")
        let listed = try keys()
        let first = try #require(listed.first?["kid"]?.string)
        #expect(listed.count == 1 && flags(listed.first) == [true, false, false] && listed.first?["alg"] == .string("ES256"))
        #expect(listed.first?["current_until"] == nil && listed.first?["destroyed_at"] == nil)
        #expect(try server.api("GET", "/api/v2/keys/signing/\(first)", token: ops).json == listed.first)

        let rotated = try server.api("POST", "/api/v2/keys/signing/rotate", token: ops)
        #expect(rotated.status == 201, "\(rotated.json.serialized)")
        let second = try #require(rotated.json["kid"]?.string)
        #expect(flags(rotated.json) == [false, true, false] && second != first)
        // It signs once every cached JWKS can hold it; the old one signs until then.
        let rows = try server.store.signingKeys()
        let made = try #require(rows.first { $0.kid == second }?.createdAt), retired = try #require(rows.first { $0.kid == first }?.retiredAt)
        let since = Ceremonies.iso(made + KeyRing.signingDelay * 1000)
        #expect(rotated.json["current_since"] == .string(since) && rotated.json["created_at"] == .string(Ceremonies.iso(made)))
        // Published at once; the old key signs on until the delay is over, then is previous.
        let jwks = try StrictJSON().parse(server.get("/.well-known/jwks.json").body)["keys"]?.array?.compactMap { $0["kid"]?.string } ?? []
        #expect(Set(jwks) == [first, second])
        #expect(kid(try phone.signIn()["access_token"]) == first)
        let during = try keys()
        #expect(during.compactMap { $0["kid"]?.string } == [second, first] && flags(during[1]) == [true, false, false] && during[1]["current_until"] == .string(Ceremonies.iso(retired + KeyRing.signingDelay * 1000)))
        server.clock.advance(Double(KeyRing.signingDelay))
        ops = try server.managementToken()
        #expect(kid(try phone.signIn()["access_token"]) == second)
        let after = try keys()
        #expect(flags(after[0]) == [true, false, false] && flags(after[1]) == [false, false, true] && after[1]["destroyed_at"]?.string != nil)
        let audited = try server.store.auditEvents(limit: 50).filter { $0.kind == "signing_key_rotated" }
        #expect(audited.count == 1 && audited.first?.clientID == "ops" && audited.first?.detail?.contains("kid \(second), by the Management API") == true)

        // Destroyed: gone from the list, and not found.
        server.clock.advance(Double(ServerConfiguration.longestTokenLifetime + 3600))
        #expect(server.app.service.ceremonies.destroyRetiredSigningKeys() == [first])
        ops = try server.managementToken()
        #expect(try keys().compactMap { $0["kid"]?.string } == [second])
        for unknown in [first, "nope", String(repeating: "k", count: 300)] {
            let answer = try server.api("GET", "/api/v2/keys/signing/\(unknown)", token: ops)
            #expect(answer.status == 404 && answer.json["reason"] == .string("signing_key_not_found"), "\(answer.json.serialized)")
        }
        // Reading keys does not let a token rotate them.
        let reader = try server.managementToken(scope: "read:signing_keys")
        #expect(try server.api("GET", "/api/v2/keys/signing", token: reader).status == 200)
        #expect(try server.api("POST", "/api/v2/keys/signing/rotate", token: reader).json["reason"] == .string("insufficient_scope"))
    }

    @Test("rotations by the Management API stop at the limit of keys held: 409 signing_key_limit, nothing added or audited, the JWKS bounded; a retired key revoked makes room")
    func limit() throws {
        let server = try TestServer.withOperators()
        let ops = try server.managementToken()
        func rotated() throws -> Int { try server.store.auditEvents(limit: 100).filter { $0.kind == "signing_key_rotated" }.count }
        for _ in 1..<KeyRing.heldLimit {
            server.clock.advance(1)
            #expect(try server.api("POST", "/api/v2/keys/signing/rotate", token: ops).status == 201)
        }
        server.clock.advance(1)
        let refused = try server.api("POST", "/api/v2/keys/signing/rotate", token: ops)
        let body = refused.json
        #expect(refused.status == 409 && body["reason"] == .string("signing_key_limit"), "\(body.serialized)")
        let described = body["error_description"]?.string
        #expect(described == Reason.signingKeyLimit.text, "\(body.serialized)")
        let held = try server.store.signingKeys()
        #expect(try held.count == KeyRing.heldLimit && rotated() == KeyRing.heldLimit - 1)
        let jwks = try StrictJSON().parse(server.get("/.well-known/jwks.json").body)["keys"]?.array ?? []
        #expect(jwks.count == KeyRing.heldLimit)
        // A retired key that never signed (the first signs the operator's token) revoked: one more rotation fits.
        let unused = try #require(held.dropFirst().first { $0.retiredAt != nil }?.kid)
        #expect(try server.api("PUT", "/api/v2/keys/signing/\(unused)/revoke", token: ops).status == 200)
        let again = try server.api("POST", "/api/v2/keys/signing/rotate", token: ops)
        #expect(again.status == 201, "\(again.json.serialized)")
        #expect(try server.store.signingKeys().count == KeyRing.heldLimit && rotated() == KeyRing.heldLimit)
    }

    @Test("with signing_key_rotation_days 0 the key is only rotated by hand")
    func off() throws {
        let server = try TestServer { $0.signingKeyRotationDays = 0 }
        server.clock.advance(1000 * 86_400)
        #expect(server.app.service.ceremonies.rotateSigningKeyIfDue() == nil)
        #expect(try server.store.signingKeys().count == 1)
    }
}
