import Foundation
public import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// A validated `/authorize` request (RFC 6749 §4.1.1, RFC 7636 §4.3, OIDC Core §3.1.2.1).
public struct AuthorizationRequest: Sendable, Equatable, Codable {
    public var clientID: String
    public var redirectURI: String
    /// The granted scopes (unknown ones dropped, RFC 6749 §3.3), space-separated.
    public var scope: String
    public var state: String?
    public var nonce: String?
    /// base64url(SHA-256(verifier)): only S256 is accepted (RFC 7636 §4.2).
    public var codeChallenge: String?
    /// `none`, `login` or `create` (OIDC Core §3.1.2.1; Initiating User Registration 1.0).
    public var prompt: String?
    /// Seconds (OIDC Core §3.1.2.1 `max_age`).
    public var maxAge: Int?
    /// The classes of ``AuthenticationContext/supported`` that `acr_values` named (OIDC Core
    /// §3.1.2.1, RFC 9470 §4), in its order; nil when it named none Signet can reach.
    public var acrValues: [String]?
    public var loginHint: String?
    /// The account an `id_token_hint` names (OIDC Core §3.1.2.1): a session of another account
    /// does not answer the request by itself.
    public var hintSubject: String?
    public var uiLocales: String?
    /// An RFC 8707 resource for the access token; Signet's account audience when absent.
    public var audience: String?
    /// The JWK thumbprint of the DPoP key the code is to be bound to (RFC 9449 §10 `dpop_jkt`).
    public var dpopJKT: String?
    /// Milliseconds: when it was made, and how long it may be carried through the sign-in page.
    public var issuedAt: Int64
    public var expiresAt: Int64

    /// Whether only a passkey's sign-in answers the request: `acr_values` named `phr` or `phrh`.
    public var requiresPasskey: Bool { acrValues != nil }
    /// Whether only a hardware-bound passkey's does: `acr_values` named `phrh` and not `phr`.
    public var requiresHardwareBoundPasskey: Bool { acrValues.map { !$0.contains(AuthenticationContext.phishingResistant) } ?? false }
}

/// An `/authorize` refusal that may go back to the client (RFC 6749 §4.1.2.1): the redirect URI
/// was proven registered, so the browser is sent there with `error`, `error_description`,
/// `state` and `iss`.
public struct AuthorizationRedirectError: Error, Sendable {
    public let redirectURI: String
    public let state: String?
    public let error: AuthError
    /// The issuer identifier, which RFC 9207 §2 puts in every authorization response, an error's
    /// too, so that a client talking to several servers can tell which one answered.
    public let issuer: String
    public init(redirectURI: String, state: String?, error: AuthError, issuer: String) {
        self.redirectURI = redirectURI
        self.state = state
        self.error = error
        self.issuer = issuer
    }
    /// The URL the browser goes to, with RFC 6749 §4.1.2.1's `error` (`invalid_request` for a
    /// malformed request or missing PKCE, RFC 7636 §4.4.1), Signet's `reason`, `state` and `iss`.
    public var location: String {
        let code: String
        switch error.reason {
        case .malformed, .pkceInvalid: code = "invalid_request"
        case .grantNotAllowed: code = "unauthorized_client"
        case .audienceNotAllowed: code = "invalid_target"
        case .databaseUnavailable, .storageFull: code = "temporarily_unavailable"
        default: code = error.reason.error
        }
        return Ceremonies.appending(to: redirectURI, [("error", code), ("error_description", error.publicDetail ?? error.reason.text),
                                                      ("reason", error.reason.rawValue), ("state", state), ("iss", issuer)])
    }
}

extension Ceremonies {
    /// Longest value of any `/authorize` parameter that Signet keeps.
    static let maxParameterLength = 2000

    /// `GET /authorize`'s parameters, checked in RFC 6749 §4.1.2.1's order: a bad `client_id` or
    /// `redirect_uri` throws an ``AuthError`` (`client_unknown`, `redirect_uri_invalid`), which
    /// the caller shows on a page and never redirects; every later problem throws an
    /// ``AuthorizationRedirectError``. `repeated` names the parameters the query held more than
    /// once, which RFC 6749 §3.1 forbids: a repeated `client_id` or `redirect_uri` cannot be
    /// trusted to redirect to, any other is refused back to the client.
    ///
    /// A query with `request_uri` is a pushed request's (RFC 9126 §4): ``pushedRequest(_:clientID:)``
    /// answers it. `pushed` is set when the pushed authorization request endpoint checks what a
    /// client pushed.
    public func authorizationRequest(_ query: [String: String], repeated: [String] = [], pushed: Bool = false) throws -> AuthorizationRequest {
        if !pushed, let uri = query["request_uri"] {
            if repeated.contains("request_uri") || repeated.contains("client_id") { throw AuthError.malformed("request_uri or client_id appears more than once") }
            return try pushedRequest(uri, clientID: query["client_id"])
        }
        if let long = query.first(where: { $0.value.utf8.count > Self.maxParameterLength }) {
            throw AuthError.malformed("parameter \(long.key.prefix(40)) is longer than \(Self.maxParameterLength) bytes")
        }
        for name in ["client_id", "redirect_uri"] where repeated.contains(name) { throw AuthError.malformed("\(name) appears more than once") }
        guard let clientID = query["client_id"], !clientID.isEmpty else { throw AuthError.malformed("client_id is required") }
        guard let client = clients.client(clientID) else { throw AuthError(.clientUnknown, "unknown client_id \"\(clientID.prefix(64))\"") }
        guard let redirectURI = query["redirect_uri"], Self.redirectAllowed(redirectURI, for: client) else {
            throw AuthError(.redirectURIInvalid, "redirect_uri \"\(query["redirect_uri"]?.prefix(200) ?? "(none)")\" is not registered for \(client.id)")
        }
        let state = query["state"]
        func refuse(_ reason: Reason, _ detail: String) -> AuthorizationRedirectError {
            AuthorizationRedirectError(redirectURI: redirectURI, state: state, error: AuthError(reason, detail, publicDetail: detail), issuer: configuration.issuer)
        }
        if let name = repeated.first { throw refuse(.malformed, "\(name.prefix(40)) appears more than once") }
        // OIDC Core §6.1 and §6.2: an OP without request objects must say so, not ignore them
        // (their parameters would otherwise be silently dropped).
        if query["request"] != nil { throw refuse(.requestNotSupported, "the request parameter is not supported") }
        // RFC 9126 §2.1: a pushed request names no other.
        if query["request_uri"] != nil { throw refuse(.malformed, "a pushed authorization request cannot carry request_uri") }
        // RFC 9126 §4: a client whose requests must be pushed sends request_uri alone.
        if client.requirePushedRequests || configuration.requirePushedRequests, !pushed {
            throw refuse(.malformed, "client \(client.id) must push its authorization requests (POST /oauth/par, RFC 9126) and send request_uri")
        }
        guard query["response_type"] == "code" else { throw refuse(.responseTypeUnsupported, "response_type must be code") }
        // The answer comes in the redirect's query (discovery: response_modes_supported); a client
        // that asked for the fragment or a form post would not look there.
        if let mode = query["response_mode"], mode != "query" { throw refuse(.malformed, "response_mode must be query") }
        guard client.grants.contains(GrantNames.authorizationCode) else {
            throw refuse(.grantNotAllowed, "client \(client.id) may not use the authorization code flow")
        }
        let requested = understoodScope(query["scope"] ?? "")
        guard requested.scopes.contains("openid") else { throw refuse(.malformed, "scope must include openid") }
        let scope = (requested.scopes + requested.permissions).joined(separator: " ")
        var challenge: String?
        if let value = query["code_challenge"] {
            guard (query["code_challenge_method"] ?? "plain") == "S256" else { throw refuse(.pkceInvalid, "code_challenge_method must be S256") }
            guard value.utf8.count == 43, Base64URL.decode(value)?.count == 32 else { throw refuse(.pkceInvalid, "code_challenge must be base64url of 32 bytes") }
            challenge = value
        } else if !client.isConfidential {
            throw refuse(.pkceInvalid, "a public client must send code_challenge with code_challenge_method=S256 (RFC 7636)")
        }
        var prompt: String?
        if let text = query["prompt"] {
            prompt = Self.canonicalPrompt(text)
            guard prompt != nil else { throw refuse(.malformed, "prompt must be none alone, or any of login, select_account, consent and create") }
            // Initiating User Registration via OpenID Connect 1.0 §4.1: a prompt value the OP does
            // not offer (discovery lists `create` only while sign-up is open) is invalid_request.
            guard prompt != "create" || configuration.signUp else { throw refuse(.signupDisabled, "prompt=create, with signup: false") }
        }
        var maxAge: Int?
        if let text = query["max_age"] {
            guard let value = Int(text), value >= 0 else { throw refuse(.malformed, "max_age must be a whole number of seconds") }
            maxAge = value
        }
        let audience = query["audience"] ?? query["resource"]
        if let audience, audience == configuration.managementAudience || !configuration.audiences(of: client).containsExactly(audience) {
            throw refuse(.audienceNotAllowed, "audience is not one of the client's")
        }
        // RFC 9449 §10: a SHA-256 JWK thumbprint (RFC 7638), base64url.
        if let jkt = query["dpop_jkt"], jkt.utf8.count != 43 || Base64URL.decode(jkt)?.count != 32 {
            throw refuse(.malformed, "dpop_jkt must be the base64url SHA-256 thumbprint of a JWK (RFC 7638)")
        }
        var hintSubject: String?
        if let hint = query["id_token_hint"] {
            guard let claims = idTokenHint(hint), claims.audience == client.id else {
                throw refuse(.malformed, "id_token_hint is not an id token this server issued to this client")
            }
            hintSubject = claims.subject
        }
        return AuthorizationRequest(
            clientID: client.id, redirectURI: redirectURI, scope: scope, state: state, nonce: query["nonce"], codeChallenge: challenge, prompt: prompt,
            maxAge: maxAge, acrValues: Self.effectiveACR(AuthenticationContext.requested(query["acr_values"]), client: client), loginHint: query["login_hint"].map { String($0.prefix(254)) },
            hintSubject: hintSubject, uiLocales: query["ui_locales"], audience: audience, dpopJKT: query["dpop_jkt"],
            issuedAt: nowMillis, expiresAt: nowMillis + Int64(configuration.sessionTimeout) * 2000)
    }

    /// The one prompt Signet acts on for an OIDC `prompt` value (OIDC Core §3.1.2.1: a space-
    /// separated list, `none` only alone): `none`; `create` (Initiating User Registration via
    /// OpenID Connect 1.0) for the sign-up page; `login`, also for `select_account`, since
    /// choosing the account is signing in again here; `consent` alone, which changes nothing (a
    /// client of Signet's is registered by its operator, consent is never asked). nil for a value
    /// that is none of those.
    static func canonicalPrompt(_ text: String) -> String? {
        let values = Set(text.split(separator: " ").map(String.init))
        guard !values.isEmpty, values.isSubset(of: ["none", "login", "select_account", "consent", "create"]) else { return nil }
        if values.contains("none") { return values.count == 1 ? "none" : nil }
        if values.contains("create") { return "create" }
        if values.contains("login") || values.contains("select_account") { return "login" }
        return "consent"
    }

    /// Whether `uri` is one of the client's redirect URIs (RFC 6749 §3.1.2.3: exact), or the
    /// same loopback URI on another port (RFC 8252 §7.3, registered without a port), or any
    /// loopback `http` URI for the development client.
    public static func redirectAllowed(_ uri: String, for client: ClientConfiguration) -> Bool {
        guard isRedirectURI(uri) else { return false }
        if client.redirectURIs.containsExactly(uri) { return true }
        guard let url = URLComponents(string: uri), url.scheme == "http", let host = url.host, ["127.0.0.1", "[::1]", "::1", "localhost"].contains(host)
        else { return false }
        if client.anyLoopbackRedirect { return true }
        var portless = url
        portless.port = nil
        return client.redirectURIs.contains { registered in
            guard let r = URLComponents(string: registered), r.port == nil, let bare = r.string, let asked = portless.string else { return false }
            return asked.isExactly(bare)
        }
    }

    /// `redirect_uri` with the parameters added to its query (RFC 6749 §4.1.2: the query's own
    /// parameters kept), each form-encoded; `nil` values left out.
    public static func appending(to uri: String, _ parameters: [(String, String?)]) -> String {
        let pairs = parameters.compactMap { name, value in value.map { "\(name)=\(formEncoded($0))" } }
        guard !pairs.isEmpty else { return uri }
        // The byte, not the Character: `?` followed by a combining mark is another Character.
        return uri + (uri.utf8.contains(UInt8(ascii: "?")) ? "&" : "?") + pairs.joined(separator: "&")
    }

    /// `application/x-www-form-urlencoded` encoding of one value (unreserved kept, the rest %XX).
    public static func formEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    // MARK: the pending request, carried through the sign-in page

    /// The request sealed (AES-256-GCM under a key derived from the key-encryption key), so the
    /// sign-in page can carry it without a row and nobody can alter it.
    public func seal(_ request: AuthorizationRequest) throws -> String {
        let plain = try JSONEncoder().encode(request)
        return Base64URL.encode(try AESGCM.seal(Array(plain), key: authorizeKey, aad: Array("signet/authorize/v1".utf8)))
    }

    /// The sealed request, if this deployment sealed it and it has not expired.
    public func openAuthorization(_ text: String?) -> AuthorizationRequest? {
        guard let text, text.utf8.count <= 8192, let sealed = Base64URL.decode(text),
              let plain = try? AESGCM.open(sealed, key: authorizeKey, aad: Array("signet/authorize/v1".utf8)),
              let request = try? JSONDecoder().decode(AuthorizationRequest.self, from: Data(plain)), request.expiresAt > nowMillis
        else { return nil }
        return request
    }

    /// Whether the SSO session can answer `request` without showing a page: `prompt=login`
    /// and `prompt=create` always show one, `max_age` needs a recent enough check, `acr_values`
    /// a passkey's sign-in of that class, and an `id_token_hint` the session's own account (with `prompt=none`,
    /// another account's session is `login_required`, as OIDC Core §3.1.2.1 asks).
    public func satisfies(_ session: WebSession, _ request: AuthorizationRequest) -> Bool {
        if request.prompt == "login" || request.prompt == "create" { return false }
        if let subject = request.hintSubject, subject != session.row.userID { return false }
        return recentAndStrongEnough(session, request)
    }

    /// After the sign-in page: whether the session may answer `request` now. For `prompt=login`
    /// or `create` the sign-in must be later than the request; `max_age` and `acr_values` still hold.
    public func signedInFor(_ session: WebSession, _ request: AuthorizationRequest) -> Bool {
        if request.prompt == "login" || request.prompt == "create", session.row.authTime * 1000 < request.issuedAt - 999 { return false }
        return recentAndStrongEnough(session, request)
    }

    /// `max_age` (OIDC Core §3.1.2.1) and `acr_values` `phr` or `phrh` (RFC 9470 §4: the client
    /// asks again because a resource server refused a weaker sign-in, so here it is a requirement).
    func recentAndStrongEnough(_ session: WebSession, _ request: AuthorizationRequest) -> Bool {
        if let maxAge = request.maxAge, nowMillis / 1000 - session.row.authTime > Int64(maxAge) { return false }
        if let wanted = request.acrValues, !AuthenticationContext.meets(AuthenticationContext.reached(amr: session.row.amr), anyOf: wanted) { return false }
        return true
    }

    /// Where `/logout` may send the browser (RP-Initiated Logout §2–3): `redirectURI` only when
    /// it is one of the `post_logout_redirect_uris` of the client the id token (verified, expired
    /// or not) or `client_id` names, with `state` added; `nil` when none was asked. A URI that is
    /// not registered is refused (`redirect_uri_invalid`), never followed. Also the client
    /// (`client_id` or the hint's audience) and the user the hint was issued to. A hint is
    /// verified whenever one is given, with or without a redirect URI: one that is not an id
    /// token of this server is refused (`token_invalid`). Only a hint for the signed-in user may
    /// end a session unasked (RP-Initiated Logout §2 has the OP ask when the hint names someone
    /// else); anything less would let any page sign a visitor out.
    public func postLogout(idTokenHint: String?, clientID: String?, redirectURI: String?, state: String?) throws -> (target: String?, clientID: String?, subject: String?) {
        var id = clientID
        var subject: String?
        if let hint = idTokenHint {
            guard let claims = self.idTokenHint(hint) else { throw AuthError(.tokenInvalid, "id_token_hint is not an id token this server issued") }
            if let clientID, !clientID.isExactly(claims.audience) { throw AuthError.malformed("client_id differs from the id token's audience") }
            id = claims.audience
            subject = claims.subject
        }
        guard let redirectURI else { return (nil, id, subject) }
        guard let id, let client = clients.client(id), client.postLogoutRedirectURIs.containsExactly(redirectURI) else {
            throw AuthError(.redirectURIInvalid, "post_logout_redirect_uri is not registered for the client")
        }
        return (Self.appending(to: redirectURI, [("state", state)]), id, subject)
    }

    /// The client and account of an `id_token_hint`, an id token this server signed. An expired
    /// one is a fine hint (OIDC Core §3.1.2.1, RP-Initiated Logout §2): only its signature and
    /// issuer matter.
    func idTokenHint(_ hint: String) -> (audience: String, subject: String)? {
        guard let claims = try? JWT.verify(hint, type: "JWT", issuer: configuration.issuer, keys: keys, now: Date(timeIntervalSince1970: 0)),
              let audience = claims["aud"]?.string, let subject = claims["sub"]?.string
        else { return nil }
        return (audience, subject)
    }

    /// The code for `request`, issued to the signed-in browser (RFC 6749 §4.1.2): stored as its
    /// hash with everything the token request must match, and the URL that takes it back to the
    /// client. An account or a sign-in the client is not for (its `required_roles` and
    /// `minimum_acr`, ``requireClientPolicy(userID:amr:client:)``) gets none: the refusal,
    /// audited, goes back to the client (`access_denied`, `unmet_authentication_requirements`).
    public func issueCode(_ request: AuthorizationRequest, session: WebSession, context: RequestContext) throws -> String {
        do {
            try requireClientPolicy(userID: session.user.id, amr: session.row.amr, client: try client(request.clientID))
        } catch {
            let refusal = AuthError(error)
            audit(.authorizationCodeIssued, refused: refusal, user: session.user.id, client: request.clientID, context: context)
            throw refusal
        }
        let code = random(32)
        let now = nowMillis
        let row = AuthorizationCodeRow(
            hash: Digest.sha256.hash(code), clientID: request.clientID, redirectURI: request.redirectURI, codeChallenge: request.codeChallenge,
            nonce: request.nonce, scope: request.scope, audience: request.audience, userID: session.user.id, authTime: session.row.authTime,
            amr: session.row.amr, credential: session.row.credential, family: Base64URL.encode(timeOrderedID()), createdAt: now,
            expiresAt: now + Int64(configuration.authorizationCodeLifetime) * 1000, dpopJKT: request.dpopJKT, webSession: session.row.id)
        try store.perform([.authorizationCode(row), .audit(auditEvent(.authorizationCodeIssued, user: session.user.id, client: request.clientID, context: context))])
        return Self.appending(to: request.redirectURI, [("code", Base64URL.encode(code)), ("state", request.state), ("iss", configuration.issuer)])
    }

    // MARK: the token request

    /// The `authorization_code` grant (RFC 6749 §4.1.3, RFC 7636 §4.6, OIDC Core §3.1.3): the
    /// client authenticates (a confidential one by `client_secret_basic` or `client_secret_post`),
    /// the code must be unused, unexpired, and issued to this client for this redirect URI, and
    /// the verifier must hash to its challenge. The code's use is part of the transaction that
    /// stores the refresh token; a second use revokes what the first issued.
    public func authorizationCodeGrant(
        clientID: String?, secret: String?, code: String?, redirectURI: String?, verifier: String?, audience: String? = nil, context: RequestContext
    ) throws -> TokenResponse {
        do {
            return try exchange(clientID: clientID, secret: secret, code: code, redirectURI: redirectURI, verifier: verifier, audience: audience, context: context)
        } catch {
            let failure = failed(AuthError(error), context: context)
            metrics.ceremony("authorization_code", reason: failure.reason.rawValue)
            audit(.authorizationCode, refused: failure, client: clientID ?? context.basic?.id, context: context)
            throw failure
        }
    }

    /// The client of a token request, authenticated when it is confidential: RFC 6749 §3.2.1
    /// holds for every grant, so a refresh token stolen from a confidential client is worth nothing
    /// without its secret (RFC 9700 §4.14.2).
    func tokenClient(_ request: TokenRequest, grant: String, context: RequestContext) throws -> ClientConfiguration {
        try tokenEndpointClient(clientID: request.client_id, secret: request.client_secret, grant: grant, context: context)
    }

    /// The client of a token-endpoint request (RFC 6749 §2.3): named by `client_id` or the
    /// Basic credentials of `context` (one method, not both), authenticated with its secret when it is
    /// confidential, and never with a secret when it is public (an empty one names it only, as
    /// `Authorization: Basic` with `client_id:` does in some libraries). A failed authentication is
    /// audited (`client_authentication`, counted per address like other refusals), so that
    /// guessing at a client's secret shows in the log and in `/metrics`.
    func tokenEndpointClient(clientID: String?, secret: String?, grant: String? = nil, context: RequestContext) throws -> ClientConfiguration {
        let basic = context.basic
        if basic != nil, secret != nil { throw AuthError.malformed("use one client authentication method, not client_secret_basic and client_secret_post") }
        if let assertion = context.assertion {
            guard basic == nil, secret == nil else { throw AuthError.malformed("use one client authentication method, not client_assertion and a secret") }
            return try assertedClient(assertion, clientID: clientID, grant: grant, context: context)
        }
        if let basic, let clientID, !clientID.isExactly(basic.id) { throw AuthError.malformed("client_id differs from the Authorization header's") }
        guard let id = basic?.id ?? clientID else { throw AuthError.malformed("client_id is required") }
        let client = try self.client(id, grant: grant)
        do {
            if client.isConfidential {
                guard let given = basic?.secret ?? secret else {
                    var error = AuthError(.clientSecretInvalid, "client \(id) is confidential and sent no \(client.usesKeys ? "client_assertion" : "secret")",
                                          publicDetail: "client authentication (\(client.authenticationMethod)) is required")
                    if !client.usesKeys { error.challenges = [#"Basic realm="signet""#] }
                    throw error
                }
                return try authenticateClient(id: id, secret: given)
            }
            // An empty secret, as some libraries send for a client without one, only names it.
            if let given = basic?.secret ?? secret, !given.isEmpty { throw AuthError(.clientSecretInvalid, "client \(id) is public and has no secret") }
            return client
        } catch var failure as AuthError {
            audit(.clientAuthentication, refused: failure, client: id, context: context)
            failure.audited = true
            throw failure
        }
    }

    func exchange(clientID: String?, secret: String?, code: String?, redirectURI: String?, verifier: String?, audience: String?, context: RequestContext) throws -> TokenResponse {
        let client = try tokenEndpointClient(clientID: clientID, secret: secret, grant: GrantNames.authorizationCode, context: context)
        guard let code, let raw = Base64URL.decode(code), raw.count == 32 else { throw AuthError(.codeInvalid, "the code is not one Signet issued") }
        let hash = Digest.sha256.hash(raw)
        guard let (row, usedAt) = try store.authorizationCode(hash: hash) else { throw AuthError(.codeInvalid, "the code is not one Signet issued") }
        let now = nowMillis
        if usedAt != nil {
            // RFC 6749 §4.1.2: a code used twice revokes the tokens it gave.
            try endSession(row.family)
            audit(.authorizationCodeReused, "failure", reason: Reason.codeInvalid.rawValue, user: row.userID, client: client.id, context: context)
            throw AuthError(.codeInvalid, "the code was used before; what it issued is revoked")
        }
        guard row.expiresAt > now else { throw AuthError(.codeInvalid, "the code expired") }
        // Any mismatch below uses the code up: it is never good for a second try.
        func burn(_ error: AuthError) -> AuthError {
            try? store.perform([.useAuthorizationCode(hash: hash, at: now)])
            return error
        }
        guard row.clientID == client.id else { throw burn(AuthError(.codeInvalid, "the code was issued to \(row.clientID)")) }
        guard let redirectURI, redirectURI.isExactly(row.redirectURI) else { throw burn(AuthError(.redirectURIInvalid, "redirect_uri differs from the authorization request's")) }
        if let challenge = row.codeChallenge {
            guard let verifier, Self.isCodeVerifier(verifier) else {
                throw burn(AuthError(.pkceInvalid, "code_verifier is missing or not 43-128 unreserved characters (RFC 7636 §4.1)"))
            }
            guard ConstantTime.equals(Array(Base64URL.encode(Digest.sha256.hash(Array(verifier.utf8))).utf8), Array(challenge.utf8)) else {
                throw burn(AuthError(.pkceInvalid, "code_verifier does not hash to the code challenge"))
            }
        } else if verifier != nil {
            throw burn(AuthError(.pkceInvalid, "code_verifier sent for a code issued without a challenge"))
        }
        guard let user = try store.user(id: row.userID) else { throw burn(AuthError(.codeInvalid, "the account no longer exists")) }
        guard !user.blocked else { throw burn(AuthError(.userBlocked, "the account is blocked")) }
        do { try requireClientPolicy(userID: user.id, amr: row.amr, client: client) } catch { throw burn(AuthError(error)) }
        // RFC 8707 §2.2: an API named again here is the one the user authorized; another is
        // refused, the code kept for a request that names the right one.
        if let audience, audience != row.audience ?? configuration.accountAudience {
            throw AuthError(.audienceNotAllowed, "the code was issued for another audience than \"\(audience.prefix(200))\"")
        }
        var grant = try tokenGrant(scope: row.scope, audience: row.audience, client: client, context: context)
        grant.nonce = row.nonce
        // RFC 9449 §10: a code bound to a DPoP key is only for a proof by that key.
        if let jkt = row.dpopJKT {
            guard let proof = grant.binding else {
                throw burn(AuthError(.dpopInvalid, "the code is bound to a DPoP key (dpop_jkt) and the request has no DPoP proof"))
            }
            guard proof.jkt.isExactly(jkt) else { throw burn(AuthError(.dpopKeyMismatch, "the DPoP proof's key is not the one dpop_jkt named")) }
        }
        let fresh = random(48)
        let session = SessionRef(sid: row.family, credential: row.credential)
        let refresh = grant.offline
            ? refreshToken(Array(fresh[16..<48]), userID: user.id, client: client, scope: grant.scope, amr: row.amr, authTime: row.authTime, session: session,
                           jkt: grant.refreshBinding(client), context: context)
            : nil
        let subscription = logoutSubscription(row, client: client, offline: refresh != nil)
        do {
            try store.perform([.useAuthorizationCode(hash: hash, at: now), .audit(auditEvent(.authorizationCodeExchanged, user: user.id, client: client.id, context: context))]
                + (refresh.map { [.refreshToken($0.row)] } ?? []) + proofMark(grant.binding) + (subscription.map { [.logoutSubscription($0)] } ?? []))
        } catch {
            guard error.code == .sessionUsed else { throw error }
            try endSession(row.family)
            throw AuthError(.codeInvalid, "the code was used by a parallel request; what it issued is revoked")
        }
        metrics.ceremony("authorization_code", reason: nil)
        if subscription != nil { logoutSubscribed.signal() }
        var tokens = try issueTokens(user: user, client: client, grant: grant, amr: row.amr, authTime: row.authTime, jti: Array(fresh[0..<16]), session: session)
        tokens.refresh_token = refresh?.token
        return tokens
    }

    /// RFC 7636 §4.1: 43 to 128 characters of `[A-Za-z0-9-._~]`.
    static func isCodeVerifier(_ text: String) -> Bool {
        (43...128).contains(text.utf8.count) && text.utf8.allSatisfy { b in
            (b >= 0x61 && b <= 0x7a) || (b >= 0x41 && b <= 0x5a) || (b >= 0x30 && b <= 0x39) || b == 0x2d || b == 0x2e || b == 0x5f || b == 0x7e
        }
    }
}
