import SignetCrypto

extension AttestationContext {
    /// §8.3 TPM.
    func verifyTPM() throws(WebAuthnError) -> Outcome {
        let section = "8.3"
        guard statement[text: "ver"]?.text == "2.0" else { throw invalid("tpm ver is not \"2.0\"", section) }
        let alg = try algorithm(section)
        let sig = try signature(section)
        let chain = try certificates(section)
        guard let pubAreaBytes = statement[text: "pubArea"]?.bytes, let certInfoBytes = statement[text: "certInfo"]?.bytes else {
            throw invalid("tpm pubArea or certInfo missing", section)
        }
        let pubArea: TPMPublic
        let certInfo: TPMAttest
        do {
            pubArea = try TPMPublic(pubAreaBytes)
            certInfo = try TPMAttest(certInfoBytes)
        } catch {
            throw invalid("tpm structure malformed: \(error.detail)", section)
        }
        // The key in pubArea (parameters and unique) is the credential public key.
        guard pubArea.matches(credentialKey.material) else { throw invalid("tpm pubArea key differs from the credential public key", section) }
        // certInfo: magic TPM_GENERATED_VALUE and type TPM_ST_ATTEST_CERTIFY.
        guard certInfo.magic == 0xff54_4347 else { throw invalid("tpm certInfo magic is not TPM_GENERATED_VALUE", section) }
        guard certInfo.type == 0x8017 else { throw invalid("tpm certInfo type is not TPM_ST_ATTEST_CERTIFY", section) }
        // extraData is the hash of attToBeSigned with the hash of alg.
        guard let digest = alg.scheme.flatMap(Self.digest(of:)) else { throw invalid("tpm alg has no hash", section) }
        guard ConstantTime.equals(certInfo.extraData, digest.hash(signedData)) else {
            throw invalid("tpm certInfo extraData is not the hash of authenticatorData || clientDataHash", section)
        }
        // attested.name is nameAlg || H(pubArea).
        guard let nameDigest = Self.tpmDigest(pubArea.nameAlg) else { throw invalid("tpm nameAlg is not supported", section) }
        let expectedName = [UInt8(pubArea.nameAlg >> 8), UInt8(pubArea.nameAlg & 0xff)] + nameDigest.hash(pubAreaBytes)
        guard certInfo.attestedName == expectedName else { throw invalid("tpm certInfo attested name is not the name of pubArea", section) }
        // sig over certInfo verifies with the AIK certificate's key.
        let aik = chain[0]
        try verify(sig, over: certInfoBytes, by: aik, alg: alg, section)
        try checkAIKCertificate(aik)
        try checkAAGUIDExtension(aik, "8.3.1")
        return Outcome(type: .attca, chain: chain)
    }

    /// §8.3.1 TPM attestation statement certificate requirements.
    func checkAIKCertificate(_ cert: Certificate) throws(WebAuthnError) {
        let section = "8.3.1"
        guard cert.version == 3 else { throw invalid("AIK certificate is not X.509 v3", section) }
        guard cert.subject.isEmpty else { throw invalid("AIK certificate subject is not empty", section) }
        // Subject Alternative Name: a directoryName with TPM manufacturer, model and version.
        guard let san = cert.extension("2.5.29.17") else { throw invalid("AIK certificate has no subjectAltName", section) }
        let attributes = Self.directoryAttributes(san.value)
        for oid in ["2.23.133.2.1", "2.23.133.2.2", "2.23.133.2.3"] where !attributes.contains(oid) {
            throw invalid("AIK subjectAltName lacks TPM attribute \(oid)", section)
        }
        // Extended Key Usage contains tcg-kp-AIKCertificate.
        guard let eku = cert.extension("2.5.29.37"), Self.oids(inSequence: eku.value).contains("2.23.133.8.3") else {
            throw invalid("AIK certificate lacks EKU 2.23.133.8.3", section)
        }
        guard !cert.isCA else { throw invalid("AIK certificate is a CA", section) }
    }

    static func digest(of scheme: SignatureScheme) -> Digest? {
        switch scheme {
        case .ecdsa(let d), .rsaPKCS1(let d), .rsaPSS(let d): d
        case .eddsa: nil
        }
    }

    static func tpmDigest(_ alg: UInt16) -> Digest? {
        switch alg {
        case 0x0004: .sha1
        case 0x000b: .sha256
        case 0x000c: .sha384
        case 0x000d: .sha512
        default: nil
        }
    }

    /// The attribute-type OIDs inside the directoryName entries of a GeneralNames value.
    /// Accepts both the spec's single multi-valued RDN and one RDN per attribute.
    static func directoryAttributes(_ der: [UInt8]) -> Set<String> {
        var found = Set<String>()
        var reader = DERReader(der)
        guard let names = try? reader.read(DERTag.sequence) else { return found }
        var items = names.children
        while !items.isAtEnd, let item = try? items.read() {
            guard item.is(.contextSpecific, 4) else { continue }
            var nameReader = item.children
            guard let rdnSequence = try? nameReader.read(DERTag.sequence) else { continue }
            var rdns = rdnSequence.children
            while !rdns.isAtEnd, let rdn = try? rdns.read(DERTag.set) {
                var attributes = rdn.children
                while !attributes.isAtEnd, let attribute = try? attributes.read(DERTag.sequence) {
                    var fields = attribute.children
                    if let oid = try? fields.read(DERTag.oid), let text = try? DERReader.oidString(oid.content) { found.insert(text) }
                }
            }
        }
        return found
    }

    /// OIDs in a SEQUENCE OF OBJECT IDENTIFIER.
    static func oids(inSequence der: [UInt8]) -> [String] {
        var reader = DERReader(der)
        guard let seq = try? reader.read(DERTag.sequence) else { return [] }
        var items = seq.children
        var result: [String] = []
        while !items.isAtEnd, let item = try? items.read(DERTag.oid), let text = try? DERReader.oidString(item.content) {
            result.append(text)
        }
        return result
    }
}

/// A big-endian reader for TPM 2.0 structures (TPM 2.0 Part 2), bounds-checked.
struct TPMReader {
    var bytes: ArraySlice<UInt8>

    mutating func take(_ n: Int) throws(WebAuthnError) -> ArraySlice<UInt8> {
        guard bytes.count >= n else { throw .malformed("TPM structure truncated") }
        defer { bytes = bytes.dropFirst(n) }
        return bytes.prefix(n)
    }

    mutating func u16() throws(WebAuthnError) -> UInt16 { try take(2).reduce(0) { $0 << 8 | UInt16($1) } }
    mutating func u32() throws(WebAuthnError) -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
    /// A TPM2B: 16-bit size, then that many bytes.
    mutating func sized() throws(WebAuthnError) -> [UInt8] { Array(try take(Int(try u16()))) }

    func end() throws(WebAuthnError) {
        guard bytes.isEmpty else { throw .malformed("TPM structure has \(bytes.count) trailing bytes") }
    }
}

/// TPMT_PUBLIC (TPM 2.0 Part 2 §12.2.4), RSA and ECC keys.
struct TPMPublic {
    enum Key: Equatable {
        case rsa(exponent: UInt32, modulus: [UInt8])
        case ecc(curve: UInt16, x: [UInt8], y: [UInt8])
    }

    let nameAlg: UInt16
    let key: Key

    init(_ bytes: [UInt8]) throws(WebAuthnError) {
        var r = TPMReader(bytes: bytes[...])
        let type = try r.u16()
        nameAlg = try r.u16()
        _ = try r.u32()  // objectAttributes
        _ = try r.sized()  // authPolicy
        let null: UInt16 = 0x0010
        if try r.u16() != null { _ = try r.take(4) }  // symmetric: algorithm, keyBits, mode
        if try r.u16() != null { _ = try r.take(2) }  // scheme and its hashAlg
        switch type {
        case 0x0001:  // TPM_ALG_RSA
            _ = try r.u16()  // keyBits
            let exponent = try r.u32()
            key = .rsa(exponent: exponent == 0 ? 65537 : exponent, modulus: try r.sized())
        case 0x0023:  // TPM_ALG_ECC
            let curve = try r.u16()
            if try r.u16() != null { _ = try r.take(2) }  // kdf and its hashAlg
            key = .ecc(curve: curve, x: try r.sized(), y: try r.sized())
        default: throw .malformed("TPM pubArea type \(type) is not RSA or ECC")
        }
        try r.end()
    }

    func matches(_ material: COSEKey.Material) -> Bool {
        switch (key, material) {
        case (.rsa(let exponent, let modulus), .rsa(let n, let e)):
            let eValue = e.drop(while: { $0 == 0 }).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return e.count <= 8 && eValue == UInt64(exponent) && modulus == n
        case (.ecc(let curve, let x, let y), .ec2(let c, let cx, let cy)):
            let ids: [ECCurve: UInt16] = [.p256: 0x0003, .p384: 0x0004, .p521: 0x0005]
            return ids[c] == curve && x == cx && y == cy
        default: return false
        }
    }
}

/// TPMS_ATTEST (TPM 2.0 Part 2 §10.12.12) with TPMS_CERTIFY_INFO.
struct TPMAttest {
    let magic: UInt32
    let type: UInt16
    let extraData: [UInt8]
    let attestedName: [UInt8]

    init(_ bytes: [UInt8]) throws(WebAuthnError) {
        var r = TPMReader(bytes: bytes[...])
        magic = try r.u32()
        type = try r.u16()
        _ = try r.sized()  // qualifiedSigner
        extraData = try r.sized()
        _ = try r.take(17)  // clockInfo: clock, resetCount, restartCount, safe
        _ = try r.take(8)  // firmwareVersion
        attestedName = try r.sized()
        _ = try r.sized()  // qualifiedName
        try r.end()
    }
}
