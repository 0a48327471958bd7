import Foundation
import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// OpenID Connect Back-Channel Logout 1.0: a client with a `backchannel_logout_uri` is told,
/// server to server, when a session it signed in to through the browser ends, however it ends:
/// its user signs out of the hosted pages (or the client sends them to `/logout`), ends it on the
/// account page, revokes the passkey that started it, or an administrator blocks, signs out or
/// erases the account. The notice is queued in the transaction that ends the session and sent
/// from the outbox, tried again until the client answers 2xx or a day has passed.
extension Ceremonies {
    /// The event a logout token carries (Back-Channel Logout §2.4, `events`).
    public static let backchannelLogoutEvent = "http://schemas.openid.net/event/backchannel-logout"
    /// How long a logout token is good for: two minutes from its sending (§2.4, `exp`).
    static let logoutTokenLifetime: Int64 = 120

    /// A URI Signet calls for a client (Back-Channel Logout §2.2, a `jwks_uri`): an absolute URI
    /// without a fragment or credentials, `https`, or
    /// `http` to a loopback address (a client on the same machine, and tests); visible ASCII
    /// only, as libcurl is given it.
    public static func isClientEndpointURI(_ uri: String) -> Bool {
        guard isRedirectURI(uri), uri.utf8.allSatisfy({ (0x21...0x7E).contains($0) }), let url = URLComponents(string: uri), let host = url.host, !host.isEmpty,
              url.user == nil, url.password == nil
        else { return false }
        switch url.scheme?.lowercased() {
        case "https": return true
        case "http": return ["127.0.0.1", "localhost", "[::1]", "::1"].contains(host.lowercased())
        default: return false
        }
    }

    /// The subscription an exchanged code leaves when its client asked for logout tokens: the
    /// session (`sid`, the code's family), the browser session it came from, the passkey that
    /// signed it in, and until when it can still end by something other than its own expiry.
    func logoutSubscription(_ code: AuthorizationCodeRow, client: ClientConfiguration, offline: Bool) -> LogoutSubscriptionRow? {
        guard client.backchannelLogoutURI != nil else { return nil }
        let start = Self.sessionStart(code.family) ?? code.createdAt
        let browser = start + Int64(configuration.webSessionLifetime) * 1000
        let refresh = start + refreshLifetimes(client).absolute
        return LogoutSubscriptionRow(sid: code.family, clientID: client.id, userID: code.userID, credential: code.credential.flatMap { Base64URL.decode($0) },
                                     webSession: code.webSession, offline: offline, createdAt: start, expiresAt: offline ? max(browser, refresh) : browser)
    }

    /// The names of the apps that signed in through this browser session and will hear of its
    /// end (their logout tokens), for the sign-out page; each once, in order of name.
    public func appsToTell(_ session: WebSession) throws -> [String] {
        let names = try store.logoutSubscriptions(userID: session.user.id).filter { $0.webSession == session.row.id }.map { clientName($0.clientID) }
        return Set(names).sorted()
    }

    /// A time-ordered ID's first 6 bytes: its making, in milliseconds.
    static func sessionStart(_ sid: String) -> Int64? {
        guard let bytes = Base64URL.decode(sid), bytes.count >= 6 else { return nil }
        return madeAt(timeOrderedID: bytes)
    }

    /// The logout token for `notice`, to `clientID` (Back-Channel Logout §2.4): `iss`, `aud`,
    /// `iat`, `exp`, a fresh `jti`, `sub`, `sid` and the logout event; never a `nonce`; typed
    /// `logout+jwt` (§2.4, and §4.1's explicit typing) so no other JWT can pass for one.
    public func logoutToken(_ notice: LogoutNotice, clientID: String) throws -> String {
        let now = nowMillis / 1000
        var claims = JSONObjectWriter(capacity: 384)
        claims.add("iss", configuration.issuer)
        claims.add("sub", notice.subject)
        claims.add("aud", clientID)
        claims.add("iat", now)
        claims.add("exp", now + Self.logoutTokenLifetime)
        claims.add("jti", Base64URL.encode(random(16)))
        claims.add("sid", notice.sid)
        claims.add("events", .object([Self.backchannelLogoutEvent: .object(JSONObject())]))
        return try JWT.sign(payload: claims, type: "logout+jwt", keys: keys)
    }

    /// This instance's next logout notices, each leased for a minute; with `sweep`, a sweep first
    /// queues those of sessions that ended without queuing their own
    /// (``Store/sweepLogouts(now:limit:)``).
    public func claimLogouts(limit: Int, sweep: Bool) throws -> [(row: OutboxRow, notice: LogoutNotice, uri: String)] {
        let now = nowMillis
        if sweep, try store.sweepLogouts(now: now, limit: 1_000) > 0 { metrics.ceremony("backchannel_logout", reason: "swept") }
        return try store.claimMail(now: now, lease: 60_000, limit: limit, logouts: true).claimed.compactMap { row in
            // A client removed, or its URI taken away, since: nobody left to tell.
            guard let notice = LogoutNotice(encoded: row.message), let uri = clients.client(row.recipient)?.backchannelLogoutURI else {
                try? store.mailFailed(id: row.id, retryAt: nil, error: "no back-channel logout URI for the client")
                return nil
            }
            return (row, notice, uri)
        }
    }

    /// A logout token's delivery: a 2xx takes the notice out; otherwise it is tried again after
    /// 5 s, doubling to 10 minutes, until its day is over (the outbox drops it then) or after
    /// 40 tries, when it is dropped and the drop audited.
    public func logoutOutcome(_ row: OutboxRow, failure: String?) {
        guard let failure else {
            try? store.mailDelivered(id: row.id)
            metrics.ceremony("backchannel_logout", reason: nil)
            return
        }
        if row.attempts >= 40 {
            try? store.mailFailed(id: row.id, retryAt: nil, error: failure)
            metrics.ceremony("backchannel_logout", reason: "dropped")
            audit(.backchannelLogoutDropped, "failure", client: row.recipient, detail: "after \(row.attempts) tries: \(failure)",
                  context: .server)
            return
        }
        let delay = min(600, 5 << min(20, max(0, row.attempts - 1)))
        try? store.mailFailed(id: row.id, retryAt: nowMillis + Int64(delay) * 1000, error: failure)
        metrics.ceremony("backchannel_logout", reason: "retry")
    }
}
