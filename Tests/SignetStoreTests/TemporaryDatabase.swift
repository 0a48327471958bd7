import Foundation
import SignetTestSupport

/// A SQLite file of one test in the temporary directory, and its removal with the WAL and the
/// shared-memory file beside it.
enum TemporaryDatabase {
    static func path(_ prefix: String) -> String {
        Scratch.directory.appendingPathComponent("\(prefix)-\(UUID().uuidString).db").path
    }

    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
