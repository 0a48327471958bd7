import Foundation
import SignetAPI
import SignetCrypto
import SignetHTTP
import SignetStore
import SignetWebAuthn

extension SignetService {
    /// Longest email accepted (RFC 5321 §4.5.3.1.3 path limit).
    static let maxEmailLength = 254

    /// `POST /passkey/register`: sign-up challenge (Auth0 native passkeys). Creates an auth
    /// session bound to the client, with a new user ID and handle; nothing else is written.
    func passkeyRegister(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try PasskeyRegisterRequest(wire: self.body(request))
        let client = try client(body.client_id, grant: GrantNames.webauthn)
        let email = body.user_profile.email.trimmingCharacters(in: .whitespaces).lowercased()
        guard email.count <= Self.maxEmailLength, let at = email.firstIndex(of: "@"), at != email.startIndex,
              email.index(after: at) != email.endIndex, !email.contains(where: { $0.isWhitespace })
        else { throw APIError.malformed("user_profile.email is not an email address") }
        let name = body.user_profile.name?.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (name?.count ?? 0) <= 200 else { throw APIError.malformed("user_profile.name is longer than 200 characters") }
        if try store.user(email: email) != nil {
            audit("sign_up_challenge", "failure", reason: "user_exists", client: client.id, request: request)
            throw APIError(409, "invalid_request", "user_exists", "an account with this email exists; sign in with its passkey instead")
        }
        let user = UserEntity(id: random(32), name: email, displayName: name?.isEmpty == false ? name! : email)
        var settings = CreationSettings()
        settings.residentKey = configuration.residentKey
        settings.userVerification = configuration.userVerification
        settings.attestation = configuration.attestation
        settings.timeout = configuration.sessionTimeout * 1000
        let options = rp.creationOptions(user: user, settings: settings, random: random)
        let session = AuthSession(
            id: timeOrderedID(), kind: .signUp, clientID: client.id, challenge: options.challenge,
            userID: UUID().uuidString.lowercased(), userHandle: user.id, email: email, name: name,
            requireUserVerification: configuration.userVerification == "required",
            expiresAt: nowMillis + Int64(configuration.sessionTimeout) * 1000)
        return .json(200, JSONValue.object(["authn_params_public_key": options.json, "auth_session": .string(try sessions.seal(session))]).serializedBytes)
    }

    /// `POST /passkey/challenge`: sign-in challenge. With a `username` that names an account the
    /// options list its passkeys (username-first); otherwise they ask for a discoverable
    /// credential. An unknown username gets the same answer as none, so accounts cannot be probed.
    func passkeyChallenge(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try PasskeyChallengeRequest(wire: self.body(request))
        let client = try client(body.client_id, grant: GrantNames.webauthn)
        var user: UserRecord?
        var allowed: [CredentialRow] = []
        if let username = body.username?.trimmingCharacters(in: .whitespaces).lowercased(), !username.isEmpty {
            guard username.count <= Self.maxEmailLength else { throw APIError.malformed("username is too long") }
            if let found = try store.user(email: username) {
                allowed = Array(try store.credentials(userID: found.id).filter { $0.revokedAt == nil }.prefix(AuthSession.maxAllowCredentials))
                user = allowed.isEmpty ? nil : found
            }
        }
        let options = rp.requestOptions(
            allowCredentials: allowed.map { CredentialDescriptor(id: $0.id, transports: $0.transports) },
            userVerification: configuration.userVerification, timeout: configuration.sessionTimeout * 1000, random: random)
        let session = AuthSession(
            id: timeOrderedID(), kind: .signIn, clientID: client.id, challenge: options.challenge, userID: user?.id,
            allowCredentials: allowed.map(\.id), requireUserVerification: configuration.userVerification == "required",
            expiresAt: nowMillis + Int64(configuration.sessionTimeout) * 1000)
        return .json(200, JSONValue.object(["authn_params_public_key": options.json, "auth_session": .string(try sessions.seal(session))]).serializedBytes)
    }
}
