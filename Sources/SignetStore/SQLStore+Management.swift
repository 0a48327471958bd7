public import SignetAuth
import Foundation
import SignetWebAuthn

/// Administration (DESIGN.md, "Management API and operations"): searches, changes and erasure of
/// accounts, their sessions and methods, the audit trail, and the clients kept in the database.
/// Each change is one transaction with its audit row.
extension SQLStore {
    /// The managed view of an account: its row, then its passkeys' uses, in one statement.
    static let managedUserSelect = """
        SELECT \(prefixed(userSelect, "u")), u.updated_at, u.last_login, u.logins_count,
            \(passkeyLastUse),
            (SELECT COALESCE(SUM(c.use_count), 0) FROM credentials c WHERE c.user_id = u.id),
            u.app_metadata, u.user_metadata
        FROM users u
        """

    /// When the account's passkeys were last used (a sign-in with a passkey records it on the
    /// passkey, not on the account, to keep that path to one row).
    static let passkeyLastUse = "(SELECT MAX(COALESCE(c.last_used_at, CASE WHEN c.use_count > 0 THEN c.created_at END)) FROM credentials c WHERE c.user_id = u.id)"

    /// What a search sorts by, as the API shows each field, with no NULLs, which SQLite puts
    /// first and PostgreSQL last: an account never changed was updated when it was made, and
    /// one that never signed in sorts as the oldest sign-in.
    static func orderExpression(_ order: UserQuery.Order) -> String {
        switch order {
        case .createdAt: "u.created_at"
        case .updatedAt: "COALESCE(u.updated_at, u.created_at)"
        case .email: "u.email"
        case .lastLogin:
            "CASE WHEN COALESCE(u.last_login, 0) > COALESCE(\(passkeyLastUse), 0) THEN COALESCE(u.last_login, 0) ELSE COALESCE(\(passkeyLastUse), 0) END"
        }
    }

    static func managedUser(_ r: [SQLValue]) -> ManagedUser {
        let user = Self.user(Array(r[0..<9]))
        let lastLogin = [r[10].int, r[12].int].compactMap { $0 }.max()
        return ManagedUser(user: user, updatedAt: r[9].int, lastLogin: lastLogin, loginsCount: (r[11].int ?? 0) + (r[13].int ?? 0),
                           appMetadata: r[14].text, userMetadata: r[15].text)
    }

    static func applyManagement(_ write: StoreWrite, _ db: any SQLSession) throws(StoreError) {
        switch write {
        case .recordLogin(let userID, let at):
            try db.query("UPDATE users SET last_login = ?, logins_count = logins_count + 1 WHERE id = ? AND blocked = 0", [.int(at), .text(userID)])
            guard db.changes == 1 else { throw StoreError(.userBlocked, "the account is blocked or gone") }
        case .userMetadata(let userID, let app, let user):
            try db.query("UPDATE users SET app_metadata = ?, user_metadata = ? WHERE id = ?", [Self.text(app), Self.text(user), .text(userID)])
        case .webSession, .authorizationCode, .useAuthorizationCode, .logoutSubscription:
            try applyWeb(write, db)
        default:
            try applyDevice(write, db)
        }
    }

    /// Accounts whose metadata holds the string `match.value` at `match.path` (keys checked to be
    /// plain by the query's parser; passed as parameters all the same). SQLite's JSON functions
    /// and PostgreSQL's `jsonb` read the same text alike, a string only (a number `3` is no `"3"`).
    func metadataFilter(_ match: UserQuery.MetadataMatch) -> (String, [SQLValue]) {
        let column = match.column == "user_metadata" ? "u.user_metadata" : "u.app_metadata"
        if backend == "postgres" {
            let path = "{" + match.path.joined(separator: ",") + "}"
            return (" WHERE jsonb_typeof(\(column)::jsonb #> ?::text[]) = 'string' AND (\(column)::jsonb #>> ?::text[]) = ?", [.text(path), .text(path), .text(match.value)])
        }
        let path = "$." + match.path.map { "\"\($0)\"" }.joined(separator: ".")
        return (" WHERE json_type(\(column), ?) = 'text' AND json_extract(\(column), ?) = ?", [.text(path), .text(path), .text(match.value)])
    }

    /// Accounts whose `app_metadata.scim_user_name` is the argument in any case: migration 28's
    /// expression word for word, so that its index answers.
    static func directoryNameFilter(postgres: Bool) -> String {
        " WHERE " + (postgres ? Schema.directoryNamePostgres : Schema.directoryNameSQLite).replacingOccurrences(of: "app_metadata", with: "u.app_metadata") + " = lower(?)"
    }

    /// `LIKE` with `\` as the escape, so an address with `%` or `_` matches only itself.
    static func likePrefix(_ prefix: String) -> String {
        prefix.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
    }

    public func users(_ query: UserQuery) throws(StoreError) -> (users: [ManagedUser], total: Int) {
        let filter: String
        let arguments: [SQLValue]
        switch (query.email, query.metadata) {
        case _ where query.directoryName != nil: (filter, arguments) = (Self.directoryNameFilter(postgres: backend == "postgres"), [.text(query.directoryName ?? "")])
        case _ where query.passkeyModel != nil:
            (filter, arguments) = (" WHERE EXISTS (SELECT 1 FROM credentials c WHERE c.user_id = u.id AND c.aaguid = ? AND c.revoked_at IS NULL)", [.text(query.passkeyModel ?? "")])
        case (_, let match?): (filter, arguments) = metadataFilter(match)
        case (.any, nil): (filter, arguments) = ("", [])
        case (.exactly(let email), nil): (filter, arguments) = (" WHERE u.email = ?", [.text(email)])
        case (.prefix(let prefix), nil): (filter, arguments) = (#" WHERE u.email LIKE ? ESCAPE '\'"#, [.text(Self.likePrefix(prefix))])
        }
        // A metadata or model search reads every account's JSON or every passkey: on SQLite's
        // reading connection, where no writer waits for it.
        let search = { (db: any SQLSession) throws(StoreError) -> (users: [ManagedUser], total: Int) in
            let total = try db.query("SELECT COUNT(*) FROM users u" + filter, arguments).first?[0].int ?? 0
            // The user ID breaks ties, so pages never overlap; the expressions are the enum's own.
            let direction = query.descending ? " DESC" : ""
            let rows = try db.query(Self.managedUserSelect + filter + " ORDER BY \(Self.orderExpression(query.order))\(direction), u.id\(direction) LIMIT ? OFFSET ?",
                                    arguments + [.int(Int64(query.limit)), .int(Int64(query.offset))])
            return (rows.map(Self.managedUser), Int(total))
        }
        return query.metadata == nil && query.passkeyModel == nil ? try locked(search) : try reading(search)
    }

    public func livePasskeys(models: [String]) throws(StoreError) -> [String: (passkeys: Int, accounts: Int)] {
        guard !models.isEmpty else { return [:] }
        var counts: [String: (passkeys: Int, accounts: Int)] = [:]
        // Every passkey is read (no index by model): on the reading connection, a few hundred
        // models at a time.
        for batch in stride(from: 0, to: models.count, by: 200).map({ Array(models[$0..<min($0 + 200, models.count)]) }) {
            let marks = Array(repeating: "?", count: batch.count).joined(separator: ", ")
            let rows = try reading { db throws(StoreError) in
                try db.query("SELECT aaguid, COUNT(*), COUNT(DISTINCT user_id) FROM credentials WHERE revoked_at IS NULL AND aaguid IN (\(marks)) GROUP BY aaguid",
                             batch.map { .text($0) })
            }
            for row in rows {
                if let model = row[0].text { counts[model] = (Int(row[1].int ?? 0), Int(row[2].int ?? 0)) }
            }
        }
        return counts
    }

    public func users(after id: String?, limit: Int) throws(StoreError) -> [ManagedUser] {
        try reading { db throws(StoreError) in
            try db.query(Self.managedUserSelect + " WHERE u.id > ? ORDER BY u.id LIMIT ?", [.text(id ?? ""), .int(Int64(limit))]).map(Self.managedUser)
        }
    }

    public func credentials(usersAfter id: String?, through last: String) throws(StoreError) -> [CredentialRow] {
        try reading { db throws(StoreError) in
            try db.query("SELECT \(Self.credentialColumns) FROM credentials WHERE user_id > ? AND user_id <= ? ORDER BY user_id, created_at",
                         [.text(id ?? ""), .text(last)]).map(Self.credential)
        }
    }

    public func unusedRecoveryCodes(usersAfter id: String?, through last: String) throws(StoreError) -> [String: Int] {
        try reading { db throws(StoreError) in
            let rows = try db.query("SELECT user_id, COUNT(*) FROM recovery_codes WHERE user_id > ? AND user_id <= ? AND used_at IS NULL GROUP BY user_id",
                                    [.text(id ?? ""), .text(last)])
            return Dictionary(uniqueKeysWithValues: rows.compactMap { r in r[0].text.map { ($0, Int(r[1].int ?? 0)) } })
        }
    }

    public func deviceKeys(usersAfter id: String?, through last: String) throws(StoreError) -> [DeviceKeyRow] {
        try reading { db throws(StoreError) in
            try db.query("SELECT \(Self.deviceKeyColumns) FROM device_keys WHERE user_id > ? AND user_id <= ? ORDER BY user_id, created_at",
                         [.text(id ?? ""), .text(last)]).map(Self.deviceKey)
        }
    }

    public func emailSignInOff(email: String) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in try db.query("SELECT email_sign_in_off FROM users WHERE email = ?", [.text(email)]).first?[0].bool ?? false }
    }

    public func emailSignInOff(userID: String) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in try db.query("SELECT email_sign_in_off FROM users WHERE id = ?", [.text(userID)]).first?[0].bool ?? false }
    }

    public func setEmailSignIn(userID: String, off: Bool, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                try db.query("UPDATE users SET email_sign_in_off = ?, updated_at = ? WHERE id = ?", [.int(off ? 1 : 0), .int(Self.now()), .text(userID)])
                guard db.changes == 1 else { return false }
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    public func managedUser(id: String) throws(StoreError) -> ManagedUser? {
        try locked { db throws(StoreError) in try db.query(Self.managedUserSelect + " WHERE u.id = ?", [.text(id)]).first.map(Self.managedUser) }
    }

    public func updateUser(id: String, _ change: UserChange, at: Int64, writes: [StoreWrite]) throws(StoreError) -> ManagedUser? {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> ManagedUser? in
                var sets = ["updated_at = ?"]
                var arguments: [SQLValue] = [.int(at)]
                if let blocked = change.blocked { sets.append("blocked = ?"); arguments.append(.int(blocked ? 1 : 0)) }
                // Blocking ends every session that started before it.
                if change.blocked == true { sets.append("sessions_revoked_at = ?"); arguments.append(.int(at)) }
                if let name = change.name { sets.append("name = ?"); arguments.append(Self.text(name)) }
                if let email = change.email { sets.append("email = ?"); arguments.append(.text(email)) }
                if let verified = change.emailVerified { sets.append("email_verified = ?"); arguments.append(.int(verified ? 1 : 0)) }
                if let off = change.emailSignInOff { sets.append("email_sign_in_off = ?"); arguments.append(.int(off ? 1 : 0)) }
                if change.appMetadata != nil || change.userMetadata != nil {
                    // A merge is written only over what it was made from.
                    let lock = backend == "postgres" ? " FOR UPDATE" : ""
                    guard let now = try db.query("SELECT app_metadata, user_metadata FROM users WHERE id = ?\(lock)", [.text(id)]).first else { return nil }
                    for (column, value, metadata) in [("app_metadata", now[0].text, change.appMetadata), ("user_metadata", now[1].text, change.userMetadata)] {
                        guard let metadata else { continue }
                        guard metadata.from == value else { throw StoreError(.conflict, "\(column) changed meanwhile") }
                        sets.append("\(column) = ?")
                        arguments.append(Self.text(metadata.to))
                    }
                }
                if let email = change.email,
                   try !db.query("SELECT 1 FROM users WHERE email = ? AND id <> ?", [.text(email), .text(id)]).isEmpty {
                    throw StoreError(.emailTaken, "another account has this email")
                }
                try db.query("UPDATE users SET \(sets.joined(separator: ", ")) WHERE id = ?", arguments + [.text(id)])
                guard db.changes == 1 else { return nil }
                if change.blocked == true { try Self.queueLogouts(userID: id, at: at, db) }
                for write in writes { try Self.apply(write, db) }
                return try db.query(Self.managedUserSelect + " WHERE u.id = ?", [.text(id)]).first.map(Self.managedUser)
            }
        }
    }

    public func deleteUser(id: String, pseudonym: String, at: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                guard let email = try db.query("SELECT email FROM users WHERE id = ?", [.text(id)]).first?[0] else { return false }
                // Every table that names the account, children first: the same on both databases,
                // whatever their foreign-key settings.
                for table in ["credentials", "device_keys", "refresh_tokens", "action_challenges", "recovery_codes", "recoveries", "web_sessions", "authorization_codes",
                              "device_codes", "user_roles", "refusal_notices"] {
                    try db.query("DELETE FROM \(table) WHERE user_id = ?", [.text(id)])
                }
                try db.query("DELETE FROM email_codes WHERE email = ?", [email])
                try db.query("DELETE FROM outbox WHERE recipient = ?", [email])
                try db.query("DELETE FROM users WHERE id = ?", [.text(id)])
                try db.query("UPDATE audit_events SET user_id = ?, detail = NULL WHERE user_id = ?", [.text(pseudonym), .text(id)])
                // The clients it was signed in to hear of it by the ID they know it by.
                try Self.queueLogouts(userID: id, at: at, db)
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    public func sessions(userID: String, now: Int64, _ query: SessionQuery) throws(StoreError) -> [SessionRow] {
        // One family is found by its index; the account's list reads its rows (no index by account on SQLite).
        let only = query.id == nil ? "" : "AND family = ? "
        let after = query.after == nil ? "" : "HAVING MIN(created_at) < ? OR (MIN(created_at) = ? AND family > ?) "
        return try reading { db throws(StoreError) in
            try db.query(
                """
                SELECT family, client_id, MIN(created_at), MAX(created_at), MAX(expires_at), MIN(auth_time), MIN(amr), MIN(credential_id),
                    (SELECT f.remote FROM refresh_tokens f WHERE f.family = t.family ORDER BY f.created_at LIMIT 1),
                    (SELECT f.user_agent FROM refresh_tokens f WHERE f.family = t.family ORDER BY f.created_at LIMIT 1),
                    (SELECT l.remote FROM refresh_tokens l WHERE l.family = t.family ORDER BY l.created_at DESC LIMIT 1),
                    (SELECT l.user_agent FROM refresh_tokens l WHERE l.family = t.family ORDER BY l.created_at DESC LIMIT 1)
                FROM refresh_tokens t WHERE user_id = ? \(only)AND revoked_at IS NULL
                AND EXISTS (SELECT 1 FROM refresh_tokens n WHERE n.family = t.family AND n.used_at IS NULL AND n.revoked_at IS NULL AND n.expires_at > ?)
                GROUP BY family, client_id \(after)ORDER BY MIN(created_at) DESC, family LIMIT ?
                """, [.text(userID)] + (query.id.map { [.text($0)] } ?? []) + [.int(now)] + Self.positionValues(query.after) + [.int(Int64(max(0, query.limit)))]
            ).map { r in
                SessionRow(id: r[0].text ?? "", clientID: r[1].text ?? "", createdAt: r[2].int ?? 0, updatedAt: r[3].int ?? 0, expiresAt: r[4].int ?? 0,
                           authTime: r[5].int ?? 0, amr: (r[6].text ?? "").split(separator: " ").map(String.init), credential: r[7].text,
                           initial: RequestOrigin(remote: r[8].text, userAgent: r[9].text), last: RequestOrigin(remote: r[10].text, userAgent: r[11].text))
            }
        }
    }

    public func appMetadata(userID: String) throws(StoreError) -> String? {
        try reading { db throws(StoreError) in try db.query("SELECT app_metadata FROM users WHERE id = ?", [.text(userID)]).first?[0].text }
    }

    public func sessionOwner(id: String) throws(StoreError) -> String? {
        try reading { db throws(StoreError) in
            try db.query(
                "SELECT user_id FROM web_sessions WHERE id = ? UNION ALL SELECT user_id FROM refresh_tokens WHERE family = ? LIMIT 1", [.text(id), .text(id)]
            ).first?[0].text
        }
    }

    public func revokeSessions(userID: String, at: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                try db.query("UPDATE users SET sessions_revoked_at = ? WHERE id = ?", [.int(at), .text(userID)])
                guard db.changes == 1 else { return false }
                try Self.queueLogouts(userID: userID, at: at, db)
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    public func adminRevokeCredential(id: [UInt8], userID: String, at: Int64, writes: (_ cascaded: [String]) -> [StoreWrite]) throws(StoreError) -> Bool {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool in
                try db.query("UPDATE credentials SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL", [.int(at), .blob(id), .text(userID)])
                guard db.changes == 1 else { return false }
                let cascaded = try Self.revokeApproved(by: Base64URL.encode(id), userID: userID, at: at, db)
                try Self.queueLogouts(userID: userID, at: at, db)
                for write in writes(cascaded) { try Self.apply(write, db) }
                return true
            }
        }
    }

    public func deleteRecoveryCodes(userID: String, writes: [StoreWrite]) throws(StoreError) -> Int {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Int in
                let unused = try db.query("SELECT COUNT(*) FROM recovery_codes WHERE user_id = ? AND used_at IS NULL", [.text(userID)]).first?[0].int ?? 0
                try db.query("DELETE FROM recovery_codes WHERE user_id = ?", [.text(userID)])
                for write in writes { try Self.apply(write, db) }
                return Int(unused)
            }
        }
    }

    public func auditEntries(_ query: AuditQuery) throws(StoreError) -> [AuditEntry] {
        let (filter, arguments) = Self.auditFilter(query)
        let order = query.after == nil && !query.oldestFirst ? "DESC" : "ASC"
        return try reading { db throws(StoreError) in
            try db.query(
                "SELECT id, at, kind, outcome, reason, user_id, client_id, credential_id, remote, request_id, detail FROM audit_events\(filter) ORDER BY id \(order) LIMIT ? OFFSET ?",
                arguments + [.int(Int64(query.limit)), .int(Int64(query.offset))]
            ).map { r in
                AuditEntry(id: r[0].int ?? 0, event: AuditEvent(
                    at: r[1].int ?? 0, kind: r[2].text ?? "", outcome: r[3].text ?? "", reason: r[4].text, userID: r[5].text, clientID: r[6].text,
                    credentialID: r[7].text, remote: r[8].text, requestID: r[9].text, detail: r[10].text))
            }
        }
    }

    public func auditCount(_ query: AuditQuery) throws(StoreError) -> Int {
        let (filter, arguments) = Self.auditFilter(query)
        return try reading { db throws(StoreError) in
            Int(try db.query("SELECT count(*) FROM audit_events\(filter)", arguments).first?[0].int ?? 0)
        }
    }

    /// The WHERE clause of an ``AuditQuery`` and its arguments.
    static func auditFilter(_ query: AuditQuery) -> (String, [SQLValue]) {
        var conditions: [String] = []
        var arguments: [SQLValue] = []
        if let after = query.after {
            conditions.append("id > ?")
            arguments.append(.int(after))
        } else if let before = query.before {
            conditions.append("id < ?")
            arguments.append(.int(before))
        }
        if let user = query.userID {
            conditions.append("user_id = ?")
            arguments.append(.text(user))
        }
        if let events = query.events {
            // An empty list matches nothing (a type no event has).
            let terms = events.map { $0.outcome == nil ? "kind = ?" : "(kind = ? AND outcome = ?)" }
            conditions.append(terms.isEmpty ? "1 = 0" : "(" + terms.joined(separator: " OR ") + ")")
            for e in events { arguments += [.text(e.kind)] + (e.outcome.map { [SQLValue.text($0)] } ?? []) }
        }
        return (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "), arguments)
    }

    static let clientColumns = "id, name, type, secret_hash, grants, scopes, redirect_uris, audiences, created_at, post_logout_redirect_uris, backchannel_logout_uri, jwks, require_par, jwks_uri, required_roles, minimum_acr, refresh_ttl, refresh_absolute_ttl, refresh_retry_window"

    public func insertClient(_ c: ClientRow, writes: [StoreWrite]) throws(StoreError) {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) in
                try db.query(
                    "INSERT INTO clients (\(Self.clientColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                    [.text(c.id), .text(c.name), .text(c.type), c.secretHash.map(SQLValue.blob) ?? .null, .text(c.grants.joined(separator: " ")),
                     .text(c.scopes.joined(separator: " ")), .text(c.redirectURIs.joined(separator: " ")), Self.text(c.audiences?.joined(separator: " ")),
                     .int(c.createdAt), .text(c.postLogoutRedirectURIs.joined(separator: " ")), Self.text(c.backchannelLogoutURI), Self.text(c.jwks),
                     .int(c.requirePushedRequests ? 1 : 0), Self.text(c.jwksURI), Self.text(Self.namesJSON(c.requiredRoles)), Self.text(c.minimumACR),
                     Self.integer(c.refreshTokenLifetime), Self.integer(c.refreshTokenAbsoluteLifetime), Self.integer(c.refreshTokenRetryWindow)])
                guard db.changes == 1 else { throw StoreError(.conflict, "a client with this ID exists") }
                for write in writes { try Self.apply(write, db) }
            }
        }
    }

    /// A row of ``clientColumns``; lists are kept as space-separated words (no element holds a
    /// space: the ceremonies refuse one).
    static func clientRow(_ r: [SQLValue]) -> ClientRow {
        func words(_ value: SQLValue) -> [String] { (value.text ?? "").split(separator: " ").map(String.init) }
        return ClientRow(id: r[0].text ?? "", name: r[1].text ?? "", type: r[2].text ?? "", secretHash: r[3].blob, grants: words(r[4]), scopes: words(r[5]),
                         redirectURIs: words(r[6]), audiences: r[7].text.map { $0.split(separator: " ").map(String.init) }, createdAt: r[8].int ?? 0,
                         postLogoutRedirectURIs: words(r[9]), backchannelLogoutURI: r[10].text, jwks: r[11].text, requirePushedRequests: r[12].int == 1, jwksURI: r[13].text,
                         requiredRoles: r[14].text.flatMap(names), minimumACR: r[15].text,
                         refreshTokenLifetime: r[16].int.map(Int.init), refreshTokenAbsoluteLifetime: r[17].int.map(Int.init),
                         refreshTokenRetryWindow: r[18].int.map(Int.init))
    }

    /// Names that may hold spaces (role names), kept as a JSON list of strings.
    static func namesJSON(_ names: [String]?) -> String? { names.map { JSONValue.array($0.map(JSONValue.string)).serialized } }

    static func integer(_ value: Int?) -> SQLValue { value.map { .int(Int64($0)) } ?? .null }

    static func names(_ text: String) -> [String]? {
        (try? StrictJSON().parse(Array(text.utf8)))?.array.map { $0.compactMap(\.string) }
    }

    public func clientRows(offset: Int, limit: Int) throws(StoreError) -> [ClientRow] {
        try locked { db throws(StoreError) in
            try db.query("SELECT \(Self.clientColumns) FROM clients ORDER BY created_at, id LIMIT ? OFFSET ?", [.int(Int64(limit)), .int(Int64(offset))]).map(Self.clientRow)
        }
    }

    public func clientCount() throws(StoreError) -> Int {
        try locked { db throws(StoreError) in Int(try db.query("SELECT COUNT(*) FROM clients").first?[0].int ?? 0) }
    }

    public func clientRow(id: String) throws(StoreError) -> ClientRow? {
        try locked { db throws(StoreError) in
            try db.query("SELECT \(Self.clientColumns) FROM clients WHERE id = ?", [.text(id)]).first.map(Self.clientRow)
        }
    }

    public func updateClient(_ c: ClientRow, expected: ClientRow, writes: [StoreWrite]) throws(StoreError) -> Bool? {
        // PostgreSQL: the row stays as read until the commit; SQLite's writer holds the database.
        let lock = backend == "postgres" ? " FOR UPDATE" : ""
        return try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Bool? in
                guard let row = try db.query("SELECT \(Self.clientColumns) FROM clients WHERE id = ?\(lock)", [.text(c.id)]).first else { return nil }
                guard Self.clientRow(row) == expected else { return false }
                try db.query(
                    """
                    UPDATE clients SET name = ?, secret_hash = ?, grants = ?, scopes = ?, redirect_uris = ?, audiences = ?, post_logout_redirect_uris = ?,
                    backchannel_logout_uri = ?, jwks = ?, require_par = ?, jwks_uri = ?, required_roles = ?, minimum_acr = ?, refresh_ttl = ?, refresh_absolute_ttl = ?, refresh_retry_window = ? WHERE id = ?
                    """,
                    [.text(c.name), c.secretHash.map(SQLValue.blob) ?? .null, .text(c.grants.joined(separator: " ")), .text(c.scopes.joined(separator: " ")),
                     .text(c.redirectURIs.joined(separator: " ")), Self.text(c.audiences?.joined(separator: " ")), .text(c.postLogoutRedirectURIs.joined(separator: " ")), Self.text(c.backchannelLogoutURI),
                     Self.text(c.jwks), .int(c.requirePushedRequests ? 1 : 0), Self.text(c.jwksURI), Self.text(Self.namesJSON(c.requiredRoles)), Self.text(c.minimumACR),
                     Self.integer(c.refreshTokenLifetime), Self.integer(c.refreshTokenAbsoluteLifetime), Self.integer(c.refreshTokenRetryWindow), .text(c.id)])
                for write in writes { try Self.apply(write, db) }
                return true
            }
        }
    }

    public func deleteClient(id: String, at: Int64, writes: (_ ended: Int) -> [StoreWrite]) throws(StoreError) -> Int? {
        try locked { db throws(StoreError) in
            try db.transaction { () throws(StoreError) -> Int? in
                try db.query("DELETE FROM clients WHERE id = ?", [.text(id)])
                guard db.changes == 1 else { return nil }
                let ended = try db.query("SELECT count(DISTINCT family) FROM refresh_tokens WHERE client_id = ? AND revoked_at IS NULL", [.text(id)]).first?[0].int ?? 0
                try db.query("UPDATE refresh_tokens SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL", [.int(at), .text(id)])
                for write in writes(Int(ended)) { try Self.apply(write, db) }
                return Int(ended)
            }
        }
    }
}
