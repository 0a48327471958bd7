public import SignetAPI

/// The hosted pages' text in each language they speak (DESIGN.md, "The web": English and
/// Spanish; French and German since). Every key exists in each; a test checks it.
public enum Strings {
    /// The languages the pages speak (``Languages``), English first (the default).
    public static let languages = Languages.codes

    /// Each language's own name for itself, for the pages' language links.
    public static let names = Dictionary(uniqueKeysWithValues: Languages.spoken.map { ($0.code, $0.name) })

    /// The first of `uiLocales` (OIDC Core §3.1.2.1, space-separated BCP 47 tags), then of
    /// `Accept-Language` (RFC 9110 §12.5.4, in order of weight), that the pages speak; else English.
    public static func language(uiLocales: String?, acceptLanguage: String?) -> String {
        for tag in (uiLocales ?? "").split(separator: " ") {
            let primary = tag.split(separator: "-").first.map { $0.lowercased() } ?? ""
            if languages.contains(primary) { return primary }
        }
        return AcceptLanguage.preferred(acceptLanguage, among: languages) ?? "en"
    }

    /// The text in `language`, or English.
    public static func table(_ language: String) -> [String: String] {
        switch language {
        case "es": es
        case "fr": fr
        case "de": de
        default: en
        }
    }

    /// What the pages say, in `language`, about a refusal a person meets on them; `nil` for a
    /// reason they do not word, and in English for one whose own words are a person's (the
    /// error's own words go there).
    public static func refusal(_ reason: Reason, language: String) -> String? {
        switch language {
        case "es": esRefusals[reason]
        case "fr": frRefusals[reason]
        case "de": deRefusals[reason]
        default: enRefusals[reason]
        }
    }
}
