/// A log stream (`/api/v2/log-streams`, Auth0's shape for its `http` type): where Signet POSTs
/// its audit log as it grows, with Signet's own `signet_` members for what Auth0 does not show.
/// The `Authorization` header's value is never in an answer: `signet_authorization` says only
/// whether one is set. The signing secret is in the one answer that made it.
public struct ManagementLogStream: Codable, Sendable, Equatable {
    /// Where and how events go.
    public struct Sink: Codable, Sendable, Equatable {
        public var httpEndpoint: String
        public var httpContentType: String
        /// `JSONARRAY`, `JSONLINES` or `JSONOBJECT`.
        public var httpContentFormat: String
        public init(httpEndpoint: String, httpContentType: String, httpContentFormat: String) {
            self.httpEndpoint = httpEndpoint
            self.httpContentType = httpContentType
            self.httpContentFormat = httpContentFormat
        }
    }
    /// A category of events the stream sends (Auth0's `{"type": "category", "name": …}`).
    public struct Filter: Codable, Sendable, Equatable {
        public var type: String
        public var name: String
        public init(type: String = "category", name: String) {
            self.type = type
            self.name = name
        }
    }
    /// How far delivery has come.
    public struct Delivery: Codable, Sendable, Equatable {
        /// The last event the endpoint took (a `log_id` of `GET /api/v2/logs`).
        public var last_log_id: String
        /// Events after it, counted up to 10,000.
        public var pending: Int
        /// POSTs failed in a row.
        public var failures: Int
        public var last_error: String?
        public var last_delivered_at: String?
        /// After a failure, when the next POST goes.
        public var next_attempt_at: String?
        public init(last_log_id: String, pending: Int, failures: Int, last_error: String?, last_delivered_at: String?, next_attempt_at: String?) {
            self.last_log_id = last_log_id
            self.pending = pending
            self.failures = failures
            self.last_error = last_error
            self.last_delivered_at = last_delivered_at
            self.next_attempt_at = next_attempt_at
        }
    }
    public var id: String
    public var name: String
    /// Always `http`.
    public var type: String
    /// `active` or `paused`.
    public var status: String
    public var sink: Sink
    /// The categories sent; empty: every event.
    public var filters: [Filter]
    /// Whether an `Authorization` header goes with each POST.
    public var signet_authorization: Bool
    /// Whether each POST is signed (Standard Webhooks' `webhook-id`, `webhook-timestamp` and
    /// `webhook-signature`); a stream made before Signet signed them is not until its secret is
    /// rotated.
    public var signet_signed: Bool
    /// Until when the secret a rotation replaced still signs beside the new one.
    public var signet_previous_secret_until: String?
    /// The signing secret (`whsec_…`): only in the answer that made it (the stream's creation,
    /// or `rotate-secret`), never again.
    public var signet_signing_secret: String?
    public var created_at: String
    public var signet_delivery: Delivery

    public init(id: String, name: String, type: String, status: String, sink: Sink, filters: [Filter] = [], signet_authorization: Bool, signet_signed: Bool = false,
                signet_previous_secret_until: String? = nil, signet_signing_secret: String? = nil, created_at: String, signet_delivery: Delivery) {
        self.signet_signed = signet_signed
        self.signet_previous_secret_until = signet_previous_secret_until
        self.signet_signing_secret = signet_signing_secret
        self.filters = filters
        self.id = id
        self.name = name
        self.type = type
        self.status = status
        self.sink = sink
        self.signet_authorization = signet_authorization
        self.created_at = created_at
        self.signet_delivery = signet_delivery
    }
}

/// One event as a log stream POSTs it: Auth0's envelope, the event as `GET /api/v2/logs` shows it
/// under `data`. An endpoint that sees a `log_id` twice (after a failed POST it took) keeps one.
public struct LogStreamItem: Codable, Sendable, Equatable {
    public var log_id: String
    public var data: LogEvent
    public init(log_id: String, data: LogEvent) {
        self.log_id = log_id
        self.data = data
    }
}
