public import Foundation

/// A plain-text message as Signet sends it (RFC 5322, MIME RFC 2045–2047): UTF-8 text in
/// quoted-printable, an encoded subject, CRLF line ends. Built once, when it is queued.
public struct MailMessage: Sendable, Equatable {
    public var from: String
    public var fromName: String
    public var to: String
    public var subject: String
    public var body: String
    /// The language of `subject` and `body`, one of ``Notice/languages``, as `Content-Language` says.
    public var language: String
    /// What the message is (`otp`, `passkey_added`, ...), in `X-Signet-Kind`.
    public var kind: String

    public init(from: String, fromName: String, to: String, subject: String, body: String, language: String, kind: String) {
        self.from = from
        self.fromName = fromName
        self.to = to
        self.subject = subject
        self.body = body
        self.language = language
        self.kind = kind
    }

    /// The message bytes, with `Date` from `date` and `Message-ID` `<id@domain>`.
    public func rendered(date: Date, id: String) -> [UInt8] {
        let domain = from.split(separator: "@").last.map(String.init) ?? "localhost"
        let headers = [
            "From: \(Self.displayName(fromName))\(Self.isPlain(fromName) ? " " : "\r\n ")<\(from)>",
            "To: <\(Self.asciiAddress(to))>",
            "Subject: \(Self.encodedWord(subject))",
            "Date: \(Self.date(date))",
            "Message-ID: <\(id)@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=UTF-8",
            "Content-Transfer-Encoding: quoted-printable",
            "Content-Language: \(language)",
            "Auto-Submitted: auto-generated",
            "X-Signet-Kind: \(kind)",
        ]
        return Array((headers.joined(separator: "\r\n") + "\r\n\r\n" + Self.quotedPrintable(body)).utf8)
    }

    /// `address` as a relay without SMTPUTF8 (RFC 6531) takes it: an internationalized domain
    /// in its A-label form (IDNA, RFC 5891: `bücher.example` is `xn--bcher-kva.example`), by
    /// Foundation's UTS #46 processing. The account keeps the address as typed; only the
    /// envelope and the `To` header carry this form. A local part beyond ASCII is left as it
    /// is, for a relay that speaks SMTPUTF8.
    ///
    /// Only a result that is a host name (letters, digits, `-` and `.`) is used: Foundation's
    /// `host` decodes percent escapes after the conversion, so `ό%0d%0a` would come back as
    /// `xn--\r\n-22e`, a line break in the envelope and the header. Anything else keeps the
    /// address as it was typed, which the relay refuses rather than misreads.
    public static func asciiAddress(_ address: String) -> String {
        // By code point: a combining mark after the `@` makes one Character of the two.
        let scalars = address.unicodeScalars
        guard let at = scalars.lastIndex(of: "@") else { return address }
        let domain = String(scalars[scalars.index(after: at)...])
        guard !domain.utf8.allSatisfy({ $0 < 0x80 }) else { return address }
        var components = URLComponents()
        components.scheme = "smtp"
        components.host = domain
        guard let host = components.url?.host(percentEncoded: true), !host.isEmpty, host.utf8.allSatisfy(isHostNameByte) else { return address }
        return String(scalars[..<at]) + "@" + host
    }

    /// A byte of an ASCII host name (RFC 1123 §2.1: letters, digits and hyphens, labels joined by dots).
    static func isHostNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
    }

    /// RFC 5322 §3.3 date, in UTC.
    static func date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }

    /// The text as is when it is printable ASCII (and holds no `=?`), else RFC 2047
    /// `=?UTF-8?B?...?=` words, one a line, the lines folded (RFC 5322 §2.2.3); a reader joins
    /// the words back without the space between them (RFC 2047 §6.2). A word holds at most 42
    /// bytes of text, cut between Unicode scalars (§5: never inside a character's bytes): 68
    /// characters, under §2's 75, and with `Subject: ` before it a line of 77, under RFC 5322
    /// §2.1.1's 78. Line breaks in the text are dropped: no header is ever ended or started from
    /// it.
    package static func encodedWord(_ text: String) -> String {
        // By scalar: a CRLF pair is one Character, which neither "\r" nor "\n" equals.
        let clean = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "\r" && $0 != "\n" }))
        if isPlain(clean) { return clean }
        var words: [String] = []
        var chunk: [UInt8] = []
        for scalar in clean.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            if chunk.count + bytes.count > 42 {
                words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=")
                chunk = []
            }
            chunk += bytes
        }
        words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=")
        return words.joined(separator: "\r\n ")
    }

    /// Printable ASCII that a reader would not take for an encoded word.
    static func isPlain(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7f } && !text.contains("=?")
    }

    /// A display name for `From` (RFC 5322 §3.4): printable ASCII as is, or as a quoted string
    /// when it holds a character the address syntax gives a meaning to (`Example, Inc.` would
    /// otherwise read as two addresses); anything else as ``encodedWord(_:)``'s words.
    package static func displayName(_ name: String) -> String {
        let word = encodedWord(name)
        guard isPlain(word), word.contains(where: { "()<>[]:;@\\,.\"".contains($0) }) else { return word }
        return "\"" + word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Quoted-printable (RFC 2045 §6.7): lines of at most 76 characters with soft breaks, CRLF
    /// line ends, every byte outside printable ASCII (and `=`) as `=XX`.
    package static func quotedPrintable(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 3 / 2 + 16)
        var length = 0
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            // A line ends at LF or CRLF; a lone CR is a byte like any other.
            if byte == 10 || (byte == 13 && i + 1 < bytes.count && bytes[i + 1] == 10) {
                out += [13, 10]
                length = 0
                i += byte == 13 ? 2 : 1
                continue
            }
            let lineEnds = i + 1 == bytes.count || bytes[i + 1] == 10 || (bytes[i + 1] == 13 && i + 2 < bytes.count && bytes[i + 2] == 10)
            let literal = (byte >= 33 && byte <= 126 && byte != 61) || (byte == 32 && !lineEnds)
            let width = literal ? 1 : 3
            if length + width > 75 {
                out += Array("=\r\n".utf8)
                length = 0
            }
            if literal { out.append(byte) } else { out += [61, hex[Int(byte >> 4)], hex[Int(byte & 15)]] }
            length += width
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
