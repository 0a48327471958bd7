public import Foundation
import Glibc

/// Loopback helpers for tools and tests that start servers: a port the kernel picks, and a wait
/// until a server answers `GET /healthz`.
public enum Loopback {
    /// A socket bound to 127.0.0.1 on a port the kernel picked, and that port.
    public static func bind() -> (fd: Int32, port: UInt16)? {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(s, $0, length) == 0 && getsockname(s, $0, &length) == 0 }
        }
        guard ok else {
            close(s)
            return nil
        }
        return (s, UInt16(bigEndian: address.sin_port))
    }

    /// A loopback port nothing listens on right now.
    public static func freePort() throws -> UInt16 {
        guard let (s, port) = bind() else { throw HTTPClient.Failure(description: "no free loopback port") }
        close(s)
        return port
    }

    /// Polls `GET /healthz` on `port` until it answers 200 (`true`), `seconds` pass or `running`
    /// says the server is gone (`false`).
    public static func waitUntilHealthy(port: UInt16, seconds: Double = 20, running: () -> Bool = { true }) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline && running() {
            if (try? HTTPClient(port: port, timeout: 1).send("GET", "/healthz").status) == 200 { return true }
            usleep(50_000)
        }
        return false
    }
}

/// A server in a child process on a free loopback port, working in a temporary directory of its
/// own: started by ``init(executable:arguments:environment:)``, which returns once it answers
/// `GET /healthz`, and stopped (its directory removed) when this object goes away. The load
/// generator and the tests start `signet serve` this way.
public final class LoopbackProcess: @unchecked Sendable {
    public let port: UInt16
    /// The child's working directory (a development server keeps its database there).
    public let directory: URL
    private let process = Process()
    /// The child's process ID (its threads are under `/proc/PID/task`).
    public var pid: Int32 { process.processIdentifier }

    /// - Parameter arguments: the command line, given the port to listen on.
    public init(executable: URL, arguments: (UInt16) -> [String], environment: [String: String]? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("signet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try Loopback.freePort()
        process.executableURL = executable
        process.arguments = arguments(port)
        if let environment { process.environment = environment }
        process.currentDirectoryURL = directory
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let process = self.process
        guard Loopback.waitUntilHealthy(port: port, running: { process.isRunning }) else {
            stop()
            throw HTTPClient.Failure(description: "\(executable.lastPathComponent) did not start answering on port \(port)")
        }
    }

    deinit { stop() }

    private func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
