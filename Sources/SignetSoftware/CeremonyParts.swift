public import SignetCrypto
public import SignetWebAuthn

/// The members of `clientDataJSON` (WebAuthn L3 §5.8.1), serialized in the spec's order.
public struct ClientDataFields: Sendable {
    public var type: String
    /// The challenge as it is written into the JSON (base64url).
    public var challenge: String
    public var origin: String
    public var crossOrigin: Bool?
    public var topOrigin: String?
    /// Further members, appended after the standard ones.
    public var extra: [(String, JSONValue)] = []
    /// Raw bytes to send instead of the serialization, when set.
    public var replacement: [UInt8]?

    public init(type: String, challenge: [UInt8], origin: String) {
        self.type = type
        self.challenge = Base64URL.encode(challenge)
        self.origin = origin
    }

    /// The JSON bytes (§5.8.1.1 serialization order: type, challenge, origin, crossOrigin, topOrigin).
    public var bytes: [UInt8] {
        if let replacement { return replacement }
        var members: [(String, JSONValue)] = [("type", .string(type)), ("challenge", .string(challenge)), ("origin", .string(origin))]
        if let crossOrigin { members.append(("crossOrigin", .bool(crossOrigin))) }
        if let topOrigin { members.append(("topOrigin", .string(topOrigin))) }
        members += extra
        let body = members.map { JSONValue.string($0.0).serialized + ":" + $0.1.serialized }.joined(separator: ",")
        return Array(("{" + body + "}").utf8)
    }
}

/// The fields of authenticator data (WebAuthn L3 §6.1), serialized on demand.
public struct AuthenticatorDataFields: Sendable {
    public var rpIdHash: [UInt8]
    public var flags: AuthenticatorData.Flags
    public var signCount: UInt32
    public var aaguid: [UInt8]?
    public var credentialID: [UInt8]?
    public var credentialPublicKey: [UInt8]?
    /// Encoded CBOR map of extension outputs (ED is set by the caller).
    public var extensions: [UInt8]?
    /// Bytes appended after everything else.
    public var trailing: [UInt8] = []

    public init(rpIdHash: [UInt8], flags: AuthenticatorData.Flags, signCount: UInt32) {
        self.rpIdHash = rpIdHash
        self.flags = flags
        self.signCount = signCount
    }

    public var bytes: [UInt8] {
        var out = rpIdHash + [flags.rawValue] + withUnsafeBytes(of: signCount.bigEndian, Array.init)
        if let aaguid, let credentialID, let credentialPublicKey {
            out += aaguid + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xff)] + credentialID + credentialPublicKey
        }
        if let extensions { out += extensions }
        return out + trailing
    }
}

/// What an attestation statement is made from.
public struct AttestationInput: Sendable {
    public let authenticatorData: [UInt8]
    public let clientDataHash: [UInt8]
    public let credentialKey: PrivateKey
    public let algorithm: COSEAlgorithm
    public let credentialID: [UInt8]
}

/// Makes `(fmt, attStmt)` for a new credential.
public typealias AttestationMaker = @Sendable (AttestationInput) throws -> (String, CBORMap)

/// Changes made to a ceremony before (and after) it is signed: each test breaks exactly one thing.
public struct Tamper: Sendable {
    public var clientData: @Sendable (inout ClientDataFields) -> Void = { _ in }
    public var authenticatorData: @Sendable (inout AuthenticatorDataFields) -> Void = { _ in }
    /// Applied to the finished signature (assertions) or attestation object (registrations).
    public var signature: @Sendable (inout [UInt8]) -> Void = { _ in }
    public var attestationObject: @Sendable (inout [UInt8]) -> Void = { _ in }
    public var attestation: AttestationMaker?
    /// Signs with this key instead of the credential's (assertions).
    public var signingKey: PrivateKey?

    public init() {}

    public static let none = Tamper()
}
