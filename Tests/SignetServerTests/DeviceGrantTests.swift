import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// DESIGN.md, "A new device, approved by an old one" (RFC 8628).
@Suite struct DeviceGrantTests {
    static func start(_ server: TestServer, userAgent: String = "SignetTV/1.0 (tvOS 18)") throws -> JSONValue {
        let response = try server.send("POST", "/oauth/device/code", headers: [("User-Agent", userAgent), ("Content-Type", "application/x-www-form-urlencoded")],
                                       body: Array("client_id=app&scope=openid%20offline_access".utf8))
        let json = try StrictJSON().parse(response.body)
        try #require(response.status == 200, "device/code: \(json.serialized)")
        return json
    }

    static func poll(_ server: TestServer, _ deviceCode: String) throws -> (status: Int, json: JSONValue) {
        try server.post("/oauth/token", .object(["grant_type": .string(GrantNames.deviceCode), "client_id": .string("app"), "device_code": .string(deviceCode)]))
    }

    /// A signed-in phone with an enrolled device key, and the key's ID.
    static func phoneWithKey(_ server: TestServer, email: String) throws -> (SignedIn, SoftwareDeviceKey, String) {
        let phone = try SignedIn(server, email: email)
        let key = try SoftwareDeviceKey(deviceID: "iphone")
        return (phone, key, try phone.enroll(key))
    }

    /// The signed-in phone: its challenge for the user code (with what it is shown), then its signature.
    static func decide(_ phone: SignedIn, key: SoftwareDeviceKey, keyID: String, userCode: String, deny: Bool = false) throws -> (challenge: JSONValue, approval: (status: Int, json: JSONValue)) {
        let (status, challenge) = try phone.challenge(keyID, .object(["type": .string("signet.device_approval"), "user_code": .string(userCode)]))
        guard status == 200 else { return (challenge, (status, challenge)) }
        let id = try #require(challenge["challenge_id"]?.string)
        let raw = try #require(challenge["challenge"]?.string.flatMap { Base64URL.decode($0) })
        var body: JSONObject = ["challenge_id": .string(id), "signature": .string(Base64URL.encode(try key.sign(raw)))]
        if deny { body["deny"] = .bool(true) }
        return (challenge, try phone.call("POST", "/actions/approve", .object(body)))
    }

    @Test("the phone is shown the asking device's User-Agent with bidirectional overrides neutralized, so it cannot pose as another device")
    func neutralizedUserAgent() throws {
        let server = try TestServer()
        let (phone, key, keyID) = try Self.phoneWithKey(server, email: "ua@signet.test")
        let started = try Self.start(server, userAgent: "Kiosk/2 \u{202E}VT elppA\u{2066}x\u{2069} (caf\u{E9})")
        let (challenge, _) = try Self.decide(phone, key: key, keyID: keyID, userCode: try #require(started["user_code"]?.string))
        #expect(challenge["device_request"]?["user_agent"] == .string("Kiosk/2 \u{FFFD}VT elppA\u{FFFD}x\u{FFFD} (caf\u{E9})"))
    }

    @Test("the whole grant: pending, slow_down, the phone sees who asks and approves with its device key, the new device gets the account's tokens once")
    func approve() throws {
        let server = try TestServer()
        let (phone, key, keyID) = try Self.phoneWithKey(server, email: "ada@signet.test")
        let started = try Self.start(server)
        let userCode = try #require(started["user_code"]?.string)
        #expect(userCode.range(of: #"^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$"#, options: .regularExpression) != nil)
        #expect(started["verification_uri"] == .string("https://signet.test/device") && started["interval"] == .number("5") && started["expires_in"] == .number("600"))
        #expect(started["verification_uri_complete"]?.string?.hasSuffix("user_code=" + userCode) == true)
        let deviceCode = try #require(started["device_code"]?.string)
        // Discovery names the endpoint and the grant (RFC 8628 §4).
        let discovery = try StrictJSON().parse(try server.get("/.well-known/openid-configuration").body)
        #expect(discovery["device_authorization_endpoint"] == .string("https://signet.test/oauth/device/code"))
        #expect(discovery["grant_types_supported"]?.array?.contains(.string(GrantNames.deviceCode)) == true)

        #expect(try Self.poll(server, deviceCode).json["reason"] == .string("authorization_pending"))
        let fast = try Self.poll(server, deviceCode)
        #expect(fast.status == 400 && fast.json["reason"] == .string("slow_down") && fast.json["error"] == .string("slow_down"))
        // The interval is enforced per device code, and grew to 10 s.
        server.clock.advance(6)
        #expect(try Self.poll(server, deviceCode).json["reason"] == .string("slow_down"))
        server.clock.advance(16)
        #expect(try Self.poll(server, deviceCode).json["reason"] == .string("authorization_pending"))

        let (challenge, approval) = try Self.decide(phone, key: key, keyID: keyID, userCode: userCode.lowercased())
        let shown = try #require(challenge["device_request"])
        #expect(shown["client_id"] == .string("app") && shown["user_agent"] == .string("SignetTV/1.0 (tvOS 18)") && shown["address"] == .string("127.0.0.1"))
        #expect(approval.status == 200, "\(approval.json.serialized)")

        server.clock.advance(16)
        let granted = try Self.poll(server, deviceCode)
        #expect(granted.status == 200, "\(granted.json.serialized)")
        let claims = jwtClaims(granted.json["access_token"]?.string)
        #expect(claims["sub"] == jwtClaims(phone.access)["sub"] && claims["amr"] == .array([.string("hwk"), .string("mca")]) && claims["cred"] == .string(keyID))
        #expect(granted.json["refresh_token"] != nil && granted.json["id_token"] != nil)
        // Approved on another device, which a phishing page can ask for too: not `phr`.
        #expect(claims["acr"] == nil && jwtClaims(granted.json["id_token"]?.string)["acr"] == nil)
        // The new device may enrol its own device key at once.
        let tv = SignedIn(server, phone: phone.phone, access: try #require(granted.json["access_token"]?.string))
        let tvKey = try SoftwareDeviceKey(deviceID: "tv")
        let tvKeyID = try tv.enroll(tvKey)
        // Once only.
        server.clock.advance(16)
        #expect(try Self.poll(server, deviceCode).json["reason"] == .string("expired_token"))
        // A code longer than any issued is malformed, and the answer says so.
        let long = try Self.poll(server, String(repeating: "a", count: 101))
        #expect(long.json["reason"] == .string("malformed") && long.json["error_description"]?.string?.contains("longer") == true)
        // A key the phone enrolled from its own sign-in is no approval's, and stays.
        let own = try phone.enroll(try SoftwareDeviceKey(deviceID: "phone-2"))
        // Revoking the approving key ends the session it started, and takes the key the approved
        // device enrolled with it: a device approved by mistake (a phished code) keeps nothing.
        #expect(try phone.call("DELETE", "/me/device-keys/\(keyID)").status == 204)
        #expect(try tv.call("GET", "/me/passkeys").status == 401)
        let left = try phone.call("GET", "/me/device-keys").json["device_keys"]?.array?.compactMap { $0["id"]?.string } ?? []
        #expect(left == [own], "\(left)")
        let user = try #require(jwtClaims(phone.access)["sub"]?.string)
        let rows = try server.store.auditEvents(limit: 100).filter { $0.kind == AuditKind.deviceKeyRevoked.rawValue && $0.userID == user }
        #expect(rows.contains { $0.credentialID == tvKeyID && $0.reason == "approver_revoked" }, "\(rows)")
        // So it cannot approve another device.
        let again = try Self.start(server)
        let (_, refused) = try Self.decide(phone, key: tvKey, keyID: tvKeyID, userCode: try #require(again["user_code"]?.string))
        #expect(refused.status != 200 && refused.json["reason"] == .string("device_key_revoked"), "\(refused.json.serialized)")
    }

    @Test("a denial signed by the device key answers access_denied; an unknown, expired or decided code cannot be approved")
    func denyAndExpire() throws {
        let server = try TestServer()
        let (phone, key, keyID) = try Self.phoneWithKey(server, email: "ada@signet.test")
        let denied = try Self.start(server)
        let deniedCode = try #require(denied["user_code"]?.string)
        #expect(try Self.decide(phone, key: key, keyID: keyID, userCode: deniedCode, deny: true).approval.status == 200)
        let answer = try Self.poll(server, try #require(denied["device_code"]?.string))
        #expect(answer.status == 400 && answer.json["reason"] == .string("access_denied"))
        // Decided already: no second approval.
        #expect(try Self.decide(phone, key: key, keyID: keyID, userCode: deniedCode).approval.json["reason"] == .string("user_code_unknown"))
        // A bad signature decides nothing.
        let pending = try Self.start(server)
        let pendingCode = try #require(pending["user_code"]?.string)
        let (_, challenge) = try phone.challenge(keyID, .object(["type": .string("signet.device_approval"), "user_code": .string(pendingCode)]))
        let forged = try phone.call("POST", "/actions/approve", .object([
            "challenge_id": try #require(challenge["challenge_id"]), "signature": .string(Base64URL.encode(try SoftwareDeviceKey(deviceID: "x").sign([1]))),
        ]))
        #expect(forged.json["reason"] == .string("signature_invalid"))
        server.clock.advance(6)
        #expect(try Self.poll(server, try #require(pending["device_code"]?.string)).json["reason"] == .string("authorization_pending"))
        // Expired: the poll says so, and the phone cannot approve it.
        server.clock.advance(600)
        #expect(try Self.poll(server, try #require(pending["device_code"]?.string)).json["reason"] == .string("expired_token"))
        #expect(try Self.decide(phone, key: key, keyID: keyID, userCode: pendingCode).approval.json["reason"] == .string("user_code_unknown"))
        // Another client's device code is not this client's.
        let other = try server.post("/oauth/token", .object(["grant_type": .string(GrantNames.deviceCode), "client_id": .string("other"),
                                                             "device_code": try #require(denied["device_code"])]))
        #expect(other.json["reason"] == .string("expired_token"))
        #expect(try Self.poll(server, "nonsense").json["reason"] == .string("expired_token"))
        // deny outside a device approval is refused.
        let (_, transfer) = try phone.challenge(keyID)
        let raw = try #require(transfer["challenge"]?.string.flatMap { Base64URL.decode($0) })
        #expect(try phone.call("POST", "/actions/approve", .object(["challenge_id": try #require(transfer["challenge_id"]), "signature": .string(Base64URL.encode(try key.sign(raw))),
                                                                    "deny": .bool(true)])).json["reason"] == .string("malformed"))
    }

    @Test("user codes cannot be guessed from a signed-in phone: 10 unknown codes an hour per account, then rate_limited")
    func guessing() throws {
        let server = try TestServer()
        let (phone, _, keyID) = try Self.phoneWithKey(server, email: "ada@signet.test")
        for n in 0..<10 {
            let (status, json) = try phone.challenge(keyID, .object(["type": .string("signet.device_approval"), "user_code": .string("BCDF-GHJ\(["K", "L", "M", "N", "P", "Q", "R", "S", "T", "V"][n])")]))
            #expect(status == 400 && json["reason"] == .string("user_code_unknown"))
        }
        let (status, json) = try phone.challenge(keyID, .object(["type": .string("signet.device_approval"), "user_code": .string("BCDF-GHJW")]))
        #expect(status == 429 && json["reason"] == .string("rate_limited"))
    }

    @Test("approved on one instance, polled on the other: one database, the same answers")
    func twoInstances() throws {
        let first = try TestServer()
        let second = try TestServer(sharing: first.directory)
        let phone = try SignedIn(first, email: "ada@signet.test")
        let key = try SoftwareDeviceKey(deviceID: "iphone")
        let keyID = try phone.enroll(key)
        let started = try Self.start(second)
        let deviceCode = try #require(started["device_code"]?.string)
        #expect(try Self.poll(second, deviceCode).json["reason"] == .string("authorization_pending"))
        #expect(try Self.decide(phone, key: key, keyID: keyID, userCode: try #require(started["user_code"]?.string)).approval.status == 200)
        second.clock.advance(6)
        let granted = try Self.poll(second, deviceCode)
        #expect(granted.status == 200 && jwtClaims(granted.json["access_token"]?.string)["sub"] == jwtClaims(phone.access)["sub"])
        first.clock.advance(12)
        #expect(try Self.poll(first, deviceCode).json["reason"] == .string("expired_token"))
    }
}
