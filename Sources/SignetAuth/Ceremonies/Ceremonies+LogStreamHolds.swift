import SignetAPI

/// What a failing log stream holds from the purge, and for how long
/// (``ServerConfiguration/logStreamHoldDays``).
extension Ceremonies {
    /// Lets the purge take events written before `before` (milliseconds) that active streams
    /// have not delivered: each such stream moves past them, and an event
    /// (`log_stream_delivery`, a failure), the first its endpoint gets once it takes events
    /// again, names the range it lost. Called with the later of the retention's and
    /// ``ServerConfiguration/logStreamHoldDays``'s cut, so a stream loses only what the purge then
    /// takes, and only after its endpoint failed that long. Returns how many streams moved.
    @discardableResult
    public func releaseLogStreamHolds(before: Int64, days: Int) -> Int {
        guard let streams = try? store.logStreams().filter({ $0.status == "active" }), !streams.isEmpty,
              let newest = try? store.auditEntries(AuditQuery(limit: 1)).first?.id else { return 0 }
        // The newest event always stays; a stream keeps at least that one.
        let cut = min((try? store.firstAuditID(atOrAfter: before)) ?? newest, newest)
        var moved = 0
        for stream in streams {
            guard let first = try? store.auditEntries(AuditQuery(after: stream.lastLogID, limit: 1)).first?.id, first < cut else { continue }
            let detail = "stream \(stream.id): events \(first) to \(cut - 1) were purged before its endpoint took them (older than \(days) days)"
            let event = pendingAuditEvent(.logStreamDelivery, "failure", detail: detail, context: .server)
            guard (try? store.skipLogStream(id: stream.id, from: stream.lastLogID, to: cut - 1, writes: [.audit(event)])) == true else { continue }
            counted(event)
            moved += 1
        }
        return moved
    }
}
