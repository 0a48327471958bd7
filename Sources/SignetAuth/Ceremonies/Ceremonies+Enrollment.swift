public import SignetAPI
import SignetWebAuthn

/// Enrollment links: an operator's way to let the owner of an account without a passkey add
/// its first one, where mail cannot carry a code (or should not). The link holds a sealed
/// ``AuthSession`` of kind `enrollment`: only this deployment makes one, it names the account,
/// it expires, and its ID is marked used in the transaction that adds the passkey, so it works
/// once. An account that has a passkey gets no link: adding to it is its owner's business (the
/// account page) or a recovery's, whose hold a link must not skip.
extension Ceremonies {
    /// How long a link may work: 5 minutes to 30 days; 7 days unless the operator says.
    public static let enrollmentLifetimes = 300...(30 * 86_400)
    public static let defaultEnrollmentLifetime = 7 * 86_400

    /// A link's lifetime in seconds: `seconds`, or the default when `nil`; 400 `malformed`
    /// outside ``enrollmentLifetimes``.
    public static func enrollmentLifetime(_ seconds: Int?) throws -> Int {
        let seconds = seconds ?? defaultEnrollmentLifetime
        guard enrollmentLifetimes.contains(seconds) else {
            throw AuthError.malformed("ttl_sec must be \(enrollmentLifetimes.lowerBound) to \(enrollmentLifetimes.upperBound) seconds")
        }
        return seconds
    }

    /// `POST /api/v2/tickets/passkey-enrollment` and `signet admin users enrollment-link`.
    public func createEnrollmentLink(userID: String, lifetime: Int?, by caller: ManagementCaller, context: RequestContext) throws -> EnrollmentLink {
        let seconds = try Self.enrollmentLifetime(lifetime)
        let user = try existingUser(userID).user
        try requireEnrollable(user)
        let expiresAt = nowMillis + Int64(seconds) * 1000
        let link = AuthSession(id: timeOrderedID(), kind: .enrollment, clientID: Self.webClient.id, challenge: [], userID: user.id, userHandle: user.handle,
                               requireUserVerification: requireUserVerification, expiresAt: expiresAt)
        let sealed = try sessions.seal(link)
        let event = pendingAuditEvent(.adminEnrollmentLink, user: user.id, client: caller.clientID, detail: "until " + Self.iso(expiresAt), context: context)
        try store.perform([.audit(event)])
        counted(event)
        return EnrollmentLink(ticket: configuration.issuer + "/enroll#" + sealed, expires_at: Self.iso(expiresAt))
    }

    /// An account a link may add a first passkey to: not blocked, no live passkey.
    func requireEnrollable(_ user: UserRecord) throws {
        guard !user.blocked else { throw AuthError(.userBlocked, "the account is blocked") }
        guard try store.credentials(userID: user.id).allSatisfy({ $0.revokedAt != nil }) else {
            throw AuthError(.userHasPasskey, "the account has a passkey; a link adds only the first")
        }
    }

    /// The link `ticket` (the part after `#`) and its account, while both still allow it.
    func enrollment(_ ticket: String) throws -> (link: AuthSession, user: UserRecord) {
        guard let link = sessions.open(ticket), link.kind == .enrollment, let userID = link.userID else {
            throw AuthError(.authSessionUnknown, "not an enrollment link of this deployment")
        }
        guard link.expiresAt > nowMillis else { throw AuthError(.authSessionExpired, "the enrollment link has expired") }
        guard let user = try store.user(id: userID) else { throw AuthError(.userUnknown, "the link's account is gone") }
        try requireEnrollable(user)
        return (link, user)
    }

    /// `POST /enroll/options`: creation options for the link's account, in an `addPasskey`
    /// session of their own (a failed try spends that session, never the link), and the
    /// account's address for the page to show.
    public func beginEnrollment(ticket: String) throws -> (start: CeremonyStart, email: String) {
        let user = try enrollment(ticket).user
        return (try registrationStart(for: user, kind: .addPasskey, clientID: Self.webClient.id), user.email)
    }

    /// Creation options for a link's account and the session, of `kind`, that redeems them.
    func registrationStart(for user: UserRecord, kind: AuthSession.Kind, clientID: String, allowCredentials: [[UInt8]] = []) throws -> CeremonyStart {
        let options = rp.creationOptions(user: UserEntity(id: user.handle, name: user.email, displayName: user.name ?? user.email),
                                         settings: creationSettings, random: random)
        let session = AuthSession(id: timeOrderedID(), kind: kind, clientID: clientID, challenge: options.challenge, userID: user.id, userHandle: user.handle,
                                  allowCredentials: allowCredentials, requireUserVerification: requireUserVerification, expiresAt: sessionExpiry)
        return CeremonyStart(options: options.json, authSession: try sessions.seal(session))
    }

    /// `POST /enroll/passkey`: the registration verified as every registration is, then in one
    /// transaction the link and the session used, the passkey added, the sign-in recorded and an
    /// SSO session begun with it; the address told where mail goes. A link used meanwhile (two
    /// tabs) fails the whole transaction.
    public func completeEnrollment(ticket: String, authSession: String, credential: CredentialJSON, userAgent: String?, context: RequestContext) throws -> WebSignIn {
        let (link, user) = try enrollment(ticket)
        let client = Self.webClient
        return try redeem(authSession, clientID: client.id, ceremony: .passkeyAdded, credentialID: credential.rawId, user: user.id, context: context) { session in
            guard session.kind == .addPasskey, session.userID == user.id else { throw AuthError(.ceremonyMismatch, "the auth_session is not for this link's account") }
            guard credential.response.attestationObject != nil else { throw AuthError.malformed("authn_response must be a registration") }
            let (row, userVerified) = try verifyRegistration(credential, session: session, owner: user.id, name: nil, userAgent: userAgent)
            let credentialText = Base64URL.encode(row.id)
            let amr = Self.passkeyMethods(userVerified: userVerified, hardwareBound: isHardwareBound(row))
            let (cookie, web) = newWebSession(userID: user.id, amr: amr, credential: credentialText, userAgent: userAgent, context: context)
            let event = pendingAuditEvent(.passkeyAdded, user: user.id, client: client.id, credential: credentialText, detail: "by an enrollment link", context: context)
            do throws(StoreError) {
                try store.perform([
                    .useSession(id: link.id, expiresAt: link.expiresAt), .useSession(id: session.id, expiresAt: session.expiresAt), .addCredential(row, limit: configuration.maxPasskeys),
                    .recordLogin(userID: user.id, at: nowMillis), .webSession(web), .audit(event),
                ] + notice(.passkeyAdded(name: authenticatorName(row.aaguid)), to: user))
            } catch {
                guard error.code == .sessionUsed else { throw error }
                throw AuthError(.authSessionUnknown, "the enrollment link was used meanwhile")
            }
            counted(event)
            return WebSignIn(cookie: cookie, session: webSession(web, user: user))
        }
    }

    /// `POST /passkey/enroll`: an app's way to an enrollment link, as `/passkey/register` is to
    /// a sign-up: creation options for the link's account and an auth session that the token
    /// endpoint's passkey grant redeems with the registration (``enrollmentProof(_:_:client:context:userAgent:app:)``).
    /// `ticket` is the whole link or the part after its `#`. A failed try spends the session,
    /// never the link.
    public func beginEnrollment(clientID: String, ticket: String) throws -> CeremonyStart {
        let client = try self.client(clientID, grant: GrantNames.webauthn)
        let part = ticket.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).last.map(String.init) ?? ticket
        let (link, user) = try enrollment(part)
        return try registrationStart(for: user, kind: .enrollmentRegistration, clientID: client.id, allowCredentials: [link.id])
    }

    /// The token endpoint's proof for an ``AuthSession/Kind/enrollmentRegistration`` session:
    /// the account still takes a first passkey, the registration verifies as every one does, and
    /// the link's mark, the passkey and the sign-in go in the grant's one transaction (the mark
    /// kept as long as any link may live), with the tokens' refresh token. Sign-up being closed
    /// does not matter: this is how an operator's account gets its passkey.
    func enrollmentProof(_ session: AuthSession, _ credential: CredentialJSON, client: ClientConfiguration, context: RequestContext,
                         userAgent: String?, app: String?) throws -> Proof {
        guard let userID = session.userID, let link = session.allowCredentials.first, session.allowCredentials.count == 1 else {
            throw AuthError(.ceremonyMismatch, "an enrollment auth_session without its link")
        }
        guard let user = try store.user(id: userID) else { throw AuthError(.userUnknown, "the link's account is gone") }
        try requireEnrollable(user)
        let (row, userVerified) = try verifyRegistration(credential, session: session, owner: userID, name: nil, userAgent: userAgent, app: app)
        let id = Base64URL.encode(row.id)
        return Proof(userID: userID, amr: Self.passkeyMethods(userVerified: userVerified, hardwareBound: isHardwareBound(row)), writes: [
            .useSession(id: link, expiresAt: nowMillis + Int64(Self.enrollmentLifetimes.upperBound) * 1000), .addCredential(row, limit: configuration.maxPasskeys),
            .recordLogin(userID: userID, at: nowMillis),
            .audit(auditEvent(.passkeyAdded, user: userID, client: client.id, credential: id, detail: "by an enrollment link", context: context)),
        ] + notice(.passkeyAdded(name: authenticatorName(row.aaguid)), to: user), commit: .create(user), credential: id)
    }
}
