import Foundation
import SignetWebAuthn

/// The Public Suffix List (publicsuffix.org, "Formal Algorithm"): the suffixes under which
/// anyone may register a name (`com`, `co.uk`, `github.io`). A host's registrable domain is its
/// public suffix and one label more. Browsers take an RP ID only if it has one (HTML's "is a
/// registrable domain suffix of or is equal to", WebAuthn L3 §5.1.3 step 7 and §5.1.4.1),
/// and related origins count the first labels of registrable domains (§5.11.1).
///
/// Signet ships no copy: it reads the operator's (`relying_party.public_suffix_list`, by default
/// the one Debian's `publicsuffix` package installs). Rules are matched as the list writes them,
/// so a host in A-labels (`xn--…`) misses a rule the list gives only in Unicode, and is taken
/// to have a registrable domain: a check that can only be lenient, never wrong in refusing.
public struct PublicSuffixList: Sendable {
    /// Where Debian's `publicsuffix` package puts the list.
    public static let debianPath = "/usr/share/publicsuffix/public_suffix_list.dat"
    /// The largest list read; the real one is about 250 KiB.
    public static let maxBytes = 4 << 20
    /// The longest rule kept: a domain name's own limit (RFC 1035 §2.3.4).
    static let maxRuleBytes = 253

    /// Plain rules (`co.uk`).
    var rules: Set<String> = []
    /// Wildcard rules by what follows `*.` (`*.ck` → `ck`).
    var wildcards: Set<String> = []
    /// Exception rules without their `!` (`!www.ck` → `www.ck`).
    var exceptions: Set<String> = []

    /// How many rules the list holds.
    public var count: Int { rules.count + wildcards.count + exceptions.count }

    /// Reads the list's text: a rule a line, read up to its first whitespace; `//` comments and
    /// blank lines are skipped, and so is a rule no host could match (an empty label, a `*`
    /// other than the whole leftmost label, or longer than a domain name). `nil` when no rule
    /// is left, or the text is over ``maxBytes``.
    public init?(text: some StringProtocol) {
        guard text.utf8.count <= Self.maxBytes else { return nil }
        // At bytes, not Characters: a mark after a space would join it into one Character.
        // A loop of indices: the list's 12,000 lines read in milliseconds, even unoptimised.
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
            var first = start
            while first < end, bytes[first] == 0x20 || bytes[first] == 0x09 { first += 1 }
            var last = first
            while last < end, bytes[last] != 0x20, bytes[last] != 0x09 { last += 1 }
            insert(bytes[first..<last])
            start = end + 1
        }
        if count == 0 { return nil }
    }

    /// One line's rule, unless it is a comment or no host could match it.
    private mutating func insert(_ token: ArraySlice<UInt8>) {
        guard !token.isEmpty, token.count <= Self.maxRuleBytes, !token.starts(with: "//".utf8) else { return }
        let exception = token.first == UInt8(ascii: "!")
        let wildcard = !exception && token.starts(with: "*.".utf8)
        let body = token.dropFirst(exception ? 1 : wildcard ? 2 : 0)
        var labels = 1
        var length = 0
        for byte in body {
            switch byte {
            case UInt8(ascii: "."):
                guard length > 0 else { return }
                labels += 1
                length = 0
            case UInt8(ascii: "*"), UInt8(ascii: "!"): return
            default: length += 1
            }
        }
        // An exception names a host one label under a wildcard's suffix: it needs two labels.
        guard length > 0, !exception || labels >= 2 else { return }
        var rule = String(decoding: body.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
        if body.contains(where: { $0 >= 0x80 }) { rule = rule.lowercased() }
        if exception {
            exceptions.insert(rule)
        } else if wildcard {
            wildcards.insert(rule)
        } else {
            rules.insert(rule)
        }
    }

    /// A host's public suffix, and whether a rule of the list names it (`false`: no rule
    /// matched, so it is the host's last label, by the list's implicit rule `*`).
    public func publicSuffix(of host: String) -> (suffix: String, listed: Bool) {
        let labels = Self.labels(host)
        let found = suffixLength(labels)
        return (labels.suffix(found.count).joined(separator: "."), found.listed)
    }

    /// Whether the list itself names `host` as a public suffix: browsers refuse such an RP ID.
    /// A single label no rule names (`localhost`) is not counted.
    public func lists(_ host: String) -> Bool {
        let labels = Self.labels(host)
        let found = suffixLength(labels)
        return found.listed && found.count == labels.count
    }

    /// The host's registrable domain: its public suffix and one label more; `nil` when the host
    /// is a public suffix itself.
    public func registrableDomain(of host: String) -> String? {
        let labels = Self.labels(host)
        let count = suffixLength(labels).count
        return labels.count > count ? labels.suffix(count + 1).joined(separator: ".") : nil
    }

    /// How many of the last `labels` the public suffix is, and whether a rule named it. An
    /// exception rule prevails over every other, and gives its own labels but the leftmost; of
    /// the rest, the rule with the most labels; with none, the last label (the rule `*`).
    func suffixLength(_ labels: [String]) -> (count: Int, listed: Bool) {
        guard !labels.isEmpty else { return (0, false) }
        let suffixes = labels.indices.map { labels[$0...].joined(separator: ".") }
        // An exception has two labels at least, so what it leaves is one at least.
        if let i = suffixes.firstIndex(where: exceptions.contains) { return (labels.count - i - 1, true) }
        for i in suffixes.indices where rules.contains(suffixes[i]) || (i + 1 < suffixes.count && wildcards.contains(suffixes[i + 1])) {
            return (labels.count - i, true)
        }
        return (1, false)
    }

    /// A host's labels in lower case, without a final dot. Split at the dot's code point: a
    /// character that joins the next into one grapheme would hide a dot from a `Character` split.
    static func labels(_ host: String) -> [String] {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty else { return [] }
        return name[...].split(atScalar: ".", maxSplits: .max).map(String.init)
    }
}
