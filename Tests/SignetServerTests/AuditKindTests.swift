import Foundation
import SignetAPI
import Testing

/// SignetAPI's ``AuditKind`` is the one list of audit events: the ceremonies can write no other,
/// and the README's table is it.
@Suite struct AuditKindTests {
    /// The README table as the list makes it.
    static var table: String {
        var lines = ["| event | Auth0 `type` (success / failure) | what it records |", "| --- | --- | --- |"]
        for kind in AuditKind.allCases {
            let types = kind.auth0Types.map { "`\($0.success)` / `\($0.failure)`" } ?? "the event's own name"
            lines.append("| `\(kind.rawValue)` | \(types) | \(kind.meaning) |")
        }
        return lines.joined(separator: "\n")
    }

    @Test("the README's table of audit events is the list, row for row")
    func readme() throws {
        let root = ReasonListTests.root
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "<!-- audit-events -->\n"), "README.md has no <!-- audit-events --> table")
        let end = try #require(readme.range(of: "\n<!-- /audit-events -->", range: start.upperBound..<readme.endIndex))
        let written = String(readme[start.upperBound..<end.lowerBound])
        if written != Self.table {
            try? Self.table.write(to: root.appendingPathComponent(".build/audit-events-table.md"), atomically: true, encoding: .utf8)
        }
        #expect(written == Self.table, "README.md's audit event table differs from SignetAPI's list; the list's table is in .build/audit-events-table.md")
    }

    @Test("names are unique snake case, and meanings are sentences")
    func shape() {
        #expect(Set(AuditKind.allCases.map(\.rawValue)).count == AuditKind.allCases.count)
        for kind in AuditKind.allCases {
            #expect(kind.rawValue.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 == UInt8(ascii: "_") }, "\(kind)")
            #expect(kind.meaning.hasSuffix(".") && kind.meaning.first?.isUppercase == true, "\(kind)")
        }
    }
}
