import Foundation
public import SignetAPI
public import SignetWebAuthn
import SignetCrypto

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

    /// An email address as Signet keys accounts by it: trimmed, lower case, in Unicode's
    /// composed form (NFC, so `ü` typed as `u` plus a combining diaeresis is the same account),
    /// one `@` with text on both sides, no spaces or control characters, at most 254 characters.
    public static func emailAddress(_ text: String, member: String) throws -> String {
        let email = text.trimmingCharacters(in: .whitespaces).lowercased().precomposedStringWithCanonicalMapping
        // The `@` by code point: a combining mark after it makes one Character of the two.
        let scalars = email.unicodeScalars
        guard email.count <= maxEmailLength, scalars.filter({ $0 == "@" }).count == 1, let at = scalars.firstIndex(of: "@"), at != scalars.startIndex,
              !scalars.contains(where: { $0.properties.isWhitespace || isUnsafeInText($0) || $0 == "<" || $0 == ">" }),
              isMailDomain(scalars[scalars.index(after: at)...])
        else { throw AuthError.malformed("\(member) is not an email address") }
        return email
    }

    /// A domain mail can go to (RFC 5321 §4.1.2's `Domain`, with RFC 6531's U-labels): labels of
    /// ASCII letters, digits and hyphens, or of characters beyond ASCII, joined by single dots.
    /// Nothing else of ASCII: a `%` escape, for one, would become another character when the
    /// domain is converted to its A-label form for the relay.
    static func isMailDomain(_ domain: Substring.UnicodeScalarView) -> Bool {
        guard let first = domain.first, let last = domain.last, first != ".", last != "." else { return false }
        var previous: Unicode.Scalar = "@"
        for scalar in domain {
            guard !(scalar == "." && previous == "."), scalar.value >= 0x80 || MailMessage.isHostNameByte(UInt8(scalar.value)) else { return false }
            previous = scalar
        }
        return true
    }

    /// `POST /passkey/register` (Auth0 native passkeys: signup challenge): creation options and an
    /// auth session bound to the client, with a new user ID and handle; nothing else is written.
    public func beginSignUp(_ request: PasskeyRegisterRequest, context: RequestContext) throws -> CeremonyStart {
        try beginSignUp(request, client: client(request.client_id, grant: GrantNames.webauthn), context: context)
    }

    func beginSignUp(_ request: PasskeyRegisterRequest, client: ClientConfiguration, context: RequestContext) throws -> CeremonyStart {
        do throws(AuthError) {
            try requireSignUpOpen()
        } catch {
            audit(.signUpChallenge, refused: error, client: client.id, context: context)
            throw error
        }
        let email = try Self.emailAddress(request.user_profile.email, member: "user_profile.email")
        do throws(AuthError) {
            try requirePasskeySignUp(email: email)
        } catch {
            audit(.signUpChallenge, refused: error, client: client.id, context: context)
            throw error
        }
        let name = try Self.displayName(request.user_profile.name, member: "user_profile.name", limit: 200)
        // Account-creating calls are limited per address here and per client IP by the route
        // (the 409 below is Auth0's contract and tells whether an address has an account, so it
        // is rate-limited).
        try limit(.signUpPerIdentifier, configuration.rateLimits.signUpPerIdentifier, key: email)
        if try store.user(email: email) != nil {
            audit(.signUpChallenge, "failure", reason: Reason.userExists.rawValue, client: client.id, context: context)
            throw AuthError(.userExists, "an account with this email exists")
        }
        let user = UserEntity(id: random(32), name: email, displayName: name ?? email)
        let options = rp.creationOptions(user: user, settings: creationSettings, random: random)
        let session = AuthSession(
            id: timeOrderedID(), kind: .signUp, clientID: client.id, challenge: options.challenge,
            userID: newUserID(), userHandle: user.id, email: email, name: name,
            requireUserVerification: requireUserVerification, expiresAt: sessionExpiry)
        return CeremonyStart(options: options.json, authSession: try sessions.seal(session))
    }

    /// `POST /passkey/challenge`: sign-in options.
    ///
    /// - With a bearer token (`principal`), a step-up (RFC 9470): the options list that account's
    ///   passkeys and the session is bound to it; another account's passkey is refused.
    /// - With a `username` (username-first), the options list the account's passkeys. A username
    ///   with no account, or with no passkey, gets the same answer in the same shape: passkey IDs
    ///   that look real and are the same at every call (an HMAC of the username under a server
    ///   key), and the session then fails like a wrong passkey; so accounts cannot be probed.
    /// - Otherwise the options ask for a discoverable credential.
    public func beginSignIn(_ request: PasskeyChallengeRequest, principal: Principal? = nil, context: RequestContext) throws -> CeremonyStart {
        try beginSignIn(request, principal: principal, client: client(request.client_id, grant: GrantNames.webauthn), context: context)
    }

    func beginSignIn(_ request: PasskeyChallengeRequest, principal: Principal?, client: ClientConfiguration, context: RequestContext) throws -> CeremonyStart {
        var kind = AuthSession.Kind.signIn
        var userID: String?
        var allowed: [CredentialDescriptor] = []
        if let principal {
            kind = .stepUp
            userID = principal.user.id
            allowed = try store.credentials(userID: principal.user.id).filter { $0.revokedAt == nil }.prefix(AuthSession.maxAllowCredentials)
                .map { CredentialDescriptor(id: $0.id, transports: $0.transports) }
            guard !allowed.isEmpty else { throw AuthError(.credentialUnknown, "the account has no passkey to step up with") }
        } else if let username = request.username?.trimmingCharacters(in: .whitespaces).lowercased(), !username.isEmpty {
            guard username.count <= Self.maxEmailLength else { throw AuthError.malformed("username is too long") }
            let found = try store.user(email: username)
            let live = try found.map { try store.credentials(userID: $0.id).filter { $0.revokedAt == nil } } ?? []
            if let found, !live.isEmpty {
                userID = found.id
                allowed = live.prefix(AuthSession.maxAllowCredentials).map { CredentialDescriptor(id: $0.id, transports: $0.transports) }
            } else {
                let decoy = decoyCredential(username)
                userID = "unknown:" + Base64URL.encode(decoy.id.prefix(12))
                allowed = [decoy]
            }
        }
        let options = rp.requestOptions(
            allowCredentials: allowed, userVerification: configuration.userVerification, timeout: configuration.sessionTimeout * 1000, random: random)
        let session = AuthSession(
            id: timeOrderedID(), kind: kind, clientID: client.id, challenge: options.challenge, userID: userID,
            allowCredentials: allowed.map(\.id), requireUserVerification: requireUserVerification, expiresAt: sessionExpiry)
        return CeremonyStart(options: options.json, authSession: try sessions.seal(session))
    }

    /// The passkey a username without one is shown: 32 bytes with the transports of a platform
    /// passkey, from an HMAC under a key derived from the key-encryption key, so it is stable per
    /// username and unknown to anyone without the key.
    func decoyCredential(_ username: String) -> CredentialDescriptor {
        CredentialDescriptor(id: Digest.sha256.hmac(key: decoyKey, data: Array(username.utf8)), transports: ["internal", "hybrid"])
    }

    /// The passkey grant (`urn:okta:params:oauth:grant-type:webauthn`): uses the auth session
    /// (single use whether or not the proof verifies), verifies the registration or assertion
    /// against it, and issues tokens. A registration creates the account and its passkey.
    public func passkeyGrant(_ request: TokenRequest, context: RequestContext) throws -> TokenResponse {
        let client = try tokenClient(request, grant: GrantNames.webauthn, context: context)
        guard let sessionText = request.auth_session, let credential = request.authn_response else {
            throw AuthError.malformed("auth_session and authn_response are required")
        }
        let signUp = credential.response.attestationObject != nil
        // The proof first: a client that must retry with a DPoP nonce keeps its auth session.
        let binding = try tokenBinding(client, context: context)
        return try redeem(sessionText, clientID: client.id, ceremony: signUp ? .signUp : .signIn, credentialID: credential.rawId, context: context) { session in
            // Everything that can refuse the request is checked before anything is written.
            let proof = signUp
                ? try signUpProof(session, credential, client: client, context: context, userAgent: context.userAgent, app: client.id)
                : try signInProof(session, credential, client: client, context: context)
            try requireClientPolicy(userID: proof.userID, amr: proof.amr, client: client)
            var grant = try tokenGrant(scope: request.scope, audience: request.audience, client: client)
            grant.binding = binding
            let authTime = nowMillis / 1000
            // One draw from the generator for the token ID and the refresh token.
            let fresh = random(48)
            let started = SessionRef(sid: Base64URL.encode(timeOrderedID()), credential: proof.credential)
            let refresh = grant.offline
                ? refreshToken(Array(fresh[16..<48]), userID: proof.userID, client: client, scope: grant.scope, amr: proof.amr, authTime: authTime,
                               session: started, jkt: grant.refreshBinding(client), context: context)
                : nil
            // Using the session, the account or counter change, the audit event and the refresh
            // token: one transaction, which fails as a whole if the session was used meanwhile.
            let user = try commit(proof, session: session, writes: proof.writes + (refresh.map { [StoreWrite.refreshToken($0.row)] } ?? []) + proofMark(binding),
                                  client: client.id, context: context)
            var tokens = try issueTokens(user: user, client: client, grant: grant, amr: proof.amr, authTime: authTime, jti: Array(fresh[0..<16]), session: started)
            tokens.refresh_token = refresh?.token
            return tokens
        }
    }

    /// A verified proof's commit with `writes`, in one transaction: a sign-up creates the account
    /// and uses the session; a sign-in uses it with the store's guarded use of the passkey, which
    /// may still refuse. Returns the account as it is now.
    func commit(_ proof: Proof, session: AuthSession, writes: [StoreWrite], client: String, context: RequestContext) throws -> UserRecord {
        switch proof.commit {
        case .create(let created):
            try store.perform([.useSession(id: session.id, expiresAt: session.expiresAt)] + writes)
            return created
        case .use(let use):
            switch try store.completeSignIn(SignInUse(sessionID: session.id, sessionExpiresAt: session.expiresAt, credential: use), writes: writes) {
            case .signedIn(let current):
                credentialCache.setSignCount(use.credentialID, use.signCount)
                return current
            case .refused(let refusal):
                throw refused(refusal, use, client: client, context: context)
            }
        }
    }

    /// Runs a ceremony on the sealed session `text`: opens it, checks its client and expiry, runs
    /// `body` (which must commit `.useSession` with its writes). On any failure the session is used
    /// up all the same, and a session that was already used is reported as such. `user` is the
    /// account the caller is known to act for before the ceremony (a signed-in owner adding a
    /// passkey or stepping up, an enrollment link's account): a refusal's audit row names it.
    func redeem<T>(
        _ text: String, clientID: String, ceremony: AuditKind, credentialID: String?, user: String? = nil, context: RequestContext, _ body: (AuthSession) throws -> T
    ) throws -> T {
        try redeem(sessions.open(text), clientID: clientID, ceremony: ceremony, credentialID: credentialID, user: user, context: context, body)
    }

    /// ``redeem(_:clientID:ceremony:credentialID:user:context:_:)`` for a session already opened
    /// (`nil`: the text was not one this server sealed).
    func redeem<T>(
        _ opened: AuthSession?, clientID: String, ceremony: AuditKind, credentialID: String?, user: String? = nil, context: RequestContext, _ body: (AuthSession) throws -> T
    ) throws -> T {
        do {
            guard let session = opened else { throw AuthError(.authSessionUnknown, "the auth_session is not one this server issued") }
            guard session.clientID == clientID else { throw AuthError(.authSessionClientMismatch, "the auth_session belongs to another client") }
            guard session.expiresAt > nowMillis else { throw AuthError(.authSessionExpired, "the auth_session has expired") }
            let result = try body(session)
            metrics.ceremony(ceremony.rawValue, reason: nil)
            return result
        } catch {
            var failure = failed(AuthError(error), context: context)
            if let session = opened, failure.reason != .authSessionUnknown, failure.reason != .databaseUnavailable, failure.reason != .storageFull,
               try !store.useSession(id: session.id, expiresAt: session.expiresAt) {
                failure = AuthError(.authSessionUnknown, "the auth_session was already used")
            }
            metrics.ceremony(ceremony.rawValue, reason: failure.reason.rawValue)
            let credential = credentialID.flatMap { Base64URL.decode($0) }.map { Base64URL.encode($0) }
            audit(ceremony, refused: failure, user: user, client: clientID, credential: credential, context: context)
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
        /// The credential that proved it, as the refresh-token family remembers it.
        let credential: String
    }

    /// A registration's proof: the account it makes, and its passkey, named after where it was
    /// made when it has no name (``madeInName(userAgent:app:)``): `userAgent` is the request's,
    /// `app` the client when an app makes it through the API.
    func signUpProof(_ session: AuthSession, _ credential: CredentialJSON, client: ClientConfiguration, context: RequestContext,
                     userAgent: String?, app: String?) throws -> Proof {
        // An app's registration for an operator's enrollment link is redeemed here too.
        if session.kind == .enrollmentRegistration { return try enrollmentProof(session, credential, client: client, context: context, userAgent: userAgent, app: app) }
        guard session.kind == .signUp, let userID = session.userID, let handle = session.userHandle, let email = session.email else {
            throw AuthError(.ceremonyMismatch, "a registration was sent for a \(session.kind.rawValue) auth_session")
        }
        // A sign-up begun before the deployment closed sign-up (a restart with `signup: false`)
        // makes no account either.
        try requireSignUpOpen()
        try requirePasskeySignUp(email: email)
        let (row, userVerified) = try verifyRegistration(credential, session: session, owner: userID, name: nil, userAgent: userAgent, app: app)
        let user = UserRecord(id: userID, handle: handle, email: email, name: session.name, emailVerified: false, createdAt: nowMillis)
        let credential = Base64URL.encode(row.id)
        return Proof(userID: userID, amr: Self.passkeyMethods(userVerified: userVerified, hardwareBound: isHardwareBound(row)), writes: [
            .createUser(user, row), .audit(auditEvent(.signUp, user: userID, client: client.id, credential: credential, context: context)),
        ], commit: .create(user), credential: credential)
    }

    func signInProof(_ session: AuthSession, _ credential: CredentialJSON, client: ClientConfiguration, context: RequestContext) throws -> Proof {
        guard session.kind == .signIn || session.kind == .stepUp else {
            throw AuthError(.ceremonyMismatch, "an assertion was sent for a \(session.kind.rawValue) auth_session")
        }
        let verified = try verifyAssertion(
            credential, challenge: session.challenge, expectedUser: session.userID, allowCredentials: session.allowCredentials,
            requireUserVerification: session.requireUserVerification, client: client.id, context: context,
            otherAccount: session.kind == .stepUp ? .userMismatch : .credentialUnknown)
        let id = Base64URL.encode(verified.use.credentialID)
        return Proof(userID: verified.userID, amr: verified.amr, writes: [
            .audit(auditEvent(session.kind == .stepUp ? .stepUp : .signIn, user: verified.userID, client: client.id, credential: id, context: context)),
        ], commit: .use(verified.use), credential: id)
    }
}
