/// The parts of a request head that the server acts on (RFC 9112 §3, §5).
package struct RequestHead: Sendable {
    package var method: String
    /// The target's path, percent-decoded (RFC 3986 §2.1), without the query.
    package var path: String
    /// The query string as sent (after `?`), if any.
    package var query: String?
    /// Header values by lower-cased name; a repeated field's values joined with ", " (RFC 9110 §5.3).
    package var headers: [String: String]
    /// Whether the connection stays open after the answer (RFC 9112 §9.3).
    package var keepAlive: Bool
    /// An HTTP/1.0 request, whose client keeps a connection open only when the answer says so
    /// (`Connection: keep-alive`, RFC 9112 §C.2.2).
    package var http10 = false
}

/// Why a request cannot be read: the answer's status and reason (SignetAPI's list), and a detail
/// for the log. The connection is closed after the answer.
package struct RequestFailure: Error, Equatable, Sendable {
    package let status: Int
    package let reason: String
    package let detail: String

    package static func malformed(_ detail: String) -> RequestFailure { RequestFailure(status: 400, reason: "malformed", detail: detail) }
}

/// What the bytes at the start of a connection's buffer hold.
package enum ParsedRequest: Equatable {
    /// Not a whole request yet. `expectsContinue`: the head is whole and asks for
    /// `100 Continue` before the client sends its body (RFC 9110 §10.1.1).
    case incomplete(expectsContinue: Bool)
    /// Unreadable or over a limit; `head` when the head itself was read (a body over the cap).
    case failed(RequestFailure, head: RequestHead?)
    /// A whole request, its body (de-chunked) and how many bytes of the buffer it took.
    case request(RequestHead, body: [UInt8], consumed: Int)

    package static func == (a: ParsedRequest, b: ParsedRequest) -> Bool {
        switch (a, b) {
        case let (.incomplete(x), .incomplete(y)): x == y
        case let (.failed(x, _), .failed(y, _)): x == y
        case let (.request(h1, b1, c1), .request(h2, b2, c2)): h1.method == h2.method && h1.path == h2.path && b1 == b2 && c1 == c2
        default: false
        }
    }
}

/// How far ``RequestParser`` got in a buffer that did not hold a whole request yet.
package struct ParseProgress {
    /// Bytes searched for the end of the head without finding it.
    var scanned = 0
    /// The head once read, its framing, and where its body starts.
    var head: RequestHead?
    var framing = RequestParser.Framing()
    var bodyStart = 0
    /// A chunked body: where the next chunk or trailer line starts, the body so far, the trailer
    /// bytes so far, and whether the last chunk has come.
    var chunkAt = 0
    var body: [UInt8] = []
    var trailers = 0
    var inTrailers = false

    package init() {}
}

/// HTTP/1.1 request parsing (RFC 9112), strict and bounded: the head within `maxHeadBytes`, the
/// body within `maxBodyBytes`, lines ended by CRLF only, no obsolete line folding, no white space
/// before a field's colon, one `Content-Length` (or repeats of one value), never both
/// `Content-Length` and `Transfer-Encoding`, and `chunked` as the only transfer coding: the rules
/// that keep a proxy in front and this server from reading different requests from one stream
/// (RFC 9112 §6.3, §11.2). Pure: the same bytes always give the same result, read in one call
/// or resumed over their pieces.
package enum RequestParser {
    /// One whole buffer, from the start.
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maxHeadBytes: Int, maxBodyBytes: Int) -> ParsedRequest {
        var progress = ParseProgress()
        return parse(bytes, maxHeadBytes: maxHeadBytes, maxBodyBytes: maxBodyBytes, progress: &progress)
    }

    /// The same, resumed where `progress` says the last call on a shorter buffer with the same
    /// start left off, so that a request arriving in many pieces is read in time linear in its
    /// size. Reset `progress` when the buffer's start changes (a request was taken from it).
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maxHeadBytes: Int, maxBodyBytes: Int, progress: inout ParseProgress) -> ParsedRequest {
        if progress.head == nil {
            // RFC 9112 §2.2: empty lines before a request line are ignored (a few, not a stream of them).
            var start = 0
            while start + 1 < bytes.count, start < 8, bytes[start] == 13, bytes[start + 1] == 10 { start += 2 }
            let scanned = progress.scanned
            progress.scanned = bytes.count
            guard let end = headEnd(bytes, from: max(start, scanned - 3), limit: start + maxHeadBytes) else {
                if bytes.count - start >= maxHeadBytes {
                    return .failed(RequestFailure(status: 431, reason: "headers_too_large", detail: "request line and headers over \(maxHeadBytes) bytes"), head: nil)
                }
                // A request line that cannot become valid is refused before its head is whole.
                if let failure = earlyFailure(bytes, from: start, newFrom: max(start, scanned - 1)) { return .failed(failure, head: nil) }
                return .incomplete(expectsContinue: false)
            }
            switch readHead(bytes, from: start, to: end) {
            case .success(let (head, framing)):
                progress.head = head
                progress.framing = framing
                progress.bodyStart = end + 4
                progress.chunkAt = end + 4
            case .failure(let failure):
                return .failed(failure, head: nil)
            }
        }
        let head = progress.head!
        let bodyStart = progress.bodyStart
        switch progress.framing.kind {
        case .none:
            return .request(head, body: [], consumed: bodyStart)
        case .length(let length):
            if length > maxBodyBytes {
                return .failed(RequestFailure(status: 413, reason: "body_too_large", detail: "Content-Length \(length) over \(maxBodyBytes)"), head: head)
            }
            guard bytes.count - bodyStart >= length else { return .incomplete(expectsContinue: progress.framing.expectsContinue) }
            return .request(head, body: Array(UnsafeBufferPointer(rebasing: bytes[bodyStart..<(bodyStart + length)])), consumed: bodyStart + length)
        case .chunked:
            switch dechunk(bytes, progress: &progress, maxBodyBytes: maxBodyBytes, maxTrailerBytes: maxHeadBytes) {
            case .incomplete: return .incomplete(expectsContinue: progress.framing.expectsContinue)
            case .failed(let failure): return .failed(failure, head: head)
            case .done(let consumed): return .request(head, body: progress.body, consumed: consumed)
            }
        }
    }

    /// The index of the CRLFCRLF that ends the head, which must end at or before `limit`.
    static func headEnd(_ p: UnsafeBufferPointer<UInt8>, from start: Int, limit: Int) -> Int? {
        let last = min(p.count, limit) - 4
        var i = start
        while i <= last {
            if p[i] == 13, p[i + 1] == 10, p[i + 2] == 13, p[i + 3] == 10 { return i }
            i += 1
        }
        return nil
    }

    /// A failure visible in an unfinished head: a method that is not a token (within its first
    /// 64 bytes), a bare LF (looked for from `newFrom`, the bytes not seen before).
    static func earlyFailure(_ p: UnsafeBufferPointer<UInt8>, from start: Int, newFrom: Int) -> RequestFailure? {
        if p.count - start == 1, p[start] == 13 { return nil }  // the first half of an empty line
        var i = start
        while i < min(p.count, start + 64), p[i] != 32 {
            if !isToken(p[i]) { return .malformed("the method is not a token") }
            i += 1
        }
        for j in newFrom..<p.count where p[j] == 10 && (j == start || p[j - 1] != 13) { return .malformed("a line ends with a bare LF") }
        return nil
    }

    struct Framing {
        enum Kind { case none, length(Int), chunked }
        var kind: Kind = .none
        var expectsContinue = false
    }

    // MARK: the head

    static func readHead(_ p: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Result<(RequestHead, Framing), RequestFailure> {
        for i in start..<end where p[i] == 10 && (i == start || p[i - 1] != 13) { return .failure(.malformed("a line ends with a bare LF")) }
        // The request line: method SP request-target SP HTTP-version (RFC 9112 §3).
        var lineEnd = start
        while lineEnd < end, p[lineEnd] != 13 { lineEnd += 1 }
        var sp1 = start
        while sp1 < lineEnd, p[sp1] != 32 { sp1 += 1 }
        var sp2 = sp1 + 1
        while sp2 < lineEnd, p[sp2] != 32 { sp2 += 1 }
        guard lineEnd == end || p[lineEnd + 1] == 10 else { return .failure(.malformed("a CR without LF")) }
        guard sp1 > start, sp1 < lineEnd, sp2 < lineEnd, sp2 > sp1 + 1 else { return .failure(.malformed("the request line is not method, target and version")) }
        for i in start..<sp1 where !isToken(p[i]) { return .failure(.malformed("the method is not a token")) }
        let version = UnsafeBufferPointer(rebasing: p[(sp2 + 1)..<lineEnd])
        guard version.count == 8, version.starts(with: "HTTP/1.".utf8), version[7] == UInt8(ascii: "1") || version[7] == UInt8(ascii: "0") else {
            return .failure(.malformed("only HTTP/1.1 and HTTP/1.0 are spoken here"))
        }
        let http11 = version[7] == UInt8(ascii: "1")
        let method = String(decoding: UnsafeBufferPointer(rebasing: p[start..<sp1]), as: UTF8.self)
        let target: (path: String, query: String?)
        switch readTarget(UnsafeBufferPointer(rebasing: p[(sp1 + 1)..<sp2])) {
        case .success(let t): target = t
        case .failure(let failure): return .failure(failure)
        }
        var headers = [String: String](minimumCapacity: 8)
        var framing = Framing()
        var contentLength: Int?
        var chunked = false
        var connection = ""
        var fields = 0
        var at = lineEnd + 2
        while at < end {
            var eol = at
            while eol < end, p[eol] != 13 { eol += 1 }
            guard eol == end || p[eol + 1] == 10 else { return .failure(.malformed("a CR without LF")) }
            fields += 1
            guard fields <= 100 else { return .failure(RequestFailure(status: 431, reason: "headers_too_large", detail: "more than 100 header fields")) }
            // RFC 9112 §5.2: a line starting with white space is obsolete folding; refuse it.
            guard p[at] != 32, p[at] != 9 else { return .failure(.malformed("a header line is folded")) }
            var colon = at
            while colon < eol, p[colon] != UInt8(ascii: ":") {
                guard isToken(p[colon]) else { return .failure(.malformed("a header name is not a token")) }
                colon += 1
            }
            guard colon < eol, colon > at else { return .failure(.malformed("a header line has no name and colon")) }
            var vs = colon + 1
            while vs < eol, p[vs] == 32 || p[vs] == 9 { vs += 1 }
            var ve = eol
            while ve > vs, p[ve - 1] == 32 || p[ve - 1] == 9 { ve -= 1 }
            for i in vs..<ve where p[i] == 0 || p[i] == 10 || p[i] == 127 || (p[i] < 32 && p[i] != 9) {
                return .failure(.malformed("a header value holds a control character"))
            }
            let name = String(unsafeUninitializedCapacity: colon - at) { out in
                for k in at..<colon {
                    let b = p[k]
                    out[k - at] = b >= 65 && b <= 90 ? b | 0x20 : b
                }
                return colon - at
            }
            let value = String(decoding: UnsafeBufferPointer(rebasing: p[vs..<ve]), as: UTF8.self)
            switch name {
            case "content-length":
                // RFC 9112 §6.3: a list of one repeated value is that value; anything else is refused.
                var item = vs
                while item <= ve {
                    var comma = item
                    while comma < ve, p[comma] != UInt8(ascii: ",") { comma += 1 }
                    guard let n = digits(p, item, comma) else { return .failure(.malformed("Content-Length is not a number")) }
                    if let seen = contentLength, seen != n { return .failure(.malformed("Content-Length has two values")) }
                    contentLength = n
                    item = comma + 1
                }
            case "transfer-encoding":
                // Only `chunked`, once, as the whole coding: anything else is a body this server
                // cannot frame the way a proxy might (RFC 9112 §6.1).
                guard !chunked, value.lowercased() == "chunked" else { return .failure(.malformed("the only transfer coding accepted is chunked, once")) }
                chunked = true
            case "expect":
                // Other expectations are ignored, as RFC 9110 §10.1.1 allows.
                if value.lowercased() == "100-continue" { framing.expectsContinue = true }
            case "connection":
                connection = value.lowercased()
            case "host":
                // RFC 9112 §3.2: one Host line; a second one is a 400, whatever its value.
                guard headers["host"] == nil else { return .failure(.malformed("more than one Host")) }
                // uri-host [ ":" port ] (RFC 3986 §3.2.2): nothing else may appear, nor may a value be
                // read two ways (a space, a slash, an @).
                for i in vs..<ve where !isHostByte(p[i]) { return .failure(.malformed("the Host value is not a host and port")) }
            default:
                break
            }
            if let old = headers[name] { headers[name] = old + ", " + value } else { headers[name] = value }
            at = eol + 2
        }
        if chunked, contentLength != nil { return .failure(.malformed("both Content-Length and Transfer-Encoding")) }
        // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 is faulty framing (an HTTP/1.0 hop cannot
        // have sent it), so the request is not read at all.
        if chunked, !http11 { return .failure(.malformed("Transfer-Encoding in an HTTP/1.0 request")) }
        if http11, headers["host"] == nil { return .failure(.malformed("an HTTP/1.1 request without Host")) }
        if chunked {
            framing.kind = .chunked
        } else if let contentLength, contentLength > 0 {
            framing.kind = .length(contentLength)
        }
        if framing.expectsContinue, !http11 { framing.expectsContinue = false }
        let options = connection.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let keepAlive = http11 ? !options.contains("close") : options.contains("keep-alive")
        return .success((RequestHead(method: method, path: target.path, query: target.query, headers: headers, keepAlive: keepAlive, http10: !http11), framing))
    }

    /// The decimal number in `p[from..<to]` between optional white space: 1 to 18 digits, nothing else.
    static func digits(_ p: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Int? {
        var a = from
        var b = to
        while a < b, p[a] == 32 || p[a] == 9 { a += 1 }
        while b > a, p[b - 1] == 32 || p[b - 1] == 9 { b -= 1 }
        guard b > a, b - a <= 18 else { return nil }
        var n = 0
        for i in a..<b {
            guard p[i] >= 0x30, p[i] <= 0x39 else { return nil }
            n = n * 10 + Int(p[i] - 0x30)
        }
        return n
    }

    /// The request target in origin form (`/path?query`), absolute form (`http://host/path`, which
    /// RFC 9112 §3.2.2 requires a server to accept), or `*`; the path percent-decoded.
    static func readTarget(_ t: UnsafeBufferPointer<UInt8>) -> Result<(path: String, query: String?), RequestFailure> {
        for b in t where b <= 32 || b >= 127 { return .failure(.malformed("the target holds a byte a URI cannot")) }
        var slice = t[...]
        if t.count == 1, t[0] == UInt8(ascii: "*") { return .success(("*", nil)) }
        if t.first != UInt8(ascii: "/") {
            // Absolute form: the scheme and authority go; what remains is the path.
            let lower = t.prefix(8).map { $0 | 0x20 }
            let skip = lower.starts(with: "http://".utf8) ? 7 : lower.starts(with: "https://".utf8) ? 8 : -1
            guard skip > 0 else { return .failure(.malformed("the target is not a path")) }
            slice = t[skip...]
            guard let slash = slice.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) else { return .success(("/", nil)) }
            slice = t[slash...]
            if slice.first == UInt8(ascii: "?") { return .success(("/", String(decoding: slice.dropFirst(), as: UTF8.self))) }
        }
        let mark = slice.firstIndex(of: UInt8(ascii: "?"))
        let rawPath = slice[..<(mark ?? slice.endIndex)]
        let query = mark.map { String(decoding: slice[slice.index(after: $0)...], as: UTF8.self) }
        // `%2F` is not `/` (RFC 3986 §2.2): decoded before routing it would become a separator, so
        // `/a%2Fb` would reach `/a/b` past a proxy's rule for that path. No route takes one.
        if hasEncodedSlash(rawPath) { return .failure(.malformed("the path holds an encoded slash")) }
        guard let path = percentDecodedPath(rawPath) else { return .failure(.malformed("the path has a bad percent escape or is not UTF-8")) }
        return .success((path, query))
    }

    /// Whether `bytes` hold `%2F` or `%2f`.
    static func hasEncodedSlash(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        var i = bytes.startIndex
        while i + 2 < bytes.endIndex {
            if bytes[i] == UInt8(ascii: "%"), bytes[i + 1] == UInt8(ascii: "2"), bytes[i + 2] | 0x20 == UInt8(ascii: "f") { return true }
            i += 1
        }
        return false
    }

    /// `%XX` decoded (no `+` rule in a path); nil for a bad escape, a NUL or bytes that are not UTF-8.
    static func percentDecodedPath(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String? {
        guard bytes.contains(UInt8(ascii: "%")) else { return String(decoding: bytes, as: UTF8.self) }
        guard let path = HTTPRequest.percentDecoded(bytes, plusIsSpace: false), !path.utf8.contains(0) else { return nil }
        return path
    }

    static func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: b - 0x30
        case 0x41...0x46: b - 0x37
        case 0x61...0x66: b - 0x57
        default: nil
        }
    }

    /// A byte of RFC 3986's `host` (a registered name, an IPv4 address, an IP literal in brackets)
    /// or of the `:port` after it.
    static func isHostByte(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5a, 0x61...0x7a: true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "%"), UInt8(ascii: "!"), UInt8(ascii: "$"),
             UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","),
             UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
            true
        default: false
        }
    }

    /// RFC 9110 §5.6.2 `tchar`.
    static func isToken(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5a, 0x61...0x7a: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"),
             UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}

import Foundation
