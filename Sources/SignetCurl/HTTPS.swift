import CCurl
import Foundation

/// How ``HTTPS/get(_:options:)`` reaches a server.
public struct HTTPSOptions: Sendable {
    /// A PEM file of the CAs to trust instead of the system's.
    public var caFile: String?
    /// `HOST:PORT:ADDRESS` entries (curl's `--resolve`): the name resolves to the address.
    public var resolve: [String] = []
    /// `HOST:PORT:CONNECT-HOST:CONNECT-PORT` entries (curl's `--connect-to`): a request for the
    /// host and port goes to the other one, with the URL's name for TLS and `Host`.
    public var connectTo: [String] = []
    /// Seconds the whole request may take.
    public var timeout = 15
    /// Bytes of body kept at most; the rest ends the transfer (``HTTPSResponse/truncated``).
    public var maxBytes = 1 << 20
    /// The `User-Agent` sent.
    public var userAgent = "signet-doctor"
    /// Redirects followed at most (0: none, the answer is the 3xx): only to https, or from a
    /// loopback http URL also to http.
    public var maxRedirects = 0
    public init(caFile: String? = nil, resolve: [String] = [], connectTo: [String] = [], timeout: Int = 15, maxBytes: Int = 1 << 20,
                userAgent: String = "signet-doctor", maxRedirects: Int = 0) {
        self.userAgent = userAgent
        self.maxRedirects = maxRedirects
        self.caFile = caFile
        self.resolve = resolve
        self.connectTo = connectTo
        self.timeout = timeout
        self.maxBytes = maxBytes
    }
}

/// An answer, exactly as the server gave it: redirects are not followed unless
/// ``HTTPSOptions/maxRedirects`` says so.
public struct HTTPSResponse: Sendable {
    public let status: Int
    /// Header names lower-cased, in order.
    public let headers: [(String, String)]
    public let body: [UInt8]
    /// The body was longer than ``HTTPSOptions/maxBytes``.
    public let truncated: Bool

    public func header(_ name: String) -> String? { headers.first { $0.0 == name.lowercased() }?.1 }

    package init(status: Int, headers: [(String, String)], body: [UInt8], truncated: Bool) {
        self.status = status
        self.headers = headers
        self.body = body
        self.truncated = truncated
    }
}

/// HTTPS requests with libcurl (`signet doctor`'s GETs, logout tokens' POSTs): TLS verified
/// against the system's CAs or ``HTTPSOptions/caFile``, the name checked, no redirect followed,
/// the body bounded.
public enum HTTPS {
    /// libcurl's codes for a certificate that does not verify or does not name the host.
    public static let certificateErrors: Set<Int> = [Int(CURLE_PEER_FAILED_VERIFICATION.rawValue), Int(CURLE_SSL_CACERT_BADFILE.rawValue),
                                                     Int(CURLE_SSL_CERTPROBLEM.rawValue), Int(CURLE_SSL_CONNECT_ERROR.rawValue)]

    final class Sink {
        var body: [UInt8] = []
        var headers: [(String, String)] = []
        var truncated = false
        let limit: Int
        init(limit: Int) { self.limit = limit }
    }

    public static func get(_ url: String, options: HTTPSOptions = HTTPSOptions()) throws(CurlError) -> HTTPSResponse {
        try request(url, form: nil, options: options)
    }

    /// POSTs `form`, an `application/x-www-form-urlencoded` body (ASCII, as that encoding is).
    public static func post(_ url: String, form: String, options: HTTPSOptions = HTTPSOptions()) throws(CurlError) -> HTTPSResponse {
        try request(url, form: form, headers: nil, options: options)
    }

    /// POSTs `body` (UTF-8 text, such as JSON) with `headers` (`Name: value` lines, each
    /// checked by the caller to hold no line break).
    public static func post(_ url: String, body: [UInt8], headers: [String], options: HTTPSOptions = HTTPSOptions()) throws(CurlError) -> HTTPSResponse {
        try request(url, form: String(decoding: body, as: UTF8.self), headers: headers + ["Expect:"], options: options)
    }

    static func request(_ url: String, form: String?, headers: [String]? = nil, options: HTTPSOptions) throws(CurlError) -> HTTPSResponse {
        let curl = try CurlHandle()
        curl.set(CURLOPT_URL, url)
        if let form {
            curl.set(CURLOPT_POSTFIELDSIZE, form.utf8.count)
            curl.set(CURLOPT_COPYPOSTFIELDS, form)
            curl.set(CURLOPT_HTTPHEADER, list: headers ?? ["Content-Type: application/x-www-form-urlencoded", "Expect:"])
        }
        curl.set(CURLOPT_PROTOCOLS_STR, "https,http")
        curl.set(CURLOPT_FOLLOWLOCATION, options.maxRedirects > 0 ? 1 : 0)
        if options.maxRedirects > 0 {
            curl.set(CURLOPT_MAXREDIRS, options.maxRedirects)
            curl.set(CURLOPT_REDIR_PROTOCOLS_STR, url.hasPrefix("https:") ? "https" : "https,http")
        }
        curl.set(CURLOPT_TIMEOUT, options.timeout)
        curl.set(CURLOPT_CONNECTTIMEOUT, min(10, options.timeout))
        curl.set(CURLOPT_USERAGENT, options.userAgent)
        if let ca = options.caFile { curl.set(CURLOPT_CAINFO, ca) }
        if !options.resolve.isEmpty { curl.set(CURLOPT_RESOLVE, list: options.resolve) }
        if !options.connectTo.isEmpty { curl.set(CURLOPT_CONNECT_TO, list: options.connectTo) }
        let sink = Sink(limit: options.maxBytes)
        let box = Unmanaged.passRetained(sink)
        defer { box.release() }
        _ = signet_curl_set_pointer(curl.handle, CURLOPT_WRITEDATA, box.toOpaque())
        _ = signet_curl_set_pointer(curl.handle, CURLOPT_HEADERDATA, box.toOpaque())
        _ = signet_curl_set_write(curl.handle) { data, size, count, userdata in
            guard let data, let userdata else { return 0 }
            let sink = Unmanaged<Sink>.fromOpaque(userdata).takeUnretainedValue()
            let n = size * count
            guard sink.body.count + n <= sink.limit else {
                sink.truncated = true
                return 0  // ends the transfer: CURLE_WRITE_ERROR
            }
            data.withMemoryRebound(to: UInt8.self, capacity: n) { sink.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: n)) }
            return n
        }
        _ = signet_curl_set_header(curl.handle) { data, size, count, userdata in
            guard let data, let userdata else { return 0 }
            let sink = Unmanaged<Sink>.fromOpaque(userdata).takeUnretainedValue()
            let n = size * count
            let line = data.withMemoryRebound(to: UInt8.self, capacity: n) { String(decoding: UnsafeBufferPointer(start: $0, count: n), as: UTF8.self) }
            if line.hasPrefix("HTTP/") { sink.headers = [] }  // a new response (after a 100 Continue)
            if let colon = line.firstIndex(of: ":") {
                sink.headers.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)))
            }
            return n
        }
        do {
            try curl.perform()
        } catch {
            guard sink.truncated else { throw error }
        }
        return HTTPSResponse(status: curl.replyCode, headers: sink.headers, body: sink.body, truncated: sink.truncated)
    }
}
