import Foundation
import SignetWebAuthn
import Testing

/// Bounded, strict parsers: bad input is refused with `malformed`, never a crash.
@Suite struct ParserTests {
    static func malformed(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch {
            return (error as? WebAuthnError)?.reason == .malformed
        }
    }

    @Test("CBOR: values round-trip through the encoder")
    func cborRoundTrip() throws {
        let value = CBOR.map(CBORMap([
            (.int(1), .int(2)), (.int(-1), .int(-300)), (.text("k"), .array([.bytes([1, 2]), .bool(true), .null])),
            (.int(24), .unsigned(UInt64.max)),
        ]))
        #expect(try CBORDecoder().decode(CBOREncoder.encode(value)) == value)
    }

    @Test("CBOR: refused input", arguments: [
        ("truncated", [0x82, 0x01]),
        ("trailing byte", [0x01, 0x00]),
        ("indefinite array", [0x9f, 0x01, 0xff]),
        ("indefinite byte string", [0x5f, 0x41, 0x00, 0xff]),
        ("non-minimal integer", [0x18, 0x05]),
        ("non-minimal length", [0x59, 0x00, 0x01, 0x00]),
        ("tag", [0xc0, 0x60]),
        ("float", [0xf9, 0x3c, 0x00]),
        ("undefined", [0xf7]),
        ("reserved info", [0x1c]),
        ("duplicate map key", [0xa2, 0x01, 0x01, 0x01, 0x02]),
        ("array map key", [0xa1, 0x80, 0x01]),
        ("invalid UTF-8 text", [0x62, 0xc3, 0x28]),
        ("length beyond input", [0x5a, 0xff, 0xff, 0xff, 0xff]),
        ("huge array count", [0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
        ("huge map count", [0xbb, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00]),
    ] as [(String, [UInt8])])
    func cborRefused(_ name: String, _ bytes: [UInt8]) {
        #expect(Self.malformed { _ = try CBORDecoder().decode(bytes) }, "\(name)")
    }

    @Test("CBOR: nesting and size limits")
    func cborLimits() {
        let deep = [UInt8](repeating: 0x81, count: 17) + [0x01]
        #expect(Self.malformed { _ = try CBORDecoder(maxDepth: 16).decode(deep) })
        #expect((try? CBORDecoder(maxDepth: 17).decode(deep)) != nil)
        let big = [0x5a, 0x00, 0x01, 0x00, 0x00] + [UInt8](repeating: 0, count: 65536)
        #expect(Self.malformed { _ = try CBORDecoder(maxLength: 64 * 1024).decode(big) })
        let hostile = [UInt8](repeating: 0x81, count: 100_000)
        #expect(Self.malformed { _ = try CBORDecoder(maxLength: 1 << 20).decode(hostile) })
    }

    @Test("JSON: values parse, escapes decode, output re-parses")
    func json() throws {
        let text = #"{"a":[1,-2.5e3,true,false,null],"b":"\u00e9\ud83d\ude00\n\/","c":{}}"#
        let value = try StrictJSON().parse(Array(text.utf8))
        #expect(value["b"] == .string("é😀\n/"))
        #expect(value["a"]?.array?.count == 5)
        #expect(try StrictJSON().parse(Array(value.serialized.utf8)) == value)
    }

    @Test("JSON: serialization escapes exactly quotes, backslashes and control characters, members sorted by UTF-8")
    func jsonSerialization() throws {
        let value = JSONValue.object([
            "z": .string("a\"b\\c\u{01}\u{1f}\n\r\t\u{08}\u{0c}\u{7f}é😀/"), "a": .array([.int(1), .bool(false), .null]), "é": .object([:]),
            "B": .number("-2.5e3"),
        ])
        let expected = #"{"B":-2.5e3,"a":[1,false,null],"z":"a\"b\\c\u0001\u001f\n\r\t\b\f"# + "\u{7f}é😀/\",\"é\":{}}"
        #expect(value.serialized == expected)
        #expect(value.serializedBytes == Array(expected.utf8))
        #expect(try StrictJSON().parse(value.serializedBytes) == value)
        var appended = Array("x".utf8)
        value.write(to: &appended)
        #expect(appended == Array(("x" + expected).utf8))
    }

    @Test("JSON: every ASCII character at every position of a long string is escaped as a one-at-a-time escaper does")
    func jsonEscapingEveryPosition() {
        func reference(_ s: String) -> String {
            var out = "\""
            for u in s.unicodeScalars {
                switch u {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case "\u{08}": out += "\\b"
                case "\u{0C}": out += "\\f"
                default:
                    if u.value < 0x20 {
                        let hex = String(u.value, radix: 16)
                        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    } else {
                        out.unicodeScalars.append(u)
                    }
                }
            }
            return out + "\""
        }
        for byte in 0..<0x80 {
            for position in 0..<19 {
                var scalars = Array(repeating: Unicode.Scalar(UInt8(ascii: "a")), count: 19)
                scalars[position] = Unicode.Scalar(UInt8(byte))
                let s = String(String.UnicodeScalarView(scalars))
                #expect(JSONValue.string(s).serialized == reference(s), "byte \(byte) at \(position)")
            }
        }
    }

    @Test("JSON: an object written member by member parses back to the same members")
    func jsonObjectWriter() throws {
        #expect(JSONObjectWriter().serializedBytes == Array("{}".utf8))
        var writer = JSONObjectWriter(capacity: 8)
        writer.add("s", "quote \" backslash \\ newline \n é")
        writer.add("n", Int64(-42))
        writer.add("b", true)
        writer.add("a", strings: ["x", "y\"z"])
        writer.add("empty", strings: [])
        writer.add("v", JSONValue.object(["k": .null]))
        #expect(try StrictJSON().parse(writer.serializedBytes) == .object([
            "s": .string("quote \" backslash \\ newline \n é"), "n": .number("-42"), "b": .bool(true),
            "a": .array([.string("x"), .string("y\"z")]), "empty": .array([]), "v": .object(["k": .null]),
        ]))
        // The text is whole after every member: reading it keeps the writer going, in order.
        var growing = JSONObjectWriter(capacity: 2)
        growing.add("first", Int64(1))
        let early = growing.serializedBytes
        growing.add("second", "2")
        #expect(early == Array(#"{"first":1}"#.utf8))
        #expect(growing.serializedBytes == Array(#"{"first":1,"second":"2"}"#.utf8))
    }

    @Test("JSON: refused input", arguments: [
        "", "{", "[1,]", "{\"a\":1,}", "{\"a\":1,\"a\":2}", "01", "1.", "-", "\"\\ud800\"", "\"\\udc00x\"", "\"\\x\"",
        "\"a\u{01}\"", "tru", "nul", "[1] [2]", "{a:1}", "'a'", "\"unterminated",
    ])
    func jsonRefused(_ text: String) {
        #expect(Self.malformed { _ = try StrictJSON().parse(Array(text.utf8)) }, "\(text)")
    }

    @Test("JSON: depth and size limits")
    func jsonLimits() {
        #expect(Self.malformed { _ = try StrictJSON(maxDepth: 32).parse(Array((String(repeating: "[", count: 40) + String(repeating: "]", count: 40)).utf8)) })
        #expect(Self.malformed { _ = try StrictJSON(maxLength: 10).parse(Array("\"0123456789\"".utf8)) })
        #expect(Self.malformed { _ = try StrictJSON().parse(Array(String(repeating: "9", count: 100).utf8)) })
    }

    @Test("JSON: UTF-8 in strings at every position, in the eight-byte scan and in its tail, valid and not")
    func jsonUTF8EveryPosition() throws {
        // Valid multi-byte characters (2, 3 and 4 bytes) and invalid sequences (a lone
        // continuation byte, a truncated lead, an overlong form, an encoded surrogate, 0xFF).
        let valid: [[UInt8]] = [Array("é".utf8), Array("€".utf8), Array("𝄞".utf8)]
        let invalid: [[UInt8]] = [[0x80], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff]]
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 40] {
            for position in 0...length {
                let before = Array(repeating: UInt8(ascii: "a"), count: position)
                let after = Array(repeating: UInt8(ascii: "b"), count: length - position)
                for piece in valid {
                    let text = before + piece + after
                    let parsed = try StrictJSON().parse([0x22] + text + [0x22])
                    #expect(parsed == .string(String(decoding: text, as: UTF8.self)), "valid \(piece) at \(position) of \(length)")
                }
                for piece in invalid {
                    #expect(Self.malformed { _ = try StrictJSON().parse([0x22] + before + piece + after + [0x22]) }, "invalid \(piece) at \(position) of \(length)")
                }
            }
            let ascii = Array(repeating: UInt8(ascii: "z"), count: length)
            #expect(try StrictJSON().parse([0x22] + ascii + [0x22]) == .string(String(repeating: "z", count: length)))
        }
    }

    @Test("base64url: padded and unpadded input, invalid characters and lengths")
    func base64url() {
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xfb, 0xff])
        #expect(Base64URL.decode("-_8=") == [0xfb, 0xff])
        #expect(Base64URL.decode("-_8==") == nil)
        #expect(Base64URL.decode("+/8") == nil)
        #expect(Base64URL.decode("A") == nil)
        #expect(Base64URL.decode("A=B=") == nil)
        #expect(Base64URL.decode("-_9", canonical: true) == nil)
        #expect(Base64URL.decode("-_9") == [0xfb, 0xff])
        for length in 0..<20 {
            let bytes = (0..<length).map { UInt8(($0 * 37) & 0xff) }
            #expect(Base64URL.decode(Base64URL.encode(bytes), canonical: true) == bytes)
            var out = Array("prefix.".utf8)
            Base64URL.append(bytes, to: &out)
            #expect(out == Array(("prefix." + Base64URL.encode(bytes)).utf8))
        }
    }

    @Test("base64url: the decoder agrees with a bit-at-a-time reference on 20,000 random strings, valid or not")
    func base64urlDifferential() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        func reference(_ text: [UInt8], canonical: Bool) -> [UInt8]? {
            var chars = text
            if chars.count % 4 == 0, let pad = chars.firstIndex(of: UInt8(ascii: "=")) {
                guard chars.count - pad <= 2, chars[pad...].allSatisfy({ $0 == UInt8(ascii: "=") }) else { return nil }
                chars.removeSubrange(pad...)
            }
            guard chars.count % 4 != 1 else { return nil }
            var out: [UInt8] = [], acc: UInt32 = 0, bits = 0
            for c in chars {
                guard let v = alphabet.firstIndex(of: c) else { return nil }
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
        let pool = alphabet + Array("=+/ .".utf8)
        var state: UInt64 = 42
        for round in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(state >> 59)
            var text: [UInt8] = []
            for k in 0..<length {
                let r = (state >> UInt64(k % 50)) &+ UInt64(k) &* 0x9e37
                // Mostly alphabet characters, sometimes padding or an invalid one.
                text.append(r % 16 == 0 ? pool[64 + Int(r / 16 % 5)] : alphabet[Int(r % 64)])
            }
            let canonical = round % 2 == 0
            #expect(Base64URL.decode(bytes: text, canonical: canonical) == reference(text, canonical: canonical), "\(String(decoding: text, as: UTF8.self))")
        }
    }

    @Test("authenticator data: every length below the minimum is refused")
    func authenticatorDataShort() {
        for n in 0..<37 {
            #expect(Self.malformed { _ = try AuthenticatorData([UInt8](repeating: 0, count: n)) })
        }
        #expect((try? AuthenticatorData([UInt8](repeating: 0, count: 37))) != nil)
    }

    @Test("authenticator data: attested credential data truncated at every byte is refused")
    func attestedTruncation() throws {
        var bytes = [UInt8](repeating: 0, count: 32) + [0x45, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 16) + [0, 2, 9, 9]
        bytes += [0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x41, 0x00, 0x22, 0x41, 0x00]
        let full = try AuthenticatorData(bytes)
        #expect(full.attestedCredential?.credentialID == [9, 9])
        for cut in 37..<bytes.count {
            #expect(Self.malformed { _ = try AuthenticatorData(Array(bytes.prefix(cut))) }, "cut at \(cut)")
        }
    }

    @Test("client data: a BOM is dropped, unknown members ignored, wrong types refused")
    func clientData() throws {
        let good = #"{"type":"webauthn.get","challenge":"AAAA","origin":"https://a","other":{"x":[1]}}"#
        let parsed = try CollectedClientData([0xef, 0xbb, 0xbf] + Array(good.utf8))
        #expect(parsed.origin == "https://a" && parsed.challenge == [0, 0, 0] && !parsed.crossOrigin)
        for bad in [
            #"{"type":1,"challenge":"AAAA","origin":"https://a"}"#,
            #"{"type":"webauthn.get","challenge":"AAAA","origin":"https://a","crossOrigin":"yes"}"#,
            #"{"type":"webauthn.get","challenge":"AAAA","origin":"https://a","topOrigin":5}"#,
            #"["webauthn.get"]"#,
        ] {
            #expect(Self.malformed { _ = try CollectedClientData(Array(bad.utf8)) }, "\(bad)")
        }
    }
}
