import Foundation
import SignetAuth
import SignetCurl
import SignetHTTP
import Synchronization

/// Where a message goes: an SMTP relay, or a folder of `.eml` files in development.
protocol MailTransport: Sendable {
    /// Delivers the message; throws ``MailFailure`` when it did not go.
    func deliver(_ row: OutboxRow) throws(MailFailure)
}

struct MailFailure: Error {
    let message: String
    /// A 5xx from the relay: another try will not help.
    let permanent: Bool
}

/// SMTP through libcurl (SignetCurl).
struct SMTPTransport: MailTransport {
    let settings: SMTPSettings
    let from: String
    func deliver(_ row: OutboxRow) throws(MailFailure) {
        do {
            try SMTP.send(row.message, from: from, to: [MailMessage.asciiAddress(row.recipient)], settings: settings)
        } catch {
            throw MailFailure(message: error.description, permanent: error.permanent)
        }
    }
}

/// Development: each message becomes `DIR/<time>-<id>.eml`, written whole then renamed into
/// place, and the log gets the file's path and the message's kind, never its text.
struct DirectoryTransport: MailTransport {
    let directory: String
    let log: AccessLog
    func deliver(_ row: OutboxRow) throws(MailFailure) {
        let manager = FileManager.default
        do {
            try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let name = "\(row.createdAt)-\(row.id).eml"
            // Not *.eml until it is whole: a reader of the folder never sees half a message.
            let temporary = (directory as NSString).appendingPathComponent("." + name + ".part")
            let path = (directory as NSString).appendingPathComponent(name)
            try Data(row.message).write(to: URL(fileURLWithPath: temporary))
            try manager.moveItem(atPath: temporary, toPath: path)
            log.write([("msg", .string("mail written")), ("kind", .string(row.kind)), ("file", .string(path))])
        } catch {
            throw MailFailure(message: "cannot write to \(directory): \(error.localizedDescription)", permanent: false)
        }
    }
}

/// This instance's sender (DESIGN.md, "Delivery"): claims due messages from the outbox (other
/// instances claim others), delivers them one by one, and records each outcome; it wakes when
/// this instance queues a message and otherwise looks every `interval` seconds, for retries and
/// other instances' messages. Recoveries whose hold ended are finished on the same beat.
final class MailSender: @unchecked Sendable {
    let ceremonies: Ceremonies
    let transport: any MailTransport
    let log: AccessLog
    let interval: Double
    private let thread = SenderThread()
    /// Set by ``pause()``: the beat passes no more, while ``runOnce()`` still does.
    private let paused = Mutex(false)

    init(ceremonies: Ceremonies, transport: any MailTransport, log: AccessLog, interval: Double = 1) {
        self.ceremonies = ceremonies
        self.transport = transport
        self.log = log
        self.interval = interval
    }

    func start() {
        thread.start(name: "signet.mail") { [self] in
            while !isStopped {
                _ = thread.beat(otherwise: 0) { paused.withLock { $0 } ? 0 : pass() }
                ceremonies.mailQueued.wait(timeout: interval)
            }
        }
    }

    var isStopped: Bool { thread.isStopped }

    func stop() {
        thread.stop()
        ceremonies.mailQueued.signal()
    }

    /// Stops the beat's passes, and returns once one under way has ended: after it, only
    /// ``runOnce()`` delivers (tests that move the clock and must say when a pass runs).
    func pause() {
        paused.withLock { $0 = true }
        _ = thread.pass { 0 }
    }

    /// One pass: every due message claimed and tried. Returns how many were delivered.
    @discardableResult
    func runOnce() -> Int { thread.pass(pass) }

    private func pass() -> Int {
        var delivered = 0
        while !isStopped {
            guard let claim = try? ceremonies.claimMail(), !claim.claimed.isEmpty else { break }
            for row in claim.claimed {
                do {
                    try transport.deliver(row)
                    ceremonies.mailOutcome(row, failure: nil)
                    delivered += 1
                } catch {
                    log.write([("msg", .string("mail not delivered")), ("kind", .string(row.kind)), ("attempt", .int(row.attempts)),
                               ("error", .string(String(error.message.prefix(300))))])
                    ceremonies.mailOutcome(row, failure: (error.message, error.permanent))
                }
            }
        }
        return delivered
    }
}
