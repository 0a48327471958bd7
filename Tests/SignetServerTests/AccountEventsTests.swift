import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetSoftware
import SignetWebAuthn
import Testing

/// `GET /me/events`: the account's security events as its owner sees them, the account page's
/// list for an app's own screen.
@Suite struct AccountEventsTests {
    @Test("the owner's events, newest first: keys named as they are now, a refusal marked, an operator's change without an address, bookkeeping left out; take bounds the list")
    func list() throws {
        let server = try TestServer.withOperators()
        let account = try SignedIn(server, email: "history@signet.test")
        let id = try #require(jwtClaims(account.access)["sub"]?.string)
        // A passkey added and removed: the events name it as it was called.
        let (added, passkey) = try account.addPasskey(SoftwareAuthenticator(), name: "Laptop")
        #expect(added == 201)
        let laptop = try #require(passkey["id"]?.string)
        #expect(try account.call("DELETE", "/me/passkeys/\(laptop)").status == 204)
        // A sign-in, a refresh, its rotated token shown again (refused).
        let tokens = try account.phone.signIn()
        let refresh = JSONValue.object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": try #require(tokens["refresh_token"])])
        #expect(try server.post("/oauth/token", refresh).status == 200)
        #expect(try server.post("/oauth/token", refresh).json["reason"] == .string("refresh_token_reused"))
        // Bookkeeping on the account's trail (a code mailed, an add started, an action token used):
        // not in its history.
        for kind in [AuditKind.otpSent, .addPasskey, .actionVerified] {
            try server.store.appendAudit(AuditEvent(at: Int64(Date().timeIntervalSince1970 * 1000), kind: kind.rawValue, outcome: "success", userID: id, remote: "127.0.0.1"))
        }
        let ops = try server.managementToken()
        #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["name": .string("Ada")])).status == 200)

        let (status, json) = try account.call("GET", "/me/events")
        #expect(status == 200, "\(json.serialized)")
        let events = try JSONDecoder().decode(AccountEventList.self, from: Data(json.serialized.utf8)).events
        #expect(events.map(\.type) == ["admin_user_updated", "refresh_token_reused", "sign_in", "passkey_revoked", "passkey_added", "sign_up"], "\(events.map(\.type))")
        #expect(!events.contains { AuditKind(rawValue: $0.type).map(AuditKind.notInOwnHistory.contains) ?? true }, "bookkeeping or an unknown kind listed")
        #expect(events[0].by_operator && events[0].address == nil)
        #expect(events[1].outcome == "failure" && events.filter { $0.outcome == "failure" }.count == 1)
        // A failure says which check refused it, from the one list of reasons; a success, nothing.
        #expect(events[1].reason == "refresh_token_reused" && events.filter { $0.reason != nil }.count == 1, "\(events.map(\.reason))")
        #expect(events.dropFirst().allSatisfy { !$0.by_operator && $0.address == "127.0.0.1" && $0.client_id == "app" && $0.client_name == "app" })
        #expect(events[3].key_id == laptop && events[3].key_name == "Laptop" && events[4].key_name == "Laptop")
        #expect(events.map(\.at) == events.map(\.at).sorted(by: >) && events.allSatisfy { $0.at > 1_700_000_000 })
        #expect(Set(events.map(\.id)).count == events.count)
        // take: at most that many, the newest; out of bounds or not a number is malformed.
        let one = try account.call("GET", "/me/events?take=1").json["events"]?.array ?? []
        #expect(one.count == 1 && one.first?["type"] == .string("admin_user_updated"))
        for bad in ["0", "101", "x", "-1"] {
            #expect(try account.call("GET", "/me/events?take=\(bad)").json["reason"] == .string("malformed"), "\(bad)")
        }
        // Pages back by `before`, two at a time, make the whole list; bookkeeping rows newer than
        // a page's events never shorten it.
        for kind in [AuditKind.otpSent, .actionVerified] {
            try server.store.appendAudit(AuditEvent(at: Int64(Date().timeIntervalSince1970 * 1000), kind: kind.rawValue, outcome: "success", userID: id))
        }
        var paged: [String] = []
        var before: String?
        while true {
            let page = try account.call("GET", "/me/events?take=2" + (before.map { "&before=" + $0 } ?? "")).json["events"]?.array ?? []
            paged += page.compactMap { $0["id"]?.string }
            guard page.count == 2 else { break }
            before = page.last?["id"]?.string
        }
        #expect(paged == events.map(\.id))
        for bad in ["0", "x", "-5", "99999999999999999999"] {
            #expect(try account.call("GET", "/me/events?before=\(bad)").json["reason"] == .string("malformed"), "\(bad)")
        }
        // Another account's events are not in it; no token, no list.
        let other = try SignedIn(server, email: "other-history@signet.test")
        #expect(try other.call("GET", "/me/events").json["events"]?.array?.map { $0["type"] } == [.string("sign_up")])
        #expect(try server.send("GET", "/me/events").status == 401)
    }

    @Test("the account page shows 15 events at a time, newest first, and pages back through all of them with Older events; a bad events_before is an error page")
    func accountPagePages() throws {
        let server = try TestServer.withOperators()
        let browser = WebBrowser(server)
        _ = try browser.signUp(email: "pages@signet.test")
        let id = try #require(try server.store.user(email: "pages@signet.test")?.id)
        let ops = try server.managementToken()
        // 20 operator changes after the sign-up: 21 events, so two pages.
        for n in 1...20 {
            #expect(try server.api("PATCH", "/api/v2/users/\(id)", token: ops, .object(["name": .string("Name \(n)")])).status == 200)
        }
        let first = try browser.page("/account").html
        let firstRows = PasskeyNameTests.events(first)
        #expect(firstRows.count == 15 && firstRows.allSatisfy { $0.kind == "An administrator changed your account" }, "\(firstRows)")
        #expect(!first.contains("data-testid=\"newest-events\""), "the first page is the newest")
        let link = try #require(Self.href(first, "older-events"))
        #expect(link.hasPrefix("/account?events_before=") && link.hasSuffix("#h-events"))
        let second = try browser.page(String(link.prefix { $0 != "#" })).html
        let secondRows = PasskeyNameTests.events(second)
        #expect(secondRows.map(\.kind) == Array(repeating: "An administrator changed your account", count: 5) + ["Account created"], "\(secondRows)")
        #expect(Self.href(second, "older-events") == nil, "the last page has no older one")
        #expect(Self.href(second, "newest-events") == "/account#h-events")
        #expect(first.contains(">Recent security events</h2>") && second.contains(">Earlier security events</h2>"))
        #expect(try browser.page(String(link.prefix { $0 != "#" }) + "&ui_locales=fr").html.contains(">Événements de sécurité antérieurs</h2>"))
        // Exactly 15 events: no link to an empty page.
        let exact = WebBrowser(server)
        _ = try exact.signUp(email: "fifteen@signet.test")
        let other = try #require(try server.store.user(email: "fifteen@signet.test")?.id)
        for n in 1...14 {
            #expect(try server.api("PATCH", "/api/v2/users/\(other)", token: ops, .object(["name": .string("N\(n)")])).status == 200)
        }
        let full = try exact.page("/account").html
        #expect(PasskeyNameTests.events(full).count == 15 && Self.href(full, "older-events") == nil)
        // Not an event's ID: the error page, with the reason.
        for bad in ["0", "x", "-3", "99999999999999999999"] {
            let (status, html, _) = try browser.page("/account?events_before=\(bad)")
            #expect(status == 400 && html.contains("data-reason=\"malformed\""), "\(bad): \(status)")
        }
    }

    @Test("a failure in /me/events names its reason from the one list (last_credential), for the app to word; a success none, nor a word not on the list")
    func reasons() throws {
        let server = try TestServer.withOperators()
        let account = try SignedIn(server, email: "reasons@signet.test")
        let id = try #require(jwtClaims(account.access)["sub"]?.string)
        let only = try #require(try server.store.credentials(userID: id).first)
        #expect(try account.call("DELETE", "/me/passkeys/\(Base64URL.encode(only.id))").json["reason"] == .string("last_credential"))
        try server.store.appendAudit(AuditEvent(at: Int64(Date().timeIntervalSince1970 * 1000) + 1, kind: AuditKind.stepUp.rawValue, outcome: "failure",
                                                reason: "not a reason", userID: id))
        let events = try #require(try account.call("GET", "/me/events").json["events"]?.array)
        #expect(events.map { $0["type"]?.string } == ["step_up", "passkey_revoked", "sign_up"], "\(events)")
        #expect(events.map { $0["reason"]?.string } == [nil, "last_credential", nil], "\(events)")
        #expect(events.map { $0["outcome"]?.string } == ["failure", "failure", "success"])
    }

    @Test("the account page words a refusal as one (\"Passkey not removed\", not \"Passkey removed · refused\"), in red; a kind that is only ever a refusal gets no mark; one without its own words keeps \"refused\"; an app's event names the app, an operator's change no client")
    func accountPageRefusals() throws {
        let server = try TestServer.withOperators()
        let browser = WebBrowser(server)
        _ = try browser.signUp(email: "refusals@signet.test")
        let user = try #require(try server.store.user(email: "refusals@signet.test"))
        // A real refusal: the account's last passkey cannot be removed.
        let only = try #require(try server.store.credentials(userID: user.id).first)
        try browser.page("/account")
        let removal = try browser.form("/account/passkeys/\(Base64URL.encode(only.id))/revoke", [])
        #expect(removal.status == 409 && removal.html.contains("data-reason=\"last_credential\""), "\(removal.status)")
        // Rows as the ceremonies write them: a refused passkey sign-in, a stolen refresh token (a
        // kind written only as a refusal), and a refusal of a kind the pages have no words for.
        // The last, a sign-in in an app, names the app.
        let made = try server.api("POST", "/api/v2/clients", token: try server.managementToken(), .object([
            "name": .string("Ledger"), "token_endpoint_auth_method": .string("none"), "grant_types": .array([.string("refresh_token")])]))
        let ledger = try #require(made.json["client_id"]?.string, "\(made.json.serialized)")
        var at = Int64(Date().timeIntervalSince1970 * 1000)
        for (kind, outcome) in [(AuditKind.signIn, "failure"), (.refreshTokenReused, "failure"), (.otpSignIn, "failure"), (.signIn, "success")] {
            at += 1
            try server.store.appendAudit(AuditEvent(at: at, kind: kind.rawValue, outcome: outcome, userID: user.id,
                                                    clientID: outcome == "success" ? ledger : nil, remote: "127.0.0.1"))
        }
        // An operator's change, through the Management API's client: neither it nor its address is named.
        #expect(try server.api("PATCH", "/api/v2/users/\(user.id)", token: try server.managementToken(), .object(["name": .string("Eve")])).status == 200)
        let all = Self.rows(try browser.page("/account").html)
        #expect(all.first?.kind == "An administrator changed your account" && all.first?.meta.contains(" · ") == false, "\(all)")
        let rows = Array(all.dropFirst())
        #expect(rows.map(\.kind) == ["Signed in with a passkey", "Signed in with an email code", "A stolen session token was used: the session was ended",
                                     "Passkey sign-in refused", "Passkey not removed", "Account created"], "\(rows)")
        #expect(rows.map(\.red) == [false, true, true, true, true, false], "\(rows)")
        #expect(rows.map { $0.meta.contains("refused") } == [false, true, false, false, false, false], "\(rows)")
        // The app is named; the pages' own events (the sign-up, the refused removal) name none.
        #expect(rows[0].meta.hasSuffix(" · Ledger · 127.0.0.1") && rows.dropFirst().allSatisfy { $0.meta.hasSuffix(" · 127.0.0.1") && !$0.meta.contains("signet-web") },
                "\(rows)")
        // In each language the pages speak, with the same words for the same kinds.
        let french = Array(Self.rows(try browser.page("/account?ui_locales=fr").html).dropFirst())
        #expect(french[3].kind == "Connexion avec une clé d’accès refusée" && french[4].kind == "Clé d’accès non retirée" && french[1].meta.contains("refusée"), "\(french)")
    }

    /// The history's rows on an account page: each event's words, whether they are in red, and
    /// the line under them (time, a "refused" mark, address).
    static func rows(_ html: String) -> [(kind: String, red: Bool, meta: String)] {
        html.components(separatedBy: "<li data-testid=\"event-row\">").dropFirst().map { row in
            let open = row.range(of: "<span class=\"event-kind")!
            let tag = row[open.upperBound...].prefix { $0 != ">" }
            let text = row[open.upperBound...].drop { $0 != ">" }.dropFirst().prefix { $0 != "<" }
            // The line's text up to the row's end, without the span that keeps its time whole.
            let line = row.range(of: "<span class=\"meta\">").map { String(row[$0.upperBound...]) } ?? ""
            let meta = (line.components(separatedBy: "</li>").first ?? "").replacingOccurrences(of: "<[^>]+>", with: "", options: .regularExpression)
            return (String(text), tag.contains("danger"), meta)
        }
    }

    /// The `href` of the link marked `testID` on a page, unescaped.
    static func href(_ html: String, _ testID: String) -> String? {
        guard let mark = html.range(of: "data-testid=\"\(testID)\"") else { return nil }
        let before = html[..<mark.lowerBound]
        guard let start = before.range(of: "href=\"", options: .backwards) else { return nil }
        return String(before[start.upperBound...].prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
    }
}
