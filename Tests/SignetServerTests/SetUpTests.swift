import Foundation
import Testing

/// The README's set-up says what `scripts/bootstrap.sh` installs: a newcomer reads it to know
/// what the two commands will put on the machine.
@Suite struct SetUpTests {
    static let root = ReasonListTests.root

    /// The packages `bootstrap.sh` installs for building, running and the tests (not the
    /// profiling extras), from its `packages` and `lean` lists.
    static func bootstrapPackages() throws -> Set<String> {
        let script = try String(contentsOf: root.appendingPathComponent("scripts/bootstrap.sh"), encoding: .utf8)
        var names: Set<String> = []
        for line in script.split(separator: "\n") where !line.contains("profile") {
            guard let open = line.range(of: #"(packages|lean)\+?=\("#, options: .regularExpression),
                  let close = line.range(of: ")", range: open.upperBound..<line.endIndex) else { continue }
            names.formUnion(line[open.upperBound..<close.lowerBound].split(separator: " ").map(String.init))
        }
        return names
    }

    /// The words in backticks of the README's sentence on what the commands install, up to
    /// "with `apt-get`": the package lists.
    static func readmePackages() throws -> Set<String> {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "Both install the Debian packages"))
        let end = try #require(readme.range(of: "with `apt-get`", range: start.upperBound..<readme.endIndex))
        let spans = readme[start.lowerBound..<end.lowerBound].split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map(\.element)
        return Set(spans.flatMap { $0.split(whereSeparator: \.isWhitespace).map(String.init) })
    }

    @Test("the README's set-up names every package bootstrap.sh installs, and no other")
    func packagesNamed() throws {
        let installed = try Self.bootstrapPackages()
        #expect(installed.count >= 15, "bootstrap.sh's lists were not read: \(installed.sorted())")
        let written = try Self.readmePackages()
        #expect(installed.subtracting(written).isEmpty, "the README's set-up does not name \(installed.subtracting(written).sorted())")
        #expect(written.subtracting(installed).isEmpty, "the README's set-up names what bootstrap.sh does not install: \(written.subtracting(installed).sorted())")
    }
}
