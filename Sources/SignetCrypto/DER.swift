/// One DER element (ITU-T X.690 §8, §10): its tag and the bytes of its contents.
public struct DERElement: Sendable, Equatable {
    /// ASN.1 tag classes (X.690 §8.1.2.2).
    public enum TagClass: UInt8, Sendable { case universal = 0, application = 1, contextSpecific = 2, `private` = 3 }

    public let tagClass: TagClass
    public let constructed: Bool
    /// Tag number; high-tag-number form (X.690 §8.1.2.4) is decoded, as Android's `[600]` needs.
    public let number: UInt32
    /// The contents octets.
    public let content: ArraySlice<UInt8>

    /// A reader over the contents of a constructed element.
    public var children: DERReader { DERReader(content) }

    public func `is`(_ tagClass: TagClass, _ number: UInt32, constructed: Bool? = nil) -> Bool {
        self.tagClass == tagClass && self.number == number && (constructed == nil || constructed == self.constructed)
    }
}

/// Universal tag numbers used here.
public enum DERTag {
    public static let boolean: UInt32 = 1, integer: UInt32 = 2, bitString: UInt32 = 3, octetString: UInt32 = 4
    public static let null: UInt32 = 5, oid: UInt32 = 6, enumerated: UInt32 = 10, utf8String: UInt32 = 12
    public static let sequence: UInt32 = 16, set: UInt32 = 17, printableString: UInt32 = 19, ia5String: UInt32 = 22
}

/// A strict, bounds-checked DER reader: definite minimal lengths only, never reads past its input.
public struct DERReader: Sendable {
    private var bytes: ArraySlice<UInt8>

    public init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
    public init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    /// `true` when every element has been read.
    public var isAtEnd: Bool { bytes.isEmpty }

    private static func fail(_ what: String) -> CryptoError { CryptoError(.invalidEncoding, "DER: \(what)") }

    /// The next element.
    public mutating func read() throws -> DERElement {
        var i = bytes.startIndex
        guard i < bytes.endIndex else { throw Self.fail("unexpected end") }
        let first = bytes[i]
        i += 1
        var number = UInt32(first & 0x1f)
        if number == 0x1f {
            number = 0
            var count = 0
            while true {
                guard i < bytes.endIndex, count < 4 else { throw Self.fail("bad high tag number") }
                let b = bytes[i]
                i += 1
                if count == 0 && b == 0x80 { throw Self.fail("non-minimal tag number") }
                number = number << 7 | UInt32(b & 0x7f)
                count += 1
                if b & 0x80 == 0 { break }
            }
            if number < 0x1f { throw Self.fail("non-minimal tag number") }
        }
        guard i < bytes.endIndex else { throw Self.fail("missing length") }
        var length = Int(bytes[i])
        i += 1
        if length & 0x80 != 0 {
            let count = length & 0x7f
            guard count >= 1, count <= 4 else { throw Self.fail("unsupported length form") }
            guard bytes.endIndex - i >= count else { throw Self.fail("truncated length") }
            length = 0
            for k in 0..<count { length = length << 8 | Int(bytes[i + k]) }
            if bytes[i] == 0 || length < 0x80 { throw Self.fail("non-minimal length") }
            i += count
        }
        guard bytes.endIndex - i >= length else { throw Self.fail("truncated contents") }
        let element = DERElement(
            tagClass: DERElement.TagClass(rawValue: first >> 6)!, constructed: first & 0x20 != 0,
            number: number, content: bytes[i..<(i + length)])
        bytes = bytes[(i + length)...]
        return element
    }

    /// The next element, which must have the given universal tag.
    public mutating func read(_ tag: UInt32) throws -> DERElement {
        let element = try read()
        guard element.tagClass == .universal, element.number == tag else {
            throw Self.fail("expected universal tag \(tag), found \(element.tagClass) \(element.number)")
        }
        return element
    }

    /// Reads an INTEGER or ENUMERATED that fits in an `Int64`.
    public mutating func readInt(_ tag: UInt32 = DERTag.integer) throws -> Int64 {
        try DERReader.int(try read(tag))
    }

    /// The value of an INTEGER/ENUMERATED element that fits in an `Int64`.
    public static func int(_ element: DERElement) throws -> Int64 {
        let c = element.content
        guard !c.isEmpty, c.count <= 8 else { throw fail("integer size") }
        if c.count > 1, (c[c.startIndex] == 0 && c[c.startIndex + 1] & 0x80 == 0)
            || (c[c.startIndex] == 0xff && c[c.startIndex + 1] & 0x80 != 0) {
            throw fail("non-minimal integer")
        }
        var value: Int64 = c[c.startIndex] & 0x80 != 0 ? -1 : 0
        for b in c { value = value << 8 | Int64(b) }
        return value
    }

    /// Dotted-decimal text of an OBJECT IDENTIFIER's contents (X.690 §8.19).
    public static func oidString(_ content: ArraySlice<UInt8>) throws -> String {
        guard !content.isEmpty, content.last! & 0x80 == 0 else { throw fail("bad OID") }
        var arcs: [UInt64] = []
        var value: UInt64 = 0
        var start = true
        for b in content {
            if start && b == 0x80 { throw fail("non-minimal OID arc") }
            guard value < (1 << 56) else { throw fail("OID arc too large") }
            value = value << 7 | UInt64(b & 0x7f)
            start = b & 0x80 == 0
            if start {
                if arcs.isEmpty {
                    let first: UInt64 = value < 40 ? 0 : (value < 80 ? 1 : 2)
                    arcs.append(first)
                    arcs.append(value - first * 40)
                } else {
                    arcs.append(value)
                }
                value = 0
            }
        }
        return arcs.map(String.init).joined(separator: ".")
    }
}

/// A minimal DER writer for the structures Signet builds (test certificates, extensions).
public enum DER {
    /// One element with the given identifier octet and contents.
    public static func element(_ identifier: UInt8, _ content: [UInt8]) -> [UInt8] {
        [identifier] + length(content.count) + content
    }

    static func length(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        var bytes: [UInt8] = []
        var v = n
        while v > 0 { bytes.insert(UInt8(v & 0xff), at: 0); v >>= 8 }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    public static func sequence(_ items: [[UInt8]]) -> [UInt8] { element(0x30, items.flatMap { $0 }) }
    public static func set(_ items: [[UInt8]]) -> [UInt8] { element(0x31, items.flatMap { $0 }) }
    public static func octetString(_ bytes: [UInt8]) -> [UInt8] { element(0x04, bytes) }
    public static func utf8String(_ text: String) -> [UInt8] { element(0x0c, Array(text.utf8)) }
    public static func boolean(_ value: Bool) -> [UInt8] { element(0x01, [value ? 0xff : 0x00]) }
    public static let null: [UInt8] = [0x05, 0x00]

    /// A context-specific tag `[number]`, constructed (EXPLICIT) or primitive; high numbers included.
    public static func tagged(_ number: UInt32, constructed: Bool = true, _ content: [UInt8]) -> [UInt8] {
        let base: UInt8 = 0x80 | (constructed ? 0x20 : 0)
        if number < 0x1f { return element(base | UInt8(number), content) }
        var digits: [UInt8] = []
        var v = number
        repeat { digits.insert(UInt8(v & 0x7f), at: 0); v >>= 7 } while v > 0
        for k in 0..<(digits.count - 1) { digits[k] |= 0x80 }
        return [base | 0x1f] + digits + length(content.count) + content
    }

    /// An INTEGER (or, with `tag` 0x0a, ENUMERATED) in minimal two's complement.
    public static func integer(_ value: Int64, tag: UInt8 = 0x02) -> [UInt8] {
        var bytes: [UInt8] = []
        var v = value
        repeat { bytes.insert(UInt8(truncatingIfNeeded: v), at: 0); v >>= 8 } while v != 0 && v != -1
        if value >= 0 && bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        if value < 0 && bytes[0] & 0x80 == 0 { bytes.insert(0xff, at: 0) }
        return element(tag, bytes)
    }

    /// An OBJECT IDENTIFIER from dotted-decimal text.
    public static func oid(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").map { UInt64($0)! }
        var body: [UInt8] = []
        for (k, arc) in ([arcs[0] * 40 + arcs[1]] + arcs.dropFirst(2)).enumerated() {
            _ = k
            var digits: [UInt8] = []
            var v = arc
            repeat { digits.insert(UInt8(v & 0x7f), at: 0); v >>= 7 } while v > 0
            for j in 0..<(digits.count - 1) { digits[j] |= 0x80 }
            body += digits
        }
        return element(0x06, body)
    }
}
