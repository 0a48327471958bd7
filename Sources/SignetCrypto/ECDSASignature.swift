/// Conversions between the two encodings of an ECDSA signature: DER `Ecdsa-Sig-Value`
/// (SEC 1 §C.5; OpenSSL, WebAuthn, Apple and Android) and fixed-width `r || s`
/// (RFC 7518 §3.4; JWS and JWT).
public enum ECDSASignature {
    /// DER from `r || s`; `nil` when the length is odd or zero.
    public static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard !raw.isEmpty, raw.count % 2 == 0 else { return nil }
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var b = Array(bytes.drop(while: { $0 == 0 }))
            if b.isEmpty { b = [0] }
            if b[0] & 0x80 != 0 { b.insert(0, at: 0) }
            return DER.element(0x02, b)
        }
        let half = raw.count / 2
        return DER.sequence([integer(raw[..<half]), integer(raw[half...])])
    }

    /// `r || s`, each left-padded to `width` bytes; `nil` when the DER is malformed or too wide.
    public static func raw(fromDER der: [UInt8], width: Int) -> [UInt8]? {
        var reader = DERReader(der)
        guard let seq = try? reader.read(DERTag.sequence), reader.isAtEnd else { return nil }
        var inner = seq.children
        guard let r = try? inner.read(DERTag.integer), let s = try? inner.read(DERTag.integer), inner.isAtEnd else { return nil }
        // Each integer right-aligned in its half of one buffer, its leading zeros dropped.
        var out = [UInt8](repeating: 0, count: 2 * width)
        for (half, integer) in [r.content, s.content].enumerated() {
            let digits = integer.drop(while: { $0 == 0 })
            guard digits.count <= width else { return nil }
            let end = (half + 1) * width
            out.replaceSubrange((end - digits.count)..<end, with: digits)
        }
        return out
    }
}
