import SignetAuth
import SignetCurl

extension Doctor {
    /// Each configured client's back-channel logout URI (OpenID Connect Back-Channel Logout
    /// 1.0), POSTed a `logout_token` that is no token at all: the endpoint must be reachable from
    /// here over a certificate that verifies, must not redirect (Signet does not follow one), and
    /// must refuse what does not verify with 400 (§2.6, §2.8). One that answers 2xx would end
    /// sessions for anyone who can reach it.
    public func backchannelChecks() -> [DoctorCheck] {
        configuration.clients.compactMap { client -> DoctorCheck? in
            guard let uri = client.backchannelLogoutURI else { return nil }
            let name = "backchannel_logout.\(client.id)"
            let result: Result<HTTPSResponse, CurlError>
            do throws(CurlError) { result = .success(try HTTPS.post(uri, form: "logout_token=", options: options)) } catch { result = .failure(error) }
            switch result {
            case .failure(let error) where HTTPS.certificateErrors.contains(error.code):
                return .fail(name, "\(uri): \(error.message)", fix: "serve a certificate for the logout URI's host, with its full chain")
            case .failure(let error):
                return .fail(name, "cannot reach \(uri): \(error.message)", fix: "make the client's logout endpoint reachable from Signet's servers, or correct backchannel_logout_uri")
            case .success(let response) where (300..<400).contains(response.status):
                return .fail(name, "\(uri) redirects (\(response.status)) to \(response.header("location") ?? "nowhere said")",
                             fix: "register the URL the endpoint answers at: Signet does not follow redirects with a logout token")
            case .success(let response) where (200..<300).contains(response.status):
                return .fail(name, "\(uri) answered \(response.status) to an empty logout_token",
                             fix: "the client must verify the logout token (signature by the JWKS, iss, aud, iat, events, sid or sub) and answer 400 when it does not (Back-Channel Logout §2.6)")
            case .success(let response) where response.status == 400:
                return .pass(name, "\(uri) refuses a logout token that does not verify (400)")
            case .success(let response):
                return .fail(name, "\(uri) answered \(response.status) where a logout token that does not verify gets 400",
                             fix: response.status == 404 || response.status == 405 ? "correct backchannel_logout_uri: nothing takes a POST there"
                                 : "let the endpoint take a POST without other credentials, and answer 400 to a token that does not verify (Back-Channel Logout §2.8)")
            }
        }
    }
}
