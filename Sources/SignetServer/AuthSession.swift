import Foundation
import SignetCrypto
import SignetWebAuthn

/// A pending ceremony: its challenge and everything the token exchange checks the proof against.
///
/// It travels sealed inside the `auth_session` string (AES-256-GCM under a key derived from the
/// key-encryption key, so any instance can open it and nobody can read or alter it); the store
/// only records which sessions were used. Issuing a challenge therefore writes nothing, and single
/// use is one primary-key insert, atomic across instances.
struct AuthSession: Sendable, Equatable {
    enum Kind: String, Sendable { case signUp = "sign_up", signIn = "sign_in", addPasskey = "add_passkey" }

    /// 16 random bytes: the single-use mark.
    var id: [UInt8]
    var kind: Kind
    var clientID: String
    var challenge: [UInt8]
    /// Sign-up: the new user's ID and handle, email and name. Sign-in: the account named, if any.
    var userID: String?
    var userHandle: [UInt8]?
    var email: String?
    var name: String?
    /// Credential IDs offered in allowCredentials (username-first sign-in).
    var allowCredentials: [[UInt8]] = []
    var requireUserVerification: Bool
    /// Milliseconds since 1970.
    var expiresAt: Int64

    /// At most this many credential IDs ride along (username-first sign-in lists the account's passkeys).
    static let maxAllowCredentials = 32
}

/// Seals and opens ``AuthSession``s.
struct SessionSealer: Sendable {
    let key: [UInt8]
    static let aad = Array("signet/auth_session/v1".utf8)

    init(kek: [UInt8]) {
        key = Digest.sha256.hmac(key: kek, data: Array("signet auth_session sealing key v1".utf8))
    }

    func seal(_ s: AuthSession) throws -> String {
        var pairs: [(CBOR, CBOR)] = [
            (.int(1), .bytes(s.id)), (.int(2), .text(s.kind.rawValue)), (.int(3), .text(s.clientID)), (.int(4), .bytes(s.challenge)),
            (.int(9), .array(s.allowCredentials.prefix(AuthSession.maxAllowCredentials).map(CBOR.bytes))),
            (.int(10), .bool(s.requireUserVerification)), (.int(11), .int(Int(s.expiresAt))),
        ]
        if let v = s.userID { pairs.append((.int(5), .text(v))) }
        if let v = s.userHandle { pairs.append((.int(6), .bytes(v))) }
        if let v = s.email { pairs.append((.int(7), .text(v))) }
        if let v = s.name { pairs.append((.int(8), .text(v))) }
        return Base64URL.encode(try AESGCM.seal(CBOREncoder.encode(.map(CBORMap(pairs))), key: key, aad: Self.aad))
    }

    /// The session, or `nil` when the text was not sealed by this deployment (or was altered).
    func open(_ text: String) -> AuthSession? {
        guard text.utf8.count <= 4096, let sealed = Base64URL.decode(text),
              let plain = try? AESGCM.open(sealed, key: key, aad: Self.aad),
              let map = try? CBORDecoder(maxDepth: 3, maxLength: 4096).decode(plain).map,
              let id = map[int: 1]?.bytes, let kind = map[int: 2]?.text.flatMap(AuthSession.Kind.init(rawValue:)),
              let client = map[int: 3]?.text, let challenge = map[int: 4]?.bytes, let allow = map[int: 9]?.array,
              case .bool(let uv)? = map[int: 10], let expires = map[int: 11]?.int
        else { return nil }
        return AuthSession(
            id: id, kind: kind, clientID: client, challenge: challenge, userID: map[int: 5]?.text, userHandle: map[int: 6]?.bytes,
            email: map[int: 7]?.text, name: map[int: 8]?.text, allowCredentials: allow.compactMap(\.bytes),
            requireUserVerification: uv, expiresAt: Int64(expires))
    }
}
