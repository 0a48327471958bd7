public import Foundation
public import SignetAuth
import SignetHTTP
import Synchronization
import SignetCrypto
public import SignetWebAuthn

/// What tells a BLOB file's new version from the one read: a fetch that moves a new file into
/// place changes its inode, one that rewrites it its size or time.
struct MetadataFileStamp: Equatable, Sendable {
    let inode: UInt64?
    let size: UInt64?
    let modified: Date?

    init(file: String) {
        let attributes = try? FileManager.default.attributesOfItem(atPath: file)
        inode = (attributes?[.systemFileNumber] as? NSNumber)?.uint64Value
        size = (attributes?[.size] as? NSNumber)?.uint64Value
        modified = attributes?[.modificationDate] as? Date
    }
}

extension SignetApp {
    /// The FIDO Metadata Service's BLOB of `attestation_metadata`, verified under its root at
    /// `now` (MDS 3.0 §3.2); `nil` when none is configured. A BLOB that does not verify stops
    /// the start: registrations would otherwise be judged without it.
    public static func attestationMetadata(_ configuration: ServerConfiguration, now: Date) throws -> MetadataBLOB? {
        guard let file = configuration.attestationMetadataFile, let rootFile = configuration.attestationMetadataRootFile else { return nil }
        return try attestationMetadata(blobFile: file, rootFile: rootFile, now: now)
    }

    /// The BLOB in `file`, verified under the one certificate of `rootFile` at `now`.
    public static func attestationMetadata(blobFile file: String, rootFile: String, now: Date) throws -> MetadataBLOB {
        let root = try metadataRoot(rootFile)
        let data = try ConfigurationError.read(file, for: "attestation_metadata.blob_file", limit: MetadataBLOB.maxLength)
        do {
            return try MetadataBLOB(jws: data, anchor: root, now: now)
        } catch {
            throw ConfigurationError("attestation_metadata.blob_file \(file) is refused (\(error.part)): \(error.detail)")
        }
    }

    /// Logs each model whose sign-ins `blob` refuses (and `previous` did not) that passkeys in
    /// use are of, with how many and on how many accounts, and how to find those accounts: they
    /// are locked out of signing in with them, and need another way in. Their owners are told so
    /// by mail, once each across every instance and restart
    /// (``Ceremonies/tellRefusedPasskeyOwners(model:)``; `told`: how many accounts now). What this
    /// reads and queues cannot stop the BLOB: a failure is logged.
    package func reportRefusedPasskeys(_ blob: MetadataBLOB, previous: MetadataBLOB?, now: Date) {
        let refused = blob.entries.compactMap { model, entry -> (model: String, status: String)? in
            guard let status = entry.refusal(for: .signIn, at: now), previous?.entries[model]?.refusal(for: .signIn, at: now) == nil else { return nil }
            return (model, status)
        }.sorted { $0.model < $1.model }
        guard !refused.isEmpty else { return }
        do {
            let counts = try store.livePasskeys(models: refused.map(\.model))
            for (model, status) in refused {
                guard let count = counts[model] else { continue }
                var told = 0
                do {
                    told = try service.ceremonies.tellRefusedPasskeyOwners(model: model)
                } catch {
                    log.write([("msg", .string("attestation metadata: owners of refused passkeys not told")), ("aaguid", .string(model)),
                               ("error", .string(error.code.rawValue))])
                }
                log.write([("msg", .string("attestation metadata refuses passkeys in use")), ("aaguid", .string(model)),
                           ("model", .string(String((blob.entries[model]?.description ?? "").prefix(200)))), ("status", .string(status)),
                           ("passkeys", .int(count.passkeys)), ("accounts", .int(count.accounts)), ("told", .int(told)),
                           ("find", .string("GET /api/v2/users?q=passkey_model:\(model)"))])
            }
        } catch {
            log.write([("msg", .string("attestation metadata: passkeys in use not counted")), ("error", .string(error.code.rawValue))])
        }
    }

    /// The higher serial number than `blob`'s of a BLOB that verified under `rootFile`'s root
    /// at any instance of this deployment, or at this one before a restart; `nil` when `blob`'s
    /// is the highest, which is then kept as such (``Store/raiseMetadataNumber(root:number:at:)``).
    /// FIDO MDS 3.0 §3.1.7: a BLOB numbered below the last one seen is ignored, so that a
    /// rolled-back file or mirror cannot bring back a model whose compromise was reported since.
    static func higherNumberSeen(than blob: MetadataBLOB, rootFile: String, store: any Store, now: Date) throws -> Int64? {
        let root = Digest.sha256.hash(try metadataRoot(rootFile).der)
        let highest = try store.raiseMetadataNumber(root: root, number: blob.number, at: Int64(now.timeIntervalSince1970 * 1000))
        return highest > blob.number ? highest : nil
    }

    /// Why `blob` is ignored when ``higherNumberSeen(than:rootFile:store:now:)`` names `highest`.
    static func olderThanSeen(_ blob: MetadataBLOB, _ highest: Int64) -> String {
        "BLOB no. \(blob.number) is older than no. \(highest), which this deployment has seen already (MDS 3.0 §3.1.7: an older BLOB is ignored)"
    }

    /// Puts `blob`, read from `file`, in force (``install(_:from:now:)``); throws when its serial
    /// number is not above the one in force, or is below one this deployment has seen (MDS 3.0
    /// §3.2, §3.1.7: such a BLOB is ignored).
    func putInForce(_ blob: MetadataBLOB, from file: String, now: Date) throws {
        if let current = service.ceremonies.metadata?.number, blob.number <= current {
            throw ConfigurationError("BLOB no. \(blob.number) is not newer than no. \(current), in force")
        }
        if let rootFile = configuration.attestationMetadataRootFile, let highest = try Self.higherNumberSeen(than: blob, rootFile: rootFile, store: store, now: now) {
            throw ConfigurationError(Self.olderThanSeen(blob, highest))
        }
        install(blob, from: file, now: now)
    }

    /// Puts `blob`, from `file` and judged newer than the one in force and the numbers seen, in
    /// force (``Ceremonies/replaceMetadata(_:)``), and logs it and the passkeys in use it newly
    /// locks out.
    func install(_ blob: MetadataBLOB, from file: String, now: Date) {
        let previous = service.ceremonies.metadata
        service.ceremonies.replaceMetadata(blob)
        log.write([("msg", .string("attestation metadata loaded")), ("file", .string(file)), ("number", .int(Int(blob.number))),
                   ("models", .int(blob.entries.count)), ("next_update", .string(blob.nextUpdate))])
        reportRefusedPasskeys(blob, previous: previous, now: now)
    }

    /// The one certificate of `attestation_metadata.root_file`.
    static func metadataRoot(_ rootFile: String) throws -> Certificate {
        let pem = try ConfigurationError.readText(rootFile, for: "attestation_metadata.root_file", limit: ConfigurationLoader.maxFileLength)
        let roots = try Certificate.parsePEM(pem)
        guard roots.count == 1, let root = roots.first else {
            throw ConfigurationError("attestation_metadata.root_file \(rootFile) must hold one certificate, not \(roots.count)")
        }
        return root
    }

    /// Reads `attestation_metadata.blob_file` again when it changed since it was last read (the
    /// monthly fetch of MDS 3.0 §3.2): a BLOB that verifies, with a serial number above the one
    /// in force, is put in force
    /// (``Ceremonies/replaceMetadata(_:)``) and logged; one that does not is logged and counted,
    /// and the one in force stays. `nil` when nothing changed or none is configured. A server
    /// looks once a minute.
    @discardableResult
    package func reloadAttestationMetadataIfChanged(now: Date) -> Bool? {
        guard let file = configuration.attestationMetadataFile, let root = configuration.attestationMetadataRootFile else { return nil }
        let stamp = MetadataFileStamp(file: file)
        let changed = metadataStamp.withLock { seen in
            defer { seen = stamp }
            return seen != stamp
        }
        guard changed else { return nil }
        do {
            try putInForce(try Self.attestationMetadata(blobFile: file, rootFile: root, now: now), from: file, now: now)
            return true
        } catch {
            // The database did not say whether a newer BLOB was seen: look again in a minute.
            if error is StoreError { metadataStamp.withLock { $0 = nil } }
            service.ceremonies.metrics.attestationMetadataRefused()
            log.write([("msg", .string("attestation metadata refused; the BLOB in force stays")), ("file", .string(file)), ("error", .string("\(error)"))])
            return false
        }
    }
}
