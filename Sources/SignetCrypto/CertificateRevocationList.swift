internal import COpenSSL
public import Foundation

/// A certificate revocation list (RFC 5280 §5) held by OpenSSL. It is judged only inside
/// ``Certificate/verifyChain(leaf:intermediates:anchors:at:crls:)``: its issuer and signature,
/// its `nextUpdate`, and the serial numbers it lists.
public final class CertificateRevocationList: @unchecked Sendable {
    let crl: OpaquePointer

    /// Longest list accepted, in bytes (a public CA's lists are tens of KiB; the largest a few MiB).
    public static let maxLength = 8 << 20

    /// Parses one DER list; the whole input must be consumed.
    public init(der: [UInt8]) throws {
        guard !der.isEmpty, der.count <= Self.maxLength else { throw CryptoError(.invalidEncoding, "revocation list size out of range") }
        guard let parsed = parseWholeDER(der, { d2i_X509_CRL(nil, $0, $1) }, free: X509_CRL_free) else { throw CryptoError(.invalidEncoding, "not a DER revocation list: \(openSSLError())") }
        crl = parsed
    }

    init(owning crl: OpaquePointer) { self.crl = crl }

    deinit { X509_CRL_free(crl) }

    /// The list as DER.
    public var der: [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_CRL(crl, &out)
        guard length > 0, let out else { return [] }
        defer { signet_openssl_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// Signs a version 2 list for `issuer` with `issuerKey` that revokes `serials` (RFC 5280
    /// §5.1). Signet uses it for tests, as ``CertificateBuilder``; it never issues a list a
    /// relying party relies on.
    public static func sign(issuer: Certificate, issuerKey: PrivateKey, revoked serials: [Int], thisUpdate: Date, nextUpdate: Date) throws -> CertificateRevocationList {
        guard let list = X509_CRL_new() else { throw CryptoError(.library, "X509_CRL_new") }
        let made = CertificateRevocationList(owning: list)
        guard let this = ASN1_TIME_set(nil, time_t(thisUpdate.timeIntervalSince1970)) else { throw CryptoError(.library, openSSLError()) }
        defer { ASN1_TIME_free(this) }
        guard let next = ASN1_TIME_set(nil, time_t(nextUpdate.timeIntervalSince1970)) else { throw CryptoError(.library, openSSLError()) }
        defer { ASN1_TIME_free(next) }
        guard X509_CRL_set_version(list, 1) == 1, X509_CRL_set_issuer_name(list, X509_get_subject_name(issuer.x509)) == 1,
              X509_CRL_set1_lastUpdate(list, this) == 1, X509_CRL_set1_nextUpdate(list, next) == 1
        else { throw CryptoError(.library, openSSLError()) }
        for serial in serials {
            guard let entry = X509_REVOKED_new() else { throw CryptoError(.library, "X509_REVOKED_new") }
            guard let number = ASN1_INTEGER_new() else { X509_REVOKED_free(entry); throw CryptoError(.library, "ASN1_INTEGER_new") }
            defer { ASN1_INTEGER_free(number) }
            guard ASN1_INTEGER_set(number, serial) == 1, X509_REVOKED_set_serialNumber(entry, number) == 1,
                  X509_REVOKED_set_revocationDate(entry, this) == 1, X509_CRL_add0_revoked(list, entry) == 1
            else { X509_REVOKED_free(entry); throw CryptoError(.library, openSSLError()) }
        }
        let md: OpaquePointer? = if case .edwards = issuerKey.publicKey.kind { nil } else { EVP_sha256() }
        guard X509_CRL_sort(list) == 1, X509_CRL_sign(list, issuerKey.pkey, md) > 0 else { throw CryptoError(.library, openSSLError()) }
        return made
    }
}
