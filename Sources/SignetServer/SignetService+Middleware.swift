import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetWebAuthn

extension SignetService {
    /// What the route's ``Needs`` ask for, established before its handler runs.
    func admit(_ request: HTTPRequest, needs: Needs, parameters: [String: String]) throws -> Call {
        let context = RequestContext(remoteAddress: clientAddress(request), requestID: request.requestID, acceptLanguage: request.header("accept-language"),
                                     dpop: request.header("dpop"), basic: needs.clientCredentials ? request.header("authorization").flatMap(Self.basicCredentials) : nil,
                                     userAgent: needs.clientCredentials ? request.header("user-agent") : nil)
        if let bucket = needs.rateLimit { try ceremonies.limit(bucket, context: context) }
        var principal: Principal?
        switch needs.token {
        case .none: break
        case .required(let audience): principal = try authenticate(request, audience)
        case .optional(let audience):
            if request.header("authorization") != nil { principal = try authenticate(request, audience) }
        }
        if needs.stepUp, let principal { try ceremonies.requireFreshAuthentication(principal, allowCode: needs.codeSessionAllowed) }
        let client = needs.clientAuthentication ? try authenticatedClient(request, context: context) : nil
        var caller = try needs.management.map { try ceremonies.authenticateManagement(accessToken: bearerToken(request), scope: $0) }
        if let scope = needs.scim {
            let token = try bearerToken(request)
            caller = try ceremonies.provisioningCaller(token: token, scope: scope) ?? ceremonies.authenticateManagement(accessToken: token, scope: scope)
        }
        return Call(request: request, parameters: parameters, principal: principal, client: client, caller: caller, context: context)
    }

    /// The access token of `Authorization: Bearer` (RFC 6750 §2.1) or `Authorization: DPoP`
    /// with its proof (RFC 9449 §7.1), verified for `audience`. A request without one is
    /// challenged for both schemes.
    func authenticate(_ request: HTTPRequest, _ audience: TokenAudience) throws -> Principal {
        if let header = request.header("authorization"), header.count > 5, header.prefix(5).lowercased() == "dpop " {
            let token = String(header.dropFirst(5)).trimmingCharacters(in: .whitespaces)
            let presentation = TokenPresentation(scheme: .dpop, proof: request.header("dpop"), method: request.method, url: configuration.issuer + request.path)
            return try ceremonies.authenticate(accessToken: token, audience: audience, presentation: presentation)
        }
        let token: String
        do {
            token = try bearerToken(request)
        } catch var error as AuthError {
            // Without a token the client may present one either way (RFC 9449 §7.1).
            error.challenges.append(AuthError.dpopChallenge(nil))
            throw error
        }
        return try ceremonies.authenticate(accessToken: token, audience: audience)
    }

    /// The access token of `Authorization: Bearer` (RFC 6750 §2.1).
    func bearerToken(_ request: HTTPRequest) throws -> String {
        guard let header = request.header("authorization"), header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw AuthError(.tokenMissing, "no Authorization: Bearer header", publicDetail: "an Authorization: Bearer access token is required")
        }
        return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    /// The call's context with the body's `client_assertion_type` and `client_assertion`
    /// (`private_key_jwt`, OIDC Core §9), when it has either; the URL they were sent to is an
    /// audience the assertion may name.
    func clientContext(_ call: Call, _ body: JSONValue) throws -> RequestContext {
        var context = call.context
        let type: String? = try body.optionalMember("client_assertion_type")
        let jwt: String? = try body.optionalMember("client_assertion")
        if type != nil || jwt != nil { context.assertion = ClientAssertion(type: type, jwt: jwt, endpoint: configuration.issuer + call.request.path) }
        return context
    }

    /// `Authorization: Basic` with the form-encoded client ID and secret (RFC 6749 §2.3.1), or,
    /// without an `Authorization` header, a JSON body's `client_assertion` and its type
    /// (`private_key_jwt`, OIDC Core §9) for this endpoint. Only such a request reads the body
    /// here as well as in its handler.
    func authenticatedClient(_ request: HTTPRequest, context: RequestContext) throws -> ClientConfiguration {
        if request.header("authorization") == nil, let body = try? Wire.body(request, limit: configuration.maxBodyBytes, form: false),
           body["client_assertion"] != nil || body["client_assertion_type"] != nil {
            var context = context
            context.assertion = ClientAssertion(type: body["client_assertion_type"]?.string, jwt: body["client_assertion"]?.string,
                                                endpoint: configuration.issuer + request.path)
            return try ceremonies.authenticateClient(assertedIn: context, clientID: body["client_id"]?.string)
        }
        guard let (id, secret) = request.header("authorization").flatMap(Self.basicCredentials) else {
            var error = AuthError(.clientSecretInvalid, "no Authorization: Basic client credentials",
                                  publicDetail: "client authentication (client_secret_basic or private_key_jwt) is required")
            error.challenges = [#"Basic realm="signet""#]
            throw error
        }
        return try ceremonies.authenticateClient(id: id, secret: secret)
    }

    /// Whether an `Authorization` value uses the Basic scheme (RFC 7617 §2), well-formed or not.
    static func isBasic(_ header: String) -> Bool {
        header.utf8.count > 6 && header.prefix(6).lowercased() == "basic "
    }

    /// The client ID and secret of an `Authorization: Basic` value (RFC 7617 §2, with RFC 6749
    /// §2.3.1's form encoding of both); `nil` for anything else.
    package static func basicCredentials(_ header: String) -> (id: String, secret: String)? {
        guard header.utf8.count <= 4096, isBasic(header),
              let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              // The first `:` by byte: one followed by a combining mark is part of a Character.
              let text = String(data: decoded, encoding: .utf8), let colon = text.utf8.firstIndex(of: UInt8(ascii: ":")),
              let id = HTTPRequest.percentDecoded(text.utf8[..<colon]), let secret = HTTPRequest.percentDecoded(text.utf8[text.utf8.index(after: colon)...])
        else { return nil }
        return (id, secret)
    }

    /// The client's address: the socket's peer, or, when the peer is one of `trusted_proxies`, the
    /// nearest address that proxy chain names (`Forwarded: for=`, RFC 7239, else `X-Forwarded-For`)
    /// that is not itself a trusted proxy.
    func clientAddress(_ request: HTTPRequest) -> String {
        let proxies = configuration.trustedProxies
        guard !proxies.isEmpty, proxies.contains(where: { $0.contains(request.remoteAddress) }) else { return request.remoteAddress }
        let chain = Self.forwardedChain(forwarded: request.header("forwarded"), xForwardedFor: request.header("x-forwarded-for"))
        for address in chain.reversed() where !address.isEmpty {
            guard CIDR(address) != nil else { return request.remoteAddress }
            if !proxies.contains(where: { $0.contains(address) }) { return address }
        }
        return request.remoteAddress
    }

    /// The addresses a proxy chain names, client first: the `for=` of `Forwarded` (RFC 7239 §4,
    /// without port or brackets), else the items of `X-Forwarded-For`. Bounded: at most 32.
    /// Split at the delimiters' own code points (`split(atScalar:)`): a client's part of the header
    /// cannot swallow the address its proxy appends.
    package static func forwardedChain(forwarded: String?, xForwardedFor: String?) -> [String] {
        var chain: [String] = []
        if let forwarded {
            for element in forwarded.prefix(4096).split(atScalar: ",").prefix(32) {
                for pair in element.split(atScalar: ";") {
                    let parts = pair.split(atScalar: "=", maxSplits: 1).map(Self.trimmedOWS)
                    guard parts.count == 2, parts[0].count == 3, parts[0].lowercased() == "for" else { continue }
                    var value = parts[1].drop { $0 == "\"" }
                    while value.last == "\"" { value.removeLast() }
                    if value.first == "[", let end = value.firstIndex(of: "]") { value = value[value.index(after: value.startIndex)..<end] }
                    else if value.count(where: { $0 == ":" }) == 1, let colon = value.firstIndex(of: ":") { value = value[..<colon] }
                    chain.append(String(value))
                }
            }
        } else if let xForwardedFor {
            chain = xForwardedFor.prefix(4096).split(atScalar: ",").prefix(32).map { String(Self.trimmedOWS($0)) }
        }
        return chain
    }

    /// Without the optional white space around it: spaces and tabs only (RFC 9110 §5.6.3).
    static func trimmedOWS(_ text: Substring) -> Substring {
        var text = text.drop { $0 == " " || $0 == "\t" }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
