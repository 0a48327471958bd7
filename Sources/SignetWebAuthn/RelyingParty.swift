public import SignetCrypto
public import Foundation

/// A relying party's fixed policy: who it is, which origins may speak for it, which algorithms
/// and attestation roots it accepts. Verifications are methods on it; it holds no per-request
/// state and reads no clock (WebAuthn L3 §7).
public struct RelyingParty: Sendable {
    /// The RP ID (§5.1.2), a registrable domain such as `example.com`.
    public let id: String
    /// Human-readable name for creation options.
    public var name: String
    /// Origins accepted in `clientDataJSON.origin`, matched exactly (§13.4.9): web origins
    /// and `android:apk-key-hash:` origins.
    public var origins: Set<String>
    /// Whether ceremonies inside a cross-origin iframe are expected (§7.1 step 10, §7.2 step 14).
    public var allowCrossOrigin = false
    /// Top-level origins accepted in `clientDataJSON.topOrigin`.
    public var topOrigins: Set<String> = []
    /// Credential algorithms accepted at registration (§7.1 step 19).
    public var allowedAlgorithms: [COSEAlgorithm] = [.es256, .eddsa, .ed25519, .rs256]
    /// Attestation roots; a chain that reaches one is `trusted` (§7.1 steps 23–24).
    public var trustAnchors: [Certificate] = []
    /// android-safetynet: longest accepted age of `timestampMs`, and whether `ctsProfileMatch` is required.
    public var safetyNetMaxAge: TimeInterval = 60
    public var safetyNetRequireCTSProfile = true
    /// android-key: accept only `teeEnforced` authorizations (else the union with `softwareEnforced`).
    public var androidKeyRequireTEE = false
    /// Parsed credential keys, shared by every verification.
    public let keyCache: COSEKeyCache

    /// SHA-256 of the RP ID, as authenticator data carries it.
    public let idHash: [UInt8]

    public init(id: String, name: String? = nil, origins: Set<String>, keyCache: COSEKeyCache = COSEKeyCache(capacity: 10_000)) {
        self.id = id
        self.name = name ?? id
        self.origins = origins
        self.keyCache = keyCache
        idHash = Digest.sha256.hash(Array(id.utf8))
    }

    /// The credential key for stored COSE bytes, parsed once and then served from the cache.
    public func credentialKey(_ bytes: [UInt8]) throws(WebAuthnError) -> COSEKey {
        do {
            return try keyCache.value(for: EncodedKey(bytes)) { try COSEKey(bytes) }
        } catch let error as WebAuthnError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
    }
}
