import Foundation

extension Ceremonies {
    /// A scalar that no stored name or address may hold: a control character (Unicode's `Cc`:
    /// NUL, which PostgreSQL's text cannot hold and SQLite's C strings cut at, line breaks, tabs,
    /// DEL and C1), a line or paragraph separator, or a bidirectional embedding, override or
    /// isolate (U+202A–U+202E, U+2066–U+2069: Unicode UAX #9 §2), which would turn the text shown
    /// after a name around, in the passkey sheet, the account page or a mail.
    public static func isUnsafeInText(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Text from a request header that Signet shows later (a device sign-in's `User-Agent`, on the
    /// phone asked to approve it): each scalar ``isUnsafeInText(_:)`` refuses becomes U+FFFD, so
    /// the text cannot reorder what is shown around it. HTTP already refuses the C0 controls.
    static func neutralized(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafeInText) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isUnsafeInText($0) ? "\u{FFFD}" : $0 }))
    }

    /// A name a person gave (an account's, a passkey's, a device key's), white space around it
    /// trimmed; `nil` for none or only white space. More than `limit` characters, or a scalar
    /// ``isUnsafeInText(_:)`` refuses, is a malformed request that names `member`.
    static func displayName(_ text: String?, member: String, limit: Int) throws -> String? {
        guard let name = text?.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty else { return nil }
        guard name.count <= limit else { throw AuthError.malformed("\(member) is longer than \(limit) characters") }
        guard !name.unicodeScalars.contains(where: isUnsafeInText) else {
            throw AuthError.malformed("\(member) holds a control or bidirectional-override character")
        }
        return name
    }
}
