import Foundation
import SignetWebAuthn
import SignetAuth

/// The checks on the whole configuration: the issuer, the relying party and its origins.
extension ConfigurationLoader {
    /// Checks the whole configuration; the first problem found is reported.
    static func validate(_ c: inout ServerConfiguration) throws {
        guard let issuer = URLComponents(string: c.issuer), let scheme = issuer.scheme, ["http", "https"].contains(scheme), issuer.host?.isEmpty == false else {
            throw ConfigurationError("issuer must be an http(s) URL, such as https://auth.example.com (got \"\(c.issuer)\")")
        }
        if scheme == "http" && !c.developmentMode && !isLoopback(issuer.host ?? "") {
            throw ConfigurationError("issuer \(c.issuer) must use https outside development")
        }
        if c.issuer.hasSuffix("/") { c.issuer.removeLast() }
        guard !c.rpID.isEmpty, !c.rpID.contains("/"), !c.rpID.contains(":") else {
            throw ConfigurationError("relying_party.id must be a domain such as example.com (got \"\(c.rpID)\")")
        }
        // A top-level domain has no registrable domain, which browsers require of an RP ID (HTML's
        // "is a registrable domain suffix of", WebAuthn L3 §5.1.3 step 7): Chrome refuses it even
        // for an origin on that very host.
        guard c.rpID.contains(".") || c.rpID == "localhost" else {
            throw ConfigurationError("relying_party.id \"\(c.rpID)\" is a top-level domain, which browsers do not take as an RP ID: use the site's own domain, such as example.com")
        }
        guard !c.webOrigins.isEmpty || c.clients.contains(where: { !$0.androidApps.isEmpty }) else {
            throw ConfigurationError("relying_party.origins must list at least one origin")
        }
        try checkPublicSuffix(c)
        for origin in c.webOrigins { try checkOrigin(origin, rpID: c.rpID) }
        try checkRelatedOrigins(c.relatedOrigins, suffixes: c.publicSuffixList?.list)
        guard !c.clients.isEmpty else { throw ConfigurationError("clients must list at least one client") }
        let ids = c.clients.map(\.id)
        guard Set(ids).count == ids.count else { throw ConfigurationError("client_id values must be unique") }
        if c.audiences.isEmpty { c.audiences = [c.issuer] }
        // Signet's own APIs' tokens are Signet's to shape.
        if let own = c.apiPermissions.keys.first(where: { $0 == c.accountAudience || $0 == c.managementAudience }) {
            throw ConfigurationError("tokens.permissions: \(own) is Signet's own API; name your APIs' audiences")
        }
        guard c.database.hasPrefix("sqlite:") || c.database.hasPrefix("postgres://") || c.database.hasPrefix("postgresql://") else {
            throw ConfigurationError("database must be sqlite:PATH or postgres://... (got \"\(c.database)\")")
        }
        if c.backupDirectory != nil, !c.database.hasPrefix("sqlite:") {
            throw ConfigurationError("backup.directory copies a SQLite database; back PostgreSQL up with pg_dump --format=custom or continuous archiving")
        }
    }

    static func checkRelatedOrigins(_ origins: [String], suffixes: PublicSuffixList?) throws {
        if let problem = RelatedOrigins.problem(origins, suffixes: suffixes) { throw ConfigurationError(problem) }
    }

    static func isLoopback(_ host: String) -> Bool { host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host == "::1" }

    /// An origin is `scheme://host[:port]` with nothing after it; https except on loopback, and
    /// the host is the RP ID or a subdomain of it (WebAuthn L3 §5.1.2, §13.4.9).
    static func checkOrigin(_ origin: String, rpID: String) throws {
        if origin.hasSuffix("/"), !origin.hasSuffix("//"), (try? checkOrigin(String(origin.dropLast()), rpID: rpID)) != nil {
            throw ConfigurationError("origin \"\(origin)\" ends with a slash, which an origin never has (browsers send \(origin.dropLast())): write it without")
        }
        if origin.hasPrefix("android:apk-key-hash:") {
            throw ConfigurationError("origin \"\(origin)\" is an Android app's, which Signet derives: give the app under its client instead, "
                + "\"android\": [{\"package_name\": ..., \"sha256_cert_fingerprints\": [...]}] (keytool -list -v prints the fingerprint)")
        }
        guard let url = URLComponents(string: origin), let scheme = url.scheme, let host = url.host?.lowercased(), !host.isEmpty,
              url.path.isEmpty, url.query == nil, url.fragment == nil, url.user == nil
        else { throw ConfigurationError("origin \"\(origin)\" must be scheme://host[:port] with no path, such as https://example.com") }
        guard scheme == "https" || (scheme == "http" && isLoopback(host)) else {
            throw ConfigurationError("origin \"\(origin)\" must use https (http is only allowed for localhost)")
        }
        guard host == rpID || host.hasSuffix("." + rpID) else {
            throw ConfigurationError("origin \"\(origin)\": its host \(host) is not the RP ID \(rpID) or a subdomain of it, so browsers would refuse every ceremony")
        }
    }
}
