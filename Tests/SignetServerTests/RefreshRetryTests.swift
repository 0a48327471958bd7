import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// `tokens.refresh_token_retry_window`: a refresh whose answer was lost may be sent again.
@Suite struct RefreshRetryTests {
    static func refresh(_ server: TestServer, _ token: String) throws -> (status: Int, json: JSONValue) {
        try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": .string(token)]))
    }

    /// A server with a 30 s window, and a signed-up account's first refresh token.
    static func signedIn() throws -> (TestServer, String) {
        let server = try TestServer { $0.refreshTokenRetryWindow = 30 }
        let tokens = try Phone(server).signUp(email: "retry-\(UUID().uuidString.prefix(6))@signet.test")
        return (server, try #require(tokens["refresh_token"]?.string))
    }

    @Test("a refresh sent again after its answer was lost gets new tokens; the lost token, shown later, revokes the family")
    func lostAnswer() throws {
        let (server, first) = try Self.signedIn()
        let lost = try Self.refresh(server, first)
        #expect(lost.status == 200)
        let lostToken = try #require(lost.json["refresh_token"]?.string)
        // The phone never saw that answer, and sends its token again, twice.
        let again = try Self.refresh(server, first)
        #expect(again.status == 200, "\(again.json)")
        let third = try Self.refresh(server, first)
        #expect(third.status == 200, "\(third.json)")
        let kept = try #require(third.json["refresh_token"]?.string)
        #expect(Set([lostToken, again.json["refresh_token"]?.string, kept]).count == 3)
        let access = try #require(third.json["access_token"]?.string)
        #expect(try server.get("/userinfo", headers: [("Authorization", "Bearer \(access)")]).status == 200)
        // Each retry is in the audit log, as a refresh that succeeded and says why.
        let retries = try server.store.auditEvents(limit: 20).filter { $0.kind == "refresh" && $0.outcome == "success" }
        #expect(retries.count == 2 && retries.allSatisfy { $0.detail?.contains("answer was lost") == true })
        // And in the metrics, for an operator tuning the window.
        #expect(try server.get("/metrics").text.contains(#"signet_audit_events_total{event="refresh",outcome="success"} 2"#))
        // The new token rotates as any does.
        let next = try Self.refresh(server, kept)
        #expect(next.status == 200)
        // Someone had the lost token after all: showing it is a reuse, and the session ends.
        let shown = try Self.refresh(server, lostToken)
        #expect(shown.status == 400 && shown.json["reason"] == .string("refresh_token_reused"))
        let after = try Self.refresh(server, try #require(next.json["refresh_token"]?.string))
        #expect(after.status == 400 && ["refresh_token_reused", "refresh_token_revoked"].contains(after.json["reason"]?.string ?? ""))
    }

    @Test("once what the refresh gave was used, or the window has passed, sending the old token again is a reuse")
    func notARetry() throws {
        let (server, first) = try Self.signedIn()
        let second = try #require(try Self.refresh(server, first).json["refresh_token"]?.string)
        #expect(try Self.refresh(server, second).status == 200)
        let replay = try Self.refresh(server, first)
        #expect(replay.status == 400 && replay.json["reason"] == .string("refresh_token_reused"))

        let (late, token) = try Self.signedIn()
        let rotated = try Self.refresh(late, token)
        #expect(rotated.status == 200)
        late.clock.advance(31)
        let tooLate = try Self.refresh(late, token)
        #expect(tooLate.status == 400 && tooLate.json["reason"] == .string("refresh_token_reused"))
        let lost = try Self.refresh(late, try #require(rotated.json["refresh_token"]?.string))
        #expect(lost.status == 400, "the family ended with the reuse")
    }

    @Test("without the setting, a rotated token sent again is a reuse at once")
    func strictByDefault() throws {
        let server = try TestServer()
        let first = try #require(try Phone(server).signUp(email: "strict@signet.test")["refresh_token"]?.string)
        #expect(try Self.refresh(server, first).status == 200)
        let again = try Self.refresh(server, first)
        #expect(again.status == 400 && again.json["reason"] == .string("refresh_token_reused"))
    }

    @Test("a client's own window, in the file, the Management API (Auth0's refresh_token.leeway) and signet admin, in place of the deployment's; out of bounds refused")
    func clientWindow() throws {
        // The file: the console retries, the deployment (0) does not.
        let server = try SessionLifetimeTests.server { c in
            if let i = c.clients.firstIndex(where: { $0.id == "console" }) { c.clients[i].refreshTokenRetryWindow = 30 }
        }
        let phone = Phone(server)
        _ = try phone.signUp(email: "window@bank.example")
        for (client, retried) in [("console", true), ("app", false)] {
            let token = try SessionLifetimeTests.signIn(phone, client: client)["refresh_token"]
            #expect(try SessionLifetimeTests.refresh(server, token, client: client).status == 200)
            let again = try SessionLifetimeTests.refresh(server, token, client: client)
            #expect(again.status == (retried ? 200 : 400), "\(client): \(again.json.serialized)")
        }
        let configured = try server.api("GET", "/api/v2/clients/console", token: try server.managementToken())
        #expect(configured.json["refresh_token"]?["leeway"] == .int(30), "\(configured.json.serialized)")
        func load(_ member: String) throws -> ServerConfiguration {
            try ConfigurationLoader.load(file: try ConfigurationTests.write(#"""
                {"issuer": "https://a.example.com", "relying_party": {"id": "example.com", "origins": ["https://example.com"]},
                 "clients": [{"client_id": "console", \#(member)}]}
                """#), environment: [:])
        }
        #expect(try load(#""refresh_token_retry_window": 0"#).clients.first?.refreshTokenRetryWindow == 0)
        for bad in [#""refresh_token_retry_window": 301"#, #""refresh_token_retry_window": -1"#, #""refresh_token_retry_window": "30""#] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try load(bad) }
        }

        // The Management API: set with the lifetimes, shown, taking effect, replaced whole.
        let ops = try server.managementToken()
        let made = try server.api("POST", "/api/v2/clients", token: ops, .object([
            "name": .string("Teller app"), "token_endpoint_auth_method": .string("none"), "grant_types": .array([.string(GrantType.webauthn), .string("refresh_token")]),
            "refresh_token": .object(["leeway": .number("45")]),
        ]))
        #expect(made.status == 201 && made.json["refresh_token"] == .object(["leeway": .int(45)]), "\(made.json.serialized)")
        let id = try #require(made.json["client_id"]?.string)
        let token = try SessionLifetimeTests.signIn(phone, client: id)["refresh_token"]
        #expect(try SessionLifetimeTests.refresh(server, token, client: id).status == 200)
        #expect(try SessionLifetimeTests.refresh(server, token, client: id).status == 200)
        for bad in [JSONValue.object(["leeway": .number("301")]), .object(["leeway": .number("-1")]), .object(["leeway": .string("30s")])] {
            let answer = try server.api("PATCH", "/api/v2/clients/\(id)", token: ops, .object(["refresh_token": bad]))
            #expect(answer.status == 400 && answer.json["reason"] == .string("malformed"), "\(bad.serialized): \(answer.json.serialized)")
        }
        let idleOnly = try server.api("PATCH", "/api/v2/clients/\(id)", token: ops, .object(["refresh_token": .object(["idle_token_lifetime": .number("600")])]))
        #expect(idleOnly.status == 200 && idleOnly.json["refresh_token"] == .object(["idle_token_lifetime": .int(600)]), "\(idleOnly.json.serialized)")

        // signet admin.
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        let added = try runProcess(ProcessTests.binary.path, ["admin", "clients", "add", "--name", "Phone", "--type", "public", "--grant", GrantType.webauthn,
                                                              "--refresh-retry-window", "60"] + database, in: server.directory)
        #expect(added.status == 0 && added.output.contains("absolute the deployment's, retry window 60 s"), "\(added.output) \(added.errors)")
        let cli = try #require(added.output.split(separator: "\n").first { $0.hasPrefix("client_id") }?.split(separator: " ").last.map(String.init))
        let tooLong = try runProcess(ProcessTests.binary.path, ["admin", "clients", "update", cli, "--refresh-retry-window", "301"] + database, in: server.directory)
        #expect(tooLong.status != 0 && tooLong.errors.contains("--refresh-retry-window"), "\(tooLong.errors)")
        let both = try runProcess(ProcessTests.binary.path, ["admin", "clients", "update", cli, "--default-refresh", "--refresh-retry-window", "5"] + database, in: server.directory)
        #expect(both.status != 0 && both.errors.contains("not both"))
    }
}
