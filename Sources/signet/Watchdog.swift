import Foundation
import SignetHTTP
import Synchronization

/// Feeds systemd's watchdog (`WatchdogSec=` in systemd.service(5), sd_notify(3)'s `WATCHDOG=1`)
/// only while the server can answer: every half interval it asks each HTTP worker to come round
/// to its inbox (``HTTPServer/stalledWorkers(within:)``), and sends `WATCHDOG=1` only when all
/// did within that half. A worker stuck inside a request (a lock never freed, a query never
/// ending) stops the feeding, `STATUS=` says which, and after the interval systemd ends the
/// process and `Restart=on-failure` starts it again. A database that is down does not: requests
/// then fail fast with `database_unavailable`, and the workers keep turning.
final class Watchdog: Sendable {
    private let manager: ServiceManager
    private let server: HTTPServer
    private let interval: TimeInterval
    /// What `STATUS=` says while all is well, to say again after a stall.
    private let status: String
    /// Set by ``stop()``; the feeder sends only while holding it unset, so nothing follows a stop.
    private let stopped = Mutex(false)
    private let wake = DispatchSemaphore(value: 0)

    /// Starts feeding at once (the caller has just sent `READY=1`), on a thread of its own.
    init(manager: ServiceManager, interval: TimeInterval, server: HTTPServer, status: String) {
        self.manager = manager
        self.server = server
        self.interval = interval
        self.status = status
        let thread = Thread { [self] in feed() }
        thread.name = "signet.watchdog"
        thread.start()
    }

    /// Stops feeding, before `STOPPING=1` (systemd stops watching a service that stops): once it
    /// returns nothing more is sent, though the thread may still be waiting on a stalled worker.
    func stop() {
        stopped.withLock { $0 = true }
        wake.signal()
    }

    /// Sends `fields` unless stopped.
    private func send(_ fields: KeyValuePairs<String, String>) -> Bool {
        stopped.withLock { stopped in
            if !stopped { manager.send(fields) }
            return !stopped
        }
    }

    private func feed() {
        let half = interval / 2
        var stalled: [Int] = []
        while !stopped.withLock({ $0 }) {
            let began = DispatchTime.now()
            let now = server.stalledWorkers(within: half)
            if now.isEmpty {
                if send(stalled.isEmpty ? ["WATCHDOG": "1"] : ["WATCHDOG": "1", "STATUS": status]), !stalled.isEmpty {
                    say("every HTTP worker answers again; the watchdog is fed")
                }
            } else if now != stalled {
                let names = now.map { "signet.http\($0)" }.joined(separator: ", ")
                let text = (now.count == 1 ? "HTTP worker \(names) has" : "HTTP workers \(names) have")
                    + " not come round for \(Self.seconds(half)); the watchdog is not fed"
                if send(["STATUS": text]) { say(text) }
            }
            stalled = now
            // The rest of the half interval; a stop ends the wait.
            _ = wake.wait(timeout: began + half)
        }
    }

    private func say(_ text: String) {
        FileHandle.standardError.write(Data("signet: \(text)\n".utf8))
    }

    private static func seconds(_ value: TimeInterval) -> String {
        value >= 1 ? "\(Int(value.rounded())) s" : "\(Int((value * 1000).rounded())) ms"
    }
}
