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
        decode(bytes: Array(text.utf8), canonical: canonical)
    }

    /// Decodes base64url given as its ASCII bytes.
    public static func decode(bytes input: some Collection<UInt8>, canonical: Bool = false) -> [UInt8]? {
        var chars = input as? [UInt8] ?? Array(input)
        if chars.count % 4 == 0, let firstPad = chars.firstIndex(of: UInt8(ascii: "=")) {
            guard chars.count - firstPad <= 2, chars[firstPad...].allSatisfy({ $0 == UInt8(ascii: "=") }) else { return nil }
            chars.removeSubrange(firstPad...)
        }
        guard chars.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var acc: UInt32 = 0, bits = 0
        let ok: Bool = table.withUnsafeBufferPointer { t in
            chars.withUnsafeBufferPointer { c in
                for ch in c {
                    let v = t[Int(ch)]
                    guard v != 0xff else { return false }
                    acc = acc << 6 | UInt32(v)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
                    }
                }
                return true
            }
        }
        guard ok else { return nil }
        if canonical && acc & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return out
    }
}
