import Foundation
import SignetAuth
import SignetTestSupport
import Testing

/// Passkeys by authenticator model: what a Metadata Service report of a model locks out, on
/// both databases.
@Suite struct PasskeyModelTests {
    static let model = "cb69481e-8ff7-4039-93ec-0a2729a154a8"
    static let other = "fbfc3007-154e-4ecc-8c0b-6e020557d7bd"

    @Test("passkeys in use are counted per model with their accounts, revoked ones not; the accounts are found by model; a long list of models is read in batches", arguments: Backend.available)
    func counted(_ backend: Backend) throws {
        let store = try backend.open()
        var ids: [String] = []
        for (n, (model, revoked)) in [(Self.model, false), (Self.model, false), (Self.other, false), (Self.model, true)].enumerated() {
            let account = user(n)
            var passkey = credential(account.id)
            passkey.aaguid = model
            passkey.revokedAt = revoked ? now() : nil
            try store.createUser(account, credential: passkey)
            ids.append(account.id)
        }
        let counts = try store.livePasskeys(models: [Self.model, Self.other, "ee882879-721c-4913-9775-3dfcce97072a"])
        #expect(counts.count == 2 && counts[Self.model]?.passkeys == 2 && counts[Self.model]?.accounts == 2 && counts[Self.other]?.passkeys == 1)
        // A BLOB refuses many models at once: they are asked for in batches.
        let many = (0..<450).map { String(format: "00000000-0000-0000-0000-%012d", $0) } + [Self.other]
        #expect(try store.livePasskeys(models: many).mapValues(\.passkeys) == [Self.other: 1])
        #expect(try store.livePasskeys(models: []).isEmpty)
        let found = try store.users(UserQuery(passkeyModel: Self.model, limit: 10))
        #expect(Set(found.users.map(\.user.id)) == Set(ids[0...1]) && found.total == 2)
        #expect(try store.users(UserQuery(passkeyModel: Self.other, limit: 10)).users.map(\.user.id) == [ids[2]])
    }

    @Test("a Metadata Service BLOB's number is kept per root as the highest seen: a lower one leaves it, a higher one raises it, and instances raising at once keep the highest", arguments: Backend.available)
    func blobNumbers(_ backend: Backend) throws {
        let store = try backend.open()
        let (root, other) = ([UInt8](repeating: 1, count: 32), [UInt8](repeating: 2, count: 32))
        #expect(try store.raiseMetadataNumber(root: root, number: 41, at: 1) == 41, "the first seen is kept")
        #expect(try store.raiseMetadataNumber(root: root, number: 40, at: 2) == 41, "an older one does not lower it")
        #expect(try store.raiseMetadataNumber(root: root, number: 41, at: 3) == 41)
        #expect(try store.raiseMetadataNumber(root: other, number: 7, at: 4) == 7, "another root counts on its own")
        #expect(try store.raiseMetadataNumber(root: root, number: 43, at: 5) == 43)
        // Eight instances at once, each with its own number: every one is told a number at least
        // its own, and the highest is what stays.
        let told = try simultaneously(8) { i in try store.raiseMetadataNumber(root: other, number: Int64(100 + (i * 5) % 8), at: 6) }.map { try $0.get() }
        #expect(told.enumerated().allSatisfy { i, number in number >= 100 + (i * 5) % 8 }, "\(told)")
        #expect(try store.raiseMetadataNumber(root: other, number: 0, at: 7) == 107)
        #expect(try store.raiseMetadataNumber(root: root, number: 0, at: 8) == 43)
    }

    @Test("the owners of a refused model's passkeys in use are marked told once, a batch a transaction with its writes; instances telling at once split them; revoked passkeys and other models are left", arguments: Backend.available)
    func toldOnce(_ backend: Backend) throws {
        let store = try backend.open()
        var owners: [String] = []
        for (n, (model, revoked)) in [(Self.model, false), (Self.model, false), (Self.model, false), (Self.model, false), (Self.model, false),
                                      (Self.model, true), (Self.other, false)].enumerated() {
            let account = user(n)
            var passkey = credential(account.id)
            passkey.aaguid = model
            passkey.revokedAt = revoked ? now() : nil
            try store.createUser(account, credential: passkey)
            if model == Self.model && !revoked { owners.append(account.id) }
        }
        // Four instances at once, two passkeys a batch: each owner is marked by exactly one, and
        // the writes of its batch (here: the address verified) commit with the mark.
        let told = try simultaneously(4) { _ in
            var seen: [String] = [], batches: [Int] = []
            let marked = try store.tellRefusedPasskeys(model: Self.model, at: now(), batch: 2) { passkeys in
                seen += passkeys.map(\.owner.id)
                batches.append(passkeys.count)
                return passkeys.map { .verifyEmail(userID: $0.owner.id) }
            }
            #expect(marked == seen.count && batches.allSatisfy { (1...2).contains($0) }, "\(batches)")
            return seen
        }.map { try $0.get() }
        #expect(told.joined().sorted() == owners.sorted(), "\(told)")
        // A blocked account is passed over, unmarked; once unblocked, it is told.
        let blocked = user(9)
        var held = credential(blocked.id)
        held.aaguid = Self.model
        try store.createUser(blocked, credential: held)
        #expect(try store.updateUser(id: blocked.id, UserChange(blocked: true), at: now(), writes: []) != nil)
        #expect(try store.tellRefusedPasskeys(model: Self.model, at: now(), batch: 2) { _ in Issue.record("a blocked account told"); return [] } == 0)
        #expect(try store.updateUser(id: blocked.id, UserChange(blocked: false), at: now(), writes: []) != nil)
        var unblocked: [String] = []
        #expect(try store.tellRefusedPasskeys(model: Self.model, at: now(), batch: 2) { unblocked += $0.map(\.owner.id); return [] } == 1 && unblocked == [blocked.id])
        for id in owners { #expect(try store.user(id: id)?.emailVerified == true) }
        // Once told, never again.
        #expect(try store.tellRefusedPasskeys(model: Self.model, at: now(), batch: 2) { _ in Issue.record("told again"); return [] } == 0)
        // A write that fails takes its batch's marks with it.
        #expect(throws: StoreError.self) {
            _ = try store.tellRefusedPasskeys(model: Self.other, at: now(), batch: 2) { _ in [.addCredential(credential("nobody"), limit: nil)] }
        }
        var other: [String] = []
        #expect(try store.tellRefusedPasskeys(model: Self.other, at: now(), batch: 2) { other += $0.map(\.owner.id); return [] } == 1 && other.count == 1)
    }
}
