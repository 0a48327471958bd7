import SignetAuth
import Foundation
import SignetAPI
import SignetSoftware
import SignetStore
import SignetWebAuthn
import SignetServer
import Testing
import SignetTestSupport

/// A sign-in verifies against what Signet keeps in memory about a passkey, and its one
/// transaction checks again what can change: these tests change it behind the server's back.
@Suite struct SignInCommitTests {
    /// An authenticator with a counter, signed up and signed in once (so the server holds its
    /// credential in memory).
    static func countingPhone(_ server: TestServer, email: String) throws -> Phone {
        var settings = SoftwareAuthenticator.Settings()
        settings.counter = true
        let phone = Phone(server, settings: settings)
        _ = try phone.signUp(email: email)
        _ = try phone.signIn()
        return phone
    }

    static func copy(of authenticator: SoftwareAuthenticator) throws -> SoftwareAuthenticator {
        let file = Scratch.directory.appendingPathComponent("clone-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try authenticator.stateData().write(to: file)
        return try SoftwareAuthenticator(contentsOf: file)
    }

    static func refusal(_ phone: Phone) throws -> (status: Int, reason: String?) {
        let (session, credential, _) = try phone.startSignIn()
        let (status, json) = try phone.exchange(session: session, credential: credential)
        return (status, json["reason"]?.string)
    }

    @Test("a cloned authenticator (its counter does not move forward) is refused, and the event says so")
    func clonedAuthenticator() throws {
        let server = try TestServer()
        let phone = try Self.countingPhone(server, email: "clone@signet.test")
        let clone = Phone(server, authenticator: try Self.copy(of: phone.authenticator))
        _ = try phone.signIn()  // the original moves on to 2; the clone still sends 2
        let (status, reason) = try Self.refusal(clone)
        #expect(status == 400 && reason == "counter_regression")
        let kinds = try server.store.auditEvents(limit: 3).map(\.kind)
        #expect(kinds.contains("possible_cloned_authenticator"))
        // The original goes on signing in.
        _ = try phone.signIn()
    }

    @Test("a counter that moved on in the database (another instance) is judged by the database, not by memory")
    func counterMovedElsewhere() throws {
        let server = try TestServer()
        let phone = try Self.countingPhone(server, email: "moved@signet.test")
        let id = try #require(phone.authenticator.credentials.first?.id)
        // Another instance recorded a sign-in with count 10; this server last saw 1.
        let row = try #require(try server.store.credential(id: id))
        #expect(try server.store.recordUse(CredentialUse(credentialID: id, userID: row.userID, publicKey: row.publicKey, signCount: 10, backupState: true, at: 1)) == nil)
        let (status, reason) = try Self.refusal(phone)  // sends 2
        #expect(status == 400 && reason == "counter_regression")
        #expect(try server.store.credential(id: id)?.signCount == 10)
        // And the session of the refused sign-in is used up like any other.
        let (session, credential, _) = try phone.startSignIn()
        #expect(try phone.exchange(session: session, credential: credential).status == 400)
        #expect(try phone.exchange(session: session, credential: credential).json["reason"] == .string("auth_session_unknown"))
    }

    @Test("a passkey revoked after it signed in is refused, also by an instance that keeps it in memory")
    func revokedWhileCached() throws {
        let server = try TestServer()
        let phone = Phone(server)
        _ = try phone.signUp(email: "revoked@signet.test")
        _ = try phone.signIn()
        let id = try #require(phone.authenticator.credentials.first?.id)
        let user = try #require(try server.store.credential(id: id)?.userID)
        try server.store.perform([.addCredential(CredentialRow(
            id: [7, 7, 7], userID: user, publicKey: [1], algorithm: -7, signCount: 0, aaguid: "", format: "none", backupEligible: true,
            backupState: true, transports: [], name: nil, createdAt: 1), limit: nil)])
        #expect(try server.store.revokeCredential(id: id, userID: user, at: 5) == .revoked)
        let before = try server.store.rowCounts()
        let (status, reason) = try Self.refusal(phone)
        #expect(status == 400 && reason == "credential_revoked")
        // Nothing but the auth session was written: no refresh token, no success event.
        let after = try server.store.rowCounts()
        #expect(after["refresh_tokens"] == before["refresh_tokens"])
        #expect(try server.store.auditEvents(limit: 1).first?.outcome == "failure")
    }
}

@Suite struct CredentialCacheTests {
    @Test("the passkey cache: bounded, found by ID bytes, counts updated, entries removed")
    func bounded() {
        let cache = CredentialCache(capacity: 100)
        func entry(_ i: Int) -> CredentialCache.Entry {
            CredentialCache.Entry(userID: "u\(i)", userHandle: [UInt8(i & 0xff)], publicKey: [1, 2, UInt8(i & 0xff)], backupEligible: i % 2 == 0, signCount: Int64(i))
        }
        for i in 0..<250 { cache.store([UInt8(i & 0xff), UInt8(i >> 8)], entry(i)) }
        #expect(cache.count == 100)
        // The last one stored is always there; an ID of other bytes never matches.
        #expect(cache.entry([249, 0]) == entry(249))
        #expect(cache.entry([249, 0, 0]) == nil && cache.entry([]) == nil)
        // Storing an ID again replaces its entry without evicting another.
        cache.store([249, 0], entry(7))
        #expect(cache.count == 100 && cache.entry([249, 0]) == entry(7))
        cache.setSignCount([249, 0], 99)
        #expect(cache.entry([249, 0])?.signCount == 99)
        cache.setSignCount([1, 2, 3, 4], 5)  // unknown: nothing happens
        cache.remove([249, 0])
        #expect(cache.entry([249, 0]) == nil && cache.count == 99)
    }

    @Test("an entry made while the cache is emptied (a BLOB put in force) is returned but not kept")
    func emptiedWhileMade() throws {
        struct Refused: Error {}
        let cache = CredentialCache(capacity: 10)
        let one = CredentialCache.Entry(userID: "u1", userHandle: [1], publicKey: [1], backupEligible: false, signCount: 0, hardwareBound: true)
        let two = CredentialCache.Entry(userID: "u1", userHandle: [1], publicKey: [1], backupEligible: false, signCount: 0, hardwareBound: false)
        var made = 0
        // Made while the cache is emptied: the caller gets it, the cache does not keep it.
        let first = cache.entry([7]) { made += 1; cache.removeAll(); return one }
        #expect(first.entry == one && !first.cached && cache.entry([7]) == nil && cache.count == 0)
        // So the next sign-in makes it again, under what is in force now, and that one is kept.
        let second = cache.entry([7]) { made += 1; return two }
        #expect(second.entry == two && !second.cached && made == 2)
        let third = cache.entry([7]) { made += 1; return one }
        #expect(third.entry == two && third.cached && made == 2)
        // An emptying before the entry is made does not stop it being kept.
        cache.removeAll()
        _ = cache.entry([8]) { one }
        #expect(cache.entry([8]) == one)
        // A refusal keeps nothing.
        #expect(throws: Refused.self) { try cache.entry([9]) { throw Refused() } }
        #expect(cache.entry([9]) == nil && cache.count == 1)
    }
}
