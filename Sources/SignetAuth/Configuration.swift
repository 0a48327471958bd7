import Foundation
import SignetCrypto
public import SignetWebAuthn

/// An app allowed to use Signet: its OAuth client and, for native apps, the platform identity
/// that the association files and Android origins are made from.
public struct ClientConfiguration: Sendable, Equatable {
    public struct IOSApp: Sendable, Equatable {
        public var teamID: String
        public var bundleID: String
        public init(teamID: String, bundleID: String) {
            self.teamID = teamID
            self.bundleID = bundleID
        }
        /// `TEAMID.bundle.id`, as apple-app-site-association lists it.
        public var appID: String { "\(teamID).\(bundleID)" }
    }

    public struct AndroidApp: Sendable, Equatable {
        public var packageName: String
        /// SHA-256 fingerprints of the signing certificates, as 32 bytes each.
        public var fingerprints: [[UInt8]]
        public init(packageName: String, fingerprints: [[UInt8]]) {
            self.packageName = packageName
            self.fingerprints = fingerprints
        }
    }

    public var id: String
    public var grants: [String]
    public var iosApps: [IOSApp] = []
    public var androidApps: [AndroidApp] = []

    public init(id: String, grants: [String], iosApps: [IOSApp] = [], androidApps: [AndroidApp] = []) {
        self.id = id
        self.grants = grants
        self.iosApps = iosApps
        self.androidApps = androidApps
    }
}

/// Everything `signet serve` runs with, validated. Built by ``ConfigurationLoader``.
public struct ServerConfiguration: Sendable {
    public var issuer: String
    public var listenHost = "127.0.0.1"
    public var listenPort: UInt16 = 8080
    /// `sqlite:PATH` or `postgres://...`.
    public var database = "sqlite:signet.db"
    /// Where the key-encryption key lives when `SIGNET_KEK` does not give it.
    public var keyEncryptionKeyFile = "signet.kek"
    public var rpID = "localhost"
    public var rpName = "Signet"
    /// Web origins as configured; ``allowedOrigins`` adds the Android ones.
    public var webOrigins: [String] = []
    public var clients: [ClientConfiguration] = []
    public var audiences: [String] = []
    public var accessTokenLifetime = 900
    public var idTokenLifetime = 3600
    public var refreshTokenLifetime = 30 * 86400
    /// Seconds an auth session (and the options' timeout) lasts.
    public var sessionTimeout = 300
    public var userVerification = "preferred"
    public var attestation = "none"
    public var residentKey = "required"
    public var algorithms: [COSEAlgorithm] = [.es256, .eddsa, .rs256]
    public var trustAnchorFiles: [String] = []
    /// HTTP worker threads; `nil` picks ``workerThreads``'s default.
    public var threads: Int?
    public var maxBodyBytes = 64 * 1024
    public var requestDeadline = 30.0
    public var idleTimeout = 15
    public var maxConnections = 4096
    public var maxConnectionsPerIP = 1024

    /// `threads`, or by default one per processor with SQLite (a request never waits for the
    /// disk, so more threads would only take turns at the store's lock) and four per processor
    /// with PostgreSQL (a worker waits for each query's round trip).
    public var workerThreads: Int {
        let processors = ProcessInfo.processInfo.activeProcessorCount
        return threads ?? (database.hasPrefix("sqlite:") ? max(2, processors) : 4 * processors)
    }
    public var connectionMemoryBytes = 16 * 1024
    public var accessLog = true
    /// Seconds an action challenge lives, and an action token.
    public var actionChallengeLifetime = 120
    public var actionTokenLifetime = 300
    /// The `aud` of action tokens; the issuer + "/actions" when unset.
    public var actionAudience: String?
    /// Action challenges an account may ask for per minute.
    public var actionRateLimit = 10
    /// Live device keys per account.
    public var maxDeviceKeys = 10
    /// True when no configuration file was given.
    public var developmentMode = false

    public init(issuer: String) { self.issuer = issuer }

    /// The origin `android:apk-key-hash:<base64url(sha256(cert))>` for a certificate fingerprint
    /// (WebAuthn on Android identifies an app this way).
    public static func androidOrigin(fingerprint: [UInt8]) -> String { "android:apk-key-hash:" + Base64URL.encode(fingerprint) }

    /// Web origins plus one Android origin per configured fingerprint, matched exactly.
    public var allowedOrigins: Set<String> {
        var origins = Set(webOrigins)
        for client in clients {
            for app in client.androidApps {
                for fingerprint in app.fingerprints { origins.insert(Self.androidOrigin(fingerprint: fingerprint)) }
            }
        }
        return origins
    }

    public func client(_ id: String) -> ClientConfiguration? { clients.first { $0.id == id } }

    /// The development configuration: everything on this machine, one public client `dev`.
    public static func development(host: String = "127.0.0.1", port: UInt16 = 8080, database: String? = nil) -> ServerConfiguration {
        var c = ServerConfiguration(issuer: "http://localhost:\(port)")
        c.listenHost = host
        c.listenPort = port
        c.database = database ?? "sqlite:signet.db"
        c.webOrigins = ["http://localhost:\(port)"]
        c.clients = [ClientConfiguration(id: "dev", grants: [GrantNames.webauthn, GrantNames.refreshToken])]
        c.audiences = ["http://localhost:\(port)/api"]
        c.developmentMode = true
        return c
    }
}

/// Grant names used in client configuration.
public enum GrantNames {
    public static let webauthn = "urn:okta:params:oauth:grant-type:webauthn"
    public static let refreshToken = "refresh_token"
    public static let all = [webauthn, refreshToken]
}

/// A configuration problem, stated so that an operator can fix it.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Parses a keytool-style fingerprint (`AB:CD:...`, or plain hex) into its 32 bytes.
public func parseFingerprint(_ text: String) -> [UInt8]? {
    let hex = text.replacingOccurrences(of: ":", with: "").replacingOccurrences(of: " ", with: "")
    guard hex.count == 64 else { return nil }
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
        bytes.append(byte)
        index = next
    }
    return bytes
}
