import Foundation
import SignetAuth
import SignetHTTP
import SignetWebAuthn
import Testing

/// `tokens.refresh_token_retry_window`: a refresh whose answer was lost may be sent again.
@Suite struct RefreshRetryTests {
    static func refresh(_ server: TestServer, _ token: String) throws -> (status: Int, json: JSONValue) {
        try server.post("/oauth/token", .object(["grant_type": .string("refresh_token"), "client_id": .string("app"), "refresh_token": .string(token)]))
    }

    /// A server with a 30 s window, and a signed-up account's first refresh token.
    static func signedIn() throws -> (TestServer, String) {
        let server = try TestServer { $0.refreshTokenRetryWindow = 30 }
        let tokens = try Phone(server).signUp(email: "retry-\(UUID().uuidString.prefix(6))@signet.test")
        return (server, try #require(tokens["refresh_token"]?.string))
    }

    @Test("a refresh sent again after its answer was lost gets new tokens; the lost token, shown later, revokes the family")
    func lostAnswer() throws {
        let (server, first) = try Self.signedIn()
        let lost = try Self.refresh(server, first)
        #expect(lost.status == 200)
        let lostToken = try #require(lost.json["refresh_token"]?.string)
        // The phone never saw that answer, and sends its token again, twice.
        let again = try Self.refresh(server, first)
        #expect(again.status == 200, "\(again.json)")
        let third = try Self.refresh(server, first)
        #expect(third.status == 200, "\(third.json)")
        let kept = try #require(third.json["refresh_token"]?.string)
        #expect(Set([lostToken, again.json["refresh_token"]?.string, kept]).count == 3)
        let access = try #require(third.json["access_token"]?.string)
        #expect(try server.get("/userinfo", headers: [("Authorization", "Bearer \(access)")]).status == 200)
        // Each retry is in the audit log, as a refresh that succeeded and says why.
        let retries = try server.store.auditEvents(limit: 20).filter { $0.kind == "refresh" && $0.outcome == "success" }
        #expect(retries.count == 2 && retries.allSatisfy { $0.detail?.contains("answer was lost") == true })
        // The new token rotates as any does.
        let next = try Self.refresh(server, kept)
        #expect(next.status == 200)
        // Someone had the lost token after all: showing it is a reuse, and the session ends.
        let shown = try Self.refresh(server, lostToken)
        #expect(shown.status == 400 && shown.json["reason"] == .string("refresh_token_reused"))
        let after = try Self.refresh(server, try #require(next.json["refresh_token"]?.string))
        #expect(after.status == 400 && ["refresh_token_reused", "refresh_token_revoked"].contains(after.json["reason"]?.string ?? ""))
    }

    @Test("once what the refresh gave was used, or the window has passed, sending the old token again is a reuse")
    func notARetry() throws {
        let (server, first) = try Self.signedIn()
        let second = try #require(try Self.refresh(server, first).json["refresh_token"]?.string)
        #expect(try Self.refresh(server, second).status == 200)
        let replay = try Self.refresh(server, first)
        #expect(replay.status == 400 && replay.json["reason"] == .string("refresh_token_reused"))

        let (late, token) = try Self.signedIn()
        let rotated = try Self.refresh(late, token)
        #expect(rotated.status == 200)
        late.clock.advance(31)
        let tooLate = try Self.refresh(late, token)
        #expect(tooLate.status == 400 && tooLate.json["reason"] == .string("refresh_token_reused"))
        let lost = try Self.refresh(late, try #require(rotated.json["refresh_token"]?.string))
        #expect(lost.status == 400, "the family ended with the reuse")
    }

    @Test("without the setting, a rotated token sent again is a reuse at once")
    func strictByDefault() throws {
        let server = try TestServer()
        let first = try #require(try Phone(server).signUp(email: "strict@signet.test")["refresh_token"]?.string)
        #expect(try Self.refresh(server, first).status == 200)
        let again = try Self.refresh(server, first)
        #expect(again.status == 400 && again.json["reason"] == .string("refresh_token_reused"))
    }
}
