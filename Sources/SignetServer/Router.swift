import SignetAuth
import SignetHTTP

/// What a route needs before its handler runs; the middleware in ``SignetService`` enforces each
/// (DESIGN.md, "A route declares what it needs"). No handler checks a token by hand.
struct Needs: Sendable {
    enum Token: Sendable {
        case none
        /// An `Authorization: Bearer` access token (RFC 6750 §2.1) for this audience.
        case required(TokenAudience)
        /// Such a token if the request carries one (a step-up at `/passkey/challenge`).
        case optional(TokenAudience)
    }
    var token = Token.none
    /// A fresh passkey or device-key check (RFC 9470): `auth_time` within `step_up.max_age`.
    var stepUp = false
    /// With `stepUp`: a fresh email- or recovery-code session passes too (adding a credential,
    /// which opens a recovery).
    var codeSessionAllowed = false
    /// A confidential client's `client_secret_basic` (RFC 6749 §2.3.1).
    var clientAuthentication = false
    /// The client's `Authorization: Basic` credentials when sent, in the call's context: the
    /// token endpoint's kind of route, where the ceremony decides whether the client must
    /// authenticate (a confidential one) or only names itself.
    var clientCredentials = false
    /// The per-address rate-limit bucket the route is counted in (429 `rate_limited` past it).
    var rateLimit: Bucket?
    /// A Management API call: a `client_credentials` token for `{issuer}/api/v2/` with this scope.
    var management: ManagementScope?
    /// A SCIM provisioning call: the provisioning token (`scim.token_hash`), or a Management
    /// API token with this scope.
    var scim: ManagementScope?

    static let none = Needs()
    /// Signet's account API: a token for `{issuer}/me`.
    static let account = Needs(token: .required(.account))
    /// A sensitive change to the account: a token for `{issuer}/me` from a fresh passkey check.
    static let sensitive = Needs(token: .required(.account), stepUp: true)
    /// Adding a credential: sensitive, but a fresh code session may do it under a recovery hold.
    static let addsCredential = Needs(token: .required(.account), stepUp: true, codeSessionAllowed: true)
    /// The second step of adding a passkey: the ceremony checks the step-up as of its first
    /// step (``Ceremonies/addPasskey(_:principal:context:userAgent:app:)``).
    static let finishesPasskey = Needs(token: .required(.account))
    /// A copy of the account's data: a fresh sign-in of any kind, a passkey's or a code's (an
    /// account without a passkey can have its copy too).
    static let recentSignIn = Needs(token: .required(.account), stepUp: true, codeSessionAllowed: true)
    static let resourceServer = Needs(clientAuthentication: true)
    /// The token endpoint and its kin (revocation, introspection, device and code requests).
    static let tokenEndpoint = Needs(clientCredentials: true)
    static func management(_ scope: ManagementScope) -> Needs { Needs(management: scope) }
    static func scim(_ scope: ManagementScope) -> Needs { Needs(scim: scope) }
}

/// One request as a handler sees it: the request, the path's parameters, and what the middleware
/// established (the token's principal, the authenticated client, the client's address).
struct Call: Sendable {
    let request: HTTPRequest
    let parameters: [String: String]
    let principal: Principal?
    let client: ClientConfiguration?
    /// The Management API's caller, for a route that declared a management scope.
    let caller: ManagementCaller?
    let context: RequestContext

    /// The principal of a route that declared a required token.
    var account: Principal {
        guard let principal else { preconditionFailure("a handler asked for the account of a route that declares no token") }
        return principal
    }

    /// The client of a route that declared client authentication.
    var authenticatedClient: ClientConfiguration {
        guard let client else { preconditionFailure("a handler asked for the client of a route without client authentication") }
        return client
    }

    /// The caller of a route that declared a management scope.
    var administrator: ManagementCaller {
        guard let caller else { preconditionFailure("a handler asked for the caller of a route without a management scope") }
        return caller
    }

    func parameter(_ name: String) -> String { parameters[name] ?? "" }
}

/// Routes by method and path; `{name}` segments capture parameters.
struct Router<Context: Sendable>: Sendable {
    typealias Handler = @Sendable (Context, Call) throws -> HTTPResponse

    struct Route: Sendable {
        let method: String
        let pattern: String
        let segments: [Substring]
        let needs: Needs
        let handler: Handler
    }

    private(set) var routes: [Route] = []
    /// Routes without parameters by path, then method: one hash lookup for the common case.
    private var exact: [String: [String: Int]] = [:]

    mutating func add(_ method: String, _ pattern: String, needs: Needs = .none, _ handler: @escaping Handler) {
        if !pattern.contains("{") { exact[pattern, default: [:]][method] = routes.count }
        routes.append(Route(method: method, pattern: pattern, segments: pattern.split(separator: "/"), needs: needs, handler: handler))
    }

    /// Every method some route takes, HEAD beside GET (for `OPTIONS *`, RFC 9110 §9.3.7).
    var methods: [String] {
        ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].filter { method in routes.contains { $0.method == (method == "HEAD" ? "GET" : method) } }
    }

    enum Match {
        case found(Route, [String: String])
        /// The path's pattern, and the methods it does take (for the 405's `Allow`, RFC 9110 §15.5.6).
        case methodNotAllowed(String, allowed: [String])
        case notFound
    }

    func match(_ method: String, _ path: String) -> Match {
        if let index = exact[path]?[method] { return .found(routes[index], [:]) }
        let parts = path.split(separator: "/")
        var pathMatched: String?
        var allowed: [String] = []
        for route in routes where route.segments.count == parts.count {
            var parameters: [String: String] = [:]
            var matched = true
            for (segment, part) in zip(route.segments, parts) {
                if segment.hasPrefix("{") && segment.hasSuffix("}") {
                    parameters[String(segment.dropFirst().dropLast())] = String(part)
                } else if segment != part {
                    matched = false
                    break
                }
            }
            guard matched else { continue }
            if route.method == method { return .found(route, parameters) }
            pathMatched = pathMatched ?? route.pattern
            allowed += route.method == "GET" ? ["GET", "HEAD"] : [route.method]
        }
        return pathMatched.map { .methodNotAllowed($0, allowed: allowed) } ?? .notFound
    }
}
