import Foundation
import Glibc

/// Tells a service manager how the server stands, over the datagram socket it names in
/// `NOTIFY_SOCKET`: systemd's notification protocol (sd_notify(3); `Type=notify` in
/// systemd.service(5)). `READY=1` once the listening socket is bound and the database migrated,
/// `STOPPING=1` when a signal starts the drain, `STATUS=` lines for `systemctl status`, and
/// `WATCHDOG=1` from ``Watchdog`` while `WatchdogSec=` asks for it. Without `NOTIFY_SOCKET` (any
/// start not by a service manager) it sends nothing.
struct ServiceManager: Sendable {
    private let address: sockaddr_un
    private let length: socklen_t
    private let fd: Int32
    /// systemd's watchdog interval (`WatchdogSec=`, passed as `WATCHDOG_USEC`), when it asks for
    /// `WATCHDOG=1` from this process: ``Watchdog`` feeds it.
    let watchdogInterval: TimeInterval?

    /// The socket `NOTIFY_SOCKET` names: a path (`/run/systemd/notify`) or, after `@`, a name in
    /// the abstract namespace. Nil when unset, or when the name cannot be a socket address (too
    /// long, or neither form), which is reported once on standard error. The variable is taken
    /// out of the environment, with `WATCHDOG_USEC` and `WATCHDOG_PID`, so nothing the server
    /// starts inherits them.
    init?(environment: [String: String]) {
        // Taken out whatever they say.
        for variable in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { unsetenv(variable) }
        guard let name = environment["NOTIFY_SOCKET"], !name.isEmpty else { return nil }
        var bytes = Array(name.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let room = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.first == 0 || bytes.first == UInt8(ascii: "/"), bytes.count < room else {
            FileHandle.standardError.write(Data("signet: NOTIFY_SOCKET is neither a socket path nor an @name under \(room) bytes; the service manager is not told\n".utf8))
            return nil
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        self.fd = fd
        self.address = address
        // A path's trailing NUL is part of its length; an abstract name is exactly its bytes.
        self.length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (bytes.first == 0 ? 0 : 1))
        self.watchdogInterval = Self.watchdogInterval(environment)
    }

    /// `WATCHDOG_USEC` in seconds, as sd_watchdog_enabled(3) reads it: a positive number of
    /// microseconds, for this process unless `WATCHDOG_PID` names another (a process started by
    /// the service's). A value that is not one is reported once on standard error, and ignored.
    static func watchdogInterval(_ environment: [String: String]) -> TimeInterval? {
        guard let text = environment["WATCHDOG_USEC"] else { return nil }
        if let pid = environment["WATCHDOG_PID"], pid != String(getpid()) { return nil }
        // Below 10 ms there would be no time to ask the workers; a year is surely a mistake.
        guard let microseconds = UInt64(text), (10_000...31_536_000_000_000).contains(microseconds) else {
            FileHandle.standardError.write(Data("signet: WATCHDOG_USEC=\(text.prefix(40)) is not a number of microseconds from 10000 to a year; the watchdog is not fed\n".utf8))
            return nil
        }
        return TimeInterval(microseconds) / 1_000_000
    }

    /// Sends `fields` as one datagram of `NAME=value` lines. A datagram that cannot be sent is
    /// not retried: the service manager then times the start out, which is its to report.
    func send(_ fields: KeyValuePairs<String, String>) {
        // A value is one line: a newline would start a field of its own.
        let message = fields.map { "\($0.key)=\($0.value.replacingOccurrences(of: "\n", with: " "))" }.joined(separator: "\n")
        var to = address
        message.utf8CString.withUnsafeBufferPointer { text in
            withUnsafePointer(to: &to) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    _ = sendto(fd, text.baseAddress, text.count - 1, Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
    }
}
