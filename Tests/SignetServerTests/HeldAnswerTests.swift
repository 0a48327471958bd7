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

    /// Users in the server's database file as another process sees it (Python's sqlite3 module).
    static func usersOnDisk(_ server: TestServer) throws -> Int {
        let database = server.directory.appendingPathComponent("signet.db").path
        let result = try runProcess("/usr/bin/python3", ["-c", "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM users').fetchone()[0])", database])
        return Int(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// A sign-up through the API: its status and answer.
    static func signUp(_ server: TestServer, _ email: String) throws -> (status: Int, json: JSONValue) {
        let phone = Phone(server)
        let (session, credential) = try phone.startSignUp(email: email)
        return try phone.exchange(session: session, credential: credential)
    }

    @Test("writes whose answers wait for one sync share one transaction: another process sees none before it commits, each answer comes after it")
    func heldWritesShareATransaction() throws {
        let server = try TestServer(.socket)
        let account = try SignedIn(server, email: "first@signet.test")
        let sql = try #require(server.store as? SQLStore)
        let users = try Self.usersOnDisk(server)
        let before = sql.writeBatches
        sql.slowSyncs(1.0)
        // A write whose sync takes a second; three sign-ups meanwhile wait in the next batch.
        let results = simultaneously(5) { i -> (status: Int, seen: Int) in
            if i == 0 { return (try account.call("POST", "/me/recovery-codes").status, -1) }
            if i == 4 {
                Thread.sleep(forTimeInterval: 0.5)
                return (0, try Self.usersOnDisk(server))
            }
            Thread.sleep(forTimeInterval: 0.15)
            return (try Self.signUp(server, "batched\(i)@signet.test").status, -1)
        }
        sql.slowSyncs(0)
        let outcomes = try results.map { try $0.get() }
        #expect(outcomes[0].status == 201 && outcomes[1...3].allSatisfy { $0.status == 200 }, "\(outcomes)")
        #expect(outcomes[4].seen == users, "a held sign-up was visible before its batch committed")
        #expect(try Self.usersOnDisk(server) == users + 3)
        let after = sql.writeBatches
        #expect(after.largest >= 3, "\(before) -> \(after)")
        #expect(after.batches - before.batches < after.writes - before.writes, "\(before) -> \(after)")
        let metrics = String(decoding: try server.client().send("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("signet_sqlite_batched_writes_total \(after.writes)"), "\(metrics)")
    }

    @Test("a batch that cannot commit answers each write it held 503 storage_full, keeps none of them, and the next batch commits")
    func failedBatchAnswers503() throws {
        let server = try TestServer(.socket)
        let account = try SignedIn(server, email: "first@signet.test")
        let sql = try #require(server.store as? SQLStore)
        // The sign-ups' options first (their rate counters are writes too), then only the
        // exchanges that create the accounts go into the batch that fails.
        let phones = [Phone(server), Phone(server)]
        let started = try (1...2).map { try phones[$0 - 1].startSignUp(email: "lost\($0)@signet.test") }
        sql.slowSyncs(1.0)
        let results = simultaneously(4) { i -> (status: Int, json: JSONValue) in
            if i == 0 { return try account.call("POST", "/me/recovery-codes") }
            if i == 3 {
                // After the first batch committed, before the second does.
                Thread.sleep(forTimeInterval: 0.5)
                sql.failBatchCommits(true)
                return (0, .null)
            }
            Thread.sleep(forTimeInterval: 0.15)
            return try phones[i - 1].exchange(session: started[i - 1].session, credential: started[i - 1].credential)
        }
        sql.slowSyncs(0)
        sql.failBatchCommits(false)
        let outcomes = try results.map { try $0.get() }
        #expect(outcomes[0].status == 201, "\(outcomes[0])")
        for outcome in outcomes[1...2] {
            #expect(outcome.status == 503 && outcome.json["reason"]?.string == "storage_full", "\(outcome)")
            #expect(outcome.json["access_token"] == nil)
        }
        #expect(try server.store.user(email: "lost1@signet.test") == nil && server.store.user(email: "lost2@signet.test") == nil)
        // The same emails sign up once the disk takes writes again.
        #expect(try Self.signUp(server, "lost1@signet.test").status == 200)
        #expect(try server.store.user(email: "lost1@signet.test") != nil)
    }
}
