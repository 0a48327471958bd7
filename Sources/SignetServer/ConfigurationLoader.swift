import Foundation
import SignetWebAuthn
public import SignetAuth

/// Reads `signet.json`, applies `SIGNET_...` environment overrides and validates the result.
/// Every setting has an environment name: its path in upper case joined by `_`
/// (`relying_party.origins` → `SIGNET_RELYING_PARTY_ORIGINS`); a value that parses as JSON is
/// taken as JSON (numbers, lists, objects), anything else as a string.
public enum ConfigurationLoader {
    /// Every setting's path in the file.
    static let settings: [[String]] = [
        ["issuer"], ["listen"], ["database"], ["key_encryption_key_file"],
        ["relying_party", "id"], ["relying_party", "name"], ["relying_party", "origins"], ["relying_party", "related_origins"],
        ["web", "session_idle_ttl"], ["web", "session_ttl"], ["web", "code_ttl"], ["web", "require_pushed_authorization_requests"],
        ["clients"], ["audiences"],
        ["tokens", "access_token_ttl"], ["tokens", "id_token_ttl"], ["tokens", "refresh_token_ttl"], ["tokens", "refresh_token_absolute_ttl"],
        ["tokens", "refresh_token_retry_window"], ["tokens", "signing_key_rotation_days"], ["tokens", "app_metadata_claims"], ["tokens", "roles_claim"], ["tokens", "permissions"], ["tokens", "api_token_ttl"], ["step_up", "max_age"], ["audit", "retention_days"], ["audit", "log_stream_hold_days"],
        ["backup", "directory"], ["backup", "interval_hours"], ["backup", "keep"], ["backup", "seal"], ["database_durability"], ["trusted_proxies"],
        ["rate_limits", "enabled"], ["rate_limits", "sign_up_per_identifier"], ["rate_limits", "sign_up_per_ip"],
        ["rate_limits", "failures_per_ip"], ["rate_limits", "audit_failures_per_ip"],
        ["session_timeout"], ["user_verification"], ["attestation"], ["resident_key"], ["algorithms"], ["trust_anchors"],
        ["attestation_metadata", "blob_file"], ["attestation_metadata", "root_file"], ["attestation_metadata", "url"],
        ["allowed_aaguids"], ["denied_aaguids"], ["signup"], ["signup_domains"],
        ["threads"], ["access_log"],
        ["actions", "challenge_ttl"], ["actions", "token_ttl"], ["actions", "audience"], ["actions", "rate_limit_per_minute"], ["actions", "max_device_keys"],
        ["limits", "max_body_bytes"], ["limits", "request_deadline"], ["limits", "idle_timeout"],
        ["limits", "max_connections"], ["limits", "max_connections_per_ip"], ["limits", "header_bytes"],
        ["passwordless", "code_length"], ["passwordless", "code_ttl"], ["passwordless", "max_attempts"], ["passwordless", "signup"],
        ["passwordless", "send_interval"], ["passwordless", "sends_per_hour"], ["rate_limits", "passwordless_per_ip"], ["rate_limits", "ipv6_prefix"],
        ["email", "smtp_url"], ["email", "from"], ["email", "username"], ["email", "password_file"], ["email", "ca_file"], ["email", "outbox_dir"],
        ["email", "retry_delay"], ["email", "max_retry_delay"], ["email", "max_deliveries"],
        ["recovery", "hold"], ["metrics", "listen"], ["dpop", "nonce"], ["dpop", "proofs_per_minute"],
        ["branding", "logo_file"], ["branding", "primary_color"], ["branding", "page_background"], ["scim", "token_hash"], ["scim", "email_verified"],
    ]

    static func environmentName(_ path: [String]) -> String { "SIGNET_" + path.joined(separator: "_").uppercased() }

    /// Loads the configuration. Development mode (its defaults, the client `dev`, http on
    /// loopback) is on exactly when neither a file nor `SIGNET_ISSUER` is given: a deployment
    /// configured through the environment alone is never silently a development server.
    /// `listen`/`database` still come from flags or the environment.
    public static func load(
        file: String?, environment: [String: String], listen: String? = nil, database: String? = nil
    ) throws -> ServerConfiguration {
        var tree: JSONObject = [:]
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else { throw ConfigurationError("cannot read configuration file \(file)") }
            do {
                guard let object = try StrictJSON(maxDepth: 16, maxLength: 1 << 20).parse([UInt8](data)).object else {
                    throw ConfigurationError("\(file): the configuration must be a JSON object")
                }
                tree = object
            } catch let error as WebAuthnError {
                throw ConfigurationError("\(file) is not valid JSON: \(error.detail)")
            }
            try checkKnownKeys(tree, prefix: [])
        }
        for path in settings {
            guard let raw = environment[environmentName(path)] else { continue }
            let value = (try? StrictJSON().parse(Array(raw.utf8))) ?? .string(raw)
            set(&tree, path, value)
        }
        if let listen { tree["listen"] = .string(listen) }
        if let database { tree["database"] = .string(database) }
        var c = try build(tree, development: file == nil && environment["SIGNET_ISSUER"] == nil)
        // The relay's password: from the environment, or the file email.password_file names.
        if let password = environment["SIGNET_EMAIL_PASSWORD"] { c.email.password = password }
        return c
    }

    static func set(_ tree: inout JSONObject, _ path: [String], _ value: JSONValue) {
        guard let head = path.first else { return }
        if path.count == 1 {
            tree[head] = value
            return
        }
        var child = tree[head]?.object ?? [:]
        set(&child, Array(path.dropFirst()), value)
        tree[head] = .object(child)
    }

    static func checkKnownKeys(_ tree: JSONObject, prefix: [String]) throws {
        for (key, value) in tree {
            let path = prefix + [key]
            if settings.contains(path) { continue }
            if settings.contains(where: { $0.starts(with: path) }), let object = value.object {
                try checkKnownKeys(object, prefix: path)
                continue
            }
            throw ConfigurationError("unknown setting \"\(path.joined(separator: "."))\"")
        }
    }

    static func value(_ tree: JSONObject, _ path: [String]) -> JSONValue? {
        var node: JSONValue = .object(tree)
        for key in path {
            guard let next = node[key] else { return nil }
            node = next
        }
        return node
    }

    static func string(_ tree: JSONObject, _ path: [String]) throws -> String? {
        guard let v = value(tree, path) else { return nil }
        guard let s = v.string else { throw ConfigurationError("\(path.joined(separator: ".")) must be a string") }
        return s
    }

    static func int(_ tree: JSONObject, _ path: [String], range: ClosedRange<Int>) throws -> Int? {
        guard let v = value(tree, path) else { return nil }
        guard let n = v.int64.map(Int.init) ?? v.string.flatMap({ Int($0) }), range.contains(n) else {
            throw ConfigurationError("\(path.joined(separator: ".")) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }

    /// `true` or `false`, as JSON or as the environment's text.
    static func flag(_ tree: JSONObject, _ path: [String]) throws -> Bool? {
        guard let v = value(tree, path) else { return nil }
        guard let b = v.bool ?? v.string.flatMap({ Bool($0) }) else { throw ConfigurationError("\(path.joined(separator: ".")) must be true or false") }
        return b
    }

    static func strings(_ tree: JSONObject, _ path: [String]) throws -> [String]? {
        guard let v = value(tree, path) else { return nil }
        if let s = v.string { return s.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        guard let list = v.array, list.allSatisfy({ $0.string != nil }) else {
            throw ConfigurationError("\(path.joined(separator: ".")) must be a list of strings")
        }
        return list.compactMap(\.string)
    }

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

    /// A secret's hash as the settings hold it (`client_secret_hash`, `scim.token_hash`):
    /// `sha256:` and the base64url of 32 bytes, as `signet client-secret` prints it.
    static func sha256Setting(_ text: String) -> [UInt8]? {
        guard text.hasPrefix("sha256:"), let bytes = Base64URL.decode(String(text.dropFirst(7))), bytes.count == 32 else { return nil }
        return bytes
    }

    /// `HOST:PORT`.
    static func hostAndPort(_ text: String, _ setting: String) throws -> (String, UInt16) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let port = UInt16(parts[1]), !parts[0].isEmpty else {
            throw ConfigurationError("\(setting) must be HOST:PORT, such as 127.0.0.1:8080 (got \"\(text)\")")
        }
        return (String(parts[0]), port)
    }

    static func build(_ tree: JSONObject, development: Bool) throws -> ServerConfiguration {
        var host = "127.0.0.1"
        var port: UInt16 = 8080
        if let listen = try string(tree, ["listen"]) { (host, port) = try hostAndPort(listen, "listen") }
        var c = development
            ? ServerConfiguration.development(host: host, port: port)
            : ServerConfiguration(issuer: try string(tree, ["issuer"]) ?? "")
        c.listenHost = host
        c.listenPort = port
        if development, let issuer = try string(tree, ["issuer"]) { c.issuer = issuer }
        if let metrics = try string(tree, ["metrics", "listen"]) { c.metricsListen = try hostAndPort(metrics, "metrics.listen") }
        if let v = try string(tree, ["database"]) { c.database = v.contains(":") ? v : "sqlite:" + v }
        if let v = try string(tree, ["key_encryption_key_file"]) { c.keyEncryptionKeyFile = v }
        if let v = try string(tree, ["relying_party", "id"]) { c.rpID = v.lowercased() }
        if let v = try string(tree, ["relying_party", "name"]) { c.rpName = v }
        if let v = try strings(tree, ["relying_party", "origins"]) { c.webOrigins = v }
        if let v = try strings(tree, ["relying_party", "related_origins"]) { c.relatedOrigins = v }
        if let v = try int(tree, ["web", "session_idle_ttl"], range: 60...(400 * 86400)) { c.webSessionIdle = v }
        if let v = try int(tree, ["web", "session_ttl"], range: 60...(400 * 86400)) { c.webSessionLifetime = v }
        if let v = try int(tree, ["web", "code_ttl"], range: 10...600) { c.authorizationCodeLifetime = v }
        if let v = try flag(tree, ["web", "require_pushed_authorization_requests"]) { c.requirePushedRequests = v }
        if let v = try strings(tree, ["audiences"]) { c.audiences = v }
        if let v = try int(tree, ["tokens", "access_token_ttl"], range: 30...ServerConfiguration.longestTokenLifetime) { c.accessTokenLifetime = v }
        if let v = try int(tree, ["tokens", "id_token_ttl"], range: 30...ServerConfiguration.longestTokenLifetime) { c.idTokenLifetime = v }
        if let v = try int(tree, ["tokens", "refresh_token_ttl"], range: 60...(400 * 86400)) { c.refreshTokenLifetime = v }
        if let v = try int(tree, ["tokens", "refresh_token_absolute_ttl"], range: 60...(3650 * 86400)) { c.refreshTokenAbsoluteLifetime = v }
        if let v = try int(tree, ["tokens", "refresh_token_retry_window"], range: Ceremonies.refreshRetryWindowRange) { c.refreshTokenRetryWindow = v }
        if let v = try int(tree, ["tokens", "signing_key_rotation_days"], range: 0...3650) { c.signingKeyRotationDays = v }
        if let v = value(tree, ["tokens", "app_metadata_claims"]) { c.appMetadataClaims = try metadataClaims(v) }
        if let v = value(tree, ["tokens", "roles_claim"]) { c.rolesClaim = try rolesClaim(v, besides: c.appMetadataClaims) }
        if let v = value(tree, ["tokens", "permissions"]) { c.apiPermissions = try apiPermissions(v) }
        if let v = value(tree, ["tokens", "api_token_ttl"]) { c.apiTokenLifetimes = try apiTokenLifetimes(v, longest: c.accessTokenLifetime) }
        if let v = try int(tree, ["step_up", "max_age"], range: 1...86400) { c.stepUpMaxAge = v }
        if let v = try int(tree, ["audit", "retention_days"], range: 1...36500) { c.auditRetentionDays = v }
        if let v = try int(tree, ["audit", "log_stream_hold_days"], range: 1...36500) { c.logStreamHoldDays = v }
        if let v = try string(tree, ["backup", "directory"]) {
            guard !v.isEmpty else { throw ConfigurationError("backup.directory must name a folder") }
            c.backupDirectory = v
        }
        if let v = try int(tree, ["backup", "interval_hours"], range: 1...8760) { c.backupIntervalHours = v }
        if let v = try int(tree, ["backup", "keep"], range: 1...1000) { c.backupKeep = v }
        if let v = try flag(tree, ["backup", "seal"]) { c.backupSeal = v }
        if let v = try string(tree, ["database_durability"]) {
            guard ["full", "normal"].contains(v) else { throw ConfigurationError("database_durability must be full or normal") }
            c.durability = v
        }
        if let v = try strings(tree, ["trusted_proxies"]) {
            c.trustedProxies = try v.map { text in
                guard let cidr = CIDR(text) else { throw ConfigurationError("trusted_proxies: \"\(text)\" is not an address or CIDR such as 10.0.0.0/8") }
                return cidr
            }
        }
        if let v = try flag(tree, ["dpop", "nonce"]) { c.dpopNonce = v }
        if let v = try flag(tree, ["signup"]) { c.signUp = v }
        if let v = try strings(tree, ["signup_domains"]) {
            c.signUpDomains = try v.map { text in
                let domain = text.trimmingCharacters(in: .whitespaces).lowercased().precomposedStringWithCanonicalMapping
                guard (try? Ceremonies.emailAddress("a@" + domain, member: "signup_domains")) != nil, domain.count <= 253 else {
                    throw ConfigurationError("signup_domains: \"\(text.prefix(100))\" is not a mail domain such as example.com")
                }
                return domain
            }
            guard c.signUpDomains.count <= 100 else { throw ConfigurationError("signup_domains: at most 100 domains") }
        }
        try buildBranding(tree, &c)
        if let text = try string(tree, ["scim", "token_hash"]) {
            guard let bytes = sha256Setting(text) else {
                throw ConfigurationError("scim.token_hash must be sha256:<base64url of 32 bytes> (make a token and its hash with: signet client-secret)")
            }
            c.scimTokenHash = bytes
        }
        if let v = try flag(tree, ["scim", "email_verified"]) { c.scimEmailVerified = v }
        if let v = try flag(tree, ["rate_limits", "enabled"]) { c.rateLimits.enabled = v }
        for (key, path) in [("sign_up_per_identifier", \RateLimits.signUpPerIdentifier), ("sign_up_per_ip", \RateLimits.signUpPerIP),
                            ("failures_per_ip", \RateLimits.failuresPerIP), ("audit_failures_per_ip", \RateLimits.auditFailuresPerIP),
                            ("passwordless_per_ip", \RateLimits.passwordlessPerIP)] {
            guard let v = value(tree, ["rate_limits", key]) else { continue }
            guard let limit = v["limit"]?.int64, let window = v["window"]?.int64, (1...1_000_000).contains(limit), (1...86400).contains(window) else {
                throw ConfigurationError("rate_limits.\(key) must be {\"limit\": N, \"window\": SECONDS} (window at most 86400)")
            }
            c.rateLimits[keyPath: path] = RateLimit(limit: Int(limit), window: Int(window))
        }
        if let v = try int(tree, ["rate_limits", "ipv6_prefix"], range: 32...128) { c.rateLimits.ipv6Prefix = v }
        if let v = try int(tree, ["session_timeout"], range: 1...3600) { c.sessionTimeout = v }
        if let v = try string(tree, ["user_verification"]) {
            guard ["required", "preferred", "discouraged"].contains(v) else { throw ConfigurationError("user_verification must be required, preferred or discouraged") }
            c.userVerification = v
        }
        if let v = try string(tree, ["attestation"]) {
            guard ["none", "indirect", "direct", "enterprise"].contains(v) else { throw ConfigurationError("attestation must be none, indirect, direct or enterprise") }
            c.attestation = v
        }
        if let v = try string(tree, ["resident_key"]) {
            guard ["required", "preferred", "discouraged"].contains(v) else { throw ConfigurationError("resident_key must be required, preferred or discouraged") }
            c.residentKey = v
        }
        if let names = try strings(tree, ["algorithms"]) {
            c.algorithms = try names.map { name in
                guard let alg = COSEAlgorithm.all.first(where: { $0.description.lowercased() == name.lowercased() }) else {
                    throw ConfigurationError("algorithms: unknown algorithm \"\(name)\" (known: \(COSEAlgorithm.all.map(\.description).joined(separator: ", ")))")
                }
                return alg
            }
            guard !c.algorithms.isEmpty else { throw ConfigurationError("algorithms must name at least one algorithm") }
        }
        if let v = try strings(tree, ["trust_anchors"]) { c.trustAnchorFiles = v }
        c.attestationMetadataFile = try string(tree, ["attestation_metadata", "blob_file"])
        c.attestationMetadataRootFile = try string(tree, ["attestation_metadata", "root_file"])
        guard (c.attestationMetadataFile == nil) == (c.attestationMetadataRootFile == nil) else {
            throw ConfigurationError("attestation_metadata needs both blob_file (the FIDO Metadata Service's BLOB) and root_file (the root it is signed under)")
        }
        if let url = try string(tree, ["attestation_metadata", "url"]) {
            guard Ceremonies.isClientEndpointURI(url) else {
                throw ConfigurationError("attestation_metadata.url must be an https URI without a fragment (http only to a loopback address), such as https://mds3.fidoalliance.org/")
            }
            guard c.attestationMetadataFile != nil else {
                throw ConfigurationError("attestation_metadata.url needs blob_file (where the fetched BLOB is kept) and root_file (the root it is signed under)")
            }
            c.attestationMetadataURL = url
        }
        for (path, keyPath) in [("allowed_aaguids", \ServerConfiguration.allowedAAGUIDs), ("denied_aaguids", \ServerConfiguration.deniedAAGUIDs)] {
            guard let v = try strings(tree, [path]) else { continue }
            c[keyPath: keyPath] = Set(try v.map { text in
                guard let uuid = UUID(uuidString: text) else {
                    throw ConfigurationError("\(path): \"\(text.prefix(64))\" is not an AAGUID (a UUID such as fbfc3007-154e-4ecc-8c0b-6e020557d7bd)")
                }
                return uuid.uuidString.lowercased()
            })
        }
        if let v = try int(tree, ["threads"], range: 1...256) { c.threads = v }
        if let v = try flag(tree, ["access_log"]) { c.accessLog = v }
        if let v = try int(tree, ["limits", "max_body_bytes"], range: 1024...(16 << 20)) { c.maxBodyBytes = v }
        if let v = try int(tree, ["limits", "request_deadline"], range: 1...600) { c.requestDeadline = Double(v) }
        if let v = try int(tree, ["limits", "idle_timeout"], range: 1...3600) { c.idleTimeout = v }
        if let v = try int(tree, ["limits", "max_connections"], range: 1...1_000_000) { c.maxConnections = v }
        if let v = try int(tree, ["limits", "max_connections_per_ip"], range: 1...1_000_000) {
            c.maxConnectionsPerIP = v
        } else if !c.trustedProxies.isEmpty {
            // Every connection comes from a proxy: a per-address cap would cap the proxy.
            c.maxConnectionsPerIP = c.maxConnections
        }
        if let v = try int(tree, ["limits", "header_bytes"], range: 4096...(1 << 20)) { c.connectionMemoryBytes = v }
        if let v = try int(tree, ["actions", "challenge_ttl"], range: 10...3600) { c.actionChallengeLifetime = v }
        if let v = try int(tree, ["actions", "token_ttl"], range: 10...3600) { c.actionTokenLifetime = v }
        if let v = try string(tree, ["actions", "audience"]) { c.actionAudience = v }
        if let v = try int(tree, ["actions", "rate_limit_per_minute"], range: 1...10_000) { c.actionRateLimit = v }
        if let v = try int(tree, ["dpop", "proofs_per_minute"], range: 1...100_000) { c.dpopProofsPerMinute = v }
        if let v = try int(tree, ["actions", "max_device_keys"], range: 1...1000) { c.maxDeviceKeys = v }
        if let clients = value(tree, ["clients"]) { c.clients = try parseClients(clients) }
        try buildEmail(tree, &c)
        try validate(&c)
        return c
    }

    static func parseClients(_ value: JSONValue) throws -> [ClientConfiguration] {
        guard let list = value.array else { throw ConfigurationError("clients must be a list") }
        let clients = try list.enumerated().map { index, item in
            guard let object = item.object else { throw ConfigurationError("clients[\(index)] must be an object") }
            let known: Set<String> = ["client_id", "name", "type", "grants", "scopes", "redirect_uris", "post_logout_redirect_uris", "allowed_origins", "ios", "android",
                                      "audiences", "client_secret_hash", "jwks", "jwks_uri", "require_pushed_authorization_requests", "dpop", "refresh_proof",
                                      "backchannel_logout_uri", "backchannel_logout_session_required", "required_roles", "minimum_acr",
                                      "refresh_token_ttl", "refresh_token_absolute_ttl", "refresh_token_retry_window"]
            if let unknown = object.keys.first(where: { !known.contains($0) }) { throw ConfigurationError("clients[\(index)]: unknown setting \"\(unknown)\"") }
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
        guard !c.webOrigins.isEmpty || c.clients.contains(where: { !$0.androidApps.isEmpty }) else {
            throw ConfigurationError("relying_party.origins must list at least one origin")
        }
        for origin in c.webOrigins { try checkOrigin(origin, rpID: c.rpID) }
        try checkRelatedOrigins(c.relatedOrigins)
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

    static func checkRelatedOrigins(_ origins: [String]) throws {
        if let problem = RelatedOrigins.problem(origins) { throw ConfigurationError(problem) }
    }

    static func isLoopback(_ host: String) -> Bool { host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host == "::1" }

    /// An origin is `scheme://host[:port]` with nothing after it; https except on loopback, and
    /// the host is the RP ID or a subdomain of it (WebAuthn L3 §5.1.2, §13.4.9).
    static func checkOrigin(_ origin: String, rpID: String) throws {
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

extension ConfigurationLoader {
    /// `passwordless.*`, `email.*` and `recovery.*` (DESIGN.md, "Email codes, recovery codes and recovery").
    static func buildEmail(_ tree: JSONObject, _ c: inout ServerConfiguration) throws {
        if let v = try int(tree, ["passwordless", "code_length"], range: 6...10) { c.passwordless.codeLength = v }
        if let v = try int(tree, ["passwordless", "code_ttl"], range: 30...3600) { c.passwordless.codeTTL = v }
        if let v = try int(tree, ["passwordless", "max_attempts"], range: 1...20) { c.passwordless.maxAttempts = v }
        if let v = try flag(tree, ["passwordless", "signup"]) { c.passwordless.signup = v }
        if let v = try int(tree, ["passwordless", "send_interval"], range: 1...3600) { c.passwordless.sendInterval = v }
        if let v = try int(tree, ["passwordless", "sends_per_hour"], range: 1...1000) { c.passwordless.sendsPerHour = v }
        if let v = try string(tree, ["email", "smtp_url"]) {
            guard let url = URLComponents(string: v), let scheme = url.scheme?.lowercased(), ["smtp", "smtps"].contains(scheme), url.host?.isEmpty == false,
                  url.user == nil, url.password == nil
            else {
                throw ConfigurationError("email.smtp_url must be smtp://HOST:587 (STARTTLS) or smtps://HOST:465, without credentials (got \"\(v)\"); the user goes in email.username, the password in SIGNET_EMAIL_PASSWORD or email.password_file")
            }
            c.email.smtpURL = v
        }
        if let v = try string(tree, ["email", "from"]) {
            guard (try? Ceremonies.emailAddress(v, member: "email.from")) != nil else { throw ConfigurationError("email.from must be an email address (got \"\(v)\")") }
            c.email.from = v
        }
        if let v = try string(tree, ["email", "username"]) { c.email.username = v }
        if let v = try string(tree, ["email", "password_file"]) {
            guard let text = try? String(contentsOfFile: v, encoding: .utf8) else { throw ConfigurationError("cannot read email.password_file \(v)") }
            c.email.password = text.trimmingCharacters(in: .newlines)
        }
        if let v = try string(tree, ["email", "ca_file"]) { c.email.caFile = v }
        if let v = try string(tree, ["email", "outbox_dir"]) { c.email.outboxDirectory = v }
        if let v = try int(tree, ["email", "retry_delay"], range: 1...3600) { c.email.retryDelay = v }
        if let v = try int(tree, ["email", "max_retry_delay"], range: 1...86400) { c.email.maxRetryDelay = v }
        if let v = try int(tree, ["email", "max_deliveries"], range: 1...100) { c.email.maxDeliveries = v }
        if let v = try int(tree, ["recovery", "hold"], range: 60...(30 * 86400)) { c.recoveryHold = v }
    }

    /// `branding`: the hosted pages' logo (a file, read once here) and colours, each checked
    /// so that no setting can make a page unreadable or carry anything but a colour or an image.
    static func buildBranding(_ tree: JSONObject, _ c: inout ServerConfiguration) throws {
        func color(_ key: String) throws -> Color? {
            guard let text = try string(tree, ["branding", key]) else { return nil }
            guard let color = Color(hex: text) else { throw ConfigurationError("branding.\(key) must be a colour such as #0a7d5a (got \"\(text.prefix(40))\")") }
            return color
        }
        c.branding.primaryColor = try color("primary_color")
        if let background = try color("page_background") {
            if let why = Branding.unreadable(background: background) { throw ConfigurationError("branding.page_background: \(why)") }
            c.branding.pageBackground = background
        }
        guard let path = try string(tree, ["branding", "logo_file"]) else { return }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ConfigurationError("cannot read branding.logo_file \(path)") }
        defer { try? handle.close() }
        let bytes = [UInt8]((try? handle.read(upToCount: Branding.logoLimit + 1)) ?? Data())
        guard bytes.count <= Branding.logoLimit else {
            throw ConfigurationError("branding.logo_file \(path) is larger than \(Branding.logoLimit / 1024) KiB; a logo shown 2.5 rem high needs far less")
        }
        guard let type = Branding.imageType(bytes) else {
            throw ConfigurationError("branding.logo_file \(path) is not a PNG, JPEG or WebP image (SVG is not taken: opened on its own, it would run scripts on the sign-in pages' origin)")
        }
        c.branding.logo = Branding.Logo(bytes: bytes, contentType: type)
    }
}
