import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing
import SignetTestSupport

/// A client's `minimum_acr`: its tokens only from a passkey's sign-in (`phr`) or a hardware-bound
/// passkey's (`phrh`), enforced by the server at every grant and at `/authorize`, not trusted to
/// the app's `acr_values`.
@Suite(.enabled(if: SMTPServer.available, "needs python3-aiosmtpd (scripts/bootstrap.sh installs it)"))
struct MinimumACRTests {
    static let vault = "https://vault.signet.test/cb"

    static func server(smtp: SMTPServer? = nil, anchor: String, sharing: URL? = nil, deskACR: String = "phr") throws -> TestServer {
        try TestServer.withOperators(smtp: smtp, sharing: sharing) { c in
            c.trustAnchorFiles = [anchor]
            TestServer.webClients(&c)
            var vault = ClientConfiguration(id: "vault", grants: GrantNames.all)
            vault.redirectURIs = [Self.vault]
            vault.minimumACR = "phrh"
            var desk = ClientConfiguration(id: "desk", grants: GrantNames.all)
            desk.minimumACR = deskACR
            c.clients += [vault, desk]
        }
    }

    static func unmet(_ answer: (status: Int, json: JSONValue)) -> Bool {
        answer.status == 400 && answer.json["reason"] == .string("unmet_authentication_requirements") && answer.json["error"] == .string("unmet_authentication_requirements")
    }

    static func signIn(_ phone: Phone, client: String) throws -> (status: Int, json: JSONValue) {
        var phone = phone
        phone.clientID = client
        let (session, credential, _) = try phone.startSignIn()
        return try phone.exchange(session: session, credential: credential)
    }

    @Test("minimum_acr in the file and through the Management API: phr or phrh; anything else refused")
    func configuration() throws {
        func load(_ value: String) throws -> ServerConfiguration {
            try ConfigurationLoader.load(file: try ConfigurationTests.write(#"""
                {"issuer": "https://a.example.com", "relying_party": {"id": "example.com", "origins": ["https://example.com"]},
                 "clients": [{"client_id": "vault", "minimum_acr": \#(value)}]}
                """#), environment: [:])
        }
        #expect(try load(#""phrh""#).clients.first?.minimumACR == "phrh" && load(#""phr""#).clients.first?.minimumACR == "phr")
        for bad in [#""PHR""#, #""urn:x:loa2""#, "7", #"["phr"]"#] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try load(bad) }
        }
        let server = try TestServer.withOperators()
        let ops = try server.managementToken()
        let made = try server.api("POST", "/api/v2/clients", token: ops, .object([
            "name": .string("Vault"), "token_endpoint_auth_method": .string("none"), "grant_types": .array([.string(GrantType.webauthn)]), "minimum_acr": .string("phrh"),
        ]))
        #expect(made.status == 201 && made.json["minimum_acr"] == .string("phrh"), "\(made.json.serialized)")
        let id = try #require(made.json["client_id"]?.string)
        for bad in [JSONValue.string("loa2"), .number("1"), .array([.string("phr")])] {
            #expect(try server.api("PATCH", "/api/v2/clients/\(id)", token: ops, .object(["minimum_acr": bad])).json["reason"] == .string("malformed"), "\(bad.serialized)")
        }
        // A passkey that is not hardware-bound is refused by the stored client too; null lifts it.
        var phone = Phone(server)
        _ = try phone.signUp(email: "lee@signet.test")
        #expect(Self.unmet(try Self.signIn(phone, client: id)))
        let lifted = try server.api("PATCH", "/api/v2/clients/\(id)", token: ops, .object(["minimum_acr": .null]))
        #expect(lifted.status == 200 && lifted.json["minimum_acr"] == nil)
        #expect(try Self.signIn(phone, client: id).status == 200)
        phone.clientID = "app"
        let cli = try runProcess(ProcessTests.binary.path, ["admin", "clients", "update", id, "--minimum-acr", "phr", "--json",
                                                            "--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path], in: server.directory)
        #expect(cli.status == 0 && cli.output.contains(#""minimum_acr" : "phr""#), "\(cli.output) \(cli.errors)")
    }

    @Test("the grants: a hardware-bound passkey gets phrh's client, a synced one only phr's; an email code neither; a minimum raised ends the sessions below it at their refresh")
    func grants() throws {
        let anchor = try TestAttestationRoot(name: "Signet Test Security Keys")
        let anchorFile = try anchor.pemFile(in: Scratch.directory)
        let smtp = try SMTPServer()
        let server = try Self.server(smtp: smtp, anchor: anchorFile)
        let hardware = Phone(server, settings: HardwareBoundTests.deviceBound(true))
        let (session, credential) = try hardware.startSignUp(email: "hw@signet.test", tamper: anchor.packed)
        #expect(try hardware.exchange(session: session, credential: credential).status == 200)
        // Attested too (the anchors refuse any other), but able to be backed up: phr.
        let synced = Phone(server, settings: HardwareBoundTests.deviceBound(false))
        let (started, made) = try synced.startSignUp(email: "synced@signet.test", tamper: anchor.packed)
        #expect(try synced.exchange(session: started, credential: made).status == 200)

        let vault = try Self.signIn(hardware, client: "vault")
        #expect(vault.status == 200 && jwtClaims(vault.json["access_token"]?.string)["acr"] == .string("phrh"), "\(vault.json.serialized)")
        #expect(Self.unmet(try Self.signIn(synced, client: "vault")))
        let desk = try Self.signIn(synced, client: "desk")
        #expect(desk.status == 200, "\(desk.json.serialized)")
        // An email code reaches no class: refused for desk, and still good for the app.
        _ = try server.startEmail("synced@signet.test", client: "desk")
        let code = try smtp.code(for: "synced@signet.test")
        #expect(Self.unmet(try server.signIn(email: "synced@signet.test", code: code, client: "desk")))
        let events = try server.store.auditEvents(limit: 10)
        #expect(events.contains { $0.kind == "otp_sign_in" && $0.reason == "unmet_authentication_requirements" }, "\(events.map(\.kind))")
        server.clock.advance(31)  // past the send interval
        _ = try server.startEmail("synced@signet.test", client: "app")
        #expect(try server.signIn(email: "synced@signet.test", code: try smtp.code(for: "synced@signet.test", after: 1)).status == 200)

        // desk raised to phrh on the same database: its phr session ends at the next refresh.
        let raised = try Self.server(anchor: anchorFile, sharing: server.directory, deskACR: "phrh")
        let refresh = try #require(desk.json["refresh_token"]?.string)
        #expect(Self.unmet(try raised.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("desk"), "refresh_token": .string(refresh)]))))
        let again = try raised.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("desk"), "refresh_token": .string(refresh)]))
        #expect(again.json["reason"] == .string("refresh_token_revoked"), "\(again.json.serialized)")
        // A vault session (phrh) refreshes as before.
        let kept = try raised.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("vault"),
                                                           "refresh_token": try #require(vault.json["refresh_token"])]))
        #expect(kept.status == 200, "\(kept.json.serialized)")
    }

    @Test("the device grant never reaches a class: a client with minimum_acr refuses it")
    func deviceGrant() throws {
        let anchorFile = try TestAttestationRoot(name: "Signet Test Security Keys").pemFile(in: Scratch.directory)
        let before = try TestServer()
        let (phone, key, keyID) = try DeviceGrantTests.phoneWithKey(before, email: "tv@signet.test")
        let server = try TestServer.withOperators(sharing: before.directory) { c in
            c.trustAnchorFiles = [anchorFile]
            if let index = c.clients.firstIndex(where: { $0.id == "app" }) { c.clients[index].minimumACR = "phr" }
        }
        let started = try DeviceGrantTests.start(server)
        _ = try DeviceGrantTests.decide(phone, key: key, keyID: keyID, userCode: try #require(started["user_code"]?.string))
        server.clock.advance(6)
        #expect(Self.unmet(try DeviceGrantTests.poll(server, try #require(started["device_code"]?.string))))
    }

    @Test("/authorize asks for the client's class whatever acr_values says: a synced passkey's SSO session is sent to sign in again for vault, while it gets spa's code at once")
    func authorize() throws {
        let anchor = try TestAttestationRoot(name: "Signet Test Security Keys")
        let server = try Self.server(anchor: try anchor.pemFile(in: Scratch.directory))
        let browser = WebBrowser(server)
        try browser.signUp(email: "web@signet.test", tamper: anchor.packed)
        #expect(try server.authorize(browser).headers["location"]?.hasPrefix("https://app.signet.test/callback?code=") == true)
        for extra in [[], [("acr_values", "phr")]] {
            let asked = try server.authorize(browser, client: "vault", redirect: Self.vault, extra: extra)
            let location = asked.headers["location"] ?? ""
            #expect(asked.status == 303 && location.hasPrefix("/login?authorization="), "\(extra): \(location)")
            let sealed = try #require(WebBrowser.query(location)["authorization"])
            #expect(server.app.service.ceremonies.openAuthorization(sealed)?.acrValues == ["phrh"])
        }
        // prompt=none cannot sign in again: the client hears so.
        let none = try server.authorize(browser, client: "vault", redirect: Self.vault, extra: [("prompt", "none")])
        #expect(WebBrowser.query(none.headers["location"])["error"] == "login_required", "\(none.headers)")
    }
}
