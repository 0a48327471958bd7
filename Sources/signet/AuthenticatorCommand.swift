import Foundation
import SignetAPI
import SignetClient
import SignetCrypto
import SignetSoftware
import SignetWebAuthn
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `signet authenticator signup|signin|passkeys|enroll-device-key|approve`: plays the phone
/// against any Signet, through the SDK, with a software authenticator and device key whose state
/// (keys and session) lives in one file.
enum AuthenticatorCommand {
    static let usage = """
        usage: signet authenticator COMMAND --state FILE [--url URL] [--client-id ID] [--origin ORIGIN]
          signup --email EMAIL [--name NAME]   create an account with a new passkey
          enroll --link LINK                   the first passkey of an account an operator made, by its enrollment link
          signin [--username EMAIL]            sign in (discoverable without --username)
          passkeys                             list the account's passkeys
          enroll-device-key [--name NAME]      enrol this "phone"'s device key (steps up with the passkey when the sign-in is old)
          device-keys                          list the account's device keys (the phones that approve)
          remove-device-key ID                 revoke one (a lost phone's; this one's own is deleted here too)
          approve ACTION_JSON                  approve an action, e.g. '{"type":"payment","amount":200}'
          step-up                              a fresh passkey check: new tokens whose auth_time is now
          token --audience AUD                 an access token for a resource server, minted from the refresh token
          sessions                             where the account is signed in (this one marked current)
          events [--take N]                    the account's security events, newest first (20 unless --take)
          end-session ID                       end one of them (steps up when the sign-in is old)
          end-other-sessions                   end every session but this one (steps up when the sign-in is old)
          export                               the account's own copy of everything the server holds about it
          email-sign-in [on|off]               whether email codes sign in; off needs recovery codes or a second passkey
          delete-account                       erase the account (steps up with the passkey when the sign-in is old)
          email-start --email EMAIL            mail a sign-in code to EMAIL
          email-signin --email EMAIL [--code CODE] [--mail-dir DIR]
                                               sign in with the code (without --code: the newest code mailed to EMAIL
                                               in a development server's DIR, ./signet-mail by default)
          add-passkey [--name NAME]            add this authenticator's passkey to the signed-in account
          recovery-codes                       make a new set of 10 recovery codes (shown once)
          recover --email EMAIL --recovery-code CODE
                                               sign in with a recovery code
          recovery                             show the recovery holding the account, if any
          cancel-recovery                      cancel it (with a session from a credential older than it)
          change-email --email NEW             mail a code to a new address for the account (steps up first)
          confirm-email --email NEW [--code CODE] [--mail-dir DIR]
                                               move the account there with that code (without --code: the newest in DIR)
          device-signin [--scope SCOPE]        sign this "new device" in: prints the user code (and a QR code of the link
                                               on standard error), then waits for a signed-in phone to approve it
          approve-device CODE | deny-device CODE
                                               approve or deny a new device's sign-in with this phone's device key
          --dpop                               (with any command) bind the session's tokens to this state's DPoP key
        """

    /// The state file: the authenticator's credentials, the device key and the session.
    final class StateFile: TokenStore, @unchecked Sendable {
        let url: URL
        let authenticator: SoftwareAuthenticator
        let deviceKeys: SoftwareDeviceKeyStore
        private let lock = NSLock()
        private var session: StoredSession?

        struct Contents: Codable {
            var authenticator: Data
            var deviceID: String
            var deviceKey: Data?
            var session: StoredSession?
            var dpopKey: Data?
        }
        /// The DPoP key, made the first time `--dpop` is given.
        var dpopKey: SoftwareDPoPKey?

        init(url: URL) throws {
            self.url = url
            if let data = FileManager.default.contents(atPath: url.path) {
                let contents = try JSONDecoder().decode(Contents.self, from: data)
                authenticator = try SoftwareAuthenticator(stateData: contents.authenticator)
                deviceKeys = try SoftwareDeviceKeyStore(deviceID: contents.deviceID, privateKeyDER: contents.deviceKey.map { [UInt8]($0) })
                session = contents.session
                dpopKey = try contents.dpopKey.map { try SoftwareDPoPKey(privateKeyDER: [UInt8]($0)) }
            } else {
                authenticator = SoftwareAuthenticator()
                deviceKeys = try SoftwareDeviceKeyStore(deviceID: "cli-" + UUID().uuidString.lowercased())
            }
        }

        func persist() throws {
            let contents = Contents(authenticator: try authenticator.stateData(), deviceID: deviceKeys.deviceID,
                                    deviceKey: deviceKeys.privateKeyDER.map { Data($0) }, session: lock.withLock { session },
                                    dpopKey: dpopKey.map { Data($0.privateKeyDER) })
            try SecretFile.save(try JSONEncoder().encode(contents), to: url.path)
        }

        func save(_ session: StoredSession) throws {
            lock.withLock { self.session = session }
            try persist()
        }

        func load() throws -> StoredSession? { lock.withLock { session } }

        func clear() throws {
            lock.withLock { session = nil }
            try persist()
        }
    }

    /// The options any command takes (each with a value; `--dpop` alone); the commands each read theirs.
    static let options: Set = ["state", "url", "client-id", "origin", "email", "name", "link", "username", "audience", "take",
                               "code", "mail-dir", "recovery-code", "scope", "wait"]
    /// The commands that take one word after them (an ID, a code, an action, on or off).
    static let takesWord: Set = ["remove-device-key", "approve", "end-session", "email-sign-in", "approve-device", "deny-device"]

    static func run(_ args: [String]) -> Int32 {
        guard let command = args.first, (["signup", "enroll", "signin", "passkeys", "enroll-device-key", "device-keys", "remove-device-key", "approve", "events", "step-up", "token", "delete-account", "sessions", "end-session", "end-other-sessions", "export", "email-sign-in"] + emailCommands + deviceCommands).contains(command) else {
            return usageError(usage, args.first.map { UsageProblem("no authenticator command \"\($0)\"") } ?? UsageProblem("which command?"))
        }
        var parsed: [String: String] = [:]
        var loose: [String] = []
        var useDPoP = false
        var words = CommandWords(args.dropFirst())
        let statePath: String
        do {
            while let arg = words.next() {
                if arg == "--dpop" {
                    useDPoP = true
                } else if arg.hasPrefix("--") {
                    guard Self.options.contains(String(arg.dropFirst(2))) else { throw UsageProblem.unexpected(arg) }
                    parsed[String(arg.dropFirst(2))] = try words.value(of: arg)
                } else {
                    loose.append(arg)
                }
            }
            if let extra = loose.dropFirst(Self.takesWord.contains(command) ? 1 : 0).first { throw UsageProblem.unexpected(extra) }
            statePath = try required(parsed["state"], else: UsageProblem("--state FILE is required: the phone's keys and session live there"))
        } catch {
            return usageError(usage, error)
        }
        let options = parsed
        let url = URL(string: options["url"] ?? "http://127.0.0.1:8080")!
        // The development server's origin is http://localhost:PORT; elsewhere the URL's own origin.
        let host = url.host == "127.0.0.1" ? "localhost" : (url.host ?? "localhost")
        let origin = options["origin"] ?? "\(url.scheme ?? "http")://\(host)\(url.port.map { ":\($0)" } ?? "")"
        let positional = loose
        let dpop = useDPoP
        let result = Result<JSONValue, any Error>.blocking {
            let state = try StateFile(url: URL(fileURLWithPath: statePath))
            if dpop, state.dpopKey == nil { state.dpopKey = try SoftwareDPoPKey() }
            // With a DPoP key the proofs' htu must be the server's own name for itself: the
            // development server calls itself localhost.
            let base = dpop && url.host == "127.0.0.1" ? URL(string: url.absoluteString.replacingOccurrences(of: "127.0.0.1", with: "localhost"))! : url
            let client = SignetClient(
                baseURL: base, clientID: options["client-id"] ?? "dev",
                passkeys: SoftwarePasskeyProvider(authenticator: state.authenticator, origin: origin), deviceKeys: state.deviceKeys, tokens: state,
                dpop: dpop ? state.dpopKey.map(SoftwareDPoPKeyStore.init) : nil)
            try await waitForServer(url, seconds: Double(options["wait"] ?? "30") ?? 30)
            defer { try? state.persist() }
            if let answer = try await runEmail(command, options, client) { return answer }
            if let answer = try await runDevice(command, options, positional, client) { return answer }
            switch command {
            case "signup":
                guard let email = options["email"] else { throw SignetError(.invalidResponse, "signup needs --email") }
                let tokens = try await client.signUp(email: email, name: options["name"])
                return try await signedIn(client, tokens)
            case "enroll":
                guard let link = options["link"] else { throw SignetError(.invalidResponse, "enroll needs --link: the operator's enrollment link") }
                let tokens = try await client.enroll(ticket: link)
                return try await signedIn(client, tokens)
            case "signin":
                let tokens = try await client.signIn(username: options["username"])
                return try await signedIn(client, tokens)
            case "passkeys":
                let list = try await client.passkeys()
                return .object(["ok": .bool(true), "passkeys": try encode(list)])
            case "step-up":
                try await client.stepUp()
                return .object(["ok": .bool(true)])
            case "events":
                guard let take = Int(options["take"] ?? "20") else { throw SignetError(.invalidResponse, "--take needs a number") }
                return .object(["ok": .bool(true), "events": try encode(try await client.securityEvents(take: take))])
            case "sessions":
                return .object(["ok": .bool(true), "sessions": try encode(try await client.sessions())])
            case "end-other-sessions":
                return .object(["ok": .bool(true), "ended": .int(Int64(try await client.revokeOtherSessions()))])
            case "email-sign-in":
                switch positional.first {
                case nil: break
                case "on"?: try await client.setEmailSignIn(true)
                case "off"?: try await client.setEmailSignIn(false)
                default: throw SignetError(.invalidResponse, "email-sign-in takes on, off, or nothing (to read it)")
                }
                return .object(["ok": .bool(true), "enabled": .bool(try await client.emailSignIn())])
            case "export":
                return .object(["ok": .bool(true), "export": try encode(try await client.exportAccount())])
            case "end-session":
                guard let id = positional.first else { throw SignetError(.invalidResponse, "end-session needs the session's ID") }
                try await client.revokeSession(id: id)
                return .object(["ok": .bool(true)])
            case "delete-account":
                try await client.deleteAccount()
                return .object(["ok": .bool(true), "deleted": .bool(true)])
            case "token":
                guard let audience = options["audience"] else { throw SignetError(.invalidResponse, "token needs --audience") }
                return .object(["ok": .bool(true), "access_token": .string(try await client.accessToken(audience: audience))])
            case "device-keys":
                return .object(["ok": .bool(true), "device_keys": try encode(try await client.deviceKeys())])
            case "remove-device-key":
                guard let id = positional.first else { throw SignetError(.invalidResponse, "remove-device-key needs the key's ID") }
                try await client.revokeDeviceKey(id: id)
                return .object(["ok": .bool(true)])
            case "enroll-device-key":
                let key = try await client.enrollDeviceKey(name: options["name"] ?? "signet authenticator")
                return .object(["ok": .bool(true), "device_key": try encode(key)])
            default:
                guard let text = positional.first, let action = try? JSONDecoder().decode(JSONDocument.self, from: Data(text.utf8)) else {
                    throw SignetError(.invalidResponse, "approve needs the action as a JSON argument")
                }
                let approval = try await client.approve(action: action)
                return .object(["ok": .bool(true), "action_token": .string(approval.action_token), "expires_in": .int(approval.expires_in)])
            }
        }
        switch result {
        case .success(let json):
            print(json.serialized)
            return 0
        case .failure(let error):
            let failure = error as? SignetError ?? SignetError(.invalidResponse, "\(error)")
            print(JSONValue.object(["ok": .bool(false), "error": .string(failure.code.rawValue), "message": .string(failure.message)]).serialized)
            return 1
        }
    }

    static func signedIn(_ client: SignetClient, _ tokens: TokenResponse) async throws -> JSONValue {
        let info = try await client.userInfo()
        return .object(["ok": .bool(true), "sub": .string(info.sub), "email": info.email.map(JSONValue.string) ?? .null,
                        "scope": tokens.scope.map(JSONValue.string) ?? .null, "expires_in": .int(tokens.expires_in)])
    }

    static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        try StrictJSON().parse([UInt8](JSONEncoder().encode(value)))
    }

    /// Waits until the server answers /healthz, so a script may start it and go on at once.
    static func waitForServer(_ url: URL, seconds: Double) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let (_, response) = try? await URLSession.shared.data(from: url.appendingPathComponent("healthz")),
               (response as? HTTPURLResponse)?.statusCode == 200 { return }
            if Date() > deadline { throw SignetError(.unreachable, "no Signet answers at \(url.absoluteString)") }
            try await Task.sleep(nanoseconds: 200_000_000)
        }
    }
}

extension Result where Failure == any Error {
    /// Runs async work to completion from synchronous code.
    static func blocking(_ body: @escaping @Sendable () async throws -> Success) -> Result where Success: Sendable {
        let box = ResultBox<Success>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { box.value = .success(try await body()) } catch { box.value = .failure(error) }
            done.signal()
        }
        done.wait()
        return box.value!
    }
}

final class ResultBox<T>: @unchecked Sendable {
    var value: Result<T, any Error>?
}
