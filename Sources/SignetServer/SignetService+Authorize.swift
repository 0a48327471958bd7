import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetWeb
import SignetWebAuthn

/// The OpenID Connect endpoints of the browser flow (DESIGN.md, "The web"): `/authorize`, its
/// continuation after the sign-in page, `/logout`, and the documents beside them.
extension SignetService {
    static func addAuthorizeRoutes(_ r: inout Router<SignetService>) {
        r.add("GET", "/authorize") { s, call in s.authorize(call) }
        r.add("GET", "/authorize/continue") { s, call in s.continueAuthorization(call) }
        r.add("GET", "/authorize/cancel") { s, call in s.cancelAuthorization(call) }
        r.add("GET", "/logout") { s, call in s.logout(call, call.request.query) }
        r.add("POST", "/oauth/par", needs: .tokenEndpoint) { s, call in try s.pushAuthorization(call) }
        r.add("GET", "/.well-known/webauthn") { s, _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "public, max-age=300")],
                         body: JSONValue.object(["origins": .array(s.configuration.relatedOrigins.map(JSONValue.string))]).serializedBytes)
        }
        r.add("GET", "/assets/signet.js") { _, _ in asset(Script.source, type: "text/javascript; charset=utf-8") }
        r.add("GET", "/assets/signet.css") { _, _ in asset(Stylesheet.source, type: "text/css; charset=utf-8") }
        r.add("GET", "/assets/brand.css") { s, _ in try BrandAssets.response(s.brand.stylesheet, type: "text/css; charset=utf-8") }
        r.add("GET", "/assets/logo") { s, _ in try BrandAssets.response(s.brand.logo?.bytes, type: s.brand.logo?.contentType ?? "") }
    }

    static func asset(_ text: String, type: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", type), ("Cache-Control", "public, max-age=300"), ("X-Content-Type-Options", "nosniff")],
                     body: Array(text.utf8))
    }

    /// `GET /authorize` (OIDC Core §3.1.2): a bad client or redirect URI gets the error page;
    /// a later problem goes back to the client; a session that satisfies the request gets a code
    /// at once (and `prompt=none` without one, `login_required`); anything else is sent to the
    /// sign-in (or, with `prompt=create`, the sign-up) page carrying the sealed request.
    func authorize(_ call: Call) -> HTTPResponse {
        let request: AuthorizationRequest
        do {
            request = try ceremonies.authorizationRequest(call.request.query, repeated: call.request.queryRepeats)
        } catch let refusal as AuthorizationRedirectError {
            return .redirect(to: refusal.location)
        } catch {
            return errorPage(error, request: call.request)
        }
        do {
            let browser = try self.browser(call.request, uiLocales: request.uiLocales)
            if let session = browser.session, ceremonies.satisfies(session, request) {
                return .redirect(to: try ceremonies.issueCode(request, session: session, context: call.context))
            }
            if request.prompt == "none" {
                return .redirect(to: AuthorizationRedirectError(redirectURI: request.redirectURI, state: request.state,
                                                                error: AuthError(.loginRequired, "prompt=none and no session satisfies the request"),
                                                                issuer: configuration.issuer).location)
            }
            let sealed = try ceremonies.seal(request)
            return .redirect(to: (request.prompt == "create" ? "/signup" : "/login") + "?authorization=" + sealed)
        } catch {
            return refusal(AuthError(error), request)
        }
    }

    /// `POST /oauth/par` (RFC 9126 §2): a form of at most 8 KiB and 64 parameters (what
    /// `/authorize` reads of a query), each once; 201 with `request_uri` and `expires_in`.
    func pushAuthorization(_ call: Call) throws -> HTTPResponse {
        guard call.request.mediaType == "application/x-www-form-urlencoded" else {
            throw AuthError(.unsupportedMediaType, "Content-Type \(call.request.mediaType ?? "none")", publicDetail: "send application/x-www-form-urlencoded (RFC 9126 §2.1)")
        }
        let body = call.request.body
        guard body.count <= 8192, body.count(where: { $0 == UInt8(ascii: "&") }) < 64 else {
            throw AuthError.malformed("a pushed authorization request is at most 8 KiB and 64 parameters")
        }
        let (parameters, repeated) = HTTPRequest.parseQueryNotingRepeats(Substring(String(decoding: body, as: UTF8.self)))
        var context = call.context
        if parameters["client_assertion"] != nil || parameters["client_assertion_type"] != nil {
            context.assertion = ClientAssertion(type: parameters["client_assertion_type"], jwt: parameters["client_assertion"], endpoint: configuration.issuer + call.request.path)
        }
        let pushed = try ceremonies.pushAuthorization(parameters, repeated: repeated, context: context)
        return try Wire.encode(PushedAuthorizationResponse(request_uri: pushed.requestURI, expires_in: pushed.expiresIn), status: 201)
    }

    /// A refusal sent back to the client, its detail kept for the access log.
    func refusal(_ error: AuthError, _ request: AuthorizationRequest) -> HTTPResponse {
        var response = HTTPResponse.redirect(to: AuthorizationRedirectError(redirectURI: request.redirectURI, state: request.state, error: error,
                                                                            issuer: configuration.issuer).location)
        response.logDetail = "\(error.reason.rawValue): \(error.detail)"
        return response
    }

    /// `GET /authorize/continue`: after the sign-in page, the pending request gets its code.
    /// Without a session (or with one older than a `prompt=login` request) it is the sign-in page again.
    func continueAuthorization(_ call: Call) -> HTTPResponse {
        let sealed = call.request.query["authorization"]
        guard let request = ceremonies.openAuthorization(sealed), let sealed else {
            return errorPage(AuthError.authorizationGone, request: call.request)
        }
        do {
            guard let session = try browser(call.request).session, ceremonies.signedInFor(session, request) else {
                return .redirect(to: "/login?authorization=" + sealed)
            }
            return .redirect(to: try ceremonies.issueCode(request, session: session, context: call.context))
        } catch {
            return refusal(AuthError(error), request)
        }
    }

    /// `GET /authorize/cancel`: the sign-in page's way back to the app without signing in. The
    /// pending request is answered with `unmet_authentication_requirements` when it asked for a
    /// passkey (`acr_values` `phr` or `phrh`; OpenID Connect Core Error Code
    /// unmet_authentication_requirements 1.0), `access_denied` otherwise (RFC 6749 §4.1.2.1),
    /// with its `state` and `iss`. It ends nothing: an SSO session stays as it was.
    func cancelAuthorization(_ call: Call) -> HTTPResponse {
        guard let request = ceremonies.openAuthorization(call.request.query["authorization"]) else {
            return errorPage(AuthError.authorizationGone, request: call.request)
        }
        let error = request.requiresPasskey
            ? AuthError(.unmetAuthenticationRequirements, "the user left the page without a passkey sign-in, which the client asked for")
            : AuthError(.signInCancelled, "the user left the sign-in page")
        return refusal(error, request)
    }

    /// `GET /logout`, or a `POST` without the page's CSRF token, with `query` the parameters of
    /// the query or the form (OpenID Connect RP-Initiated Logout 1.0 §2): ends the SSO session;
    /// goes to `post_logout_redirect_uri` only when it is registered for the client that
    /// `id_token_hint` (or `client_id`) names, with `state`; otherwise to the sign-in page. Unless
    /// the `id_token_hint` was issued to the signed-in user, the user is asked first: a page with
    /// the sign-out button, so that a link or an image elsewhere ends nothing.
    func logout(_ call: Call, _ query: [String: String]) -> HTTPResponse {
        do {
            let (target, clientID, subject) = try ceremonies.postLogout(
                idTokenHint: query["id_token_hint"], clientID: query["client_id"], redirectURI: query["post_logout_redirect_uri"], state: query["state"])
            let browser = try self.browser(call.request)
            guard let session = browser.session else { return .redirect(to: target ?? "/login") }
            guard let subject, subject == session.user.id else {
                return page("signout", title: "signout_title", Pages.signOut, [
                    "clientID": .text(clientID ?? ""), "redirectURI": .text(query["post_logout_redirect_uri"] ?? ""), "state": .text(query["state"] ?? ""),
                    "apps": .list(try ceremonies.appsToTell(session).map { ["name": .text($0)] }),
                ], browser: browser, signedIn: true, url: "/logout")
            }
            try ceremonies.endWebSession(session, context: call.context)
            var response = HTTPResponse.redirect(to: target ?? "/login")
            response.headers.append(("Set-Cookie", cookie(sessionCookieName, "", maxAge: 0)))
            return response
        } catch {
            return errorPage(error, request: call.request)
        }
    }
}

extension AuthError {
    /// A sealed authorization request that does not open: expired, tampered with, or from another
    /// deployment.
    static var authorizationGone: AuthError {
        AuthError(.authSessionExpired, "the pending authorization is gone or expired", publicDetail: "The sign-in took too long; go back to the app and start again.")
    }
}
