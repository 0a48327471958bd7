public import SignetAPI
import SignetCrypto
public import SignetWebAuthn

/// A live SSO session (DESIGN.md, "The web"), with its account, and the same session as the
/// account ceremonies take it: a ``Principal`` whose `auth_time`, `amr`, `sid` and `cred` are
/// the session's, so step-up and every account rule hold on the pages exactly as in the API.
public struct WebSession: Sendable {
    public let row: WebSessionRow
    public let user: UserRecord
    public let principal: Principal
}

/// A browser that just signed in: the cookie's value (handed out once) and its session.
public struct WebSignIn: Sendable {
    public let cookie: String
    public let session: WebSession
}

/// An account's sessions as the account page lists them: browsers and apps, newest first,
/// at most ``Ceremonies/sessionsListed`` of each kind (and the caller's own, wherever it falls).
public struct AccountSessions: Sendable {
    public let web: [WebSessionRow]
    public let apps: [SessionRow]
    /// Whether the account has more sessions of a kind than were listed.
    public let truncated: Bool
}

extension Ceremonies {
    /// The hosted pages' own client: their ceremonies are named by it in the audit trail. It is
    /// not in the client directory, so no token request can name it.
    public static let webClient = ClientConfiguration(id: "signet-web", grants: [GrantNames.webauthn, GrantNames.passwordlessOTP])

    // MARK: signing in

    /// Options for the sign-in page: a discoverable-credential request (passkey autofill and the
    /// passkey button), or, with `username`, that account's passkeys.
    public func beginWebSignIn(username: String?, context: RequestContext) throws -> CeremonyStart {
        try beginSignIn(PasskeyChallengeRequest(client_id: Self.webClient.id, realm: nil, username: username), principal: nil, client: Self.webClient, context: context)
    }

    /// Options for the sign-up page: a new account's passkey.
    public func beginWebSignUp(email: String, name: String?, context: RequestContext) throws -> CeremonyStart {
        try beginSignUp(PasskeyRegisterRequest(client_id: Self.webClient.id, realm: nil, user_profile: UserProfile(email: email, name: name)),
                        client: Self.webClient, context: context)
    }

    /// A passkey sign-in or sign-up on the pages: the same proof checks and guarded commit as
    /// the passkey grant, with an SSO session instead of tokens, in the same transaction.
    public func webPasskey(authSession: String, credential: CredentialJSON, userAgent: String?, context: RequestContext) throws -> WebSignIn {
        let client = Self.webClient
        let signUp = credential.response.attestationObject != nil
        return try redeem(authSession, clientID: client.id, ceremony: signUp ? .signUp : .signIn, credentialID: credential.rawId, context: context) { session in
            let proof = signUp
                ? try signUpProof(session, credential, client: client, context: context, userAgent: userAgent, app: nil)
                : try signInProof(session, credential, client: client, context: context)
            guard session.kind != .stepUp else { throw AuthError(.ceremonyMismatch, "a step-up session was sent to sign in") }
            let (cookie, row) = newWebSession(userID: proof.userID, amr: proof.amr, credential: proof.credential, userAgent: userAgent, context: context)
            let user = try commit(proof, session: session, writes: proof.writes + [.webSession(row)], client: client.id, context: context)
            return WebSignIn(cookie: cookie, session: webSession(row, user: user))
        }
    }

    /// `Email me a code` on the sign-in page: ``passwordlessStart(_:context:)`` for the pages.
    public func webSendCode(email: String, context: RequestContext) throws {
        _ = try passwordlessStart(PasswordlessStartRequest(client_id: Self.webClient.id, connection: "email", email: email, send: "code", authParams: nil),
                                  client: Self.webClient, context: context)
    }

    /// An email-code sign-in on the pages: the code's counted try and use, and the SSO session
    /// (`amr: ["otp"]`), in one transaction.
    public func webCodeSignIn(email: String, code: String, userAgent: String?, context: RequestContext) throws -> WebSignIn {
        do {
            let checked = try checkCode(
                TokenRequest(grant_type: GrantNames.passwordlessOTP, client_id: Self.webClient.id, username: email, otp: code, realm: "email"),
                client: Self.webClient, language: context.language)
            return try codeWebSession(user: checked.user, kind: checked.kind, writes: checked.writes, userAgent: userAgent, used: .otpInvalid, context: context)
        } catch {
            throw codeRefused(error, client: Self.webClient.id, context: context)
        }
    }

    /// The SSO session a code signs in (`amr: ["otp"]`: a code session), in one transaction with
    /// `writes` (the code's use), the sign-in's record and its audit row; a code a parallel
    /// request used first is refused with `used`.
    func codeWebSession(user: UserRecord, kind: AuditKind, writes: [StoreWrite], userAgent: String?, used: Reason, context: RequestContext) throws -> WebSignIn {
        let (cookie, row) = newWebSession(userID: user.id, amr: ["otp"], credential: nil, userAgent: userAgent, context: context)
        do {
            try store.perform(writes + [.recordLogin(userID: user.id, at: nowMillis), .webSession(row),
                                        .audit(auditEvent(kind, user: user.id, client: Self.webClient.id, context: context))])
        } catch {
            guard error.code == .sessionUsed else { throw error }
            throw AuthError(used, "the code was used by a parallel request")
        }
        metrics.ceremony(kind.rawValue, reason: nil)
        return WebSignIn(cookie: cookie, session: webSession(row, user: user))
    }

    /// A new SSO session's cookie value (32 random bytes, base64url) and its row (the value's hash).
    func newWebSession(userID: String, amr: [String], credential: String?, userAgent: String?, context: RequestContext) -> (String, WebSessionRow) {
        let secret = random(32)
        let now = nowMillis
        let row = WebSessionRow(
            hash: Digest.sha256.hash(secret), id: Base64URL.encode(timeOrderedID()), userID: userID, authTime: now / 1000, amr: amr, credential: credential,
            createdAt: now, lastSeenAt: now, expiresAt: now + Int64(configuration.webSessionLifetime) * 1000,
            userAgent: Self.clippedUserAgent(userAgent), remote: context.remoteAddress)
        return (Base64URL.encode(secret), row)
    }

    func webSession(_ row: WebSessionRow, user: UserRecord) -> WebSession {
        var claims: JSONObject = [
            "sub": .string(user.id), "aud": .string(configuration.accountAudience), "client_id": .string(Self.webClient.id),
            "auth_time": .number(String(row.authTime)), "amr": .array(row.amr.map(JSONValue.string)), "sid": .string(row.id),
        ]
        if let credential = row.credential { claims["cred"] = .string(credential) }
        return WebSession(row: row, user: user, principal: Principal(user: user, claims: claims))
    }

    // MARK: the session on each request

    /// The live SSO session a cookie names, if any: not revoked, inside both lifetimes, its account
    /// not blocked and its sessions not ended by an administrator, the passkey that signed it in
    /// still live, and, for a code session, the recovery it opened not cancelled. The idle clock
    /// is moved at most once a minute.
    public func webSession(cookie: String?) throws -> WebSession? {
        guard let cookie, cookie.utf8.count == 43, let secret = Base64URL.decode(cookie), secret.count == 32 else { return nil }
        let hash = Digest.sha256.hash(secret)
        let now = nowMillis
        guard let row = try store.webSession(hash: hash), row.revokedAt == nil, row.expiresAt > now,
              row.lastSeenAt + Int64(configuration.webSessionIdle) * 1000 > now,
              let user = try store.user(id: row.userID), !user.blocked, !user.endedSession(row.id)
        else { return nil }
        if let credential = row.credential, try !isLive(credential: credential) { return nil }
        if row.amr.contains("otp"), try store.sessionEnded(row.id) { return nil }
        if now - row.lastSeenAt > 60_000 { _ = try store.touchWebSession(hash: hash, now: now, authTime: nil, amr: [], credential: nil) }
        return webSession(row, user: user)
    }

    /// Options for a step-up on the pages (RFC 9470): the account's own passkeys.
    public func beginWebStepUp(_ session: WebSession, context: RequestContext) throws -> CeremonyStart {
        try beginSignIn(PasskeyChallengeRequest(client_id: Self.webClient.id, realm: nil, username: nil), principal: session.principal, client: Self.webClient,
                        context: context)
    }

    /// A step-up on the pages: a passkey of this account (another's is `user_mismatch`), recorded
    /// like a sign-in; the session's `auth_time`, `amr` and passkey become this check's.
    public func webStepUp(_ session: WebSession, authSession: String, credential: CredentialJSON, context: RequestContext) throws {
        let client = Self.webClient
        try redeem(authSession, clientID: client.id, ceremony: .stepUp, credentialID: credential.rawId, user: session.user.id, context: context) { ceremony in
            guard ceremony.kind == .stepUp, ceremony.userID == session.user.id else { throw AuthError(.ceremonyMismatch, "the auth_session is not this account's step-up") }
            let proof = try signInProof(ceremony, credential, client: client, context: context)
            _ = try commit(proof, session: ceremony, writes: proof.writes, client: client.id, context: context)
            _ = try store.touchWebSession(hash: session.row.hash, now: nowMillis, authTime: nowMillis / 1000, amr: proof.amr, credential: proof.credential)
        }
    }

    /// Sign out: the session ends now, everywhere.
    public func endWebSession(_ session: WebSession, context: RequestContext) throws {
        if try store.revokeWebSession(id: session.row.id, userID: session.user.id, at: nowMillis, writes: [
            .audit(auditEvent(.signOut, user: session.user.id, client: Self.webClient.id, context: context)),
        ]) { metrics.ceremony("sign_out", reason: nil) }
    }

    // MARK: the account page

    /// How many sessions of each kind, browsers and apps, a list shows: the account page,
    /// `GET /me/sessions` and the Management API's. An account signed in more often than that
    /// (a script's sign-ins, each a refresh-token family) still has every one ended by its ID
    /// and by "Sign out everywhere else"; the list says it is cut (`truncated`).
    public static let sessionsListed = 100

    /// The account's live browser sessions and app sessions (refresh-token families), the
    /// caller's own among them.
    public func accountSessions(_ principal: Principal) throws -> AccountSessions {
        try accountSessions(principal.user, current: principal.sessionID)
    }

    /// The live sessions of `user`, newest first, at most `limit` of each kind, with `current`
    /// (the caller's own session) added where it falls when it is older than those; with `only`,
    /// that session alone.
    func accountSessions(_ user: UserRecord, limit: Int = sessionsListed, current: String? = nil, only: String? = nil) throws -> AccountSessions {
        let now = nowMillis
        // One more than is shown says whether there are more; a row the account's "sign out
        // everywhere" ended is among the oldest, so dropping it leaves the newest.
        let web = try store.webSessions(userID: user.id, now: now, SessionQuery(id: only, limit: limit + 1, seenAfter: idleSince(now)))
        let apps = try store.sessions(userID: user.id, now: now, SessionQuery(id: only, limit: limit + 1))
        var listed = AccountSessions(
            web: web.prefix(limit).filter { !user.endedSession($0.id) },
            apps: apps.prefix(limit).filter { !user.endedSession($0.id) },
            truncated: web.count > limit || apps.count > limit)
        if let current, only == nil, listed.truncated, !listed.web.contains(where: { $0.id == current }), !listed.apps.contains(where: { $0.id == current }) {
            let own = try accountSessions(user, limit: 1, only: current)
            listed = AccountSessions(web: (listed.web + own.web).sorted { $0.createdAt > $1.createdAt },
                                     apps: (listed.apps + own.apps).sorted { $0.createdAt > $1.createdAt }, truncated: true)
        }
        return listed
    }

    /// The time a browser's session must have been seen after to be live at `now` (milliseconds):
    /// the lists' queries leave out sessions idle for `web.session_idle_ttl`.
    func idleSince(_ now: Int64) -> Int64 { now - Int64(configuration.webSessionIdle) * 1000 }

    /// `GET /me/sessions`: the account's live sessions, browsers first, newest first within each,
    /// at most ``sessionsListed`` of each kind (`truncated` when there are more); `current`
    /// marks the one the call's token belongs to, which is always listed.
    public func sessionList(_ principal: Principal) throws -> SessionList {
        let sessions = try accountSessions(principal)
        return SessionList(sessions: sessionInfos(sessions, current: principal.sessionID), truncated: sessions.truncated)
    }

    /// The sessions in their API form, `current` marking the one with ID `current`.
    func sessionInfos(_ sessions: AccountSessions, current: String?) -> [SessionInfo] {
        sessions.web.map { w in
            SessionInfo(id: w.id, kind: "browser", name: Self.browserName(w.userAgent), client_id: nil, created_at: w.createdAt / 1000,
                        last_seen_at: w.lastSeenAt / 1000, current: w.id == current, address: w.remote.isEmpty ? nil : w.remote)
        } + sessions.apps.map { a in
            SessionInfo(id: a.id, kind: "app", name: appSessionName(a), client_id: a.clientID, created_at: a.createdAt / 1000,
                        last_seen_at: a.updatedAt / 1000, current: a.id == current, address: a.initial.remote)
        }
    }

    /// A `User-Agent` as a session keeps it: its first 300 characters (the count of bytes, known
    /// without a walk, tells first whether there is anything to cut).
    package static func clippedUserAgent(_ userAgent: String?) -> String? {
        guard let userAgent, userAgent.utf8.count > 300 else { return userAgent }
        return String(userAgent.prefix(300))
    }

    /// The browser and the system a User-Agent names, each as far as it can be told. Signet's
    /// SDK names its system in a form of its own, `SignetClient (iOS 18.1)`, and no browser.
    package static func browserParts(_ userAgent: String?) -> (browser: String?, system: String?) {
        guard let ua = userAgent else { return (nil, nil) }
        if ua.hasPrefix(sdkAgent) {
            let system = String(decoding: ua.utf8.dropFirst(sdkAgent.utf8.count).prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: ")") }, as: UTF8.self)
            return (nil, sdkSystems.contains(system) ? system : nil)
        }
        let browser = browserMarks.first { mark in mark.tokens.contains { ua.contains($0) } }?.name
        let system = ua.contains("Android") ? "Android" : ua.contains("iPhone") || ua.contains("iPad") ? "iOS" : ua.contains("Mac OS X") ? "macOS"
            : ua.contains("Windows") ? "Windows" : ua.contains("Linux") ? "Linux" : nil
        return (browser, system)
    }

    /// How a User-Agent names its browser, in the order they are looked for: those built on
    /// another's engine name it too (Edge, Opera and Samsung Internet say `Chrome/`; every
    /// browser on iOS says `Safari/`, Chrome there `CriOS/` and Firefox `FxiOS/`).
    package static let browserMarks: [(name: String, tokens: [String])] = [
        ("Edge", ["Edg/", "EdgA/", "EdgiOS/"]), ("Opera", ["OPR/", "OPT/"]), ("Samsung Internet", ["SamsungBrowser/"]),
        ("Firefox", ["Firefox/", "FxiOS/"]), ("Chrome", ["Chrome/", "CriOS/"]), ("Safari", ["Safari/"]),
    ]

    /// A short name for a User-Agent: the browser and the system, as far as they can be told.
    public static func browserName(_ userAgent: String?) -> String {
        let (browser, system) = browserParts(userAgent)
        return label(browser ?? "Browser", on: system)
    }

    /// What something is called with the system it runs on, when that is known: "Safari · iOS".
    static func label(_ thing: String, on system: String?) -> String { system.map { "\(thing) · \($0)" } ?? thing }

    /// ``browserName(_:)`` when the User-Agent names a browser; `nil` for an app's or a tool's.
    package static func knownBrowserName(_ userAgent: String?) -> String? {
        browserParts(userAgent).browser == nil ? nil : browserName(userAgent)
    }

    /// How Signet's SDK begins its `User-Agent`, and the systems it names there.
    static let sdkAgent = "SignetClient ("
    package static let sdkSystems: Set<String> = ["iOS", "iPadOS", "macOS", "visionOS", "watchOS", "tvOS", "Linux", "Android", "Windows"]

    /// The name of a passkey made without one, of a model nothing names, after where it was made:
    /// the browser, when `userAgent` names one the pages can tell ("Safari · iOS"); else, made
    /// by an app through the API (`app`, its client ID), the app's name and the system its
    /// `User-Agent` names ("Acme · iOS", from the SDK's `SignetClient (iOS 18.1)` or Android's
    /// `Dalvik/2.1.0 (Linux; U; Android 14; …)`), the app's name alone when it names none, and
    /// "App" for a client without a name; else none (a tool's passkey stays "Passkey").
    func madeInName(userAgent: String?, app: String?) -> String? {
        if let browser = Self.knownBrowserName(userAgent) { return browser }
        guard let app else { return nil }
        let name = clients.client(app)?.name, system = Self.browserParts(userAgent).system
        return name == nil && system == nil ? nil : Self.label(name ?? "App", on: system)
    }

    /// `DELETE /me/sessions`, the account page's "Sign out everywhere else": ends every session
    /// of the account but the caller's own, each as ``revokeSession(id:principal:context:)``
    /// ends one (audited one by one, its tokens refused at once); returns how many it ended.
    /// An account signed in thousands of times (a script's sign-ins) is read
    /// ``sessionsEndedAtOnce`` sessions of each kind at a time, and goes round again while that
    /// was cut and the round ended something; each transaction ends at most
    /// ``sessionsListed``, so none holds the database's write lock for long.
    public func revokeOtherSessions(_ principal: Principal, context: RequestContext) throws -> Int {
        let user = principal.user
        var ended = 0
        while true {
            let list = try accountSessions(user, limit: Self.sessionsEndedAtOnce)
            let others = (list.web.map { (id: $0.id, web: true) } + list.apps.map { (id: $0.id, web: false) }).filter { $0.id != principal.sessionID }
            var round = 0
            for start in stride(from: 0, to: others.count, by: Self.sessionsListed) {
                let part = others[start..<min(start + Self.sessionsListed, others.count)]
                let now = nowMillis
                round += try store.endSessions(
                    userID: user.id, web: part.filter(\.web).map(\.id), apps: part.filter { !$0.web }.map(\.id), at: now, until: endedUntil(now)
                ) { id in
                    [.audit(auditEvent(.sessionRevoked, user: user.id, client: principal.clientID, detail: "session \(id.prefix(40))", context: context))]
                }.count
            }
            ended += round
            guard list.truncated, round > 0 else { return ended }
        }
    }

    /// How many sessions of each kind "Sign out everywhere else" reads at a time.
    static let sessionsEndedAtOnce = 1_000

    /// Ends one of the account's sessions, a browser's or an app's, by its ID.
    public func revokeSession(id: String, principal: Principal, context: RequestContext) throws {
        let user = principal.user
        let event = auditEvent(.sessionRevoked, user: user.id, client: principal.clientID, detail: "session \(id.prefix(40))", context: context)
        if try store.revokeWebSession(id: id, userID: user.id, at: nowMillis, writes: [.audit(event)]) { return }
        guard try !store.sessions(userID: user.id, now: nowMillis, SessionQuery(id: id, limit: 1)).isEmpty else {
            throw AuthError.notFound(.notFound, "no such session on this account")
        }
        try endSession(id, writes: [.audit(event)])
    }

    /// The account's security events as its owner sees them, newest first, at most `take` of
    /// them, older than the event `before` when given (the next page back): the account page's
    /// "Recent security events" and `GET /me/events`. Bookkeeping and events of no account stay
    /// in the audit trail only (``AuditKind/notInOwnHistory``, left out by the query); an event
    /// about a passkey or a device key names it as it is called now (`names`, by key ID, as
    /// ``accountKeys(_:)`` gives them); an operator's change comes without the operator's address.
    public func ownHistory(_ principal: Principal, take: Int, before: Int64? = nil, names: [String: String]? = nil) throws -> [AccountEvent] {
        let names = try names ?? accountKeys(principal).names
        let rows = try store.auditEntries(AuditQuery(before: before, userID: principal.user.id, events: Self.ownHistoryKinds, limit: take))
        return rows.compactMap { entry -> AccountEvent? in
            let e = entry.event
            guard let kind = AuditKind(rawValue: e.kind) else { return nil }
            return AccountEvent(id: String(entry.id), type: e.kind, at: e.at / 1000, outcome: e.outcome == "success" ? "success" : "failure",
                                by_operator: kind.byOperator, address: kind.byOperator ? nil : e.remote.flatMap { $0.isEmpty ? nil : $0 },
                                client_id: e.clientID, client_name: e.clientID.map(clientName), key_id: e.credentialID,
                                key_name: e.credentialID.flatMap { names[$0] },
                                reason: e.outcome == "success" ? nil : e.reason.flatMap(Reason.init(rawValue:))?.rawValue)
        }
    }

    /// The kinds an owner's history shows: every one but ``AuditKind/notInOwnHistory``.
    static let ownHistoryKinds = AuditKind.allCases.filter { !AuditKind.notInOwnHistory.contains($0) }.map { AuditMatch(kind: $0.rawValue) }

    /// What the account page calls an app: the client's name, else its ID.
    public func clientName(_ id: String) -> String { clients.client(id)?.name ?? id }

    /// An app's session as its owner sees it: the app (``clientName(_:)``) and the system the
    /// `User-Agent` of its sign-in names, when it names one ("Acme · iOS"), so that the same app
    /// on two phones shows as two.
    public func appSessionName(_ session: SessionRow) -> String {
        Self.label(clientName(session.clientID), on: Self.browserParts(session.initial.userAgent).system)
    }

    /// `/device` (RFC 8628 §3.3): the signed-in browser approves or denies another device's
    /// sign-in after a fresh passkey check (step-up); the passkey that checked is the approval's
    /// credential, so revoking it ends the new session. Unknown codes count against the
    /// account's hourly budget, as on the phone.
    /// What `/device` shows before the user decides (RFC 8628 §5.4): the pending sign-in a user
    /// code names, as the phone is shown it. An unknown code counts against the account's hourly
    /// budget there too.
    public func webDeviceRequest(userCode: String, session: WebSession) throws -> JSONValue {
        try deviceRequest(.object(["type": .string("signet.device_approval"), "user_code": .string(userCode)]), user: session.user)
    }

    public func webDecideDevice(userCode: String, approve: Bool, session: WebSession, context: RequestContext) throws {
        try requireFreshAuthentication(session.principal)
        let action = JSONValue.object(["type": .string("signet.device_approval"), "user_code": .string(userCode)])
        _ = try deviceRequest(action, user: session.user)
        guard let credential = session.row.credential else { throw AuthError(.stepUpRequired, "no passkey checked this session") }
        try decideDevice(action, approve: approve, user: session.user, deviceKeyID: credential, context: context)
    }

    // MARK: CSRF

    /// The CSRF token of every form and script call on the pages: an HMAC of the browser's
    /// binding (its SSO session's ID, or before sign-in its pre-session cookie) under a key
    /// derived from the key-encryption key, so it cannot be made without that cookie.
    public func csrfToken(binding: String) -> String {
        Base64URL.encode(Digest.sha256.hmac(key: authorizeKey, data: Array("csrf\u{0}\(binding)".utf8)))
    }

    /// Refuses a POST whose token is not the binding's (403 `csrf_invalid`).
    public func checkCSRF(_ token: String?, binding: String?) throws {
        guard let token, let binding, ConstantTime.equals(Array(token.utf8), Array(csrfToken(binding: binding).utf8)) else {
            throw AuthError(.csrfInvalid, "the CSRF token is missing or not this browser's")
        }
    }
}
