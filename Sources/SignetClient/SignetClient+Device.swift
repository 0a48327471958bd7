public import Foundation
public import SignetAPI

/// A device sign-in in progress (RFC 8628): what the new device shows, and what it polls with.
public struct DeviceSignIn: Sendable, Equatable {
    /// `XXXX-XXXX`: the user approves it on a phone already signed in.
    public let userCode: String
    public let verificationURI: URL
    /// With the user code in it: for a QR code.
    public let verificationURIComplete: URL
    public let expiresAt: Date
    /// Seconds between polls, as the server asked.
    public let interval: Int
    let deviceCode: String
}

/// `POST /oauth/device/code`'s answer.
struct DeviceAuthorizationResponse: Codable {
    let device_code: String
    let user_code: String
    let verification_uri: String
    let verification_uri_complete: String
    let expires_in: Int
    let interval: Int
}

/// The device grant's poll.
struct DeviceTokenRequest: Encodable {
    let grant_type = "urn:ietf:params:oauth:grant-type:device_code"
    let client_id: String
    let device_code: String
}

struct DeviceCodeRequest: Encodable {
    let client_id: String
    let scope: String
}

extension SignetClient {
    /// On the new device: asks for a device sign-in; show ``DeviceSignIn/userCode`` (and a QR
    /// code of ``DeviceSignIn/verificationURIComplete``), then call ``completeDeviceSignIn(_:wait:)``.
    public func startDeviceSignIn(scope: String = OIDCScopes.text) async throws -> DeviceSignIn {
        let answer = try decode(DeviceAuthorizationResponse.self, try await send("POST", "oauth/device/code", body: DeviceCodeRequest(client_id: clientID, scope: scope)))
        guard let uri = URL(string: answer.verification_uri), let complete = URL(string: answer.verification_uri_complete) else {
            throw SignetError(.invalidResponse, "the verification URIs are not URLs")
        }
        return DeviceSignIn(userCode: answer.user_code, verificationURI: uri, verificationURIComplete: complete,
                            expiresAt: Date().addingTimeInterval(TimeInterval(answer.expires_in)), interval: answer.interval, deviceCode: answer.device_code)
    }

    /// Polls until the sign-in is approved (then it is this client's session), denied
    /// (`.accessDenied`) or expired (`.expiredToken`), waiting `interval` seconds between polls
    /// and 5 more after each `slow_down` (RFC 8628 §3.5). A poll that cannot reach the server
    /// is not the end: the wait doubles (up to 60 s) and polling goes on until the code expires,
    /// as §3.5 suggests for a connection that fails. `wait` is the sleep, injectable for tests.
    @discardableResult
    public func completeDeviceSignIn(_ signIn: DeviceSignIn,
                                     wait: @Sendable (Int) async throws -> Void = { try await Task.sleep(nanoseconds: UInt64($0) * 1_000_000_000) }) async throws -> TokenResponse {
        var interval = signIn.interval
        while true {
            let answer: Answer
            do {
                answer = try await send("POST", "oauth/token", body: DeviceTokenRequest(client_id: clientID, device_code: signIn.deviceCode))
            } catch let error as SignetError where error.code == .unreachable {
                interval = min(interval * 2, max(60, signIn.interval))
                guard Date().addingTimeInterval(TimeInterval(interval)) < signIn.expiresAt else { throw SignetError(.expiredToken, "the device sign-in expired") }
                try await wait(interval)
                continue
            }
            if (200..<300).contains(answer.status) { return try begin(try decode(TokenResponse.self, answer)) }
            let error = Self.error(answer)
            switch error.code {
            case .authorizationPending: break
            case .slowDown: interval += 5
            default: throw error
            }
            guard Date().addingTimeInterval(TimeInterval(interval)) < signIn.expiresAt else { throw SignetError(.expiredToken, "the device sign-in expired") }
            try await wait(interval)
        }
    }

    /// On the phone already signed in: approves with the device key, behind its biometric check,
    /// and returns who asked (which client, device and address).
    /// - Parameter confirm: shown who asks before anything is signed, so the user can see that the
    ///   code was not read out to them from someone else's screen (RFC 8628 §5.4); `false` signs
    ///   nothing and throws `.canceled` (the request stays pending; ``denyDevice(userCode:reason:)``
    ///   refuses it).
    @discardableResult
    public func approveDevice(userCode: String, reason: String = "Sign in on a new device",
                              confirm: @Sendable (DeviceRequest?) async -> Bool = { _ in true }) async throws -> DeviceRequest? {
        try await decideDevice(userCode: userCode, deny: false, reason: reason, confirm: confirm)
    }

    /// Denies a device sign-in, signed by the device key like an approval.
    @discardableResult
    public func denyDevice(userCode: String, reason: String = "Refuse the sign-in on a new device") async throws -> DeviceRequest? {
        try await decideDevice(userCode: userCode, deny: true, reason: reason, confirm: { _ in true })
    }

    func decideDevice(userCode: String, deny: Bool, reason: String, confirm: @Sendable (DeviceRequest?) async -> Bool) async throws -> DeviceRequest? {
        guard let deviceKeys = deviceKeyStore, let keyID = try tokens.load()?.deviceKeyID, await deviceKeys.hasKey() else {
            throw SignetError(.deviceKeyInvalidated, "approving a device needs this device's enrolled key")
        }
        let action = JSONDocument.object(["type": .string("signet.device_approval"), "user_code": .string(userCode)])
        let start = try decode(ActionChallengeResponse.self, try await authorized("POST", "actions/challenge", body: ActionChallengeRequest(device_key_id: keyID, action: action)))
        guard let challenge = Self.unbase64url(start.challenge) else { throw SignetError(.invalidResponse, "challenge is not base64url") }
        guard await confirm(start.device_request) else { throw SignetError(.canceled, "the user did not confirm the device sign-in") }
        let signature = try await deviceKeys.sign(challenge, reason: reason)
        _ = try decode(ActionApproval.self, try await authorized("POST", "actions/approve",
            body: ActionApproveRequest(challenge_id: start.challenge_id, signature: Self.base64url(signature), deny: deny)))
        return start.device_request
    }
}
