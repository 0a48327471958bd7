import Foundation
import SignetClient
import SignetCrypto
import Testing

/// The pin logic of the Apple adapter's URLSession delegate, pure, checked against OpenSSL's
/// own SubjectPublicKeyInfo encodings and digests.
@Suite struct SPKIPinSetTests {
    static func pin(_ spki: [UInt8]) -> String { Data(Digest.sha256.hash(spki)).base64EncodedString() }

    @Test("keys as SecKeyCopyExternalRepresentation gives them become the SPKI OpenSSL writes: P-256, P-384, RSA")
    func spki() throws {
        for curve in [ECCurve.p256, .p384] {
            let key = try PrivateKey.generate(.ec(curve)).publicKey
            #expect(SPKIPinSet.spki(externalRepresentation: Data(try #require(key.x963)), isRSA: false) == Data(key.spki))
        }
        let rsa = try PrivateKey.generate(.rsa(bits: 2048)).publicKey.spki
        // OpenSSL's SPKI of a 2048-bit key: 24 bytes of header, then the PKCS #1 key.
        #expect(SPKIPinSet.spki(externalRepresentation: Data(rsa[24...]), isRSA: true) == Data(rsa))
        #expect(SPKIPinSet.spki(externalRepresentation: Data([0x04, 1, 2]), isRSA: false) == nil)
    }

    @Test("a chain passes when any of its keys is pinned; a set needs a backup pin; bad pins are refused")
    func pins() throws {
        let leaf = try PrivateKey.generate(.ec(.p256)).publicKey.spki
        let intermediate = try PrivateKey.generate(.ec(.p256)).publicKey.spki
        let backup = try PrivateKey.generate(.ec(.p256)).publicKey.spki
        #expect(SPKIPinSet.pin(spki: Data(leaf)) == Self.pin(leaf))
        let set = try SPKIPinSet(pins: [Self.pin(intermediate), Self.pin(backup)])
        #expect(set.matches(chain: [Data(leaf), Data(intermediate)]))
        #expect(!set.matches(chain: [Data(leaf)]))
        #expect(!set.matches(chain: []))
        #expect(throws: SPKIPinSet.Invalid.self) { try SPKIPinSet(pins: [Self.pin(leaf)]) }
        #expect(throws: SPKIPinSet.Invalid.self) { try SPKIPinSet(pins: [Self.pin(leaf), Self.pin(leaf)]) }
        #expect(throws: SPKIPinSet.Invalid.self) { try SPKIPinSet(pins: [Self.pin(leaf), "not base64!"]) }
        #expect(throws: SPKIPinSet.Invalid.self) { try SPKIPinSet(pins: [Self.pin(leaf), Data([1, 2, 3]).base64EncodedString()]) }
    }
}
