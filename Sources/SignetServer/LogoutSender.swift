import Foundation
import SignetAuth
import SignetCurl
import SignetHTTP
internal import CSystem

/// This instance's sender of logout tokens (OpenID Connect Back-Channel Logout 1.0 §2.5): claims
/// due notices from the outbox (other instances claim others), POSTs each client its
/// `logout_token`, and records the outcome. It looks every `interval` seconds, and sweeps for
/// sessions that ended without queuing their notice once a minute. Until there is something to
/// look for (a configured client with a logout URI, a subscription or a notice in the database,
/// or a client subscribing here) it waits without touching the database.
final class LogoutSender: @unchecked Sendable {
    let ceremonies: Ceremonies
    let log: AccessLog
    let interval: Double
    /// Options for each POST: the system's CAs, ten seconds, no redirect followed (the token goes
    /// to the URI registered, nowhere else).
    let options: HTTPSOptions
    private let thread = SenderThread()
    private var lastSweep = Date.distantPast

    init(ceremonies: Ceremonies, log: AccessLog, interval: Double = 1) {
        self.ceremonies = ceremonies
        self.log = log
        self.interval = interval
        options = HTTPSOptions(timeout: 10, maxBytes: 4096, userAgent: "signet-backchannel-logout")
    }

    /// - Parameter active: whether to start the beat now rather than at the first subscription.
    func start(active: Bool) {
        thread.start(name: "signet.logout") { [self] in
            if !active {
                while !isStopped, !ceremonies.logoutSubscribed.wait(timeout: 3600) {}
            }
            while !isStopped {
                _ = runOnce()
                Thread.sleep(forTimeInterval: interval)
            }
        }
    }

    var isStopped: Bool { thread.isStopped }

    func stop() {
        thread.stop()
        ceremonies.logoutSubscribed.signal()
    }

    /// One pass: every due notice claimed and sent (and, once a minute or when `sweep`, the
    /// sweep first). Returns how many the clients took.
    @discardableResult
    func runOnce(sweep: Bool = false) -> Int {
        var delivered = 0
        var sweepNow = sweep || Date().timeIntervalSince(lastSweep) >= 60
        if sweepNow { lastSweep = Date() }
        while true {
            guard let claimed = try? ceremonies.claimLogouts(sweep: sweepNow), !claimed.isEmpty else { break }
            sweepNow = false
            for (row, notice, uri) in claimed {
                let failure = deliver(notice, to: uri, clientID: row.recipient)
                if let failure {
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
