import Foundation
import SignetAuth
import SignetCrypto
@testable import SignetStore
import SignetTestSupport
import Testing

/// ``SealedBackup``: a copy sealed in chunks under the key-encryption key opens as itself under
/// that key, and not at all when anything of it was altered.
@Suite struct SealedBackupTests {
    static func folder() throws -> String {
        let path = NSTemporaryDirectory() + "signet-sealed-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// `content` sealed under `kek` in chunks of `chunk` bytes; the sealed file's bytes.
    static func sealed(_ content: [UInt8], kek: [UInt8], chunk: Int, in folder: String) throws -> [UInt8] {
        let (plain, sealed) = (folder + "/plain-\(UUID().uuidString)", folder + "/sealed-\(UUID().uuidString)")
        #expect(FileManager.default.createFile(atPath: plain, contents: Data(content)))
        try SealedBackup.seal(plain, to: sealed, kek: kek, chunkSize: chunk)
        return Array(try #require(FileManager.default.contents(atPath: sealed)))
    }

    /// Opens `bytes` as a sealed file under `kek`: what it held, or the refusal; a refusal leaves no output.
    static func opened(_ bytes: [UInt8], kek: [UInt8], in folder: String) -> Result<[UInt8], StoreError> {
        let (sealed, plain) = (folder + "/in-\(UUID().uuidString)", folder + "/out-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: sealed, contents: Data(bytes))
        defer { try? FileManager.default.removeItem(atPath: sealed) }
        return Result { () throws(StoreError) in
            try SealedBackup.open(sealed, to: plain, kek: kek)
            return Array(FileManager.default.contents(atPath: plain) ?? Data())
        }.mapError { error in
            #expect(!FileManager.default.fileExists(atPath: plain), "a refused file left its output")
            return error
        }
    }

    @Test("sealed and opened, whatever the size against the chunk: the same bytes, mode 0600, and none of them readable in the sealed file")
    func roundTrip() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let kek = SecureRandom.bytes(32)
        for size in [0, 1, 63, 64, 65, 200, 4096] {
            let content = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
            let bytes = try Self.sealed(content, kek: kek, chunk: 64, in: folder)
            #expect(bytes.count == SealedBackup.headerLength + max(1, (size + 63) / 64) * (4 + SealedBackup.overhead) + size, "\(size) bytes")
            #expect(try Self.opened(bytes, kek: kek, in: folder).get() == content, "\(size) bytes")
        }
        let secret = Array(String(repeating: "ada@signet.test ", count: 100).utf8)
        let bytes = try Self.sealed(secret, kek: kek, chunk: SealedBackup.chunkSize, in: folder)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("ada@signet.test"))
        let file = folder + "/mode"
        #expect(FileManager.default.createFile(atPath: file + ".plain", contents: Data(secret)))
        try SealedBackup.seal(file + ".plain", to: file, kek: kek)
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600 && SealedBackup.isSealed(file))
        #expect(try SealedBackup.keyID(file) == KeyEncryptionKey.id(kek) && !SealedBackup.isSealed(file + ".plain"))
        // Never over a file.
        #expect(throws: StoreError(.conflict, "")) { try SealedBackup.seal(file + ".plain", to: file, kek: kek) }
    }

    @Test("any byte altered, anywhere, refuses the file; so do a chunk dropped, moved, repeated or taken from another file, a file cut short or run on, another key, another format")
    func alterations() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let kek = SecureRandom.bytes(32)
        let content = Array("three chunks of an account table, and a little more".utf8) + Array(repeating: 0x2A, count: 60)
        let bytes = try Self.sealed(content, kek: kek, chunk: 40, in: folder)
        #expect(try Self.opened(bytes, kek: kek, in: folder).get() == content)
        // Every byte, every bit of it flipped in turn.
        for index in bytes.indices {
            var altered = bytes
            altered[index] ^= 1 << (index % 8)
            #expect(throws: (any Error).self, "byte \(index)") { try Self.opened(altered, kek: kek, in: folder).get() }
        }
        // The chunks, as the format frames them.
        var chunks: [[UInt8]] = []
        var at = SealedBackup.headerLength
        while at < bytes.count {
            let length = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            chunks.append(Array(bytes[at..<at + 4 + length]))
            at += 4 + length
        }
        #expect(chunks.count == 3)
        let header = Array(bytes.prefix(SealedBackup.headerLength))
        let other = try Self.sealed(content, kek: kek, chunk: 40, in: folder)
        let cases: [(String, [UInt8], String)] = [
            ("the last chunk dropped", header + chunks[0] + chunks[1], "cut short"),
            ("a middle chunk dropped", header + chunks[0] + chunks[2], "fails authentication"),
            ("two chunks swapped", header + chunks[1] + chunks[0] + chunks[2], "fails authentication"),
            ("a chunk repeated", header + chunks[0] + chunks[0] + chunks[1] + chunks[2], "fails authentication"),
            ("a chunk from another file under the same key", header + Array(other[SealedBackup.headerLength...].prefix(chunks[0].count)) + chunks[1] + chunks[2], "fails authentication"),
            ("cut inside a chunk", Array(bytes.dropLast(5)), "cut short"),
            ("a byte after the end", bytes + [0], "after its last chunk"),
            ("a chunk after the end", bytes + chunks[2], "after its last chunk"),
            ("a chunk's length past the largest", header + [0x7F, 0xFF, 0xFF, 0xFF] + chunks[0].dropFirst(4), "has length"),
            ("the header alone", header, "cut short"),
            ("a header cut short", Array(header.prefix(20)), "not a sealed Signet copy"),
            ("no file at all", [], "not a sealed Signet copy"),
            ("a SQLite file", Array("SQLite format 3\u{0}".utf8) + Array(repeating: 0, count: 40), "not a sealed Signet copy"),
            ("a newer format", Array(header.prefix(8)) + [2] + header.dropFirst(9) + chunks.joined(), "format 2"),
        ]
        for (what, altered, says) in cases {
            let refusal = Self.opened(altered, kek: kek, in: folder)
            guard case .failure(let error) = refusal else {
                Issue.record("\(what): opened")
                continue
            }
            #expect(error.detail.contains(says), "\(what): \(error.detail)")
        }
        // Another key: refused before anything is read, naming both.
        let stranger = SecureRandom.bytes(32)
        guard case .failure(let error) = Self.opened(bytes, kek: stranger, in: folder) else {
            Issue.record("opened under another key")
            return
        }
        #expect(error.code == .conflict && error.detail.contains(KeyEncryptionKey.id(kek)) && error.detail.contains(KeyEncryptionKey.id(stranger)), "\(error.detail)")
    }
}
