import SignetAuth
import Foundation
import SignetStore
import Testing

/// `max_passkeys` in the store: the count and the insert are one transaction, so additions at
/// once never pass the limit together.
@Suite struct PasskeyLimitStoreTests {
    @Test("of 8 additions at once to an account with one passkey and a limit of 3, exactly 2 are kept, the others refused passkey_limit with nothing of their batch written; revoked passkeys do not count; no limit, no refusal", arguments: Backend.available)
    func limit(_ backend: Backend) throws {
        let store = try backend.open()
        let u = user(1)
        let first = credential(u.id)
        try store.createUser(u, credential: first)
        let results = concurrently(8) {
            let event = AuditEvent(at: now(), kind: "passkey_added", outcome: "success", userID: u.id)
            try store.perform([.addCredential(credential(u.id), limit: 3), .audit(event)])
        }
        #expect(results.filter { (try? $0.get()) != nil }.count == 2)
        for case .failure(let error) in results { #expect((error as? StoreError)?.code == .passkeyLimit, "\(error)") }
        #expect(try store.credentials(userID: u.id).count == 3)
        #expect(try store.auditEvents(limit: 50).filter { $0.kind == "passkey_added" }.count == 2, "a refused addition writes nothing of its batch")
        // At the limit: refused; one revoked, one more fits.
        #expect(throws: StoreError.self) { try store.perform([.addCredential(credential(u.id), limit: 3)]) }
        #expect(try store.revokeCredential(id: first.id, userID: u.id, at: now(), writes: { _ in [] }) == .revoked)
        try store.perform([.addCredential(credential(u.id), limit: 3)])
        #expect(try store.credentials(userID: u.id).filter { $0.revokedAt == nil }.count == 3)
        // Another account's passkeys are not this one's; an import gives no limit.
        let v = user(2)
        try store.createUser(v, credential: credential(v.id))
        try store.perform([.addCredential(credential(v.id), limit: 2)])
        try store.perform((0..<5).map { _ in .addCredential(credential(u.id), limit: nil) })
        #expect(try store.credentials(userID: u.id).filter { $0.revokedAt == nil }.count == 8 && store.credentials(userID: v.id).count == 2)
    }
}
