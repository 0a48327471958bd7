import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetSoftware
import SignetTestSupport
import SignetWebAuthn
import Testing

/// `signet admin users export --all` into another Signet for the same RP ID with `users import`:
/// the accounts keep their IDs and their passkeys, which sign in there as before.
@Suite("Accounts moved whole between Signets")
struct AccountMoveTests {
    static func database(_ server: TestServer) -> [String] { ["--database", "sqlite:" + server.directory.appendingPathComponent("signet.db").path] }

    /// The command with the test servers' RP ID, as an operator runs it with the deployment's configuration.
    static func signet(_ arguments: [String], in directory: URL, anchors: [String] = []) throws -> (status: Int32, output: String, errors: String) {
        var environment = ["SIGNET_RELYING_PARTY_ID": TestServer.rpID, "SIGNET_RELYING_PARTY_ORIGINS": "[\"\(TestServer.origin)\"]"]
        if !anchors.isEmpty { environment["SIGNET_TRUST_ANCHORS"] = JSONValue.array(anchors.map(JSONValue.string)).serialized }
        return try runProcess(ProcessTests.binary.path, arguments, environment: environment, in: directory)
    }

    static func export(_ server: TestServer) throws -> [JSONValue] {
        let file = server.directory.appendingPathComponent("accounts-\(UUID().uuidString).jsonl").path
        let written = try Self.signet(["admin", "users", "export", "--all", "--out", file] + database(server), in: server.directory)
        try #require(written.status == 0, "\(written.errors)")
        #expect(written.errors.contains("recorded for RP ID \(TestServer.rpID) (relying_party.id): an import takes them only where the RP ID is the same\n"), "\(written.errors)")
        return try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map { try StrictJSON().parse(Array($0.utf8)) }
    }

    /// Imports `lines` into `server`; the outcomes by line.
    static func importing(_ lines: [JSONValue], into server: TestServer, anchors: [String] = []) throws -> (status: Int32, outcomes: [JSONValue]) {
        let file = server.directory.appendingPathComponent("import-\(UUID().uuidString).jsonl").path
        try Data(lines.map(\.serialized).joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let run = try Self.signet(["admin", "users", "import", file, "--json"] + database(server), in: server.directory, anchors: anchors)
        return (run.status, try OperationsTests.json(run.output).array ?? [])
    }

    static func changed(_ line: JSONValue, _ change: (inout JSONObject) -> Void) -> JSONValue {
        var object = line.object ?? [:]
        change(&object)
        return .object(object)
    }

    static func changedMember(_ object: JSONValue, _ member: String, _ value: JSONValue?) -> JSONValue {
        changed(object) { $0[member] = value }
    }

    static func changedPasskey(_ line: JSONValue, _ member: String, _ value: JSONValue?) -> JSONValue {
        changed(line) { object in
            var first = object["passkeys"]?.array?.first?.object ?? [:]
            first[member] = value
            object["passkeys"] = .array([.object(first)])
        }
    }

    static func subject(_ tokens: JSONValue) -> String? { BackchannelLogoutTests.claims(tokens["access_token"]?.string)?["sub"]?.string }

    /// A device key as `export --all` writes one.
    static func deviceKey(_ id: String, device: String, key: SoftwareDeviceKey? = nil, approvedBy: String? = nil, revoked: Bool = false) throws -> JSONValue {
        let spki = try (key ?? SoftwareDeviceKey(deviceID: device)).publicKeySPKI
        var object: JSONObject = [
            "id": .string(id), "device_id": .string(device), "platform": .string("ios"), "name": .string("Phone"),
            "public_key": .string(Base64URL.encode(spki)), "created_at": .number("1790000000"),
        ]
        if let approvedBy { object["approved_by"] = .string(approvedBy) }
        if revoked { object["revoked_at"] = .number("1790000100") }
        return .object(object)
    }

    @Test("another Signet for the same RP ID takes the accounts whole: the same IDs, their passkeys sign in there and their device keys approve actions, counters and revocations kept; a second run makes nothing twice")
    func wholeAccounts() throws {
        let server = try TestServer()
        let ada = try SignedIn(server, email: "ada@signet.test")
        let laptop = SoftwareAuthenticator(), old = SoftwareAuthenticator()
        let added = try ada.addPasskey(laptop, name: "Laptop")
        #expect(added.status == 201, "\(added.json.serialized)")
        #expect(try ada.addPasskey(old).status == 201)
        let oldID = try #require(try ada.passkeys().last?["id"]?.string)
        #expect(try ada.call("DELETE", "/me/passkeys/\(oldID)").status == 204)
        let phoneKey = try SoftwareDeviceKey(deviceID: "ada-iphone")
        let phoneKeyID = try ada.enroll(phoneKey)
        let grace = try SignedIn(server, email: "grace@signet.test")
        #expect(try grace.call("POST", "/me/recovery-codes").status == 201)
        // Signed in a few times here: the counters the other Signet must go on from.
        for _ in 0..<3 { _ = try ada.phone.signIn() }
        let adaID = try #require(Self.subject(try ada.phone.signIn()))
        let graceID = try #require(Self.subject(try grace.phone.signIn()))
        let lines = try Self.export(server)
        #expect(lines.count == 2 && lines.allSatisfy { $0["rp_id"] == .string(TestServer.rpID) && $0["user_handle"]?.string != nil }, "\(lines.map(\.serialized))")
        #expect(lines.first { $0["user_id"] == .string(adaID) }?["passkeys"]?.array?.count == 3)
        // Recovery codes are counted, never carried: each is an HMAC under this deployment's key.
        #expect(lines.first { $0["user_id"] == .string(graceID) }?["unused_recovery_codes"] == .number("10"))
        #expect(lines.first { $0["user_id"] == .string(adaID) }?["unused_recovery_codes"] == nil)

        let other = try TestServer()
        let (status, outcomes) = try Self.importing(lines, into: other)
        #expect(status == 0, "\(outcomes)")
        #expect(Set(outcomes.compactMap { $0["user_id"]?.string }) == [adaID, graceID])
        #expect(outcomes.first { $0["user_id"] == .string(adaID) }?["passkeys"] == .number("3"))
        #expect(outcomes.first { $0["user_id"] == .string(graceID) }?["detail"] == .string("10 unused recovery code(s) did not move: the owner makes new ones on the account page"),
                "\(outcomes)")
        #expect(try other.store.recoveryCodes(userID: graceID).isEmpty)
        let audit = try other.store.auditEvents(limit: 10).first { $0.kind == "admin_user_created" && $0.userID == adaID }
        #expect(audit?.detail == "imported; ID kept; 3 passkey(s); 1 device key(s); nothing mailed", "\(String(describing: audit?.detail))")
        #expect(outcomes.first { $0["user_id"] == .string(adaID) }?["device_keys"] == .number("1"))
        let (keyHere, keyThere) = (try #require(try server.store.deviceKeys(userID: adaID).first), try #require(try other.store.deviceKeys(userID: adaID).first))
        #expect(try other.store.deviceKeys(userID: adaID).count == 1 && keyThere.id == phoneKeyID && keyThere.publicKey == keyHere.publicKey)
        #expect(keyThere.deviceID == keyHere.deviceID && keyThere.createdAt == keyHere.createdAt / 1000 * 1000 && keyThere.revokedAt == nil)
        let before = try #require(try server.store.credentials(userID: adaID).first { $0.name == nil && $0.revokedAt == nil })
        let moved = try other.store.credentials(userID: adaID)
        #expect(moved.count == 3 && moved.first { $0.id == before.id }?.signCount == before.signCount)
        #expect(moved.first { Base64URL.encode($0.id) == oldID }?.revokedAt != nil && moved.first { $0.name == "Laptop" } != nil)
        #expect(moved.allSatisfy { !$0.attested })

        // Each signs in there with the passkeys they had, as the same subject, and approves an
        // action with the device key their phone enrolled here.
        let there = try Phone(other, authenticator: ada.phone.authenticator).signIn()
        #expect(Self.subject(there) == adaID)
        let adaThere = SignedIn(other, phone: Phone(other, authenticator: ada.phone.authenticator), access: try #require(there["access_token"]?.string))
        let approved = try adaThere.approveAction(phoneKeyID, key: phoneKey)
        #expect(approved.status == 200 && approved.json["action_token"] != nil, "\(approved.json.serialized)")
        #expect(Self.subject(try Phone(other, authenticator: laptop).signIn()) == adaID)
        #expect(Self.subject(try Phone(other, authenticator: grace.phone.authenticator).signIn()) == graceID)
        // The passkey revoked before the export stays revoked.
        let (session, credential, _) = try Phone(other, authenticator: old).startSignIn()
        let refused = try Phone(other, authenticator: old).exchange(session: session, credential: credential)
        #expect(refused.status == 400 && refused.json["reason"] == .string(Reason.credentialRevoked.rawValue), "\(refused.json.serialized)")

        let again = try Self.importing(lines, into: other)
        #expect(again.status == 0 && again.outcomes.allSatisfy { $0["outcome"] == .string("exists") })
        #expect(try other.store.users(UserQuery()).total == 2)
    }

    @Test("a hardware-bound passkey stays so where the anchor its attestation chained to is trusted too (a client's minimum_acr phrh still met); elsewhere it comes unmarked, with a note")
    func attestedPasskeys() throws {
        let anchor = try TestAttestationRoot(name: "Signet Test Security Keys")
        let anchorFile = try anchor.pemFile(in: Scratch.directory)
        let server = try MinimumACRTests.server(anchor: anchorFile)
        let hardware = Phone(server, settings: HardwareBoundTests.deviceBound(true))
        let (session, credential) = try hardware.startSignUp(email: "hw@signet.test", tamper: anchor.packed)
        #expect(try hardware.exchange(session: session, credential: credential).status == 200)
        let line = try #require(try Self.export(server).first)
        let root = Base64URL.encode(Digest.sha256.hash(anchor.certificate.der))
        #expect(line["passkeys"]?.array?.first?["attestation_root"] == .string(root), "\(line.serialized)")

        // The same anchor there: hardware-bound still, and the vault's phrh is met.
        let same = try MinimumACRTests.server(anchor: anchorFile)
        let moved = try Self.importing([line], into: same, anchors: [anchorFile])
        #expect(moved.status == 0 && moved.outcomes.first?["detail"] == nil, "\(moved.outcomes)")
        let vault = try MinimumACRTests.signIn(Phone(same, authenticator: hardware.authenticator), client: "vault")
        #expect(vault.status == 200 && jwtClaims(vault.json["access_token"]?.string)["acr"] == .string("phrh"), "\(vault.json.serialized)")
        // Another anchor there: the passkey signs in, unmarked, and the vault refuses it.
        let otherFile = try TestAttestationRoot(name: "Other Security Keys").pemFile(in: Scratch.directory)
        let elsewhere = try MinimumACRTests.server(anchor: otherFile)
        let unmarked = try Self.importing([line], into: elsewhere, anchors: [otherFile])
        #expect(unmarked.outcomes.first?["detail"]?.string?.contains("1 passkey(s) not marked attested") == true, "\(unmarked.outcomes)")
        #expect(MinimumACRTests.unmet(try MinimumACRTests.signIn(Phone(elsewhere, authenticator: hardware.authenticator), client: "vault")))
        #expect(try MinimumACRTests.signIn(Phone(elsewhere, authenticator: hardware.authenticator), client: "desk").status == 200)
        // A root that is not a SHA-256: refused.
        let bad = Self.changed(Self.changedPasskey(line, "attestation_root", .string("AAAA"))) { $0["email"] = .string("bad-root@signet.test") }
        let refused = try Self.importing([bad], into: elsewhere, anchors: [otherFile])
        #expect(refused.status == 2 && refused.outcomes.first?["detail"]?.string?.contains("attestation_root must be base64url of a SHA-256") == true, "\(refused.outcomes)")
    }

    @Test("what cannot be kept is left out with a note: passkeys of another RP ID or without the user handle, an ID another account has; a user handle or passkey here already refuses the record whole")
    func leftOut() throws {
        let server = try TestServer()
        _ = try SignedIn(server, email: "ada@signet.test")
        let line = try #require(try Self.export(server).first)
        let id = try #require(line["user_id"]?.string)
        let other = try TestServer()
        func outcome(_ line: JSONValue) throws -> JSONValue {
            let (_, outcomes) = try Self.importing([line], into: other)
            return try #require(outcomes.first)
        }
        func address(_ n: Int) -> JSONValue { .string("moved\(n)@signet.test") }

        let foreign = try outcome(Self.changed(line) { $0["rp_id"] = .string("elsewhere.test"); $0["email"] = address(1) })
        #expect(foreign["outcome"] == .string("made") && foreign["passkeys"] == .number("0") && foreign["user_id"] == .string(id))
        #expect(foreign["detail"]?.string?.contains("1 passkey(s) left out: they are for RP ID elsewhere.test, not \(TestServer.rpID)") == true, "\(foreign.serialized)")
        // Now the ID is taken here: a new one, said so; without the handle the passkeys stay out.
        let renamed = try outcome(Self.changed(line) { $0["user_handle"] = nil; $0["email"] = address(2) })
        #expect(renamed["outcome"] == .string("made") && renamed["user_id"] != .string(id) && renamed["passkeys"] == .number("0"))
        #expect(renamed["detail"] == .string("its user_id is another account's here: given a new one; 1 passkey(s) left out: without its user_handle they would not sign in"),
                "\(renamed.serialized)")
        // The same handle as an account here: refused, nothing made.
        let handle = try outcome(Self.changed(line) { $0["user_id"] = .string(UUID().uuidString.lowercased()); $0["rp_id"] = nil; $0["email"] = address(3) })
        #expect(handle["outcome"] == .string("refused") && handle["detail"]?.string?.contains("user_handle") == true, "\(handle.serialized)")
        // The line whole under a new ID and handle: its passkey comes. A second copy of that
        // passkey is refused, and the account is not made without it.
        let whole = try outcome(Self.changed(line) { $0["user_id"] = nil; $0["user_handle"] = .string(Base64URL.encode(SecureRandom.bytes(32))); $0["email"] = address(4) })
        #expect(whole["outcome"] == .string("made") && whole["passkeys"] == .number("1"), "\(whole.serialized)")
        let taken = try outcome(Self.changed(line) { $0["user_id"] = nil; $0["user_handle"] = .string(Base64URL.encode(SecureRandom.bytes(32))); $0["email"] = address(5) })
        #expect(taken["outcome"] == .string("refused") && taken["detail"]?.string?.contains("already registered") == true, "\(taken.serialized)")
        #expect(try other.store.user(email: "moved5@signet.test") == nil && other.store.user(email: "moved3@signet.test") == nil)
        // Device keys come whatever the RP ID; one approved from a credential that did not come
        // stays out (revoking that one could no longer take it), and so does one it approved.
        let passkeyID = try #require(line["passkeys"]?.array?.first?["id"]?.string)
        let keys: [JSONValue] = [
            try Self.deviceKey("dk_plain000000000000000", device: "a"), try Self.deviceKey("dk_bypasskey0000000000000", device: "b", approvedBy: passkeyID),
            try Self.deviceKey("dk_orphan00000000000000", device: "c", approvedBy: "a-passkey-that-is-not-here"),
            try Self.deviceKey("dk_orphanchild000000000", device: "d", approvedBy: "dk_orphan00000000000000"),
        ]
        func fresh() -> JSONValue { .string(Base64URL.encode(SecureRandom.bytes(32))) }
        let devices = try outcome(Self.changed(line) {
            $0["user_id"] = nil; $0["user_handle"] = fresh(); $0["rp_id"] = .string("elsewhere.test"); $0["device_keys"] = .array(keys); $0["email"] = address(7)
        })
        #expect(devices["outcome"] == .string("made") && devices["device_keys"] == .number("1"), "\(devices.serialized)")
        #expect(devices["detail"]?.string?.contains("3 device key(s) left out: the passkey or device key that approved their device did not come") == true, "\(devices.serialized)")
        let devicesID = try #require(devices["user_id"]?.string)
        #expect(try other.store.deviceKeys(userID: devicesID).map(\.id) == ["dk_plain000000000000000"])
        // Without the passkey that approved it, that key stays out too; a key ID here already refuses the record.
        let approvedToo = try outcome(Self.changed(line) {
            $0["user_id"] = nil; $0["user_handle"] = fresh(); $0["email"] = address(8)
            $0["passkeys"] = .array([]); $0["device_keys"] = .array([keys[1]])
        })
        #expect(approvedToo["device_keys"] == .number("0") && approvedToo["detail"]?.string?.contains("1 device key(s) left out") == true, "\(approvedToo.serialized)")
        let reused = try outcome(Self.changed(line) {
            $0["user_id"] = nil; $0["user_handle"] = fresh(); $0["rp_id"] = nil; $0["device_keys"] = .array([keys[0]]); $0["email"] = address(9)
        })
        #expect(reused["outcome"] == .string("refused") && reused["detail"]?.string?.contains("a device key's ID") == true, "\(reused.serialized)")
        // Other services' IDs are not Signet's: a new one, as before, with no note.
        let auth0 = try outcome(.object(["user_id": .string("auth0|5f7c8ec7c33c6c004bbafe82"), "email": address(6)]))
        #expect(auth0["outcome"] == .string("made") && auth0["detail"] == nil && auth0["user_id"]?.string?.count == 36)
    }

    /// A role named `name` in `server`'s database.
    static func role(_ name: String, in server: TestServer) throws -> String {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let id = "rol_" + Base64URL.encode(SecureRandom.bytes(12))
        try server.store.insertRole(RoleRow(id: id, name: name, description: nil, createdAt: now, updatedAt: now), writes: [])
        return id
    }

    @Test("roles move by name: each the account has is given where a role of that name exists, until the same time; one of no such name here, or ended, is left out with a note")
    func roles() throws {
        let server = try TestServer()
        let ada = try SignedIn(server, email: "ada@signet.test")
        let adaID = try #require(Self.subject(try ada.phone.signIn()))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let until = (now / 1000 + 86_400) * 1000
        let (support, auditor, ops) = (try Self.role("support", in: server), try Self.role("auditor", in: server), try Self.role("ops", in: server))
        #expect(try server.store.changeUserRoles(userID: adaID, roleIDs: [support], give: true, expiresAt: nil, at: now, writes: []))
        #expect(try server.store.changeUserRoles(userID: adaID, roleIDs: [auditor], give: true, expiresAt: until, at: now, writes: []))
        _ = ops
        let line = try #require(try Self.export(server).first)
        #expect(line["roles"]?.array?.map { "\($0["name"]?.string ?? "?") \($0["expires_at"]?.string ?? "-")" } == ["auditor \(Ceremonies.iso(until))", "support -"],
                "\(line.serialized)")

        // There: support and ops exist, auditor does not.
        let other = try TestServer()
        let supportThere = try Self.role("support", in: other)
        _ = try Self.role("ops", in: other)
        let moved = try Self.importing([line], into: other)
        let outcome = try #require(moved.outcomes.first)
        #expect(moved.status == 0 && outcome["roles"] == .array([.string("support")]), "\(moved.outcomes)")
        #expect(outcome["detail"] == .string("role(s) left out, none of that name here: auditor"), "\(outcome.serialized)")
        let given = try other.store.userRoles(userID: adaID, at: Int64(Date().timeIntervalSince1970 * 1000))
        #expect(given.map(\.id) == [supportThere] && given.first?.expiresAt == nil)
        let audit = try other.store.auditEvents(limit: 10).first { $0.kind == "admin_user_created" && $0.userID == adaID }
        #expect(audit?.detail?.contains("role(s) support; ") == true, "\(String(describing: audit?.detail))")
        // With auditor there too, it comes until the same time; an ended membership does not.
        let third = try TestServer()
        _ = try Self.role("support", in: third)
        _ = try Self.role("auditor", in: third)
        let ended = Self.changed(line) { object in
            object["roles"] = .array((object["roles"]?.array ?? []) + [.object(["name": .string("ops"), "expires_at": .string("2020-01-01T00:00:00.000Z")])])
        }
        let whole = try Self.importing([ended], into: third)
        #expect(whole.outcomes.first?["roles"] == .array([.string("auditor"), .string("support")]), "\(whole.outcomes)")
        #expect(whole.outcomes.first?["detail"] == .string("1 role(s) left out: the membership had ended"), "\(whole.outcomes)")
        let there = try third.store.userRoles(userID: adaID, at: Int64(Date().timeIntervalSince1970 * 1000))
        #expect(there.map { "\($0.name) \($0.expiresAt.map(String.init) ?? "-")" } == ["auditor \(until)", "support -"])
    }

    @Test("every value a carried passkey or identity holds is checked as registration checks it: each broken value refuses its record, and nothing of it is written")
    func refusals() throws {
        let server = try TestServer()
        _ = try SignedIn(server, email: "ada@signet.test")
        let line = Self.changed(try #require(try Self.export(server).first)) { $0["user_id"] = nil }
        var ec = try #require(line["passkeys"]?.array?.first?["public_key"]?.string.flatMap { Base64URL.decode($0) })
        ec[ec.count - 1] ^= 1  // y no longer on the curve
        let rsa = CBOREncoder.encode(.map(CBORMap([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes([0x01])), (.int(-2), .bytes([0x01, 0x00, 0x01]))])))
        let future = String(Int64(Date().timeIntervalSince1970) + 86_400)
        let good = try Self.deviceKey("dk_good", device: "phone")
        let p384 = try PrivateKey.generate(.ec(.p384)).publicKey.spki
        let p384Key = Self.changedMember(good, "public_key", .string(Base64URL.encode(p384)))
        let cases: [(String, JSONValue, String)] = [
            ("handle not base64url", Self.changed(line) { $0["user_handle"] = .string("not base64url!") }, "user_handle must be base64url"),
            ("handle of 65 bytes", Self.changed(line) { $0["user_handle"] = .string(Base64URL.encode([UInt8](repeating: 7, count: 65))) }, "user_handle must be base64url"),
            ("user_id a number", Self.changed(line) { $0["user_id"] = .number("7") }, "user_id must be a string"),
            ("passkeys not a list", Self.changed(line) { $0["passkeys"] = .string("none") }, "passkeys must be a list"),
            ("a passkey missing its key", Self.changedPasskey(line, "public_key", nil), "passkeys must be a list"),
            ("101 passkeys", Self.changed(line) { $0["passkeys"] = .array(Array(repeating: line["passkeys"]!.array![0], count: 101)) }, "at most 100 passkeys"),
            ("empty id", Self.changedPasskey(line, "id", .string("")), "id must be base64url of 1 to 1023 bytes"),
            ("id of 1,024 bytes", Self.changedPasskey(line, "id", .string(Base64URL.encode([UInt8](repeating: 1, count: 1024)))), "id must be base64url"),
            ("key off the curve", Self.changedPasskey(line, "public_key", .string(Base64URL.encode(ec))), "public_key is not a COSE key"),
            ("key not COSE", Self.changedPasskey(line, "public_key", .string(Base64URL.encode([0x01, 0x02]))), "public_key is not a COSE key"),
            ("RSA key too small", Self.changedPasskey(line, "public_key", .string(Base64URL.encode(rsa))), "public_key is not a COSE key"),
            ("algorithm not the key's", Self.changedPasskey(line, "algorithm", .number("-257")), "algorithm -257 is not its public key's"),
            ("negative counter", Self.changedPasskey(line, "sign_count", .number("-1")), "sign_count must be 0 to"),
            ("counter past 32 bits", Self.changedPasskey(line, "sign_count", .number("4294967296")), "sign_count must be 0 to"),
            ("aaguid not a UUID", Self.changedPasskey(line, "aaguid", .string("yubikey")), "aaguid is not a UUID"),
            ("format with capitals", Self.changedPasskey(line, "attestation_format", .string("Packed")), "attestation_format must be"),
            ("format of 33 bytes", Self.changedPasskey(line, "attestation_format", .string(String(repeating: "a", count: 33))), "attestation_format must be"),
            ("backed up, not eligible", Self.changed(Self.changedPasskey(line, "backup_eligible", .bool(false))) { object in
                var first = object["passkeys"]!.array![0].object!
                first["backup_state"] = .bool(true)
                object["passkeys"] = .array([.object(first)])
            }, "backup_state without backup_eligible"),
            ("made in the future", Self.changedPasskey(line, "created_at", .number(future)), "created_at must be a time in seconds"),
            ("used before 1970", Self.changedPasskey(line, "last_used_at", .number("-5")), "last_used_at must be a time"),
            ("a name with a control character", Self.changedPasskey(line, "name", .string("Lap\u{7}top")), "name"),
            ("device keys not a list", Self.changed(line) { $0["device_keys"] = .object([:]) }, "device_keys must be a list"),
            ("a device key on P-384", Self.changed(line) { $0["device_keys"] = .array([Self.changedMember(p384Key, "id", .string("dk_p384"))]) }, "not P-256"),
            ("a device key not a key", Self.changed(line) { $0["device_keys"] = .array([Self.changedMember(good, "public_key", .string("AAAA"))]) }, "public_key"),
            ("a device key's empty ID", Self.changed(line) { $0["device_keys"] = .array([Self.changedMember(good, "id", .string("dk_"))]) }, "id must be"),
            ("a device key's platform", Self.changed(line) { $0["device_keys"] = .array([Self.changedMember(good, "platform", .string("windows"))]) }, "platform must be ios or android"),
            ("a device key's empty device", Self.changed(line) { $0["device_keys"] = .array([Self.changedMember(good, "device_id", .string(""))]) }, "device_id must be"),
            ("a device key from the future", Self.changed(line) { $0["device_keys"] = .array([Self.changedMember(good, "created_at", .number(future))]) }, "created_at must be"),
            ("two live keys for one device", Self.changed(line) { $0["device_keys"] = .array([good, Self.changedMember(good, "id", .string("dk_others"))]) }, "two live device keys"),
            ("unused recovery codes not a number", Self.changed(line) { $0["unused_recovery_codes"] = .string("ten") }, "unused_recovery_codes must be a whole number"),
            ("unused recovery codes below 0", Self.changed(line) { $0["unused_recovery_codes"] = .number("-1") }, "unused_recovery_codes must be a whole number"),
            ("unused recovery codes past 1000", Self.changed(line) { $0["unused_recovery_codes"] = .number("1001") }, "unused_recovery_codes must be a whole number"),
            ("roles not a list", Self.changed(line) { $0["roles"] = .string("support") }, "roles must be a list"),
            ("a role without a name", Self.changed(line) { $0["roles"] = .array([.object(["expires_at": .null])]) }, "roles must be a list"),
            ("a role's empty name", Self.changed(line) { $0["roles"] = .array([.object(["name": .string(" ")])]) }, "a role's name is empty"),
            ("a role's name with a control character", Self.changed(line) { $0["roles"] = .array([.object(["name": .string("sup\u{7}port")])]) }, "a role's name holds a control"),
            ("a role's name of 257 characters", Self.changed(line) { $0["roles"] = .array([.object(["name": .string(String(repeating: "r", count: 257))])]) },
             "a role's name is longer than 256"),
            ("a role's end not a time", Self.changed(line) { $0["roles"] = .array([.object(["name": .string("support"), "expires_at": .string("tomorrow")])]) },
             "expires_at is not an ISO 8601 time"),
            ("a role given twice", Self.changed(line) { $0["roles"] = .array([.object(["name": .string("support")]), .object(["name": .string("support")])]) },
             "role support is given twice"),
            ("101 roles", Self.changed(line) { $0["roles"] = .array((0...100).map { .object(["name": .string("r\($0)")]) }) }, "at most 100 roles"),
            ("more live keys than allowed", Self.changed(line) { $0["device_keys"] = .array(try! (0..<11).map { try Self.deviceKey("dk_n\($0)", device: "d\($0)") }) },
             "more than actions.max_device_keys (10)"),
        ]
        let other = try TestServer()
        for (n, (what, record, expected)) in cases.enumerated() {
            let email = "refused\(n)@signet.test"
            let (status, outcomes) = try Self.importing([Self.changed(record) { $0["email"] = .string(email) }], into: other)
            #expect(status == 2 && outcomes.first?["outcome"] == .string("refused"), "\(what): \(outcomes)")
            #expect(outcomes.first?["detail"]?.string?.contains(expected) == true, "\(what): \(outcomes)")
            #expect(try other.store.user(email: email) == nil, "\(what)")
        }
        #expect(try other.store.users(UserQuery()).total == 0)
        // The line as exported, under another address: made, its passkey with it, and a device
        // key (revoked) and one its passkey approved, with it.
        let passkeyID = try #require(line["passkeys"]?.array?.first?["id"]?.string)
        let made = try Self.importing([Self.changed(line) {
            $0["email"] = .string("whole@signet.test")
            $0["device_keys"] = .array([Self.changedMember(good, "revoked_at", .number("1790000100")), try! Self.deviceKey("dk_approved", device: "phone", approvedBy: passkeyID)])
        }], into: other)
        #expect(made.status == 0 && made.outcomes.first?["passkeys"] == .number("1") && made.outcomes.first?["device_keys"] == .number("2"), "\(made.outcomes)")
        let madeID = try #require(made.outcomes.first?["user_id"]?.string)
        #expect(try other.store.deviceKeys(userID: madeID).map { "\($0.id) \($0.revokedAt != nil) \($0.approvedBy ?? "-")" }.sorted() == ["dk_approved false \(passkeyID)", "dk_good true -"])
    }
}
