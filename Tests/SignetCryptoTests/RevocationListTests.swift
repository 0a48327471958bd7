import Foundation
import SignetCrypto
import Testing

/// Certificates' distribution points (RFC 5280 §4.2.1.13) and the revocation check of a chain
/// against lists (RFC 5280 §6.3), each step broken alone.
@Suite struct RevocationListTests {
    let now = Date()
    let rootKey: PrivateKey
    let root: Certificate
    let leafKey: PrivateKey

    init() throws {
        rootKey = try PrivateKey.generate(.ec(.p256))
        var builder = CertificateBuilder(subject: [("2.5.4.3", "Root")], notBefore: now.addingTimeInterval(-100), notAfter: now.addingTimeInterval(1000))
        builder.extensions = [("2.5.29.19", true, DER.sequence([DER.boolean(true)]))]
        root = try builder.sign(publicKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
        leafKey = try PrivateKey.generate(.ec(.p256))
    }

    /// A leaf with serial 2 whose cRLDistributionPoints extension is `points` as given.
    func leaf(points: [UInt8]?) throws -> Certificate {
        var builder = CertificateBuilder(subject: [("2.5.4.3", "Leaf")], serial: 2, notBefore: now.addingTimeInterval(-10), notAfter: now.addingTimeInterval(500))
        if let points { builder.extensions = [("2.5.29.31", false, points)] }
        return try builder.sign(publicKey: leafKey.publicKey, issuer: root, issuerKey: rootKey)
    }

    static func uri(_ text: String) -> [UInt8] { DER.tagged(6, constructed: false, Array(text.utf8)) }
    static func point(_ names: [UInt8]...) -> [UInt8] { DER.sequence([DER.tagged(0, DER.tagged(0, names.flatMap { $0 }))]) }

    @Test("distribution points: each full name's URIs in order; a relative name, another kind of name, a URI that is not visible ASCII or a malformed extension give none")
    func distributionPoints() throws {
        let two = DER.sequence([
            Self.point(Self.uri("http://crl.example/a.crl"), DER.tagged(4, DER.sequence([])), Self.uri("ldap://crl.example/cn=a")),
            // A name relative to the CRL issuer ([1]) names no place.
            DER.sequence([DER.tagged(0, DER.tagged(1, DER.set([])))]),
            // Only a CRL issuer ([2]): nothing either.
            DER.sequence([DER.tagged(2, Self.uri("http://issuer.example/"))]),
            Self.point(Self.uri("http://crl.example/with space"), Self.uri("http://crl.example/\u{e9}"), Self.uri(""), Self.uri("http://crl.example/b.crl")),
        ])
        #expect(try leaf(points: two).crlDistributionPoints == ["http://crl.example/a.crl", "ldap://crl.example/cn=a", "http://crl.example/b.crl"])
        #expect(try leaf(points: nil).crlDistributionPoints.isEmpty)
        #expect(try leaf(points: DER.sequence([DER.octetString([1])])).crlDistributionPoints.isEmpty, "a point that is not a SEQUENCE ends the reading")
        #expect(try leaf(points: DER.sequence([]) + [0]).crlDistributionPoints.isEmpty, "bytes after the extension's value")
    }

    @Test("a chain checked against lists: the issuer's current list that does not name the leaf passes; a list naming it, another key's, another issuer's, an expired one or none fails")
    func chainCheck() throws {
        let leaf = try leaf(points: DER.sequence([Self.point(Self.uri("http://crl.example/root.crl"))]))
        func list(revoking serials: [Int] = [], key: PrivateKey? = nil, issuer: Certificate? = nil, thisUpdate: Date? = nil, nextUpdate: Date? = nil) throws -> CertificateRevocationList {
            try CertificateRevocationList.sign(issuer: issuer ?? root, issuerKey: key ?? rootKey, revoked: serials,
                                               thisUpdate: thisUpdate ?? now.addingTimeInterval(-60), nextUpdate: nextUpdate ?? now.addingTimeInterval(3600))
        }
        func check(_ lists: [CertificateRevocationList]?) -> String? { Certificate.verifyChain(leaf: leaf, intermediates: [], anchors: [root], at: now, crls: lists) }
        #expect(check(nil) == nil, "without lists, no revocation check")
        #expect(check([try list(revoking: [3, 4])]) == nil)
        #expect(check([try list(revoking: [3, 2])]) == "certificate revoked")
        #expect(check([try list(key: try PrivateKey.generate(.ec(.p256)))]) == "CRL signature failure")
        let stranger = try CertificateBuilder(subject: [("2.5.4.3", "Other")], notBefore: now.addingTimeInterval(-100), notAfter: now.addingTimeInterval(1000))
            .sign(publicKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
        #expect(check([try list(issuer: stranger)]) == "unable to get certificate CRL", "a list of another issuer's name")
        #expect(check([]) == "unable to get certificate CRL")
        #expect(check([try list(thisUpdate: now.addingTimeInterval(-7200), nextUpdate: now.addingTimeInterval(-60))]) == "CRL has expired")
        #expect(check([try list(thisUpdate: now.addingTimeInterval(600))]) == "CRL is not yet valid")
        // A list reads back as itself; anything else is refused.
        let made = try list(revoking: [2])
        #expect(try CertificateRevocationList(der: made.der).der == made.der)
        #expect(throws: CryptoError.self) { try CertificateRevocationList(der: made.der + [0]) }
        #expect(throws: CryptoError.self) { try CertificateRevocationList(der: Array(made.der.dropLast())) }
        #expect(throws: CryptoError.self) { try CertificateRevocationList(der: []) }
        #expect(throws: CryptoError.self) { try CertificateRevocationList(der: leaf.der) }
    }
}
