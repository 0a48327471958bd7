public import SignetAPI
import SignetCrypto
public import SignetWebAuthn

/// The verified bearer of an access token (RFC 6750 §2.1, RFC 9068): the account and the token's claims.
public struct Principal: Sendable {
    public let user: UserRecord
    public let claims: JSONObject
    /// The client the token was issued to.
    public var clientID: String? { claims["client_id"]?.string }
    public var scopes: [String] { (claims["scope"]?.string ?? "").split(separator: " ").map(String.init) }
    /// `aud`: a string or a list of strings (RFC 7519 §4.1.3).
    public var audiences: [String] { claims["aud"]?.string.map { [$0] } ?? claims["aud"]?.array?.compactMap(\.string) ?? [] }
    /// When the user last proved presence with a credential (OIDC Core §2 `auth_time`), in seconds.
    public var authTime: Int64? { claims["auth_time"]?.int64 }
    /// How (RFC 8176): `pop` for a passkey, `hwk` for a device key or a hardware-bound passkey,
    /// `user` when the user was verified, `otp` for an email or recovery code.
    public var methods: [String] { claims["amr"]?.array?.compactMap(\.string) ?? [] }
    /// The session (OIDC `sid`): the refresh-token family the sign-in started.
    public var sessionID: String? { claims["sid"]?.string }
    /// The credential whose sign-in started the session (`cred`: a passkey ID in base64url or a
    /// device key ID); absent for a code sign-in.
    public var credential: String? { claims["cred"]?.string }
    /// Whether the session started from an email or recovery code.
    public var isCodeSession: Bool { methods.contains("otp") }
    /// Whether the token is bound to a DPoP key (RFC 9449 §6.1 `cnf.jkt`), and so was presented
    /// with the DPoP scheme.
    public var isDPoPBound: Bool { claims["cnf"]?["jkt"] != nil }
}

/// A sign-in's session as its tokens carry it: the family ID (`sid`) and the credential (`cred`).
struct SessionRef {
    let sid: String
    let credential: String?
}

/// Which access tokens a call accepts (RFC 9068 §4: the resource server checks `aud`).
public enum TokenAudience: Sendable {
    /// Signet's own account API: `aud` holds `{issuer}/me`.
    case account
    /// Any Signet access token with this scope (`/userinfo`: `openid`).
    case anyWithScope(String)
}

extension Ceremonies {
    /// Scopes Signet understands; others in a request are dropped (RFC 6749 §3.3).
    public static let knownScopes = OIDCScopes.all

    /// The scopes and audience a token request asks for, checked before anything is written.
    struct TokenGrant {
        /// The OIDC scopes asked for (of ``knownScopes``).
        let scopes: [String]
        /// The permission names of `tokens.permissions` asked for, sorted: granted as far as the
        /// account's roles grant them for the token's audience (``scope(granted:)``).
        var permissions: [String] = []
        /// The scopes asked for and understood, space-separated, in Signet's order: what a
        /// refresh token or a code keeps, so that a role given or taken shows at the next refresh.
        let scope: String
        let audience: String
        /// The DPoP proof the tokens are bound to (RFC 9449 §5), if the request had one.
        var binding: DPoPProof?
        /// The key the access token is bound to (`cnf.jkt`) when it is not the proof's: a
        /// refresh signed by a device key keeps the session's own key.
        var sessionKey: String?
        /// The authorization request's `nonce`, for the id token (OIDC Core §3.1.3.6).
        var nonce: String?
        var cnf: String? { sessionKey ?? binding?.jkt }
        var offline: Bool { scopes.contains("offline_access") }
        /// The `scope` a token carries: the OIDC scopes, and the permissions asked for that
        /// `granted` (the token's `permissions` claim) holds, as Auth0 grants an API's scopes
        /// with role-based access control on.
        func scope(granted: [String]?) -> String {
            guard !permissions.isEmpty else { return scope }
            return (scopes + permissions.filter { granted?.contains($0) == true }).joined(separator: " ")
        }
        /// A public client's refresh token is bound to the proof's key too (§5); a confidential
        /// client's is bound to its secret already.
        func refreshBinding(_ client: ClientConfiguration) -> String? { client.isConfidential ? nil : binding?.jkt }
    }

    /// Scopes outside ``knownScopes`` and the permission names of `tokens.permissions` are
    /// dropped (``understoodScope(_:)``); without a scope, every OIDC scope. The audience is the
    /// one asked for, which must be one of the client's, or Signet's own account audience when
    /// none is asked. With `context`, the request's DPoP proof is checked (and used up) too.
    func tokenGrant(scope requested: String?, audience: String?, client: ClientConfiguration, context: RequestContext? = nil) throws -> TokenGrant {
        let understood = requested.map(understoodScope) ?? (scopes: Self.knownScopes, permissions: [])
        let aud = audience ?? configuration.accountAudience
        guard aud != configuration.managementAudience, configuration.audiences(of: client).containsExactly(aud) else {
            throw AuthError(.audienceNotAllowed, "audience \"\(aud.prefix(200))\" is not one of client \(client.id)'s")
        }
        return TokenGrant(scopes: understood.scopes, permissions: understood.permissions, scope: (understood.scopes + understood.permissions).joined(separator: " "),
                          audience: aud, binding: try context.flatMap { try tokenBinding(client, context: $0) })
    }

    /// The words of a `scope` (RFC 6749 §3.3) Signet understands, the rest dropped: the OIDC
    /// scopes of ``knownScopes`` in that order, then, sorted and once each, the names
    /// `tokens.permissions` gives any API. A permission is only asked for here: a token carries
    /// it for its own API while the account's roles grant it (``TokenGrant/scope(granted:)``).
    func understoodScope(_ requested: String) -> (scopes: [String], permissions: [String]) {
        let words = requested.split(separator: " ")
        let scopes = Self.knownScopes.filter { words.contains(Substring($0)) }
        guard !configuration.apiPermissions.isEmpty else { return (scopes, []) }
        let apis = configuration.apiPermissions.values
        let permissions = Set(words.lazy.map(String.init).filter { word in apis.contains { $0[word] != nil } })
        return (scopes, permissions.sorted())
    }

    /// A new sign-in's refresh token (``RefreshToken``: a time-ordered name and the 32-byte
    /// `secret`, handed out once) and the row that stores its key, in a new family that remembers
    /// the `credential` that signed in and where the request came from.
    func refreshToken(_ secret: [UInt8], userID: String, client: ClientConfiguration, scope: String, amr: [String], authTime: Int64, session: SessionRef, jkt: String? = nil,
                      context: RequestContext) -> (token: String, row: RefreshTokenRow) {
        let now = nowMillis
        let (token, key) = RefreshToken.make(name: timeOrderedID(), secret: secret)
        return (Base64URL.encode(token), RefreshTokenRow(
            hash: key, family: session.sid, userID: userID, clientID: client.id, scope: scope,
            authTime: authTime, amr: amr, expiresAt: refreshExpiry(now: now, authTime: authTime, client: client), createdAt: now, credential: session.credential, jkt: jkt,
            origin: context.origin))
    }

    /// A refresh token's end: the sliding lifetime from now, but never past the family's
    /// absolute lifetime from its sign-in (``refreshLifetimes(_:)``).
    func refreshExpiry(now: Int64, authTime: Int64, client: ClientConfiguration) -> Int64 {
        let lifetimes = refreshLifetimes(client)
        return min(now + lifetimes.sliding, authTime * 1000 + lifetimes.absolute)
    }

    /// A client's sessions' lifetimes, in milliseconds: its own (`refresh_token_ttl`,
    /// `refresh_token_absolute_ttl`: an admin console's sessions shorter than a phone app's),
    /// never longer than the deployment's, which the purge of old refresh tokens counts on.
    func refreshLifetimes(_ client: ClientConfiguration) -> (sliding: Int64, absolute: Int64) {
        let sliding = min(client.refreshTokenLifetime ?? configuration.refreshTokenLifetime, configuration.refreshTokenLifetime)
        let absolute = min(client.refreshTokenAbsoluteLifetime ?? configuration.refreshTokenAbsoluteLifetime, configuration.refreshTokenAbsoluteLifetime)
        return (Int64(sliding) * 1000, Int64(absolute) * 1000)
    }

    /// Whether the credential that started a family is still live: a revoked passkey or device
    /// key ends every session it started.
    func isLive(credential: String) throws -> Bool { try origin(of: credential)?.live ?? false }

    /// The operators' claims, for the tokens and `/userinfo`: first the account's roles by name
    /// (``ServerConfiguration/rolesClaim``, sorted), then what ``ServerConfiguration/appMetadataClaims``
    /// copy from its current `app_metadata`, in the setting's order; with neither set, nothing is
    /// read. A member of more than ``MetadataClaim/maxValueBytes`` of JSON is left out, and so is
    /// a claim that would take them past ``MetadataClaim/maxTotalBytes`` together (the roles
    /// whole or not at all): every request an app makes carries its access token, and a token
    /// past the 8 KiB of headers that common proxies take would break the app, not the sign-in.
    public func operatorClaims(userID: String) throws -> [(String, JSONValue)] {
        var claims: [(String, JSONValue)] = []
        var total = 0
        if let name = configuration.rolesClaim {
            let roles = JSONValue.array(try currentRoles(userID).map { .string($0.name) })
            let size = roles.serializedBytes.count + name.utf8.count
            if size <= MetadataClaim.maxTotalBytes { (claims, total) = ([(name, roles)], size) }
        }
        guard !configuration.appMetadataClaims.isEmpty, let text = try store.appMetadata(userID: userID),
              let metadata = (try? StrictJSON().parse(Array(text.utf8)))?.object else { return claims }
        return claims + configuration.appMetadataClaims.compactMap { c in
            guard let value = metadata[c.key] else { return nil }
            let bytes = value.serializedBytes.count
            let size = bytes + c.claim.utf8.count
            guard bytes <= MetadataClaim.maxValueBytes, total + size <= MetadataClaim.maxTotalBytes else { return nil }
            total += size
            return (c.claim, value)
        }
    }

    /// Access token (RFC 9068) and, with `openid`, id token (OIDC Core §2); the caller adds the
    /// refresh token.
    func issueTokens(user: UserRecord, client: ClientConfiguration, grant: TokenGrant, amr: [String], authTime: Int64, jti: [UInt8], session: SessionRef) throws -> TokenResponse {
        let now = nowMillis / 1000
        var access = JSONObjectWriter(capacity: 400)
        access.add("iss", configuration.issuer)
        access.add("sub", user.id)
        access.add("aud", grant.audience)
        access.add("client_id", client.id)
        // Auth0's claim for an API with role-based access control: what the account's roles grant there.
        let permissions = try permissionsClaim(userID: user.id, audience: grant.audience)
        let scope = grant.scope(granted: permissions)
        access.add("scope", scope)
        access.add("iat", now)
        let lifetime = configuration.accessTokenLifetime(for: grant.audience)
        access.add("exp", now + Int64(lifetime))
        access.add("jti", Base64URL.encode(jti))
        access.add("auth_time", authTime)
        let acr = AuthenticationContext.reached(amr: amr)
        if let acr { access.add("acr", acr) }
        access.add("amr", strings: amr)
        access.add("sid", session.sid)
        if let credential = session.credential { access.add("cred", credential) }
        if let jkt = grant.cnf { access.add("cnf", .object(["jkt": .string(jkt)])) }
        let operatorClaims = try operatorClaims(userID: user.id)
        for (name, value) in operatorClaims { access.add(name, value) }
        if let permissions { access.add("permissions", strings: permissions) }
        let accessToken = try JWT.sign(payload: access, type: "at+jwt", keys: keys)
        var idToken: String?
        if grant.scopes.contains("openid") {
            var claims = JSONObjectWriter(capacity: 400)
            claims.add("iss", configuration.issuer)
            claims.add("sub", user.id)
            claims.add("aud", client.id)
            claims.add("iat", now)
            claims.add("exp", now + Int64(configuration.idTokenLifetime))
            claims.add("auth_time", authTime)
            if let acr { claims.add("acr", acr) }
            claims.add("amr", strings: amr)
            claims.add("sid", session.sid)
            if let nonce = grant.nonce { claims.add("nonce", nonce) }
            if grant.scopes.contains("email") {
                claims.add("email", user.email)
                claims.add("email_verified", user.emailVerified)
            }
            if grant.scopes.contains("profile"), let name = user.name { claims.add("name", name) }
            for (name, value) in operatorClaims { claims.add(name, value) }
            idToken = try JWT.sign(payload: claims, type: "JWT", keys: keys)
        }
        return TokenResponse(access_token: accessToken, refresh_token: nil, id_token: idToken, token_type: grant.cnf == nil ? "Bearer" : "DPoP",
                             expires_in: lifetime, scope: scope)
    }

    /// Token revocation (RFC 7009): revokes a refresh token and every token rotated from the same
    /// sign-in. The client names itself, and a confidential one authenticates (§2.1); a token
    /// issued to another client is left alone and answered like an unknown one, which is no error
    /// (§2.2). The session ends with the family: its access tokens are refused at once at
    /// Signet's own endpoints and at introspection, while a service that verifies them itself
    /// takes them until they expire, which is why they live only minutes. An access token, which
    /// §2.1 says the server should take too, ends its session the same way, with or without a
    /// refresh token (``endSession(_:writes:)``).
    public func revoke(_ request: RevokeRequest, secret: String?, context: RequestContext) throws {
        let client = try tokenEndpointClient(clientID: request.client_id, secret: secret, context: context)
        if request.token.utf8.contains(UInt8(ascii: ".")) { return try revokeSession(accessToken: request.token, client: client, context: context) }
        guard let key = Base64URL.decode(request.token).flatMap(RefreshToken.key), let owner = try store.refreshTokenOwner(hash: key) else { return }
        guard owner.clientID == client.id else {
            audit(.refreshTokenRevoked, "failure", reason: Reason.refreshTokenClientMismatch.rawValue, user: owner.userID, client: client.id,
                  detail: "the token was issued to \(owner.clientID)", context: context)
            return
        }
        let event = pendingAuditEvent(.refreshTokenRevoked, user: owner.userID, client: client.id, context: context)
        if try store.revokeRefreshFamily(hash: key, now: nowMillis, writes: [.audit(event)]) { counted(event) }
    }

    /// Revocation of an access token: a valid one issued to `client` ends its session's refresh
    /// family; any other is answered like an unknown token.
    func revokeSession(accessToken token: String, client: ClientConfiguration, context: RequestContext) throws {
        guard let claims = try? JWT.verify(token, type: "at+jwt", issuer: configuration.issuer, keys: keys, now: clock()),
              let sid = claims["sid"]?.string, let sub = claims["sub"]?.string else { return }
        guard claims["client_id"]?.string == client.id else {
            audit(.refreshTokenRevoked, "failure", reason: Reason.refreshTokenClientMismatch.rawValue, user: sub, client: client.id,
                  detail: "the access token was issued to \(claims["client_id"]?.string ?? "?")", context: context)
            return
        }
        guard try !store.sessionEnded(sid) else { return }
        try endSession(sid, writes: [.audit(auditEvent(.sessionRevoked, user: sub, client: client.id, detail: "by its access token", context: context))])
    }

    /// Ends the session `sid`: its refresh family at once, and its access tokens at Signet's
    /// endpoints and introspection for as long as one of them can be valid (a minute's margin
    /// over their lifetime, for a lifetime shortened since one was issued). `writes` go in the
    /// same transaction, only when this call ended it.
    @discardableResult
    func endSession(_ sid: String, writes: [StoreWrite] = []) throws -> Bool {
        let now = nowMillis
        return try store.endSession(sid, at: now, until: endedUntil(now), writes: writes)
    }

    /// How long a session ended at `now` stays marked ended: past the life of every access
    /// token issued in it, with a minute to spare.
    func endedUntil(_ now: Int64) -> Int64 { now + Int64(configuration.accessTokenLifetime + 60) * 1000 }

    /// The claims of a valid access token (RFC 9068 §4) for `audience`, and the account it names.
    /// A token presented with the DPoP scheme is refused with DPoP's challenge (RFC 9449 §7.1).
    public func authenticate(accessToken token: String, audience: TokenAudience = .account, presentation: TokenPresentation? = nil) throws -> Principal {
        guard presentation?.scheme == .dpop else { return try principal(accessToken: token, audience: audience, presentation: presentation) }
        do {
            return try principal(accessToken: token, audience: audience, presentation: presentation)
        } catch let error as AuthError {
            throw error.underDPoP()
        }
    }

    func principal(accessToken token: String, audience: TokenAudience, presentation: TokenPresentation?) throws -> Principal {
        let claims: JSONObject
        do {
            claims = try JWT.verify(token, type: "at+jwt", issuer: configuration.issuer, keys: keys, now: clock())
        } catch {
            throw AuthError(.tokenInvalid, "the access token is not valid: \(error.detail)")
        }
        try checkPresentation(presentation, token: token, claims: claims)
        guard let sub = claims["sub"]?.string,
              let (user, ended) = try tokenHolder(sub: sub, sid: claims["sid"]?.string, credential: claims["cred"]?.string, client: claims["client_id"]?.string)
        else { throw AuthError(.tokenInvalid, "the token's subject no longer exists") }
        guard !user.blocked else { throw AuthError(.userBlocked, "the account is blocked") }
        let principal = Principal(user: user, claims: claims)
        switch audience {
        case .account:
            guard principal.audiences.containsExactly(configuration.accountAudience) else {
                throw AuthError(.tokenAudienceInvalid, "aud \(principal.audiences) lacks \(configuration.accountAudience)")
            }
        case .anyWithScope(let scope):
            guard principal.scopes.contains(scope) else { throw AuthError(.insufficientScope, "the token's scope lacks \(scope)") }
        }
        if let ended { throw AuthError(.tokenInvalid, ended) }
        return principal
    }

    /// The account a token names (`sub`), and why the token's session has ended, or `nil` while
    /// it stands; `nil` when the account is gone. At Signet's own endpoints and at introspection a
    /// session ends at once, not only at its next refresh: with the credential that started it,
    /// with all of the account's sessions, with the client it was issued to (removed from the
    /// database or the configuration), or on its own (revoked from the account, signed out, a
    /// reused refresh token, a code session's cancelled recovery). One read of the store.
    func tokenHolder(sub: String, sid: String?, credential: String?, client: String?) throws -> (user: UserRecord, ended: String?)? {
        let reference = credential.flatMap(CredentialReference.init)
        guard let holder = try store.tokenHolder(userID: sub, credential: reference, sid: sid) else { return nil }
        let user = holder.user
        if let client, clients.client(client) == nil { return (user, "client \(client) no longer exists") }
        // A `cred` that is no credential's form names none, which is not live either.
        if let credential, reference == nil || !holder.credentialLive { return (user, "the credential \(credential) that started this session was revoked") }
        guard let sid else { return (user, nil) }
        if user.endedSession(sid) { return (user, "an administrator ended this session") }
        if holder.sessionEnded { return (user, "this session was ended") }
        return (user, nil)
    }

    /// Step-up (RFC 9470, DESIGN.md "Audiences and step-up"): a sensitive operation needs a token
    /// from a passkey (`pop`) or device-key (`hwk`) check at most `step_up.max_age` seconds old;
    /// otherwise 401 with the challenge that tells the client to step up.
    /// With `allowCode`, a fresh email- or recovery-code session passes too: the one exception,
    /// adding a credential, which then opens a recovery (DESIGN.md, "Recovery").
    /// `asOf` (milliseconds) is the moment the check must have held at, now by default; a
    /// two-step change passes the moment its first step began (``addPasskey(_:principal:context:userAgent:app:)``).
    public func requireFreshAuthentication(_ principal: Principal, allowCode: Bool = false, asOf moment: Int64? = nil) throws {
        let maxAge = configuration.stepUpMaxAge
        let age = principal.authTime.map { (moment ?? nowMillis) / 1000 - $0 }
        let strong = principal.methods.contains("pop") || principal.methods.contains("hwk") || (allowCode && principal.isCodeSession)
        guard let age, age <= Int64(maxAge), strong else {
            var error = AuthError(.stepUpRequired, "auth_time \(age.map { "\($0) s ago" } ?? "absent"), amr \(principal.methods); max_age \(maxAge)")
            // RFC 9470 §3: what would do. A passkey sign-in (`acr_values=phr`) always does; where a
            // code session would do too, the challenge asks for recency alone.
            let acr = allowCode ? "" : #", acr_values="\#(AuthenticationContext.phishingResistant)""#
            error.challenges = [#"Bearer error="insufficient_user_authentication", error_description="A fresh passkey check is required"\#(acr), max_age="\#(maxAge)""#]
            throw principal.isDPoPBound ? error.underDPoP() : error
        }
    }

    /// A confidential client's authentication with its secret (RFC 6749 §2.3.1), compared as
    /// hashes in constant time.
    public func authenticateClient(id: String, secret: String) throws -> ClientConfiguration {
        guard let client = clients.client(id), let expected = client.secretHash else {
            let keys = clients.client(id)?.usesKeys ?? false
            throw AuthError(.clientSecretInvalid, "client \(id.prefix(64)) is unknown or has no secret\(keys ? " (it authenticates with private_key_jwt)" : "")")
        }
        guard ConstantTime.equals(Digest.sha256.hash(Array(secret.utf8)), expected) else {
            throw AuthError(.clientSecretInvalid, "wrong secret for client \(id)")
        }
        return client
    }

    /// `GET /userinfo` (OIDC Core §5.3): the claims the token's scopes allow.
    public func userInfo(_ principal: Principal) -> UserInfo {
        let scopes = principal.scopes
        let user = principal.user
        return UserInfo(sub: user.id, email: scopes.contains("email") ? user.email : nil, email_verified: scopes.contains("email") ? user.emailVerified : nil,
                        name: scopes.contains("profile") ? user.name : nil)
    }
}

extension UserRecord {
    /// Whether the session `sid` (a time-ordered ID: its first 6 bytes are its start in
    /// milliseconds) started before an administrator ended the account's sessions.
    func endedSession(_ sid: String) -> Bool {
        guard let revoked = sessionsRevokedAt else { return false }
        guard let started = Ceremonies.sessionStart(sid) else { return true }
        return started <= revoked
    }
}
