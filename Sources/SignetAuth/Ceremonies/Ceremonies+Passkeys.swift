import Foundation
public import SignetAPI
public import SignetWebAuthn

/// WebAuthn options and the sealed auth session that goes with them: what a ceremony's start
/// answers (`PasskeyRegisterResponse`, `PasskeyChallengeResponse` in SignetAPI).
public struct CeremonyStart: Sendable {
    /// `PublicKeyCredentialCreationOptionsJSON` or `PublicKeyCredentialRequestOptionsJSON`.
    public let options: JSONValue
    public let authSession: String
}

extension Ceremonies {
    /// Longest email accepted (RFC 5321 §4.5.3.1.3 path limit).
    static let maxEmailLength = 254

    /// `POST /passkey/register` (Auth0 native passkeys: signup challenge): creation options and an
    /// auth session bound to the client, with a new user ID and handle; nothing else is written.
    public func beginSignUp(_ request: PasskeyRegisterRequest, context: RequestContext) throws -> CeremonyStart {
        let client = try client(request.client_id, grant: GrantNames.webauthn)
        let email = request.user_profile.email.trimmingCharacters(in: .whitespaces).lowercased()
        guard email.count <= Self.maxEmailLength, let at = email.firstIndex(of: "@"), at != email.startIndex,
              email.index(after: at) != email.endIndex, !email.contains(where: { $0.isWhitespace })
        else { throw AuthError.malformed("user_profile.email is not an email address") }
        let name = request.user_profile.name?.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (name?.count ?? 0) <= 200 else { throw AuthError.malformed("user_profile.name is longer than 200 characters") }
        if try store.user(email: email) != nil {
            audit("sign_up_challenge", "failure", reason: Reason.userExists.rawValue, client: client.id, context: context)
            throw AuthError(.userExists, "an account with this email exists")
        }
        let user = UserEntity(id: random(32), name: email, displayName: name?.isEmpty == false ? name! : email)
        let options = rp.creationOptions(user: user, settings: creationSettings, random: random)
        let session = AuthSession(
            id: timeOrderedID(), kind: .signUp, clientID: client.id, challenge: options.challenge,
            userID: newUserID(), userHandle: user.id, email: email, name: name,
            requireUserVerification: requireUserVerification, expiresAt: sessionExpiry)
        return CeremonyStart(options: options.json, authSession: try sessions.seal(session))
    }

    /// `POST /passkey/challenge`: sign-in options. With a `username` that names an account the
    /// options list its passkeys (username-first); otherwise they ask for a discoverable
    /// credential. An unknown username gets the same answer as none, so accounts cannot be probed.
    public func beginSignIn(_ request: PasskeyChallengeRequest, context: RequestContext) throws -> CeremonyStart {
        let client = try client(request.client_id, grant: GrantNames.webauthn)
        var user: UserRecord?
        var allowed: [CredentialRow] = []
        if let username = request.username?.trimmingCharacters(in: .whitespaces).lowercased(), !username.isEmpty {
            guard username.count <= Self.maxEmailLength else { throw AuthError.malformed("username is too long") }
            if let found = try store.user(email: username) {
                allowed = Array(try store.credentials(userID: found.id).filter { $0.revokedAt == nil }.prefix(AuthSession.maxAllowCredentials))
                user = allowed.isEmpty ? nil : found
            }
        }
        let options = rp.requestOptions(
            allowCredentials: allowed.map { CredentialDescriptor(id: $0.id, transports: $0.transports) },
            userVerification: configuration.userVerification, timeout: configuration.sessionTimeout * 1000, random: random)
        let session = AuthSession(
            id: timeOrderedID(), kind: .signIn, clientID: client.id, challenge: options.challenge, userID: user?.id,
            allowCredentials: allowed.map(\.id), requireUserVerification: requireUserVerification, expiresAt: sessionExpiry)
        return CeremonyStart(options: options.json, authSession: try sessions.seal(session))
    }

    /// The passkey grant (`urn:okta:params:oauth:grant-type:webauthn`): uses the auth session
    /// (single use whether or not the proof verifies), verifies the registration or assertion
    /// against it, and issues tokens. A registration creates the account and its passkey.
    public func passkeyGrant(_ request: TokenRequest, context: RequestContext) throws -> TokenResponse {
        let client = try client(request.client_id, grant: GrantNames.webauthn)
        guard let sessionText = request.auth_session, let credential = request.authn_response else {
            throw AuthError.malformed("auth_session and authn_response are required")
        }
        let signUp = credential.response.attestationObject != nil
        return try redeem(sessionText, clientID: client.id, ceremony: signUp ? "sign_up" : "sign_in", credentialID: credential.rawId, context: context) { session in
            // Everything that can refuse the request is checked before anything is written.
            let proof = signUp
                ? try signUpProof(session, credential, client: client, context: context)
                : try signInProof(session, credential, client: client, context: context)
            let grant = try tokenGrant(scope: request.scope, audience: request.audience)
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
            switch proof.commit {
            case .create(let created):
                try store.perform([.useSession(id: session.id, expiresAt: session.expiresAt)] + writes)
                user = created
            case .use(let use):
                switch try store.completeSignIn(SignInUse(sessionID: session.id, sessionExpiresAt: session.expiresAt, credential: use), writes: writes) {
                case .signedIn(let current):
                    credentialCache.setSignCount(use.credentialID, use.signCount)
                    user = current
                case .refused(let refusal):
                    throw refused(refusal, use, client: client.id, context: context)
                }
            }
            var tokens = try issueTokens(user: user, client: client, grant: grant, amr: proof.amr, authTime: authTime, jti: Array(fresh[0..<16]))
            tokens.refresh_token = refresh?.token
            return tokens
        }
    }

    /// Runs a ceremony on the sealed session `text`: opens it, checks its client and expiry, runs
    /// `body` (which must commit `.useSession` with its writes). On any failure the session is used
    /// up all the same, and a session that was already used is reported as such.
    func redeem<T>(
        _ text: String, clientID: String, ceremony: String, credentialID: String?, context: RequestContext, _ body: (AuthSession) throws -> T
    ) throws -> T {
        var opened: AuthSession?
        do {
            guard let session = sessions.open(text) else { throw AuthError(.authSessionUnknown, "the auth_session is not one this server issued") }
            opened = session
            guard session.clientID == clientID else { throw AuthError(.authSessionClientMismatch, "the auth_session belongs to another client") }
            guard session.expiresAt > nowMillis else { throw AuthError(.authSessionExpired, "the auth_session has expired") }
            let result = try body(session)
            metrics.ceremony(ceremony, reason: nil)
            return result
        } catch {
            var failure = AuthError(error)
            if let session = opened, failure.reason != .authSessionUnknown, failure.reason != .databaseUnavailable,
               try !store.useSession(id: session.id, expiresAt: session.expiresAt) {
                failure = AuthError(.authSessionUnknown, "the auth_session was already used")
            }
            metrics.ceremony(ceremony, reason: failure.reason.rawValue)
            let credential = credentialID.flatMap { Base64URL.decode($0) }.map { Base64URL.encode($0) }
            audit(ceremony, refused: failure, client: clientID, credential: credential, context: context)
            throw failure
        }
    }

    /// What a verified proof leads to: the account, its `amr`, the writes to commit, and how: a
    /// sign-up creates the account, a sign-in records the passkey's guarded use.
    struct Proof {
        enum Commit {
            case create(UserRecord)
            case use(CredentialUse)
        }
        let userID: String
        let amr: [String]
        let writes: [StoreWrite]
        let commit: Commit
    }

    func signUpProof(_ session: AuthSession, _ credential: CredentialJSON, client: ClientConfiguration, context: RequestContext) throws -> Proof {
        guard session.kind == .signUp, let userID = session.userID, let handle = session.userHandle, let email = session.email else {
            throw AuthError(.ceremonyMismatch, "a registration was sent for a \(session.kind.rawValue) auth_session")
        }
        let (row, userVerified) = try verifyRegistration(credential, session: session, owner: userID, name: nil)
        let user = UserRecord(id: userID, handle: handle, email: email, name: session.name, emailVerified: false, createdAt: nowMillis)
        return Proof(userID: userID, amr: userVerified ? ["pop", "user"] : ["pop"], writes: [
            .createUser(user, row), .audit(auditEvent("sign_up", user: userID, client: client.id, credential: Base64URL.encode(row.id), context: context)),
        ], commit: .create(user))
    }

    func signInProof(_ session: AuthSession, _ credential: CredentialJSON, client: ClientConfiguration, context: RequestContext) throws -> Proof {
        guard session.kind == .signIn else { throw AuthError(.ceremonyMismatch, "an assertion was sent for a \(session.kind.rawValue) auth_session") }
        let verified = try verifyAssertion(
            credential, challenge: session.challenge, expectedUser: session.userID, allowCredentials: session.allowCredentials,
            requireUserVerification: session.requireUserVerification, client: client.id, context: context)
        return Proof(userID: verified.userID, amr: verified.amr, writes: [
            .audit(auditEvent("sign_in", user: verified.userID, client: client.id, credential: Base64URL.encode(verified.use.credentialID), context: context)),
        ], commit: .use(verified.use))
    }
}
