public import Foundation
import SignetCrypto
public import SignetWebAuthn

/// A software WebAuthn authenticator: it makes and uses real credentials with OpenSSL keys,
/// producing exactly the bytes a platform authenticator would. Behaviour (UV, backup flags,
/// counter, attestation) is configurable; by default it acts like a synced passkey provider.
/// For tests and demos only: its keys live in memory or in a plain file.
public final class SoftwareAuthenticator: @unchecked Sendable {
    /// How the authenticator behaves.
    public struct Settings: Codable, Sendable {
        public var userVerification = true
        public var backupEligible = true
        public var backupState = true
        /// Keep a per-credential signature counter; synced passkeys send 0 always.
        public var counter = false
        /// `none` or `packed` (self attestation).
        public var attestation = "none"
        public var aaguid: [UInt8] = Array(repeating: 0, count: 16)
        public init() {}
    }

    /// A credential the authenticator holds (a discoverable credential: it keeps the user handle).
    public struct Credential: Codable, Sendable {
        public let id: [UInt8]
        public let rpID: String
        public let userHandle: [UInt8]
        public let userName: String
        public let algorithm: COSEAlgorithm
        /// DER private key; secret.
        let privateKey: [UInt8]
        public internal(set) var signCount: UInt32
    }

    public var settings: Settings
    public private(set) var credentials: [Credential] = []
    private let lock = NSLock()
    /// Parsed private keys by credential ID: decoding DER costs more than signing.
    private var keys: [[UInt8]: PrivateKey] = [:]

    public init(settings: Settings = Settings()) { self.settings = settings }

    private struct State: Codable {
        var settings: Settings
        var credentials: [Credential]
    }

    /// Loads an authenticator from a state file written by ``save(to:)``.
    public convenience init(contentsOf url: URL) throws {
        let state = try JSONDecoder().decode(State.self, from: Data(contentsOf: url))
        self.init(settings: state.settings)
        credentials = state.credentials
    }

    /// The authenticator's state (keys included) as JSON; secret.
    public func stateData() throws -> Data {
        lock.lock()
        let state = State(settings: settings, credentials: credentials)
        lock.unlock()
        return try JSONEncoder().encode(state)
    }

    /// An authenticator from ``stateData()``.
    public convenience init(stateData: Data) throws {
        let state = try JSONDecoder().decode(State.self, from: stateData)
        self.init(settings: state.settings)
        credentials = state.credentials
    }

    /// Writes the authenticator's state (keys included) to `url`, readable by its owner only.
    public func save(to url: URL) throws {
        lock.lock()
        let state = State(settings: settings, credentials: credentials)
        lock.unlock()
        try SecretFile.save(try JSONEncoder().encode(state), to: url.path)
    }

    /// A registration response (`PublicKeyCredential` with an `AuthenticatorAttestationResponse`).
    public struct RegistrationResponse: Sendable {
        public let credentialID: [UInt8]
        public let clientDataJSON: [UInt8]
        public let attestationObject: [UInt8]
        public let authenticatorData: [UInt8]
        public let publicKeyAlgorithm: COSEAlgorithm

        /// `RegistrationResponseJSON` (WebAuthn L3 §5.1, `toJSON()`).
        public var json: JSONValue {
            let id = Base64URL.encode(credentialID)
            return .object([
                "id": .string(id), "rawId": .string(id), "type": .string("public-key"),
                "authenticatorAttachment": .string("platform"), "clientExtensionResults": .object(["credProps": .object(["rk": .bool(true)])]),
                "response": .object([
                    "clientDataJSON": .string(Base64URL.encode(clientDataJSON)),
                    "attestationObject": .string(Base64URL.encode(attestationObject)),
                    "authenticatorData": .string(Base64URL.encode(authenticatorData)),
                    "publicKeyAlgorithm": .int(publicKeyAlgorithm.rawValue),
                    "transports": .array([.string("internal"), .string("hybrid")]),
                ]),
            ])
        }
    }

    /// An authentication response (`PublicKeyCredential` with an `AuthenticatorAssertionResponse`).
    public struct AssertionResponse: Sendable {
        public let credentialID: [UInt8]
        public let clientDataJSON: [UInt8]
        public let authenticatorData: [UInt8]
        public let signature: [UInt8]
        public let userHandle: [UInt8]?

        /// `AuthenticationResponseJSON` (WebAuthn L3 §5.1, `toJSON()`).
        public var json: JSONValue {
            let id = Base64URL.encode(credentialID)
            var response: JSONObject = [
                "clientDataJSON": .string(Base64URL.encode(clientDataJSON)),
                "authenticatorData": .string(Base64URL.encode(authenticatorData)),
                "signature": .string(Base64URL.encode(signature)),
            ]
            if let userHandle { response["userHandle"] = .string(Base64URL.encode(userHandle)) }
            return .object([
                "id": .string(id), "rawId": .string(id), "type": .string("public-key"),
                "authenticatorAttachment": .string("platform"), "clientExtensionResults": .object([:]), "response": .object(response),
            ])
        }
    }

    /// Errors a real authenticator would report (`InvalidStateError`, `NotAllowedError`).
    public struct Refusal: Error, Sendable, Equatable {
        public let name: String
        public let message: String
    }

    private var baseFlags: AuthenticatorData.Flags {
        var flags: AuthenticatorData.Flags = [.userPresent]
        if settings.userVerification { flags.insert(.userVerified) }
        if settings.backupEligible { flags.insert(.backupEligible) }
        if settings.backupEligible && settings.backupState { flags.insert(.backupState) }
        return flags
    }

    /// `authenticatorMakeCredential` plus the client's part of `navigator.credentials.create()`.
    public func register(
        rpID: String, origin: String, challenge: [UInt8], userHandle: [UInt8], userName: String,
        algorithm: COSEAlgorithm = .es256, excludeCredentials: [[UInt8]] = [], tamper: Tamper = .none
    ) throws -> RegistrationResponse {
        if credentials.contains(where: { $0.rpID == rpID && excludeCredentials.contains($0.id) }) {
            throw Refusal(name: "InvalidStateError", message: "a credential in excludeCredentials is already on this authenticator")
        }
        guard let kind = algorithm.keyKind else { throw Refusal(name: "NotSupportedError", message: "algorithm \(algorithm)") }
        let key = try PrivateKey.generate(kind)
        let credentialID = SecureRandom.bytes(32)
        var client = ClientDataFields(type: "webauthn.create", challenge: challenge, origin: origin)
        tamper.clientData(&client)
        let clientDataJSON = client.bytes
        var auth = AuthenticatorDataFields(rpIdHash: Digest.sha256.hash(Array(rpID.utf8)), flags: baseFlags.union(.attestedCredentialData), signCount: 0)
        auth.aaguid = settings.aaguid
        auth.credentialID = credentialID
        auth.credentialPublicKey = key.publicKey.coseKey(algorithm: algorithm)
        tamper.authenticatorData(&auth)
        let authData = auth.bytes
        let input = AttestationInput(
            authenticatorData: authData, clientDataHash: Digest.sha256.hash(clientDataJSON), credentialKey: key,
            algorithm: algorithm, credentialID: credentialID)
        let (format, statement): (String, CBORMap)
        if let maker = tamper.attestation {
            (format, statement) = try maker(input)
        } else if settings.attestation == "packed" {
            let sig = try key.sign(input.authenticatorData + input.clientDataHash, scheme: algorithm.scheme!)
            (format, statement) = ("packed", CBORMap([(.text("alg"), .int(algorithm.rawValue)), (.text("sig"), .bytes(sig))]))
        } else {
            (format, statement) = ("none", CBORMap([]))
        }
        var attestationObject = CBOREncoder.encode(.map(CBORMap([
            (.text("fmt"), .text(format)), (.text("attStmt"), .map(statement)), (.text("authData"), .bytes(authData)),
        ])))
        tamper.attestationObject(&attestationObject)
        lock.lock()
        credentials.append(Credential(
            id: credentialID, rpID: rpID, userHandle: userHandle, userName: userName, algorithm: algorithm,
            privateKey: key.der, signCount: 0))
        keys[credentialID] = key
        lock.unlock()
        return RegistrationResponse(
            credentialID: credentialID, clientDataJSON: clientDataJSON, attestationObject: attestationObject,
            authenticatorData: authData, publicKeyAlgorithm: algorithm)
    }

    /// `authenticatorGetAssertion` plus the client's part of `navigator.credentials.get()`.
    /// With an empty `allowCredentials` it picks a discoverable credential for the RP (the newest).
    public func authenticate(
        rpID: String, origin: String, challenge: [UInt8], allowCredentials: [[UInt8]] = [], tamper: Tamper = .none
    ) throws -> AssertionResponse {
        lock.lock()
        let index = credentials.lastIndex { $0.rpID == rpID && (allowCredentials.isEmpty || allowCredentials.contains($0.id)) }
        guard let index else {
            lock.unlock()
            throw Refusal(name: "NotAllowedError", message: "no credential for \(rpID) on this authenticator")
        }
        if settings.counter { credentials[index].signCount += 1 }
        let credential = credentials[index]
        lock.unlock()
        var client = ClientDataFields(type: "webauthn.get", challenge: challenge, origin: origin)
        tamper.clientData(&client)
        let clientDataJSON = client.bytes
        var auth = AuthenticatorDataFields(
            rpIdHash: Digest.sha256.hash(Array(rpID.utf8)), flags: baseFlags, signCount: credential.signCount)
        tamper.authenticatorData(&auth)
        let authData = auth.bytes
        let key = try tamper.signingKey ?? privateKey(credential)
        var signature = try key.sign(authData + Digest.sha256.hash(clientDataJSON), scheme: credential.algorithm.scheme!)
        tamper.signature(&signature)
        return AssertionResponse(
            credentialID: credential.id, clientDataJSON: clientDataJSON, authenticatorData: authData, signature: signature,
            userHandle: credential.userHandle)
    }

    private func privateKey(_ credential: Credential) throws -> PrivateKey {
        lock.lock()
        defer { lock.unlock() }
        if let key = keys[credential.id] { return key }
        let key = try PrivateKey(der: credential.privateKey)
        keys[credential.id] = key
        return key
    }

    /// Forgets every credential for `rpID` with the given ID (a user deleting a passkey).
    public func remove(credentialID: [UInt8]) {
        lock.lock()
        defer { lock.unlock() }
        credentials.removeAll { $0.id == credentialID }
    }
}
