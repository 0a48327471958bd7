import Foundation
import SignetHTTP
import Testing

/// The access log's writes, off the threads that answer requests.
@Suite struct AccessLogTests {
    struct OK: HTTPHandler {
        func handle(_ request: HTTPRequest) -> HTTPResponse { .json(200, Array("{}".utf8)) }
    }

    /// What the reader thread read, looked at after it signalled.
    final class Received: @unchecked Sendable { var data = Data() }

    @Test("an output that takes nothing (a pipe nobody reads) holds no request: past its bound lines are dropped, and counted once the output takes lines again")
    func stalledOutput() throws {
        let pipe = Pipe()
        // A pipe holds 64 KiB; with as much again waiting, 3,000 lines of about 200 bytes cannot all be kept.
        let log = AccessLog(output: pipe.fileHandleForWriting, flushInterval: 0.01, maxPendingBytes: 64 * 1024)
        var configuration = HTTPServer.Configuration()
        configuration.port = 0
        configuration.threads = 2
        let server = HTTPServer(configuration: configuration, handler: OK(), log: log)
        try server.start()
        let requests = 3_000
        let client = HTTPClient(port: server.port, timeout: 5)
        var answered = 0
        for _ in 0..<requests where (try? client.send("GET", "/x").status) == 200 { answered += 1 }
        #expect(answered == requests, "a worker waited on the log's output")
        // Now read: the log's queue writes what it kept, then the count of what it dropped.
        let reader = pipe.fileHandleForReading
        let read = DispatchSemaphore(value: 0)
        let text = Received()
        Thread.detachNewThread {
            text.data = reader.readDataToEndOfFile()
            read.signal()
        }
        server.stop()
        try pipe.fileHandleForWriting.close()
        #expect(read.wait(timeout: .now() + 30) == .success)
        let lines = String(decoding: text.data, as: UTF8.self).split(separator: "\n")
        let kept = lines.filter { $0.contains(#""msg":"request""#) }.count
        let counts = lines.filter { $0.contains(#""msg":"log lines dropped""#) }.compactMap { line in
            line.split(separator: ",").first { $0.hasPrefix(#""count":"#) }.flatMap { Int($0.dropFirst(8)) }
        }
        let dropped = counts.reduce(0, +)
        #expect(dropped > 0 && kept > 0 && kept + dropped == requests, "kept \(kept), dropped \(dropped) in \(counts)")
    }
}
