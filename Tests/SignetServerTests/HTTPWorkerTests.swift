import CSystem
import Foundation
import SignetHTTP
import Testing

/// How connections are shared among the server's worker threads.
@Suite struct HTTPWorkerTests {
    /// Answers with the thread that served the request.
    struct WorkerHandler: HTTPHandler {
        func handle(_ request: HTTPRequest) -> HTTPResponse {
            .json(200, Array("{\"worker\":\"\(UInt(bitPattern: Int(bitPattern: pthread_self())))\"}".utf8))
        }
    }

    /// The test servers' worker threads.
    static let workers = 4

    /// A started server on `port` (0: a free one) with `threads` workers, answering with ``WorkerHandler``.
    static func server(port: UInt16 = 0, threads: Int = workers) throws -> HTTPServer {
        var configuration = HTTPServer.Configuration()
        configuration.port = port
        configuration.threads = threads
        let server = HTTPServer(configuration: configuration, handler: WorkerHandler(), log: AccessLog(enabled: false))
        try server.start()
        return server
    }

    @Test("a burst of keep-alive connections is spread over every worker, not left with whichever woke first")
    func connectionsSpread() throws {
        let server = try Self.server()
        defer { server.stop() }
        // Sixteen connects at once, before any request: libmicrohttpd's own accept let the first
        // worker to wake take up to ten of them. Now each connection goes to the worker its
        // descriptor number names (the number modulo the workers, libmicrohttpd's rule for
        // connections handed to its pool), which spreads consecutive numbers evenly.
        let clients = (0..<16).map { _ in HTTPClient(port: server.port, timeout: 5) }
        defer { clients.forEach { $0.close() } }
        for client in clients { try client.connect() }
        var servedBy: [[String]] = Array(repeating: [], count: clients.count)
        for _ in 0..<3 {
            for (n, client) in clients.enumerated() {
                let answer = try client.send("GET", "/worker")
                #expect(answer.status == 200)
                servedBy[n].append(String(answer.text.split(separator: "\"")[3]))
            }
        }
        // A keep-alive connection stays with its worker.
        #expect(servedBy.allSatisfy { Set($0).count == 1 }, "\(servedBy)")
        // (Read once every connection has been answered: the acceptor takes them meanwhile.)
        let descriptors = Self.acceptedDescriptors(port: server.port)
        // The worker follows the server's descriptor, whatever numbers other tests running
        // meanwhile took between ours: the same remainder, the same worker; another, another.
        var byRemainder: [Int32: Set<String>] = [:]
        for (n, client) in clients.enumerated() {
            let descriptor = try #require(descriptors[client.localPort], "no accepted socket for port \(client.localPort)")
            byRemainder[descriptor % Int32(Self.workers), default: []].insert(servedBy[n][0])
        }
        #expect(byRemainder.values.allSatisfy { $0.count == 1 }, "\(byRemainder)")
        #expect(Set(byRemainder.values.flatMap { $0 }).count == byRemainder.count, "\(byRemainder)")
        // Sixteen descriptor numbers in a row cover every remainder; only a crowd of other tests
        // opening descriptors in lockstep with ours could leave one out.
        #expect(byRemainder.count >= 2, "\(byRemainder)")
    }

    /// The server's end of each connection to `port` in this process: its descriptor by the
    /// client's port.
    static func acceptedDescriptors(port: UInt16) -> [UInt16: Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var found: [UInt16: Int32] = [:]
        for fd in entries.compactMap(Int32.init) where signet_bound_port(fd) == port {
            let peer = signet_peer_port(fd)
            if peer != 0 { found[peer] = fd }
        }
        return found
    }

    @Test("a second server on a port in use is refused with a clear error; a stopped server's port can be bound again")
    func portInUse() throws {
        let first = try Self.server()
        let port = first.port
        #expect { try Self.server(port: port) } throws: { "\($0)".contains("cannot listen on 127.0.0.1:\(port)") }
        // The first still serves, and once stopped its port is free for the next run.
        #expect(try HTTPClient(port: port, timeout: 5).send("GET", "/worker").status == 200)
        first.stop()
        let third = try Self.server(port: port)
        defer { third.stop() }
        #expect(try HTTPClient(port: port, timeout: 5).send("GET", "/worker").status == 200)
    }

    /// Holds `/block` requests until ``release``; answers the rest at once.
    final class BlockingHandler: HTTPHandler, @unchecked Sendable {
        let gate = DispatchSemaphore(value: 0)
        func handle(_ request: HTTPRequest) -> HTTPResponse {
            if request.path == "/block" { gate.wait() }
            return .json(200, Array("{}".utf8))
        }
    }

    @Test("a worker inside a request that does not return is named by stalledWorkers, the others are not; once it returns, none is")
    func stalledWorker() throws {
        var configuration = HTTPServer.Configuration()
        configuration.port = 0
        configuration.threads = 3
        let handler = BlockingHandler()
        let server = HTTPServer(configuration: configuration, handler: handler, log: AccessLog(enabled: false))
        try server.start()
        #expect(server.stalledWorkers(within: 5).isEmpty)
        let blocked = HTTPClient(port: server.port, timeout: 10)
        try blocked.connect()
        // The worker its descriptor names (the acceptor's rule) takes the request and stays in it.
        let descriptor = try #require(eventually { Self.acceptedDescriptors(port: server.port)[blocked.localPort] != nil }
            ? Self.acceptedDescriptors(port: server.port)[blocked.localPort] : nil)
        try blocked.write(Array("GET /block HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let stuck = Int(descriptor) % configuration.threads
        // Only it: the other two come round.
        #expect(eventually(timeout: 10) { server.stalledWorkers(within: 0.2) == [stuck] })
        handler.gate.signal()
        #expect(try blocked.readResponse().status == 200)
        #expect(server.stalledWorkers(within: 5).isEmpty)
        server.stop()
        // Nothing to ask once stopped.
        #expect(server.stalledWorkers(within: 0.1).isEmpty)
    }
}
