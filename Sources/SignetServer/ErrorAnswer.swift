import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetWebAuthn

/// The one place where failures become HTTP (DESIGN.md, "Errors map to HTTP in one place"): the
/// reason's status and OAuth `error`, its user-facing text as `error_description` (never the
/// log-only detail, which goes to the access log), and the headers the reason calls for. A
/// request for a page gets an error page instead of JSON.
enum ErrorAnswer {
    static func response(_ error: AuthError, for request: HTTPRequest) -> HTTPResponse {
        let reason = error.reason
        let description = error.publicDetail ?? reason.text
        var response: HTTPResponse
        if request.wantsHTML {
            response = .html(error.status, page(status: error.status, text: description, reason: reason))
        } else {
            var body = JSONObjectWriter(capacity: 160)
            body.add("error", reason.error)
            body.add("error_description", description)
            body.add("reason", reason.rawValue)
            response = .json(error.status, body.serializedBytes)
        }
        if !error.challenges.isEmpty {
            response.headers += error.challenges.map { ("WWW-Authenticate", $0) }
        } else if reason.error == "invalid_client", let authorization = request.header("authorization"), SignetService.isBasic(authorization) {
            // RFC 6749 §5.2: a client that authenticated in the Authorization header is answered
            // with a challenge for the scheme it used.
            response.headers.append(("WWW-Authenticate", #"Basic realm="signet""#))
        }
        if let seconds = error.retryAfter { response.headers.append(("Retry-After", String(seconds))) }
        if let nonce = error.dpopNonce { response.headers.append(("DPoP-Nonce", nonce)) }
        response.logDetail = "\(reason.rawValue): \(error.detail)"
        return response
    }

    static func response(_ error: any Error, for request: HTTPRequest) -> HTTPResponse { response(AuthError(error), for: request) }

    /// A minimal error page, for the answers made without the service at hand (the metrics
    /// listener); the service answers a browser with the templated error page
    /// (``SignetService/errorPage(_:request:)``).
    static func page(status: Int, text: String, reason: Reason) -> String {
        let escaped = text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        return """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">\
            <title>Signet: \(status)</title></head><body><main><h1>\(status)</h1>\
            <p data-testid="error" data-reason="\(reason.rawValue)">\(escaped)</p></main></body></html>
            """
    }
}
