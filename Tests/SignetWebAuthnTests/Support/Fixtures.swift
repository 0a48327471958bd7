import Foundation

/// The shared conformance fixtures, read in place: `$SIGNET_FIXTURES`, else
/// `../shared/fixtures/webauthn` beside the repository.
enum Fixtures {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let folder: URL = {
        if let path = ProcessInfo.processInfo.environment["SIGNET_FIXTURES"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures/webauthn")
    }()

    static var available: Bool { FileManager.default.fileExists(atPath: folder.appendingPathComponent("registration").path) }

    static let skipNote: Comment = "WebAuthn fixtures not found at \(folder.path); set SIGNET_FIXTURES to run these tests"

    /// Every fixture file, as a path relative to the fixtures folder (e.g. `w3c/registration/x.json`).
    static func files(_ ceremony: String) -> [String] {
        guard available else { return [] }
        var result: [String] = []
        for prefix in ["", "w3c/"] {
            let dir = folder.appendingPathComponent(prefix + ceremony)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            result += names.filter { $0.hasSuffix(".json") }.sorted().map { prefix + ceremony + "/" + $0 }
        }
        return result
    }
}

import Testing
