import Foundation
import SignetAPI
import SignetAuth

/// `signet admin logs [--follow]`: the audit log, newest last, as `/api/v2/logs` gives it.
extension Admin {
    func logs() throws {
        let take = try Admin.integer(options.one("--take"), "--take", default: 50)
        let terms = [options.one("--user").map { "user_id:\"\($0)\"" }, options.one("--event").map { "signet_event:\"\($0)\"" },
                     options.one("--type").map { "type:\"\($0)\"" }].compactMap { $0 }
        let q = terms.isEmpty ? nil : terms.joined(separator: " AND ")
        // Newest first for a look; with --follow, then every new event as it is written.
        var events = try ceremonies.logs(q: q, from: nil, take: take).reversed() as [LogEvent]
        var last = events.last.flatMap { Int64($0.log_id) } ?? 0
        // Written straight to the file descriptor, unbuffered, so a follower sees each event at once.
        func show(_ batch: [LogEvent]) throws {
            var out = ""
            for e in batch {
                if options.json {
                    out += String(decoding: try JSONEncoder().encode(e), as: UTF8.self) + "\n"
                    continue
                }
                var fields: [String] = [e.date, e.signet_event, e.outcome]
                if let reason = e.reason { fields.append(reason) }
                if let user = e.user_id { fields.append("user=" + user) }
                if let client = e.client_id { fields.append("client=" + client) }
                if let ip = e.ip { fields.append("ip=" + ip) }
                out += Self.printable(fields.joined(separator: "  ")) + "\n"
            }
            FileHandle.standardOutput.write(Data(out.utf8))
        }
        try show(events)
        guard options.follow else { return }
        while true {
            Thread.sleep(forTimeInterval: 1)
            events = try ceremonies.logs(q: q, from: String(last), take: 100)
            if let id = events.last.flatMap({ Int64($0.log_id) }) { last = id }
            try show(events)
        }
    }
}
