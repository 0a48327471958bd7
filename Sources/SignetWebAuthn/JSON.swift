/// A JSON value (RFC 8259) as read by ``StrictJSON``. Numbers keep their text.
///
/// Not `indirect`: arrays and objects already keep their members in heap storage, so a value
/// fits inline (17 bytes) and a string or a number needs no box of its own (about 14k fewer
/// instructions per sign-in by callgrind, half of them the allocator's).
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public var string: String? { if case .string(let s) = self { s } else { nil } }
    public var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var object: JSONObject? { if case .object(let o) = self { o } else { nil } }
    public var array: [JSONValue]? { if case .array(let a) = self { a } else { nil } }

    /// An integral number that fits in `Int64`.
    public var int64: Int64? {
        guard case .number(let text) = self else { return nil }
        return Int64(text)
    }

    public subscript(key: String) -> JSONValue? { object?[key] }
}

/// A strict, bounded JSON parser: UTF-8 only, no duplicate object keys, no lone surrogates,
/// bounded depth, exactly one value with only whitespace around it.
public struct StrictJSON: Sendable {
    public var maxDepth: Int
    public var maxLength: Int

    public init(maxDepth: Int = 32, maxLength: Int = 64 * 1024) {
        self.maxDepth = maxDepth
        self.maxLength = maxLength
    }

    public func parse(_ bytes: some Collection<UInt8>) throws(WebAuthnError) -> JSONValue {
        guard bytes.count <= maxLength else { throw .malformed("JSON: larger than \(maxLength) bytes") }
        var parser = Parser(bytes: Array(bytes), maxDepth: maxDepth)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw .malformed("JSON: trailing characters") }
        return value
    }

    private struct Parser {
        let bytes: [UInt8]
        let maxDepth: Int
        var index = 0

        init(bytes: [UInt8], maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
        }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let c = peek, c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d { index += 1 }
        }

        mutating func expect(_ literal: String) throws(WebAuthnError) {
            for c in literal.utf8 {
                guard peek == c else { throw .malformed("JSON: invalid literal") }
                index += 1
            }
        }

        mutating func value(depth: Int) throws(WebAuthnError) -> JSONValue {
            guard depth <= maxDepth else { throw .malformed("JSON: nested deeper than \(maxDepth)") }
            guard let c = peek else { throw .malformed("JSON: unexpected end") }
            switch c {
            case UInt8(ascii: "{"):
                index += 1
                skipWhitespace()
                if peek == UInt8(ascii: "}") { index += 1; return .object(JSONObject()) }
                // Room for the members of a typical object up front: growing from one costs an
                // allocation and a copy at 1, 2, 4 and 8.
                var members: [JSONObject.Element] = []
                members.reserveCapacity(8)
                while true {
                    skipWhitespace()
                    guard peek == UInt8(ascii: "\"") else { throw .malformed("JSON: object key must be a string") }
                    let key = try string()
                    skipWhitespace()
                    try expect(":")
                    skipWhitespace()
                    members.append((key, try value(depth: depth + 1)))
                    skipWhitespace()
                    if peek == UInt8(ascii: ",") { index += 1; continue }
                    try expect("}")
                    do {
                        return .object(try JSONObject(members: members))
                    } catch {
                        throw .malformed("JSON: duplicate key \"\(error.name)\"")
                    }
                }
            case UInt8(ascii: "["):
                index += 1
                var array: [JSONValue] = []
                skipWhitespace()
                if peek == UInt8(ascii: "]") { index += 1; return .array(array) }
                while true {
                    skipWhitespace()
                    array.append(try value(depth: depth + 1))
                    skipWhitespace()
                    if peek == UInt8(ascii: ",") { index += 1; continue }
                    try expect("]")
                    return .array(array)
                }
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try expect("true"); return .bool(true)
            case UInt8(ascii: "f"): try expect("false"); return .bool(false)
            case UInt8(ascii: "n"): try expect("null"); return .null
            default: return .number(try number())
            }
        }

        mutating func number() throws(WebAuthnError) -> String {
            let start = index
            func digits(_ p: inout Parser) -> Int {
                let s = p.index
                while let c = p.peek, c >= 0x30 && c <= 0x39 { p.index += 1 }
                return p.index - s
            }
            if peek == UInt8(ascii: "-") { index += 1 }
            if peek == UInt8(ascii: "0") {
                index += 1
            } else {
                guard digits(&self) > 0 else { throw .malformed("JSON: invalid number") }
            }
            if peek == UInt8(ascii: ".") {
                index += 1
                guard digits(&self) > 0 else { throw .malformed("JSON: invalid number") }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard digits(&self) > 0 else { throw .malformed("JSON: invalid number") }
            }
            guard index - start <= 64 else { throw .malformed("JSON: number too long") }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func hex4() throws(WebAuthnError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw .malformed("JSON: truncated escape") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[index]
                index += 1
                let d: UInt32
                switch c {
                case 0x30...0x39: d = UInt32(c - 0x30)
                case 0x41...0x46: d = UInt32(c - 0x37)
                case 0x61...0x66: d = UInt32(c - 0x57)
                default: throw .malformed("JSON: invalid escape")
                }
                v = v << 4 | d
            }
            return v
        }

        mutating func string() throws(WebAuthnError) -> String {
            index += 1  // opening quote
            let start = index
            // Fast path: no escapes. Eight bytes at a time over plain text (base64url members
            // are most of a WebAuthn body), then byte by byte to the first special one.
            // The high bits of every byte passed, ORed together: zero means plain ASCII, which
            // needs no UTF-8 validation (the standard library's validating initializer is generic
            // and costs several hundred instructions per string).
            var high: UInt64 = 0
            index = bytes.withUnsafeBufferPointer { buffer in
                var i = index
                if let base = buffer.baseAddress {
                    let raw = UnsafeRawPointer(base)
                    while i + 8 <= buffer.count {
                        let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                        if JSONValue.needsEscape(word) { break }
                        high |= word
                        i += 8
                    }
                }
                while i < buffer.count, buffer[i] != UInt8(ascii: "\""), buffer[i] != UInt8(ascii: "\\"), buffer[i] >= 0x20 {
                    high |= UInt64(buffer[i])
                    i += 1
                }
                return i
            }
            if peek == UInt8(ascii: "\"") {
                defer { index += 1 }
                return try bytes.withUnsafeBufferPointer { buffer throws(WebAuthnError) in
                    let text = UnsafeBufferPointer(rebasing: buffer[start..<index])
                    if high & 0x8080_8080_8080_8080 == 0 { return String(decoding: text, as: UTF8.self) }
                    guard let s = String(validating: text, as: UTF8.self) else { throw .malformed("JSON: string is not UTF-8") }
                    return s
                }
            }
            var out = Array(bytes[start..<index])
            while true {
                guard let c = peek else { throw .malformed("JSON: unterminated string") }
                index += 1
                switch c {
                case UInt8(ascii: "\""):
                    guard let s = String(validating: out, as: UTF8.self) else { throw .malformed("JSON: string is not UTF-8") }
                    return s
                case UInt8(ascii: "\\"):
                    guard let e = peek else { throw .malformed("JSON: unterminated escape") }
                    index += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0c)
                    case UInt8(ascii: "n"): out.append(0x0a)
                    case UInt8(ascii: "r"): out.append(0x0d)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xd800..<0xdc00).contains(scalar) {
                            try expect("\\u")
                            let low = try hex4()
                            guard (0xdc00..<0xe000).contains(low) else { throw .malformed("JSON: lone surrogate") }
                            scalar = 0x10000 + ((scalar - 0xd800) << 10) + (low - 0xdc00)
                        } else if (0xdc00..<0xe000).contains(scalar) {
                            throw .malformed("JSON: lone surrogate")
                        }
                        guard let u = Unicode.Scalar(scalar) else { throw .malformed("JSON: invalid escape") }
                        out += Array(String(Character(u)).utf8)
                    default: throw .malformed("JSON: invalid escape")
                    }
                default:
                    guard c >= 0x20 else { throw .malformed("JSON: control character in string") }
                    out.append(c)
                }
            }
        }
    }
}
