public import SignetCrypto

/// A COSE algorithm identifier (IANA "COSE Algorithms" registry; RFC 9053, RFC 8812, RFC 9864).
public struct COSEAlgorithm: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let es256 = COSEAlgorithm(rawValue: -7)
    public static let es384 = COSEAlgorithm(rawValue: -35)
    public static let es512 = COSEAlgorithm(rawValue: -36)
    /// EdDSA with the curve named by the key (RFC 9053 §2.2).
    public static let eddsa = COSEAlgorithm(rawValue: -8)
    /// Ed25519, fully specified (RFC 9864).
    public static let ed25519 = COSEAlgorithm(rawValue: -19)
    /// Ed448, fully specified (RFC 9864).
    public static let ed448 = COSEAlgorithm(rawValue: -53)
    public static let ps256 = COSEAlgorithm(rawValue: -37)
    public static let ps384 = COSEAlgorithm(rawValue: -38)
    public static let ps512 = COSEAlgorithm(rawValue: -39)
    public static let rs256 = COSEAlgorithm(rawValue: -257)
    public static let rs384 = COSEAlgorithm(rawValue: -258)
    public static let rs512 = COSEAlgorithm(rawValue: -259)
    /// RSASSA-PKCS1-v1_5 with SHA-1 (RFC 8812 §2): legacy TPMs only; allow it deliberately.
    public static let rs1 = COSEAlgorithm(rawValue: -65535)

    /// Every algorithm Signet can verify.
    public static let all: [COSEAlgorithm] = [.es256, .es384, .es512, .eddsa, .ed25519, .ed448, .ps256, .ps384, .ps512, .rs256, .rs384, .rs512, .rs1]

    /// The signature scheme, or `nil` for an unknown algorithm.
    public var scheme: SignatureScheme? {
        switch self {
        case .es256: .ecdsa(.sha256)
        case .es384: .ecdsa(.sha384)
        case .es512: .ecdsa(.sha512)
        case .eddsa, .ed25519, .ed448: .eddsa
        case .ps256: .rsaPSS(.sha256)
        case .ps384: .rsaPSS(.sha384)
        case .ps512: .rsaPSS(.sha512)
        case .rs256: .rsaPKCS1(.sha256)
        case .rs384: .rsaPKCS1(.sha384)
        case .rs512: .rsaPKCS1(.sha512)
        case .rs1: .rsaPKCS1(.sha1)
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .es256: "ES256"
        case .es384: "ES384"
        case .es512: "ES512"
        case .eddsa: "EdDSA"
        case .ed25519: "Ed25519"
        case .ed448: "Ed448"
        case .ps256: "PS256"
        case .ps384: "PS384"
        case .ps512: "PS512"
        case .rs256: "RS256"
        case .rs384: "RS384"
        case .rs512: "RS512"
        case .rs1: "RS1"
        default: "COSE(\(rawValue))"
        }
    }
}

/// A credential public key in COSE_Key form (RFC 9052 §7, RFC 9053 §7, RFC 8230 §4), checked
/// against WebAuthn L3 §5.8.5: the key type and curve must fit the algorithm.
public struct COSEKey: Sendable {
    /// The key material, as far as comparisons with attestation statements need it.
    public enum Material: Sendable, Equatable {
        case ec2(curve: ECCurve, x: [UInt8], y: [UInt8])
        case okp(curve: EdwardsCurve, x: [UInt8])
        case rsa(n: [UInt8], e: [UInt8])
    }

    public let algorithm: COSEAlgorithm
    public let material: Material
    /// The key, ready for OpenSSL.
    public let publicKey: PublicKey
    /// The COSE_Key bytes exactly as received.
    public let raw: [UInt8]

    /// Parses and checks a COSE_Key; the whole of `bytes` must be one CBOR map.
    public init(_ bytes: [UInt8]) throws(WebAuthnError) {
        let step = "5.8.5"
        guard let map = try CBORDecoder(maxDepth: 2, maxLength: 4096).decode(bytes).map else {
            throw .malformed("COSE key is not a map", step: step)
        }
        func int(_ label: Int) -> Int? { map[int: label]?.int }
        func data(_ label: Int) -> [UInt8]? { map[int: label]?.bytes }
        guard let kty = int(1) else { throw .malformed("COSE key has no kty", step: step) }
        guard let alg = int(3) else { throw .malformed("COSE key has no alg", step: step) }
        let algorithm = COSEAlgorithm(rawValue: alg)
        guard map[int: -4] == nil else { throw .malformed("COSE key contains private key material", step: step) }
        let material: Material
        let key: PublicKey
        do {
            switch kty {
            case 2:  // EC2
                let curve: ECCurve
                switch int(-1) {
                case 1: curve = .p256
                case 2: curve = .p384
                case 3: curve = .p521
                default: throw WebAuthnError.malformed("COSE EC2 key on an unsupported curve", step: step)
                }
                let expected: [ECCurve: COSEAlgorithm] = [.p256: .es256, .p384: .es384, .p521: .es512]
                guard expected[curve] == algorithm else {
                    throw WebAuthnError.malformed("COSE alg \(algorithm) does not fit curve \(curve.rawValue)", step: step)
                }
                guard let x = data(-2), let y = data(-3) else { throw WebAuthnError.malformed("COSE EC2 key needs byte-string x and y", step: step) }
                material = .ec2(curve: curve, x: x, y: y)
                key = try PublicKey(curve: curve, x: x, y: y)
            case 1:  // OKP
                let curve: EdwardsCurve
                switch int(-1) {
                case 6: curve = .ed25519
                case 7: curve = .ed448
                default: throw WebAuthnError.malformed("COSE OKP key on an unsupported curve", step: step)
                }
                let fits = algorithm == .eddsa || (curve == .ed25519 && algorithm == .ed25519) || (curve == .ed448 && algorithm == .ed448)
                guard fits else { throw WebAuthnError.malformed("COSE alg \(algorithm) does not fit \(curve.rawValue)", step: step) }
                guard let x = data(-2) else { throw WebAuthnError.malformed("COSE OKP key needs x", step: step) }
                material = .okp(curve: curve, x: x)
                key = try PublicKey(edwards: curve, raw: x)
            case 3:  // RSA
                switch algorithm.scheme {
                case .rsaPKCS1?, .rsaPSS?: break
                default: throw WebAuthnError.malformed("COSE alg \(algorithm) does not fit an RSA key", step: step)
                }
                guard let n = data(-1), let e = data(-2) else { throw WebAuthnError.malformed("COSE RSA key needs n and e", step: step) }
                material = .rsa(n: n, e: e)
                key = try PublicKey(rsaModulus: n, exponent: e)
            default:
                throw WebAuthnError.malformed("COSE key type \(kty) is not supported", step: step)
            }
        } catch let error as WebAuthnError {
            throw error
        } catch {
            throw .malformed("COSE key rejected: \(error)", step: step)
        }
        self.algorithm = algorithm
        self.material = material
        self.publicKey = key
        self.raw = bytes
    }

    /// Verifies a signature made by this credential with its own algorithm.
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        guard let scheme = algorithm.scheme else { return false }
        return publicKey.verify(signature: signature, message: message, scheme: scheme)
    }
}

/// A bounded cache of parsed COSE keys keyed by their bytes, shared by all verifications.
public typealias COSEKeyCache = BoundedCache<EncodedKey, COSEKey>
