import Foundation
import SignetCrypto
import SignetWebAuthn
import Testing
import SignetTestSupport

/// `signet verify` as a developer runs it: the built binary, real files, exit codes.
@Suite struct VerifyCommandTests {
    static let binary = Fixtures.repositoryRoot.appendingPathComponent(".build/debug/signet")

    static func run(_ args: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = args
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = Pipe()
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("a verified registration prints its result and exits 0", .enabled(if: Fixtures.available, Fixtures.skipNote))
    func ok() throws {
        let path = Fixtures.folder.appendingPathComponent("registration/android_key_pixel8a_2025.json").path
        let (status, output) = try Self.run(["verify", "registration", path])
        #expect(status == 0)
        let json = try StrictJSON().parse(Array(output.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
        #expect(json["ok"] == .bool(true))
        #expect(json["fmt"] == .string("android-key"))
        #expect(json["attestation_trusted"] == .bool(true))
    }

    @Test("a refused response prints the reason and exits 1", .enabled(if: Fixtures.available, Fixtures.skipNote))
    func refused() throws {
        let path = Fixtures.folder.appendingPathComponent("authentication/es256_counter_not_increased.json").path
        let (status, output) = try Self.run(["verify", "authentication", path])
        #expect(status == 1)
        let json = try StrictJSON().parse(Array(output.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
        #expect(json["ok"] == .bool(false))
        #expect(json["reason"] == .string("counter_regression"))
        #expect(json["detail"]?.string?.isEmpty == false)
    }

    @Test("a pasted response that is not JSON is malformed, not a crash")
    func garbage() throws {
        let file = Scratch.directory.appendingPathComponent("signet-garbage-\(UUID()).json")
        try Data("{\"rp_id\": ".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, output) = try Self.run(["verify", "registration", file.path])
        #expect(status == 1)
        #expect(output.contains("\"reason\":\"malformed\""))
    }

    /// A BLOB listing Apple's anonymous attestation (AAGUID f24a8e70-…) with `root` and
    /// `statuses`, and its service's root, as files.
    static func metadata(root: String, statuses: [(status: String, effectiveDate: String?)] = [("FIDO_CERTIFIED", "2022-01-01")], under service: TestMetadataService? = nil) throws -> [String] {
        let pem = try String(contentsOf: Fixtures.folder.appendingPathComponent("trust_anchors/\(root)"), encoding: .utf8)
        let signer = try TestMetadataService()
        let blob = Scratch.directory.appendingPathComponent("mds-\(UUID()).jwt")
        try Data(try signer.blob(TestMetadataService.payload(models: [
            .init(aaguid: "f24a8e70-d0d3-f82c-2937-32523cc4de5a", description: "Apple devices", roots: try Certificate.parsePEM(pem), statuses: statuses),
        ]))).write(to: blob)
        return ["--metadata", blob.path, "--metadata-root", try (service ?? signer).rootFile(in: Scratch.directory)]
    }

    @Test("--metadata: a real Apple attestation is trusted through the root a BLOB lists for its AAGUID; another maker's root, a REVOKED report and a BLOB under another root are refused",
          .enabled(if: Fixtures.available, Fixtures.skipNote))
    func metadata() throws {
        let path = Fixtures.folder.appendingPathComponent("registration/apple_passkey_2021.json").path
        func verify(_ extra: [String]) throws -> (status: Int32, json: JSONValue) {
            let (status, output) = try Self.run(["verify", "registration", path] + extra)
            return (status, (try? StrictJSON().parse(Array(output.trimmingCharacters(in: .whitespacesAndNewlines).utf8))) ?? .null)
        }
        let listed = try verify(try Self.metadata(root: "apple_webauthn_root_ca.pem"))
        #expect(listed.status == 0 && listed.json["attestation_trusted"] == .bool(true) && listed.json["metadata"]?["description"] == .string("Apple devices"), "\(listed.json.serialized)")
        let otherRoot = try verify(try Self.metadata(root: "google_hardware_attestation_root_1.pem"))
        #expect(otherRoot.status == 1 && otherRoot.json["reason"] == .string("attestation_untrusted"), "\(otherRoot.json.serialized)")
        let revoked = try verify(try Self.metadata(root: "apple_webauthn_root_ca.pem", statuses: [("FIDO_CERTIFIED", "2019-01-01"), ("REVOKED", "2020-06-01")]))
        #expect(revoked.status == 1 && revoked.json["reason"] == .string("authenticator_not_allowed"), "\(revoked.json.serialized)")
        #expect(try verify(try Self.metadata(root: "apple_webauthn_root_ca.pem", under: try TestMetadataService())).status == 2)
        #expect(try verify(["--metadata", path]).status == 2, "--metadata without --metadata-root")
    }

    @Test("usage errors exit 2", arguments: [["verify"], ["verify", "sideways", "x.json"], ["verify", "registration", "/nonexistent.json"], ["nonsense"]])
    func usage(_ args: [String]) throws {
        #expect(try Self.run(args).status == 2)
    }
}

/// The benchmark's output contract (its speed is judged by reading its figures, never here).
@Suite struct BenchCommandTests {
    @Test("the options signet help shows for bench verify are the ones it takes")
    func helpMatches() throws {
        let (status, help) = try VerifyCommandTests.run(["help"])
        #expect(status == 0)
        let line = try #require(help.split(separator: "\n").first { $0.contains("bench verify") })
        // `[--flag]` or `[--flag VALUE]`, each passed as shown (a value of 1).
        var args = ["bench", "verify"]
        for option in line.split(separator: "[").dropFirst() {
            let words = option.prefix { $0 != "]" }.split(separator: " ")
            args.append(String(words[0]))
            if words.count > 1 { args.append("1") }
        }
        #expect(args.count > 2, "no options in \(line)")
        #expect(try VerifyCommandTests.run(args).status == 0, "\(args)")
    }

    @Test("bench verify --json prints every figure and the ratio")
    func jsonKeys() throws {
        let (status, output) = try VerifyCommandTests.run(["bench", "verify", "--json", "--rounds", "1"])
        #expect(status == 0)
        let json = try StrictJSON().parse(Array(output.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
        for key in ["es256_warm_per_s", "es256_cold_per_s", "openssl_raw_per_s", "ratio_warm_vs_raw", "eddsa_warm_per_s",
                    "rs256_warm_per_s", "registration_none_per_s", "registration_packed_per_s"] {
            let value = try #require(json[key], "\(key) missing")
            guard case .number(let text) = value, let number = Double(text) else {
                Issue.record("\(key) is not a number")
                continue
            }
            #expect(number > 0, "\(key)")
        }
    }
}
