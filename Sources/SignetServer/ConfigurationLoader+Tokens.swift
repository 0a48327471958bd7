import Foundation
import SignetWebAuthn
import SignetAuth

/// The `tokens.*` settings that shape access tokens: claims copied from `app_metadata`, the
/// roles claim, and each API's permissions and token lifetime.
extension ConfigurationLoader {
    /// `tokens.app_metadata_claims`: `{"https://example.com/roles": "roles", ...}`, each claim a
    /// URI of the operator's own and each value the `app_metadata` member it copies.
    static func metadataClaims(_ value: JSONValue) throws -> [MetadataClaim] {
        let setting = "tokens.app_metadata_claims"
        guard let object = value.object, object.allSatisfy({ $0.value.string != nil }) else {
            throw ConfigurationError("\(setting) must be an object of claim names and app_metadata keys, such as {\"https://example.com/roles\": \"roles\"}")
        }
        guard object.count <= MetadataClaim.maximum else { throw ConfigurationError("\(setting) names at most \(MetadataClaim.maximum) claims") }
        return try object.keys.sorted().map { claim in
            let key = object[claim]?.string ?? ""
            if let problem = MetadataClaim.problem(claim: claim, key: key) { throw ConfigurationError("\(setting): \(problem)") }
            return MetadataClaim(claim: claim, key: key)
        }
    }

    /// `tokens.roles_claim`: the claim, a URI of the operator's own, that lists an account's roles
    /// by name in its tokens and at `/userinfo`; not one of `tokens.app_metadata_claims`.
    static func rolesClaim(_ value: JSONValue, besides metadata: [MetadataClaim]) throws -> String {
        let setting = "tokens.roles_claim"
        guard let claim = value.string else { throw ConfigurationError("\(setting) must be a claim name, such as \"https://example.com/roles\"") }
        if let problem = MetadataClaim.problem(claim: claim) { throw ConfigurationError("\(setting): \(problem)") }
        if metadata.contains(where: { $0.claim == claim }) { throw ConfigurationError("\(setting): \(claim) is one of tokens.app_metadata_claims already") }
        return claim
    }

    /// `tokens.permissions`: `{"https://api.example.com": {"read:reports": "Read the reports"}}`,
    /// each API by its audience (1 to 500 bytes, no space) and each permission's name (1 to 280
    /// visible ASCII characters, no space: it may be a scope too) with its description (at most
    /// 500 characters, may be empty).
    static func apiPermissions(_ value: JSONValue) throws -> [String: [String: String]] {
        let setting = "tokens.permissions"
        guard let apis = value.object, apis.count <= 100 else {
            throw ConfigurationError("\(setting) must be an object of at most 100 APIs, each its permissions and their descriptions, such as {\"https://api.example.com\": {\"read:reports\": \"Read the reports\"}}")
        }
        var result: [String: [String: String]] = [:]
        for (audience, list) in apis {
            try checkAPI(audience, setting: setting)
            guard let permissions = list.object, (1...1_000).contains(permissions.count) else {
                throw ConfigurationError("\(setting): \(audience.prefix(100)) must be an object of 1 to 1000 permissions and their descriptions")
            }
            var named: [String: String] = [:]
            for (name, description) in permissions {
                guard (1...280).contains(name.utf8.count), name.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                    throw ConfigurationError("\(setting): the permission \"\(name.prefix(100))\" must be 1 to 280 visible ASCII characters without spaces, such as read:reports")
                }
                guard let text = description.string, text.count <= 500, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                    throw ConfigurationError("\(setting): the description of \(name) must be text of at most 500 characters on one line")
                }
                named[name] = text
            }
            // An account with every permission of the API carries all of them: as the claim
            // lists them (quoted, comma-separated), within the bound the app_metadata claims keep,
            // so a token still fits the 8 KiB of headers that common proxies take.
            let claimBytes = named.keys.reduce(2) { $0 + $1.utf8.count + 3 }
            guard claimBytes <= MetadataClaim.maxTotalBytes else {
                throw ConfigurationError("\(setting): \(audience.prefix(100))'s permissions take \(claimBytes) bytes as a token's permissions claim, over \(MetadataClaim.maxTotalBytes): an account with all of them would get a token too large for common proxies; use fewer or shorter names")
            }
            result[audience] = named
        }
        return result
    }

    /// An API named by its audience in `setting`: 1 to 500 bytes without spaces or control
    /// characters.
    static func checkAPI(_ audience: String, setting: String) throws {
        guard (1...500).contains(audience.utf8.count), !audience.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }) else {
            throw ConfigurationError("\(setting): the API \"\(audience.prefix(100))\" must be its audience, 1 to 500 bytes without spaces or control characters")
        }
    }

    /// `tokens.api_token_ttl`: `{"https://payments.example.com": 300}`, at most 100 APIs by
    /// audience, each its access tokens' seconds: 30 to `tokens.access_token_ttl`, since the
    /// deployment's lifetime bounds how long an ended session's tokens are remembered and a
    /// retired signing key is published.
    static func apiTokenLifetimes(_ value: JSONValue, longest: Int) throws -> [String: Int] {
        let setting = "tokens.api_token_ttl"
        guard let apis = value.object, apis.count <= 100 else {
            throw ConfigurationError("\(setting) must be an object of at most 100 APIs, each its access tokens' seconds, such as {\"https://payments.example.com\": 300}")
        }
        var result: [String: Int] = [:]
        for (audience, seconds) in apis {
            try checkAPI(audience, setting: setting)
            guard let whole = seconds.int64.map(Int.init), (30...longest).contains(whole) else {
                throw ConfigurationError("\(setting): \(audience.prefix(100)) must be whole seconds from 30 to tokens.access_token_ttl (\(longest)); an API's tokens may live shorter than the deployment's, never longer")
            }
            result[audience] = whole
        }
        return result
    }
}
