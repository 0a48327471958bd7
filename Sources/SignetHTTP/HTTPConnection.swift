import Glibc
import Foundation

/// One client connection. Its worker alone reads it and closes it; an answer may be written by
/// any thread (a held answer by the thread that releases it), under ``lock``. The descriptor stays
/// open until the worker closes it, after the server's table has let it go, so no other thread
/// ever writes to a number that a newer connection reuses.
final class HTTPConnection: @unchecked Sendable {
    let fd: Int32
    /// The client's IP address as text, made once for the connection's requests.
    let remote: String
    /// What the per-address connection limit counts this connection under
    /// (``HTTPServer/Configuration/addressKey``).
    let limitKey: String
    unowned let worker: HTTPWorker
    /// Bytes read and not yet parsed: the worker's alone.
    var input: [UInt8] = []
    /// Whether `100 Continue` went out for the request being read: the worker's alone.
    var continued = false
    /// A request's first bytes are in and it is not whole yet (counted in flight): the worker's alone.
    var receiving = false
    /// How far the parser got in `input`: the worker's alone.
    var progress = ParseProgress()

    let lock = NSLock()
    // Under `lock`:
    /// An answer is being prepared, or held (``HTTPHold``): the next request waits in `input`,
    /// and the request deadline waits too. Seen from the worker, busy is held: the worker itself
    /// prepares the answers that are not.
    var busy = false
    /// The client went away while an answer was held: the worker closes once it is released.
    var gone = false
    /// The client has sent all it will (it shut down its side, RFC 9112 §9.6's half-close): the
    /// requests already read are still answered, then the connection closes.
    var readDone = false
    /// The last answer said `Connection: close`: once written, the connection closes.
    var closeAfterWrite = false
    /// Since when (nanoseconds) the connection drains its client's last bytes before it closes.
    var lingeringSince: UInt64 = 0
    /// Answer bytes the socket did not take yet.
    var output: [UInt8] = []
    /// From the connection's start, or its previous answer, until the next answer (the request deadline).
    var clockStart: UInt64
    /// The last time bytes came in or went out (the idle timeout).
    var lastActivity: UInt64
    /// Shut down by the sweeper.
    var killed = false
    /// A request waits in `input` behind the answer being prepared: whoever writes that answer
    /// hands the connection back to its worker.
    var waiting = false

    init(fd: Int32, remote: String, limitKey: String, worker: HTTPWorker, now: UInt64) {
        self.fd = fd
        self.remote = remote
        self.limitKey = limitKey
        self.worker = worker
        clockStart = now
        lastActivity = now
    }

    /// Writes what the socket takes of ``output`` (under ``lock``). False when the connection
    /// failed; true when all is written or the rest must wait for room.
    func writeOutput() -> Bool {
        var written = 0
        defer { if written > 0 { output.removeFirst(written) } }
        while written < output.count {
            let sent = output.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + written, $0.count - written, Int32(MSG_NOSIGNAL)) }
            if sent > 0 {
                written += sent
                continue
            }
            if sent < 0, errno == EINTR { continue }
            return sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
        }
        return true
    }
}

/// An answer's bytes on the wire (RFC 9112 §4, §6): status line, the handler's fields,
/// `X-Request-Id`, `Date`, the body's length, and `Connection: close` when the connection ends.
enum ResponseWriter {
    static func bytes(_ response: HTTPResponse, requestID: String, keepAlive: Bool, http10: Bool, head: Bool) -> [UInt8] {
        // RFC 9110 §6.4.1: no content, and no Content-Length, in a 204 or 304.
        let bodiless = response.status == 204 || response.status == 304
        var out: [UInt8] = []
        out.reserveCapacity(response.body.count + 192 + response.headers.count * 48)
        out.append(contentsOf: "HTTP/1.1 ".utf8)
        AccessLog.decimal(response.status, into: &out)
        out.append(32)
        out.append(contentsOf: reasonPhrase(response.status).utf8)
        // A field that would end its line early (a CR or LF in it) is never sent: an answer is
        // never split in two by what a handler put in a header. Nor one with a NUL, which RFC
        // 9110 §5.5 calls dangerous too: a recipient may refuse the whole answer or cut the field.
        for (name, value) in response.headers where !name.utf8.contains(where: isForbidden) && !value.utf8.contains(where: isForbidden) {
            out.append(contentsOf: crlf)
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: value.utf8)
        }
        out.append(contentsOf: "\r\nX-Request-Id: ".utf8)
        out.append(contentsOf: requestID.utf8)
        out.append(contentsOf: "\r\nDate: ".utf8)
        HTTPDate.append(to: &out)
        if !bodiless {
            out.append(contentsOf: "\r\nContent-Length: ".utf8)
            AccessLog.decimal(response.body.count, into: &out)
        }
        if !keepAlive {
            out.append(contentsOf: "\r\nConnection: close".utf8)
        } else if http10 {
            out.append(contentsOf: "\r\nConnection: keep-alive".utf8)
        }
        out.append(contentsOf: "\r\n\r\n".utf8)
        if !head, !bodiless { out.append(contentsOf: response.body) }
        return out
    }

    private static let crlf: [UInt8] = [13, 10]

    private static func isForbidden(_ b: UInt8) -> Bool { b == 13 || b == 10 || b == 0 }

    /// RFC 9110 §15's phrases for the statuses Signet answers with; others get a neutral one
    /// (the phrase is informative only, RFC 9112 §4).
    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 423: "Locked"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: status < 400 ? "OK" : status < 500 ? "Client Error" : "Server Error"
        }
    }
}

/// The `Date` field's IMF-fixdate (RFC 9110 §5.6.7), made once a second.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, text: [UInt8])>((-1, []))

    static func append(to out: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let second = now.tv_sec
        let text = cache.withLock { cached -> [UInt8] in
            if cached.second != second { cached = (second, format(second)) }
            return cached.text
        }
        out.append(contentsOf: text)
    }

    static func format(_ seconds: Int) -> [UInt8] {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let text = "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
        return Array(text.utf8)
    }
}

import Synchronization
