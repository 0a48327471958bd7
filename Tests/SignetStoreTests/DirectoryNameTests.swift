import Foundation
@testable import SignetStore
import SignetAuth
import SignetTestSupport
import Testing

/// An identity provider's own name for an account (`app_metadata.scim_user_name`, schema 28):
/// found in any case by an index, and one account's only, on both databases.
@Suite struct DirectoryNameTests {
    @Test("a directory name is found in any case, not as another key's value, a number as its text alike; a second account with it, in another case, is a conflict", arguments: Backend.available)
    func foundAndUnique(_ backend: Backend) throws {
        let store = try backend.open()
        let documents: [String?] = [#"{"scim_user_name":"JDoe@Corp.onmicrosoft.com"}"#, #"{"scim_external_id":"jdoe@corp.onmicrosoft.com"}"#,
                                    #"{"scim_user_name":7}"#, nil, #"{"scim_user_name":"other"}"#]
        var ids: [String] = []
        for (n, app) in documents.enumerated() {
            let u = user(n)
            try store.perform([.createAccount(u), .userMetadata(userID: u.id, app: app, user: nil)])
            ids.append(u.id)
        }
        func found(_ name: String) throws -> [String] { try store.users(UserQuery(directoryName: name, limit: 10)).users.map(\.user.id) }
        #expect(try found("jdoe@corp.onmicrosoft.com") == [ids[0]] && found("JDOE@CORP.ONMICROSOFT.COM") == [ids[0]])
        #expect(try found("jdoe@corp").isEmpty)
        // Both databases read a number as its text (the ceremony passes over a name that is no string).
        #expect(try found("7") == [ids[2]])
        #expect(try found("OTHER") == [ids[4]])
        // The same name on another account, in another case: refused by the database, as a write and as a change.
        let second = user(9)
        #expect(throws: StoreError.self) { try store.perform([.createAccount(second), .userMetadata(userID: second.id, app: #"{"scim_user_name":"jdoe@CORP.onmicrosoft.com"}"#, user: nil)]) }
        #expect(try store.managedUser(id: second.id) == nil, "the account went with the write")
        #expect(throws: StoreError.self) {
            _ = try store.updateUser(id: ids[3], UserChange(appMetadata: MetadataChange(from: nil, to: #"{"scim_user_name":"Other"}"#)), at: 1, writes: [])
        }
        #expect(try store.managedUser(id: ids[3])?.appMetadata == nil)
        // Released by a rename, it can be taken.
        _ = try store.updateUser(id: ids[4], UserChange(appMetadata: MetadataChange(from: #"{"scim_user_name":"other"}"#, to: #"{"scim_user_name":"renamed"}"#)), at: 2, writes: [])
        #expect(try store.updateUser(id: ids[3], UserChange(appMetadata: MetadataChange(from: nil, to: #"{"scim_user_name":"Other"}"#)), at: 3, writes: []) != nil)
        #expect(try found("other") == [ids[3]] && found("renamed") == [ids[4]])
    }

    @Test("SQLite answers a directory name from migration 28's index, not by reading every account")
    func sqlitePlan() throws {
        let path = TemporaryDatabase.path("directory-name")
        defer { TemporaryDatabase.remove(path) }
        _ = try SQLStore(path: path, durable: false, checkpointInterval: 60)
        let plan = try SQLiteConnection(path: path).query("EXPLAIN QUERY PLAN SELECT u.id FROM users u" + SQLStore.directoryNameFilter(postgres: false), [.text("x")])
        let steps = plan.compactMap { $0.last?.text }
        #expect(steps.contains { $0.contains("USING INDEX users_scim_user_name") } && !steps.contains { $0.hasPrefix("SCAN") }, "\(steps)")
    }

    @Test("PostgreSQL answers a directory name from migration 28's index, which is valid", .enabled(if: Backend.available.contains(.postgres)))
    func postgresPlan() throws {
        let url = try AccountReadsTests.postgresDatabase()
        _ = try SQLStore(postgres: url, connections: 1)
        let db = try PostgresConnection(url: url)
        #expect(try db.query("SELECT indisvalid::text FROM pg_index WHERE indexrelid = to_regclass('users_scim_user_name')", []).first?[0].text == "true")
        // The table is empty, so a scan would be cheaper: forbid it to see that the index fits the query.
        _ = try db.query("SET enable_seqscan = off", [])
        let plan = try db.query("EXPLAIN SELECT u.id FROM users u" + SQLStore.directoryNameFilter(postgres: true).replacingOccurrences(of: "?", with: "'x'"), [])
        let text = plan.compactMap { $0.first?.text }.joined(separator: "\n")
        #expect(text.contains("users_scim_user_name") && !text.contains("Seq Scan"), "\(text)")
    }
}
