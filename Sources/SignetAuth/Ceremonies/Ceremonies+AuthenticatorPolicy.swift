import Foundation
import Synchronization
import SignetCrypto
public import SignetWebAuthn

/// Which authenticator models may register and sign in, and what they are called: the AAGUID
/// lists of the configuration, and the FIDO Metadata Service's BLOB when one is configured
/// (FIDO MDS 3.0 §3.1.4 statuses; WebAuthn L3 §7.1 steps 23–24 for the roots).
extension Ceremonies {
    /// The BLOB in force (`nil` without `attestation_metadata`).
    package var metadata: MetadataBLOB? { metadataConfigured ? metadataState.withLock { $0.blob } : nil }

    /// The SHA-256 of every root a passkey's attestation may have chained to for it to count
    /// as hardware-bound: the trust anchors', and those the BLOB in force lists.
    var trustedRoots: Set<[UInt8]> {
        metadataConfigured ? anchorRoots.union(metadataState.withLock { $0.roots.values.joined() }) : anchorRoots
    }

    /// Whether the root a passkey of model `aaguid` chained to (its SHA-256) is still trusted
    /// for it: a trust anchor, or a root the BLOB in force lists for that model.
    func trustsRoot(_ root: [UInt8], of aaguid: String) -> Bool {
        anchorRoots.contains(root) || (metadataConfigured && metadataState.withLock { $0.roots[aaguid]?.contains(root) == true })
    }

    static func rootHashes(_ blob: MetadataBLOB?) -> [String: Set<[UInt8]>] {
        (blob?.entries ?? [:]).mapValues { Set($0.roots.map { Digest.sha256.hash($0.der) }) }
    }

    /// Puts a newer BLOB in force (a server reads the file again when it changes, FIDO MDS 3.0
    /// §3.2): the next registration and sign-in are judged by it. The passkeys held for sign-in
    /// are read again, so their hardware mark follows the roots it lists.
    public func replaceMetadata(_ blob: MetadataBLOB) {
        precondition(metadataConfigured, "a BLOB replaces only a BLOB the server started with")
        let roots = Self.rootHashes(blob)
        metadataState.withLock { $0 = (blob, roots) }
        credentialCache.removeAll()
        metrics.attestationMetadata(number: blob.number, nextUpdate: blob.nextUpdateDate, loaded: true)
    }

    /// Whether registrations must carry an attestation that chains to a trusted root: with
    /// `trust_anchors` or with attestation metadata.
    var requiresAttestation: Bool { !rp.trustAnchors.isEmpty || metadataConfigured }

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

extension Ceremonies {
    /// How many passkeys one transaction of ``tellRefusedPasskeyOwners(model:)`` marks: the
    /// writes of sign-ins wait for it.
    static let refusalNoticeBatch = 200

    /// Tells the owners of the passkeys in use of model `model` (an AAGUID), whose sign-ins the
    /// BLOB in force refuses (FIDO MDS 3.0 §3.1.4), that they no longer sign in and what to do:
    /// one notice an account, naming its passkeys of the model and the model, queued with the
    /// marks that keep any instance from telling them again
    /// (``Store/tellRefusedPasskeys(model:at:batch:writes:)``). Returns how many accounts were
    /// told now; none when mail cannot go anywhere, or the BLOB does not refuse the model.
    public func tellRefusedPasskeyOwners(model: String) throws(StoreError) -> Int {
        guard configuration.email.canSend, let entry = metadata?.entries[model], entry.refusal(for: .signIn, at: clock()) != nil else { return 0 }
        // The BLOB's name for the model, on one line, or its AAGUID.
        var described = String.UnicodeScalarView()
        described.append(contentsOf: (entry.description ?? "").unicodeScalars.filter { $0.properties.generalCategory != .control }.prefix(200))
        let name = described.isEmpty ? model : String(described)
        var told = 0
        _ = try store.tellRefusedPasskeys(model: model, at: nowMillis, batch: Self.refusalNoticeBatch) { passkeys in
            let owners = Dictionary(grouping: passkeys, by: \.owner.id).values.sorted { $0[0].owner.id < $1[0].owner.id }
            told += owners.count
            return owners.flatMap { held in
                notice(.passkeyModelRefused(count: held.count, names: held.compactMap(\.passkey.name), model: name), to: held[0].owner)
            }
        }
        return told
    }
}
