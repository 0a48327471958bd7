/// Base64url (RFC 4648 §5) without padding, as WebAuthn's JSON serialization uses it.
/// Decoding also accepts `=` padding and nothing else.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let table: [UInt8] = {
        var t = [UInt8](repeating: 0xff, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()

    /// Unpadded base64url text of `bytes`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        if let text = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) { return text }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    /// Appends the unpadded base64url text of `bytes` to `out`, as ASCII bytes.
    public static func append(_ bytes: [UInt8], to out: inout [UInt8]) {
        let length = encodedLength(bytes.count)
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: length))
        bytes.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { whole in
                _ = write(input, into: UnsafeMutableBufferPointer(rebasing: whole[start...]))
            }
        }
    }

    /// Characters in the unpadded encoding of `n` bytes.
    static func encodedLength(_ n: Int) -> Int { n / 3 * 4 + (n % 3 == 0 ? 0 : n % 3 + 1) }

    private static func encode(buffer input: UnsafeBufferPointer<UInt8>) -> String {
        let length = encodedLength(input.count)
        return String(unsafeUninitializedCapacity: length) { write(input, into: $0) }
    }

    /// Writes the encoding of `input` at the start of `out` (which has room) and returns its length.
    private static func write(_ input: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let n = input.count
        let length = encodedLength(n)
        alphabet.withUnsafeBufferPointer { a in
            var i = 0, o = 0
            while i + 3 <= n {
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                out[o] = a[Int(v >> 18)]
                out[o + 1] = a[Int(v >> 12 & 63)]
                out[o + 2] = a[Int(v >> 6 & 63)]
                out[o + 3] = a[Int(v & 63)]
                i += 3
                o += 4
            }
            if n - i == 1 {
                let v = UInt32(input[i]) << 16
                out[o] = a[Int(v >> 18)]
                out[o + 1] = a[Int(v >> 12 & 63)]
            } else if n - i == 2 {
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                out[o] = a[Int(v >> 18)]
                out[o + 1] = a[Int(v >> 12 & 63)]
                out[o + 2] = a[Int(v >> 6 & 63)]
            }
        }
        return length
    }

    /// The bytes of base64url text, or `nil` when it is not base64url. With `canonical`, text
    /// whose unused trailing bits are not zero is refused too, so that each byte string has
    /// exactly one accepted encoding (used for challenges).
    public static func decode(_ text: some StringProtocol, canonical: Bool = false) -> [UInt8]? {
        var string = String(text)
        return string.withUTF8 { decode(buffer: $0, canonical: canonical) }
    }

    /// Decodes base64url given as its ASCII bytes.
    public static func decode(bytes input: some Collection<UInt8>, canonical: Bool = false) -> [UInt8]? {
        if let result = input.withContiguousStorageIfAvailable({ decode(buffer: $0, canonical: canonical) }) { return result }
        return Array(input).withUnsafeBufferPointer { decode(buffer: $0, canonical: canonical) }
    }

    /// Four characters to three bytes at a time; the table maps characters outside the alphabet
    /// to 0xff, which a single test of the high bits catches.
    private static func decode(buffer input: UnsafeBufferPointer<UInt8>, canonical: Bool) -> [UInt8]? {
        var n = input.count
        if n % 4 == 0, n > 0, input[n - 1] == UInt8(ascii: "=") {
            n -= input[n - 2] == UInt8(ascii: "=") ? 2 : 1
        }
        guard n % 4 != 1, !input[..<n].contains(UInt8(ascii: "=")) else { return nil }
        let full = n / 4 * 3, count = full + (n % 4 == 0 ? 0 : n % 4 - 1)
        var valid = true
        let out = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            table.withUnsafeBufferPointer { t in
                var i = 0, o = 0
                while i + 4 <= n {
                    let a = t[Int(input[i])], b = t[Int(input[i + 1])], c = t[Int(input[i + 2])], d = t[Int(input[i + 3])]
                    guard (a | b | c | d) & 0xc0 == 0 else {
                        valid = false
                        return
                    }
                    let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[o] = UInt8(truncatingIfNeeded: v >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: v)
                    i += 4
                    o += 3
                }
                switch n - i {
                case 2:
                    let a = t[Int(input[i])], b = t[Int(input[i + 1])]
                    // The unused low bits must be zero in the canonical encoding.
                    guard (a | b) & 0xc0 == 0, !canonical || b & 0x0f == 0 else {
                        valid = false
                        return
                    }
                    out[o] = a << 2 | b >> 4
                case 3:
                    let a = t[Int(input[i])], b = t[Int(input[i + 1])], c = t[Int(input[i + 2])]
                    guard (a | b | c) & 0xc0 == 0, !canonical || c & 0x03 == 0 else {
                        valid = false
                        return
                    }
                    out[o] = a << 2 | b >> 4
                    out[o + 1] = b << 4 | c >> 2
                default: break
                }
            }
            initialized = valid ? count : 0
        }
        return valid ? out : nil
    }
}
