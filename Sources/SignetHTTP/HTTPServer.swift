internal import CMicroHTTPD
import Synchronization
public import Foundation

/// An HTTP/1.1 server on GNU libmicrohttpd: a thread accepting connections (``Acceptor``) for a
/// pool of epoll workers, with the limits libmicrohttpd lacks added here: a body cap (413 before
/// the body is read when `Content-Length` says too much, counted for chunked bodies) and a total
/// deadline per request, enforced by a sweeper that shuts down connections past it.
public final class HTTPServer: @unchecked Sendable {
    /// Limits and listening address.
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        /// 0 picks a free port; read it back from ``port``.
        public var port: UInt16 = 8080
        public var threads = 4
        public var connectionLimit = 4096
        public var perIPConnectionLimit = 2048
        /// Seconds a connection may sit idle (libmicrohttpd's timeout).
        public var idleTimeout = 15
        /// Seconds from a connection's start, or the end of its previous response, until the next
        /// response must be queued; past it the connection is closed.
        public var requestDeadline = 30.0
        public var maxBodyBytes = 64 * 1024
        /// Per-connection memory, which bounds the request line and headers (431 past it).
        public var connectionMemoryBytes = 16 * 1024
        public var backlog = 1024
        public init() {}
    }

    let configuration: Configuration
    let handler: any HTTPHandler
    package let log: AccessLog
    private var daemon: OpaquePointer?
    private var acceptor: Acceptor?
    /// The port the server listens on.
    public private(set) var port: UInt16 = 0

    private let lock = NSLock()
    private var connections: [UInt: ConnectionState] = [:]
    private var inFlight = 0
    /// Connections suspended while their answers are held.
    private var suspended = 0
    private var sweeper: (any DispatchSourceTimer)?

    struct ConnectionState {
        let fd: Int32
        /// The socket's inode: a descriptor number can be reused by a newer connection, an inode not.
        let inode: UInt64
        /// The client's IP address as text, made once for the connection's requests.
        let remote: String
        var clockStart: UInt64
        var killed = false
        /// The handler is running: the request is whole, and the deadline (which bounds the client's
        /// sending and reading) waits. The handler's own bounds (the store's timeouts) end it, and
        /// its answer is always sent: a request is never answered by a closed connection because
        /// the server itself was slow.
        var handling = false
    }

    /// Whether a connection whose clock started at `since` is past `limit` at `now` (nanoseconds).
    /// A start later than `now`, set by a worker after `now` was read, is past nothing: an
    /// unsigned difference that wrapped around once cut random busy connections off.
    package static func pastDeadline(now: UInt64, since: UInt64, limit: UInt64) -> Bool {
        now > since && now - since > limit
    }

    static func inode(_ fd: Int32) -> UInt64? {
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0 else { return nil }
        return UInt64(info.st_ino)
    }

    /// One request's state between libmicrohttpd's calls into the handler. One thread at a time
    /// touches it: the connection's worker, or, while the connection is suspended, the one that
    /// releases a held answer before resuming it.
    final class RequestContext: @unchecked Sendable {
        let start = DispatchTime.now().uptimeNanoseconds
        let requestID: String
        var body: [UInt8] = []
        var tooLarge = false
        var status = 0
        var route = ""
        var detail: String?
        var method = ""
        var path = ""
        var remote = ""
        /// The answer, while the handler holds it (``HTTPHold``) and the connection is suspended.
        var held: HTTPResponse?

        init(requestID: String) { self.requestID = requestID }
    }

    public init(configuration: Configuration, handler: any HTTPHandler, log: AccessLog) {
        self.configuration = configuration
        self.handler = handler
        self.log = log
    }

    deinit { stop() }

    /// Starts listening. Throws when the address cannot be bound.
    public func start() throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = configuration.port.bigEndian
        guard inet_pton(AF_INET, configuration.host, &address.sin_addr) == 1 else {
            throw HTTPServerError(message: "listen host must be an IPv4 address, not \(configuration.host)")
        }
        let acceptor = try Acceptor(address: address, name: "\(configuration.host):\(configuration.port)", backlog: configuration.backlog)
        let cls = Unmanaged.passUnretained(self).toOpaque()
        var settings = signet_mhd_settings(
            threads: UInt32(configuration.threads), connection_limit: UInt32(configuration.connectionLimit),
            per_ip_limit: UInt32(configuration.perIPConnectionLimit), idle_timeout_s: UInt32(configuration.idleTimeout),
            memory_limit: configuration.connectionMemoryBytes)
        guard let started = signet_mhd_start(&settings, HTTPServer.accessCallback, HTTPServer.completedCallback, HTTPServer.notifyCallback, cls) else {
            throw HTTPServerError(message: "cannot start the HTTP workers on \(configuration.host):\(configuration.port)")
        }
        daemon = started
        port = acceptor.port
        self.acceptor = acceptor
        let handle = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(started)))
        acceptor.start { fd, address, length in
            // libmicrohttpd closes a connection it refuses (its connection or per-IP limit).
            _ = signet_mhd_add(OpaquePointer(bitPattern: handle), fd, address, length)
        }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "signet.http.deadline"))
        timer.schedule(deadline: .now() + 0.2, repeating: 0.2)
        timer.setEventHandler { [weak self] in self?.sweep() }
        timer.resume()
        sweeper = timer
    }

    /// Stops accepting connections, lets requests in flight finish (up to `grace` seconds), then stops.
    public func shutdown(grace: TimeInterval = 10) {
        guard daemon != nil else { return }
        acceptor?.stop()
        waitWhile(seconds: grace) { inFlight > 0 }
        stop()
    }

    /// Polls, every millisecond and for `seconds` at most, until `busy` (read under the lock) is false.
    private func waitWhile(seconds: Double, _ busy: () -> Bool) {
        let until = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        while DispatchTime.now().uptimeNanoseconds < until {
            lock.lock()
            let waiting = busy()
            lock.unlock()
            if !waiting { return }
            usleep(1_000)
        }
    }

    /// Stops at once, once held answers are released (libmicrohttpd cannot stop with suspended
    /// connections; a hold lasts as long as a disk sync).
    public func stop() {
        sweeper?.cancel()
        sweeper = nil
        // No new connection reaches the workers while they stop.
        acceptor?.stop()
        waitWhile(seconds: 10) { suspended > 0 }
        if let daemon {
            MHD_stop_daemon(daemon)
            self.daemon = nil
        }
        log.flush()
    }

    /// Requests currently being received or answered.
    public var requestsInFlight: Int {
        lock.lock()
        defer { lock.unlock() }
        return inFlight
    }

    /// Open connections.
    public var openConnections: Int {
        lock.lock()
        defer { lock.unlock() }
        return connections.count
    }

    private func sweep() {
        let limit = UInt64(configuration.requestDeadline * 1e9)
        lock.lock()
        defer { lock.unlock() }
        // Read under the lock: a clock read before it could be older than a `clockStart` that a
        // worker set meanwhile, and a wrapping difference would then condemn a busy connection.
        let now = DispatchTime.now().uptimeNanoseconds
        // The fd is still open here: libmicrohttpd reports a connection closed (and we drop it
        // from the table, under this lock) before it closes the socket.
        for (key, state) in connections where !state.killed && !state.handling && HTTPServer.pastDeadline(now: now, since: state.clockStart, limit: limit) {
            connections[key]?.killed = true
            // Only the socket this connection started with; never one that reused its number.
            guard HTTPServer.inode(state.fd) == state.inode else { continue }
            Darwinless.shutdown(state.fd)
        }
    }

    // MARK: libmicrohttpd callbacks (no captures; the server arrives through `cls`)

    private static let accessCallback: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadSize, conCls in
        let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
        return server.access(connection!, url, method, uploadData, uploadSize!, conCls!)
    }

    private static let completedCallback: MHD_RequestCompletedCallback = { cls, connection, conCls, _ in
        let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
        server.completed(connection, conCls)
    }

    private static let notifyCallback: MHD_NotifyConnectionCallback = { cls, connection, _, code in
        let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
        server.notify(connection, started: signet_mhd_notify_started(code) != 0)
    }

    private func notify(_ connection: OpaquePointer?, started: Bool) {
        guard let connection else { return }
        let key = HTTPServer.key(connection)
        lock.lock()
        defer { lock.unlock() }
        if started {
            let fd = signet_mhd_connection_fd(connection)
            connections[key] = ConnectionState(fd: fd, inode: HTTPServer.inode(fd) ?? 0, remote: HTTPServer.clientIP(connection),
                                               clockStart: DispatchTime.now().uptimeNanoseconds)
        } else {
            connections[key] = nil
        }
    }

    private func completed(_ connection: OpaquePointer?, _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        guard let raw = conCls?.pointee else { return }
        conCls?.pointee = nil
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeRetainedValue()
        lock.lock()
        inFlight -= 1
        if let connection {
            let key = HTTPServer.key(connection)
            connections[key]?.clockStart = DispatchTime.now().uptimeNanoseconds
        }
        lock.unlock()
        let ms = Double(DispatchTime.now().uptimeNanoseconds - context.start) / 1e6
        log.request(id: context.requestID, method: context.method, path: context.path, route: context.route, status: context.status, ms: ms,
                    remote: context.remote, bytesIn: context.body.count, detail: context.detail)
    }

    private func access(
        _ connection: OpaquePointer, _ url: UnsafePointer<CChar>?, _ method: UnsafePointer<CChar>?,
        _ uploadData: UnsafePointer<CChar>?, _ uploadSize: UnsafeMutablePointer<Int>,
        _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let raw = conCls.pointee else {
            // First call: headers are in. Refuse an announced oversized body before reading it.
            let context = RequestContext(requestID: HTTPServer.newRequestID())
            context.method = method.map { String(cString: $0) } ?? ""
            context.path = url.map { String(cString: $0) } ?? ""
            conCls.pointee = Unmanaged.passRetained(context).toOpaque()
            lock.lock()
            inFlight += 1
            let remote = connections[HTTPServer.key(connection)]?.remote
            lock.unlock()
            context.remote = remote ?? HTTPServer.clientIP(connection)
            if let length = lookup(connection, "Content-Length"), let n = Int(length), n > configuration.maxBodyBytes {
                context.tooLarge = true
                return respond(connection, context, tooLarge(connection, context))
            }
            return signet_mhd_yes()
        }
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        if let held = context.held {
            // Resumed: the handler released its answer.
            context.held = nil
            lock.lock()
            suspended -= 1
            lock.unlock()
            handled(HTTPServer.key(connection))
            return respond(connection, context, held)
        }
        if context.status != 0 {
            uploadSize.pointee = 0  // already answered; discard what still arrives
            return signet_mhd_yes()
        }
        if uploadSize.pointee > 0 {
            let count = uploadSize.pointee
            uploadSize.pointee = 0
            if context.tooLarge { return signet_mhd_yes() }
            if context.body.count + count > configuration.maxBodyBytes {
                // A chunked body that grew past the cap: answer now, or after the body if
                // libmicrohttpd will not take a response mid-upload.
                context.tooLarge = true
                context.body = []
                if respond(connection, context, tooLarge(connection, context)) == signet_mhd_yes() { return signet_mhd_yes() }
                context.status = 0
                return signet_mhd_yes()
            }
            uploadData?.withMemoryRebound(to: UInt8.self, capacity: count) { context.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
            return signet_mhd_yes()
        }
        if context.tooLarge { return respond(connection, context, tooLarge(connection, context)) }
        let request = HTTPRequest(
            method: context.method, path: context.path, headers: headers(connection), body: context.body,
            remoteAddress: context.remote, requestID: context.requestID, query: arguments(connection))
        let key = HTTPServer.key(connection)
        lock.lock()
        connections[key]?.handling = true
        lock.unlock()
        let (response, hold) = handler.handleHeld(request)
        if let hold {
            // Held: the connection waits, suspended, and this thread serves others. The deadline
            // waits too (`handling` stays set), as for a handler that is still running.
            context.held = response
            lock.lock()
            suspended += 1
            lock.unlock()
            MHD_suspend_connection(connection)
            let resumable = HTTPServer.key(connection)
            hold { replacement in
                if let replacement { context.held = replacement }
                MHD_resume_connection(OpaquePointer(bitPattern: resumable))
            }
            return signet_mhd_yes()
        }
        handled(key)
        return respond(connection, context, response)
    }

    /// The handler is done with the connection's request: the answer's sending gets a deadline
    /// of its own, from now.
    private func handled(_ key: UInt) {
        lock.lock()
        connections[key]?.handling = false
        connections[key]?.clockStart = DispatchTime.now().uptimeNanoseconds
        lock.unlock()
    }

    /// The client's IP address as text (`inet_ntop`).
    static func clientIP(_ connection: OpaquePointer) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            signet_mhd_client_ip(connection, buffer.baseAddress!, 64)
            return String(cString: buffer.baseAddress!)
        }
    }

    /// A connection's key in ``connections``: its address, which libmicrohttpd keeps for its life.
    static func key(_ connection: OpaquePointer) -> UInt {
        UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
    }

    private func respond(_ connection: OpaquePointer, _ context: RequestContext, _ response: HTTPResponse) -> MHD_Result {
        let created: OpaquePointer? = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), signet_mhd_must_copy())
        }
        guard let created else { return signet_mhd_no() }
        defer { MHD_destroy_response(created) }
        // (`withCString` on both: passing a String straight to a C parameter copies it into an array.)
        for (name, value) in response.headers {
            _ = name.withCString { n in value.withCString { v in MHD_add_response_header(created, n, v) } }
        }
        _ = context.requestID.withCString { MHD_add_response_header(created, "X-Request-Id", $0) }
        context.status = response.status
        context.route = response.route ?? ""
        context.detail = response.logDetail
        return MHD_queue_response(connection, UInt32(response.status), created)
    }

    private func lookup(_ connection: OpaquePointer, _ name: String) -> String? {
        MHD_lookup_connection_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
    }

    private final class HeaderBox {
        var headers: [String: String] = [:]
    }

    /// The query string's arguments as libmicrohttpd decoded them; the first of a repeated name.
    private func arguments(_ connection: OpaquePointer) -> [String: String] {
        let box = HeaderBox()
        let opaque = Unmanaged.passUnretained(box).toOpaque()
        _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, { cls, _, key, value in
            let box = Unmanaged<HeaderBox>.fromOpaque(cls!).takeUnretainedValue()
            if let key, box.headers.count < 64 {
                let name = String(cString: key)
                if box.headers[name] == nil { box.headers[name] = value.map { String(cString: $0) } ?? "" }
            }
            return signet_mhd_yes()
        }, opaque)
        return box.headers
    }

    private func headers(_ connection: OpaquePointer) -> [String: String] {
        let box = HeaderBox()
        let opaque = Unmanaged.passUnretained(box).toOpaque()
        _ = MHD_get_connection_values(connection, .HEADER_KIND, { cls, _, key, value in
            let box = Unmanaged<HeaderBox>.fromOpaque(cls!).takeUnretainedValue()
            if let key, let value {
                let name = HTTPServer.lowercasedName(key)
                let text = String(cString: value)
                box.headers[name] = box.headers[name].map { $0 + ", " + text } ?? text
            }
            return signet_mhd_yes()
        }, opaque)
        return box.headers
    }

    /// A header name in lower case, ASCII letters folded byte by byte: names are tokens (RFC 9110
    /// §5.1), and Unicode case mapping would cost more than the rest of the header's handling.
    package static func lowercasedName(_ name: UnsafePointer<CChar>) -> String {
        let count = strlen(name)
        return String(unsafeUninitializedCapacity: count) { out in
            for i in 0..<count {
                let b = UInt8(bitPattern: name[i])
                out[i] = b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") ? b | 0x20 : b
            }
            return count
        }
    }

    /// The handler's 413 for this request (its headers, no body).
    private func tooLarge(_ connection: OpaquePointer, _ context: RequestContext) -> HTTPResponse {
        let request = HTTPRequest(
            method: context.method, path: context.path, headers: headers(connection), body: [], remoteAddress: context.remote, requestID: context.requestID)
        return handler.bodyTooLarge(request, limit: configuration.maxBodyBytes)
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

enum Darwinless {
    static func shutdown(_ fd: Int32) {
        guard fd >= 0 else { return }
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }
}

import Glibc
