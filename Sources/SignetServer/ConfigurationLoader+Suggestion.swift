/// The setting an operator most likely meant by one Signet does not know, for the start-up
/// error: `unknown setting "relying_party.origin" (did you mean "relying_party.origins"?)`.
extension ConfigurationLoader {
    /// Names longer than this get no suggestion: the comparison grows with the product of the
    /// lengths, and a file's key may be as long as the file.
    package static let longestSuggested = 64

    /// The candidate `unknown` most likely misspells or misplaces (names dotted, `tokens.access_token_ttl`),
    /// else `nil`. In order: `rp_` read as `relying_party.`; the same name in another section (`origins` for
    /// `relying_party.origins`); a name it begins (`branding.logo` for `branding.logo_file`);
    /// the nearest by edit distance, if a typing slip away (1 edit up to 5 characters, 2 up to
    /// 12, 3 beyond). Ties go to the first in `candidates`' order.
    package static func suggestion(for unknown: String, among candidates: [String]) -> String? {
        guard !unknown.isEmpty, unknown.utf8.count <= longestSuggested else { return nil }
        // WebAuthn's "RP" spelled as other servers' settings do (`rp_id`, `rp_origins`).
        if unknown.hasPrefix("rp_"), let spelled = suggestion(for: "relying_party." + unknown.dropFirst(3), among: candidates) { return spelled }
        let name = lastComponent(unknown)
        if let moved = candidates.first(where: { $0 != unknown && lastComponent($0) == name }) { return moved }
        if let longer = candidates.first(where: { $0.hasPrefix(unknown + "_") }) { return longer }
        let budget = unknown.count <= 5 ? 1 : unknown.count <= 12 ? 2 : 3
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate.utf8.count <= longestSuggested {
            let distance = editDistance(Array(unknown.utf8), Array(candidate.utf8))
            if distance <= budget, distance < best?.distance ?? .max { best = (candidate, distance) }
        }
        return best?.name
    }

    /// `unknown setting "NAME"`, with the suggestion when there is one.
    static func unknownSetting(_ unknown: String, among candidates: [String]) -> String {
        "unknown setting \"\(unknown)\"" + (suggestion(for: unknown, among: candidates).map { " (did you mean \"\($0)\"?)" } ?? "")
    }

    static func lastComponent(_ name: String) -> Substring {
        name.split(separator: ".", omittingEmptySubsequences: false).last ?? Substring(name)
    }

    /// Levenshtein distance: insertions, deletions and substitutions of bytes.
    package static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
