import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetStore
import SignetWebAuthn
import Testing

/// `GET /me/export` and `/account/export`: the account's own copy of what Signet holds about it.
@Suite struct AccountExportTests {
    static func decoded(_ response: HTTPClient.Response) throws -> AccountExport {
        try JSONDecoder().decode(AccountExport.self, from: Data(response.body))
    }

    @Test("everything held about the account: its record, every passkey and device key with public keys (revoked ones too), sessions, recovery, history; no secret; audited")
    func everything() throws {
        let server = try TestServer()
        let phone = Phone(server)
        let tokens = try phone.signUp(email: "Ada.Export@signet.test")
        let account = SignedIn(server, phone: phone, access: try #require(tokens["access_token"]?.string))
        let refresh = try #require(tokens["refresh_token"]?.string)
        let second = SoftwareAuthenticator()
        let added = try account.addPasskey(second, name: "Old laptop")
        let revokedID = try #require(added.json["id"]?.string)
        #expect(try account.call("DELETE", "/me/passkeys/\(revokedID)").status == 204)
        let key = try SoftwareDeviceKey(deviceID: "phone-1")
        let keyID = try account.enroll(key)
        #expect(try account.call("PATCH", "/me", .object(["name": .string("Ada")])).status == 200)
        let other = try SignedIn(server, email: "someone.else@signet.test")

        let response = try server.send("GET", "/me/export", headers: account.bearer)
        #expect(response.status == 200 && response.headers["cache-control"] == "no-store")
        #expect(response.headers["content-disposition"] == #"attachment; filename="account-data.json""#)
        let export = try Self.decoded(response)
        let user = try #require(try server.store.user(email: "ada.export@signet.test"))
        #expect(export.format == "signet.account-export.v1" && export.issuer == server.app.configuration.issuer)
        #expect(export.account.user_id == user.id && export.account.email == user.email && export.account.name == "Ada")
        #expect(export.account.user_handle == Base64URL.encode(user.handle) && export.account.logins_count == 1 && !export.account.blocked)

        // Both passkeys, the removed one with when; each as stored, so the key verifies its signatures.
        let rows = try server.store.credentials(userID: user.id)
        #expect(Set(export.passkeys.map(\.id)) == Set(rows.map { Base64URL.encode($0.id) }) && export.passkeys.count == 2)
        let removed = try #require(export.passkeys.first { $0.id == revokedID })
        #expect(removed.revoked_at != nil && removed.name == "Old laptop")
        let live = try #require(export.passkeys.first { $0.revoked_at == nil })
        let stored = try #require(rows.first { Base64URL.encode($0.id) == live.id })
        #expect(live.public_key == Base64URL.encode(stored.publicKey) && live.algorithm == -7 && live.sign_count == stored.signCount)
        #expect(try COSEKey(Base64URL.decode(live.public_key) ?? []).algorithm.rawValue == -7)
        #expect(export.device_keys.map(\.id) == [keyID] && export.device_keys.first?.public_key == Base64URL.encode(key.publicKeySPKI))
        #expect(export.sessions.count == 1 && export.recovery_codes.remaining == 0 && export.recovery == nil)

        // The history, newest first.
        let kinds = export.events.map(\.signet_event)
        #expect(kinds.contains("sign_up") && kinds.contains("passkey_revoked") && kinds.contains("device_key_enrolled"))
        #expect(!kinds.contains("account_exported"), "the copy holds the history as it stood before the download")
        #expect(!export.events_truncated && export.events.allSatisfy { $0.user_id == user.id })
        let audited = try server.store.auditEvents(limit: 50).filter { $0.kind == "account_exported" }
        #expect(audited.count == 1 && audited.first?.userID == user.id)

        // Nothing of another account, and no secret: no token, no stored hash.
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(!text.contains(other.access) && !text.contains("someone.else") && !text.contains(account.access) && !text.contains(refresh))
        #expect(!text.contains("refresh_token") && !text.contains("code_hash") && !text.contains("private"))
    }

    @Test("no token, a bad one, a stale one, or no session: refused; the page's button downloads the same document after a fresh sign-in")
    func refusalsAndPage() throws {
        let server = try TestServer()
        #expect(try server.send("GET", "/me/export").status == 401)
        #expect(try server.send("GET", "/me/export", headers: [("Authorization", "Bearer nope")]).status == 401)
        // An app's sign-in older than step_up.max_age: a fresh one first (a code sign-in would do).
        let app = try SignedIn(server, email: "stale@signet.test")
        server.clock.advance(Double(server.app.configuration.stepUpMaxAge + 1))
        #expect(try app.call("GET", "/me/export").json["reason"] == .string("step_up_required"))
        #expect(try server.store.auditEvents(limit: 50).allSatisfy { $0.kind != "account_exported" })

        let browser = WebBrowser(server)
        let away = try browser.form("/account/export", [], csrf: "none")
        #expect(away.status >= 300 && away.response.headers["content-disposition"] == nil)
        _ = try browser.signUp(email: "page@signet.test")
        let page = try browser.page("/account").html
        #expect(page.contains(#"action="/account/export""#) && page.contains("Download your data"))
        let file = try browser.form("/account/export", [])
        #expect(file.status == 200 && file.response.headers["content-disposition"]?.hasPrefix("attachment") == true)
        let export = try Self.decoded(file.response)
        #expect(export.account.email == "page@signet.test" && export.passkeys.count == 1 && export.events.contains { $0.signet_event == "sign_up" })
        let audited = try #require(try server.store.auditEvents(limit: 50).first { $0.kind == "account_exported" })
        #expect(audited.clientID == Ceremonies.webClient.id)
        // Without the page's CSRF token: refused, nothing handed over.
        #expect(try browser.form("/account/export", [], csrf: "forged").status == 403)
        // A sign-in older than step_up.max_age steps up first: the page asks, the file waits.
        server.clock.advance(Double(server.app.configuration.stepUpMaxAge + 1))
        _ = try browser.page("/account")
        let stale = try browser.form("/account/export", [])
        #expect(stale.status == 200 && stale.response.headers["content-disposition"] == nil && stale.html.contains("data-testid=\"step-up-prompt\""))
        #expect(stale.html.contains(#"<form id="pending" method="post" action="/account/export">"#))
        #expect(try server.store.auditEvents(limit: 50).filter { $0.kind == "account_exported" }.count == 1)
        // The page lists the download in its own words afterwards.
        #expect(try browser.page("/account").html.contains("You downloaded a copy of your data"))
    }

    @Test("an operator's copy for an owner's request: the API needs every scope the document reads; audited, and the owner's page says so; the command as a binary")
    func byOperator() throws {
        let server = try TestServer.withOperators()
        let browser = WebBrowser(server)
        _ = try browser.signUp(email: "asked@signet.test")
        let id = try #require(try server.store.user(email: "asked@signet.test")?.id)
        let token = try server.managementToken()
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: token, .object(["name": .string("Asked")])).status == 200)

        let response = try server.send("GET", "/api/v2/users/\(id)/export", headers: [("Authorization", "Bearer " + token)])
        #expect(response.status == 200 && response.headers["content-disposition"]?.hasPrefix("attachment") == true)
        let export = try Self.decoded(response)
        #expect(export.account.user_id == id && export.passkeys.count == 1 && export.sessions.count == 1 && export.sessions.allSatisfy { !$0.current })
        #expect(export.events.contains { $0.signet_event == "sign_up" && $0.ip == "127.0.0.1" })
        // The operator's address is not in the account's copy, as on its page.
        let changed = try #require(export.events.first { $0.signet_event == "admin_user_updated" })
        #expect(changed.ip == nil && changed.client_id == "ops")
        let audited = try #require(try server.store.auditEvents(limit: 50).first { $0.kind == "admin_user_exported" })
        #expect(audited.userID == id && audited.clientID == "ops")
        #expect(try browser.page("/account").html.contains("An administrator took a copy of your data"))

        // Each scope the document reads is needed; a token short of one gets nothing, and nothing is audited.
        for scope in ["read:users read:sessions read:logs", "read:users read:authentication_methods read:logs", "read:users read:authentication_methods read:sessions",
                      "read:logs read:sessions read:authentication_methods"] {
            let short = try server.api("GET", "/api/v2/users/\(id)/export", token: server.managementToken(scope: scope))
            #expect(short.status == 403 && short.json["reason"] == .string("insufficient_scope"), "\(scope): \(short.json.serialized)")
        }
        #expect(try server.api("GET", "/api/v2/users/\(id)/export", token: nil).status == 401)
        #expect(try server.api("GET", "/api/v2/users/nobody/export", token: token).json["reason"] == .string("user_unknown"))
        #expect(try server.store.auditEvents(limit: 100).filter { $0.kind == "admin_user_exported" }.count == 1)

        let command = try OperationsTests.signet(["admin", "users", "export", id, "--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path],
                                                 in: server.directory)
        #expect(command.status == 0, "\(command.errors)")
        let printed = try JSONDecoder().decode(AccountExport.self, from: Data(command.output.utf8))
        #expect(printed.account.email == "asked@signet.test" && printed.passkeys.map(\.id) == export.passkeys.map(\.id))
        #expect(try server.store.auditEvents(limit: 100).contains { $0.kind == "admin_user_exported" && $0.clientID == "signet-admin" })
    }

    @Test("every account's record as JSON lines, the file users import reads: a round trip into another deployment keeps addresses, names, verification, blocks and creation times")
    func allAccounts() throws {
        let server = try TestServer.withOperators()
        for n in 0..<5 { _ = try SignedIn(server, email: "member\(n)@signet.test") }
        let blocked = try #require(try server.store.user(email: "member3@signet.test")?.id)
        #expect(try server.api("PATCH", "/api/v2/users/\(blocked)", token: server.managementToken(), .object(["blocked": .bool(true), "name": .string("Ada Ñ")])).status == 200)
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        let file = server.directory.appendingPathComponent("accounts.jsonl").path

        let written = try OperationsTests.signet(["admin", "users", "export", "--all", "--out", file] + database, in: server.directory)
        #expect(written.status == 0 && written.output.contains("exported 5 account(s)"), "\(written.errors)")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map { try JSONDecoder().decode(UserExportLine.self, from: Data($0.utf8)) }
        #expect(lines.count == 5 && lines.map(\.user_id) == lines.map(\.user_id).sorted())
        #expect(lines.first { $0.user_id == blocked }.map { $0.blocked && $0.name == "Ada Ñ" } == true)
        // Never over a file; to standard output without --out.
        #expect(try OperationsTests.signet(["admin", "users", "export", "--all", "--out", file] + database, in: server.directory).status == 2)
        let piped = try OperationsTests.signet(["admin", "users", "export", "--all"] + database, in: server.directory)
        #expect(piped.output.split(separator: "\n").count == 5 && piped.errors.contains("exported 5 account(s)"))
        #expect(piped.errors.contains("their passkeys are recorded for RP ID localhost (relying_party.id)") && piped.errors.contains("run this with its --config"), "\(piped.errors)")
        let audited = try server.store.auditEvents(limit: 50).filter { $0.kind == "admin_user_exported" }
        #expect(audited.count == 2 && audited.allSatisfy { $0.userID == nil && $0.clientID == "signet-admin" && $0.detail == "every account's record: 5" })

        // Into another deployment: the same accounts, as they were.
        let other = try TestServer()
        let imported = try OperationsTests.signet(["admin", "users", "import", file, "--database", "sqlite:" + other.directory.appendingPathComponent("signet.db").path],
                                                  in: other.directory)
        #expect(imported.status == 0 && imported.output.contains("5 made"), "\(imported.output) \(imported.errors)")
        for line in lines {
            let moved = try #require(try other.store.user(email: line.email))
            let original = try #require(try server.store.user(email: line.email))
            #expect(moved.name == original.name && moved.emailVerified == original.emailVerified && moved.blocked == original.blocked)
            #expect(moved.createdAt / 1000 == original.createdAt / 1000)
        }
    }
}
