import Foundation
import SignetAuth
import Testing

/// The Public Suffix List's algorithm (publicsuffix.org, "Formal Algorithm"), on a list of a
/// few rules of each kind, and on the list Debian installs.
@Suite struct PublicSuffixListTests {
    /// One rule of each kind, lines the list's format skips, and a rule with words after it.
    static let text = """
        // a comment, then a blank line and one of spaces

           \t
        com
        co.uk
        *.ck
        !www.ck
        GitHub.IO
        net trailing words are not part of the rule
        bad..rule
        .leading
        trailing.
        *x.com
        foo.*.bar
        !single
        !
        *.
        \(String(repeating: "a", count: 254))
        """

    let list = PublicSuffixList(text: Self.text)!

    @Test("each kind of rule read, the lines the format skips skipped: comments, blanks, empty labels, a * inside a label, a lone exception, a rule longer than a domain name")
    func parsing() {
        #expect(list.count == 6)
        #expect(list.lists("net") && list.lists("github.io"))
        #expect(!list.lists("bad.rule") && !list.lists("x.com") && !list.lists("leading") && !list.lists("single"))
        #expect(PublicSuffixList(text: "") == nil)
        #expect(PublicSuffixList(text: "// only a comment\n\n") == nil)
        #expect(PublicSuffixList(text: "a..b\n*.\n!x") == nil)
        #expect(PublicSuffixList(text: "com\r\nnet\r\n")?.count == 2)
        #expect(PublicSuffixList(text: String(repeating: "com\n", count: PublicSuffixList.maxBytes / 4 + 1)) == nil)
    }

    @Test("a public suffix: the longest rule, a wildcard's one label more, an exception before any other, and the last label when no rule matches")
    func suffixes() {
        let cases: [(host: String, suffix: String, listed: Bool, domain: String?)] = [
            ("example.com", "com", true, "example.com"),
            ("www.shop.example.co.uk", "co.uk", true, "example.co.uk"),
            ("co.uk", "co.uk", true, nil),
            ("uk", "uk", false, nil),
            ("a.b.ck", "b.ck", true, "a.b.ck"),
            ("b.ck", "b.ck", true, nil),
            ("www.ck", "ck", true, "www.ck"),
            ("x.www.ck", "ck", true, "www.ck"),
            ("me.github.io", "github.io", true, "me.github.io"),
            ("signet.test", "test", false, "signet.test"),
            ("localhost", "localhost", false, nil),
            ("Shop.Example.COM.", "com", true, "example.com"),
            ("", "", false, nil),
        ]
        for c in cases {
            let found = list.publicSuffix(of: c.host)
            #expect(found.suffix == c.suffix && found.listed == c.listed, "\(c.host)")
            #expect(list.registrableDomain(of: c.host) == c.domain, "\(c.host)")
        }
    }

    @Test("what the list names is refused, and only that: a single label no rule names (localhost) and a name under a suffix are not")
    func listed() {
        for host in ["com", "co.uk", "github.io", "GITHUB.io.", "b.ck"] { #expect(list.lists(host), "\(host)") }
        // ck is a suffix only by the implicit rule, as a top-level domain: the load refuses it as that.
        for host in ["localhost", "example.com", "me.github.io", "www.ck", "signet.test", "uk", "ck"] { #expect(!list.lists(host), "\(host)") }
    }

    @Test("related origins count the first label of each registrable domain: with the list, six sites under github.io are six labels, too many; without it they would be one")
    func relatedOriginLabels() {
        let origins = ["one", "two", "three", "four", "five", "six"].map { "https://\($0).github.io" }
        #expect(RelatedOrigins.problem(origins) == nil)
        #expect(RelatedOrigins.problem(origins, suffixes: list)?.contains("names 6 registrable labels (five, four, one, six, three, two)") == true)
        #expect(RelatedOrigins.label(host: "shop.a.b.ck", suffixes: list) == "a")
        #expect(RelatedOrigins.label(host: "shop.a.b.ck") == "b")
        #expect(RelatedOrigins.problem(["https://github.io"], suffixes: list) == "relying_party.related_origins: \"https://github.io\" has no registrable domain")
    }

    @Test("the list Debian's publicsuffix package installs (scripts/bootstrap.sh installs it): private suffixes such as herokuapp.com are public suffixes too")
    func debianList() throws {
        let text = try String(contentsOfFile: PublicSuffixList.debianPath, encoding: .utf8)
        let list = try #require(PublicSuffixList(text: text))
        #expect(list.count > 5_000)
        for host in ["com", "co.uk", "herokuapp.com", "github.io", "pvt.k12.ma.us"] { #expect(list.lists(host), "\(host)") }
        #expect(list.registrableDomain(of: "myapp.herokuapp.com") == "myapp.herokuapp.com")
        #expect(list.registrableDomain(of: "login.example.co.uk") == "example.co.uk")
        #expect(!list.lists("localhost") && !list.lists("example.com"))
    }
}
