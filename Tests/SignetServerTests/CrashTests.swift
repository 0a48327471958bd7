import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetStore
import SignetTestSupport
import SignetWebAuthn
import Testing

/// DESIGN.md, "Reliability rules": what was answered stays done. A `signet serve` takes sign-ups
/// (each with a device key), sign-ins, refreshes, approved actions and passkey revocations from
/// several threads and is killed with SIGKILL at a given moment; after a restart on the same
/// database every answered sign-up signs in, every answered revocation holds, every rotated
/// refresh token is refused as reused, and every used auth session and action challenge is
/// refused when replayed.
@Suite struct CrashTests {
    /// What the load saw answered before the kill.
    final class Answered: @unchecked Sendable {
        let lock = NSLock()
        var accounts: [(email: String, authenticator: SoftwareAuthenticator)] = []
        /// Passkeys whose revocation was answered (the account signs in with its second one).
        var revoked: [SoftwareAuthenticator] = []
        var rotated: [String] = []
        var usedSessions: [(session: String, credential: JSONValue)] = []
        /// Approved actions: the challenge, its signature and the token that approved it.
        var approvals: [(challenge: String, signature: String, email: String)] = []
        func add(_ body: (Answered) -> Void) {
            lock.lock()
            body(self)
            lock.unlock()
        }
    }

    static func token(_ cluster: Cluster, _ body: JSONValue, on instance: Int = 0) throws -> (status: Int, json: JSONValue) {
        try cluster.post(instance, "/oauth/token", body)
    }

    /// Adds `authenticator`'s passkey to the account of `access`; whether it was answered.
    static func addPasskey(_ cluster: Cluster, _ instance: Int, _ authenticator: SoftwareAuthenticator, email: String, access: String) throws -> Bool {
        let (status, options) = try cluster.post(instance, "/me/passkeys/options", .object([:]), bearer: access)
        guard status == 200, let publicKey = options["authn_params_public_key"], let session = options["auth_session"],
              let challenge = publicKey["challenge"]?.string.flatMap({ Base64URL.decode($0) }), let handle = publicKey["user"]?["id"]?.string.flatMap({ Base64URL.decode($0) })
        else { return false }
        let made = try authenticator.register(rpID: "localhost", origin: Cluster.origin, challenge: challenge, userHandle: handle, userName: email)
        return try cluster.post(instance, "/me/passkeys", .object(["auth_session": session, "authn_response": made.json]), bearer: access).status == 201
    }

    static func refresh(_ token: String) -> JSONValue {
        .object(["grant_type": .string("refresh_token"), "client_id": .string("dev"), "refresh_token": .string(token)])
    }

    /// The moments of the kill, in seconds into the load: a CI-sized few, or
    /// `SIGNET_CRASH_POINTS` (comma-separated; `scripts/crash.sh` passes a longer list).
    static let points: [Double] = ProcessInfo.processInfo.environment["SIGNET_CRASH_POINTS"]
        .map { $0.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) } } ?? [0.05, 0.4, 0.9]

    @Test("kill -9 under sign-ups, sign-ins, refreshes, approved actions and passkey revocations loses nothing that was answered (SQLite)",
          arguments: CrashTests.points)
    func killNine(after seconds: Double) throws {
        let directory = Scratch.directory.appendingPathComponent("signet-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.killUnderLoad(try Cluster(instances: 1, database: "sqlite:" + directory.appendingPathComponent("signet.db").path), after: seconds)
    }

    @Test("kill -9 of one of two instances on PostgreSQL under load loses nothing that was answered",
          .enabled(if: ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES"] != nil, "needs PostgreSQL (SIGNET_TEST_POSTGRES); scripts/test.sh starts one"),
          arguments: CrashTests.points.count > 3 ? CrashTests.points : [0.1, 0.6])
    func killNinePostgres(after seconds: Double) throws {
        try Self.killUnderLoad(try Cluster(instances: 2), after: seconds)
    }

    /// Load on every instance of `cluster` (thread `t` on instance `t % count`), `kill -9` of
    /// instance 0 `seconds` into it, a restart in its place, then every check on every instance.
    static func killUnderLoad(_ cluster: Cluster, after seconds: Double) throws {
        let count = cluster.instances.count
        let answered = Answered()
        // A log stream to an endpoint here: after the kill it must still get every event.
        let (listener, receiver, base) = try LogStreamTests.receiver()
        defer { listener.stop() }
        let added = try runProcess(ProcessTests.binary.path, ["admin", "log-streams", "add", "--name", "crash", "--url", base + "/in", "--database", cluster.database, "--json"],
                                   environment: ["SIGNET_KEK": cluster.kek], in: cluster.directory)
        try #require(added.status == 0, "\(added.errors)")
        let store = try SignetApp.openStore(cluster.database, connections: 2)
        let streamStart = try #require(try store.logStreams().first?.lastLogID)
        let stop = SharedFlag(false)
        let workers = Workers(4) { thread in
            let instance = thread % count
            var mine: [(email: String, authenticator: SoftwareAuthenticator, refresh: String, access: String, key: SoftwareDeviceKey, keyID: String, replaced: Bool)] = []
            var n = 0
            while !stop.value {
                n += 1
                do {
                    if mine.isEmpty || n % 4 == 0 {
                        let authenticator = SoftwareAuthenticator()
                        let email = "t\(thread)-\(n)@signet.test"
                        let tokens = try cluster.signUp(authenticator, email: email, on: instance)
                        guard let refresh = tokens["refresh_token"]?.string, let access = tokens["access_token"]?.string else { continue }
                        answered.add { $0.accounts.append((email, authenticator)) }
                        let key = try SoftwareDeviceKey(deviceID: "crash-\(thread)-\(n)")
                        let (enrolled, device) = try cluster.post(instance, "/me/device-keys", .object([
                            "public_key": .string(Base64URL.encode(key.publicKeySPKI)), "device_id": .string(key.deviceID), "platform": .string("ios"),
                        ]), bearer: access)
                        guard enrolled == 201, let keyID = device["id"]?.string else { continue }
                        mine.append((email, authenticator, refresh, access, key, keyID, false))
                    } else if n % 8 == 6, let index = mine.indices.first(where: { !mine[$0].replaced }) {
                        // A second passkey, then the first one revoked: answered, it stays revoked.
                        let account = mine[index]
                        mine[index].replaced = true
                        let laptop = SoftwareAuthenticator()
                        guard try Self.addPasskey(cluster, instance, laptop, email: account.email, access: account.access) else { continue }
                        answered.add { a in
                            if let i = a.accounts.firstIndex(where: { $0.email == account.email }) { a.accounts[i].authenticator = laptop }
                        }
                        mine[index].authenticator = laptop
                        let first = Base64URL.encode(try #require(account.authenticator.credentials.first).id)
                        let revoked = try HTTPClient(port: cluster.port(instance)).send("DELETE", "/me/passkeys/\(first)", headers: [("Authorization", "Bearer \(account.access)")])
                        if revoked.status == 204 { answered.add { $0.revoked.append(account.authenticator) } }
                    } else if n % 4 == 3 {
                        let account = mine[n % mine.count]
                        let (_, challenge) = try cluster.post(instance, "/actions/challenge", .object([
                            "device_key_id": .string(account.keyID), "action": .object(["type": .string("payment"), "amount": .int(Int64(n))]),
                        ]), bearer: account.access)
                        guard let id = challenge["challenge_id"]?.string, let bytes = challenge["challenge"]?.string.flatMap({ Base64URL.decode($0) }) else { continue }
                        let signature = Base64URL.encode(try account.key.sign(bytes))
                        let (status, _) = try cluster.post(instance, "/actions/approve", .object(["challenge_id": .string(id), "signature": .string(signature)]),
                                                           bearer: account.access)
                        if status == 200 { answered.add { $0.approvals.append((id, signature, account.email)) } }
                    } else if n % 4 == 1 {
                        let account = mine[n % mine.count]
                        let (session, credential) = try cluster.signInStart(account.authenticator, on: instance)
                        let (status, _) = try Self.token(cluster, .object([
                            "grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": .string(session), "authn_response": credential,
                        ]), on: instance)
                        if status == 200 { answered.add { $0.usedSessions.append((session, credential)) } }
                    } else {
                        let index = n % mine.count
                        let (status, json) = try Self.token(cluster, Self.refresh(mine[index].refresh), on: instance)
                        if status == 200, let next = json["refresh_token"]?.string {
                            let old = mine[index].refresh
                            mine[index].refresh = next
                            answered.add { $0.rotated.append(old) }
                        }
                    }
                } catch {
                    // The server went away mid-request: that operation was not answered.
                }
            }
        }
        // The kill comes `seconds` after the load is under way (a debug build starts slowly).
        #expect(eventually(timeout: 20) { answered.lock.withLock { answered.accounts.count >= 8 } })
        Thread.sleep(forTimeInterval: seconds)  // the moment of the kill: a duration, not a wait
        cluster.kill9(0)
        stop.value = true
        workers.join()
        try cluster.restart(0)

        #expect(answered.accounts.count > 0 && answered.rotated.count + answered.usedSessions.count > 0, "no load was answered before the kill")
        // A fresh session per account, for the replays below (a revocation ended the first one).
        var access: [String: String] = [:]
        for (n, account) in answered.accounts.enumerated() {
            let (session, credential) = try cluster.signInStart(account.authenticator, on: n % count)
            let (status, json) = try Self.token(cluster, .object([
                "grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": .string(session), "authn_response": credential,
            ]), on: (n + 1) % count)
            #expect(status == 200, "answered sign-up \(account.email) lost: \(json.serialized)")
            access[account.email] = json["access_token"]?.string
        }
        for passkey in answered.revoked {
            let (session, credential) = try cluster.signInStart(passkey, on: count - 1)
            let (status, json) = try Self.token(cluster, .object([
                "grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": .string(session), "authn_response": credential,
            ]))
            #expect(status == 400 && json["reason"] == .string("credential_revoked"), "an answered revocation did not hold: \(json.serialized)")
        }
        for old in answered.rotated {
            let (status, json) = try Self.token(cluster, Self.refresh(old))
            #expect(status == 400 && json["reason"] == .string("refresh_token_reused"), "a rotated token came back: \(json.serialized)")
        }
        for (session, credential) in answered.usedSessions {
            let (status, json) = try Self.token(cluster, .object([
                "grant_type": .string(GrantType.webauthn), "client_id": .string("dev"), "auth_session": .string(session), "authn_response": credential,
            ]))
            #expect(status == 400 && json["reason"] == .string("auth_session_unknown"), "a used auth session worked again: \(json.serialized)")
        }
        for approval in answered.approvals {
            let (status, json) = try cluster.post(0, "/actions/approve", .object([
                "challenge_id": .string(approval.challenge), "signature": .string(approval.signature),
            ]), bearer: access[approval.email])
            #expect(status == 400 && json["reason"] == .string("action_challenge_unknown"), "a used action challenge worked again: \(json.serialized)")
        }
        // The stream: once it has caught up (an instance that died holding it is taken over
        // after its lease), every event written since it began reached the endpoint, as written.
        #expect(eventually(timeout: 90, every: 0.5) { try store.logStreams().first.map { try store.auditEventsPending(after: $0.lastLogID, limit: 1) == 0 } == true })
        let written = try store.auditEntries(AuditQuery(after: streamStart, limit: 1_000_000))
        let received = Dictionary(try receiver.items().compactMap { item in item["log_id"]?.string.map { ($0, item) } }) { first, _ in first }
        let missing = written.filter { received[String($0.id)] == nil }
        #expect(missing.isEmpty, "\(missing.count) of \(written.count) events never reached the stream")
        let changed = written.filter { e in
            guard let item = received[String(e.id)] else { return false }
            let kind: String? = item["data"]?["signet_event"]?.string, request: String? = item["data"]?["request_id"]?.string
            return kind != e.event.kind || request != e.event.requestID
        }
        #expect(changed.isEmpty, "\(changed.count) events reached the stream otherwise than written")
        print("kill -9 after \(seconds) s, \(count) instance(s): \(answered.approvals.count) actions, \(answered.accounts.count) sign-ups, \(answered.usedSessions.count) sign-ins, \(answered.rotated.count) rotations, \(answered.revoked.count) passkey revocations answered; none lost; \(written.count) events streamed in \(receiver.posts.count) POSTs")
    }
}

/// A flag shared by threads.
final class SharedFlag<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}

/// DESIGN.md, "Reliability rules", on a real file system that fills: a tmpfs of 4 MiB holds the
/// database (mounting needs root, as CI and this machine run).
@Suite struct DiskFullTests {
    /// Whether this process may mount a tmpfs (root, and a sandbox that allows it): tried once.
    static let canMount: Bool = {
        guard getuid() == 0 else { return false }
        let probe = Scratch.directory.appendingPathComponent("signet-mount-probe-\(UUID().uuidString)")
        guard (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)) != nil else { return false }
        defer { try? FileManager.default.removeItem(at: probe) }
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe.path]) == 0 else { return false }
        return run("/bin/umount", [probe.path]) == 0
    }()

    @Test("the database's file system fills: 503 storage_full, nothing half written, service back by itself when space returns",
          .enabled(if: DiskFullTests.canMount, "mounting a tmpfs needs root and a sandbox that allows it (StorageFullTests covers the rest)"))
    func fileSystemFills() throws {
        let mount = Scratch.directory.appendingPathComponent("signet-full-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
        defer {
            _ = Self.run("/bin/umount", [mount.path])
            try? FileManager.default.removeItem(at: mount)
        }
        try #require(Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mount.path]) == 0)
        let database = mount.appendingPathComponent("signet.db").path
        let cluster = try Cluster(instances: 1, database: "sqlite:" + database)
        _ = try cluster.signUp(SoftwareAuthenticator(), email: "before@signet.test", on: 0)
        // Leave about 64 KiB free.
        let filler = mount.appendingPathComponent("filler")
        _ = Self.run("/bin/dd", ["if=/dev/zero", "of=\(filler.path)", "bs=4096", "count=4096"])
        _ = Self.run("/usr/bin/truncate", ["-s", "-65536", filler.path])
        var answered = 1
        var full = 0
        var statuses: [Int: Int] = [:]
        for i in 0..<400 where full < 5 {
            let (status, json) = try cluster.signUpAttempt(SoftwareAuthenticator(), email: "full\(i)@signet.test") { try cluster.post(0, $0, $1) }
            statuses[status, default: 0] += 1
            if status == 200 { answered += 1 } else if status == 503 {
                #expect(json["reason"] == .string("storage_full"), "\(json.serialized)")
                full += 1
            }
        }
        #expect(full == 5, "the file system never filled: \(statuses)")
        #expect(statuses.keys.allSatisfy { $0 == 200 || $0 == 503 }, "\(statuses)")
        // Space returns: the same process serves again, with no restart.
        try FileManager.default.removeItem(at: filler)
        let back = Date()
        _ = try cluster.signUp(SoftwareAuthenticator(), email: "after@signet.test", on: 0)
        print("disk full: \(answered) sign-ups answered, \(full) refused with storage_full; served again \(String(format: "%.3f", Date().timeIntervalSince(back))) s after space returned")
        let store = try SQLStore(path: database)
        #expect(try store.rowCounts()["users"] == answered + 1 && store.rowCounts()["credentials"] == answered + 1)
        #expect(try store.integrityCheck() == "ok")
    }

    static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
