/// A source of random bytes, injected so that the core never reads a global one.
/// The server passes OpenSSL's CSPRNG; tests may pass a fixed sequence.
public typealias RandomBytes = @Sendable (Int) -> [UInt8]

/// The user account a credential is created for (WebAuthn L3 §5.4.3).
public struct UserEntity: Sendable {
    /// The user handle: random, at most 64 bytes, never personal data (§14.6.1).
    public var id: [UInt8]
    public var name: String
    public var displayName: String

    public init(id: [UInt8], name: String, displayName: String) {
        self.id = id
        self.name = name
        self.displayName = displayName
    }
}

/// A credential named in `excludeCredentials` or `allowCredentials` (§5.8.3).
public struct CredentialDescriptor: Sendable {
    public var id: [UInt8]
    public var transports: [String]

    public init(id: [UInt8], transports: [String] = []) {
        self.id = id
        self.transports = transports
    }

    var json: JSONValue {
        var object: JSONObject = ["type": .string("public-key"), "id": .string(Base64URL.encode(id))]
        if !transports.isEmpty { object["transports"] = .array(transports.map(JSONValue.string)) }
        return .object(object)
    }
}

/// Choices for creation options that a deployment may change (§5.4).
public struct CreationSettings: Sendable {
    /// `discouraged`, `preferred` or `required` (§5.4.6).
    public var residentKey = "required"
    public var userVerification = "preferred"
    /// `none`, `indirect`, `direct` or `enterprise` (§5.4.7).
    public var attestation = "none"
    /// Milliseconds the client may wait.
    public var timeout = 300_000
    public init() {}
}

/// Options and the challenge that goes with them; the caller keeps the challenge for `finish`.
public struct CeremonyOptions: Sendable {
    /// `PublicKeyCredentialCreationOptionsJSON` or `PublicKeyCredentialRequestOptionsJSON` (§5.1).
    public let json: JSONValue
    public let challenge: [UInt8]
}

extension RelyingParty {
    /// Length of every challenge, in bytes (§13.4.3 asks for at least 16).
    public static let challengeLength = 32

    /// `PublicKeyCredentialCreationOptionsJSON` (§5.4) for `user`, with a fresh challenge from `random`.
    public func creationOptions(
        user: UserEntity, excludeCredentials: [CredentialDescriptor] = [], settings: CreationSettings = CreationSettings(),
        random: RandomBytes
    ) -> CeremonyOptions {
        let challenge = random(Self.challengeLength)
        let json = JSONValue.object([
            "rp": .object(["id": .string(id), "name": .string(name)]),
            "user": .object([
                "id": .string(Base64URL.encode(user.id)), "name": .string(user.name), "displayName": .string(user.displayName),
            ]),
            "challenge": .string(Base64URL.encode(challenge)),
            "pubKeyCredParams": .array(allowedAlgorithms.map { .object(["type": .string("public-key"), "alg": .int($0.rawValue)]) }),
            "timeout": .int(settings.timeout),
            "excludeCredentials": .array(excludeCredentials.map(\.json)),
            "authenticatorSelection": .object([
                "residentKey": .string(settings.residentKey), "requireResidentKey": .bool(settings.residentKey == "required"),
                "userVerification": .string(settings.userVerification),
            ]),
            "attestation": .string(settings.attestation),
            "extensions": .object(["credProps": .bool(true)]),
        ])
        return CeremonyOptions(json: json, challenge: challenge)
    }

    /// `PublicKeyCredentialRequestOptionsJSON` (§5.5). An empty `allowCredentials` asks for a
    /// discoverable credential (usernameless sign-in); the member is then left out.
    public func requestOptions(
        allowCredentials: [CredentialDescriptor] = [], userVerification: String = "preferred", timeout: Int = 300_000,
        random: RandomBytes
    ) -> CeremonyOptions {
        let challenge = random(Self.challengeLength)
        var object: JSONObject = [
            "challenge": .string(Base64URL.encode(challenge)), "timeout": .int(timeout), "rpId": .string(id),
            "userVerification": .string(userVerification),
        ]
        if !allowCredentials.isEmpty { object["allowCredentials"] = .array(allowCredentials.map(\.json)) }
        return CeremonyOptions(json: .object(object), challenge: challenge)
    }
}
