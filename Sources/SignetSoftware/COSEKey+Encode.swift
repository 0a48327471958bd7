public import SignetCrypto
public import SignetWebAuthn

extension PublicKey {
    /// This key as COSE_Key bytes for `algorithm` (RFC 9053 §7, RFC 8230 §4), in CTAP2 canonical order.
    public func coseKey(algorithm: COSEAlgorithm) -> [UInt8] {
        var pairs: [(CBOR, CBOR)] = []
        switch kind {
        case .ec(let curve):
            let point = x963!
            let n = curve.coordinateLength
            let crv = [ECCurve.p256: 1, .p384: 2, .p521: 3][curve]!
            pairs = [(.int(1), .int(2)), (.int(3), .int(algorithm.rawValue)), (.int(-1), .int(crv)),
                     (.int(-2), .bytes(Array(point[1...n]))), (.int(-3), .bytes(Array(point[(n + 1)...])))]
        case .edwards(let curve):
            pairs = [(.int(1), .int(1)), (.int(3), .int(algorithm.rawValue)), (.int(-1), .int(curve == .ed25519 ? 6 : 7)),
                     (.int(-2), .bytes(rawEdwards!))]
        case .rsa:
            let (n, e) = rsaComponents!
            pairs = [(.int(1), .int(3)), (.int(3), .int(algorithm.rawValue)), (.int(-1), .bytes(n)), (.int(-2), .bytes(e))]
        }
        return CBOREncoder.encode(.map(CBORMap(pairs)))
    }
}

extension COSEAlgorithm {
    /// The key type a software authenticator generates for this algorithm.
    public var keyKind: PrivateKey.Kind? {
        switch self {
        case .es256: .ec(.p256)
        case .es384: .ec(.p384)
        case .es512: .ec(.p521)
        case .eddsa, .ed25519: .edwards(.ed25519)
        case .ed448: .edwards(.ed448)
        case .rs256, .rs384, .rs512, .ps256, .ps384, .ps512, .rs1: .rsa(bits: 2048)
        default: nil
        }
    }
}
