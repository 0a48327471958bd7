import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SignetAPI
import SignetClient
import SignetHTTP
import SignetSoftware
import Testing

/// The SDK with a DPoP key (RFC 9449) and the device grant (RFC 8628), against `signet serve`.
@Suite struct SDKDPoPTests {
    /// An app whose client talks to the server by its issuer's name (`localhost`), so that the
    /// proofs' `htu` is the URL the server knows itself by.
    static func app(_ server: ServerProcess, dpop: SoftwareDPoPKey? = nil, refreshWithDeviceKey: Bool = false,
                    session: URLSession = .shared) throws -> (client: SignetClient, tokens: FileTokenStore) {
        let tokens = FileTokenStore(url: server.directory.appendingPathComponent("tokens-\(UUID().uuidString).json"))
        let client = SignetClient(
            baseURL: URL(string: "http://localhost:\(server.port)")!, clientID: "dev",
            passkeys: SoftwarePasskeyProvider(authenticator: SoftwareAuthenticator(), origin: server.origin),
            deviceKeys: try SoftwareDeviceKeyStore(deviceID: "device-\(UUID().uuidString.prefix(8))"), tokens: tokens,
            session: session, dpop: dpop.map(SoftwareDPoPKeyStore.init), refreshWithDeviceKey: refreshWithDeviceKey)
        return (client, tokens)
    }

    static func claims(_ token: String) throws -> [String: Any] {
        let part = String(token.split(separator: ".")[1])
        let data = try #require(Data(base64URLEncoded: part))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("with a DPoP key the SDK's tokens are bound to it, and every call, refresh included, carries its proof; a nonce the server asks for is sent on the retry")
    func boundSession() async throws {
        for nonce in [false, true] {
            let server = try ServerProcess(environment: nonce ? ["SIGNET_DPOP_NONCE": "true"] : [:])
            let key = try SoftwareDPoPKey()
            let (client, tokens) = try Self.app(server, dpop: key)
            let response = try await client.signUp(email: "ada@signet.test")
            #expect(response.token_type == "DPoP")
            let cnf = try #require(try Self.claims(response.access_token)["cnf"] as? [String: String])
            #expect(cnf["jkt"] == key.thumbprint)
            #expect(try await client.passkeys().count == 1)
            try await client.refresh()
            let refreshed = try #require(try tokens.load()).accessToken
            let refreshedClaims = try Self.claims(refreshed)
            #expect(refreshed != response.access_token && (refreshedClaims["cnf"] as? [String: String])?["jkt"] == key.thumbprint)
            #expect(try await client.userInfo().sub == refreshedClaims["sub"] as? String)
        }
    }

    @Test("a DPoP-bound refresh whose answer was lost is retried with a fresh proof by the same key, within the server's retry window")
    func lostBoundRefresh() async throws {
        let server = try ServerProcess(environment: ["SIGNET_TOKENS_REFRESH_TOKEN_RETRY_WINDOW": "30"])
        let key = try SoftwareDPoPKey()
        let (client, tokens) = try Self.app(server, dpop: key, session: TestNetwork.session(port: server.port, TestNetwork.Behaviour(loseRefreshAnswers: 1)))
        try await client.signUp(email: "tunnel@signet.test")
        let before = try #require(try tokens.load())
        await #expect(throws: SignetError(.unreachable, "")) { try await client.refresh() }
        #expect(try tokens.load() == before)
        try await client.refresh()
        let after = try #require(try tokens.load())
        #expect(after.refreshToken != before.refreshToken)
        #expect((try Self.claims(after.accessToken)["cnf"] as? [String: String])?["jkt"] == key.thumbprint)
        #expect(try await client.passkeys().count == 1)
    }

    @Test("a DPoP-bound GET whose answer was lost is sent once more with a new proof: the first one, which the server took, is refused if replayed")
    func lostBoundRead() async throws {
        let server = try ServerProcess()
        let (client, tokens) = try Self.app(server, dpop: try SoftwareDPoPKey(), session: TestNetwork.session(port: server.port, TestNetwork.Behaviour(loseGETAnswers: 1)))
        try await client.signUp(email: "bound-read@signet.test")
        let before = try tokens.load()
        #expect(try await client.passkeys().count == 1)
        // Taken as it was resent: no refusal made the SDK refresh.
        #expect(try tokens.load() == before)
        let lost = TestNetwork.behaviour(port: server.port).lostProofs
        try #require(lost.count == 1)
        let token = try #require(try tokens.load()).accessToken
        let replay = try HTTPClient(port: server.port).send("GET", "/me/passkeys", headers: [("Authorization", "DPoP \(token)"), ("DPoP", lost[0])])
        #expect(replay.status == 401 && replay.text.contains("dpop_replayed"), "\(replay.text)")
    }

    @Test("a call the server throttles is a rate_limited error that carries the server's Retry-After")
    func throttled() async throws {
        let server = try ServerProcess(environment: ["SIGNET_DPOP_PROOFS_PER_MINUTE": "2"])
        let (client, _) = try Self.app(server, dpop: try SoftwareDPoPKey())
        try await client.signUp(email: "ada@signet.test")
        for _ in 0..<2 { #expect(try await client.passkeys().count == 1) }
        do {
            _ = try await client.passkeys()
            Issue.record("a third proof within the minute was taken")
        } catch let error as SignetError {
            #expect(error.code == .rateLimited && error.status == 429, "\(error)")
            #expect((1...61).contains(error.retryAfter ?? 0), "\(error)")
        }
    }

    @Test("refresh_proof device_key: the SDK signs the refresh proof with the device key, and the session stays bound to its DPoP key")
    func deviceKeyRefresh() async throws {
        let server = try ServerProcess(environment: ["SIGNET_CLIENTS": #"[{"client_id": "dev", "refresh_proof": "device_key"}]"#])
        let key = try SoftwareDPoPKey()
        let (client, tokens) = try Self.app(server, dpop: key, refreshWithDeviceKey: true)
        try await client.signUp(email: "ada@signet.test")
        // Without an enrolled device key there is nothing to sign the refresh with.
        await #expect(throws: SignetError.self) { try await client.refresh() }
        let (fresh, freshTokens) = try Self.app(server, dpop: key, refreshWithDeviceKey: true)
        try await fresh.signUp(email: "bob@signet.test")
        try await fresh.enrollDeviceKey(name: "Phone")
        let before = try #require(try freshTokens.load()).accessToken
        try await fresh.refresh()
        let after = try #require(try freshTokens.load()).accessToken
        let claims = try Self.claims(after)
        #expect(after != before && (claims["cnf"] as? [String: String])?["jkt"] == key.thumbprint)
        #expect(try await fresh.passkeys().count == 1)
        _ = tokens
    }

    @Test("a new device signs in when the old one approves with its device key; a denial, slow_down and a lost connection are answered as RFC 8628 says")
    func deviceSignIn() async throws {
        let server = try ServerProcess()
        let (phone, phoneTokens) = try Self.app(server)
        try await phone.signUp(email: "ada@signet.test")
        try await phone.enrollDeviceKey(name: "Phone")
        let sub = try Self.claims(try #require(try phoneTokens.load()).accessToken)["sub"] as? String

        let (tv, _) = try Self.app(server)
        let started = try await tv.startDeviceSignIn()
        #expect(started.userCode.count == 9 && started.interval == 5 && started.verificationURIComplete.absoluteString.contains(started.userCode))
        // The user is shown who asks before anything is signed.
        let seen = Seen()
        let shown = try #require(try await phone.approveDevice(userCode: started.userCode, confirm: { await seen.set($0) }))
        let confirmed = await seen.request
        #expect(shown.client_id == "dev" && shown.address == "127.0.0.1" && confirmed?.address == "127.0.0.1")
        try await tv.completeDeviceSignIn(started, wait: { _ in Issue.record("no wait was needed") })
        #expect(try await tv.userInfo().sub == sub)

        let (other, _) = try Self.app(server)
        let refused = try await other.startDeviceSignIn()
        // Not confirmed: nothing is signed, and the request stays pending (the poll goes on to wait).
        let declined = await #expect(throws: SignetError.self) {
            try await phone.approveDevice(userCode: refused.userCode, confirm: { request in request?.client_id == "elsewhere" })
        }
        #expect(declined?.code == .canceled)
        await #expect(throws: Stop.self) { try await other.completeDeviceSignIn(refused, wait: { _ in throw Stop() }) }
        try await phone.denyDevice(userCode: refused.userCode)
        await #expect(throws: SignetError.self) { try await other.completeDeviceSignIn(refused, wait: { _ in }) }
        do {
            try await other.completeDeviceSignIn(refused, wait: { _ in })
        } catch let error as SignetError {
            #expect(error.code == .accessDenied)
        }

        // Polled too soon, the SDK waits 5 s longer; approved meanwhile, the next poll signs in.
        let (slow, _) = try Self.app(server)
        let pending = try await slow.startDeviceSignIn()
        let waits = Waits()
        try await slow.completeDeviceSignIn(pending, wait: { seconds in
            let count = await waits.add(seconds)
            if count == 2 {
                _ = try await phone.approveDevice(userCode: pending.userCode)
                try await Task.sleep(nanoseconds: UInt64(seconds) * 1_000_000_000 + 200_000_000)
            }
        })
        #expect(await waits.all == [5, 10])

        // A poll that cannot reach the server waits twice as long and polls again (RFC 8628 §3.5).
        let (flaky, _) = try Self.app(server, session: TestNetwork.session(port: server.port, TestNetwork.Behaviour(failTokenRequests: 2)))
        let patient = try await flaky.startDeviceSignIn()
        _ = try await phone.approveDevice(userCode: patient.userCode)
        let backoff = Waits()
        try await flaky.completeDeviceSignIn(patient, wait: { seconds in _ = await backoff.add(seconds) })
        #expect(await backoff.all == [10, 20])
        #expect(try await flaky.userInfo().sub == sub)
    }
}

actor Waits {
    var all: [Int] = []
    func add(_ seconds: Int) -> Int {
        all.append(seconds)
        return all.count
    }
}

/// What a confirmation was shown.
actor Seen {
    var request: DeviceRequest?
    func set(_ request: DeviceRequest?) -> Bool {
        self.request = request
        return true
    }
}

/// Ends a poll at its first wait.
struct Stop: Error {}
