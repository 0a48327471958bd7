import Foundation
import SignetCrypto
import SignetWebAuthn
import SignetTestSupport
import Testing

/// FIDO MDS 3.0 §3.2: a BLOB is used only once its signing chain reaches the configured root
/// and its signature verifies; each check, and each part of the payload, broken alone.
@Suite struct MetadataBLOBTests {
    static let service = try! TestMetadataService()
    static let yubico = "cb69481e-8ff7-4039-93ec-0a2729a154a8"
    static let other = "2fc0579f-8113-47ea-b116-bb5a8db9202a"
    static let attestationRoot = try! TestMetadataService().root

    static var models: [TestMetadataService.Model] {
        [.init(aaguid: yubico.uppercased(), description: "Test Key 5", roots: [attestationRoot]),
         .init(aaguid: other, description: "Revoked Key", roots: [], statuses: [("FIDO_CERTIFIED", "2023-01-01"), ("REVOKED", "2024-06-01")])]
    }

    /// The JWS with `edit` applied to its text, signature unchanged.
    static func edited(_ jws: [UInt8], _ edit: (inout [String]) -> Void) -> [UInt8] {
        var parts = String(decoding: jws, as: UTF8.self).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        edit(&parts)
        return Array(parts.joined(separator: ".").utf8)
    }

    static func part(_ jws: [UInt8], anchor: Certificate = service.root, now: Date = Date()) -> String? {
        do {
            _ = try MetadataBLOB(jws: jws, anchor: anchor, now: now)
            return nil
        } catch {
            return error.part
        }
    }

    @Test("a BLOB signed under the root is read: its FIDO2 models by AAGUID in lower case, each with its name, roots and status reports; U2F entries passed over")
    func accepted() throws {
        let jws = try Self.service.blob(TestMetadataService.payload(number: 77, nextUpdate: "2027-01-01", models: Self.models))
        let blob = try MetadataBLOB(jws: jws + Array("\n".utf8), anchor: Self.service.root, now: Date())
        #expect(blob.number == 77 && blob.nextUpdate == "2027-01-01")
        #expect(blob.entries.count == 2)
        let entry = try #require(blob.entries[Self.yubico])
        #expect(entry.description == "Test Key 5" && entry.roots.map(\.der) == [Self.attestationRoot.der])
        #expect(entry.statuses.map(\.status) == ["FIDO_CERTIFIED_L1"] && entry.statuses.map(\.effectiveDate) == ["2024-01-10"])
    }

    @Test("the shape of the service's chain since August 2026: signer, intermediate and a new root cross-signed by the old one in x5c; it reaches the new root and the old one, not another")
    func crossSignedRoot() throws {
        func ca(_ name: String, _ key: PrivateKey, issuer: Certificate?, issuerKey: PrivateKey, serial: Int) throws -> Certificate {
            var builder = CertificateBuilder(subject: [("2.5.4.3", name)], serial: serial, notBefore: Date().addingTimeInterval(-86400), notAfter: Date().addingTimeInterval(86400 * 3650))
            builder.extensions = [("2.5.29.19", true, DER.sequence([DER.boolean(true)]))]
            return try builder.sign(publicKey: key.publicKey, issuer: issuer, issuerKey: issuerKey)
        }
        let (oldKey, newKey, caKey, signerKey) = (try PrivateKey.generate(.ec(.p256)), try PrivateKey.generate(.ec(.p256)), try PrivateKey.generate(.ec(.p256)),
                                                  try PrivateKey.generate(.rsa(bits: 2048)))
        let oldRoot = try ca("Test Root R3", oldKey, issuer: nil, issuerKey: oldKey, serial: 1)
        let newRoot = try ca("Test Root R46", newKey, issuer: nil, issuerKey: newKey, serial: 2)
        let cross = try ca("Test Root R46", newKey, issuer: oldRoot, issuerKey: oldKey, serial: 3)
        let intermediate = try ca("Test EV TLS CA 2025", caKey, issuer: newRoot, issuerKey: newKey, serial: 4)
        var leaf = CertificateBuilder(subject: [("2.5.4.3", "mds.signet.test")], serial: 5, notBefore: Date().addingTimeInterval(-86400), notAfter: Date().addingTimeInterval(86400 * 200))
        leaf.extensions = [("2.5.29.19", true, DER.sequence([]))]
        let signer = try leaf.sign(publicKey: signerKey.publicKey, issuer: intermediate, issuerKey: caKey)
        let x5c = JSONValue.array([signer, intermediate, cross].map { .string(Data($0.der).base64EncodedString()) })
        let jws = try TestMetadataService.sign(header: ["alg": .string("RS256"), "typ": .string("JWT"), "x5c": x5c],
                                               payload: TestMetadataService.payload(models: Self.models).serializedBytes, key: signerKey)
        #expect(Self.part(jws, anchor: newRoot) == nil)
        #expect(Self.part(jws, anchor: oldRoot) == nil)
        #expect(Self.part(jws, anchor: Self.service.root) == "chain")
    }

    @Test("RS256, as the Metadata Service signs, is read as ES256 is")
    func rs256() throws {
        let service = try TestMetadataService(alg: "RS256")
        let blob = try MetadataBLOB(jws: try service.blob(TestMetadataService.payload(models: Self.models)), anchor: service.root, now: Date())
        #expect(blob.entries.count == 2)
    }

    @Test("with no x5c the root's own key signs (MDS 3.0 §3.2); another key does not verify")
    func noX5C() throws {
        let payload = TestMetadataService.payload(models: Self.models).serializedBytes
        let byRoot = try TestMetadataService.sign(header: ["alg": .string("ES256")], payload: payload, key: Self.service.rootKey)
        #expect(Self.part(byRoot) == nil)
        let bySigner = try TestMetadataService.sign(header: ["alg": .string("ES256")], payload: payload, key: Self.service.signerKey)
        #expect(Self.part(bySigner) == "signature")
    }

    @Test("the signing chain must reach the configured root, and the signing certificate be valid now")
    func chain() throws {
        let jws = try Self.service.blob(TestMetadataService.payload(models: Self.models))
        #expect(Self.part(jws, anchor: try TestMetadataService().root) == "chain")
        #expect(Self.part(jws, now: Date().addingTimeInterval(86400 * 400)) == "chain")
        let lapsed = try TestMetadataService(signerValid: Date().addingTimeInterval(-86400 * 20)...Date().addingTimeInterval(-86400))
        #expect(Self.part(try lapsed.blob(TestMetadataService.payload(models: Self.models)), anchor: lapsed.root) == "chain")
    }

    @Test("the signature covers the header and payload as sent: a changed payload, a changed signature or a short one is refused")
    func signature() throws {
        let jws = try Self.service.blob(TestMetadataService.payload(number: 7, models: Self.models))
        let richer = Base64URL.encode(TestMetadataService.payload(number: 8, models: Self.models).serializedBytes)
        #expect(Self.part(Self.edited(jws) { $0[1] = richer }) == "signature")
        #expect(Self.part(Self.edited(jws) { parts in
            var bytes = Base64URL.decode(parts[2])!
            bytes[10] ^= 1
            parts[2] = Base64URL.encode(bytes)
        }) == "signature")
        #expect(Self.part(Self.edited(jws) { $0[2] = Base64URL.encode(Base64URL.decode($0[2])!.dropLast()) }) == "signature")
    }

    @Test("alg must be a signature algorithm the service may use: none, HS256 and a missing alg are refused")
    func alg() throws {
        let payload = TestMetadataService.payload(models: Self.models)
        let x5c = JSONValue.array([.string(Data(Self.service.signer.der).base64EncodedString())])
        for header: JSONObject in [["alg": .string("none"), "x5c": x5c], ["alg": .string("HS256"), "x5c": x5c], ["x5c": x5c]] {
            #expect(Self.part(try Self.service.blob(payload, header: header)) == "alg", "\(JSONValue.object(header).serialized)")
        }
    }

    @Test("x5c must be a list of 1 to 8 base64 DER certificates")
    func x5c() throws {
        let payload = TestMetadataService.payload(models: Self.models)
        let signer = JSONValue.string(Data(Self.service.signer.der).base64EncodedString())
        let cases: [JSONValue] = [.string("MIIB"), .array([]), .array([.string("not base64!")]), .array([.string(Data([1, 2, 3]).base64EncodedString())]),
                                  .array(Array(repeating: signer, count: 9))]
        for x5c in cases {
            #expect(Self.part(try Self.service.blob(payload, header: ["alg": .string("ES256"), "x5c": x5c])) == "x5c", "\(x5c.serialized.prefix(60))")
        }
    }

    @Test("the JWS must have three base64url parts with a JSON object header and a JSON payload, and at most 64 MiB")
    func form() throws {
        let jws = try Self.service.blob(TestMetadataService.payload(models: Self.models))
        #expect(Self.part(Self.edited(jws) { $0.removeLast() }) == "jws")
        #expect(Self.part(Self.edited(jws) { $0.append("") }) == "jws")
        #expect(Self.part(Self.edited(jws) { $0[0] = "e30*" }) == "jws")
        #expect(Self.part(Self.edited(jws) { $0[0] = Base64URL.encode(Array("[]".utf8)) }) == "jws")
        #expect(Self.part(Self.edited(jws) { $0[1] = Base64URL.encode(Array("{\"no\":".utf8)) }) == "jws")
        #expect(Self.part([UInt8](repeating: UInt8(ascii: "A"), count: MetadataBLOB.maxLength + 1)) == "size")
    }

    /// The payload with `edit` applied, as a signed BLOB, read.
    static func read(_ edit: (inout JSONObject) -> Void) throws -> Result<MetadataBLOB, MetadataBLOB.Refusal> {
        guard case .object(var payload) = TestMetadataService.payload(models: models) else { preconditionFailure("the payload is an object") }
        edit(&payload)
        let jws = try service.blob(.object(payload))
        do {
            return .success(try MetadataBLOB(jws: jws, anchor: service.root, now: Date()))
        } catch {
            return .failure(error)
        }
    }

    /// An edit of the first entry.
    static func entry(_ edit: @escaping (inout JSONObject) -> Void) -> (inout JSONObject) -> Void {
        { payload in
            guard case .array(var entries)? = payload["entries"], case .object(var first) = entries[0] else { return }
            edit(&first)
            entries[0] = .object(first)
            payload["entries"] = .array(entries)
        }
    }

    @Test("the payload needs no (a serial number), nextUpdate (a date) and entries (a list), or the BLOB is refused")
    func payload() throws {
        func part(_ edit: (inout JSONObject) -> Void) throws -> String? {
            if case .failure(let refusal) = try Self.read(edit) { refusal.part } else { nil }
        }
        #expect(try part { $0["no"] = nil } == "payload")
        #expect(try part { $0["no"] = .int(-1) } == "payload")
        #expect(try part { $0["no"] = .string("42") } == "payload")
        #expect(try part { $0["nextUpdate"] = nil } == "payload")
        #expect(try part { $0["nextUpdate"] = .string("2027-1-01") } == "payload")
        #expect(try part { $0["nextUpdate"] = .string("2027-13-01") } == "payload")
        #expect(try part { $0["entries"] = .object([:]) } == "payload")
        #expect(try part { _ in } == nil)
    }

    @Test("a defect in one entry passes it over on the safe side and is listed: no AAGUID, no root and a compromise counted from always; the other entries stand")
    func defects() throws {
        func blob(_ edit: @escaping (inout JSONObject) -> Void) throws -> MetadataBLOB { try Self.read(edit).get() }
        func statement(_ member: String, _ value: JSONValue) -> (inout JSONObject) -> Void {
            Self.entry { first in
                guard case .object(var statement)? = first["metadataStatement"] else { return }
                statement[member] = value
                first["metadataStatement"] = .object(statement)
            }
        }
        let notObject = try blob { $0["entries"] = .array([.string("entry")] + ($0["entries"]?.array ?? [])) }
        #expect(notObject.entries.count == 2 && notObject.defects == ["entries[0] is not an object"])
        let badAAGUID = try blob(Self.entry { $0["aaguid"] = .string("cb69481e") })
        #expect(badAAGUID.entries[Self.yubico] == nil && badAAGUID.entries[Self.other] != nil && badAAGUID.defects == ["entries[0].aaguid is not a UUID"])
        let valid = JSONValue.string(Data(Self.attestationRoot.der).base64EncodedString())
        for root in [JSONValue.string("not base64!"), .string(Data([0x30, 0x03, 1, 2, 3]).base64EncodedString()), .int(7)] {
            let badRoot = try blob(statement("attestationRootCertificates", .array([root, valid])))
            #expect(badRoot.entries[Self.yubico]?.roots.map(\.der) == [Self.attestationRoot.der], "only the root that reads is trusted")
            #expect(badRoot.defects.count == 1 && badRoot.defects[0].contains("attestationRootCertificates[0]"), "\(badRoot.defects)")
        }
        let noStatus = try blob(Self.entry { $0["statusReports"] = .array([.object(["effectiveDate": .string("2024-01-10")])]) })
        #expect(noStatus.entries[Self.yubico]?.statuses.isEmpty == true && noStatus.defects.count == 1)
        let badDate = try blob(Self.entry { $0["statusReports"] = .array([.object(["status": .string("REVOKED"), "effectiveDate": .string("10/01/2099")])]) })
        #expect(badDate.entries[Self.yubico]?.refusal(for: .signIn, at: Date()) == "REVOKED", "a compromise whose date does not read counts now")
        #expect(badDate.defects.count == 1 && badDate.defects[0].contains("REVOKED"))
        let twice = try blob { payload in
            guard case .array(var entries)? = payload["entries"] else { return }
            entries.append(.object(["aaguid": .string(Self.yubico), "metadataStatement": .object(["attestationRootCertificates": .array([.string(Data(Self.service.root.der).base64EncodedString())])]),
                                    "statusReports": .array([.object(["status": .string("USER_VERIFICATION_BYPASS")])])]))
            payload["entries"] = .array(entries)
        }
        let entry = try #require(twice.entries[Self.yubico])
        #expect(entry.roots.map(\.der) == [Self.attestationRoot.der] && entry.refusal(for: .signIn, at: Date()) == "USER_VERIFICATION_BYPASS", "listed twice: the first's roots, both's reports")
        #expect(twice.defects.count == 1)
        #expect(try blob { _ in }.defects.isEmpty)
    }

    @Test("a compromise refuses a model from its effective date on: REVOKED for registration and sign-in, ATTESTATION_KEY_COMPROMISE for registration only, a certification for neither")
    func statuses() throws {
        let future = TestMetadataService.day(Date().addingTimeInterval(86400 * 10))
        let later = Date().addingTimeInterval(86400 * 11)
        let models: [TestMetadataService.Model] = [
            .init(aaguid: Self.yubico, description: "Certified", roots: []),
            .init(aaguid: Self.other, description: "Revoked", roots: [], statuses: [("FIDO_CERTIFIED", "2023-01-01"), ("REVOKED", "2024-06-01")]),
            .init(aaguid: "00000000-0000-0000-0000-00000000000a", description: "Attestation key", roots: [], statuses: [("ATTESTATION_KEY_COMPROMISE", nil)]),
            .init(aaguid: "00000000-0000-0000-0000-00000000000b", description: "Soon", roots: [], statuses: [("USER_KEY_REMOTE_COMPROMISE", future)]),
            .init(aaguid: "00000000-0000-0000-0000-00000000000c", description: "Bypass", roots: [], statuses: [("USER_VERIFICATION_BYPASS", "2020-02-02"), ("UPDATE_AVAILABLE", "2021-01-01")]),
        ]
        let blob = try MetadataBLOB(jws: try Self.service.blob(TestMetadataService.payload(models: models)), anchor: Self.service.root, now: Date())
        func refusal(_ aaguid: String, _ use: MetadataBLOB.Use, _ now: Date = Date()) -> String? { blob.entries[aaguid]?.refusal(for: use, at: now) }
        #expect(refusal(Self.yubico, .registration) == nil && refusal(Self.yubico, .signIn) == nil)
        #expect(refusal(Self.other, .registration) == "REVOKED" && refusal(Self.other, .signIn) == "REVOKED")
        #expect(refusal(Self.other, .signIn, MetadataBLOB.date("2024-05-31")!) == nil)
        #expect(refusal("00000000-0000-0000-0000-00000000000a", .registration) == "ATTESTATION_KEY_COMPROMISE")
        #expect(refusal("00000000-0000-0000-0000-00000000000a", .signIn) == nil)
        #expect(refusal("00000000-0000-0000-0000-00000000000b", .signIn) == nil)
        #expect(refusal("00000000-0000-0000-0000-00000000000b", .signIn, later) == "USER_KEY_REMOTE_COMPROMISE")
        #expect(refusal("00000000-0000-0000-0000-00000000000c", .signIn) == "USER_VERIFICATION_BYPASS", "a later report does not lift a compromise")
    }
}
