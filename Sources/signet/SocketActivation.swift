import Foundation
import Glibc

/// systemd's socket activation (sd_listen_fds(3); `ListenStream=` in systemd.socket(5)): the
/// service manager binds the listening socket and passes it to `signet serve` as descriptor 3,
/// naming this process in `LISTEN_PID` and the count in `LISTEN_FDS`. The socket outlives the
/// process, so a restart refuses no connection: those that come while no process runs wait in
/// its backlog for the next.
enum SocketActivation {
    /// The first descriptor a service manager passes (`SD_LISTEN_FDS_START`).
    static let firstDescriptor: Int32 = 3

    /// The listening socket the service manager passed: nil when `LISTEN_FDS` is unset or 0, or
    /// when `LISTEN_PID` names another process (the variables were meant for a parent). A count
    /// that is not a number, or more than one socket, is refused: `signet serve` listens on one.
    /// The three variables are taken out of the environment, so nothing the server starts
    /// inherits them.
    static func socket(_ environment: [String: String]) throws(SocketActivationError) -> Int32? {
        for variable in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(variable) }
        guard let text = environment["LISTEN_FDS"], environment["LISTEN_PID"] == String(getpid()) else { return nil }
        guard let count = UInt(text), count <= 1 else {
            throw SocketActivationError(message: "LISTEN_FDS=\(text.prefix(20)): signet serve listens on one socket (one ListenStream= in the .socket unit)")
        }
        return count == 1 ? firstDescriptor : nil
    }
}

/// Why the sockets the service manager passed cannot be listened on.
struct SocketActivationError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
