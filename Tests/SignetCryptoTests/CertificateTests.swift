import Foundation
import SignetCrypto
import Testing

@Suite struct CertificateTests {
    let now = Date()
    let rootKey: PrivateKey
    let root: Certificate
    let leafKey: PrivateKey
    let leaf: Certificate

    init() throws {
        rootKey = try PrivateKey.generate(.ec(.p256))
        var rootBuilder = CertificateBuilder(subject: [("2.5.4.3", "Root")], notBefore: now.addingTimeInterval(-100), notAfter: now.addingTimeInterval(1000))
        rootBuilder.extensions = [("2.5.29.19", true, DER.sequence([DER.boolean(true)]))]
        root = try rootBuilder.sign(publicKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
        leafKey = try PrivateKey.generate(.ec(.p256))
        var leafBuilder = CertificateBuilder(subject: [("2.5.4.6", "SE"), ("2.5.4.3", "Leaf")], serial: 2, notBefore: now.addingTimeInterval(-10), notAfter: now.addingTimeInterval(500))
        leafBuilder.extensions = [("1.3.6.1.4.1.45724.1.1.4", false, DER.octetString([UInt8](repeating: 5, count: 16)))]
        leaf = try leafBuilder.sign(publicKey: leafKey.publicKey, issuer: root, issuerKey: rootKey)
    }

    @Test("fields, extensions and public key read back")
    func fields() throws {
        let parsed = try Certificate(der: leaf.der)
        #expect(parsed.version == 3)
        #expect(parsed.subject.map(\.value) == ["SE", "Leaf"])
        #expect(parsed.issuer.map(\.value) == ["Root"])
        #expect(parsed.extension("1.3.6.1.4.1.45724.1.1.4")?.value == DER.octetString([UInt8](repeating: 5, count: 16)))
        #expect(parsed.extension("1.2.3") == nil)
        #expect(try parsed.publicKey().isSameKey(as: leafKey.publicKey))
        #expect(!parsed.isCA && root.isCA)
        #expect(parsed.isValid(at: now) && !parsed.isValid(at: now.addingTimeInterval(600)))
    }

    @Test("chains verify only to their anchor, only inside the validity period")
    func chains() throws {
        #expect(Certificate.verifyChain(leaf: leaf, intermediates: [], anchors: [root], at: now) == nil)
        #expect(Certificate.verifyChain(leaf: leaf, intermediates: [], anchors: [], at: now) != nil)
        #expect(Certificate.verifyChain(leaf: leaf, intermediates: [], anchors: [root], at: now.addingTimeInterval(700)) != nil)
        #expect(Certificate.verifyChain(leaf: leaf, intermediates: [], anchors: [root], at: now.addingTimeInterval(-60)) != nil)
        let strangerKey = try PrivateKey.generate(.ec(.p256))
        let stranger = try CertificateBuilder(subject: [("2.5.4.3", "Root")], notBefore: now.addingTimeInterval(-100), notAfter: now.addingTimeInterval(1000))
            .sign(publicKey: strangerKey.publicKey, issuer: nil, issuerKey: strangerKey)
        #expect(Certificate.verifyChain(leaf: leaf, intermediates: [], anchors: [stranger], at: now) != nil)
    }

    @Test("truncated, padded and empty DER is refused; PEM round-trips")
    func parsing() throws {
        #expect(throws: CryptoError.self) { try Certificate(der: Array(leaf.der.dropLast())) }
        #expect(throws: CryptoError.self) { try Certificate(der: leaf.der + [0]) }
        #expect(throws: CryptoError.self) { try Certificate(der: []) }
        #expect(throws: CryptoError.self) { try Certificate(der: [UInt8](repeating: 0x30, count: 20_000)) }
        let pem = "-----BEGIN CERTIFICATE-----\n" + Data(leaf.der).base64EncodedString(options: .lineLength64Characters) + "\n-----END CERTIFICATE-----\n"
        #expect(try Certificate.parsePEM(pem + pem).map(\.der) == [leaf.der, leaf.der])
    }
}
