public import Foundation
import SignetAPI
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension SignetClient {
    /// Calls one of the app's own APIs, a resource server for `audience` (one of the client's),
    /// with an access token for it (``accessToken(audience:)``): `Authorization: Bearer`, or with a
    /// DPoP key `Authorization: DPoP` and a proof of this request (RFC 9449 §7). Then, once each:
    /// - `use_dpop_nonce` with a `DPoP-Nonce` (RFC 9449 §9): the request again, its proof with the
    ///   nonce;
    /// - `insufficient_user_authentication` (RFC 9470 §3): a step-up (``stepUp()``, the passkey
    ///   sheet), which gives tokens whose `auth_time` is now and whose `acr` is the passkey's
    ///   (`phr`, or `phrh` for a hardware-bound one), then the request again with a new token.
    ///
    /// The API's answer is returned whatever its status: a second refusal means the passkey
    /// used was not enough (say the API asked for `phrh` and the passkey is a synced one);
    /// ``AuthenticationChallenge/parse(_:)`` reads what it asks for.
    public func callAPI(_ request: URLRequest, audience: String) async throws -> (Data, HTTPURLResponse) {
        var nonce: String?
        var steppedUp = false
        var nonced = false
        while true {
            let token = try await accessToken(audience: audience)
            var call = request
            if let dpop {
                guard let url = request.url else { throw SignetError(.invalidResponse, "the request has no URL") }
                call.setValue("DPoP \(token)", forHTTPHeaderField: "Authorization")
                call.setValue(try await DPoPProofs.proof(key: dpop, method: request.httpMethod ?? "GET", url: url, accessToken: token, nonce: nonce),
                              forHTTPHeaderField: "DPoP")
            } else {
                call.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            }
            let (data, http) = try await transport(call, to: request.url?.absoluteString ?? "the API")
            guard http.statusCode == 401 || http.statusCode == 400 else { return (data, http) }
            let errors = Set(AuthenticationChallenge.parse(http.value(forHTTPHeaderField: "WWW-Authenticate") ?? "").compactMap(\.error))
            if errors.contains("use_dpop_nonce"), dpop != nil, !nonced, let given = http.value(forHTTPHeaderField: "DPoP-Nonce") {
                nonced = true
                nonce = given
                continue
            }
            if http.statusCode == 401, errors.contains("insufficient_user_authentication"), !steppedUp {
                steppedUp = true
                try await stepUp()
                continue
            }
            return (data, http)
        }
    }
}
