/// How a signature is made: the key family together with its digest and padding.
public enum SignatureScheme: Sendable, Hashable {
    /// ECDSA with a DER-encoded `Ecdsa-Sig-Value` (SEC 1 §C.5).
    case ecdsa(Digest)
    /// Pure EdDSA (RFC 8032): Ed25519 or Ed448, chosen by the key.
    case eddsa
    /// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2).
    case rsaPKCS1(Digest)
    /// RSASSA-PSS (RFC 8017 §8.1) with MGF1 over the same digest and salt length = digest length.
    case rsaPSS(Digest)

    var digest: Digest? {
        switch self {
        case .ecdsa(let d), .rsaPKCS1(let d), .rsaPSS(let d): d
        case .eddsa: nil
        }
    }
}

/// NIST prime curves supported for ECDSA.
public enum ECCurve: String, Sendable, Hashable, CaseIterable {
    case p256 = "P-256", p384 = "P-384", p521 = "P-521"

    /// Bytes of one affine coordinate.
    public var coordinateLength: Int {
        switch self {
        case .p256: 32
        case .p384: 48
        case .p521: 66
        }
    }

    var groupName: String {
        switch self {
        case .p256: "prime256v1"
        case .p384: "secp384r1"
        case .p521: "secp521r1"
        }
    }
}

/// Edwards curves supported for EdDSA.
public enum EdwardsCurve: String, Sendable, Hashable {
    case ed25519 = "Ed25519", ed448 = "Ed448"

    /// Length of the raw public key.
    public var keyLength: Int { self == .ed25519 ? 32 : 57 }
}
