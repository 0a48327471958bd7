/// An HTTP request as a handler sees it: the whole body, already size-checked.
public struct HTTPRequest: Sendable {
    /// The method; a HEAD request arrives as `GET` (the server leaves out the answer's body).
    public let method: String
    /// The path without the query string.
    public let path: String
    /// Header values by lower-cased name.
    public let headers: [String: String]
    public let body: [UInt8]
    /// The peer's IP address.
    public let remoteAddress: String
    /// A random ID, also sent back as `X-Request-Id` and written to the access log.
    public let requestID: String
    /// The query string's arguments, decoded (RFC 3986 §3.4, with `+` as a space as forms write
    /// it); a repeated name keeps its first value.
    public let query: [String: String]
    /// The names the query string holds more than once, each once, in the order they repeat
    /// (an OAuth request may not repeat a parameter, RFC 6749 §3.1).
    public let queryRepeats: [String]

    /// A `path` with a `?` and no `query` is split into the two (a request made in process).
    public init(method: String, path: String, headers: [String: String], body: [UInt8], remoteAddress: String, requestID: String,
                query: [String: String]? = nil, queryRepeats: [String] = []) {
        self.method = method
        if query == nil, let mark = path.firstIndex(of: "?") {
            self.path = String(path[..<mark])
            (self.query, self.queryRepeats) = HTTPRequest.parseQueryNotingRepeats(path[path.index(after: mark)...])
        } else {
            self.path = path
            self.query = query ?? [:]
            self.queryRepeats = queryRepeats
        }
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.requestID = requestID
    }

    /// `a=b&c=d` decoded; a pair that is not valid percent-encoded UTF-8 is skipped. Bounded: at
    /// most 64 pairs of the first 8 KiB.
    public static func parseQuery(_ text: Substring) -> [String: String] {
        parseQueryNotingRepeats(text).query
    }

    /// ``parseQuery(_:)``, and the names that came more than once (each once, in order).
    public static func parseQueryNotingRepeats(_ text: Substring) -> (query: [String: String], repeats: [String]) {
        var out: [String: String] = [:]
        var repeats: [String] = []
        for pair in text.utf8.prefix(8192).split(separator: UInt8(ascii: "&")).prefix(64) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = percentDecoded(parts[0]), !name.isEmpty, let value = parts.count > 1 ? percentDecoded(parts[1]) : "" else { continue }
            if out[name] == nil {
                out[name] = value
            } else if !repeats.contains(name) {
                repeats.append(name)
            }
        }
        return (out, repeats)
    }

    /// Percent-decoding, with `+` as a space unless `plusIsSpace` is false (a path, RFC 3986
    /// §2.1); `nil` for a bad escape or bytes that are not UTF-8.
    public static func percentDecoded(_ bytes: some Collection<UInt8>, plusIsSpace: Bool = true) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        func hex(_ b: UInt8?) -> UInt8? { b.flatMap(RequestParser.hex) }
        while let b = iterator.next() {
            if b == UInt8(ascii: "+"), plusIsSpace {
                out.append(0x20)
            } else if b == UInt8(ascii: "%") {
                guard let high = hex(iterator.next()), let low = hex(iterator.next()) else { return nil }
                out.append(high << 4 | low)
            } else {
                out.append(b)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The media type of `Content-Type`, lower-cased, without parameters or surrounding spaces.
    public var mediaType: String? {
        guard let value = headers["content-type"] else { return nil }
        if value == "application/json" { return value }  // as nearly every client sends it
        var bytes = value.utf8.prefix { $0 != UInt8(ascii: ";") }[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return String(decoding: bytes.map { $0 >= 0x41 && $0 <= 0x5a ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}

/// An HTTP response.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// A label for metrics and the access log (the matched route), set by the router.
    public var route: String?
    /// Why a request was refused, for the access log only (never sent): the reason and its detail.
    public var logDetail: String?

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response with `Cache-Control: no-store` (RFC 6749 §5.1 asks it of token answers).
    public static func json(_ status: Int, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")], body: body)
    }

    /// An HTML page (UTF-8), not cached.
    public static func html(_ status: Int, _ page: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")], body: Array(page.utf8))
    }

    /// A redirect (RFC 9110 §15.4): 303 See Other by default, so the next request is a GET.
    public static func redirect(to location: String, status: Int = 303) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Location", location), ("Cache-Control", "no-store")])
    }
}

extension HTTPRequest {
    /// Whether the client asked for a page rather than JSON: `Accept` names `text/html` and not
    /// `application/json` (what a browser's navigation sends).
    public var wantsHTML: Bool {
        guard let accept = headers["accept"] else { return false }
        return accept.contains("text/html") && !accept.contains("application/json")
    }
}

/// Answers requests. Called on the server's worker threads, concurrently.
public protocol HTTPHandler: Sendable {
    func handle(_ request: HTTPRequest) -> HTTPResponse
    /// The answer to a request whose body is larger than `limit` bytes (413), given the request
    /// without its body: the handler's error format, in the request's kind (JSON or a page).
    func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse
    /// The answer to bytes that are not a request this server reads (RFC 9112): `status` 400 or
    /// 431, `reason` from SignetAPI's list (`malformed`, `headers_too_large`), `detail` for the
    /// log only; `request` when its head could be read. The connection closes after it.
    func unreadable(_ request: HTTPRequest?, status: Int, reason: String, detail: String) -> HTTPResponse
    /// Handles `request` and says whether its answer must wait: with a ``HTTPHold``, the server
    /// sends nothing, and serves its other connections, until the hold's callback runs.
    func handleHeld(_ request: HTTPRequest) -> (HTTPResponse, HTTPHold?)
}

/// Registers a callback that the handler calls once its answer may go: with nil to send the
/// answer it gave, or with the answer to send instead (what it wrote could not be kept).
public typealias HTTPHold = @Sendable (_ release: @escaping @Sendable (HTTPResponse?) -> Void) -> Void

extension HTTPHandler {
    /// No hold: the answer goes as soon as ``handle(_:)`` returns.
    public func handleHeld(_ request: HTTPRequest) -> (HTTPResponse, HTTPHold?) { (handle(request), nil) }

    /// A JSON answer with the reason, for handlers without an error format of their own.
    public func unreadable(_ request: HTTPRequest?, status: Int, reason: String, detail: String) -> HTTPResponse {
        var response = HTTPResponse.json(status, Array(#"{"error":"invalid_request","error_description":"The request cannot be read.","reason":"\#(reason)"}"#.utf8))
        response.logDetail = "\(reason): \(detail)"
        return response
    }

    /// A JSON 413 with the reason `body_too_large`, for handlers without an error format of their own.
    public func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse {
        .json(413, Array(#"{"error":"invalid_request","error_description":"request body larger than \#(limit) bytes","reason":"body_too_large"}"#.utf8))
    }
}

import Foundation
