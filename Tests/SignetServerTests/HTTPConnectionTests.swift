import Foundation
import Glibc
import SignetHTTP
import Testing

/// Signet's HTTP layer over a real socket: the order of pipelined answers, 100 Continue, bodiless
/// answers, the idle timeout, `Connection: close`, and held answers whose client has gone.
@Suite struct HTTPConnectionTests {
    /// Answers with the request's path; `/held/N` holds its answer N milliseconds on another thread;
    /// `/empty` is a 204.
    struct EchoHandler: HTTPHandler {
        func handle(_ request: HTTPRequest) -> HTTPResponse {
            if request.path == "/empty" { return HTTPResponse(status: 204) }
            if request.path == "/split" {
                return HTTPResponse(status: 200, headers: [("Location", "/a\r\nSet-Cookie: x=1"), ("X-Bad\n", "1"), ("X-Nul", "a\u{0}b"), ("X-Ok", "1")],
                                    body: Array("{}".utf8))
            }
            return .json(200, Array("{\"path\":\"\(request.path)\",\"bytes\":\(request.body.count)}".utf8))
        }

        func handleHeld(_ request: HTTPRequest) -> (HTTPResponse, HTTPHold?) {
            let response = handle(request)
            guard request.path.hasPrefix("/held/"), let ms = Int(request.path.dropFirst(6)) else { return (response, nil) }
            return (response, { release in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(ms)) { release(nil) }
            })
        }
    }

    static func server(_ configure: (inout HTTPServer.Configuration) -> Void = { _ in }) throws -> HTTPServer {
        var configuration = HTTPServer.Configuration()
        configuration.port = 0
        configuration.threads = 2
        configure(&configuration)
        let server = HTTPServer(configuration: configuration, handler: EchoHandler(), log: AccessLog(enabled: false))
        try server.start()
        return server
    }

    static func path(_ response: HTTPClient.Response) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) .flatMap { ($0 as? [String: Any])?["path"] as? String }
    }

    @Test("pipelined requests are answered in order, a held one included, on one connection")
    func pipelined() throws {
        let server = try Self.server()
        defer { server.stop() }
        let client = HTTPClient(port: server.port, timeout: 5)
        let requests = ["/one", "/held/200", "/three"].map { "GET \($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined()
        try client.write(Array(requests.utf8))
        let answers = try (0..<3).map { _ in try client.readResponse() }
        #expect(answers.map(Self.path) == ["/one", "/held/200", "/three"])
        #expect(answers.allSatisfy { $0.status == 200 && $0.headers["x-request-id"]?.count == 16 && $0.headers["date"]?.hasSuffix(" GMT") == true })
        #expect(Set(answers.compactMap { $0.headers["x-request-id"] }).count == 3)
    }

    @Test("Expect: 100-continue: 100 Continue first, the answer once the body has come")
    func expectContinue() throws {
        let server = try Self.server()
        defer { server.stop() }
        let client = HTTPClient(port: server.port, timeout: 5)
        try client.write(Array("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n".utf8))
        let interim = try client.readResponse()
        #expect(interim.status == 100)
        try client.write(Array("hello".utf8))
        let answer = try client.readResponse()
        #expect(answer.status == 200 && answer.text.contains("\"bytes\":5"))
    }

    struct ConnectFailed: Error {}

    /// A bare client socket: what the server sends, byte for byte, until it closes.
    final class RawSocket {
        let fd: Int32
        init(port: UInt16) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            var tv = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            let rc = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard rc == 0 else { throw ConnectFailed() }
        }
        deinit { close(fd) }
        func send(_ text: String) { _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
        /// A half-close: nothing more will be sent, and answers can still be read.
        func finish() { _ = shutdown(fd, Int32(SHUT_WR)) }
        /// Everything until the server closes (nil: it did not within the timeout).
        func readToEnd() -> String? {
            var all: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n == 0 { return String(decoding: all, as: UTF8.self) }
                if n < 0 { return nil }
                all += chunk[..<n]
            }
        }
    }

    /// `request` sent as it is to a new server; all it answered until it closed (nil: it did not).
    static func exchange(_ request: String) throws -> String? {
        let server = try Self.server()
        defer { server.stop() }
        let raw = try RawSocket(port: server.port)
        raw.send(request)
        return raw.readToEnd()
    }

    /// The answers to `requests` (each without its "HTTP/1.1 "), which must be `count` before the
    /// server closes.
    static func answers(_ requests: String, count: Int) throws -> [String] {
        let text = try #require(try exchange(requests), "the server did not close after its last answer")
        let parts = text.components(separatedBy: "HTTP/1.1 ").filter { !$0.isEmpty }
        #expect(parts.count == count, "\(text)")
        return parts
    }

    @Test("HEAD gets the fields and Content-Length without the body; a 204 has neither; Connection: close closes after its answer")
    func bodilessAndClose() throws {
        let parts = try Self.answers("HEAD /h HTTP/1.1\r\nHost: x\r\n\r\nGET /empty HTTP/1.1\r\nHost: x\r\n\r\nGET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /never HTTP/1.1\r\nHost: x\r\n\r\n", count: 3)
        guard parts.count == 3 else { return }
        #expect(parts[0].hasPrefix("200 OK\r\n") && parts[0].contains("Content-Length: 23\r\n") && parts[0].hasSuffix("\r\n\r\n"), "\(parts[0])")
        #expect(parts[1].hasPrefix("204 No Content\r\n") && !parts[1].contains("Content-Length") && parts[1].hasSuffix("\r\n\r\n"), "\(parts[1])")
        #expect(parts[2].hasPrefix("200 OK\r\n") && parts[2].contains("Connection: close\r\n") && parts[2].hasSuffix("{\"path\":\"/last\",\"bytes\":0}"), "\(parts[2])")
    }

    @Test("a client that half-closes after its requests still gets every answer, a held one included, then the connection closes; an unfinished request is dropped")
    func halfClose() throws {
        let server = try Self.server()
        defer { server.stop() }
        let cases: [(String, [String])] = [
            ("GET /one HTTP/1.1\r\nHost: x\r\n\r\n", ["/one"]),
            ("GET /held/150 HTTP/1.1\r\nHost: x\r\n\r\n", ["/held/150"]),
            ("GET /held/100 HTTP/1.1\r\nHost: x\r\n\r\nGET /two HTTP/1.1\r\nHost: x\r\n\r\nGET /held/50 HTTP/1.1\r\nHost: x\r\n\r\n", ["/held/100", "/two", "/held/50"]),
            ("GET /one HTTP/1.1\r\nHost: x\r\n\r\nPOST /cut HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc", ["/one"]),
            ("POST /cut HTTP/1.1\r\nHost: x\r\nContent-Le", []),
        ]
        for (requests, paths) in cases {
            let raw = try RawSocket(port: server.port)
            raw.send(requests)
            raw.finish()
            let text = try #require(raw.readToEnd(), "not closed after \(requests.debugDescription)")
            let answered = text.components(separatedBy: "HTTP/1.1 200 OK").dropFirst().map { part in paths.first { part.contains("\"path\":\"\($0)\"") } ?? "?" }
            #expect(answered == paths, "\(requests.debugDescription): \(text)")
        }
        #expect(try HTTPClient(port: server.port, timeout: 5).send("GET", "/after").status == 200)
    }

    @Test("HTTP/1.0: a connection kept alive is announced with Connection: keep-alive, and one that is not closes after its answer")
    func http10() throws {
        let parts = try Self.answers("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /b HTTP/1.0\r\n\r\nGET /never HTTP/1.0\r\n\r\n", count: 2)
        guard parts.count == 2 else { return }
        #expect(parts[0].contains("\r\nConnection: keep-alive\r\n") && parts[0].hasSuffix("{\"path\":\"/a\",\"bytes\":0}"), "\(parts[0])")
        #expect(parts[1].contains("\r\nConnection: close\r\n") && parts[1].hasSuffix("{\"path\":\"/b\",\"bytes\":0}"), "\(parts[1])")
    }

    @Test("a header field with a CR, LF or NUL in its name or value is not sent (RFC 9110 §5.5): an answer cannot be split")
    func noSplitting() throws {
        let text = try #require(try Self.exchange("GET /split HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n") && text.contains("\r\nX-Ok: 1\r\n") && text.hasSuffix("\r\n\r\n{}"), "\(text)")
        #expect(!text.contains("Set-Cookie") && !text.contains("Location") && !text.contains("X-Bad") && !text.contains("X-Nul"), "\(text)")
    }

    @Test("a connection with nothing coming or going is closed after the idle timeout; a busy one is not")
    func idleTimeout() throws {
        let server = try Self.server { $0.idleTimeout = 1 }
        defer { server.stop() }
        let idle = HTTPClient(port: server.port, timeout: 5)
        let busy = HTTPClient(port: server.port, timeout: 5)
        #expect(try idle.send("GET", "/a").status == 200)
        let start = Date()
        while Date().timeIntervalSince(start) < 1.8 {
            #expect(try busy.send("GET", "/b").status == 200)
            usleep(100_000)
        }
        // The busy one still answers; the idle one was closed (the read sees its end at once).
        #expect(try busy.send("GET", "/c").status == 200)
        #expect(idle.isClosedByPeer())
    }

    @Test("a Content-Length over the cap is answered 413 before the body, and the answer survives the body that still comes")
    func earlyRefusal() throws {
        let server = try Self.server { $0.maxBodyBytes = 1024 }
        defer { server.stop() }
        let client = HTTPClient(port: server.port, timeout: 5)
        try client.write(Array("POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n".utf8))
        for _ in 0..<20 { try? client.write([UInt8](repeating: 0x61, count: 16 * 1024)) }
        let answer = try client.readResponse()
        #expect(answer.status == 413 && answer.headers["connection"] == "close" && answer.text.contains("body_too_large"))
    }

    @Test("a body sent in 1-byte chunks, its framing six times its size: read whole under the cap, 413 past it, never cut off")
    func tinyChunks() throws {
        let server = try Self.server()
        defer { server.stop() }
        let cap = HTTPServer.Configuration().maxBodyBytes
        for (size, status) in [(cap - 1000, 200), (cap + 1000, 413)] {
            let client = HTTPClient(port: server.port, timeout: 10)
            try client.write(Array("POST /tiny HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
            let chunk = Array("1\r\na\r\n".utf8)
            var sent = 0
            while sent < size {
                let n = min(4096, size - sent)
                do { try client.write(Array((0..<n).map { _ in chunk }.joined())) } catch { break }  // closed after a 413
                sent += n
            }
            try? client.write(Array("0\r\n\r\n".utf8))
            let answer = try client.readResponse()
            #expect(answer.status == status, "\(size) bytes: \(answer.status) \(answer.text)")
            if status == 200 { #expect(answer.text == "{\"path\":\"/tiny\",\"bytes\":\(size)}") } else { #expect(answer.text.contains("body_too_large")) }
        }
    }

    @Test("clients that leave while their answers are held: the answers are dropped, no other connection gets one, the server goes on")
    func goneWhileHeld() throws {
        let server = try Self.server()
        defer { server.stop() }
        for round in 0..<20 {
            // Requests whose answers are held 50 ms, their clients gone at once; meanwhile new
            // connections, which may reuse the gone ones' descriptor numbers, ask for their own.
            for _ in 0..<5 {
                let leaving = HTTPClient(port: server.port, timeout: 1)
                try leaving.write(Array("GET /held/50 HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                leaving.close()
            }
            let fresh = HTTPClient(port: server.port, timeout: 5)
            let answer = try fresh.send("GET", "/fresh/\(round)")
            #expect(Self.path(answer) == "/fresh/\(round)")
            usleep(60_000)
            #expect(try fresh.send("GET", "/again/\(round)").text.contains("/again/\(round)"))
            fresh.close()
        }
        #expect(eventually { server.openConnections == 0 && server.requestsInFlight == 0 }, "\(server.openConnections) open, \(server.requestsInFlight) in flight")
    }
}
