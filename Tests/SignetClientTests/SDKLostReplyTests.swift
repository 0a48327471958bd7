import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Glibc
import SignetAPI
import SignetClient
import SignetHTTP
import SignetSoftware
import Testing

/// A request that gets no answer at all (the server closed the connection under it, "Empty reply
/// from server"): the SDK sends a GET once more, since repeating it is safe, and never a change
/// (POST, PATCH, DELETE), which the server may have acted on.
@Suite struct SDKLostReplyTests {
    @Test("a GET closed without a byte of answer is sent once more and answers; two in a row are unreachable; a change is never sent twice")
    func resent() async throws {
        let server = try ServerProcess()
        let proxy = try ClosingProxy(upstream: server.port)
        let tokens = FileTokenStore(url: server.directory.appendingPathComponent("tokens-\(UUID().uuidString).json"))
        let client = SignetClient(baseURL: URL(string: "http://127.0.0.1:\(proxy.port)")!, clientID: "dev",
                                  passkeys: SoftwarePasskeyProvider(authenticator: SoftwareAuthenticator(), origin: server.origin), tokens: tokens)
        try await client.signUp(email: "lost-reply@signet.test")

        // Closed before it reached the server: the second sending answers.
        proxy.close(next: 1, of: "GET", forwardFirst: false)
        #expect(try await client.passkeys().count == 1)
        #expect(proxy.arrivals("GET /me/passkeys") == 2)
        // Closed after the server answered it (the answer lost on the way): the same.
        proxy.close(next: 1, of: "GET", forwardFirst: true)
        #expect(try await client.sessionList().sessions.count == 1)
        #expect(proxy.arrivals("GET /me/sessions") == 2 && proxy.forwarded("GET /me/sessions") == 2)
        // Once only: a second lost answer is the network's failure to report.
        proxy.close(next: 2, of: "GET", forwardFirst: false)
        await #expect { _ = try await client.passkeys() } throws: { ($0 as? SignetError)?.code == .unreachable }
        #expect(proxy.arrivals("GET /me/passkeys") == 4)
        // A change that lost its answer is not repeated: the server acted on it.
        proxy.close(next: 1, of: "PATCH", forwardFirst: true)
        await #expect { try await client.setName("Ada") } throws: { ($0 as? SignetError)?.code == .unreachable }
        #expect(proxy.arrivals("PATCH /me") == 1 && proxy.forwarded("PATCH /me") == 1)
        #expect(try await client.userInfo().name == "Ada")
    }
}

/// A loopback proxy to a test server, one request a connection, that can close a connection
/// without answering: before forwarding its request, or after (the answer lost on the way back).
final class ClosingProxy: @unchecked Sendable {
    let fd: Int32
    let port: UInt16
    let upstream: UInt16
    private let lock = NSLock()
    private var closing: [String: (count: Int, forwardFirst: Bool)] = [:]
    private var seen: [String] = []
    private var sent: [String] = []

    init(upstream: UInt16) throws {
        guard let (listener, port) = Loopback.bind() else { throw HTTPClient.Failure(description: "no loopback port") }
        fd = listener
        self.port = port
        self.upstream = upstream
        listen(listener, 16)
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 { return }
                Thread.detachNewThread { self.serve(client) }
            }
        }
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }

    /// The next `count` requests of `method` are closed without an answer.
    func close(next count: Int, of method: String, forwardFirst: Bool) { lock.withLock { closing[method] = (count, forwardFirst) } }
    /// How many requests `line` ("GET /me") names reached the proxy, and the server.
    func arrivals(_ line: String) -> Int { lock.withLock { seen.filter { $0 == line }.count } }
    func forwarded(_ line: String) -> Int { lock.withLock { sent.filter { $0 == line }.count } }

    private func serve(_ client: Int32) {
        defer { Glibc.close(client) }
        guard let (method, path, headers, body) = Self.read(client) else { return }
        let line = "\(method) \(path.split(separator: "?").first.map(String.init) ?? path)"
        let rule = lock.withLock { () -> (close: Bool, forwardFirst: Bool) in
            seen.append(line)
            guard let armed = closing[method], armed.count > 0 else { return (false, false) }
            closing[method] = (armed.count - 1, armed.forwardFirst)
            return (true, armed.forwardFirst)
        }
        if rule.close, !rule.forwardFirst { return }
        guard let answer = try? HTTPClient(port: upstream).send(method, path, headers: headers, body: body) else { return }
        lock.withLock { sent.append(line) }
        if rule.close { return }
        var head = "HTTP/1.1 \(answer.status) X\r\n"
        for (name, value) in answer.headers where !["content-length", "connection", "transfer-encoding"].contains(name) { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(answer.body.count)\r\nConnection: close\r\n\r\n"
        let bytes = Array(head.utf8) + answer.body
        _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// One request: its method, target, header fields (less those the forwarding sets) and body.
    static func read(_ fd: Int32) -> (String, String, [(String, String)], [UInt8])? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        func headEnd() -> Int? { buffer.count < 4 ? nil : (0...(buffer.count - 4)).first { buffer[$0..<($0 + 4)].elementsEqual([13, 10, 13, 10]) } }
        while headEnd() == nil {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { return nil }
            buffer += chunk[..<n]
        }
        let end = headEnd()!
        var lines = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let start = lines.removeFirst().split(separator: " ").map(String.init)
        guard start.count == 3 else { return nil }
        var headers: [(String, String)] = []
        var length = 0
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon]), value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if name.lowercased() == "content-length" { length = Int(value) ?? 0 }
            if !["host", "content-length", "connection"].contains(name.lowercased()) { headers.append((name, value)) }
        }
        var body = Array(buffer[(end + 4)...])
        while body.count < length {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { return nil }
            body += chunk[..<n]
        }
        return (start[0], start[1], headers, body)
    }
}
