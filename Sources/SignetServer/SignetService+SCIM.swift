import SignetAPI
import SignetAuth
import SignetHTTP
import SignetWebAuthn

/// SCIM 2.0 provisioning (RFC 7644) at `/scim/v2`: Users, and the documents that describe what
/// this service provider does (§4). Bodies are `application/scim+json` (or `application/json`);
/// every refusal is SCIM's error (§3.12) with Signet's `reason` beside it.
extension SignetService {
    static let scimBase = "/scim/v2"
    static let scimType = "application/scim+json"

    static func addSCIMRoutes(_ r: inout Router<SignetService>) {
        r.add("GET", scimBase + "/Users", needs: .scim(.readUsers)) { s, call in
            let q = call.request.query
            let start = try Self.integer(q["startIndex"], "startIndex", default: 1), count = try Self.integer(q["count"], "count", default: 100)
            return scim(200, try s.ceremonies.scimUsers(filter: q["filter"], startIndex: start, count: count))
        }
        r.add("POST", scimBase + "/Users", needs: .scim(.createUsers)) { s, call in
            let made = try s.ceremonies.scimCreate(try s.scimBody(call), by: call.administrator, context: call.context)
            var response = scim(201, made)
            if let location = made["meta"]?["location"]?.string { response.headers.append(("Location", location)) }
            return response
        }
        r.add("GET", scimBase + "/Users/{id}", needs: .scim(.readUsers)) { s, call in scim(200, try s.ceremonies.scimUser(id: call.parameter("id"))) }
        r.add("PUT", scimBase + "/Users/{id}", needs: .scim(.updateUsers)) { s, call in
            scim(200, try s.ceremonies.scimUpdate(id: call.parameter("id"), try s.scimBody(call), patch: false, by: call.administrator, context: call.context))
        }
        r.add("PATCH", scimBase + "/Users/{id}", needs: .scim(.updateUsers)) { s, call in
            scim(200, try s.ceremonies.scimUpdate(id: call.parameter("id"), try s.scimBody(call), patch: true, by: call.administrator, context: call.context))
        }
        r.add("DELETE", scimBase + "/Users/{id}", needs: .scim(.deleteUsers)) { s, call in
            try s.ceremonies.deleteUser(id: call.parameter("id"), by: call.administrator, context: call.context)
            return HTTPResponse(status: 204)
        }
        addSCIMGroupRoutes(&r)
        r.add("GET", scimBase + "/ServiceProviderConfig", needs: .scim(.readUsers)) { _, _ in scim(200, serviceProviderConfig) }
        r.add("GET", scimBase + "/ResourceTypes", needs: .scim(.readUsers)) { s, _ in
            scim(200, .object(["schemas": .array([.string(SCIM.listSchema)]), "totalResults": .int(2), "Resources": .array([s.userResourceType, s.groupResourceType])]))
        }
        r.add("GET", scimBase + "/Schemas", needs: .scim(.readUsers)) { _, _ in
            scim(200, .object(["schemas": .array([.string(SCIM.listSchema)]), "totalResults": .int(2), "Resources": .array([userSchema, groupSchema])]))
        }
    }

    static func scim(_ status: Int, _ body: JSONValue) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", scimType)], body: body.serializedBytes)
    }

    /// The request's body: a JSON object sent as `application/scim+json` or `application/json`,
    /// read as every body is; one that is not is SCIM's `invalidSyntax`.
    func scimBody(_ call: Call) throws -> JSONValue {
        do {
            return try Wire.body(call.request, limit: configuration.maxBodyBytes, alsoJSON: Self.scimType)
        } catch let error as AuthError where error.reason == .malformed {
            throw SCIM.Failure(error, scimType: "invalidSyntax")
        }
    }

    /// A refusal as SCIM's error (RFC 7644 §3.12): `status` as a string, `scimType` where SCIM
    /// has one, Signet's `reason` beside them; challenges and `Retry-After` as elsewhere.
    static func scimError(_ error: any Error, for request: HTTPRequest) -> HTTPResponse {
        let failure = error as? SCIM.Failure
        let refusal = failure?.error ?? AuthError(error)
        var response = ErrorAnswer.response(refusal, for: request)
        let kind = failure?.scimType ?? (refusal.reason == .userExists ? "uniqueness" : refusal.reason == .malformed ? "invalidValue" : nil)
        var body: [(String, JSONValue)] = [("schemas", .array([.string(SCIM.errorSchema)])), ("status", .string(String(refusal.status)))]
        if let kind { body.append(("scimType", .string(kind))) }
        body += [("detail", .string(refusal.publicDetail ?? refusal.reason.text)), ("reason", .string(refusal.reason.rawValue))]
        response.body = JSONValue.object(JSONObject(uniqueKeysWithValues: body)).serializedBytes
        response.headers = response.headers.filter { $0.0.lowercased() != "content-type" } + [("Content-Type", Self.scimType)]
        return response
    }

    /// What this service provider does (RFC 7643 §5): PATCH and filters yes (the forms
    /// ``SCIM/filter(_:)`` reads, 100 results at most), no bulk, sort, ETags or passwords.
    static let serviceProviderConfig: JSONValue = .object([
        "schemas": .array([.string("urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig")]),
        "patch": .object(["supported": .bool(true)]),
        "bulk": .object(["supported": .bool(false), "maxOperations": .int(0), "maxPayloadSize": .int(0)]),
        "filter": .object(["supported": .bool(true), "maxResults": .int(100)]),
        "changePassword": .object(["supported": .bool(false)]),
        "sort": .object(["supported": .bool(false)]),
        "etag": .object(["supported": .bool(false)]),
        "authenticationSchemes": .array([.object([
            "type": .string("oauthbearertoken"), "name": .string("Bearer token"), "primary": .bool(true),
            "description": .string("The provisioning token (scim.token_hash), or a Management API token with read:users, create:users, update:users or delete:users (for Groups, read:roles, create:roles, update:roles or delete:roles)"),
        ])]),
    ])

    var userResourceType: JSONValue {
        .object([
            "schemas": .array([.string("urn:ietf:params:scim:schemas:core:2.0:ResourceType")]), "id": .string("User"), "name": .string("User"),
            "endpoint": .string("/Users"), "schema": .string(SCIM.userSchema),
            "meta": .object(["resourceType": .string("ResourceType"), "location": .string(configuration.issuer + Self.scimBase + "/ResourceTypes/User")]),
        ])
    }

    /// The User schema's attributes Signet keeps (RFC 7643 §7).
    static let userSchema: JSONValue = {
        func attribute(_ name: String, _ type: String = "string", required: Bool = false, mutability: String = "readWrite", sub: [JSONValue]? = nil,
                       multiValued: Bool = false, uniqueness: String = "none") -> JSONValue {
            var members: [(String, JSONValue)] = [("name", .string(name)), ("type", .string(type)), ("multiValued", .bool(multiValued)),
                                                  ("required", .bool(required)), ("mutability", .string(mutability)), ("uniqueness", .string(uniqueness))]
            if let sub { members.append(("subAttributes", .array(sub))) }
            return .object(JSONObject(uniqueKeysWithValues: members))
        }
        return .object([
            "schemas": .array([.string("urn:ietf:params:scim:schemas:core:2.0:Schema")]), "id": .string(SCIM.userSchema), "name": .string("User"),
            "attributes": .array([
                attribute("userName", required: true, uniqueness: "server"), attribute("displayName"), attribute("externalId"),
                attribute("name", "complex", sub: [attribute("formatted"), attribute("givenName"), attribute("familyName")]),
                attribute("emails", "complex", sub: [attribute("value"), attribute("type"), attribute("primary", "boolean")], multiValued: true),
                attribute("active", "boolean"),
                attribute("groups", "complex", mutability: "readOnly", sub: [attribute("value", mutability: "readOnly"), attribute("$ref", "reference", mutability: "readOnly"),
                                                                             attribute("display", mutability: "readOnly"), attribute("type", mutability: "readOnly")],
                          multiValued: true),
            ]),
        ])
    }()
}
