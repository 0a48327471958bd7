import Foundation
import SignetAPI
import SignetAuth
import SignetServer
import SignetStore
import SignetWebAuthn

/// `signet admin users|clients|roles|log-streams|stats|logs ...`: the Management API's operations on the database
/// directly (DESIGN.md, "Management API and operations"), audited as made by `signet-admin`.
/// Tables for people by default, one JSON document with `--json`.
enum AdminCommand {
    static let usage = """
        usage: signet admin users list [--query Q] [--page N] | show ID | block ID | unblock ID | delete ID
               signet admin users sessions ID [--from CURSOR] [--take N]   (every live session, N at a time, 1-100: where show's list stops)
               signet admin users add --email EMAIL [--name NAME] [--locale TAG] [--verified] [--no-mail] [--link [--ttl SECONDS]]
               signet admin users import FILE [--mail]   (Auth0's user export: JSON lines or an array)
               signet admin users enrollment-link ID [--ttl SECONDS]   (a link that adds a first passkey)
               signet admin users export ID   (everything held about the account, as JSON: for its owner's request)
               signet admin users export --all [--out FILE]   (every account's record as JSON lines, the file import reads)
               signet admin users update ID [--app-metadata JSON] [--user-metadata JSON]   (merged at the top level; null removes a key)
               signet admin users sign-out ID [--session SESSION_ID]   (every session, or the one users show lists)
               signet admin users remove-method ID METHOD_ID | cancel-recovery ID
               signet admin users lift-limits ID   (codes and recovery tries used up for the hour: tried again at once)
               signet admin clients add --name NAME --type confidential|public --grant GRANT [--grant GRANT]...
                                        [--scope "S1 S2"] [--redirect-uri URI]... [--audience AUD]...
                                        [--post-logout-redirect-uri URI]... [--backchannel-logout-uri URI]
                                        [--jwks FILE | --jwks-uri URL]   (private_key_jwt: the client's public keys, or where
                                                         it publishes them; no secret)
                                        [--require-par] (authorization requests through POST /oauth/par only)
                                        [--require-role NAME]... (only accounts with one of these roles get its tokens)
                                        [--minimum-acr phr|phrh] (only passkey sign-ins, or hardware-bound ones, get them)
                                        [--refresh-ttl SECONDS] [--refresh-absolute-ttl SECONDS] (its sessions, if shorter)
                                        [--refresh-retry-window SECONDS] (a lost refresh answer may be retried, 0-300)
               signet admin clients update ID [--name NAME] [--grant GRANT]... [--scope "S1 S2"] [--redirect-uri URI]...
                                        [--post-logout-redirect-uri URI]... [--backchannel-logout-uri URI|""] [--audience AUD]...
                                        [--default-audiences] [--require-par|--no-require-par] [--jwks-uri URL]
                                        [--require-role NAME]... [--any-role] [--minimum-acr phr|phrh] [--any-acr]
                                        [--refresh-ttl SECONDS] [--refresh-absolute-ttl SECONDS] [--refresh-retry-window SECONDS]
                                        [--default-refresh]
                                        (each given setting replaced whole)
               signet admin clients list | remove ID | rotate-secret ID | set-keys ID --jwks FILE
               signet admin log-streams add --name NAME --url URL [--format JSONARRAY|JSONLINES|JSONOBJECT] [--content-type TYPE]
                                        [--authorization-file FILE]   (the Authorization header's value, read from FILE)
                                        [--filter CATEGORY]...   (only those events: auth.login.fail, management.success, ...)
               signet admin log-streams update ID [--name NAME] [--url URL] [--format F] [--content-type TYPE] [--status active|paused]
                                        [--authorization-file FILE | --no-authorization] [--filter CATEGORY... | --all-events]
               signet admin log-streams resend ID --after LOG_ID   (every event after it sent again)
               signet admin log-streams rotate-secret ID [--previous-secret-seconds N]   (a new signing secret, shown once;
                                        the previous one signs beside it for N seconds, 86400 unless given, at most 604800)
               signet admin log-streams list | remove ID
               signet admin roles list [--query TEXT] [--page N] | show ID | remove ID
               signet admin roles add --name NAME [--description TEXT]
               signet admin roles grant ID --api AUDIENCE --permission NAME [--permission NAME]...   (names from tokens.permissions:
                                        give --config)
               signet admin roles revoke ID --api AUDIENCE --permission NAME [--permission NAME]...
               signet admin roles assign ID USER_ID [USER_ID]... [--for DURATION | --until TIME] | unassign ID USER_ID [USER_ID]...
               signet admin stats [--from YYYYMMDD] [--to YYYYMMDD]   (accounts active in 30 days; sign-ins and sign-ups a day)
               signet admin logs [--user ID] [--event NAME] [--type CODE] [--take N] [--follow]
        every command takes --database URL or --config FILE, and --json
        """

    /// The usage of one group (`users`, `clients`, ...): its entries with their continuation lines
    /// and the closing line; all of it for a group there is not. Every line of ``usage`` starts with
    /// seven characters, `usage: ` or spaces.
    static func usage(for group: String?) -> String {
        let lines = usage.split(separator: "\n")
        var kept: [Substring] = []
        var keeping = false
        for line in lines.dropLast() {
            let rest = line.dropFirst(7)
            if rest.hasPrefix("signet admin ") { keeping = group.map { rest.hasPrefix("signet admin \($0) ") } ?? false }
            if keeping { kept.append(rest) }
        }
        guard !kept.isEmpty else { return usage }
        return (kept.indices.map { ($0 == 0 ? "usage: " : "       ") + kept[$0] } + [String(lines.last!)]).joined(separator: "\n")
    }

    /// Each group's commands, known before the database is opened: a mistyped command is named
    /// as such, not after a database that may not be there. `logs` and `stats` take none.
    static let commands: [String: Set<String>] = [
        "users": ["list", "show", "block", "unblock", "delete", "sessions", "add", "import", "enrollment-link", "export", "update",
                  "sign-out", "remove-method", "cancel-recovery", "lift-limits"],
        "clients": ["add", "update", "list", "remove", "rotate-secret", "set-keys"],
        "log-streams": ["add", "update", "resend", "rotate-secret", "list", "remove"],
        "roles": ["list", "show", "remove", "add", "grant", "revoke", "assign", "unassign"],
    ]

    struct Options {
        var config: String?
        var database: String?
        var json = false
        var positional: [String] = []
        var values: [String: [String]] = [:]
        var follow = false
        var requirePAR = false
        var noRequirePAR = false
        var defaultAudiences = false
        var anyRole = false
        var anyACR = false
        var defaultRefresh = false
        var verified = false
        var noMail = false
        var mail = false
        var link = false
        var all = false
        var noAuthorization = false
        var allEvents = false
        func one(_ name: String) -> String? { values[name]?.last }
    }

    static func parse(_ args: [String]) throws(UsageProblem) -> Options {
        var options = Options()
        var words = CommandWords(args)
        let valued: Set<String> = ["--query", "--page", "--name", "--type", "--grant", "--scope", "--redirect-uri", "--audience", "--post-logout-redirect-uri", "--backchannel-logout-uri", "--refresh-retry-window", "--jwks", "--jwks-uri", "--user", "--event", "--type", "--take", "--email", "--locale", "--ttl", "--out", "--url", "--format", "--content-type", "--status", "--authorization-file", "--filter", "--from", "--to", "--after", "--app-metadata", "--user-metadata", "--session", "--previous-secret-seconds", "--description", "--api", "--permission", "--require-role", "--minimum-acr", "--refresh-ttl", "--refresh-absolute-ttl", "--for", "--until"]
        while let arg = words.next() {
            switch arg {
            case "--config": options.config = try words.value(of: arg)
            case "--database": options.database = try words.value(of: arg)
            case "--json": options.json = true
            case "--follow": options.follow = true
            case "--require-par": options.requirePAR = true
            case "--no-require-par": options.noRequirePAR = true
            case "--default-audiences": options.defaultAudiences = true
            case "--any-role": options.anyRole = true
            case "--any-acr": options.anyACR = true
            case "--default-refresh": options.defaultRefresh = true
            case "--verified": options.verified = true
            case "--no-mail": options.noMail = true
            case "--mail": options.mail = true
            case "--link": options.link = true
            case "--all": options.all = true
            case "--no-authorization": options.noAuthorization = true
            case "--all-events": options.allEvents = true
            case _ where valued.contains(arg): options.values[arg, default: []].append(try words.value(of: arg))
            case _ where arg.hasPrefix("--"): throw UsageProblem.unexpected(arg)
            default: options.positional.append(arg)
            }
        }
        return options
    }

    static func run(_ args: [String]) -> Int32 {
        let options: Options
        do {
            options = try parse(args)
            guard let group = options.positional.first else { throw UsageProblem("which group: users, clients, roles, log-streams, stats or logs?") }
            if let known = commands[group] {
                guard options.positional.count >= 2 else { throw UsageProblem("which \(group) command?") }
                guard known.contains(options.positional[1]) else { throw UsageProblem("no admin command \"\(group) \(options.positional[1])\"") }
            } else if !["logs", "stats"].contains(group) {
                throw UsageProblem("no admin group \"\(group)\": users, clients, roles, log-streams, stats or logs")
            }
        } catch {
            return usageError(usage(for: args.first { !$0.hasPrefix("-") }), error)
        }
        let ceremonies: Ceremonies
        do {
            let environment = ProcessInfo.processInfo.environment
            let configuration = try ConfigurationLoader.load(file: options.config, environment: environment, database: options.database)
            let store = try SignetApp.openStore(configuration.database, connections: 2, existing: true)
            let (kek, kept) = try KeyEncryptionKey.load(for: store, environment: environment, file: configuration.keyEncryptionKeyFile)
            let keys = try KeyRing(store: store, kek: kek, retentionSeconds: configuration.accessTokenLifetime)
            // The trust anchors say which passkeys still count as hardware-bound.
            ceremonies = Ceremonies(configuration: configuration, store: store, keys: keys, kek: kek, kept: kept, trustAnchors: try SignetApp.trustAnchors(configuration),
                                    metadata: try SignetApp.attestationMetadata(configuration, now: Date()))
        } catch {
            FileHandle.standardError.write(Data("signet admin: \(error)\n".utf8))
            return 1
        }
        let admin = Admin(ceremonies: ceremonies, options: options)
        do {
            switch (options.positional[0], options.positional.count > 1 ? options.positional[1] : "") {
            case ("users", "list"): try admin.listUsers()
            case ("users", "add") where options.positional.count == 2: try admin.addUser()
            case ("users", "import"): try admin.importUsers()
            case ("users", "enrollment-link"): try admin.enrollmentLink(try admin.id())
            case ("users", "show"): try admin.showUser(try admin.id())
            case ("users", "sessions"): try admin.listSessions(try admin.id())
            case ("users", "export") where options.all: try admin.exportAll()
            case ("users", "export"): try admin.emit(admin.ceremonies.accountExport(userID: try admin.id(), by: .commandLine, context: admin.context))
            case ("users", "update"): try admin.updateMetadata(try admin.id())
            case ("users", "block"): try admin.block(try admin.id(), true)
            case ("users", "unblock"): try admin.block(try admin.id(), false)
            case ("users", "delete"): try admin.deleteUser(try admin.id())
            case ("users", "sign-out"): try admin.signOut(try admin.id())
            case ("users", "remove-method"): try admin.removeMethod()
            case ("users", "cancel-recovery"): try admin.cancelRecovery(try admin.id())
            case ("users", "lift-limits"): try admin.liftLimits(try admin.id())
            case ("clients", "add"): try admin.addClient()
            case ("clients", "list"): try admin.listClients()
            case ("clients", "update"): try admin.updateClient(try admin.id())
            case ("clients", "remove"): try admin.removeClient(try admin.id())
            case ("clients", "rotate-secret"): try admin.rotateSecret(try admin.id())
            case ("clients", "set-keys"): try admin.setKeys(try admin.id())
            case ("log-streams", "list"): try admin.listLogStreams()
            case ("log-streams", "add") where options.positional.count == 2: try admin.addLogStream()
            case ("log-streams", "update"): try admin.updateLogStream(try admin.id())
            case ("log-streams", "remove"): try admin.removeLogStream(try admin.id())
            case ("log-streams", "rotate-secret"): try admin.rotateLogStreamSecret(try admin.id())
            case ("log-streams", "resend"):
                guard let after = options.one("--after") else { throw AuthError.malformed("log-streams resend needs --after LOG_ID") }
                try admin.show(try admin.ceremonies.resendLogStream(id: try admin.id(), after: after, by: .commandLine, context: admin.context), "rewound")
            case ("roles", "list"): try admin.listRoles()
            case ("roles", "add"): try admin.addRole()
            case ("roles", "show"): try admin.showRole(try admin.id())
            case ("roles", "grant"): try admin.changeRolePermissions(try admin.id(), add: true)
            case ("roles", "revoke"): try admin.changeRolePermissions(try admin.id(), add: false)
            case ("roles", "assign"): try admin.changeRoleMembers(give: true)
            case ("roles", "unassign"): try admin.changeRoleMembers(give: false)
            case ("roles", "remove"): try admin.removeRole(try admin.id())
            case ("logs", _) where options.positional.count == 1: try admin.logs()
            case ("stats", _) where options.positional.count == 1: try admin.stats()
            default: return usageError(usage(for: options.positional.first), UsageProblem("no admin command \"\(options.positional.prefix(2).joined(separator: " "))\"" + (options.positional.count > 2 ? " taking \(options.positional.count - 2) word(s)" : "")))
            }
            return 0
        } catch {
            let failure = AuthError(error)
            FileHandle.standardError.write(Data("signet admin: \(failure.reason.rawValue): \(failure.publicDetail ?? failure.detail)\n".utf8))
            return failure.reason == .malformed ? 2 : 1
        }
    }
}

/// One `signet admin` invocation.
struct Admin {
    let ceremonies: Ceremonies
    let options: AdminCommand.Options
    let context = RequestContext(remoteAddress: "local", requestID: "cli-" + String(UInt32.random(in: 0...UInt32.max), radix: 16))
    /// One line of JSON, keys sorted: metadata in `users show`.
    static let compact: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return encoder
    }()

    /// A whole-number option.
    static func integer(_ text: String?, _ name: String, default value: Int) throws -> Int {
        guard let text else { return value }
        guard let number = Int(text) else { throw AuthError.malformed("\(name) must be a number") }
        return number
    }

    func id() throws -> String {
        guard options.positional.count == 3 else { throw AuthError.malformed("give one ID") }
        return options.positional[2]
    }

    func emit(_ value: some Encodable) throws {
        print(String(decoding: try Self.encoder.encode(value), as: UTF8.self))
    }

    /// Columns padded to their widest cell.
    /// `text` safe to print on an operator's terminal: a control, separator or bidirectional
    /// character (``Ceremonies/isUnsafeInText(_:)``; ESC starts a terminal's escape sequences)
    /// is shown as `\u{…}`, so a stored value can neither drive the terminal nor reorder a line.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: Ceremonies.isUnsafeInText) else { return text }
        return text.unicodeScalars.map { Ceremonies.isUnsafeInText($0) ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
    }

    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let rows = rows.map { $0.map(printable) }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }

    func listUsers() throws {
        let page = try Admin.integer(options.one("--page"), "--page", default: 0)
        let result = try ceremonies.searchUsers(q: options.one("--query"), page: page, perPage: 100)
        if options.json { return try emit(result) }
        let rows: [[String]] = result.users.map { u in
            let verified = u.email_verified ? "yes" : "no"
            let blocked = u.blocked ? "BLOCKED" : "-"
            return [u.user_id, u.email, verified, blocked, String(u.logins_count), u.last_login ?? "never"]
        }
        print(Self.table(["USER ID", "EMAIL", "VERIFIED", "BLOCKED", "LOGINS", "LAST LOGIN"], rows))
        print("\(result.users.count) of \(result.total) user(s)" + (result.total > result.start + result.length ? "; next page: --page \(page + 1)" : ""))
    }

    /// `users add`: what `POST /api/v2/users` does, for a deployment where only operators make
    /// accounts (`signup: false`).
    /// With `--link`, also the enrollment link that adds the account's first passkey (for an
    /// owner mail does not reach), and `--json` then prints `{"user", "enrollment"}`.
    func addUser() throws {
        guard let email = options.one("--email") else { throw AuthError.malformed("users add needs --email") }
        let lifetime = try linkLifetime()
        guard lifetime == nil || options.link else { throw AuthError.malformed("--ttl goes with --link") }
        // Checked before the account is made, so a bad --ttl makes nothing.
        if options.link { _ = try Ceremonies.enrollmentLifetime(lifetime) }
        let user = try ceremonies.createUser(ManagementNewUser(email: email, name: options.one("--name"), email_verified: options.verified ? true : nil,
                                                               verify_email: !options.noMail, locale: options.one("--locale")),
                                             by: .commandLine, context: context)
        let link = options.link ? try ceremonies.createEnrollmentLink(userID: user.user_id, lifetime: lifetime, by: .commandLine, context: context) : nil
        if options.json {
            struct Made: Encodable { let user: ManagementUser; let enrollment: EnrollmentLink }
            return try link.map { try emit(Made(user: user, enrollment: $0)) } ?? emit(user)
        }
        print("""
            user   \(Self.printable(user.user_id))
            email  \(Self.printable(user.email))\(options.noMail ? "" : " (told by mail, where mail is configured)")
            """)
        if let link { Self.show(link) } else { print("next   its owner signs in with an email code to this address, then adds a passkey") }
    }

    /// `users enrollment-link ID`: `POST /api/v2/tickets/passkey-enrollment` on the database.
    func enrollmentLink(_ id: String) throws {
        let link = try ceremonies.createEnrollmentLink(userID: id, lifetime: try linkLifetime(), by: .commandLine, context: context)
        if options.json { return try emit(link) }
        Self.show(link)
    }

    /// `--ttl SECONDS`, if given.
    func linkLifetime() throws -> Int? { try options.one("--ttl").map { try Admin.integer($0, "--ttl", default: 0) } }

    /// An enrollment link as `users add --link` and `users enrollment-link` print it.
    static func show(_ link: EnrollmentLink) {
        print("""
            link   \(link.ticket)
            until  \(link.expires_at): it adds the first passkey and signs its owner in, once; hand it over as you would a password
            """)
    }

    struct UserDetail: Encodable {
        let user: ManagementUser
        let authentication_methods: [AuthenticationMethod]
        let sessions: [ManagementSession]
        /// Where the Management API's list goes on, when the account has more than are shown.
        let sessions_next: String?
        let recovery: RecoveryInfo?
        let blocked_for: [UserBlocks.Block]
        let roles: [ManagementRole]
    }

    func showUser(_ id: String) throws {
        let sessions = try ceremonies.sessions(userID: id, from: nil, take: 100)
        let detail = UserDetail(user: try ceremonies.managedUser(id: id), authentication_methods: try ceremonies.authenticationMethods(userID: id),
                                sessions: sessions.sessions, sessions_next: sessions.next, recovery: try ceremonies.recovery(userID: id).recovery,
                                blocked_for: try ceremonies.userBlocks(userID: id).blocked_for, roles: try ceremonies.userRoles(userID: id).map(ManagementRole.init))
        if options.json { return try emit(detail) }
        let u = detail.user
        print("""
            user       \(Self.printable(u.user_id))
            email      \(Self.printable(u.email)) (\(u.email_verified ? "verified" : "not verified"))
            name       \(Self.printable(u.name ?? "-"))
            blocked    \(u.blocked ? "YES" : "no")
            created    \(u.created_at)
            last login \(u.last_login ?? "never") (\(u.logins_count) in all)
            roles      \(detail.roles.isEmpty ? "-" : detail.roles.map { Self.printable($0.name) + " (\($0.id))" + ($0.expires_at.map { " until \($0)" } ?? "") }.joined(separator: ", "))
            """)
        printMetadata(u)
        print("")
        print(Self.table(["METHOD", "TYPE", "NAME", "CREATED", "LAST USED"], detail.authentication_methods.map {
            [$0.id, $0.type + ($0.hardware_bound == true ? " (hardware-bound)" : ""), $0.name ?? "-", $0.created_at ?? "-", $0.last_auth_at ?? "-"]
        }))
        print("")
        print(Self.sessionTable(detail.sessions))
        if let next = detail.sessions_next {
            print("(the first 100 sessions; signet admin users sessions \(Self.printable(u.user_id)) --from \(next) lists the next; sign-out ends them all)")
        }
        if let r = detail.recovery {
            print("\nRECOVERY OPEN  \(r.id): opened \(Ceremonies.iso(r.opened_at * 1000)), holds until \(Ceremonies.iso(r.hold_until * 1000)); "
                + "added \(r.passkeys.count) passkey(s), \(r.device_keys.count) device key(s). Not the owner? signet admin users cancel-recovery \(Self.printable(u.user_id))")
        }
        for b in detail.blocked_for {
            print("\nLIMIT USED UP  \(b.connection): \(b.attempts) of \(b.limit) this hour, until \(b.until). Checked who asks? signet admin users lift-limits \(Self.printable(u.user_id))")
        }
    }

    func block(_ id: String, _ blocked: Bool) throws {
        let user = try ceremonies.updateUser(id: id, ManagementUserPatch(blocked: blocked), by: .commandLine, context: context)
        if options.json { return try emit(user) }
        print("\(Self.printable(user.email)) (\(user.user_id)) is \(blocked ? "blocked: every grant is refused and its sessions have ended" : "no longer blocked")")
    }

    func deleteUser(_ id: String) throws {
        let user = try ceremonies.managedUser(id: id)
        try ceremonies.deleteUser(id: id, by: .commandLine, context: context)
        if options.json { return try emit(["deleted": id]) }
        print("deleted \(Self.printable(user.email)) (\(id)) and everything bound to it; its audit rows remain under a pseudonym")
    }

    /// Every session of the user ends (`DELETE /api/v2/users/{id}/sessions`): a lost phone's
    /// refresh token is refused from now on.
    func signOut(_ id: String) throws {
        let user = try ceremonies.managedUser(id: id)
        if let session = options.one("--session") {
            try ceremonies.adminRevokeSession(id: session, userID: id, by: .commandLine, context: context)
            if options.json { return try emit(["signed_out": id, "session": session]) }
            return print("session \(Self.printable(session)) of \(Self.printable(user.email)) (\(id)) has ended: its refresh token and access tokens are refused, or its browser signs in again")
        }
        try ceremonies.revokeSessions(userID: id, by: .commandLine, context: context)
        if options.json { return try emit(["signed_out": id]) }
        print("\(Self.printable(user.email)) (\(id)) is signed out everywhere: every refresh token is refused and Signet's own endpoints refuse its access tokens")
    }

    /// The account's used-up attempt limits start over (`DELETE /api/v2/user-blocks/{id}`).
    func liftLimits(_ id: String) throws {
        let lifted = try ceremonies.clearUserBlocks(userID: id, by: .commandLine, context: context)
        if options.json { return try emit(["user_id": id, "lifted": lifted.joined(separator: " ")]) }
        print(lifted.isEmpty ? "\(id) had no limit used up; its counters start over"
                             : "lifted for \(id): \(lifted.joined(separator: ", ")); it can try again at once")
    }

    /// The account's open recovery ends (`DELETE /api/v2/users/{id}/recovery`): what it added is
    /// revoked, its sessions end, and the address hears of it.
    func cancelRecovery(_ id: String) throws {
        try ceremonies.adminCancelRecovery(userID: id, by: .commandLine, context: context)
        if options.json { return try emit(["recovery_cancelled": id]) }
        print("the recovery of \(id) is cancelled: what it added is revoked and its sessions have ended; the account's address is told")
    }

    /// One method goes (`DELETE /api/v2/users/{id}/authentication-methods/{method_id}`), with
    /// METHOD_ID as `users show` lists it: a passkey, a device key or the recovery codes.
    func removeMethod() throws {
        guard options.positional.count == 4 else { throw AuthError.malformed("give the user's ID and the method's ID (as users show lists it)") }
        let (id, method) = (options.positional[2], options.positional[3])
        try ceremonies.deleteAuthenticationMethod(userID: id, methodID: method, by: .commandLine, context: context)
        if options.json { return try emit(["removed": method, "user_id": id]) }
        print("removed \(Self.printable(method)) from \(id)")
    }
}
