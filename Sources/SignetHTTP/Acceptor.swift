internal import CSystem
import Foundation
import Synchronization

/// The listening socket and the one thread that accepts on it, handing every connection to the
/// server, which gives it to the worker its descriptor number names (the number modulo the
/// workers), so a pool's connections are spread evenly whatever the timing of the connects.
///
/// When workers accepted for themselves (libmicrohttpd, before Signet's own HTTP layer),
/// whichever woke first took up to ten connections a turn. A burst of keep-alive connections
/// could then land on two workers of sixteen and stay there; with PostgreSQL, where a worker
/// waits for each round trip, those two served every request, and sign-ins shared a commit
/// batch 1.1–1.6 at a time instead of 3.5–5 (`bench login`, 64 clients).
final class Acceptor: @unchecked Sendable {
    private let fd: Int32
    /// The bound port (the one asked for, or the free one picked for 0).
    let port: UInt16
    /// The bound address, as text.
    let host: String
    /// Rung by ``stop()`` to wake the accepting thread from its wait.
    private let doorbell: Int32
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var running = false
    private var closed = false

    /// Takes on the listening socket `fd` that the service manager passed (systemd's socket
    /// activation, sd_listen_fds(3)). Its other copy stays with the service manager, which
    /// keeps it listening while this process stops and the next starts: connections that come
    /// meanwhile wait in its backlog, and none is refused. So it is never shut down, only closed.
    convenience init(inherited fd: Int32) throws(HTTPServerError) {
        guard signet_adopt_listener(fd) == 0 else {
            let code = errno
            throw HTTPServerError(message: "descriptor \(fd) from the service manager is not a listening TCP socket of IPv4 or IPv6 (errno \(code))")
        }
        try self.init(listening: fd)
    }

    /// Takes on the listening socket `fd` that ``HTTPServer/listen(host:port:backlog:)`` made: its
    /// only descriptor, so closing it stops the listening.
    init(listening fd: Int32) throws(HTTPServerError) {
        let doorbell = signet_eventfd()
        guard doorbell >= 0 else {
            close(fd)
            throw HTTPServerError(message: "cannot make an eventfd for the accepting thread (errno \(errno))")
        }
        var address = sockaddr_storage()
        let bound = withUnsafeMutableBytes(of: &address) { signet_bound_address(fd, $0.baseAddress!) } == 0
        self.fd = fd
        self.doorbell = doorbell
        port = signet_bound_port(fd)
        host = bound ? withUnsafeBytes(of: &address) { HTTPServer.clientIP($0.baseAddress!) } : "?"
    }

    deinit { stop() }

    /// Starts the thread that accepts and calls `add` with each connection's descriptor and address.
    /// The socket is non-blocking: the thread takes every connection waiting, then waits for the
    /// next or for ``stop()``'s doorbell.
    func start(_ add: @escaping @Sendable (Int32, UnsafeRawPointer, UInt32) -> Void) {
        lock.lock()
        running = true
        lock.unlock()
        // The thread holds the acceptor until ``stop()`` ends it.
        let thread = Thread { [self] in
            _ = signet_name_thread("signet.accept")  // `Thread.name` does not reach Linux
            var address = sockaddr_storage()
            var length: UInt32 = 0
            var waits = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: doorbell, events: Int16(POLLIN), revents: 0)]
            accepting: while !stopping.load(ordering: .acquiring) {
                let connection = signet_accept(fd, &address, &length)
                if connection >= 0 {
                    withUnsafeBytes(of: &address) { add(connection, $0.baseAddress!, length) }
                    continue
                }
                switch errno {
                case EINTR, ECONNABORTED, EPROTO: continue
                case EAGAIN: _ = signet_poll_ns(&waits, 2, -1)
                // Out of descriptors or memory: the connection waits in the backlog until some close.
                case EMFILE, ENFILE, ENOBUFS, ENOMEM: usleep(10_000)
                default: break accepting
                }
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops accepting and closes this process's descriptor of the socket (once; later calls
    /// return at once): a socket of its own stops listening, and one from the service manager
    /// goes on listening there. Connections already handed over are untouched.
    func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        if running {
            stopping.store(true, ordering: .releasing)
            signet_eventfd_signal(doorbell)
            finished.wait()
        }
        close(fd)
        close(doorbell)
    }
}
