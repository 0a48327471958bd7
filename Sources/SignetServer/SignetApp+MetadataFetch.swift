package import Foundation
import SignetAuth
import SignetCrypto
import SignetCurl
import SignetHTTP
import Synchronization
import SignetWebAuthn

/// What one fetch of `attestation_metadata.url` came to.
package enum MetadataFetchOutcome: Equatable, Sendable {
    /// A newer BLOB that verifies, written to `blob_file` and put in force.
    case loaded(Int64)
    /// The BLOB in force again (the service publishes about once a month).
    case unchanged(Int64)
    /// An answer that is not a BLOB to put in force: it does not verify, or is older.
    case refused(String)
    /// No answer to judge: the network, the server's status, or the file could not be written.
    case failed(String)

    /// The label of `signet_attestation_metadata_fetches_total`.
    var label: String {
        switch self {
        case .loaded: "loaded"
        case .unchanged: "unchanged"
        case .refused: "refused"
        case .failed: "failed"
        }
    }
}

/// When the next fetch is due: a day after one that got an answer to judge, an hour after
/// one that did not or was refused.
struct MetadataFetchSchedule: Sendable {
    static let interval: TimeInterval = 86_400
    static let retry: TimeInterval = 3_600
    var due: Date

    mutating func record(_ outcome: MetadataFetchOutcome, at now: Date) {
        switch outcome {
        case .loaded, .unchanged: due = now.addingTimeInterval(Self.interval)
        case .refused, .failed: due = now.addingTimeInterval(Self.retry)
        }
    }
}

extension SignetApp {
    /// How the BLOB is fetched: TLS checked against the system's CAs, up to three redirects
    /// to https (the BLOB proves itself by its signature, not by where it was found), at most
    /// the size a BLOB may have, a minute at most.
    static let metadataFetchOptions = HTTPSOptions(timeout: 60, maxBytes: MetadataBLOB.maxLength, userAgent: "signet", maxRedirects: 3)

    /// The BLOB at `url`, verified under the root of `rootFile` at `now`, as the bytes served
    /// and as read. Throws `.failed` when there is nothing to judge, `.refused` when what was
    /// served is not a BLOB signed under the root.
    static func fetchMetadata(url address: String, rootFile: String, now: Date, options: HTTPSOptions = metadataFetchOptions) throws(MetadataFetchFailure) -> (bytes: [UInt8], blob: MetadataBLOB) {
        let url = shownURL(address)
        let response: HTTPSResponse
        do {
            response = try HTTPS.get(address, options: options)
        } catch {
            throw MetadataFetchFailure(.failed("\(url): \(error)"))
        }
        guard response.status == 200 else { throw MetadataFetchFailure(.failed("\(url) answered \(response.status)")) }
        guard !response.truncated else { throw MetadataFetchFailure(.refused("\(url) served more than \(MetadataBLOB.maxLength >> 20) MiB")) }
        let root: Certificate
        let blob: MetadataBLOB
        do {
            root = try metadataRoot(rootFile)
            blob = try MetadataBLOB(jws: response.body, anchor: root, now: now)
        } catch let refusal as MetadataBLOB.Refusal {
            throw MetadataFetchFailure(.refused("what \(url) served is refused (\(refusal.part)): \(refusal.detail)"))
        } catch {
            throw MetadataFetchFailure(.failed("\(error)"))
        }
        // MDS 3.0 §3.2: a BLOB whose signing chain is revoked is not taken; one whose lists
        // cannot be had is not either, until they can (the BLOB in force stays meanwhile).
        let lists = try revocationLists(blob.signingChain, options: options)
        if let refusal = blob.revocationRefusal(anchor: root, now: now, crls: lists) {
            throw MetadataFetchFailure(.refused("what \(url) served is refused (\(refusal.part)): \(refusal.detail)"))
        }
        return (response.body, blob)
    }

    /// The revocation lists the certificates of a BLOB's signing chain name (RFC 5280
    /// §4.2.1.13), fetched as the BLOB is (with the fetch's CA file and address overrides): for
    /// each certificate that names distribution points, the first of its first two that serves a
    /// list that reads (so a chain of two takes two minutes at most when nothing answers).
    /// Throws `.failed`, naming each point tried, when one cannot be had.
    static func revocationLists(_ chain: [Certificate], options: HTTPSOptions) throws(MetadataFetchFailure) -> [CertificateRevocationList] {
        var fetching = options
        (fetching.maxBytes, fetching.timeout) = (CertificateRevocationList.maxLength, 30)
        var lists: [CertificateRevocationList] = []
        for (index, certificate) in chain.enumerated() {
            let points = certificate.crlDistributionPoints
            guard !points.isEmpty else { continue }
            var tried: [String] = []
            var found: CertificateRevocationList?
            for point in points.prefix(2) where found == nil {
                let shown = shownURL(point)
                do {
                    let answer = try HTTPS.get(point, options: fetching)
                    if answer.status != 200 {
                        tried.append("\(shown) answered \(answer.status)")
                    } else if answer.truncated {
                        tried.append("\(shown) served more than \(CertificateRevocationList.maxLength >> 20) MiB")
                    } else {
                        found = try CertificateRevocationList(der: answer.body)
                    }
                } catch {
                    tried.append("\(shown): \(error)")
                }
            }
            guard let found else {
                throw MetadataFetchFailure(.failed("the revocation list of the BLOB's signing certificate x5c[\(index)] cannot be had: " + tried.joined(separator: "; ")))
            }
            lists.append(found)
        }
        return lists
    }

    /// `url` as logs show it: without a user, password or query, where a mirror's credentials
    /// would be.
    package static func shownURL(_ url: String) -> String {
        guard var parts = URLComponents(string: url) else { return "attestation_metadata.url" }
        (parts.user, parts.password, parts.query, parts.fragment) = (nil, nil, nil, nil)
        return parts.string ?? "attestation_metadata.url"
    }

    /// The BLOB a start puts in force, read once: `attestation_metadata.blob_file`'s; or, with
    /// `attestation_metadata.url`, when that file does not exist yet (a first start, a new
    /// machine), holds no BLOB that verifies now (a damaged file, a signing certificate expired
    /// while the server was down) or one older than this deployment has seen (MDS 3.0 §3.1.7),
    /// one fetched, verified and written there (`fetched`). A start stops rather than judge
    /// registrations without a BLOB, or with one that predates a compromise report already
    /// seen. `nil` when none is configured.
    static func startMetadata(_ configuration: ServerConfiguration, store: any Store, now: Date) throws -> (blob: MetadataBLOB?, fetched: Bool) {
        guard let file = configuration.attestationMetadataFile, let rootFile = configuration.attestationMetadataRootFile else { return (nil, false) }
        guard let url = configuration.attestationMetadataURL else {
            let blob = try attestationMetadata(blobFile: file, rootFile: rootFile, now: now)
            if let highest = try higherNumberSeen(than: blob, rootFile: rootFile, store: store, now: now) {
                throw ConfigurationError("attestation_metadata.blob_file \(file) is refused: \(olderThanSeen(blob, highest)); "
                                         + "put the current BLOB there (from https://mds3.fidoalliance.org/), or set attestation_metadata.url")
            }
            return (blob, false)
        }
        let kept: String
        if !FileManager.default.fileExists(atPath: file) {
            kept = "does not exist yet"
        } else {
            do {
                let blob = try attestationMetadata(blobFile: file, rootFile: rootFile, now: now)
                guard let highest = try higherNumberSeen(than: blob, rootFile: rootFile, store: store, now: now) else { return (blob, false) }
                kept = "is refused (\(olderThanSeen(blob, highest)))"
            } catch {
                kept = "is refused (\(error))"
            }
        }
        do throws(MetadataFetchFailure) {
            let (bytes, blob) = try fetchMetadata(url: url, rootFile: rootFile, now: now)
            try refuseIfOlderThanSeen(blob, url: url, rootFile: rootFile, store: store, now: now)
            try writeMetadata(bytes, to: file)
            return (blob, true)
        } catch {
            throw ConfigurationError("attestation_metadata.blob_file \(file) \(kept), and fetching a new one failed: \(error.outcome.detail)")
        }
    }

    /// Throws `.refused` when this deployment has seen a BLOB numbered above `blob`, served by
    /// `url` (``higherNumberSeen(than:rootFile:store:now:)``), `.failed` when the database could
    /// not say.
    static func refuseIfOlderThanSeen(_ blob: MetadataBLOB, url: String, rootFile: String, store: any Store, now: Date) throws(MetadataFetchFailure) {
        let highest: Int64?
        do {
            highest = try higherNumberSeen(than: blob, rootFile: rootFile, store: store, now: now)
        } catch {
            throw MetadataFetchFailure(.failed("BLOB no. \(blob.number) not compared with the numbers seen: \(error)"))
        }
        if let highest { throw MetadataFetchFailure(.refused("\(shownURL(url)) served \(olderThanSeen(blob, highest))")) }
    }

    /// `bytes` moved into `file` whole: a server reading the file meanwhile sees the old BLOB
    /// or the new one, never part of one.
    static func writeMetadata(_ bytes: [UInt8], to file: String) throws(MetadataFetchFailure) {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: file), options: .atomic)
        } catch {
            throw MetadataFetchFailure(.failed("cannot write attestation_metadata.blob_file \(file): \(error.localizedDescription)"))
        }
    }

    /// Fetches `attestation_metadata.url` now when a fetch is due (``MetadataFetchSchedule``);
    /// `nil` when none is, or no URL is set. A server looks once a minute.
    @discardableResult
    package func fetchAttestationMetadataIfDue(now: Date) -> MetadataFetchOutcome? {
        guard configuration.attestationMetadataURL != nil, metadataFetchSchedule.withLock({ now >= $0.due }) else { return nil }
        return fetchAttestationMetadata(now: now)
    }

    /// Fetches `attestation_metadata.url` (MDS 3.0 §3.2): a BLOB that verifies, with a serial
    /// number above the one in force, is written to `blob_file` (so a restart without the
    /// network still has it) and put in force (``install(_:from:now:)``); the same number again changes nothing; anything else leaves the file and the
    /// BLOB in force as they are, and is logged. Each outcome is counted.
    @discardableResult
    package func fetchAttestationMetadata(now: Date) -> MetadataFetchOutcome? {
        guard let url = configuration.attestationMetadataURL, let file = configuration.attestationMetadataFile,
              let rootFile = configuration.attestationMetadataRootFile else { return nil }
        let outcome: MetadataFetchOutcome
        do throws(MetadataFetchFailure) {
            let (bytes, blob) = try Self.fetchMetadata(url: url, rootFile: rootFile, now: now)
            let current = service.ceremonies.metadata?.number ?? 0
            if blob.number == current {
                outcome = .unchanged(current)
            } else if blob.number < current {
                // MDS 3.0 §3.2: a BLOB whose serial number is not above the one in force is ignored.
                outcome = .refused("\(Self.shownURL(url)) served BLOB no. \(blob.number), older than no. \(current), in force")
            } else {
                // Before the file is written: an older BLOB must not replace a newer one there.
                try Self.refuseIfOlderThanSeen(blob, url: url, rootFile: rootFile, store: store, now: now)
                try Self.writeMetadata(bytes, to: file)
                // Put in force as read, not read again: the minute's look at the file sees it as seen.
                // Judged above against the BLOB in force and the numbers seen, so not judged again.
                metadataStamp.withLock { $0 = MetadataFileStamp(file: file) }
                install(blob, from: file, now: now)
                outcome = .loaded(blob.number)
            }
        } catch {
            outcome = error.outcome
        }
        metadataFetchSchedule.withLock { $0.record(outcome, at: now) }
        service.ceremonies.metrics.attestationMetadataFetch(outcome.label)
        switch outcome {
        case .loaded(let number):
            log.write([("msg", .string("attestation metadata fetched")), ("url", .string(Self.shownURL(url))), ("number", .int(Int(number)))])
        case .unchanged:
            break
        case .refused(let why), .failed(let why):
            log.write([("msg", .string("attestation metadata fetch \(outcome.label); the BLOB in force stays")), ("url", .string(Self.shownURL(url))), ("error", .string(why))])
        }
        return outcome
    }
}

/// A fetch that did not put a BLOB in force, as its outcome.
package struct MetadataFetchFailure: Error {
    let outcome: MetadataFetchOutcome
    init(_ outcome: MetadataFetchOutcome) { self.outcome = outcome }
}

extension MetadataFetchOutcome {
    /// What happened, for a log line or a start refused.
    var detail: String {
        switch self {
        case .loaded(let number): "BLOB no. \(number) loaded"
        case .unchanged(let number): "BLOB no. \(number) unchanged"
        case .refused(let why), .failed(let why): why
        }
    }
}
