import Foundation
import SignetCurl
import SignetWebAuthn

extension Doctor {
    /// `https://RPID/.well-known/passkey-endpoints` (W3C, A Well-Known URL for Relying Party
    /// Passkey Endpoints §3): where password managers send people to make and manage passkeys.
    /// Not served is a note (it is optional); served wrong fails: a redirect (§3 forbids one),
    /// another status or type than 200 `application/json`, or a member that is not an https URL.
    public func passkeyEndpointsCheck() -> DoctorCheck {
        let name = "passkey_endpoints", url = "https://\(rpID)/.well-known/passkey-endpoints"
        let served = "serve Signet's /.well-known/passkey-endpoints on \(rpID) as it is (proxy the path to Signet, as for the association files)"
        let response: HTTPSResponse
        switch fetch(url) {
        case .failure(let error): return .fail(name, "cannot fetch \(url): \(error.message)", fix: served)
        case .success(let answer): response = answer
        }
        if response.status == 404 {
            return .note(name, "\(url) is not served: password managers cannot send people to where they make and manage passkeys (optional; \(served))")
        }
        if (300..<400).contains(response.status) {
            return .fail(name, "\(url) redirects (\(response.status)) to \(response.header("location") ?? "nowhere said")", fix: "answer on \(rpID) itself: the file must not redirect")
        }
        guard response.status == 200 else { return .fail(name, "\(url) answered \(response.status)", fix: served) }
        let type = response.header("content-type")?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard type == "application/json" else { return .fail(name, "\(url) is served as \(type ?? "no type")", fix: "serve it as application/json") }
        guard let object = (try? StrictJSON(maxDepth: 4, maxLength: 65_536).parse(response.body))?.object else {
            return .fail(name, "\(url) is not a JSON object", fix: served)
        }
        var found: [String] = []
        for member in ["enroll", "manage", "prfUsageDetails"] {
            guard let value = object[member] else { continue }
            guard let text = value.string, let parsed = URL(string: text), parsed.scheme == "https", parsed.host != nil else {
                return .fail(name, "\(member) is not an https URL", fix: served)
            }
            found.append("\(member) \(text)")
        }
        return found.isEmpty ? .fail(name, "\(url) names no endpoint", fix: served) : .pass(name, found.joined(separator: ", "))
    }
}
