import SignetWebAuthn
import Testing

/// RFC 8785 (JSON Canonicalization Scheme).
@Suite struct CanonicalJSONTests {
    static func canonical(_ text: String) throws -> String { try StrictJSON().parse(Array(text.utf8)).canonical() }

    @Test("numbers take ECMAScript's shortest form (RFC 8785 §3.2.2.3 and Appendix B)", arguments: [
        ("0", "0"), ("-0", "0"), ("1", "1"), ("1.0", "1"), ("100", "100"), ("1e2", "100"), ("-1.5", "-1.5"), ("0.1", "0.1"),
        ("1e21", "1e+21"), ("1e20", "100000000000000000000"), ("123e-20", "1.23e-18"), ("0.000001", "0.000001"), ("1e-7", "1e-7"),
        ("333333333.33333329", "333333333.3333333"), ("1E30", "1e+30"), ("4.50", "4.5"), ("2e-3", "0.002"), ("9007199254740992", "9007199254740992"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"), ("5e-324", "5e-324"), ("-1e-7", "-1e-7"), ("12.5e1", "125"),
    ])
    func numbers(_ input: String, _ expected: String) throws {
        #expect(try Self.canonical(input) == expected)
    }

    @Test("members are sorted by UTF-16 code units, whitespace goes, strings are escaped minimally")
    func structure() throws {
        #expect(try Self.canonical(#"{ "b" : [1, {"z":true, "a":null}], "a": "x" }"#) == #"{"a":"x","b":[1,{"a":null,"z":true}]}"#)
        // U+1F600 (UTF-16 D83D DE00) sorts before U+E000 by UTF-16 code units, after it by UTF-8 bytes.
        #expect(try Self.canonical("{\"\u{E000}\":2,\"\u{1F600}\":1}") == "{\"\u{1F600}\":1,\"\u{E000}\":2}")
        #expect(try Self.canonical(#""a\u000fb\"\\\/\n""#) == #""a\u000fb\"\\/\n""#)
        #expect(try Self.canonical(#""€\u20ac""#) == "\"€€\"")
    }

    @Test("numbers outside a double are refused")
    func overflow() {
        #expect(throws: WebAuthnError.self) { try Self.canonical("1e400") }
    }
}
