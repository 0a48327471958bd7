import Foundation
import SignetAuth
import SignetWebAuthn

extension Doctor {
    /// `attestation_metadata`: the BLOB verifies under its root now (FIDO MDS 3.0 §3.2), and is
    /// not past its `nextUpdate`, after which its compromise reports may be out of date.
    func attestationMetadataChecks(now: Date = Date()) -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        // Browsers replace the attestation with `none` when the options ask for none (WebAuthn
        // L3 §5.4.7), so a deployment that requires one would refuse every registration.
        if configuration.attestation == "none" && (!configuration.trustAnchorFiles.isEmpty || configuration.attestationMetadataFile != nil) {
            checks.append(.fail("attestation", "registrations must chain to a trusted root, and their options ask for no attestation: browsers send none, so every one is refused",
                                fix: "set attestation to direct (or enterprise)"))
        }
        guard configuration.attestationMetadataFile != nil else { return checks }
        return checks + metadataBLOBCheck(now: now)
    }

    /// The BLOB as a start would read it now: its summary, or why it is refused or stale, and
    /// the defects in its entries that were passed over.
    func metadataBLOBCheck(now: Date) -> [DoctorCheck] {
        let fetch = "fetch the BLOB again from https://mds3.fidoalliance.org/ into the file (a monthly job): the servers read it within a minute"
        let blob: MetadataBLOB
        do {
            guard let loaded = try SignetApp.attestationMetadata(configuration, now: now) else { return [] }
            blob = loaded
        } catch {
            return [.fail("attestation_metadata", "\(error)", fix: "\(fetch); check root_file is the root the BLOB is signed under")]
        }
        let compromised = blob.entries.values.filter { $0.refusal(for: .registration, at: now) != nil }.count
        let summary = "BLOB no. \(blob.number): \(blob.entries.count) FIDO2 models, \(compromised) of them refused for a reported compromise"
        guard now < blob.nextUpdateDate else {
            return [.fail("attestation_metadata", "\(summary); it was due to be replaced by \(blob.nextUpdate), so newer compromise reports may be missing", fix: fetch)]
        }
        let passedOver = blob.defects.isEmpty ? [] : [DoctorCheck.note("attestation_metadata.defects",
            "\(blob.defects.count) defect(s) in the BLOB's entries, each passed over on the safe side: " + blob.defects.prefix(5).joined(separator: "; ")
                + (blob.defects.count > 5 ? "; …" : ""))]
        return [.pass("attestation_metadata", "\(summary); next update due by \(blob.nextUpdate)")] + passedOver
    }
}
