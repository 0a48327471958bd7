internal import COpenSSL
public import Foundation

/// An X.509 certificate (RFC 5280) held by OpenSSL, with its DER kept as received.
public final class Certificate: @unchecked Sendable {
    let x509: OpaquePointer
    /// The certificate exactly as it was given.
    public let der: [UInt8]

    /// One extension: its OID in dotted-decimal, criticality and the DER inside `extnValue`.
    public struct Extension: Sendable, Equatable {
        public let oid: String
        public let critical: Bool
        public let value: [UInt8]
    }

    /// Longest certificate accepted, in bytes.
    public static let maxLength = 16 * 1024

    /// Parses one DER certificate; the whole input must be consumed.
    public init(der: [UInt8]) throws {
        guard !der.isEmpty, der.count <= Certificate.maxLength else {
            throw CryptoError(.invalidEncoding, "certificate size out of range")
        }
        guard let parsed = parseWholeDER(der, { d2i_X509(nil, $0, $1) }, free: X509_free) else { throw CryptoError(.invalidEncoding, "not a DER certificate: \(openSSLError())") }
        x509 = parsed
        self.der = der
    }

    init(owning x509: OpaquePointer) throws {
        self.x509 = x509
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(x509, &out)
        guard length > 0, let out else { throw CryptoError(.library, "i2d_X509") }
        defer { signet_openssl_free(out) }
        der = Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    deinit { X509_free(x509) }

    /// Every certificate in a PEM text, in order.
    public static func parsePEM(_ text: String) throws -> [Certificate] {
        var result: [Certificate] = []
        var body: String?
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "-----BEGIN CERTIFICATE-----" {
                body = ""
            } else if trimmed == "-----END CERTIFICATE-----" {
                guard let b = body, let data = Data(base64Encoded: b) else {
                    throw CryptoError(.invalidEncoding, "bad PEM block")
                }
                result.append(try Certificate(der: [UInt8](data)))
                body = nil
            } else if body != nil {
                body! += trimmed
            }
        }
        return result
    }

    /// The X.509 version: 1, 2 or 3.
    public var version: Int { Int(X509_get_version(x509)) + 1 }

    /// The subject public key.
    public func publicKey() throws -> PublicKey {
        guard let pkey = X509_get_pubkey(x509) else {
            throw CryptoError(.invalidEncoding, "unusable subject public key: \(openSSLError())")
        }
        return try PublicKey(owning: pkey)
    }

    /// Every extension, in order.
    public var extensions: [Extension] {
        (0..<X509_get_ext_count(x509)).compactMap { index in
            guard let ext = X509_get_ext(x509, index), let data = X509_EXTENSION_get_data(ext) else { return nil }
            let bytes = Array(UnsafeBufferPointer(start: ASN1_STRING_get0_data(data), count: Int(ASN1_STRING_length(data))))
            return Extension(
                oid: Certificate.text(X509_EXTENSION_get_object(ext)), critical: X509_EXTENSION_get_critical(ext) == 1,
                value: bytes)
        }
    }

    /// The extension with `oid`, if present.
    public func `extension`(_ oid: String) -> Extension? { extensions.first { $0.oid == oid } }

    /// The subject's attributes in order, as (OID, value) pairs.
    public var subject: [(oid: String, value: String)] { Certificate.entries(X509_get_subject_name(x509)) }

    /// The issuer's attributes in order.
    public var issuer: [(oid: String, value: String)] { Certificate.entries(X509_get_issuer_name(x509)) }

    /// Whether basicConstraints says this is a CA (RFC 5280 §4.2.1.9); absent means not.
    public var isCA: Bool {
        guard let ext = self.extension("2.5.29.19") else { return false }
        var reader = DERReader(ext.value)
        guard let seq = try? reader.read(DERTag.sequence), reader.isAtEnd else { return false }
        var inner = seq.children
        guard !inner.isAtEnd, let first = try? inner.read(), first.is(.universal, DERTag.boolean) else { return false }
        return first.content.first == 0xff
    }

    /// Start of the validity period.
    public var notBefore: Date? { Certificate.date(X509_get0_notBefore(x509)) }
    /// End of the validity period.
    public var notAfter: Date? { Certificate.date(X509_get0_notAfter(x509)) }

    /// Whether `date` falls within the validity period.
    public func isValid(at date: Date) -> Bool {
        guard let from = notBefore, let to = notAfter else { return false }
        return from <= date && date <= to
    }

    /// Where the issuer publishes the list that would revoke this certificate (RFC 5280
    /// §4.2.1.13): each distribution point's `fullName` URIs, in order; empty without the
    /// extension, or when it does not read as one.
    public var crlDistributionPoints: [String] {
        guard let ext = self.extension("2.5.29.31") else { return [] }
        var reader = DERReader(ext.value)
        guard let points = try? reader.read(DERTag.sequence), reader.isAtEnd else { return [] }
        var uris: [String] = []
        var list = points.children
        while !list.isAtEnd {
            guard let point = try? list.read(), point.is(.universal, DERTag.sequence) else { return [] }
            // distributionPoint [0] { fullName [0] GeneralNames }; a name relative to the issuer,
            // or a point named only by reasons or its CRL issuer, names no place to fetch.
            var fields = point.children
            guard !fields.isAtEnd, let name = try? fields.read(), name.is(.contextSpecific, 0, constructed: true) else { continue }
            var choice = name.children
            guard let full = try? choice.read(), full.is(.contextSpecific, 0, constructed: true) else { continue }
            var names = full.children
            while !names.isAtEnd, let general = try? names.read() {
                // An IA5String; one with a space, a control character or a byte beyond ASCII is
                // no URI to fetch.
                if general.is(.contextSpecific, 6, constructed: false), !general.content.isEmpty, general.content.allSatisfy({ (0x21...0x7e).contains($0) }) {
                    uris.append(String(decoding: general.content, as: UTF8.self))
                }
            }
        }
        return uris
    }

    /// Verifies that `leaf` chains through `intermediates` to one of `anchors`, with signatures,
    /// validity at `time` and CA constraints checked by OpenSSL's RFC 5280 path validation.
    /// An anchor need not be self-signed. With `crls`, `leaf` must also be covered by one of
    /// them, issued and signed by its issuer and current at `time`, that does not list it (RFC
    /// 5280 §6.3). Returns `nil` on success, else what failed.
    public static func verifyChain(
        leaf: Certificate, intermediates: [Certificate], anchors: [Certificate], at time: Date, crls: [CertificateRevocationList]? = nil
    ) -> String? {
        guard !anchors.isEmpty else { return "no trust anchor" }
        guard let store = X509_STORE_new() else { return "X509_STORE_new" }
        defer { X509_STORE_free(store) }
        for anchor in anchors { X509_STORE_add_cert(store, anchor.x509) }
        for list in crls ?? [] { X509_STORE_add_crl(store, list.crl) }
        guard let untrusted = signet_sk_x509_new() else { return "sk_X509_new" }
        defer { signet_sk_x509_free(untrusted) }
        for cert in intermediates { _ = signet_sk_x509_push(untrusted, cert.x509) }
        guard let ctx = X509_STORE_CTX_new() else { return "X509_STORE_CTX_new" }
        defer { X509_STORE_CTX_free(ctx) }
        guard X509_STORE_CTX_init(ctx, store, leaf.x509, untrusted) == 1 else { return openSSLError() }
        let param = X509_STORE_CTX_get0_param(ctx)
        X509_VERIFY_PARAM_set_time(param, time_t(time.timeIntervalSince1970.rounded(.down)))
        X509_VERIFY_PARAM_set_flags(param, UInt(X509_V_FLAG_PARTIAL_CHAIN) | (crls == nil ? 0 : UInt(X509_V_FLAG_CRL_CHECK)))
        let ok = X509_verify_cert(ctx) == 1
        defer { _ = signet_err_get_and_clear() }
        if ok { return nil }
        return String(cString: X509_verify_cert_error_string(Int(X509_STORE_CTX_get_error(ctx))))
    }

    static func text(_ object: OpaquePointer?) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let n = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        return n > 0 ? cString(buffer) : ""
    }

    static func entries(_ name: OpaquePointer?) -> [(oid: String, value: String)] {
        guard let name else { return [] }
        return (0..<X509_NAME_entry_count(name)).compactMap { index in
            guard let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry) else { return nil }
            let bytes = UnsafeBufferPointer(start: ASN1_STRING_get0_data(data), count: Int(ASN1_STRING_length(data)))
            return (text(X509_NAME_ENTRY_get_object(entry)), String(decoding: bytes, as: UTF8.self))
        }
    }

    static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var tm = tm()
        guard ASN1_TIME_to_tm(time, &tm) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&tm)))
    }
}
