import Foundation
import SignetAPI
import SignetAuth
import SignetWebAuthn
import SignetServer
import SignetWeb
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

    @Test("the account page has a line for every kind of event, in each language, but those it leaves out on purpose")
    func accountPage() {
        for language in Strings.languages {
            let table = Strings.table(language)
            for kind in AuditKind.allCases {
                let shown = table["event_" + kind.rawValue] != nil
                #expect(shown != AuditKind.notInOwnHistory.contains(kind), "\(language): \(kind.rawValue) is \(shown ? "both shown and left out" : "neither shown nor left out")")
            }
            // No line for a kind that is not in the list; words for a refusal only for a kind shown
            // that is not only ever a refusal, and for the same kinds in every language.
            let kinds = Set(AuditKind.allCases.map { "event_" + $0.rawValue })
            let refusals = Set(AuditKind.allCases.filter { !AuditKind.notInOwnHistory.contains($0) && !AuditKind.failuresOnly.contains($0) }
                .map { "event_\($0.rawValue)_refused" })
            #expect(table.keys.filter { $0.hasPrefix("event_") && !kinds.contains($0) && !refusals.contains($0) }.isEmpty, "\(language)")
            #expect(Set(table.keys.filter { $0.hasSuffix("_refused") }) == Set(Strings.table("en").keys.filter { $0.hasSuffix("_refused") }), "\(language)")
        }
    }

    @Test("an operator's change to an account shows on its page, in its language and without the operator's address; bookkeeping does not")
    func accountPageLines() throws {
        let server = try TestServer.withOperators()
        let browser = WebBrowser(server)
        _ = try browser.signUp(email: "events@signet.test")
        let id = try #require(try server.store.user(email: "events@signet.test")?.id)
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: server.managementToken(), .object(["name": .string("Eve")])).status == 200)
        let page = try browser.page("/account").html
        #expect(page.contains("An administrator changed your account") && page.contains("Account created"), "\(page)")
        // The operator's address is not the account's business; the user's own events keep theirs.
        let rows = page.components(separatedBy: "data-testid=\"event-row\"")
        #expect(rows.contains { $0.contains("An administrator changed your account") && !$0.contains("127.0.0.1") }, "\(rows)")
        #expect(rows.contains { $0.contains("Account created") && $0.contains("127.0.0.1") }, "\(rows)")
        #expect(try browser.page("/account?ui_locales=es").html.contains("Un administrador cambió tu cuenta"))
        // The sign-up's sealed session and the operator's token were bookkeeping: no line names them.
        #expect(!page.contains("event_") && !page.contains("client_credentials"))
    }

    @Test("the kinds written only as refusals are those whose meaning says so")
    func failuresOnly() {
        for kind in AuditKind.allCases {
            #expect(AuditKind.failuresOnly.contains(kind) == kind.meaning.hasSuffix("failures only."), "\(kind.rawValue)")
        }
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
