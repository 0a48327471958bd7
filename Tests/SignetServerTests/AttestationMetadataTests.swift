import Foundation
import SignetAuth
import SignetCrypto
import SignetCurl
import SignetHTTP
import SignetServer
import SignetSoftware
import SignetTestSupport
import SignetWebAuthn
import Testing

/// `attestation_metadata`: the FIDO Metadata Service's BLOB decides, per authenticator model,
/// which attestation roots are trusted (FIDO MDS 3.0 §3.1.6) and which models a reported
/// compromise refuses (§3.1.4), on every registration path and at sign-in.
@Suite struct AttestationMetadataTests {
    static let key = "cb69481e-8ff7-4039-93ec-0a2729a154a8"
    static let revoked = "2fc0579f-8113-47ea-b116-bb5a8db9202a"
    static let unlisted = "ee882879-721c-4913-9775-3dfcce97072a"

    let service: TestMetadataService
    let vendor: TestAttestationRoot
    let other: TestAttestationRoot
    let server: TestServer

    init() throws {
        service = try TestMetadataService()
        vendor = try TestAttestationRoot(name: "Signet Test Key Vendor")
        other = try TestAttestationRoot(name: "Another Vendor")
        let files = try Self.files(service, models: [
            .init(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate]),
            .init(aaguid: Self.revoked, description: "Recalled Key", roots: [vendor.certificate], statuses: [("FIDO_CERTIFIED", "2023-01-01"), ("REVOKED", "2024-06-01")]),
            .init(aaguid: AuthenticatorPolicyTests.iCloud, description: "Other Vendor's Key", roots: [other.certificate]),
        ])
        server = try TestServer.withOperators { c in
            (c.attestationMetadataFile, c.attestationMetadataRootFile) = files
        }
    }

    /// The BLOB listing `models` and its root, as files.
    static func files(_ service: TestMetadataService, models: [TestMetadataService.Model]) throws -> (String, String) {
        let blob = Scratch.directory.appendingPathComponent("mds-\(UUID().uuidString).jwt")
        try Data(try service.blob(TestMetadataService.payload(models: models))).write(to: blob)
        return (blob.path, try service.rootFile(in: Scratch.directory))
    }

    /// An authenticator of model `aaguid` that cannot be backed up (a security key).
    static func securityKey(_ aaguid: String) -> SoftwareAuthenticator.Settings {
        var settings = AuthenticatorPolicyTests.model(aaguid)
        settings.backupEligible = false
        settings.backupState = false
        return settings
    }

    @Test("a model's attestation is trusted only through the roots the BLOB lists for that model: another model's root, an unlisted model, none and self attestation are refused with attestation_untrusted, creating nothing")
    func roots() throws {
        var packedSelf = Self.securityKey(Self.key)
        packedSelf.attestation = "packed"
        let refused: [(String, SoftwareAuthenticator.Settings, Tamper)] = [
            ("the root of another model", Self.securityKey(Self.key), other.packed),
            ("a model the BLOB does not list, chained to a listed root", Self.securityKey(Self.unlisted), vendor.packed),
            ("none", Self.securityKey(Self.key), .none),
            ("packed self", packedSelf, .none),
        ]
        for (index, (name, settings, tamper)) in refused.enumerated() {
            let phone = Phone(server, settings: settings)
            let (session, credential) = try phone.startSignUp(email: "refused\(index)@signet.test", tamper: tamper)
            let answer = try phone.exchange(session: session, credential: credential)
            #expect(answer.status == 400 && answer.json["reason"] == .string("attestation_untrusted"), "\(name): \(answer.json.serialized)")
        }
        #expect(server.counts["users"] == 0 && server.counts["credentials"] == 0)
        let phone = Phone(server, settings: Self.securityKey(Self.key))
        let (session, credential) = try phone.startSignUp(email: "listed@signet.test", tamper: vendor.packed)
        let answer = try phone.exchange(session: session, credential: credential)
        #expect(answer.status == 200, "\(answer.json.serialized)")
        #expect(server.counts["credentials"] == 1)
    }

    @Test("a passkey attested through the BLOB that cannot be backed up is hardware-bound (acr phrh), named by the BLOB's description, and its row names the root")
    func hardwareBound() throws {
        let phone = Phone(server, settings: Self.securityKey(Self.key))
        let (session, credential) = try phone.startSignUp(email: "bound@signet.test", tamper: vendor.packed)
        let tokens = try phone.exchange(session: session, credential: credential).json
        #expect(jwtClaims(tokens["access_token"]?.string)["acr"] == .string("phrh"), "\(tokens.serialized)")
        let listed = try server.get("/me/passkeys", headers: [("Authorization", "Bearer " + (try #require(tokens["access_token"]?.string)))])
        let passkey = try #require(try StrictJSON().parse(listed.body)["passkeys"]?.array?.first)
        #expect(passkey["hardware_bound"] == .bool(true) && passkey["authenticator"] == .string("Signet Test Key") && passkey["allowed"] == .bool(true), "\(passkey.serialized)")
        let user = try #require(try server.store.user(email: "bound@signet.test"))
        #expect(try server.store.credentials(userID: user.id).first?.attestationRoot == Digest.sha256.hash(vendor.certificate.der))
    }

    @Test("a model the BLOB reports REVOKED is refused with authenticator_not_allowed, naming the status in the audit, on sign-up and when added to an account")
    func revokedModel() throws {
        let phone = Phone(server, settings: Self.securityKey(Self.revoked))
        let (session, credential) = try phone.startSignUp(email: "recalled@signet.test", tamper: vendor.packed)
        #expect(AuthenticatorPolicyTests.isRefusal(try phone.exchange(session: session, credential: credential)))
        #expect(server.counts["users"] == 0 && server.counts["credentials"] == 0)
        #expect(try server.store.auditEvents(limit: 20).contains { $0.kind == "sign_up" && $0.reason == "authenticator_not_allowed" && $0.detail?.contains("REVOKED") == true && $0.detail?.contains("Recalled Key") == true })
        let owner = Phone(server, settings: Self.securityKey(Self.key))
        let (ownSession, own) = try owner.startSignUp(email: "owner@signet.test", tamper: vendor.packed)
        let access = try #require(try owner.exchange(session: ownSession, credential: own).json["access_token"]?.string)
        let account = SignedIn(server, phone: owner, access: access)
        let added = try account.addPasskey(SoftwareAuthenticator(settings: Self.securityKey(Self.revoked)), tamper: vendor.packed)
        #expect(AuthenticatorPolicyTests.isRefusal(added), "\(added.json.serialized)")
        #expect(try account.passkeys().count == 1)
    }

    @Test("a compromise reported after a passkey registered stops its sign-ins (USER_KEY_REMOTE_COMPROMISE), once its signature checks; ATTESTATION_KEY_COMPROMISE leaves it signing in")
    func compromisedLater() throws {
        let phone = Phone(server, settings: Self.securityKey(Self.key))
        let (session, credential) = try phone.startSignUp(email: "later@signet.test", tamper: vendor.packed)
        #expect(try phone.exchange(session: session, credential: credential).status == 200)
        for (status, signsIn) in [("ATTESTATION_KEY_COMPROMISE", true), ("USER_KEY_REMOTE_COMPROMISE", false)] {
            let files = try Self.files(service, models: [.init(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate],
                                                               statuses: [("FIDO_CERTIFIED", "2023-01-01"), (status, "2025-01-01")])])
            let after = try TestServer.withOperators(sharing: server.directory) { c in (c.attestationMetadataFile, c.attestationMetadataRootFile) = files }
            var signingIn = phone
            signingIn.server = after
            let (start, signed, _) = try signingIn.startSignIn(username: "later@signet.test")
            let answer = try signingIn.exchange(session: start, credential: signed)
            if signsIn {
                #expect(answer.status == 200, "\(status): \(answer.json.serialized)")
            } else {
                #expect(AuthenticatorPolicyTests.isRefusal(answer), "\(status): \(answer.json.serialized)")
                var forge = Tamper()
                forge.signature = { $0[$0.count - 1] ^= 1 }
                let (forgedSession, forged, _) = try signingIn.startSignIn(username: "later@signet.test", tamper: forge)
                #expect(try signingIn.exchange(session: forgedSession, credential: forged).json["reason"] == .string("signature_invalid"), "the status is told only to the key's holder")
                let user = try #require(try after.store.user(email: "later@signet.test"))
                let methods = try after.api("GET", "/api/v2/users/\(user.id)/authentication-methods", token: after.managementToken()).json.array ?? []
                #expect(methods.first { $0["type"] == .string("passkey") }?["allowed"] == .bool(false), "\(methods)")
            }
        }
    }

    /// Moves a new BLOB listing `models` into the file the server reads, as a fetch would.
    static func replace(_ file: String, _ service: TestMetadataService, number: Int, models: [TestMetadataService.Model]) throws {
        let fetched = file + ".new"
        try Data(try service.blob(TestMetadataService.payload(number: number, models: models))).write(to: URL(fileURLWithPath: fetched))
        #expect(rename(fetched, file) == 0, "rename(2) into place")
    }

    @Test("a BLOB fetched into the file is read again without a restart: a new compromise stops sign-ins and a changed root the hardware mark; one that does not verify is logged, counted, and the one in force stays")
    func reload() throws {
        let files = try Self.files(service, models: [.init(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate])])
        let live = try TestServer.withOperators { c in (c.attestationMetadataFile, c.attestationMetadataRootFile) = files }
        let phone = Phone(live, settings: Self.securityKey(Self.key))
        let (session, credential) = try phone.startSignUp(email: "reloaded@signet.test", tamper: vendor.packed)
        #expect(jwtClaims(try phone.exchange(session: session, credential: credential).json["access_token"]?.string)["acr"] == .string("phrh"))
        #expect(live.app.reloadAttestationMetadataIfChanged(now: Date()) == nil, "nothing changed")
        // The maker's root moves to another model: the passkey signs in, no longer hardware-bound.
        try Self.replace(files.0, service, number: 43, models: [.init(aaguid: Self.key, description: "Signet Test Key", roots: []),
                                                                .init(aaguid: Self.unlisted, description: "Other", roots: [vendor.certificate])])
        #expect(live.app.reloadAttestationMetadataIfChanged(now: Date()) == true)
        #expect(jwtClaims(try phone.signIn(username: "reloaded@signet.test")["access_token"]?.string)["acr"] == .string("phr"))
        // A compromise is reported: its sign-ins stop.
        try Self.replace(files.0, service, number: 44, models: [.init(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate],
                                                                      statuses: [("USER_VERIFICATION_BYPASS", "2025-03-01")])])
        #expect(live.app.reloadAttestationMetadataIfChanged(now: Date()) == true)
        let (start, signed, _) = try phone.startSignIn(username: "reloaded@signet.test")
        #expect(AuthenticatorPolicyTests.isRefusal(try phone.exchange(session: start, credential: signed)))
        // A file that does not verify (signed under another root) leaves BLOB no. 44 in force.
        try Self.replace(files.0, try TestMetadataService(), number: 45, models: [.init(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate])])
        #expect(live.app.reloadAttestationMetadataIfChanged(now: Date()) == false)
        #expect(live.app.reloadAttestationMetadataIfChanged(now: Date()) == nil, "a refused file is not read again until it changes")
        // An older BLOB, properly signed (a stale mirror, a rollback), is not newer: refused too.
        try Self.replace(files.0, service, number: 44, models: [.init(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate])])
        #expect(live.app.reloadAttestationMetadataIfChanged(now: Date()) == false)
        let (again, resigned, _) = try phone.startSignIn(username: "reloaded@signet.test")
        #expect(AuthenticatorPolicyTests.isRefusal(try phone.exchange(session: again, credential: resigned)))
        live.app.server.log.flush()
        let log = try String(contentsOf: live.logFile, encoding: .utf8)
        #expect(log.contains("attestation metadata loaded") && log.contains("\"number\":44") && log.contains("attestation metadata refused") && log.contains("(chain)")
                && log.contains("BLOB no. 44 is not newer than no. 44"), "\(log.suffix(800))")
        let metrics = String(decoding: try live.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains("signet_attestation_metadata_number 44\n") && metrics.contains("signet_attestation_metadata_reloads_total{outcome=\"success\"} 2\n")
                && metrics.contains("signet_attestation_metadata_reloads_total{outcome=\"refused\"} 2\n"), "\(metrics)")
        #expect(metrics.contains("signet_attestation_metadata_next_update_timestamp_seconds "))
        #expect(!String(decoding: try server.get("/metrics").body, as: UTF8.self).contains("signet_attestation_metadata_reloads_total{outcome=\"refused\"} 1"))
        #expect(!String(decoding: try TestServer().get("/metrics").body, as: UTF8.self).contains("signet_attestation_metadata"), "no series without attestation_metadata")
    }

    @Test("a BLOB older than one this deployment has seen is refused (MDS 3.0 §3.1.7): at another instance's start and reload, and at a restart; the database keeps the number per root, so another root's BLOBs count on their own")
    func olderThanSeen() throws {
        let models = [TestMetadataService.Model(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate])]
        let files = try Self.files(service, models: models)
        try Self.replace(files.0, service, number: 50, models: models)
        let first = try TestServer.withOperators { c in (c.attestationMetadataFile, c.attestationMetadataRootFile) = files }
        // A second instance whose own copy of the file is one BLOB behind does not start.
        let behind = try Self.files(service, models: models)
        try Self.replace(behind.0, service, number: 49, models: models)
        func startSecond() throws -> TestServer {
            try TestServer.withOperators(sharing: first.directory) { c in (c.attestationMetadataFile, c.attestationMetadataRootFile) = behind }
        }
        do {
            _ = try startSecond()
            Issue.record("started with BLOB no. 49 after no. 50 was seen")
        } catch let error as ConfigurationError {
            #expect(error.message.contains("\(behind.0) is refused: BLOB no. 49 is older than no. 50, which this deployment has seen already")
                    && error.message.contains("set attestation_metadata.url"), "\(error.message)")
        }
        // Once its file catches up, it starts.
        try Self.replace(behind.0, service, number: 50, models: models)
        let second = try startSecond()
        // The first moves on to no. 52; the second's file then gets no. 51, newer than its own but
        // older than one seen: refused, logged, and no. 50 stays in force there.
        try Self.replace(files.0, service, number: 52, models: models)
        #expect(first.app.reloadAttestationMetadataIfChanged(now: Date()) == true)
        try Self.replace(behind.0, service, number: 51, models: models)
        #expect(second.app.reloadAttestationMetadataIfChanged(now: Date()) == false)
        #expect(second.app.service.ceremonies.metadata?.number == 50)
        second.app.server.log.flush()
        let log = try String(contentsOf: second.logFile, encoding: .utf8)
        #expect(log.contains("BLOB no. 51 is older than no. 52, which this deployment has seen already"), "\(log.suffix(800))")
        // A newer one is taken there as anywhere.
        try Self.replace(behind.0, service, number: 53, models: models)
        #expect(second.app.reloadAttestationMetadataIfChanged(now: Date()) == true && second.app.service.ceremonies.metadata?.number == 53)
        // A restart does not forget: the first's file rolled back to no. 52 no longer starts.
        #expect(throws: ConfigurationError.self) {
            _ = try TestServer.withOperators(sharing: first.directory) { c in (c.attestationMetadataFile, c.attestationMetadataRootFile) = files }
        }
        // Another root numbers its BLOBs on its own: its no. 1 starts.
        let elsewhere = try TestMetadataService()
        let foreign = try Self.files(elsewhere, models: models)
        try Self.replace(foreign.0, elsewhere, number: 1, models: models)
        let third = try TestServer.withOperators(sharing: first.directory) { c in (c.attestationMetadataFile, c.attestationMetadataRootFile) = foreign }
        #expect(third.app.service.ceremonies.metadata?.number == 1)
    }

    @Test("a BLOB that locks out passkeys in use says so in the log, per model newly refused, with how to find their accounts: GET /api/v2/users?q=passkey_model:AAGUID")
    func lockedOut() throws {
        let other = AuthenticatorPolicyTests.iCloud
        let fine: [TestMetadataService.Model] = [.init(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate]),
                                                 .init(aaguid: other, description: "Other Vendor's Key", roots: [self.other.certificate])]
        let files = try Self.files(service, models: fine)
        let live = try TestServer.withOperators { c in (c.attestationMetadataFile, c.attestationMetadataRootFile) = files }
        for (email, model, root) in [("a", Self.key, vendor), ("b", Self.key, vendor), ("c", Self.key, vendor), ("d", other, self.other)] {
            let phone = Phone(live, settings: Self.securityKey(model))
            let (session, credential) = try phone.startSignUp(email: "\(email)@signet.test", tamper: root.packed)
            #expect(try phone.exchange(session: session, credential: credential).status == 200, "\(email)")
        }
        // c's passkey is revoked: it locks nobody out.
        _ = try rawSQLite(live.directory.appendingPathComponent("signet.db").path,
                          "UPDATE credentials SET revoked_at = 1 WHERE user_id = (SELECT id FROM users WHERE email = 'c@signet.test')")
        try Self.replace(files.0, service, number: 43, models: [
            .init(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate], statuses: [("USER_KEY_REMOTE_COMPROMISE", "2025-03-01")]), fine[1]])
        #expect(live.app.reloadAttestationMetadataIfChanged(now: Date()) == true)
        func lines() throws -> [String] {
            live.app.server.log.flush()
            return try String(contentsOf: live.logFile, encoding: .utf8).split(separator: "\n").map(String.init).filter { $0.contains("refuses passkeys in use") }
        }
        let first = try lines()
        #expect(first.count == 1 && first[0].contains("\"aaguid\":\"\(Self.key)\"") && first[0].contains("\"passkeys\":2,\"accounts\":2")
                && first[0].contains("USER_KEY_REMOTE_COMPROMISE") && first[0].contains("Signet Test Key") && first[0].contains("q=passkey_model:\(Self.key)"), "\(first)")
        // The accounts, by the Management API: a and b, not c (revoked) nor d (another model).
        let token = try live.managementToken()
        let found = try live.api("GET", "/api/v2/users?include_totals=true&q=passkey_model:%22\(Self.key.uppercased())%22", token: token)
        let emails = Set(found.json["users"]?.array?.compactMap { $0["email"]?.string } ?? [])
        #expect(found.status == 200 && emails == ["a@signet.test", "b@signet.test"] && found.json["total"] == .int(2), "\(found.json.serialized)")
        #expect(try live.api("GET", "/api/v2/users?q=passkey_model:cb69481e", token: token).json["reason"] == .string("malformed"))
        #expect(try live.api("GET", "/api/v2/users?q=name:ada", token: token).json["error_description"]?.string?.contains("passkey_model:AAGUID") == true, "a refusal names every form")
        #expect(try Ceremonies.passkeyModelQuery(" passkey_model:\(Self.key.uppercased())") == Self.key && Ceremonies.passkeyModelQuery("email:a*") == nil)
        #expect(throws: AuthError.self) { try Ceremonies.passkeyModelQuery("passkey_model:\"\(Self.key)") }
        // The next BLOB also refuses the other model: only that one is newly said.
        try Self.replace(files.0, service, number: 44, models: [
            .init(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate], statuses: [("USER_KEY_REMOTE_COMPROMISE", "2025-03-01")]),
            .init(aaguid: other, description: "Other Vendor's Key", roots: [self.other.certificate], statuses: [("REVOKED", "2025-04-01")])])
        #expect(live.app.reloadAttestationMetadataIfChanged(now: Date()) == true)
        let second = try lines()
        #expect(second.count == 2 && second[1].contains("\"aaguid\":\"\(other)\"") && second[1].contains("\"passkeys\":1,\"accounts\":1"), "\(second)")
        // At a start, every model the BLOB in force refuses is said.
        live.app.reportRefusedPasskeys(try #require(live.app.service.ceremonies.metadata), previous: nil, now: Date())
        #expect(try lines().count == 4)
    }

    @Test("the owners of passkeys in use that a new BLOB refuses are told by mail, in their language, naming the passkey and the model; once, whichever instance or start says it again; a blocked account once unblocked; without mail nobody is marked told")
    func ownersTold() throws {
        let smtp = try SMTPServer()
        let other = AuthenticatorPolicyTests.iCloud
        let fine: [TestMetadataService.Model] = [.init(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate]),
                                                 .init(aaguid: other, description: "Other Vendor's Key", roots: [self.other.certificate])]
        let files = try Self.files(service, models: fine)
        let live = try TestServer.withOperators(smtp: smtp) { c in (c.attestationMetadataFile, c.attestationMetadataRootFile) = files }
        for (email, model, root) in [("ada", Self.key, vendor), ("bea", Self.key, vendor), ("cy", Self.key, vendor), ("dan", other, self.other), ("flo", Self.key, vendor)] {
            let phone = Phone(live, settings: Self.securityKey(model))
            let (session, credential) = try phone.startSignUp(email: "\(email)@signet.test", tamper: root.packed)
            #expect(try phone.exchange(session: session, credential: credential).status == 200, "\(email)")
        }
        // ada named her key; bea reads French; cy's passkey is revoked; flo is blocked.
        let database = live.directory.appendingPathComponent("signet.db").path
        let flo = try #require(try live.store.user(email: "flo@signet.test"))
        #expect(try live.api("PATCH", "/api/v2/users/\(flo.id)", token: live.managementToken(), .object(["blocked": .bool(true)])).status == 200)
        _ = try rawSQLite(database, "UPDATE credentials SET name = 'Desk key' WHERE user_id = (SELECT id FROM users WHERE email = 'ada@signet.test')")
        _ = try rawSQLite(database, "UPDATE users SET locale = 'fr' WHERE email = 'bea@signet.test'")
        _ = try rawSQLite(database, "UPDATE credentials SET revoked_at = 1 WHERE user_id = (SELECT id FROM users WHERE email = 'cy@signet.test')")
        let refusing: [TestMetadataService.Model] = [
            .init(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate], statuses: [("USER_VERIFICATION_BYPASS", "2025-03-01")]), fine[1]]
        try Self.replace(files.0, service, number: 43, models: refusing)
        #expect(live.app.reloadAttestationMetadataIfChanged(now: Date()) == true)
        func told(_ address: String) -> [SMTPServer.Message] { smtp.messages(to: address).filter { $0.kind == "passkey_model_refused" } }
        #expect(eventually { told("ada@signet.test").count == 1 && told("bea@signet.test").count == 1 })
        let ada = try #require(told("ada@signet.test").first)
        #expect(ada.subject == "A passkey stopped working on Signet Test" && ada.body.contains("Your passkey (Desk key) no longer signs in to Signet Test")
                && ada.body.contains("its model, Signet Test Key, was reported compromised") && ada.body.contains("remove this one"), "\(ada.body)")
        let bea = try #require(told("bea@signet.test").first)
        #expect(bea.body.contains("Votre clé d’accès ne permet plus") && bea.body.contains("son modèle, Signet Test Key"), "\(bea.body)")
        live.app.server.log.flush()
        #expect(try String(contentsOf: live.logFile, encoding: .utf8).contains("\"accounts\":3,\"told\":2"))
        // Said again, at this instance's next start or at another's: nobody is told twice.
        let second = try TestServer.withOperators(smtp: smtp, sharing: live.directory) { c in (c.attestationMetadataFile, c.attestationMetadataRootFile) = files }
        for instance in [live, second] {
            instance.app.reportRefusedPasskeys(try #require(instance.app.service.ceremonies.metadata), previous: nil, now: Date())
            instance.app.server.log.flush()
            #expect(try String(contentsOf: instance.logFile, encoding: .utf8).contains("\"accounts\":3,\"told\":0"))
        }
        #expect(try rawSQLite(database, "SELECT COUNT(*) FROM refusal_notices") == ["2"])
        #expect(eventually { try rawSQLite(database, "SELECT COUNT(*) FROM outbox") == ["0"] }, "every notice delivered")
        #expect(told("ada@signet.test").count == 1 && told("bea@signet.test").count == 1 && told("cy@signet.test").isEmpty && told("dan@signet.test").isEmpty
                && told("flo@signet.test").isEmpty)
        // A blocked account is passed over, not marked: once unblocked, the next report tells it.
        #expect(try live.api("PATCH", "/api/v2/users/\(flo.id)", token: live.managementToken(), .object(["blocked": .bool(false)])).status == 200)
        #expect(try live.app.service.ceremonies.tellRefusedPasskeyOwners(model: Self.key) == 1)
        #expect(eventually { told("flo@signet.test").count == 1 })
        #expect(try rawSQLite(database, "SELECT COUNT(*) FROM refusal_notices") == ["3"])
        // An account erased takes its marks with it.
        let erased = try #require(try live.store.user(email: "ada@signet.test"))
        #expect(try live.api("DELETE", "/api/v2/users/\(erased.id)", token: live.managementToken()).status == 204)
        #expect(try rawSQLite(database, "SELECT COUNT(*) FROM refusal_notices") == ["2"])
        // Without mail, nobody is told, nor marked: once mail is set up, a start tells them.
        let quiet = try Self.files(service, models: fine)
        let silent = try TestServer.withOperators { c in (c.attestationMetadataFile, c.attestationMetadataRootFile) = quiet }
        let phone = Phone(silent, settings: Self.securityKey(Self.key))
        let (session, credential) = try phone.startSignUp(email: "eve@signet.test", tamper: vendor.packed)
        #expect(try phone.exchange(session: session, credential: credential).status == 200)
        try Self.replace(quiet.0, service, number: 43, models: refusing)
        #expect(silent.app.reloadAttestationMetadataIfChanged(now: Date()) == true)
        silent.app.server.log.flush()
        #expect(try String(contentsOf: silent.logFile, encoding: .utf8).contains("\"accounts\":1,\"told\":0"))
        #expect(try rawSQLite(silent.directory.appendingPathComponent("signet.db").path, "SELECT COUNT(*) FROM refusal_notices") == ["0"])
    }

    @Test("trust_anchors still trust any model chained to them, beside the BLOB")
    func besideTrustAnchors() throws {
        let anchor = try TestAttestationRoot(name: "The Operator's Own Root")
        let anchorFile = try anchor.pemFile(in: Scratch.directory)
        let files = try Self.files(service, models: [.init(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate])])
        let both = try TestServer { c in
            c.trustAnchorFiles = [anchorFile]
            (c.attestationMetadataFile, c.attestationMetadataRootFile) = files
        }
        for (index, (aaguid, root)) in [(Self.unlisted, anchor), (Self.key, vendor)].enumerated() {
            let phone = Phone(both, settings: Self.securityKey(aaguid))
            let (session, credential) = try phone.startSignUp(email: "both\(index)@signet.test", tamper: root.packed)
            #expect(try phone.exchange(session: session, credential: credential).status == 200, "\(aaguid)")
        }
    }

    @Test("a BLOB that does not verify stops the start, naming the file and what failed; so does a root file without one certificate")
    func startRefused() throws {
        let stranger = try TestMetadataService()
        let (blob, _) = try Self.files(stranger, models: [])
        let (_, root) = try Self.files(service, models: [])
        for (blobFile, rootFile, message) in [(blob, root, "(chain)"), (root, root, "(jws)"), (blob, "/nonexistent/root.pem", "cannot read"),
                                                  ("/dev/zero", root, "attestation_metadata.blob_file /dev/zero is larger than 64 MiB"),
                                                  (blob, "/dev/zero", "attestation_metadata.root_file /dev/zero is larger than 1 MiB")] {
            do {
                _ = try TestServer { c in (c.attestationMetadataFile, c.attestationMetadataRootFile) = (blobFile, rootFile) }
                Issue.record("started with \(message)")
            } catch let error as ConfigurationError {
                #expect(error.message.contains(message), "\(error.message)")
            }
        }
        let twoRoots = Scratch.directory.appendingPathComponent("two-\(UUID().uuidString).pem")
        try (String(contentsOfFile: root, encoding: .utf8) + String(contentsOfFile: try stranger.rootFile(in: Scratch.directory), encoding: .utf8)).write(to: twoRoots, atomically: true, encoding: .utf8)
        #expect(throws: ConfigurationError.self) { _ = try TestServer { c in (c.attestationMetadataFile, c.attestationMetadataRootFile) = (blob, twoRoots.path) } }
    }

    @Test("signet doctor: a BLOB that verifies passes with its number, models and due date; one past its nextUpdate fails; one that does not verify fails with the fix")
    func doctor() throws {
        func check(_ files: (String, String), name: String = "attestation_metadata", attestation: String = "direct") -> DoctorCheck? {
            var configuration = TestServer.configuration()
            configuration.attestation = attestation
            (configuration.attestationMetadataFile, configuration.attestationMetadataRootFile) = files
            return Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks().first { $0.name == name }
        }
        let models: [TestMetadataService.Model] = [.init(aaguid: Self.key, description: "Key", roots: []),
                                                   .init(aaguid: Self.revoked, description: "Recalled", roots: [], statuses: [("REVOKED", nil)])]
        let current = check(try Self.files(service, models: models))
        #expect(current?.status == .pass && current?.detail.contains("BLOB no. 42: 2 FIDO2 models, 1 of them refused") == true, "\(current?.detail ?? "none")")
        #expect(check(try Self.files(service, models: models), name: "attestation_metadata.defects") == nil)
        let flawed = check(try Self.files(service, models: models + [.init(aaguid: "not-a-uuid", description: "Typo", roots: [])]), name: "attestation_metadata.defects")
        #expect(flawed?.status == .note && flawed?.detail.contains("entries[2].aaguid is not a UUID") == true, "\(flawed?.detail ?? "none")")
        let stale = Scratch.directory.appendingPathComponent("stale-\(UUID().uuidString).jwt")
        try Data(try service.blob(TestMetadataService.payload(nextUpdate: "2026-01-01", models: models))).write(to: stale)
        let old = check((stale.path, try service.rootFile(in: Scratch.directory)))
        #expect(old?.status == .fail && old?.detail.contains("2026-01-01") == true && old?.fix?.contains("mds3.fidoalliance.org") == true, "\(old?.detail ?? "none")")
        let (blob, _) = try Self.files(try TestMetadataService(), models: models)
        let refused = check((blob, try service.rootFile(in: Scratch.directory)))
        #expect(refused?.status == .fail && refused?.detail.contains("(chain)") == true, "\(refused?.detail ?? "none")")
        #expect(!Doctor(configuration: TestServer.configuration(), options: HTTPSOptions()).configurationChecks().contains { $0.name.hasPrefix("attestation") })
        // Options that ask for no attestation get none from browsers: every registration refused.
        let none = check(try Self.files(service, models: models), name: "attestation", attestation: "none")
        #expect(none?.status == .fail && none?.fix == "set attestation to direct (or enterprise)", "\(none?.detail ?? "none")")
        #expect(check(try Self.files(service, models: models), name: "attestation") == nil)
    }
}
