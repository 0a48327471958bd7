/// A log stream (`/api/v2/log-streams`, after Auth0's): an HTTP endpoint the audit log is POSTed
/// to as it grows, in order, each event until the endpoint takes it (at least once: an event may
/// come twice after a failure, never not at all while the stream is active).
public struct LogStreamRow: Sendable, Equatable {
    public var id: String
    public var name: String
    /// `active` or `paused` (a paused stream sends nothing and keeps no event from the purge).
    public var status: String
    /// The URL events are POSTed to: `https`, or `http` to a loopback address.
    public var endpoint: String
    /// The `Content-Type` of each POST.
    public var contentType: String
    /// `JSONARRAY` (a POST of an array of events), `JSONLINES` (one event a line) or
    /// `JSONOBJECT` (a POST an event).
    public var contentFormat: String
    /// The categories of events sent (``AuditKind/streamCategories``); empty: every event.
    public var filters: [String]
    /// The `Authorization` header's value, sealed under the key-encryption key (AES-256-GCM,
    /// the stream's ID as associated data); `nil`: no header.
    public var authorization: [UInt8]?
    /// The signing secrets (``LogStreamSigning``), sealed under the key-encryption key
    /// (AES-256-GCM, ``LogStreamSigning/associatedData(streamID:)``): the current one's 32 bytes,
    /// then the previous one's while it still signs; `nil`: POSTs go unsigned (a stream made
    /// before schema 27, until its secret is rotated).
    public var signing: [UInt8]?
    /// Until when the previous secret signs beside the current one (milliseconds); 0: it does not.
    public var signingPreviousUntil: Int64
    public var createdAt: Int64
    /// The ID of the last audit event the endpoint took; the next POST starts after it.
    public var lastLogID: Int64
    /// POSTs failed in a row since the last one taken.
    public var failures: Int
    /// No POST before this time (milliseconds): the back-off after a failure.
    public var nextAttemptAt: Int64
    /// What went wrong with the last POST (the status or curl's error, never the header).
    public var lastError: String?
    public var lastDeliveredAt: Int64?

    public init(id: String, name: String, status: String, endpoint: String, contentType: String, contentFormat: String, filters: [String] = [],
                authorization: [UInt8]?, signing: [UInt8]? = nil, signingPreviousUntil: Int64 = 0, createdAt: Int64, lastLogID: Int64 = 0, failures: Int = 0, nextAttemptAt: Int64 = 0, lastError: String? = nil,
                lastDeliveredAt: Int64? = nil) {
        self.filters = filters
        self.id = id
        self.name = name
        self.status = status
        self.endpoint = endpoint
        self.contentType = contentType
        self.contentFormat = contentFormat
        self.authorization = authorization
        self.signing = signing
        self.signingPreviousUntil = signingPreviousUntil
        self.createdAt = createdAt
        self.lastLogID = lastLogID
        self.failures = failures
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
        self.lastDeliveredAt = lastDeliveredAt
    }

    /// Whether `other` has the same settings (what an operator changes), whatever its delivery.
    public func sameSettings(as other: LogStreamRow) -> Bool {
        (id, name, status, endpoint, contentType, contentFormat) == (other.id, other.name, other.status, other.endpoint, other.contentType, other.contentFormat)
            && filters == other.filters && authorization == other.authorization
            && signing == other.signing && signingPreviousUntil == other.signingPreviousUntil
    }
}
