import Foundation
import SignetAuth
import SignetHTTP
import SignetTestSupport
import Testing

/// `deploy/prometheus/signet-alerts.yml`, the alerting rules shipped for operators: promtool
/// checks them and runs their tests, and every metric they name is one a live server serves.
@Suite struct AlertRulesTests {
    static let folder = ReasonListTests.root.appendingPathComponent("deploy/prometheus")
    static let promtool = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test("promtool finds the rules valid and their tests pass: each alert fires on its case and stays quiet on the case beside it",
          .enabled(if: promtool != nil, "needs promtool (Debian's prometheus package; scripts/bootstrap.sh test installs it)"))
    func promtoolPasses() throws {
        let promtool = try #require(Self.promtool)
        let check = try runProcess(promtool, ["check", "rules", "signet-alerts.yml"], in: Self.folder)
        #expect(check.status == 0 && check.output.contains("SUCCESS: 14 rules found"), "\(check.output)\(check.errors)")
        let tests = try runProcess(promtool, ["test", "rules", "signet-alerts-test.yml"], in: Self.folder)
        #expect(tests.status == 0 && tests.output.contains("SUCCESS"), "\(tests.output)\(tests.errors)")
    }

    @Test("every metric the rules name is one a server with backups and attestation metadata serves, and every alert has a test")
    func metricsExist() throws {
        let rules = try String(contentsOf: Self.folder.appendingPathComponent("signet-alerts.yml"), encoding: .utf8)
        let named = Set(rules.matches(of: /\b(?:signet|process)_[a-z_]+\b/).map { String($0.output) })
        #expect(named.count >= 12, "\(named.sorted())")
        let metadata = try AttestationMetadataTests.files(try TestMetadataService(), models: [])
        let backups = Scratch.directory.appendingPathComponent("alert-backups-\(UUID().uuidString)").path
        let server = try TestServer { c in
            (c.attestationMetadataFile, c.attestationMetadataRootFile) = metadata
            c.backupDirectory = backups
        }
        let text = String(decoding: try server.get("/metrics").body, as: UTF8.self)
        // The families a scrape holds, a histogram's series under its three names.
        var served: Set<String> = []
        for line in text.split(separator: "\n") where line.hasPrefix("# TYPE ") {
            let parts = line.split(separator: " ")
            guard parts.count == 4 else { continue }
            served.insert(String(parts[2]))
            if parts[3] == "histogram" { served.formUnion(["_bucket", "_sum", "_count"].map { parts[2] + $0 }) }
        }
        #expect(named.subtracting(served).isEmpty, "named by the rules and not served: \(named.subtracting(served).sorted())")
        // Each alert is tested by name in the tests' file.
        let tests = try String(contentsOf: Self.folder.appendingPathComponent("signet-alerts-test.yml"), encoding: .utf8)
        let alerts = rules.matches(of: /- alert: (\w+)/).map { String($0.output.1) }
        #expect(alerts.count == 14)
        for alert in alerts { #expect(tests.contains("alertname: \(alert)\n"), "\(alert) has no test") }
    }
}
