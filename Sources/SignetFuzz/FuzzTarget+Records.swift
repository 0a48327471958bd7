import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetStore
import SignetWebAuthn

/// The fuzz checks of signed and stored records: client assertions, imported accounts, sealed
/// backups, revocation lists and the Metadata Service BLOB.
extension FuzzTarget {
    static func checkClientAssertion(_ body: [UInt8]) {
        let lines = body.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)
        let jwt = lines.count > 1 ? String(decoding: lines[1], as: UTF8.self) : ""
        _ = ClientAssertion.issuer(of: jwt)
        guard let keys = try? JWKSet.keys(text: String(decoding: lines[0], as: UTF8.self)) else { return }
        precondition((1...ClientAssertion.maxKeys).contains(keys.count), "a JWK Set of \(keys.count) keys accepted")
        precondition(keys.allSatisfy { jwk in ["d", "p", "q", "dp", "dq", "qi", "k", "oth"].allSatisfy { jwk[$0] == nil } }, "a private member accepted")
        // What a registration stores reads back as the same keys.
        let stored = JSONValue.object(["keys": .array(keys.map(JSONValue.object))])
        precondition((try? JWKSet.keys(stored)) == keys, "a stored JWK Set does not read back as itself")
        let now: Int64 = 1_800_000_000
        if let verified = try? ClientAssertion.verify(jwt, clientID: "svc", keys: keys, audiences: ["https://signet.test"], now: now) {
            precondition(!verified.jti.isEmpty && verified.jti.utf8.count <= 256, "a jti out of bounds accepted")
            precondition(verified.exp > now - ClientAssertion.leeway && verified.exp <= now + ClientAssertion.maxLifetime + ClientAssertion.leeway, "an exp out of bounds accepted")
            precondition(ClientAssertion.issuer(of: jwt) == "svc", "a verified assertion whose iss is not the client")
        }
    }

    static func checkImportRecord(_ body: [UInt8]) {
        // A passkey taken is one a registration could have written, and reads back as
        // itself through the export.
        guard let record = try? StrictJSON(maxDepth: 32, maxLength: 1 << 20).parse(body), let identity = try? ExportedIdentity(record: record) else { return }
        let now: Int64 = 1_796_509_545_405
        for passkey in identity.passkeys {
            guard let row = try? Ceremonies.importedPasskey(passkey, now: now, trusted: Self.fuzzAnchors) else { continue }
            precondition((1...AuthenticatorData.maxCredentialIDLength).contains(row.id.count), "a credential ID out of bounds")
            precondition((try? COSEKey(row.publicKey))?.algorithm.rawValue == row.algorithm, "a key that does not parse as its algorithm")
            precondition((0...Int64(UInt32.max)).contains(row.signCount) && (row.backupEligible || !row.backupState), "a counter or backup flags out of bounds")
            precondition([row.createdAt, row.lastUsedAt ?? 0, row.revokedAt ?? 0].allSatisfy { (0...now).contains($0) }, "a time out of bounds")
            precondition(row.transports.count <= 8 && row.transports.allSatisfy { $0.utf8.count <= 32 }, "transports out of bounds")
            precondition(row.attested == (row.attestationRoot.map(Self.fuzzAnchors.contains) ?? false), "attested without a trusted anchor")
            precondition((try? Ceremonies.importedPasskey(Ceremonies.exported(row, authenticator: nil), now: now, trusted: Self.fuzzAnchors)) == row, "a passkey that does not read back as itself")
        }
        for key in identity.deviceKeys {
            guard let row = try? Ceremonies.importedDeviceKey(key, now: now) else { continue }
            precondition((1...64).contains(row.id.utf8.count) && (try? PublicKey(spki: row.publicKey))?.kind == .ec(.p256), "a device key ID or key out of bounds")
            precondition(["ios", "android"].contains(row.platform) && (1...128).contains(row.deviceID.count), "a platform or device out of bounds")
            precondition([row.createdAt, row.lastUsedAt ?? 0, row.revokedAt ?? 0].allSatisfy { (0...now).contains($0) } && row.recoveryID == nil, "a time out of bounds")
            precondition((try? Ceremonies.importedDeviceKey(Ceremonies.exported(row), now: now)) == row, "a device key that does not read back as itself")
        }
        precondition((0...1_000).contains(identity.unusedRecoveryCodes), "a count of recovery codes out of bounds")
        for role in identity.roles {
            guard let (name, _) = try? Ceremonies.importedRole(role) else { continue }
            precondition((1...256).contains(name.count) && name == name.trimmingCharacters(in: .whitespacesAndNewlines), "a role's name out of bounds")
            precondition(!name.unicodeScalars.contains(where: Ceremonies.isUnsafeInText), "a role's name with a control character")
            precondition((try? Ceremonies.importedRole(ExportedRole(name: name, expires_at: nil)))?.name == name, "a role's name that does not read back as itself")
        }
    }

    /// The sealed-backup target's two files, in a folder of this process's, made once and
    /// removed when the process exits (every replay in the test suite runs it).
    static let sealedBackupFolder: String = {
        let folder = NSTemporaryDirectory() + "signet-fuzz-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: FuzzTarget.sealedBackupFolder) }
        return folder
    }()

    static func checkSealedBackup(_ body: [UInt8]) {
        // What opens under the key is exactly what was sealed: no altered, cut, moved or
        // spliced file opens, and none crashes the reader.
        let folder = sealedBackupFolder
        let (sealed, plain) = (folder + "/sealed", folder + "/plain")
        try? FileManager.default.removeItem(atPath: plain)
        guard FileManager.default.createFile(atPath: sealed, contents: Data(body)) else { return }
        if (try? SealedBackup.open(sealed, to: plain, kek: Self.sealedBackupKEK)) != nil {
            precondition(FileManager.default.contents(atPath: plain).map(Array.init) == Self.sealedBackupContent, "an altered sealed file opened")
        } else {
            precondition(!FileManager.default.fileExists(atPath: plain), "a refused sealed file left its output")
        }
    }

    static func checkRevocation(_ body: [UInt8]) {
        guard let mode = body.first else { return }
        let rest = Array(body.dropFirst())
        if mode == 0 {
            for point in (try? Certificate(der: rest))?.crlDistributionPoints ?? [] {
                precondition(!point.isEmpty && point.utf8.allSatisfy { (0x21...0x7e).contains($0) }, "a point that is not visible ASCII")
            }
        } else if let list = try? CertificateRevocationList(der: rest) {
            precondition(list.der.count <= CertificateRevocationList.maxLength * 2, "a list that grew")
        }
    }

    static func checkMetadataBLOB(_ body: [UInt8]) {
        // A model refused at sign-in is refused at registration too (its statuses are a
        // subset), and every model is keyed by its AAGUID in lower case.
        guard let mode = body.first else { return }
        let rest = Array(body.dropFirst())
        let blob: MetadataBLOB?
        if mode == 0 {
            blob = (try? StrictJSON(maxLength: 1 << 20).parse(rest)).flatMap { try? MetadataBLOB(payload: $0) }
        } else {
            blob = try? MetadataBLOB(jws: rest, anchor: Self.metadataRoot, now: Date(timeIntervalSince1970: 1_800_000_000))
            precondition(blob == nil, "a BLOB not signed under the root was read")
        }
        for (aaguid, entry) in blob?.entries ?? [:] {
            precondition(UUID(uuidString: aaguid)?.uuidString.lowercased() == aaguid, "a model keyed by \(aaguid)")
            for now in [Date.distantPast, Date(timeIntervalSince1970: 1_800_000_000), .distantFuture] where entry.refusal(for: .signIn, at: now) != nil {
                precondition(entry.refusal(for: .registration, at: now) != nil, "refused at sign-in, admitted at registration")
            }
        }
    }
}
