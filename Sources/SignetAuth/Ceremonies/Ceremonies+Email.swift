import Foundation
public import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// Sign-in by email code (DESIGN.md, "Email codes"; Auth0's passwordless API).
extension Ceremonies {
    /// The HMAC a code is stored and compared as, bound to what it is for (`purpose`) and whose
    /// (`owner`: the address, or the account of a recovery code).
    func codeHash(_ purpose: String, owner: String, code: String, key: [UInt8]? = nil) -> [UInt8] {
        Digest.sha256.hmac(key: key ?? codeKey, data: Array("\(purpose)\u{0}\(owner)\u{0}\(code)".utf8))
    }

    /// `count` decimal digits from the random source, each uniform (rejection sampling).
    func digits(_ count: Int) -> String {
        var out = ""
        while out.count < count {
            for byte in random(count * 2) where byte < 250 && out.count < count { out.append(Character(String(byte % 10))) }
        }
        return out
    }

    /// `POST /passwordless/start` (Auth0): queues a code for the address and answers the same
    /// whether or not it has an account. An address without one gets a code only with sign-up by
    /// code (``ServerConfiguration/codeSignUp``); without it a code is still recorded (so the
    /// throttles answer alike) but no mail goes out. One code per `send_interval` and `sends_per_hour` per address, and
    /// the route's per-address bucket, throttle with 429 and `Retry-After`.
    /// A confidential client authenticates (by `client_secret` or `Authorization: Basic`), as at
    /// the token endpoint: nobody else mails codes in its name.
    public func passwordlessStart(_ request: PasswordlessStartRequest, context: RequestContext) throws -> PasswordlessStartResponse {
        let client = try tokenEndpointClient(clientID: request.client_id, secret: request.client_secret, grant: GrantNames.passwordlessOTP, context: context)
        return try passwordlessStart(request, client: client, context: context)
    }

    func passwordlessStart(_ request: PasswordlessStartRequest, client: ClientConfiguration, context: RequestContext) throws -> PasswordlessStartResponse {
        guard request.connection == "email" else { throw AuthError(.connectionDisabled, "connection \"\(request.connection.prefix(40))\" (only email)", publicDetail: "Only the email connection is offered here.") }
        guard (request.send ?? "code") == "code" else { throw AuthError(.connectionDisabled, "send \"\(request.send?.prefix(40) ?? "")\" (only code)", publicDetail: "Only send: code is offered here, not links.") }
        guard configuration.email.canSend else { throw AuthError(.connectionDisabled, "no email.smtp_url is configured") }
        let email = try Self.emailAddress(request.email, member: "email")
        let user = try store.user(email: email)
        // The answer is the same whichever way it goes: only the audit row says why nothing went.
        let off = try user != nil && store.emailSignInOff(email: email)
        let domainAllowed = configuration.signUpDomainAllows(email)
        let mailed = user != nil ? !off : configuration.codeSignUp && domainAllowed
        let why = off ? "sign-in by email code is off for this account: nothing sent"
            : domainAllowed ? "no account and sign-up by code is off: nothing sent" : "no account, and sign-up is for signup_domains only: nothing sent"
        let event = pendingAuditEvent(.otpSent, user: user?.id, client: client.id, detail: mailed ? nil : why, context: context)
        let row = try queueCode(to: email, purpose: "email", holder: client.id, mailed: mailed, language: user?.locale ?? context.language, event: event) {
            .code($0, minutes: $1)
        }
        return PasswordlessStartResponse(_id: row.id, email: email, email_verified: false)
    }

    /// A new code for `email` (stored as its HMAC for `purpose`, held by `holder`: the client a
    /// sign-in code is for, or the account an address change is for) and, when `mailed`, its
    /// message, under the address's throttles: one code per `send_interval` and
    /// `sends_per_hour`, else 429 with `Retry-After`. The newest code of an address replaces
    /// any earlier one. The code, its message and `event` (its audit row) commit together.
    func queueCode(to email: String, purpose: String, holder: String, mailed: Bool, language: String, event: AuditEvent,
                   message: (_ code: String, _ minutes: Int) -> Notice) throws -> (id: String, expiresAt: Int64, mailed: Bool) {
        let settings = configuration.passwordless
        let interval = Int64(settings.sendInterval) * 1000
        let key = Self.codeRowKey(email, purpose: purpose)
        // A call inside the interval is refused before it counts against the hourly budget (the
        // insert below decides atomically; this read only spares the budget).
        if let last = try store.emailCode(email: key)?.createdAt, last > nowMillis - interval {
            throw Self.rateLimited(Int((last + interval - nowMillis + 999) / 1000), "a code went to this address less than \(settings.sendInterval) s ago")
        }
        if let wait = try attempts(.codesPerIdentifier, rate(.codesPerIdentifier), key: email) {
            throw Self.rateLimited(wait, "more than \(settings.sendsPerHour) codes for this address in an hour")
        }
        let code = digits(settings.codeLength)
        let now = nowMillis
        let row = EmailCodeRow(email: key, id: Base64URL.encode(timeOrderedID()), codeHash: codeHash(purpose, owner: email, code: code), clientID: holder,
                               createdAt: now, expiresAt: now + Int64(settings.codeTTL) * 1000)
        let mail = mailed ? outbox(message(code, max(1, settings.codeTTL / 60)), to: email, language: language, expiresAt: row.expiresAt) : nil
        guard try store.issueEmailCode(row, interval: interval, writes: (mail.map { [.mail($0)] } ?? []) + [.audit(event)]) else {
            let last = try store.emailCode(email: key)?.createdAt ?? now
            throw Self.rateLimited(Int((last + interval - now + 999) / 1000), "a code went to this address less than \(settings.sendInterval) s ago")
        }
        counted(event)
        if mail != nil { mailQueued.signal() }
        return (row.id, row.expiresAt, mail != nil)
    }

    /// The passwordless grant (`http://auth0.com/oauth/grant-type/passwordless/otp`): counts the
    /// try in the database before comparing, so at most `max_attempts` tries are ever compared
    /// against one code, however many arrive at once on however many instances; then uses the
    /// code, verifies the address, creates the account if needed, and issues tokens with
    /// `amr: ["otp"]`, in one transaction.
    public func otpGrant(_ request: TokenRequest, context: RequestContext) throws -> TokenResponse {
        do {
            return try redeemCode(request, context: context)
        } catch {
            throw codeRefused(error, client: request.client_id, context: context)
        }
    }

    /// An email-code sign-in's refusal, counted, measured and audited as one.
    func codeRefused(_ error: any Error, client: String, context: RequestContext) -> AuthError {
        let failure = failed(AuthError(error), context: context)
        metrics.ceremony("otp", reason: failure.reason.rawValue)
        audit(.otpSignIn, refused: failure, client: client, context: context)
        return failure
    }

    func redeemCode(_ request: TokenRequest, context: RequestContext) throws -> TokenResponse {
        let client = try tokenClient(request, grant: GrantNames.passwordlessOTP, context: context)
        let grant = try tokenGrant(scope: request.scope, audience: request.audience, client: client, context: context)
        let checked = try checkCode(request, client: client, language: context.language)
        return try codeTokens(user: checked.user, client: client, grant: grant, kind: checked.kind, writes: checked.writes, context: context)
    }

    /// The email code of `request` (`username`, `otp`) checked for `client`: the try is counted
    /// first, then the code compared; the account it signs in (created if the code may sign up)
    /// and the writes that use the code.
    func checkCode(_ request: TokenRequest, client: ClientConfiguration, language: String) throws -> (user: UserRecord, kind: AuditKind, writes: [StoreWrite]) {
        guard configuration.email.canSend else { throw AuthError(.connectionDisabled, "no email.smtp_url is configured") }
        if let realm = request.realm, realm != "email" { throw AuthError(.connectionDisabled, "realm \"\(realm.prefix(40))\" (only email)", publicDetail: "Only the email realm is offered here.") }
        guard let username = request.username, let otp = request.otp else { throw AuthError.malformed("username and otp are required") }
        let email = try Self.emailAddress(username, member: "username")
        let code = Self.typedCode(otp)
        let now = nowMillis
        let row = try countedCode(email: email, code: code, purpose: "email")
        guard row.clientID == client.id else { throw AuthError(.otpInvalid, "the code was sent for client \(row.clientID)") }
        var writes: [StoreWrite] = [.useEmailCode(email: row.email, id: row.id, at: now)]
        var user: UserRecord
        var kind = AuditKind.otpSignIn
        if let existing = try store.user(email: email) {
            // Also a code mailed before its owner turned sign-in by code off.
            guard try !store.emailSignInOff(email: email) else { throw AuthError(.otpInvalid, "sign-in by email code is off for this account") }
            user = existing
            if !user.emailVerified {
                writes.append(.verifyEmail(userID: user.id))
                user.emailVerified = true
            }
        } else {
            guard configuration.codeSignUp else { throw AuthError(.otpInvalid, "no account and sign-up by code is off") }
            guard configuration.signUpDomainAllows(email) else { throw AuthError(.otpInvalid, "no account, and the address is not at a domain of signup_domains") }
            user = UserRecord(id: newUserID(), handle: random(32), email: email, name: nil, emailVerified: true, createdAt: now, locale: language)
            writes.append(.createAccount(user))
            kind = .otpSignUp
        }
        return (user, kind, writes)
    }

    /// The live code of `email`, once this try is counted against it (in the database, before
    /// anything is compared) and `code` matched it in constant time as a code for `purpose`.
    /// Where an address's code of `purpose` is kept: a sign-in code under the address, any other
    /// under its purpose as well, so that one kind never replaces a pending code of the other (a
    /// stranger asking for sign-in codes cannot cancel an address change, nor an address change
    /// to a taken address the owner's sign-in code).
    static func codeRowKey(_ email: String, purpose: String) -> String { purpose == "email" ? email : purpose + ":" + email }

    func countedCode(email: String, code: String, purpose: String) throws -> EmailCodeRow {
        let maxAttempts = configuration.passwordless.maxAttempts
        let row: EmailCodeRow
        switch try store.attemptEmailCode(email: Self.codeRowKey(email, purpose: purpose), maxAttempts: maxAttempts, now: nowMillis) {
        case .none: throw AuthError(.otpInvalid, "the address has no code")
        case .used: throw AuthError(.otpInvalid, "the address's code was already used")
        case .expired: throw AuthError(.otpExpired, "the code expired")
        case .exhausted: throw AuthError(.otpAttemptsExceeded, "the code's \(maxAttempts) tries are spent")
        case .counted(let counted): row = counted
        }
        guard ConstantTime.equals(codeHash(purpose, owner: email, code: code), row.codeHash) else {
            throw AuthError(.otpInvalid, "wrong code (try \(row.attempts) of \(maxAttempts))")
        }
        return row
    }

    /// A code as typed or pasted: "123 456", "123-456" or with a no-break space from a mail client.
    package static func typedCode(_ text: String) -> String { String(text.prefix(64).filter { !$0.isWhitespace && $0 != "-" }.prefix(32)) }

    /// Tokens for a code sign-in (email or recovery code): `amr: ["otp"]`, no credential, the
    /// code's use and the account changes in the same transaction as the refresh token. A code
    /// used meanwhile by a parallel request fails the whole transaction.
    func codeTokens(user: UserRecord, client: ClientConfiguration, grant: TokenGrant, kind: AuditKind, writes: [StoreWrite], context: RequestContext) throws -> TokenResponse {
        let amr = ["otp"]
        // Before the code is used: a refused account keeps it.
        try requireClientPolicy(userID: user.id, amr: amr, client: client)
        let authTime = nowMillis / 1000
        let fresh = random(48)
        let session = SessionRef(sid: Base64URL.encode(timeOrderedID()), credential: nil)
        let refresh = grant.offline
            ? refreshToken(Array(fresh[16..<48]), userID: user.id, client: client, scope: grant.scope, amr: amr, authTime: authTime, session: session,
                           jkt: grant.refreshBinding(client), context: context)
            : nil
        do {
            try store.perform(writes + [.recordLogin(userID: user.id, at: nowMillis), .audit(auditEvent(kind, user: user.id, client: client.id, context: context))]
                + (refresh.map { [.refreshToken($0.row)] } ?? []) + proofMark(grant.binding))
        } catch {
            guard error.code == .sessionUsed else { throw error }
            throw AuthError(kind == .recoveryCodeSignIn ? .recoveryCodeInvalid : .otpInvalid, "the code was used by a parallel request")
        }
        metrics.ceremony(kind.rawValue, reason: nil)
        var tokens = try issueTokens(user: user, client: client, grant: grant, amr: amr, authTime: authTime, jti: Array(fresh[0..<16]), session: session)
        tokens.refresh_token = refresh?.token
        return tokens
    }

    // MARK: mail

    /// A message for the outbox, rendered now in `language` and sealed under the outbox key
    /// (bound to its row's ID), so the database never holds a code's message in clear text.
    func outbox(_ notice: Notice, to recipient: String, language: String, expiresAt: Int64? = nil) -> OutboxRow {
        let (subject, body) = notice.text(language: language, service: configuration.rpName)
        let id = Base64URL.encode(timeOrderedID())
        let message = MailMessage(from: configuration.mailFrom, fromName: configuration.rpName, to: recipient, subject: subject, body: body,
                                  language: language, kind: notice.kind)
        let now = nowMillis
        let rendered = message.rendered(date: clock(), id: id)
        // AES-GCM with a fresh random nonce cannot fail on a 32-byte key; keep the message rather than lose it.
        let sealed = (try? AESGCM.seal(rendered, key: mailKey, aad: Array(id.utf8))) ?? rendered
        return OutboxRow(id: id, kind: notice.kind, recipient: recipient, message: sealed, createdAt: now, dueAt: now, expiresAt: expiresAt)
    }

    /// The write that queues a security notice to the account's address (none when mail cannot
    /// go anywhere), in the account's language.
    func notice(_ notice: Notice, to user: UserRecord) -> [StoreWrite] {
        guard configuration.email.canSend else { return [] }
        mailQueued.signal()
        return [.mail(outbox(notice, to: user.email, language: user.locale ?? "en"))]
    }

    /// Claims due messages for this instance's sender (and drops code mail whose code expired);
    /// ends recoveries whose hold is over, queuing their notices, first.
    public func claimMail(limit: Int = 20) throws -> MailClaim {
        let now = nowMillis
        // A recovery's end, its audit row and its notice commit together.
        var events: [AuditEvent] = []
        _ = try store.finishRecoveries(now: now) { recovery, user in
            let event = pendingAuditEvent(.recoveryFinished, user: recovery.userID, context: .server)
            events.append(event)
            let mail = configuration.email.canSend ? [StoreWrite.mail(outbox(.recoveryFinished, to: user.email, language: user.locale ?? "en"))] : []
            return [.audit(event)] + mail
        }
        events.forEach(counted)
        var claim = try store.claimMail(now: now, lease: 120_000, limit: limit, logouts: false)
        // Opened for the transport; a row that does not open (another key) is dropped, audited.
        claim.claimed = claim.claimed.compactMap { row in
            guard let message = try? AESGCM.open(row.message, key: mailKey, aad: Array(row.id.utf8)) else {
                try? store.mailFailed(id: row.id, retryAt: nil, error: "the message does not open under this server's key")
                audit(.mailDropped, "failure", detail: "\(row.kind): sealed under another key", context: .server)
                return nil
            }
            var opened = row
            opened.message = message
            return opened
        }
        return claim
    }

    /// Records a delivery's outcome: a delivered message leaves the outbox; a failed one is
    /// tried again after a delay that doubles each time (from `email.retry_delay` up to
    /// `email.max_retry_delay`), unless the failure is permanent or the message had
    /// `email.max_deliveries` tries, when it is dropped and the drop audited.
    public func mailOutcome(_ row: OutboxRow, failure: (message: String, permanent: Bool)?) {
        guard let failure else {
            try? store.mailDelivered(id: row.id)
            metrics.ceremony("mail_" + row.kind, reason: nil)
            return
        }
        let settings = configuration.email
        let context = RequestContext.server
        if failure.permanent || row.attempts >= settings.maxDeliveries {
            try? store.mailFailed(id: row.id, retryAt: nil, error: failure.message)
            metrics.ceremony("mail_" + row.kind, reason: "dropped")
            audit(.mailDropped, "failure", detail: "\(row.kind) after \(row.attempts) tries: \(failure.message)", context: context)
            return
        }
        let delay = min(settings.maxRetryDelay, settings.retryDelay << min(20, max(0, row.attempts - 1)))
        try? store.mailFailed(id: row.id, retryAt: nowMillis + Int64(delay) * 1000, error: failure.message)
        metrics.ceremony("mail_" + row.kind, reason: "retry")
    }
}
