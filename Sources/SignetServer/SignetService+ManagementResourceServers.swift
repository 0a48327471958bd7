import SignetAPI
import SignetAuth
import SignetHTTP
import SignetWebAuthn

/// `/api/v2/resource-servers`: the APIs tokens may be for, with their permissions, in Auth0's
/// shape (``Ceremonies/resourceServers()``). Read-only: a change is refused with
/// `resource_server_configured`, since the APIs are the configuration's and the clients'.
extension SignetService {
    static func addManagementResourceServerRoutes(_ r: inout Router<SignetService>) {
        r.add("GET", "/api/v2/resource-servers", needs: .management(.readResourceServers)) { s, call in
            let q = call.request.query
            let (page, perPage) = (try Self.integer(q["page"], "page", default: 0), try Self.integer(q["per_page"], "per_page", default: 50))
            let found = try s.ceremonies.resourceServers(page: page, perPage: perPage)
            return try Self.listed("resource_servers", try found.servers.map { try Wire.value($0) }, page: page, perPage: perPage, total: found.total,
                                   totals: q["include_totals"] == "true")
        }
        r.add("GET", "/api/v2/resource-servers/{id}", needs: .management(.readResourceServers)) { s, call in
            try Wire.encode(s.ceremonies.resourceServer(id: call.parameter("id")))
        }
        for (method, path) in [("POST", "/api/v2/resource-servers"), ("PATCH", "/api/v2/resource-servers/{id}"), ("DELETE", "/api/v2/resource-servers/{id}")] {
            r.add(method, path, needs: .management(.readResourceServers)) { _, _ in
                throw AuthError(.resourceServerConfigured, "APIs are set in the configuration file (audiences, tokens.permissions) and by the clients' audiences")
            }
        }
    }
}
