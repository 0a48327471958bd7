import Foundation
import SignetCrypto
import SignetWebAuthn

/// Which authenticator models may register and sign in, and what they are called: the AAGUID
/// lists of the configuration, and the FIDO Metadata Service's BLOB when one is configured
/// (FIDO MDS 3.0 §3.1.4 statuses; WebAuthn L3 §7.1 steps 23–24 for the roots).
extension Ceremonies {
    /// Whether registrations must carry an attestation that chains to a trusted root: with
    /// `trust_anchors` or with attestation metadata.
    var requiresAttestation: Bool { !rp.trustAnchors.isEmpty || metadata != nil }

    /// The roots an attestation of model `aaguid` may chain to: every configured trust anchor,
    /// and the roots the metadata lists for that model alone.
    func attestationAnchors(for aaguid: String) -> [Certificate] {
        rp.trustAnchors + (metadata?.entries[aaguid]?.roots ?? [])
    }

    /// Why model `aaguid` may not be used for `use`, or `nil` when it may: the AAGUID lists
    /// (DESIGN.md, `allowed_aaguids` / `denied_aaguids`), then a compromise the metadata reports
    /// in force now.
    func authenticatorRefusal(_ aaguid: String, for use: MetadataBLOB.Use) -> String? {
        if !configuration.allowsAuthenticator(aaguid) {
            return "AAGUID \(aaguid) (\(authenticatorName(aaguid) ?? "unnamed")) is not allowed by allowed_aaguids or denied_aaguids"
        }
        if let status = metadata?.entries[aaguid]?.refusal(for: use, at: clock()) {
            return "the FIDO metadata reports AAGUID \(aaguid) (\(authenticatorName(aaguid) ?? "unnamed")) as \(status)"
        }
        return nil
    }

    /// Whether a passkey of model `aaguid` may sign in (the `allowed` of passkey lists).
    func allowsAuthenticator(_ aaguid: String) -> Bool { authenticatorRefusal(aaguid, for: .signIn) == nil }

    /// The model's name: the metadata's `description` (its maker's, and the more precise),
    /// else a well-known one.
    func authenticatorName(_ aaguid: String) -> String? {
        metadata?.entries[aaguid]?.description ?? KnownAuthenticators.names[aaguid]
    }
}
