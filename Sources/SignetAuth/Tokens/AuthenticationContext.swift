/// Authentication context classes (OIDC Core §2 `acr`, §3.1.2.1 `acr_values`; RFC 9470 §4):
/// what a sign-in proved about how it was made, for a client or a resource server to ask for.
public enum AuthenticationContext {
    /// `phr`, phishing-resistant (OpenID Connect EAP ACR Values 1.0 §2): a passkey's assertion,
    /// which the browser or the platform binds to the origin, so a look-alike page cannot relay it.
    public static let phishingResistant = "phr"

    /// The classes Signet can reach and `/authorize` acts on (discovery's `acr_values_supported`).
    /// `phrh` is not among them: nothing in a sign-in proves its key is held by hardware.
    public static let supported = [phishingResistant]

    /// The class a sign-in with methods `amr` (RFC 8176) reached: `phr` for a passkey assertion
    /// made where the sign-in is (`pop`). None for an email or recovery code (`otp`), and none
    /// for a sign-in approved on another device (`mca`, RFC 8628), which a phishing page can
    /// start and have the user approve.
    public static func reached(amr: [String]) -> String? {
        amr.contains("pop") && !amr.contains("mca") ? phishingResistant : nil
    }

    /// The supported classes named in an `acr_values` parameter (OIDC Core §3.1.2.1: space-
    /// separated, in order of preference), each matched by its bytes; the others are ignored,
    /// since `acr_values` asks and does not demand. `nil` when none is supported.
    public static func requested(_ text: String?) -> [String]? {
        guard let text else { return nil }
        let named = text.utf8.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        let known = named.filter { value in supported.contains { $0.utf8.elementsEqual(value.utf8) } }
        return known.isEmpty ? nil : known
    }
}
