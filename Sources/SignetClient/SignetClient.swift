public import Foundation
public import SignetAPI
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Signet's client: the HTTP API and the flows an app needs, over URLSession. Tokens live in the
/// ``TokenStore``; an access token the server refuses is refreshed once and the call retried.
public actor SignetClient {
    public let baseURL: URL
    public let clientID: String
    let passkeys: any PasskeyProvider
    let deviceKeyStore: (any DeviceKeyStore)?
    let tokens: any TokenStore
    let session: URLSession
    /// The key tokens are bound to (DPoP, RFC 9449); `nil`: bearer tokens.
    let dpop: (any DPoPKeyStore)?
    /// The server's latest `DPoP-Nonce`, sent in the next proofs.
    var dpopNonce: String?
    /// Whether refresh proofs are signed by the biometric device key (a client with
    /// `refresh_proof: "device_key"`): each refresh is a fresh approval on this phone.
    let refreshWithDeviceKey: Bool
    /// The API permissions each sign-in asks for in its `scope` (``init(baseURL:clientID:passkeys:deviceKeys:tokens:session:dpop:refreshWithDeviceKey:permissions:)``).
    let permissions: [String]
    /// Access tokens for resource servers, minted from the refresh token (``accessToken(audience:)``),
    /// with the scope each was granted.
    var audienceTokens: [String: (token: String, expiresAt: Date, scope: String?)] = [:]
    /// The issuer of the discovery document and whether it always sends `iss`, for the browser
    /// flow's check (RFC 9207 §2.4).
    var discoveredIssuer: (issuer: String, alwaysSendsIss: Bool)?
    /// Whether a use of the refresh token is in flight, and the calls waiting to make theirs
    /// (``exclusiveRotation()``).
    var rotating = false
    var rotationWaiters: [CheckedContinuation<Void, Never>] = []

    /// - Parameter dpop: with a key, every token request carries a DPoP proof by it, so the
    ///   tokens are bound to the device, and every call with them carries a proof too.
    /// - Parameter permissions: API permissions (of the server's `tokens.permissions`) each
    ///   sign-in asks for besides the OIDC scopes, for an API that checks a token's `scope`: a
    ///   token for an API carries those the account's roles grant there
    ///   (``grantedPermissions(audience:)``; RFC 6749 §3.3, Auth0's role-based access control).
    public init(baseURL: URL, clientID: String, passkeys: any PasskeyProvider, deviceKeys: (any DeviceKeyStore)? = nil,
                tokens: any TokenStore, session: URLSession = .shared, dpop: (any DPoPKeyStore)? = nil, refreshWithDeviceKey: Bool = false,
                permissions: [String] = []) {
        self.refreshWithDeviceKey = refreshWithDeviceKey
        self.permissions = permissions
        self.baseURL = baseURL
        self.clientID = clientID
        self.passkeys = passkeys
        self.deviceKeyStore = deviceKeys
        self.tokens = tokens
        self.session = session
        self.dpop = dpop
    }

    // MARK: transport

    struct Answer {
        let status: Int
        let data: Data
        /// `Retry-After` in seconds (RFC 9110 §10.2.3), when the answer has it in that form.
        var retryAfter: Int? = nil
    }

    /// One request. With a DPoP key, a token request carries a proof, and a call with an access
    /// token sends it as `Authorization: DPoP` with a proof of that call; a `use_dpop_nonce`
    /// answer is retried once with the nonce it gave (RFC 9449 §8).
    /// `proofKey` signs this request's proof instead of the DPoP key (a device-key refresh).
    /// A GET or HEAD that got no answer at all (the server closed the connection under it, as an
    /// idle keep-alive one is closed as a request leaves) is sent once more, with a new proof:
    /// those methods are idempotent (RFC 9110 §9.2.2), so repeating one is safe even if the
    /// server acted on it; any other method is not repeated, since it may have been.
    func send(_ method: String, _ path: String, body: (any Encodable)? = nil, bearer: String? = nil, proofKey: (any DPoPKeyStore)? = nil) async throws -> Answer {
        let url = Self.url(baseURL, path)
        var request = signetRequest(url)
        request.httpMethod = method
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONEncoder().encode(body)
        }
        if let bearer, dpop == nil { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let bearer, dpop != nil { request.setValue("DPoP \(bearer)", forHTTPHeaderField: "Authorization") }
        let signer = proofKey ?? dpop
        let proves = signer != nil && (bearer != nil || path == "oauth/token")
        var retried = false
        var resent = false
        while true {
            if proves, let signer {
                request.setValue(try await DPoPProofs.proof(key: signer, method: method, url: url, accessToken: bearer, nonce: dpopNonce), forHTTPHeaderField: "DPoP")
            }
            let data: Data, http: HTTPURLResponse
            do {
                (data, http) = try await exchange(request, to: baseURL.absoluteString)
            } catch let lost as LostReply {
                guard ["GET", "HEAD"].contains(method), !resent else { throw lost.unreachable }
                resent = true
                continue
            }
            if let nonce = http.value(forHTTPHeaderField: "DPoP-Nonce") { dpopNonce = nonce }
            let answer = Answer(status: http.statusCode, data: data,
                                retryAfter: http.value(forHTTPHeaderField: "Retry-After").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 >= 0 ? $0 : nil })
            if proves, !retried, answer.status == 400 || answer.status == 401, Self.error(answer).code == .useDPoPNonce, dpopNonce != nil {
                retried = true
                continue
            }
            return answer
        }
    }

    /// `path` under `base`, with the query after its `?`, if it has one, kept as a query.
    static func url(_ base: URL, _ path: String) -> URL {
        let parts = path.split(separator: "?", maxSplits: 1)
        let url = base.appendingPathComponent(String(parts.first ?? ""))
        guard parts.count == 2, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.percentEncodedQuery = String(parts[1])
        return components.url ?? url
    }

    /// What the SDK says it is on its calls to Signet (RFC 9110 §10.1.5): its name and the system
    /// it runs on, `SignetClient (iOS 18.1)`, so that the server can name what an app makes
    /// through it (a passkey of a model without a name shows on the account page as the app and
    /// its system, "Acme · iOS", not as "Passkey").
    public static let userAgent: String = {
        #if os(iOS)
        let system = "iOS"
        #elseif os(macOS)
        let system = "macOS"
        #elseif os(visionOS)
        let system = "visionOS"
        #elseif os(watchOS)
        let system = "watchOS"
        #elseif os(tvOS)
        let system = "tvOS"
        #elseif os(Android)
        let system = "Android"
        #elseif os(Windows)
        let system = "Windows"
        #else
        let system = "Linux"
        #endif
        let version = ProcessInfo.processInfo.operatingSystemVersion
        return "SignetClient (\(system) \(version.majorVersion).\(version.minorVersion))"
    }()

    /// A request to Signet, 30 seconds at most, with ``userAgent`` unless the session's
    /// configuration sets a `User-Agent` of its own (the app's, then, on every call).
    func signetRequest(_ url: URL) -> URLRequest {
        var request = URLRequest(url: url)
        request.timeoutInterval = 30
        let own = session.configuration.httpAdditionalHeaders?.keys.contains { ($0 as? String)?.lowercased() == "user-agent" } ?? false
        if !own { request.setValue(Self.userAgent, forHTTPHeaderField: "User-Agent") }
        return request
    }

    /// One round trip over the session: a failure to connect is `unreachable` (naming `target`),
    /// an answer that is not HTTP `invalidResponse`.
    func transport(_ request: URLRequest, to target: String) async throws -> (Data, HTTPURLResponse) {
        do { return try await exchange(request, to: target) } catch let lost as LostReply { throw lost.unreachable }
    }

    /// A request that went out and got no answer: the connection was lost under it (Apple's
    /// `networkConnectionLost`), or closed before a byte came back (libcurl's "Empty reply from
    /// server", `badServerResponse` in Foundation on Linux). The server may have acted on it.
    struct LostReply: Error {
        let unreachable: SignetError
    }

    /// ``transport(_:to:)``, with a lost answer told apart as ``LostReply``.
    func exchange(_ request: URLRequest, to target: String) async throws -> (Data, HTTPURLResponse) {
        let data: Data, response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            let unreachable = SignetError(.unreachable, "cannot reach \(target): \(error.localizedDescription)")
            if let lost = error as? URLError, [.networkConnectionLost, .badServerResponse].contains(lost.code) { throw LostReply(unreachable: unreachable) }
            throw unreachable
        }
        guard let http = response as? HTTPURLResponse else { throw SignetError(.invalidResponse, "not an HTTP answer") }
        return (data, http)
    }

    /// The typed answer, or the server's error as a ``SignetError`` whose code is its `reason`.
    func decode<T: Decodable>(_ type: T.Type, _ answer: Answer) throws -> T {
        guard (200..<300).contains(answer.status) else { throw Self.error(answer) }
        do {
            return try JSONDecoder().decode(T.self, from: answer.data)
        } catch {
            throw SignetError(.invalidResponse, status: answer.status, "unexpected answer: \(error)")
        }
    }

    static func error(_ answer: Answer) -> SignetError {
        if answer.status >= 500 { return SignetError(.serverError, status: answer.status, "the server failed (\(answer.status))", retryAfter: answer.retryAfter) }
        if let body = try? JSONDecoder().decode(ErrorBody.self, from: answer.data) {
            return SignetError(serverReason: body.reason, status: answer.status, body.error_description, retryAfter: answer.retryAfter)
        }
        return SignetError(.invalidResponse, status: answer.status, "HTTP \(answer.status) without an error body")
    }

    /// A call with the stored access token. A 401 `step_up_required` (RFC 9470: the change needs
    /// a fresh passkey check) runs ``stepUp()`` and retries once; any other 401 refreshes once and
    /// retries (and steps up then, if the retry asks for it). When another call has replaced the
    /// refused token meanwhile, the retry uses that one instead, so calls refused together
    /// share one refresh or one passkey sheet. A token that expires within 30 s is refreshed
    /// before the call, which saves the round trip that would be refused.
    /// With `stepsUp` false a `step_up_required` answer is returned as it is, for a call that
    /// must not show the passkey sheet.
    func authorized(_ method: String, _ path: String, body: (any Encodable)? = nil, stepsUp: Bool = true) async throws -> Answer {
        guard var stored = try tokens.load() else { throw SignetError(.notSignedIn, "no session") }
        if stored.refreshToken != nil, stored.accessTokenExpiresAt < Date().addingTimeInterval(30) {
            try await refresh(replacing: stored.accessToken)
            guard let renewed = try tokens.load() else { throw SignetError(.notSignedIn, "no session") }
            stored = renewed
        }
        var used = stored.accessToken
        var answer = try await send(method, path, body: body, bearer: used)
        var refreshed = false
        var steppedUp = false
        var turns = 0
        while answer.status == 401, turns < 4 {
            turns += 1
            if Self.error(answer).code == .stepUpRequired {
                guard stepsUp, !steppedUp else { break }
                steppedUp = try await stepUp(replacing: used)
            } else {
                guard !refreshed else { break }
                refreshed = true
                try await refresh(replacing: used)
            }
            guard let renewed = try tokens.load() else { throw SignetError(.notSignedIn, "no session") }
            used = renewed.accessToken
            answer = try await send(method, path, body: body, bearer: used)
        }
        return answer
    }

    /// A step-up (RFC 9470): a sign-in with one of the signed-in account's own passkeys, which
    /// gives the session fresh tokens whose `auth_time` is now. The SDK runs it by itself when the
    /// server answers `step_up_required`; an app may call it before a sensitive screen.
    public func stepUp() async throws {
        try await stepUp(replacing: try tokens.load()?.accessToken)
    }

    /// A step-up for a call whose access token `stale` was refused for its age: none when
    /// another call has replaced that token meanwhile (the retry tells whether the new one is
    /// fresh enough). Whether it ran.
    @discardableResult
    func stepUp(replacing stale: String?) async throws -> Bool {
        await exclusiveRotation()
        defer { endRotation() }
        guard let stored = try tokens.load() else { throw SignetError(.notSignedIn, "no session") }
        if let stale, stored.accessToken != stale { return false }
        let start = try decode(PasskeyChallengeResponse.self, try await send("POST", "passkey/challenge",
            body: PasskeyChallengeRequest(client_id: clientID), bearer: stored.accessToken))
        let credential = try await passkeys.assertPasskey(start.authn_params_public_key)
        _ = try await exchange(session: start.auth_session, credential: credential)
        audienceTokens = [:]
        // The step-up started a new session; the one it replaces ends.
        if let old = stored.refreshToken {
            _ = try? await send("POST", "oauth/revoke", body: RevokeRequest(token: old, token_type_hint: "refresh_token", client_id: clientID))
        }
        return true
    }

    /// An access token for a resource server (`audience`, one of the client's), minted from the
    /// refresh token and kept until shortly before it expires: one token per audience, so a token
    /// for one API never opens another, nor Signet's account API.
    public func accessToken(audience: String) async throws -> String {
        try await audienceToken(audience).token
    }

    /// Which of the ``permissions`` asked for the account has at the API `audience`, as the
    /// server said in granting its token (RFC 6749 §5.1 `scope`): for an app to offer only what
    /// its user may do. The API still checks each call; roles changed meanwhile show from the
    /// next token.
    public func grantedPermissions(audience: String) async throws -> [String] {
        let words = (try await audienceToken(audience).scope ?? "").split(separator: " ").map(String.init)
        return permissions.filter(words.contains)
    }

    /// The kept token for `audience`, or a new one.
    func audienceToken(_ audience: String) async throws -> (token: String, expiresAt: Date, scope: String?) {
        if let cached = audienceTokens[audience], cached.expiresAt > Date().addingTimeInterval(30) { return cached }
        await exclusiveRotation()
        defer { endRotation() }
        if let cached = audienceTokens[audience], cached.expiresAt > Date().addingTimeInterval(30) { return cached }
        guard let stored = try tokens.load(), let refreshToken = stored.refreshToken else { throw SignetError(.notSignedIn, "no refresh token") }
        let answer = try await send("POST", "oauth/token", body: TokenRequest(
            grant_type: GrantType.refreshToken, client_id: clientID, refresh_token: refreshToken, audience: audience))
        let response = try decode(TokenResponse.self, answer)
        guard try await stillCurrent(refreshToken, rotatedTo: response.refresh_token) else {
            throw SignetError(.notSignedIn, "the session ended or changed while this token was minted")
        }
        var renewed = stored
        renewed.refreshToken = response.refresh_token ?? refreshToken
        try tokens.save(renewed)
        let minted = (response.access_token, Date().addingTimeInterval(TimeInterval(response.expires_in)), response.scope)
        audienceTokens[audience] = minted
        return minted
    }

    // MARK: sign-up, sign-in, session

    /// Creates an account with a new passkey (`/passkey/register`, the system sheet, `/oauth/token`).
    /// Throws ``SignetError`` with ``Reason/userExists`` when the address has an account (offer
    /// ``signIn(username:)``), ``Reason/signupDisabled`` where only administrators make
    /// accounts (offer sign-in, or an email code for an account an administrator made),
    /// ``Reason/signupCodeRequired`` where accounts are for some mail domains (`signup_domains`)
    /// and start with an email code (``startEmailSignIn(email:)``, ``signIn(email:code:)``, then
    /// ``addPasskey(name:)``),
    /// and ``Reason/signupDomainNotAllowed`` for an address at another domain.
    @discardableResult
    public func signUp(email: String, name: String? = nil) async throws -> TokenResponse {
        let start = try decode(PasskeyRegisterResponse.self, try await send("POST", "passkey/register",
            body: PasskeyRegisterRequest(client_id: clientID, user_profile: UserProfile(email: email, name: name))))
        let credential = try await passkeys.createPasskey(start.authn_params_public_key)
        return try await exchange(session: start.auth_session, credential: credential)
    }

    /// Adds the first passkey to an account an operator made, with the enrollment link the
    /// operator handed over (`POST /passkey/enroll`, then the passkey grant), and signs in: an
    /// app's own onboarding screen for accounts of a deployment where people do not sign up.
    /// The link works once; an account that has a passkey already is `user_has_passkey`.
    @discardableResult
    public func enroll(ticket: String) async throws -> TokenResponse {
        let start = try decode(PasskeyRegisterResponse.self, try await send("POST", "passkey/enroll", body: PasskeyEnrollRequest(client_id: clientID, ticket: ticket)))
        let credential = try await passkeys.createPasskey(start.authn_params_public_key)
        return try await exchange(session: start.auth_session, credential: credential)
    }

    /// The ticket of an enrollment link of this server (`{baseURL}/enroll#…`), as a universal link
    /// or an App Link brings it to the app (the iOS app's `enrollment_links`), for
    /// ``enroll(ticket:)``; `nil` for any other URL, another server's included, which is not this
    /// call's to open.
    public nonisolated func enrollmentTicket(in url: URL) -> String? {
        guard let link = URLComponents(url: url, resolvingAgainstBaseURL: false), let own = URLComponents(url: baseURL, resolvingAgainstBaseURL: false),
              link.scheme?.lowercased() == own.scheme?.lowercased(), link.host?.lowercased() == own.host?.lowercased(), link.port == own.port,
              link.user == nil, link.password == nil, link.query == nil,
              link.path == (own.path.hasSuffix("/") ? String(own.path.dropLast()) : own.path) + "/enroll",
              let ticket = link.fragment, !ticket.isEmpty else { return nil }
        return ticket
    }

    /// Signs in with a passkey: discoverable when `username` is nil, else offering that account's passkeys.
    @discardableResult
    public func signIn(username: String? = nil) async throws -> TokenResponse {
        let start = try decode(PasskeyChallengeResponse.self, try await send("POST", "passkey/challenge",
            body: PasskeyChallengeRequest(client_id: clientID, username: username)))
        let credential = try await passkeys.assertPasskey(start.authn_params_public_key)
        return try await exchange(session: start.auth_session, credential: credential)
    }

    func exchange(session: String, credential: CredentialJSON) async throws -> TokenResponse {
        let answer = try await send("POST", "oauth/token", body: TokenRequest(
            grant_type: GrantType.webauthn, client_id: clientID, auth_session: session, authn_response: credential, scope: signInScope))
        return try begin(try decode(TokenResponse.self, answer))
    }

    /// What a sign-in asks for: `nil` (every OIDC scope) unless ``permissions`` are asked for too.
    var signInScope: String? { permissions.isEmpty ? nil : (OIDCScopes.all + permissions).joined(separator: " ") }

    /// Stores a sign-in's tokens as the session (keeping this device's key ID).
    func begin(_ response: TokenResponse) throws -> TokenResponse {
        let previous = (try? tokens.load()) ?? nil
        audienceTokens = [:]
        try tokens.save(StoredSession(
            accessToken: response.access_token, refreshToken: response.refresh_token, idToken: response.id_token,
            accessTokenExpiresAt: Date().addingTimeInterval(TimeInterval(response.expires_in)), deviceKeyID: previous?.deviceKeyID,
            deviceKeyPublicKey: previous?.deviceKeyPublicKey))
        return response
    }

    /// Rotates the refresh token. A refused refresh (reused, revoked, expired) ends the session.
    /// Calls made while a refresh is in flight wait for it and take its tokens (``refresh(replacing:)``).
    public func refresh() async throws {
        try await refresh(replacing: try tokens.load()?.accessToken)
    }

    /// A refresh for a call whose access token `refused` was refused: none when another call
    /// has replaced that token meanwhile. Every use rotates the refresh token, and a second use
    /// of one is a reuse that ends the whole session (RFC 9700 §4.14.2), so uses run one at a
    /// time, and calls refused together share one refresh.
    func refresh(replacing refused: String?) async throws {
        await exclusiveRotation()
        defer { endRotation() }
        guard let stored = try tokens.load(), let refreshToken = stored.refreshToken else { throw SignetError(.notSignedIn, "no refresh token") }
        if let refused, stored.accessToken != refused { return }
        var proofKey: (any DPoPKeyStore)?
        if refreshWithDeviceKey {
            guard let deviceKeys = deviceKeyStore, let publicKey = stored.deviceKeyPublicKey, let key = DeviceKeyProofs(store: deviceKeys, publicKey: publicKey) else {
                throw SignetError(.deviceKeyInvalidated, "this client refreshes with the device key; enrol it first")
            }
            proofKey = key
        }
        let answer = try await send("POST", "oauth/token", body: TokenRequest(
            grant_type: GrantType.refreshToken, client_id: clientID, refresh_token: refreshToken), proofKey: proofKey)
        if answer.status == 400 || answer.status == 401 {
            let error = Self.error(answer)
            // Only the session this refresh token belonged to ends: a sign-in or step-up may
            // have stored a new one meanwhile.
            if try tokens.load()?.refreshToken == refreshToken { try tokens.clear() }
            throw SignetError(.notSignedIn, status: answer.status, "the session ended (\(error.code.rawValue)); sign in again")
        }
        let response = try decode(TokenResponse.self, answer)
        guard try await stillCurrent(refreshToken, rotatedTo: response.refresh_token) else { return }
        try tokens.save(StoredSession(
            accessToken: response.access_token, refreshToken: response.refresh_token ?? refreshToken, idToken: response.id_token ?? stored.idToken,
            accessTokenExpiresAt: Date().addingTimeInterval(TimeInterval(response.expires_in)), deviceKeyID: stored.deviceKeyID,
            deviceKeyPublicKey: stored.deviceKeyPublicKey))
    }

    /// Revokes the refresh token (and its family) and forgets the session.
    public func signOut() async throws {
        audienceTokens = [:]
        // Forgotten first, so no call made meanwhile still uses it.
        let refreshToken = try tokens.load()?.refreshToken
        try tokens.clear()
        if let refreshToken {
            _ = try? await send("POST", "oauth/revoke", body: RevokeRequest(token: refreshToken, token_type_hint: "refresh_token", client_id: clientID))
        }
    }

    /// Whether a session is stored.
    public var isSignedIn: Bool { (try? tokens.load()) != nil }

    /// `GET /userinfo`.
    public func userInfo() async throws -> UserInfo { try decode(UserInfo.self, try await authorized("GET", "userinfo")) }

    // MARK: base64url

    static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func unbase64url(_ text: String) -> Data? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s)
    }
}

public extension Data {
    /// Unpadded base64url (RFC 4648 §5), as WebAuthn's JSON uses it.
    var base64URLEncodedString: String { SignetClient.base64url(self) }
    /// Bytes from base64url text (padding optional).
    init?(base64URLEncoded text: String) {
        guard let data = SignetClient.unbase64url(text) else { return nil }
        self = data
    }
}
