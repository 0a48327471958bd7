import Foundation
import SignetHTTP
import Testing

/// The HTTP/1.1 request parser (RFC 9112), rule by rule: each refusal has a request that breaks
/// exactly that rule, beside one that keeps it.
@Suite struct RequestParserTests {
    static func parse(_ text: String, maxHead: Int = 1024, maxBody: Int = 64) -> ParsedRequest {
        parse(Array(text.utf8), maxHead: maxHead, maxBody: maxBody)
    }

    static func parse(_ bytes: [UInt8], maxHead: Int = 1024, maxBody: Int = 64) -> ParsedRequest {
        bytes.withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: maxHead, maxBodyBytes: maxBody) }
    }

    static func head(_ text: String) -> RequestHead? {
        if case .request(let head, _, _) = parse(text) { return head }
        return nil
    }

    static func failure(_ text: String, maxHead: Int = 1024, maxBody: Int = 64) -> RequestFailure? {
        if case .failed(let failure, _) = parse(text, maxHead: maxHead, maxBody: maxBody) { return failure }
        return nil
    }

    @Test("a request: method, decoded path, raw query, folded names, repeated fields joined, the bytes it took")
    func plain() throws {
        let text = "POST /api/v2/users/auth0%7C42?q=a%20b&x=1 HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 2\r\n\r\n{}GET"
        guard case .request(let head, let body, let consumed) = Self.parse(text) else { Issue.record("\(Self.parse(text))"); return }
        #expect(head.method == "POST" && head.path == "/api/v2/users/auth0|42" && head.query == "q=a%20b&x=1")
        #expect(head.headers["x-a"] == "1, 2" && head.headers["host"] == "x" && head.keepAlive)
        #expect(body == Array("{}".utf8) && consumed == text.utf8.count - 3)
    }

    @Test("empty lines before the request line are skipped")
    func leadingEmptyLines() {
        #expect(Self.head("\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")?.path == "/")
    }

    @Test("every prefix of two pipelined requests is incomplete or the first request, never a refusal")
    func prefixes() {
        let first = "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
        let chunked = "POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n"
        for stream in [first + chunked, chunked + first] {
            let bytes = Array(stream.utf8)
            for n in 0...bytes.count {
                switch Self.parse(Array(bytes[0..<n])) {
                case .incomplete: continue
                case .request(_, let body, let consumed):
                    #expect(body == Array((stream.hasPrefix("POST /a") ? "abc" : "abcde").utf8))
                    #expect(consumed <= n)
                case .failed(let failure, _): Issue.record("prefix \(n): \(failure)")
                }
            }
        }
    }

    @Test("read resumed over pieces, a buffer gives what it gives in one call, whatever the pieces")
    func resumed() {
        let streams = [
            "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET",
            "\r\nPOST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\nX",
            "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n",
            "GET /d HTTP/1.1\r\nHost: x\nY: 1\r\n\r\n",
            "POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 65\r\n\r\n",
        ]
        for stream in streams {
            let bytes = Array(stream.utf8)
            for step in [1, 2, 3, 7, 16] {
                var progress = ParseProgress()
                var n = 0
                while n < bytes.count {
                    n = min(bytes.count, n + step)
                    let piecewise = Array(bytes[0..<n]).withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: 1024, maxBodyBytes: 64, progress: &progress) }
                    let whole = Self.parse(Array(bytes[0..<n]))
                    #expect(piecewise == whole, "\(stream.debugDescription) in steps of \(step), at \(n): \(piecewise) against \(whole)")
                    if case .incomplete = whole { continue }
                    break
                }
            }
        }
    }

    @Test("chunks already read can leave the buffer mid-body: the rest parses to the same request, and only chunked bodies are touched")
    func compactedChunks() {
        let head = "POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        let stream = head + "1;e=1\r\na\r\n2\r\nbc\r\n3\r\ndef\r\n0\r\nT: 1\r\n\r\nGET"
        let bytes = Array(stream.utf8)
        let whole = Self.parse(bytes)
        guard case .request(_, let wholeBody, let wholeConsumed) = whole else { Issue.record("\(whole)"); return }
        // Compact at every point the body can stop; what follows parses to the same body, and
        // consumes as many bytes less as were dropped.
        for n in head.utf8.count...bytes.count {
            var progress = ParseProgress()
            var input = Array(bytes[0..<n])
            guard case .incomplete = input.withUnsafeBufferPointer({ RequestParser.parse($0, maxHeadBytes: 1024, maxBodyBytes: 64, progress: &progress) }) else { continue }
            let dropped = RequestParser.compactChunks(&input, progress: &progress)
            #expect(Array(input[0..<head.utf8.count]) == Array(head.utf8), "the head stays")
            input += bytes[n...]
            let rest = input.withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: 1024, maxBodyBytes: 64, progress: &progress) }
            guard case .request(_, let body, let consumed) = rest else { Issue.record("at \(n): \(rest)"); continue }
            #expect(body == wholeBody && consumed == wholeConsumed - dropped, "at \(n)")
        }
        // A Content-Length body, a head not yet whole, and the trailers are left as they are.
        for text in ["POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\nabc", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Enc", head + "1\r\na\r\n0\r\nT: 1\r\n"] {
            var progress = ParseProgress()
            var input = Array(text.utf8)
            _ = input.withUnsafeBufferPointer { RequestParser.parse($0, maxHeadBytes: 1024, maxBodyBytes: 64, progress: &progress) }
            #expect(RequestParser.compactChunks(&input, progress: &progress) == 0 && input == Array(text.utf8), "\(text.debugDescription)")
        }
    }

    @Test("a head over the limit is 431, before its end arrives; more than 100 fields is 431")
    func headLimits() {
        let long = "GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "a", count: 1100)
        #expect(Self.failure(long)?.status == 431 && Self.failure(long)?.reason == "headers_too_large")
        #expect(Self.parse("GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "a", count: 900)) == .incomplete(expectsContinue: false))
        // The limit holds the whole head, its last CRLF included: exactly at it is read, a byte over is 431.
        let base = "GET / HTTP/1.1\r\nHost: x\r\nX: "
        let exact = base + String(repeating: "a", count: 1024 - base.utf8.count - 4) + "\r\n\r\n"
        #expect(exact.utf8.count == 1024 && Self.head(exact) != nil)
        #expect(Self.failure(base + String(repeating: "a", count: 1024 - base.utf8.count - 3) + "\r\n\r\n")?.status == 431)
        #expect(Self.parse(String(exact.dropLast())) == .incomplete(expectsContinue: false))
        let many = "GET / HTTP/1.1\r\nHost: x\r\n" + (0..<100).map { "F\($0): 1\r\n" }.joined() + "\r\n"
        #expect(Self.failure(many, maxHead: 4096)?.status == 431)
        let fewer = "GET / HTTP/1.1\r\nHost: x\r\n" + (0..<99).map { "F\($0): 1\r\n" }.joined() + "\r\n"
        #expect({ if case .request = Self.parse(fewer, maxHead: 4096) { true } else { false } }())
    }

    @Test("the request line: three parts, a token method, HTTP/1.1 or 1.0", arguments: [
        "GET /\r\nHost: x\r\n\r\n", "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", "GET / HTTP/1.1 \r\nHost: x\r\n\r\n", "G(T / HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/2.0\r\nHost: x\r\n\r\n", "GET / HTTP/1.10\r\nHost: x\r\n\r\n", "GET / http/1.1\r\nHost: x\r\n\r\n", " GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    ])
    func requestLine(_ text: String) {
        #expect(Self.failure(text)?.status == 400, "\(text.debugDescription)")
        #expect(Self.failure(text)?.reason == "malformed")
    }

    @Test("HTTP/1.0: no Host needed, closes unless keep-alive is asked for; HTTP/1.1: Host required, keeps alive unless close; never two Host lines")
    func versions() {
        #expect(Self.head("GET / HTTP/1.0\r\n\r\n")?.keepAlive == false)
        #expect(Self.head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")?.keepAlive == true)
        #expect(Self.failure("GET / HTTP/1.1\r\n\r\n") == .malformed("an HTTP/1.1 request without Host"))
        #expect(Self.head("GET / HTTP/1.1\r\nHost: x\r\nConnection: foo, close\r\n\r\n")?.keepAlive == false)
        #expect(Self.head("GET / HTTP/1.1\r\nHost: x\r\n\r\n")?.keepAlive == true)
        // One Host line, in either version, even when the two agree (RFC 9112 §3.2).
        #expect(Self.failure("GET / HTTP/1.1\r\nHost: x\r\nhost: y\r\n\r\n") == .malformed("more than one Host"))
        #expect(Self.failure("GET / HTTP/1.0\r\nHost: x\r\nHost: x\r\n\r\n") == .malformed("more than one Host"))
        #expect(Self.head("GET / HTTP/1.0\r\nHost: x\r\n\r\n")?.headers["host"] == "x")
        // A Host value is a host and port, nothing else (RFC 9112 §3.2, RFC 3986 §3.2.2).
        for host in ["a b", "a/b", "u@a", "a\\b", "a\"b", "a?b", "a#b", "\u{e9}.example"] {
            #expect(Self.failure("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n") == .malformed("the Host value is not a host and port"), "\(host.debugDescription)")
        }
        for host in ["login.example.com:8443", "127.0.0.1:8080", "[::1]:8080", "xn--bcher-kva.example", ""] {
            #expect(Self.head("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n")?.headers["host"] == host, "\(host.debugDescription)")
        }
    }

    @Test("lines end with CRLF: a bare LF or a CR alone is refused, in a head and in chunked framing, as soon as it arrives")
    func lineEnds() {
        #expect(Self.failure("GET / HTTP/1.1\nHost: x\r\n\r\n") == .malformed("a line ends with a bare LF"))
        #expect(Self.failure("GET / HTTP/1.1\r\nHost: x\n") == .malformed("a line ends with a bare LF"))
        #expect(Self.failure("GET / HTTP/1.1\r\nHost: x\rY: 1\r\n\r\n") == .malformed("a CR without LF"))
        #expect(Self.failure("GET / HTTP/1.1\rX\r\nHost: x\r\n\r\n") == .malformed("a CR without LF"))
        // Chunk size lines and trailer lines: refused once the lone CR or LF is there, not left
        // waiting for a CRLF that a client ending its lines with LF never sends.
        let head = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        for body in ["2\nab\n0\n\n", "2\n", "\n", "2;x=y\n", "2\rab", "2 \r0"] {
            #expect(Self.failure(head + body) == .malformed("a chunk's size line ends with a bare CR or LF"), "\(body.debugDescription)")
        }
        for body in ["2\r\nab\r\n0\r\nT: 1\n", "2\r\nab\r\n0\r\n\n", "0\r\nT: 1\rU: 2\r\n\r\n"] {
            #expect(Self.failure(head + body) == .malformed("a trailer line ends with a bare CR or LF"), "\(body.debugDescription)")
        }
        #expect(Self.parse(head + "2\r") == .incomplete(expectsContinue: false))
        #expect(Self.parse(head + "2\r\nab\r\n0\r\nT: 1\r") == .incomplete(expectsContinue: false))
        // A chunk's data is bytes, CR and LF among them.
        guard case .request(_, let body, _) = Self.parse(head + "4\r\na\nb\r\r\n0\r\n\r\n") else {
            Issue.record("a chunk holding CR and LF was refused")
            return
        }
        #expect(body == Array("a\nb\r".utf8))
    }

    @Test("header lines: no folding, a token name right before the colon, no control characters in the value")
    func headerLines() {
        #expect(Self.failure("GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n") == .malformed("a header line is folded"))
        #expect(Self.failure("GET / HTTP/1.1\r\nHost: x\r\nX : a\r\n\r\n") == .malformed("a header name is not a token"))
        #expect(Self.failure("GET / HTTP/1.1\r\nHost: x\r\n: a\r\n\r\n") == .malformed("a header line has no name and colon"))
        #expect(Self.failure("GET / HTTP/1.1\r\nHost: x\r\nX\r\n\r\n") == .malformed("a header line has no name and colon"))
        #expect(Self.failure("GET / HTTP/1.1\r\nHost: x\r\nX: a\u{1}b\r\n\r\n") == .malformed("a header value holds a control character"))
        #expect(Self.failure("GET / HTTP/1.1\r\nHost: x\r\nX: a\u{7f}\r\n\r\n") == .malformed("a header value holds a control character"))
        #expect(Self.head("GET / HTTP/1.1\r\nHost: x\r\nX: \t a\tb \t\r\n\r\n")?.headers["x"] == "a\tb")
    }

    @Test("Content-Length: digits only, one value (repeats of it allowed), at most the body cap (413 with the head read)")
    func contentLength() {
        for bad in ["-1", "+1", "1a", "", "0x10", "1 1", "1234567890123456789", "1, 2", "1,", ",1", "1,,1", "\u{0660}"] {
            #expect(Self.failure("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \(bad)\r\n\r\n")?.status == 400, "\(bad)")
        }
        #expect(Self.failure("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab") == .malformed("Content-Length has two values"))
        guard case .request(_, let body, _) = Self.parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2, 2\r\nContent-Length: 2 ,\t002\r\n\r\nab") else {
            Issue.record("repeated equal lengths refused")
            return
        }
        #expect(body == Array("ab".utf8))
        guard case .failed(let failure, let head) = Self.parse("POST /t HTTP/1.1\r\nHost: x\r\nContent-Length: 65\r\n\r\n") else {
            Issue.record("a length over the cap was not refused")
            return
        }
        #expect(failure.status == 413 && failure.reason == "body_too_large" && head?.path == "/t")
        #expect(Self.parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 64\r\n\r\n") == .incomplete(expectsContinue: false))
    }

    @Test("Transfer-Encoding: chunked only, once, never beside Content-Length, never in HTTP/1.0")
    func transferEncoding() {
        #expect(Self.failure("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n") == .malformed("both Content-Length and Transfer-Encoding"))
        for coding in ["gzip", "gzip, chunked", "chunked, chunked", "identity"] {
            #expect(Self.failure("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \(coding)\r\n\r\n")?.status == 400, "\(coding)")
        }
        #expect(Self.failure("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n")?.status == 400)
        #expect(Self.head("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n") != nil)
        // HTTP/1.0 has no transfer codings: faulty framing (RFC 9112 §6.1).
        #expect(Self.failure("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") == .malformed("Transfer-Encoding in an HTTP/1.0 request"))
    }

    @Test("chunked bodies: hexadecimal sizes of at most 8 digits, CRLF after each chunk, the cap over all chunks, bounded trailers")
    func chunks() {
        let head = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(Self.failure(head + "g\r\n") == .malformed("a chunk size is not hexadecimal"))
        #expect(Self.failure(head + "123456789\r\n") == .malformed("a chunk size over 8 hex digits"))
        #expect(Self.failure(head + "2\r\nabX\r\n") == .malformed("a chunk does not end with CRLF"))
        for line in ["1 x", "1 \t1", "1\t=x"] {
            #expect(Self.failure(head + line + "\r\na\r\n0\r\n\r\n") == .malformed("a chunk size is followed by more than an extension"), "\(line.debugDescription)")
        }
        #expect(Self.head(head + "1 \t\r\na\r\n0\r\n\r\n") != nil)
        #expect(Self.failure(head + "2;a=\u{1}\r\nab\r\n0\r\n\r\n") == .malformed("a chunk extension holds a control character"))
        #expect(Self.failure(head + "20\r\n" + String(repeating: "a", count: 32) + "\r\n21\r\n")?.status == 413)
        #expect(Self.failure(head + "0\r\n" + String(repeating: "T: 1\r\n", count: 200))?.status == 431)
        guard case .request(_, let body, _) = Self.parse(head + "A\r\n0123456789\r\n6 ; x=\"y\"\r\nabcdef\r\n0\r\nTrailer: 1\r\n\r\n") else {
            Issue.record("a valid chunked body was refused")
            return
        }
        #expect(body == Array("0123456789abcdef".utf8))
        #expect(Self.head(head + "40\r\n" + String(repeating: "a", count: 64) + "\r\n0\r\n\r\n") != nil)
    }

    @Test("Expect: 100-continue is reported while the body is missing (HTTP/1.1 only); other expectations are ignored")
    func expectContinue() {
        #expect(Self.parse("POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\n") == .incomplete(expectsContinue: true))
        #expect(Self.parse("POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\na") == .incomplete(expectsContinue: true))
        #expect(Self.parse("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n") == .incomplete(expectsContinue: false))
        #expect(Self.parse("POST / HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n") == .incomplete(expectsContinue: false))
    }

    @Test("the target: origin form decoded, absolute form and * accepted; bad escapes, encoded slashes, NUL, non-UTF-8 and stray bytes refused")
    func targets() {
        #expect(Self.head("GET /a%2Db%20c HTTP/1.1\r\nHost: x\r\n\r\n")?.path == "/a-b c")
        #expect(Self.head("GET http://example.com:8080/p?q=1 HTTP/1.1\r\nHost: x\r\n\r\n").map { [$0.path, $0.query ?? "-"] } == ["/p", "q=1"])
        #expect(Self.head("GET HTTPS://example.com HTTP/1.1\r\nHost: x\r\n\r\n")?.path == "/")
        #expect(Self.head("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")?.path == "*")
        #expect(Self.head("GET /?%zz HTTP/1.1\r\nHost: x\r\n\r\n")?.query == "%zz")  // the query is decoded later, pair by pair
        for bad in ["/%", "/%4", "/%zz", "/a%00b", "/%ff", "/%c3%28"] {
            #expect(Self.failure("GET \(bad) HTTP/1.1\r\nHost: x\r\n\r\n") == .malformed("the path has a bad percent escape or is not UTF-8"), "\(bad)")
        }
        // An encoded slash would become a separator once decoded: refused, in either case, anywhere
        // in the path and in the absolute form too; in the query it is data.
        for bad in ["/a%2Fb", "/a%2fb", "/%2F", "/.well-known%2Fjwks.json", "/a/b%2F", "http://x/a%2Fb"] {
            #expect(Self.failure("GET \(bad) HTTP/1.1\r\nHost: x\r\n\r\n") == .malformed("the path holds an encoded slash"), "\(bad)")
        }
        #expect(Self.head("GET /a%252Fb?x=%2F HTTP/1.1\r\nHost: x\r\n\r\n").map { [$0.path, $0.query ?? "-"] } == ["/a%2Fb", "x=%2F"])
        #expect(Self.head("GET /a%2 HTTP/1.1\r\nHost: x\r\n\r\n") == nil)
        #expect(Self.failure("GET relative HTTP/1.1\r\nHost: x\r\n\r\n") == .malformed("the target is not a path"))
        #expect(Self.failure("GET ftp://x/ HTTP/1.1\r\nHost: x\r\n\r\n") == .malformed("the target is not a path"))
        #expect(Self.failure(Array("GET /\u{e9} HTTP/1.1\r\nHost: x\r\n\r\n".utf8)) == .malformed("the target holds a byte a URI cannot"))
    }

    @Test("the query: pairs decoded, a repeated name keeps its first value and is noted once, bad pairs skipped")
    func queryRepeats() {
        let (query, repeats) = HTTPRequest.parseQueryNotingRepeats("a=1&b=x+y&a=2&c&b=%7C&a=3&=z&d=%zz&d=4")
        #expect(query == ["a": "1", "b": "x y", "c": "", "d": "4"])
        #expect(repeats == ["a", "b"])
        #expect(HTTPRequest.parseQueryNotingRepeats("state=s&STATE=t").repeats.isEmpty)  // names are case-sensitive
        // In process, a path with a query is split the same way.
        let request = HTTPRequest(method: "GET", path: "/authorize?x=1&x=2", headers: [:], body: [], remoteAddress: "", requestID: "")
        #expect(request.query == ["x": "1"] && request.queryRepeats == ["x"])
    }

    /// `failure` of raw bytes.
    static func failure(_ bytes: [UInt8]) -> RequestFailure? {
        if case .failed(let failure, _) = parse(bytes) { return failure }
        return nil
    }

    @Test("random bytes and mangled requests never crash the parser, and a request it returns took no more bytes than there were")
    func randomInput() {
        var state: UInt64 = 0x5eed
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let seeds = [
            Array("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc".utf8),
            Array("POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n".utf8),
        ]
        for round in 0..<3000 {
            var bytes = seeds[round % 2]
            for _ in 0..<(1 + Int(next() % 5)) {
                let at = Int(next() % UInt64(bytes.count + 1))
                switch next() % 3 {
                case 0 where at < bytes.count: bytes[at] = UInt8(truncatingIfNeeded: next())
                case 1: bytes.insert(contentsOf: [[13, 10], [10], [0x30], [0x3a], [0x20], [0xff]][Int(next() % 6)], at: at)
                default: bytes.removeSubrange(at..<min(bytes.count, at + Int(next() % 4)))
                }
            }
            if case .request(_, let body, let consumed) = Self.parse(bytes) {
                #expect(consumed <= bytes.count && body.count <= 64)
            }
        }
    }
}
