import SignetAuth
import Foundation
import SignetAPI
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetStore
import SignetWebAuthn

/// Where a sign-in's server CPU goes, measured in this process on one thread: the whole service
/// answering the two requests without HTTP, and the database's share of it on its own.
/// The HTTP layer's share is the load test's server CPU minus the service's.
struct LoginBreakdown {
    struct Result {
        let serviceMicros: Double
        let storeMicros: Double
    }

    static func measure(iterations: Int = 2000) throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("signet-breakdown-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = ServerConfiguration.development(port: 8080, database: "sqlite:" + directory.appendingPathComponent("signet.db").path)
        configuration.keyEncryptionKeyFile = directory.appendingPathComponent("signet.kek").path
        configuration.accessLog = false
        // SIGNET_DATABASE_DURABILITY=normal measures the sign-in without the WAL's sync.
        let store = try SignetApp.openStore(configuration.database, durable: ProcessInfo.processInfo.environment["SIGNET_DATABASE_DURABILITY"] != "normal")
        let kek = try KeyEncryptionKey.load(environment: [:], file: configuration.keyEncryptionKeyFile)
        let service = SignetService(configuration: configuration, store: store, keys: try KeyRing(store: store, kek: kek, retentionSeconds: 3600), kek: kek)
        let authenticator = SoftwareAuthenticator()
        func call(_ path: String, _ body: JSONValue) throws -> JSONValue {
            let response = service.handle(HTTPRequest(method: "POST", path: path, headers: ["content-type": "application/json"],
                                                      body: body.serializedBytes, remoteAddress: "127.0.0.1", requestID: "bench"))
            guard response.status == 200 else { throw LoginBenchmark.Failure(description: "\(path): \(response.status) \(String(decoding: response.body, as: UTF8.self))") }
            return try StrictJSON().parse(response.body)
        }
        let register = try call("/passkey/register", .object(["client_id": .string("dev"), "user_profile": .object(["email": .string("b@signet.test")])]))
        let options = register["authn_params_public_key"]!
        let made = try authenticator.register(
            rpID: "localhost", origin: "http://localhost:8080", challenge: Base64URL.decode(options["challenge"]!.string!)!,
            userHandle: Base64URL.decode(options["user"]!["id"]!.string!)!, userName: "b")
        _ = try call("/oauth/token", .object(["grant_type": .string(GrantType.webauthn), "client_id": .string("dev"),
                                             "auth_session": register["auth_session"]!, "authn_response": made.json]))
        var serviceCPU = 0.0
        for _ in 0..<iterations {
            var t = LoginBenchmark.threadCPU()
            let challenge = try call("/passkey/challenge", .object(["client_id": .string("dev")]))
            serviceCPU += LoginBenchmark.threadCPU() - t
            let assertion = try authenticator.authenticate(
                rpID: "localhost", origin: "http://localhost:8080", challenge: Base64URL.decode(challenge["authn_params_public_key"]!["challenge"]!.string!)!)
            let body = JSONValue.object(["grant_type": .string(GrantType.webauthn), "client_id": .string("dev"),
                                         "auth_session": challenge["auth_session"]!, "authn_response": assertion.json])
            t = LoginBenchmark.threadCPU()
            _ = try call("/oauth/token", body)
            serviceCPU += LoginBenchmark.threadCPU() - t
        }
        // The same database work on its own: the sign-in's one transaction, which uses the
        // session, checks and records the credential's use and commits the audit event and the
        // refresh token.
        let user = try store.user(email: "b@signet.test")!
        let credential = try store.credentials(userID: user.id)[0]
        let t = LoginBenchmark.threadCPU()
        for _ in 0..<iterations {
            let at = Int64(Date().timeIntervalSince1970 * 1000)
            let use = SignInUse(sessionID: SecureRandom.bytes(16), sessionExpiresAt: at + 300_000, credentialID: credential.id, userID: user.id,
                                publicKey: credential.publicKey, signCount: 0, backupState: true, at: at)
            guard case .signedIn = try store.completeSignIn(use, writes: [
                .audit(AuditEvent(at: 0, kind: AuditKind.signIn.rawValue, outcome: "success", userID: user.id, clientID: "dev")),
                // A key as the service makes one: a time-ordered name first (see RefreshToken).
                .refreshToken(RefreshTokenRow(hash: (0..<6).map { UInt8(truncatingIfNeeded: at >> (8 * (5 - $0))) } + SecureRandom.bytes(26), family: "f", userID: user.id, clientID: "dev", scope: "openid",
                                              authTime: 0, amr: ["pop"], expiresAt: 1, createdAt: 0)),
            ]) else { throw LoginBenchmark.Failure(description: "the store refused a sign-in") }
        }
        let storeCPU = LoginBenchmark.threadCPU() - t
        return Result(serviceMicros: serviceCPU / Double(iterations) * 1e6, storeMicros: storeCPU / Double(iterations) * 1e6)
    }
}
