import SignetAuth
import Foundation
import SignetAPI
import SignetCrypto
import SignetHTTP
import SignetSoftware
import SignetStore
import SignetTestSupport
import SignetWebAuthn
import Testing

/// Several `signet serve` processes on one PostgreSQL database, as behind a load balancer.
final class Cluster: @unchecked Sendable {
    static let origin = "http://localhost:8080"
    let database: String
    let kek = Base64URL.encode(SecureRandom.bytes(32))
    let directory: URL
    var instances: [(process: Process, port: UInt16)] = []
    /// Settings for every instance, as `SIGNET_...` variables.
    var settings: [String: String] = [:]

    /// Without `database`, a new database on the PostgreSQL of `SIGNET_TEST_POSTGRES`.
    init(instances count: Int, database: String? = nil, settings: [String: String] = [:]) throws {
        self.settings = settings
        if let database {
            self.database = database
        } else {
            let admin = try #require(ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"])
            self.database = try PostgresAdmin.createDatabase(adminURL: admin, name: "c_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20))
        }
        directory = Scratch.directory.appendingPathComponent("signet-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for _ in 0..<count { try start() }
    }

    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["SIGNET_KEK"] = kek
        // An issuer makes it a deployment (no development mode): its client and origins are given.
        env["SIGNET_ISSUER"] = "http://localhost:8080"
        env["SIGNET_CLIENTS"] = #"[{"client_id": "dev"}]"#
        // 64-way races from one address: rate limits off, as for any load test.
        env["SIGNET_RATE_LIMITS_ENABLED"] = "false"
        env["SIGNET_RELYING_PARTY_ORIGINS"] = Cluster.origin
        env["SIGNET_ACCESS_LOG"] = "false"
        env["SIGNET_LIMITS_REQUEST_DEADLINE"] = "5"
        return env.merging(settings) { $1 }
    }

    @discardableResult
    func start() throws -> UInt16 {
        let port = freeLoopbackPort()
        let log = directory.appendingPathComponent("serve-\(port).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = ProcessTests.binary
        process.arguments = ["serve", "--listen", "127.0.0.1:\(port)", "--database", database]
        process.environment = environment
        process.currentDirectoryURL = directory
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // A debug build under a busy test run can take seconds to start.
        if Loopback.waitUntilHealthy(port: port, running: { process.isRunning }) {
            instances.append((process, port))
            return port
        }
        process.terminate()
        let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw HTTPClient.Failure(description: "an instance did not come up: \(said)")
    }

    deinit {
        for (process, _) in instances {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    func port(_ i: Int) -> UInt16 { instances[i].port }

    /// `kill -9` of instance `i`: no shutdown, no flush, nothing after the signal. Its place
    /// (and port) stays, so requests still under way fail as against a dead server.
    func kill9(_ i: Int) {
        let process = instances[i].process
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// A new process in place of instance `i`, on the same database (after ``kill9(_:)``).
    func restart(_ i: Int) throws {
        try start()
        instances[i] = instances.removeLast()
    }

    @discardableResult
    func post(_ instance: Int, _ path: String, _ body: JSONValue, bearer: String? = nil) throws -> (status: Int, json: JSONValue) {
        let response = try HTTPClient(port: port(instance)).send("POST", path, headers: bearer.map { [("Authorization", "Bearer \($0)")] } ?? [],
                                                                  body: Array(body.serialized.utf8))
        return (response.status, (try? StrictJSON().parse(response.body)) ?? .null)
    }

    /// Sign-up on `instance`; returns the token answer.
    func signUp(_ authenticator: SoftwareAuthenticator, email: String, on instance: Int) throws -> JSONValue {
        let (status, tokens) = try signUpAttempt(authenticator, email: email) { try self.post(instance, $0, $1) }
        try #require(status == 200, "\(tokens.serialized)")
        return tokens
    }

    /// A whole sign-up whatever its outcome, each request sent by `post` (an instance, or one
    /// keep-alive connection): the token grant's status and answer.
    func signUpAttempt(_ authenticator: SoftwareAuthenticator, email: String,
                       post: (String, JSONValue) throws -> (status: Int, json: JSONValue)) throws -> (status: Int, json: JSONValue) {
        let (_, start) = try post("/passkey/register", .object(["client_id": .string("dev"), "user_profile": .object(["email": .string(email)])]))
        let options = try #require(start["authn_params_public_key"])
        let made = try authenticator.register(
            rpID: "localhost", origin: Cluster.origin, challenge: try #require(options["challenge"]?.string.flatMap { Base64URL.decode($0) }),
            userHandle: try #require(options["user"]?["id"]?.string.flatMap { Base64URL.decode($0) }), userName: email)
        return try post("/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": try #require(start["auth_session"]), "authn_response": made.json,
        ]))
    }

    /// A sign-in challenge from `instance`, answered by the authenticator: (auth_session, credential JSON).
    func signInStart(_ authenticator: SoftwareAuthenticator, on instance: Int) throws -> (String, JSONValue) {
        let (_, start) = try post(instance, "/passkey/challenge", .object(["client_id": .string("dev")]))
        let challenge = try #require(start["authn_params_public_key"]?["challenge"]?.string.flatMap { Base64URL.decode($0) })
        let assertion = try authenticator.authenticate(rpID: "localhost", origin: Cluster.origin, challenge: challenge)
        return (try #require(start["auth_session"]?.string), assertion.json)
    }
}

@Suite(.enabled(if: ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"] != nil, "needs PostgreSQL (SIGNET_TEST_POSTGRES); scripts/test.sh starts one"))
struct ScaleOutTests {
    @Test("a challenge from A is redeemed on B; a refresh token from A rotates on B; its reuse is caught on A")
    func acrossInstances() throws {
        let cluster = try Cluster(instances: 2)
        let phone = SoftwareAuthenticator()
        _ = try cluster.signUp(phone, email: "x@signet.test", on: 0)
        let (session, credential) = try cluster.signInStart(phone, on: 0)
        let (status, tokens) = try cluster.post(1, "/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": .string(session), "authn_response": credential,
        ]))
        #expect(status == 200, "\(tokens.serialized)")
        // A token from B is good on A.
        let access = try #require(tokens["access_token"]?.string)
        #expect(try HTTPClient(port: cluster.port(0)).send("GET", "/userinfo", headers: [("Authorization", "Bearer \(access)")]).status == 200)
        let refresh = try #require(tokens["refresh_token"]?.string)
        let body = JSONValue.object(["grant_type": .string("refresh_token"), "client_id": .string("dev"), "refresh_token": .string(refresh)])
        #expect(try cluster.post(1, "/oauth/token", body).status == 200)
        let (reused, json) = try cluster.post(0, "/oauth/token", body)
        #expect(reused == 400 && json["reason"] == .string("refresh_token_reused"))
        // The reuse ended the session everywhere: its access token is refused on B from then on.
        #expect(try HTTPClient(port: cluster.port(1)).send("GET", "/userinfo", headers: [("Authorization", "Bearer \(access)")]).status == 401)
    }

    @Test("bench login over two instances: every sign-in completes, and the report gives PostgreSQL's CPU and the sign-ins per commit batch")
    func benchLogin() throws {
        let cluster = try Cluster(instances: 2)
        let urls = (0..<2).map { "http://127.0.0.1:\(cluster.port($0))" }.joined(separator: ",")
        let (status, output) = try ProcessTests.run(["bench", "login", "--url", urls, "--origin", Cluster.origin, "--duration", "2",
                                                     "--concurrency", "16", "--idle-connections", "0", "--json"])
        #expect(status == 0, "\(output)")
        let report = try StrictJSON().parse(Array(output.utf8))
        func number(_ key: String) -> Double? {
            guard case .number(let text)? = report[key] else { return nil }
            return Double(text)
        }
        #expect((number("signins") ?? 0) > 16 && number("failures") == 0 && number("instances") == 2, "\(output)")
        #expect((number("postgres_cpu_us_per_signin") ?? 0) > 0, "\(output)")
        // Every sign-in went through a batch, of one to sixteen.
        let perBatch = number("postgres_signins_per_batch") ?? 0
        #expect(perBatch >= 1 && perBatch <= 16, "\(output)")
    }

    @Test("both publish the same JWKS; a key rotated through one is served by the other")
    func keys() throws {
        let cluster = try Cluster(instances: 2)
        let a = try HTTPClient(port: cluster.port(0)).send("GET", "/.well-known/jwks.json").text
        let b = try HTTPClient(port: cluster.port(1)).send("GET", "/.well-known/jwks.json").text
        #expect(a == b && a.contains("\"kid\""))
        let rotate = Process()
        rotate.executableURL = ProcessTests.binary
        rotate.arguments = ["keys", "rotate", "--database", cluster.database]
        rotate.environment = cluster.environment
        rotate.standardOutput = FileHandle.nullDevice
        try rotate.run()
        rotate.waitUntilExit()
        #expect(rotate.terminationStatus == 0)
        // Each instance re-reads its keys at least every 10 s.
        #expect(eventually(timeout: 15, every: 0.25) {
            try StrictJSON().parse(try HTTPClient(port: cluster.port(1)).send("GET", "/.well-known/jwks.json").body)["keys"]?.array?.count == 2
        })
        let tokens = try cluster.signUp(SoftwareAuthenticator(), email: "rot@signet.test", on: 1)
        let header = try StrictJSON().parse(try #require(tokens["access_token"]?.string?.split(separator: ".").first.flatMap { Base64URL.decode($0) }))
        let jwks = try StrictJSON().parse(try HTTPClient(port: cluster.port(0)).send("GET", "/.well-known/jwks.json").body)
        #expect(jwks["keys"]?.array?.contains { $0["kid"] == header["kid"] } == true)
    }

    @Test("64 concurrent token requests for one auth session over both instances: exactly one succeeds")
    func raceAcrossInstances() throws {
        let cluster = try Cluster(instances: 2)
        let phone = SoftwareAuthenticator()
        _ = try cluster.signUp(phone, email: "race@signet.test", on: 0)
        let (session, credential) = try cluster.signInStart(phone, on: 1)
        let body = Array(JSONValue.object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": .string(session), "authn_response": credential,
        ]).serialized.utf8)
        let statuses = race(64, cluster: cluster) { client in try client.send("POST", "/oauth/token", body: body).status }
        #expect(statuses.filter { $0 == 200 }.count == 1)
        #expect(statuses.filter { $0 == 400 }.count == 63)
    }

    @Test("64 concurrent approvals of one action challenge over both instances: exactly one succeeds")
    func actionRaceAcrossInstances() throws {
        let cluster = try Cluster(instances: 2)
        let tokens = try cluster.signUp(SoftwareAuthenticator(), email: "act@signet.test", on: 0)
        let access = try #require(tokens["access_token"]?.string)
        let key = try SoftwareDeviceKey(deviceID: "phone")
        let (_, enrolled) = try cluster.post(0, "/me/device-keys", .object([
            "public_key": .string(Base64URL.encode(key.publicKeySPKI)), "device_id": .string("phone"), "platform": .string("ios"),
        ]), bearer: access)
        let (_, challenge) = try cluster.post(1, "/actions/challenge", .object([
            "device_key_id": enrolled["id"]!, "action": .object(["type": .string("payment"), "amount": .number("5")]),
        ]), bearer: access)
        let signature = try key.sign(try #require(challenge["challenge"]?.string.flatMap { Base64URL.decode($0) }))
        let body = Array(JSONValue.object(["challenge_id": challenge["challenge_id"]!, "signature": .string(Base64URL.encode(signature))]).serialized.utf8)
        let statuses = race(64, cluster: cluster) { client in
            try client.send("POST", "/actions/approve", headers: [("Authorization", "Bearer \(access)")], body: body).status
        }
        #expect(statuses.filter { $0 == 200 }.count == 1)
        #expect(statuses.filter { $0 == 400 }.count == 63)
    }

    /// Runs `n` requests at once, alternating between the instances, each on its own connection.
    func race(_ n: Int, cluster: Cluster, _ request: @escaping @Sendable (HTTPClient) throws -> Int) -> [Int] {
        let clients = (0..<n).map { HTTPClient(port: cluster.port($0 % cluster.instances.count)) }
        for client in clients { try? client.connect() }
        return simultaneously(n) { try request(clients[$0]) }.map { (try? $0.get()) ?? -1 }
    }
}
