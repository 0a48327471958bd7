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

    /// A started server on `port` (0: a free one) with `threads` workers, answering with ``WorkerHandler``.
    static func server(port: UInt16 = 0, threads: Int = 4) throws -> HTTPServer {
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
        // Connects at once, before any request: libmicrohttpd's own accept let the first worker
        // to wake take up to ten of sixteen. Each worker now takes the connections whose
        // descriptor numbers it is given (the number modulo the workers), so the test opens 64:
        // other tests running meanwhile take descriptor numbers between these, and with only 16
        // that once left one worker none of them (a run of CI, `served.count` 3).
        let clients = (0..<64).map { _ in HTTPClient(port: server.port, timeout: 5) }
        defer { clients.forEach { $0.close() } }
        for client in clients { try client.connect() }
        var served: [String: Int] = [:]
        for _ in 0..<3 {
            for client in clients {
                let answer = try client.send("GET", "/worker")
                #expect(answer.status == 200)
                let worker = String(answer.text.split(separator: "\"")[3])
                served[worker, default: 0] += 1
            }
        }
        // A keep-alive connection stays with its worker, and a worker's share follows the
        // descriptor numbers: 16 connections (48 requests) each when nothing else in the process
        // opens descriptors meanwhile, and never half as many again (one worker took 62% before).
        #expect(served.count == 4, "\(served)")
        #expect(served.values.allSatisfy { $0 <= 72 }, "\(served)")
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
}
