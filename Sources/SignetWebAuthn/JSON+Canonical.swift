extension JSONValue {
    /// The JSON Canonicalization Scheme (RFC 8785) text of this value: object members sorted by
    /// the UTF-16 code units of their names (§3.2.3), strings escaped minimally (§3.2.2.2) and
    /// numbers in ECMAScript's shortest form (§3.2.2.3). Throws for a number that is not a finite
    /// IEEE 754 double.
    public func canonical() throws(WebAuthnError) -> String {
        var out: [UInt8] = []
        try writeCanonical(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private func writeCanonical(to out: inout [UInt8]) throws(WebAuthnError) {
        switch self {
        case .string(let s): JSONValue.quote(s, into: &out)
        case .number(let text): JSONValue.append(try JSONValue.canonicalNumber(text), to: &out)
        case .null, .bool: write(to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                try item.writeCanonical(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.sorted(by: { $0.key.utf16.lexicographicallyPrecedes($1.key.utf16) }).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.quote(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                try member.value.writeCanonical(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// ECMAScript `Number.prototype.toString` (ECMA-262 §6.1.6.1.20) of the number `text` denotes.
    static func canonicalNumber(_ text: String) throws(WebAuthnError) -> String {
        guard let value = Double(text), value.isFinite else { throw .malformed("JSON number \(text) is not a finite double") }
        if value == 0 { return "0" }
        // Shortest round-trip digits and decimal exponent from Swift's description.
        let description = "\(abs(value))"
        let parts = description.split(separator: "e")
        var exponent = parts.count > 1 ? Int(parts[1])! : 0
        let mantissa = parts[0]
        let pieces = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        var digits = Array(pieces[0] + (pieces.count > 1 ? pieces[1] : ""))
        exponent += pieces[0].count
        while digits.first == "0" {
            digits.removeFirst()
            exponent -= 1
        }
        while digits.last == "0" { digits.removeLast() }
        let k = digits.count, n = exponent
        let d = String(digits)
        let sign = value < 0 ? "-" : ""
        if k <= n && n <= 21 { return sign + d + String(repeating: "0", count: n - k) }
        if 0 < n && n <= 21 { return sign + String(digits[..<n]) + "." + String(digits[n...]) }
        if -6 < n && n <= 0 { return sign + "0." + String(repeating: "0", count: -n) + d }
        let e = n - 1
        let exponentText = (e < 0 ? "-" : "+") + String(abs(e))
        return sign + String(digits[0]) + (k > 1 ? "." + String(digits[1...]) : "") + "e" + exponentText
    }
}
