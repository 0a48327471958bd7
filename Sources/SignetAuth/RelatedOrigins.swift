import Foundation
import SignetWebAuthn

/// Related origin requests (WebAuthn L3 §5.11): other sites whose pages may use this RP ID,
/// listed at `/.well-known/webauthn`. A browser honours at most five registrable origin labels
/// (§5.11.1), so Signet refuses a list with more.
public enum RelatedOrigins {
    /// Browsers' limit on distinct labels (WebAuthn L3 §5.11.1, "maxLabels": at least 5).
    public static let maxLabels = 5

    /// Public suffixes of two labels that are common enough to be known here, for when no
    /// Public Suffix List is installed; then any other suffix counts as one label.
    static let twoLabelSuffixes: Set<String> = ["co.uk", "org.uk", "ac.uk", "gov.uk", "com.au", "net.au", "org.au", "co.nz", "co.jp", "ne.jp", "or.jp",
                                                "com.br", "com.mx", "co.in", "co.za", "com.cn", "com.tw", "co.kr", "com.sg", "com.ar", "com.tr", "com.es"]

    /// The registrable origin label of `host` (§5.11.1): the first label of its registrable domain
    /// (`shop.example.co.uk` → `example`); `nil` for an address or a bare suffix. With `suffixes`
    /// the list decides what a suffix is; without it, ``twoLabelSuffixes`` and the last label.
    public static func label(host: String, suffixes: PublicSuffixList? = nil) -> String? {
        // At the dot's code point: a character that joins the next into one grapheme (U+0600)
        // would hide a dot from a Character split.
        let labels = host.lowercased()[...].split(atScalar: ".").map(String.init)
        guard labels.count >= 2, !labels.allSatisfy({ $0.allSatisfy(\.isNumber) }) else { return labels.count == 1 ? labels[0] : nil }
        if let suffixes {
            return suffixes.registrableDomain(of: host).flatMap { $0[...].split(atScalar: ".").first.map(String.init) }
        }
        let lastTwo = labels.suffix(2).joined(separator: ".")
        if twoLabelSuffixes.contains(lastTwo) { return labels.count >= 3 ? labels[labels.count - 3] : nil }
        return labels[labels.count - 2]
    }

    /// The problem with `origins`, if any: each must be `https://host[:port]` (or loopback http),
    /// and together they may name at most ``maxLabels`` labels.
    public static func problem(_ origins: [String], suffixes: PublicSuffixList? = nil) -> String? {
        var labels: Set<String> = []
        for origin in origins {
            guard let url = URLComponents(string: origin), let scheme = url.scheme, let host = url.host, !host.isEmpty, url.path.isEmpty, url.query == nil
            else { return "relying_party.related_origins: \"\(origin)\" must be scheme://host[:port]" }
            guard scheme == "https" || (scheme == "http" && ["localhost", "127.0.0.1"].contains(host)) else {
                return "relying_party.related_origins: \"\(origin)\" must use https"
            }
            guard let label = label(host: host, suffixes: suffixes) else { return "relying_party.related_origins: \"\(origin)\" has no registrable domain" }
            labels.insert(label)
        }
        return labels.count > maxLabels
            ? "relying_party.related_origins names \(labels.count) registrable labels (\(labels.sorted().joined(separator: ", "))); browsers accept at most \(maxLabels)"
            : nil
    }
}
