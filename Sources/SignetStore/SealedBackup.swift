import Foundation
public import SignetAuth
import SignetCrypto
import SignetWebAuthn

/// A backup encrypted under the key-encryption key: AES-256-GCM (NIST SP 800-38D) in chunks,
/// so that a copy of any size is sealed and opened a chunk at a time.
///
/// The file is a header, `SIGNETSB`, version 1, the key-encryption key's ID
/// (``KeyEncryptionKey/id(_:)``, 12 bytes) and 16 random bytes of salt, then chunks, each its
/// length (4 bytes, big-endian) and the sealed bytes of up to ``chunkSize`` bytes of the copy.
/// Each chunk's key is HMAC-SHA256 of the salt under the key-encryption key (one key a file),
/// and its associated data is the header, the chunk's index and whether it is the last, so a
/// chunk altered, moved, dropped, taken from another file, or a file cut short at a chunk's
/// end, fails to open. The last chunk may be empty.
public enum SealedBackup {
    static let magic = Array("SIGNETSB".utf8)
    static let version: UInt8 = 1
    static let headerLength = 8 + 1 + 12 + 16
    /// Bytes of the copy a chunk seals.
    public static let chunkSize = 1 << 20
    /// AES-GCM's nonce and tag around each chunk.
    static let overhead = 12 + 16

    /// Whether the file at `path` begins as a sealed copy does.
    public static func isSealed(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: magic.count)).map(Array.init) == magic
    }

    /// Seals the file `plain` into `sealed` (a new file, mode 0600), synced.
    public static func seal(_ plain: String, to sealed: String, kek: [UInt8], chunkSize: Int = chunkSize) throws(StoreError) {
        guard let input = FileHandle(forReadingAtPath: plain) else { throw StoreError(.unavailable, "cannot read \(plain)") }
        defer { try? input.close() }
        let output = try create(sealed)
        defer { try? output.close() }
        let header = magic + [version] + Array(KeyEncryptionKey.id(kek).utf8) + SecureRandom.bytes(16)
        let key = chunkKey(kek, header: header)
        do {
            try output.write(contentsOf: header)
            var index: UInt64 = 0
            var next = Array(try input.read(upToCount: chunkSize) ?? Data())
            while true {
                let chunk = next
                next = chunk.count == chunkSize ? Array(try input.read(upToCount: chunkSize) ?? Data()) : []
                let last = next.isEmpty
                let body = try AESGCM.seal(chunk, key: key, aad: aad(header, index, last: last))
                try output.write(contentsOf: bigEndian(UInt32(body.count)) + body)
                if last { break }
                index += 1
            }
            try output.synchronize()
        } catch {
            try? FileManager.default.removeItem(atPath: sealed)
            throw StoreError(.internalError, "cannot seal \(plain) into \(sealed): \(error)")
        }
    }

    /// Opens the sealed file `sealed` into `plain` (a new file, mode 0600), synced; refuses a
    /// file that is not one, sealed under another key (saying which), or altered in any way.
    public static func open(_ sealed: String, to plain: String, kek: [UInt8]) throws(StoreError) {
        guard let input = FileHandle(forReadingAtPath: sealed) else { throw StoreError(.unavailable, "cannot read \(sealed)") }
        defer { try? input.close() }
        let header = Array((try? input.read(upToCount: headerLength)) ?? Data())
        let named = try keyID(header: header, path: sealed)
        guard named == KeyEncryptionKey.id(kek) else {
            throw StoreError(.conflict, "\(sealed) is sealed under key-encryption key \(named); the one configured is \(KeyEncryptionKey.id(kek))")
        }
        let key = chunkKey(kek, header: header)
        let output = try create(plain)
        defer { try? output.close() }
        do throws(StoreError) {
            var index: UInt64 = 0
            while true {
                let length = Array((try? input.read(upToCount: 4)) ?? Data())
                guard length.count == 4 else { throw StoreError(.internalError, "\(sealed) is cut short: its last chunk is missing") }
                let count = length.reduce(0) { $0 << 8 | Int($1) }
                guard (overhead...chunkSize + overhead).contains(count) else { throw StoreError(.internalError, "\(sealed) is damaged: chunk \(index) has length \(count)") }
                let body = Array((try? input.read(upToCount: count)) ?? Data())
                guard body.count == count else { throw StoreError(.internalError, "\(sealed) is cut short in chunk \(index)") }
                // Not the last unless it opens as the last.
                let (chunk, last): ([UInt8], Bool)
                if let opened = try? AESGCM.open(body, key: key, aad: aad(header, index, last: false)) {
                    (chunk, last) = (opened, false)
                } else if let opened = try? AESGCM.open(body, key: key, aad: aad(header, index, last: true)) {
                    (chunk, last) = (opened, true)
                } else {
                    throw StoreError(.internalError, "\(sealed) is damaged or altered: chunk \(index) fails authentication")
                }
                do { try output.write(contentsOf: chunk) } catch { throw StoreError(.storageFull, "cannot write \(plain): \(error)") }
                if last { break }
                index += 1
            }
            guard ((try? input.read(upToCount: 1)) ?? nil)?.isEmpty ?? true else { throw StoreError(.internalError, "\(sealed) has bytes after its last chunk") }
            do { try output.synchronize() } catch { throw StoreError(.storageFull, "cannot sync \(plain): \(error)") }
        } catch {
            try? FileManager.default.removeItem(atPath: plain)
            throw error
        }
    }

    /// The ID of the key-encryption key the file at `path` is sealed under.
    public static func keyID(_ path: String) throws(StoreError) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw StoreError(.unavailable, "cannot read \(path)") }
        defer { try? handle.close() }
        return try keyID(header: Array((try? handle.read(upToCount: headerLength)) ?? Data()), path: path)
    }

    static func keyID(header: [UInt8], path: String) throws(StoreError) -> String {
        guard header.count == headerLength, Array(header.prefix(8)) == magic else { throw StoreError(.internalError, "\(path) is not a sealed Signet copy") }
        guard header[8] == version else { throw StoreError(.schemaNewer, "\(path) is sealed in format \(header[8]), which this signet does not know") }
        let id = header[9..<21]
        guard Base64URL.decode(bytes: id, canonical: true)?.count == 9 else { throw StoreError(.internalError, "\(path) is damaged: its key ID is not base64url") }
        return String(decoding: id, as: UTF8.self)
    }

    static func chunkKey(_ kek: [UInt8], header: [UInt8]) -> [UInt8] {
        Digest.sha256.hmac(key: kek, data: Array("signet sealed backup v1".utf8) + header.suffix(16))
    }

    static func aad(_ header: [UInt8], _ index: UInt64, last: Bool) -> [UInt8] {
        header + bigEndian(UInt32(index >> 32)) + bigEndian(UInt32(truncatingIfNeeded: index)) + [last ? 1 : 0]
    }

    static func bigEndian(_ n: UInt32) -> [UInt8] { [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] }

    static func create(_ path: String) throws(StoreError) -> FileHandle {
        guard !FileManager.default.fileExists(atPath: path) else { throw StoreError(.conflict, "\(path) exists; give a new file name") }
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
              let handle = FileHandle(forWritingAtPath: path) else { throw StoreError(.unavailable, "cannot create \(path)") }
        return handle
    }
}
