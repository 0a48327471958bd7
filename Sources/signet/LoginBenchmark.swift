import Foundation
import SignetAPI
import SignetCrypto
import SignetHTTP
import SignetSoftware
import SignetWebAuthn

/// `signet bench login`: registers users, then runs complete sign-ins (challenge, sign, token)
/// from concurrent clients for a while, and prints throughput, latency and the server's CPU per
/// sign-in next to its floor, the sign-in's unavoidable cryptography measured in the same run.
/// Without `--url` it starts `signet serve` (development mode) on a free port and measures that.
struct LoginBenchmark {
    /// One or more servers (comma-separated); clients are spread over them.
    var url: String?
    var concurrency = 64
    var duration = 10.0
    var json = false
    var clientID = "dev"
    var origin: String?
    var idleConnections = 1000
    /// Open-loop mode: this many sign-ins per second in all, spread over the clients on a fixed
    /// schedule; latency counts from each sign-in's scheduled start (no coordinated omission).
    var rate: Double?
    /// Threads of the load generator's event loops (default: one per processor).
    var clientThreads: Int?
    /// The own server's SQLite durability: `full` (the default), `normal`, or `both` (one run each).
    var durability = "full"
    /// Whether every token request carries a DPoP proof (each client with its own key).
    var dpop = false

    static func run(_ args: [String]) -> Int32 {
        var bench = LoginBenchmark()
        var words = CommandWords(args)
        do {
            while let flag = words.next() {
                switch flag {
                case "--url": bench.url = try words.value(of: flag)
                case "--concurrency": bench.concurrency = try words.number(of: flag)
                case "--duration": bench.duration = try words.number(of: flag)
                case "--client-id": bench.clientID = try words.value(of: flag)
                case "--origin": bench.origin = try words.value(of: flag)
                case "--idle-connections": bench.idleConnections = try words.number(of: flag)
                case "--rate": bench.rate = try words.number(of: flag, as: Double.self)
                case "--client-threads": bench.clientThreads = try words.number(of: flag, as: Int.self)
                case "--json": bench.json = true
                case "--durability": bench.durability = try words.value(of: flag)
                case "--dpop": bench.dpop = true
                default: throw UsageProblem.unexpected(flag)
                }
            }
            guard bench.concurrency > 0, bench.duration > 0, (bench.rate ?? 1) > 0, (bench.clientThreads ?? 1) > 0 else {
                throw UsageProblem("--concurrency, --duration, --rate and --client-threads must be positive")
            }
            guard bench.idleConnections >= 0 else { throw UsageProblem("--idle-connections must be at least 0") }
            guard ["full", "normal", "both"].contains(bench.durability) else { throw UsageProblem("--durability must be full, normal or both") }
        } catch {
            return usageError("usage: signet bench login [--url URL] [--concurrency N] [--duration S] [--client-id ID] [--origin ORIGIN] [--idle-connections N] [--rate PER_S] [--client-threads N] [--durability full|normal|both] [--dpop] [--json]", error)
        }
        return benchStatus("login") {
            // With both, one run each, the durable default first; JSON: one object per mode.
            var reports: [(String, Report)] = []
            for mode in bench.durability == "both" ? ["full", "normal"] : [bench.durability] {
                var run = bench
                run.durability = mode
                reports.append((mode, try run.measure()))
            }
            if bench.json {
                print(reports.count == 1 ? reports[0].1.json.serialized : JSONValue.object(JSONObject(uniqueKeysWithValues: reports.map { ($0.0, $0.1.json) })).serialized)
            } else {
                for (mode, report) in reports { print((reports.count > 1 ? "durability \(mode):\n" : "") + report.text) }
            }
            return 0
        }
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    struct Target {
        let host: String
        let port: UInt16
        let origin: String
        let rpID: String
    }

    /// One simulated phone: a software authenticator with one registered passkey.
    final class Phone: @unchecked Sendable {
        let authenticator = SoftwareAuthenticator()
        let client: HTTPClient
        init(port: UInt16, host: String) { client = HTTPClient(host: host, port: port) }
        /// A phone that talks over `client` (several phones of one load client share it).
        init(client: HTTPClient) { self.client = client }
    }

    func post(_ client: HTTPClient, _ path: String, _ body: JSONValue, bearer: String? = nil, status expected: Int = 200) throws -> JSONValue {
        let response = try client.send("POST", path, headers: bearer.map { [("Authorization", "Bearer \($0)")] } ?? [], body: body.serializedBytes)
        guard response.status == expected else { throw Failure(description: "\(path) answered \(response.status): \(response.text)") }
        return try StrictJSON().parse(response.body)
    }

    func signUp(_ phone: Phone, _ target: Target, index: Int) throws {
        let options = try post(phone.client, "/passkey/register", .object([
            "client_id": .string(clientID), "user_profile": .object(["email": .string("bench-\(index)-\(UUID().uuidString.prefix(8))@signet.test")]),
        ]))
        guard let session = options["auth_session"]?.string, let publicKey = options["authn_params_public_key"],
              let challenge = publicKey["challenge"]?.string.flatMap({ Base64URL.decode($0) }),
              let handle = publicKey["user"]?["id"]?.string.flatMap({ Base64URL.decode($0) })
        else { throw Failure(description: "unexpected /passkey/register answer") }
        let response = try phone.authenticator.register(rpID: target.rpID, origin: target.origin, challenge: challenge, userHandle: handle, userName: "bench")
        _ = try post(phone.client, "/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string(clientID), "auth_session": .string(session), "authn_response": response.json,
        ]))
    }

    /// One complete discoverable sign-in.
    func signIn(_ phone: Phone, _ target: Target) throws {
        let options = try post(phone.client, "/passkey/challenge", .object(["client_id": .string(clientID)]))
        guard let session = options["auth_session"]?.string,
              let challenge = options["authn_params_public_key"]?["challenge"]?.string.flatMap({ Base64URL.decode($0) })
        else { throw Failure(description: "unexpected /passkey/challenge answer") }
        let assertion = try phone.authenticator.authenticate(rpID: target.rpID, origin: target.origin, challenge: challenge)
        let tokens = try post(phone.client, "/oauth/token", .object([
            "grant_type": .string(GrantType.webauthn), "client_id": .string(clientID), "auth_session": .string(session), "authn_response": assertion.json,
        ]))
        guard tokens["access_token"]?.string != nil else { throw Failure(description: "no access token") }
    }

    /// `process_cpu_seconds_total` and `process_resident_memory_bytes` from the server's /metrics,
    /// whether its store is SQLite (it publishes the checkpoint's histogram), and on PostgreSQL its
    /// sign-in batches and the sign-ins they carried (0 elsewhere).
    func serverProcess(_ target: Target) throws -> (cpu: Double, rss: Double, syncs: SyncHistogram, batches: Double, batched: Double, sqlite: Bool) {
        let text = try HTTPClient(host: target.host, port: target.port).send("GET", "/metrics").text
        func value(_ name: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
        }
        guard let cpu = value("process_cpu_seconds_total"), let rss = value("process_resident_memory_bytes") else {
            throw Failure(description: "the server's /metrics has no process_cpu_seconds_total")
        }
        return (cpu, rss, SyncHistogram(metrics: text), value("signet_postgres_sign_in_batches_total") ?? 0, value("signet_postgres_batched_sign_ins_total") ?? 0,
                text.contains("\nsignet_sqlite_locked_checkpoint_seconds_count "))
    }

    /// The cumulative buckets of `signet_sqlite_wal_sync_seconds` (durable SQLite only): how long
    /// the disk took to sync, so that a run's latency tail can be set beside the disk's.
    struct SyncHistogram {
        /// Upper bound in seconds (`infinity` for `+Inf`) → syncs that took at most that long.
        var buckets: [(bound: Double, count: Int)] = []

        init(metrics: String) {
            let prefix = "signet_sqlite_wal_sync_seconds_bucket{le=\""
            for line in metrics.split(separator: "\n") where line.hasPrefix(prefix) {
                let rest = line.dropFirst(prefix.count)
                guard let quote = rest.firstIndex(of: "\""), let count = Int(rest.split(separator: " ").last ?? "") else { continue }
                let bound = rest[..<quote] == "+Inf" ? Double.infinity : Double(rest[..<quote]) ?? .nan
                buckets.append((bound, count))
            }
        }

        init(buckets: [(bound: Double, count: Int)]) { self.buckets = buckets }

        /// The syncs between `earlier` and this one.
        func since(_ earlier: SyncHistogram) -> SyncHistogram {
            guard earlier.buckets.count == buckets.count else { return self }
            return SyncHistogram(buckets: zip(buckets, earlier.buckets).map { ($0.bound, $0.count - $1.count) })
        }

        var total: Int { buckets.last?.count ?? 0 }
        /// Syncs that took longer than `seconds` (a bucket bound).
        func over(_ seconds: Double) -> Int { total - (buckets.first { $0.bound == seconds }?.count ?? total) }
        /// The smallest bucket bound that holds every sync: the slowest one took at most this long.
        var slowest: Double? { buckets.first { $0.count == total && total > 0 }?.bound }
    }

    /// The CPU seconds so far of each process of a local PostgreSQL server, by process ID and
    /// start time (from /proc): a process named `postgres` whose parent is one too (a backend,
    /// a background worker), or which has such children (the postmaster). Another process that
    /// happens to be named `postgres` is not counted.
    static func databaseProcesses() -> [Int32: (start: UInt64, cpu: Double)] {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var named: [Int32: (parent: Int32, start: UInt64, cpu: Double)] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where entry.allSatisfy(\.isNumber) {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"),
                  stat[stat.index(after: open)..<close] == "postgres"
            else { continue }
            // After the name: state, ppid, …, utime (field 14 of stat(5)), stime, …, starttime (22).
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            guard fields.count > 19, let parent = Int32(fields[1]), let user = Double(fields[11]), let system = Double(fields[12]),
                  let start = UInt64(fields[19])
            else { continue }
            named[pid] = (parent, start, (user + system) / ticks)
        }
        let parents = Set(named.values.map(\.parent))
        var server: [Int32: (start: UInt64, cpu: Double)] = [:]
        for (pid, process) in named where named[process.parent] != nil || parents.contains(pid) {
            server[pid] = (process.start, process.cpu)
        }
        return server
    }

    /// The CPU seconds PostgreSQL's processes used since `before` was read: each process's own
    /// difference, and all of a process started since. One that ended meanwhile takes its time
    /// with it, so the figure can fall short but never go negative.
    static func databaseCPU(since before: [Int32: (start: UInt64, cpu: Double)]) -> Double {
        databaseProcesses().reduce(0) { total, entry in
            let (pid, now) = entry
            guard let then = before[pid], then.start == now.start else { return total + now.cpu }
            return total + max(0, now.cpu - then.cpu)
        }
    }

    static func threadCPU() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// CPU microseconds of the sign-in's unavoidable cryptography: one ES256 verification of an
    /// assertion and two ES256 JWT signatures (access and id token), measured on this thread.
    func floor() throws -> (verify: Double, sign: Double) {
        let key = try PrivateKey.generate(.ec(.p256))
        let message = SecureRandom.bytes(37 + 32)
        let signature = try key.sign(message, scheme: .ecdsa(.sha256))
        let jwtInput = Array(String(repeating: "e", count: 420).utf8)
        func median(_ body: () throws -> Void) rethrows -> Double {
            var samples: [Double] = []
            for _ in 0..<7 {
                let n = 2000
                let start = Self.threadCPU()
                for _ in 0..<n { try body() }
                samples.append((Self.threadCPU() - start) / Double(n) * 1e6)
            }
            return samples.sorted()[3]
        }
        let verify = median { _ = key.publicKey.verify(signature: signature, message: message, scheme: .ecdsa(.sha256)) }
        let sign = try median { _ = try key.sign(jwtInput, scheme: .ecdsa(.sha256)) }
        return (verify, sign)
    }

    func measure() throws -> Report {
        var own: LoopbackProcess?
        var targets: [Target] = []
        if let url {
            for item in url.split(separator: ",") {
                guard let components = URLComponents(string: String(item)), let named = components.host, let port = components.port else {
                    throw Failure(description: "--url must be http://HOST:PORT[,http://HOST:PORT...]")
                }
                // An IPv6 address comes in brackets (http://[::1]:8080); a loopback address is
                // development mode's RP ID, localhost.
                let host = named.hasPrefix("[") && named.hasSuffix("]") ? String(named.dropFirst().dropLast()) : named
                let rpID = host == "127.0.0.1" || host == "::1" ? "localhost" : host
                targets.append(Target(host: host == "localhost" ? "127.0.0.1" : host, port: UInt16(port), origin: origin ?? "http://\(rpID):\(port)", rpID: rpID))
            }
        } else {
            do {
                // A development server of its own, in a temporary directory.
                // Rate limits off and no per-address connection cap: a load test is one address
                // signing up and in many times, and holding 1,000 idle connections.
                var environment = ProcessInfo.processInfo.environment
                environment["SIGNET_RATE_LIMITS_ENABLED"] = "false"
                environment["SIGNET_LIMITS_MAX_CONNECTIONS_PER_IP"] = "4096"
                environment["SIGNET_DATABASE_DURABILITY"] = durability
                own = try LoopbackProcess(executable: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(), arguments: { ["serve", "--listen", "127.0.0.1:\($0)"] },
                                          environment: environment)
            } catch {
                throw Failure(description: "the development server did not start")
            }
            targets = [Target(host: "127.0.0.1", port: own!.port, origin: origin ?? "http://localhost:\(own!.port)", rpID: "localhost")]
        }
        _ = own
        let target = targets[0]
        // Users first: one phone (and connection) per client, the clients spread over the servers.
        let phones = (0..<concurrency).map { i in Phone(port: targets[i % targets.count].port, host: targets[i % targets.count].host) }
        let phoneTargets = (0..<concurrency).map { targets[$0 % targets.count] }
        for (index, phone) in phones.enumerated() { try signUp(phone, phoneTargets[index], index: index) }
        // Warm up, then measure.
        for (index, phone) in phones.enumerated().prefix(8) { try signIn(phone, phoneTargets[index]) }
        for phone in phones { phone.client.close() }
        let driver = LoadDriver(
            clients: try zip(phones, phoneTargets).map { LoadDriver.Client(authenticator: $0.authenticator, target: $1, dpop: dpop ? try SoftwareDPoPKey() : nil) },
            clientID: clientID, threads: clientThreads ?? ProcessInfo.processInfo.activeProcessorCount)
        let before = try targets.map { try serverProcess($0) }
        // Only a PostgreSQL run counts the machine's `postgres` processes: beside SQLite, which runs
        // inside Signet, they would be some other cluster's (the test suite's, say).
        let onPostgres = before.contains { !$0.sqlite }
        let databaseBefore = onPostgres ? Self.databaseProcesses() : [:]
        let start = DispatchTime.now().uptimeNanoseconds
        let stopAt = start + UInt64(duration * 1e9)
        let sampled = targets
        let sampler = CPUSampler(start: start, stopAt: stopAt) { [self] in try sampled.map { try serverProcess($0).cpu }.reduce(0, +) }
        let outcome = driver.run(start: start, stopAt: stopAt, interval: rate.map { UInt64(Double(concurrency) / $0 * 1e9) })
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let windows = sampler.finish(completions: outcome.completions)
        let after = try targets.map { try serverProcess($0) }
        let databaseCPUSeconds = onPostgres ? Self.databaseCPU(since: databaseBefore) : 0
        let (verify, sign) = try floor()
        let breakdown = try LoginBreakdown.measure()

        // Resident memory with idle keep-alive connections open.
        var idle: [HTTPClient] = []
        for _ in 0..<idleConnections {
            let c = HTTPClient(host: target.host, port: target.port)
            _ = try c.send("GET", "/healthz")
            idle.append(c)
        }
        usleep(200_000)
        let memory = try serverProcess(target)
        idle.forEach { $0.close() }

        let sorted = outcome.latencies.sorted()
        func percentile(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1000 }
        let count = Double(sorted.count)
        let meanCPU = count > 0 ? zip(after, before).map { $0.cpu - $1.cpu }.reduce(0, +) / count * 1e6 : 0
        // Per one-second window, so that a moment when the machine is slowed by something else
        // (shared hardware) does not move the figure: the median of the windows. The mean over the
        // whole run is reported beside it.
        let serverCPU = windows.count >= 3 ? windows.sorted()[windows.count / 2] : meanCPU
        let databaseCPU = count > 0 ? databaseCPUSeconds / count * 1e6 : 0
        let floorCPU = verify + 2 * sign
        let syncs = after[0].syncs.since(before[0].syncs)
        let batches = zip(after, before).map { $0.batches - $1.batches }.reduce(0, +)
        let batched = zip(after, before).map { $0.batched - $1.batched }.reduce(0, +)
        return Report(
            openLoopRate: rate, signins: sorted.count, failures: outcome.failures, firstFailure: outcome.firstFailure, seconds: elapsed, concurrency: concurrency,
            perSecond: count / elapsed, p50: percentile(0.50), p95: percentile(0.95), p99: percentile(0.99),
            serverCPU: serverCPU, serverCPUMean: meanCPU, cpuWindows: windows.count, verifyCPU: verify, signCPU: sign, floorCPU: floorCPU, serviceCPU: breakdown.serviceMicros,
            storeCPU: breakdown.storeMicros, idleConnections: idleConnections,
            rssIdleMiB: memory.rss / 1_048_576, rssAfterLoadMiB: after[0].rss / 1_048_576, selfStarted: own != nil,
            instances: targets.count, onPostgres: onPostgres, databaseCPU: databaseCPU, signInsPerBatch: batches > 0 ? batched / batches : nil, syncs: syncs)
    }

    struct Report {
        let openLoopRate: Double?
        let signins: Int, failures: Int, firstFailure: String?, seconds: Double, concurrency: Int
        let perSecond: Double, p50: Double, p95: Double, p99: Double
        /// Median over one-second windows (the whole-run mean when the run had fewer than 3).
        let serverCPU: Double, serverCPUMean: Double, cpuWindows: Int, verifyCPU: Double, signCPU: Double, floorCPU: Double, serviceCPU: Double, storeCPU: Double
        let idleConnections: Int, rssIdleMiB: Double, rssAfterLoadMiB: Double, selfStarted: Bool
        let instances: Int
        /// Whether a server's store is PostgreSQL (else SQLite, inside Signet's process).
        let onPostgres: Bool
        /// CPU of local PostgreSQL server processes per sign-in (0 with SQLite, which runs inside Signet).
        let databaseCPU: Double
        /// PostgreSQL: the mean number of sign-ins a commit batch carried during the run.
        let signInsPerBatch: Double?
        /// The WAL's syncs during the run (the first instance; none unless it is durable SQLite).
        let syncs: SyncHistogram

        var ratio: Double { floorCPU > 0 ? serverCPU / floorCPU : 0 }

        var json: JSONValue {
            func n(_ v: Double, _ digits: Int = 2) -> JSONValue { .number(String(format: "%.\(digits)f", v)) }
            var object: JSONObject = [
                "signins": .int(signins), "failures": .int(failures), "seconds": n(seconds), "concurrency": .int(concurrency),
                "signins_per_s": n(perSecond, 1), "p50_ms": n(p50), "p95_ms": n(p95), "p99_ms": n(p99),
                "server_cpu_us_per_signin": n(serverCPU, 1), "server_cpu_us_per_signin_mean": n(serverCPUMean, 1), "cpu_windows": .int(cpuWindows),
                "floor_cpu_us": n(floorCPU, 1), "floor_verify_us": n(verifyCPU, 1),
                "floor_jwt_sign_us": n(signCPU, 1), "ratio_vs_floor": n(ratio, 3), "service_cpu_us_per_signin": n(serviceCPU, 1),
                "store_cpu_us_per_signin": n(storeCPU, 1), "instances": .int(instances),
                "postgres_cpu_us_per_signin": n(databaseCPU, 1), "idle_connections": .int(idleConnections),
                "rss_mib_idle_connections": n(rssIdleMiB, 1), "rss_mib_after_load": n(rssAfterLoadMiB, 1),
            ]
            if let firstFailure { object["first_failure"] = .string(firstFailure) }
            if let openLoopRate { object["open_loop_rate_per_s"] = n(openLoopRate, 1) }
            if let signInsPerBatch { object["postgres_signins_per_batch"] = n(signInsPerBatch) }
            if syncs.total > 0 {
                object["wal_syncs"] = .int(syncs.total)
                object["wal_syncs_over_5ms"] = .int(syncs.over(0.005))
                object["wal_syncs_over_50ms"] = .int(syncs.over(0.05))
                if let slowest = syncs.slowest, slowest.isFinite { object["wal_slowest_sync_at_most_ms"] = n(slowest * 1000, 1) }
            }
            return .object(object)
        }

        var text: String {
            """
            signet bench login: \(concurrency) concurrent clients for \(String(format: "%.1f", seconds)) s\(selfStarted ? " against its own development server" : "")\(openLoopRate.map { String(format: ", open loop at %.0f sign-ins/s", $0) } ?? ", closed loop (each client back to back)")

              complete sign-ins (challenge + sign + token)   \(signins) (\(failures) failed)
              sign-ins per second                            \(String(format: "%.1f", perSecond))
              latency p50 / p95 / p99                        \(String(format: "%.2f / %.2f / %.2f ms", p50, p95, p99))

              server CPU per sign-in (\(instances) instance\(instances == 1 ? "" : "s"))          \(String(format: "%.1f µs", serverCPU)) (median of \(cpuWindows) one-second windows; mean \(String(format: "%.1f µs", serverCPUMean)))
              PostgreSQL server CPU per sign-in              \(onPostgres ? String(format: "%.1f µs", databaseCPU) : "none: SQLite runs inside Signet")\(signInsPerBatch.map { String(format: " (%.2f sign-ins per commit batch)", $0) } ?? "")
              floor: 1 ES256 verify + 2 ES256 JWT signs      \(String(format: "%.1f µs (%.1f + 2 × %.1f)", floorCPU, verifyCPU, signCPU))
              ratio server / floor                           \(String(format: "%.2f", ratio)) (target ≤ 3, closed loop\(openLoopRate == nil ? "" : "; in open loop most sign-ins wait for a sync of their own"))

              breakdown, one thread in this process:
                the service answering both requests, no HTTP \(String(format: "%.1f µs", serviceCPU))
                of which the database (SQLite)               \(String(format: "%.1f µs", storeCPU))
                HTTP, threads and scheduling (the rest)      \(String(format: "%.1f µs", max(0, serverCPU - serviceCPU)))

            \(syncs.total > 0 ? "  WAL syncs (the disk, durable SQLite)             \(syncs.total): \(syncs.over(0.005)) over 5 ms, \(syncs.over(0.05)) over 50 ms, the slowest ≤ \(syncs.slowest.map { $0.isFinite ? String(format: "%.1f ms", $0 * 1000) : "more than 1 s" } ?? "?")\n" : "")
              server resident memory after the load          \(String(format: "%.1f MiB", rssAfterLoadMiB))
              … with \(idleConnections) idle keep-alive connections open  \(String(format: "%.1f MiB", rssIdleMiB)) (target < 64 MiB)
            """ + (firstFailure.map { "\n\n  first failure: \($0)" } ?? "")
        }
    }
}
