import Glibc
public import Foundation

/// JSON-lines log to standard error. It carries what happened to a request (method, path,
/// status, timing, peer) and never a header value, a query string, a token or a body.
///
/// Lines are built as bytes and written in batches by the log's own queue, never by the thread
/// that logs them: a line reaches the output at most `flushInterval` seconds after it was logged,
/// or sooner when 32 KiB are waiting, and ``flush()`` (which the server calls when it stops)
/// writes out the rest. A busy server thus makes one `write` per many requests instead of one
/// per request, and an output that takes nothing (a pipe its reader stopped reading, a stalled
/// journal) holds no request: once `maxPendingBytes` wait, further lines are dropped, and the
/// next write says how many (`"msg":"log lines dropped"`).
public final class AccessLog: @unchecked Sendable {
    private let lock = NSLock()
    /// Held through a write: one writer at a time, so batches reach the output in order.
    private let writing = NSLock()
    private let output: FileHandle
    private let queue = DispatchQueue(label: "signet.accesslog")
    // Under `lock`:
    private var pending: [UInt8] = []
    private var dropped = 0
    private var flushQueued = false
    private var flusher: (any DispatchSourceTimer)?
    public var enabled: Bool
    /// Bytes that may wait for a slow output before lines are dropped.
    public let maxPendingBytes: Int

    /// Bytes that may wait before they are written regardless of the interval.
    static let batchBytes = 32 * 1024

    public init(output: FileHandle = .standardError, enabled: Bool = true, flushInterval: TimeInterval = 0.1, maxPendingBytes: Int = 4 * 1024 * 1024) {
        self.output = output
        self.enabled = enabled
        self.maxPendingBytes = max(maxPendingBytes, AccessLog.batchBytes)
        guard enabled else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + flushInterval, repeating: flushInterval, leeway: .milliseconds(20))
        timer.setEventHandler { [weak self] in self?.flush() }
        timer.resume()
        flusher = timer
    }

    deinit {
        flusher?.cancel()
        flush()
    }

    /// Logs one line with `fields`; strings are escaped, numbers and booleans written as they are.
    public func write(_ fields: [(String, LogValue)]) {
        guard enabled else { return }
        var line: [UInt8] = []
        line.reserveCapacity(320)
        line.append(contentsOf: #"{"ts":""#.utf8)
        AccessLog.timestamp(into: &line)
        line.append(UInt8(ascii: "\""))
        for (key, value) in fields {
            line.append(UInt8(ascii: ","))
            AccessLog.quote(key, into: &line)
            line.append(UInt8(ascii: ":"))
            switch value {
            case .string(let s): AccessLog.quote(s, into: &line)
            case .int(let n): AccessLog.decimal(n, into: &line)
            case .double(let d): AccessLog.fixed3(d, into: &line)
            case .bool(let b): line.append(contentsOf: (b ? "true" : "false").utf8)
            }
        }
        line.append(contentsOf: "}\n".utf8)
        append(line)
    }

    /// One answered request: the line ``write(_:)`` makes of `msg` "request" and these fields,
    /// in this order, built without a list of fields (this runs for every request).
    /// `detail` is why the request was refused (the reason and what failed), when it was.
    public func request(id: String, method: String, path: String, route: String, status: Int, ms: Double, remote: String, bytesIn: Int, detail: String? = nil) {
        guard enabled else { return }
        var line: [UInt8] = []
        line.reserveCapacity(224 + path.utf8.count)
        line.append(contentsOf: #"{"ts":""#.utf8)
        AccessLog.timestamp(into: &line)
        // Each key with the punctuation around it, as constant bytes, then the value.
        func text(_ key: StaticString, _ value: String) {
            line.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
            AccessLog.quote(value, into: &line)
        }
        func number(_ key: StaticString, _ value: Int) {
            line.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
            AccessLog.decimal(value, into: &line)
        }
        text(#"","msg":"request","request_id":"#, id)
        text(#","method":"#, method)
        text(#","path":"#, path)
        text(#","route":"#, route)
        number(#","status":"#, status)
        line.append(contentsOf: #","ms":"#.utf8)
        AccessLog.fixed3(ms, into: &line)
        text(#","remote":"#, remote)
        number(#","bytes_in":"#, bytesIn)
        if let detail { text(#","detail":"#, detail) }
        line.append(contentsOf: "}\n".utf8)
        append(line)
    }

    /// Queues `line`; past ``batchBytes`` the log's queue is asked to write now, and past
    /// ``maxPendingBytes`` (the output has stopped taking lines) the line is dropped and counted.
    private func append(_ line: [UInt8]) {
        lock.lock()
        guard pending.count + line.count <= maxPendingBytes else {
            dropped += 1
            lock.unlock()
            return
        }
        pending.append(contentsOf: line)
        let wake = pending.count >= AccessLog.batchBytes && !flushQueued
        if wake { flushQueued = true }
        lock.unlock()
        if wake { queue.async { [weak self] in self?.flush() } }
    }

    /// Writes every line logged so far, and a line counting those dropped since the last write.
    /// Waits as long as the output does.
    public func flush() {
        writing.lock()
        defer { writing.unlock() }
        lock.lock()
        var batch = pending
        pending = []
        pending.reserveCapacity(min(batch.count, 4 * AccessLog.batchBytes))
        let lost = dropped
        dropped = 0
        flushQueued = false
        lock.unlock()
        if lost > 0 {
            batch.append(contentsOf: #"{"ts":""#.utf8)
            AccessLog.timestamp(into: &batch)
            batch.append(contentsOf: #"","msg":"log lines dropped","count":"#.utf8)
            AccessLog.decimal(lost, into: &batch)
            batch.append(contentsOf: #","detail":"the log output took nothing for a while; these lines were not kept"}"#.utf8)
            batch.append(UInt8(ascii: "\n"))
        }
        writeOut(batch)
    }

    /// Under `writing`: `bytes` to the output, whole (a short write is continued).
    private func writeOut(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let fd = output.fileDescriptor
        bytes.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }  // the output is gone: drop the lines
                offset += n
            }
        }
    }

    public enum LogValue: Sendable {
        case string(String), int(Int), double(Double), bool(Bool)
    }

    /// RFC 3339 UTC time with milliseconds, such as `2026-11-30T08:00:00.123Z`. The civil date
    /// comes from the day count by integer arithmetic (H. Hinnant's `civil_from_days`).
    static func timestamp(into out: inout [UInt8]) {
        var tv = timeval()
        gettimeofday(&tv, nil)
        timestamp(seconds: Int(tv.tv_sec), milliseconds: Int(tv.tv_usec) / 1000, into: &out)
    }

    package static func timestamp(seconds: Int, milliseconds: Int, into out: inout [UInt8]) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        digits(year, 4, into: &out)
        out.append(UInt8(ascii: "-"))
        digits(month, 2, into: &out)
        out.append(UInt8(ascii: "-"))
        digits(day, 2, into: &out)
        out.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3600, 2, into: &out)
        out.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2, into: &out)
        out.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2, into: &out)
        out.append(UInt8(ascii: "."))
        digits(milliseconds, 3, into: &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// The last `width` decimal digits of the non-negative `n`, zero-padded.
    static func digits(_ n: Int, _ width: Int, into out: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var n = n
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(n / divisor % 10))
            n %= divisor
            divisor /= 10
        }
    }

    /// `n` in decimal.
    static func decimal(_ n: Int, into out: inout [UInt8]) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = n.magnitude
        var divisor: UInt = 1
        while divisor <= magnitude / 10 { divisor *= 10 }
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        }
    }

    /// `d` with three decimals, without `String(format:)` (slow on Linux).
    static func fixed3(_ d: Double, into out: inout [UInt8]) {
        let thousandths = Int((d * 1000).rounded())
        if thousandths < 0 { out.append(UInt8(ascii: "-")) }
        decimal(abs(thousandths) / 1000, into: &out)
        out.append(UInt8(ascii: "."))
        digits(abs(thousandths) % 1000, 3, into: &out)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `s` as a JSON string; quotes, backslashes, control characters and DEL escaped. Text with
    /// none of them (paths, IDs, addresses: nearly every value) is copied whole.
    static func quote(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            if !bytes.contains(where: needsEscape) {
                out.append(contentsOf: bytes)
                return
            }
            for b in bytes {
                switch b {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    out.append(UInt8(ascii: "\\"))
                    out.append(b)
                case 0..<0x20, 0x7f:
                    out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigits[Int(b >> 4)], hexDigits[Int(b & 0x0f)]])
                default:
                    out.append(b)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    private static func needsEscape(_ b: UInt8) -> Bool {
        b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || b == 0x7f
    }
}
