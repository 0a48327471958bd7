import Foundation
import SignetAuth
import SignetHTTP
import SignetStore

/// `backup.directory`: the SQLite database copied into a folder on its own, every
/// `backup.interval_hours`, with `signet backup`'s snapshot and checks (``SQLiteBackup``), the
/// newest `backup.keep` copies kept.
///
/// Each copy is named by the time it was made (`signet-20261206T010000Z.db.sealed`, mode 0600,
/// in a folder made with mode 0700: it holds every account), and sealed under the
/// key-encryption key (``SealedBackup``) unless `backup.seal` is false (then `.db`, a SQLite
/// file as `signet backup` makes). Whether one is due is read from the
/// names in the folder, so a restart neither repeats a recent copy nor skips a late one, and
/// only files of exactly that form are ever removed. It runs on a queue of its own, looking
/// once a minute, so that a long copy holds up no purge and no request; a failure is logged and
/// counted, and tried again five minutes later.
package final class ScheduledBackup: @unchecked Sendable {
    let database: String
    let directory: String
    let interval: Int64
    let keep: Int
    /// The key-encryption key each copy is sealed under; `nil` with `backup.seal: false`.
    let sealing: [UInt8]?
    let clock: @Sendable () -> Date
    let metrics: Metrics
    let log: AccessLog
    /// One copy at a time: the timer's, or a test's.
    private let lock = NSLock()
    private var failedAt: Int64?
    private var timer: (any DispatchSourceTimer)?
    /// Milliseconds after a failure before the next try.
    static let retryAfterFailure: Int64 = 300_000

    /// `nil` unless `backup.directory` is set on a SQLite deployment.
    init?(configuration c: ServerConfiguration, kek: [UInt8], clock: @escaping @Sendable () -> Date, metrics: Metrics, log: AccessLog) {
        guard let directory = c.backupDirectory, c.database.hasPrefix("sqlite:") else { return nil }
        database = String(c.database.dropFirst("sqlite:".count))
        self.directory = directory
        interval = Int64(c.backupIntervalHours) * 3_600_000
        keep = c.backupKeep
        sealing = c.backupSeal ? kek : nil
        self.clock = clock
        self.metrics = metrics
        self.log = log
        metrics.backupsScheduled(newest: copies().last.flatMap({ Self.time(of: $0) }))
    }

    func start() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "signet.backup"))
        timer.schedule(deadline: .now() + 5, repeating: 60)
        timer.setEventHandler { [weak self] in self?.runIfDue() }
        timer.resume()
        self.timer = timer
    }

    func stop() { timer?.cancel() }

    deinit { timer?.cancel() }

    /// Makes a copy when one is due (none in the folder, or the newest `interval` old, and no
    /// failure in the last five minutes), then removes the copies beyond `keep`, oldest first.
    /// Returns the new copy's path.
    @discardableResult
    func runIfDue() -> String? {
        lock.lock()
        defer { lock.unlock() }
        let now = Int64(clock().timeIntervalSince1970 * 1000)
        if let newest = copies().last.flatMap({ Self.time(of: $0) }), newest + interval > now { return nil }
        if let failedAt, failedAt + Self.retryAfterFailure > now { return nil }
        let path = (directory as NSString).appendingPathComponent(Self.name(at: now, sealed: sealing != nil))
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // What a process stopped in the middle of a copy left.
            for name in listing() where Self.leftovers.contains(where: { Self.time(of: name, suffix: $0) != nil }) {
                try? FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent(name))
            }
            let report = try SQLiteBackup.copy(from: database, to: path, sealing: sealing)
            failedAt = nil
            metrics.backup(at: now, bytes: report.bytes, seconds: report.seconds)
            let removed = prune()
            log.write([("msg", .string("backup made")), ("path", .string(path)), ("bytes", .int(report.bytes)), ("users", .int(report.users)),
                       ("seconds", .double(report.seconds)), ("removed", .int(removed))])
            return path
        } catch {
            failedAt = now
            metrics.backup(at: nil)
            log.write([("msg", .string("backup failed")), ("path", .string(path)), ("error", .string(String(describing: error)))])
            return nil
        }
    }

    /// Removes the copies beyond `keep`, oldest first; how many went.
    private func prune() -> Int {
        let all = copies()
        guard all.count > keep else { return 0 }
        var removed = 0
        for name in all.prefix(all.count - keep) where (try? FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent(name))) != nil {
            removed += 1
        }
        return removed
    }

    private func listing() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] }

    /// The copies in the folder, oldest first (their names sort by time).
    func copies() -> [String] { Self.copies(in: directory) }

    /// The scheduled copies in `directory`, sealed or not, oldest first: `signet restore --from
    /// DIR` takes the last.
    package static func copies(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).compactMap { name in time(of: name).map { (name, $0) } }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.map(\.0)
    }

    package static let prefix = "signet-"
    /// The endings of copies: sealed, and not.
    package static let suffixes = [".db.sealed", ".db"]
    /// The endings of what a copy stopped half-way leaves (``SQLiteBackup/copy(from:to:sealing:)``).
    package static let leftovers = [".db.part", ".db.sealed.part", ".db.sealed.sealing"]

    /// A copy's name for the time `at` (milliseconds, UTC, to the second).
    package static func name(at: Int64, sealed: Bool = false) -> String { prefix + stamp(at: at) + (sealed ? ".db.sealed" : ".db") }

    /// The time `at` (milliseconds) in UTC to the second as file names carry it:
    /// `20261206T010000Z` (also `signet restore`'s `.replaced-` files).
    package static func stamp(at: Int64) -> String {
        var seconds = time_t(at / 1000)
        var t = tm()
        gmtime_r(&seconds, &t)
        return String(format: "%04d%02d%02dT%02d%02d%02dZ", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)
    }

    /// The time (milliseconds) a copy's name says, sealed or not, or `nil` for a name not of
    /// exactly that form.
    package static func time(of name: String) -> Int64? {
        suffixes.lazy.compactMap { time(of: name, suffix: $0) }.first
    }

    /// The time (milliseconds) a name says, or `nil` for a name not of exactly that form
    /// (`signet-YYYYMMDDTHHMMSSZ` and `suffix`, a real date and time).
    package static func time(of name: String, suffix: String) -> Int64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let text = Array(name.utf8.dropFirst(prefix.utf8.count).dropLast(suffix.utf8.count))
        guard text.count == 16, text[8] == UInt8(ascii: "T"), text[15] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var n: Int32 = 0
            for byte in text[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                n = n * 10 + Int32(byte - UInt8(ascii: "0"))
            }
            return n
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8), let hour = number(9..<11),
              let minute = number(11..<13), let second = number(13..<15)
        else { return nil }
        var t = tm()
        (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec) = (year - 1900, month - 1, day, hour, minute, second)
        let seconds = timegm(&t)
        // A date that does not exist (month 13, February 30) is not one of these names.
        guard seconds >= 0, name == prefix + stamp(at: Int64(seconds) * 1000) + suffix else { return nil }
        return Int64(seconds) * 1000
    }
}
