import Foundation
package import SignetWebAuthn
public import SignetAuth
import SignetHTTP

/// Reads `signet.json`, applies `SIGNET_...` environment overrides and validates the result.
/// Every setting has an environment name: its path in upper case joined by `_`
/// (`relying_party.origins` → `SIGNET_RELYING_PARTY_ORIGINS`); a value that parses as JSON is
/// taken as JSON (numbers, lists, objects), anything else as a string.
public enum ConfigurationLoader {
    /// Every setting's path in the file.
    package static let settings: [[String]] = [
        ["issuer"], ["listen"], ["database"], ["key_encryption_key_file"],
        ["relying_party", "id"], ["relying_party", "name"], ["relying_party", "origins"], ["relying_party", "related_origins"], ["relying_party", "public_suffix_list"],
        ["web", "session_idle_ttl"], ["web", "session_ttl"], ["web", "code_ttl"], ["web", "require_pushed_authorization_requests"],
        ["clients"], ["audiences"],
        ["tokens", "access_token_ttl"], ["tokens", "id_token_ttl"], ["tokens", "refresh_token_ttl"], ["tokens", "refresh_token_absolute_ttl"],
        ["tokens", "refresh_token_retry_window"], ["tokens", "signing_key_rotation_days"], ["tokens", "app_metadata_claims"], ["tokens", "roles_claim"], ["tokens", "permissions"], ["tokens", "api_token_ttl"], ["step_up", "max_age"], ["audit", "retention_days"], ["audit", "log_stream_hold_days"],
        ["backup", "directory"], ["backup", "interval_hours"], ["backup", "keep"], ["backup", "seal"], ["database_durability"], ["trusted_proxies"],
        ["rate_limits", "enabled"], ["rate_limits", "sign_up_per_identifier"], ["rate_limits", "sign_up_per_ip"],
        ["rate_limits", "failures_per_ip"], ["rate_limits", "audit_failures_per_ip"],
        ["session_timeout"], ["user_verification"], ["attestation"], ["resident_key"], ["algorithms"], ["max_passkeys"], ["trust_anchors"],
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

    /// The longest configuration file read (1 MiB), and the longest PEM file a setting names.
    static let maxFileLength = 1 << 20
    /// The longest secret file a setting names (the relay's password).
    static let maxSecretLength = 64 << 10
    /// How the file and each variable's value are read as JSON: the same bounds for both, so
    /// that what a file may say the environment may say too.
    package static let json = StrictJSON(maxDepth: 16, maxLength: maxFileLength)

    package static func environmentName(_ path: [String]) -> String { "SIGNET_" + path.joined(separator: "_").uppercased() }

    /// Loads the configuration. Development mode (its defaults, the client `dev`, http on
    /// loopback) is on exactly when neither a file nor `SIGNET_ISSUER` is given: a deployment
    /// configured through the environment alone is never silently a development server.
    /// `listen`/`database` still come from flags or the environment. `boundPort`: the port of a
    /// socket the service manager passed, where the server answers whatever `listen` says, so
    /// development mode makes its origin, issuer and redirect URIs from it.
    public static func load(
        file: String?, environment: [String: String], listen: String? = nil, database: String? = nil, boundPort: UInt16? = nil
    ) throws -> ServerConfiguration {
        let contents = try file.map { try ConfigurationError.read($0, for: "configuration file", limit: maxFileLength) }
        return try load(contents: contents, named: file ?? "", environment: environment, listen: listen, database: database, boundPort: boundPort)
    }

    /// ``load(file:environment:listen:database:boundPort:)`` with the file's bytes already read
    /// (`nil`: no file); `named` is the path its messages give.
    package static func load(
        contents: [UInt8]?, named file: String, environment: [String: String], listen: String? = nil, database: String? = nil, boundPort: UInt16? = nil
    ) throws -> ServerConfiguration {
        var tree: JSONObject = [:]
        if let contents {
            do {
                guard let object = try json.parse(contents).object else {
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
            // JSON for a list, an object or a quoted string; anything else is the text itself,
            // which the number and flag readers take too: SIGNET_LISTEN=8080 is the text "8080",
            // refused as a listen with the line to write, not "listen must be a string".
            // Whitespace around it is dropped.
            let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            let structured = text.first.map { "[{\"".contains($0) } ?? false
            let value = structured ? (try? json.parse(Array(text.utf8))) ?? .string(text) : .string(text)
            set(&tree, path, value)
        }
        if let listen { tree["listen"] = .string(listen) }
        if let boundPort {
            let host = try string(tree, ["listen"]).map { try hostAndPort($0, "listen").0 } ?? "127.0.0.1"
            tree["listen"] = .string(SocketAddress.authority(host, boundPort))
        }
        if let database { tree["database"] = .string(database) }
        var c = try build(tree, development: contents == nil && environment["SIGNET_ISSUER"] == nil)
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
        // In order, so that of several unknown settings the same one is named every time.
        for (key, value) in tree.sorted(by: { $0.key < $1.key }) {
            let path = prefix + [key]
            if settings.contains(path) { continue }
            if settings.contains(where: { $0.starts(with: path) }), let object = value.object {
                try checkKnownKeys(object, prefix: path)
                continue
            }
            throw ConfigurationError(unknownSetting(path.joined(separator: "."), among: settings.map { $0.joined(separator: ".") }))
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

    /// A secret's hash as the settings hold it (`client_secret_hash`, `scim.token_hash`):
    /// `sha256:` and the base64url of 32 bytes, as `signet client-secret` prints it.
    static func sha256Setting(_ text: String) -> [UInt8]? {
        guard text.hasPrefix("sha256:"), let bytes = Base64URL.decode(String(text.dropFirst(7))), bytes.count == 32 else { return nil }
        return bytes
    }

    /// `HOST:PORT`, or `[IPv6]:PORT` (RFC 3986 §3.2.2): the host without brackets, checked to be
    /// a numeric IPv4 or IPv6 address, the only kind the server binds; `localhost` is 127.0.0.1,
    /// the loopback name RFC 6761 §6.3 fixes. What is wrong is said with the line to write instead.
    static func hostAndPort(_ text: String, _ setting: String) throws -> (String, UInt16) {
        let host: Substring, port: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]"), text[close...].hasPrefix("]:") {
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
        } else if let colon = text.lastIndex(of: ":") {
            (host, port) = (text[..<colon], text[text.index(after: colon)...])
        } else {
            (host, port) = (text[...], "")
        }
        let digits = !port.isEmpty && port.allSatisfy { $0.isASCII && $0.isNumber }
        if digits, UInt16(port) == nil { throw ConfigurationError("\(setting): port \(port) is above 65535 (got \"\(text)\")") }
        guard digits, let number = UInt16(port) else {
            // A port alone, or a host alone: the usual two meanings, spelled out.
            let wanted = UInt16(text) != nil ? text : "8080"
            throw ConfigurationError("\(setting) must be HOST:PORT, such as \(Self.listenExamples(wanted)) (got \"\(text)\")")
        }
        if host.isEmpty || host == "*" {
            throw ConfigurationError("\(setting) must name the address: \(Self.listenExamples(String(port))) (got \"\(text)\")")
        }
        if host.lowercased() == "localhost" { return ("127.0.0.1", number) }
        let address = String(host)
        let numeric = SocketAddress(host: address, port: number) != nil
        if address.contains(":"), !text.hasPrefix("["), numeric {
            throw ConfigurationError("\(setting): an IPv6 address goes in brackets, [\(address)]:\(port) (got \"\(text)\")")
        }
        guard numeric, text.hasPrefix("[") == address.contains(":") else {
            let name = address.contains(where: \.isLetter) && !address.contains(":") ? ", not a name like \(address): give the address it resolves to" : ""
            throw ConfigurationError("\(setting) must name a numeric IPv4 address, such as 0.0.0.0, or an IPv6 one in brackets, such as [::]\(name) (got \"\(text)\")")
        }
        return (address, number)
    }

    /// The two lines a listen setting usually means, for its port.
    private static func listenExamples(_ port: String) -> String {
        "0.0.0.0:\(port) (or [::]:\(port)) for every interface, 127.0.0.1:\(port) for this machine only"
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
        c.publicSuffixList = try publicSuffixList(try string(tree, ["relying_party", "public_suffix_list"]))
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
        if let v = try int(tree, ["max_passkeys"], range: 1...1000) { c.maxPasskeys = v }
        if let clients = value(tree, ["clients"]) { c.clients = try parseClients(clients) }
        try buildEmail(tree, &c)
        try validate(&c)
        return c
    }
}
