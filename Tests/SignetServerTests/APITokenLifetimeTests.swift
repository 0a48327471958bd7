import Foundation
import SignetAPI
import SignetAuth
import SignetCurl
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// An API's own access-token lifetime (`tokens.api_token_ttl`; Auth0's `token_lifetime` of a
/// resource server): a payments API's tokens shorter-lived than the rest, never longer than the
/// deployment's.
@Suite struct APITokenLifetimeTests {
    static let api = RoleTests.api

    static func server() throws -> TestServer {
        try TestServer.withOperators { c in
            c.apiTokenLifetimes = [api: 120, c.managementAudience: 60]
        }
    }

    static func load(_ tokens: String, environment: [String: String] = [:]) throws -> ServerConfiguration {
        try ConfigurationLoader.load(file: try ConfigurationTests.write(#"""
            {"issuer": "https://a.example.com", "relying_party": {"id": "example.com", "origins": ["https://example.com"]},
             "clients": [{"client_id": "app"}], "tokens": {\#(tokens)}}
            """#), environment: environment)
    }

    @Test("from the file or the environment: 30 s to tokens.access_token_ttl for each of at most 100 APIs; anything else refused")
    func configuration() throws {
        #expect(try Self.load(#""api_token_ttl": {"https://pay.example.com": 300}"#).apiTokenLifetimes == ["https://pay.example.com": 300])
        let environment = try Self.load(#""access_token_ttl": 600"#, environment: ["SIGNET_TOKENS_API_TOKEN_TTL": #"{"https://pay.example.com": 600}"#])
        #expect(environment.apiTokenLifetimes == ["https://pay.example.com": 600])
        #expect(environment.accessTokenLifetime(for: "https://pay.example.com") == 600)
        #expect(environment.accessTokenLifetime(for: "https://other.example.com") == 600)
        // Set in code past the deployment's, it still ends with it.
        var longer = environment
        longer.apiTokenLifetimes["https://pay.example.com"] = 5_000
        #expect(longer.accessTokenLifetime(for: "https://pay.example.com") == 600)
        let many = (0...100).map { #""https://api\#($0).example.com": 60"# }.joined(separator: ", ")
        for (bad, says) in [
            (#""api_token_ttl": {"https://pay.example.com": 29}"#, "from 30 to tokens.access_token_ttl (900)"),
            (#""api_token_ttl": {"https://pay.example.com": 901}"#, "never longer"),
            (#""access_token_ttl": 300, "api_token_ttl": {"https://pay.example.com": 600}"#, "(300)"),
            (#""api_token_ttl": {"https://pay.example.com": "5m"}"#, "whole seconds"),
            (#""api_token_ttl": {"https://pay.example.com": 60.5}"#, "whole seconds"),
            (#""api_token_ttl": {"https://pay example.com": 60}"#, "without spaces"),
            (#""api_token_ttl": {"": 60}"#, "1 to 500 bytes"),
            (#""api_token_ttl": [60]"#, "at most 100 APIs"),
            ("\"api_token_ttl\": {\(many)}", "at most 100 APIs"),
        ] {
            do {
                _ = try Self.load(bad)
                Issue.record("accepted \(bad.prefix(120))")
            } catch let error as ConfigurationError {
                #expect(error.message.hasPrefix("tokens.api_token_ttl") && error.message.contains(says), "\(error.message)")
            }
        }
    }

    @Test("tokens for the API live its lifetime, at sign-in and refresh, by exp and expires_in, and introspection agrees; Signet's own tokens keep the deployment's")
    func tokens() throws {
        let server = try Self.server()
        let phone = Phone(server)
        _ = try phone.signUp(email: "ada@bank.example")
        let signedIn = try RoleTests.signIn(server, phone)
        #expect(signedIn["expires_in"] == .number("120"))
        let claims = jwtClaims(signedIn["access_token"]?.string)
        #expect(claims["exp"]?.int64 == claims["iat"]?.int64.map { $0 + 120 })
        let refreshed = try RoleTests.refresh(server, signedIn)
        #expect(refreshed["expires_in"] == .number("120"))
        let own = try RoleTests.signIn(server, phone, audience: nil)
        #expect(own["expires_in"] == .number("900"))
        let ownClaims = jwtClaims(own["access_token"]?.string)
        #expect(ownClaims["exp"]?.int64 == ownClaims["iat"]?.int64.map { $0 + 900 })

        let access = try #require(refreshed["access_token"]?.string)
        let exp = try #require(jwtClaims(access)["exp"]?.int64)
        server.clock.advance(to: Double(exp) - 10)
        #expect(try IntrospectionTests.introspect(server, access).json["active"] == .bool(true))
        server.clock.advance(to: Double(exp) + 1)
        #expect(try IntrospectionTests.introspect(server, access).json == IntrospectionTests.inactive)
        #expect(try server.api("GET", "/me/passkeys", token: own["access_token"]?.string).status == 200)
    }

    @Test("client_credentials: the Management API's tokens live its lifetime and are refused after it; /api/v2/resource-servers shows each API's")
    func machineTokens() throws {
        let server = try Self.server()
        let ops = try server.managementToken()
        #expect(jwtClaims(ops)["exp"]?.int64 == jwtClaims(ops)["iat"]?.int64.map { $0 + 60 })
        let listed = try #require(try server.api("GET", "/api/v2/resource-servers", token: ops).json.array)
        let lifetimes = Dictionary(uniqueKeysWithValues: listed.compactMap { server in
            server["identifier"]?.string.map { ($0, server["token_lifetime"]?.int64 ?? 0) }
        })
        let configuration = server.app.configuration
        #expect(lifetimes == [configuration.accountAudience: 900, configuration.managementAudience: 60, Self.api: 120])
        #expect(listed.first { $0["identifier"] == .string(Self.api) }?["token_lifetime_for_web"] == .number("120"))
        server.clock.advance(61)
        let late = try server.api("GET", "/api/v2/resource-servers", token: ops)
        #expect(late.status == 401, "\(late.json.serialized)")
    }

    @Test("signet doctor: an API of tokens.api_token_ttl no client may ask a token for is noted (a misspelt audience); one in audiences passes")
    func doctor() throws {
        var configuration = TestServer.configuration()
        configuration.apiTokenLifetimes = [Self.api: 120, "https://api.signet.tset": 120, configuration.managementAudience: 60]
        let checks = Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks()
        #expect(DoctorTests.failed(checks).isEmpty)
        #expect(checks.first { $0.name == "api_token_ttl.\(Self.api)" }?.status == .pass)
        #expect(checks.first { $0.name == "api_token_ttl.\(configuration.managementAudience)" }?.status == .pass)
        let typo = try #require(checks.first { $0.name == "api_token_ttl.https://api.signet.tset" })
        #expect(typo.status == .note && typo.detail.contains("misspelt"))
        #expect(!Doctor(configuration: TestServer.configuration(), options: HTTPSOptions()).configurationChecks().contains { $0.name.hasPrefix("api_token_ttl") })
    }
}
