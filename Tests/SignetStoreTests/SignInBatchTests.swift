import Foundation
import SignetAuth
import SignetStore
import SignetTestSupport
import Testing

/// Sign-ins that reach the store together: on PostgreSQL they share one statement (a batch);
/// on SQLite each has its transaction. Each must end exactly as it would alone.
@Suite struct SignInBatchTests {
    /// A passkey's ID as hex: the audit event's credential.
    static func tag(_ c: CredentialRow) -> String { c.id.map { String(format: "%02x", $0) }.joined() }

    static func session() -> [UInt8] { (0..<16).map { _ in UInt8.random(in: 0...255) } }

    /// A store whose sign-in batches wait 50 ms to fill, so that sign-ins started together share one.
    func open(_ backend: Backend) throws -> SQLStore {
        let store = try #require(try backend.open() as? SQLStore)
        store.holdSignInBatches(0.05)
        return store
    }

    func use(_ c: CredentialRow, count: Int64, session: [UInt8] = session(), key: [UInt8]? = nil) -> SignInUse {
        SignInUse(sessionID: session, sessionExpiresAt: now() + 60_000, credentialID: c.id, userID: c.userID, publicKey: key ?? c.publicKey,
                  signCount: count, backupState: false, at: 4321)
    }

    func token(_ c: CredentialRow) -> RefreshTokenRow {
        RefreshTokenRow(hash: (0..<32).map { _ in UInt8.random(in: 0...255) }, family: UUID().uuidString, userID: c.userID, clientID: "app", scope: "openid",
                        authTime: 1, amr: ["pop"], expiresAt: now() + 60_000, createdAt: now())
    }

    /// The audit event a sign-in of `c` writes, told apart by its credential.
    func event(_ c: CredentialRow) -> StoreWrite {
        .audit(AuditEvent(at: 7, kind: "sign_in", outcome: "success", userID: c.userID, credentialID: Self.tag(c)))
    }

    @Test("sign-ins that arrive together commit together, each with exactly its own writes", arguments: Backend.available)
    func together(_ backend: Backend) throws {
        let store = try open(backend)
        let accounts = try (0..<12).map { try registered(store, 100 + $0, signCount: 4) }
        let tokens = accounts.map { token($0.1) }
        let results = simultaneously(12) { n in
            try store.completeSignIn(use(accounts[n].1, count: 5 + Int64(n)), writes: [event(accounts[n].1), .refreshToken(tokens[n])])
        }
        for (n, (account, credential)) in accounts.enumerated() {
            #expect(try results[n].get() == .signedIn(account))
            let stored = try #require(try store.credential(id: credential.id))
            #expect(stored.signCount == 5 + Int64(n) && stored.lastUsedAt == 4321 && stored.backupState == false)
            #expect(try store.refreshTokenOwner(hash: tokens[n].hash)?.userID == account.id)
        }
        let events = try store.auditEvents(limit: 100)
        #expect(Set(events.compactMap(\.credentialID)) == Set(accounts.map { Self.tag($0.1) }) && events.count == 12)
        if backend == .postgres {
            let (batches, items, largest) = store.signInBatches
            #expect(items == 12 && batches < 12 && largest > 1, "batches \(batches), largest \(largest)")
        }
    }

    @Test("the other shapes batch too: the audit event alone, and with a web session (no refresh token)", arguments: Backend.available)
    func otherShapes(_ backend: Backend) throws {
        let store = try open(backend)
        let accounts = try (0..<8).map { try registered(store, 600 + $0, signCount: 0) }
        let sessions = accounts.map { account, passkey in
            WebSessionRow(hash: (0..<32).map { _ in UInt8.random(in: 0...255) }, id: UUID().uuidString, userID: account.id, authTime: 5, amr: ["pop"],
                          credential: Self.tag(passkey), createdAt: 5, lastSeenAt: 5, expiresAt: now() + 60_000, userAgent: nil, remote: "192.0.2.9")
        }
        // Even sign-ins bring a web session, odd ones only the event: two shapes, never mixed.
        let results = simultaneously(8) { n in
            try store.completeSignIn(use(accounts[n].1, count: 1), writes: [event(accounts[n].1)] + (n % 2 == 0 ? [.webSession(sessions[n])] : []))
        }
        for (n, (account, _)) in accounts.enumerated() {
            #expect(try results[n].get() == .signedIn(account), "sign-in \(n)")
            let stored = try store.webSession(hash: sessions[n].hash)
            if n % 2 == 0 {
                #expect(stored?.userID == account.id && stored?.revokedAt == nil && stored?.remote == "192.0.2.9" && stored?.userAgent == nil, "web session \(n)")
            } else {
                #expect(stored == nil, "no web session for sign-in \(n)")
            }
        }
        #expect(try store.auditEvents(limit: 100).count == 8)
        if backend == .postgres { #expect(store.signInBatches.largest > 1) }
    }

    @Test("in one batch, each refused sign-in writes nothing and leaves its session unused; the others commit", arguments: Backend.available)
    func refusalsInABatch(_ backend: Backend) throws {
        let store = try open(backend)
        let accounts = try (0..<6).map { try registered(store, 200 + $0, signCount: 4) }
        let (revoked, blocked) = (accounts[2], accounts[4])
        try store.perform([.addCredential(credential(revoked.0.id), limit: nil)])
        #expect(try store.revokeCredential(id: revoked.1.id, userID: revoked.0.id, at: 9) == .revoked)
        #expect(try store.updateUser(id: blocked.0.id, UserChange(blocked: true), at: 9, writes: []) != nil)
        let attempts: [(SignInUse, SignInOutcome)] = [
            (use(accounts[0].1, count: 5), .signedIn(accounts[0].0)),
            (use(accounts[1].1, count: 4), .refused(.counterRegression(stored: 4))),
            (use(revoked.1, count: 5), .refused(.credentialRevoked)),
            (use(accounts[3].1, count: 5, key: [9, 9, 9]), .refused(.credentialUnknown)),
            (use(blocked.1, count: 5), .refused(.userBlocked)),
            (use(accounts[5].1, count: 6), .signedIn(accounts[5].0)),
        ]
        let results = simultaneously(attempts.count) { n in
            try store.completeSignIn(attempts[n].0, writes: [event(accounts[n].1), .refreshToken(token(accounts[n].1))])
        }
        for (n, (attempt, expected)) in attempts.enumerated() {
            #expect(try results[n].get() == expected, "attempt \(n)")
            // A committed sign-in used its session; a refused one left it unused (so it can be used now).
            #expect(try store.useSession(id: attempt.sessionID, expiresAt: now() + 60_000) == !(n == 0 || n == 5), "session of attempt \(n)")
        }
        #expect(try store.auditEvents(limit: 100).compactMap(\.credentialID).sorted() == [accounts[0].1, accounts[5].1].map(Self.tag).sorted())
        #expect(try store.credential(id: accounts[1].1.id)?.signCount == 4 && store.credential(id: accounts[3].1.id)?.signCount == 4)
        if backend == .postgres { #expect(store.signInBatches.largest > 1) }
    }

    @Test("one auth session in sign-ins of 12 passkeys at once: exactly one commits", arguments: Backend.available)
    func oneSessionManyPasskeys(_ backend: Backend) throws {
        let store = try open(backend)
        let accounts = try (0..<12).map { try registered(store, 300 + $0, signCount: 0) }
        let shared = Self.session()
        let results = simultaneously(12) { n in try store.completeSignIn(use(accounts[n].1, count: 1, session: shared), writes: [event(accounts[n].1)]) }
        #expect(results.filter { if case .success(.signedIn) = $0 { true } else { false } }.count == 1)
        #expect(results.filter { if case .failure(let error as StoreError) = $0 { error.code == .sessionUsed } else { false } }.count == 11)
        #expect(try store.auditEvents(limit: 100).count == 1)
        // Never two of one session in a batch: the others met the first one's committed mark.
        if backend == .postgres { #expect(store.signInBatches.largest == 1) }
    }

    @Test("a passkey without a counter in 8 sign-ins at once: all 8 commit, each counted", arguments: Backend.available)
    func onePasskeyManySessions(_ backend: Backend) throws {
        let store = try open(backend)
        let (account, passkey) = try registered(store, 400, signCount: 0)
        let results = simultaneously(8) { _ in try store.completeSignIn(use(passkey, count: 0), writes: [event(passkey)]) }
        #expect(results.allSatisfy { (try? $0.get()) == .signedIn(account) })
        #expect(try store.auditEvents(limit: 100).count == 8)
        // Never two of one passkey in a batch: one statement would update its row once.
        if backend == .postgres { #expect(store.signInBatches.largest == 1) }
    }

    @Test("a sign-in with a DPoP proof runs alone and marks the proof with its session; a used proof refuses it; a refused one leaves its proof", arguments: Backend.available)
    func withProofs(_ backend: Backend) throws {
        let store = try open(backend)
        let accounts = try (0..<6).map { try registered(store, 700 + $0, signCount: 4) }
        let proofs = accounts.map { _ in Self.session() }
        let results = simultaneously(6) { n in
            try store.completeSignIn(use(accounts[n].1, count: 5), writes: [.useProof(id: proofs[n], expiresAt: now() + 60_000), event(accounts[n].1)])
        }
        for (n, (account, _)) in accounts.enumerated() {
            #expect(try results[n].get() == .signedIn(account), "sign-in \(n)")
            #expect(code { try store.perform([.useProof(id: proofs[n], expiresAt: now() + 60_000)]) } == .proofUsed, "proof \(n) used")
        }
        // Never batched: a batch could not tell which of its proof marks went in.
        if backend == .postgres { #expect(store.signInBatches.batches == 0) }
        // A used proof: refused as such, and the sign-in's session stays unused.
        let again = use(accounts[0].1, count: 6)
        #expect(code { _ = try store.completeSignIn(again, writes: [.useProof(id: proofs[0], expiresAt: now() + 60_000)]) } == .proofUsed)
        #expect(try store.useSession(id: again.sessionID, expiresAt: now() + 60_000))
        // A refused sign-in (its counter goes back): its fresh proof stays unused.
        let fresh = Self.session()
        #expect(try store.completeSignIn(use(accounts[1].1, count: 5), writes: [.useProof(id: fresh, expiresAt: now() + 60_000)]) == .refused(.counterRegression(stored: 5)))
        #expect(code { try store.perform([.useProof(id: fresh, expiresAt: now() + 60_000)]) } == nil)
        #expect(try store.auditEvents(limit: 100).count == 6)
    }

    @Test("a batch one sign-in breaks as a whole: each runs alone, and only that one fails", arguments: Backend.available)
    func brokenBatch(_ backend: Backend) throws {
        let store = try open(backend)
        let accounts = try (0..<6).map { try registered(store, 500 + $0, signCount: 0) }
        // Sign-in 3 brings a refresh token whose hash is already stored: its insert conflicts.
        let taken = token(accounts[0].1)
        try store.insertRefreshToken(taken)
        var made = accounts.map { token($0.1) }
        made[3].hash = taken.hash
        let tokens = made
        let sessions = accounts.map { _ in Self.session() }
        let results = simultaneously(6) { n in
            try store.completeSignIn(use(accounts[n].1, count: 1, session: sessions[n]), writes: [event(accounts[n].1), .refreshToken(tokens[n])])
        }
        for n in 0..<6 where n != 3 { #expect(try results[n].get() == .signedIn(accounts[n].0), "sign-in \(n)") }
        guard case .failure(let error as StoreError) = results[3] else { Issue.record("sign-in 3: \(results[3])"); return }
        #expect(error.code == .conflict)
        // Nothing of sign-in 3 stayed: its session is unused and its counter untouched.
        #expect(try store.useSession(id: sessions[3], expiresAt: now() + 60_000))
        #expect(try store.credential(id: accounts[3].1.id)?.lastUsedAt == nil)
        #expect(try store.auditEvents(limit: 100).count == 5)
        if backend == .postgres { #expect(store.signInBatches.largest > 1) }
    }
}
