import Foundation
import SignetAuth
import SignetHTTP
import SignetServer
import SignetStore
import SignetTestSupport
import SignetWebAuthn
import Testing

/// Durable SQLite over a real socket: a write's answer waits for the WAL's sync, holding the
/// connection (suspended) and not the worker thread, and a sync that fails is never answered as
/// a success.
@Suite("Answers held for their sync")
struct HeldAnswerTests {
    @Test("a sign-up's answer comes after its sync, and the only worker answers another connection meanwhile")
    func answerWaitsWorkerDoesNot() throws {
        let server = try TestServer(.socket) { $0.threads = 1 }
        _ = try SignedIn(server, email: "first@signet.test")
        let sql = try #require(server.store as? SQLStore)
        let syncsBefore = sql.durableSyncs
        sql.slowSyncs(0.6)
        let results = simultaneously(2) { i -> (ended: UInt64, took: Double, status: Int) in
            let start = DispatchTime.now().uptimeNanoseconds
            if i == 0 {
                _ = try SignedIn(server, email: "held@signet.test")
                return (DispatchTime.now().uptimeNanoseconds, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, 200)
            }
            // While the sign-up's answer is held (its sync takes at least 0.6 s), a read on
            // another connection is served by the same single worker thread.
            Thread.sleep(forTimeInterval: 0.25)
            let status = try server.client().send("GET", "/.well-known/openid-configuration").status
            return (DispatchTime.now().uptimeNanoseconds, 0, status)
        }
        sql.slowSyncs(0)
        let signUp = try results[0].get()
        let read = try results[1].get()
        #expect(read.status == 200)
        #expect(read.ended < signUp.ended, "the read waited for the held answer")
        #expect(signUp.took >= 0.6, "the sign-up was answered after \(signUp.took) s, before its 0.6-s sync ended")
        #expect(sql.durableSyncs > syncsBefore)
        // The request-duration histogram counts the held time: one request took over half a second.
        let metrics = String(decoding: try server.client().send("GET", "/metrics").body, as: UTF8.self)
        func bucket(_ bound: String) -> Int? {
            metrics.split(separator: "\n").first { $0.hasPrefix("signet_http_request_duration_seconds_bucket{le=\"\(bound)\"} ") }.flatMap { Int($0.split(separator: " ")[1]) }
        }
        let all = try #require(bucket("+Inf"))
        let underHalf = try #require(bucket("0.5"))
        #expect(all - underHalf >= 1, "no request over 0.5 s in the histogram: \(underHalf) of \(all)")
        // What was answered is there: the new account signs in.
        #expect(try server.store.user(email: "held@signet.test") != nil)
    }

    @Test("a sync that fails turns the held answer into 503 database_unavailable, and the server goes on")
    func failedSyncAnswers503() throws {
        let server = try TestServer(.socket)
        let account = try SignedIn(server, email: "fail@signet.test")
        let sql = try #require(server.store as? SQLStore)
        sql.failSyncs(true)
        // A write (a new set of recovery codes) whose sync fails.
        let failed = try account.call("POST", "/me/recovery-codes")
        sql.failSyncs(false)
        #expect(failed.status == 503, "\(failed)")
        #expect(failed.json["reason"]?.string == "database_unavailable")
        #expect(failed.json["codes"] == nil, "codes were handed out though their write was not on disk")
        // The metrics count the answer that was sent, for its route.
        let metrics = String(decoding: try server.client().send("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("signet_http_requests_total{route=\"/me/recovery-codes\",status=\"503\"} 1"), "\(metrics)")
        #expect(!metrics.contains("signet_http_requests_total{route=\"/me/recovery-codes\",status=\"201\"}"))
        // Reads never wait for a sync, and writes work again once the disk does.
        #expect(try server.client().send("GET", "/healthz").status == 200)
        #expect(try account.call("POST", "/me/recovery-codes").status == 201)
    }

    @Test("stopping the server waits for held answers: each is sent, none cut off")
    func stopWaitsForHeldAnswers() throws {
        let server = try TestServer(.socket)
        let account = try SignedIn(server, email: "stop@signet.test")
        let sql = try #require(server.store as? SQLStore)
        sql.slowSyncs(0.5)
        let results = simultaneously(2) { i -> Int in
            if i == 0 { return try account.call("POST", "/me/recovery-codes").status }
            Thread.sleep(forTimeInterval: 0.2)
            server.app.server.stop()
            return 0
        }
        sql.slowSyncs(0)
        #expect(try results[0].get() == 201)
        #expect(server.app.server.openConnections == 0)
    }
}
