import Foundation
@testable import SignetClient
import SignetSoftware
import Testing

/// The SDK's own DPoP pieces, which must agree with the server's without sharing its code.
@Suite struct DPoPProofTests {
    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    @Test("SHA-256 gives FIPS 180-4's example digests, one block and two")
    func sha256() {
        #expect(Self.hex(SHA256.hash(Data())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Self.hex(SHA256.hash(Data("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Self.hex(SHA256.hash(Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(Self.hex(SHA256.hash(Data(repeating: 0x61, count: 1_000))) == Self.hex(SHA256.hash(Data(String(repeating: "a", count: 1_000).utf8))))
    }

    @Test("a DER ECDSA signature becomes r || s of 32 bytes each, with leading zeros dropped or added")
    func derToRaw() {
        let r = [UInt8](repeating: 0x81, count: 32), s = [UInt8](repeating: 0x01, count: 31)
        let der = Data([0x30, 0x44, 0x02, 0x21, 0x00] + r + [0x02, 0x1f] + s)
        #expect(DPoPProofs.rawSignature(fromDER: der) == Data(r + [0x00] + s))
        #expect(DPoPProofs.rawSignature(fromDER: Data([0x30, 0x03, 0x02, 0x01])) == nil)
        #expect(DPoPProofs.rawSignature(fromDER: der + Data([0x00])) == nil)
    }

    @Test("the SDK's proof carries the claims the server checks, and its thumbprint is the software key's")
    func proof() async throws {
        let key = try SoftwareDPoPKey()
        let store = SoftwareDPoPKeyStore(key)
        let proof = try await DPoPProofs.proof(key: store, method: "GET", url: URL(string: "https://signet.test/me/passkeys?x=1#f")!, accessToken: "token", nonce: "n1",
                                               now: Date(timeIntervalSince1970: 1_800_000_000), jti: "j1")
        let parts = proof.split(separator: ".").map(String.init)
        #expect(parts.count == 3 && Data(base64URLEncoded: parts[2])?.count == 64)
        let headerData = try #require(Data(base64URLEncoded: parts[0])), claimsData = try #require(Data(base64URLEncoded: parts[1]))
        let header = try #require(try JSONSerialization.jsonObject(with: headerData) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: claimsData) as? [String: Any])
        #expect(header["typ"] as? String == "dpop+jwt" && header["alg"] as? String == "ES256")
        #expect(claims["htu"] as? String == "https://signet.test/me/passkeys" && claims["htm"] as? String == "GET" && claims["nonce"] as? String == "n1")
        #expect(claims["ath"] as? String == SHA256.base64url(Data("token".utf8)) && claims["iat"] as? Int == 1_800_000_000)
        #expect(DPoPProofs.thumbprint(try await store.publicJWK()) == key.thumbprint)
    }
}
