import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetHTTP
import SignetServer
import SignetStore
import SignetTestSupport
import SignetWebAuthn
import Testing

/// `signet keys rekey`: a new key-encryption key, with every account's recovery codes, queued
/// mail, signing keys and tokens still good, and the old key refused.
@Suite struct RekeyTests {
    static func kek(_ server: TestServer) throws -> [UInt8] {
        try KeyEncryptionKey.load(environment: [:], file: server.directory.appendingPathComponent("signet.kek").path)
    }

    /// Puts `kek` in the server directory's key file, as an operator replaces it.
    static func install(_ kek: [UInt8], in server: TestServer) throws {
        try SecretFile.save(Data((Base64URL.encode(kek) + "\n").utf8), to: server.directory.appendingPathComponent("signet.kek").path)
    }

    /// What `/passkey/challenge` offers for `username`: for an unknown one, a decoy passkey.
    static func offered(_ server: TestServer, _ username: String) throws -> JSONValue? {
        try server.post("/passkey/challenge", .object(["client_id": .string("app"), "username": .string(username)])).json["authn_params_public_key"]?["allowCredentials"]
    }

    @Test("after a re-key (twice): recovery codes made before sign in, new ones too; tokens and signing keys carry on; mail opens; the old key is refused")
    func rekeyKeepsEverything() throws {
        let first = try TestServer()
        let account = try SignedIn(first, email: "rekey@signet.test")
        let codes = try account.call("POST", "/me/recovery-codes").json["codes"]?.array?.compactMap(\.string) ?? []
        try #require(codes.count == 10)
        let kid = try #require(first.store.signingKeys().first?.kid)
        // A message waiting in the outbox, sealed as the sender seals one; and one that does not open, kept as it is.
        let decoy = try #require(try Self.offered(first, "ghost@signet.test"))
        let (old, new) = (try Self.kek(first), SecureRandom.bytes(32))
        let text = Array("Subject: your code\r\n\r\n123456\r\n".utf8)
        try first.store.perform([
            .mail(OutboxRow(id: "m1", kind: "otp", recipient: "rekey@signet.test", message: try AESGCM.seal(text, key: KeyEncryptionKey.mailKey(old), aad: Array("m1".utf8)),
                            createdAt: 0, dueAt: Int64.max / 2)),
            .mail(OutboxRow(id: "m2", kind: "otp", recipient: "rekey@signet.test", message: [1, 2, 3], createdAt: 0, dueAt: Int64.max / 2)),
        ])
        let queued = try first.store.sealedMaterial().messages
        // A pending email code, keyed by the old key: discarded.
        try #require(try first.store.issueEmailCode(EmailCodeRow(email: "pending@signet.test", id: "c1", codeHash: [1], clientID: "app", createdAt: 0,
                                                                 expiresAt: Int64.max / 2), interval: 0, mail: nil))

        let done = try KeyEncryptionKey.rekey(store: first.store, from: old, to: new)
        #expect(done.signingKeys == 1 && done.messages == queued.count && done.retiredCodeKeys == 1)
        #expect(try first.store.emailCode(email: "pending@signet.test") == nil)
        // Nothing is left under the old key: the signing key and the messages open under the new one only.
        let material = try first.store.sealedMaterial()
        let sealedKey = try #require(material.signingKeys[kid])
        #expect(throws: (any Error).self) { try AESGCM.open(sealedKey, key: old, aad: Array(kid.utf8)) }
        #expect(try PrivateKey(der: AESGCM.open(sealedKey, key: new, aad: Array(kid.utf8))).publicKey.spki == first.store.signingKeys().first?.publicKey)
        #expect(try AESGCM.open(try #require(material.messages["m1"]), key: KeyEncryptionKey.mailKey(new), aad: Array("m1".utf8)) == text)
        #expect(material.messages["m2"] == [1, 2, 3])

        // The server still running with the old key says it needs a restart, once it looks again.
        #expect(try first.get("/healthz").status == 200)
        first.clock.advance(KeyRing.reloadInterval + 1)
        let health = try first.get("/healthz")
        let said = try StrictJSON().parse(health.body)["reason"]
        #expect(health.status == 503 && said == .string("signing_key_unavailable"))
        // A server with the old key does not start, and says why.
        #expect { _ = try TestServer(sharing: first.directory) } throws: { "\($0)".contains("re-keyed") }
        try Self.install(new, in: first)
        let second = try TestServer(sharing: first.directory)
        // An unknown username is offered the same decoy passkey as before: a change would tell it from a real account.
        #expect(try Self.offered(second, "ghost@signet.test") == decoy)
        // The access token from before still verifies (the same signing key), the account carries on.
        let me = try SignedIn(second, phone: Phone(second, authenticator: account.phone.authenticator), access: account.access).call("GET", "/me/passkeys")
        #expect(me.status == 200, "\(me.json.serialized)")
        let (granted, tokens) = try RecoveryTests.recoveryGrant(second, "rekey@signet.test", codes[0])
        #expect(granted == 200, "\(tokens.serialized)")
        #expect(jwtClaims(tokens["access_token"]?.string)["amr"] == .array([.string("otp")]))
        #expect(try RecoveryTests.recoveryGrant(second, "rekey@signet.test", codes[0]).json["reason"] == .string("recovery_code_invalid"), "still once only")
        #expect(try RecoveryTests.recoveryGrant(second, "rekey@signet.test", "AAAA-BBBB-CCCC").json["reason"] == .string("recovery_code_invalid"))
        let phone = Phone(second, authenticator: account.phone.authenticator)
        #expect(try phone.signIn()["access_token"]?.string != nil)

        // Again, to a third key: the first key's code key travels on, sealed under each.
        let third = SecureRandom.bytes(32)
        #expect(try KeyEncryptionKey.rekey(store: second.store, from: new, to: third).retiredCodeKeys == 2)
        try Self.install(third, in: first)
        let later = try TestServer(sharing: first.directory)
        #expect(try Self.offered(later, "ghost@signet.test") == decoy)
        #expect(try RecoveryTests.recoveryGrant(later, "rekey@signet.test", codes[1]).status == 200)
        // Codes made under the current key work as ever.
        let laterPhone = Phone(later, authenticator: account.phone.authenticator)
        let fresh = SignedIn(later, phone: laterPhone, access: try #require(try laterPhone.signIn()["access_token"]?.string))
        let renewed = try fresh.call("POST", "/me/recovery-codes").json["codes"]?.array?.compactMap(\.string) ?? []
        #expect(try RecoveryTests.recoveryGrant(later, "rekey@signet.test", try #require(renewed.first)).status == 200)
    }

    /// `account` signed in afresh on `server` (another instance of its database): a session fresh
    /// enough for a step-up.
    static func again(_ account: SignedIn, on server: TestServer) throws -> SignedIn {
        let phone = Phone(server, authenticator: account.phone.authenticator)
        return SignedIn(server, phone: phone, access: try #require(try phone.signIn()["access_token"]?.string))
    }

    static func newCodes(_ account: SignedIn) throws -> [String] {
        let codes = try account.call("POST", "/me/recovery-codes").json["codes"]?.array?.compactMap(\.string) ?? []
        try #require(codes.count == 10)
        return codes
    }

    /// A re-key of the database that `server`'s directory holds, to a fresh key, and the server
    /// that starts with it.
    static func rekey(_ server: TestServer, from old: [UInt8]) throws -> (done: KeyEncryptionKey.Rekeyed, key: [UInt8], next: TestServer) {
        let new = SecureRandom.bytes(32)
        let done = try KeyEncryptionKey.rekey(store: server.store, from: old, to: new)
        try install(new, in: server)
        return (done, new, try TestServer(sharing: server.directory))
    }

    @Test("a re-key drops an earlier code key once no unused recovery code needs it; each code is checked under its own key")
    func codeKeysDropped() throws {
        let first = try TestServer()
        let path = first.directory.appendingPathComponent("signet.db").path
        let (one, two) = (try SignedIn(first, email: "one@signet.test"), try SignedIn(first, email: "two@signet.test"))
        let oneFirst = try Self.newCodes(one)
        _ = try Self.newCodes(two)
        let keyA = try Self.kek(first)
        let codeKeyA = "code-key:" + KeyEncryptionKey.id(KeyEncryptionKey.codeKey(keyA))

        let (toB, keyB, second) = try Self.rekey(first, from: keyA)
        #expect(toB.retiredCodeKeys == 1 && toB.droppedCodeKeys == 0)
        let twoSecond = try Self.newCodes(try Self.again(two, on: second))
        // A's key stays: one's codes are still under it. B's stays: the key a re-key leaves always does.
        let (toC, keyC, third) = try Self.rekey(first, from: keyB)
        #expect(toC.retiredCodeKeys == 2 && toC.droppedCodeKeys == 0)
        #expect(try RecoveryTests.recoveryGrant(third, "one@signet.test", oneFirst[0]).status == 200)
        let oneThird = try Self.newCodes(try Self.again(one, on: third))
        // Now no unused code is under A's key: it goes.
        let (toD, keyD, fourth) = try Self.rekey(first, from: keyC)
        #expect(toD.retiredCodeKeys == 2 && toD.droppedCodeKeys == 1)
        // What each key still serves: D's none yet, C's one's 10, B's two's 10; none without an ID.
        let status = try KeyEncryptionKey.status(store: fourth.store, kek: keyD, kept: try KeyEncryptionKey.keptKeys(store: fourth.store, kek: keyD))
        func codeKeyID(_ kek: [UInt8]) -> String { KeyEncryptionKey.id(KeyEncryptionKey.codeKey(kek)) }
        let unused = KeyEncryptionKey.CodeCount(codes: 10, accounts: 1)
        #expect(status.id == KeyEncryptionKey.id(keyD) && status.unlabelled == .init() && status.lost == .init())
        #expect(status.codeKeys == [
            .init(id: codeKeyID(keyD), current: true, unused: .init()),
        ] + [.init(id: codeKeyID(keyB), current: false, unused: unused), .init(id: codeKeyID(keyC), current: false, unused: unused)].sorted { $0.id < $1.id })
        let names = try fourth.store.sealedKeys().map(\.name)
        #expect(!names.contains(codeKeyA) && names.filter { $0.hasPrefix("code-key:") }.count == 2, "\(names)")
        #expect(try RecoveryTests.recoveryGrant(fourth, "two@signet.test", twoSecond[0]).status == 200)
        #expect(try RecoveryTests.recoveryGrant(fourth, "one@signet.test", oneThird[0]).status == 200)
        #expect(try RecoveryTests.recoveryGrant(fourth, "one@signet.test", oneFirst[1]).json["reason"] == .string("recovery_code_invalid"))

        // A code is compared under the key it names, not under whichever matches...
        _ = try rawSQLite(path, "UPDATE recovery_codes SET key_id = 'elsewhere' WHERE used_at IS NULL")
        #expect(try RecoveryTests.recoveryGrant(fourth, "one@signet.test", oneThird[1]).json["reason"] == .string("recovery_code_invalid"))
        // ...and one from before key IDs were stored, under every key the database kept.
        _ = try rawSQLite(path, "UPDATE recovery_codes SET key_id = NULL WHERE used_at IS NULL")
        #expect(try RecoveryTests.recoveryGrant(fourth, "one@signet.test", oneThird[1]).status == 200)
        #expect(try RecoveryTests.recoveryGrant(fourth, "two@signet.test", twoSecond[1]).status == 200)
        let after = try KeyEncryptionKey.status(store: fourth.store, kek: keyD, kept: try KeyEncryptionKey.keptKeys(store: fourth.store, kek: keyD))
        #expect(after.unlabelled == .init(codes: 16, accounts: 2) && after.codeKeys.allSatisfy { $0.unused == .init() })
        _ = try rawSQLite(path, "UPDATE recovery_codes SET key_id = 'elsewhere' WHERE used_at IS NULL AND user_id IN (SELECT id FROM users WHERE email = 'one@signet.test')")
        let lost = try KeyEncryptionKey.status(store: fourth.store, kek: keyD, kept: try KeyEncryptionKey.keptKeys(store: fourth.store, kek: keyD))
        #expect(lost.lost == .init(codes: 8, accounts: 1) && lost.unlabelled == .init(codes: 8, accounts: 1))
    }

    @Test("a server started without the database's key file says so, and makes none")
    func missingKey() throws {
        let first = try TestServer()
        let file = first.directory.appendingPathComponent("signet.kek")
        let kept = first.directory.appendingPathComponent("kept.kek")
        try FileManager.default.moveItem(at: file, to: kept)
        #expect { _ = try TestServer(sharing: first.directory) } throws: { "\($0)".contains("no key-encryption key") }
        #expect(!FileManager.default.fileExists(atPath: file.path))
        try FileManager.default.moveItem(at: kept, to: file)
        #expect(try TestServer(sharing: first.directory).get("/.well-known/jwks.json").status == 200)
    }

    @Test("a re-key from a key that is not the database's, or to the same key, changes nothing")
    func wrongKey() throws {
        let server = try TestServer()
        let before = try server.store.sealedMaterial()
        let current = try Self.kek(server)
        #expect { _ = try KeyEncryptionKey.rekey(store: server.store, from: SecureRandom.bytes(32), to: SecureRandom.bytes(32)) } throws: {
            "\($0)".contains("does not open")
        }
        #expect(throws: (any Error).self) { _ = try KeyEncryptionKey.rekey(store: server.store, from: current, to: current) }
        #expect(try server.store.sealedMaterial() == before)
        // Once re-keyed, the old key is not the database's any more: a second re-key from it is refused too.
        let new = SecureRandom.bytes(32)
        _ = try KeyEncryptionKey.rekey(store: server.store, from: current, to: new)
        #expect { _ = try KeyEncryptionKey.rekey(store: server.store, from: current, to: SecureRandom.bytes(32)) } throws: { "\($0)".contains("re-keyed") }
    }
}
