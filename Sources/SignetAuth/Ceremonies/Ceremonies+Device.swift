import Foundation
public import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// `POST /oauth/device/code`'s answer (RFC 8628 §3.2).
public struct DeviceAuthorization: Codable, Sendable, Equatable {
    public var device_code: String
    /// `XXXX-XXXX`, as the user reads and types it.
    public var user_code: String
    public var verification_uri: String
    public var verification_uri_complete: String
    public var expires_in: Int
    public var interval: Int
}

extension Ceremonies {
    /// The action type a signed-in phone approves (or denies) a new device with.
    public static let deviceApproval = "signet.device_approval"
    /// Consonants only (RFC 8628 §6.1): no vowels, so no words; 20^8 ≈ 2^34.6 codes.
    static let userCodeAlphabet = Array("BCDFGHJKLMNPQRSTVWXZ")
    static let deviceCodeLifetime = 600
    static let deviceInterval = 5

    /// `POST /oauth/device/code` (RFC 8628 §3.1): a device code for the new device to poll with
    /// and a user code for the user to approve on a phone already signed in. Counted per client
    /// address. A confidential client authenticates, by `secret` or `Authorization: Basic`.
    public func startDeviceSignIn(clientID: String?, secret: String? = nil, scope: String?, userAgent: String?, context: RequestContext) throws -> DeviceAuthorization {
        let client = try tokenEndpointClient(clientID: clientID, secret: secret, grant: GrantNames.deviceCode, context: context)
        if let wait = try count(.deviceCodesPerIP, RateLimit(limit: 30, window: 3600), key: addressKey(context)) {
            throw Self.rateLimited(wait, "more than 30 device sign-ins an hour from this address")
        }
        let grant = try tokenGrant(scope: scope, audience: nil, client: client)
        let now = nowMillis
        for _ in 0..<5 {
            let deviceCode = Base64URL.encode(random(32))
            let userCode = randomUserCode()
            let row = DeviceCodeRow(hash: Digest.sha256.hash(Array(deviceCode.utf8)), userCode: userCode, clientID: client.id, scope: grant.scope,
                                    remote: context.remoteAddress, userAgent: userAgent.map { Self.neutralized(String($0.prefix(200))) }, createdAt: now,
                                    expiresAt: now + Int64(Self.deviceCodeLifetime) * 1000, interval: Self.deviceInterval)
            // The code and its audit row commit together.
            let event = pendingAuditEvent(.deviceCode, client: client.id, context: context)
            do {
                try store.createDeviceCode(row, writes: [.audit(event)])
            } catch {
                if error.code == .conflict { continue }  // the user code is taken: draw again
                throw error
            }
            counted(event)
            let shown = Self.shownUserCode(userCode)
            return DeviceAuthorization(device_code: deviceCode, user_code: shown, verification_uri: configuration.issuer + "/device",
                                       verification_uri_complete: configuration.issuer + "/device?user_code=" + shown, expires_in: Self.deviceCodeLifetime,
                                       interval: Self.deviceInterval)
        }
        throw AuthError(.conflict, "no free user code after five draws")
    }

    /// Eight letters of ``userCodeAlphabet``, by rejection sampling from the random source.
    func randomUserCode() -> String {
        var code = ""
        while code.count < 8 {
            for byte in random(16) where code.count < 8 && Int(byte) < 240 { code.append(Self.userCodeAlphabet[Int(byte) % 20]) }
        }
        return code
    }

    /// A user code as a device shows it and a page repeats it: `XXXX-XXXX` (RFC 8628 §6.1).
    public static func shownUserCode(_ normalized: String) -> String {
        normalized.count == 8 ? normalized.prefix(4) + "-" + normalized.suffix(4) : normalized
    }

    /// A user code as typed: case, dashes and spaces do not count.
    public static func normalizedUserCode(_ text: String) -> String {
        String(text.uppercased().filter { $0 != "-" && $0 != " " }.prefix(16))
    }

    /// The pending device sign-in an approval names, for the phone to show (which client,
    /// platform and address asked). A user code that matches none counts against the account's
    /// budget of 10 an hour, so codes cannot be guessed from a signed-in phone.
    func deviceRequest(_ action: JSONValue?, user: UserRecord) throws -> JSONValue {
        guard let text = action?["user_code"]?.string else { throw AuthError(.actionInvalid, "a device approval needs a string user_code") }
        let code = Self.normalizedUserCode(text)
        guard let row = try store.deviceCode(userCode: code), row.status == .pending, row.expiresAt > nowMillis else {
            if let wait = try attempts(.userCodeGuesses, rate(.userCodeGuesses), key: user.id) {
                throw Self.rateLimited(wait, "more than \(rate(.userCodeGuesses).limit) unknown user codes an hour for this account")
            }
            throw AuthError(.userCodeUnknown, "no pending device sign-in with this user code")
        }
        let client = clients.client(row.clientID)
        return .object([
            "client_id": .string(row.clientID), "client_name": client?.name.map(JSONValue.string) ?? .null,
            "user_agent": row.userAgent.map(JSONValue.string) ?? .null, "address": .string(row.remote),
            "requested_at": .string(Self.iso(row.createdAt)), "scope": .string(row.scope),
        ])
    }

    /// After the approving device key's signature verified: the device code is granted to the
    /// account, or denied.
    func decideDevice(_ action: JSONValue, approve: Bool, user: UserRecord, deviceKeyID: String, context: RequestContext) throws {
        let code = Self.normalizedUserCode(action["user_code"]?.string ?? "")
        guard try store.decideDeviceCode(userCode: code, approve: approve, userID: user.id, approvedBy: deviceKeyID, now: nowMillis) else {
            throw AuthError(.expiredToken, "the device sign-in is no longer pending")
        }
        audit(approve ? .deviceApproved : .deviceDenied, user: user.id, credential: deviceKeyID, context: context)
    }

    /// The device code grant (RFC 8628 §3.4–3.5): `authorization_pending` until approved,
    /// `slow_down` for a poll inside the interval (which then grows by 5 s), `access_denied`,
    /// `expired_token`; once approved, tokens for the account with `amr: ["hwk", "mca"]` (a
    /// device key approved it over another channel), the code used in the same transaction as
    /// the refresh token. The session ends with the device key that approved it.
    public func deviceCodeGrant(_ request: TokenRequest, deviceCode: String?, context: RequestContext) throws -> TokenResponse {
        let client = try tokenClient(request, grant: GrantNames.deviceCode, context: context)
        guard let deviceCode else { throw AuthError.malformed("device_code is required") }
        guard deviceCode.utf8.count <= 100 else { throw AuthError.malformed("device_code is longer than any this server issues") }
        let grant = try tokenGrant(scope: nil, audience: request.audience, client: client, context: context)
        let hash = Digest.sha256.hash(Array(deviceCode.utf8))
        switch try store.pollDeviceCode(hash: hash, clientID: client.id, now: nowMillis) {
        case .unknown: throw AuthError(.expiredToken, "no such device code for this client, or it was used")
        case .expired: throw AuthError(.expiredToken, "the device code expired")
        case .denied: throw AuthError(.accessDenied, "the sign-in was denied")
        case .pending: throw AuthError(.authorizationPending, "not approved yet")
        case .slowDown(let interval): throw AuthError(.slowDown, "polled inside the interval; it is now \(interval) s")
        case .approved(let row):
            guard let userID = row.userID, let user = try store.user(id: userID) else { throw AuthError(.expiredToken, "the approving account is gone") }
            guard !user.blocked else { throw AuthError(.userBlocked, "the account is blocked") }
            var granted = try tokenGrant(scope: row.scope, audience: request.audience, client: client)
            granted.binding = grant.binding
            // Approved over another channel (`mca`) by a device key (`hwk`) or, on the /device
            // page, by a passkey (`pop`).
            let amr = [row.approvedBy?.hasPrefix("dk_") == false ? "pop" : "hwk", "mca"]
            try requireClientPolicy(userID: user.id, amr: amr, client: client)
            let authTime = nowMillis / 1000
            let fresh = random(48)
            let session = SessionRef(sid: Base64URL.encode(timeOrderedID()), credential: row.approvedBy)
            let refresh = granted.offline
                ? refreshToken(Array(fresh[16..<48]), userID: user.id, client: client, scope: granted.scope, amr: amr, authTime: authTime, session: session,
                               jkt: granted.refreshBinding(client), context: context)
                : nil
            do {
                try store.perform([.useDeviceCode(hash: hash), .audit(auditEvent(.deviceSignIn, user: user.id, client: client.id, credential: row.approvedBy, context: context))]
                    + (refresh.map { [.refreshToken($0.row)] } ?? []) + proofMark(grant.binding))
            } catch {
                guard error.code == .sessionUsed else { throw error }
                throw AuthError(.expiredToken, "the device code was used by a parallel poll")
            }
            var tokens = try issueTokens(user: user, client: client, grant: granted, amr: amr, authTime: authTime, jti: Array(fresh[0..<16]), session: session)
            tokens.refresh_token = refresh?.token
            return tokens
        }
    }
}
