import CSystem
import Glibc
import Synchronization
public import Foundation

/// An HTTP/1.1 server of Signet's own (RFC 9112): a thread accepting connections (``Acceptor``)
/// for a pool of epoll workers (``HTTPWorker``), a strict bounded parser (``RequestParser``), and
/// the limits an authentication server needs: connections in all and per address, a body cap
/// (413 before the body is read when `Content-Length` says too much, counted for chunked
/// bodies), a head cap (431), an idle timeout and a total deadline per request, enforced by a
/// sweeper that shuts down connections past them. A held answer (``HTTPHold``) is written to the
/// socket by the thread that releases it, without a hand-over to a worker.
public final class HTTPServer: @unchecked Sendable {
    /// Limits and listening address.
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        /// 0 picks a free port; read it back from ``port``.
        public var port: UInt16 = 8080
        public var threads = 4
        public var connectionLimit = 4096
        public var perIPConnectionLimit = 2048
        /// What the per-address connection limit counts a client under, from its address as
        /// text: by default the address; Signet passes its rate-limit key, which counts an IPv6
        /// client by its network.
        public var addressKey: @Sendable (String) -> String = { $0 }
        /// Seconds a connection may sit with no bytes coming or going.
        public var idleTimeout = 15
        /// Seconds from a connection's start, or the end of its previous response, until the next
        /// response must be queued; past it the connection is closed.
        public var requestDeadline = 30.0
        public var maxBodyBytes = 64 * 1024
        /// The largest request line and headers (431 past it).
        public var connectionMemoryBytes = 16 * 1024
        public var backlog = 1024
        /// A listening socket the service manager passed (systemd's socket activation): taken
        /// on instead of binding ``host`` and ``port``.
        public var inheritedSocket: Int32?
        public init() {}
    }

    let configuration: Configuration
    let handler: any HTTPHandler
    package let log: AccessLog
    private var acceptor: Acceptor?
    private var workers: [HTTPWorker] = []
    /// The address and port the server listens on.
    public private(set) var host = ""
    public private(set) var port: UInt16 = 0
    /// What a connection may hold unread: a whole request at its limits, and the next one's start.
    let maxBufferedBytes: Int

    private let lock = NSLock()
    // Under `lock`:
    private var connections: [ObjectIdentifier: HTTPConnection] = [:]
    private var perIP: [String: Int] = [:]
    private var running = false
    /// Requests from their first bytes until their answer is written (a shutdown waits for them).
    let inFlight = Atomic<Int>(0)
    /// Answers held until their handler releases them.
    private let suspended = Atomic<Int>(0)
    private var sweeper: (any DispatchSourceTimer)?

    /// Whether a connection whose clock started at `since` is past `limit` at `now` (nanoseconds).
    /// A start later than `now`, set by a worker after `now` was read, is past nothing: an
    /// unsigned difference that wrapped around once cut random busy connections off.
    package static func pastDeadline(now: UInt64, since: UInt64, limit: UInt64) -> Bool {
        now > since && now - since > limit
    }

    public init(configuration: Configuration, handler: any HTTPHandler, log: AccessLog) {
        self.configuration = configuration
        self.handler = handler
        self.log = log
        maxBufferedBytes = 2 * (configuration.connectionMemoryBytes + configuration.maxBodyBytes) + 16 * 1024
    }

    deinit { stop() }

    /// The port the socket `fd` is bound to, `nil` when it is bound to none: a passed socket's
    /// port is known before the server takes it on.
    public static func boundPort(_ fd: Int32) -> UInt16? {
        let port = signet_bound_port(fd)
        return port == 0 ? nil : port
    }

    /// Binds `host:port` (a numeric IPv4 or IPv6 address; port 0 picks a free one) and listens
    /// with `backlog`, before any server is made: for a caller that must know the port picked
    /// before it can configure the server, which then takes the socket on as
    /// ``Configuration/inheritedSocket``. `::` takes IPv4 clients too. Throws when the address
    /// cannot be bound.
    public static func listen(host: String, port: UInt16, backlog: Int = Configuration().backlog) throws(HTTPServerError) -> Int32 {
        guard let address = SocketAddress(host: host, port: port) else {
            throw HTTPServerError(message: "listen host must be an IPv4 or IPv6 address, not \(host)")
        }
        let fd = address.listen(backlog: backlog)
        // Read before the message is built: its allocations may change errno.
        let code = errno
        guard fd >= 0 else {
            let why = switch code {
            case EADDRINUSE: "another process listens on it"
            case EACCES: "a port below 1024 needs root or CAP_NET_BIND_SERVICE"
            case EADDRNOTAVAIL: "no interface of this machine has that address"
            default: String(cString: strerror(code))
            }
            throw HTTPServerError(message: "cannot listen on \(address.authority): \(why) (errno \(code))")
        }
        return fd
    }

    /// Starts listening. Throws when the address cannot be bound.
    public func start() throws {
        let acceptor: Acceptor
        if let inherited = configuration.inheritedSocket {
            acceptor = try Acceptor(inherited: inherited)
        } else {
            acceptor = try Acceptor(listening: Self.listen(host: configuration.host, port: configuration.port, backlog: configuration.backlog))
        }
        var started: [HTTPWorker] = []
        do {
            for n in 0..<max(1, configuration.threads) {
                let worker = try HTTPWorker(server: self)
                worker.start(name: "signet.http\(n)")
                started.append(worker)
            }
        } catch {
            // The workers already running end before the error goes up.
            for worker in started { worker.post(.stop) }
            for worker in started { worker.join() }
            acceptor.stop()
            throw error
        }
        lock.lock()
        workers = started
        running = true
        lock.unlock()
        host = acceptor.host
        port = acceptor.port
        self.acceptor = acceptor
        acceptor.start { [weak self] fd, address, _ in
            if let self { self.adopt(fd, address) } else { close(fd) }
        }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "signet.http.deadline"))
        timer.schedule(deadline: .now() + 0.2, repeating: 0.2)
        timer.setEventHandler { [weak self] in self?.sweep() }
        timer.resume()
        sweeper = timer
    }

    /// Stops accepting connections, lets requests in flight finish (up to `grace` seconds), then stops.
    /// A request whose first bytes had reached its socket counts as in flight even if its worker
    /// had not read them yet: each worker reads what is there before the count is looked at.
    public func shutdown(grace: TimeInterval = 10) {
        guard isRunning else { return }
        acceptor?.stop()
        for done in postToWorkers(HTTPWorker.Job.catchUp) { _ = done.wait(timeout: .now() + min(grace, 1)) }
        waitWhile(seconds: grace) { inFlight.load(ordering: .acquiring) > 0 }
        stop()
    }

    /// Posts the job `make` builds to each running worker; the semaphores it signals, in worker order.
    private func postToWorkers(_ make: (DispatchSemaphore) -> HTTPWorker.Job) -> [DispatchSemaphore] {
        lock.lock()
        let current = running ? workers : []
        lock.unlock()
        return current.map { worker in
            let done = DispatchSemaphore(value: 0)
            worker.post(make(done))
            return done
        }
    }

    private var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return running
    }

    /// Polls, every millisecond and for `seconds` at most, until `busy` is false.
    private func waitWhile(seconds: Double, _ busy: () -> Bool) {
        let until = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        while DispatchTime.now().uptimeNanoseconds < until {
            if !busy() { return }
            usleep(1_000)
        }
    }

    /// Stops at once, once held answers are released (a hold lasts as long as a disk sync).
    public func stop() {
        sweeper?.cancel()
        sweeper = nil
        // No new connection reaches the workers while they stop.
        acceptor?.stop()
        lock.lock()
        let stopping = running ? workers : []
        running = false
        workers = []
        lock.unlock()
        guard !stopping.isEmpty else { return log.flush() }
        waitWhile(seconds: 10) { suspended.load(ordering: .acquiring) > 0 }
        for worker in stopping { worker.post(.stop) }
        for worker in stopping { worker.join() }
        log.flush()
    }

    /// The workers (by number: thread `signet.httpN`) whose loops did not come round to their inbox
    /// within `seconds`: each is inside one request that has not returned (a lock that never comes
    /// free, a query that never ends), and every connection it holds waits. Empty while all turn,
    /// and when the server is not running. What `signet serve` asks before it feeds systemd's
    /// watchdog (sd_watchdog_enabled(3)).
    public func stalledWorkers(within seconds: TimeInterval) -> [Int] {
        let probes = postToWorkers(HTTPWorker.Job.probe)
        let deadline = DispatchTime.now() + seconds
        return probes.indices.filter { probes[$0].wait(timeout: deadline) == .timedOut }
    }

    /// Requests currently being received or answered.
    public var requestsInFlight: Int { inFlight.load(ordering: .acquiring) }

    /// Open connections.
    public var openConnections: Int {
        lock.lock()
        defer { lock.unlock() }
        return connections.count
    }

    // MARK: connections

    /// A connection from the acceptor: refused (closed) past the limits, else given to the worker
    /// its descriptor number names, which spreads consecutive connections over the workers.
    private func adopt(_ fd: Int32, _ address: UnsafeRawPointer) {
        let remote = HTTPServer.clientIP(address)
        let limitKey = configuration.addressKey(remote)
        lock.lock()
        guard running, connections.count < configuration.connectionLimit, perIP[limitKey, default: 0] < configuration.perIPConnectionLimit else {
            lock.unlock()
            close(fd)
            return
        }
        let worker = workers[Int(fd) % workers.count]
        let connection = HTTPConnection(fd: fd, remote: remote, limitKey: limitKey, worker: worker, now: DispatchTime.now().uptimeNanoseconds)
        connections[ObjectIdentifier(connection)] = connection
        perIP[limitKey, default: 0] += 1
        lock.unlock()
        worker.post(.adopt(connection))
    }

    /// Called by the connection's worker before it closes the descriptor.
    func forget(_ c: HTTPConnection) {
        lock.lock()
        if connections.removeValue(forKey: ObjectIdentifier(c)) != nil {
            let left = perIP[c.limitKey, default: 1] - 1
            perIP[c.limitKey] = left > 0 ? left : nil
        }
        lock.unlock()
    }

    /// The client's IP address as text (`inet_ntop`) from the acceptor's `sockaddr_storage`.
    static func clientIP(_ address: UnsafeRawPointer) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            let family = address.load(as: sa_family_t.self)
            let ok: UnsafePointer<CChar>?
            if family == sa_family_t(AF_INET6) {
                var a = address.load(as: sockaddr_in6.self).sin6_addr
                let isMapped = withUnsafeBytes(of: a) { $0.prefix(10).allSatisfy { $0 == 0 } && $0[10] == 0xff && $0[11] == 0xff }
                if isMapped {
                    // An IPv4 client of a dual-stack socket (::ffff:a.b.c.d, RFC 4291 §2.5.5.2) is
                    // named as IPv4, as it would be on an IPv4 socket: in the access log, the
                    // audit trail and the rate limits alike.
                    var v4 = withUnsafeBytes(of: a) { bytes in in_addr(s_addr: bytes.suffix(4).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }) }
                    ok = inet_ntop(AF_INET, &v4, buffer.baseAddress!, 64)
                } else {
                    ok = inet_ntop(AF_INET6, &a, buffer.baseAddress!, 64)
                }
            } else {
                var a = address.load(as: sockaddr_in.self).sin_addr
                ok = inet_ntop(AF_INET, &a, buffer.baseAddress!, 64)
            }
            guard ok != nil else { return "" }
            return String(cString: buffer.baseAddress!)
        }
    }

    private func sweep() {
        let deadline = UInt64(configuration.requestDeadline * 1e9)
        let idle = UInt64(configuration.idleTimeout) * 1_000_000_000
        let linger: UInt64 = 2_000_000_000
        lock.lock()
        defer { lock.unlock() }
        // Read under the lock: a clock read before it could be older than a start that a worker
        // set meanwhile. The descriptors are open: a worker forgets a connection before closing it.
        let now = DispatchTime.now().uptimeNanoseconds
        for c in connections.values {
            c.lock.lock()
            var kill = false
            if !c.killed {
                if c.lingeringSince != 0 {
                    kill = HTTPServer.pastDeadline(now: now, since: c.lingeringSince, limit: linger)
                } else if !c.busy {
                    // The handler's own bounds end a request it runs; its answer is always sent.
                    kill = HTTPServer.pastDeadline(now: now, since: c.clockStart, limit: deadline)
                        || HTTPServer.pastDeadline(now: now, since: c.lastActivity, limit: idle)
                }
                c.killed = kill
            }
            c.lock.unlock()
            // The worker sees the hang-up and closes.
            if kill { _ = Glibc.shutdown(c.fd, Int32(SHUT_RDWR)) }
        }
    }

    // MARK: requests

    /// What an answer needs besides the response.
    struct Exchange {
        let requestID: String
        let method: String
        let path: String
        let start: UInt64
        let bytesIn: Int
        let keepAlive: Bool
        let http10: Bool
    }

    /// A request is whole (or refused): in flight until answered, its connection busy meanwhile.
    /// Returns when it began and its ID.
    private func begin(_ c: HTTPConnection) -> (UInt64, String) {
        inFlight.add(1, ordering: .relaxed)
        c.lock.lock()
        c.busy = true
        c.lock.unlock()
        return (DispatchTime.now().uptimeNanoseconds, HTTPServer.newRequestID())
    }

    /// Runs the handler for a whole request (on the connection's worker) and answers, now or
    /// when the handler releases a held answer.
    func dispatch(_ c: HTTPConnection, _ head: RequestHead, _ body: [UInt8]) {
        let (start, id) = begin(c)
        // HEAD is GET without the body (RFC 9110 §9.3.2): the handler answers a GET, and the
        // answer goes out with its fields and Content-Length only.
        let query = head.query.map { HTTPRequest.parseQueryNotingRepeats($0[...]) }
        let request = HTTPRequest(method: head.method == "HEAD" ? "GET" : head.method, path: head.path, headers: head.headers, body: body, remoteAddress: c.remote, requestID: id,
                                  query: query?.query ?? [:], queryRepeats: query?.repeats ?? [])
        let exchange = Exchange(requestID: id, method: head.method, path: head.path, start: start, bytesIn: body.count, keepAlive: head.keepAlive, http10: head.http10)
        let (response, hold) = handler.handleHeld(request)
        guard let hold else { return answer(c, response, exchange, held: false) }
        suspended.add(1, ordering: .relaxed)
        hold { [self] replacement in answer(c, replacement ?? response, exchange, held: true) }
    }

    /// A request that cannot be read: its answer, then the connection closes.
    func refuse(_ c: HTTPConnection, _ failure: RequestFailure, head: RequestHead?) {
        let (start, id) = begin(c)
        let request = head.map { HTTPRequest(method: $0.method, path: $0.path, headers: $0.headers, body: [], remoteAddress: c.remote, requestID: id) }
        var response: HTTPResponse
        if failure.status == 413, let request {
            response = handler.bodyTooLarge(request, limit: configuration.maxBodyBytes)
        } else {
            response = handler.unreadable(request, status: failure.status, reason: failure.reason, detail: failure.detail)
        }
        let exchange = Exchange(requestID: id, method: head?.method ?? "", path: head?.path ?? "", start: start, bytesIn: 0, keepAlive: false, http10: head?.http10 ?? false)
        answer(c, response, exchange, held: false)
    }

    /// Writes an answer from whichever thread has it: what the socket does not take, and anything
    /// else the connection needs next, goes back to its worker.
    private func answer(_ c: HTTPConnection, _ response: HTTPResponse, _ exchange: Exchange, held: Bool) {
        let bytes = ResponseWriter.bytes(response, requestID: exchange.requestID, keepAlive: exchange.keepAlive, http10: exchange.http10, head: exchange.method == "HEAD")
        let now = DispatchTime.now().uptimeNanoseconds
        c.lock.lock()
        c.busy = false
        c.clockStart = now
        c.lastActivity = now
        if !exchange.keepAlive { c.closeAfterWrite = true }
        if !c.gone {
            if c.output.isEmpty { c.output = bytes } else { c.output += bytes }
            if !c.writeOutput() { c.gone = true }
        }
        // From the worker itself (not held), the worker goes on by itself.
        let handBack = held && (c.gone || c.waiting || !c.output.isEmpty || c.closeAfterWrite || c.readDone)
        if held { c.waiting = false }
        c.lock.unlock()
        if held { suspended.add(-1, ordering: .relaxed) }
        inFlight.add(-1, ordering: .releasing)
        let ms = Double(now - exchange.start) / 1e6
        log.request(id: exchange.requestID, method: exchange.method, path: exchange.path, route: response.route ?? "", status: response.status, ms: ms,
                    remote: c.remote, bytesIn: exchange.bytesIn, detail: response.logDetail)
        if handBack { c.worker.post(.resume(c)) }
    }

    /// 16 hex digits, unique within the process: a counter from a random start, scrambled by
    /// SplitMix64's finalizer (a bijection), so IDs look random without a system call each.
    static func newRequestID() -> String {
        var z = requestCounter.wrappingAdd(0x9e37_79b9_7f4a_7c15, ordering: .relaxed).newValue
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        z ^= z >> 31
        return String(unsafeUninitializedCapacity: 16) { out in
            for i in 0..<16 { out[i] = hexDigits[Int(z >> UInt64(60 - 4 * i) & 0xf)] }
            return 16
        }
    }

    private static let requestCounter = Atomic<UInt64>(UInt64.random(in: .min ... .max))
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

/// Why the server could not start.
public struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}

