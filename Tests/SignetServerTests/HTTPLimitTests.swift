import SignetAuth
import Foundation
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing
import SignetTestSupport

/// Hostile clients: each gets a 4xx or a closed connection, and the server keeps serving.
@Suite struct HTTPLimitTests {
    @Test("hostile bytes on the wire: every answer is a 4xx (or 503) in JSON with a reason, nothing crashes")
    func hostileRequests() throws {
        let server = try TestServer(.socket)
        var state: UInt64 = 0xbad5eed
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let templates: [[UInt8]] = [
            Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
            Array("POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{\"grant_type\":1}".utf8),
            Array("POST /passkey/challenge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n0\r\n\r\n".utf8),
        ]
        var answered = 0
        for round in 0..<120 {
            var bytes = templates[round % templates.count]
            // Flip, insert or cut bytes at random places: broken request lines, headers, lengths, chunks.
            for _ in 0..<(1 + Int(next() % 6)) {
                let at = Int(next() % UInt64(max(1, bytes.count)))
                switch next() % 4 {
                case 0: bytes[at] = UInt8(truncatingIfNeeded: next())
                case 1: bytes.insert(contentsOf: [UInt8](repeating: UInt8(truncatingIfNeeded: next()), count: Int(next() % 40)), at: at)
                case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int(next() % 8)))
                default: bytes.insert(contentsOf: Array(["\r\n", ":", " ", "\0", "-1", "99999999999999999999"][Int(next() % 6)].utf8), at: at)
                }
            }
            let client = HTTPClient(port: server.port, timeout: 0.15)
            try client.write(bytes)
            if let response = try? client.readResponse() {
                answered += 1
                // The parser's refusals and the service's answers alike: JSON, and a reason for every error.
                #expect(response.headers["content-type"] == "application/json", "\(response.status) \(response.text)")
                if response.status >= 400 {
                    #expect((400..<500).contains(response.status) || response.status == 503, "\(response.status) \(response.text)")
                    #expect((try? StrictJSON().parse(response.body))?["reason"]?.string != nil, "\(response.text)")
                }
            }
            client.close()
        }
        #expect(answered > 30)
        #expect(try server.get("/healthz").status == 200)
        #expect(try server.post("/passkey/challenge", .object(["client_id": .string("app")])).status == 200)
    }

    @Test("access-log timestamps agree with Foundation's calendar from 1970 to 2200, leap days included")
    func accessLogTimestamps() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var instants = [0, 951_782_400, 951_868_799, 1_709_164_800, 4_102_444_799, 4_107_542_400, 7_258_118_399]
        var state: UInt64 = 0x5eed
        for _ in 0..<2000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            instants.append(Int(state >> 33) % 7_258_118_400)
        }
        for seconds in instants {
            var out: [UInt8] = []
            AccessLog.timestamp(seconds: seconds, milliseconds: 7, into: &out)
            #expect(String(decoding: out, as: UTF8.self) == formatter.string(from: Date(timeIntervalSince1970: Double(seconds) + 0.007)), "\(seconds)")
        }
    }

    @Test("a request's access-log line is the line the general writer makes of the same fields")
    func accessLogRequestLine() throws {
        let url = Scratch.directory.appendingPathComponent("signet-log-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: url) }
        let log = AccessLog(output: try FileHandle(forWritingTo: url), flushInterval: 3600)
        let cases: [(String, String, String, String, Int, Double, String, Int)] = [
            ("0123456789abcdef", "POST", "/oauth/token", "/oauth/token", 200, 1.2345, "127.0.0.1", 1408),
            ("x", "GET", "/a\"b\\c\u{01}\u{7f}é", "", 404, 0, "::1", 0),
            ("", "DELETE", "/me/passkeys/{id}", "/me/passkeys/{id}", 409, 12_345.0005, "2001:db8::1", Int.max),
        ]
        for c in cases {
            log.request(id: c.0, method: c.1, path: c.2, route: c.3, status: c.4, ms: c.5, remote: c.6, bytesIn: c.7)
            log.write([("msg", .string("request")), ("request_id", .string(c.0)), ("method", .string(c.1)), ("path", .string(c.2)),
                       ("route", .string(c.3)), ("status", .int(c.4)), ("ms", .double(c.5)), ("remote", .string(c.6)), ("bytes_in", .int(c.7))])
        }
        log.flush()
        // Each pair of lines is the same after `{"ts":"`, the timestamp (24 characters) and `"`.
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map { String($0.dropFirst(8 + 24)) }
        #expect(lines.count == 6)
        for pair in stride(from: 0, to: lines.count, by: 2) { #expect(lines[pair] == lines[pair + 1]) }
        #expect(try StrictJSON().parse(Array(("{\"ts\":\"x\"" + lines[2]).utf8))["path"] == .string(cases[1].2))
    }

    @Test("a header is found by its name in any case (the parser keeps names in lower case)")
    func headerLookup() {
        let request = HTTPRequest(method: "GET", path: "/", headers: ["user-agent": "Bank/1", "x-forwarded-for": "203.0.113.7"], body: [], remoteAddress: "", requestID: "")
        #expect(request.header("user-agent") == "Bank/1" && request.header("User-Agent") == "Bank/1" && request.header("USER-AGENT") == "Bank/1")
        #expect(request.header("X-Forwarded-For") == "203.0.113.7" && request.header("x-forwarded-for") == "203.0.113.7")
        #expect(request.header("dpop") == nil && request.header("DPoP") == nil && request.header("") == nil)
    }

    @Test("the media type: lower-cased, without parameters or surrounding blanks")
    func mediaTypes() {
        func type(_ value: String?) -> String? {
            HTTPRequest(method: "POST", path: "/", headers: value.map { ["content-type": $0] } ?? [:], body: [], remoteAddress: "", requestID: "").mediaType
        }
        #expect(type("application/json") == "application/json")
        #expect(type("Application/JSON; charset=utf-8") == "application/json")
        #expect(type(" \tapplication/x-www-form-urlencoded ;charset=UTF-8") == "application/x-www-form-urlencoded")
        #expect(type("text/plain") == "text/plain")
        #expect(type("") == "" && type(nil) == nil)
    }

    @Test("header names are folded to lower case byte by byte; a name that is not a token is refused")
    func headerNames() {
        for name in ["Content-Type", "CONTENT-LANGUAGE", "x-request-id", "Authorization", "A-Z_0-9!#$%&'*+.^`|~"] {
            let parsed = RequestParserTests.parse("GET / HTTP/1.1\r\nHost: x\r\n\(name): v\r\n\r\n")
            guard case .request(let head, _, _) = parsed else {
                Issue.record("\(name): \(parsed)")
                continue
            }
            #expect(head.headers[String(name.unicodeScalars.map { Character($0).lowercased() }.joined())] == "v", "\(name)")
        }
        for name in ["A-Z@", "X-\u{dc}n\u{ef}code", "a b", "x[y]", "{z}"] {
            #expect(RequestParserTests.parse("GET / HTTP/1.1\r\nHost: x\r\n\(name): v\r\n\r\n") == .failed(.malformed("a header name is not a token"), head: nil), "\(name)")
        }
    }

    @Test("the deadline: a connection whose clock restarted after the sweeper read the time is not past it")
    func deadlineArithmetic() {
        #expect(!HTTPServer.pastDeadline(now: 1_000, since: 1_001, limit: 10))
        #expect(!HTTPServer.pastDeadline(now: 1_000, since: 990, limit: 10))
        #expect(HTTPServer.pastDeadline(now: 1_000, since: 989, limit: 10))
        #expect(HTTPServer.pastDeadline(now: .max, since: 0, limit: 10))
    }

    @Test("the access log writes whole lines in order: in batches, then the rest on flush; request ids never repeat")
    func accessLogBatches() throws {
        let url = Scratch.directory.appendingPathComponent("signet-log-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: url) }
        let log = AccessLog(output: try FileHandle(forWritingTo: url), flushInterval: 3600)
        let odd = "a\"\\\u{01}\u{7f}é"
        func big(_ i: Int) -> Int { i % 3 == 0 ? Int.max - i : i % 3 == 1 ? Int.min + i : -i * 1_000_003 }
        for i in 0..<1000 {
            log.write([("n", .int(i)), ("s", .string(odd)), ("ms", .double(1.0005)), ("big", .int(big(i))), ("plain", .string("/p/\(i)"))])
        }
        // About 160 bytes a line: the first 32 KiB batches are out, the tail waits for a flush.
        let early = try Data(contentsOf: url)
        #expect(early.count >= 32 * 1024 && early.last == UInt8(ascii: "\n"))
        log.flush()
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1000)
        #expect(early.count < lines.reduce(0) { $0 + $1.utf8.count + 1 })
        for (i, line) in lines.enumerated() {
            let fields = try StrictJSON().parse(Array(line.utf8))
            #expect(fields["n"] == .int(i) && fields["s"] == .string(odd) && fields["ms"] == .number("1.001"))
            #expect(fields["big"] == .number(String(big(i))) && fields["plain"] == .string("/p/\(i)"))
            #expect(fields["ts"]?.string?.count == 24)
        }

        let server = try TestServer(.socket)
        let client = server.client()
        var ids = Set<String>()
        for _ in 0..<200 {
            let id = try #require(try client.send("GET", "/healthz").headers["x-request-id"])
            #expect(id.count == 16 && id.allSatisfy(\.isHexDigit))
            ids.insert(id)
        }
        #expect(ids.count == 200)
    }

    @Test("a chunked body past the cap is refused with 413")
    func chunked() throws {
        let server = try TestServer(.socket)
        let client = server.client()
        try client.write(Array("POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
        let chunk = [UInt8](repeating: 0x20, count: 16 * 1024)
        var answered: HTTPClient.Response?
        for _ in 0..<8 {
            do {
                try client.write(Array(String(chunk.count, radix: 16).utf8) + [13, 10] + chunk + [13, 10])
            } catch {
                break  // the server may close once it has answered
            }
        }
        try? client.write(Array("0\r\n\r\n".utf8))
        answered = try client.readResponse()
        #expect(answered?.status == 413)
        #expect(try server.get("/healthz").status == 200)
    }

    @Test("request headers past the connection's memory are refused with 431")
    func hugeHeaders() throws {
        let server = try TestServer(.socket)
        let client = server.client()
        let response = try client.send("GET", "/healthz", headers: [("X-Filler", String(repeating: "a", count: 40 * 1024))])
        #expect(response.status == 431)
        #expect(try server.get("/healthz").status == 200)
    }

    @Test("a client that trickles its request is cut off at the request deadline")
    func slowloris() throws {
        let server = try TestServer(.socket) { $0.requestDeadline = 1; $0.idleTimeout = 30 }
        let client = server.client()
        let request = Array("POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n".utf8)
        let start = Date()
        var cut = false
        // One byte every 100 ms would take longer than the deadline: the server must close first.
        for byte in request + [UInt8](repeating: 0x20, count: 50) {
            do {
                try client.write([byte])
            } catch {
                cut = true
                break
            }
            usleep(100_000)
            if Date().timeIntervalSince(start) > 6 { break }
        }
        if !cut { cut = client.isClosedByPeer() }
        #expect(cut)
        #expect(Date().timeIntervalSince(start) < 4)
        #expect(try server.get("/healthz").status == 200)
    }

    /// A handler slower than the request deadline: the server, not the client, is slow.
    struct SlowHandler: HTTPHandler {
        let seconds: Double
        func handle(_ request: HTTPRequest) -> HTTPResponse {
            Thread.sleep(forTimeInterval: seconds)
            return .json(503, Array(#"{"reason":"database_unavailable"}"#.utf8))
        }
    }

    @Test("a handler slower than the deadline still answers: the deadline bounds the client, never the server's own work (the PostgreSQL fault test's closed connection)")
    func slowHandlerAnswers() throws {
        var configuration = HTTPServer.Configuration()
        configuration.port = 0
        configuration.requestDeadline = 1
        configuration.threads = 2
        let server = HTTPServer(configuration: configuration, handler: SlowHandler(seconds: 1.6), log: AccessLog(enabled: false))
        try server.start()
        defer { server.stop() }
        let answered = try HTTPClient(port: server.port, timeout: 5).send("GET", "/slow")
        #expect(answered.status == 503 && answered.text.contains("database_unavailable"))
    }

    @Test("connections per IP are capped; the rest are refused, and served again once others close")
    func perIPLimit() throws {
        let server = try TestServer(.socket) { $0.maxConnectionsPerIP = 4 }
        let held = (0..<4).map { _ in server.client() }
        for client in held { _ = try client.send("GET", "/healthz") }
        let extra = server.client()
        #expect(throws: (any Error).self) { try extra.send("GET", "/healthz") }
        for client in held { client.close() }
        #expect(eventually { try server.client().send("GET", "/healthz").status == 200 })
    }

    @Test("keep-alive: many requests on one connection")
    func keepAlive() throws {
        let server = try TestServer(.socket)
        let client = server.client()
        for _ in 0..<50 { #expect(try client.send("GET", "/healthz").status == 200) }
        #expect(server.app.server.openConnections >= 1)
    }

    @Test("garbage on the wire gets 400 and the server keeps serving")
    func garbage() throws {
        let server = try TestServer(.socket)
        let client = server.client()
        try client.write(Array("THIS IS NOT HTTP\r\n\r\n".utf8))
        // An answer must come, and it must be 400: a closed connection without one fails here.
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(try server.get("/healthz").status == 200)
    }

    @Test("one address holding its whole cap (128 of 4,096 by default) cannot starve another: the rest are refused, others are served")
    func abusiveAddress() throws {
        let server = try TestServer(.socket)
        #expect(server.app.configuration.maxConnectionsPerIP == 128)
        var held: [HTTPClient] = []
        var refused = 0
        for _ in 0..<160 {
            let client = HTTPClient(port: server.port, timeout: 2, source: "127.0.0.2")
            if (try? client.send("GET", "/healthz").status) == 200 { held.append(client) } else { refused += 1 }
        }
        #expect(held.count == 128 && refused == 32, "held \(held.count), refused \(refused)")
        // Another address is served at once, while the first keeps all 128 open.
        let start = Date()
        for _ in 0..<20 { #expect(try HTTPClient(port: server.port, timeout: 2, source: "127.0.0.3").send("GET", "/healthz").status == 200) }
        #expect(Date().timeIntervalSince(start) < 2)
        for client in held { client.close() }
    }

}
