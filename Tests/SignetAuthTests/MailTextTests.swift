import Foundation
@testable import SignetAuth
import Testing

/// The writers that put a message's text on the wire: quoted-printable bodies (RFC 2045 §6.7)
/// and RFC 2047 header words.
@Suite struct MailTextTests {
    /// Decodes quoted-printable as a mail reader does, to check what the writer produced.
    static func decode(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == 61, i + 2 < bytes.count, bytes[i + 1] == 13, bytes[i + 2] == 10 { i += 3; continue }
            if bytes[i] == 61, i + 2 < bytes.count, let value = UInt8(String(decoding: bytes[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
                out.append(value); i += 3; continue
            }
            out.append(bytes[i]); i += 1
        }
        return out
    }

    @Test("an internationalized domain goes to the relay in its A-label form; ASCII and the local part stay as they are")
    func asciiAddresses() throws {
        #expect(MailMessage.asciiAddress("ana@bücher.example") == "ana@xn--bcher-kva.example")
        #expect(MailMessage.asciiAddress("ana@correo.españa.example") == "ana@correo.xn--espaa-rta.example")
        #expect(MailMessage.asciiAddress("ana@example.com") == "ana@example.com")
        #expect(MailMessage.asciiAddress("ñandú@example.com") == "ñandú@example.com")
        #expect(MailMessage.asciiAddress("no-at-sign") == "no-at-sign")
        let header = String(decoding: MailMessage(from: "a@b.example", fromName: "B", to: "ana@bücher.example", subject: "s", body: "b",
                                                  language: "en", kind: "otp").rendered(date: Date(timeIntervalSince1970: 0), id: "x"), as: UTF8.self)
        #expect(header.contains("\r\nTo: <ana@xn--bcher-kva.example>\r\n"))
        // One account per visible address: the decomposed spelling is the composed one.
        #expect(try Ceremonies.emailAddress("Ana@Bu\u{0308}cher.example", member: "email") == "ana@bücher.example")
    }

    @Test("a domain's percent escapes never become characters in the relay's form; an address whose domain is not a host name is refused")
    func escapedDomains() throws {
        // Foundation decodes the escapes of the A-label it makes: `xn--\r\n-22e` for `ό%0d%0a`.
        for address in ["a@ό%0d%0a.example", "a@ό%40evil.example", "a@ό%3e.example", "a@ό%2e"] {
            let relayed = MailMessage.asciiAddress(address)
            #expect(relayed == address, "\(address) became \(relayed.debugDescription)")
            #expect(!relayed.utf8.contains { $0 == 13 || $0 == 10 } && relayed.utf8.filter { $0 == UInt8(ascii: "@") }.count == 1)
        }
        for refused in ["a@ό%0d%0a.example", "a@b%40c.example", "a@b..example", "a@.example", "a@example.", "a@[127.0.0.1]", "a@exa_mple.com",
                        "a@ex!ample.com", "a@\u{0301}@b.example", "a@b.example@", "@b.example", "a@"] {
            #expect(throws: AuthError.self, "\(refused)") { try Ceremonies.emailAddress(refused, member: "email") }
        }
        for accepted in ["ana@bücher.example", "a.b+c@sub-domain.example.com", "ñandú@correo.españa.example", "x@localhost"] {
            #expect(try Ceremonies.emailAddress(accepted, member: "email") == accepted)
        }
    }

    @Test func plainTextPassesThrough() {
        #expect(MailMessage.quotedPrintable("Your code is 123456.") == "Your code is 123456.")
    }

    @Test func lineEndsBecomeCRLFAndTrailingSpacesAreEncoded() {
        #expect(MailMessage.quotedPrintable("a \nb\r\nc ") == "a=20\r\nb\r\nc=20")
        #expect(MailMessage.quotedPrintable("x=y\tz") == "x=3Dy=09z")
    }

    @Test func utf8IsEncodedBytewiseAndRoundTrips() {
        let text = "Tu código es 123456. ¿No fuiste tú?\nIgnóralo."
        let encoded = MailMessage.quotedPrintable(text)
        #expect(encoded.utf8.allSatisfy { $0 < 0x80 })
        #expect(encoded.contains("c=C3=B3digo"))
        #expect(Self.decode(encoded) == Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8))
    }

    @Test func longLinesGetSoftBreaksWithinSeventySixCharacters() {
        let text = String(repeating: "é", count: 60) + String(repeating: "a", count: 200)
        let encoded = MailMessage.quotedPrintable(text)
        let lines = encoded.components(separatedBy: "\r\n")
        #expect(lines.count > 3)
        #expect(lines.allSatisfy { $0.utf8.count <= 76 })
        // Every line but the last ends in a soft break, never inside an escape.
        #expect(lines.dropLast().allSatisfy { $0.hasSuffix("=") && !$0.dropLast().suffix(2).contains("=") })
        #expect(Self.decode(encoded) == Array(text.utf8))
    }

    @Test func headerWordsNeverCarryLineBreaks() {
        #expect(MailMessage.encodedWord("Sign in") == "Sign in")
        #expect(MailMessage.encodedWord("Inicia sesión\r\nBcc: x@example.com") == "=?UTF-8?B?" + Data("Inicia sesiónBcc: x@example.com".utf8).base64EncodedString() + "?=")
        // Text that looks like an encoded word is encoded, so a reader shows it as it is.
        #expect(MailMessage.encodedWord("=?UTF-8?B?SGk=?=") == "=?UTF-8?B?" + Data("=?UTF-8?B?SGk=?=".utf8).base64EncodedString() + "?=")
    }

    @Test("a long subject is several encoded words of at most 68 characters, folded, cut between characters, that join back to the text")
    func longHeaderWords() {
        let subject = "Connexion par e-mail désactivée sur Société Générale d’Authentification — 🔐 ✓"
        let folded = MailMessage.encodedWord(subject)
        let lines = folded.components(separatedBy: "\r\n")
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix(" ") })
        let words = lines.map { String($0.trimmingPrefix(" ")) }
        #expect(words.allSatisfy { $0.hasPrefix("=?UTF-8?B?") && $0.hasSuffix("?=") && $0.utf8.count <= 68 }, "\(words)")
        // Each word is whole UTF-8 by itself (RFC 2047 §5), and together they are the subject.
        let texts = words.map { word in Data(base64Encoded: String(word.dropFirst(10).dropLast(2))).flatMap { String(data: $0, encoding: .utf8) } }
        #expect(texts.allSatisfy { $0 != nil } && texts.compactMap { $0 }.joined() == subject)
    }

    @Test("a From display name: as is, quoted when it holds address syntax, encoded when it is not ASCII")
    func displayNames() {
        #expect(MailMessage.displayName("Signet") == "Signet")
        #expect(MailMessage.displayName("Example, Inc.") == "\"Example, Inc.\"")
        #expect(MailMessage.displayName(#"Say "hi" \ <me@x>"#) == #""Say \"hi\" \\ <me@x>""#)
        #expect(MailMessage.displayName("Société") == "=?UTF-8?B?" + Data("Société".utf8).base64EncodedString() + "?=")
        #expect(MailMessage.displayName("A\r\nBcc: x@example.com") == "\"ABcc: x@example.com\"")
    }
}
