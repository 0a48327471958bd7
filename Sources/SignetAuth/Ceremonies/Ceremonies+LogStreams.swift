import Foundation
import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// What an operator sets of a log stream (`POST` and `PATCH /api/v2/log-streams`): each member
/// `nil` when not given.
public struct LogStreamSettings: Sendable, Equatable {
    public var name: String?
    /// `active` or `paused`.
    public var status: String?
    public var endpoint: String?
    public var contentType: String?
    public var contentFormat: String?
    /// The categories sent (``AuditKind/streamCategories``); empty: every event.
    public var filters: [String]?
    /// The `Authorization` header's value; `.some(nil)` takes it away.
    public var authorization: String??

    public init(name: String? = nil, status: String? = nil, endpoint: String? = nil, contentType: String? = nil, contentFormat: String? = nil,
                filters: [String]? = nil, authorization: String?? = nil) {
        self.filters = filters
        self.name = name
        self.status = status
        self.endpoint = endpoint
        self.contentType = contentType
        self.contentFormat = contentFormat
        self.authorization = authorization
    }

    /// The names of the settings given, for the audit detail (never their values).
    public var names: [String] {
        [("name", name != nil), ("status", status != nil), ("endpoint", endpoint != nil), ("content type", contentType != nil),
         ("content format", contentFormat != nil), ("filters", filters != nil), ("authorization", authorization != nil)].filter(\.1).map(\.0)
    }
}

/// One POST a log stream is to make: the events after the stream's last delivered one, in order,
/// those of its categories; with none of them (``count`` 0) no POST, and the stream moves past
/// them all the same.
public struct LogStreamPost: Sendable {
    public let stream: LogStreamRow
    /// `Content-Type`, and `Authorization` when the stream has one: never logged.
    public let headers: [String]
    public let body: [UInt8]
    /// The ID of the last event this post accounts for (sent, or passed over by the filters),
    /// the stream's new ``LogStreamRow/lastLogID`` once the endpoint takes it.
    public let lastLogID: Int64
    public let count: Int
}

extension Ceremonies {
    /// At most this many streams: each costs a read a second and a POST a batch.
    static let logStreamLimit = 10
    /// Events in one POST (`JSONARRAY`, `JSONLINES`); `JSONOBJECT` sends one.
    static let logStreamBatch = 100
    /// How long an instance holds a stream it sends (milliseconds), renewed with each POST:
    /// twice what a POST may take (10 s), and what another instance waits to take over from one
    /// that died.
    public static let logStreamLease: Int64 = 20_000
    /// How long a missing event ID is waited for before it is taken as never written
    /// (milliseconds). On PostgreSQL an ID is taken when its row is inserted, so a transaction
    /// still open, or rolled back, leaves one missing for a while or for good; on SQLite only
    /// the purge leaves one (of a paused stream).
    public static let logStreamGapWait: Int64 = 10_000
    static let logStreamFormats = ["JSONARRAY", "JSONLINES", "JSONOBJECT"]

    // MARK: the operator's side

    /// `GET /api/v2/log-streams`: every stream, oldest first.
    public func logStreams() throws -> [LogStreamRow] { try store.logStreams() }

    /// `GET /api/v2/log-streams/{id}`.
    public func logStream(id: String) throws -> LogStreamRow {
        guard let row = try store.logStreams().first(where: { $0.id == id }) else { throw AuthError(.logStreamNotFound, "no log stream \(id.prefix(64))") }
        return row
    }

    /// How many events a stream has not delivered yet, counted up to 10,000.
    public func logStreamPending(_ stream: LogStreamRow) throws -> Int { try store.auditEventsPending(after: stream.lastLogID, limit: 10_000) }

    /// `POST /api/v2/log-streams`: a stream that sends every event from its own creation on (its
    /// `admin_log_stream_added` event is the first it sends). Needs a name and an endpoint. Its
    /// POSTs are signed (``LogStreamSigning``) under a secret made here, returned this once
    /// (`whsec_…`) and never shown again.
    public func addLogStream(_ settings: LogStreamSettings, by caller: ManagementCaller, context: RequestContext) throws -> (stream: LogStreamRow, secret: String) {
        guard let name = settings.name, let endpoint = settings.endpoint else { throw AuthError.malformed("a log stream needs a name and sink.httpEndpoint") }
        guard try store.logStreams().count < Self.logStreamLimit else { throw AuthError(.conflict, "there are \(Self.logStreamLimit) log streams already; remove one first") }
        let id = "lst_" + Base64URL.encode(random(12))
        var row = LogStreamRow(id: id, name: name, status: settings.status ?? "active", endpoint: endpoint, contentType: settings.contentType ?? "application/json",
                               contentFormat: settings.contentFormat ?? "JSONARRAY", filters: settings.filters ?? [], authorization: nil, createdAt: nowMillis)
        row.authorization = try sealedAuthorization(settings.authorization ?? nil, streamID: id)
        let secret = random(LogStreamSigning.secretBytes)
        row.signing = try AESGCM.seal(secret, key: logStreamKey, aad: LogStreamSigning.associatedData(streamID: id))
        try Self.validate(row, authorization: settings.authorization ?? nil)
        let event = pendingAuditEvent(.adminLogStreamAdded, client: caller.clientID, detail: "log stream \(id) (\(name.prefix(100))) to \(Self.origin(endpoint))", context: context)
        let written = try store.insertLogStream(row, writes: [.audit(event)])
        counted(event)
        logStreamsChanged.signal()
        return (written, LogStreamSigning.encoded(secret))
    }

    /// Writes an operator's change to a stream, with its audit event, unless another change
    /// came between the read of `before` and now.
    func write(_ after: LogStreamRow, over before: LogStreamRow, detail: String, by caller: ManagementCaller, context: RequestContext) throws -> LogStreamRow {
        let event = pendingAuditEvent(.adminLogStreamUpdated, client: caller.clientID, detail: detail, context: context)
        switch try store.updateLogStream(after, expected: before, writes: [.audit(event)]) {
        case nil: throw AuthError(.logStreamNotFound, "no log stream \(after.id.prefix(64))")
        case false?: throw AuthError(.conflict, "log stream \(after.id.prefix(64)) changed meanwhile: read it again and repeat the change")
        case true?: break
        }
        counted(event)
        logStreamsChanged.signal()
        return try logStream(id: after.id)
    }

    /// `PATCH /api/v2/log-streams/{id}`: the settings given, changed together. A stream made
    /// active again carries on from its last delivered event (those the purge took meanwhile
    /// are gone: a paused stream keeps none).
    public func updateLogStream(id: String, _ settings: LogStreamSettings, by caller: ManagementCaller, context: RequestContext) throws -> LogStreamRow {
        guard settings != LogStreamSettings() else { throw AuthError.malformed("send at least one setting to change") }
        let before = try logStream(id: id)
        var after = before
        after.name = settings.name ?? after.name
        after.status = settings.status ?? after.status
        after.endpoint = settings.endpoint ?? after.endpoint
        after.contentType = settings.contentType ?? after.contentType
        after.contentFormat = settings.contentFormat ?? after.contentFormat
        after.filters = settings.filters ?? after.filters
        if let authorization = settings.authorization { after.authorization = try sealedAuthorization(authorization, streamID: id) }
        try Self.validate(after, authorization: settings.authorization ?? nil)
        return try write(after, over: before, detail: "log stream \(id): \(settings.names.joined(separator: ", "))", by: caller, context: context)
    }

    /// `POST /api/v2/log-streams/{id}/resend {"after": LOG_ID}` (Signet's own): every event after
    /// `after` is sent again, in order, for an endpoint that lost what it took. Only back: a
    /// stream never skips what it has not sent. Events the purge took since are gone.
    public func resendLogStream(id: String, after: String, by caller: ManagementCaller, context: RequestContext) throws -> LogStreamRow {
        guard let from = Int64(after), from >= 0 else { throw AuthError.malformed("after must be a log_id") }
        let stream = try logStream(id: id)
        guard from <= stream.lastLogID else { throw AuthError.malformed("after must be at most the stream's last_log_id (\(stream.lastLogID)): a stream never skips events") }
        let event = pendingAuditEvent(.adminLogStreamUpdated, client: caller.clientID, detail: "log stream \(id): resend after \(from)", context: context)
        guard try store.rewindLogStream(id: id, after: from, writes: [.audit(event)]) else {
            throw AuthError(.conflict, "log stream \(id.prefix(64)) changed meanwhile: read it again")
        }
        counted(event)
        logStreamsChanged.signal()
        return try logStream(id: id)
    }

    /// `DELETE /api/v2/log-streams/{id}`.
    public func removeLogStream(id: String, by caller: ManagementCaller, context: RequestContext) throws {
        let event = pendingAuditEvent(.adminLogStreamRemoved, client: caller.clientID, detail: "log stream \(id.prefix(64))", context: context)
        guard id.utf8.count <= 64, try store.deleteLogStream(id: id, writes: [.audit(event)]) else { throw AuthError(.logStreamNotFound, "no log stream \(id.prefix(64))") }
        counted(event)
    }

    func sealedAuthorization(_ value: String?, streamID: String) throws -> [UInt8]? {
        try value.map { try AESGCM.seal(Array($0.utf8), key: logStreamKey, aad: Array(streamID.utf8)) }
    }

    /// A stream's settings as Signet accepts them. `authorization` is the new header value, if
    /// one is given: it must fit in one header line (RFC 9110 §5.5: visible ASCII and spaces), so
    /// no value can add a header or a request of its own.
    package static func validate(_ row: LogStreamRow, authorization: String?) throws {
        guard !row.name.isEmpty, row.name.count <= 100, !row.name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw AuthError.malformed("the name must be 1 to 100 characters, none of them a control character")
        }
        guard row.status == "active" || row.status == "paused" else { throw AuthError.malformed("status must be active or paused") }
        guard row.endpoint.utf8.count <= 2048, isClientEndpointURI(row.endpoint) else {
            throw AuthError.malformed("sink.httpEndpoint must be an https URI without a fragment, at most 2048 bytes (http only to a loopback address)")
        }
        guard logStreamFormats.contains(row.contentFormat) else { throw AuthError.malformed("sink.httpContentFormat must be JSONARRAY, JSONLINES or JSONOBJECT") }
        if let unknown = row.filters.first(where: { !AuditKind.streamCategories.contains($0) }) {
            throw AuthError.malformed("filters: \"\(unknown.prefix(60))\" is not a category (\(AuditKind.streamCategories.joined(separator: ", ")))")
        }
        guard Set(row.filters).count == row.filters.count else { throw AuthError.malformed("filters: a category is named twice") }
        guard row.contentType.utf8.count <= 100, row.contentType.utf8.contains(UInt8(ascii: "/")), row.contentType.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw AuthError.malformed("sink.httpContentType must be a media type of at most 100 visible ASCII characters")
        }
        if let authorization {
            guard !authorization.isEmpty, authorization.utf8.count <= 4096, authorization.utf8.allSatisfy({ (0x20...0x7E).contains($0) }),
                  authorization.first != " ", authorization.last != " " else {
                throw AuthError.malformed("sink.httpAuthorization must be 1 to 4096 visible ASCII characters (spaces inside only)")
            }
        }
    }

    /// The scheme, host and port of `uri`, for an audit detail (a path or query may hold a token).
    static func origin(_ uri: String) -> String {
        guard let url = URLComponents(string: uri), let scheme = url.scheme, let host = url.host else { return "?" }
        return "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
    }

    // MARK: delivery

    /// The next POST `stream` is to make, holding its lease for `owner`, or `nil` when there is
    /// none now: paused, in its back-off, nothing new, the next event not there yet, or another
    /// instance holding the stream. `gapSince` is when this sender first saw the event after the
    /// stream's last one missing (``logStreamGapWait``); it is updated here.
    public func nextLogStreamPost(_ stream: LogStreamRow, owner: String, gapSince: inout Int64?) throws -> LogStreamPost? {
        let now = nowMillis
        guard stream.status == "active", stream.nextAttemptAt <= now else { return nil }
        let entries = try store.auditEntries(AuditQuery(after: stream.lastLogID, limit: Self.logStreamBatch))
        let (count, since) = Self.deliverable(entries.map(\.id), after: stream.lastLogID, gapSince: gapSince, now: now)
        gapSince = since
        guard count > 0 else { return nil }
        // The events of the stream's categories among those that go now (one for JSONOBJECT); the
        // stream moves past the others as it moves past them.
        var chosen: [AuditEntry] = []
        var through = entries[count - 1].id
        for entry in entries.prefix(count) where stream.filters.isEmpty || stream.filters.contains(Self.streamCategory(entry.event)) {
            chosen.append(entry)
            if stream.contentFormat == "JSONOBJECT" {
                through = entry.id
                break
            }
        }
        // The lease, and the stream as it is now: another instance may have sent these meanwhile.
        // The claim is a write, and a write returns once it is durable, with every commit before
        // it (durable SQLite's group commit): so the events read above are on disk before they go,
        // and an event a power cut takes back (its ID then reused) is never sent.
        guard let claimed = try store.claimLogStream(id: stream.id, owner: owner, now: now, until: now + Self.logStreamLease),
              claimed.lastLogID == stream.lastLogID, claimed.sameSettings(as: stream) else { return nil }
        let items = chosen.map { LogStreamItem(log_id: String($0.id), data: Self.wire($0)) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body: [UInt8]
        switch stream.contentFormat {
        case _ where items.isEmpty: body = []
        case "JSONLINES": body = try items.flatMap { Array(try encoder.encode($0)) + [0x0A] }
        case "JSONOBJECT": body = Array(try encoder.encode(items[0]))
        default: body = Array(try encoder.encode(items))
        }
        var headers = ["Content-Type: " + stream.contentType]
        if let sealed = stream.authorization {
            guard let header = try? AESGCM.open(sealed, key: logStreamKey, aad: Array(stream.id.utf8)) else {
                logStreamOutcome(stream, owner: owner, lastLogID: 0, failure: "its header does not open under this key-encryption key")
                return nil
            }
            headers.append("Authorization: " + String(decoding: header, as: UTF8.self))
        }
        if let sealed = stream.signing {
            guard let opened = try? AESGCM.open(sealed, key: logStreamKey, aad: LogStreamSigning.associatedData(streamID: stream.id)),
                  let secrets = LogStreamSigning.signing(opened, previousUntil: stream.signingPreviousUntil, now: now) else {
                logStreamOutcome(stream, owner: owner, lastLogID: 0, failure: "its signing secret does not open under this key-encryption key")
                return nil
            }
            // The range of the log this POST accounts for: the same ID when the same events go again.
            let id = "\(stream.id)-\(stream.lastLogID + 1)-\(through)"
            headers += LogStreamSigning.headers(secrets: secrets, id: id, timestamp: now / 1000, body: body)
        }
        // The stream as claimed: its failures as they are now (a pass's own copy keeps those it
        // started with, and the event of a return after failures would be written again and
        // again, each one another POST).
        return LogStreamPost(stream: claimed, headers: headers, body: body, lastLogID: through, count: items.count)
    }

    /// An event's log stream category; a kind this version does not know (a newer
    /// instance's) is `other`.
    static func streamCategory(_ event: AuditEvent) -> String {
        AuditKind(rawValue: event.kind)?.streamCategory(outcome: event.outcome) ?? "other"
    }

    /// How many of `ids` (event IDs after `last`, ascending) go now, and when the gap at the
    /// start was first seen. They go in order without a gap; a missing ID right after `last` is
    /// waited for ``logStreamGapWait`` from when it was first seen, then taken as never written.
    package static func deliverable(_ ids: [Int64], after last: Int64, gapSince: Int64?, now: Int64) -> (count: Int, gapSince: Int64?) {
        guard let first = ids.first else { return (0, nil) }
        if first != last + 1 {
            let since = gapSince ?? now
            guard now - since >= logStreamGapWait else { return (0, since) }
        }
        var count = 1
        while count < ids.count, ids[count] == ids[count - 1] + 1 { count += 1 }
        return (count, nil)
    }

    /// Records a POST's outcome: taken (`failure` nil: the stream moves past `lastLogID`), or
    /// not, and then the next try waits 1 s, doubling to 5 minutes, for as long as it fails. A
    /// stream is never given up on: its events wait, and the purge keeps them.
    /// `posted` false: nothing of the stream's categories was among the events, and no POST went.
    public func logStreamOutcome(_ stream: LogStreamRow, owner: String, lastLogID: Int64, failure: String?, posted: Bool = true) {
        let now = nowMillis
        guard let failure else {
            let taken = (try? store.logStreamDelivered(id: stream.id, owner: owner, lastLogID: lastLogID, at: now)) ?? false
            if posted { metrics.ceremony("log_stream", reason: nil) }
            // Back after failures: said once, as the failure was.
            if taken, posted, stream.failures > 0 {
                audit(.logStreamDelivery, detail: "stream \(stream.id) takes events again after \(stream.failures) failed POST(s)", context: .server)
            }
            return
        }
        let delay = Int64(min(300, 1 << min(16, stream.failures))) * 1000
        try? store.logStreamFailed(id: stream.id, owner: owner, error: failure, retryAt: now + delay)
        metrics.ceremony("log_stream", reason: "retry")
        // The first failure in a row is an event for the other streams and the log; the retries are not.
        if stream.failures == 0 { audit(.logStreamDelivery, "failure", detail: "stream \(stream.id): \(failure.prefix(200))", context: .server) }
    }
}
