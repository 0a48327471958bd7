import Foundation
import SignetCrypto
import SignetWebAuthn

/// A pending ceremony: its challenge and everything the token exchange checks the proof against.
///
/// It travels sealed inside the `auth_session` string (AES-256-GCM under a key derived from the
/// key-encryption key, so any instance can open it and nobody can read or alter it); the store
/// only records which sessions were used. Issuing a challenge therefore writes nothing, and single
/// use is one primary-key insert, atomic across instances.
package struct AuthSession: Sendable, Equatable {
    package enum Kind: String, Sendable {
        case signUp = "sign_up", signIn = "sign_in", addPasskey = "add_passkey"
        /// A sign-in by the account a bearer token names (RFC 9470 step-up): another account's
        /// passkey is refused with `user_mismatch`.
        case stepUp = "step_up"
        /// Adding a passkey the browser may create without a gesture (`mediation: "conditional"`,
        /// after an email-code sign-in): the registration may have UP clear.
        case addPasskeyConditional = "add_passkey_conditional"
        /// An enrollment link (`POST /api/v2/tickets/passkey-enrollment`): not a ceremony but the
        /// operator's permission, for days, to add a first passkey to the account it names; each
        /// try at `/enroll` runs an `addPasskey` session of its own, and the link's ID is its
        /// single-use mark.
        case enrollment
        /// An app's registration for an enrollment link (`POST /passkey/enroll`), redeemed at the
        /// token endpoint: the link's account in `userID`, and the link's ID, its single-use mark,
        /// as the one entry of `allowCredentials`.
        case enrollmentRegistration = "enrollment_registration"
    }

    /// 16 random bytes: the single-use mark.
    package var id: [UInt8]
    package var kind: Kind
    package var clientID: String
    package var challenge: [UInt8]
    /// Sign-up: the new user's ID and handle, email and name. Sign-in: the account named, if any.
    package var userID: String?
    package var userHandle: [UInt8]?
    package var email: String?
    package var name: String?
    /// Credential IDs offered in allowCredentials (username-first sign-in).
    package var allowCredentials: [[UInt8]] = []
    package var requireUserVerification: Bool
    /// Milliseconds since 1970.
    package var expiresAt: Int64
    /// Adding a passkey: the sign-in session (the token's `sid`, OIDC Front-Channel Logout §3)
    /// that began the ceremony; only a token of that session may finish it.
    package var beganBy: String?

    /// When the ceremony began, in milliseconds since 1970: the first 6 bytes of its
    /// time-ordered ``id``.
    package var startedAt: Int64 { Ceremonies.madeAt(timeOrderedID: id) }

    /// At most this many credential IDs ride along (username-first sign-in lists the account's passkeys).
    package static let maxAllowCredentials = 32

    package init(id: [UInt8], kind: Kind, clientID: String, challenge: [UInt8], userID: String? = nil, userHandle: [UInt8]? = nil, email: String? = nil,
                 name: String? = nil, allowCredentials: [[UInt8]] = [], requireUserVerification: Bool, expiresAt: Int64, beganBy: String? = nil) {
        self.id = id
        self.kind = kind
        self.clientID = clientID
        self.challenge = challenge
        self.userID = userID
        self.userHandle = userHandle
        self.email = email
        self.name = name
        self.allowCredentials = allowCredentials
        self.requireUserVerification = requireUserVerification
        self.expiresAt = expiresAt
        self.beganBy = beganBy
    }
}

/// Seals and opens ``AuthSession``s.
///
/// The sealed text is base64url of AES-256-GCM over the session's fields in a fixed binary layout
/// (format 2, below). Sessions sealed as a CBOR map (format 1, by versions before) still open,
/// so a rolling upgrade loses no ceremony in flight.
package struct SessionSealer: Sendable {
    package let key: [UInt8]
    package static let aad = Array("signet/auth_session/v1".utf8)

    package init(kek: [UInt8]) {
        key = Digest.sha256.hmac(key: kek, data: Array("signet auth_session sealing key v1".utf8))
    }

    package func seal(_ s: AuthSession) throws -> String {
        // (A text past 4 KiB would not open: such a session is refused here already.)
        guard let plain = Self.encode(s), plain.count <= 3000 else { throw AuthError.malformed("the ceremony's data is too large") }
        return Base64URL.encode(try AESGCM.seal(plain, key: key, aad: Self.aad))
    }

    /// The session, or `nil` when the text was not sealed by this deployment (or was altered).
    package func open(_ text: String) -> AuthSession? {
        guard text.utf8.count <= 4096, let sealed = Base64URL.decode(text),
              let plain = try? AESGCM.open(sealed, key: key, aad: Self.aad), let first = plain.first
        else { return nil }
        return first == Self.format ? Self.decode(plain) : Self.decodeCBOR(plain)
    }

    // MARK: format 2

    /// Format 2: the byte 2; the kind (0 sign-up, 1 sign-in, 2 add-passkey, 3 step-up, 4
    /// conditional add-passkey, 5 enrollment link, 6 enrollment registration); flags (bit 0 user
    /// verification required, bits 1–5 user ID, user handle, email, name, beginning session
    /// present; bit 5 is newer than the rest, and versions before it refuse a session that sets it); the expiry,
    /// 8 bytes big-endian; then the ID, the challenge, the client ID and the optional fields
    /// present, each as a 2-byte big-endian length and its bytes; then the number of allowed
    /// credential IDs (1 byte) and each, length-prefixed the same way.
    static let format: UInt8 = 2
    package static let kinds: [AuthSession.Kind] = [.signUp, .signIn, .addPasskey, .stepUp, .addPasskeyConditional, .enrollment, .enrollmentRegistration]

    /// `nil` when a field is longer than a 2-byte length can say.
    package static func encode(_ s: AuthSession) -> [UInt8]? {
        let allowed = s.allowCredentials.prefix(AuthSession.maxAllowCredentials)
        var out: [UInt8] = []
        out.reserveCapacity(96 + (s.email?.utf8.count ?? 0) + (s.name?.utf8.count ?? 0) + allowed.reduce(0) { $0 + $1.count + 2 })
        out.append(format)
        out.append(UInt8(kinds.firstIndex(of: s.kind)!))
        var flags: UInt8 = s.requireUserVerification ? 1 : 0
        if s.userID != nil { flags |= 2 }
        if s.userHandle != nil { flags |= 4 }
        if s.email != nil { flags |= 8 }
        if s.name != nil { flags |= 16 }
        if s.beganBy != nil { flags |= 32 }
        out.append(flags)
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: UInt64(bitPattern: s.expiresAt) >> UInt64(shift))) }
        var fits = true
        func field(_ bytes: some Collection<UInt8>) {
            guard bytes.count <= 0xffff else { fits = false; return }
            out.append(UInt8(bytes.count >> 8))
            out.append(UInt8(truncatingIfNeeded: bytes.count))
            out.append(contentsOf: bytes)
        }
        field(s.id)
        field(s.challenge)
        field(s.clientID.utf8)
        if let v = s.userID { field(v.utf8) }
        if let v = s.userHandle { field(v) }
        if let v = s.email { field(v.utf8) }
        if let v = s.name { field(v.utf8) }
        if let v = s.beganBy { field(v.utf8) }
        out.append(UInt8(allowed.count))
        for id in allowed { field(id) }
        return fits ? out : nil
    }

    /// The session in `plain` (format 2), or `nil` for bytes that are not one, whole.
    package static func decode(_ plain: [UInt8]) -> AuthSession? {
        var i = 0
        func byte() -> UInt8? {
            guard i < plain.count else { return nil }
            defer { i += 1 }
            return plain[i]
        }
        func field() -> [UInt8]? {
            guard let high = byte(), let low = byte() else { return nil }
            let n = Int(high) << 8 | Int(low)
            guard plain.count - i >= n else { return nil }
            defer { i += n }
            return Array(plain[i..<(i + n)])
        }
        func text() -> String? { field().map { String(decoding: $0, as: UTF8.self) } }
        guard byte() == format, let kindIndex = byte(), Int(kindIndex) < kinds.count, let flags = byte(), flags < 64, plain.count >= 11 else { return nil }
        var expires: UInt64 = 0
        for _ in 0..<8 { expires = expires << 8 | UInt64(byte()!) }
        guard let id = field(), let challenge = field(), let client = text() else { return nil }
        var userID: String?, handle: [UInt8]?, email: String?, name: String?, beganBy: String?
        if flags & 2 != 0 { guard let v = text() else { return nil }; userID = v }
        if flags & 4 != 0 { guard let v = field() else { return nil }; handle = v }
        if flags & 8 != 0 { guard let v = text() else { return nil }; email = v }
        if flags & 16 != 0 { guard let v = text() else { return nil }; name = v }
        if flags & 32 != 0 { guard let v = text() else { return nil }; beganBy = v }
        guard let count = byte(), Int(count) <= AuthSession.maxAllowCredentials else { return nil }
        var allowed: [[UInt8]] = []
        for _ in 0..<count {
            guard let v = field() else { return nil }
            allowed.append(v)
        }
        guard i == plain.count else { return nil }
        return AuthSession(
            id: id, kind: kinds[Int(kindIndex)], clientID: client, challenge: challenge, userID: userID, userHandle: handle, email: email, name: name,
            allowCredentials: allowed, requireUserVerification: flags & 1 != 0, expiresAt: Int64(bitPattern: expires), beganBy: beganBy)
    }

    // MARK: format 1

    /// Format 1: a CBOR map with integer keys (1 ID, 2 kind, 3 client ID, 4 challenge, 5 user ID,
    /// 6 user handle, 7 email, 8 name, 9 allowed credential IDs, 10 user verification, 11 expiry).
    package static func decodeCBOR(_ plain: [UInt8]) -> AuthSession? {
        guard let map = try? CBORDecoder(maxDepth: 3, maxLength: 4096).decode(plain).map,
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
