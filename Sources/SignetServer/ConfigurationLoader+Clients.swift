import Foundation
import SignetWebAuthn
import SignetAuth

/// `clients`: each client's kind, redirect URIs, grants, secrets and native apps.
extension ConfigurationLoader {
    static func parseClients(_ value: JSONValue) throws -> [ClientConfiguration] {
        guard let list = value.array else { throw ConfigurationError("clients must be a list") }
        let clients = try list.enumerated().map { index, item in
            guard let object = item.object else { throw ConfigurationError("clients[\(index)] must be an object") }
            let known: Set<String> = ["client_id", "name", "type", "grants", "scopes", "redirect_uris", "post_logout_redirect_uris", "allowed_origins", "ios", "android",
                                      "audiences", "client_secret_hash", "jwks", "jwks_uri", "require_pushed_authorization_requests", "dpop", "refresh_proof",
                                      "backchannel_logout_uri", "backchannel_logout_session_required", "required_roles", "minimum_acr",
                                      "refresh_token_ttl", "refresh_token_absolute_ttl", "refresh_token_retry_window"]
            if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
                throw ConfigurationError("clients[\(index)]: " + unknownSetting(unknown, among: known.sorted()))
            }
            guard let id = object["client_id"]?.string, !id.isEmpty else { throw ConfigurationError("clients[\(index)] needs a client_id") }
            // RFC 6749 Appendix A.1: client-id = *VSCHAR (visible ASCII and space).
            guard id.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                throw ConfigurationError("clients[\(index)]: client_id may hold only visible ASCII characters and spaces (RFC 6749 Appendix A.1)")
            }
            let grants = object["grants"]?.array?.compactMap(\.string) ?? GrantNames.all
            for grant in grants where !GrantNames.known.contains(grant) { throw ConfigurationError("client \(id): unknown grant \"\(grant)\"") }
            var client = ClientConfiguration(id: id, grants: grants)
            client.name = object["name"]?.string
            if let dpop = object["dpop"] {
                guard let value = dpop.string, ["allowed", "required"].contains(value) else { throw ConfigurationError("client \(id): dpop must be \"allowed\" or \"required\"") }
                client.dpop = value
            }
            if let uri = object["backchannel_logout_uri"] {
                guard let text = uri.string, Ceremonies.isClientEndpointURI(text) else {
                    throw ConfigurationError("client \(id): backchannel_logout_uri must be an https URI without a fragment (http only to a loopback address)")
                }
                client.backchannelLogoutURI = text
            }
            // Back-Channel Logout §2.2: Signet always sends `sid`, so either value holds.
            if let required = object["backchannel_logout_session_required"], required.bool == nil {
                throw ConfigurationError("client \(id): backchannel_logout_session_required must be true or false")
            }
            if let proof = object["refresh_proof"] {
                guard proof.string == "device_key" else { throw ConfigurationError("client \(id): refresh_proof must be \"device_key\"") }
                client.refreshProof = "device_key"
            }
            for member in ["scopes", "redirect_uris", "post_logout_redirect_uris", "allowed_origins"] {
                guard let value = object[member] else { continue }
                guard let list = value.array, list.allSatisfy({ $0.string != nil }) else { throw ConfigurationError("client \(id): \(member) must be a list of strings") }
                let items = list.compactMap(\.string)
                switch member {
                case "scopes": client.scopes = items
                case "redirect_uris", "post_logout_redirect_uris":
                    if let bad = items.first(where: { !Ceremonies.isRedirectURI($0) }) {
                        throw ConfigurationError("client \(id): \(member): \"\(bad)\" is not an absolute URI without a fragment")
                    }
                    if member == "redirect_uris" { client.redirectURIs = items } else { client.postLogoutRedirectURIs = items }
                default:
                    for origin in items {
                        guard let url = URLComponents(string: origin), url.scheme != nil, url.host != nil, url.path.isEmpty, url.query == nil else {
                            throw ConfigurationError("client \(id): allowed_origins: \"\(origin)\" must be scheme://host[:port]")
                        }
                    }
                    client.allowedOrigins = items
                }
            }
            // A confidential client authenticates with a secret or with its keys (private_key_jwt,
            // OIDC Core §9), never both: one method per client.
            let methods = ["client_secret_hash", "jwks", "jwks_uri"].filter { object[$0] != nil }
            let authenticates = !methods.isEmpty
            if methods.count > 1 {
                throw ConfigurationError("client \(id): give one of client_secret_hash, jwks or jwks_uri (private_key_jwt), not \(methods.joined(separator: " and "))")
            }
            if let type = object["type"] {
                guard let value = type.string, ["public", "confidential"].contains(value) else { throw ConfigurationError("client \(id): type must be \"public\" or \"confidential\"") }
                if value == "confidential", !authenticates {
                    throw ConfigurationError("client \(id): a confidential client needs a client_secret_hash (make one with: signet client-secret), a jwks or a jwks_uri")
                }
                if value == "public", authenticates { throw ConfigurationError("client \(id): a public client has no client_secret_hash, jwks or jwks_uri") }
            }
            if grants.contains(GrantNames.clientCredentials), !authenticates {
                throw ConfigurationError("client \(id): the client_credentials grant needs a client_secret_hash (make one with: signet client-secret), a jwks or a jwks_uri")
            }
            if let required = object["require_pushed_authorization_requests"] {
                guard let value = required.bool else { throw ConfigurationError("client \(id): require_pushed_authorization_requests must be true or false") }
                client.requirePushedRequests = value
            }
            if let jwks = object["jwks"] {
                do throws(ClientAssertion.Invalid) {
                    client.jwks = try JWKSet.keys(jwks)
                } catch {
                    throw ConfigurationError("client \(id): jwks: \(error.detail)")
                }
            }
            if let uri = object["jwks_uri"] {
                guard let text = uri.string, Ceremonies.isClientEndpointURI(text) else {
                    throw ConfigurationError("client \(id): jwks_uri must be an https URI without a fragment (http only to a loopback address)")
                }
                client.jwksURI = text
            }
            if let roles = object["required_roles"] {
                guard let names = roles.array?.compactMap(\.string), names.count == roles.array?.count else {
                    throw ConfigurationError("client \(id): required_roles must be a list of role names")
                }
                if let problem = Ceremonies.requiredRolesProblem(names) { throw ConfigurationError("client \(id): required_roles: \(problem)") }
                client.requiredRoles = names
            }
            let range = Ceremonies.refreshLifetimeRange
            for member in ["refresh_token_ttl", "refresh_token_absolute_ttl"] {
                guard let value = object[member] else { continue }
                guard let seconds = value.int64.map(Int.init), range.contains(seconds) else {
                    throw ConfigurationError("client \(id): \(member) must be \(range.lowerBound) to \(range.upperBound) seconds")
                }
                if member == "refresh_token_ttl" { client.refreshTokenLifetime = seconds } else { client.refreshTokenAbsoluteLifetime = seconds }
            }
            if let value = object["refresh_token_retry_window"] {
                let window = Ceremonies.refreshRetryWindowRange
                guard let seconds = value.int64.map(Int.init), window.contains(seconds) else {
                    throw ConfigurationError("client \(id): refresh_token_retry_window must be \(window.lowerBound) to \(window.upperBound) seconds")
                }
                client.refreshTokenRetryWindow = seconds
            }
            if let acr = object["minimum_acr"] {
                guard let value = acr.string, Ceremonies.minimumACRProblem(value) == nil else {
                    throw ConfigurationError("client \(id): \(Ceremonies.minimumACRProblem(acr.string ?? "") ?? "")")
                }
                client.minimumACR = value
            }
            if let audiences = object["audiences"] {
                guard let list = audiences.array, list.allSatisfy({ $0.string != nil }) else { throw ConfigurationError("client \(id): audiences must be a list of strings") }
                client.audiences = list.compactMap(\.string)
            }
            if let hash = object["client_secret_hash"] {
                guard let bytes = hash.string.flatMap(sha256Setting) else {
                    throw ConfigurationError("client \(id): client_secret_hash must be sha256:<base64url of 32 bytes> (make one with: signet client-secret)")
                }
                client.secretHash = bytes
            }
            for (n, app) in (object["ios"]?.array ?? []).enumerated() {
                guard let team = app["team_id"]?.string, let bundle = app["bundle_id"]?.string else {
                    throw ConfigurationError("client \(id): ios[\(n)] needs team_id and bundle_id")
                }
                guard team.count == 10, team.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else {
                    throw ConfigurationError("client \(id): team_id \"\(team)\" must be 10 upper-case letters and digits (Apple Developer Team ID)")
                }
                guard !bundle.isEmpty, bundle.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) else {
                    throw ConfigurationError("client \(id): bundle_id \"\(bundle)\" is not a bundle identifier")
                }
                let links = app["enrollment_links"] ?? .bool(false)
                guard let enrollmentLinks = links.bool else { throw ConfigurationError("client \(id): ios[\(n)].enrollment_links must be true or false") }
                client.iosApps.append(.init(teamID: team, bundleID: bundle, enrollmentLinks: enrollmentLinks))
            }
            for (n, app) in (object["android"]?.array ?? []).enumerated() {
                guard let package = app["package_name"]?.string, let prints = app["sha256_cert_fingerprints"]?.array, !prints.isEmpty else {
                    throw ConfigurationError("client \(id): android[\(n)] needs package_name and sha256_cert_fingerprints")
                }
                let fingerprints = try prints.map { value in
                    guard let text = value.string, let bytes = parseFingerprint(text) else {
                        throw ConfigurationError("client \(id): \"\(value.string ?? "?")\" is not a SHA-256 fingerprint (32 bytes as hex, keytool's AB:CD:... form)")
                    }
                    return bytes
                }
                client.androidApps.append(.init(packageName: package, fingerprints: fingerprints))
            }
            return client
        }
        var seen = Set<String>()
        for client in clients where !seen.insert(client.id).inserted { throw ConfigurationError("client_id \"\(client.id)\" is configured more than once") }
        return clients
    }
}
