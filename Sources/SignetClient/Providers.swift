public import Foundation
public import SignetAPI

/// Makes and uses passkeys on the device: AuthenticationServices on Apple platforms, a software
/// authenticator in tests. Throws `SignetError(.canceled)` when the user closes the sheet.
public protocol PasskeyProvider: Sendable {
    /// Creates a passkey from the server's creation options; returns the credential's `toJSON()`.
    func createPasskey(_ options: CreationOptionsJSON) async throws -> CredentialJSON
    /// Signs in with a passkey from the server's request options.
    func assertPasskey(_ options: RequestOptionsJSON) async throws -> CredentialJSON
    /// Creates a passkey without a sheet, where the system allows it (a conditional registration,
    /// WebAuthn L3 §5.1.3; iOS 18 and macOS 15 make one right after the user signed in another
    /// way, and tell them so), which may come without user presence; `nil` when it makes none.
    /// Providers that cannot have the default, which makes none.
    func createPasskeyConditionally(_ options: CreationOptionsJSON) async throws -> CredentialJSON?
    /// Waits for the user to pick a passkey among the keyboard's suggestions (AutoFill-assisted
    /// requests; conditional mediation, WebAuthn L3 §5.1.4) and returns its assertion; ends with
    /// `CancellationError` when the calling task is cancelled. `nil` at once from a provider
    /// that offers no AutoFill (the default).
    func assertPasskeyWithAutoFill(_ options: RequestOptionsJSON) async throws -> CredentialJSON?
}

extension PasskeyProvider {
    /// Makes none: the provider has no way to create a passkey without a sheet.
    public func createPasskeyConditionally(_ options: CreationOptionsJSON) async throws -> CredentialJSON? { nil }

    /// Offers none: the provider has no AutoFill.
    public func assertPasskeyWithAutoFill(_ options: RequestOptionsJSON) async throws -> CredentialJSON? { nil }
}

/// A device-bound P-256 key behind a biometric check: the Secure Enclave, Android Keystore, or a
/// software key in tests.
public protocol DeviceKeyStore: Sendable {
    /// Identifies this device to the server; stable across re-enrolments.
    var deviceID: String { get }
    /// `ios` or `android`.
    var platform: String { get }
    /// Makes a new key (replacing any old one) and returns its public key (SPKI DER or X9.63).
    func createKey() async throws -> Data
    /// Whether a usable key exists.
    func hasKey() async -> Bool
    /// Signs `challenge` (DER ECDSA P-256/SHA-256) after the biometric check, showing `reason`.
    /// Throws `.deviceKeyInvalidated` when the key can no longer be used, `.canceled` on cancel.
    func sign(_ challenge: Data, reason: String) async throws -> Data
    func deleteKey() async throws
}

/// What a signed-in app keeps.
public struct StoredSession: Codable, Sendable, Equatable {
    public var accessToken: String
    public var refreshToken: String?
    public var idToken: String?
    public var accessTokenExpiresAt: Date
    /// The server's ID of this device's enrolled key.
    public var deviceKeyID: String?
    /// That key's public key (SPKI DER or X9.63), for refresh proofs signed by it.
    public var deviceKeyPublicKey: Data?

    public init(accessToken: String, refreshToken: String?, idToken: String?, accessTokenExpiresAt: Date, deviceKeyID: String? = nil,
                deviceKeyPublicKey: Data? = nil) {
        self.deviceKeyPublicKey = deviceKeyPublicKey
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.deviceKeyID = deviceKeyID
    }
}

/// Keeps the session: the Keychain on Apple platforms, a file in tests and the CLI.
public protocol TokenStore: Sendable {
    func save(_ session: StoredSession) throws
    func load() throws -> StoredSession?
    func clear() throws
}
