import Foundation
import SignetServer
import Testing

/// An unknown setting stops the start and names the setting the operator most likely meant.
@Suite struct SettingSuggestionTests {
    static var settings: [String] { ConfigurationLoader.settings.map { $0.joined(separator: ".") } }

    @Test("a slip, a misplaced name, a name cut short and rp_ each get the setting meant; a name like none gets none")
    func suggestions() {
        let cases: [(String, String?)] = [
            ("relying_party.origin", "relying_party.origins"),     // one letter short
            ("user_verfication", "user_verification"),            // one letter dropped
            ("tokens.acess_token_ttl", "tokens.access_token_ttl"),
            ("tokens.acces_tokn_tll", "tokens.access_token_ttl"),    // three slips in a long name
            ("origins", "relying_party.origins"),                  // in the wrong section
            ("branding.logo", "branding.logo_file"),               // the start of the name
            ("email.password", "email.password_file"),
            ("rp_id", "relying_party.id"),                         // WebAuthn's RP, as other servers spell it
            ("rp_origins", "relying_party.origins"),
            ("colour", nil),
            ("issuerx_y_z", nil),                                  // three edits on a short name: too far
            ("zzzzzzzz", nil),
            ("", nil),
        ]
        for (unknown, meant) in cases {
            #expect(ConfigurationLoader.suggestion(for: unknown, among: Self.settings) == meant, "\(unknown)")
        }
        // A name longer than the bound is not compared at all (its cost grows with its length).
        let long = "tokens.access_token_ttl" + String(repeating: "x", count: ConfigurationLoader.longestSuggested)
        #expect(ConfigurationLoader.suggestion(for: long, among: Self.settings) == nil)
    }

    @Test("edit distance counts insertions, deletions and substitutions")
    func distance() {
        for (a, b, d) in [("", "", 0), ("", "abc", 3), ("abc", "", 3), ("kitten", "sitting", 3), ("flaw", "lawn", 2), ("same", "same", 0)] {
            #expect(ConfigurationLoader.editDistance(Array(a.utf8), Array(b.utf8)) == d, "\(a) \(b)")
            #expect(ConfigurationLoader.editDistance(Array(b.utf8), Array(a.utf8)) == d, "\(b) \(a)")
        }
    }

    @Test("the start-up error names the unknown setting and, when there is one, the setting meant; in a client too; the first in order of several")
    func startUpErrors() throws {
        let cases: [(String, String)] = [
            (#"{"relying_party": {"id": "example.com", "origin": ["https://example.com"]}}"#,
             #"unknown setting "relying_party.origin" (did you mean "relying_party.origins"?)"#),
            (#"{"colour": "blue"}"#, #"unknown setting "colour""#),
            (#"{"zz": 1, "colour": "blue", "mm": 2}"#, #"unknown setting "colour""#),
            (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x", "redirect_uri": ["https://a.example.com/cb"]}]}"#,
             #"clients[0]: unknown setting "redirect_uri" (did you mean "redirect_uris"?)"#),
        ]
        for (json, message) in cases {
            #expect { _ = try ConfigurationLoader.load(file: try ConfigurationTests.write(json), environment: [:]) } throws: {
                "\($0)".hasSuffix(message) && !"\($0)".hasSuffix("?)?)")
            }
        }
    }
}
