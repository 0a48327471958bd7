import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetTestSupport
import SignetWebAuthn
import Synchronization
import Testing

/// What an active log stream keeps from the purge while its endpoint fails: everything, for
/// `audit.log_stream_hold_days` (or the retention, when longer); then the purge takes the
/// older events, the stream moves past them, and an event it sends says which it lost.
@Suite struct LogStreamHoldTests {
    static let day: Int64 = 86_400_000

    @Test("a stream failing past audit.log_stream_hold_days lets the purge take what it holds, moves past it, and tells the endpoint which events it lost")
    func releasedAfterTheHold() throws {
        let (failingListener, failing, failingBase) = try LogStreamTests.receiver()
        let (healthyListener, healthy, healthyBase) = try LogStreamTests.receiver()
        defer { failingListener.stop(); healthyListener.stop() }
        failing.answers.withLock { $0 = Array(repeating: 503, count: 1_000) }
        let server = try TestServer.withOperators(.inProcess) { c in
            c.auditRetentionDays = 1
            c.logStreamHoldDays = 3
        }
        server.app.pauseLogStreams()
        let token = try server.managementToken()
        let stuck = try #require(try LogStreamTests.add(server, token, endpoint: failingBase + "/in")["id"]?.string)
        let fine = try #require(try LogStreamTests.add(server, token, endpoint: healthyBase + "/in")["id"]?.string)
        let t0 = Int64(server.clock.now.timeIntervalSince1970 * 1000)
        func stream(_ id: String) throws -> LogStreamRow { try #require(try server.store.logStreams().first { $0.id == id }) }
        func event(_ at: Int64) throws { try server.store.appendAudit(AuditEvent(at: at, kind: "sign_in", outcome: "success")) }
        try event(t0)
        _ = server.app.sendLogStreamsNow()
        let held = try stream(stuck).lastLogID
        #expect(try stream(stuck).failures == 1 && stream(fine).failures == 0 && stream(fine).lastLogID > held)
        let firstHeld = held + 1

        // Two days on: past the retention, within the hold. Nothing the stream holds goes.
        server.clock.advance(2 * 86_400)
        try event(t0 + 2 * Self.day)
        _ = server.app.sendLogStreamsNow()
        server.app.purgeExpired(now: t0 + 2 * Self.day)
        #expect(try stream(stuck).lastLogID == held)
        #expect(try server.store.auditEntries(AuditQuery(after: held, limit: 1)).first?.id == firstHeld)

        // Four days on: the events from day 0 are past the hold. The stream moves to the first
        // event of day 2, and the purge takes the rest.
        server.clock.advance(2 * 86_400)
        let cut = try #require(try server.store.firstAuditID(atOrAfter: t0 + Self.day))
        server.app.purgeExpired(now: t0 + 4 * Self.day)
        #expect(try stream(stuck).lastLogID == cut - 1)
        #expect(try server.store.auditEntries(AuditQuery(after: 0, limit: 1)).first?.id == cut)
        let notice = try #require(try server.store.auditEvents(limit: 20).first { $0.kind == "log_stream_delivery" && $0.detail?.contains("purged") == true })
        #expect(notice.outcome == "failure")
        #expect(notice.detail == "stream \(stuck): events \(firstHeld) to \(cut - 1) were purged before its endpoint took them (older than 3 days)", "\(notice.detail ?? "")")
        // The healthy stream was not moved: it had every event, in order, without a gap.
        #expect(try stream(fine).lastLogID >= cut - 1 && stream(fine).failures == 0)
        let delivered = try healthy.items().compactMap { $0["log_id"]?.string.flatMap { Int64($0) } }
        #expect(delivered.first.map { delivered == Array($0...(delivered.last ?? $0)) } == true && delivered.contains(cut - 1) && delivered.contains(cut), "\(delivered)")
        // Only one notice, however often the purge runs.
        server.app.purgeExpired(now: t0 + 4 * Self.day + 60_000)
        #expect(try server.store.auditEvents(limit: 50).filter { $0.detail?.contains("were purged before") == true }.count == 1)

        // The endpoint back: it gets everything from day 2 on, the notice among it, in order.
        failing.answers.withLock { $0 = [] }
        let before = failing.posts.count
        #expect(server.app.sendLogStreamsNow() > 0)
        let items = try failing.posts.dropFirst(before).flatMap { try StrictJSON().parse($0.body).array ?? [] }
        let ids = items.compactMap { $0["log_id"]?.string.flatMap { Int64($0) } }
        #expect(ids.first == cut && ids == Array(cut...(ids.last ?? cut)), "\(ids)")
        #expect(items.contains { $0["data"]?["description"]?.string?.contains("were purged before its endpoint took them") == true }, "\(items.map(\.serialized))")
        #expect(try stream(stuck).failures == 0)
    }

    @Test("a hold shorter than the retention changes nothing: a stream keeps what the retention keeps, and loses nothing of it")
    func retentionFirst() throws {
        let (listener, receiver, base) = try LogStreamTests.receiver()
        defer { listener.stop() }
        receiver.answers.withLock { $0 = Array(repeating: 503, count: 1_000) }
        let server = try TestServer.withOperators(.inProcess) { c in
            c.auditRetentionDays = 5
            c.logStreamHoldDays = 1
        }
        server.app.pauseLogStreams()
        let id = try #require(try LogStreamTests.add(server, try server.managementToken(), endpoint: base + "/in")["id"]?.string)
        let t0 = Int64(server.clock.now.timeIntervalSince1970 * 1000)
        try server.store.appendAudit(AuditEvent(at: t0, kind: "sign_in", outcome: "success"))
        _ = server.app.sendLogStreamsNow()
        let held = try #require(try server.store.logStreams().first { $0.id == id }).lastLogID
        server.clock.advance(3 * 86_400)
        server.app.purgeExpired(now: t0 + 3 * Self.day)
        #expect(try server.store.logStreams().first { $0.id == id }?.lastLogID == held)
        #expect(try server.store.auditEvents(limit: 50).allSatisfy { $0.detail?.contains("were purged before") != true })
        // Past the retention (the longer), the purge takes them, and the stream says so.
        server.clock.advance(3 * 86_400)
        server.app.purgeExpired(now: t0 + 6 * Self.day)
        #expect(try server.store.logStreams().first { $0.id == id }.map { $0.lastLogID > held } == true)
        #expect(try server.store.auditEvents(limit: 50).contains { $0.detail?.hasSuffix("(older than 5 days)") == true })
    }
}
