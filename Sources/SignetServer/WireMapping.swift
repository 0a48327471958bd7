import SignetAPI
import SignetWebAuthn

// Request bodies are read once, by the strict parser, and mapped onto SignetAPI's wire types
// here; responses are built the same way. (Foundation's JSONDecoder/JSONEncoder cost more than
// the signature verification on the token path.) The member names are SignetAPI's.

extension JSONValue {
    func member(_ name: String) throws -> String {
        guard let value = self[name] else { throw APIError.malformed("missing member \"\(name)\"") }
        guard let text = value.string else { throw APIError.malformed("member \"\(name)\" must be a string") }
        return text
    }

    func optionalMember(_ name: String) throws -> String? {
        switch self[name] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw APIError.malformed("member \"\(name)\" must be a string")
        }
    }
}

extension PasskeyRegisterRequest {
    init(wire json: JSONValue) throws {
        guard let profile = json["user_profile"], profile.object != nil else { throw APIError.malformed("missing member \"user_profile\"") }
        self.init(client_id: try json.member("client_id"), realm: try json.optionalMember("realm"),
                  user_profile: UserProfile(email: try profile.member("email"), name: try profile.optionalMember("name")))
    }
}

extension PasskeyChallengeRequest {
    init(wire json: JSONValue) throws {
        self.init(client_id: try json.member("client_id"), realm: try json.optionalMember("realm"), username: try json.optionalMember("username"))
    }
}

extension CredentialJSON {
    init(wire json: JSONValue) throws {
        guard let response = json["response"], response.object != nil else { throw APIError.malformed("missing member \"authn_response.response\"") }
        var transports: [String]?
        if let list = response["transports"], list != .null {
            guard let items = list.array, items.allSatisfy({ $0.string != nil }) else { throw APIError.malformed("transports must be a list of strings") }
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

extension TokenRequest {
    init(wire json: JSONValue) throws {
        var credential: CredentialJSON?
        if let value = json["authn_response"], value != .null {
            guard value.object != nil else { throw APIError.malformed("authn_response must be an object") }
            credential = try CredentialJSON(wire: value)
        }
        self.init(
            grant_type: try json.member("grant_type"), client_id: try json.member("client_id"), auth_session: try json.optionalMember("auth_session"),
            authn_response: credential, refresh_token: try json.optionalMember("refresh_token"), scope: try json.optionalMember("scope"),
            audience: try json.optionalMember("audience"))
    }
}

extension RevokeRequest {
    init(wire json: JSONValue) throws {
        self.init(token: try json.member("token"), token_type_hint: try json.optionalMember("token_type_hint"), client_id: try json.optionalMember("client_id"))
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

extension UserInfo {
    var wire: JSONValue {
        var object: [String: JSONValue] = ["sub": .string(sub)]
        if let email { object["email"] = .string(email) }
        if let email_verified { object["email_verified"] = .bool(email_verified) }
        if let name { object["name"] = .string(name) }
        return .object(object)
    }
}

extension ErrorBody {
    var wire: JSONValue { .object(["error": .string(error), "error_description": .string(error_description), "reason": .string(reason)]) }
}
