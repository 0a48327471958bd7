public import Foundation
internal import CSystem
import Glibc

/// A minimal blocking HTTP/1.1 client over one keep-alive TCP connection. Signet's load
/// generator and tests use it; it speaks only what Signet answers (Content-Length bodies).
/// Not for concurrent use: one instance belongs to one thread at a time.
public final class HTTPClient: @unchecked Sendable {
    /// An answer.
    public struct Response: Sendable {
        public let status: Int
        /// Header values by lower-cased name; a repeated field's values joined (``add(_:_:to:)``).
        public let headers: [String: String]
        public let body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
        public init(status: Int, headers: [String: String], body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// Adds one field line to `headers`: a repeated field's values are joined by ", " in
        /// order, as one list (RFC 9110 §5.3), except `Set-Cookie`, whose values cannot be
        /// joined so (RFC 6265 §3): the last one is kept.
        public static func add(_ name: String, _ value: String, to headers: inout [String: String]) {
            if let earlier = headers[name], name != "set-cookie" { headers[name] = earlier + ", " + value } else { headers[name] = value }
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    let host: String
    let port: UInt16
    /// The local address to connect from (another loopback address, for per-address tests).
    let source: String?
    private var fd: Int32 = -1
    private var buffer: [UInt8] = []
    public var timeout: TimeInterval

    public init(host: String = "127.0.0.1", port: UInt16, timeout: TimeInterval = 10, source: String? = nil) {
        self.host = host
        self.port = port
        self.timeout = timeout
        self.source = source
    }

    deinit { close() }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        buffer = []
    }

    /// The local port of the open connection, 0 before it is opened: the peer port the server
    /// sees for this client.
    public var localPort: UInt16 { fd >= 0 ? signet_bound_port(fd) : 0 }

    /// Opens the connection (done lazily by ``send(_:_:headers:body:)``).
    public func connect() throws {
        guard fd < 0 else { return }
        guard let address = SocketAddress(host: host, port: port) else {
            throw Failure(description: "\(host) is not an IPv4 or IPv6 address")
        }
        var bindFailure: Int32?
        let s = address.connect { s in
            var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
            setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            guard let source else { return true }
            guard let local = SocketAddress(host: source, port: 0), local.withSockaddr({ Glibc.bind(s, $0, $1) }) == 0 else {
                bindFailure = errno
                return false
            }
            return true
        }
        if let bindFailure, let source { throw Failure(description: "bind to \(source) failed (errno \(bindFailure))") }
        guard s >= 0 else { throw Failure(description: "connect to \(address.authority) failed (errno \(errno))") }
        fd = s
    }

    /// Sends raw bytes on the connection.
    public func write(_ bytes: [UInt8]) throws {
        try connect()
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send failed (errno \(errno))") }
            sent += n
        }
    }

    /// One request and its answer. A `JSON` body gets `Content-Type: application/json` unless
    /// `headers` says otherwise.
    @discardableResult
    public func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> Response {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(SocketAddress.authority(host, port))\r\n"
        var hasType = false
        for (name, value) in headers {
            head += "\(name): \(value)\r\n"
            if name.lowercased() == "content-type" { hasType = true }
        }
        if !body.isEmpty && !hasType { head += "Content-Type: application/json\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        do {
            try write(Array(head.utf8) + body)
            return try readResponse()
        } catch {
            close()
            throw error
        }
    }

    /// Reads one response from the connection.
    public func readResponse() throws -> Response {
        while true {
            if let response = try Self.takeResponse(from: &buffer) {
                if response.headers["connection"]?.lowercased() == "close" { close() }
                return response
            }
            try fill()
        }
    }

    /// Removes one whole response (status line, headers, `Content-Length` body) from the front
    /// of `buffer`, or returns `nil` while it is incomplete. For readers of their own sockets
    /// too, such as `signet bench login`'s event loops.
    public static func takeResponse(from buffer: inout [UInt8]) throws -> Response? {
        guard let end = buffer.withUnsafeBufferPointer({ RequestParser.headEnd($0, from: 0, limit: $0.count) }) else { return nil }
        let headText = String(decoding: buffer[..<end], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "bad status line") }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            Response.add(line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces), to: &headers)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        guard buffer.count >= end + 4 + length else { return nil }
        let body = Array(buffer[(end + 4)..<(end + 4 + length)])
        buffer.removeFirst(end + 4 + length)
        return Response(status: status, headers: headers, body: body)
    }

    /// Whether the server has closed the connection (reads until EOF or timeout).
    public func isClosedByPeer() -> Bool {
        guard fd >= 0 else { return true }
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }

    private func fill() throws {
        guard fd >= 0 else { throw Failure(description: "connection closed") }
        var chunk = [UInt8](repeating: 0, count: 16384)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else {
            close()
            throw Failure(description: n == 0 ? "connection closed by the server" : "receive failed (errno \(errno))")
        }
        buffer += chunk[..<n]
    }
}
