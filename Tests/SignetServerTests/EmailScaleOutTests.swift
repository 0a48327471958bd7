import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetSoftware
import SignetWebAuthn
import SignetTestSupport
import Testing

/// Email codes and recovery on two instances over one PostgreSQL: one attempt budget, one hold.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"] != nil && SMTPServer.available,
                "needs PostgreSQL (SIGNET_TEST_POSTGRES) and python3-aiosmtpd; scripts/test.sh provides both"))
struct EmailScaleOutTests {
    static func cluster(_ smtp: SMTPServer) throws -> Cluster {
        try Cluster(instances: 2, settings: ["SIGNET_EMAIL_SMTP_URL": smtp.url, "SIGNET_EMAIL_RETRY_DELAY": "1", "SIGNET_EMAIL_MAX_RETRY_DELAY": "1"])
    }

    static func start(_ cluster: Cluster, _ instance: Int, _ email: String) throws {
        let (status, json) = try cluster.post(instance, "/passwordless/start", .object([
            "client_id": .string("dev"), "connection": .string("email"), "email": .string(email), "send": .string("code"),
        ]))
        try #require(status == 200, "\(json.serialized)")
    }

    static func redeem(_ cluster: Cluster, _ instance: Int, _ email: String, _ code: String) throws -> (status: Int, json: JSONValue) {
        try cluster.post(instance, "/oauth/token", .object([
            "grant_type": .string(GrantNames.passwordlessOTP), "client_id": .string("dev"), "username": .string(email), "otp": .string(code), "realm": .string("email"),
        ]))
    }

    @Test("16 parallel wrong guesses spread over two instances share one budget: exactly max_attempts are compared")
    func sharedBudget() throws {
        let smtp = try SMTPServer()
        let cluster = try Self.cluster(smtp)
        try Self.start(cluster, 0, "pg@signet.test")
        let code = try smtp.code(for: "pg@signet.test")
        let wrong = code == "999999" ? "888888" : "999999"
        let reasons = simultaneously(16) { n in
            (try? Self.redeem(cluster, n % 2, "pg@signet.test", wrong).json["reason"]?.string) ?? "error"
        }.map { (try? $0.get()) ?? "error" }
        let counted = reasons.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        #expect(counted == ["otp_invalid": 5, "otp_attempts_exceeded": 11], "\(counted)")
        #expect(try Self.redeem(cluster, 1, "pg@signet.test", code).json["reason"] == .string("otp_attempts_exceeded"))
        // Each message was sent once, by whichever instance claimed it.
        try Self.start(cluster, 1, "pg2@signet.test")
        #expect(try Self.redeem(cluster, 0, "pg2@signet.test", try smtp.code(for: "pg2@signet.test")).status == 200)
        Thread.sleep(forTimeInterval: 1.5)
        #expect(smtp.messages().count == 2)
    }

    @Test("a recovery opened on one instance holds on the other, and a cancel on either ends it everywhere")
    func holdAcrossInstances() throws {
        let smtp = try SMTPServer()
        let cluster = try Self.cluster(smtp)
        let owner = SoftwareAuthenticator()
        _ = try cluster.signUp(owner, email: "x@signet.test", on: 0)
        // A code session on instance 1 adds a passkey: a recovery.
        try Self.start(cluster, 1, "x@signet.test")
        let (_, tokens) = try Self.redeem(cluster, 1, "x@signet.test", try smtp.code(for: "x@signet.test"))
        let code = try #require(tokens["access_token"]?.string)
        let (_, options) = try cluster.post(1, "/me/passkeys/options", .object([:]), bearer: code)
        let publicKey = try #require(options["authn_params_public_key"])
        let laptop = SoftwareAuthenticator()
        let made = try laptop.register(rpID: "localhost", origin: Cluster.origin, challenge: try #require(publicKey["challenge"]?.string.flatMap { Base64URL.decode($0) }),
                                       userHandle: try #require(publicKey["user"]?["id"]?.string.flatMap { Base64URL.decode($0) }), userName: "x")
        let (added, _) = try cluster.post(1, "/me/passkeys", .object(["auth_session": try #require(options["auth_session"]), "authn_response": made.json]), bearer: code)
        #expect(added == 201)
        // The laptop's session from instance 0 is held there too.
        let (session, assertion) = try cluster.signInStart(laptop, on: 0)
        let (_, held) = try cluster.post(0, "/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": .string(session), "authn_response": assertion,
        ]))
        let heldToken = try #require(held["access_token"]?.string)
        #expect(try cluster.post(0, "/me/recovery-codes", .object([:]), bearer: heldToken).json["reason"] == .string("recovery_hold"))
        // The owner cancels on instance 0; the laptop is gone on instance 1.
        let (ownerSession, ownerAssertion) = try cluster.signInStart(owner, on: 0)
        let (_, ownerTokens) = try cluster.post(0, "/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": .string(ownerSession), "authn_response": ownerAssertion,
        ]))
        let cancelled = try HTTPClient(port: cluster.port(0)).send("DELETE", "/me/recovery", headers: [("Authorization", "Bearer \(try #require(ownerTokens["access_token"]?.string))")])
        #expect(cancelled.status == 204, "\(cancelled.text)")
        let (again, replay) = try cluster.signInStart(laptop, on: 1)
        #expect(try cluster.post(1, "/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": .string(again), "authn_response": replay,
        ])).json["reason"] == .string("credential_revoked"))
        #expect(try HTTPClient(port: cluster.port(1)).send("GET", "/me/passkeys", headers: [("Authorization", "Bearer \(code)")]).status == 401)
    }
}
