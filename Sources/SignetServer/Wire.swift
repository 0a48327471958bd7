import Foundation
package import SignetAPI
import SignetAuth
import SignetHTTP
package import SignetWebAuthn

// Request bodies are read once, by the strict parser (exact reasons for bad input, bounded
// depth and size, no duplicate keys), and mapped straight onto SignetAPI's wire types here: the
// types the SDK sends. Answers are SignetAPI types too, encoded by ``Wire/encode(_:status:)``;
// the two on the sign-in path (the ceremony start and the token answer) are written member by
// member instead, because Foundation's JSONEncoder costs more than a signature verification
// there. A test decodes every answer into its SignetAPI type, so the two cannot drift apart.

package enum Wire {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A SignetAPI answer as JSON.
    static func encode(_ value: some Encodable, status: Int = 200) throws -> HTTPResponse {
        .json(status, Array(try encoder.encode(value)))
    }

    /// A SignetAPI answer as a JSON value, for an answer that picks its members.
    static func value(_ value: some Encodable) throws -> JSONValue {
        try StrictJSON(maxDepth: 16, maxLength: 1 << 20).parse(Array(try encoder.encode(value)))
    }

    /// `PasskeyRegisterResponse` / `PasskeyChallengeResponse`: options and the auth session.
    static func encode(_ start: CeremonyStart) -> HTTPResponse {
        var object = JSONObjectWriter(capacity: 1024)
        object.add("authn_params_public_key", start.options)
        object.add("auth_session", start.authSession)
        return .json(200, object.serializedBytes)
    }

    /// `ActionChallengeResponse`.
    static func encode(_ challenge: ActionChallenge) -> HTTPResponse {
        var object = JSONObjectWriter(capacity: 512)
        object.add("challenge_id", challenge.challengeID)
        object.add("challenge", Base64URL.encode(challenge.challenge))
        object.add("expires_in", Int64(challenge.expiresIn))
        object.add("action_hash", Base64URL.encode(challenge.actionHash))
        if let options = challenge.options { object.add("authn_params_public_key", options) }
        if let request = challenge.deviceRequest { object.add("device_request", request) }
        return .json(200, object.serializedBytes)
    }

    /// `ActionApproval`.
    static func encode(_ approved: ApprovedAction) -> HTTPResponse {
        var object = JSONObjectWriter(capacity: 1024)
        object.add("action_token", approved.token)
        object.add("token_type", "Bearer")
        object.add("expires_in", Int64(approved.expiresIn))
        object.add("action", approved.action)
        return .json(200, object.serializedBytes)
    }

    /// Reads a JSON body (or, where `form` is allowed, `application/x-www-form-urlencoded`) with
    /// the strict parser: UTF-8, no duplicate keys, bounded depth, an object at the top.
    /// `alsoJSON` names another media type read as JSON (SCIM's `application/scim+json`).
    static func body(_ request: HTTPRequest, limit: Int, form: Bool = false, alsoJSON: String? = nil) throws -> JSONValue {
        let value: JSONValue
        let type = alsoJSON != nil && request.mediaType == alsoJSON ? "application/json" : request.mediaType
        switch type {
        case "application/json":
            do {
                value = try StrictJSON(maxDepth: 16, maxLength: limit).parse(request.body)
            } catch {
                throw AuthError.malformed("the body is not valid JSON: \(error.detail)")
            }
        case "application/x-www-form-urlencoded" where form:
            value = try formToJSON(request.body)
        default:
            throw AuthError(.unsupportedMediaType, "Content-Type \(request.mediaType ?? "none")", publicDetail: form
                ? "send application/json or application/x-www-form-urlencoded" : "send application/json")
        }
        guard case .object = value else { throw AuthError.malformed("the body must be a JSON object") }
        return value
    }

    /// `a=b&c=d` to a JSON object of strings; a value that is itself a JSON object or array
    /// (such as `authn_response`) is taken as JSON.
    package static func formToJSON(_ body: [UInt8]) throws -> JSONValue {
        // Members first, then one check for a repeated name: a 64 KiB form holds thousands of
        // pairs, and a lookup per pair would make it quadratic.
        var members: [JSONObject.Element] = []
        for pair in body.split(separator: UInt8(ascii: "&")) where !pair.isEmpty {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = HTTPRequest.percentDecoded(parts[0]), let value = HTTPRequest.percentDecoded(parts.count > 1 ? parts[1] : []) else {
                throw AuthError.malformed("the form body is not valid percent-encoding")
            }
            if value.hasPrefix("{") || value.hasPrefix("["), let nested = try? StrictJSON().parse(Array(value.utf8)) {
                members.append((key, nested))
            } else {
                members.append((key, .string(value)))
            }
        }
        do {
            return .object(try JSONObject(members: members))
        } catch {
            throw AuthError.malformed("the form repeats \"\(error.name)\"")
        }
    }
}

extension JSONValue {
    /// The API a token request names: Auth0's `audience`, or `resource` (RFC 8707 §2, one
    /// value: a repeated one is refused with the form). Both, naming different APIs, are refused.
    func requestedAudience() throws -> String? {
        let audience: String? = try optionalMember("audience"), resource: String? = try optionalMember("resource")
        if let audience, let resource, audience != resource {
            throw AuthError(.audienceNotAllowed, "audience and resource name different APIs", publicDetail: "send audience or resource (RFC 8707), one API")
        }
        return audience ?? resource
    }

    func member(_ name: String) throws -> String {
        guard let value = self[name] else { throw AuthError.malformed("missing member \"\(name)\"") }
        guard let text = value.string else { throw AuthError.malformed("member \"\(name)\" must be a string") }
        return text
    }

    func optionalMember(_ name: String) throws -> String? {
        switch self[name] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw AuthError.malformed("member \"\(name)\" must be a string")
        }
    }
}

extension PasskeyRegisterRequest {
    package init(wire json: JSONValue) throws {
        guard let profile = json["user_profile"], profile.object != nil else { throw AuthError.malformed("missing member \"user_profile\"") }
        self.init(client_id: try json.member("client_id"), realm: try json.optionalMember("realm"),
                  user_profile: UserProfile(email: try profile.member("email"), name: try profile.optionalMember("name")))
    }
}

extension EmailSignIn {
    /// `{"enabled": true|false}` and nothing else.
    package init(wire json: JSONValue) throws {
        guard let object = json.object, object.keys.allSatisfy({ $0 == "enabled" }), case .bool(let enabled)? = json["enabled"] else {
            throw AuthError.malformed("the body must be {\"enabled\": true or false}")
        }
        self.init(enabled: enabled)
    }
}

extension PasskeyEnrollRequest {
    package init(wire json: JSONValue) throws {
        self.init(client_id: try json.member("client_id"), ticket: try json.member("ticket"))
    }
}

extension PasskeyChallengeRequest {
    package init(wire json: JSONValue) throws {
        self.init(client_id: try json.member("client_id"), realm: try json.optionalMember("realm"), username: try json.optionalMember("username"))
    }
}

extension CredentialJSON {
    package init(wire json: JSONValue) throws {
        guard let response = json["response"], response.object != nil else { throw AuthError.malformed("missing member \"authn_response.response\"") }
        var transports: [String]?
        if let list = response["transports"], list != .null {
            guard let items = list.array, items.allSatisfy({ $0.string != nil }) else { throw AuthError.malformed("transports must be a list of strings") }
            transports = items.compactMap(\.string)
        }
        self.init(
            id: try json.member("id"), rawId: try json.member("rawId"), type: try json.optionalMember("type") ?? "public-key",
            authenticatorAttachment: try json.optionalMember("authenticatorAttachment"),
            response: AuthenticatorResponseJSON(
                clientDataJSON: try response.member("clientDataJSON"), attestationObject: try response.optionalMember("attestationObject"),
                transports: transports, authenticatorData: try response.optionalMember("authenticatorData"),
                signature: try response.optionalMember("signature"), userHandle: try response.optionalMember("userHandle")))
    }
}

extension JSONValue {
    /// The optional `authn_response` member: absent or null is `nil`, anything but an object is malformed.
    func optionalCredential() throws -> CredentialJSON? {
        guard let value = self["authn_response"], value != .null else { return nil }
        guard value.object != nil else { throw AuthError.malformed("authn_response must be an object") }
        return try CredentialJSON(wire: value)
    }
}

extension TokenRequest {
    /// - Parameter named: the client named otherwise, which may stand for `client_id`: by
    ///   `Authorization: Basic` (RFC 6749 §2.3.1) or a `client_assertion`'s `iss` (RFC 7521 §4.2).
    package init(wire json: JSONValue, clientID named: String? = nil) throws {
        let clientID: String? = try json.optionalMember("client_id")
        guard let id = clientID ?? named else { throw AuthError.malformed("missing member \"client_id\"") }
        self.init(
            grant_type: try json.member("grant_type"), client_id: id, auth_session: try json.optionalMember("auth_session"),
            authn_response: try json.optionalCredential(), refresh_token: try json.optionalMember("refresh_token"), scope: try json.optionalMember("scope"),
            audience: try json.requestedAudience(), username: try json.optionalMember("username"), otp: try json.optionalMember("otp"),
            realm: try json.optionalMember("realm"), recovery_code: try json.optionalMember("recovery_code"),
            client_secret: try json.optionalMember("client_secret"))
    }
}

extension PasswordlessStartRequest {
    package init(wire json: JSONValue) throws {
        var params: AuthParams?
        if let p = json["authParams"], p != .null {
            guard p.object != nil else { throw AuthError.malformed("member \"authParams\" must be an object") }
            params = AuthParams(scope: try p.optionalMember("scope"), audience: try p.optionalMember("audience"))
        }
        self.init(client_id: try json.member("client_id"), connection: try json.member("connection"), email: try json.member("email"),
                  send: try json.optionalMember("send"), authParams: params, client_secret: try json.optionalMember("client_secret"))
    }
}

extension RevokeRequest {
    package init(wire json: JSONValue) throws {
        self.init(token: try json.member("token"), token_type_hint: try json.optionalMember("token_type_hint"), client_id: try json.optionalMember("client_id"))
    }
}

extension AddPasskeyRequest {
    package init(wire json: JSONValue) throws {
        guard let credential = json["authn_response"], credential.object != nil else { throw AuthError.malformed("missing member \"authn_response\"") }
        self.init(auth_session: try json.member("auth_session"), authn_response: try CredentialJSON(wire: credential), name: try json.optionalMember("name"))
    }
}

extension RenameRequest {
    init(wire json: JSONValue) throws { self.init(name: try json.member("name")) }
}

extension EnrollDeviceKeyRequest {
    package init(wire json: JSONValue) throws {
        self.init(public_key: try json.member("public_key"), device_id: try json.member("device_id"), platform: try json.member("platform"),
                  name: try json.optionalMember("name"))
    }
}

extension ActionApproveRequest {
    package init(wire json: JSONValue) throws {
        var deny: Bool?
        if let value = json["deny"], value != .null {
            guard case .bool(let flag) = value else { throw AuthError.malformed("deny must be true or false") }
            deny = flag
        }
        self.init(challenge_id: try json.member("challenge_id"), signature: try json.optionalMember("signature"), authn_response: try json.optionalCredential(),
                  deny: deny)
    }
}

extension TokenResponse {
    /// The answer's JSON, written directly: it is built on every sign-in and refresh.
    var wireBytes: [UInt8] {
        var object = JSONObjectWriter(capacity: 1600)
        object.add("access_token", access_token)
        object.add("token_type", token_type)
        object.add("expires_in", Int64(expires_in))
        if let refresh_token { object.add("refresh_token", refresh_token) }
        if let id_token { object.add("id_token", id_token) }
        if let scope { object.add("scope", scope) }
        return object.serializedBytes
    }
}

extension JSONDocument {
    /// A parsed value as a document; numbers become doubles, as JavaScript reads them.
    package init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .number(let text): self = .number(Double(text) ?? 0)
        case .string(let text): self = .string(text)
        case .array(let items): self = .array(items.map(JSONDocument.init))
        case .object(let members): self = .object(Dictionary(members.map { ($0.key, JSONDocument($0.value)) }) { _, last in last })
        }
    }

    /// A body's `app_metadata` or `user_metadata`: absent or `null` is `nil`, an object its
    /// document; anything else is refused.
    package static func metadata(_ json: JSONValue, _ name: String) throws -> JSONDocument? {
        switch json[name] {
        case nil, .null?: return nil
        case .object(let members)?: return JSONDocument(.object(members))
        default: throw AuthError.malformed("\(name) must be a JSON object")
        }
    }
}
