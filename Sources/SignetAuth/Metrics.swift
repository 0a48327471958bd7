public import Foundation

/// Counters and a latency histogram in the Prometheus text format (exposition format 0.0.4).
public final class Metrics: @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [String: Int] = [:]  // "route\u{0}status"
    private var outcomes: [String: Int] = [:]  // "ceremony\u{0}outcome\u{0}reason"
    private var audited: [String: Int] = [:]  // "event\u{0}outcome"
    private var purged: [String: Int] = [:]  // what
    private var purgeFailures: [String: Int] = [:]  // what
    /// Scheduled backups (`backup.directory`): made, failed, and the last one made.
    private var backups = (made: 0, failed: 0, lastAt: Int64(0), lastBytes: 0, lastSeconds: 0.0)
    private var backupsScheduled = false
    /// The attestation metadata BLOB in force (`attestation_metadata`): its number, its
    /// `nextUpdate` (seconds), and the BLOBs read again and refused since the start.
    private var metadata: (number: Int64, nextUpdate: Int64, loads: Int, refused: Int)?
    /// Fetches of `attestation_metadata.url` by outcome; `nil` when none is set.
    private var metadataFetches: [String: Int]?
    private let durations = DurationHistogram(buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5])

    /// One answered request: its route, status and duration.
    public func request(route: String, status: Int, seconds: Double) {
        lock.lock()
        defer { lock.unlock() }
        requests["\(route)\u{0}\(status)", default: 0] += 1
        durations.observe(seconds)
    }

    /// One sign-up or sign-in outcome: `success`, or `failure` with its reason.
    public func ceremony(_ kind: String, reason: String?) {
        lock.lock()
        defer { lock.unlock() }
        outcomes["\(kind)\u{0}\(reason == nil ? "success" : "failure")\u{0}\(reason ?? "")", default: 0] += 1
    }

    /// One audit event recorded (or about to be, with its transaction).
    public func audit(_ kind: String, outcome: String) {
        lock.lock()
        defer { lock.unlock() }
        audited[kind + "\u{0}" + outcome, default: 0] += 1
    }

    /// One step of the minute's purge: `rows` deleted of `what`, or (`rows` nil) the step failed.
    public func purge(_ what: String, rows: Int?) {
        lock.lock()
        defer { lock.unlock() }
        if let rows { purged[what, default: 0] += rows } else { purgeFailures[what, default: 0] += 1 }
    }

    /// One scheduled backup: made at `at` (milliseconds) with its size and duration, or (`at`
    /// nil) failed.
    public func backup(at: Int64?, bytes: Int = 0, seconds: Double = 0) {
        lock.lock()
        defer { lock.unlock() }
        guard let at else { backups.failed += 1; return }
        backups.made += 1
        (backups.lastAt, backups.lastBytes, backups.lastSeconds) = (at, bytes, seconds)
    }

    /// Shows the backup series from the start, when backups are scheduled, with the time of the
    /// newest copy already in the folder (milliseconds), if any.
    public func backupsScheduled(newest: Int64?) {
        lock.lock()
        backupsScheduled = true
        if let newest, backups.lastAt == 0 { backups.lastAt = newest }
        lock.unlock()
    }

    /// A BLOB put in force: at the start, or read again (`loaded`).
    public func attestationMetadata(number: Int64, nextUpdate: Date, loaded: Bool) {
        lock.lock()
        defer { lock.unlock() }
        let before = metadata
        metadata = (number, Int64(nextUpdate.timeIntervalSince1970), (before?.loads ?? 0) + (loaded ? 1 : 0), before?.refused ?? 0)
    }

    /// That `attestation_metadata.url` is fetched: its series appear, at zero.
    public func attestationMetadataFetching() {
        lock.lock()
        defer { lock.unlock() }
        if metadataFetches == nil { metadataFetches = [:] }
    }

    /// One fetch of `attestation_metadata.url`: `loaded`, `unchanged`, `refused` or `failed`.
    public func attestationMetadataFetch(_ outcome: String) {
        lock.lock()
        defer { lock.unlock() }
        metadataFetches?[outcome, default: 0] += 1
    }

    /// A changed BLOB file that was refused (the one in force stays).
    public func attestationMetadataRefused() {
        lock.lock()
        defer { lock.unlock() }
        metadata?.refused += 1
    }

    /// One metric family in the text format: its HELP and TYPE lines, then a line for each
    /// sample (its labels, `{…}` or empty, and its value).
    static func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n" + samples.map { "\(name)\($0.labels) \($0.value)\n" }.joined()
    }

    /// Resident set size from /proc/self/statm (pages × page size).
    public static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    public var text: String {
        lock.lock()
        defer { lock.unlock() }
        var out = "# HELP signet_http_requests_total HTTP requests by route and status.\n# TYPE signet_http_requests_total counter\n"
        for (key, count) in requests.sorted(by: { $0.key < $1.key }) {
            let p = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            out += "signet_http_requests_total{route=\"\(p[0])\",status=\"\(p[1])\"} \(count)\n"
        }
        out += durations.text(name: "signet_http_request_duration_seconds", help: "Time from a request's headers to its answer.")
        out += "# HELP signet_ceremonies_total Sign-ups and sign-ins by outcome and failure reason.\n# TYPE signet_ceremonies_total counter\n"
        for (key, count) in outcomes.sorted(by: { $0.key < $1.key }) {
            let p = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            out += "signet_ceremonies_total{ceremony=\"\(p[0])\",outcome=\"\(p[1])\",reason=\"\(p[2])\"} \(count)\n"
        }
        out += "# HELP signet_audit_events_total Audit events by event type and outcome.\n# TYPE signet_audit_events_total counter\n"
        for (key, count) in audited.sorted(by: { $0.key < $1.key }) {
            let p = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            out += "signet_audit_events_total{event=\"\(p[0])\",outcome=\"\(p[1])\"} \(count)\n"
        }
        out += "# HELP signet_purged_rows_total Rows deleted by the minute's purge, by what they were.\n# TYPE signet_purged_rows_total counter\n"
        for (what, count) in purged.sorted(by: { $0.key < $1.key }) { out += "signet_purged_rows_total{what=\"\(what)\"} \(count)\n" }
        out += "# HELP signet_purge_failures_total Steps of the minute's purge that failed (each logged), by what they purge.\n# TYPE signet_purge_failures_total counter\n"
        for (what, count) in purgeFailures.sorted(by: { $0.key < $1.key }) { out += "signet_purge_failures_total{what=\"\(what)\"} \(count)\n" }
        if backupsScheduled {
            out += Self.family("signet_backups_total", "counter", "Scheduled backups (backup.directory) by outcome; each failure is logged.",
                               [("{outcome=\"success\"}", "\(backups.made)"), ("{outcome=\"failure\"}", "\(backups.failed)")])
            out += Self.family("signet_backup_last_success_timestamp_seconds", "gauge", "When the newest scheduled backup in the folder was made (0: none yet).",
                               [("", "\(backups.lastAt / 1000)")])
            out += Self.family("signet_backup_last_bytes", "gauge", "The last scheduled backup's size.", [("", "\(backups.lastBytes)")])
            out += Self.family("signet_backup_last_seconds", "gauge", "How long the last scheduled backup took, checks included.", [("", "\(backups.lastSeconds)")])
        }
        if let metadata {
            out += Self.family("signet_attestation_metadata_number", "gauge", "The serial number of the attestation metadata BLOB in force.", [("", "\(metadata.number)")])
            out += Self.family("signet_attestation_metadata_next_update_timestamp_seconds", "gauge", "When the BLOB in force is due to be replaced (alert once past).",
                               [("", "\(metadata.nextUpdate)")])
            out += Self.family("signet_attestation_metadata_reloads_total", "counter", "Changed BLOB files read since the start, by outcome; each refusal is logged.",
                               [("{outcome=\"success\"}", "\(metadata.loads)"), ("{outcome=\"refused\"}", "\(metadata.refused)")])
        }
        if let fetches = metadataFetches {
            out += Self.family("signet_attestation_metadata_fetches_total", "counter", "Fetches of attestation_metadata.url by outcome; each refused or failed one is logged.",
                               ["loaded", "unchanged", "refused", "failed"].map { ("{outcome=\"\($0)\"}", "\(fetches[$0] ?? 0)") })
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        out += "# HELP process_cpu_seconds_total User and system CPU time of the process.\n# TYPE process_cpu_seconds_total counter\n"
        out += "process_cpu_seconds_total \(cpu)\n"
        out += "# HELP process_resident_memory_bytes Resident memory of the process.\n# TYPE process_resident_memory_bytes gauge\n"
        out += "process_resident_memory_bytes \(Metrics.residentBytes())\n"
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        out += "# HELP process_open_fds Open file descriptors.\n# TYPE process_open_fds gauge\nprocess_open_fds \(fds)\n"
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let threads = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }.flatMap { Int($0.dropFirst(8).trimmingCharacters(in: .whitespaces)) } ?? 0
        out += "# HELP process_threads Threads of the process.\n# TYPE process_threads gauge\nprocess_threads \(threads)\n"
        return out
    }
}

/// A Prometheus histogram of durations in seconds (cumulative buckets, sum, count), safe to share
/// between threads.
public final class DurationHistogram: @unchecked Sendable {
    private let lock = NSLock()
    private let bounds: [Double]
    private var counts: [Int]
    private var sum = 0.0
    private var count = 0

    /// `buckets`: the upper bounds, ascending.
    public init(buckets: [Double]) {
        bounds = buckets
        counts = [Int](repeating: 0, count: buckets.count)
    }

    public func observe(_ seconds: Double) {
        lock.lock()
        defer { lock.unlock() }
        for (i, bound) in bounds.enumerated() where seconds <= bound { counts[i] += 1 }
        sum += seconds
        count += 1
    }

    /// The histogram's lines under `name`, with its `# HELP` and `# TYPE`.
    public func text(name: String, help: String) -> String {
        lock.lock()
        defer { lock.unlock() }
        var out = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (i, bound) in bounds.enumerated() { out += "\(name)_bucket{le=\"\(bound)\"} \(counts[i])\n" }
        out += "\(name)_bucket{le=\"+Inf\"} \(count)\n\(name)_sum \(sum)\n\(name)_count \(count)\n"
        return out
    }
}
