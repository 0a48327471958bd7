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
            case .double(let d): line += AccessLog.fixed3(d)
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
        func pad(_ n: Int, _ width: Int) -> String {
            let s = String(n)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        return pad(Int(parts.tm_year) + 1900, 4) + "-" + pad(Int(parts.tm_mon) + 1, 2) + "-" + pad(Int(parts.tm_mday), 2) + "T"
            + pad(Int(parts.tm_hour), 2) + ":" + pad(Int(parts.tm_min), 2) + ":" + pad(Int(parts.tm_sec), 2) + "." + pad(Int(tv.tv_usec) / 1000, 3) + "Z"
    }

    /// `d` with three decimals, without `String(format:)` (slow on Linux).
    static func fixed3(_ d: Double) -> String {
        let thousandths = Int((d * 1000).rounded())
        let fraction = String(abs(thousandths) % 1000)
        return (thousandths < 0 ? "-" : "") + String(abs(thousandths) / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
