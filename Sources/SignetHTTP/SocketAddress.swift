internal import CSystem
import Glibc

/// A numeric IPv4 or IPv6 address and a port, as the socket calls take it: what the server
/// binds (`listen`, such as `0.0.0.0:8080` or `[::]:8080`) and what the client and the load
/// generator connect to. Host names are not resolved.
public struct SocketAddress: Sendable {
    private var storage = sockaddr_storage()
    private var length: UInt32 = 0
    /// `AF_INET` or `AF_INET6`.
    public let family: Int32
    /// The address as given, without brackets.
    public let host: String
    public let port: UInt16

    /// `nil` when `host` is not a numeric IPv4 or IPv6 address (`inet_pton(3)`).
    public init?(host: String, port: UInt16) {
        var storage = sockaddr_storage()
        var length: UInt32 = 0
        let family = withUnsafeMutableBytes(of: &storage) { signet_ip_address(host, port, $0.baseAddress!, &length) }
        guard family >= 0 else { return nil }
        self.storage = storage
        self.length = length
        self.family = family
        self.host = host
        self.port = port
    }

    /// `host:port`, with an IPv6 address in brackets (RFC 3986 §3.2.2): for a Host header or a URL.
    public var authority: String { Self.authority(host, port) }

    /// `host:port`, with an IPv6 address (one with a colon) in brackets.
    public static func authority(_ host: String, _ port: UInt16) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Calls `body` with the address as a `sockaddr` pointer and its size.
    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, UInt32) throws -> T) rethrows -> T {
        try withUnsafeBytes(of: storage) { try body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), length) }
    }

    /// A listening socket on this address (``HTTPServer/listen(host:port:backlog:)``); -1 and
    /// `errno` when it cannot be bound.
    func listen(backlog: Int) -> Int32 {
        withUnsafeBytes(of: storage) { signet_listen($0.baseAddress!, length, Int32(clamping: backlog)) }
    }

    /// A blocking TCP socket of this address's family connected to it, with Nagle off; -1 and
    /// `errno` when it cannot connect. `configure` runs before the connect (a timeout, a source
    /// address to bind) and may refuse by returning `false`.
    public func connect(configure: (Int32) -> Bool = { _ in true }) -> Int32 {
        let s = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { return -1 }
        var one: Int32 = 1
        setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        guard configure(s), withSockaddr({ Glibc.connect(s, $0, $1) }) == 0 else {
            let code = errno
            Glibc.close(s)
            errno = code
            return -1
        }
        return s
    }
}
