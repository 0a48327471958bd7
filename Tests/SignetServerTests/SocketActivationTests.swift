import Foundation
import SignetTestSupport
import Testing

/// systemd's socket activation: `scripts/socket-activation-check.py` plays the service manager,
/// passing `signet serve` a listening socket as descriptor 3 and restarting the server on it, and
/// verifies `deploy/systemd/signet.socket` with systemd-analyze (which `scripts/bootstrap.sh test`
/// installs).
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"), "needs systemd-analyze (scripts/bootstrap.sh test installs it)"))
struct SocketActivationTests {
    @Test("signet serve listens on the socket systemd passes; a restart refuses no connection (those made meanwhile wait for the next server) and leaves the socket listening; a dual-stack IPv6 socket works; a wrong count, a wrong descriptor, another process's variables are refused or ignored; signet.socket verifies")
    func restartKeepsTheSocket() throws {
        let script = ReasonListTests.root.appendingPathComponent("scripts/socket-activation-check.py").path
        let result = try runProcess("/usr/bin/python3", [script, ProcessTests.binary.path], environment: ProcessInfo.processInfo.environment)
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        for line in ["signet.socket verifies beside signet.service", "first: listening on the passed socket", "first: exit 0 on SIGTERM",
                     "no server running: 5 connections taken by the socket's backlog", "second: answered the 5 requests that waited, 200 each",
                     "the socket still listens", "LISTEN_FDS=2 or x: exit 1, said why", "as descriptor 3: exit 1, said why",
                     "LISTEN_PID of another process: ignored", "\nok\n"] {
            #expect(result.output.contains(line), "\(line) in \(result.output)")
        }
    }
}
