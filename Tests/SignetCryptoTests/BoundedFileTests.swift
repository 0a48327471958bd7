import Foundation
import SignetCrypto
import Testing

@Suite struct BoundedFileTests {
    static func file(_ bytes: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "signet-bounded-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a file of exactly the limit is read whole; one byte more is too large; an empty file is empty")
    func limit() throws {
        let bytes = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let exact = try Self.file(bytes)
        defer { try? FileManager.default.removeItem(atPath: exact) }
        #expect(try BoundedFile.read(exact, limit: 4096) == bytes)
        #expect(throws: BoundedFile.Failure.tooLarge) { _ = try BoundedFile.read(exact, limit: 4095) }
        let empty = try Self.file([])
        defer { try? FileManager.default.removeItem(atPath: empty) }
        #expect(try BoundedFile.read(empty, limit: 0) == [])
    }

    @Test("as text: UTF-8 is read, anything else is not text")
    func text() throws {
        let good = try Self.file(Array("é\n".utf8)), bad = try Self.file([0x70, 0xFF])
        defer { for path in [good, bad] { try? FileManager.default.removeItem(atPath: path) } }
        #expect(try BoundedFile.readText(good, limit: 16) == "é\n")
        #expect(throws: BoundedFile.Failure.notText) { _ = try BoundedFile.readText(bad, limit: 16) }
    }

    @Test("a device that never ends is refused at the limit, not read until memory runs out")
    func endless() {
        #expect(throws: BoundedFile.Failure.tooLarge) { _ = try BoundedFile.read("/dev/zero", limit: 1 << 20) }
        #expect(throws: BoundedFile.Failure.tooLarge) { _ = try BoundedFile.read("/dev/urandom", limit: 64) }
    }

    @Test("a path that is missing, a folder or not permitted is unreadable")
    func unreadable() throws {
        #expect(throws: BoundedFile.Failure.unreadable) { _ = try BoundedFile.read("/nonexistent/signet-file", limit: 10) }
        #expect(throws: BoundedFile.Failure.unreadable) { _ = try BoundedFile.read(NSTemporaryDirectory(), limit: 10) }
        #expect(BoundedFile.describe(64 << 20) == "64 MiB" && BoundedFile.describe(64 << 10) == "64 KiB" && BoundedFile.describe(256 * 1024) == "256 KiB")
    }
}
