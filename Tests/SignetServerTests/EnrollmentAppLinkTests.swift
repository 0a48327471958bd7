import Foundation
import SignetAuth
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing

/// An iOS app's `enrollment_links`: apple-app-site-association gives it `/enroll` under
/// `applinks`, so an operator's enrollment link opens the app's onboarding (the SDK's
/// `enrollmentTicket(in:)` and `enroll(ticket:)`) rather than the page.
@Suite struct EnrollmentAppLinkTests {
    static func linking(_ c: inout ServerConfiguration) {
        guard let i = c.clients.firstIndex(where: { !$0.iosApps.isEmpty }) else { return }
        c.clients[i].iosApps[0].enrollmentLinks = true
        c.clients[i].iosApps.append(.init(teamID: "ABCDE12345", bundleID: "test.signet.other"))
    }

    @Test("in the file: true or false per iOS app, false unless said; anything else refused")
    func configuration() throws {
        func load(_ extra: String) throws -> ServerConfiguration {
            try ConfigurationLoader.load(file: try ConfigurationTests.write(#"""
                {"issuer": "https://a.example.com", "relying_party": {"id": "example.com", "origins": ["https://example.com"]},
                 "clients": [{"client_id": "app", "ios": [{"team_id": "ABCDE12345", "bundle_id": "com.example.app"\#(extra)}]}]}
                """#), environment: [:])
        }
        #expect(try load(#", "enrollment_links": true"#).clients.first?.iosApps.first?.enrollmentLinks == true)
        #expect(try load("").clients.first?.iosApps.first?.enrollmentLinks == false)
        for bad in [#", "enrollment_links": "yes""#, #", "enrollment_links": 1"#] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try load(bad) }
        }
    }

    @Test("apple-app-site-association: applinks gives /enroll (under the issuer's path) to the apps that take the links and to no other; none without them")
    func association() throws {
        let server = try TestServer.withOperators { Self.linking(&$0) }
        let served = try StrictJSON().parse(try server.get("/.well-known/apple-app-site-association").body)
        #expect(served["webcredentials"] == .object(["apps": .array([.string("ABCDE12345.test.signet.app"), .string("ABCDE12345.test.signet.other")])]))
        let details = try #require(served["applinks"]?["details"]?.array)
        #expect(details.count == 1 && details[0]["appIDs"] == .array([.string("ABCDE12345.test.signet.app")]))
        #expect(details[0]["components"]?.array?.map { $0["/"] } == [.string("/enroll")])
        // The path a link takes is the path applinks names.
        let ops = try server.managementToken()
        let user = try #require(try server.api("POST", "/api/v2/users", token: ops, .object(["email": .string("lin@signet.test"), "verify_email": .bool(false)])).json["user_id"])
        let ticket = try server.api("POST", "/api/v2/tickets/passkey-enrollment", token: ops, .object(["user_id": user])).json["ticket"]?.string
        #expect(URLComponents(string: ticket ?? "")?.path == "/enroll", "\(ticket ?? "")")
        let under = try TestServer { c in
            Self.linking(&c)
            c.issuer = "https://signet.test/auth/"
        }
        let underDetails = try StrictJSON().parse(try under.get("/.well-known/apple-app-site-association").body)["applinks"]?["details"]?.array
        #expect(underDetails?.first?["components"]?.array?.first?["/"] == .string("/auth/enroll"))
        #expect(try StrictJSON().parse(try TestServer().get("/.well-known/apple-app-site-association").body)["applinks"] == nil)
    }
}
