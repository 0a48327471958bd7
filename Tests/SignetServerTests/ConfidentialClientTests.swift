import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// RFC 6749 §3.2.1: a confidential client authenticates at the token endpoint whatever the grant,
/// so that its refresh tokens, auth sessions and codes are worth nothing without its secret.
@Suite struct ConfidentialClientTests {
    static let secret = "portal-secret-0123456789abcdefgh"
    static var basic: (String, String) { ("Authorization", "Basic " + Data("portal:\(secret)".utf8).base64EncodedString()) }

    static func server() throws -> TestServer {
        try TestServer { c in
            var portal = ClientConfiguration(id: "portal", grants: GrantNames.all, secretHash: Digest.sha256.hash(Array(secret.utf8)))
            portal.redirectURIs = ["https://portal.signet.test/callback"]
            c.clients.append(portal)
        }
    }

    /// A sign-up through the passkey grant by `portal`, with its secret in the body.
    static func signUp(_ server: TestServer, email: String) throws -> JSONValue {
        var phone = Phone(server)
        phone.clientID = "portal"
        let (session, credential) = try phone.startSignUp(email: email)
        let (status, tokens) = try server.post("/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("portal"), "client_secret": .string(secret),
            "auth_session": .string(session), "authn_response": credential,
        ]))
        try #require(status == 200, "\(tokens.serialized)")
        return tokens
    }

    @Test("the passkey grant: refused without the secret or with a wrong one, the auth session kept; then by client_secret_post or Basic")
    func passkeyGrant() throws {
        let server = try Self.server()
        var phone = Phone(server)
        phone.clientID = "portal"
        let (session, credential) = try phone.startSignUp(email: "portal@signet.test")
        func grant(_ extra: JSONObject, headers: [(String, String)] = []) throws -> (status: Int, json: JSONValue) {
            var body: JSONObject = ["grant_type": .string(GrantType.webauthn), "auth_session": .string(session), "authn_response": credential]
            for (name, value) in extra { body[name] = value }
            return try server.post("/oauth/token", .object(body), headers: headers)
        }
        let (status, refusal) = try grant(["client_id": .string("portal")])
        #expect(status == 401 && refusal["reason"] == .string("client_secret_invalid") && refusal["error"] == .string("invalid_client"), "\(refusal.serialized)")
        #expect(try grant(["client_id": .string("portal"), "client_secret": .string("wrong")]).json["reason"] == .string("client_secret_invalid"))
        // Each failed authentication is in the audit log, with the client it claimed to be.
        // One row each: the grant that failed on it writes no second one.
        let events = try server.store.auditEvents(limit: 20)
        let failures = events.filter { $0.kind == "client_authentication" }
        #expect(failures.count == 2 && failures.allSatisfy { $0.outcome == "failure" && $0.clientID == "portal" && $0.reason == "client_secret_invalid" })
        #expect(events.filter { $0.outcome == "failure" }.count == 2, "\(events.map(\.kind))")
        // The refusals came before the auth session was used: it still signs up, once.
        let (created, tokens) = try grant(["client_id": .string("portal"), "client_secret": .string(Self.secret)])
        #expect(created == 200 && jwtClaims(tokens["access_token"]?.string)["client_id"] == .string("portal"), "\(tokens.serialized)")
        // A public client that sends a secret is refused too: it has none. An empty one only names
        // the client (some libraries send `Authorization: Basic app:` for a public client).
        #expect(try grant(["client_id": .string("app"), "client_secret": .string("anything")]).json["reason"] == .string("client_secret_invalid"))
        let (publicSession, publicCredential) = try Phone(server).startSignUp(email: "public-basic@signet.test")
        let emptyBasic = ("Authorization", "Basic " + Data("app:".utf8).base64EncodedString())
        let named = try server.post("/oauth/token", .object(["grant_type": .string(GrantType.webauthn), "auth_session": .string(publicSession),
                                                             "authn_response": publicCredential]), headers: [emptyBasic])
        #expect(named.status == 200 && jwtClaims(named.json["access_token"]?.string)["client_id"] == .string("app"), "\(named.json.serialized)")

        // Basic alone names the client; a body's client_id must agree with it.
        let (next, credentialB, _) = try phone.startSignIn()
        var body: JSONObject = ["grant_type": .string(GrantType.webauthn), "auth_session": .string(next), "authn_response": credentialB, "client_id": .string("app")]
        #expect(try server.post("/oauth/token", .object(body), headers: [Self.basic]).json["reason"] == .string("malformed"))
        body["client_id"] = nil
        let (signedIn, again) = try server.post("/oauth/token", .object(body), headers: [Self.basic])
        #expect(signedIn == 200 && again["refresh_token"]?.string != nil, "\(again.serialized)")
    }

    @Test("a stolen refresh token of a confidential client: refused without the secret and not used up; the client rotates it")
    func refreshGrant() throws {
        let server = try Self.server()
        let tokens = try Self.signUp(server, email: "stolen-refresh@signet.test")
        let refresh = try #require(tokens["refresh_token"]?.string)
        let thief = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("portal"), "refresh_token": .string(refresh)]))
        #expect(thief.status == 401 && thief.json["reason"] == .string("client_secret_invalid"), "\(thief.json.serialized)")
        // Not a reuse: the family stands, and the client's own refresh rotates it.
        let (status, rotated) = try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "refresh_token": .string(refresh)]), headers: [Self.basic])
        #expect(status == 200 && rotated["refresh_token"]?.string != nil, "\(rotated.serialized)")
        #expect(try server.store.auditEvents(limit: 50).contains { $0.kind == "refresh_token_reused" } == false)
    }

    @Test("the email-code and device grants, the code request and the device authorization request authenticate a confidential client too")
    func otherGrants() throws {
        let server = try Self.server()
        let otp = try server.post("/oauth/token", .object([
            "grant_type": .string(GrantType.passwordlessOTP), "client_id": .string("portal"), "username": .string("x@signet.test"),
            "otp": .string("123456"), "realm": .string("email"),
        ]))
        #expect(otp.status == 401 && otp.json["reason"] == .string("client_secret_invalid"), "\(otp.json.serialized)")
        let recovery = try server.post("/oauth/token", .object([
            "grant_type": .string(GrantType.recoveryCode), "client_id": .string("portal"), "username": .string("x@signet.test"), "recovery_code": .string("x"),
        ]))
        #expect(recovery.json["reason"] == .string("client_secret_invalid"), "\(recovery.json.serialized)")
        // Asking for a code in the client's name (Auth0 asks a confidential application's secret there too):
        // refused without it; with it, past authentication (this server sends no mail).
        let codeRequest: JSONObject = ["client_id": .string("portal"), "connection": .string("email"), "email": .string("x@signet.test")]
        let unnamed = try server.post("/passwordless/start", .object(codeRequest))
        #expect(unnamed.status == 401 && unnamed.json["reason"] == .string("client_secret_invalid"), "\(unnamed.json.serialized)")
        #expect(try server.post("/passwordless/start", .object(codeRequest), headers: [Self.basic]).json["reason"] == .string("connection_disabled"))
        let form = [("Content-Type", "application/x-www-form-urlencoded")]
        let start = try server.send("POST", "/oauth/device/code", headers: form, body: Array("client_id=portal".utf8))
        let startJSON = try StrictJSON().parse(start.body)
        #expect(start.status == 401 && startJSON["reason"] == .string("client_secret_invalid"))
        let started = try server.send("POST", "/oauth/device/code", headers: form + [Self.basic], body: [])
        let authorization = try StrictJSON().parse(started.body)
        let deviceCode = try #require(authorization["device_code"]?.string, "\(authorization.serialized)")
        let poll = try server.post("/oauth/token", .object(["grant_type": .string(GrantNames.deviceCode), "client_id": .string("portal"), "device_code": .string(deviceCode)]))
        #expect(poll.status == 401 && poll.json["reason"] == .string("client_secret_invalid"), "\(poll.json.serialized)")
        let authenticated = try server.post("/oauth/token", .object(["grant_type": .string(GrantNames.deviceCode), "device_code": .string(deviceCode)]), headers: [Self.basic])
        #expect(authenticated.json["reason"] == .string("authorization_pending"), "\(authenticated.json.serialized)")
    }
}
