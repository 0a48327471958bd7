import Foundation
import SignetStore
import SignetTestSupport
import Testing

/// systemd-analyze (Debian's systemd) and strace, both installed by `scripts/bootstrap.sh test`.
private let systemdTools = ["/usr/bin/systemd-analyze", "/usr/bin/strace"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }

/// `deploy/systemd/signet.service`, the unit shipped for operators, checked by
/// `scripts/systemd-check.py`: systemd-analyze's verify and offline security review, and a real
/// `signet serve` under strace, as an unprivileged user, whose notifications (sd_notify(3)),
/// system calls, sockets, mappings and writes must all fit the unit.
@Suite(.enabled(if: systemdTools, "needs systemd-analyze and strace (scripts/bootstrap.sh test installs them)"))
struct SystemdUnitTests {
    static let root = ReasonListTests.root
    static let unit = root.appendingPathComponent("deploy/systemd/signet.service")
    static let script = root.appendingPathComponent("scripts/systemd-check.py").path

    /// The check's exit status and what it printed, for `unit` (the shipped one by default).
    /// A broken unit's check leaves out the watchdog's run of several seconds.
    static func check(database: String? = nil, unit: URL? = nil) throws -> (status: Int32, output: String, errors: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["SIGNET_SYSTEMD_UNIT"] = unit?.path
        if unit != nil { environment["SIGNET_SYSTEMD_WATCHDOG"] = "0" }
        return try runProcess("/usr/bin/python3", [script, ProcessTests.binary.path] + (database.map { [$0] } ?? []),
                              environment: environment)
    }

    @Test("the unit verifies, its exposure is at most 2.0, and signet serve on SQLite notifies, feeds the watchdog, and stays inside its sandbox")
    func sqlite() throws {
        let result = try Self.check()
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        for line in ["exposure 1.", "READY=1 ", "STOPPING=1 on SIGTERM, exit 0", "WATCHDOG=1 ", "none after STOPPING=1",
                     "another process's watchdog: not fed", "a malformed watchdog: not fed, said once", "a worker stuck 2.5 s in a request: not fed, STATUS= ", "all allowed by SystemCallFilter=", "all in the working directory", "a failed start: exit 1, cannot start: "] {
            #expect(result.output.contains(line), "\(line) in \(result.output)")
        }
    }

    @Test("on PostgreSQL too (libpq's connection and the migrations) every system call and socket fits the unit; a database gone does not stop the watchdog",
          .enabled(if: ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"] != nil, "needs PostgreSQL (SIGNET_TEST_POSTGRES); scripts/test.sh starts one"))
    func postgres() throws {
        let admin = try #require(ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"])
        let name = "systemd_\(UUID().uuidString.prefix(8).lowercased())"
        let url = try PostgresAdmin.createDatabase(adminURL: admin, name: name)
        defer { try? PostgresAdmin.execute(url: admin, "DROP DATABASE \(name) WITH (FORCE)") }
        let result = try Self.check(database: url)
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        for line in ["all allowed by SystemCallFilter=", "STOPPING=1 on SIGTERM, exit 0", "WATCHDOG=1 ", "requests 503 database_unavailable", "back: 200 after"] {
            #expect(result.output.contains(line), "\(line) in \(result.output)")
        }
    }

    @Test("a NOTIFY_SOCKET that is neither a path nor an @name, or too long for an address, is said once on standard error and otherwise ignored")
    func badNotifySocket() throws {
        for name in ["run/notify", "@" + String(repeating: "n", count: 200)] {
            // Nothing listens on port 1: the start fails after the socket was looked at.
            let (status, said) = try ProcessTests.run(["serve", "--listen", "127.0.0.1:\(ProcessTests.freePort())", "--database", "postgres://signet@127.0.0.1:1/none"],
                                                      environment: ["NOTIFY_SOCKET": name])
            #expect(status == 1 && said.contains("NOTIFY_SOCKET is neither a socket path nor an @name under 108 bytes") && said.contains("cannot start"), "\(said)")
        }
    }

    @Test("each rule over the trace names what breaks it: a refused system call, a socket family, a writable and executable mapping, a later PROT_EXEC, a write outside the directory, a home directory")
    func traceRules() throws {
        let directory = "/var/lib/signet"
        let lines: [(String, String?)] = [
            (#"7 openat(AT_FDCWD, "/var/lib/signet/signet.db", O_RDWR|O_CREAT|O_CLOEXEC, 0644) = 3"#, nil),
            (#"7 epoll_wait(4, [], 64, 100) = 0"#, nil),
            (#"7 reboot(LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2, LINUX_REBOOT_CMD_RESTART) = -1 EPERM"#, "system calls SystemCallFilter= refuses: ['reboot']"),
            (#"8 socket(AF_PACKET, SOCK_RAW, 768) = 5"#, "socket families outside RestrictAddressFamilies= ['AF_INET', 'AF_INET6', 'AF_UNIX']: ['AF_PACKET']"),
            (#"8 mmap(NULL, 4096, PROT_READ|PROT_WRITE|PROT_EXEC, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000"#, "2 mappings MemoryDenyWriteExecute= refuses"),
            (#"8 mprotect(0x7f0000001000, 4096, PROT_READ|PROT_EXEC) = 0"#, nil),
            (#"9 openat(AT_FDCWD, "/etc/signet/signet.json", O_WRONLY|O_TRUNC) = 6"#, "writes outside the working directory, which ProtectSystem=strict refuses: ['/etc/signet/signet.json']"),
            (#"9 newfstatat(AT_FDCWD, "/root/.config", 0x7ffc, 0) = -1 ENOENT"#, #"ProtectHome= hides: "/root/.config""#),
        ]
        let trace = Scratch.directory.appendingPathComponent("trace-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: trace) }
        // The permitted lines alone pass; each of the others adds its problem.
        let permitted = lines.prefix(2).map(\.0).joined(separator: "\n") + "\n"
        try permitted.write(to: trace, atomically: true, encoding: .utf8)
        let clean = try runProcess("/usr/bin/python3", [Self.script, "--trace", trace.path, directory])
        #expect(clean.status == 0 && clean.output.contains("all allowed") && clean.output.contains("writes: 1, all in the working directory"), "\(clean.output)\(clean.errors)")
        try (lines.map(\.0).joined(separator: "\n") + "\n").write(to: trace, atomically: true, encoding: .utf8)
        let broken = try runProcess("/usr/bin/python3", [Self.script, "--trace", trace.path, directory])
        #expect(broken.status == 1)
        for case let named? in lines.map(\.1) { #expect(broken.errors.contains(named), "\(named) in \(broken.errors)") }
    }

    @Test("a unit whose sandbox the server does not fit fails, each break named: a system call group it uses, a socket family, write-and-execute mappings")
    func brokenUnits() throws {
        let shipped = try String(contentsOf: Self.unit, encoding: .utf8)
        let breaks: [(from: String, to: String, named: String)] = [
            ("SystemCallFilter=~@privileged\n", "SystemCallFilter=~@privileged @io-event\n", "system calls SystemCallFilter= refuses: ["),
            ("RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n", "RestrictAddressFamilies=AF_UNIX AF_INET6\n", "socket families outside RestrictAddressFamilies="),
            ("MemoryDenyWriteExecute=yes\n", "", "does not set MemoryDenyWriteExecute=yes"),
            ("ProtectSystem=strict\nProtectHome=yes\nPrivateTmp=yes\nPrivateDevices=yes\nPrivateUsers=yes\n", "", "systemd-analyze security: exit 1, over 2.0"),
            ("Type=notify\n", "Type=notifx\n", "Failed to parse service type"),
            ("RestartSec=5s\n", "RestartSec=2s\n", "reaches the start limit"),
            ("WatchdogSec=30s\n", "", "WatchdogSec= is not one interval of 10 s or more"),
        ]
        for (from, to, named) in breaks {
            #expect(shipped.contains(from), "\(from) is in the shipped unit")
            let copy = Scratch.directory.appendingPathComponent("broken-\(UUID().uuidString).service")
            try shipped.replacingOccurrences(of: from, with: to).write(to: copy, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: copy) }
            let result = try Self.check(unit: copy)
            #expect(result.status == 1 && result.errors.contains(named), "\(named) for the break of \(from): \(result.output)\(result.errors)")
        }
    }
}
