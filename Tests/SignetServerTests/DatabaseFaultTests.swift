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

/// PostgreSQL going away under load, on a cluster of its own.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"] != nil, "needs PostgreSQL; scripts/test.sh starts it"))
struct DatabaseFaultTests {
    static let script = ProcessTests.binary.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/postgres.sh").path

    /// Runs scripts/postgres.sh with posix_spawn and waitpid. (Foundation's Process would wait
    /// forever: the PostgreSQL daemon pg_ctl leaves behind inherits the descriptor Process watches.)
    static func postgres(_ args: [String]) throws -> String {
        let output = Scratch.directory.appendingPathComponent("pg-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let argv = ["/bin/bash", script] + args
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let errors = output + ".err"
        defer { try? FileManager.default.removeItem(atPath: errors) }
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var pid: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        let rc = posix_spawn(&pid, "/bin/bash", &actions, nil, cArgs, environ)
        try #require(rc == 0, "posix_spawn failed")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        try #require(status == 0, "postgres.sh \(args.joined(separator: " ")) failed (\(status)): \((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")")
        return (try String(contentsOfFile: output, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    final class Outcomes: @unchecked Sendable {
        private let lock = NSLock()
        var signedUp: [String] = []
        var statuses: [Int: Int] = [:]
        var reasons: Set<String> = []
        var slowest = 0.0
        func add(_ status: Int, reason: String?, email: String, seconds: Double) {
            lock.withLock {
                statuses[status, default: 0] += 1
                if status == 200 { signedUp.append(email) }
                if let reason { reasons.insert(reason) }
                slowest = max(slowest, seconds)
            }
        }
    }

    @Test("PostgreSQL stopped and restarted under load: 503 while down, recovery without a restart, no half-written sign-up")
    func stopAndRestart() throws {
        let directory = "/tmp/signet-fault-\(UUID().uuidString.prefix(8))"
        let port = Int(freeLoopbackPort())
        let admin = try Self.postgres(["start", directory, String(port)])
        defer { _ = try? Self.postgres(["stop", directory]) }
        let database = try PostgresAdmin.createDatabase(adminURL: admin, name: "fault")
        let cluster = try Cluster(instances: 1, database: database)
        let outcomes = Outcomes()
        let stop = Date().addingTimeInterval(9)
        let workers = Workers(4) { worker in
            let phone = SoftwareAuthenticator()
            var n = 0
            while Date() < stop {
                n += 1
                let email = "w\(worker)-\(n)@signet.test"
                let started = Date()
                do {
                    let (status, start) = try cluster.post(0, "/passkey/register", .object([
                        "client_id": .string("dev"), "user_profile": .object(["email": .string(email)]),
                    ]))
                    guard status == 200, let options = start["authn_params_public_key"],
                          let challenge = options["challenge"]?.string.flatMap({ Base64URL.decode($0) }),
                          let handle = options["user"]?["id"]?.string.flatMap({ Base64URL.decode($0) })
                    else {
                        outcomes.add(status, reason: start["reason"]?.string, email: email, seconds: Date().timeIntervalSince(started))
                        usleep(20_000)
                        continue
                    }
                    let made = try phone.register(rpID: "localhost", origin: Cluster.origin, challenge: challenge, userHandle: handle, userName: email)
                    let (tokenStatus, answer) = try cluster.post(0, "/oauth/token", .object([
                        "grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": start["auth_session"]!,
                        "authn_response": made.json,
                    ]))
                    outcomes.add(tokenStatus, reason: answer["reason"]?.string, email: email, seconds: Date().timeIntervalSince(started))
                } catch {
                    outcomes.add(-1, reason: "\(error)", email: email, seconds: Date().timeIntervalSince(started))
                }
            }
        }
        // Durations of the scenario, not waits for a condition: 2 s of load, then the database
        // stays down 2 s under load.
        sleep(2)
        _ = try Self.postgres(["pause", directory])
        #expect(eventually {
            let down = try HTTPClient(port: cluster.port(0)).send("GET", "/healthz")
            return down.status == 503 && down.text.contains("database_unavailable")
        })
        sleep(2)
        _ = try Self.postgres(["resume", directory, String(port)])
        #expect(eventually(timeout: 5, every: 0.1) { try HTTPClient(port: cluster.port(0)).send("GET", "/healthz").status == 200 },
                "the server did not recover by itself")
        workers.join()
        #expect(outcomes.statuses[503, default: 0] > 0, "no 503 while the database was down: \(outcomes.statuses)")
        #expect(outcomes.reasons.contains("database_unavailable"))
        #expect(outcomes.statuses[500] == nil && outcomes.statuses[-1] == nil, "\(outcomes.statuses) \(outcomes.reasons)")
        #expect(outcomes.slowest < 5, "a request waited \(outcomes.slowest) s")
        #expect(outcomes.signedUp.count > 10)
        // Every sign-up answered 200 is complete: the account with its passkey. No account lacks one.
        let store = try SQLStore(postgres: database, connections: 2)
        for email in outcomes.signedUp {
            let user = try #require(try store.user(email: email), "\(email) answered 200 but is missing")
            #expect(try store.credentials(userID: user.id).count == 1)
        }
        let counts = try store.rowCounts()
        #expect(counts["users"] == counts["credentials"])
        // Sign-ups work again after the outage.
        let after = try cluster.signUp(SoftwareAuthenticator(), email: "after@signet.test", on: 0)
        #expect(after["access_token"] != nil)
    }
}
