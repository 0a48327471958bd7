public import Foundation

/// JSON-lines log to standard error. It carries what happened to a request (method, path,
/// status, timing, peer) and never a header value, a query string, a token or a body.
public final class AccessLog: @unchecked Sendable {
    private let lock = NSLock()
    private let output: FileHandle
    public var enabled: Bool

    public init(output: FileHandle = .standardError, enabled: Bool = true) {
        self.output = output
        self.enabled = enabled
    }

    /// Writes one line with `fields`; strings are escaped, numbers and booleans written as they are.
    public func write(_ fields: [(String, LogValue)]) {
        guard enabled else { return }
        var line = "{\"ts\":\"" + AccessLog.timestamp() + "\""
        for (key, value) in fields {
            line += ",\"" + key + "\":"
            switch value {
            case .string(let s): line += AccessLog.quote(s)
            case .int(let n): line += String(n)
            case .double(let d): line += String(format: "%.3f", d)
            case .bool(let b): line += b ? "true" : "false"
            }
        }
        line += "}\n"
        lock.lock()
        defer { lock.unlock() }
        output.write(Data(line.utf8))
    }

    public enum LogValue: Sendable {
        case string(String), int(Int), double(Double), bool(Bool)
    }

    static func timestamp() -> String {
        var tv = timeval()
        gettimeofday(&tv, nil)
        var t = time_t(tv.tv_sec)
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec, Int(tv.tv_usec / 1000))
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
