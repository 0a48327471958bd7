import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetWebAuthn
import Synchronization

/// The fuzz check of the whole service: any request to any route, with or without a real
/// account or operator token, is answered, never with a 5xx, and a refusal says why in a form
/// its caller reads (DESIGN.md, "Machine-readable failure reasons").
///
/// The input, after the kind byte: a route (by its place in the router's list), a byte of
/// choices, a byte of the caller's address, a length and that many bytes for the path's
/// `{parameters}`, then the body (for a GET, the query string).
extension FuzzTarget {
    /// One server for the whole run, in process over a SQLite file, with a clock that moves a
    /// second each request so that rate limits and lifetimes run as they would.
    final class Service: Sendable {
        static let shared = try! Service()
        /// The clock of the server, moved a second by each request.
        static let now = Mutex<Date>(Date(timeIntervalSince1970: 1_800_000_000))
        static let opsSecret = "fuzz-ops-secret-0123456789abcdefgh"
        /// A new account and fresh tokens every this many requests: tokens expire, and the
        /// fuzzer may delete the account or end its sessions.
        static let renewal = 200

        let app: SignetApp
        /// The router's list, which an input's first byte picks from.
        static let routes = SignetService.routeList
        let caller = Mutex<(tokens: Tokens, count: Int)>((Tokens(), 0))

        /// What a request may carry: an account's access token and its ID, an operator's
        /// token, and a signed-in browser's cookies with its CSRF token.
        struct Tokens: Sendable {
            var account = "", user = "", management = "", cookie = "", csrf = ""
        }

        /// The server's database and key-encryption key, removed when the process exits.
        static let directory = FileManager.default.temporaryDirectory.appendingPathComponent("signet-fuzz-service-\(getpid())")

        init() throws {
            let directory = Self.directory
            try? FileManager.default.removeItem(at: directory)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            atexit { try? FileManager.default.removeItem(at: Service.directory) }
            var c = ServerConfiguration(issuer: "https://signet.test")
            c.rpID = "signet.test"
            c.rpName = "Signet Fuzz"
            c.webOrigins = ["https://signet.test"]
            c.audiences = ["https://api.signet.test"]
            c.database = "sqlite:" + directory.appendingPathComponent("signet.db").path
            c.keyEncryptionKeyFile = directory.appendingPathComponent("signet.kek").path
            c.durability = "normal"
            var ops = ClientConfiguration(id: "ops", grants: [GrantNames.clientCredentials], secretHash: Digest.sha256.hash(Array(Self.opsSecret.utf8)))
            ops.scopes = ManagementScope.allCases.map(\.rawValue)
            c.clients = [ClientConfiguration(id: "app", grants: GrantNames.all), ops, FuzzTarget.webClient]
            app = try SignetApp(configuration: c, environment: [:], clock: { Service.now.withLock { $0 } },
                                log: AccessLog(output: FileHandle(forWritingAtPath: "/dev/null")!, enabled: false), listen: false, upkeepInterval: 86_400)
            // Deliveries stay in the database: the fuzzer's log streams and logout URIs name
            // hosts that do not exist, and a sender's thread would allocate while a leak check
            // runs.
            app.pauseLogStreams()
            app.pauseLogouts()
        }

        /// The service's answer to one request, the clock moved on a second first.
        func send(_ method: String, _ path: String, query: String = "", headers: [String: String], body: [UInt8], from address: String) -> HTTPResponse {
            Self.now.withLock { $0 += 1 }
            let parsed = HTTPRequest.parseQueryNotingRepeats(query[...])
            return app.service.handle(HTTPRequest(method: method, path: path, headers: headers, body: body, remoteAddress: address,
                                                  requestID: "fuzz", query: parsed.query, queryRepeats: parsed.repeats))
        }

        /// The tokens a request may carry, renewed every ``renewal`` requests: a new account
        /// made with a software passkey, and an operator's `client_credentials` token.
        func tokens() -> Tokens {
            let due = caller.withLock { state in
                state.count += 1
                return state.count % Self.renewal == 1
            }
            if due {
                let account = try! signUp()
                var tokens = Tokens(account: account.token, user: account.user, management: try! managementToken())
                (tokens.cookie, tokens.csrf) = try! browserSignUp()
                caller.withLock { $0.tokens = tokens }
            }
            return caller.withLock { $0.tokens }
        }

        /// A sign-up on the hosted pages, as their script makes it: the browser's cookies and
        /// the account page's CSRF token.
        private func browserSignUp() throws -> (cookie: String, csrf: String) {
            var jar: [String: String] = [:]
            var csrf = ""
            func cookie() -> String { jar.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
            func step(_ method: String, _ path: String, _ body: JSONValue? = nil) -> HTTPResponse {
                var headers = ["accept": body == nil ? "text/html" : "application/json", "x-csrf-token": csrf]
                headers["cookie"] = cookie()
                if body != nil { headers["content-type"] = "application/json" }
                let answer = send(method, path, headers: headers, body: body?.serializedBytes ?? [], from: "192.0.2.1")
                for (name, value) in answer.headers where name.lowercased() == "set-cookie" {
                    let pair = value.split(separator: ";")[0].split(separator: "=", maxSplits: 1).map(String.init)
                    jar[pair[0]] = pair.count > 1 && !pair[1].isEmpty ? pair[1] : nil
                }
                let text = String(decoding: answer.body, as: UTF8.self)
                if let start = text.range(of: "data-csrf=\"") { csrf = String(text[start.upperBound...].prefix { $0 != "\"" }) }
                precondition(answer.status < 400, "the fuzz set-up's \(path) was refused: \(text.prefix(300))")
                return answer
            }
            _ = step("GET", "/signup")
            let email = "web-\(UUID().uuidString.prefix(8).lowercased())@signet.test"
            let options = try StrictJSON().parse(step("POST", "/signup/options", .object(["email": .string(email), "name": .string("Web")])).body)
            _ = step("POST", "/login/passkey", .object(["auth_session": options["auth_session"] ?? .null, "authn_response": try passkey(options, email), "authorization": .string("")]))
            _ = step("GET", "/account")
            return (cookie(), csrf)
        }

        /// A new software passkey's registration response to a sign-up's options.
        private func passkey(_ options: JSONValue, _ email: String) throws -> JSONValue {
            let parameters = options["authn_params_public_key"]
            return try SoftwareAuthenticator().register(
                rpID: "signet.test", origin: "https://signet.test", challenge: Base64URL.decode(parameters?["challenge"]?.string ?? "")!,
                userHandle: Base64URL.decode(parameters?["user"]?["id"]?.string ?? "")!, userName: email).json
        }

        private func json(_ path: String, _ body: JSONValue) throws -> JSONValue {
            let answer = send("POST", path, headers: ["content-type": "application/json"], body: body.serializedBytes, from: "192.0.2.1")
            let json = try StrictJSON().parse(answer.body)
            precondition(answer.status == 200, "the fuzz set-up's \(path) was refused: \(json.serialized)")
            return json
        }

        private func signUp() throws -> (token: String, user: String) {
            let email = "fuzz-\(UUID().uuidString.prefix(8).lowercased())@signet.test"
            let options = try json("/passkey/register", .object(["client_id": .string("app"), "user_profile": .object(["email": .string(email)])]))
            let tokens = try json("/oauth/token", .object([
                "grant_type": .string(GrantNames.webauthn), "client_id": .string("app"),
                "auth_session": options["auth_session"] ?? .null, "authn_response": try passkey(options, email),
            ]))
            let token = tokens["access_token"]?.string ?? ""
            let claims = try StrictJSON().parse(Base64URL.decode(String(token.split(separator: ".")[1]))!)
            return (token, claims["sub"]?.string ?? "")
        }

        private func managementToken() throws -> String {
            let answer = send("POST", "/oauth/token", headers: [
                "content-type": "application/x-www-form-urlencoded",
                "authorization": "Basic " + Data("ops:\(Self.opsSecret)".utf8).base64EncodedString(),
            ], body: Array("grant_type=client_credentials".utf8), from: "192.0.2.1")
            let json = try StrictJSON().parse(answer.body)
            precondition(answer.status == 200, "the fuzz set-up's operator token was refused: \(json.serialized)")
            return json["access_token"]?.string ?? ""
        }
    }

    /// Who a fuzzed request is from, by the choice byte's low two bits.
    enum Caller: UInt8 {
        case nobody = 0, account, operatorToken, forged
    }

    static func checkService(_ input: [UInt8]) {
        guard input.count >= 4 else { return }
        let service = Service.shared
        let route = Service.routes[Int(input[0]) % Service.routes.count]
        let choices = input[1]
        let address = "198.51.100.\(input[2])"
        let length = min(Int(input[3]), input.count - 4)
        let parameterText = String(decoding: input[4..<(4 + length)], as: UTF8.self)
        let rest = Array(input[(4 + length)...])
        let tokens = service.tokens()
        // A {parameter} is the fuzzed text, or (choice bit 5) the account's own ID, so that
        // the routes that name an account reach past the lookup.
        let parameter = choices & 0x20 != 0 ? tokens.user : parameterText
        let path = route.pattern.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("{") ? parameter[...] : $0 }.joined(separator: "/")
        var headers: [String: String] = [:]
        switch Caller(rawValue: choices & 0x03)! {
        case .nobody: break
        case .account: headers["authorization"] = "Bearer " + tokens.account
        case .operatorToken: headers["authorization"] = "Bearer " + tokens.management
        case .forged: headers["authorization"] = "Bearer " + tokens.account.dropLast(2) + "AA"
        }
        // Bit 2 sends a form instead of JSON; bit 3 is a browser's navigation; bit 4 a call
        // from the configured origin's script.
        let isGet = route.method == "GET" || route.method == "DELETE"
        if !isGet || !rest.isEmpty {
            headers["content-type"] = choices & 0x04 != 0 ? "application/x-www-form-urlencoded" : route.pattern.hasPrefix("/scim/") ? "application/scim+json" : "application/json"
        }
        if choices & 0x08 != 0 { headers["accept"] = "text/html,application/xhtml+xml" }
        if choices & 0x10 != 0 { headers["origin"] = "https://signet.test" }
        // Bit 6: from the signed-in browser, with its session cookie and CSRF token.
        if choices & 0x40 != 0 {
            headers["cookie"] = tokens.cookie
            headers["x-csrf-token"] = tokens.csrf
        }
        let query = isGet ? String(decoding: rest, as: UTF8.self) : ""
        let response = service.send(route.method, path, query: query, headers: headers, body: isGet ? [] : rest, from: address)
        checkAnswer(response, to: "\(route.method) \(route.pattern)")
    }

    /// What every answer holds: a status below 500, headers that cannot split a response, and
    /// a body in the form it says; a refusal in JSON names its reason from the one list.
    static func checkAnswer(_ response: HTTPResponse, to route: String) {
        // fatalError, not precondition: the optimized build keeps its message.
        func expect(_ holds: Bool, _ message: @autoclosure () -> String) {
            if !holds { fatalError("\(route) " + message()) }
        }
        expect((200..<500).contains(response.status), "answered \(response.status): \(String(decoding: response.body.prefix(300), as: UTF8.self))")
        for (name, value) in response.headers {
            expect(!(name + value).utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }, "answered a header with a line break: \(name)")
        }
        let type = response.headers.first { $0.0.lowercased() == "content-type" }?.1 ?? ""
        if type.hasPrefix("application/json") || type.hasPrefix("application/scim+json") {
            let json: JSONValue
            do {
                // Lists grow with what the fuzzer made (signing keys, events): past the request
                // bodies' 64 KiB.
                json = try StrictJSON(maxDepth: 64, maxLength: 1 << 26).parse(response.body)
            } catch {
                fatalError("\(route) answered JSON that does not parse (\(error)): \(String(decoding: response.body.prefix(2000), as: UTF8.self))")
            }
            guard response.status >= 400, !type.hasPrefix("application/scim+json") else { return }
            let reason = json["reason"]?.string.flatMap(Reason.init(rawValue:))
            expect(reason.map(Reason.serverReasons.contains) == true, "refused with no reason from the list: \(json.serialized.prefix(300))")
            expect(json["error"]?.string != nil, "refused with no error code")
        } else if type.hasPrefix("text/html") {
            expect(!response.body.isEmpty && String(validating: response.body, as: UTF8.self) != nil, "answered a page that is empty or not UTF-8")
        }
    }
}
