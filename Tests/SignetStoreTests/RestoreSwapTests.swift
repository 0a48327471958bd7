import Foundation
import SignetAuth
import SignetStore
import SignetTestSupport
import Testing

/// ``SQLiteRestore/swap(staged:target:stamp:)`` against a staged copy whose store is still
/// letting go of its last connection, as one released on its own queue does.
@Suite struct RestoreSwapTests {
    final class Holder: @unchecked Sendable {
        var store: SQLStore?
        init(_ store: SQLStore) { self.store = store }
    }

    @Test("a staged copy still open elsewhere for a moment is waited for, then put in place alone, without a WAL")
    func waitsForTheLastConnection() throws {
        let staged = TemporaryDatabase.path("staged")
        let target = TemporaryDatabase.path("target")
        // A store on the staged file, in WAL mode, let go 300 ms later on another thread.
        let holder = Holder(try SQLStore(path: staged))
        try holder.store?.insertSigningKey(SigningKeyRow(kid: "k", algorithm: "ES256", encryptedPrivateKey: [1], publicKey: [2], createdAt: 1))
        let released = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            holder.store = nil
            released.signal()
        }
        let start = Date()
        #expect(try SQLiteRestore.swap(staged: staged, target: target, stamp: "x") == nil)
        released.wait()
        #expect(Date().timeIntervalSince(start) >= 0.25)
        #expect(!FileManager.default.fileExists(atPath: staged) && !FileManager.default.fileExists(atPath: target + "-wal"))
        #expect(try rawSQLite(target, "PRAGMA journal_mode") == ["delete"] && rawSQLite(target, "SELECT kid FROM signing_keys") == ["k"])
    }
}
