import Foundation
import SignetAPI
import SignetHTTP
import SignetStore
import SignetWebAuthn

/// An error answer. This is the one place where failures become HTTP: a status, OAuth's
/// `error`, a human description and Signet's machine-readable `reason`.
public struct APIError: Error, Sendable {
    public let status: Int
    public let error: String
    public let description: String
    public let reason: String
    var headers: [(String, String)] = []

    init(_ status: Int, _ error: String, _ reason: String, _ description: String) {
        self.status = status
        self.error = error
        self.reason = reason
        self.description = description
    }

    static func malformed(_ description: String) -> APIError { APIError(400, "invalid_request", "malformed", description) }
    static func grant(_ reason: String, _ description: String) -> APIError { APIError(400, "invalid_grant", reason, description) }

    /// A relying-party verification failure: the exact step's reason, as `invalid_grant`
    /// (`invalid_request` for malformed input).
    static func webAuthn(_ e: WebAuthnError) -> APIError {
        e.reason == .malformed
            ? APIError(400, "invalid_request", "malformed", "the WebAuthn response is malformed: \(e.detail)")
            : APIError(400, "invalid_grant", e.reason.rawValue, "the WebAuthn response was refused: \(e.detail)")
    }

    /// A store failure. Conflicts are mapped by the caller; what reaches here is an outage or a bug.
    static func store(_ e: StoreError) -> APIError {
        switch e.code {
        case .unavailable: APIError(503, "temporarily_unavailable", "database_unavailable", "the database is unavailable; try again shortly")
        case .conflict: APIError(409, "invalid_request", "conflict", "the request conflicts with existing data")
        default: APIError(500, "server_error", "internal", "internal error")
        }
    }

    static let internalError = APIError(500, "server_error", "internal", "internal error")

    var response: HTTPResponse {
        var response = HTTPResponse.json(status, ErrorBody(error: error, error_description: description, reason: reason).wire.serializedBytes)
        response.headers += headers
        return response
    }
}
