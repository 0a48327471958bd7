/// Authentication context classes (OIDC Core §2 `acr`, §3.1.2.1 `acr_values`; RFC 9470 §4):
/// what a sign-in proved about how it was made, for a client or a resource server to ask for.
public enum AuthenticationContext {
    /// `phr`, phishing-resistant (OpenID Connect EAP ACR Values 1.0 §2): a passkey's assertion,
    /// which the browser or the platform binds to the origin, so a look-alike page cannot relay it.
    public static let phishingResistant = "phr"
    /// `phrh`, phishing-resistant and hardware-protected (EAP ACR Values §2): a passkey whose
    /// key cannot leave hardware the operator trusts (``CredentialRow/isHardwareBound``).
    public static let hardwareProtected = "phrh"

    /// The classes Signet can reach and `/authorize` acts on (discovery's `acr_values_supported`).
    public static let supported = [phishingResistant, hardwareProtected]

    /// The class a sign-in with methods `amr` (RFC 8176) reached: `phrh` for a passkey assertion
    /// made where the sign-in is (`pop`) by a hardware-bound key (`hwk`), `phr` for any other
    /// passkey's. None for an email or recovery code (`otp`), and none for a sign-in approved on
    /// another device (`mca`, RFC 8628), which a phishing page can start and have the user approve.
    public static func reached(amr: [String]) -> String? {
        guard amr.contains("pop"), !amr.contains("mca") else { return nil }
        return amr.contains("hwk") ? hardwareProtected : phishingResistant
    }

    /// Whether a sign-in of class `reached` answers a request for any of `requested`: `phrh`
    /// answers `phr` too, since it is that and more.
    public static func meets(_ reached: String?, anyOf requested: [String]) -> Bool {
        guard let reached else { return false }
        return requested.contains(reached) || (reached == hardwareProtected && requested.contains(phishingResistant))
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

extension Ceremonies {
    /// A passkey sign-in's methods (RFC 8176): `pop`, `hwk` for a hardware-bound key, and
    /// `user` when the authenticator verified the user.
    static func passkeyMethods(userVerified: Bool, hardwareBound: Bool) -> [String] {
        switch (hardwareBound, userVerified) {
        case (false, true): ["pop", "user"]
        case (false, false): ["pop"]
        case (true, true): ["pop", "hwk", "user"]
        case (true, false): ["pop", "hwk"]
        }
    }
}
