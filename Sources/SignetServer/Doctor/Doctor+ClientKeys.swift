import SignetAuth
import SignetCurl
import SignetWebAuthn

extension Doctor {
    /// Each configured client's `jwks_uri`, fetched and checked as the server does it
    /// (``ClientKeyCache``): reachable from here over a certificate that verifies, no redirect,
    /// 200 with a JWK Set of public signing keys of at most 64 KiB. A client whose set cannot be
    /// read cannot authenticate until one has been.
    public func clientKeyChecks() -> [DoctorCheck] {
        configuration.clients.compactMap { client -> DoctorCheck? in
            guard let uri = client.jwksURI else { return nil }
            let name = "jwks_uri.\(client.id)"
            do throws(ClientKeyFailure) {
                let keys = try ClientKeyCache.fetch(uri, options: HTTPSOptions(caFile: options.caFile, resolve: options.resolve, connectTo: options.connectTo,
                                                                               timeout: ClientKeyCache.timeout, maxBytes: ClientKeyCache.maxBytes))
                let kids = keys.compactMap { $0["kid"]?.string }
                return .pass(name, "\(keys.count) key(s)" + (kids.isEmpty ? "" : ": " + kids.prefix(5).joined(separator: ", ")))
            } catch {
                return .fail(name, error.detail, fix: "serve the client's public keys at \(uri) as a JWK Set ({\"keys\": [...]}, https, no redirect), or correct jwks_uri")
            }
        }
    }
}
