/// One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1): a scheme and its
/// parameters, as a resource server asks for a token (RFC 6750 §3), a DPoP proof (RFC 9449 §7.1)
/// or a stronger sign-in (RFC 9470 §3).
public struct AuthenticationChallenge: Sendable, Equatable {
    /// The scheme, lower-cased (`bearer`, `dpop`): schemes are case-insensitive.
    public var scheme: String
    /// Parameter names lower-cased (they are case-insensitive), values unquoted.
    public var parameters: [String: String]

    public init(scheme: String, parameters: [String: String] = [:]) {
        self.scheme = scheme
        self.parameters = parameters
    }

    /// `error` (RFC 6750 §3.1), e.g. `insufficient_user_authentication`.
    public var error: String? { parameters["error"] }
    /// RFC 9470 §3 `acr_values`: the classes that would do, in order of preference.
    public var acrValues: [String] { (parameters["acr_values"] ?? "").split(separator: " ").map(String.init) }
    /// RFC 9470 §3 `max_age`: how old, in seconds, the sign-in may be.
    public var maxAge: Int? { parameters["max_age"].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil } }

    /// The header's challenges, in order. Bounded: at most 8 KiB of header, 16 challenges and 32
    /// parameters each; a header that does not parse gives the challenges before the fault.
    /// Token68 credentials (`Basic xyz==`) are skipped; a repeated parameter keeps its first value.
    public static func parse(_ header: String) -> [AuthenticationChallenge] {
        var reader = Reader(bytes: Array(header.utf8.prefix(8192)))
        var challenges: [AuthenticationChallenge] = []
        while challenges.count < 16 {
            reader.skip { $0 == 0x20 || $0 == 0x09 || $0 == 0x2C }
            guard let scheme = reader.token() else { break }
            var challenge = AuthenticationChallenge(scheme: scheme.lowercased())
            // Parameters: `name = value` pairs, separated by commas, until a token that is not
            // followed by `=` (the next challenge's scheme).
            while challenge.parameters.count < 32 {
                let mark = reader.index
                reader.skip { $0 == 0x20 || $0 == 0x09 || $0 == 0x2C }
                guard let name = reader.token() else { reader.index = mark; break }
                reader.skip { $0 == 0x20 || $0 == 0x09 }
                guard reader.take(0x3D) else { reader.index = mark; break }  // "=": else a new scheme (or token68)
                // A token68's padding (`xyz==`) or an empty value: nothing to keep.
                if reader.peek == 0x3D || reader.atEnd || reader.peek == 0x2C {
                    reader.skip { $0 == 0x3D }
                    continue
                }
                reader.skip { $0 == 0x20 || $0 == 0x09 }
                guard let value = reader.peek == 0x22 ? reader.quoted() : reader.token() else { return challenges + [challenge] }
                let key = name.lowercased()
                if challenge.parameters[key] == nil { challenge.parameters[key] = value }
            }
            challenges.append(challenge)
        }
        return challenges
    }

    /// A byte cursor over the header.
    struct Reader {
        let bytes: [UInt8]
        var index = 0
        var atEnd: Bool { index >= bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[index] }

        mutating func skip(_ test: (UInt8) -> Bool) { while let b = peek, test(b) { index += 1 } }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            index += 1
            return true
        }

        /// RFC 9110 §5.6.2 `token` (tchar+), and the `/`, `+` and `=` of a token68.
        mutating func token() -> String? {
            let start = index
            while let b = peek, Self.isTokenByte(b) { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        /// RFC 9110 §5.6.4 `quoted-string`, with its backslash escapes; nil when unterminated.
        mutating func quoted() -> String? {
            guard take(0x22) else { return nil }
            var out: [UInt8] = []
            while let b = peek {
                index += 1
                if b == 0x22 { return String(decoding: out, as: UTF8.self) }
                if b == 0x5C, let next = peek { out.append(next); index += 1; continue }
                out.append(b)
            }
            return nil
        }

        static func isTokenByte(_ b: UInt8) -> Bool {
            switch b {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
            case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"),
                 UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"),
                 UInt8(ascii: "~"), UInt8(ascii: "/"): true
            default: false
            }
        }
    }
}
