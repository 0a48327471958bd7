import Foundation
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
        server.clock.advance(30 * 86_400 - 1)
        #expect(rotate() == nil)
        let old = try phone.signIn()
        let first = try #require(kid(old["access_token"]))
        server.clock.advance(1)
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

    @Test("with signing_key_rotation_days 0 the key is only rotated by hand")
    func off() throws {
        let server = try TestServer { $0.signingKeyRotationDays = 0 }
        server.clock.advance(1000 * 86_400)
        #expect(server.app.service.ceremonies.rotateSigningKeyIfDue() == nil)
        #expect(try server.store.signingKeys().count == 1)
    }
}
