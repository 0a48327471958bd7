/// The languages Signet speaks, its hosted pages and its messages alike: BCP 47 primary tags
/// and each language's name for itself, English first (the default). One list, so that a page
/// never offers a language its mail cannot follow.
public enum Languages {
    public static let spoken: [(code: String, name: String)] = [("en", "English"), ("es", "Español"), ("fr", "Français"), ("de", "Deutsch")]
    public static let codes = spoken.map(\.code)
}
