import SignetAPI
import SignetAuth
import Foundation
import SignetServer
import SignetHTTP
import SignetStore
import SignetWebAuthn
import SignetCrypto

/// `signet serve`: runs the server until SIGTERM or SIGINT, then drains and exits 0.
enum ServeCommand {
    static func run(_ args: [String]) -> Int32 {
        var config: String?
        var listen: String?
        var database: String?
        var words = CommandWords(args)
        do {
            while let flag = words.next() {
                switch flag {
                case "--config": config = try words.value(of: flag)
                case "--listen": listen = try words.value(of: flag)
                case "--database": database = try words.value(of: flag)
                default: throw UsageProblem.unexpected(flag)
                }
            }
        } catch {
            return usageError("usage: signet serve [--config signet.json] [--listen HOST:PORT] [--database sqlite:PATH]", error)
        }
        let environment = ProcessInfo.processInfo.environment
        let manager = ServiceManager(environment: environment)
        var configuration: ServerConfiguration
        let app: SignetApp
        let inherited: Int32?
        do {
            inherited = try SocketActivation.socket(environment)
            configuration = try ConfigurationLoader.load(file: config, environment: environment, listen: listen, database: database,
                                                         boundPort: inherited.flatMap(HTTPServer.boundPort))
            var socket = inherited
            if inherited == nil && configuration.developmentMode && configuration.listenPort == 0 {
                // Development mode makes its origin, issuer and redirect URIs from the port, so
                // the free one port 0 asks for is picked before they are made. With no file to
                // read again (development mode has none), the second load reads the environment.
                let fd = try HTTPServer.listen(host: configuration.listenHost, port: 0)
                socket = fd
                configuration = try ConfigurationLoader.load(file: nil, environment: environment, listen: listen, database: database,
                                                             boundPort: HTTPServer.boundPort(fd))
            }
            app = try SignetApp(configuration: configuration, inheritedSocket: socket)
        } catch {
            FileHandle.standardError.write(Data("signet: cannot start: \(error)\n".utf8))
            manager?.send(["STATUS": "cannot start: \(error)"])
            return 1
        }
        let shownDatabase = redacted(configuration.database)
        let mode = configuration.developmentMode
            ? "development mode: RP ID \(configuration.rpID), origin \(configuration.webOrigins.joined(separator: ", ")), client_id \"dev\", database \(shownDatabase)"
            : "RP ID \(configuration.rpID), \(configuration.clients.count) client(s), database \(shownDatabase)"
        let socket = inherited == nil ? "" : ", on the socket the service manager passed"
        FileHandle.standardError.write(Data("signet: listening on \(app.baseURL) (\(mode)\(socket))\n".utf8))
        // Bound, migrated and answering: a unit ordered after this one may start.
        let status = "listening on \(app.baseURL)"
        manager?.send(["READY": "1", "STATUS": status, "MAINPID": "\(getpid())"])
        let watchdog = manager.flatMap { manager in
            manager.watchdogInterval.map { Watchdog(manager: manager, interval: $0, server: app.server, status: status) }
        }
        // Signals arrive on a dispatch source, never in an async-signal handler.
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let done = DispatchSemaphore(value: 0)
        let sources = [SIGTERM, SIGINT].map { sig in
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { done.signal() }
            source.resume()
            return source
        }
        done.wait()
        watchdog?.stop()
        manager?.send(["STOPPING": "1", "STATUS": "shutting down: finishing requests in flight"])
        FileHandle.standardError.write(Data("signet: shutting down: no new connections, finishing requests in flight\n".utf8))
        app.shutdown(grace: 10)
        sources.forEach { $0.cancel() }
        FileHandle.standardError.write(Data("signet: stopped\n".utf8))
        return 0
    }
}

/// The database URL without its password, for the start-up line.
func redacted(_ url: String) -> String {
    guard var components = URLComponents(string: url), components.password != nil else { return url }
    components.password = "***"
    return components.string ?? "(database URL)"
}

/// `signet origin FINGERPRINT`: the Android origin for a signing certificate's SHA-256 fingerprint.
enum OriginCommand {
    static func run(_ args: [String]) -> Int32 {
        let usage = "usage: signet origin AB:CD:...:EF   (the SHA-256 fingerprint keytool -list -v prints)"
        guard args.count == 1 else { return usageError(usage, UsageProblem(args.isEmpty ? "the fingerprint is missing" : "one fingerprint, in one word")) }
        guard let bytes = parseFingerprint(args[0]) else { return usageError(usage, fingerprintProblem(args[0])) }
        print(ServerConfiguration.androidOrigin(fingerprint: bytes))
        return 0
    }

    /// Why a word is not a SHA-256 fingerprint; keytool prints the SHA-1 one, 20 bytes, just above it.
    static func fingerprintProblem(_ word: String) -> UsageProblem {
        let hex = word.filter { $0 != ":" && $0 != " " }
        if let wrong = hex.first(where: { !$0.isHexDigit }) {
            return UsageProblem("\"\(wrong)\" is not a hexadecimal digit")
        }
        guard hex.count != 40 else { return UsageProblem("that is 20 bytes, a SHA-1 fingerprint: give the SHA256 one, on the line after it in keytool -list -v") }
        guard hex.count.isMultiple(of: 2) else { return UsageProblem("that is \(hex.count) hexadecimal digits; a SHA-256 fingerprint has 64 (32 bytes)") }
        return UsageProblem("that is \(hex.count / 2) bytes; a SHA-256 fingerprint has 32")
    }
}

/// `signet keys rotate`: adds a signing key, published at once and signing ``KeyRing/signingDelay``
/// seconds later; the old one stays published until its tokens expire. Also `kek`, `rekey`,
/// `status` and `revoke`.
enum KeysCommand {
    static func run(_ args: [String]) -> Int32 {
        let usage = "usage: signet keys rotate [--config signet.json] [--database sqlite:PATH] | signet keys kek"
            + " | signet keys rekey --new-kek-file PATH [--config signet.json] [--database sqlite:PATH]"
            + " | signet keys status [--config signet.json] [--database sqlite:PATH]"
            + " | signet keys revoke KID [--config signet.json] [--database sqlite:PATH]"
        guard ["rotate", "kek", "rekey", "status", "revoke"].contains(args.first) else {
            return usageError(usage, args.first.map { UsageProblem("no keys command \"\($0)\"") } ?? UsageProblem("which keys command?"))
        }
        if args.first == "kek" {
            print(Base64URL.encode(SecureRandomBytes.make(32)))
            return 0
        }
        var config: String?
        var database: String?
        var newKEKFile: String?
        var named: [String] = []
        var words = CommandWords(args.dropFirst())
        do {
            while let flag = words.next() {
                switch flag {
                case "--config": config = try words.value(of: flag)
                case "--database": database = try words.value(of: flag)
                case "--new-kek-file" where args.first == "rekey": newKEKFile = try words.value(of: flag)
                // A key ID is 12 base64url characters, which may begin with "-": whatever is not an
                // option is the ID, wherever it stands.
                case _ where args.first == "revoke": named.append(flag)
                default: throw UsageProblem.unexpected(flag)
                }
            }
            if args.first == "revoke" && named.count != 1 { throw UsageProblem(named.isEmpty ? "which key? give its KID (signet keys status lists them)" : "one KID at a time") }
        } catch {
            return usageError(usage, error)
        }
        let kid = named.first
        do {
            let environment = ProcessInfo.processInfo.environment
            let configuration = try ConfigurationLoader.load(file: config, environment: environment, database: database)
            if args.first == "rekey" { return try rekey(configuration, newKEKFile: newKEKFile, environment: environment) }
            if args.first == "status" { return try status(configuration, environment: environment) }
            if let kid { return try revoke(kid, configuration) }
            let store = try SignetApp.openStore(configuration.database, existing: true)
            let kek = try KeyEncryptionKey.load(for: store, environment: environment, file: configuration.keyEncryptionKeyFile).kek
            // The key must open the one that signs now: a key sealed under another would sign
            // once published, and no server could open it.
            _ = try KeyRing(store: store, kek: kek, retentionSeconds: configuration.accessTokenLifetime)
            let now = Date()
            let at = Int64(now.timeIntervalSince1970 * 1000)
            let kid: String
            do {
                kid = try KeyRing.create(store: store, kek: kek, retireOthers: true, now: now, writes: { kid in
                    [.audit(.byCommand(.signingKeyRotated, at: at, detail: "kid \(kid), by signet keys rotate; signs from \(at / 1000 + KeyRing.signingDelay)"))]
                })
            } catch let error as StoreError where error.code == .signingKeyLimit {
                FileHandle.standardError.write(Data(("signet: the database holds \(KeyRing.heldLimit) signing keys, the most allowed: revoke a retired one"
                    + " (signet keys status lists them; signet keys revoke KID), or wait until one is destroyed\n").utf8))
                return 2
            }
            // Published at once; it signs once every cached JWKS can hold it.
            print(JSONValue.object([
                "rotated": .bool(true), "kid": .string(kid), "signs_from": .int(Int64(now.timeIntervalSince1970) + KeyRing.signingDelay),
            ]).serialized)
            return 0
        } catch {
            FileHandle.standardError.write(Data("signet: \(error)\n".utf8))
            return 1
        }
    }
}


extension KeysCommand {
    /// `signet keys rekey`: seals what the database holds under the new key-encryption key
    /// (``KeyEncryptionKey/rekey(store:from:to:now:)``). The current key must exist: one is
    /// never made here. The new one comes from `SIGNET_NEW_KEK` or `--new-kek-file`, in the
    /// current key's format.
    static func rekey(_ configuration: ServerConfiguration, newKEKFile: String?, environment: [String: String]) throws -> Int32 {
        let old = try existingKey(configuration, environment: environment, "nothing to re-key from")
        let new: [UInt8]
        if let text = environment["SIGNET_NEW_KEK"] {
            new = try KeyEncryptionKey.fromEnvironment(text, variable: "SIGNET_NEW_KEK", fallback: "--new-kek-file")
        } else if let newKEKFile, FileManager.default.fileExists(atPath: newKEKFile) {
            new = try KeyEncryptionKey.load(environment: [:], file: newKEKFile)
        } else {
            throw ConfigurationError("the new key-encryption key: --new-kek-file PATH (an existing file, made with: signet keys kek) or SIGNET_NEW_KEK")
        }
        let store = try SignetApp.openStore(configuration.database, existing: true)
        let done = try KeyEncryptionKey.rekey(store: store, from: old, to: new)
        print(JSONValue.object([
            "rekeyed": .bool(true), "from": .string(KeyEncryptionKey.id(old)), "to": .string(KeyEncryptionKey.id(new)),
            "signing_keys": .int(Int64(done.signingKeys)), "messages": .int(Int64(done.messages)), "log_streams": .int(Int64(done.logStreams)), "retired_code_keys": .int(Int64(done.retiredCodeKeys)),
            "dropped_code_keys": .int(Int64(done.droppedCodeKeys)),
        ]).serialized)
        return 0
    }

    /// `signet keys revoke KID`: the key deleted now, sealed private key and all, with its
    /// `signing_key_revoked` row (``Store/revokeSigningKey(kid:writes:)``): out of every
    /// instance's JWKS at its next reload, and no token it signed verifies. Needs no
    /// key-encryption key, so it also works on a database whose key is lost. Exit 2 for a
    /// `kid` the database does not hold or the last key never retired (rotate first).
    static func revoke(_ kid: String, _ configuration: ServerConfiguration) throws -> Int32 {
        let store = try SignetApp.openStore(configuration.database, existing: true)
        let at = Int64(Date().timeIntervalSince1970 * 1000)
        let event = AuditEvent.byCommand(.signingKeyRevoked, at: at, detail: "kid \(kid.prefix(40)), by signet keys revoke")
        let revoked: Bool
        do throws(StoreError) {
            revoked = try store.revokeSigningKey(kid: kid, writes: [.audit(event)])
        } catch {
            guard error.code == .conflict else { throw error }
            FileHandle.standardError.write(Data("signet: \(kid.prefix(40)) is the last key never retired: run signet keys rotate first, then revoke it\n".utf8))
            return 2
        }
        guard revoked else {
            FileHandle.standardError.write(Data("signet: no signing key \(kid.prefix(40)) (signet keys status lists them)\n".utf8))
            return 2
        }
        let signer = KeyRing.schedule(try store.signingKeys(), now: at, rotationDays: 0).signer
        print(JSONValue.object(["revoked": .bool(true), "kid": .string(kid), "signing": signer.map(JSONValue.string) ?? .null]).serialized)
        return 0
    }

    /// The configured key-encryption key, which must exist: these commands never make one.
    static func existingKey(_ configuration: ServerConfiguration, environment: [String: String], _ otherwise: String) throws -> [UInt8] {
        guard let kek = try BackupCommand.configuredKEK(configuration, environment: environment) else {
            throw ConfigurationError("no key-encryption key at \(configuration.keyEncryptionKeyFile) and no SIGNET_KEK: \(otherwise)")
        }
        return kek
    }

    /// `signet keys status`: the key-encryption key's ID and, for each code key the database
    /// holds, the unused recovery codes (and accounts) that need it
    /// (``KeyEncryptionKey/status(store:kek:kept:)``). Writes nothing.
    static func status(_ configuration: ServerConfiguration, environment: [String: String]) throws -> Int32 {
        let kek = try existingKey(configuration, environment: environment, "nothing to report on")
        let store = try SignetApp.openStore(configuration.database, existing: true)
        let status = try KeyEncryptionKey.status(store: store, kek: kek, kept: try KeyEncryptionKey.keptKeys(store: store, kek: kek))
        func count(_ c: KeyEncryptionKey.CodeCount) -> JSONValue { .object(["unused_codes": .int(Int64(c.codes)), "accounts": .int(Int64(c.accounts))]) }
        // Token-signing keys, in seconds since 1970: which signs now, when a retired one is
        // destroyed, and the next scheduled rotation.
        let rows = try store.signingKeys()
        let schedule = KeyRing.schedule(rows, now: Int64(Date().timeIntervalSince1970 * 1000), rotationDays: configuration.signingKeyRotationDays)
        print(JSONValue.object([
            "key_encryption_key": .string(status.id),
            "signing_keys": .array(rows.map { row in
                .object(["kid": .string(row.kid), "created_at": .int(row.createdAt / 1000), "retired_at": row.retiredAt.map { .int($0 / 1000) } ?? .null,
                         "destroyed_at": row.retiredAt.map { .int(KeyRing.destroyedAt(retiredAt: $0) / 1000) } ?? .null,
                         "signing": .bool(row.kid == schedule.signer)])
            }),
            "next_rotation": schedule.nextRotation.map { .int($0 / 1000) } ?? .null,
            "code_keys": .array(status.codeKeys.map { key in
                .object(["id": .string(key.id), "current": .bool(key.current), "unused_codes": .int(Int64(key.unused.codes)), "accounts": .int(Int64(key.unused.accounts))])
            }),
            "codes_without_key_id": count(status.unlabelled), "codes_under_missing_keys": count(status.lost),
        ]).serialized)
        return 0
    }
}

extension AuditEvent {
    /// A change a command made to the database directly, as the operator (`signet-admin`, from
    /// `local`): its audit row, a success.
    static func byCommand(_ kind: AuditKind, at: Int64, detail: String) -> AuditEvent {
        AuditEvent(at: at, kind: kind.rawValue, outcome: "success", clientID: ManagementCaller.commandLine.clientID, remote: "local", detail: detail)
    }
}

enum SecureRandomBytes {
    static func make(_ n: Int) -> [UInt8] { SecureRandom.bytes(n) }
}

/// `signet client-secret`: a new secret for a confidential client (32 random bytes) and the line
/// that configures it; the configuration keeps only the secret's SHA-256.
enum ClientSecretCommand {
    static func run(_ args: [String]) -> Int32 {
        guard args.isEmpty else { return usageError("usage: signet client-secret") }
        let secret = Base64URL.encode(SecureRandom.bytes(32))
        print("client_secret: \(secret)")
        print("\"client_secret_hash\": \"sha256:\(Base64URL.encode(Digest.sha256.hash(Array(secret.utf8))))\"")
        return 0
    }
}
