import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// SCIM 2.0 provisioning (RFC 7644) at `/scim/v2`: the grammar it reads, and an identity
/// provider's calls against a real server.
@Suite struct SCIMTests {
    static let token = "scim-token-kept-by-the-identity-provider-0123456789"

    /// Over a socket too: there the answers wait for their writes' shared commit, as in production.
    static func server(_ transport: TestServer.Transport = .inProcess) throws -> TestServer {
        try TestServer.withOperators(transport) { $0.scimTokenHash = Digest.sha256.hash(Array(token.utf8)) }
    }

    static func json(_ text: String) throws -> JSONValue { try StrictJSON().parse(Array(text.utf8)) }

    @Test("scim.token_hash: from the file or the environment, sha256 of 32 bytes; anything else refused with how to make one")
    func configuration() throws {
        let hash = "sha256:" + Base64URL.encode(Digest.sha256.hash(Array(Self.token.utf8)))
        let base = #""relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x"}]"#
        let file = try ConfigurationLoader.load(file: try ConfigurationTests.write("{\(base), \"scim\": {\"token_hash\": \"\(hash)\"}}"), environment: [:])
        #expect(file.scimTokenHash == Digest.sha256.hash(Array(Self.token.utf8)))
        let environment = try ConfigurationLoader.load(file: try ConfigurationTests.write("{\(base)}"), environment: ["SIGNET_SCIM_TOKEN_HASH": hash])
        #expect(environment.scimTokenHash == file.scimTokenHash)
        #expect(try ConfigurationLoader.load(file: try ConfigurationTests.write("{\(base)}"), environment: [:]).scimTokenHash == nil)
        for bad in ["sha256:short", Self.token, "sha1:" + Base64URL.encode(Array(repeating: 1, count: 32))] {
            do {
                _ = try ConfigurationLoader.load(file: try ConfigurationTests.write("{\(base)}"), environment: ["SIGNET_SCIM_TOKEN_HASH": bad])
                Issue.record("accepted: \(bad)")
            } catch let error as ConfigurationError {
                #expect(error.message.contains("scim.token_hash must be sha256:") && error.message.contains("signet client-secret"))
            }
        }
    }

    @Test("scim.email_verified: off, a provider's address waits for its first code, and a PUT that sends the address the account has leaves it verified; on, the provider's addresses count as verified")
    func emailVerified() throws {
        let base = #""relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x"}]"#
        #expect(try ConfigurationLoader.load(file: try ConfigurationTests.write("{\(base), \"scim\": {\"email_verified\": true}}"), environment: [:]).scimEmailVerified)
        #expect(try ConfigurationLoader.load(file: try ConfigurationTests.write("{\(base)}"), environment: ["SIGNET_SCIM_EMAIL_VERIFIED": "true"]).scimEmailVerified)
        #expect(try !ConfigurationLoader.load(file: try ConfigurationTests.write("{\(base)}"), environment: [:]).scimEmailVerified)

        for trusted in [false, true] {
            let server = try TestServer.withOperators { c in
                c.scimTokenHash = Digest.sha256.hash(Array(Self.token.utf8))
                c.scimEmailVerified = trusted
            }
            func scim(_ method: String, _ path: String, _ body: String) throws -> (status: Int, json: JSONValue) {
                let response = try server.send(method, "/scim/v2" + path, headers: [("Authorization", "Bearer " + Self.token), ("Content-Type", "application/scim+json")],
                                               body: Array(body.utf8))
                return (response.status, (try? StrictJSON().parse(response.body)) ?? .null)
            }
            let user = #""schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "name": {"formatted": "Ada Lovelace"}"#
            let created = try scim("POST", "/Users", "{\(user), \"userName\": \"ada@example.com\"}")
            let id = try #require(created.json["id"]?.string, "\(created.json.serialized)")
            func verified() throws -> Bool? { try server.store.user(id: id)?.emailVerified }
            #expect(try verified() == trusted, "trusted: \(trusted)")
            // The owner shows the address is theirs (as their first email code would).
            #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: try server.managementToken(), .object(["email_verified": .bool(true)])).status == 200)
            // The provider's next sync sends the whole user again, the address in another case: nothing about it changes.
            #expect(try scim("PUT", "/Users/\(id)", "{\(user), \"userName\": \"ADA@example.com\", \"active\": true}").status == 200)
            #expect(try verified() == true, "trusted: \(trusted)")
            // A new address: unverified until its first code, unless the provider is trusted.
            let moved = try scim("PUT", "/Users/\(id)", "{\(user), \"userName\": \"ada.lovelace@example.com\"}")
            #expect(moved.status == 200 && moved.json["userName"] == .string("ada.lovelace@example.com"), "\(moved.json.serialized)")
            #expect(try verified() == trusted, "trusted: \(trusted)")
        }
    }

    @Test("filters: ATTRIBUTE eq \"VALUE\" for userName, emails, externalId and id, in any case; anything else is invalidFilter")
    func filters() throws {
        #expect(try SCIM.filter(#"userName eq "ada@example.com""#) == .userName("ada@example.com"))
        #expect(try SCIM.filter(#"USERNAME EQ "ada@example.com""#) == .userName("ada@example.com"))
        #expect(try SCIM.filter(#"emails.value eq "a\"b@example.com""#) == .email(#"a"b@example.com"#))
        #expect(try SCIM.filter(#"Emails eq "a@example.com""#) == .email("a@example.com"))
        #expect(try SCIM.filter(#"externalId eq "00u1""#) == .externalID("00u1"))
        #expect(try SCIM.filter(#"id eq "u-1""#) == .id("u-1"))
        for bad in [#"userName co "ada""#, #"userName eq ada"#, #"userName eq """#, #"name eq "x""#, #"userName eq "a" and id eq "b""#, "userName",
                    #"userName eq "unterminated"#, String(repeating: "a", count: 600), #"userName  eq "x""#, ""] {
            do {
                _ = try SCIM.filter(bad)
                Issue.record("accepted: \(bad.prefix(40))")
            } catch {
                #expect(error.scimType == "invalidFilter" && error.error.reason == .malformed)
            }
        }
    }

    @Test("bodies: the User schema named; userName and the primary email read apart, userName bounded; the name from displayName, formatted or its parts; active as Entra sends it too")
    func bodies() throws {
        let okta = try SCIM.user(Self.json(#"""
            {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "Ada@Example.com", "externalId": "00u1",
             "name": {"givenName": "Ada", "familyName": "Lovelace"}, "emails": [{"primary": true, "value": "ada@example.com", "type": "work"}],
             "active": true, "locale": "en-US", "password": "ignored"}
            """#))
        #expect(okta == SCIM.UserInput(userName: "Ada@Example.com", email: "ada@example.com", name: "Ada Lovelace", active: true, externalID: .some("00u1"), language: "en-US"))
        let entra = try SCIM.user(Self.json(#"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "USERNAME": "grace@example.com", "displayName": "Grace H", "active": "False"}"#))
        #expect(entra == SCIM.UserInput(userName: "grace@example.com", name: "Grace H", active: false))
        // Entra's default: the user principal name, and the mailbox apart; only emails: the address alone.
        let upn = try SCIM.user(Self.json(#"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "jdoe@corp.onmicrosoft.com", "emails": [{"type": "work", "value": "jane.doe@corp.example"}]}"#))
        #expect(upn == SCIM.UserInput(userName: "jdoe@corp.onmicrosoft.com", email: "jane.doe@corp.example"))
        #expect(try SCIM.user(Self.json(#"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "emails": [{"value": "a@example.com"}]}"#)) == SCIM.UserInput(email: "a@example.com"))
        #expect(try SCIM.user(Self.json(#"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "\#(String(repeating: "é", count: 128))"}"#)).userName?.utf8.count == 256)
        // preferredLanguage before locale; one that is no language tag is passed over, never refused.
        func language(_ members: String) throws -> String? {
            try SCIM.user(Self.json(#"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "a@example.com", \#(members)}"#)).language
        }
        #expect(try language(#""preferredLanguage": "fr-CA", "locale": "en-US""#) == "fr-CA" && language(#""locale": "es_MX""#) == "es_MX")
        for bad in [#""preferredLanguage": "f""#, #""preferredLanguage": "fr;q=1""#, #""preferredLanguage": 7"#, #""locale": "fr FR""#] {
            #expect(try language(bad) == nil, "\(bad)")
        }
        for (bad, scimType) in [
            (#"{"userName": "a@example.com"}"#, "invalidSyntax"),
            (#"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": ""}"#, "invalidValue"),
            (#"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "\#(String(repeating: "é", count: 128))x"}"#, "invalidValue"),
            (#"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "jdoe\u0007"}"#, "invalidValue"),
            (#"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "jdoe\u0085"}"#, "invalidValue"),
            (#"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": 7}"#, "invalidValue"),
            (#"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "a@example.com", "active": "maybe"}"#, "invalidValue"),
            (#"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "emails": "a@example.com"}"#, "invalidValue"),
        ] {
            let body = try Self.json(bad)
            do throws(SCIM.Failure) {
                _ = try SCIM.user(body)
                Issue.record("accepted: \(bad)")
            } catch {
                #expect(error.scimType == scimType, "\(bad): \(error.error.detail)")
            }
        }
    }

    @Test("PATCH: add and replace by path or by an object, in any case; remove of externalId and of the name; attributes Signet does not keep passed over; later operations win; at most 100")
    func patches() throws {
        func patch(_ operations: String) throws(SCIM.Failure) -> SCIM.UserInput {
            try SCIM.patch((try? Self.json(#"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": \#(operations)}"#)) ?? .null)
        }
        #expect(try patch(#"[{"op": "Replace", "path": "active", "value": "False"}]"#) == SCIM.UserInput(active: false))
        #expect(try patch(#"[{"op": "replace", "value": {"active": false, "displayName": "Ada L"}}]"#) == SCIM.UserInput(name: "Ada L", active: false))
        #expect(try patch(#"[{"op": "add", "path": "name.givenName", "value": "Ada"}, {"op": "add", "path": "name.familyName", "value": "King"}]"#)
                == SCIM.UserInput(name: "Ada King"))
        #expect(try patch(#"[{"op": "replace", "path": "emails[type eq \"work\"].value", "value": "new@example.com"}, {"op": "remove", "path": "externalId"}]"#)
                == SCIM.UserInput(email: "new@example.com", externalID: .some(nil)))
        // userName and the address apart, by path and in an object.
        #expect(try patch(#"[{"op": "Replace", "path": "userName", "value": "jd@corp.onmicrosoft.com"}]"#) == SCIM.UserInput(userName: "jd@corp.onmicrosoft.com"))
        #expect(try patch(#"[{"op": "replace", "value": {"userName": "jd", "emails": [{"value": "j@corp.example"}]}}, {"op": "replace", "path": "emails[primary eq true].value", "value": "k@corp.example"}]"#)
                == SCIM.UserInput(userName: "jd", email: "k@corp.example"))
        #expect(try patch(#"[{"op": "replace", "path": "active", "value": false}, {"op": "replace", "path": "active", "value": true}]"#).active == true)
        // What an identity provider's default mapping sends beside them, which Signet does not keep: passed over.
        #expect(try patch(#"""
            [{"op": "Replace", "path": "title", "value": "Engineer"}, {"op": "Add", "path": "phoneNumbers[type eq \"work\"].value", "value": "+1 555 0100"},
             {"op": "Replace", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", "value": "R&D"},
             {"op": "Remove", "path": "addresses[type eq \"work\"].locality"}, {"op": "Replace", "path": "preferredLanguage", "value": "fr-FR"},
             {"op": "Replace", "path": "active", "value": false}]
            """#) == SCIM.UserInput(active: false))
        #expect(try patch(#"[{"op": "Replace", "path": "title", "value": "Engineer"}]"#) == SCIM.UserInput())
        // A name removed: cleared.
        for path in ["displayName", "name.formatted", "name"] { #expect(try patch(#"[{"op": "Remove", "path": "\#(path)"}]"#) == SCIM.UserInput(name: "")) }
        // Later operations win: parts given after the removal name it again; a removal after them clears it.
        #expect(try patch(#"[{"op": "Remove", "path": "displayName"}, {"op": "Add", "path": "name.givenName", "value": "Ada"}]"#) == SCIM.UserInput(name: "Ada"))
        #expect(try patch(#"[{"op": "Add", "path": "name.givenName", "value": "Ada"}, {"op": "Remove", "path": "name"}]"#) == SCIM.UserInput(name: ""))
        let many = "[" + Array(repeating: #"{"op": "replace", "path": "active", "value": true}"#, count: 101).joined(separator: ",") + "]"
        for (bad, scimType) in [(#"[{"op": "remove", "path": "userName"}]"#, "mutability"), (#"[{"op": "replace", "path": "password", "value": "x"}]"#, "invalidPath"),
                                (#"[{"op": "move", "path": "active", "value": true}]"#, "invalidSyntax"), (#"[{"op": "replace", "value": "x"}]"#, "noTarget"),
                                (#"[{"op": "replace", "path": "active"}]"#, "invalidValue"), ("[]", "invalidSyntax"), (many, "invalidSyntax"),
                                (#"[{"op": "remove", "path": "name.givenName"}]"#, "mutability"), (#"[{"op": "remove", "path": "emails[type eq \"work\"].value"}]"#, "mutability"),
                                (#"[{"op": "remove", "path": "active"}]"#, "mutability"), (#"[{"op": "remove", "path": "password"}]"#, "mutability"),
                                (#"[{"op": "replace", "path": "title\u0007", "value": "x"}]"#, "invalidPath"),
                                (#"[{"op": "replace", "path": "userName", "value": "a\u0000b"}]"#, "invalidValue"), (#"[{"op": "replace", "path": "userName", "value": 7}]"#, "invalidValue"),
                                ("[{\"op\": \"replace\", \"path\": \"" + String(repeating: "a", count: 201) + "\", \"value\": \"x\"}]", "invalidPath")] {
            do {
                _ = try patch(bad)
                Issue.record("accepted: \(bad.prefix(60))")
            } catch {
                #expect(error.scimType == scimType, "\(bad.prefix(60)): \(error.error.detail)")
            }
        }
        #expect(throws: SCIM.Failure.self) { try SCIM.patch(Self.json(#"{"Operations": [{"op": "replace", "path": "active", "value": true}]}"#)) }
    }

    @Test("an identity provider's round: create, find by userName and externalId, list and page, deactivate (sessions end), rename, change the address, delete; audited as scim", arguments: [TestServer.Transport.inProcess, .socket])
    func provisioning(_ transport: TestServer.Transport) throws {
        let server = try Self.server(transport)
        func scim(_ method: String, _ path: String, _ body: String? = nil, token: String? = SCIMTests.token, type: String = "application/scim+json")
            throws -> (status: Int, json: JSONValue, response: HTTPClient.Response) {
            var headers: [(String, String)] = token.map { [("Authorization", "Bearer " + $0)] } ?? []
            if body != nil { headers.append(("Content-Type", type)) }
            let response = try server.send(method, "/scim/v2" + path, headers: headers, body: Array((body ?? "").utf8))
            return (response.status, (try? StrictJSON().parse(response.body)) ?? .null, response)
        }
        let staff = try SignedIn(server, email: "grace@example.com")
        let created = try scim("POST", "/Users", #"""
            {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "ada@example.com", "externalId": "00u1", "preferredLanguage": "fr-CA",
             "name": {"formatted": "Ada Lovelace"}, "emails": [{"primary": true, "value": "ada@example.com", "type": "work"}], "active": true}
            """#)
        #expect(created.status == 201 && created.response.headers["content-type"] == "application/scim+json", "\(created.json.serialized)")
        let id = try #require(created.json["id"]?.string)
        // Its messages go in the directory's language.
        #expect(try server.store.managedUser(id: id)?.user.locale == "fr")
        #expect(created.json["userName"] == .string("ada@example.com") && created.json["externalId"] == .string("00u1") && created.json["active"] == .bool(true))
        #expect(created.json["displayName"] == .string("Ada Lovelace") && created.json["emails"]?.array?.first?["value"] == .string("ada@example.com"))
        #expect(created.json["meta"]?["location"] == .string("https://signet.test/scim/v2/Users/\(id)") && created.response.headers["location"] == "https://signet.test/scim/v2/Users/\(id)")
        #expect(try scim("GET", "/Users/\(id)").json == created.json)
        let again = try scim("POST", "/Users", #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "ADA@example.com"}"#)
        #expect(again.status == 409 && again.json["scimType"] == .string("uniqueness") && again.json["reason"] == .string("user_exists") && again.json["status"] == .string("409"))
        #expect(again.json["schemas"] == .array([.string(SCIM.errorSchema)]))

        // Finding: by address (compared as addresses are), by the provider's ID, by Signet's; none.
        func found(_ filter: String) throws -> [String] {
            let answer = try scim("GET", "/Users?filter=" + Ceremonies.formEncoded(filter))
            try #require(answer.status == 200, "\(filter): \(answer.json.serialized)")
            #expect(answer.json["totalResults"]?.int64 == Int64(answer.json["Resources"]?.array?.count ?? -1))
            return answer.json["Resources"]?.array?.compactMap { $0["id"]?.string } ?? []
        }
        #expect(try found(#"userName eq "Ada@Example.com""#) == [id])
        #expect(try found(#"externalId eq "00u1""#) == [id])
        #expect(try found(#"id eq "\#(id)""#) == [id])
        #expect(try found(#"userName eq "nobody@example.com""#).isEmpty && found(#"userName eq "not an address""#).isEmpty && found(#"externalId eq "00u9""#).isEmpty)
        let invalid = try scim("GET", "/Users?filter=" + Ceremonies.formEncoded(#"userName sw "ada""#))
        #expect(invalid.status == 400 && invalid.json["scimType"] == .string("invalidFilter"))
        // Every account, paged from 1.
        let all = try scim("GET", "/Users?startIndex=1&count=1")
        #expect(all.json["totalResults"] == .int(2) && all.json["itemsPerPage"] == .int(1) && all.json["startIndex"] == .int(1))
        let second = try scim("GET", "/Users?startIndex=2&count=1").json["Resources"]?.array?.first?["id"]?.string
        #expect(second != nil && second != all.json["Resources"]?.array?.first?["id"]?.string)
        #expect(try scim("GET", "/Users?count=0").json["Resources"] == .array([]))

        // Deactivated (as Entra sends it): blocked, its sessions ended; active again, it signs in again.
        let grace = try #require(try found(#"userName eq "grace@example.com""#).first)
        #expect(try staff.call("GET", "/me/passkeys").status == 200)
        let off = try scim("PATCH", "/Users/\(grace)", #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "Replace", "path": "active", "value": "False"}]}"#)
        #expect(off.status == 200 && off.json["active"] == .bool(false), "\(off.json.serialized)")
        let refused = try staff.call("GET", "/me/passkeys")
        #expect(refused.status == 403 && refused.json["reason"] == .string("user_blocked"))
        let (session, credential, _) = try staff.phone.startSignIn()
        #expect(try staff.phone.exchange(session: session, credential: credential).json["reason"] == .string("user_blocked"))
        let on = try scim("PATCH", "/Users/\(grace)", #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "replace", "value": {"active": true}}]}"#)
        #expect(on.json["active"] == .bool(true))
        #expect(try staff.phone.signIn()["access_token"] != nil)
        // Renamed and readdressed with PUT; the provider's ID removed with PATCH.
        let put = try scim("PUT", "/Users/\(id)", #"""
            {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "ada.king@example.com", "emails": [{"value": "ada.king@example.com"}], "displayName": "Ada King"}
            """#)
        #expect(put.status == 200 && put.json["userName"] == .string("ada.king@example.com") && put.json["displayName"] == .string("Ada King") && put.json["externalId"] == .string("00u1"))
        #expect(try server.store.managedUser(id: id)?.user.email == "ada.king@example.com")
        let removed = try scim("PATCH", "/Users/\(id)", #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "remove", "path": "externalId"}]}"#)
        #expect(removed.status == 200 && removed.json["externalId"] == nil)
        // Entra's update of a title Signet does not keep: 200, the account as it was, nothing audited.
        let before = try server.store.auditEvents(limit: 100).count
        let title = try scim("PATCH", "/Users/\(id)", #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "Replace", "path": "title", "value": "Engineer"}]}"#)
        #expect(title.status == 200 && title.json["displayName"] == .string("Ada King") && title.json["title"] == nil, "\(title.json.serialized)")
        #expect(try server.store.auditEvents(limit: 100).count == before)
        // The name removed in the directory: cleared here.
        let unnamed = try scim("PATCH", "/Users/\(id)", #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "Remove", "path": "displayName"}]}"#)
        #expect(unnamed.status == 200 && unnamed.json["displayName"] == nil && unnamed.json["name"] == nil, "\(unnamed.json.serialized)")
        #expect(try server.store.managedUser(id: id)?.user.name == nil)
        // Deleted: gone, and then not found.
        #expect(try scim("DELETE", "/Users/\(id)").status == 204)
        let gone = try scim("GET", "/Users/\(id)")
        #expect(gone.status == 404 && gone.json["reason"] == .string("user_unknown") && gone.json["status"] == .string("404"))
        #expect(try scim("DELETE", "/Users/\(id)").status == 404)
        let audited = try server.store.auditEvents(limit: 100).filter { $0.clientID == "scim" }.map(\.kind)
        #expect(Set(audited) == ["admin_user_created", "admin_user_blocked", "admin_user_unblocked", "admin_user_updated", "admin_user_deleted"], "\(audited)")
    }

    @Test("Entra's user principal name: kept as userName apart from the address, found by either in any case, renamed without moving the address and back; one account's only", arguments: [TestServer.Transport.inProcess, .socket])
    func userPrincipalName(_ transport: TestServer.Transport) throws {
        let server = try Self.server(transport)
        func scim(_ method: String, _ path: String, _ body: String? = nil) throws -> (status: Int, json: JSONValue) {
            let response = try server.send(method, "/scim/v2" + path, headers: [("Authorization", "Bearer " + Self.token), ("Content-Type", "application/scim+json")],
                                           body: Array((body ?? "").utf8))
            return (response.status, (try? StrictJSON().parse(response.body)) ?? .null)
        }
        func user(_ userName: String, _ email: String? = nil) -> String {
            #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "\#(userName)""# + (email.map { #", "emails": [{"type": "work", "value": "\#($0)"}]"# } ?? "") + "}"
        }
        func patch(_ path: String, _ value: String) -> String {
            #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "Replace", "path": "\#(path)", "value": "\#(value)"}]}"#
        }
        func found(_ filter: String) throws -> [String] {
            try scim("GET", "/Users?filter=" + Ceremonies.formEncoded(filter)).json["Resources"]?.array?.compactMap { $0["id"]?.string } ?? []
        }
        func account(_ id: String) throws -> (email: String?, kept: String?) {
            let managed = try server.store.managedUser(id: id)
            let app = try managed?.appMetadata.map { try StrictJSON().parse(Array($0.utf8)) }
            return (managed?.user.email, app?["scim_user_name"]?.string)
        }

        let created = try scim("POST", "/Users", user("JDoe@corp.onmicrosoft.com", "Jane.Doe@corp.example"))
        #expect(created.status == 201, "\(created.json.serialized)")
        let id = try #require(created.json["id"]?.string)
        #expect(created.json["userName"] == .string("JDoe@corp.onmicrosoft.com") && created.json["emails"]?.array?.first?["value"] == .string("jane.doe@corp.example"))
        #expect(try account(id) == ("jane.doe@corp.example", "JDoe@corp.onmicrosoft.com"), "mail goes to the mailbox; the name is kept as sent")
        #expect(try server.api("GET", "/api/v2/users/\(id)", token: try server.managementToken(), nil).json["app_metadata"]?["scim_user_name"] == .string("JDoe@corp.onmicrosoft.com"))
        // Found by its name in any case, and by its address; its address is not its userName.
        #expect(try found(#"userName eq "jdoe@CORP.onmicrosoft.com""#) == [id] && found(#"emails.value eq "JANE.DOE@corp.example""#) == [id])
        #expect(try found(#"userName eq "jane.doe@corp.example""#).isEmpty)
        // The name, or the address, of another: refused as SCIM's uniqueness, nothing made.
        let count = try scim("GET", "/Users").json["totalResults"]
        for body in [user("jdoe@corp.ONMICROSOFT.com", "someone@corp.example"), user("jane.doe@corp.example"), user("x@corp.onmicrosoft.com", "jane.doe@corp.example")] {
            let refused = try scim("POST", "/Users", body)
            #expect(refused.status == 409 && refused.json["scimType"] == .string("uniqueness") && refused.json["reason"] == .string("user_exists"), "\(body): \(refused.json.serialized)")
        }
        #expect(try scim("GET", "/Users").json["totalResults"] == count)

        // A name that is no address (Okta's usernames may be), with the address apart.
        let okta = try scim("POST", "/Users", user("kmaier", "k.maier@corp.example"))
        let other = try #require(okta.json["id"]?.string)
        #expect(try okta.status == 201 && okta.json["userName"] == .string("kmaier") && found(#"userName eq "KMAIER""#) == [other])
        // Without the address apart, userName must be one.
        let noAddress = try scim("POST", "/Users", user("lpark"))
        #expect(noAddress.status == 400 && noAddress.json["scimType"] == .string("invalidValue") && noAddress.json["reason"] == .string("malformed"))

        // The principal renamed (a PATCH of userName alone): the name moves, the address stays, audited as scim.
        let renamed = try scim("PATCH", "/Users/\(id)", patch("userName", "jane.doe@corp.onmicrosoft.com"))
        #expect(renamed.status == 200 && renamed.json["userName"] == .string("jane.doe@corp.onmicrosoft.com"), "\(renamed.json.serialized)")
        #expect(try account(id) == ("jane.doe@corp.example", "jane.doe@corp.onmicrosoft.com") && found(#"userName eq "JDoe@corp.onmicrosoft.com""#).isEmpty)
        #expect(try server.store.auditEvents(limit: 5).contains { $0.kind == "admin_user_updated" && $0.clientID == "scim" && $0.userID == id })
        // The mailbox moved: the address moves, the name stays.
        let moved = try scim("PATCH", "/Users/\(id)", patch(#"emails[type eq \"work\"].value"#, "jdoe@corp.example"))
        #expect(moved.status == 200 && moved.json["userName"] == .string("jane.doe@corp.onmicrosoft.com"))
        #expect(try account(id) == ("jdoe@corp.example", "jane.doe@corp.onmicrosoft.com"))
        // Another account's name, in another case: 409, nothing changed; the same name again: 200, nothing written.
        let taken = try scim("PATCH", "/Users/\(other)", patch("userName", "Jane.Doe@corp.onmicrosoft.com"))
        #expect(taken.status == 409 && taken.json["scimType"] == .string("uniqueness"), "\(taken.json.serialized)")
        #expect(try account(other) == ("k.maier@corp.example", "kmaier"))
        let events = try server.store.auditEvents(limit: 100).count
        #expect(try scim("PUT", "/Users/\(id)", user("jane.doe@corp.onmicrosoft.com", "jdoe@corp.example")).status == 200)
        #expect(try server.store.auditEvents(limit: 100).count == events)

        // An account named by its address (made from userName alone) keeps the old way: userName alone moves the address.
        let plain = try #require(try scim("POST", "/Users", user("plain@corp.example")).json["id"]?.string)
        #expect(try account(plain) == ("plain@corp.example", nil))
        #expect(try scim("PATCH", "/Users/\(plain)", patch("userName", "Plain2@corp.example")).json["userName"] == .string("plain2@corp.example"))
        #expect(try account(plain) == ("plain2@corp.example", nil))
        let notAddress = try scim("PATCH", "/Users/\(plain)", patch("userName", "plain3"))
        #expect(notAddress.status == 400 && notAddress.json["scimType"] == .string("invalidValue"))
        // ... and taking another's name as its address is refused too.
        let clash = try scim("PATCH", "/Users/\(plain)", patch("userName", "kmaier@corp.example"))
        #expect(clash.status == 200, "kmaier is a name; kmaier@corp.example is free")
        #expect(try scim("PATCH", "/Users/\(plain)", patch("userName", "jane.doe@corp.onmicrosoft.com")).status == 409)
        #expect(try account(plain) == ("kmaier@corp.example", nil))
        // An operator's app_metadata cannot give two accounts one name either (the database refuses it).
        let operatorChange = try server.api("PATCH", "/api/v2/users/\(plain)", token: try server.managementToken(), .object(["app_metadata": .object(["scim_user_name": .string("KMAIER")])]))
        #expect(operatorChange.status == 409 && operatorChange.json["reason"] == .string("conflict"), "\(operatorChange.json.serialized)")
        #expect(try account(plain) == ("kmaier@corp.example", nil))
    }

    @Test("refused: no token, another token, a user's token, a token without the scope, another content type, a body that is no object; a Management API token with the scope works; the documents describe it")
    func refusals() throws {
        let server = try Self.server()
        func call(_ method: String, _ path: String, token: String?, body: String? = nil, type: String = "application/scim+json") throws -> (Int, JSONValue, HTTPClient.Response) {
            var headers: [(String, String)] = token.map { [("Authorization", "Bearer " + $0)] } ?? []
            if body != nil { headers.append(("Content-Type", type)) }
            let response = try server.send(method, "/scim/v2" + path, headers: headers, body: Array((body ?? "").utf8))
            return (response.status, (try? StrictJSON().parse(response.body)) ?? .null, response)
        }
        let user = try SignedIn(server, email: "ada@example.com")
        for (token, reason) in [(nil, "token_missing"), ("scim-token-someone-guessed", "token_invalid"), (user.access, "token_audience_invalid")] as [(String?, String)] {
            let (status, json, response) = try call("GET", "/Users", token: token)
            #expect(status == 401 && json["reason"] == .string(reason) && json["schemas"] == .array([.string(SCIM.errorSchema)]), "\(reason): \(json.serialized)")
            #expect(response.headers["content-type"] == "application/scim+json")
        }
        let reader = try server.managementToken("reader", secret: TestServer.readerSecret)
        #expect(try call("GET", "/Users", token: reader).0 == 200)
        let (status, json, _) = try call("POST", "/Users", token: reader, body: #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "x@example.com"}"#)
        #expect(status == 403 && json["reason"] == .string("insufficient_scope"))
        let ops = try server.managementToken()
        #expect(try call("POST", "/Users", token: ops, body: #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "ops@example.com"}"#).0 == 201)
        #expect(try call("POST", "/Users", token: Self.token, body: #"{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "plain@example.com"}"#, type: "application/json").0 == 201)
        let text = try call("POST", "/Users", token: Self.token, body: "userName=x", type: "text/plain")
        #expect(text.0 == 415 && text.1["reason"] == .string("unsupported_media_type"))
        for body in ["[]", "not json", #"{"schemas": "#] {
            let answer = try call("POST", "/Users", token: Self.token, body: body)
            #expect(answer.0 == 400 && answer.1["scimType"] == .string("invalidSyntax"), "\(body)")
        }
        // Without scim.token_hash, the token is only a guess.
        let closed = try TestServer.withOperators()
        #expect(try closed.send("GET", "/scim/v2/Users", headers: [("Authorization", "Bearer " + Self.token)]).status == 401)

        let config = try call("GET", "/ServiceProviderConfig", token: Self.token).1
        #expect(config["patch"]?["supported"] == .bool(true) && config["bulk"]?["supported"] == .bool(false) && config["filter"]?["maxResults"] == .int(100))
        #expect(try call("GET", "/ResourceTypes", token: Self.token).1["Resources"]?.array?.first?["schema"] == .string(SCIM.userSchema))
        #expect(try call("GET", "/Schemas", token: Self.token).1["Resources"]?.array?.first?["id"] == .string(SCIM.userSchema))
        let groups = try call("GET", "/Schemas", token: Self.token).1["Resources"]?.array?.first?["attributes"]?.array?.first { $0["name"] == .string("groups") }
        #expect(groups?["mutability"] == .string("readOnly") && groups?["multiValued"] == .bool(true), "a User's groups are listed read-only")
        #expect(try call("GET", "/ResourceTypes", token: Self.token).1["Resources"]?.array?.last?["schema"] == .string(SCIM.groupSchema))
        #expect(try call("GET", "/Schemas", token: Self.token).1["Resources"]?.array?.last?["id"] == .string(SCIM.groupSchema))
        #expect(try call("GET", "/Bulk", token: Self.token).0 == 404)
    }
}
