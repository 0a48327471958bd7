import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetStore
import SignetWebAuthn
import Testing
import SignetTestSupport

/// DESIGN.md, "Management API and operations": `signet admin` and `signet backup` as an
/// operator runs them, against the database of a running server; `metrics.listen`.
@Suite struct OperationsTests {
    /// Runs `signet` in `directory` (where the server's KEK file is); status, output, errors.
    static func signet(_ arguments: [String], in directory: URL) throws -> (status: Int32, output: String, errors: String) {
        try runProcess(ProcessTests.binary.path, arguments, environment: [:], in: directory)
    }

    static func json(_ text: String) throws -> JSONValue { try StrictJSON().parse(Array(text.utf8)) }

    @Test("signet admin: users list/show/block/unblock/sign-out/remove-method/delete, clients add/list/rotate-secret/remove, logs; a running server sees each change")
    func admin() throws {
        let server = try TestServer()
        let database = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        func admin(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
            try Self.signet(["admin"] + arguments + database, in: server.directory)
        }
        let phone = Phone(server)
        let tokens = try phone.signUp(email: "ada@signet.test")
        let bob = try #require(jwtClaims(try SignedIn(server, email: "bob@signet.test").access)["sub"]?.string)
        let id = try #require(jwtClaims(tokens["access_token"]?.string)["sub"]?.string)

        let table = try admin(["users", "list"])
        #expect(table.status == 0 && table.output.contains("ada@signet.test") && table.output.contains("2 of 2 user(s)"))
        let listed = try Self.json(try admin(["users", "list", "--query", "email:ada*", "--json"]).output)
        #expect(listed["total"] == .number("1") && listed["users"]?.array?.first?["user_id"] == .string(id))
        let shown = try Self.json(try admin(["users", "show", id, "--json"]).output)
        #expect(shown["authentication_methods"]?.array?.first?["type"] == .string("passkey") && shown["sessions"]?.array?.count == 1)
        #expect(try admin(["users", "show", id]).output.contains("last login"))
        #expect(shown["blocked_for"] == .array([]))
        let lifted = try admin(["users", "lift-limits", id])
        #expect(lifted.status == 0 && lifted.output.contains("had no limit used up"), "\(lifted.errors)")
        #expect(try admin(["users", "lift-limits", "00000000-0000-4000-8000-000000000000"]).errors.contains("user_unknown"))
        // A stored value never drives the operator's terminal: a passkey name written before names
        // were checked, with an escape sequence and a bidirectional override, is shown escaped.
        let stored = try #require(try server.store.credentials(userID: id).first)
        #expect(try server.store.renameCredential(id: stored.id, userID: id, name: "\u{1B}]0;owned\u{7}\u{202E}txt.exe"))
        let escaped = try admin(["users", "show", id]).output
        #expect(escaped.contains(#"\u{1b}]0;owned\u{7}\u{202e}txt.exe"#) && !escaped.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E })

        // Blocking from the command line: the running server refuses the next sign-in at once.
        #expect(try admin(["users", "block", id]).status == 0)
        let (session, credential, _) = try phone.startSignIn()
        #expect(try phone.exchange(session: session, credential: credential).json["reason"] == .string("user_blocked"))
        #expect(try admin(["users", "unblock", id]).status == 0)
        let lost = try phone.signIn()
        #expect(lost["access_token"] != nil)

        // A lost phone: signed out everywhere, then its passkey removed, from the command line.
        func refresh(_ token: JSONValue?) throws -> JSONValue {
            try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": token ?? .null])).json
        }
        // One session ends (as users show lists it); the others go on; another account's is not found.
        let spare = try phone.signIn()
        let spareSID = try #require(jwtClaims(spare["access_token"]?.string)["sid"]?.string)
        let lostSID = try #require(jwtClaims(lost["access_token"]?.string)["sid"]?.string)
        let showing = try admin(["users", "show", id]).output
        // The session's line names where it signed in (the phone's address here).
        #expect(showing.split(separator: "\n").contains { $0.contains(spareSID) && $0.contains("127.0.0.1") }, "\(showing)")
        let elsewhere = try admin(["users", "sign-out", bob, "--session", spareSID])
        #expect(elsewhere.status == 1 && elsewhere.errors.contains("session_not_found"), "\(elsewhere.errors)")
        let one = try admin(["users", "sign-out", id, "--session", spareSID])
        #expect(one.status == 0 && one.output.contains("has ended"), "\(one.errors)")
        #expect(try refresh(spare["refresh_token"])["reason"] == .string("refresh_token_revoked"))
        let left = try Self.json(try admin(["users", "show", id, "--json"]).output)["sessions"]?.array ?? []
        #expect(left.contains { $0["id"] == .string(lostSID) && $0["kind"] == .string("app") } && !left.contains { $0["id"] == .string(spareSID) })
        let signedOut = try admin(["users", "sign-out", id])
        #expect(signedOut.status == 0 && signedOut.output.contains("signed out everywhere"), "\(signedOut.errors)")
        #expect(try refresh(lost["refresh_token"])["reason"] == .string("refresh_token_revoked"))
        #expect(try admin(["users", "sign-out", "00000000-0000-4000-8000-000000000000"]).errors.contains("user_unknown"))
        let method = try #require(try Self.json(try admin(["users", "show", id, "--json"]).output)["authentication_methods"]?.array?.first?["id"]?.string)
        #expect(method.hasPrefix("passkey|"))
        #expect(try admin(["users", "remove-method", id, method]).status == 0)
        let (revokedSession, revokedCredential, _) = try phone.startSignIn()
        let refused = try phone.exchange(session: revokedSession, credential: revokedCredential).json
        #expect(refused["reason"] == .string("credential_revoked"), "\(refused.serialized)")
        let again = try admin(["users", "remove-method", id, method])
        #expect(again.status == 1 && again.errors.contains("authentication_method_unknown"), "\(again.errors)")
        #expect(try admin(["users", "remove-method", id]).status == 2)
        let noRecovery = try admin(["users", "cancel-recovery", id])
        #expect(noRecovery.status == 1 && noRecovery.errors.contains("not_found"), "\(noRecovery.errors)")

        // A machine client, added, used, re-keyed and removed while the server runs.
        let added = try Self.json(try admin(["clients", "add", "--name", "Ops", "--type", "confidential", "--grant", "client_credentials",
                                             "--scope", "read:users read:logs", "--json"]).output)
        let clientID = try #require(added["client_id"]?.string)
        let secret = try #require(added["client_secret"]?.string)
        #expect(added["scopes"] == .array([.string("read:users"), .string("read:logs")]))
        func token(_ secret: String) throws -> Int {
            try server.post("/oauth/token", .object(["grant_type": .string("client_credentials"), "client_id": .string(clientID), "client_secret": .string(secret)])).status
        }
        #expect(eventually(timeout: 5) { try token(secret) == 200 })
        #expect(try Self.json(try admin(["clients", "list", "--json"]).output).array?.first?["client_secret"] == nil)
        let rotated = try #require(try Self.json(try admin(["clients", "rotate-secret", clientID, "--json"]).output)["client_secret"]?.string)
        #expect(eventually(timeout: 5) { try token(secret) == 401 && token(rotated) == 200 })
        #expect(try admin(["clients", "remove", clientID]).status == 0)
        #expect(eventually(timeout: 5) { try token(rotated) == 401 })
        // An app's client, removed while an account is signed in through it: the session ends at
        // once (its access token refused, its refresh token revoked), not at the token's expiry.
        let app = try Self.json(try admin(["clients", "add", "--name", "Withdrawn app", "--type", "public", "--grant", GrantNames.webauthn,
                                           "--grant", GrantNames.refreshToken, "--json"]).output)
        var appPhone = Phone(server)
        appPhone.clientID = try #require(app["client_id"]?.string)
        #expect(eventually(timeout: 5) {
            try server.post("/passkey/register", .object(["client_id": .string(appPhone.clientID), "user_profile": .object(["email": .string("withdrawn@signet.test")])])).status == 200
        })
        let (appSession, appCredential) = try appPhone.startSignUp(email: "withdrawn@signet.test")
        let appTokens = try appPhone.exchange(session: appSession, credential: appCredential).json
        let signedIn = SignedIn(server, phone: appPhone, access: try #require(appTokens["access_token"]?.string, "\(appTokens.serialized)"))
        #expect(try signedIn.call("GET", "/me/passkeys").status == 200)
        #expect(try admin(["clients", "remove", appPhone.clientID]).status == 0)
        #expect(try signedIn.call("GET", "/me/passkeys").json["reason"] == .string("token_invalid"))
        #expect(try server.store.auditEvents(limit: 5).contains { $0.kind == "admin_client_removed" && $0.detail?.hasSuffix("1 session(s) ended") == true })
        // Refusals: a bad grant, a public machine client, an unknown user, a usage error.
        #expect(try admin(["clients", "add", "--name", "X", "--type", "public", "--grant", "client_credentials"]).status == 2)
        #expect(try admin(["clients", "add", "--name", "X", "--type", "confidential", "--grant", "password"]).errors.contains("unknown grant"))
        let unknown = try admin(["users", "show", "00000000-0000-4000-8000-000000000000"])
        #expect(unknown.status == 1 && unknown.errors.contains("user_unknown"))
        #expect(try admin(["users", "frobnicate"]).status == 2)

        // The audit trail names the command line as the client of each change.
        let logs = try admin(["logs", "--user", id, "--json"]).output.split(separator: "\n").map { try Self.json(String($0)) }
        let kinds = logs.compactMap { $0["signet_event"]?.string }
        #expect(kinds.contains("admin_user_blocked") && kinds.contains("admin_user_unblocked") && kinds.contains("sign_up"))
        #expect(kinds.contains("admin_sessions_revoked") && kinds.contains("admin_passkey_revoked"))
        let only = try admin(["logs", "--event", "admin_passkey_revoked", "--user", id, "--json"]).output.split(separator: "\n").map { try Self.json(String($0)) }
        #expect(only.count == 1 && only.first?["signet_event"] == .string("admin_passkey_revoked"))
        #expect(try admin(["logs", "--event", "no_such_event"]).errors.contains("is no event Signet writes"))
        let signUps = try admin(["logs", "--type", "ss", "--json"]).output.split(separator: "\n").map { try Self.json(String($0)) }
        #expect(!signUps.isEmpty && signUps.allSatisfy { $0["type"] == .string("ss") })
        #expect(logs.filter { $0["signet_event"]?.string?.hasPrefix("admin_") == true }.allSatisfy { $0["client_id"] == .string("signet-admin") })

        #expect(try admin(["users", "delete", id]).status == 0)
        #expect(try server.store.user(id: id) == nil && server.counts["users"] == 2)  // bob and the withdrawn app's account
    }

    @Test("signet admin logs --follow prints events as they are written")
    func follow() throws {
        let server = try TestServer()
        _ = try SignedIn(server, email: "ada@signet.test")
        let process = Process()
        process.executableURL = ProcessTests.binary
        process.arguments = ["admin", "logs", "--follow", "--json", "--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        process.currentDirectoryURL = server.directory
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            // SIGKILL: the test runner's children inherit its blocked SIGTERM.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let lines = LineCollector(output.fileHandleForReading)
        #expect(eventually(timeout: 10) { lines.text.contains(#""signet_event":"sign_up""#) })
        _ = try SignedIn(server, email: "bob@signet.test")
        #expect(eventually(timeout: 10) { lines.text.components(separatedBy: #""signet_event":"sign_up""#).count == 3 })
    }

    @Test("signet backup of a database under sign-in load: checked, restored, and signed in against")
    func backupUnderLoad() throws {
        let server = try TestServer()
        let phones = try (0..<8).map { n in
            let phone = Phone(server)
            _ = try phone.signUp(email: "user\(n)@signet.test")
            return phone
        }
        // Sign-ins and sign-ups go on while the copy is made.
        let stop = Flag()
        let answered = Counter()
        let load = Thread {
            var n = 0
            while !stop.isSet {
                n += 1
                if (try? phones[n % phones.count].signIn()) != nil { answered.add() }
                if n % 4 == 0, (try? Phone(server).signUp(email: "late\(n)@signet.test")) != nil { answered.add() }
            }
        }
        load.start()
        #expect(eventually(timeout: 10) { answered.value >= 20 })
        let copy = server.directory.appendingPathComponent("backup.db")
        let result = try Self.signet(["backup", "--to", copy.path, "--json", "--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path],
                                     in: server.directory)
        let during = answered.value
        #expect(eventually(timeout: 10) { answered.value >= during + 10 })
        stop.set()
        while !load.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        #expect(result.status == 0, "\(result.errors)")
        let report = try Self.json(result.output)
        let latest = try #require((server.store as? SQLStore)?.schemaVersions().last)
        #expect(report["integrity"] == .string("ok") && report["schema_version"] == .number(String(latest)))
        // The key a restore needs, by its ID: the server's own.
        let kek = try KeyEncryptionKey.load(environment: [:], file: server.directory.appendingPathComponent("signet.kek").path)
        #expect(report["key_encryption_key"] == .string(KeyEncryptionKey.id(kek)))
        guard case .number(let count)? = report["users"], let users = Int(count) else { Issue.record("no user count"); return }
        #expect(users >= 8)
        #expect(!FileManager.default.fileExists(atPath: copy.path + ".part") && !FileManager.default.fileExists(atPath: copy.path + "-wal"))
        // With a key that is not the database's, the copy is made and no key is named.
        let other = server.directory.appendingPathComponent("other.db")
        let foreign = try runProcess(ProcessTests.binary.path, ["backup", "--to", other.path, "--json", "--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path],
                                     environment: ["SIGNET_KEK": Base64URL.encode(SecureRandom.bytes(32))], in: server.directory)
        let named = try Self.json(foreign.output)["key_encryption_key"]
        #expect(foreign.status == 0 && named == nil, "\(foreign.output)")
        // A second backup to the same name is refused rather than overwriting it.
        #expect(try Self.signet(["backup", "--to", copy.path, "--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path], in: server.directory).status == 1)

        // Restored: a server on the copy signs in the accounts it holds.
        let restored = try TestServer(restoring: (copy, server.directory.appendingPathComponent("signet.kek")))
        #expect(restored.counts["users"] == users)
        for phone in phones {
            #expect(try Phone(restored, authenticator: phone.authenticator).signIn()["access_token"] != nil)
        }
        #expect(try (restored.store as? SQLStore)?.integrityCheck() == "ok")
    }

    @Test("signet backup of PostgreSQL points to pg_dump")
    func backupPostgres() throws {
        let result = try Self.signet(["backup", "--to", "x.db", "--database", "postgres://localhost/none"], in: Scratch.directory)
        #expect(result.status == 2 && result.errors.contains("pg_dump"))
    }

    @Test("signet copy into PostgreSQL (or a new SQLite file without it): a server on the copy signs every account in, redeems its refresh tokens, keeps its blocks and audit trail")
    func copyToAnotherDatabase() throws {
        let server = try TestServer()
        let phones = try (0..<3).map { n in
            let phone = Phone(server)
            return (phone, try phone.signUp(email: "mover\(n)@signet.test"))
        }
        let blocked = try #require(jwtClaims(phones[2].1["access_token"]?.string)["sub"]?.string)
        let source = ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path]
        #expect(try Self.signet(["admin", "users", "block", blocked] + source, in: server.directory).status == 0)
        let before = server.counts

        // With a password in it, to check that none is printed (the test cluster trusts loopback).
        let target: String
        if let admin = ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"] {
            let url = try PostgresAdmin.createDatabase(adminURL: admin, name: "m_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20))
            target = url.replacingOccurrences(of: "postgres://signet@", with: "postgres://signet:hunter2@")
        } else {
            target = "sqlite:" + server.directory.appendingPathComponent("moved.db").path
        }
        let copied = try Self.signet(["copy", "--to", target, "--json"] + source, in: server.directory)
        #expect(copied.status == 0, "\(copied.errors)")
        #expect(!copied.output.contains("hunter2") && !copied.errors.contains("hunter2"))
        let report = try Self.json(copied.output)
        let kek = try KeyEncryptionKey.load(environment: [:], file: server.directory.appendingPathComponent("signet.kek").path)
        #expect(report["verified"] == .bool(true) && report["changed_since"] == .array([]) && report["key_encryption_key"] == .string(KeyEncryptionKey.id(kek)))
        var tables: [String: Int] = [:]
        for table in report["tables"]?.array ?? [] { tables[table["name"]?.string ?? ""] = table["rows"]?.int64.map { Int($0) } }
        #expect(before.allSatisfy { tables[$0.key] == $0.value } && tables.count >= 20, "\(tables)")
        // Into it again: it holds rows now, and is left as it is.
        let again = try Self.signet(["copy", "--to", target] + source, in: server.directory)
        #expect(again.status == 2 && (again.errors.contains("holds rows") || again.errors.contains("exists")), "\(again.errors)")
        #expect(try Self.signet(["copy", "--to", "mysql://x"] + source, in: server.directory).status == 2)
        #expect(try Self.signet(["copy", "--to", target, "--database", "sqlite:/nonexistent/signet.db"], in: server.directory).status == 2)

        let moved = try TestServer(opening: (target, server.directory.appendingPathComponent("signet.kek")))
        #expect(moved.counts == before)
        for (phone, tokens) in phones.prefix(2) {
            let signedIn = try Phone(moved, authenticator: phone.authenticator).signIn()
            #expect(jwtClaims(signedIn["access_token"]?.string)["sub"] == jwtClaims(tokens["access_token"]?.string)["sub"])
            // A refresh token issued before the move is redeemed after it.
            let refreshed = try moved.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": tokens["refresh_token"] ?? .null]))
            #expect(refreshed.status == 200 && refreshed.json["access_token"] != nil, "\(refreshed.json.serialized)")
        }
        let (session, credential, _) = try Phone(moved, authenticator: phones[2].0.authenticator).startSignIn()
        #expect(try Phone(moved, authenticator: phones[2].0.authenticator).exchange(session: session, credential: credential).json["reason"] == .string("user_blocked"))
        // The audit trail goes on after the copied rows.
        let audited = try #require(moved.counts["audit_events"])
        #expect(audited > before["audit_events"] ?? 0)
    }

    @Test("metrics.listen moves /metrics to its own listener; the public one answers 404")
    func metricsListener() throws {
        let port = freeLoopbackPort()
        let server = try TestServer(.socket) { $0.metricsListen = ("127.0.0.1", port) }
        _ = try SignedIn(server, email: "ada@signet.test")
        let public_ = try server.get("/metrics")
        #expect(public_.status == 404)
        let metrics = try HTTPClient(port: port).send("GET", "/metrics")
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(metrics.status == 200 && text.contains(#"signet_audit_events_total{event="sign_up",outcome="success"} 1"#))
        #expect(try HTTPClient(port: port).send("GET", "/healthz").status == 404)
    }

    @Test("/metrics counts durable SQLite's commits and the WAL syncs they shared")
    func groupCommitMetrics() throws {
        let server = try TestServer()
        for n in 0..<3 { _ = try SignedIn(server, email: "gc\(n)@signet.test") }
        let text = String(decoding: try server.get("/metrics").body, as: UTF8.self)
        func value(_ name: String) -> Int? {
            text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) }
        }
        let commits = try #require(value("signet_sqlite_durable_commits_total"))
        let syncs = try #require(value("signet_sqlite_wal_syncs_total"))
        #expect(commits >= 3 && syncs >= 1 && syncs <= commits, "\(commits) commits, \(syncs) syncs")
        // Each sync's duration is in the histogram: cumulative buckets, every sync counted once.
        #expect(value("signet_sqlite_wal_sync_seconds_count") == syncs)
        let buckets = text.split(separator: "\n").filter { $0.hasPrefix("signet_sqlite_wal_sync_seconds_bucket") }.compactMap { Int($0.split(separator: " ")[1]) }
        #expect(buckets.count == 13 && buckets == buckets.sorted() && buckets.last == syncs, "\(buckets)")
    }

    @Test("a slow WAL sync shows in its histogram's upper buckets, where an operator reads the disk's stalls")
    func slowSyncMetrics() throws {
        let server = try TestServer()
        _ = try SignedIn(server, email: "slow0@signet.test")
        try #require(server.store as? SQLStore).slowSyncs(0.03)
        _ = try SignedIn(server, email: "slow1@signet.test")
        let text = String(decoding: try server.get("/metrics").body, as: UTF8.self)
        func bucket(_ bound: String) -> Int? {
            text.split(separator: "\n").first { $0.hasPrefix("signet_sqlite_wal_sync_seconds_bucket{le=\"\(bound)\"} ") }.flatMap { Int($0.split(separator: " ")[1]) }
        }
        let all = try #require(bucket("+Inf"))
        let fast = try #require(bucket("0.025"))
        #expect(all - fast >= 1, "no sync over 25 ms: \(fast) of \(all)")
        #expect(text.contains("signet_sqlite_locked_checkpoint_seconds_count"))
    }
}

/// Text read from a pipe as it arrives.
final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = ""
    init(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.lock()
            self.buffer += String(decoding: data, as: UTF8.self)
            self.lock.unlock()
        }
    }
    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return buffer
    }
}

/// A flag one thread sets and another reads.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

/// A count several threads add to.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() {
        lock.lock()
        count += 1
        lock.unlock()
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
