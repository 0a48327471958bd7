import Foundation
import SignetAPI
import SignetCrypto
import SignetHTTP
import SignetStore
import SignetWebAuthn

extension SignetService {
    /// `POST /oauth/token`.
    func token(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try TokenRequest(wire: self.body(request, form: true))
        switch body.grant_type {
        case GrantNames.webauthn: return try webAuthnGrant(body, request)
        case GrantNames.refreshToken: return try refreshGrant(body, request)
        default: throw APIError(400, "unsupported_grant_type", "unsupported_grant_type", "grant_type \"\(body.grant_type)\" is not supported")
        }
    }

    /// The passkey grant: consume the auth session first (it is single use whether or not the
    /// proof verifies), then verify the registration or assertion against it.
    func webAuthnGrant(_ body: TokenRequest, _ request: HTTPRequest) throws -> HTTPResponse {
        let client = try client(body.client_id, grant: GrantNames.webauthn)
        guard let sessionID = body.auth_session, let credential = body.authn_response else {
            throw APIError.malformed("auth_session and authn_response are required")
        }
        let ceremony = credential.response.attestationObject != nil ? "sign_up" : "sign_in"
        return try redeem(sessionID, clientID: client.id, ceremony: ceremony, credentialID: credential.rawId, request: request) { session in
            let proof = ceremony == "sign_up"
                ? try signUp(session, credential, client: client, request: request)
                : try signIn(session, credential, client: client, request: request)
            // Everything that can refuse the request is checked before anything is written.
            let grant = try tokenGrant(scope: body.scope, audience: body.audience)
            let authTime = nowMillis / 1000
            // One draw from the generator for the token ID and the refresh token.
            let fresh = random(48)
            let refresh = grant.offline
                ? refreshToken(Array(fresh[16..<48]), userID: proof.userID, clientID: client.id, scope: grant.scope, amr: proof.amr, authTime: authTime, family: nil)
                : nil
            // Using the session, the account or counter change, the audit event and the refresh
            // token: one transaction, which fails as a whole if the session was used meanwhile.
            let writes = proof.writes + (refresh.map { [StoreWrite.refreshToken($0.row)] } ?? [])
            let user: UserRecord
            if let use = proof.use {
                user = try commitSignIn(use, writes: writes, client: client, request: request)
            } else {
                try commit([.useSession(id: session.id, expiresAt: session.expiresAt)] + writes, signUp: true)
                user = proof.created!
            }
            var tokens = try issueTokens(user: user, client: client, grant: grant, amr: proof.amr, authTime: authTime, jti: Array(fresh[0..<16]))
            tokens.refresh_token = refresh?.token
            return .json(200, tokens.wireBytes)
        }
    }

    /// Runs a ceremony on the sealed session `text`: opens it, checks its client and expiry, runs
    /// `body` (which must commit `.useSession` with its writes). On any failure the session is used
    /// up all the same, and a session that was already used is reported as such.
    func redeem(
        _ text: String, clientID: String, ceremony: String, credentialID: String?, request: HTTPRequest,
        _ body: (AuthSession) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        var opened: AuthSession?
        do {
            guard let session = sessions.open(text) else {
                throw APIError.grant("auth_session_unknown", "the auth_session is not one this server issued")
            }
            opened = session
            guard session.clientID == clientID else {
                throw APIError.grant("auth_session_client_mismatch", "the auth_session belongs to another client")
            }
            guard session.expiresAt > nowMillis else { throw APIError.grant("auth_session_expired", "the auth_session has expired") }
            let response = try body(session)
            metrics.ceremony(ceremony, reason: nil)
            return response
        } catch var error as APIError {
            if let session = opened, error.reason != "auth_session_unknown", try !store.useSession(id: session.id, expiresAt: session.expiresAt) {
                error = APIError.grant("auth_session_unknown", "the auth_session was already used")
            }
            metrics.ceremony(ceremony, reason: error.reason)
            audit(ceremony, "failure", reason: error.reason, client: clientID, credential: credentialID.flatMap { Base64URL.decode($0) }, request: request)
            throw error
        }
    }

    /// What a verified proof leads to: the account, its `amr`, and the writes to commit. A sign-up
    /// carries the account it creates; a sign-in, the credential use its commit checks again.
    struct Proof {
        let userID: String
        let amr: [String]
        let writes: [StoreWrite]
        var created: UserRecord?
        var use: SignInUse?
    }

    /// Commits a verified ceremony's writes; for a sign-up, a uniqueness conflict means the email
    /// or the passkey was registered meanwhile.
    func commit(_ writes: [StoreWrite], signUp: Bool) throws {
        do {
            try store.perform(writes)
        } catch {
            // (A `catch where` here crashes Swift 6.3's SILGen; the check is spelled out.)
            guard error.code == .conflict else { throw error }
            if error.detail == "auth_session_used" { throw APIError.grant("auth_session_unknown", "the auth_session was already used") }
            guard signUp else { throw error }
            if error.detail.contains("email") {
                throw APIError(409, "invalid_request", "user_exists", "an account with this email was created meanwhile")
            }
            throw APIError(409, "invalid_grant", "credential_exists", "this passkey is already registered")
        }
    }

    /// Commits a verified sign-in (``Store/completeSignIn(_:writes:)``) and returns the account as
    /// it is now; a credential revoked, replaced or moved past meanwhile is refused here.
    func commitSignIn(_ use: SignInUse, writes: [StoreWrite], client: ClientConfiguration, request: HTTPRequest) throws -> UserRecord {
        let outcome: SignInOutcome
        do {
            outcome = try store.completeSignIn(use, writes: writes)
        } catch {
            if error.code == .conflict, error.detail == "auth_session_used" { throw APIError.grant("auth_session_unknown", "the auth_session was already used") }
            throw error
        }
        switch outcome {
        case .signedIn(let user):
            credentialCache.setSignCount(use.credentialID, use.signCount)
            return user
        case .credentialUnknown:
            credentialCache.remove(use.credentialID)
            throw APIError.grant("credential_unknown", "this passkey is not registered")
        case .credentialRevoked:
            credentialCache.remove(use.credentialID)
            throw APIError.grant("credential_revoked", "this passkey was revoked")
        case .counterRegression(let stored):
            credentialCache.setSignCount(use.credentialID, stored)
            throw counterRegression(stored: stored, received: use.signCount, user: use.userID, client: client, credential: use.credentialID, request: request)
        }
    }

    func counterRegression(stored: Int64, received: Int64, user: String, client: ClientConfiguration, credential: [UInt8], request: HTTPRequest) -> APIError {
        audit("possible_cloned_authenticator", "failure", reason: "counter_regression", user: user, client: client.id, credential: credential, request: request)
        return APIError.grant("counter_regression", "signature counter went from \(stored) to \(received): possible cloned authenticator")
    }

    func auditEvent(_ kind: String, user: String, client: String, credential: [UInt8], request: HTTPRequest) -> StoreWrite {
        .audit(AuditEvent(at: nowMillis, kind: kind, outcome: "success", userID: user, clientID: client, credentialID: Base64URL.encode(credential),
                          remote: request.remoteAddress, requestID: request.requestID))
    }

    func signUp(_ session: AuthSession, _ credential: CredentialJSON, client: ClientConfiguration, request: HTTPRequest) throws -> Proof {
        guard session.kind == .signUp, let userID = session.userID, let handle = session.userHandle, let email = session.email else {
            throw APIError.grant("ceremony_mismatch", "a registration was sent for a sign-in auth_session")
        }
        let rawID = try Self.bytes(credential.rawId, "rawId")
        guard credential.type == "public-key" else { throw APIError.malformed("credential type must be public-key") }
        let registration = RegistrationRequest(
            clientDataJSON: try Self.bytes(credential.response.clientDataJSON, "clientDataJSON"),
            attestationObject: try Self.bytes(credential.response.attestationObject, "attestationObject"),
            rawID: rawID, expectedChallenge: session.challenge, requireUserVerification: session.requireUserVerification)
        let result: RegistrationResult
        do {
            result = try rp.verifyRegistration(registration, now: clock())
        } catch {
            throw APIError.webAuthn(error)
        }
        if !rp.trustAnchors.isEmpty, case .untrusted(let why) = result.trust {
            throw APIError.grant("attestation_untrusted", "the attestation does not chain to a configured root: \(why)")
        }
        if try store.credential(id: result.credentialID) != nil {
            throw APIError(409, "invalid_grant", "credential_exists", "this passkey is already registered")
        }
        let user = UserRecord(id: userID, handle: handle, email: email, name: session.name, emailVerified: false, createdAt: nowMillis)
        let row = CredentialRow(
            id: result.credentialID, userID: userID, publicKey: result.publicKey, algorithm: result.algorithm.rawValue,
            signCount: Int64(result.signCount), aaguid: result.aaguid.uuidString.lowercased(), format: result.format,
            backupEligible: result.backupEligible, backupState: result.backupState,
            transports: (credential.response.transports ?? []).filter { $0.count <= 32 }.prefix(8).map { $0 }, name: nil, createdAt: nowMillis)
        return Proof(userID: userID, amr: result.userVerified ? ["pop", "user"] : ["pop"], writes: [
            .createUser(user, row), auditEvent("sign_up", user: userID, client: client.id, credential: result.credentialID, request: request),
        ], created: user)
    }

    func signIn(_ session: AuthSession, _ credential: CredentialJSON, client: ClientConfiguration, request: HTTPRequest) throws -> Proof {
        guard session.kind == .signIn else { throw APIError.grant("ceremony_mismatch", "an assertion was sent for a sign-up auth_session") }
        let rawID = try Self.bytes(credential.rawId, "rawId")
        var (entry, cached) = try credentialEntry(rawID)
        if let expected = session.userID, expected != entry.userID {
            throw APIError.grant("credential_unknown", "this passkey does not belong to the account that was named")
        }
        let handle = try credential.response.userHandle.map { text in try Self.bytes(text, "userHandle") }
        let assertion = AuthenticationRequest(
            credentialID: rawID, clientDataJSON: try Self.bytes(credential.response.clientDataJSON, "clientDataJSON"),
            authenticatorData: try Self.bytes(credential.response.authenticatorData, "authenticatorData"),
            signature: try Self.bytes(credential.response.signature, "signature"), userHandle: handle?.isEmpty == true ? nil : handle,
            expectedChallenge: session.challenge, requireUserVerification: session.requireUserVerification,
            allowCredentials: session.allowCredentials.isEmpty ? nil : session.allowCredentials)
        func verify(_ entry: CredentialCache.Entry) throws -> AuthenticationResult {
            let record = CredentialRecord(
                id: rawID, publicKey: entry.publicKey, signCount: UInt32(clamping: entry.signCount), backupEligible: entry.backupEligible,
                userHandle: entry.userHandle)
            do {
                return try rp.verifyAuthentication(assertion, credential: record, userIdentified: session.userID != nil)
            } catch {
                throw APIError.webAuthn(error)
            }
        }
        var result = try verify(entry)
        if case .regression = result.signCount, cached {
            // The count kept in memory may be behind the database's: judge by the stored one.
            credentialCache.remove(rawID)
            (entry, _) = try credentialEntry(rawID)
            result = try verify(entry)
        }
        if case .regression(let stored, let received) = result.signCount {
            throw counterRegression(stored: Int64(stored), received: Int64(received), user: entry.userID, client: client, credential: rawID, request: request)
        }
        let use = SignInUse(
            sessionID: session.id, sessionExpiresAt: session.expiresAt, credentialID: rawID, userID: entry.userID, publicKey: entry.publicKey,
            signCount: Int64(result.newSignCount), backupState: result.backupState, at: nowMillis)
        return Proof(userID: entry.userID, amr: result.userVerified ? ["pop", "user"] : ["pop"],
                     writes: [auditEvent("sign_in", user: entry.userID, client: client.id, credential: rawID, request: request)], use: use)
    }

    /// The passkey `id` as a sign-in verifies it: from memory, or read from the store (and then
    /// kept); `cached` tells which.
    func credentialEntry(_ id: [UInt8]) throws -> (entry: CredentialCache.Entry, cached: Bool) {
        if let entry = credentialCache.entry(id) { return (entry, true) }
        guard let (row, user) = try store.credentialAndUser(credentialID: id) else {
            throw APIError.grant("credential_unknown", "this passkey is not registered")
        }
        guard row.revokedAt == nil else { throw APIError.grant("credential_revoked", "this passkey was revoked") }
        let entry = CredentialCache.Entry(row, handle: user.handle)
        credentialCache.store(id, entry)
        return (entry, false)
    }

    /// Scopes Signet understands; others in a request are dropped (RFC 6749 §3.3).
    static let knownScopes = ["openid", "profile", "email", "offline_access"]

    /// The scopes and audience a token request asks for, checked before anything is written.
    struct TokenGrant {
        let scopes: [String]
        /// The granted scopes, space-separated, in Signet's order.
        let scope: String
        let audience: String
        var offline: Bool { scopes.contains("offline_access") }
    }

    /// Scopes outside ``knownScopes`` are dropped; an audience that is not configured is refused.
    func tokenGrant(scope requested: String?, audience: String?) throws -> TokenGrant {
        let scopes = requested.map { $0.split(separator: " ").map(String.init).filter(Self.knownScopes.contains) } ?? Self.knownScopes
        let aud = audience ?? configuration.audiences[0]
        guard configuration.audiences.contains(aud) else { throw APIError(400, "invalid_request", "audience_not_allowed", "audience \"\(aud)\" is not configured") }
        return TokenGrant(scopes: scopes, scope: Self.knownScopes.filter(scopes.contains).joined(separator: " "), audience: aud)
    }

    /// A new refresh token (``RefreshToken``: a time-ordered name and the 32-byte `secret`,
    /// handed out once) and the row that stores its key, in `family`, or in a new family for a
    /// new sign-in.
    func refreshToken(_ secret: [UInt8], userID: String, clientID: String, scope: String, amr: [String], authTime: Int64, family: String?) -> (token: String, row: RefreshTokenRow) {
        let now = nowMillis
        let (token, key) = RefreshToken.make(name: timeOrderedID(), secret: secret)
        return (Base64URL.encode(token), RefreshTokenRow(
            hash: key, family: family ?? Base64URL.encode(timeOrderedID()), userID: userID, clientID: clientID, scope: scope,
            authTime: authTime, amr: amr, expiresAt: now + Int64(configuration.refreshTokenLifetime) * 1000, createdAt: now))
    }

    /// Access token (RFC 9068) and, with `openid`, id token (OIDC Core §2); the caller adds the
    /// refresh token.
    func issueTokens(user: UserRecord, client: ClientConfiguration, grant: TokenGrant, amr: [String], authTime: Int64, jti: [UInt8]) throws -> TokenResponse {
        let now = nowMillis / 1000
        var access = JSONObjectWriter(capacity: 400)
        access.add("iss", configuration.issuer)
        access.add("sub", user.id)
        access.add("aud", grant.audience)
        access.add("client_id", client.id)
        access.add("scope", grant.scope)
        access.add("iat", now)
        access.add("exp", now + Int64(configuration.accessTokenLifetime))
        access.add("jti", Base64URL.encode(jti))
        access.add("auth_time", authTime)
        access.add("amr", strings: amr)
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
            claims.add("amr", strings: amr)
            if grant.scopes.contains("email") {
                claims.add("email", user.email)
                claims.add("email_verified", user.emailVerified)
            }
            if grant.scopes.contains("profile") { claims.add("name", user.name.map(JSONValue.string) ?? .null) }
            idToken = try JWT.sign(payload: claims, type: "JWT", keys: keys)
        }
        return TokenResponse(access_token: accessToken, refresh_token: nil, id_token: idToken, expires_in: configuration.accessTokenLifetime, scope: grant.scope)
    }

    /// The refresh grant: rotate (the presented token dies, a new one is born in its family);
    /// presenting a rotated token again revokes the whole family.
    func refreshGrant(_ body: TokenRequest, _ request: HTTPRequest) throws -> HTTPResponse {
        let client = try client(body.client_id, grant: GrantNames.refreshToken)
        guard let presented = body.refresh_token.flatMap({ Base64URL.decode($0) }).flatMap(RefreshToken.key) else {
            throw APIError.grant("refresh_token_unknown", "the refresh token is not one Signet issued")
        }
        // An audience that is not configured is refused before the token is rotated.
        _ = try tokenGrant(scope: nil, audience: body.audience)
        // One draw for the new refresh token and the access token's ID.
        let fresh = random(48)
        let (newToken, newKey) = RefreshToken.make(name: timeOrderedID(), secret: Array(fresh[16..<48]))
        let now = nowMillis
        let lifetime = Int64(configuration.refreshTokenLifetime) * 1000
        let outcome = try store.rotateRefreshToken(hash: presented, next: { current in
            RefreshTokenRow(hash: newKey, family: current.family, userID: current.userID, clientID: current.clientID,
                            scope: current.scope, authTime: current.authTime, amr: current.amr, expiresAt: now + lifetime, createdAt: now)
        }, now: now)
        switch outcome {
        case .rotated(let row):
            guard row.clientID == client.id else {
                _ = try store.revokeRefreshFamily(hash: row.hash, now: now)
                audit("refresh", "failure", reason: "refresh_token_client_mismatch", user: row.userID, client: client.id, request: request)
                throw APIError.grant("refresh_token_client_mismatch", "the refresh token was issued to another client")
            }
            guard let user = try store.user(id: row.userID) else { throw APIError.grant("refresh_token_unknown", "the account no longer exists") }
            let grant = try tokenGrant(scope: row.scope, audience: body.audience)
            var tokens = try issueTokens(user: user, client: client, grant: grant, amr: row.amr, authTime: row.authTime, jti: Array(fresh[0..<16]))
            tokens.refresh_token = Base64URL.encode(newToken)
            return .json(200, tokens.wireBytes)
        case .reused(_, let userID):
            audit("refresh_token_reused", "failure", reason: "refresh_token_reused", user: userID, client: client.id, request: request)
            throw APIError.grant("refresh_token_reused", "this refresh token was already used; every token of its sign-in is now revoked")
        case .revoked: throw APIError.grant("refresh_token_revoked", "the refresh token was revoked")
        case .expired: throw APIError.grant("refresh_token_expired", "the refresh token has expired")
        case .unknown: throw APIError.grant("refresh_token_unknown", "the refresh token is not one Signet issued")
        }
    }

    /// `POST /oauth/revoke` (RFC 7009): revokes a refresh token and every token rotated from the
    /// same sign-in. Answers 200 for unknown tokens too (§2.2). Access tokens are self-contained
    /// JWTs and stay valid until they expire, which is why they live only minutes.
    func revoke(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try RevokeRequest(wire: self.body(request, form: true))
        if let id = body.client_id { _ = try client(id) }
        if let key = Base64URL.decode(body.token).flatMap(RefreshToken.key), try store.revokeRefreshFamily(hash: key, now: nowMillis) {
            audit("refresh_token_revoked", "success", client: body.client_id, request: request)
        }
        return .json(200, Array("{}".utf8))
    }

    /// `GET /userinfo` (OIDC Core §5.3) with a Bearer access token.
    func userInfo(_ request: HTTPRequest) throws -> HTTPResponse {
        let claims = try bearer(request)
        guard let sub = claims["sub"]?.string, let user = try store.user(id: sub) else {
            throw unauthorized("the token's subject no longer exists")
        }
        let scopes = (claims["scope"]?.string ?? "").split(separator: " ").map(String.init)
        return Self.json(200, UserInfo(
            sub: user.id, email: scopes.contains("email") ? user.email : nil, email_verified: scopes.contains("email") ? user.emailVerified : nil,
            name: scopes.contains("profile") ? user.name : nil).wire)
    }

    func unauthorized(_ description: String) -> APIError {
        var error = APIError(401, "invalid_token", "token_invalid", description)
        error.headers = [("WWW-Authenticate", "Bearer error=\"invalid_token\"")]
        return error
    }

    /// The verified claims of the request's Bearer access token (RFC 6750 §2.1).
    func bearer(_ request: HTTPRequest) throws -> [String: JSONValue] {
        guard let header = request.header("authorization"), header.lowercased().hasPrefix("bearer ") else {
            var error = APIError(401, "invalid_request", "token_missing", "an Authorization: Bearer access token is required")
            error.headers = [("WWW-Authenticate", "Bearer")]
            throw error
        }
        do {
            return try JWT.verify(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces), type: "at+jwt", issuer: configuration.issuer, keys: keys, now: clock())
        } catch {
            throw unauthorized("the access token is not valid: \(error.detail)")
        }
    }
}
