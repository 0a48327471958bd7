import Foundation
import SignetClient
import SignetSoftware
import Synchronization
import Testing
import SignetTestSupport

/// The software token store that the CLI and the tests keep sessions in; it writes through
/// `SecretFile.save`, as the development KEK file and the software authenticator's state do.
@Suite struct FileTokenStoreTests {
    @Test("saved tokens are never in a file that others may read, not even while the file is replaced")
    func neverReadableByOthers() throws {
        let directory = Scratch.directory.appendingPathComponent("signet-tokens-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileTokenStore(url: directory.appendingPathComponent("session.json"))
        let session = StoredSession(accessToken: "a", refreshToken: "r", idToken: nil, accessTokenExpiresAt: Date())
        // A watcher lists the folder as fast as it can while the file is saved again and again,
        // and notes any file in it with a permission bit for the group or others.
        let stop = Atomic<Bool>(false), seen = Mutex<[String]>([])
        let watcher = Thread {
            while !stop.load(ordering: .relaxed) {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
                    var info = stat()
                    if stat(directory.appendingPathComponent(name).path, &info) == 0, info.st_mode & 0o077 != 0 {
                        seen.withLock { $0.append("\(name) \(String(info.st_mode & 0o777, radix: 8))") }
                    }
                }
            }
        }
        watcher.start()
        for n in 0..<2_000 {
            var next = session
            next.accessToken = "a\(n)"
            try store.save(next)
        }
        stop.store(true, ordering: .relaxed)
        Thread.sleep(forTimeInterval: 0.05)
        let readable = seen.withLock { Set($0).sorted() }
        #expect(readable.count == 0, "files others could read: \(readable.prefix(3)) (\(readable.count) in all)")
        #expect(try store.load()?.accessToken == "a1999")
        var info = stat()
        #expect(stat(store.url.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }
}
