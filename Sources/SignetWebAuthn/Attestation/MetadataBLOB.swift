public import SignetCrypto
public import Foundation

/// The FIDO Metadata Service's BLOB (FIDO MDS 3.0 §3.1.6–3.1.7): a JWS, signed under the
/// Metadata Service's root, listing authenticator models by AAGUID with the roots their
/// attestations chain to (Metadata Statement, `attestationRootCertificates`) and the status
/// reports of their certification and compromises. Verified as §3.2 asks before anything in it
/// is used; FIDO2 entries (those with an `aaguid`) are kept, U2F and UAF ones are passed over.
public struct MetadataBLOB: Sendable {
    /// Why a BLOB was refused: ``part`` names what failed (`jws`, `x5c`, `alg`, `chain`,
    /// `signature`, `payload`, `size`), ``detail`` says how.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public let part: String
        public let detail: String
        public var description: String { "\(part): \(detail)" }
    }

    /// One authenticator model (MDS 3.0 §3.1.1 `MetadataBLOBPayloadEntry`).
    public struct Entry: Sendable {
        /// The Metadata Statement's `description`: the model's name.
        public let description: String?
        /// The Metadata Statement's `attestationRootCertificates`.
        public let roots: [Certificate]
        /// `statusReports`: each status (§3.1.4 `AuthenticatorStatus`) with its `effectiveDate`
        /// (`YYYY-MM-DD`, or `nil` when the report has none).
        public let statuses: [(status: String, effectiveDate: String?)]
        /// For each use, the earliest report that refuses it and when it takes effect (the
        /// start of its UTC day; a report with no date always has).
        let refusals: [Use: (status: String, since: Date)]

        init(description: String?, roots: [Certificate], statuses: [(status: String, effectiveDate: String?)]) {
            self.description = description
            self.roots = roots
            self.statuses = statuses
            var refusals: [Use: (status: String, since: Date)] = [:]
            for use in [Use.registration, .signIn] {
                for report in statuses where use.refusedStatuses.contains(report.status) {
                    let since = report.effectiveDate.flatMap(MetadataBLOB.date) ?? .distantPast
                    if since < refusals[use]?.since ?? .distantFuture { refusals[use] = (report.status, since) }
                }
            }
            self.refusals = refusals
        }

        /// The status that refuses this model for `use` at `now`, if a report says so and its
        /// date has come.
        public func refusal(for use: Use, at now: Date) -> String? {
            guard let refusal = refusals[use], now >= refusal.since else { return nil }
            return refusal.status
        }
    }

    /// What an authenticator is about to do: register a new credential, or sign in with one.
    public enum Use: Sendable, Hashable {
        case registration, signIn

        /// The statuses (MDS 3.0 §3.1.4) that refuse it. A compromised attestation key makes new
        /// attestations worthless but leaves credentials made before it as good as they were;
        /// the others say a model's credentials themselves are not to be trusted.
        public var refusedStatuses: Set<String> {
            let credentials: Set = ["REVOKED", "USER_VERIFICATION_BYPASS", "USER_KEY_REMOTE_COMPROMISE", "USER_KEY_PHYSICAL_COMPROMISE"]
            return self == .registration ? credentials.union(["ATTESTATION_KEY_COMPROMISE"]) : credentials
        }
    }

    /// The BLOB's serial number (`no`).
    public let number: Int64
    /// `nextUpdate` (`YYYY-MM-DD`): the day a newer BLOB is due at the latest.
    public let nextUpdate: String
    /// The start (UTC) of ``nextUpdate``.
    public var nextUpdateDate: Date { Self.date(nextUpdate) ?? .distantPast }
    /// The FIDO2 entries by AAGUID (lower-case UUID text).
    public let entries: [String: Entry]
    /// What in the entries was passed over, and how (``init(payload:)``).
    public let defects: [String]
    /// The certificates of `x5c`, the signer's first; empty when the root's own key signed.
    public private(set) var signingChain: [Certificate] = []

    /// The largest BLOB read (the Metadata Service's is a few MiB).
    public static let maxLength = 64 << 20
    /// The JWS algorithms the BLOB may be signed with (MDS 3.0 §3.1.7; the service signs with RS256).
    public static let algorithms: Set<String> = ["RS256", "RS384", "RS512", "PS256", "ES256"]

    /// Verifies `jws` (MDS 3.0 §3.2): the signing chain of `x5c` reaches `anchor` at `now`
    /// (with no `x5c`, the anchor's own key signs), the signature verifies with an accepted
    /// `alg`, and the payload is a well-formed `MetadataBLOBPayload`.
    public init(jws: [UInt8], anchor: Certificate, now: Date) throws(Refusal) {
        guard jws.count <= Self.maxLength else { throw Refusal(part: "size", detail: "\(jws.count) bytes, more than \(Self.maxLength)") }
        let trimmed = Array(jws.drop { Self.isSpace($0) }.reversed().drop { Self.isSpace($0) }.reversed())
        let signed: CertifiedJWS
        do {
            signed = try CertifiedJWS(trimmed, json: StrictJSON(maxDepth: 32, maxLength: Self.maxLength), maxCertificates: 8,
                                      algorithms: Self.algorithms, fallbackKey: try? anchor.publicKey())
        } catch {
            throw Refusal(part: error.part, detail: error.detail)
        }
        if let leaf = signed.chain.first,
           let failure = Certificate.verifyChain(leaf: leaf, intermediates: Array(signed.chain.dropFirst()), anchors: [anchor], at: now) {
            throw Refusal(part: "chain", detail: "the signing chain does not reach the configured root: \(failure)")
        }
        try self.init(payload: signed.payload)
        signingChain = signed.chain
    }

    /// Why the signing chain is revoked, or `nil` (MDS 3.0 §3.2: the chain is checked against
    /// its certificates' revocation lists). Each certificate of ``signingChain`` that names a
    /// distribution point must be covered by one of `crls`, issued and signed by its issuer,
    /// current at `now`, and not list it.
    public func revocationRefusal(anchor: Certificate, now: Date, crls: [CertificateRevocationList]) -> Refusal? {
        for (index, certificate) in signingChain.enumerated() where !certificate.crlDistributionPoints.isEmpty {
            if let failure = Certificate.verifyChain(leaf: certificate, intermediates: Array(signingChain.dropFirst(index + 1)), anchors: [anchor], at: now, crls: crls) {
                return Refusal(part: "revocation", detail: "x5c[\(index)]: \(failure)")
            }
        }
        return nil
    }

    /// The payload (MDS 3.0 §3.1.6 `MetadataBLOBPayload`) alone, already verified (and fuzzed).
    /// A defect of one entry does not refuse the whole BLOB (its signature says the service
    /// wrote it); it is passed over on the safe side and listed in ``defects``: an entry with no
    /// readable AAGUID and a root that does not read trust nothing, a status report with a date
    /// that does not read counts from always, and one without a status says nothing.
    package init(payload: JSONValue) throws(Refusal) {
        guard let number = payload["no"]?.int64, number >= 0 else { throw Refusal(part: "payload", detail: "no is not a serial number") }
        guard let next = payload["nextUpdate"]?.string, Self.date(next) != nil else { throw Refusal(part: "payload", detail: "nextUpdate is not a YYYY-MM-DD date") }
        guard let list = payload["entries"]?.array else { throw Refusal(part: "payload", detail: "entries is not a list") }
        var entries: [String: Entry] = [:]
        var defects: [String] = []
        for (index, item) in list.enumerated() {
            guard item.object != nil else {
                defects.append("entries[\(index)] is not an object")
                continue
            }
            guard let text = item["aaguid"] else { continue }
            guard let aaguid = text.string.flatMap(UUID.init(uuidString:))?.uuidString.lowercased() else {
                defects.append("entries[\(index)].aaguid is not a UUID")
                continue
            }
            let entry = Self.entry(item, name: aaguid, defects: &defects)
            if let first = entries[aaguid] {
                // Listed twice: the first's roots, and the reports of both.
                defects.append("\(aaguid) is listed twice; the second entry's roots are not trusted")
                entries[aaguid] = Entry(description: first.description, roots: first.roots, statuses: first.statuses + entry.statuses)
            } else {
                entries[aaguid] = entry
            }
        }
        self.number = number
        nextUpdate = next
        self.entries = entries
        self.defects = defects
    }

    static func entry(_ item: JSONValue, name: String, defects: inout [String]) -> Entry {
        let statement = item["metadataStatement"]
        var roots: [Certificate] = []
        for (n, root) in (statement?["attestationRootCertificates"]?.array ?? []).enumerated() {
            guard let text = root.string, let data = Data(base64Encoded: text), let certificate = try? Certificate(der: [UInt8](data)) else {
                defects.append("\(name): attestationRootCertificates[\(n)] is not a base64 DER certificate, and is not trusted")
                continue
            }
            roots.append(certificate)
        }
        var statuses: [(status: String, effectiveDate: String?)] = []
        for (n, report) in (item["statusReports"]?.array ?? []).enumerated() {
            guard let status = report["status"]?.string else {
                defects.append("\(name): statusReports[\(n)] has no status")
                continue
            }
            var date = report["effectiveDate"]?.string
            if let text = date, Self.date(text) == nil {
                defects.append("\(name): statusReports[\(n)] (\(status.prefix(40))) has an effectiveDate that is not YYYY-MM-DD; it counts from always")
                date = nil
            }
            statuses.append((status, date))
        }
        return Entry(description: statement?["description"]?.string, roots: roots, statuses: statuses)
    }

    /// The start (UTC) of a `YYYY-MM-DD` day, the form of `nextUpdate` and `effectiveDate`.
    public static func date(_ day: String) -> Date? {
        guard isDay(day) else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.date(from: day)
    }

    static func isDay(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count == 10 && bytes[4] == UInt8(ascii: "-") && bytes[7] == UInt8(ascii: "-")
            && bytes.enumerated().allSatisfy { $0.offset == 4 || $0.offset == 7 || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0.element) }
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
}
