import SignetAuth
import SignetCrypto
import Foundation
import SignetServer
import SignetWebAuthn
import Testing
import SignetTestSupport

@Suite struct ConfigurationTests {
    static func write(_ json: String) throws -> String {
        let path = Scratch.directory.appendingPathComponent("signet-config-\(UUID()).json").path
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static let valid = """
        {"issuer": "https://auth.example.com", "listen": "0.0.0.0:9000", "database": "sqlite:/tmp/x.db",
         "relying_party": {"id": "example.com", "name": "Example", "origins": ["https://example.com", "https://www.example.com"]},
         "clients": [{"client_id": "mobile", "ios": [{"team_id": "ABCDE12345", "bundle_id": "com.example.app"}],
                      "android": [{"package_name": "com.example.app", "sha256_cert_fingerprints": ["B3:5D:8D:A5:8A:F0:E4:59:8A:B9:2C:40:05:BE:D4:06:CD:87:CE:65:E7:5C:2A:48:E9:7C:DA:98:6B:A9:1B:5E"]}]}],
         "tokens": {"access_token_ttl": 600}, "user_verification": "required", "limits": {"max_body_bytes": 32768}}
        """

    @Test("worker threads: eight per processor with PostgreSQL, one per processor (at least two) with SQLite at either durability, unless set")
    func workerThreads() {
        let processors = ProcessInfo.processInfo.activeProcessorCount
        var c = ServerConfiguration.development(port: 8080, database: "sqlite:x.db")
        #expect(c.workerThreads == max(2, processors))
        c.durability = "normal"
        #expect(c.workerThreads == max(2, processors))
        c.database = "postgres://signet@127.0.0.1/signet"
        #expect(c.workerThreads == 8 * processors)
        c.threads = 3
        #expect(c.workerThreads == 3)
    }

    @Test("a full configuration loads, with the Android origin derived")
    func loads() throws {
        let c = try ConfigurationLoader.load(file: try Self.write(Self.valid), environment: [:])
        #expect(c.listenHost == "0.0.0.0" && c.listenPort == 9000)
        #expect(c.rpID == "example.com" && c.accessTokenLifetime == 600 && c.userVerification == "required" && c.maxBodyBytes == 32768)
        #expect(c.allowedOrigins == ["https://example.com", "https://www.example.com", "android:apk-key-hash:s12NpYrw5FmKuSxABb7UBs2HzmXnXCpI6XzamGupG14"])
        #expect(c.audiences == ["https://auth.example.com"])
        #expect(!c.developmentMode)
    }

    @Test("SIGNET_ environment variables override the file")
    func environment() throws {
        let c = try ConfigurationLoader.load(file: try Self.write(Self.valid), environment: [
            "SIGNET_TOKENS_ACCESS_TOKEN_TTL": "120", "SIGNET_RELYING_PARTY_NAME": "Renamed", "SIGNET_THREADS": "8",
            "SIGNET_RELYING_PARTY_ORIGINS": "https://login.example.com",
        ])
        #expect(c.accessTokenLifetime == 120 && c.rpName == "Renamed" && c.threads == 8)
        #expect(c.webOrigins == ["https://login.example.com"])
    }

    @Test("an environment variable's text is the setting's text: a name or listen of digits is text, numbers and flags read from text, whitespace around it dropped; JSON only for a list, an object or a quoted string")
    func environmentText() throws {
        let c = try ConfigurationLoader.load(file: try Self.write(Self.valid), environment: [
            "SIGNET_RELYING_PARTY_NAME": "2026", "SIGNET_TOKENS_ACCESS_TOKEN_TTL": " 600\n", "SIGNET_SIGNUP": "false ",
            "SIGNET_RELYING_PARTY_ORIGINS": #" ["https://a.example.com", "https://b.example.com"]"#, "SIGNET_ISSUER": #""https://auth.example.com""#,
        ])
        #expect(c.rpName == "2026" && c.accessTokenLifetime == 600 && !c.signUp && c.issuer == "https://auth.example.com")
        #expect(c.webOrigins == ["https://a.example.com", "https://b.example.com"])
        // Digits alone are a listen's text, refused for what it is: a port without its address.
        #expect { _ = try ConfigurationLoader.load(file: nil, environment: ["SIGNET_LISTEN": "8080"]) } throws: {
            "\($0)".hasPrefix("listen must be HOST:PORT, such as 0.0.0.0:8080")
        }
    }

    @Test("an environment variable may say as much as the file: a list of clients over 64 KiB is read as JSON, not as a string")
    func environmentAsLargeAsTheFile() throws {
        let clients = (0..<400).map { #"{"client_id": "app\#($0)", "name": "\#(String(repeating: "n", count: 200))"}"# }
        let text = "[" + clients.joined(separator: ",") + "]"
        #expect(text.utf8.count > 64 * 1024)
        let c = try ConfigurationLoader.load(file: try Self.write(Self.valid), environment: ["SIGNET_CLIENTS": text])
        #expect(c.clients.count == 400 && c.clients.last?.id == "app399")
    }

    @Test("development mode: localhost, client dev, origin follows the port")
    func development() throws {
        let c = try ConfigurationLoader.load(file: nil, environment: [:], listen: "127.0.0.1:9123")
        #expect(c.developmentMode && c.rpID == "localhost" && c.webOrigins == ["http://localhost:9123"])
        #expect(c.clients.map(\.id) == ["dev"] && c.clients[0].grants == GrantNames.all)
        #expect(c.database == "sqlite:signet.db")
    }

    @Test("bad configurations are refused with a message that says what to fix", arguments: [
        (#"{"relying_party": {"id": "example.com", "origins": ["https://evil.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x"}]}"#, "not the RP ID"),
        (#"{"relying_party": {"id": "example.com", "origins": ["http://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x"}]}"#, "must use https"),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com/login"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x"}]}"#, "no path"),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com/"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x"}]}"#,
         "origin \"https://example.com/\" ends with a slash, which an origin never has (browsers send https://example.com): write it without"),
        (#"{"relying_party": {"id": "com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x"}]}"#,
         "relying_party.id \"com\" is a top-level domain"),
        (#"{"relying_party": {"id": "intranet", "origins": ["https://intranet"]}, "issuer": "https://intranet", "clients": [{"client_id": "x"}]}"#,
         "relying_party.id \"intranet\" is a top-level domain"),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com", "android:apk-key-hash:s12NpYrw5FmKuSxABb7UBs2HzmXnXCpI6XzamGupG14"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x"}]}"#,
         "is an Android app's, which Signet derives: give the app under its client instead, \"android\""),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "http://a.example.com", "clients": [{"client_id": "x"}]}"#, "https"),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": []}"#, "at least one client"),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x", "android": [{"package_name": "p", "sha256_cert_fingerprints": ["AB:CD"]}]}]}"#, "SHA-256 fingerprint"),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x", "ios": [{"team_id": "abc", "bundle_id": "a.b"}]}]}"#, "Team ID"),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x"}], "colour": "blue"}"#, "unknown setting \"colour\""),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x"}], "tokens": {"access_token_ttl": 0}}"#, "tokens.access_token_ttl"),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x"}], "algorithms": ["ES999"]}"#, "unknown algorithm"),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x", "type": "confidential", "client_secret_hash": "sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "jwks": {"keys": []}}]}"#, "give one of client_secret_hash, jwks or jwks_uri"),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x", "type": "public", "jwks": {"keys": []}}]}"#, "a public client has no client_secret_hash, jwks or jwks_uri"),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x", "type": "confidential", "jwks": {"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}}]}"#, "client x: jwks: keys[0]"),
        (#"{"relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "issuer": "https://a.example.com", "clients": [{"client_id": "x", "type": "confidential"}]}"#, "a jwks or a jwks_uri"),
        (#"{"listen": "nowhere"}"#, "HOST:PORT"),
        (#"{"attestation_metadata": {"blob_file": "/etc/signet/mds.jwt"}}"#, "needs both blob_file"),
        (#"{"attestation_metadata": {"root_file": "/etc/signet/mds-root.pem"}}"#, "needs both blob_file"),
        (#"{"attestation_metadata": {"url": "https://mds3.fidoalliance.org/"}}"#, "attestation_metadata.url needs blob_file"),
        (#"{"attestation_metadata": {"blob_file": "/etc/signet/mds.jwt", "root_file": "/r.pem", "url": "http://mds3.fidoalliance.org/"}}"#, "attestation_metadata.url must be an https URI"),
        (#"{"attestation_metadata": {"blob_file": "/etc/signet/mds.jwt", "root_file": "/r.pem", "url": "https://mds3.fidoalliance.org/#x"}}"#, "without a fragment"),
        (#"{"issuer": "#, "not valid JSON"),
    ])
    func refused(_ json: String, _ message: String) throws {
        do {
            _ = try ConfigurationLoader.load(file: try Self.write(json), environment: [:])
            Issue.record("accepted: \(json)")
        } catch let error as ConfigurationError {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test("keytool fingerprints: with colons, plain hex, and wrong lengths")
    func fingerprints() {
        #expect(parseFingerprint("b3:5d:8d:a5:8a:f0:e4:59:8a:b9:2c:40:05:be:d4:06:cd:87:ce:65:e7:5c:2a:48:e9:7c:da:98:6b:a9:1b:5e")?.count == 32)
        #expect(parseFingerprint(String(repeating: "ab", count: 32))?.count == 32)
        #expect(parseFingerprint("AB:CD") == nil)
        #expect(parseFingerprint(String(repeating: "zz", count: 32)) == nil)
    }
}

/// DESIGN.md, "Configuration and start-up": development mode only without a file and without
/// SIGNET_ISSUER; the settings of step-up, sessions, limits, proxies and durability.
@Suite struct DeploymentConfigurationTests {
    @Test("SIGNET_ISSUER alone is no development server: without clients it refuses; with them there is no dev client and https is required")
    func issuerFromEnvironment() throws {
        #expect {
            _ = try ConfigurationLoader.load(file: nil, environment: ["SIGNET_ISSUER": "https://auth.example.com"])
        } throws: { "\($0)".contains("clients must list at least one client") || "\($0)".contains("origins") }
        let env = [
            "SIGNET_ISSUER": "https://auth.example.com", "SIGNET_RELYING_PARTY_ID": "example.com",
            "SIGNET_RELYING_PARTY_ORIGINS": "https://example.com", "SIGNET_CLIENTS": #"[{"client_id": "mobile"}]"#,
        ]
        let c = try ConfigurationLoader.load(file: nil, environment: env)
        #expect(!c.developmentMode && c.clients.map(\.id) == ["mobile"])
        var http = env
        http["SIGNET_ISSUER"] = "http://auth.example.com"
        #expect { _ = try ConfigurationLoader.load(file: nil, environment: http) } throws: { "\($0)".contains("https") }
        var offRP = env
        offRP["SIGNET_RELYING_PARTY_ORIGINS"] = "https://example.org"
        #expect { _ = try ConfigurationLoader.load(file: nil, environment: offRP) } throws: { "\($0)".contains("not the RP ID") }
    }

    @Test("the new settings load from the file and the environment")
    func settings() throws {
        let secret = Digest.sha256.hash(Array("s3cret".utf8))
        let file = try ConfigurationTests.write("""
            {"issuer": "https://auth.example.com", "relying_party": {"id": "example.com", "origins": ["https://example.com"]},
             "clients": [{"client_id": "bank", "client_secret_hash": "sha256:\(Base64URL.encode(secret))", "audiences": ["https://bank.example.com"], "grants": []}],
             "step_up": {"max_age": 120}, "tokens": {"refresh_token_absolute_ttl": 86400, "refresh_token_retry_window": 30, "signing_key_rotation_days": 30}, "audit": {"retention_days": 30, "log_stream_hold_days": 45},
             "database_durability": "normal", "trusted_proxies": ["10.0.0.0/8", "::1"], "allowed_aaguids": ["CB69481E-8FF7-4039-93EC-0A2729A154A8"],
             "rate_limits": {"enabled": true, "sign_up_per_ip": {"limit": 7, "window": 60}}}
            """)
        let c = try ConfigurationLoader.load(file: file, environment: ["SIGNET_RATE_LIMITS_ENABLED": "false", "SIGNET_STEP_UP_MAX_AGE": "90", "SIGNET_MAX_PASSKEYS": "12"])
        #expect(c.stepUpMaxAge == 90 && c.refreshTokenAbsoluteLifetime == 86400 && c.auditRetentionDays == 30 && c.durability == "normal")
        #expect(c.maxPasskeys == 12 && ServerConfiguration.development(port: 8080).maxPasskeys == 50)
        #expect(c.logStreamHoldDays == 45 && ServerConfiguration.development(port: 8080).logStreamHoldDays == 30)
        #expect(c.allowedAAGUIDs == ["cb69481e-8ff7-4039-93ec-0a2729a154a8"] && c.deniedAAGUIDs.isEmpty)
        #expect(c.signingKeyRotationDays == 30 && ServerConfiguration.development(port: 8080).signingKeyRotationDays == 90)
        #expect(c.refreshTokenRetryWindow == 30 && ServerConfiguration.development(port: 8080).refreshTokenRetryWindow == 0)
        #expect(c.trustedProxies.map(\.description) == ["10.0.0.0/8", "0:0:0:0:0:0:0:1/128"])
        #expect(!c.rateLimits.enabled && c.rateLimits.signUpPerIP == RateLimit(limit: 7, window: 60))
        #expect(c.clients[0].secretHash == secret && c.clients[0].audiences == ["https://bank.example.com"] && c.clients[0].isConfidential)
        // Behind trusted proxies every connection is a proxy's: the per-address cap is the pool's.
        #expect(c.maxConnectionsPerIP == c.maxConnections)
        #expect(try ConfigurationLoader.load(file: try ConfigurationTests.write(ConfigurationTests.valid), environment: [:]).maxConnectionsPerIP == 128)
        // attestation_metadata.url, from the environment beside the file's blob_file and root_file.
        let metadata = try ConfigurationTests.write("""
            {"issuer": "https://auth.example.com", "relying_party": {"id": "example.com", "origins": ["https://example.com"]}, "clients": [{"client_id": "m"}],
             "attestation_metadata": {"blob_file": "/var/lib/signet/mds.jwt", "root_file": "/etc/ssl/certs/GlobalSign_Root_R46.pem"}}
            """)
        let fetching = try ConfigurationLoader.load(file: metadata, environment: ["SIGNET_ATTESTATION_METADATA_URL": "https://mds3.fidoalliance.org/"])
        #expect(fetching.attestationMetadataURL == "https://mds3.fidoalliance.org/" && fetching.attestationMetadataFile == "/var/lib/signet/mds.jwt")
        #expect(try ConfigurationLoader.load(file: metadata, environment: [:]).attestationMetadataURL == nil)
    }

    @Test("email, passwordless and recovery settings load from the file and the environment; the relay's password only from its file or the environment")
    func emailSettings() throws {
        let password = Scratch.directory.appendingPathComponent("signet-pw-\(UUID())").path
        try Data("from-file\n".utf8).write(to: URL(fileURLWithPath: password))
        let file = try ConfigurationTests.write("""
            {"issuer": "https://auth.example.com", "relying_party": {"id": "example.com", "origins": ["https://example.com"]},
             "clients": [{"client_id": "mobile"}],
             "email": {"smtp_url": "smtps://mail.example.com:465", "from": "login@example.com", "username": "login", "password_file": "\(password)"},
             "passwordless": {"code_length": 8, "max_attempts": 3, "signup": false}}
            """)
        let c = try ConfigurationLoader.load(file: file, environment: ["SIGNET_RECOVERY_HOLD": "7200", "SIGNET_PASSWORDLESS_CODE_TTL": "120"])
        #expect(c.email.smtpURL == "smtps://mail.example.com:465" && c.mailFrom == "login@example.com" && c.email.username == "login" && c.email.password == "from-file")
        #expect(c.passwordless.codeLength == 8 && c.passwordless.maxAttempts == 3 && !c.passwordless.signup && c.passwordless.codeTTL == 120 && c.recoveryHold == 7200)
        #expect(try ConfigurationLoader.load(file: file, environment: ["SIGNET_EMAIL_PASSWORD": "from-env"]).email.password == "from-env")
        // Sign-up: open by default; `signup: false` closes it, codes included, whatever passwordless.signup says.
        #expect(c.signUp && !c.codeSignUp)
        let closed = try ConfigurationLoader.load(file: file, environment: ["SIGNET_SIGNUP": "false", "SIGNET_PASSWORDLESS_SIGNUP": "true"])
        #expect(!closed.signUp && closed.passwordless.signup && !closed.codeSignUp)
        // Outside development without a relay, mail goes nowhere and sign-in by code is off; development writes .eml files.
        #expect(!(try ConfigurationLoader.load(file: try ConfigurationTests.write(ConfigurationTests.valid), environment: [:])).email.canSend)
        #expect(try ConfigurationLoader.load(file: nil, environment: [:]).email.outboxDirectory == "signet-mail")
        #expect { _ = try ConfigurationLoader.load(file: try ConfigurationTests.write(#"{"email": {"password": "inline"}}"#), environment: [:]) } throws: {
            "\($0)".contains("unknown setting \"email.password\"")
        }
    }

    @Test("machine clients, DPoP and metrics settings load from the file and the environment")
    func operationsSettings() throws {
        let file = try ConfigurationTests.write("""
            {"issuer": "https://auth.example.com", "relying_party": {"id": "example.com", "origins": ["https://example.com"]},
             "clients": [{"client_id": "app", "dpop": "required", "refresh_proof": "device_key", "name": "App", "redirect_uris": ["com.example.app:/cb"]},
                         {"client_id": "ops", "grants": ["client_credentials"], "scopes": ["read:users", "read:logs"],
                          "client_secret_hash": "sha256:\(Base64URL.encode(Digest.sha256.hash(Array("s".utf8))))"}],
             "metrics": {"listen": "127.0.0.1:9100"}}
            """)
        let c = try ConfigurationLoader.load(file: file, environment: ["SIGNET_DPOP_NONCE": "true", "SIGNET_DPOP_PROOFS_PER_MINUTE": "120"])
        let app = try #require(c.client("app"))
        let ops = try #require(c.client("ops"))
        #expect(app.dpop == "required" && app.refreshProof == "device_key" && app.name == "App" && app.redirectURIs == ["com.example.app:/cb"])
        #expect(ops.scopes == ["read:users", "read:logs"] && ops.isConfidential && ops.grants == [GrantNames.clientCredentials])
        #expect(c.metricsListen?.host == "127.0.0.1" && c.metricsListen?.port == 9100 && c.dpopNonce && c.dpopProofsPerMinute == 120)
    }

    @Test("browser-flow clients, related origins and the SSO session's lifetimes load from the file and the environment")
    func webSettings() throws {
        let file = try ConfigurationTests.write("""
            {"issuer": "https://auth.example.com",
             "relying_party": {"id": "example.com", "origins": ["https://example.com"], "related_origins": ["https://example.co.uk"]},
             "clients": [{"client_id": "web", "type": "public", "redirect_uris": ["https://example.com/cb", "http://127.0.0.1/cb"],
                          "post_logout_redirect_uris": ["https://example.com/"], "allowed_origins": ["https://example.com"]}],
             "web": {"session_ttl": 86400}}
            """)
        let c = try ConfigurationLoader.load(file: file, environment: ["SIGNET_WEB_SESSION_IDLE_TTL": "3600", "SIGNET_WEB_CODE_TTL": "30"])
        let web = try #require(c.client("web"))
        #expect(web.redirectURIs == ["https://example.com/cb", "http://127.0.0.1/cb"] && web.postLogoutRedirectURIs == ["https://example.com/"])
        #expect(web.allowedOrigins == ["https://example.com"] && !web.isConfidential && !web.anyLoopbackRedirect)
        #expect(c.relatedOrigins == ["https://example.co.uk"] && c.allowedOrigins.contains("https://example.co.uk"))
        #expect(c.webSessionLifetime == 86400 && c.webSessionIdle == 3600 && c.authorizationCodeLifetime == 30)
        for (origins, message) in [(#"["https://a.example","https://b.example","https://c.example","https://d.example","https://e.example","https://f.example"]"#, "at most 5"),
                                   (#"["http://shop.example"]"#, "must use https")] {
            #expect { _ = try ConfigurationLoader.load(file: file, environment: ["SIGNET_RELYING_PARTY_RELATED_ORIGINS": origins]) } throws: { "\($0)".contains(message) }
        }
        let dev = ServerConfiguration.development(port: 8080).client("dev")
        #expect(dev?.anyLoopbackRedirect == true && dev?.grants.contains(GrantNames.authorizationCode) == true)
    }

    @Test("bad new settings are refused with what to fix", arguments: [
        (#""database_durability": "sometimes""#, "database_durability must be full or normal"),
        (#""trusted_proxies": ["10.0.0.0/40"]"#, "trusted_proxies"),
        (#""rate_limits": {"failures_per_ip": {"limit": 0, "window": 60}}"#, "rate_limits.failures_per_ip"),
        (#""step_up": {"max_age": 0}"#, "step_up.max_age"),
        (#""max_passkeys": 0"#, "max_passkeys must be a whole number from 1 to 1000"),
        (#""max_passkeys": 1001"#, "max_passkeys must be a whole number from 1 to 1000"),
        (#""audit": {"log_stream_hold_days": 0}"#, "audit.log_stream_hold_days must be a whole number from 1 to 36500"),
        (#""clients": [{"client_id": "x", "client_secret_hash": "plain"}]"#, "client_secret_hash"),
        (#""email": {"smtp_url": "http://mail.example.com"}"#, "email.smtp_url must be smtp://"),
        (#""email": {"smtp_url": "smtp://user:pw@mail.example.com:587"}"#, "without credentials"),
        (#""email": {"from": "not an address"}"#, "email.from must be an email address"),
        (#""email": {"password_file": "/nonexistent/pw"}"#, "cannot read email.password_file"),
        (#""email": {"password_file": "/dev/zero"}"#, "email.password_file /dev/zero is larger than 64 KiB"),
        (#""branding": {"logo_file": "/dev/zero"}"#, "branding.logo_file /dev/zero is larger than 256 KiB"),
        (#""branding": {"logo_file": "/tmp"}"#, "cannot read branding.logo_file /tmp"),
        (#""passwordless": {"code_length": 4}"#, "passwordless.code_length"),
        (#""recovery": {"hold": 1}"#, "recovery.hold"),
        (#""clients": [{"client_id": "x", "dpop": "sometimes"}]"#, "dpop must be"),
        (#""clients": [{"client_id": "x", "refresh_proof": "passkey"}]"#, "refresh_proof must be"),
        (#""clients": [{"client_id": "x", "grants": ["client_credentials"]}]"#, "client_credentials grant needs a client_secret_hash"),
        (#""clients": [{"client_id": "x", "scopes": "read:users"}]"#, "scopes must be a list of strings"),
        (#""clients": [{"client_id": "x", "grants": ["password"]}]"#, "unknown grant"),
        (#""metrics": {"listen": "9100"}"#, "metrics.listen must be HOST:PORT"),
        (#""dpop": {"nonce": "maybe"}"#, "dpop.nonce must be true or false"),
        (#""signup": "closed""#, "signup must be true or false"),
        (#""passwordless": {"signup": 0}"#, "passwordless.signup must be true or false"),
        (#""dpop": {"proofs_per_minute": 0}"#, "dpop.proofs_per_minute"),
        (#""rate_limits": {"ipv6_prefix": 16}"#, "rate_limits.ipv6_prefix"),
        (#""clients": [{"client_id": "x", "type": "confidential"}]"#, "a confidential client needs a client_secret_hash"),
        (#""clients": [{"client_id": "x", "type": "hybrid"}]"#, "type must be"),
        (#""clients": [{"client_id": "x", "redirect_uris": ["/relative"]}]"#, "is not an absolute URI"),
        (#""clients": [{"client_id": "x", "redirect_uris": ["https://a.example/cb#frag"]}]"#, "is not an absolute URI"),
        (#""clients": [{"client_id": "x", "post_logout_redirect_uris": ["nope"]}]"#, "post_logout_redirect_uris"),
        (#""clients": [{"client_id": "x", "allowed_origins": ["https://a.example/path"]}]"#, "allowed_origins"),
        (#""web": {"code_ttl": 3600}"#, "web.code_ttl"),
        (#""web": {"session_idle_ttl": 1}"#, "web.session_idle_ttl"),
        (#""denied_aaguids": ["yubikey"]"#, #"denied_aaguids: "yubikey" is not an AAGUID"#),
        (#""tokens": {"signing_key_rotation_days": -1}"#, "tokens.signing_key_rotation_days must be a whole number from 0 to 3650"),
        (#""tokens": {"refresh_token_retry_window": 301}"#, "tokens.refresh_token_retry_window must be a whole number from 0 to 300"),
        (#""tokens": {"refresh_token_retry_window": "30s"}"#, "tokens.refresh_token_retry_window must be a whole number from 0 to 300"),
        (#""clients": [{"client_id": "\u212Aiosk"}]"#, "client_id may hold only visible ASCII"),
        (#""clients": [{"client_id": "app\n"}]"#, "client_id may hold only visible ASCII"),
        (#""clients": [{"client_id": "app"}, {"client_id": "app"}]"#, #"client_id "app" is configured more than once"#),
    ])
    func refused(_ setting: String, _ message: String) throws {
        let file = try ConfigurationTests.write("""
            {"issuer": "https://auth.example.com", "relying_party": {"id": "example.com", "origins": ["https://example.com"]},
             "clients": [{"client_id": "mobile"}], \(setting)}
            """.replacingOccurrences(of: #""clients": [{"client_id": "mobile"}], "clients""#, with: #""clients""#))
        #expect { _ = try ConfigurationLoader.load(file: file, environment: [:]) } throws: { "\($0)".contains(message) }
    }

    @Test("every file the configuration names is read to a bound: a device that never ends, a file too large, a folder or text that is not UTF-8 is refused with its setting and path")
    func filesBounded() throws {
        #expect { _ = try ConfigurationLoader.load(file: "/dev/zero", environment: [:]) } throws: { "\($0)" == "configuration file /dev/zero is larger than 1 MiB" }
        #expect { _ = try ConfigurationLoader.load(file: NSTemporaryDirectory(), environment: [:]) } throws: { "\($0)".hasPrefix("cannot read configuration file ") }
        let password = Scratch.directory.appendingPathComponent("pw-\(UUID())").path
        try Data([0x70, 0xFF, 0x0A]).write(to: URL(fileURLWithPath: password))
        let file = try ConfigurationTests.write(ConfigurationTests.valid)
        #expect { _ = try ConfigurationLoader.load(file: file, environment: ["SIGNET_EMAIL_PASSWORD_FILE": password]) } throws: {
            "\($0)" == "email.password_file \(password) is not UTF-8 text"
        }
        var c = try ConfigurationLoader.load(file: file, environment: [:])
        c.trustAnchorFiles = ["/dev/zero"]
        #expect { _ = try SignetApp.trustAnchors(c) } throws: { "\($0)" == "trust anchor file /dev/zero is larger than 1 MiB" }
        // The key-encryption key's file: owner-only, and no longer than a key needs.
        let kek = Scratch.directory.appendingPathComponent("kek-\(UUID())").path
        try SecretFile.save(Data(repeating: 0x41, count: 4097), to: kek)
        #expect { _ = try KeyEncryptionKey.load(environment: [:], file: kek) } throws: { "\($0)" == "key-encryption key file \(kek) is larger than 4 KiB" }
    }
}
