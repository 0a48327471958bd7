import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Testing

/// The wire format is written once, in SignetAPI: every answer of the server decodes into the
/// SignetAPI type the SDK decodes it with, whether the server encoded that type or wrote its
/// members by hand (the two answers on the sign-in path).
@Suite struct WireContractTests {
    func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8], _ line: Int = #line) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch {
            Issue.record("line \(line): \(T.self) does not decode \(String(decoding: body, as: UTF8.self)): \(error)")
            throw error
        }
    }

    @Test("every answer decodes into its SignetAPI type")
    func answersDecode() throws {
        let server = try TestServer()
        let phone = Phone(server)
        let register = try server.send("POST", "/passkey/register", body: Array(#"{"client_id":"app","user_profile":{"email":"wire@signet.test","name":"W"}}"#.utf8))
        let start = try decode(PasskeyRegisterResponse.self, register.body)
        #expect(start.authn_params_public_key.rp.id == TestServer.rpID && !start.auth_session.isEmpty)
        _ = try phone.signUp(email: "wire2@signet.test")
        let challenge = try server.send("POST", "/passkey/challenge", body: Array(#"{"client_id":"app","username":"wire2@signet.test"}"#.utf8))
        #expect(try decode(PasskeyChallengeResponse.self, challenge.body).authn_params_public_key.allowCredentials?.count == 1)
        let tokens = try phone.signIn()
        let access = try #require(tokens["access_token"]?.string)
        let token = try decode(TokenResponse.self, Array(tokens.serialized.utf8))
        #expect(token.token_type == "Bearer" && token.refresh_token != nil && token.id_token != nil)
        let bearer = [("Authorization", "Bearer \(access)")]
        #expect(try decode(UserInfo.self, server.get("/userinfo", headers: bearer).body).email == "wire2@signet.test")

        let list = try decode(PasskeyList.self, server.get("/me/passkeys", headers: bearer).body)
        let passkey = try #require(list.passkeys.first)
        // Members that may be absent are present as null, so every answer has the same members.
        let raw = try StrictJSON().parse(server.get("/me/passkeys", headers: bearer).body)
        #expect(raw["passkeys"]?.array?.first?["name"] == .null && raw["passkeys"]?.array?.first?["last_used_at"] != nil)
        let renamed = try server.send("PATCH", "/me/passkeys/\(passkey.id)", headers: bearer, body: Array(#"{"name":"Phone"}"#.utf8))
        #expect(try decode(PasskeyInfo.self, renamed.body).name == "Phone")
        #expect(try decode(PasskeyRegisterResponse.self, server.send("POST", "/me/passkeys/options", headers: bearer, body: Array("{}".utf8)).body)
            .authn_params_public_key.excludeCredentials?.count == 1)

        let key = try SoftwareDeviceKey(deviceID: "wire-phone")
        let enrolled = try server.send("POST", "/me/device-keys", headers: bearer, body: Array(JSONValue.object([
            "public_key": .string(Base64URL.encode(key.publicKeySPKI)), "device_id": .string(key.deviceID), "platform": .string("ios"),
        ]).serialized.utf8))
        let info = try decode(DeviceKeyInfo.self, enrolled.body)
        #expect(info.replaced == [] && info.name == nil)
        #expect(try decode(DeviceKeyList.self, server.get("/me/device-keys", headers: bearer).body).device_keys.map(\.id) == [info.id])

        let action = #"{"type":"payment","amount":5}"#
        let deviceChallenge = try decode(ActionChallengeResponse.self, server.send("POST", "/actions/challenge", headers: bearer,
            body: Array(#"{"device_key_id":"\#(info.id)","action":\#(action)}"#.utf8)).body)
        #expect(deviceChallenge.authn_params_public_key == nil)
        let signature = try key.sign(try #require(Base64URL.decode(deviceChallenge.challenge)))
        let approved = try decode(ActionApproval.self, server.send("POST", "/actions/approve", headers: bearer,
            body: Array(#"{"challenge_id":"\#(deviceChallenge.challenge_id)","signature":"\#(Base64URL.encode(signature))"}"#.utf8)).body)
        #expect(approved.action?["type"] == .string("payment"))
        let sub = try #require(try server.store.user(email: "wire2@signet.test")).id
        let verified = try decode(ActionVerification.self, server.send("POST", "/actions/verify", headers: [TestServer.bankAuthorization],
            body: Array(#"{"action_token":"\#(approved.action_token)","action":\#(action),"sub":"\#(sub)"}"#.utf8)).body)
        #expect(verified.valid && verified.amr == ["hwk"] && verified.action_hash == deviceChallenge.action_hash)
        let passkeyChallenge = try decode(ActionChallengeResponse.self, server.send("POST", "/actions/challenge", headers: bearer,
            body: Array(#"{"method":"passkey","action":\#(action)}"#.utf8)).body)
        #expect(passkeyChallenge.authn_params_public_key?.challenge == passkeyChallenge.challenge)

        let refused = try server.send("POST", "/oauth/token", body: Array(#"{"grant_type":"refresh_token","client_id":"app","refresh_token":"nope"}"#.utf8))
        #expect(try decode(ErrorBody.self, refused.body).reason == Reason.refreshTokenUnknown.rawValue)
    }

    @Test("the SDK sends SignetAPI's request types, and the server reads them")
    func requestsEncode() throws {
        let server = try TestServer()
        let body = try JSONEncoder().encode(PasskeyRegisterRequest(client_id: "app", user_profile: UserProfile(email: "sdk@signet.test")))
        #expect(try server.send("POST", "/passkey/register", body: Array(body)).status == 200)
        let challenge = try JSONEncoder().encode(PasskeyChallengeRequest(client_id: "app"))
        #expect(try server.send("POST", "/passkey/challenge", body: Array(challenge)).status == 200)
        let revoke = try JSONEncoder().encode(RevokeRequest(token: "unknown", client_id: "app"))
        #expect(try server.send("POST", "/oauth/revoke", body: Array(revoke)).status == 200)
    }
}
