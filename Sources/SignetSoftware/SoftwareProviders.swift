public import Foundation
public import SignetAPI
public import SignetClient
import SignetCrypto
import SignetWebAuthn

/// A ``PasskeyProvider`` on the software authenticator, acting as a browser or phone at `origin`.
public final class SoftwarePasskeyProvider: PasskeyProvider, @unchecked Sendable {
    public let authenticator: SoftwareAuthenticator
    public let origin: String
    private let lock = NSLock()
    private var cancelNext = false

    public init(authenticator: SoftwareAuthenticator, origin: String) {
        self.authenticator = authenticator
        self.origin = origin
    }

    /// The next request behaves as if the user closed the system sheet.
    public func cancelNextRequest() {
        lock.lock()
        cancelNext = true
        lock.unlock()
    }

    private func checkCanceled() throws {
        let cancel = lock.withLock {
            defer { cancelNext = false }
            return cancelNext
        }
        if cancel { throw SignetError(.canceled, "the user canceled") }
    }

    static func bytes(_ text: String) throws -> [UInt8] {
        guard let bytes = Base64URL.decode(text) else { throw SignetError(.invalidResponse, "options hold invalid base64url") }
        return bytes
    }

    public func createPasskey(_ options: CreationOptionsJSON) async throws -> CredentialJSON {
        try checkCanceled()
        return try register(options, tamper: .none)
    }

    /// As a system's conditional registration makes it: no sheet, no user presence (UP clear).
    public func createPasskeyConditionally(_ options: CreationOptionsJSON) async throws -> CredentialJSON? {
        var noGesture = Tamper()
        noGesture.authenticatorData = { $0.flags.remove(.userPresent) }
        return try register(options, tamper: noGesture)
    }

    private func register(_ options: CreationOptionsJSON, tamper: Tamper) throws -> CredentialJSON {
        let supported = options.pubKeyCredParams.map { COSEAlgorithm(rawValue: $0.alg) }.first { $0.keyKind != nil } ?? .es256
        do {
            let made = try authenticator.register(
                rpID: options.rp.id, origin: origin, challenge: try Self.bytes(options.challenge), userHandle: try Self.bytes(options.user.id),
                userName: options.user.name, algorithm: supported,
                excludeCredentials: try (options.excludeCredentials ?? []).map { try Self.bytes($0.id) }, tamper: tamper)
            let id = Base64URL.encode(made.credentialID)
            return CredentialJSON(id: id, rawId: id, authenticatorAttachment: "platform", response: AuthenticatorResponseJSON(
                clientDataJSON: Base64URL.encode(made.clientDataJSON), attestationObject: Base64URL.encode(made.attestationObject),
                transports: ["internal", "hybrid"]))
        } catch let refusal as SoftwareAuthenticator.Refusal {
            throw SignetError(.credentialExcluded, refusal.message)
        }
    }

    /// As a keyboard's suggestions behave: the newest passkey for the RP is picked as soon as the
    /// authenticator has one (looked for every 50 ms), until the calling task is cancelled.
    public func assertPasskeyWithAutoFill(_ options: RequestOptionsJSON) async throws -> CredentialJSON? {
        while true {
            do {
                return try await assertPasskey(options)
            } catch let error as SignetError where error.code == .noCredential {
                try await Task.sleep(nanoseconds: 50_000_000)
            }
        }
    }

    public func assertPasskey(_ options: RequestOptionsJSON) async throws -> CredentialJSON {
        try checkCanceled()
        let rpID = options.rpId ?? URL(string: origin)?.host ?? ""
        do {
            let made = try authenticator.authenticate(
                rpID: rpID, origin: origin, challenge: try Self.bytes(options.challenge),
                allowCredentials: try (options.allowCredentials ?? []).map { try Self.bytes($0.id) })
            let id = Base64URL.encode(made.credentialID)
            return CredentialJSON(id: id, rawId: id, authenticatorAttachment: "platform", response: AuthenticatorResponseJSON(
                clientDataJSON: Base64URL.encode(made.clientDataJSON), authenticatorData: Base64URL.encode(made.authenticatorData),
                signature: Base64URL.encode(made.signature), userHandle: made.userHandle.map { Base64URL.encode($0) }))
        } catch is SoftwareAuthenticator.Refusal {
            throw SignetError(.noCredential, "no passkey for \(rpID) on this device")
        }
    }
}

/// A ``DeviceKeyStore`` on a software P-256 key. ``invalidate()`` does what re-enrolling Face ID
/// does to a `.biometryCurrentSet` key: the key stays but can no longer sign.
public final class SoftwareDeviceKeyStore: DeviceKeyStore, @unchecked Sendable {
    public let deviceID: String
    public let platform: String
    private let lock = NSLock()
    private var key: SoftwareDeviceKey?
    private var invalidated = false

    public init(deviceID: String, platform: String = "ios", privateKeyDER: [UInt8]? = nil) throws {
        self.deviceID = deviceID
        self.platform = platform
        key = try privateKeyDER.map { try SoftwareDeviceKey(deviceID: deviceID, privateKeyDER: $0) }
    }

    /// The key's DER, for a state file (secret).
    public var privateKeyDER: [UInt8]? {
        lock.lock()
        defer { lock.unlock() }
        return key?.privateKeyDER
    }

    /// Simulates a biometric-set change: signing now fails with `.deviceKeyInvalidated`.
    public func invalidate() {
        lock.lock()
        invalidated = true
        lock.unlock()
    }

    public func createKey() async throws -> Data {
        let fresh = try SoftwareDeviceKey(deviceID: deviceID)
        lock.withLock {
            key = fresh
            invalidated = false
        }
        return Data(fresh.publicKeySPKI)
    }

    public func hasKey() async -> Bool { lock.withLock { key != nil } }

    public func sign(_ challenge: Data, reason: String) async throws -> Data {
        let (current, broken) = lock.withLock { (key, invalidated) }
        guard let current, !broken else { throw SignetError(.deviceKeyInvalidated, "the device key can no longer be used; enrol again") }
        return Data(try current.sign([UInt8](challenge)))
    }

    public func deleteKey() async throws { lock.withLock { key = nil } }
}

/// A ``TokenStore`` in a file readable by its owner only.
public final class FileTokenStore: TokenStore, @unchecked Sendable {
    public let url: URL
    private let lock = NSLock()

    public init(url: URL) { self.url = url }

    public func save(_ session: StoredSession) throws {
        lock.lock()
        defer { lock.unlock() }
        try SecretFile.save(try JSONEncoder().encode(session), to: url.path)
    }

    public func load() throws -> StoredSession? {
        lock.lock()
        defer { lock.unlock() }
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return try JSONDecoder().decode(StoredSession.self, from: data)
    }

    public func clear() throws {
        lock.lock()
        defer { lock.unlock() }
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
    }
}

/// The SDK's ``DPoPKeyStore`` over a software key, for tests and the CLI.
public final class SoftwareDPoPKeyStore: DPoPKeyStore, @unchecked Sendable {
    public let key: SoftwareDPoPKey
    public init(_ key: SoftwareDPoPKey) { self.key = key }
    public var algorithm: String { key.algorithm }
    public func publicJWK() async throws -> [JWKMember] { key.jwk.map { JWKMember($0.0, $0.1) } }
    public func sign(_ message: Data) async throws -> Data { Data(try key.signDER(Array(message))) }
}
