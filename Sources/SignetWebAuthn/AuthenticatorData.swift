/// Authenticator data (WebAuthn L3 §6.1): what the authenticator signed about itself.
public struct AuthenticatorData: Sendable {
    /// The flags byte (§6.1, "flags").
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// User Present.
        public static let userPresent = Flags(rawValue: 0x01)
        /// User Verified.
        public static let userVerified = Flags(rawValue: 0x04)
        /// Backup Eligibility.
        public static let backupEligible = Flags(rawValue: 0x08)
        /// Backup State.
        public static let backupState = Flags(rawValue: 0x10)
        /// Attested credential data included.
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        /// Extension data included.
        public static let extensionData = Flags(rawValue: 0x80)
    }

    /// Attested credential data (§6.5.2).
    public struct AttestedCredential: Sendable {
        public let aaguid: [UInt8]
        public let credentialID: [UInt8]
        /// The credential public key, as its COSE_Key bytes.
        public let publicKeyBytes: [UInt8]
    }

    /// The bytes exactly as received; signatures are checked over these.
    public let raw: [UInt8]
    public let rpIdHash: ArraySlice<UInt8>
    public let flags: Flags
    public let signCount: UInt32
    public let attestedCredential: AttestedCredential?
    /// Authenticator extension outputs (a CBOR map) when ED is set.
    public let extensions: CBORMap?

    /// Longest credential ID a relying party accepts (§7.1 step "credentialId length").
    public static let maxCredentialIDLength = 1023

    /// Parses authenticator data; every byte must be accounted for.
    public init(_ bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count >= 37 else { throw .malformed("authenticator data shorter than 37 bytes", step: "6.1") }
        guard bytes.count <= 64 * 1024 else { throw .malformed("authenticator data too large", step: "6.1") }
        raw = bytes
        rpIdHash = bytes[0..<32]
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var rest = bytes[37...]
        if flags.contains(.attestedCredentialData) {
            guard rest.count >= 18 else { throw .malformed("attested credential data truncated", step: "6.5.2") }
            let aaguid = Array(rest.prefix(16))
            let length = Int(rest[rest.startIndex + 16]) << 8 | Int(rest[rest.startIndex + 17])
            rest = rest.dropFirst(18)
            guard rest.count >= length else { throw .malformed("credential ID truncated", step: "6.5.2") }
            let credentialID = Array(rest.prefix(length))
            rest = rest.dropFirst(length)
            let (key, after) = try CBORDecoder(maxDepth: 2, maxLength: 64 * 1024).decodePrefix(rest)
            guard key.map != nil else { throw .malformed("credential public key is not a CBOR map", step: "6.5.2") }
            let keyBytes = Array(rest[rest.startIndex..<after.startIndex])
            rest = after
            attestedCredential = AttestedCredential(aaguid: aaguid, credentialID: credentialID, publicKeyBytes: keyBytes)
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensionData) {
            guard let map = try CBORDecoder(maxDepth: 8).decode(rest).map else {
                throw .malformed("extensions are not a CBOR map", step: "6.1")
            }
            extensions = map
        } else {
            guard rest.isEmpty else { throw .malformed("\(rest.count) trailing bytes after authenticator data", step: "6.1") }
            extensions = nil
        }
    }

    public var userPresent: Bool { flags.contains(.userPresent) }
    public var userVerified: Bool { flags.contains(.userVerified) }
    public var backupEligible: Bool { flags.contains(.backupEligible) }
    public var backupState: Bool { flags.contains(.backupState) }
}
