import Foundation
import SignetAuth
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// `tokens.app_metadata_claims`: members of an account's `app_metadata` (the operators') copied
/// into its access and ID tokens and `/userinfo` under claim names that are URIs; never the
/// owner's `user_metadata`, and nothing read when none are set.
@Suite struct MetadataClaimsTests {
    static let roles = "https://bank.example/roles"
    static let plan = "https://bank.example/plan"

    @Test("the setting: an object of URI claims and keys, from the file or the environment; a claim that is no URI, a key out of bounds, too many or not strings are refused")
    func setting() throws {
        let file = try ConfigurationTests.write("""
            {"issuer": "https://auth.example.com", "relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "clients": [{"client_id": "app"}],
             "tokens": {"app_metadata_claims": {"https://example.com/roles": "roles", "http://example.com/tier": "tier"}}}
            """)
        let loaded = try ConfigurationLoader.load(file: file, environment: [:])
        #expect(loaded.appMetadataClaims == [MetadataClaim(claim: "http://example.com/tier", key: "tier"), MetadataClaim(claim: "https://example.com/roles", key: "roles")])
        let environment = try ConfigurationLoader.load(file: file, environment: ["SIGNET_TOKENS_APP_METADATA_CLAIMS": #"{"https://example.com/groups": "groups"}"#])
        #expect(environment.appMetadataClaims == [MetadataClaim(claim: "https://example.com/groups", key: "groups")])
        let many = "{" + (0...MetadataClaim.maximum).map { #""https://example.com/c\#($0)": "k\#($0)""# }.joined(separator: ",") + "}"
        for bad in [#"{"roles": "roles"}"#, #"{"urn:example:roles": "roles"}"#, #"{"https:///roles": "roles"}"#, #"{"https://example.com/a b": "roles"}"#,
                    #"{"https://example.com/roles": ""}"#, #"{"https://example.com/roles": 1}"#, #"["roles"]"#, many,
                    "{\"https://example.com/\(String(repeating: "r", count: 200))\": \"roles\"}"] {
            #expect(throws: ConfigurationError.self, "\(bad.prefix(60))") {
                try ConfigurationLoader.load(file: file, environment: ["SIGNET_TOKENS_APP_METADATA_CLAIMS": bad])
            }
        }
        #expect(ServerConfiguration.development(port: 8080, database: "sqlite:x.db").appMetadataClaims.isEmpty)
    }

    @Test("the operators' app_metadata members go into the access token, the ID token and /userinfo, as they are at each sign-in or refresh; the owner's user_metadata never")
    func claims() throws {
        let server = try TestServer.withOperators { c in
            c.appMetadataClaims = [MetadataClaim(claim: Self.roles, key: "roles"), MetadataClaim(claim: Self.plan, key: "plan")]
        }
        let phone = Phone(server)
        let first = try phone.signUp(email: "ada@bank.example")
        let id = try #require(jwtClaims(first["access_token"]?.string)["sub"]?.string)
        // No metadata yet: no such claims.
        #expect(jwtClaims(first["access_token"]?.string)[Self.roles] == nil && jwtClaims(first["id_token"]?.string)[Self.roles] == nil)

        let ops = try server.managementToken()
        let set = try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["app_metadata": .object([
            "roles": .array([.string("teller"), .string("auditor")]), "plan": .object(["name": .string("gold"), "seats": .number("5")]), "internal": .string("not copied"),
        ])]))
        #expect(set.status == 200, "\(set.json.serialized)")
        // The owner sets the same key in user_metadata: it goes nowhere near a token.
        let account = SignedIn(server, phone: phone, access: first["access_token"]?.string ?? "")
        #expect(try account.call("PATCH", "/me/metadata", .object(["user_metadata": .object(["roles": .array([.string("admin")])])])).status == 200)

        let signedIn = try phone.signIn()
        for token in [signedIn["access_token"], signedIn["id_token"]] {
            let claims = jwtClaims(token?.string)
            #expect(claims[Self.roles] == .array([.string("teller"), .string("auditor")]), "\(claims.serialized)")
            #expect(claims[Self.plan] == .object(["name": .string("gold"), "seats": .number("5")]) && claims["internal"] == nil && claims["roles"] == nil)
        }
        let info = try server.send("GET", "/userinfo", headers: [("Authorization", "Bearer " + (signedIn["access_token"]?.string ?? ""))])
        let userInfo = try StrictJSON().parse(info.body)
        #expect(info.status == 200 && userInfo["sub"] == .string(id) && userInfo[Self.roles] == .array([.string("teller"), .string("auditor")]), "\(userInfo.serialized)")

        // A change shows at the next refresh; a member taken away takes its claim with it.
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["app_metadata": .object(["roles": .array([.string("teller")]), "plan": .null])])).status == 200)
        let refreshed = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(signedIn["refresh_token"]),
        ]))
        try #require(refreshed.status == 200, "\(refreshed.json.serialized)")
        let after = jwtClaims(refreshed.json["access_token"]?.string)
        #expect(after[Self.roles] == .array([.string("teller")]) && after[Self.plan] == nil, "\(after.serialized)")

        // A member too large for a token is left out of it (the others stay); at the limit it goes in.
        let atLimit = String(repeating: "a", count: MetadataClaim.maxValueBytes - 2)  // with its quotes, 1024 bytes of JSON
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["app_metadata": .object(["plan": .string(atLimit)])])).status == 200)
        #expect(jwtClaims(try phone.signIn()["access_token"]?.string)[Self.plan] == .string(atLimit))
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["app_metadata": .object(["plan": .string(atLimit + "a")])])).status == 200)
        let big = jwtClaims(try phone.signIn()["access_token"]?.string)
        #expect(big[Self.plan] == nil && big[Self.roles] == .array([.string("teller")]), "\(big.serialized.prefix(300))")
    }

    @Test("tokens.roles_claim: the account's roles by name, sorted, in its access tokens for every API, its ID token and /userinfo, from the next sign-in or refresh; bounded with the app_metadata claims; refused unless a URI of its own")
    func rolesClaim() throws {
        let file = try ConfigurationTests.write("""
            {"issuer": "https://auth.example.com", "relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "clients": [{"client_id": "app"}],
             "tokens": {"roles_claim": "https://example.com/roles"}}
            """)
        #expect(try ConfigurationLoader.load(file: file, environment: [:]).rolesClaim == "https://example.com/roles")
        #expect(try ConfigurationLoader.load(file: file, environment: ["SIGNET_TOKENS_ROLES_CLAIM": "https://example.com/groups"]).rolesClaim == "https://example.com/groups")
        for (bad, says) in [("roles", "must be a URI"), ("7", "must be a URI"), ("[7]", "must be a claim name"), ("https:///roles", "must be a URI")] {
            do {
                _ = try ConfigurationLoader.load(file: file, environment: ["SIGNET_TOKENS_ROLES_CLAIM": bad])
                Issue.record("accepted \(bad)")
            } catch let error as ConfigurationError {
                #expect(error.message.contains("tokens.roles_claim") && error.message.contains(says), "\(error.message)")
            }
        }
        let clash = ["SIGNET_TOKENS_ROLES_CLAIM": Self.roles, "SIGNET_TOKENS_APP_METADATA_CLAIMS": #"{"\#(Self.roles)": "roles"}"#]
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.load(file: file, environment: clash) }

        let server = try TestServer.withOperators { c in
            c.rolesClaim = Self.roles
            c.appMetadataClaims = [MetadataClaim(claim: Self.plan, key: "plan")]
            c.audiences.append("https://api.bank.example")
        }
        let ops = try server.managementToken()
        let phone = Phone(server)
        let first = try phone.signUp(email: "ada@bank.example")
        let id = try #require(jwtClaims(first["access_token"]?.string)["sub"]?.string)
        // No role yet: the claim is there, empty, so an app tells "no roles" from "not configured".
        #expect(jwtClaims(first["access_token"]?.string)[Self.roles] == .array([]) && jwtClaims(first["id_token"]?.string)[Self.roles] == .array([]))
        var made: [String] = []
        for name in ["Teller", "Auditor", "Branch manager"] {
            made.append(try #require(try server.api("POST", "/api/v2/roles", token: ops, .object(["name": .string(name)])).json["id"]?.string))
        }
        #expect(try server.api("POST", "/api/v2/users/\(id)/roles", token: ops, .object(["roles": .array(made.prefix(2).map(JSONValue.string))])).status == 204)
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["app_metadata": .object(["plan": .string("gold")])])).status == 200)
        let signedIn = try phone.signIn()
        for token in [signedIn["access_token"], signedIn["id_token"]] {
            let claims = jwtClaims(token?.string)
            #expect(claims[Self.roles] == .array([.string("Auditor"), .string("Teller")]) && claims[Self.plan] == .string("gold"), "\(claims.serialized)")
        }
        let info = try StrictJSON().parse(try server.send("GET", "/userinfo", headers: [("Authorization", "Bearer " + (signedIn["access_token"]?.string ?? ""))]).body)
        #expect(info[Self.roles] == .array([.string("Auditor"), .string("Teller")]), "\(info.serialized)")
        // A token for another API carries it too; a refresh shows a role given meanwhile.
        #expect(try server.api("POST", "/api/v2/users/\(id)/roles", token: ops, .object(["roles": .array([.string(made[2])])])).status == 204)
        let refreshed = try server.post("/oauth/token", .object([
            "grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(signedIn["refresh_token"]), "audience": .string("https://api.bank.example"),
        ]))
        #expect(jwtClaims(refreshed.json["access_token"]?.string)[Self.roles] == .array([.string("Auditor"), .string("Branch manager"), .string("Teller")]),
                "\(refreshed.json.serialized)")
        // Names too many for 4 KiB: the claim is left out whole (never a part of the list), the app_metadata claim still goes in.
        for i in 0..<20 {
            let long = try #require(try server.api("POST", "/api/v2/roles", token: ops, .object(["name": .string("Role \(i) " + String(repeating: "r", count: 240))])).json["id"]?.string)
            #expect(try server.api("POST", "/api/v2/users/\(id)/roles", token: ops, .object(["roles": .array([.string(long)])])).status == 204)
        }
        let crowded = jwtClaims(try phone.signIn()["access_token"]?.string)
        #expect(crowded[Self.roles] == nil && crowded[Self.plan] == .string("gold"), "\(crowded.serialized.prefix(200))")
        // Unset: no claim, whatever roles the account has.
        let off = try TestServer.withOperators(sharing: server.directory)
        #expect(jwtClaims(try Phone(off, authenticator: phone.authenticator).signIn()["access_token"]?.string)[Self.roles] == nil)
    }

    @Test("the claims together stay within 4 KiB: in the setting's order, a member that would pass it is left out, a smaller one after it still goes in")
    func totalBound() throws {
        let claims = (0..<6).map { MetadataClaim(claim: "https://bank.example/c\($0)", key: "c\($0)") }
        let server = try TestServer.withOperators { c in c.appMetadataClaims = claims }
        let phone = Phone(server)
        let id = try #require(jwtClaims(try phone.signUp(email: "lin@bank.example")["access_token"]?.string)["sub"]?.string)
        // Four members of 1,002 bytes of JSON: with their names (23 bytes each), the fourth would pass 4,096.
        let value = String(repeating: "x", count: 1000)
        var metadata: JSONObject = [:]
        for i in 0..<4 { metadata["c\(i)"] = .string(value) }
        metadata["c4"] = .string(String(repeating: "y", count: 10))
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: try server.managementToken(), .object(["app_metadata": .object(metadata)])).status == 200)
        let token = jwtClaims(try phone.signIn()["access_token"]?.string)
        #expect((0..<3).allSatisfy { token["https://bank.example/c\($0)"] == .string(value) } && token["https://bank.example/c3"] == nil)
        #expect(token["https://bank.example/c4"] == .string(String(repeating: "y", count: 10)) && token["https://bank.example/c5"] == nil)
    }

    @Test("with the setting off, no token carries metadata, whatever the account holds")
    func off() throws {
        let server = try TestServer.withOperators()
        let phone = Phone(server)
        let first = try phone.signUp(email: "grace@bank.example")
        let id = try #require(jwtClaims(first["access_token"]?.string)["sub"]?.string)
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: try server.managementToken(), .object(["app_metadata": .object(["roles": .array([.string("teller")])])])).status == 200)
        let claims = jwtClaims(try phone.signIn()["access_token"]?.string)
        #expect(claims.object?.keys.sorted() == ["acr", "amr", "aud", "auth_time", "client_id", "cred", "exp", "iat", "iss", "jti", "scope", "sid", "sub"], "\(claims.serialized)")
    }
}
