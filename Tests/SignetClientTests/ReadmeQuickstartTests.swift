import Foundation
import SignetWebAuthn
import Testing

/// The README's quick start, run line by line against a fresh server, so that it cannot rot.
@Suite struct ReadmeQuickstartTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The lines between `<!-- quickstart -->` and `<!-- /quickstart -->`, inside the code fence.
    static func commands() throws -> [String] {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "<!-- quickstart -->"), let end = readme.range(of: "<!-- /quickstart -->") else { return [] }
        return readme[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
            .filter { !$0.hasPrefix("```") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    }

    @Test("every quick-start command succeeds and prints ok")
    func quickstart() throws {
        let lines = try Self.commands()
        #expect(lines.count == 5)
        let server = try ServerProcess()
        let directory = server.directory
        for line in lines {
            // The README runs the release build through scripts/run.sh on port 8080; here the
            // debug build and the test server's port stand in.
            let command = line.replacingOccurrences(of: "scripts/run.sh", with: ServerProcess.binary.path)
                .replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(server.port)")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", command]
            process.currentDirectoryURL = directory
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let output = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(line)")
            let json = try StrictJSON().parse([UInt8](output).filter { $0 != 10 })
            #expect(json["ok"] == .bool(true), "\(line): \(String(decoding: output, as: UTF8.self))")
        }
        let state = directory.appendingPathComponent("phone.json").path
        #expect((try FileManager.default.attributesOfItem(atPath: state)[.posixPermissions] as? Int) == 0o600)
    }
}
