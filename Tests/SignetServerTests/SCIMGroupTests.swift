import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// SCIM Groups: an identity provider's groups pushed as roles, their members its accounts.
@Suite struct SCIMGroupTests {
    static func json(_ text: String) throws -> JSONValue { try StrictJSON().parse(Array(text.utf8)) }

    static func patch(_ operations: String) throws(SCIM.Failure) -> SCIM.GroupInput {
        try SCIM.groupPatch((try? json(#"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": \#(operations)}"#)) ?? .null)
    }

    @Test("Group bodies and PATCHes as Entra and Okta send them: members added, removed by value or by filter, replaced; later operations win; refusals")
    func grammar() throws {
        let body = try SCIM.group(Self.json(#"""
            {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "Tellers", "externalId": "8c1f", "members": [{"value": "u1", "display": "Ada"}, {"value": "u2"}]}
            """#))
        #expect(body == SCIM.GroupInput(displayName: "Tellers", externalID: .some("8c1f"), members: ["u1", "u2"]))
        // Entra: add and remove with values; Okta: remove by filter, rename with an object.
        #expect(try Self.patch(#"[{"op": "Add", "path": "members", "value": [{"value": "u3"}]}, {"op": "Remove", "path": "members", "value": [{"value": "u1"}]}]"#)
                == SCIM.GroupInput(adding: ["u3"], removing: ["u1"]))
        #expect(try Self.patch(#"[{"op": "remove", "path": "members[value eq \"u2\"]"}, {"op": "replace", "value": {"id": "rol_x", "displayName": "Branch"}}]"#)
                == SCIM.GroupInput(displayName: "Branch", removing: ["u2"]))
        #expect(try Self.patch(#"[{"op": "Replace", "path": "displayName", "value": "B"}, {"op": "Replace", "path": "externalId", "value": null}]"#)
                == SCIM.GroupInput(displayName: "B", externalID: .some(nil)))
        // Later operations win; a replace starts the list again.
        #expect(try Self.patch(#"[{"op": "add", "path": "members", "value": [{"value": "u1"}]}, {"op": "remove", "path": "members", "value": [{"value": "u1"}]}]"#)
                == SCIM.GroupInput(removing: ["u1"]))
        #expect(try Self.patch(#"[{"op": "remove", "path": "members", "value": [{"value": "u1"}]}, {"op": "add", "path": "members", "value": [{"value": "u1"}, {"value": "u1"}]}]"#)
                == SCIM.GroupInput(adding: ["u1"]))
        #expect(try Self.patch(#"[{"op": "add", "path": "members", "value": [{"value": "u1"}]}, {"op": "replace", "path": "members", "value": [{"value": "u2"}]}]"#)
                == SCIM.GroupInput(members: ["u2"]))
        let thousand = "[" + (0..<1_000).map { #"{"value": "u\#($0)"}"# }.joined(separator: ",") + "]"
        #expect(try Self.patch(#"[{"op": "add", "path": "members", "value": \#(thousand)}]"#).adding.count == 1_000)
        for (bad, scimType) in [
            (#"[{"op": "add", "path": "members", "value": \#(thousand)}, {"op": "remove", "path": "members", "value": [{"value": "x"}]}]"#, "tooMany"),
            (#"[{"op": "remove", "path": "members"}]"#, "noTarget"), (#"[{"op": "remove", "path": "displayName"}]"#, "mutability"),
            (#"[{"op": "add", "path": "members", "value": [{"display": "no value"}]}]"#, "invalidValue"),
            (#"[{"op": "add", "path": "members", "value": [{"value": ""}]}]"#, "invalidValue"),
            (#"[{"op": "add", "path": "members", "value": {"value": "u1"}}]"#, "invalidValue"),
            (#"[{"op": "replace", "path": "displayName", "value": null}]"#, "invalidValue"),
            (#"[{"op": "replace", "path": "owners", "value": "x"}]"#, "invalidPath"), (#"[{"op": "copy", "path": "members"}]"#, "invalidSyntax"), ("[]", "invalidSyntax"),
            (#"[{"op": "replace", "path": "members\u0007", "value": []}]"#, "invalidPath"),
        ] {
            do {
                _ = try Self.patch(bad)
                Issue.record("accepted: \(bad.prefix(80))")
            } catch {
                #expect(error.scimType == scimType, "\(bad.prefix(80)): \(error.error.detail)")
            }
        }
        #expect(throws: SCIM.Failure.self) { try SCIM.group(Self.json(#"{"displayName": "no schemas"}"#)) }
        #expect(try SCIM.filter(#"displayName eq "Tellers""#) == .displayName("Tellers"))
    }

    @Test("over HTTP with durable SQLite (writes wait for their shared commit), a group's answer shows what the request just wrote: its members and its new name")
    func answersReadTheirWrites() throws {
        let server = try TestServer.withOperators(.socket) { c in c.scimTokenHash = Digest.sha256.hash(Array(SCIMTests.token.utf8)) }
        func scim(_ method: String, _ path: String, _ body: String) throws -> JSONValue {
            let response = try server.send(method, "/scim/v2" + path, headers: [("Authorization", "Bearer " + SCIMTests.token), ("Content-Type", "application/scim+json")],
                                           body: Array(body.utf8))
            return (try? StrictJSON().parse(response.body)) ?? .null
        }
        func user(_ email: String) throws -> String {
            try #require(try scim("POST", "/Users", #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "\#(email)"}"#)["id"]?.string)
        }
        let ada = try user("ada@bank.example"), grace = try user("grace@bank.example")
        for round in 0..<10 {
            let made = try scim("POST", "/Groups", #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "Tellers \#(round)", "members": [{"value": "\#(ada)"}]}"#)
            #expect(made["members"]?.array?.compactMap { $0["value"]?.string } == [ada], "\(made.serialized)")
            let id = try #require(made["id"]?.string)
            let put = try scim("PUT", "/Groups/\(id)", #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "Clerks \#(round)", "members": [{"value": "\#(grace)"}]}"#)
            #expect(put["displayName"] == .string("Clerks \(round)") && put["members"]?.array?.compactMap { $0["value"]?.string } == [grace], "\(put.serialized)")
        }
    }

    @Test("a provider's round: a group pushed with members becomes a role; found by name in any case and by externalId; members added and removed as Entra and Okta do; renamed; replaced by PUT; deleted; each account's change audited as scim", arguments: [TestServer.Transport.inProcess, .socket])
    func round(_ transport: TestServer.Transport) throws {
        let server = try TestServer.withOperators(transport) { c in
            c.scimTokenHash = Digest.sha256.hash(Array(SCIMTests.token.utf8))
            c.apiPermissions = [RoleTests.api: RoleTests.permissions]
        }
        func scim(_ method: String, _ path: String, _ body: String? = nil) throws -> (status: Int, json: JSONValue, response: HTTPClient.Response) {
            let response = try server.send(method, "/scim/v2" + path, headers: [("Authorization", "Bearer " + SCIMTests.token), ("Content-Type", "application/scim+json")],
                                           body: Array((body ?? "").utf8))
            return (response.status, (try? StrictJSON().parse(response.body)) ?? .null, response)
        }
        func user(_ email: String) throws -> String {
            try #require(try scim("POST", "/Users", #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "\#(email)"}"#).json["id"]?.string)
        }
        func members(_ id: String) throws -> [String] { try scim("GET", "/Groups/\(id)").json["members"]?.array?.compactMap { $0["value"]?.string } ?? [] }
        func patch(_ id: String, _ operations: String) throws -> Int {
            try scim("PATCH", "/Groups/\(id)", #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": \#(operations)}"#).status
        }
        let phone = Phone(server)
        let ada = try #require(jwtClaims(try phone.signUp(email: "ada@bank.example")["access_token"]?.string)["sub"]?.string)
        let grace = try user("grace@bank.example"), lin = try user("lin@bank.example")

        let made = try scim("POST", "/Groups", #"""
            {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "Tellers", "externalId": "8c1f", "members": [{"value": "\#(ada)"}]}
            """#)
        #expect(made.status == 201 && made.json["displayName"] == .string("Tellers") && made.json["externalId"] == .string("8c1f"), "\(made.json.serialized)")
        let id = try #require(made.json["id"]?.string)
        #expect(made.response.headers["location"] == "https://signet.test/scim/v2/Groups/\(id)")
        #expect(made.json["members"] == .array([.object(["value": .string(ada), "display": .string("ada@bank.example"), "$ref": .string("https://signet.test/scim/v2/Users/\(ada)")])]))
        // The same role the Management API shows; the operator grants what it may do.
        let ops = try server.managementToken()
        #expect(try server.api("GET", "/api/v2/roles/\(id)", token: ops).json["name"] == .string("Tellers"))
        #expect(try server.api("POST", "/api/v2/roles/\(id)/permissions", token: ops, .object(["permissions": .array([
            .object(["resource_server_identifier": .string(RoleTests.api), "permission_name": .string("read:reports")]),
        ])])).status == 201)
        let tokens = try RoleTests.signIn(server, phone)
        #expect(jwtClaims(tokens["access_token"]?.string)["permissions"] == .array([.string("read:reports")]))

        // Found as providers look: by name in any case (Entra without members), by externalId.
        let byName = try scim("GET", "/Groups?excludedAttributes=members&filter=" + Ceremonies.formEncoded(#"displayName eq "TELLERS""#)).json
        #expect(byName["totalResults"] == .int(1) && byName["Resources"]?.array?.first?["id"] == .string(id) && byName["Resources"]?.array?.first?["members"] == nil)
        #expect(try scim("GET", "/Groups?filter=" + Ceremonies.formEncoded(#"externalId eq "8c1f""#)).json["Resources"]?.array?.count == 1)
        #expect(try scim("GET", "/Groups?filter=" + Ceremonies.formEncoded(#"displayName eq "Auditors""#)).json["totalResults"] == .int(0))
        #expect(try scim("GET", "/Groups?filter=" + Ceremonies.formEncoded(#"userName eq "x""#)).json["scimType"] == .string("invalidFilter"))
        #expect(try scim("GET", "/Users?filter=" + Ceremonies.formEncoded(#"displayName eq "x""#)).json["scimType"] == .string("invalidFilter"))
        #expect(try scim("GET", "/Groups").json["Resources"]?.array?.count == 1)

        // Entra adds and removes with values; Okta removes by filter.
        #expect(try patch(id, #"[{"op": "Add", "path": "members", "value": [{"value": "\#(grace)"}, {"value": "\#(lin)"}]}]"#) == 200)
        #expect(try members(id).first == ada && Set(members(id)) == [ada, grace, lin])
        #expect(try patch(id, #"[{"op": "Remove", "path": "members", "value": [{"value": "\#(ada)"}]}]"#) == 200)
        #expect(try patch(id, #"[{"op": "remove", "path": "members[value eq \"\#(grace)\"]"}]"#) == 200)
        #expect(try members(id) == [lin])
        // Ada's next refresh no longer has what the group granted.
        #expect(jwtClaims(try RoleTests.refresh(server, tokens)["access_token"]?.string)["permissions"] == .array([]))
        // An account that is not there: refused, nothing changed.
        let unknown = try scim("PATCH", "/Groups/\(id)", #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "Add", "path": "members", "value": [{"value": "\#(ada)"}, {"value": "nobody"}]}]}"#)
        #expect(unknown.status == 404 && unknown.json["scimType"] == .string("invalidValue") && unknown.json["reason"] == .string("user_unknown"), "\(unknown.json.serialized)")
        #expect(try members(id) == [lin])
        // ... with a rename in the same request: neither happens.
        let both = try scim("PATCH", "/Groups/\(id)", #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "Replace", "path": "displayName", "value": "Renamed"}, {"op": "Add", "path": "members", "value": [{"value": "nobody"}]}]}"#)
        #expect(try both.status == 404 && scim("GET", "/Groups/\(id)").json["displayName"] == .string("Tellers"))

        // Renamed; replaced whole by PUT; the same PUT again changes nothing and writes nothing.
        #expect(try patch(id, #"[{"op": "Replace", "path": "displayName", "value": "Branch tellers"}]"#) == 200)
        let put = #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "Branch tellers", "externalId": "8c1f", "members": [{"value": "\#(ada)"}, {"value": "\#(grace)"}]}"#
        let replaced = try scim("PUT", "/Groups/\(id)", put)
        #expect(replaced.status == 200 && replaced.json["displayName"] == .string("Branch tellers") && replaced.json["members"]?.array?.count == 2, "\(replaced.json.serialized)")
        #expect(try Set(members(id)) == [ada, grace])
        // Each member's User lists the Group (RFC 7643 §4.1.2), read-only; one in none lists none.
        let shown = try scim("GET", "/Users/\(grace)").json
        #expect(shown["groups"] == .array([.object(["value": .string(id), "display": .string("Branch tellers"), "$ref": .string("https://signet.test/scim/v2/Groups/\(id)"),
                                                    "type": .string("direct")])]), "\(shown.serialized)")
        #expect(try scim("GET", "/Users/\(lin)").json["groups"] == nil)
        #expect(try scim("GET", "/Users?filter=" + Ceremonies.formEncoded(#"userName eq "grace@bank.example""#)).json["Resources"]?.array?.first?["groups"] == shown["groups"])
        let readOnly = try scim("PATCH", "/Users/\(lin)", #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "add", "path": "groups", "value": [{"value": "\#(id)"}]}]}"#)
        #expect(readOnly.status == 400 && readOnly.json["scimType"] == .string("mutability"), "\(readOnly.json.serialized)")
        #expect(try members(id).contains(lin) == false)
        let events = try server.store.auditEvents(limit: 1000).count
        #expect(try scim("PUT", "/Groups/\(id)", put).status == 200)
        #expect(try server.store.auditEvents(limit: 1000).count == events)
        // Audited on each account's history as the client scim: Lin's own record shows the group given and taken.
        let lins = try server.store.auditEntries(AuditQuery(userID: lin, limit: 10)).map(\.event).filter { $0.kind == "admin_user_roles_changed" }
        #expect(lins.map { $0.detail ?? "" } == ["roles taken: Branch tellers (\(id))", "roles given: Tellers (\(id))"] && lins.allSatisfy { $0.clientID == "scim" }, "\(lins.map(\.detail))")

        // A name another role has is SCIM's uniqueness; nothing made.
        let clash = try scim("POST", "/Groups", #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "Branch tellers"}"#)
        #expect(clash.status == 409 && clash.json["scimType"] == .string("uniqueness") && clash.json["reason"] == .string("conflict"), "\(clash.json.serialized)")
        let unnamed = try scim("POST", "/Groups", #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "members": []}"#)
        #expect(unnamed.status == 400 && unnamed.json["scimType"] == .string("invalidValue"))
        // An account deleted leaves the group; the group deleted leaves the role list.
        #expect(try scim("DELETE", "/Users/\(grace)").status == 204)
        #expect(try members(id) == [ada])
        #expect(try scim("DELETE", "/Groups/\(id)").status == 204)
        let gone = try scim("GET", "/Groups/\(id)")
        #expect(gone.status == 404 && gone.json["reason"] == .string("role_not_found") && gone.json["schemas"] == .array([.string(SCIM.errorSchema)]))
        #expect(try server.api("GET", "/api/v2/users/\(ada)/roles", token: ops).json == .array([]))
        // A token without the roles scopes cannot reach Groups; one with update:roles alone may rename a Group, not change its members.
        let reader = try server.managementToken("reader", secret: TestServer.readerSecret)
        #expect(try server.send("GET", "/scim/v2/Groups", headers: [("Authorization", "Bearer " + reader)]).status == 403)
        let other = try #require(try scim("POST", "/Groups", #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "Auditors"}"#).json["id"]?.string)
        let renamer = try server.managementToken(scope: "update:roles")
        func patchWith(_ token: String, _ operations: String) throws -> (status: Int, json: JSONValue) {
            let response = try server.send("PATCH", "/scim/v2/Groups/\(other)", headers: [("Authorization", "Bearer " + token), ("Content-Type", "application/scim+json")],
                                           body: Array(#"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": \#(operations)}"#.utf8))
            return (response.status, (try? StrictJSON().parse(response.body)) ?? .null)
        }
        #expect(try patchWith(renamer, #"[{"op": "Replace", "path": "displayName", "value": "Audit"}]"#).status == 200)
        let refused = try patchWith(renamer, #"[{"op": "Add", "path": "members", "value": [{"value": "\#(ada)"}]}]"#)
        #expect(refused.status == 403 && refused.json["reason"] == .string("insufficient_scope"), "\(refused.json.serialized)")
        #expect(try members(other).isEmpty)
    }
}
