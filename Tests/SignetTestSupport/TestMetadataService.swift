package import Foundation
package import SignetCrypto
package import SignetWebAuthn

/// A throw-away FIDO Metadata Service: a root, a signing certificate it issues, and BLOBs
/// (FIDO MDS 3.0 §3.1.6–3.1.7) signed with it, for the tests of `attestation_metadata`.
package struct TestMetadataService {
    package let rootKey: PrivateKey
    package let root: Certificate
    package let signerKey: PrivateKey
    package let signer: Certificate
    /// The JWS `alg` of the signer's key: `ES256` (P-256) or `RS256` (RSA 2048, as the service signs).
    package let alg: String
    /// With `intermediate`, the CA between the root and the signer, as the service's chain has one.
    package let intermediateKey: PrivateKey?
    package let intermediate: Certificate?

    /// One authenticator model of a BLOB.
    package struct Model {
        package var aaguid: String
        package var description: String
        package var roots: [Certificate]
        package var statuses: [(status: String, effectiveDate: String?)]

        package init(aaguid: String, description: String, roots: [Certificate], statuses: [(status: String, effectiveDate: String?)] = [("FIDO_CERTIFIED_L1", "2024-01-10")]) {
            self.aaguid = aaguid
            self.description = description
            self.roots = roots
            self.statuses = statuses
        }
    }

    /// With `revocationLists` (a base URL), the signer names `{base}/signer.crl` as where its
    /// issuer lists it if revoked, and the intermediate `{base}/intermediate.crl`. Serial
    /// numbers: the root 1, the signer 2, the intermediate 3.
    package init(alg: String = "ES256", signerValid: ClosedRange<Date> = Date().addingTimeInterval(-86400)...Date().addingTimeInterval(86400 * 365),
                 intermediate withIntermediate: Bool = false, revocationLists base: String? = nil) throws {
        self.alg = alg
        rootKey = try PrivateKey.generate(.ec(.p256))
        var builder = CertificateBuilder(subject: [("2.5.4.3", "Signet Test Metadata Root")], notBefore: Date().addingTimeInterval(-86400 * 30), notAfter: Date().addingTimeInterval(86400 * 3650))
        builder.extensions = [("2.5.29.19", true, DER.sequence([DER.boolean(true)]))]
        root = try builder.sign(publicKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
        if withIntermediate {
            let key = try PrivateKey.generate(.ec(.p256))
            var ca = CertificateBuilder(subject: [("2.5.4.3", "Signet Test Metadata CA")], serial: 3, notBefore: Date().addingTimeInterval(-86400 * 30), notAfter: Date().addingTimeInterval(86400 * 1000))
            ca.extensions = [("2.5.29.19", true, DER.sequence([DER.boolean(true)]))] + (base.map { [Self.distributionPoint($0 + "/intermediate.crl")] } ?? [])
            (intermediateKey, intermediate) = (key, try ca.sign(publicKey: key.publicKey, issuer: root, issuerKey: rootKey))
        } else {
            (intermediateKey, intermediate) = (nil, nil)
        }
        signerKey = try PrivateKey.generate(alg == "RS256" ? .rsa(bits: 2048) : .ec(.p256))
        var leaf = CertificateBuilder(subject: [("2.5.4.3", "Signet Test Metadata Signer")], serial: 2, notBefore: signerValid.lowerBound, notAfter: signerValid.upperBound)
        leaf.extensions = [("2.5.29.19", true, DER.sequence([]))] + (base.map { [Self.distributionPoint($0 + "/signer.crl")] } ?? [])
        signer = try leaf.sign(publicKey: signerKey.publicKey, issuer: intermediate ?? root, issuerKey: intermediateKey ?? rootKey)
    }

    /// A cRLDistributionPoints extension (RFC 5280 §4.2.1.13) naming `uri` as the one point's full name.
    package static func distributionPoint(_ uri: String) -> (oid: String, critical: Bool, value: [UInt8]) {
        ("2.5.29.31", false, DER.sequence([DER.sequence([DER.tagged(0, DER.tagged(0, DER.tagged(6, constructed: false, Array(uri.utf8))))])]))
    }

    /// A revocation list, as DER, of the root (or, with `ofIntermediate`, the intermediate)
    /// revoking `serials`, made a day ago and current until `nextUpdate`; signed by `key`
    /// instead of the issuer's own when given.
    package func revocationList(ofIntermediate: Bool = false, revoking serials: [Int] = [], nextUpdate: Date = Date().addingTimeInterval(86400 * 7),
                                key: PrivateKey? = nil) throws -> [UInt8] {
        let (issuer, issuerKey) = ofIntermediate ? (intermediate!, intermediateKey!) : (root, rootKey)
        return try CertificateRevocationList.sign(issuer: issuer, issuerKey: key ?? issuerKey, revoked: serials,
                                                  thisUpdate: Date().addingTimeInterval(-86400), nextUpdate: nextUpdate).der
    }

    /// The root as a PEM file in `directory`, as `attestation_metadata.root_file` names it.
    package func rootFile(in directory: URL) throws -> String { try Self.pemFile(root, in: directory) }

    package static func pemFile(_ certificate: Certificate, in directory: URL) throws -> String {
        let base64 = Data(certificate.der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        let path = directory.appendingPathComponent("root-\(UUID().uuidString).pem").path
        try "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// `date`'s UTC day as `YYYY-MM-DD`.
    package static func day(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// A `MetadataBLOBPayload` listing `models`.
    package static func payload(number: Int = 42, nextUpdate: String = TestMetadataService.day(Date().addingTimeInterval(86400 * 30)), models: [Model]) -> JSONValue {
        .object([
            "legalHeader": .string("Signet test data; not the FIDO Alliance's."),
            "no": .int(number), "nextUpdate": .string(nextUpdate),
            "entries": .array(models.map { model in
                .object([
                    "aaguid": .string(model.aaguid),
                    "metadataStatement": .object([
                        "aaguid": .string(model.aaguid), "description": .string(model.description), "schema": .int(3),
                        "attestationRootCertificates": .array(model.roots.map { .string(Data($0.der).base64EncodedString()) }),
                    ]),
                    "statusReports": .array(model.statuses.map { report in
                        var object: JSONObject = ["status": .string(report.status)]
                        if let date = report.effectiveDate { object["effectiveDate"] = .string(date) }
                        return .object(object)
                    }),
                    "timeOfLastStatusChange": .string("2024-01-10"),
                ])
            } + [
                // A U2F entry, which has no AAGUID: passed over.
                .object(["attestationCertificateKeyIdentifiers": .array([.string("923881fe2f214ee465484371aeb72e97f5a58e0a")]),
                         "statusReports": .array([.object(["status": .string("FIDO_CERTIFIED")])])]),
            ]),
        ])
    }

    /// The BLOB: a compact JWS of `payload` with `x5c` [signer] (or `header` as given), signed
    /// by the signer's key.
    package func blob(_ payload: JSONValue, header: JSONObject? = nil) throws -> [UInt8] {
        let chain = [signer] + (intermediate.map { [$0] } ?? [])
        let header = header ?? ["alg": .string(alg), "typ": .string("JWT"), "x5c": .array(chain.map { .string(Data($0.der).base64EncodedString()) })]
        return try Self.sign(header: header, payload: payload.serializedBytes, key: signerKey)
    }

    /// `header.payload.signature`, signed by `key` under the header's `alg` (ES256 or RS256).
    package static func sign(header: JSONObject, payload: [UInt8], key: PrivateKey) throws -> [UInt8] {
        let input = Array((Base64URL.encode(JSONValue.object(header).serializedBytes) + "." + Base64URL.encode(payload)).utf8)
        let signature = header["alg"] == .string("RS256") ? try key.sign(input, scheme: .rsaPKCS1(.sha256)) : try key.signES256(input)
        return input + Array(("." + Base64URL.encode(signature)).utf8)
    }
}
