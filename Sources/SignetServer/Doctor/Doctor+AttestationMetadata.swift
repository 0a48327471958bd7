package import Foundation
import SignetAuth
import SignetCrypto
import SignetCurl
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
        guard let file = configuration.attestationMetadataFile else { return checks }
        if configuration.attestationMetadataURL != nil {
            let folder = (file as NSString).deletingLastPathComponent
            if !FileManager.default.isWritableFile(atPath: folder.isEmpty ? "." : folder) {
                checks.append(.fail("attestation_metadata.blob_file", "the servers fetch attestation_metadata.url into \(file), and cannot write in \(folder)",
                                    fix: "let the server's user write that folder (the BLOB is moved into place whole)"))
            }
        }
        return checks + metadataBLOBCheck(now: now)
    }

    /// `attestation_metadata.url`, fetched as a server fetches it: it must serve a BLOB that
    /// verifies under `root_file`, whose signing chain its revocation lists do not revoke, and
    /// one not older than the file's. The line says whether the chain named lists to check.
    package func metadataURLCheck(now: Date = Date()) -> [DoctorCheck] {
        guard let url = configuration.attestationMetadataURL, let rootFile = configuration.attestationMetadataRootFile else { return [] }
        var fetching = SignetApp.metadataFetchOptions
        (fetching.caFile, fetching.resolve, fetching.connectTo) = (options.caFile, options.resolve, options.connectTo)
        let served: MetadataBLOB
        do {
            served = try SignetApp.fetchMetadata(url: url, rootFile: rootFile, now: now, options: fetching).blob
        } catch {
            let detail = error.outcome.detail
            // The BLOB verified, but a list its chain names could not be had, or revokes it.
            if detail.contains("cannot be had") {
                return [.fail("attestation_metadata.url", detail,
                              fix: "let this machine and the servers reach the addresses the BLOB's signing chain names for its revocation lists (plain http, port 80, as a rule)")]
            }
            if detail.contains("(revocation)") {
                return [.fail("attestation_metadata.url", detail,
                              fix: "the Metadata Service's signing certificate is revoked: the servers keep the BLOB in force until the service signs with a new one; check root_file is the root it names")]
            }
            return [.fail("attestation_metadata.url", detail,
                          fix: "set attestation_metadata.url to the Metadata Service's address, https://mds3.fidoalliance.org/, and root_file to the root it names")]
        }
        let kept = (try? SignetApp.attestationMetadata(configuration, now: now)) ?? nil
        if let kept, served.number < kept.number {
            // MDS 3.0 §3.2: the servers ignore it, so no newer compromise report would arrive.
            return [.fail("attestation_metadata.url", "serves BLOB no. \(served.number), older than no. \(kept.number) in blob_file: a stale mirror, or one rolled back",
                          fix: "set attestation_metadata.url to the Metadata Service's own address, https://mds3.fidoalliance.org/")]
        }
        let file = kept.map { " (blob_file holds no. \($0.number))" } ?? ""
        let listed = served.signingChain.filter { !$0.crlDistributionPoints.isEmpty }.count
        let revocation = listed == 0 ? "its signing chain names no revocation list to check" : "its signing chain is not revoked (\(listed) revocation list(s) checked)"
        return [.pass("attestation_metadata.url", "serves BLOB no. \(served.number), due to be replaced by \(served.nextUpdate)\(file); \(revocation)")]
    }

    /// `attestation_metadata.blob_file` without a `url` (a BLOB an operator's job puts in
    /// place): the servers fetch nothing, so the revocation lists its signing chain names (MDS 3.0
    /// §3.2, RFC 5280 §4.2.1.13) are checked here, fetched as a server fetches them for a BLOB
    /// of its own. A revoked chain fails; lists this machine cannot reach are a note, as an
    /// offline deployment may have none to reach.
    package func metadataFileRevocationCheck(now: Date = Date()) -> [DoctorCheck] {
        let name = "attestation_metadata.revocation"
        // A file that does not read is the attestation_metadata check's finding.
        guard configuration.attestationMetadataURL == nil, let rootFile = configuration.attestationMetadataRootFile,
              let blob = (try? SignetApp.attestationMetadata(configuration, now: now)) ?? nil, let root = try? SignetApp.metadataRoot(rootFile)
        else { return [] }
        let listed = blob.signingChain.filter { !$0.crlDistributionPoints.isEmpty }.count
        guard listed > 0 else { return [.pass(name, "the signing chain of BLOB no. \(blob.number) in blob_file names no revocation list to check")] }
        var fetching = SignetApp.metadataFetchOptions
        (fetching.caFile, fetching.resolve, fetching.connectTo) = (options.caFile, options.resolve, options.connectTo)
        let lists: [CertificateRevocationList]
        do {
            lists = try SignetApp.revocationLists(blob.signingChain, options: fetching)
        } catch {
            return [.note(name, "not checked, and the servers do not check it either (no attestation_metadata.url): \(error.outcome.detail); "
                          + "run signet doctor where those addresses can be reached after each new BLOB")]
        }
        if let refusal = blob.revocationRefusal(anchor: root, now: now, crls: lists) {
            return [.fail(name, "BLOB no. \(blob.number) in blob_file: \(refusal.detail)",
                          fix: "the Metadata Service's signing certificate is revoked: fetch the BLOB again from https://mds3.fidoalliance.org/ (signed with its new one) into the file")]
        }
        return [.pass(name, "the signing chain of BLOB no. \(blob.number) in blob_file is not revoked (\(listed) revocation list(s) checked)")]
    }

    /// The BLOB as a start would read it now: its summary, or why it is refused or stale, and
    /// the defects in its entries that were passed over.
    func metadataBLOBCheck(now: Date) -> [DoctorCheck] {
        let fetch = configuration.attestationMetadataURL == nil
            ? "fetch the BLOB again from https://mds3.fidoalliance.org/ into the file (a monthly job): the servers read it within a minute"
            : "the servers fetch attestation_metadata.url daily: see their log's attestation metadata fetch lines, and the attestation_metadata.url check"
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
