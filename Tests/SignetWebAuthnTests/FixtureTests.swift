import Foundation
import SignetCrypto
import SignetWebAuthn
import Testing

/// Every real-authenticator and W3C fixture must give exactly its expected outcome.
@Suite(.enabled(if: Fixtures.available, Fixtures.skipNote))
struct FixtureTests {
    /// The reason (and a word of the detail) each negative fixture must fail with.
    static let expectedFailures: [String: (reason: String, detail: String)] = [
        "authentication/es256_challenge_mismatch.json": ("challenge_mismatch", "challenge"),
        "authentication/es256_counter_not_increased.json": ("counter_regression", "cloned"),
        "authentication/es256_origin_mismatch.json": ("origin_not_allowed", "dev.dontneeda.pw"),
        "authentication/es256_rp_id_mismatch.json": ("rp_id_hash_mismatch", "rpIdHash"),
        "authentication/es256_uv_required_not_verified.json": ("user_not_verified", "UV"),
        "authentication/rs256_wrong_public_key.json": ("signature_invalid", "signature"),
        "registration/android_safetynet_cts_profile_mismatch.json": ("attestation_invalid", "ctsProfileMatch"),
        "registration/fido_u2f_tokenbinding_status_not_supported.json": ("token_binding_invalid", "not-supported"),
        "registration/fido_u2f_uv_required_not_verified.json": ("user_not_verified", "UV"),
        "registration/none_challenge_mismatch.json": ("challenge_mismatch", "challenge"),
        "registration/none_origin_mismatch.json": ("origin_not_allowed", "dev.dontneeda.pw"),
        "registration/none_rp_id_mismatch.json": ("rp_id_hash_mismatch", "rpIdHash"),
        "registration/packed_aaguid_extension_mismatch.json": ("attestation_invalid", "aaguid"),
        "registration/tpm_aaguid_extension_mismatch.json": ("attestation_invalid", "aaguid"),
        "w3c/registration/android_key_es256_empty_authorization_lists.json": ("attestation_invalid", "KM_ORIGIN_GENERATED"),
    ]

    static func run(_ relative: String, ceremony: ResponseFile.Ceremony) throws -> (result: JSONValue, expect: JSONValue) {
        let path = Fixtures.folder.appendingPathComponent(relative).path
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let fixture = try StrictJSON(maxLength: 1 << 20).parse(bytes)
        let file = try ResponseFile(json: bytes, ceremony: ceremony)
        var anchors: [Certificate] = []
        if let anchorPath = file.trustAnchorPath(responsePath: path) {
            anchors = try Certificate.parsePEM(String(contentsOfFile: anchorPath, encoding: .utf8))
            #expect(!anchors.isEmpty, "trust anchor file \(anchorPath) holds no certificate")
        }
        return (file.verify(anchors: anchors, now: Date()), try #require(fixture["expect"]))
    }

    static func checkFailure(_ relative: String, _ result: JSONValue) {
        #expect(result["reason"]?.string != nil)
        if let expected = expectedFailures[relative] {
            #expect(result["reason"]?.string == expected.reason, "\(relative): \(result.serialized)")
            #expect(result["detail"]?.string?.lowercased().contains(expected.detail.lowercased()) == true, "\(relative): \(result.serialized)")
        }
    }

    @Test("registration fixture", arguments: Fixtures.files("registration"))
    func registration(_ relative: String) throws {
        let (result, expect) = try Self.run(relative, ceremony: .registration)
        let ok = try #require(expect["ok"]?.bool as Bool?)
        #expect(result["ok"]?.bool == ok, "\(relative): \(result.serialized)")
        guard ok else { return Self.checkFailure(relative, result) }
        #expect(result["fmt"] == expect["fmt"])
        #expect(result["alg"] == expect["alg"])
        #expect(result["credential_id"] == expect["credential_id"])
        #expect(result["sign_count"] == expect["sign_count"])
        #expect(result["aaguid"] == expect["aaguid"])
        #expect(result["attestation_type"] == expect["attestation_type"])
        #expect(result["credential_public_key"] == expect["credential_public_key"])
        #expect(result["user_verified"] == expect["user_verified"])
        for key in ["backup_eligible", "backup_state"] where expect[key] != nil {
            #expect(result[key] == expect[key], "\(key)")
        }
    }

    @Test("authentication fixture", arguments: Fixtures.files("authentication"))
    func authentication(_ relative: String) throws {
        let (result, expect) = try Self.run(relative, ceremony: .authentication)
        let ok = try #require(expect["ok"]?.bool as Bool?)
        #expect(result["ok"]?.bool == ok, "\(relative): \(result.serialized)")
        guard ok else { return Self.checkFailure(relative, result) }
        #expect(result["new_sign_count"] == expect["new_sign_count"])
        #expect(result["alg"] == expect["alg"])
        #expect(result["user_verified"] == expect["user_verified"])
        for key in ["backup_eligible", "backup_state"] where expect[key] != nil {
            #expect(result[key] == expect[key], "\(key)")
        }
    }

    @Test("every negative fixture is listed with its reason")
    func negativesAreListed() throws {
        for relative in Self.expectedFailures.keys {
            #expect(FileManager.default.fileExists(atPath: Fixtures.folder.appendingPathComponent(relative).path), "\(relative)")
        }
        #expect(Fixtures.files("registration").count >= 53)
        #expect(Fixtures.files("authentication").count >= 28)
    }

    @Test("a chain that reaches its anchor is refused once the anchor is withheld or the time is wrong")
    func trustDependsOnAnchorAndTime() throws {
        let relative = "registration/apple_passkey_2021.json"
        let path = Fixtures.folder.appendingPathComponent(relative).path
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let file = try ResponseFile(json: bytes, ceremony: .registration)
        let wrongRoot = try Certificate.parsePEM(String(contentsOfFile: Fixtures.folder.appendingPathComponent("trust_anchors/globalsign_root_ca.pem").path, encoding: .utf8))
        let result = file.verify(anchors: wrongRoot, now: Date())
        #expect(result["ok"]?.bool == false)
        #expect(result["reason"]?.string == "attestation_untrusted")
    }
}
