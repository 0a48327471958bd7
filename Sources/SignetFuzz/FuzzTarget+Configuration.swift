import Foundation
import SignetAuth
import SignetServer
import SignetWebAuthn

/// The fuzz check of `signet.json` and its `SIGNET_` environment, as `signet serve` loads them.
extension FuzzTarget {
    /// Settings that name a file the loader reads: taken out, so that an input never waits on
    /// a terminal or a FIFO (the reads themselves are bounded and tested apart).
    static let fileSettings: [(String, String)] = [("branding", "logo_file"), ("email", "password_file")]

    static func checkConfiguration(_ body: [UInt8]) {
        var contents = body
        if var tree = (try? ConfigurationLoader.json.parse(body))?.object {
            let named = fileSettings.filter { tree[$0.0]?.object?[$0.1] != nil }
            for (group, key) in named {
                var settings = tree[group]?.object ?? [:]
                settings[key] = nil
                tree[group] = .object(settings)
            }
            if !named.isEmpty { contents = JSONValue.object(tree).serializedBytes }
        }
        let first = outcome(contents: contents, environment: [:])
        // The same input loads the same way twice.
        precondition(outcome(contents: contents, environment: [:]) == first, "a configuration loaded two ways")
        guard case .loaded = first, let tree = (try? ConfigurationLoader.json.parse(contents))?.object else { return }
        // What the file says, the environment says too: each setting as its JSON text in its
        // SIGNET_ variable, over an empty file, loads to the same configuration.
        var environment: [String: String] = [:]
        for path in ConfigurationLoader.settings {
            guard let value = path.reduce(Optional(JSONValue.object(tree)), { $0?[$1] }) else { continue }
            environment[ConfigurationLoader.environmentName(path)] = value.serialized
        }
        let fromEnvironment = outcome(contents: Array("{}".utf8), environment: environment)
        precondition(fromEnvironment == first, "the environment read otherwise than the file: \(fromEnvironment) against \(first)")
    }

    enum ConfigurationOutcome: Equatable, CustomStringConvertible {
        case loaded([String])
        case refused(String)

        var description: String {
            switch self {
            case .loaded(let summary): "loaded \(summary)"
            case .refused(let message): "refused: \(message)"
            }
        }
    }

    /// A configuration loaded (what it says, as text) or the message that refused it, which must
    /// be a `ConfigurationError`'s.
    static func outcome(contents: [UInt8], environment: [String: String]) -> ConfigurationOutcome {
        do {
            let c = try ConfigurationLoader.load(contents: contents, named: "signet.json", environment: environment)
            return .loaded(summary(c))
        } catch let error as ConfigurationError {
            precondition(!error.message.isEmpty, "a refusal that says nothing")
            return .refused(error.message)
        } catch {
            preconditionFailure("a configuration refused with \(type(of: error)), not a ConfigurationError")
        }
    }

    static func summary(_ c: ServerConfiguration) -> [String] {
        var lines = [
            c.issuer, "\(c.listenHost) \(c.listenPort)", c.database, c.keyEncryptionKeyFile, c.rpID, c.rpName,
            c.webOrigins.joined(separator: " "), c.relatedOrigins.joined(separator: " "), c.allowedOrigins.sorted().joined(separator: " "),
            "\(c.webSessionIdle) \(c.webSessionLifetime) \(c.authorizationCodeLifetime) \(c.requirePushedRequests)",
            c.audiences.joined(separator: " "), "\(c.signUp) \(c.signUpDomains)",
            "\(c.accessTokenLifetime) \(c.idTokenLifetime) \(c.refreshTokenLifetime) \(c.refreshTokenAbsoluteLifetime) \(c.refreshTokenRetryWindow)",
            "\(c.signingKeyRotationDays) \(c.stepUpMaxAge) \(c.auditRetentionDays) \(c.logStreamHoldDays)",
            "\(c.backupDirectory ?? "-") \(c.backupIntervalHours) \(c.backupKeep) \(c.backupSeal) \(c.durability)",
            "\(c.sessionTimeout) \(c.userVerification) \(c.attestation) \(c.residentKey) \(c.algorithms.map(\.rawValue))",
            c.trustAnchorFiles.joined(separator: " "), c.allowedAAGUIDs.sorted().joined(separator: " "), c.deniedAAGUIDs.sorted().joined(separator: " "),
            "\(c.threads ?? 0) \(c.maxBodyBytes) \(c.requestDeadline) \(c.idleTimeout) \(c.maxConnections) \(c.maxConnectionsPerIP) \(c.accessLog)",
            "\(c.actionChallengeLifetime) \(c.actionTokenLifetime) \(c.actionAudience ?? "-") \(c.actionRateLimit) \(c.maxDeviceKeys)",
            "\(c.dpopNonce) \(c.dpopProofsPerMinute) \(c.metricsListen.map { "\($0.host):\($0.port)" } ?? "-") \(c.recoveryHold) \(c.developmentMode)",
            "\(c.email.smtpURL ?? "-") \(c.email.from ?? "-") \(c.email.username ?? "-") \(c.email.retryDelay) \(c.email.maxRetryDelay) \(c.email.maxDeliveries)",
            "\(c.rolesClaim ?? "-") \(c.appMetadataClaims.count) \(c.apiPermissions.keys.sorted()) \(c.apiTokenLifetimes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })",
        ]
        for client in c.clients {
            lines.append("client \(client.id) \(client.grants) \(client.scopes) \(client.redirectURIs) \(client.allowedOrigins) \(client.dpop) "
                         + "\(client.secretHash?.count ?? 0) \(client.jwks.count) \(client.iosApps.map(\.appID)) \(client.androidApps.map(\.packageName))")
        }
        return lines
    }
}
