package import SignetAPI
package import SignetAuth
import SignetHTTP
package import SignetWebAuthn

/// `/api/v2/log-streams`: where the audit log is POSTed as it grows (Auth0's paths, scopes and
/// shape for its `http` streams).
extension SignetService {
    static func addManagementLogStreamRoutes(_ r: inout Router<SignetService>) {
        r.add("GET", "/api/v2/log-streams", needs: .management(.readLogStreams)) { s, call in
            try Wire.encode(try s.ceremonies.logStreams().map { try ManagementLogStream($0, pending: s.ceremonies.logStreamPending($0), now: s.ceremonies.nowMillis) })
        }
        r.add("GET", "/api/v2/log-streams/{id}", needs: .management(.readLogStreams)) { s, call in
            let stream = try s.ceremonies.logStream(id: call.parameter("id"))
            return try Wire.encode(ManagementLogStream(stream, pending: s.ceremonies.logStreamPending(stream), now: s.ceremonies.nowMillis))
        }
        r.add("POST", "/api/v2/log-streams", needs: .management(.createLogStreams)) { s, call in
            let added = try s.ceremonies.addLogStream(LogStreamSettings(wire: s.body(call), new: true), by: call.administrator, context: call.context)
            return try Wire.encode(ManagementLogStream(added.stream, pending: 0, now: s.ceremonies.nowMillis, secret: added.secret), status: 201)
        }
        r.add("POST", "/api/v2/log-streams/{id}/rotate-secret", needs: .management(.updateLogStreams)) { s, call in
            let body = call.request.body.isEmpty ? JSONValue.object([:]) : try s.body(call)
            guard let object = body.object, object.keys.allSatisfy({ $0 == "previous_secret_seconds" }) else {
                throw AuthError.malformed("send {} or {\"previous_secret_seconds\": SECONDS}")
            }
            let given = body["previous_secret_seconds"]
            guard let overlap = given == nil ? LogStreamSigning.defaultOverlap : given?.int64 else {
                throw AuthError.malformed("previous_secret_seconds must be a whole number of seconds")
            }
            let rotated = try s.ceremonies.rotateLogStreamSecret(id: call.parameter("id"), overlap: overlap, by: call.administrator, context: call.context)
            return try Wire.encode(ManagementLogStream(rotated.stream, pending: s.ceremonies.logStreamPending(rotated.stream), now: s.ceremonies.nowMillis, secret: rotated.secret))
        }
        r.add("PATCH", "/api/v2/log-streams/{id}", needs: .management(.updateLogStreams)) { s, call in
            let changed = try s.ceremonies.updateLogStream(id: call.parameter("id"), LogStreamSettings(wire: s.body(call), new: false),
                                                           by: call.administrator, context: call.context)
            return try Wire.encode(ManagementLogStream(changed, pending: s.ceremonies.logStreamPending(changed), now: s.ceremonies.nowMillis))
        }
        r.add("POST", "/api/v2/log-streams/{id}/resend", needs: .management(.updateLogStreams)) { s, call in
            let body = try s.body(call)
            guard let object = body.object, object.keys.allSatisfy({ $0 == "after" }) else { throw AuthError.malformed("send {\"after\": \"LOG_ID\"}") }
            let stream = try s.ceremonies.resendLogStream(id: call.parameter("id"), after: try body.member("after"), by: call.administrator, context: call.context)
            return try Wire.encode(ManagementLogStream(stream, pending: s.ceremonies.logStreamPending(stream), now: s.ceremonies.nowMillis))
        }
        r.add("DELETE", "/api/v2/log-streams/{id}", needs: .management(.deleteLogStreams)) { s, call in
            try s.ceremonies.removeLogStream(id: call.parameter("id"), by: call.administrator, context: call.context)
            return HTTPResponse(status: 204)
        }
    }
}

extension ManagementLogStream {
    /// A stream as the API shows it: never its `Authorization` value; its signing secret only
    /// when `secret` is given (the answer that made it); the previous secret's end while it is
    /// after `now`.
    package init(_ row: LogStreamRow, pending: Int, now: Int64, secret: String? = nil) {
        let iso = Ceremonies.iso
        self.init(id: row.id, name: row.name, type: "http", status: row.status,
                  sink: Sink(httpEndpoint: row.endpoint, httpContentType: row.contentType, httpContentFormat: row.contentFormat),
                  filters: row.filters.map { Filter(name: $0) },
                  signet_authorization: row.authorization != nil, signet_signed: row.signing != nil,
                  signet_previous_secret_until: row.signingPreviousUntil > now ? iso(row.signingPreviousUntil) : nil,
                  signet_signing_secret: secret, created_at: iso(row.createdAt),
                  signet_delivery: Delivery(last_log_id: String(row.lastLogID), pending: pending, failures: row.failures, last_error: row.lastError,
                                            last_delivered_at: row.lastDeliveredAt.map(iso), next_attempt_at: row.failures > 0 ? iso(row.nextAttemptAt) : nil))
    }
}

extension LogStreamSettings {
    static let sinkMembers: Set<String> = ["httpEndpoint", "httpContentType", "httpContentFormat", "httpAuthorization"]

    /// The body of `POST` (`new`) or `PATCH /api/v2/log-streams/{id}`: Auth0's members; any
    /// other is refused, so a setting Signet does not have is never silently dropped.
    package init(wire json: JSONValue, new: Bool) throws {
        let members: Set<String> = new ? ["name", "type", "status", "sink", "filters"] : ["name", "status", "sink", "filters"]
        guard let object = json.object else { throw AuthError.malformed("the body must be a JSON object") }
        if let unknown = object.keys.first(where: { !members.contains($0) }) {
            throw AuthError.malformed("\"\(unknown.prefix(40))\" is not a log stream setting Signet has (\(members.sorted().joined(separator: ", ")))")
        }
        if new, let type = try json.optionalMember("type"), type != "http" { throw AuthError.malformed("type must be http: Signet streams to an HTTP endpoint") }
        self.init(name: try json.optionalMember("name"), status: try json.optionalMember("status"))
        switch json["filters"] {
        case nil: break
        case .null?: filters = []
        case let value?:
            guard let list = value.array, list.count <= 30 else { throw AuthError.malformed("filters must be a list of at most 30 {\"type\": \"category\", \"name\": …}") }
            filters = try list.map { filter in
                guard let object = filter.object, object.keys.allSatisfy({ $0 == "type" || $0 == "name" }), filter["type"] == .string("category"),
                      let name = filter["name"]?.string else {
                    throw AuthError.malformed("each filter must be {\"type\": \"category\", \"name\": …}")
                }
                return name
            }
        }
        switch json["sink"] {
        case nil, .null?: break
        case let sink?:
            guard let fields = sink.object else { throw AuthError.malformed("sink must be an object") }
            if let unknown = fields.keys.first(where: { !Self.sinkMembers.contains($0) }) {
                throw AuthError.malformed("\"sink.\(unknown.prefix(40))\" is not a sink setting Signet has (\(Self.sinkMembers.sorted().joined(separator: ", ")))")
            }
            endpoint = try sink.optionalMember("httpEndpoint")
            contentType = try sink.optionalMember("httpContentType")
            contentFormat = try sink.optionalMember("httpContentFormat")
            switch sink["httpAuthorization"] {
            case nil: break
            case .null?: authorization = .some(nil)
            case .string(let value)?: authorization = .some(value)
            default: throw AuthError.malformed("sink.httpAuthorization must be a string, or null to send none")
            }
        }
    }
}

extension SignetService {
    /// Each log stream's events not delivered yet (up to 10,000) and POSTs failed in a row: an
    /// endpoint that stops taking events shows as a count that grows.
    func logStreamMetrics() -> String {
        let streams = (try? ceremonies.logStreams()) ?? []
        var text = "# HELP signet_log_stream_pending_events Audit events a log stream has not delivered yet, counted up to 10000.\n# TYPE signet_log_stream_pending_events gauge\n"
        for s in streams { text += "signet_log_stream_pending_events{stream=\"\(s.id)\",status=\"\(s.status)\"} \((try? ceremonies.logStreamPending(s)) ?? 0)\n" }
        text += "# HELP signet_log_stream_failures POSTs to a log stream's endpoint failed in a row.\n# TYPE signet_log_stream_failures gauge\n"
        for s in streams { text += "signet_log_stream_failures{stream=\"\(s.id)\"} \(s.failures)\n" }
        return text
    }
}
