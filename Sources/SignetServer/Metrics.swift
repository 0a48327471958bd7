import Foundation

/// Counters and a latency histogram in the Prometheus text format (exposition format 0.0.4).
final class Metrics: @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [String: Int] = [:]  // "route\u{0}status"
    private var outcomes: [String: Int] = [:]  // "ceremony\u{0}outcome\u{0}reason"
    static let buckets: [Double] = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
    private var bucketCounts = [Int](repeating: 0, count: Metrics.buckets.count)
    private var durationSum = 0.0
    private var durationCount = 0

    func request(route: String, status: Int, seconds: Double) {
        lock.lock()
        defer { lock.unlock() }
        requests["\(route)\u{0}\(status)", default: 0] += 1
        for (i, bound) in Metrics.buckets.enumerated() where seconds <= bound { bucketCounts[i] += 1 }
        durationSum += seconds
        durationCount += 1
    }

    /// One sign-up or sign-in outcome: `success`, or `failure` with its reason.
    func ceremony(_ kind: String, reason: String?) {
        lock.lock()
        defer { lock.unlock() }
        outcomes["\(kind)\u{0}\(reason == nil ? "success" : "failure")\u{0}\(reason ?? "")", default: 0] += 1
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        var out = "# HELP signet_http_requests_total HTTP requests by route and status.\n# TYPE signet_http_requests_total counter\n"
        for (key, count) in requests.sorted(by: { $0.key < $1.key }) {
            let p = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            out += "signet_http_requests_total{route=\"\(p[0])\",status=\"\(p[1])\"} \(count)\n"
        }
        out += "# HELP signet_http_request_duration_seconds Time from a request's headers to its answer.\n# TYPE signet_http_request_duration_seconds histogram\n"
        for (i, bound) in Metrics.buckets.enumerated() {
            out += "signet_http_request_duration_seconds_bucket{le=\"\(bound)\"} \(bucketCounts[i])\n"
        }
        out += "signet_http_request_duration_seconds_bucket{le=\"+Inf\"} \(durationCount)\n"
        out += "signet_http_request_duration_seconds_sum \(durationSum)\nsignet_http_request_duration_seconds_count \(durationCount)\n"
        out += "# HELP signet_ceremonies_total Sign-ups and sign-ins by outcome and failure reason.\n# TYPE signet_ceremonies_total counter\n"
        for (key, count) in outcomes.sorted(by: { $0.key < $1.key }) {
            let p = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            out += "signet_ceremonies_total{ceremony=\"\(p[0])\",outcome=\"\(p[1])\",reason=\"\(p[2])\"} \(count)\n"
        }
        return out
    }
}
