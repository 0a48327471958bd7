import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// A client's own session lifetimes (`refresh_token_ttl`, `refresh_token_absolute_ttl`; Auth0's
/// `refresh_token` of a client): an admin console's sessions shorter than the phone app's, never
/// longer than the deployment's.
@Suite struct SessionLifetimeTests {
    static func server(_ edit: @escaping (inout ServerConfiguration) -> Void = { _ in }) throws -> TestServer {
        try TestServer.withOperators { c in
            var console = ClientConfiguration(id: "console", grants: GrantNames.all)
            console.refreshTokenLifetime = 120
            console.refreshTokenAbsoluteLifetime = 300
            c.clients.append(console)
            edit(&c)
        }
    }

    static func refresh(_ server: TestServer, _ token: JSONValue?, client: String = "console") throws -> (status: Int, json: JSONValue) {
        try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string(client), "refresh_token": try #require(token)]))
    }

    static func signIn(_ phone: Phone, client: String) throws -> JSONValue {
        var phone = phone
        phone.clientID = client
        let (session, credential, _) = try phone.startSignIn()
        let answer = try phone.exchange(session: session, credential: credential)
        try #require(answer.status == 200, "\(answer.json.serialized)")
        return answer.json
    }

    @Test("in the file: a minute to ten years each; anything else refused")
    func configuration() throws {
        func load(_ members: String) throws -> ServerConfiguration {
            try ConfigurationLoader.load(file: try ConfigurationTests.write(#"""
                {"issuer": "https://a.example.com", "relying_party": {"id": "example.com", "origins": ["https://example.com"]},
                 "clients": [{"client_id": "console", \#(members)}]}
                """#), environment: [:])
        }
        let loaded = try #require(try load(#""refresh_token_ttl": 28800, "refresh_token_absolute_ttl": 86400"#).clients.first)
        #expect(loaded.refreshTokenLifetime == 28800 && loaded.refreshTokenAbsoluteLifetime == 86400)
        for bad in [#""refresh_token_ttl": 59"#, #""refresh_token_ttl": "1h""#, #""refresh_token_absolute_ttl": 315360001"#, #""refresh_token_ttl": 60.5"#] {
            do {
                _ = try load(bad)
                Issue.record("accepted \(bad)")
            } catch let error as ConfigurationError {
                #expect(error.message.contains("seconds"), "\(error.message)")
            }
        }
    }

    @Test("the console's session ends when unused for its idle lifetime, and at its absolute one however used; the app's lives on; a client's longer lifetime never outlives the deployment's")
    func lifetimes() throws {
        let server = try Self.server()
        let phone = Phone(server)
        _ = try phone.signUp(email: "ada@bank.example")
        let console = try Self.signIn(phone, client: "console")
        let app = try Self.signIn(phone, client: "app")
        // Unused for 121 s: the console's session is over, the app's is not.
        server.clock.advance(121)
        #expect(try Self.refresh(server, console["refresh_token"]).json["reason"] == .string("refresh_token_expired"))
        #expect(try Self.refresh(server, app["refresh_token"], client: "app").status == 200)
        // Used every 100 s: it lives until 300 s after its sign-in, and not a second longer.
        var current = try Self.signIn(phone, client: "console")["refresh_token"]
        for _ in 0..<2 {
            server.clock.advance(100)
            let next = try Self.refresh(server, current)
            #expect(next.status == 200, "\(next.json.serialized)")
            current = next.json["refresh_token"]
        }
        server.clock.advance(90)  // 290 s after the sign-in
        let late = try Self.refresh(server, current)
        #expect(late.status == 200, "\(late.json.serialized)")
        server.clock.advance(11)  // 301 s
        #expect(try Self.refresh(server, late.json["refresh_token"]).json["reason"] == .string("refresh_token_expired"))

        // A deployment whose sessions are shorter than the client's: the deployment's hold.
        let short = try Self.server { c in
            c.refreshTokenLifetime = 90
            if let index = c.clients.firstIndex(where: { $0.id == "console" }) { c.clients[index].refreshTokenLifetime = 600 }
        }
        let other = Phone(short)
        _ = try other.signUp(email: "lin@bank.example")
        let tokens = try Self.signIn(other, client: "console")
        short.clock.advance(91)
        #expect(try Self.refresh(short, tokens["refresh_token"]).json["reason"] == .string("refresh_token_expired"))
    }

    @Test("a client of the database: Auth0's refresh_token through the Management API and signet admin clients; shown, replaced whole, reset with null; bad values refused")
    func storedClients() throws {
        let server = try Self.server()
        let ops = try server.managementToken()
        let made = try server.api("POST", "/api/v2/clients", token: ops, .object([
            "name": .string("Back office"), "token_endpoint_auth_method": .string("none"), "grant_types": .array([.string(GrantType.webauthn), .string("refresh_token")]),
            "refresh_token": .object(["idle_token_lifetime": .number("120"), "token_lifetime": .number("300")]),
        ]))
        #expect(made.status == 201 && made.json["refresh_token"] == .object(["idle_token_lifetime": .int(120), "token_lifetime": .int(300)]), "\(made.json.serialized)")
        let id = try #require(made.json["client_id"]?.string)
        #expect(try server.api("GET", "/api/v2/clients/console", token: ops).json["refresh_token"] == .object(["idle_token_lifetime": .int(120), "token_lifetime": .int(300)]))
        // Its sessions end as the console's do.
        let phone = Phone(server)
        _ = try phone.signUp(email: "sam@bank.example")
        let tokens = try Self.signIn(phone, client: id)
        server.clock.advance(121)
        #expect(try Self.refresh(server, tokens["refresh_token"], client: id).json["reason"] == .string("refresh_token_expired"))
        // Replaced whole: the idle lifetime alone leaves the absolute the deployment's.
        let idleOnly = try server.api("PATCH", "/api/v2/clients/\(id)", token: ops, .object(["refresh_token": .object(["idle_token_lifetime": .number("600")])]))
        #expect(idleOnly.status == 200 && idleOnly.json["refresh_token"] == .object(["idle_token_lifetime": .int(600)]), "\(idleOnly.json.serialized)")
        for bad in [JSONValue.object(["idle_token_lifetime": .number("59")]), .object(["token_lifetime": .string("1h")]), .object(["rotation_type": .string("non-rotating")]),
                    .string("short")] {
            let answer = try server.api("PATCH", "/api/v2/clients/\(id)", token: ops, .object(["refresh_token": bad]))
            #expect(answer.status == 400 && answer.json["reason"] == .string("malformed"), "\(bad.serialized): \(answer.json.serialized)")
        }
        let reset = try server.api("PATCH", "/api/v2/clients/\(id)", token: ops, .object(["refresh_token": .null]))
        #expect(reset.status == 200 && reset.json["refresh_token"] == nil)

        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        let added = try runProcess(ProcessTests.binary.path, ["admin", "clients", "add", "--name", "Console", "--type", "public", "--grant", GrantType.webauthn,
                                                              "--refresh-ttl", "28800"] + database, in: server.directory)
        #expect(added.status == 0 && added.output.contains("sessions       idle 28800 s, absolute the deployment's"), "\(added.output) \(added.errors)")
        let cli = try #require(added.output.split(separator: "\n").first { $0.hasPrefix("client_id") }?.split(separator: " ").last.map(String.init))
        let both = try runProcess(ProcessTests.binary.path, ["admin", "clients", "update", cli, "--default-refresh", "--refresh-ttl", "60"] + database, in: server.directory)
        #expect(both.status != 0 && both.errors.contains("not both"))
        let reverted = try runProcess(ProcessTests.binary.path, ["admin", "clients", "update", cli, "--default-refresh", "--json"] + database, in: server.directory)
        #expect(reverted.status == 0 && !reverted.output.contains("refresh_token"), "\(reverted.output) \(reverted.errors)")
    }

    @Test("a back-channel logout subscription lasts as long as its session can: the client's absolute lifetime where shorter, not the deployment's")
    func logoutSubscription() throws {
        let (listener, _, uri) = try BackchannelLogoutTests.receiver()
        defer { listener.stop() }
        let server = try TestServer { c in
            TestServer.webClients(&c)
            c.webSessionLifetime = 600
            if let i = c.clients.firstIndex(where: { $0.id == "spa" }) {
                c.clients[i].backchannelLogoutURI = uri
                c.clients[i].refreshTokenAbsoluteLifetime = 1_200
            }
        }
        server.app.pauseLogouts()
        let offline = try BackchannelLogoutTests.session(server)
        let subscription = try #require(try server.store.logoutSubscriptions(userID: offline.user).first)
        #expect(subscription.offline && subscription.expiresAt == subscription.createdAt + 1_200_000, "\(subscription.expiresAt - subscription.createdAt) ms")
    }
}
