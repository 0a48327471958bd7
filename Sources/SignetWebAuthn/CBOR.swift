/// A CBOR data item (RFC 8949) of the subset WebAuthn uses: integers, byte and text strings,
/// arrays, maps, booleans and null. Tags, floats, `undefined` and indefinite lengths are refused.
public indirect enum CBOR: Equatable, Sendable {
    case unsigned(UInt64)
    /// The negative integer `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map(CBORMap)
    case bool(Bool)
    case null

    /// The value as an `Int`, when it is an integer that fits.
    public var int: Int? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): n <= UInt64(Int.max) ? -1 - Int(n) : nil
        default: nil
        }
    }

    public var bytes: [UInt8]? { if case .bytes(let b) = self { b } else { nil } }
    public var text: String? { if case .text(let t) = self { t } else { nil } }
    public var array: [CBOR]? { if case .array(let a) = self { a } else { nil } }
    public var map: CBORMap? { if case .map(let m) = self { m } else { nil } }

    /// An integer item.
    public static func int(_ value: Int) -> CBOR { value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value)) }
}

/// A CBOR map with its pairs in the order they were read. Keys are unique.
public struct CBORMap: Equatable, Sendable {
    public struct Pair: Equatable, Sendable {
        public let key: CBOR
        public let value: CBOR
    }

    public private(set) var pairs: [Pair]

    public init(_ pairs: [(CBOR, CBOR)]) { self.pairs = pairs.map { Pair(key: $0.0, value: $0.1) } }

    public subscript(key: CBOR) -> CBOR? { pairs.first { $0.key == key }?.value }
    public subscript(int key: Int) -> CBOR? { self[.int(key)] }
    public subscript(text key: String) -> CBOR? { self[.text(key)] }

    public var count: Int { pairs.count }
    public var keys: [CBOR] { pairs.map(\.key) }
}

/// A strict, bounded CBOR decoder (RFC 8949 §4.2 core deterministic rules for lengths and
/// integers: shortest form only). Never reads past its input and never allocates more than the
/// input could describe.
public struct CBORDecoder: Sendable {
    /// Deepest nesting accepted.
    public var maxDepth = 16
    /// Most bytes accepted in one input.
    public var maxLength = 64 * 1024

    public init(maxDepth: Int = 16, maxLength: Int = 64 * 1024) {
        self.maxDepth = maxDepth
        self.maxLength = maxLength
    }

    /// Decodes exactly one item that spans all of `bytes`; trailing bytes are refused.
    public func decode(_ bytes: ArraySlice<UInt8>) throws(WebAuthnError) -> CBOR {
        let (item, rest) = try decodePrefix(bytes)
        guard rest.isEmpty else { throw .malformed("CBOR: \(rest.count) trailing bytes") }
        return item
    }

    public func decode(_ bytes: [UInt8]) throws(WebAuthnError) -> CBOR { try decode(bytes[...]) }

    /// Decodes one item at the start of `bytes` and returns it with the bytes after it.
    public func decodePrefix(_ bytes: ArraySlice<UInt8>) throws(WebAuthnError) -> (CBOR, ArraySlice<UInt8>) {
        guard bytes.count <= maxLength else { throw .malformed("CBOR: input larger than \(maxLength) bytes") }
        var reader = Reader(bytes: bytes, index: bytes.startIndex)
        let item = try reader.item(depth: 0, maxDepth: maxDepth)
        return (item, bytes[reader.index...])
    }

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var index: Int

        var remaining: Int { bytes.endIndex - index }

        mutating func byte() throws(WebAuthnError) -> UInt8 {
            guard index < bytes.endIndex else { throw .malformed("CBOR: truncated") }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func take(_ count: UInt64) throws(WebAuthnError) -> ArraySlice<UInt8> {
            guard count <= UInt64(remaining) else { throw .malformed("CBOR: length \(count) beyond input") }
            let n = Int(count)
            defer { index += n }
            return bytes[index..<(index + n)]
        }

        mutating func argument(_ info: UInt8) throws(WebAuthnError) -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24...27:
                let size = 1 << Int(info - 24)
                var value: UInt64 = 0
                for b in try take(UInt64(size)) { value = value << 8 | UInt64(b) }
                let minimum: UInt64 = size == 1 ? 24 : (1 << (4 * UInt64(size)))
                guard value >= minimum else { throw .malformed("CBOR: non-canonical integer or length") }
                return value
            case 31: throw .malformed("CBOR: indefinite length")
            default: throw .malformed("CBOR: reserved additional information \(info)")
            }
        }

        mutating func item(depth: Int, maxDepth: Int) throws(WebAuthnError) -> CBOR {
            guard depth <= maxDepth else { throw .malformed("CBOR: nested deeper than \(maxDepth)") }
            let initial = try byte()
            let major = initial >> 5, info = initial & 0x1f
            switch major {
            case 0: return .unsigned(try argument(info))
            case 1: return .negative(try argument(info))
            case 2: return .bytes(Array(try take(try argument(info))))
            case 3:
                let raw = try take(try argument(info))
                guard let text = String(validating: raw, as: UTF8.self) else { throw .malformed("CBOR: text is not UTF-8") }
                return .text(text)
            case 4:
                let count = try argument(info)
                guard count <= UInt64(remaining), count <= 1024 else { throw .malformed("CBOR: array too long") }
                var items: [CBOR] = []
                items.reserveCapacity(Int(count))
                for _ in 0..<count { items.append(try item(depth: depth + 1, maxDepth: maxDepth)) }
                return .array(items)
            case 5:
                let count = try argument(info)
                guard count <= UInt64(remaining / 2), count <= 256 else { throw .malformed("CBOR: map too long") }
                var pairs: [(CBOR, CBOR)] = []
                pairs.reserveCapacity(Int(count))
                for _ in 0..<count {
                    let key = try item(depth: depth + 1, maxDepth: maxDepth)
                    switch key {
                    case .unsigned, .negative, .text, .bytes: break
                    default: throw .malformed("CBOR: map key must be an integer or a string")
                    }
                    let value = try item(depth: depth + 1, maxDepth: maxDepth)
                    guard !pairs.contains(where: { $0.0 == key }) else { throw .malformed("CBOR: duplicate map key") }
                    pairs.append((key, value))
                }
                return .map(CBORMap(pairs))
            case 6: throw .malformed("CBOR: tags are not accepted")
            default:
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                default: throw .malformed("CBOR: unsupported simple value or float")
                }
            }
        }
    }
}

/// Encodes ``CBOR`` items in the CTAP2 canonical form (shortest lengths, map order as given).
public enum CBOREncoder {
    public static func encode(_ item: CBOR) -> [UInt8] {
        var out: [UInt8] = []
        append(item, to: &out)
        return out
    }

    private static func head(_ major: UInt8, _ value: UInt64, to out: inout [UInt8]) {
        let m = major << 5
        switch value {
        case 0..<24: out.append(m | UInt8(value))
        case 24..<0x100: out += [m | 24, UInt8(value)]
        case 0x100..<0x10000: out += [m | 25, UInt8(value >> 8), UInt8(value & 0xff)]
        case 0x10000..<0x1_0000_0000: out.append(m | 26); out += (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        default: out.append(m | 27); out += (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }
    }

    private static func append(_ item: CBOR, to out: inout [UInt8]) {
        switch item {
        case .unsigned(let n): head(0, n, to: &out)
        case .negative(let n): head(1, n, to: &out)
        case .bytes(let b): head(2, UInt64(b.count), to: &out); out += b
        case .text(let t): head(3, UInt64(t.utf8.count), to: &out); out += Array(t.utf8)
        case .array(let a): head(4, UInt64(a.count), to: &out); for i in a { append(i, to: &out) }
        case .map(let m): head(5, UInt64(m.count), to: &out); for p in m.pairs { append(p.key, to: &out); append(p.value, to: &out) }
        case .bool(let b): out.append(b ? 0xf5 : 0xf4)
        case .null: out.append(0xf6)
        }
    }
}
