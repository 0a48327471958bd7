import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetSoftware
import SignetWebAuthn
import Testing
import SignetTestSupport

/// DESIGN.md, "Reliability rules": overload never crashes and never corrupts; beyond the caps a
/// client waits or is refused, and others go on being served. The pool is scaled down (128
/// connections, 4 an address: the default 4,096 and 128 keep the same 1/32 share) so that ten
/// times the limit fits a test. Every well-behaved request is made from 127.0.0.9 on one
/// keep-alive connection, so no connection of its own that the server has not yet seen closed
/// counts against its address.
@Suite struct OverloadTests {
    static func residentKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test("ten times the connection limit from four addresses, slow clients and a garbage burst: the server stays up, does not grow, and a well-behaved client is served within its deadline")
    func overload() throws {
        let directory = Scratch.directory.appendingPathComponent("signet-overload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cluster = try Cluster(instances: 1, database: "sqlite:" + directory.appendingPathComponent("signet.db").path, settings: [
            "SIGNET_LIMITS_MAX_CONNECTIONS": "128", "SIGNET_LIMITS_MAX_CONNECTIONS_PER_IP": "4", "SIGNET_LIMITS_REQUEST_DEADLINE": "2",
        ])
        let port = cluster.port(0)
        let pid = cluster.instances[0].process.processIdentifier
        func wave() throws -> (served: Int, worst: TimeInterval) {
            // Abuse: 1,280 connection attempts (ten times the pool) from 127.0.0.2-5, each held
            // open with half a request; slow clients from .6 trickling headers; garbage from .7.
            var held: [HTTPClient] = []
            for attempt in 0..<1280 {
                let client = HTTPClient(port: port, timeout: 1, source: "127.0.0.\(2 + attempt % 4)")
                if (try? client.connect()) != nil, (try? client.write(Array("POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{".utf8))) != nil {
                    held.append(client)
                }
            }
            let stop = SharedFlag(false)
            let trickle = Thread {
                let slow = (0..<4).map { _ in HTTPClient(port: port, timeout: 1, source: "127.0.0.6") }
                let request = Array("GET /healthz HTTP/1.1\r\nX-Slow: ".utf8)
                var i = 0
                while !stop.value {
                    for client in slow { try? client.write([i < request.count ? request[i] : UInt8(ascii: "a")]) }
                    i += 1
                    Thread.sleep(forTimeInterval: 0.05)
                }
            }
            trickle.start()
            for n in 0..<50 {
                let garbage = HTTPClient(port: port, timeout: 1, source: "127.0.0.7")
                try? garbage.write((0..<200).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) })
                garbage.close()
            }
            // The well-behaved client, from its own address on one keep-alive connection (as a
            // real client keeps one), within a 2 s deadline each.
            let good = HTTPClient(port: port, timeout: 2, source: "127.0.0.9")
            var served = 0
            var worst: TimeInterval = 0
            for _ in 0..<30 {
                let start = Date()
                if (try? good.send("GET", "/healthz").status) == 200 { served += 1 }
                worst = max(worst, Date().timeIntervalSince(start))
            }
            // And a whole sign-up on the same connection.
            let (status, tokens) = try cluster.signUpAttempt(SoftwareAuthenticator(), email: "good-\(UUID().uuidString.prefix(6))@signet.test") { path, body in
                let answer = try good.send("POST", path, body: Array(body.serialized.utf8))
                return (answer.status, (try? StrictJSON().parse(answer.body)) ?? .null)
            }
            #expect(status == 200, "\(tokens.serialized)")
            good.close()
            stop.value = true
            for client in held { client.close() }
            return (served, worst)
        }
        let first = try wave()
        let warm = Self.residentKiB(pid)
        var last = first
        for _ in 0..<3 { last = try wave() }
        let after = Self.residentKiB(pid)
        print("overload: served \(first.served)/30 and \(last.served)/30, slowest \(String(format: "%.3f", max(first.worst, last.worst))) s; resident \(warm) -> \(after) KiB")
        #expect(first.served == 30 && last.served == 30)
        #expect(max(first.worst, last.worst) < 2)
        #expect(cluster.instances[0].process.isRunning)
        #expect(after < warm + 8 * 1024, "resident memory grew from \(warm) to \(after) KiB over three more waves")
        #expect(try HTTPClient(port: port, source: "127.0.0.9").send("GET", "/healthz").status == 200)
    }
}
