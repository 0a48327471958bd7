extension JSONValue {
    /// Compact JSON text with object members sorted by key (byte order of their UTF-8), so
    /// the same value always prints the same way.
    public var serialized: String { String(decoding: serializedBytes, as: UTF8.self) }

    /// ``serialized`` as UTF-8 bytes, written directly (what an HTTP body or a JWS input needs).
    public var serializedBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out)
        return out
    }

    /// Appends ``serialized``'s bytes to `out`.
    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: JSONValue.append("null", to: &out)
        case .bool(let b): JSONValue.append(b ? "true" : "false", to: &out)
        case .number(let n): JSONValue.append(n, to: &out)
        case .string(let s): JSONValue.quote(s, into: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (i, v) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                v.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            out.append(UInt8(ascii: "{"))
            var first = true
            for (key, value) in o.sorted(by: { JSONValue.utf8Precedes($0.key, $1.key) }) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                JSONValue.quote(key, into: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Whether `a`'s UTF-8 sorts before `b`'s, byte by byte (RFC 8785 §3.2.3 sorts by UTF-16
    /// instead; ``canonical()`` does that).
    static func utf8Precedes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let n = min(x.count, y.count)
                for i in 0..<n where x[i] != y[i] { return x[i] < y[i] }
                return x.count < y.count
            }
        }
    }

    static func append(_ s: String, to out: inout [UInt8]) {
        var s = s
        s.withUTF8 { out.append(contentsOf: $0) }
    }

    /// Appends `s` as a JSON string (RFC 8259 §7): quotes, backslashes and control characters escaped.
    public static func quote(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { bytes in
            out.append(UInt8(ascii: "\""))
            var clean = bytes.startIndex
            // Eight bytes at a time while none needs escaping (tokens and base64url never do).
            var i = 0
            if let base = bytes.baseAddress {
                let raw = UnsafeRawPointer(base)
                while i + 8 <= bytes.count && !needsEscape(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { i += 8 }
            }
            for i in i..<bytes.count {
                let b = bytes[i]
                guard b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[clean..<i]))
                clean = i + 1
                out.append(UInt8(ascii: "\\"))
                switch b {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(b)
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(b >> 4)], hex[Int(b & 0x0f)]])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[clean...]))
            out.append(UInt8(ascii: "\""))
        }
    }

    /// Whether any of the eight bytes in `x` is below 0x20, a quote or a backslash (the
    /// "has less" and "has zero" tests of bit twiddling: exact about presence).
    @inline(__always)
    static func needsEscape(_ x: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let control = (x &- ones &* 0x20) & ~x & highs
        let q = x ^ (ones &* 0x22), quote = (q &- ones) & ~q & highs
        let b = x ^ (ones &* 0x5c), backslash = (b &- ones) & ~b & highs
        return control | quote | backslash != 0
    }

    /// A number value from an integer.
    public static func int<T: BinaryInteger>(_ value: T) -> JSONValue { .number(String(value)) }
}

/// A JSON object written member by member straight into bytes, in the order given (RFC 8259
/// §4: an object's members are unordered), for answers built on every request where a
/// dictionary of ``JSONValue``s would cost more than the writing.
///
/// The bytes always end with the closing brace, which each member moves along: the finished
/// text is the buffer itself, not a copy with the brace appended.
public struct JSONObjectWriter: Sendable {
    private var bytes: [UInt8]

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
        bytes.append(UInt8(ascii: "}"))
    }

    /// Opens a member: the closing brace goes, a comma if members came before, then the name.
    private mutating func name(_ name: String) {
        bytes.removeLast()
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        JSONValue.quote(name, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func close() { bytes.append(UInt8(ascii: "}")) }

    public mutating func add(_ name: String, _ value: String) {
        self.name(name)
        JSONValue.quote(value, into: &bytes)
        close()
    }

    public mutating func add(_ name: String, _ value: Int64) {
        self.name(name)
        bytes.append(contentsOf: String(value).utf8)
        close()
    }

    public mutating func add(_ name: String, _ value: Bool) {
        self.name(name)
        JSONValue.append(value ? "true" : "false", to: &bytes)
        close()
    }

    public mutating func add(_ name: String, _ value: JSONValue) {
        self.name(name)
        value.write(to: &bytes)
        close()
    }

    /// An array of strings.
    public mutating func add(_ name: String, strings: [String]) {
        self.name(name)
        bytes.append(UInt8(ascii: "["))
        for (i, s) in strings.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.quote(s, into: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        close()
    }

    /// The object's text.
    public var serializedBytes: [UInt8] { bytes }
}
