import Foundation
import SignetAuth
import SignetStore
import SignetTestSupport
import Testing

/// The store's side of log streams, on SQLite and PostgreSQL: where a new stream starts, the
/// lease that lets one instance send a stream, delivery that only moves forward, and the purge
/// that keeps what an active stream has not delivered.
@Suite("Log streams in the store")
struct LogStreamStoreContractTests {
    func stream(_ id: String = "lst_" + UUID().uuidString.prefix(8), status: String = "active") -> LogStreamRow {
        LogStreamRow(id: id, name: "siem", status: status, endpoint: "https://siem.example/in", contentType: "application/json", contentFormat: "JSONARRAY",
                     authorization: [1, 2, 3], createdAt: now())
    }

    func event(_ at: Int64) -> AuditEvent { AuditEvent(at: at, kind: "sign_in", outcome: "success") }

    @Test("a stream starts after the newest event, with the event written beside it as its first", arguments: Backend.available)
    func startsAtTheNewest(_ backend: Backend) throws {
        let store = try backend.open()
        for at in 1...3 as ClosedRange<Int64> { try store.appendAudit(event(at)) }
        let newest = try store.auditEntries(AuditQuery(limit: 1)).first!.id
        let written = try store.insertLogStream(stream("lst_a"), writes: [.audit(event(4))])
        #expect(written.lastLogID == newest)
        #expect(try store.auditEntries(AuditQuery(after: written.lastLogID, limit: 10)).map(\.event.at) == [4])
        #expect(try store.logStreams() == [written] && written.filters.isEmpty)
        #expect(throws: StoreError.self) { try store.insertLogStream(stream("lst_a"), writes: []) }
        #expect(try store.auditEventsPending(after: written.lastLogID, limit: 10) == 1)
        // Filters read back as written, and a change to none reads back as none.
        var filtered = stream("lst_f")
        filtered.filters = ["auth.login.fail", "user.success"]
        let stored = try store.insertLogStream(filtered, writes: [])
        #expect(try store.logStreams().first { $0.id == "lst_f" } == stored && stored.filters == ["auth.login.fail", "user.success"])
        var unfiltered = stored
        unfiltered.filters = []
        #expect(try store.updateLogStream(unfiltered, expected: stored, writes: []) == true)
        #expect(try store.logStreams().first { $0.id == "lst_f" }?.filters == [])
        #expect(try store.auditEventsPending(after: 0, limit: 2) == 2)
    }

    @Test("one owner holds a stream's lease at a time; delivery only moves forward, under the lease", arguments: Backend.available)
    func lease(_ backend: Backend) throws {
        let store = try backend.open()
        let s = try store.insertLogStream(stream("lst_b"), writes: [])
        let t = now()
        #expect(try store.claimLogStream(id: s.id, owner: "one", now: t, until: t + 60_000) != nil)
        // Another owner waits for the lease to end; the holder renews it.
        #expect(try store.claimLogStream(id: s.id, owner: "two", now: t + 1, until: t + 60_001) == nil)
        #expect(try store.claimLogStream(id: s.id, owner: "one", now: t + 1, until: t + 60_001) != nil)
        // Only the holder records a delivery, and never backwards.
        #expect(try store.logStreamDelivered(id: s.id, owner: "two", lastLogID: s.lastLogID + 5, at: t + 2) == false)
        #expect(try store.logStreamDelivered(id: s.id, owner: "one", lastLogID: s.lastLogID + 5, at: t + 2))
        #expect(try store.logStreamDelivered(id: s.id, owner: "one", lastLogID: s.lastLogID + 3, at: t + 3) == false)
        #expect(try store.logStreams().first?.lastLogID == s.lastLogID + 5)
        #expect(try store.logStreams().first?.lastDeliveredAt == t + 2)
        // After it ends, another takes it, and the first one's late delivery is refused.
        #expect(try store.claimLogStream(id: s.id, owner: "two", now: t + 60_002, until: t + 120_000) != nil)
        #expect(try store.logStreamDelivered(id: s.id, owner: "one", lastLogID: s.lastLogID + 9, at: t + 60_003) == false)
        // Concurrent claims: exactly one wins.
        let other = try store.insertLogStream(stream("lst_c"), writes: [])
        let wins = simultaneously(16) { i in try store.claimLogStream(id: other.id, owner: "o\(i)", now: t, until: t + 60_000) != nil }
        #expect(wins.filter { (try? $0.get()) == true }.count == 1)
    }

    @Test("a failure backs off; a paused stream is not claimed; a change of settings needs the settings read", arguments: Backend.available)
    func failuresAndChanges(_ backend: Backend) throws {
        let store = try backend.open()
        let s = try store.insertLogStream(stream("lst_d"), writes: [])
        let t = now()
        _ = try store.claimLogStream(id: s.id, owner: "one", now: t, until: t + 60_000)
        try store.logStreamFailed(id: s.id, owner: "one", error: "the endpoint answered 503", retryAt: t + 4_000)
        try store.logStreamFailed(id: s.id, owner: "one", error: "the endpoint answered 502", retryAt: t + 8_000)
        let failed = try #require(try store.logStreams().first)
        #expect((failed.failures, failed.lastError, failed.nextAttemptAt) == (2, "the endpoint answered 502", t + 8_000))
        #expect(try store.claimLogStream(id: s.id, owner: "one", now: t + 7_999, until: t + 60_000) == nil)
        #expect(try store.claimLogStream(id: s.id, owner: "one", now: t + 8_000, until: t + 60_000) != nil)
        // A delivery clears the failures.
        #expect(try store.logStreamDelivered(id: s.id, owner: "one", lastLogID: s.lastLogID + 1, at: t + 8_001))
        let cleared = try #require(try store.logStreams().first)
        #expect(cleared.failures == 0 && cleared.lastError == nil)

        var paused = failed
        paused.status = "paused"
        paused.authorization = nil
        #expect(try store.updateLogStream(paused, expected: failed, writes: [.audit(event(9))]) == true)
        let read = try #require(try store.logStreams().first)
        #expect(read.status == "paused" && read.authorization == nil && read.lastLogID == s.lastLogID + 1)
        #expect(try store.claimLogStream(id: s.id, owner: "one", now: t + 200_000, until: t + 260_000) == nil)
        // Written over settings read before the pause: refused, nothing written.
        var stale = failed
        stale.name = "renamed"
        #expect(try store.updateLogStream(stale, expected: failed, writes: []) == false)
        #expect(try store.updateLogStream(stream("lst_none"), expected: stream("lst_none"), writes: []) == nil)
        #expect(try store.deleteLogStream(id: s.id, writes: [.audit(event(10))]))
        #expect(try store.deleteLogStream(id: s.id, writes: []) == false)
        #expect(try store.logStreams().isEmpty)
    }

    @Test("signing secrets and the previous one's end read back as written, are part of the settings a change must have read, and make a failing stream try at once", arguments: Backend.available)
    func signing(_ backend: Backend) throws {
        let store = try backend.open()
        var signed = stream("lst_s")
        (signed.signing, signed.signingPreviousUntil) = ([7, 7, 7], 0)
        let written = try store.insertLogStream(signed, writes: [])
        #expect(try store.logStreams().first == written && written.signing == [7, 7, 7])
        let t = now()
        _ = try store.claimLogStream(id: written.id, owner: "one", now: t, until: t + 60_000)
        try store.logStreamFailed(id: written.id, owner: "one", error: "the endpoint answered 401", retryAt: t + 60_000)
        let failed = try #require(try store.logStreams().first)
        var rotated = failed
        (rotated.signing, rotated.signingPreviousUntil) = ([8, 8, 8, 7, 7, 7], t + 86_400_000)
        #expect(try store.updateLogStream(rotated, expected: failed, writes: []) == true)
        let read = try #require(try store.logStreams().first)
        #expect(read.signing == [8, 8, 8, 7, 7, 7] && read.signingPreviousUntil == t + 86_400_000 && read.nextAttemptAt == 0)
        // A change made over the secrets as they were before the rotation: refused.
        var stale = failed
        stale.name = "renamed"
        #expect(try store.updateLogStream(stale, expected: failed, writes: []) == false)
        #expect(try store.logStreams().first?.signing == [8, 8, 8, 7, 7, 7])
        // And taken away: NULL again.
        var bare = read
        (bare.signing, bare.signingPreviousUntil) = (nil, 0)
        #expect(try store.updateLogStream(bare, expected: read, writes: []) == true)
        #expect(try store.logStreams().first == bare)
    }

    @Test("a stream moved past events the purge is to take: only forward, only active, only from where it was read; with its event", arguments: Backend.available)
    func skip(_ backend: Backend) throws {
        let store = try backend.open()
        let s = try store.insertLogStream(stream("lst_k"), writes: [])
        for at in 10...14 as ClosedRange<Int64> { try store.appendAudit(event(at)) }
        let ids = try store.auditEntries(AuditQuery(after: s.lastLogID, limit: 10)).map(\.id)
        #expect(try store.firstAuditID(atOrAfter: 12) == ids[2] && store.firstAuditID(atOrAfter: 15) == nil && store.firstAuditID(atOrAfter: 0) == ids[0])
        // Not from where it is now, not backwards: refused, nothing written.
        #expect(try store.skipLogStream(id: s.id, from: s.lastLogID + 1, to: ids[2] - 1, writes: [.audit(event(20))]) == false)
        #expect(try store.skipLogStream(id: s.id, from: s.lastLogID, to: s.lastLogID, writes: []) == false)
        #expect(try store.auditEntries(AuditQuery(after: ids[4], limit: 10)).isEmpty)
        #expect(try store.skipLogStream(id: s.id, from: s.lastLogID, to: ids[2] - 1, writes: [.audit(event(20))]))
        #expect(try store.logStreams().first?.lastLogID == ids[2] - 1)
        #expect(try store.auditEntries(AuditQuery(after: ids[4], limit: 10)).map(\.event.at) == [20])
        // A paused stream holds nothing, and is not moved.
        var paused = try #require(try store.logStreams().first)
        let before = paused
        paused.status = "paused"
        #expect(try store.updateLogStream(paused, expected: before, writes: []) == true)
        #expect(try store.skipLogStream(id: s.id, from: ids[2] - 1, to: ids[3], writes: []) == false)
        #expect(try store.skipLogStream(id: "lst_none", from: 0, to: 5, writes: []) == false)
    }

    @Test("the purge keeps every event an active stream has not delivered, and a paused stream keeps none", arguments: Backend.available)
    func purgeWaits(_ backend: Backend) throws {
        let store = try backend.open()
        try store.appendAudit(event(1))
        let s = try store.insertLogStream(stream("lst_e"), writes: [])
        for at in 2...6 as ClosedRange<Int64> { try store.appendAudit(event(at)) }
        let ids = try store.auditEntries(AuditQuery(after: s.lastLogID, limit: 10)).map(\.id)
        let t = now()
        _ = try store.claimLogStream(id: s.id, owner: "one", now: t, until: t + 60_000)
        #expect(try store.logStreamDelivered(id: s.id, owner: "one", lastLogID: ids[1], at: t))
        // Every event is past its retention; the two delivered (and the one before the stream) go.
        #expect(try store.purge(now: 100_000_000, auditBefore: 1000, batch: 2) == 3)
        #expect(try store.auditEvents(limit: 10).map(\.at).sorted() == [4, 5, 6])
        var paused = try #require(try store.logStreams().first)
        let before = paused
        paused.status = "paused"
        #expect(try store.updateLogStream(paused, expected: before, writes: []) == true)
        // All but the newest, which always stays, so that IDs never start again from 1.
        #expect(try store.purge(now: 100_000_000, auditBefore: 1000, batch: 2) == 2)
        #expect(try store.auditEvents(limit: 10).map(\.at) == [6])
    }
}
