import Foundation
import Synchronization
import SignetAuth
import SignetCrypto
import SignetCurl
import SignetHTTP
import SignetWebAuthn

/// This instance's sender of log streams (``LogStreamRow``): every `interval` seconds while there
/// is an active stream (else every ``idleCheck`` seconds, or at once when one is added here) it
/// reads the streams and, for each active one with events after its last delivered one, holds its lease and
/// POSTs them in order, a batch at a time, until the endpoint has them all or fails. A stream
/// that fails waits (``Ceremonies/logStreamOutcome(_:owner:lastLogID:failure:)``); the others go
/// on.
final class LogStreamSender: @unchecked Sendable {
    let ceremonies: Ceremonies
    let log: AccessLog
    let interval: Double
    /// This instance in the leases: a random name of its own.
    let owner = "sender-" + Base64URL.encode(SecureRandom.bytes(9))
    /// Each POST: the system's CAs, ten seconds, no redirect followed (the events go to the URL
    /// registered, nowhere else); the answer is read only for its status.
    let options = HTTPSOptions(timeout: 10, maxBytes: 4096, userAgent: "signet-log-stream")
    /// POSTs in a row for one stream in a pass, and the seconds they may take: a stream keeps up
    /// with thousands of events a second (JSONOBJECT's one a POST too, at a fast endpoint), and
    /// one far behind holds up the others for 5 s at most.
    static let batchesPerPass = 1_000
    static let secondsPerStream: Double = 5
    private let thread = SenderThread()
    /// When each stream's missing next event was first seen (``Ceremonies/logStreamGapWait``).
    private var gaps: [String: (after: Int64, since: Int64)] = [:]

    init(ceremonies: Ceremonies, log: AccessLog, interval: Double = 1) {
        self.ceremonies = ceremonies
        self.log = log
        self.interval = interval
    }

    /// Seconds between looks while no stream is active: one added on another instance is found
    /// within them.
    static let idleCheck: Double = 10

    func start() {
        thread.start(name: "signet.logstream") { [self] in
            while !thread.isStopped {
                if thread.beat(otherwise: (0, false), pass).active { Thread.sleep(forTimeInterval: interval) } else { ceremonies.logStreamsChanged.wait(timeout: Self.idleCheck) }
            }
        }
    }

    func stop() {
        thread.stop()
        ceremonies.logStreamsChanged.signal()
    }

    /// Stops the beat, and returns once no pass of its is under way: after it, only
    /// ``runOnce()`` sends (tests). A pass the beat began just before would otherwise read
    /// the streams after the caller's changes and send on its own.
    func pause() {
        thread.pause()
        ceremonies.logStreamsChanged.signal()
    }

    /// One pass over every stream; returns how many events endpoints took, and whether any
    /// stream is active.
    @discardableResult
    func runOnce() -> (delivered: Int, active: Bool) { thread.pass(pass) }

    private func pass() -> (delivered: Int, active: Bool) {
        guard let streams = try? ceremonies.logStreams() else { return (0, true) }
        var delivered = 0
        for var stream in streams {
            let deadline = Date().addingTimeInterval(Self.secondsPerStream)
            for _ in 0..<Self.batchesPerPass where Date() < deadline {
                var since = gaps[stream.id].flatMap { $0.after == stream.lastLogID ? $0.since : nil }
                let next = try? ceremonies.nextLogStreamPost(stream, owner: owner, gapSince: &since)
                gaps[stream.id] = since.map { (stream.lastLogID, $0) }
                guard let post = next ?? nil else { break }
                // Nothing of the stream's categories: no POST; the stream moves past them.
                let failure = post.count == 0 ? nil : send(post)
                ceremonies.logStreamOutcome(post.stream, owner: owner, lastLogID: post.lastLogID, failure: failure, posted: post.count > 0)
                if let failure {
                    // The stream and what went wrong; never the header or the events.
                    log.write([("msg", .string("log stream not delivered")), ("stream", .string(stream.id)), ("events", .int(post.count)),
                               ("error", .string(String(failure.prefix(300))))])
                    break
                }
                delivered += post.count
                stream.lastLogID = post.lastLogID
            }
        }
        gaps = gaps.filter { id, _ in streams.contains { $0.id == id } }
        return (delivered, streams.contains { $0.status == "active" })
    }

    /// Any 2xx is taken as done.
    func send(_ post: LogStreamPost) -> String? {
        do {
            let response = try HTTPS.post(post.stream.endpoint, body: post.body, headers: post.headers, options: options)
            return (200..<300).contains(response.status) ? nil : "the endpoint answered \(response.status)"
        } catch {
            return error.description
        }
    }
}
