import Foundation
import SignetAPI
import SignetAuth
import SignetCurl
import SignetHTTP
import SignetServer
import SignetWebAuthn
import Testing
import SignetTestSupport

/// A certificate authority made with the `openssl` command for one test, and leaf certificates
/// it signs.
final class TestCA {
    let directory: URL
    var caFile: String { directory.appendingPathComponent("ca.pem").path }

    static var available: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") }

    init() throws {
        directory = Scratch.directory.appendingPathComponent("signet-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
                     "-subj", "/CN=Signet Test CA", "-days", "2", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"])
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl \(arguments.prefix(2).joined(separator: " ")) failed")
    }

    /// A leaf for `names` (subjectAltName DNS entries): the paths of its certificate and key.
    func leaf(_ names: [String]) throws -> (cert: String, key: String) {
        let base = "leaf-\(UUID().uuidString.prefix(8))"
        try openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "\(base).key", "-out", "\(base).csr", "-subj", "/CN=\(names[0])"])
        try "subjectAltName=\(names.map { "DNS:" + $0 }.joined(separator: ","))\n".write(to: directory.appendingPathComponent("\(base).ext"), atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", "\(base).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "\(base).pem", "-days", "2",
                     "-extfile", "\(base).ext"])
        return (directory.appendingPathComponent("\(base).pem").path, directory.appendingPathComponent("\(base).key").path)
    }
}

/// `scripts/https-fixture.py`: a real HTTPS server on loopback serving fixed answers by host and path.
final class HTTPSFixture {
    struct Answer {
        var status = 200
        var headers: [String: String] = ["Content-Type": "application/json"]
        var body: [UInt8]
    }
    let process = Process()
    let port: UInt16

    init(cert: String, key: String, routes: [String: Answer], directory: URL) throws {
        let file = directory.appendingPathComponent("routes-\(UUID().uuidString.prefix(8)).json")
        let json = JSONValue.object(JSONObject(routes.mapValues { answer in
            .object(["status": .number(String(answer.status)), "headers": .object(JSONObject(answer.headers.mapValues(JSONValue.string))),
                     "body": .string(String(decoding: answer.body, as: UTF8.self))])
        }))
        try json.serialized.write(to: file, atomically: true, encoding: .utf8)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../scripts/https-fixture.py").standardized.path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, cert, key, file.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        port = try #require(UInt16(line), "https-fixture.py did not print its port")
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// DESIGN.md, "signet doctor": each broken deployment fails exactly its own check, with its fix.
@Suite(.enabled(if: TestCA.available, "needs openssl and python3 (scripts/bootstrap.sh installs them)"))
struct DoctorTests {
    /// The files a correct deployment serves: Signet's own, from a Signet with the same configuration.
    struct Deployment {
        let server: TestServer
        let ca: TestCA
        var routes: [String: HTTPSFixture.Answer] = [:]

        init(_ edit: (inout ServerConfiguration) -> Void = { _ in }) throws {
            server = try TestServer(.inProcess, edit)
            ca = try TestCA()
            for path in ["/.well-known/apple-app-site-association", "/.well-known/assetlinks.json", "/.well-known/openid-configuration", "/.well-known/jwks.json",
                         "/.well-known/passkey-endpoints"] {
                routes["signet.test " + path] = .init(body: try server.get(path).body)
            }
        }

        /// `signet doctor` against the fixture, with names mapped to it and the test CA trusted.
        func doctor(names: [String] = ["signet.test", "www.signet.test"], edit: (inout [String: HTTPSFixture.Answer]) -> Void = { _ in }) throws -> [DoctorCheck] {
            var routes = self.routes
            edit(&routes)
            let (cert, key) = try ca.leaf(names)
            let fixture = try HTTPSFixture(cert: cert, key: key, routes: routes, directory: ca.directory)
            let options = HTTPSOptions(caFile: ca.caFile, connectTo: ["signet.test:443:127.0.0.1:\(fixture.port)", "www.signet.test:443:127.0.0.1:\(fixture.port)"], timeout: 5)
            return withExtendedLifetime(fixture) { Doctor(configuration: server.app.configuration, options: options).run() }
        }
    }

    static func failed(_ checks: [DoctorCheck]) -> [String] { checks.filter { $0.status == .fail }.map(\.name) }

    @Test("the right files on the right host with a good certificate: every check passes")
    func healthy() throws {
        let checks = try Deployment().doctor()
        #expect(Self.failed(checks) == [], "\(checks.map(\.line).joined(separator: "\n"))")
        let passed = Set(checks.filter { $0.status == .pass }.map(\.name))
        #expect(passed.isSuperset(of: ["tls", "host", "aasa.redirect", "aasa.status", "aasa.content_type", "aasa.json", "aasa.apps", "assetlinks.redirect",
                                       "assetlinks.status", "assetlinks.content_type", "assetlinks.json", "assetlinks.relations", "assetlinks.fingerprints",
                                       "discovery", "jwks", "origins", "issuer", "passkey_endpoints"]))
        #expect(checks.contains { $0.status == .note && $0.name == "android.test.signet.app" && $0.detail.contains("Play App Signing") })
    }

    @Test("enrollment_links: applinks giving /enroll to those apps passes; a file without it fails aasa.enrollment_links only; links on another host than the domain's are a note")
    func enrollmentLinks() throws {
        let deployment = try Deployment { EnrollmentAppLinkTests.linking(&$0) }
        let checks = try deployment.doctor()
        #expect(Self.failed(checks) == [] && checks.first { $0.name == "aasa.enrollment_links" }?.status == .pass, "\(checks.map(\.line))")
        let webcredentials = #"{"webcredentials": {"apps": ["ABCDE12345.test.signet.app", "ABCDE12345.test.signet.other"]}}"#
        let plain = try deployment.doctor { $0["signet.test /.well-known/apple-app-site-association"] = .init(body: Array(webcredentials.utf8)) }
        #expect(Self.failed(plain) == ["aasa.enrollment_links"], "\(plain.map(\.line))")
        #expect(plain.first { $0.name == "aasa.enrollment_links" }?.detail.contains("ABCDE12345.test.signet.app") == true)
        let elsewhere = try Deployment { c in
            EnrollmentAppLinkTests.linking(&c)
            c.issuer = "https://auth.signet.test"
        }
        let note = try elsewhere.doctor().first { $0.name == "aasa.enrollment_links" }
        #expect(note?.status == .note && note?.detail.contains("applinks:auth.signet.test") == true, "\(note?.detail ?? "")")
        #expect(try Deployment().doctor().contains { $0.name == "aasa.enrollment_links" } == false)
    }

    @Test("passkey-endpoints: not served is a note; a redirect, another type or an http URL fails passkey_endpoints only")
    func passkeyEndpoints() throws {
        let deployment = try Deployment()
        let path = "signet.test /.well-known/passkey-endpoints"
        let missing = try deployment.doctor { $0.removeValue(forKey: path) }
        #expect(Self.failed(missing) == [] && missing.first { $0.name == "passkey_endpoints" }?.status == .note)
        let redirected = try deployment.doctor { $0[path] = .init(status: 301, headers: ["Location": "https://www.signet.test/.well-known/passkey-endpoints"], body: []) }
        #expect(Self.failed(redirected) == ["passkey_endpoints"])
        let typed = try deployment.doctor { $0[path]?.headers = ["Content-Type": "text/plain"] }
        #expect(Self.failed(typed) == ["passkey_endpoints"])
        let plain = try deployment.doctor { $0[path] = .init(body: Array(#"{"enroll": "http://signet.test/account/passkey-offer"}"#.utf8)) }
        #expect(Self.failed(plain) == ["passkey_endpoints"] && plain.first { $0.name == "passkey_endpoints" }?.detail.contains("enroll") == true)
    }

    @Test("apple-app-site-association served as application/octet-stream fails aasa.content_type only")
    func octetStream() throws {
        let checks = try Deployment().doctor { $0["signet.test /.well-known/apple-app-site-association"]?.headers = ["Content-Type": "application/octet-stream"] }
        #expect(Self.failed(checks) == ["aasa.content_type"])
        let check = try #require(checks.first { $0.name == "aasa.content_type" })
        #expect(check.detail.contains("application/octet-stream") && check.fix?.contains("default_type application/json") == true)
    }

    @Test("apple-app-site-association behind a 301 fails aasa.redirect only")
    func redirect() throws {
        let checks = try Deployment().doctor {
            $0["signet.test /.well-known/apple-app-site-association"] = .init(status: 301, headers: ["Location": "https://www.signet.test/.well-known/apple-app-site-association"], body: [])
        }
        #expect(Self.failed(checks) == ["aasa.redirect"])
        #expect(checks.first { $0.name == "aasa.redirect" }?.fix?.contains("do not follow redirects") == true)
        #expect(checks.filter { $0.name.hasPrefix("aasa.") && $0.status == .skip }.count == 4)
    }

    @Test("assetlinks without a configured fingerprint and with an unknown one fails assetlinks.fingerprints only, naming both")
    func fingerprints() throws {
        let unknown = "AA:" + Array(repeating: "11", count: 31).joined(separator: ":")
        let checks = try Deployment().doctor {
            let file = #"[{"relation":["delegate_permission/common.handle_all_urls","delegate_permission/common.get_login_creds"],"target":{"namespace":"android_app","package_name":"test.signet.app","sha256_cert_fingerprints":["\#(unknown)"]}}]"#
            $0["signet.test /.well-known/assetlinks.json"] = .init(body: Array(file.utf8))
        }
        #expect(Self.failed(checks) == ["assetlinks.fingerprints"])
        let check = try #require(checks.first { $0.name == "assetlinks.fingerprints" })
        #expect(check.detail.contains(TestServer.androidFingerprint) && check.detail.contains(unknown))
        #expect(check.fix?.contains("Play App Signing") == true)
    }

    @Test("files on www. only fail the host check only")
    func wwwOnly() throws {
        let checks = try Deployment().doctor { routes in
            for file in ["apple-app-site-association", "assetlinks.json"] {
                routes["www.signet.test /.well-known/" + file] = routes.removeValue(forKey: "signet.test /.well-known/" + file)
            }
        }
        #expect(Self.failed(checks) == ["host"])
        #expect(checks.first { $0.name == "host" }?.detail.contains("www.signet.test only") == true)
    }

    @Test("a certificate for another name fails the TLS check only")
    func wrongName() throws {
        let checks = try Deployment().doctor(names: ["other.test"])
        #expect(Self.failed(checks) == ["tls"])
        let check = try #require(checks.first { $0.name == "tls" })
        #expect(check.fix?.contains("subjectAltName includes signet.test") == true)
    }

    @Test("a web origin off the RP ID fails the offline origins check, with its fix")
    func offlineOrigins() throws {
        var configuration = TestServer.configuration()
        configuration.webOrigins = ["https://signet.test", "https://login.signet.test", "https://signet-test.example", "http://signet.test"]
        let checks = Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks()
        #expect(Self.failed(checks) == ["origins"])
        let check = try #require(checks.first { $0.name == "origins" })
        #expect(check.detail.contains("https://signet-test.example") && check.detail.contains("http://signet.test") && !check.detail.contains("login.signet.test"))
    }

    @Test("tokens.permissions: an API no client may ask a token for is noted (a misspelt audience); one in audiences passes")
    func permissions() throws {
        var configuration = TestServer.configuration()
        configuration.apiPermissions = ["https://api.signet.test": ["read:reports": ""], "https://api.signet.tset": ["read:reports": ""]]
        let checks = Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks()
        #expect(Self.failed(checks).isEmpty)
        #expect(checks.first { $0.name == "permissions.https://api.signet.test" }?.status == .pass)
        let typo = try #require(checks.first { $0.name == "permissions.https://api.signet.tset" })
        #expect(typo.status == .note && typo.detail.contains("misspelt"))
        #expect(!Doctor(configuration: TestServer.configuration(), options: HTTPSOptions()).configurationChecks().contains { $0.name.hasPrefix("permissions") })
    }

    @Test("a client's minimum_acr with a grant that reaches no class is noted, and so is required_roles; a client with neither says nothing")
    func clientPolicy() throws {
        var configuration = TestServer.configuration()
        var vault = ClientConfiguration(id: "vault", grants: [GrantType.webauthn, GrantNames.passwordlessOTP, GrantNames.refreshToken])
        vault.minimumACR = "phrh"
        var passkeysOnly = ClientConfiguration(id: "strict", grants: [GrantType.webauthn, GrantNames.refreshToken])
        passkeysOnly.minimumACR = "phr"
        var console = ClientConfiguration(id: "console", grants: GrantNames.all)
        console.requiredRoles = ["Admin"]
        configuration.clients += [vault, passkeysOnly, console]
        let checks = Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks()
        #expect(Self.failed(checks).isEmpty)
        let noted = try #require(checks.first { $0.name == "client.vault.minimum_acr" })
        #expect(noted.status == .note && noted.detail.contains(GrantNames.passwordlessOTP) && !noted.detail.contains(GrantNames.refreshToken), "\(noted.detail)")
        #expect(!checks.contains { $0.name.hasPrefix("client.strict") }, "passkey grants and refreshes reach phr")
        #expect(checks.first { $0.name == "client.console.required_roles" }?.detail.contains("Admin") == true)
        #expect(!Doctor(configuration: TestServer.configuration(), options: HTTPSOptions()).configurationChecks().contains {
            $0.name.hasPrefix("client.") && !$0.name.hasSuffix(".refresh_token_retry_window")
        })
    }

    @Test("a phone app's client that refreshes with no retry window is noted; its own window, the deployment's, or no refreshes say nothing")
    func refreshRetry() throws {
        func notes(_ edit: (inout ServerConfiguration) -> Void) -> [String] {
            var configuration = TestServer.configuration()
            edit(&configuration)
            return Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks()
                .filter { $0.name.hasSuffix(".refresh_token_retry_window") && $0.status == .note }.map(\.name)
        }
        // The test configuration's "app" has iOS and Android apps and every grant; "web" has none.
        #expect(notes { $0.clients.append(ClientConfiguration(id: "web", grants: GrantNames.all)) } == ["client.app.refresh_token_retry_window"])
        #expect(notes { $0.refreshTokenRetryWindow = 30 }.isEmpty)
        #expect(notes { $0.clients[0].refreshTokenRetryWindow = 60 }.isEmpty)
        #expect(notes { $0.clients[0].grants.removeAll { $0 == GrantNames.refreshToken } }.isEmpty)
        // A client's 0 keeps it strict even where the deployment has a window.
        #expect(notes { c in
            c.refreshTokenRetryWindow = 30
            c.clients[0].refreshTokenRetryWindow = 0
        } == ["client.app.refresh_token_retry_window"])
    }

    @Test("closed sign-up: the offline signup check passes with mail, and without it notes that only enrollment links let owners in")
    func closedSignUp() throws {
        var configuration = TestServer.configuration()
        #expect(!Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks().contains { $0.name == "signup" })
        configuration.signUp = false
        configuration.email.smtpURL = nil
        configuration.email.outboxDirectory = nil
        let mailless = Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks()
        #expect(Self.failed(mailless).isEmpty && mailless.first { $0.name == "signup" }.map { $0.status == .note && $0.detail.contains("enrollment links") } == true)
        configuration.email.smtpURL = "smtp://127.0.0.1:2525"
        let checks = Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks()
        #expect(Self.failed(checks).isEmpty && checks.first { $0.name == "signup" }?.status == .pass)
    }

    @Test("signup_domains: the offline signup check fails without mail or code sign-up, which its accounts start with, and passes with both")
    func signUpDomains() throws {
        var configuration = TestServer.configuration()
        configuration.signUpDomains = ["acme.test"]
        configuration.email.smtpURL = nil
        configuration.email.outboxDirectory = nil
        let mailless = Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks()
        #expect(Self.failed(mailless) == ["signup"] && mailless.first { $0.name == "signup" }?.fix?.contains("email.smtp_url") == true)
        configuration.email.smtpURL = "smtp://127.0.0.1:2525"
        configuration.passwordless.signup = false
        #expect(Self.failed(Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks()) == ["signup"])
        configuration.passwordless.signup = true
        let checks = Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks()
        #expect(Self.failed(checks).isEmpty && checks.first { $0.name == "signup" }?.detail.contains("acme.test") == true)
    }

    @Test("the command: --config, --resolve, --connect-to, --ca-file; ✓ and ✗ lines with fixes; --json; exit 1 on a failure")
    func command() throws {
        var deployment = try Deployment()
        deployment.routes["signet.test /.well-known/apple-app-site-association"]?.headers = ["Content-Type": "text/plain"]
        let (cert, key) = try deployment.ca.leaf(["signet.test", "www.signet.test"])
        let fixture = try HTTPSFixture(cert: cert, key: key, routes: deployment.routes, directory: deployment.ca.directory)
        let config = deployment.ca.directory.appendingPathComponent("signet.json")
        try """
            {"issuer": "https://signet.test", "relying_party": {"id": "signet.test", "origins": ["https://signet.test"]},
             "clients": [{"client_id": "app", "ios": [{"team_id": "ABCDE12345", "bundle_id": "test.signet.app"}],
                          "android": [{"package_name": "test.signet.app", "sha256_cert_fingerprints": ["\(TestServer.androidFingerprint)"]}]}]}
            """.write(to: config, atomically: true, encoding: .utf8)
        let arguments = ["doctor", "--config", config.path, "--ca-file", deployment.ca.caFile, "--resolve", "signet.test:443:127.0.0.1",
                         "--connect-to", "signet.test:443:127.0.0.1:\(fixture.port)", "--connect-to", "www.signet.test:443:127.0.0.1:\(fixture.port)"]
        let text = try runSignet(arguments)
        #expect(text.status == 1)
        #expect(text.output.contains("✓ tls") && text.output.contains("✗ aasa.content_type") && text.output.contains("fix: serve it as application/json"))
        #expect(text.output.contains("1 check(s) failed: aasa.content_type"))
        let json = try runSignet(arguments + ["--json"])
        let report = try StrictJSON().parse(Array(json.output.utf8))
        #expect(json.status == 1 && report["ok"] == .bool(false) && report["rp_id"] == .string("signet.test"))
        #expect(report["checks"]?.array?.filter { $0["status"] == .string("fail") }.compactMap { $0["name"]?.string } == ["aasa.content_type"])
        withExtendedLifetime(fixture) {}
        // Offline: the configuration alone, which is fine.
        #expect(try runSignet(["doctor", "--config", config.path, "--offline"]).status == 0)
    }

    /// Runs the built `signet` and returns its exit status and standard output.
    func runSignet(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try runProcess(ProcessTests.binary.path, arguments, environment: ["SIGNET_KEK": String(repeating: "A", count: 43)])
        return (result.status, result.output)
    }
}
