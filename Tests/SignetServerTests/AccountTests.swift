import SignetAuth
import Foundation
import SignetAPI
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetStore
import SignetWebAuthn
import Testing

/// A signed-in account for account and action tests.
struct SignedIn {
    let server: TestServer
    let phone: Phone
    let access: String
    /// The `User-Agent` of its calls, when it sends one.
    var userAgent: String?
    var bearer: [(String, String)] { [("Authorization", "Bearer \(access)")] }

    init(_ server: TestServer, phone: Phone, access: String) {
        self.server = server
        self.phone = phone
        self.access = access
    }

    init(_ server: TestServer, email: String, settings: SoftwareAuthenticator.Settings = SoftwareAuthenticator.Settings()) throws {
        self.server = server
        phone = Phone(server, settings: settings)
        let tokens = try phone.signUp(email: email)
        access = try #require(tokens["access_token"]?.string)
    }

    func call(_ method: String, _ path: String, _ body: JSONValue? = nil) throws -> (status: Int, json: JSONValue) {
        let response = try server.send(method, path, headers: bearer + (userAgent.map { [("User-Agent", $0)] } ?? []), body: body.map { Array($0.serialized.utf8) } ?? [])
        return (response.status, (try? StrictJSON(maxLength: 16 << 20).parse(response.body)) ?? .null)
    }

    func passkeys() throws -> [JSONValue] { try call("GET", "/me/passkeys").json["passkeys"]?.array ?? [] }

    /// Adds a passkey from `authenticator` through /me/passkeys/options and /me/passkeys.
    func addPasskey(_ authenticator: SoftwareAuthenticator, name: String? = nil, tamper: Tamper = .none) throws -> (status: Int, json: JSONValue) {
        var body = try makePasskey(authenticator, tamper: tamper)
        if let name { body["name"] = .string(name) }
        return try call("POST", "/me/passkeys", .object(body))
    }

    /// The first step of adding a passkey (/me/passkeys/options) and `authenticator`'s
    /// registration for it: the body of /me/passkeys.
    func makePasskey(_ authenticator: SoftwareAuthenticator, tamper: Tamper = .none) throws -> JSONObject {
        let (status, options) = try call("POST", "/me/passkeys/options", .object([:]))
        try #require(status == 200, "\(options.serialized)")
        let publicKey = try #require(options["authn_params_public_key"])
        let challenge = try #require(publicKey["challenge"]?.string.flatMap { Base64URL.decode($0) })
        let handle = try #require(publicKey["user"]?["id"]?.string.flatMap { Base64URL.decode($0) })
        let excluded = (publicKey["excludeCredentials"]?.array ?? []).compactMap { $0["id"]?.string.flatMap { Base64URL.decode($0) } }
        let response = try authenticator.register(rpID: TestServer.rpID, origin: TestServer.origin, challenge: challenge, userHandle: handle,
                                                  userName: "x", excludeCredentials: excluded, tamper: tamper)
        return ["auth_session": options["auth_session"]!, "authn_response": response.json]
    }
}

@Suite struct PasskeyAccountTests {
    @Test("the passkey list shows what was registered, with the authenticator's name where known")
    func list() throws {
        let server = try TestServer()
        var settings = SoftwareAuthenticator.Settings()
        settings.aaguid = withUnsafeBytes(of: UUID(uuidString: "fbfc3007-154e-4ecc-8c0b-6e020557d7bd")!.uuid) { Array($0) }
        let account = try SignedIn(server, email: "list@signet.test", settings: settings)
        let list = try account.passkeys()
        try #require(list.count == 1)
        let passkey = list[0]
        let registered = try #require(account.phone.authenticator.credentials.first)
        #expect(passkey["id"] == .string(Base64URL.encode(registered.id)))
        #expect(passkey["aaguid"] == .string("fbfc3007-154e-4ecc-8c0b-6e020557d7bd"))
        #expect(passkey["authenticator"] == .string("iCloud Keychain"))
        #expect(passkey["backup_eligible"] == .bool(true) && passkey["backup_state"] == .bool(true))
        #expect(passkey["transports"] == .array([.string("internal"), .string("hybrid")]))
        #expect(passkey["created_at"]?.int64 != nil && passkey["name"] == .null)
        #expect(try server.get("/me/passkeys").status == 401)
    }

    @Test("add a passkey: the options exclude the existing ones; the new one signs in")
    func add() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "add@signet.test")
        let (status, options) = try account.call("POST", "/me/passkeys/options", .object([:]))
        #expect(status == 200)
        #expect(options["authn_params_public_key"]?["excludeCredentials"]?.array?.count == 1)
        // The same authenticator again is refused by the authenticator itself (InvalidStateError).
        #expect(throws: SoftwareAuthenticator.Refusal.self) { try account.addPasskey(account.phone.authenticator) }
        let laptop = SoftwareAuthenticator()
        let (added, passkey) = try account.addPasskey(laptop, name: "Laptop")
        #expect(added == 201 && passkey["name"] == .string("Laptop"))
        #expect(try account.passkeys().count == 2)
        let laptopPhone = Phone(server, authenticator: laptop)
        let (session, credential, _) = try laptopPhone.startSignIn()
        #expect(try laptopPhone.exchange(session: session, credential: credential).status == 200)
    }

    @Test("an app's conditional add: options asked with conditional true take a registration without user presence; others refuse it; no body is a modal add, a body that is not JSON is malformed")
    func conditionalAdd() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "upgrade@signet.test")
        var noGesture = Tamper()
        noGesture.authenticatorData = { $0.flags.remove(.userPresent) }
        func add(_ body: [UInt8]) throws -> (status: Int, json: JSONValue) {
            let start = try server.send("POST", "/me/passkeys/options", headers: account.bearer, body: body)
            let options = try StrictJSON().parse(start.body)
            guard start.status == 200, let publicKey = options["authn_params_public_key"] else { return (start.status, options) }
            let registration = try SoftwareAuthenticator().register(
                rpID: TestServer.rpID, origin: TestServer.origin, challenge: try #require(publicKey["challenge"]?.string.flatMap { Base64URL.decode($0) }),
                userHandle: try #require(publicKey["user"]?["id"]?.string.flatMap { Base64URL.decode($0) }), userName: "x", tamper: noGesture)
            return try account.call("POST", "/me/passkeys", .object(["auth_session": options["auth_session"]!, "authn_response": registration.json]))
        }
        #expect(try add(Array(#"{"conditional":false}"#.utf8)).json["reason"] == .string("user_not_present"))
        #expect(try add([]).json["reason"] == .string("user_not_present"))
        #expect(try add(Array(#"{"conditional":"yes"}"#.utf8)).json["reason"] == .string("user_not_present"))
        let upgraded = try add(Array(#"{"conditional":true}"#.utf8))
        #expect(upgraded.status == 201, "\(upgraded.json.serialized)")
        #expect(try add(Array("conditional=true".utf8)).json["reason"] == .string("malformed"))
        #expect(try account.passkeys().count == 2)
    }

    @Test("rename sticks; a revoked passkey no longer signs in; the last one cannot be revoked")
    func renameAndRevoke() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "rr@signet.test")
        let first = try #require(account.passkeys().first?["id"]?.string)
        let (renamed, json) = try account.call("PATCH", "/me/passkeys/\(first)", .object(["name": .string("My iPhone")]))
        #expect(renamed == 200 && json["name"] == .string("My iPhone"))
        #expect(try account.passkeys().first?["name"] == .string("My iPhone"))
        // The last passkey stays.
        let (refused, reason) = try account.call("DELETE", "/me/passkeys/\(first)")
        #expect(refused == 409 && reason["reason"] == .string("last_credential"))
        // With a second one, the first can go, and then no longer signs in.
        let laptop = SoftwareAuthenticator()
        #expect(try account.addPasskey(laptop).status == 201)
        #expect(try account.call("DELETE", "/me/passkeys/\(first)").status == 204)
        // The session the revoked passkey started ends with it, at once.
        #expect(try account.call("GET", "/me/passkeys").json["reason"] == .string("token_invalid"))
        let (session, credential, _) = try Phone(server, authenticator: account.phone.authenticator).startSignIn()
        let (status, signIn) = try account.phone.exchange(session: session, credential: credential)
        #expect(status == 400 && signIn["reason"] == .string("credential_revoked"))
        let onLaptop = SignedIn(server, phone: Phone(server, authenticator: laptop),
                                access: try #require(try Phone(server, authenticator: laptop).signIn()["access_token"]?.string))
        #expect(try onLaptop.passkeys().count == 1)
        #expect(try onLaptop.call("DELETE", "/me/passkeys/\(first)").json["reason"] == .string("credential_unknown"))
        #expect(try onLaptop.call("PATCH", "/me/passkeys/AAAA", .object(["name": .string("x")])).status == 404)
        let events = try server.store.auditEvents(limit: 20).map { "\($0.kind):\($0.outcome)" }
        #expect(events.contains("passkey_revoked:success") && events.contains("passkey_revoked:failure") && events.contains("passkey_added:success"))
    }

    @Test("names: control, line-break and bidirectional-override characters are refused wherever a name is given, and nothing is stored; emoji, joiners and right-to-left letters are kept")
    func names() throws {
        let server = try TestServer.withOperators()
        let account = try SignedIn(server, email: "names@signet.test")
        let passkey = try #require(account.passkeys().first?["id"]?.string)
        #expect(try account.call("PATCH", "/me/passkeys/\(passkey)", .object(["name": .string("Before")])).status == 200)
        let bad = ["x\u{0}y", "a\nb", "a\tb", "a\u{7F}b", "a\u{85}b", "a\u{2028}b", "\u{202E}gpj.exe", "a\u{2067}b\u{2069}", "a\u{202A}b"]
        for name in bad {
            let (status, json) = try account.call("PATCH", "/me/passkeys/\(passkey)", .object(["name": .string(name)]))
            #expect(status == 400 && json["reason"] == .string("malformed"), "\(name.unicodeScalars.map(\.value)): \(json.serialized)")
        }
        #expect(try account.passkeys().first?["name"] == .string("Before"))
        for good in ["José’s 📱", "هاتف سارة", "👨\u{200D}👩\u{200D}👧 tablet", "\u{200F}עברית"] {
            let (status, json) = try account.call("PATCH", "/me/passkeys/\(passkey)", .object(["name": .string(good)]))
            #expect(status == 200 && json["name"] == .string(good), "\(good)")
            #expect(try account.passkeys().first?["name"] == .string(good))
        }
        // The same rule at sign-up (the name the passkey sheet shows), for a device key's name and
        // device ID, for an address, and for the Management API's name.
        let signUp = try server.post("/passkey/register", .object(["client_id": .string("app"), "user_profile": .object(["email": .string("n2@signet.test"), "name": .string("\u{202E}nimda")])]))
        #expect(signUp.status == 400 && signUp.json["reason"] == .string("malformed"))
        let address = try server.post("/passkey/register", .object(["client_id": .string("app"), "user_profile": .object(["email": .string("a\u{202E}b@signet.test")])]))
        #expect(address.status == 400 && address.json["reason"] == .string("malformed"))
        let key = try SoftwareDeviceKey(deviceID: "phone")
        for (deviceID, name) in [("phone", "a\nb"), ("ph\u{0}one", "Phone")] {
            let (status, json) = try account.call("POST", "/me/device-keys", .object([
                "public_key": .string(Base64URL.encode(key.publicKeySPKI)), "device_id": .string(deviceID), "platform": .string("ios"), "name": .string(name),
            ]))
            #expect(status == 400 && json["reason"] == .string("malformed"), "\(json.serialized)")
        }
        #expect(try account.call("GET", "/me/device-keys").json["device_keys"]?.array?.isEmpty == true)
        let ops = try server.managementToken()
        let id = try #require(jwtClaims(account.access)["sub"]?.string)
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["name": .string("Ada\u{0}")])).json["reason"] == .string("malformed"))
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["name": .string("Ada Lovelace")])).json["name"] == .string("Ada Lovelace"))
    }

    @Test("another account's passkey cannot be renamed or revoked")
    func otherAccount() throws {
        let server = try TestServer()
        let alice = try SignedIn(server, email: "alice2@signet.test")
        let bob = try SignedIn(server, email: "bob2@signet.test")
        let alicePasskey = try #require(alice.passkeys().first?["id"]?.string)
        #expect(try bob.call("PATCH", "/me/passkeys/\(alicePasskey)", .object(["name": .string("mine")])).status == 404)
        #expect(try bob.call("DELETE", "/me/passkeys/\(alicePasskey)").status == 404)
    }
}


