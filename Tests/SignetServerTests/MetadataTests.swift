import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// Auth0's `app_metadata` and `user_metadata`: set by operators at creation and by `PATCH`,
/// merged at the top level; the owner's `user_metadata` changed at `/me/metadata`; kept
/// through an export and an import into another deployment.
@Suite struct MetadataTests {
    @Test("operators: made with both, merged by PATCH (null removes a key), shown, audited by name; bad ones refused")
    func operators() throws {
        let server = try TestServer.withOperators()
        let token = try server.managementToken()
        let made = try server.api("POST", "/api/v2/users", token: token, .object([
            "email": .string("ada@example.com"), "app_metadata": .object(["roles": .array([.string("admin")]), "plan": .string("pro")]),
            "user_metadata": .object(["theme": .string("dark")]),
        ]))
        #expect(made.status == 201 && made.json["app_metadata"]?["plan"] == .string("pro") && made.json["user_metadata"]?["theme"] == .string("dark"), "\(made.json.serialized)")
        let id = try #require(made.json["user_id"]?.string)
        let patched = try server.api("PATCH", "/api/v2/users/\(id)", token: token, .object(["app_metadata": .object(["plan": .null, "seats": .number("5")])]))
        #expect(patched.status == 200 && patched.json["app_metadata"] == .object(["roles": .array([.string("admin")]), "seats": .number("5")]), "\(patched.json.serialized)")
        #expect(patched.json["user_metadata"] == .object(["theme": .string("dark")]))
        let read = try server.api("GET", "/api/v2/users/\(id)", token: token)
        #expect(read.json["app_metadata"] == patched.json["app_metadata"])
        let events = try server.store.auditEvents(limit: 5)
        #expect(events.contains { $0.kind == AuditKind.adminUserUpdated.rawValue && $0.detail == "changed: app_metadata" && $0.detail?.contains("seats") == false })
        // Everything removed: absent, not an empty object.
        let cleared = try server.api("PATCH", "/api/v2/users/\(id)", token: token, .object(["user_metadata": .object(["theme": .null])]))
        #expect(cleared.status == 200 && cleared.json["user_metadata"] == nil)
        // Refused, changing nothing: not an object, an empty key, more than 16 KiB, at creation too.
        for body: JSONValue in [.object(["app_metadata": .string("admin")]), .object(["app_metadata": .array([])]), .object(["app_metadata": .object(["": .bool(true)])]),
                                .object(["user_metadata": .object(["big": .string(String(repeating: "x", count: 17 * 1024))])])] {
            let refused = try server.api("PATCH", "/api/v2/users/\(id)", token: token, body)
            #expect(refused.status == 400 && refused.json["reason"] == .string("malformed"), "\(body.serialized.prefix(80))")
        }
        let bad = try server.api("POST", "/api/v2/users", token: token, .object(["email": .string("bo@example.com"), "user_metadata": .number("1")]))
        let notMade = try server.store.user(email: "bo@example.com")
        #expect(bad.status == 400 && notMade == nil)
        #expect(try server.api("GET", "/api/v2/users/\(id)", token: token).json["app_metadata"] == patched.json["app_metadata"])
    }

    @Test("search by metadata: q=app_metadata.PATH:\"VALUE\" finds the accounts holding that string; bad forms are 400")
    func search() throws {
        let server = try TestServer.withOperators()
        let token = try server.managementToken()
        for (email, plan) in [("a@example.com", "pro"), ("b@example.com", "free"), ("c@example.com", "pro")] {
            #expect(try server.api("POST", "/api/v2/users", token: token, .object(["email": .string(email), "app_metadata": .object(["plan": .string(plan)])])).status == 201)
        }
        let found = try server.api("GET", "/api/v2/users?q=app_metadata.plan%3A%22pro%22&include_totals=true", token: token)
        #expect(found.status == 200 && found.json["total"] == .number("2"), "\(found.json.serialized)")
        #expect(Set(found.json["users"]?.array?.compactMap { $0["email"]?.string } ?? []) == ["a@example.com", "c@example.com"])
        for q in ["app_metadata.plan:pro", "app_metadata.:%22x%22", "app_metadata.a..b:%22x%22", "app_metadata.a$b:%22x%22", "app_metadata.a.b.c.d.e.f:%22x%22",
                  "app_metadata.plan:%22p%22o%22"] {
            let refused = try server.api("GET", "/api/v2/users?q=\(q)", token: token)
            #expect(refused.status == 400 && refused.json["reason"] == .string("malformed"), "\(q)")
        }
    }

    @Test("signet admin users update --app-metadata merges, users show prints both on a line each; bad JSON exits 2, changing nothing")
    func commandLine() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "cli@example.com")
        _ = try account.call("PATCH", "/me/metadata", .object(["user_metadata": .object(["theme": .string("dark")])]))
        let user = try #require(try server.store.user(email: "cli@example.com"))
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        func admin(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
            try OperationsTests.signet(["admin", "users"] + arguments + database, in: server.directory)
        }
        let updated = try admin(["update", user.id, "--app-metadata", #"{"roles": ["admin"], "plan": "pro"}"#])
        #expect(updated.status == 0 && updated.output.contains(#"app_metadata  {"plan":"pro","roles":["admin"]}"#), "\(updated.output)\(updated.errors)")
        #expect(try admin(["update", user.id, "--app-metadata", #"{"plan": null}"#]).output.contains(#"{"roles":["admin"]}"#))
        let shown = try admin(["show", user.id])
        #expect(shown.output.contains(#"app_metadata  {"roles":["admin"]}"#) && shown.output.contains(#"user_metadata {"theme":"dark"}"#), "\(shown.output)")
        for bad in [["update", user.id, "--app-metadata", "[1]"], ["update", user.id, "--app-metadata", "{"], ["update", user.id]] {
            #expect(try admin(bad).status == 2, "\(bad)")
        }
        #expect(try server.store.managedUser(id: user.id)?.appMetadata == #"{"roles":["admin"]}"#)
        #expect(try server.store.auditEvents(limit: 5).contains { $0.kind == AuditKind.adminUserUpdated.rawValue && $0.clientID == "signet-admin" })
    }

    @Test("the owner: reads both, merges user_metadata, cannot touch app_metadata; the operator sees the owner's change")
    func owner() throws {
        let server = try TestServer.withOperators()
        let account = try SignedIn(server, email: "grace@example.com")
        #expect(try account.call("GET", "/me/metadata").json == .object([:]))
        let set = try account.call("PATCH", "/me/metadata", .object(["user_metadata": .object(["theme": .string("light"), "lang": .string("es")])]))
        #expect(set.status == 200 && set.json["user_metadata"] == .object(["theme": .string("light"), "lang": .string("es")]))
        let merged = try account.call("PATCH", "/me/metadata", .object(["user_metadata": .object(["lang": .null])]))
        #expect(merged.json["user_metadata"] == .object(["theme": .string("light")]))
        for body: JSONValue in [.object(["app_metadata": .object(["roles": .array([.string("admin")])])]), .object(["user_metadata": .string("x")]), .object([:]),
                                .object(["user_metadata": .object(["theme": .string("dark")]), "app_metadata": .object([:])])] {
            let refused = try account.call("PATCH", "/me/metadata", body)
            #expect(refused.status == 400 && refused.json["reason"] == .string("malformed"), "\(body.serialized)")
        }
        let user = try #require(try server.store.user(email: "grace@example.com"))
        let seen = try server.api("GET", "/api/v2/users/\(user.id)", token: try server.managementToken())
        #expect(seen.json["user_metadata"] == .object(["theme": .string("light")]) && seen.json["app_metadata"] == nil)
        #expect(try server.get("/me/metadata").status == 401)
    }

    @Test("a change made from a stale read is refused: the store writes metadata only over what it was merged from")
    func staleMerge() throws {
        let server = try TestServer()
        let account = try SignedIn(server, email: "stale@example.com")
        _ = try account.call("PATCH", "/me/metadata", .object(["user_metadata": .object(["a": .number("1")])]))
        let user = try #require(try server.store.user(email: "stale@example.com"))
        let stale = UserChange(userMetadata: MetadataChange(from: nil, to: #"{"b":2}"#))
        #expect(throws: StoreError.self) { _ = try server.store.updateUser(id: user.id, stale, at: 1, writes: []) }
        #expect(try server.store.managedUser(id: user.id)?.userMetadata == #"{"a":1}"#)
        let fresh = UserChange(userMetadata: MetadataChange(from: #"{"a":1}"#, to: #"{"a":1,"b":2}"#))
        #expect(try server.store.updateUser(id: user.id, fresh, at: 2, writes: [])?.userMetadata == #"{"a":1,"b":2}"#)
    }

    @Test("export --all, then import into another deployment: the metadata comes along; the owner's export has it")
    func moves() throws {
        let server = try TestServer.withOperators()
        let token = try server.managementToken()
        let made = try server.api("POST", "/api/v2/users", token: token, .object([
            "email": .string("lin@example.com"), "app_metadata": .object(["tier": .string("gold"), "limits": .object(["seats": .number("3")])]),
            "user_metadata": .object(["tz": .string("Europe/Madrid")]),
        ]))
        let id = try #require(made.json["user_id"]?.string)
        let file = server.directory.appendingPathComponent("users.jsonl")
        let exported = try OperationsTests.signet(["admin", "users", "export", "--all", "--out", file.path, "--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path],
                                                  in: server.directory)
        #expect(exported.status == 0, "\(exported.errors)")
        let other = try TestServer.withOperators()
        let imported = try OperationsTests.signet(["admin", "users", "import", file.path, "--database", "sqlite:" + other.directory.appendingPathComponent("signet.db").path],
                                                  in: other.directory)
        #expect(imported.status == 0, "\(imported.output)\(imported.errors)")
        let moved = try #require(try other.store.user(email: "lin@example.com"))
        let there = try other.api("GET", "/api/v2/users/\(moved.id)", token: try other.managementToken())
        #expect(there.json["app_metadata"] == made.json["app_metadata"] && there.json["user_metadata"] == made.json["user_metadata"], "\(there.json.serialized)")
        let document = try server.api("GET", "/api/v2/users/\(id)/export", token: token)
        #expect(document.json["account"]?["app_metadata"]?["tier"] == .string("gold") && document.json["account"]?["user_metadata"]?["tz"] == .string("Europe/Madrid"))
    }
}
