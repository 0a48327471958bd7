import Foundation
import SignetAPI
import SignetCrypto
import SignetHTTP
import SignetSoftware
import SignetWebAuthn

/// `signet bench soak`: a mixed load for a long time (sign-ups, sign-ins, refreshes, approved
/// actions, account reads, bad requests) and, every interval, the server's resident memory, open
/// descriptors, threads and the interval's p99. After the first interval (warm-up) memory must
/// stay within 10% and descriptors and threads within a few of their first figures, and no
/// operation may fail; the command exits 1 otherwise (DESIGN.md, "Reliability rules": nothing
/// stuck, nothing leaks). Access tokens are renewed by the refreshes, so a run may outlast them.
struct SoakCommand {
    var url: String?
    var duration = 60.0
    var interval = 10.0
    var clients = 4
    /// Accounts each load client makes at most (then it only signs in, refreshes, ... with them).
    var accounts = Int.max

    static func run(_ args: [String]) -> Int32 {
        var soak = SoakCommand()
        var words = CommandWords(args)
        do {
            while let flag = words.next() {
                switch flag {
                case "--url": soak.url = try words.value(of: flag)
                case "--duration": soak.duration = try words.number(of: flag)
                case "--interval": soak.interval = try words.number(of: flag)
                case "--clients": soak.clients = try words.number(of: flag)
                case "--accounts": soak.accounts = try words.number(of: flag)
                default: throw UsageProblem.unexpected(flag)
                }
            }
            guard soak.duration >= soak.interval * 2, soak.interval > 0, soak.clients > 0, soak.accounts > 0 else {
                throw UsageProblem("--duration must be at least two --interval, and --clients and --accounts positive")
            }
        } catch {
            return usageError("usage: signet bench soak [--url URL] [--duration S] [--interval S] [--clients N] [--accounts N]", error)
        }
        return benchStatus("soak") { try soak.soak() ? 0 : 1 }
    }

    /// Latencies of the current interval, and failures.
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var latencies: [Double] = []
        private var counts: [String: Int] = [:]
        func add(_ op: String, _ seconds: Double, ok: Bool) {
            lock.withLock {
                latencies.append(seconds)
                counts[ok ? op : op + " failed", default: 0] += 1
            }
        }
        func take() -> (p99: Double, counts: [String: Int]) {
            lock.withLock {
                let sorted = latencies.sorted()
                defer { latencies = []; counts = [:] }
                return (sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))], counts)
            }
        }
    }

    func soak() throws -> Bool {
        var own: LoopbackProcess?
        let port: UInt16
        let origin: String
        if let url {
            guard let components = URLComponents(string: url), let p = components.port else { throw LoginBenchmark.Failure(description: "--url must be http://HOST:PORT") }
            port = UInt16(p)
            origin = "http://localhost:\(p)"
        } else {
            var environment = ProcessInfo.processInfo.environment
            environment["SIGNET_RATE_LIMITS_ENABLED"] = "false"
            environment["SIGNET_LIMITS_MAX_CONNECTIONS_PER_IP"] = "4096"
            // Each account approves several actions a minute here; a real one does not.
            environment["SIGNET_ACTIONS_RATE_LIMIT_PER_MINUTE"] = "10000"
            own = try LoopbackProcess(executable: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(),
                                      arguments: { ["serve", "--listen", "127.0.0.1:\($0)"] }, environment: environment)
            port = own!.port
            origin = "http://localhost:\(port)"
        }
        _ = own
        let target = LoginBenchmark.Target(host: "127.0.0.1", port: port, origin: origin, rpID: "localhost")
        let tally = Tally()
        let stop = Date().addingTimeInterval(duration)
        let group = DispatchGroup()
        for client in 0..<clients {
            group.enter()
            Thread {
                Self.load(client: client, target: target, until: stop, tally: tally, maxAccounts: accounts)
                group.leave()
            }.start()
        }
        FileHandle.standardOutput.write(Data("| minute | resident MiB | open fds | threads | p99 ms | operations |\n| --- | --- | --- | --- | --- | --- |\n".utf8))
        var rows: [(rss: Double, fds: Int, threads: Int, failures: Int)] = []
        var next = Date().addingTimeInterval(interval)
        while next <= stop.addingTimeInterval(0.001) {
            Thread.sleep(until: next)
            next = next.addingTimeInterval(interval)
            let metrics = try HTTPClient(port: port).send("GET", "/metrics").text
            func value(_ name: String) -> Double {
                metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) } ?? 0
            }
            let (p99, counts) = tally.take()
            let failures = counts.filter { $0.key.hasSuffix(" failed") }.map(\.value).reduce(0, +)
            let row = (rss: value("process_resident_memory_bytes") / 1_048_576, fds: Int(value("process_open_fds")), threads: Int(value("process_threads")),
                       failures: failures)
            rows.append(row)
            let ops = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            // A row as soon as it is measured, also into a file (print would buffer it).
            FileHandle.standardOutput.write(Data((String(format: "| %.1f | %.1f | %d | %d | %.1f | %@ |", Double(rows.count) * interval / 60,
                                                         row.rss, row.fds, row.threads, p99 * 1000, ops) + "\n").utf8))
        }
        group.wait()
        // The first interval warms up (caches, pools); after it nothing may grow.
        let base = rows[1]
        let flat = rows.dropFirst(2).allSatisfy { $0.rss <= base.rss * 1.10 && $0.fds <= base.fds + 8 && $0.threads <= base.threads + 2 }
        // And nothing refused that should have been answered (bad requests count as answered).
        let failures = rows.dropFirst().map(\.failures).reduce(0, +)
        print(flat ? "flat: resident memory within 10% of \(String(format: "%.1f", base.rss)) MiB, descriptors and threads steady"
                   : "NOT flat: resident memory, descriptors or threads grew after the warm-up")
        if failures > 0 { print("FAILED: \(failures) operations failed after the warm-up") }
        return flat && failures == 0
    }

    /// One client's mixed load on its own keep-alive connection.
    static func load(client: Int, target: LoginBenchmark.Target, until stop: Date, tally: Tally, maxAccounts: Int) {
        let bench = LoginBenchmark()
        // One keep-alive connection per load client, whatever the number of its accounts.
        let connection = HTTPClient(host: target.host, port: target.port)
        var accounts: [(phone: LoginBenchmark.Phone, refresh: String, access: String, key: SoftwareDeviceKey, keyID: String)] = []
        var n = 0
        while Date() < stop {
            n += 1
            let started = Date()
            var op = "bad request"
            do {
                if accounts.isEmpty || (n % 50 == 0 && accounts.count < maxAccounts) {
                    op = "sign-up"
                    let phone = LoginBenchmark.Phone(client: connection)
                    try bench.signUp(phone, target, index: client * 1_000_000 + n)
                    let (refresh, access) = try signIn(bench, phone, target)
                    let key = try SoftwareDeviceKey(deviceID: "soak-\(client)-\(n)")
                    let enrolled = try bench.post(phone.client, "/me/device-keys", .object([
                        "public_key": .string(Base64URL.encode(key.publicKeySPKI)), "device_id": .string(key.deviceID), "platform": .string("ios"),
                    ]), bearer: access, status: 201)
                    accounts.append((phone, refresh, access, key, enrolled["id"]?.string ?? ""))
                } else {
                    // Each account in turn for every kind of operation.
                    let i = (n / 5) % accounts.count
                    switch n % 5 {
                    case 0:
                        op = "sign-in"
                        let (refresh, access) = try signIn(bench, accounts[i].phone, target)
                        accounts[i].refresh = refresh
                        accounts[i].access = access
                    case 1:
                        op = "refresh"
                        let tokens = try bench.post(accounts[i].phone.client, "/oauth/token", .object([
                            "grant_type": .string("refresh_token"), "client_id": .string("dev"), "refresh_token": .string(accounts[i].refresh),
                        ]))
                        accounts[i].refresh = tokens["refresh_token"]?.string ?? accounts[i].refresh
                        accounts[i].access = tokens["access_token"]?.string ?? accounts[i].access
                    case 2:
                        op = "action"
                        let challenge = try bench.post(accounts[i].phone.client, "/actions/challenge", .object([
                            "device_key_id": .string(accounts[i].keyID), "action": .object(["type": .string("payment"), "amount": .int(Int64(n % 1000))]),
                        ]), bearer: accounts[i].access)
                        let bytes = challenge["challenge"]?.string.flatMap { Base64URL.decode($0) } ?? []
                        _ = try bench.post(accounts[i].phone.client, "/actions/approve", .object([
                            "challenge_id": challenge["challenge_id"] ?? .null, "signature": .string(Base64URL.encode(try accounts[i].key.sign(bytes))),
                        ]), bearer: accounts[i].access)
                    case 3:
                        op = "account read"
                        let answer = try accounts[i].phone.client.send("GET", "/me/passkeys", headers: [("Authorization", "Bearer \(accounts[i].access)")])
                        guard answer.status == 200 else { throw LoginBenchmark.Failure(description: "/me/passkeys answered \(answer.status)") }
                    default:
                        op = "bad request"
                        let answer = try accounts[i].phone.client.send("POST", "/oauth/token", body: Array("{\"grant_type\": [1, 2, {".utf8))
                        guard answer.status == 400 else { throw LoginBenchmark.Failure(description: "garbage answered \(answer.status)") }
                    }
                }
                tally.add(op, Date().timeIntervalSince(started), ok: true)
            } catch {
                tally.add(op, Date().timeIntervalSince(started), ok: false)
                connection.close()
            }
        }
    }

    /// A discoverable sign-in: the refresh and access tokens.
    static func signIn(_ bench: LoginBenchmark, _ phone: LoginBenchmark.Phone, _ target: LoginBenchmark.Target) throws -> (String, String) {
        let options = try bench.post(phone.client, "/passkey/challenge", .object(["client_id": .string("dev")]))
        let challenge = options["authn_params_public_key"]?["challenge"]?.string.flatMap { Base64URL.decode($0) } ?? []
        let assertion = try phone.authenticator.authenticate(rpID: target.rpID, origin: target.origin, challenge: challenge)
        let tokens = try bench.post(phone.client, "/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": options["auth_session"] ?? .null, "authn_response": assertion.json,
        ]))
        guard let refresh = tokens["refresh_token"]?.string, let access = tokens["access_token"]?.string else { throw LoginBenchmark.Failure(description: "no tokens") }
        return (refresh, access)
    }
}
