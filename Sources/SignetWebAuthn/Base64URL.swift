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
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var it = bytes.makeIterator()
        while let a = it.next() {
            let b = it.next(), c = it.next()
            out.append(alphabet[Int(a >> 2)])
            out.append(alphabet[Int((a & 0x03) << 4 | (b ?? 0) >> 4)])
            if let b { out.append(alphabet[Int((b & 0x0f) << 2 | (c ?? 0) >> 6)]) }
            if let c { out.append(alphabet[Int(c & 0x3f)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of base64url text, or `nil` when it is not base64url. With `canonical`, text
    /// whose unused trailing bits are not zero is refused too, so that each byte string has
    /// exactly one accepted encoding (used for challenges).
    public static func decode(_ text: some StringProtocol, canonical: Bool = false) -> [UInt8]? {
        decode(bytes: Array(text.utf8), canonical: canonical)
    }

    /// Decodes base64url given as its ASCII bytes.
    public static func decode(bytes input: some Collection<UInt8>, canonical: Bool = false) -> [UInt8]? {
        var chars = Array(input)
        if chars.count % 4 == 0, let firstPad = chars.firstIndex(of: UInt8(ascii: "=")) {
            guard chars.count - firstPad <= 2, chars[firstPad...].allSatisfy({ $0 == UInt8(ascii: "=") }) else { return nil }
            chars.removeSubrange(firstPad...)
        }
        guard chars.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var acc: UInt32 = 0, bits = 0
        for c in chars {
            let v = table[Int(c)]
            guard v != 0xff else { return nil }
            acc = acc << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        if canonical && acc & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return out
    }
}
