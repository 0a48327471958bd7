import Foundation
import SignetCrypto
import SignetSoftware
import SignetWebAuthn
import Testing

/// One registration with exactly one defect.
struct RegistrationDefect: Sendable, CustomTestStringConvertible {
    let name: String
    let reason: WebAuthnError.Reason
    var tamper = Tamper()
    var requireUV = false
    var algorithm: COSEAlgorithm = .es256
    var configure: @Sendable (inout RelyingParty) -> Void = { _ in }
    var rawID: [UInt8]?

    var testDescription: String { "\(name) → \(reason)" }

    init(_ name: String, _ reason: WebAuthnError.Reason, build: (inout RegistrationDefect) -> Void) {
        self.name = name
        self.reason = reason
        build(&self)
    }
}

/// WebAuthn L3 §7.1: every verification step, broken alone.
@Suite struct RegistrationStepTests {
    static let forge = try! AttestationForge()

    static let clientDataDefects: [RegistrationDefect] = [
        .init("clientDataJSON is not JSON", .malformed) { $0.tamper.clientData = { $0.replacement = Array("not json".utf8) } },
        .init("clientDataJSON is not UTF-8", .malformed) { $0.tamper.clientData = { $0.replacement = [0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d] } },
        .init("clientDataJSON lacks the challenge", .malformed) {
            $0.tamper.clientData = { $0.replacement = Array(#"{"type":"webauthn.create","origin":"https://signet.test"}"#.utf8) }
        },
        .init("clientDataJSON has a duplicate member", .malformed) {
            $0.tamper.clientData = { $0.extra = [("origin", .string("https://signet.test"))] }
        },
        .init("step 7: type is webauthn.get", .typeMismatch) { $0.tamper.clientData = { $0.type = "webauthn.get" } },
        .init("step 8: challenge of another ceremony", .challengeMismatch) {
            $0.tamper.clientData = { $0.challenge = Base64URL.encode(SecureRandom.bytes(32)) }
        },
        .init("step 8: challenge not canonical base64url", .challengeMismatch) {
            $0.tamper.clientData = { $0.challenge = String($0.challenge.dropLast()) + "B" }
        },
        .init("step 9: origin of another site", .originNotAllowed) { $0.tamper.clientData = { $0.origin = "https://evil.test" } },
        .init("step 9: origin differs only by port", .originNotAllowed) { $0.tamper.clientData = { $0.origin = "https://signet.test:8443" } },
        // Swift's == holds U+212A KELVIN SIGN equal to "K"; an origin is matched by its bytes.
        .init("step 9: origin canonically equivalent to an allowed one, not the same", .originNotAllowed) {
            $0.configure = { $0.origins.insert("android:apk-key-hash:K0Tz") }
            $0.tamper.clientData = { $0.origin = "android:apk-key-hash:\u{212A}0Tz" }
        },
        .init("step 10: crossOrigin true but not expected", .crossOriginNotAllowed) { $0.tamper.clientData = { $0.crossOrigin = true } },
        .init("step 10: topOrigin present but no embedding expected", .crossOriginNotAllowed) {
            $0.tamper.clientData = { $0.topOrigin = "https://signet.test" }
        },
        .init("step 10: topOrigin not among the expected", .topOriginNotAllowed) {
            $0.configure = { $0.allowCrossOrigin = true; $0.topOrigins = ["https://shop.test"] }
            $0.tamper.clientData = { $0.crossOrigin = true; $0.topOrigin = "https://evil.test" }
        },
        .init("step 10: topOrigin canonically equivalent to an expected one, not the same", .topOriginNotAllowed) {
            $0.configure = { $0.allowCrossOrigin = true; $0.topOrigins = ["https://Kiosk.test"] }
            $0.tamper.clientData = { $0.crossOrigin = true; $0.topOrigin = "https://\u{212A}iosk.test" }
        },
        .init("tokenBinding status not-supported", .tokenBindingInvalid) {
            $0.tamper.clientData = { $0.extra = [("tokenBinding", .object(["status": .string("not-supported")]))] }
        },
    ]

    static let authenticatorDataDefects: [RegistrationDefect] = [
        .init("step 12: attestationObject is not CBOR", .malformed) { $0.tamper.attestationObject = { $0 = [0xff, 0x00] } },
        .init("step 12: attestationObject has a trailing byte", .malformed) { $0.tamper.attestationObject = { $0.append(0x00) } },
        .init("step 12: attestationObject truncated", .malformed) { $0.tamper.attestationObject = { $0.removeLast(5) } },
        .init("authenticator data has a trailing byte", .malformed) { $0.tamper.authenticatorData = { $0.trailing = [0x00] } },
        .init("step 13: rpIdHash of another RP", .rpIdHashMismatch) {
            $0.tamper.authenticatorData = { $0.rpIdHash = Digest.sha256.hash(Array("evil.test".utf8)) }
        },
        .init("step 14: UP clear", .userNotPresent) { $0.tamper.authenticatorData = { $0.flags.remove(.userPresent) } },
        .init("step 15: UV clear while required", .userNotVerified) {
            $0.requireUV = true
            $0.tamper.authenticatorData = { $0.flags.remove(.userVerified) }
        },
        .init("step 16: BS set without BE", .backupStateInvalid) { $0.tamper.authenticatorData = { $0.flags.remove(.backupEligible) } },
        .init("AT clear: no credential", .malformed) {
            $0.tamper.authenticatorData = { $0.flags.remove(.attestedCredentialData); $0.credentialID = nil }
        },
        .init("AT set but credential data truncated", .malformed) { $0.tamper.authenticatorData = { $0.credentialPublicKey = [0xa5, 0x01] } },
        .init("ED set without extensions", .malformed) { $0.tamper.authenticatorData = { $0.flags.insert(.extensionData) } },
        .init("step 25: credential ID longer than 1023 bytes", .malformed) {
            $0.tamper.authenticatorData = { $0.credentialID = [UInt8](repeating: 7, count: 1024) }
        },
        .init("rawId differs from the credential ID", .credentialIdMismatch) { $0.rawID = [1, 2, 3] },
        .init("step 19: algorithm not in pubKeyCredParams", .algorithmNotAllowed) { $0.configure = { $0.allowedAlgorithms = [.eddsa] } },
        .init("COSE key: alg does not fit the curve", .malformed) {
            $0.tamper.authenticatorData = { fields in
                let key = try! PrivateKey.generate(.ec(.p384)).publicKey
                fields.credentialPublicKey = key.coseKey(algorithm: .es256)
            }
        },
        .init("COSE key: point not on the curve", .malformed) {
            $0.tamper.authenticatorData = { fields in
                var map = try! CBORDecoder().decode(fields.credentialPublicKey!).map!.pairs.map { ($0.key, $0.value) }
                map[4].1 = .bytes([UInt8](repeating: 1, count: 32))
                fields.credentialPublicKey = CBOREncoder.encode(.map(CBORMap(map)))
            }
        },
        .init("COSE key: private key included", .malformed) {
            $0.tamper.authenticatorData = { fields in
                var map = try! CBORDecoder().decode(fields.credentialPublicKey!).map!.pairs.map { ($0.key, $0.value) }
                map.append((.int(-4), .bytes([UInt8](repeating: 1, count: 32))))
                fields.credentialPublicKey = CBOREncoder.encode(.map(CBORMap(map)))
            }
        },
        .init("COSE key: unknown key type", .malformed) {
            $0.tamper.authenticatorData = { $0.credentialPublicKey = CBOREncoder.encode(.map(CBORMap([(.int(1), .int(9)), (.int(3), .int(-7))]))) }
        },
    ]

    static func maker(_ make: @escaping @Sendable (AttestationInput) throws -> (String, CBORMap)) -> AttestationMaker { make }

    static let statementDefects: [RegistrationDefect] = [
        .init("step 21: unsupported format", .attestationInvalid) { $0.tamper.attestation = maker { _ in ("fancy", CBORMap([])) } },
        .init("§8.7 none with a non-empty statement", .attestationInvalid) {
            $0.tamper.attestation = maker { _ in ("none", CBORMap([(.text("sig"), .bytes([1]))])) }
        },
        .init("§8.2 packed self: signature by another key", .attestationInvalid) {
            $0.tamper.attestation = maker { input in
                let other = try PrivateKey.generate(.ec(.p256))
                let sig = try other.sign(input.authenticatorData + input.clientDataHash, scheme: .ecdsa(.sha256))
                return ("packed", CBORMap([(.text("alg"), .int(-7)), (.text("sig"), .bytes(sig))]))
            }
        },
        .init("§8.2 packed self: alg differs from the credential's", .attestationInvalid) {
            $0.tamper.attestation = maker { input in
                let sig = try input.credentialKey.sign(input.authenticatorData + input.clientDataHash, scheme: .ecdsa(.sha256))
                return ("packed", CBORMap([(.text("alg"), .int(-35)), (.text("sig"), .bytes(sig))]))
            }
        },
        .init("§8.2 packed: sig missing", .attestationInvalid) { $0.tamper.attestation = maker { _ in ("packed", CBORMap([(.text("alg"), .int(-7))])) } },
        .init("§8.2 packed x5c: signature broken", .attestationInvalid) { $0.tamper.attestation = forge.packed(.init(breakSignature: true)) },
        .init("§8.2 packed x5c: x5c holds garbage", .attestationInvalid) {
            $0.tamper.attestation = maker { _ in ("packed", CBORMap([(.text("alg"), .int(-7)), (.text("sig"), .bytes([1])), (.text("x5c"), .array([.bytes([0x30, 0x00])]))])) }
        },
        .init("§8.2.1 packed: OU is not Authenticator Attestation", .attestationInvalid) {
            var d = AttestationForge.PackedDefects()
            d.subject[2] = ("2.5.4.11", "Something Else")
            $0.tamper.attestation = forge.packed(d)
        },
        .init("§8.2.1 packed: subject lacks C", .attestationInvalid) {
            var d = AttestationForge.PackedDefects()
            d.subject.removeFirst()
            $0.tamper.attestation = forge.packed(d)
        },
        .init("§8.2.1 packed: certificate is a CA", .attestationInvalid) {
            $0.tamper.attestation = forge.packed(.init(extensions: [AttestationForge.isCA]))
        },
        .init("§8.2.1 packed: certificate is not v3", .attestationInvalid) {
            $0.tamper.attestation = forge.packed(.init(extensions: [], omitAAGUIDExtension: true, version: 1))
        },
        .init("§8.2.1 packed: aaguid extension differs", .attestationInvalid) {
            $0.tamper.attestation = forge.packed(.init(aaguid: [UInt8](repeating: 9, count: 16)))
        },
        .init("§8.2.1 packed: aaguid extension critical", .attestationInvalid) { $0.tamper.attestation = forge.packed(.init(aaguidCritical: true)) },
        .init("§8.6 fido-u2f: two certificates", .attestationInvalid) { $0.tamper.attestation = forge.fidoU2F(.init(twoCertificates: true)) },
        .init("§8.6 fido-u2f: certificate key not P-256", .attestationInvalid) {
            $0.tamper.attestation = forge.fidoU2F(.init(certificateCurve: .p384))
        },
        .init("§8.6 fido-u2f: signature broken", .attestationInvalid) { $0.tamper.attestation = forge.fidoU2F(.init(breakSignature: true)) },
        .init("§8.6 fido-u2f: credential key not P-256", .attestationInvalid) {
            $0.algorithm = .eddsa
            $0.tamper.attestation = maker { input in
                let key = try PrivateKey.generate(.ec(.p256))
                let cert = try forge.leaf(key: key.publicKey, subject: AttestationForge.packedSubject, extensions: [])
                return ("fido-u2f", CBORMap([(.text("sig"), .bytes([0x30, 0x00])), (.text("x5c"), .array([.bytes(cert.der)]))]))
            }
        },
        .init("§8.8 apple: nonce differs", .attestationInvalid) { $0.tamper.attestation = forge.apple(.init(wrongNonce: true)) },
        .init("§8.8 apple: nonce extension missing", .attestationInvalid) { $0.tamper.attestation = forge.apple(.init(omitExtension: true)) },
        .init("§8.8 apple: certificate key is not the credential key", .attestationInvalid) {
            $0.tamper.attestation = forge.apple(.init(otherKey: true))
        },
        .init("§8.4 android-key: attestationChallenge differs", .attestationInvalid) {
            $0.tamper.attestation = forge.androidKey(.init(wrongChallenge: true))
        },
        .init("§8.4 android-key: allApplications present", .attestationInvalid) {
            $0.tamper.attestation = forge.androidKey(.init(allApplications: true))
        },
        .init("§8.4 android-key: origin not generated", .attestationInvalid) { $0.tamper.attestation = forge.androidKey(.init(origin: 2)) },
        .init("§8.4 android-key: purpose not sign", .attestationInvalid) { $0.tamper.attestation = forge.androidKey(.init(purpose: 3)) },
        .init("§8.4 android-key: certificate key is not the credential key", .attestationInvalid) {
            $0.tamper.attestation = forge.androidKey(.init(otherKey: true))
        },
        .init("§8.4 android-key: signature broken", .attestationInvalid) { $0.tamper.attestation = forge.androidKey(.init(breakSignature: true)) },
        .init("§8.4 android-key: key description truncated", .attestationInvalid) {
            $0.tamper.attestation = forge.androidKey(.init(malformedDescription: true))
        },
        .init("§8.5 safetynet: certificate for another host", .attestationInvalid) {
            $0.tamper.attestation = forge.safetyNet(.init(hostname: "attest.evil.test"), at: Date())
        },
        .init("§8.5 safetynet: nonce differs", .attestationInvalid) { $0.tamper.attestation = forge.safetyNet(.init(wrongNonce: true), at: Date()) },
        .init("§8.5 safetynet: ctsProfileMatch false", .attestationInvalid) {
            $0.tamper.attestation = forge.safetyNet(.init(ctsProfileMatch: false), at: Date())
        },
        .init("§8.5 safetynet: timestamp too old", .attestationInvalid) { $0.tamper.attestation = forge.safetyNet(.init(age: 120), at: Date()) },
        .init("§8.5 safetynet: timestamp in the future", .attestationInvalid) { $0.tamper.attestation = forge.safetyNet(.init(age: -600), at: Date()) },
        .init("§8.5 safetynet: JWS signature broken", .attestationInvalid) {
            $0.tamper.attestation = forge.safetyNet(.init(breakSignature: true), at: Date())
        },
        .init("§8.3 tpm: ver is not 2.0", .attestationInvalid) { $0.tamper.attestation = forge.tpm(.init(version: "1.2")) },
        .init("§8.3 tpm: magic wrong", .attestationInvalid) { $0.tamper.attestation = forge.tpm(.init(magic: 0x1234_5678)) },
        .init("§8.3 tpm: type not ATTEST_CERTIFY", .attestationInvalid) { $0.tamper.attestation = forge.tpm(.init(type: 0x8018)) },
        .init("§8.3 tpm: extraData differs", .attestationInvalid) { $0.tamper.attestation = forge.tpm(.init(wrongExtraData: true)) },
        .init("§8.3 tpm: attested name differs", .attestationInvalid) { $0.tamper.attestation = forge.tpm(.init(wrongName: true)) },
        .init("§8.3 tpm: pubArea holds another key", .attestationInvalid) { $0.tamper.attestation = forge.tpm(.init(otherPubAreaKey: true)) },
        .init("§8.3 tpm: signature broken", .attestationInvalid) { $0.tamper.attestation = forge.tpm(.init(breakSignature: true)) },
        .init("§8.3.1 tpm: AIK subject not empty", .attestationInvalid) {
            $0.tamper.attestation = forge.tpm(.init(subject: [("2.5.4.3", "AIK")]))
        },
        .init("§8.3.1 tpm: AIK without subjectAltName", .attestationInvalid) { $0.tamper.attestation = forge.tpm(.init(omitSAN: true)) },
        .init("§8.3.1 tpm: AIK without the AIK EKU", .attestationInvalid) { $0.tamper.attestation = forge.tpm(.init(omitEKU: true)) },
        .init("§8.3.1 tpm: AIK is a CA", .attestationInvalid) { $0.tamper.attestation = forge.tpm(.init(ca: true)) },
        .init("§8.3.1 tpm: aaguid extension differs", .attestationInvalid) {
            $0.tamper.attestation = forge.tpm(.init(aaguid: [UInt8](repeating: 3, count: 16)))
        },
    ]

    /// Attestation defects share one reason; the detail shows that each failed at its own check.
    static let statementDetails: [String: String] = [
        "§8.2 packed self: signature by another key": "self attestation signature",
        "§8.2 packed self: alg differs from the credential's": "alg differs",
        "§8.2 packed: sig missing": "sig missing",
        "§8.2 packed x5c: signature broken": "signature does not verify",
        "§8.2 packed x5c: x5c holds garbage": "not a DER certificate",
        "§8.2.1 packed: OU is not Authenticator Attestation": "subject lacks",
        "§8.2.1 packed: subject lacks C": "subject lacks",
        "§8.2.1 packed: certificate is a CA": "is a CA",
        "§8.2.1 packed: certificate is not v3": "not X.509 v3",
        "§8.2.1 packed: aaguid extension differs": "does not match the AAGUID",
        "§8.2.1 packed: aaguid extension critical": "critical",
        "§8.6 fido-u2f: two certificates": "exactly one certificate",
        "§8.6 fido-u2f: certificate key not P-256": "certificate key is not P-256",
        "§8.6 fido-u2f: signature broken": "signature does not verify",
        "§8.6 fido-u2f: credential key not P-256": "credential key is not a P-256",
        "§8.8 apple: nonce differs": "nonce does not match",
        "§8.8 apple: nonce extension missing": "lacks the nonce extension",
        "§8.8 apple: certificate key is not the credential key": "credential public key differs",
        "§8.4 android-key: attestationChallenge differs": "attestationChallenge",
        "§8.4 android-key: allApplications present": "all applications",
        "§8.4 android-key: origin not generated": "KM_ORIGIN_GENERATED",
        "§8.4 android-key: purpose not sign": "KM_PURPOSE_SIGN",
        "§8.4 android-key: certificate key is not the credential key": "credential public key differs",
        "§8.4 android-key: signature broken": "signature does not verify",
        "§8.4 android-key: key description truncated": "key description is malformed",
        "§8.5 safetynet: certificate for another host": "attest.android.com",
        "§8.5 safetynet: nonce differs": "nonce does not match",
        "§8.5 safetynet: ctsProfileMatch false": "ctsProfileMatch",
        "§8.5 safetynet: timestamp too old": "timestampMs",
        "§8.5 safetynet: timestamp in the future": "timestampMs",
        "§8.5 safetynet: JWS signature broken": "JWS signature",
        "§8.3 tpm: ver is not 2.0": "ver",
        "§8.3 tpm: magic wrong": "magic",
        "§8.3 tpm: type not ATTEST_CERTIFY": "TPM_ST_ATTEST_CERTIFY",
        "§8.3 tpm: extraData differs": "extraData",
        "§8.3 tpm: attested name differs": "attested name",
        "§8.3 tpm: pubArea holds another key": "pubArea key differs",
        "§8.3 tpm: signature broken": "signature does not verify",
        "§8.3.1 tpm: AIK subject not empty": "subject is not empty",
        "§8.3.1 tpm: AIK without subjectAltName": "subjectAltName",
        "§8.3.1 tpm: AIK without the AIK EKU": "EKU",
        "§8.3.1 tpm: AIK is a CA": "is a CA",
        "§8.3.1 tpm: aaguid extension differs": "AAGUID",
        "step 21: unsupported format": "unsupported attestation format",
        "§8.7 none with a non-empty statement": "non-empty attStmt",
    ]

    @Test("every attestation defect names the check it breaks")
    func statementDetailsCoverEveryDefect() {
        #expect(Set(Self.statementDefects.map(\.name)) == Set(Self.statementDetails.keys))
    }

    static func run(_ defect: RegistrationDefect) throws -> Result<RegistrationResult, WebAuthnError> {
        var harness = Harness()
        defect.configure(&harness.rp)
        return try harness.register(algorithm: defect.algorithm, tamper: defect.tamper, requireUV: defect.requireUV, rawID: defect.rawID)
    }

    @Test("client data step broken alone", arguments: clientDataDefects)
    func clientData(_ defect: RegistrationDefect) throws {
        let result = try Self.run(defect)
        #expect(result.reason == defect.reason)
        if case .failure(let error) = result, let fragment = Self.statementDetails[defect.name] {
            #expect(error.detail.contains(fragment), "\(defect.name): \(error.detail)")
        }
    }

    @Test("authenticator data step broken alone", arguments: authenticatorDataDefects)
    func authenticatorData(_ defect: RegistrationDefect) throws {
        let result = try Self.run(defect)
        #expect(result.reason == defect.reason)
        if case .failure(let error) = result, let fragment = Self.statementDetails[defect.name] {
            #expect(error.detail.contains(fragment), "\(defect.name): \(error.detail)")
        }
    }

    @Test("attestation statement requirement broken alone", arguments: statementDefects)
    func statement(_ defect: RegistrationDefect) throws {
        let result = try Self.run(defect)
        #expect(result.reason == defect.reason)
        if case .failure(let error) = result, let fragment = Self.statementDetails[defect.name] {
            #expect(error.detail.contains(fragment), "\(defect.name): \(error.detail)")
        }
    }

    /// Each format's statement without a defect verifies, and its chain is trusted exactly when
    /// the forge's root is configured.
    @Test("every format verifies and is trusted only under its root", arguments: ["packed", "fido-u2f", "apple", "android-key", "android-safetynet", "tpm"])
    func formatsVerify(_ format: String) throws {
        let forge = Self.forge
        let maker: AttestationMaker = switch format {
        case "packed": forge.packed()
        case "fido-u2f": forge.fidoU2F()
        case "apple": forge.apple()
        case "android-key": forge.androidKey()
        case "android-safetynet": forge.safetyNet(at: Date())
        default: forge.tpm()
        }
        var tamper = Tamper()
        tamper.attestation = maker
        var harness = Harness()
        let untrusted = try harness.register(tamper: tamper).get()
        #expect(untrusted.format == format)
        guard case .untrusted = untrusted.trust else { Issue.record("trusted without anchors"); return }
        harness.rp.trustAnchors = [forge.ca]
        let trusted = try harness.register(tamper: tamper).get()
        #expect(trusted.trust == .trusted)
        let expectedType: AttestationType = switch format {
        case "apple": .anonca
        case "tpm": .attca
        default: .basic
        }
        #expect(trusted.attestationType == expectedType)
        // The same chain, judged a year later, no longer verifies.
        let later = try harness.register(tamper: tamper, now: Date().addingTimeInterval(86400 * 400))
        if format == "android-safetynet" {
            #expect(later.reason == .attestationInvalid)  // the JWS timestamp is stale first
        } else {
            guard case .untrusted = try later.get().trust else { Issue.record("expired chain trusted"); return }
        }
    }

    @Test("none and packed self attestation, every algorithm", arguments: COSEAlgorithm.all)
    func algorithms(_ algorithm: COSEAlgorithm) throws {
        for attestation in ["none", "packed"] {
            var settings = SoftwareAuthenticator.Settings()
            settings.attestation = attestation
            let harness = Harness(settings: settings)
            let result = try harness.register(algorithm: algorithm).get()
            #expect(result.algorithm == algorithm)
            #expect(result.attestationType == (attestation == "none" ? .none : .self))
            #expect(result.trust == .notApplicable)
            #expect(result.backupEligible && result.backupState && result.userVerified)
        }
    }
}
