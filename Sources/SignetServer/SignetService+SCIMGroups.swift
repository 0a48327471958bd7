import SignetAPI
import SignetAuth
import SignetHTTP
import SignetWebAuthn

/// SCIM Groups at `/scim/v2/Groups`: an identity provider's groups as Signet's roles
/// (``Ceremonies/scimCreateGroup(_:by:context:)``).
extension SignetService {
    /// `/Groups` (RFC 7644 §3): the roles, their members the directory's accounts.
    static func addSCIMGroupRoutes(_ r: inout Router<SignetService>) {
        r.add("GET", scimBase + "/Groups", needs: .scim(.readRoles)) { s, call in
            let q = call.request.query
            let start = try Self.integer(q["startIndex"], "startIndex", default: 1), count = try Self.integer(q["count"], "count", default: 100)
            return scim(200, try s.ceremonies.scimGroups(filter: q["filter"], startIndex: start, count: count, members: Self.listsMembers(call)))
        }
        r.add("POST", scimBase + "/Groups", needs: .scim(.createRoles)) { s, call in
            let made = try s.ceremonies.scimCreateGroup(try s.scimBody(call), by: call.administrator, context: call.context)
            var response = scim(201, made)
            if let location = made["meta"]?["location"]?.string { response.headers.append(("Location", location)) }
            return response
        }
        r.add("GET", scimBase + "/Groups/{id}", needs: .scim(.readRoles)) { s, call in scim(200, try s.ceremonies.scimGroup(id: call.parameter("id"), members: Self.listsMembers(call))) }
        for (method, patch) in [("PUT", false), ("PATCH", true)] {
            r.add(method, scimBase + "/Groups/{id}", needs: .scim(.updateRoles)) { s, call in
                scim(200, try s.ceremonies.scimUpdateGroup(id: call.parameter("id"), try s.scimBody(call), patch: patch, by: call.administrator, context: call.context))
            }
        }
        r.add("DELETE", scimBase + "/Groups/{id}", needs: .scim(.deleteRoles)) { s, call in
            try s.ceremonies.deleteRole(id: call.parameter("id"), by: call.administrator, context: call.context)
            return HTTPResponse(status: 204)
        }
    }

    /// Whether a Group answer lists members: Microsoft Entra ID asks with
    /// `excludedAttributes=members`, and gets none.
    static func listsMembers(_ call: Call) -> Bool {
        !(call.request.query["excludedAttributes"] ?? "").lowercased().split(separator: ",").contains { $0.filter { $0 != " " } == "members" }
    }

    var groupResourceType: JSONValue {
        .object([
            "schemas": .array([.string("urn:ietf:params:scim:schemas:core:2.0:ResourceType")]), "id": .string("Group"), "name": .string("Group"),
            "endpoint": .string("/Groups"), "schema": .string(SCIM.groupSchema),
            "meta": .object(["resourceType": .string("ResourceType"), "location": .string(configuration.issuer + Self.scimBase + "/ResourceTypes/Group")]),
        ])
    }

    /// The Group schema's attributes Signet keeps (RFC 7643 §7).
    static let groupSchema: JSONValue = .object([
        "schemas": .array([.string("urn:ietf:params:scim:schemas:core:2.0:Schema")]), "id": .string(SCIM.groupSchema), "name": .string("Group"),
        "attributes": .array([
            .object(["name": .string("displayName"), "type": .string("string"), "multiValued": .bool(false), "required": .bool(true),
                     "mutability": .string("readWrite"), "uniqueness": .string("server")]),
            .object(["name": .string("externalId"), "type": .string("string"), "multiValued": .bool(false), "required": .bool(false),
                     "mutability": .string("readWrite"), "uniqueness": .string("none")]),
            .object(["name": .string("members"), "type": .string("complex"), "multiValued": .bool(true), "required": .bool(false),
                     "mutability": .string("readWrite"), "uniqueness": .string("none"),
                     "subAttributes": .array([.object(["name": .string("value"), "type": .string("string"), "multiValued": .bool(false), "required": .bool(true),
                                                       "mutability": .string("immutable"), "uniqueness": .string("none")])])]),
        ]),
    ])
}
