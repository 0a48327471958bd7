import Foundation
import SignetCrypto
import SignetSoftware
import SignetWebAuthn

/// Builds attestation statements of every format with a throw-away test CA, each with
/// switches that break exactly one requirement.
final class AttestationForge: @unchecked Sendable {
    let caKey: PrivateKey
    let ca: Certificate
    let now = Date()

    init() throws {
        caKey = try PrivateKey.generate(.ec(.p256))
        var builder = CertificateBuilder(
            subject: [("2.5.4.3", "Signet Test Attestation Root")], notBefore: now.addingTimeInterval(-86400),
            notAfter: now.addingTimeInterval(86400 * 365))
        builder.extensions = [("2.5.29.19", true, DER.sequence([DER.boolean(true)]))]
        ca = try builder.sign(publicKey: caKey.publicKey, issuer: nil, issuerKey: caKey)
    }

    static let packedSubject: [(oid: String, value: String)] = [
        ("2.5.4.6", "SE"), ("2.5.4.10", "Signet Test"), ("2.5.4.11", "Authenticator Attestation"), ("2.5.4.3", "Signet Test Key"),
    ]

    func leaf(
        key: PublicKey, subject: [(oid: String, value: String)], extensions: [(oid: String, critical: Bool, value: [UInt8])],
        notAfter: Date? = nil, version: Int = 3
    ) throws -> Certificate {
        var builder = CertificateBuilder(subject: subject, serial: Int.random(in: 2...1_000_000), notBefore: now.addingTimeInterval(-3600), notAfter: notAfter ?? now.addingTimeInterval(86400 * 30))
        builder.extensions = extensions
        builder.version = version
        return try builder.sign(publicKey: key, issuer: ca, issuerKey: caKey)
    }

    static let notCA: (oid: String, critical: Bool, value: [UInt8]) = ("2.5.29.19", true, DER.sequence([]))
    static let isCA: (oid: String, critical: Bool, value: [UInt8]) = ("2.5.29.19", true, DER.sequence([DER.boolean(true)]))

    static func aaguidExtension(_ aaguid: [UInt8], critical: Bool = false) -> (oid: String, critical: Bool, value: [UInt8]) {
        ("1.3.6.1.4.1.45724.1.1.4", critical, DER.octetString(aaguid))
    }

    static func flip(_ bytes: [UInt8]) -> [UInt8] {
        var b = bytes
        b[b.count / 2] ^= 0x01
        return b
    }

    // MARK: packed (§8.2)

    struct PackedDefects {
        var subject = AttestationForge.packedSubject
        var extensions: [(oid: String, critical: Bool, value: [UInt8])] = [AttestationForge.notCA]
        var aaguid: [UInt8]?  // value of the aaguid extension; nil = use the real one
        var aaguidCritical = false
        var omitAAGUIDExtension = false
        var breakSignature = false
        var version = 3
        var alg: COSEAlgorithm = .es256
    }

    func packed(_ d: PackedDefects = PackedDefects()) -> AttestationMaker {
        { input in
            let key = try PrivateKey.generate(.ec(.p256))
            var extensions = d.extensions
            if !d.omitAAGUIDExtension {
                extensions.append(Self.aaguidExtension(d.aaguid ?? Array(input.authenticatorData[37..<53]), critical: d.aaguidCritical))
            }
            let cert = try self.leaf(key: key.publicKey, subject: d.subject, extensions: extensions, version: d.version)
            var sig = try key.sign(input.authenticatorData + input.clientDataHash, scheme: .ecdsa(.sha256))
            if d.breakSignature { sig = Self.flip(sig) }
            return ("packed", CBORMap([(.text("alg"), .int(d.alg.rawValue)), (.text("sig"), .bytes(sig)), (.text("x5c"), .array([.bytes(cert.der)]))]))
        }
    }

    // MARK: fido-u2f (§8.6)

    struct U2FDefects {
        var twoCertificates = false
        var certificateCurve: ECCurve = .p256
        var breakSignature = false
    }

    func fidoU2F(_ d: U2FDefects = U2FDefects()) -> AttestationMaker {
        { input in
            let key = try PrivateKey.generate(.ec(d.certificateCurve))
            let cert = try self.leaf(key: key.publicKey, subject: Self.packedSubject, extensions: [Self.notCA])
            let point = input.credentialKey.publicKey.x963!
            let data = [0x00] + Array(input.authenticatorData[0..<32]) + input.clientDataHash + input.credentialID + point
            var sig = try key.sign(data, scheme: .ecdsa(.sha256))
            if d.breakSignature { sig = Self.flip(sig) }
            var chain: [CBOR] = [.bytes(cert.der)]
            if d.twoCertificates { chain.append(.bytes(self.ca.der)) }
            return ("fido-u2f", CBORMap([(.text("sig"), .bytes(sig)), (.text("x5c"), .array(chain))]))
        }
    }

    // MARK: apple (§8.8)

    struct AppleDefects {
        var wrongNonce = false
        var omitExtension = false
        var otherKey = false
    }

    func apple(_ d: AppleDefects = AppleDefects()) -> AttestationMaker {
        { input in
            var nonce = Digest.sha256.hash(input.authenticatorData + input.clientDataHash)
            if d.wrongNonce { nonce = Self.flip(nonce) }
            var extensions = [Self.notCA]
            if !d.omitExtension {
                extensions.append(("1.2.840.113635.100.8.2", false, DER.sequence([DER.tagged(1, DER.octetString(nonce))])))
            }
            let key = d.otherKey ? try PrivateKey.generate(.ec(.p256)).publicKey : input.credentialKey.publicKey
            let cert = try self.leaf(key: key, subject: [("2.5.4.3", "Signet Test Apple")], extensions: extensions)
            return ("apple", CBORMap([(.text("x5c"), .array([.bytes(cert.der), .bytes(self.ca.der)]))]))
        }
    }

    // MARK: android-key (§8.4)

    struct AndroidDefects {
        var wrongChallenge = false
        var allApplications = false
        var origin: Int64 = 0
        var purpose: Int64 = 2
        var otherKey = false
        var breakSignature = false
        var malformedDescription = false
    }

    func androidKey(_ d: AndroidDefects = AndroidDefects()) -> AttestationMaker {
        { input in
            var challenge = input.clientDataHash
            if d.wrongChallenge { challenge = Self.flip(challenge) }
            var tee = [DER.tagged(1, DER.set([DER.integer(d.purpose)])), DER.tagged(702, DER.integer(d.origin))]
            if d.allApplications { tee.append(DER.tagged(600, DER.null)) }
            var description = DER.sequence([
                DER.integer(3), DER.integer(1, tag: 0x0a), DER.integer(4), DER.integer(1, tag: 0x0a),
                DER.octetString(challenge), DER.octetString([]), DER.sequence([]), DER.sequence(tee),
            ])
            if d.malformedDescription { description = Array(description.dropLast(3)) }
            // With otherKey the certificate's key also signs, so only the key comparison fails.
            let signer = d.otherKey ? try PrivateKey.generate(.ec(.p256)) : input.credentialKey
            let cert = try self.leaf(
                key: signer.publicKey, subject: [("2.5.4.3", "Android Keystore Key")],
                extensions: [Self.notCA, ("1.3.6.1.4.1.11129.2.1.17", false, description)])
            var sig = try signer.sign(input.authenticatorData + input.clientDataHash, scheme: .ecdsa(.sha256))
            if d.breakSignature { sig = Self.flip(sig) }
            return ("android-key", CBORMap([
                (.text("alg"), .int(COSEAlgorithm.es256.rawValue)), (.text("sig"), .bytes(sig)),
                (.text("x5c"), .array([.bytes(cert.der), .bytes(self.ca.der)])),
            ]))
        }
    }

    // MARK: android-safetynet (§8.5)

    struct SafetyNetDefects {
        var hostname = "attest.android.com"
        var wrongNonce = false
        var ctsProfileMatch = true
        var age: TimeInterval = 5
        var breakSignature = false
    }

    func safetyNet(_ d: SafetyNetDefects = SafetyNetDefects(), at now: Date) -> AttestationMaker {
        { input in
            let key = try PrivateKey.generate(.ec(.p256))
            let cert = try self.leaf(key: key.publicKey, subject: [("2.5.4.3", d.hostname)], extensions: [Self.notCA])
            var nonce = Digest.sha256.hash(input.authenticatorData + input.clientDataHash)
            if d.wrongNonce { nonce = Self.flip(nonce) }
            let header = JSONValue.object([
                "alg": .string("ES256"),
                "x5c": .array([.string(Data(cert.der).base64EncodedString()), .string(Data(self.ca.der).base64EncodedString())]),
            ])
            let payload = JSONValue.object([
                "nonce": .string(Data(nonce).base64EncodedString()), "ctsProfileMatch": .bool(d.ctsProfileMatch),
                "basicIntegrity": .bool(true), "timestampMs": .int(Int64((now.timeIntervalSince1970 - d.age) * 1000)),
            ])
            let signingInput = Base64URL.encode(Array(header.serialized.utf8)) + "." + Base64URL.encode(Array(payload.serialized.utf8))
            var raw = ECDSASignature.raw(fromDER: try key.sign(Array(signingInput.utf8), scheme: .ecdsa(.sha256)), width: 32)!
            if d.breakSignature { raw = Self.flip(raw) }
            let jws = signingInput + "." + Base64URL.encode(raw)
            return ("android-safetynet", CBORMap([(.text("ver"), .text("200616037")), (.text("response"), .bytes(Array(jws.utf8)))]))
        }
    }

    // MARK: tpm (§8.3)

    struct TPMDefects {
        var version = "2.0"
        var magic: UInt32 = 0xff54_4347
        var type: UInt16 = 0x8017
        var wrongExtraData = false
        var wrongName = false
        var otherPubAreaKey = false
        var breakSignature = false
        var subject: [(oid: String, value: String)] = []
        var omitSAN = false
        var omitEKU = false
        var ca = false
        var aaguid: [UInt8]?
    }

    static func tpm2b(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xff)] + bytes }

    func tpm(_ d: TPMDefects = TPMDefects()) -> AttestationMaker {
        { input in
            let pubKey = d.otherPubAreaKey ? try PrivateKey.generate(.ec(.p256)).publicKey : input.credentialKey.publicKey
            let point = pubKey.x963!
            let pubArea: [UInt8] = [0x00, 0x23, 0x00, 0x0b, 0x00, 0x06, 0x04, 0x72] + Self.tpm2b([])
                + [0x00, 0x10, 0x00, 0x10, 0x00, 0x03, 0x00, 0x10] + Self.tpm2b(Array(point[1...32])) + Self.tpm2b(Array(point[33...]))
            var extraData = Digest.sha256.hash(input.authenticatorData + input.clientDataHash)
            if d.wrongExtraData { extraData = Self.flip(extraData) }
            var name = [0x00, 0x0b] + Digest.sha256.hash(pubArea)
            if d.wrongName { name = Self.flip(name) }
            let certInfo = withUnsafeBytes(of: d.magic.bigEndian, Array.init) + withUnsafeBytes(of: d.type.bigEndian, Array.init)
                + Self.tpm2b([0x00, 0x0b] + [UInt8](repeating: 7, count: 32)) + Self.tpm2b(extraData)
                + [UInt8](repeating: 0, count: 17) + [UInt8](repeating: 1, count: 8) + Self.tpm2b(name) + Self.tpm2b([])
            let aik = try PrivateKey.generate(.ec(.p256))
            var extensions = [d.ca ? Self.isCA : Self.notCA]
            if !d.omitSAN {
                let rdn = DER.set([
                    DER.sequence([DER.oid("2.23.133.2.1"), DER.utf8String("id:FFFFF1D0")]),
                    DER.sequence([DER.oid("2.23.133.2.2"), DER.utf8String("SignetTPM")]),
                    DER.sequence([DER.oid("2.23.133.2.3"), DER.utf8String("id:00020008")]),
                ])
                extensions.append(("2.5.29.17", true, DER.sequence([DER.tagged(4, DER.sequence([rdn]))])))
            }
            if !d.omitEKU { extensions.append(("2.5.29.37", false, DER.sequence([DER.oid("2.23.133.8.3")]))) }
            if let aaguid = d.aaguid { extensions.append(Self.aaguidExtension(aaguid)) }
            let cert = try self.leaf(key: aik.publicKey, subject: d.subject, extensions: extensions)
            var sig = try aik.sign(certInfo, scheme: .ecdsa(.sha256))
            if d.breakSignature { sig = Self.flip(sig) }
            return ("tpm", CBORMap([
                (.text("ver"), .text(d.version)), (.text("alg"), .int(COSEAlgorithm.es256.rawValue)),
                (.text("x5c"), .array([.bytes(cert.der), .bytes(self.ca.der)])), (.text("sig"), .bytes(sig)),
                (.text("certInfo"), .bytes(certInfo)), (.text("pubArea"), .bytes(pubArea)),
            ]))
        }
    }
}
