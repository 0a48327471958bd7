public import Foundation
import SignetAPI

/// A key that makes DPoP proofs (RFC 9449): the Secure Enclave (without a biometric gate, so API
/// calls do not prompt), Android Keystore, or a software key in tests.
public protocol DPoPKeyStore: Sendable {
    /// `ES256` (a P-256 key) or `EdDSA` (Ed25519).
    var algorithm: String { get }
    /// The public key's JWK members in RFC 7638 order (`crv`, `kty`, `x`, `y` for P-256).
    func publicJWK() async throws -> [JWKMember]
    /// Signs `message`: DER ECDSA P-256/SHA-256 (as `SecKeyCreateSignature` gives it) for ES256,
    /// the 64-byte signature for EdDSA.
    func sign(_ message: Data) async throws -> Data
}

/// One member of a JWK, in the order the thumbprint needs.
public struct JWKMember: Sendable, Equatable {
    public let name: String
    public let value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// DPoP proof JWTs as the SDK writes them (RFC 9449 §4.2): pure, over a ``DPoPKeyStore``.
public enum DPoPProofs {
    /// A proof for one request; `accessToken` adds `ath`.
    public static func proof(key: any DPoPKeyStore, method: String, url: URL, accessToken: String? = nil, nonce: String? = nil,
                             now: Date = Date(), jti: String = UUID().uuidString) async throws -> String {
        let jwk = try await key.publicJWK()
        let jwkJSON = "{" + jwk.map { "\"\($0.name)\":\"\($0.value)\"" }.joined(separator: ",") + "}"
        let header = #"{"alg":"\#(key.algorithm)","jwk":\#(jwkJSON),"typ":"dpop+jwt"}"#
        var claims = #"{"htm":"\#(method)","htu":\#(quoted(htu(url))),"iat":\#(Int64(now.timeIntervalSince1970)),"jti":"\#(jti)""#
        if let accessToken { claims += #","ath":"\#(SHA256.base64url(Data(accessToken.utf8)))""# }
        if let nonce { claims += #","nonce":\#(quoted(nonce))"# }
        claims += "}"
        let input = Data(header.utf8).base64URLEncodedString + "." + Data(claims.utf8).base64URLEncodedString
        var signature = try await key.sign(Data(input.utf8))
        if key.algorithm == "ES256" {
            guard let raw = rawSignature(fromDER: signature) else { throw SignetError(.invalidResponse, "the DPoP key's signature is not DER ECDSA") }
            signature = raw
        }
        return input + "." + signature.base64URLEncodedString
    }

    /// The URL as `htu` carries it: without query and fragment.
    public static func htu(_ url: URL) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.query = nil
        components?.fragment = nil
        return components?.string ?? url.absoluteString
    }

    /// The thumbprint (RFC 7638) of a key's JWK: what the server binds tokens to (`cnf.jkt`).
    public static func thumbprint(_ jwk: [JWKMember]) -> String {
        SHA256.base64url(Data(("{" + jwk.map { "\"\($0.name)\":\"\($0.value)\"" }.joined(separator: ",") + "}").utf8))
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// `r || s`, 32 bytes each, from a DER ECDSA signature (SEQUENCE of two INTEGERs).
    public static func rawSignature(fromDER der: Data) -> Data? {
        let bytes = [UInt8](der)
        guard bytes.count >= 8, bytes[0] == 0x30 else { return nil }
        var i = bytes[1] & 0x80 == 0 ? 2 : 2 + Int(bytes[1] & 0x7f)
        var out = Data()
        for _ in 0..<2 {
            guard i + 2 <= bytes.count, bytes[i] == 0x02 else { return nil }
            let length = Int(bytes[i + 1])
            guard length > 0, length <= 33, i + 2 + length <= bytes.count else { return nil }
            var integer = Array(bytes[(i + 2)..<(i + 2 + length)])
            while integer.count > 32, integer.first == 0 { integer.removeFirst() }
            guard integer.count <= 32 else { return nil }
            out.append(Data(repeating: 0, count: 32 - integer.count) + integer)
            i += 2 + length
        }
        return i == bytes.count ? out : nil
    }
}

/// DPoP proofs signed by the device key (behind its biometric check): for the refreshes of a
/// client with `refresh_proof: "device_key"`.
struct DeviceKeyProofs: DPoPKeyStore {
    let store: any DeviceKeyStore
    let point: Data
    let algorithm = "ES256"

    /// `publicKey` as enrolled: SPKI DER of a P-256 key (its last 65 bytes are the point) or the
    /// X9.63 point itself.
    init?(store: any DeviceKeyStore, publicKey: Data) {
        let point = publicKey.count == 91 ? publicKey.suffix(65) : publicKey
        guard point.count == 65, point.first == 0x04 else { return nil }
        self.store = store
        self.point = Data(point)
    }

    func publicJWK() async throws -> [JWKMember] {
        [JWKMember("crv", "P-256"), JWKMember("kty", "EC"), JWKMember("x", point[1..<33].base64URLEncodedString), JWKMember("y", point[33..<65].base64URLEncodedString)]
    }

    func sign(_ message: Data) async throws -> Data { try await store.sign(message, reason: "Stay signed in") }
}
