import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetServer

/// `signet admin log-streams`: what `/api/v2/log-streams` does. The `Authorization` header's
/// value is read from a file, never taken as an argument (which `ps` and shell histories show),
/// and never printed. The signing secret is printed once, by the command that makes it.
extension Admin {
    func listLogStreams() throws {
        let streams = try ceremonies.logStreams().map { ManagementLogStream($0, pending: try ceremonies.logStreamPending($0), now: ceremonies.nowMillis) }
        if options.json { return try emit(streams) }
        let rows = streams.map { s in
            [s.id, s.name, s.status, s.sink.httpEndpoint, s.sink.httpContentFormat, s.filters.isEmpty ? "all" : s.filters.map(\.name).joined(separator: ","),
             !s.signet_signed ? "no" : s.signet_previous_secret_until.map { "yes, both until " + $0 } ?? "yes",
             s.signet_delivery.last_log_id, String(s.signet_delivery.pending), String(s.signet_delivery.failures), s.signet_delivery.last_error ?? "-"]
        }
        print(Self.table(["ID", "NAME", "STATUS", "ENDPOINT", "FORMAT", "EVENTS", "SIGNED", "LAST LOG ID", "PENDING", "FAILURES", "LAST ERROR"], rows))
        print("\(streams.count) log stream(s)")
    }

    func addLogStream() throws {
        let added = try ceremonies.addLogStream(try logStreamSettings(), by: .commandLine, context: context)
        try show(added.stream, "added", secret: added.secret)
    }

    /// A new signing secret, printed once; the previous one signs beside it for
    /// `--previous-secret-seconds` (a day unless given; 0 for a secret that leaked).
    func rotateLogStreamSecret(_ id: String) throws {
        var overlap = LogStreamSigning.defaultOverlap
        if let given = options.one("--previous-secret-seconds") {
            guard let seconds = Int64(given) else { throw AuthError.malformed("--previous-secret-seconds must be a whole number of seconds") }
            overlap = seconds
        }
        let rotated = try ceremonies.rotateLogStreamSecret(id: id, overlap: overlap, by: .commandLine, context: context)
        try show(rotated.stream, "rotated the signing secret of", secret: rotated.secret)
    }

    func updateLogStream(_ id: String) throws {
        try show(try ceremonies.updateLogStream(id: id, try logStreamSettings(), by: .commandLine, context: context), "updated")
    }

    func removeLogStream(_ id: String) throws {
        try ceremonies.removeLogStream(id: id, by: .commandLine, context: context)
        if !options.json { print("removed log stream \(id)") }
    }

    func show(_ row: LogStreamRow, _ done: String, secret: String? = nil) throws {
        let stream = ManagementLogStream(row, pending: try ceremonies.logStreamPending(row), now: ceremonies.nowMillis, secret: secret)
        if options.json { return try emit(stream) }
        print("\(done) log stream \(stream.id): \(Self.printable(stream.name)), \(stream.status), \(stream.sink.httpContentFormat) to \(Self.printable(stream.sink.httpEndpoint))"
              + (stream.filters.isEmpty ? "" : ", only " + stream.filters.map(\.name).joined(separator: ", "))
              + (stream.signet_authorization ? ", with an Authorization header" : "")
              + (stream.signet_signed ? ", signed" : ", unsigned (rotate-secret gives it a signing secret)"))
        if let until = stream.signet_previous_secret_until { print("the previous signing secret signs too until \(until)") }
        if let secret { print("signing secret  \(secret)   (shown once: give it to the endpoint now; it checks each POST's webhook-signature with it)") }
    }

    /// The options as settings; the header's value is the file's first line.
    func logStreamSettings() throws -> LogStreamSettings {
        var settings = LogStreamSettings(name: options.one("--name"), status: options.one("--status"), endpoint: options.one("--url"),
                                         contentType: options.one("--content-type"), contentFormat: options.one("--format"))
        if let filters = options.values["--filter"] {
            guard !options.allEvents else { throw AuthError.malformed("give --filter or --all-events, not both") }
            settings.filters = filters
        } else if options.allEvents {
            settings.filters = []
        }
        if let file = options.one("--authorization-file") {
            guard !options.noAuthorization else { throw AuthError.malformed("give --authorization-file or --no-authorization, not both") }
            guard let text = try? BoundedFile.readText(file, limit: 64 << 10) else {
                throw AuthError.malformed("cannot read --authorization-file \(file), or it is larger than 64 KiB")
            }
            settings.authorization = .some(String(text.split(whereSeparator: \.isNewline).first ?? ""))
        } else if options.noAuthorization {
            settings.authorization = .some(nil)
        }
        return settings
    }
}
