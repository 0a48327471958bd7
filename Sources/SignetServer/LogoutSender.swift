import Foundation
import SignetAuth
import SignetCurl
import SignetHTTP

/// This instance's sender of logout tokens (OpenID Connect Back-Channel Logout 1.0 §2.5): claims
/// due notices from the outbox (other instances claim others), POSTs each client its
/// `logout_token`, and records the outcome. It looks every `interval` seconds, and sweeps for
/// sessions that ended without queuing their notice every ten minutes. Until there is something to
/// look for (a configured client with a logout URI, a client subscribing here, or a subscription
/// or a notice in the database, looked for once a minute, as another instance may have made it)
/// it waits.
final class LogoutSender: @unchecked Sendable {
    let ceremonies: Ceremonies
    let log: AccessLog
    let interval: Double
    /// Notices claimed at once: at most this many POSTs of `options.timeout` each fit in the
    /// claim's lease (60 s), so no other instance takes them over while they are being sent.
    static let claimLimit = 5
    /// Seconds between sweeps. Every way Signet ends a session queues its own notice; the sweep
    /// is the backstop for one that does not, and reads every subscription, so it is rare.
    static let sweepInterval: TimeInterval = 600
    /// Options for each POST: the system's CAs, ten seconds, no redirect followed (the token goes
    /// to the URI registered, nowhere else).
    let options: HTTPSOptions
    private let thread = SenderThread()
    private var lastSweep = Date.distantPast

    /// Whether the database holds a subscription or a notice (``Store/hasLogoutWork()``).
    let hasWork: @Sendable () -> Bool
    /// Seconds between those looks while idle.
    static let idleCheck: Double = 60

    init(ceremonies: Ceremonies, log: AccessLog, interval: Double = 1, hasWork: @escaping @Sendable () -> Bool) {
        self.ceremonies = ceremonies
        self.log = log
        self.interval = interval
        self.hasWork = hasWork
        options = HTTPSOptions(timeout: 10, maxBytes: 4096, userAgent: "signet-backchannel-logout")
    }

    /// - Parameter active: whether to start the beat now rather than at the first subscription.
    func start(active: Bool) {
        thread.start(name: "signet.logout") { [self] in
            // Another instance's subscriptions are this one's work too once it is gone: an idle
            // sender looks for them now and then, not only at start.
            if !active {
                while !isStopped, !ceremonies.logoutSubscribed.wait(timeout: Self.idleCheck), !hasWork() {}
            }
            while !isStopped {
                _ = thread.beat(otherwise: 0) { pass(sweep: false) }
                Thread.sleep(forTimeInterval: interval)
            }
        }
    }

    var isStopped: Bool { thread.isStopped }

    /// The idle look for work, at once (tests): starts the beat if there is any.
    func lookForWork() {
        if hasWork() { ceremonies.logoutSubscribed.signal() }
    }

    func stop() {
        thread.stop()
        ceremonies.logoutSubscribed.signal()
    }

    /// Stops the beat, and returns once a pass of its under way has ended (tests then send
    /// with ``runOnce(sweep:)``).
    func pause() {
        thread.pause()
        ceremonies.logoutSubscribed.signal()
    }

    /// One pass: every due notice claimed and sent (and, every ten minutes or when `sweep`, the
    /// sweep first). Returns how many the clients took. A client that fails once in a pass is
    /// not tried again in it: its other notices wait for their next try as if they had failed
    /// too, so a client that is down costs one timeout a pass, not one a notice, and the others'
    /// notices are not held up behind it.
    @discardableResult
    func runOnce(sweep: Bool = false) -> Int { thread.pass { pass(sweep: sweep) } }

    private func pass(sweep: Bool) -> Int {
        var delivered = 0
        var sweepNow = sweep || Date().timeIntervalSince(lastSweep) >= Self.sweepInterval
        if sweepNow { lastSweep = Date() }
        var down: [String: String] = [:]
        while true {
            guard let claimed = try? ceremonies.claimLogouts(limit: Self.claimLimit, sweep: sweepNow), !claimed.isEmpty else { break }
            sweepNow = false
            for (row, notice, uri) in claimed {
                if let earlier = down[row.recipient] {
                    ceremonies.logoutOutcome(row, failure: "not tried: the client failed earlier in this pass (\(earlier))")
                    continue
                }
                let failure = deliver(notice, to: uri, clientID: row.recipient)
                if let failure {
                    down[row.recipient] = String(failure.prefix(200))
                    // The client and what went wrong; never the token.
                    log.write([("msg", .string("logout token not delivered")), ("client", .string(row.recipient)), ("attempt", .int(row.attempts)),
                               ("error", .string(String(failure.prefix(300))))])
                } else {
                    delivered += 1
                }
                ceremonies.logoutOutcome(row, failure: failure)
            }
        }
        return delivered
    }

    /// §2.5: `logout_token` in a form POST; §2.8: 200 (any 2xx here) is taken as done.
    func deliver(_ notice: LogoutNotice, to uri: String, clientID: String) -> String? {
        do {
            let token = try ceremonies.logoutToken(notice, clientID: clientID)
            let response = try HTTPS.post(uri, form: "logout_token=" + token, options: options)
            return (200..<300).contains(response.status) ? nil : "the client answered \(response.status)"
        } catch let error as CurlError {
            return error.description
        } catch {
            return "\(error)"
        }
    }
}
