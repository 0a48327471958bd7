import Foundation
public import SignetAPI

/// The Management API's audit log (Auth0's `/api/v2/logs` and `/api/v2/users/{id}/logs`).
extension Ceremonies {
    /// `GET /api/v2/logs`: without `from`, the newest `take` events, newest first; with `from`
    /// (a `log_id`), the `take` events after it, oldest first, which is how Auth0's checkpoint
    /// paging follows the log. `q` narrows it with up to three terms joined by ` AND `, each at
    /// most once: `user_id:"ID"`, `type:"CODE"` (the log's `type`: Auth0's code, or Signet's
    /// name for an event Auth0 has no code for) and `signet_event:"NAME"`.
    public func logs(q: String?, from: String?, take: Int) throws -> [LogEvent] {
        guard (1...100).contains(take) else { throw AuthError.malformed("take must be 1 to 100") }
        var query = AuditQuery(limit: take)
        if let from, !from.isEmpty {
            guard let id = Int64(from), id >= 0 else { throw AuthError.malformed("from must be a log_id") }
            query.after = id
        }
        if let q = q?.trimmingCharacters(in: .whitespaces), !q.isEmpty { try Self.narrow(&query, q) }
        return try store.auditEntries(query).map(Self.wire)
    }

    /// `GET /api/v2/logs/{id}`: one event by its `log_id` (digits only), as the list shows it.
    public func log(id: String) throws -> LogEvent {
        let unknown = AuthError(.logNotFound, "no log event \(id.prefix(40))")
        guard (1...19).contains(id.utf8.count), id.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let n = Int64(id), n > 0,
              let entry = try store.auditEntries(AuditQuery(after: n - 1, limit: 1)).first, entry.id == n else { throw unknown }
        return Self.wire(entry)
    }

    /// `GET /api/v2/users/{id}/logs` (Auth0's user log events): page `page` of `perPage`
    /// events of the user, newest first unless `sort` is `date:1`; with `totals`, how many
    /// there are in all (counted only then: on SQLite a count reads every row of the trail).
    public func userLogs(userID: String, page: Int, perPage: Int, sort: String?, totals: Bool) throws -> ManagementLogPage {
        guard page >= 0, page <= 100_000, (1...100).contains(perPage) else { throw AuthError.malformed("page must be 0 to 100000 and per_page 1 to 100") }
        guard sort == nil || sort == "date:1" || sort == "date:-1" else { throw AuthError.malformed("sort must be date:1 or date:-1") }
        _ = try existingUser(userID)
        let query = AuditQuery(userID: userID, limit: perPage, offset: page * perPage, oldestFirst: sort == "date:1")
        let logs = try store.auditEntries(query).map(Self.wire)
        return ManagementLogPage(start: page * perPage, limit: perPage, length: logs.count, total: totals ? try store.auditCount(query) : nil, logs: logs)
    }

    /// `q` of `GET /api/v2/logs` applied to `query` (``logs(q:from:take:)``).
    package static func narrow(_ query: inout AuditQuery, _ q: String) throws {
        let usage = AuthError.malformed(#"q takes user_id:"ID", type:"CODE" and signet_event:"NAME", joined by AND"#)
        guard q.utf8.count <= 300 else { throw usage }
        var seen: Set<String> = []
        // Terms and their parts are found by bytes: a quote or a space is one code point.
        for term in Array(q.utf8).split(separator: Array(" AND ".utf8)) {
            guard let colon = term.firstIndex(of: UInt8(ascii: ":")), term.count >= colon - term.startIndex + 3,
                  term[term.index(after: colon)] == UInt8(ascii: "\""), term.last == UInt8(ascii: "\"") else { throw usage }
            let field = String(decoding: term[..<colon], as: UTF8.self)
            let value = String(decoding: term[(colon + 2)..<(term.endIndex - 1)], as: UTF8.self)
            guard !value.isEmpty, !value.utf8.contains(UInt8(ascii: "\"")), seen.insert(field).inserted else { throw usage }
            switch field {
            case "user_id": query.userID = value
            case "signet_event":
                guard let kind = AuditKind(rawValue: value) else { throw AuthError.malformed("signet_event \"\(value.prefix(60))\" is no event Signet writes") }
                query.events = (query.events ?? [AuditMatch(kind: kind.rawValue)]).filter { $0.kind == kind.rawValue }
            case "type":
                let matches = AuditKind.allCases.flatMap { kind -> [AuditMatch] in
                    guard let codes = kind.auth0Types else { return kind.rawValue == value ? [AuditMatch(kind: kind.rawValue)] : [] }
                    return [(codes.success, "success"), (codes.failure, "failure")].filter { $0.0 == value }.map { AuditMatch(kind: kind.rawValue, outcome: $0.1) }
                }
                query.events = query.events.map { chosen in matches.filter { m in chosen.contains { $0.kind == m.kind } } } ?? matches
            default: throw usage
            }
        }
    }

    /// Auth0's log type code for an event, where Auth0 has one (``AuditKind/auth0Types``); a
    /// kind this version does not know (a newer instance's) has none.
    static func auth0Type(_ e: AuditEvent) -> String? {
        AuditKind(rawValue: e.kind)?.auth0Types.map { e.outcome == "success" ? $0.success : $0.failure }
    }

    static func wire(_ entry: AuditEntry) -> LogEvent {
        let e = entry.event
        return LogEvent(log_id: String(entry.id), date: iso(e.at), type: auth0Type(e) ?? e.kind, signet_event: e.kind, outcome: e.outcome, reason: e.reason,
                        description: e.detail, client_id: e.clientID, user_id: e.userID, ip: e.remote, request_id: e.requestID)
    }
}
