public import Foundation
public import SignetCrypto

/// A WebAuthn response together with everything needed to verify it, in the schema of Signet's
/// conformance fixtures (`rp_id`, `expected_origin`, `expected_challenge`,
/// `require_user_verification`, `credential`, `verify_at`, stored key and count, trust anchor
/// file). `signet verify` and the fixture tests both run files through this.
public struct ResponseFile: Sendable {
    public enum Ceremony: String, Sendable { case registration, authentication }

    public let ceremony: Ceremony
    let root: JSONObject

    /// Parses the file's JSON. `ceremony` says which kind of response it holds.
    public init(json: [UInt8], ceremony: Ceremony) throws(WebAuthnError) {
        guard let object = try StrictJSON(maxDepth: 16, maxLength: 1 << 20).parse(json).object else {
            throw .malformed("response file is not a JSON object")
        }
        self.root = object
        self.ceremony = ceremony
    }

    /// The trust anchor file named by `attestation_root.trust_anchor_file`, if any.
    public var trustAnchorFile: String? { root["attestation_root"]?["trust_anchor_file"]?.string }

    /// Where ``trustAnchorFile`` is for a response file at `responsePath`: names are relative to
    /// the folder that holds `registration/` (the fixtures' convention).
    public func trustAnchorPath(responsePath: String) -> String? {
        trustAnchorFile.map {
            URL(fileURLWithPath: responsePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent($0).path
        }
    }

    /// Verifies the response. `anchors` are the certificates of ``trustAnchorFile``, loaded by the
    /// caller; `now` is used when the file has no `verify_at`. Returns the result as JSON:
    /// `{"ok": true, ...}` or `{"ok": false, "reason", "detail", "step"}`.
    /// With `metadata` (FIDO MDS 3.0 §3.1.6), a registration's attestation must also chain to
    /// `anchors` or to a root the BLOB lists for its AAGUID, and a model the BLOB reports
    /// compromised is refused with `authenticator_not_allowed`.
    public func verify(anchors: [Certificate], metadata: MetadataBLOB? = nil, now: Date) -> JSONValue {
        do {
            return try run(anchors: anchors, metadata: metadata, now: now)
        } catch {
            return .object([
                "ok": .bool(false), "reason": .string(error.reason.rawValue), "detail": .string(error.detail),
                "step": .string(error.step),
            ])
        }
    }

    private func field<T>(_ name: String, _ get: (JSONValue) -> T?) throws(WebAuthnError) -> T {
        guard let value = root[name].flatMap(get) else { throw .malformed("response file: \(name) missing or of the wrong type") }
        return value
    }

    private func bytes(_ value: JSONValue?, _ name: String) throws(WebAuthnError) -> [UInt8] {
        guard let text = value?.string, let bytes = Base64URL.decode(text) else {
            throw .malformed("\(name) is missing or not base64url")
        }
        return bytes
    }

    private func run(anchors: [Certificate], metadata: MetadataBLOB?, now: Date) throws(WebAuthnError) -> JSONValue {
        let rpID = try field("rp_id") { $0.string }
        let origins: Set<String>
        switch root["expected_origin"] {
        case .string(let s)?: origins = [s]
        case .array(let list)?: origins = Set(list.compactMap(\.string))
        default: throw .malformed("response file: expected_origin missing")
        }
        var rp = RelyingParty(id: rpID, origins: origins)
        rp.allowedAlgorithms = COSEAlgorithm.all
        rp.trustAnchors = anchors
        rp.allowCrossOrigin = root["allow_cross_origin"]?.bool ?? false
        if let top = root["expected_top_origin"]?.string { rp.topOrigins = [top] }
        let challenge = try bytes(root["expected_challenge"], "expected_challenge")
        let requireUV = try field("require_user_verification") { $0.bool }
        guard let credential = root["credential"]?.object, let response = credential["response"]?.object else {
            throw .malformed("response file: credential.response missing")
        }
        let rawID = try bytes(credential["rawId"], "credential.rawId")
        if let id = credential["id"]?.string, Base64URL.decode(id) != rawID {
            throw WebAuthnError(.credentialIdMismatch, "credential.id and credential.rawId differ")
        }
        if let type = credential["type"]?.string, type != "public-key" {
            throw .malformed("credential.type is \"\(type)\", not \"public-key\"")
        }
        let clientData = try bytes(response["clientDataJSON"], "clientDataJSON")

        switch ceremony {
        case .registration:
            var time = now
            if let text = root["verify_at"]?.string {
                guard let date = ResponseFile.parseDate(text) else { throw .malformed("verify_at is not an ISO-8601 time") }
                time = date
            }
            let result = try rp.verifyRegistration(
                RegistrationRequest(
                    clientDataJSON: clientData, attestationObject: try bytes(response["attestationObject"], "attestationObject"),
                    rawID: rawID, expectedChallenge: challenge, requireUserVerification: requireUV),
                now: time)
            var trusted: JSONValue
            switch result.trust {
            case .notApplicable: trusted = .null
            case .trusted: trusted = .bool(true)
            case .untrusted(let why):
                if trustAnchorFile != nil && metadata == nil {
                    throw WebAuthnError(.attestationUntrusted, "attestation chain does not reach the trust anchor: \(why)", step: "7.1 step 24")
                }
                trusted = .bool(false)
            }
            let aaguid = result.aaguid.uuidString.lowercased()
            var listed: JSONValue?
            if let metadata {
                let entry = metadata.entries[aaguid]
                guard let leaf = result.attestationChain.first, Certificate.verifyChain(
                    leaf: leaf, intermediates: Array(result.attestationChain.dropFirst()), anchors: anchors + (entry?.roots ?? []), at: time) == nil
                else {
                    throw WebAuthnError(.attestationUntrusted, "the attestation chains neither to a trust anchor nor to a root the metadata lists for AAGUID \(aaguid)", step: "7.1 step 24")
                }
                trusted = .bool(true)
                if let status = entry?.refusal(for: .registration, at: time) {
                    throw WebAuthnError(.init(rawValue: "authenticator_not_allowed"), "the metadata reports AAGUID \(aaguid) as \(status)", step: "MDS 3.0 §3.1.4")
                }
                listed = entry.map { .object(["description": $0.description.map(JSONValue.string) ?? .null, "statuses": .array($0.statuses.map { .string($0.status) })]) } ?? .null
            }
            var answer: JSONObject = [
                "ok": .bool(true), "ceremony": .string("registration"), "fmt": .string(result.format),
                "alg": .int(result.algorithm.rawValue), "credential_id": .string(Base64URL.encode(result.credentialID)),
                "sign_count": .int(result.signCount), "aaguid": .string(result.aaguid.uuidString.lowercased()),
                "attestation_type": .string(result.attestationType.rawValue), "attestation_trusted": trusted,
                "user_verified": .bool(result.userVerified), "backup_eligible": .bool(result.backupEligible),
                "backup_state": .bool(result.backupState), "credential_public_key": .string(Base64URL.encode(result.publicKey)),
            ]
            answer["metadata"] = listed
            return .object(answer)
        case .authentication:
            let storedKey = try bytes(root["credential_public_key"], "credential_public_key")
            let storedCount = try field("credential_current_sign_count") { $0.int64 }
            guard let count = UInt32(exactly: storedCount) else { throw .malformed("credential_current_sign_count out of range") }
            let userHandle = try response["userHandle"].flatMap { value throws(WebAuthnError) -> [UInt8]? in
                value == .null ? nil : try bytes(value, "userHandle")
            }
            let record = CredentialRecord(
                id: rawID, publicKey: storedKey, signCount: count, backupEligible: root["credential_backup_eligible"]?.bool,
                userHandle: userHandle ?? [])
            let result = try rp.verifyAuthentication(
                AuthenticationRequest(
                    credentialID: rawID, clientDataJSON: clientData,
                    authenticatorData: try bytes(response["authenticatorData"], "authenticatorData"),
                    signature: try bytes(response["signature"], "signature"), userHandle: userHandle,
                    expectedChallenge: challenge, requireUserVerification: requireUV),
                credential: record, userIdentified: true)
            if case .regression(let stored, let received) = result.signCount {
                throw WebAuthnError(.counterRegression, "signCount \(received) is not greater than the stored \(stored): possible cloned authenticator", step: "7.2 step 23")
            }
            let outcome = result.signCount == .bothZero ? "both_zero" : "increased"
            return .object([
                "ok": .bool(true), "ceremony": .string("authentication"), "alg": .int(result.algorithm.rawValue),
                "new_sign_count": .int(result.newSignCount), "sign_count_outcome": .string(outcome),
                "user_verified": .bool(result.userVerified), "backup_eligible": .bool(result.backupEligible),
                "backup_state": .bool(result.backupState),
            ])
        }
    }

    /// Parses an ISO-8601 UTC time with or without fractional seconds.
    public static func parseDate(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let d = plain.date(from: text) { return d }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }
}
