import SignetAPI
import SignetAuth
import Foundation
import SignetCrypto
import SignetHTTP
import SignetSoftware
import SignetStore
import SignetWebAuthn
import Testing
import SignetTestSupport

/// The `signet` binary as an operator runs it.
@Suite struct ProcessTests {
    static let binary = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/debug/signet")

    /// The exit status and standard output; when the status is not 0, standard error's last
    /// 4 KiB follow the output (and a signal that ended the process is named), so a failure
    /// says why. Standard error goes to a file, which cannot fill up and stop the process.
    static func run(_ args: [String], in directory: URL? = nil, environment: [String: String]? = nil) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = args
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let pipe = Pipe()
        process.standardOutput = pipe
        let errors = Scratch.directory.appendingPathComponent("signet-stderr-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: errors.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        defer { try? FileManager.default.removeItem(at: errors) }
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var output = String(decoding: data, as: UTF8.self)
        if process.terminationStatus != 0 {
            let signal = process.terminationReason == .uncaughtSignal ? " (ended by signal \(process.terminationStatus))" : ""
            let stderr = (try? Data(contentsOf: errors)).map { String(decoding: $0.suffix(4096), as: UTF8.self) } ?? ""
            output += "\n--- standard error\(signal) ---\n" + stderr
        }
        return (process.terminationStatus, output)
    }

    static func freePort() -> UInt16 { freeLoopbackPort() }

    @Test("the commands that read or change a server's database refuse a SQLite path that is not there, and make no file there (a mistyped path listed no accounts and backed up nothing, saying all was well)")
    func missingDatabase() throws {
        let folder = Scratch.directory.appendingPathComponent("signet-missing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let commands = [["admin", "users", "list"], ["admin", "stats"], ["keys", "status"], ["keys", "rotate"], ["keys", "revoke", "ABCDEFGHIJKL"],
                        ["backup", "--to", "copy.db"]]
        for command in commands {
            let (status, output) = try Self.run(command + ["--database", "sqlite:typo.db"], in: folder, environment: ["SIGNET_KEK": String(repeating: "A", count: 43)])
            #expect(status == 1 && output.contains("no SQLite database at typo.db"), "\(command): \(status) \(output)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "\(command) made a file")
        }
    }

    @Test("signet COMMAND --help (or -h, or help) prints that command's usage on standard output and exits 0, running nothing; a wrong command line still exits 2; signet help names every group of signet admin")
    func help() throws {
        let (status, top) = try Self.run(["help"])
        #expect(status == 0)
        // The commands `signet help` lists, each with its own usage when asked.
        let commands = Set(top.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let word = line.split(separator: " ").first else { return nil }
            return word == "help" ? nil : String(word)
        })
        #expect(commands.count >= 14 && commands.contains("serve") && commands.contains("admin"), "\(commands)")
        for command in commands {
            for asked in [[command, "--help"], [command, "-h"], [command, "help"]] {
                let (status, output) = try Self.run(asked)
                #expect(status == 0 && output.hasPrefix("usage: signet \(command)"), "\(asked): \(status) \(output.prefix(200))")
            }
        }
        // Asked for deeper in: the usage, and nothing run (no database made in the folder).
        let folder = Scratch.directory.appendingPathComponent("signet-help-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (deeper, admin) = try Self.run(["admin", "users", "list", "--database", "sqlite:help.db", "--help"], in: folder)
        #expect(deeper == 0 && admin.hasPrefix("usage: signet admin") && !FileManager.default.fileExists(atPath: folder.appendingPathComponent("help.db").path))
        let (wrong, _) = try Self.run(["admin", "bogus", "--database", "sqlite:help.db"], in: folder)
        #expect(wrong == 2)
        // Every group of `signet admin` is in the line `signet help` gives it.
        let groups = Set(admin.components(separatedBy: "signet admin ").dropFirst().compactMap { $0.split(separator: " ").first.map(String.init) })
        let line = try #require(top.split(separator: "\n").first { $0.hasPrefix("  admin ") })
        #expect(groups.count >= 6 && groups.allSatisfy { line.contains($0) }, "\(groups) against \(line)")
    }

    @Test("bench login runs complete sign-ins against its own server and prints every figure, closed and open loop")
    func benchLogin() throws {
        // A busy process named `postgres` beside the run, as the suite's own cluster may be: with
        // SQLite, which runs inside Signet, the report must not charge its CPU to the sign-ins.
        let directory = Scratch.directory.appendingPathComponent("signet-fake-postgres-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let impostor = directory.appendingPathComponent("postgres")
        try FileManager.default.createSymbolicLink(at: impostor, withDestinationURL: URL(fileURLWithPath: "/bin/sh"))
        let busy = Process()
        busy.executableURL = impostor
        busy.arguments = ["-c", "while :; do :; done"]
        try busy.run()
        // SIGKILL: a shell started from the test runner may have SIGTERM ignored.
        defer { kill(busy.processIdentifier, SIGKILL); busy.waitUntilExit() }
        for extra in [[String](), ["--rate", "40"]] {
            // Closed loop long enough for the CPU figure to be a median of one-second windows.
            let duration = extra.isEmpty ? "3.6" : "1.5"
            let (status, output) = try Self.run(["bench", "login", "--duration", duration, "--concurrency", "4", "--idle-connections", "20", "--json"] + extra)
            #expect(status == 0, "\(output)")
            let report = try StrictJSON().parse(Array(output.utf8))
            func number(_ key: String) -> Double? {
                guard case .number(let text)? = report[key] else { return nil }
                return Double(text)
            }
            #expect((number("signins") ?? 0) > 4 && number("failures") == 0, "\(output)")
            for key in ["signins_per_s", "p50_ms", "p95_ms", "p99_ms", "server_cpu_us_per_signin", "floor_cpu_us", "ratio_vs_floor",
                        "service_cpu_us_per_signin", "rss_mib_idle_connections"] {
                #expect((number(key) ?? 0) > 0, "\(key) in \(output)")
            }
            #expect(number("p50_ms")! <= number("p99_ms")!)
            if extra.isEmpty {
                // The median of the windows, the whole-run mean beside it: the same order of size.
                let median = number("server_cpu_us_per_signin") ?? 0, mean = number("server_cpu_us_per_signin_mean") ?? 0
                #expect((number("cpu_windows") ?? 0) >= 3 && median > mean / 2 && median < mean * 2, "\(output)")
            }
            if !extra.isEmpty { #expect(number("open_loop_rate_per_s") == 40) }
            // SQLite commits each sign-in in its own transaction: no PostgreSQL batches to report,
            // and no PostgreSQL CPU, whatever else runs on the machine.
            #expect(report["postgres_signins_per_batch"] == nil)
            #expect(number("postgres_cpu_us_per_signin") == 0, "\(output)")
            // Its own server is durable SQLite: the run's WAL syncs, at most one per sign-in.
            let syncs = number("wal_syncs") ?? 0
            // (The slowest bucket is left out only when a sync took over a second.)
            #expect(syncs > 0 && syncs <= number("signins")! && number("wal_syncs_over_5ms") != nil
                    && ((number("wal_slowest_sync_at_most_ms") ?? 0) > 0 || (number("wal_syncs_over_50ms") ?? 0) > 0), "\(output)")
        }
        #expect(try Self.run(["bench", "login", "--client-threads", "0"]).0 == 2)
    }

    @Test("bench disk times write + fdatasync rewriting in place and growing the file, and refuses bad options")
    func benchDisk() throws {
        let (status, output) = try Self.run(["bench", "disk", "--seconds", "1", "--rate", "200", "--busy", "1", "--json"])
        #expect(status == 0, "\(output)")
        let report = try StrictJSON().parse(Array(output.utf8))
        for pass in ["rewrite", "append"] {
            func number(_ key: String) -> Double? {
                guard case .number(let text)? = report[pass]?[key] else { return nil }
                return Double(text)
            }
            #expect((number("calls") ?? 0) >= 10 && (number("cpu_us_per_call") ?? 0) > 0 && number("p50_ms")! <= number("max_ms")!, "\(pass): \(output)")
        }
        #expect(report["busy_threads"] == .int(1))
        #expect(try Self.run(["bench", "disk", "--seconds", "0"]).0 == 2)
        #expect(try Self.run(["bench", "disk", "--busy", "x"]).0 == 2)
        #expect(try Self.run(["bench", "disk", "--path", "/nonexistent/dir", "--seconds", "0.2"]).0 == 1)
    }

    @Test("bench cpu times fixed units of work on every processor and reports the slow ones; bad options are usage errors")
    func benchCPU() throws {
        let (status, output) = try Self.run(["bench", "cpu", "--seconds", "1", "--threads", "2", "--json"])
        #expect(status == 0, "\(output)")
        let report = try StrictJSON().parse(Array(output.utf8))
        func number(_ key: String) -> Double? {
            guard case .number(let text)? = report[key] else { return nil }
            return Double(text)
        }
        #expect(report["threads"] == .int(2))
        // Two threads for a second, two units of about 100 µs before each rest of 0.2 ms.
        #expect((number("units") ?? 0) > 200 && (number("unit_us") ?? 0) > 10, "\(output)")
        // Ratios are against each thread's fastest unit: at least 1, and ordered.
        let p99 = number("p99_ratio") ?? 0, worst = number("worst_ratio") ?? 0
        #expect(p99 >= 1 && p99 <= worst, "\(output)")
        for key in ["slowed_2x_fraction", "slowed_5x_fraction", "lost_fraction"] {
            let value = number(key) ?? -1
            #expect(value >= 0 && value < 1, "\(key) in \(output)")
        }
        #expect(number("slowed_5x_fraction")! <= number("slowed_2x_fraction")!)
        // Twenty 50-ms windows a thread, give or take the last one.
        #expect((number("windows_50ms") ?? 0) >= 38 && (number("slow_windows") ?? -1) >= 0 && (number("worst_window_ratio") ?? 0) >= 1, "\(output)")
        #expect(try Self.run(["bench", "cpu", "--seconds", "0"]).0 == 2)
        #expect(try Self.run(["bench", "cpu", "--threads", "x"]).0 == 2)
        #expect(try Self.run(["bench", "cpu", "--frobnicate"]).0 == 2)
    }

    @Test("bench login in open loop reconnects where the server closed an idle keep-alive connection")
    func benchLoginIdleConnections() throws {
        let server = try LoopbackProcess(
            executable: Self.binary, arguments: { ["serve", "--listen", "127.0.0.1:\($0)"] },
            environment: ProcessInfo.processInfo.environment.merging(["SIGNET_LIMITS_IDLE_TIMEOUT": "1", "SIGNET_ACCESS_LOG": "false"]) { $1 })
        let port = server.port
        // Each of 2 clients signs in every 2.5 s; the server drops connections idle for 1 s.
        let (status, output) = try Self.run([
            "bench", "login", "--url", "http://127.0.0.1:\(port)", "--concurrency", "2", "--rate", "0.8", "--duration", "5",
            "--idle-connections", "0", "--json",
        ])
        #expect(status == 0)
        let report = try StrictJSON().parse(Array(output.utf8))
        #expect(report["failures"] == .int(0), "\(output)")
        #expect(report["signins"].flatMap { if case .number(let n) = $0 { Int(n) } else { nil } } ?? 0 >= 3, "\(output)")
    }

    @Test("the server's own threads carry their names, within the 15 bytes Linux keeps: the acceptor, and the WAL syncer while sign-ins wait for it")
    func threadNames() throws {
        let server = try LoopbackProcess(
            executable: Self.binary, arguments: { ["serve", "--listen", "127.0.0.1:\($0)"] },
            environment: ProcessInfo.processInfo.environment.merging(["SIGNET_ACCESS_LOG": "false"]) { $1 })
        let tasks = "/proc/\(server.pid)/task"
        func names() -> Set<String> {
            Set(((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []).compactMap {
                try? String(contentsOfFile: "\(tasks)/\($0)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            })
        }
        #expect(names().contains("signet.accept"), "\(names())")
        #expect(!names().contains("signet.sync"), "no write has waited yet: \(names())")
        // Durable sign-ins: the syncer starts with the first and ends a second after the last.
        let load = Process()
        load.executableURL = Self.binary
        load.arguments = ["bench", "login", "--url", "http://127.0.0.1:\(server.port)", "--concurrency", "2", "--duration", "3", "--idle-connections", "0"]
        load.standardOutput = FileHandle.nullDevice
        load.standardError = FileHandle.nullDevice
        try load.run()
        defer { if load.isRunning { load.terminate() } }
        #expect(eventually { names().contains("signet.sync") }, "\(names())")
        load.waitUntilExit()
        #expect(load.terminationStatus == 0)
    }

    @Test("signet origin prints the apk-key-hash origin; a bad fingerprint is a usage error")
    func origin() throws {
        let (status, output) = try Self.run(["origin", "B3:5D:8D:A5:8A:F0:E4:59:8A:B9:2C:40:05:BE:D4:06:CD:87:CE:65:E7:5C:2A:48:E9:7C:DA:98:6B:A9:1B:5E"])
        #expect(status == 0 && output == "android:apk-key-hash:s12NpYrw5FmKuSxABb7UBs2HzmXnXCpI6XzamGupG14\n")
        #expect(try Self.run(["origin", "AB:CD"]).0 == 2)
    }

    @Test("serve in development mode; SIGTERM finishes the request in flight, then exits 0")
    func gracefulShutdown() throws {
        let directory = Scratch.directory.appendingPathComponent("signet-serve-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = Self.freePort()
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["serve", "--listen", "127.0.0.1:\(port)"]
        process.currentDirectoryURL = directory
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = Pipe()
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        try #require(Loopback.waitUntilHealthy(port: port, running: { process.isRunning }), "signet serve did not come up")
        // Development mode: client dev, origin http://localhost:PORT, the database and KEK in the working directory.
        let register = try HTTPClient(port: port).send("POST", "/passkey/register", body: Array(#"{"client_id":"dev","user_profile":{"email":"a@b.c"}}"#.utf8))
        #expect(register.status == 200)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("signet.db").path))
        let kek = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("signet.kek").path)
        #expect((kek[.posixPermissions] as? Int) == 0o600)
        // A request in flight: on a connection the server has taken (a first request answered),
        // headers and half the body sent, and SIGTERM at once: the worker may not have read those
        // bytes yet, and the shutdown must still count the request as in flight.
        let body = Array(#"{"client_id":"dev","user_profile":{"email":"late@b.c"}}"#.utf8)
        let inFlight = HTTPClient(port: port)
        #expect(try inFlight.send("GET", "/healthz").status == 200)
        try inFlight.write(Array("POST /passkey/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body.prefix(10))
        kill(process.processIdentifier, SIGTERM)
        // No new connections are taken...
        #expect(eventually { (try? HTTPClient(port: port, timeout: 1).send("GET", "/healthz")) == nil })
        // ...but the one in flight is answered.
        try inFlight.write(Array(body.dropFirst(10)))
        #expect(try inFlight.readResponse().status == 200)
        inFlight.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let log = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("development mode") && log.contains("client_id \"dev\"") && log.contains("stopped"))
    }

    /// Runs `signet serve --listen LISTEN` in development mode in a directory of its own, gives
    /// `body` its start-up line and the port the line names after `listening on http://HOST:`,
    /// then stops it with SIGTERM, which must end it with status 0. Standard error goes to a
    /// file, which cannot fill up and stop the server as its access log grows.
    static func withDevelopmentServer(listen: String, _ body: (_ line: String, _ port: UInt16) throws -> Void) throws {
        let directory = Scratch.directory.appendingPathComponent("signet-serve-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--listen", listen]
        process.currentDirectoryURL = directory
        let errors = directory.appendingPathComponent("stderr")
        guard FileManager.default.createFile(atPath: errors.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        process.standardError = try FileHandle(forWritingTo: errors)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var line = ""
        _ = eventually(timeout: 30) {
            line = String(decoding: try Data(contentsOf: errors), as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
            return !line.isEmpty || !process.isRunning
        }
        let port = try #require(line.firstMatch(of: #/listening on http://(?:\[[0-9a-f:]+\]|[0-9.]+):(\d+) /#).flatMap { UInt16($0.1) }, "\(line)")
        try #require(port != 0, "\(line)")
        try body(line, port)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test("serve in development mode on port 0: the origin, issuer and redirect URIs name the port picked, so a passkey made for it signs up")
    func developmentModeOnAFreePort() throws {
        try Self.withDevelopmentServer(listen: "127.0.0.1:0") { line, port in
            #expect(line.hasPrefix("signet: listening on http://127.0.0.1:\(port) "), "\(line)")
            let origin = "http://localhost:\(port)"
            #expect(line.contains("origin \(origin),"), "\(line)")
            let client = HTTPClient(port: port)
            let discovery = try StrictJSON().parse(try client.send("GET", "/.well-known/openid-configuration").body)
            #expect(discovery["issuer"]?.string == origin)
            #expect(discovery["authorization_endpoint"]?.string == origin + "/authorize")
            // A passkey made for the origin the line names signs up: with origin http://localhost:0,
            // the server would refuse it (origin_not_allowed).
            func post(_ path: String, _ body: JSONValue) throws -> JSONValue {
                let response = try client.send("POST", path, body: Array(body.serialized.utf8))
                try #require(response.status == 200, "\(path): \(String(decoding: response.body, as: UTF8.self))")
                return try StrictJSON().parse(response.body)
            }
            let start = try post("/passkey/register", .object(["client_id": .string("dev"), "user_profile": .object(["email": .string("free@port.test")])]))
            let options = try #require(start["authn_params_public_key"])
            let made = try SoftwareAuthenticator().register(
                rpID: "localhost", origin: origin, challenge: try #require(options["challenge"]?.string.flatMap { Base64URL.decode($0) }),
                userHandle: try #require(options["user"]?["id"]?.string.flatMap { Base64URL.decode($0) }), userName: "free@port.test")
            let tokens = try post("/oauth/token", .object([
                "grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": try #require(start["auth_session"]), "authn_response": made.json,
            ]))
            #expect(tokens["access_token"]?.string != nil)
        }
    }

    @Test("serve on [::]:0 answers IPv6 and IPv4, and bench login runs sign-ins against http://[::1]:PORT")
    func ipv6() throws {
        try Self.withDevelopmentServer(listen: "[::]:0") { line, port in
            #expect(line.hasPrefix("signet: listening on http://[::]:\(port) (development mode: RP ID localhost, origin http://localhost:\(port),"), "\(line)")
            #expect(try HTTPClient(host: "127.0.0.1", port: port).send("GET", "/healthz").status == 200)
            let (status, output) = try Self.run(["bench", "login", "--url", "http://[::1]:\(port)", "--duration", "1", "--concurrency", "2", "--idle-connections", "0", "--json"])
            #expect(status == 0, "\(output)")
            let report = try StrictJSON().parse(Array(output.utf8))
            #expect((report["signins"]?.int64 ?? 0) > 0 && report["failures"] == .int(0), "\(output)")
        }
    }

    @Test("the start-up line never shows the database password")
    func passwordRedacted() throws {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["serve", "--listen", "127.0.0.1:\(Self.freePort())", "--database", "postgres://signet:s3cret-pw@127.0.0.1:1/none"]
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let said = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 1)  // nothing listens on port 1
        #expect(!said.contains("s3cret-pw"), "\(said)")
    }

    @Test("serve refuses a bad configuration with a clear message and exit 1")
    func badConfiguration() throws {
        let path = Scratch.directory.appendingPathComponent("bad-\(UUID()).json").path
        try Data(#"{"issuer":"https://a.example.com","relying_party":{"id":"example.com","origins":["https://evil.com"]},"clients":[{"client_id":"x"}]}"#.utf8).write(to: URL(fileURLWithPath: path))
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["serve", "--config", path]
        let stderr = Pipe()
        process.standardError = stderr
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).contains("is not the RP ID example.com"))
    }

    @Test("signet keys rotate adds a key and retires the old one, audited")
    func rotate() throws {
        let directory = Scratch.directory.appendingPathComponent("signet-rotate-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The database a first start makes (development mode's, in the folder), with no key yet.
        _ = try SQLiteStore(path: directory.appendingPathComponent("signet.db").path)
        let (first, output) = try Self.run(["keys", "rotate"], in: directory)
        #expect(first == 0 && output.contains("\"rotated\":true"))
        let signsFrom = try StrictJSON().parse(Array(output.utf8))["signs_from"]?.int64 ?? 0
        #expect(abs(signsFrom - Int64(Date().timeIntervalSince1970) - KeyRing.signingDelay) <= 5, "\(output)")
        let (second, _) = try Self.run(["keys", "rotate"], in: directory)
        #expect(second == 0)
        let keys = try SQLiteStore(path: directory.appendingPathComponent("signet.db").path).signingKeys()
        #expect(keys.count == 3)
        #expect(keys.filter { $0.retiredAt == nil }.count == 1)
        // Each rotation by hand is in the audit log, with the key it added.
        let rotated = try SQLiteStore(path: directory.appendingPathComponent("signet.db").path).auditEvents(limit: 10).filter { $0.kind == "signing_key_rotated" }
        let added = keys.filter { $0.retiredAt == nil }.map(\.kid)
        #expect(rotated.count == 2 && rotated.allSatisfy { $0.clientID == "signet-admin" } && rotated.first?.detail?.contains("kid \(added[0]),") == true, "\(rotated)")
        let (kekStatus, kek) = try Self.run(["keys", "kek"])
        #expect(kekStatus == 0 && Base64URL.decode(kek.trimmingCharacters(in: .whitespacesAndNewlines))?.count == 32)
        // Another key than the database's (by mistake): refused before a key no server could open is added.
        let (wrong, said) = try Self.run(["keys", "rotate"], in: directory, environment: ["SIGNET_KEK": kek.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(wrong == 1 && said.contains("cannot be decrypted"), "\(said)")
        // No key file at all: refused, and none is made.
        let file = directory.appendingPathComponent("signet.kek")
        try FileManager.default.moveItem(at: file, to: directory.appendingPathComponent("kept.kek"))
        let (missing, told) = try Self.run(["keys", "rotate"], in: directory)
        #expect(missing == 1 && told.contains("no key-encryption key"), "\(told)")
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(try SQLiteStore(path: directory.appendingPathComponent("signet.db").path).signingKeys().count == 3)
        // Up to the limit of keys held, then exit 2 with what to do, and nothing added.
        try FileManager.default.moveItem(at: directory.appendingPathComponent("kept.kek"), to: file)
        for _ in 3..<KeyRing.heldLimit { #expect(try Self.run(["keys", "rotate"], in: directory).0 == 0) }
        let (full, why) = try Self.run(["keys", "rotate"], in: directory)
        #expect(full == 2 && why.contains("holds \(KeyRing.heldLimit) signing keys") && why.contains("signet keys revoke KID"), "\(why)")
        #expect(try SQLiteStore(path: directory.appendingPathComponent("signet.db").path).signingKeys().count == KeyRing.heldLimit)
    }

    @Test("signet keys rekey seals the database under a new key-encryption key; without one, or without the current one, it refuses")
    func rekey() throws {
        let directory = Scratch.directory.appendingPathComponent("signet-rekey-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try SQLiteStore(path: directory.appendingPathComponent("signet.db").path)
        // No database key yet: nothing to re-key from, and no key is made.
        let (none, refusal) = try Self.run(["keys", "rekey", "--new-kek-file", "new.kek"], in: directory)
        #expect(none == 1 && refusal.contains("nothing to re-key from"), "\(refusal)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("signet.kek").path))
        #expect(try Self.run(["keys", "rotate"], in: directory).0 == 0)
        let (missing, told) = try Self.run(["keys", "rekey"], in: directory)
        #expect(missing == 1 && told.contains("--new-kek-file"), "\(told)")
        let (_, made) = try Self.run(["keys", "kek"])
        let newFile = directory.appendingPathComponent("new.kek").path
        try SecretFile.save(Data(made.utf8), to: newFile)
        let old = try KeyEncryptionKey.load(environment: [:], file: directory.appendingPathComponent("signet.kek").path)
        let (status, output) = try Self.run(["keys", "rekey", "--new-kek-file", "new.kek"], in: directory)
        #expect(status == 0, "\(output)")
        let report = try StrictJSON().parse(Array(output.utf8))
        let new = try KeyEncryptionKey.load(environment: [:], file: newFile)
        #expect(report["rekeyed"] == .bool(true) && report["signing_keys"] == .int(2) && report["retired_code_keys"] == .int(1) && report["dropped_code_keys"] == .int(0))
        #expect(report["from"] == .string(KeyEncryptionKey.id(old)) && report["to"] == .string(KeyEncryptionKey.id(new)))
        let store = try SQLiteStore(path: directory.appendingPathComponent("signet.db").path)
        #expect(try KeyEncryptionKey.keptKeys(store: store, kek: new).codeKeys.count == 1)
        #expect(throws: (any Error).self) { _ = try KeyEncryptionKey.keptKeys(store: store, kek: old) }
        // With the new key: its own code key (no codes yet) and the old one's.
        try FileManager.default.removeItem(atPath: directory.appendingPathComponent("signet.kek").path)
        try SecretFile.save(Data(made.utf8), to: directory.appendingPathComponent("signet.kek").path)
        let (shown, statusText) = try Self.run(["keys", "status"], in: directory)
        let keys = try StrictJSON().parse(Array(statusText.utf8))
        #expect(shown == 0 && keys["key_encryption_key"] == .string(KeyEncryptionKey.id(new)), "\(statusText)")
        #expect(keys["code_keys"]?.array?.map { $0["current"] } == [.bool(true), .bool(false)])
        #expect(keys["code_keys"]?.array?.first?["unused_codes"] == .int(0) && keys["codes_without_key_id"]?["accounts"] == .int(0))
        // The two signing keys (the first retired by the rotation above, and signing until the
        // new one has been published for the delay), and the next scheduled rotation, 90 days on.
        let signing = try #require(keys["signing_keys"]?.array)
        #expect(signing.count == 2 && signing[0]["retired_at"] != .null && signing[1]["retired_at"] == .null, "\(statusText)")
        let signs: [JSONValue?] = signing.map { $0["signing"] }
        #expect(signs == [JSONValue.bool(true), JSONValue.bool(false)], "\(statusText)")
        guard case .number(let text)? = signing[1]["created_at"], let created = Int64(text) else { Issue.record("no created_at: \(statusText)"); return }
        #expect(keys["next_rotation"] == .int(created + 90 * 86_400))
        // The retired key is destroyed a day and 80 s after it was retired; the other never is.
        if case .number(let retired)? = signing[0]["retired_at"], let at = Int64(retired) {
            #expect(signing[0]["destroyed_at"] == .int(at + 86_400 + KeyRing.signingDelay + Int64(KeyRing.reloadInterval)) && signing[1]["destroyed_at"] == .null,
                    "\(statusText)")
        } else {
            Issue.record("no retired_at: \(statusText)")
        }
        // The old key is refused, as the database was re-keyed from it.
        try SecretFile.save(Data(Base64URL.encode(old).utf8), to: directory.appendingPathComponent("signet.kek").path)
        let (refused, why) = try Self.run(["keys", "status"], in: directory)
        #expect(refused == 1 && why.contains("re-keyed"), "\(why)")
        // The old key file is still the configured one: a second run refuses, the database is not its any more.
        let (again, said) = try Self.run(["keys", "rekey", "--new-kek-file", "new.kek"], in: directory)
        #expect(again == 1 && said.contains("re-keyed"), "\(said)")
    }

    @Test("SIGNET_ISSUER=https://auth.example.com signet serve without clients refuses to start, saying why")
    func issuerWithoutClients() throws {
        let directory = Scratch.directory.appendingPathComponent("signet-issuer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["serve", "--listen", "127.0.0.1:\(Self.freePort())"]
        process.currentDirectoryURL = directory
        process.environment = ["SIGNET_ISSUER": "https://auth.example.com", "SIGNET_RELYING_PARTY_ID": "example.com",
                               "SIGNET_RELYING_PARTY_ORIGINS": "https://example.com", "PATH": "/usr/bin:/bin"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(text.contains("clients must list at least one client"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("signet.db").path))
    }

}
