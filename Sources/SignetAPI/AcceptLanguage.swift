/// `Accept-Language` (RFC 9110 §12.5.4), as Signet reads it for its pages and its mail.
public enum AcceptLanguage {
    /// The language of `header` with the highest weight (`q`, 1 when absent; 0 means "not this")
    /// whose primary subtag is one of `supported`, the first of equal weights; `nil` when none.
    /// Bounded: the first 4 KiB and 16 items.
    public static func preferred(_ header: String?, among supported: [String]) -> String? {
        guard let header else { return nil }
        var best: (language: String, weight: Double)?
        for item in header.prefix(4096).split(separator: ",").prefix(16) {
            let parts = item.split(separator: ";")
            guard let tag = parts.first.map(trimmed)?.lowercased() else { continue }
            let primary = String(tag.prefix { $0 != "-" })
            var weight = 1.0
            for parameter in parts.dropFirst().map(trimmed) where parameter.hasPrefix("q=") {
                weight = Double(parameter.dropFirst(2)) ?? 0
            }
            guard supported.contains(primary), weight > 0, weight > (best?.weight ?? -1) else { continue }
            best = (primary, weight)
        }
        return best?.language
    }

    static func trimmed(_ text: Substring) -> Substring {
        var text = text.drop { $0 == " " || $0 == "\t" }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
