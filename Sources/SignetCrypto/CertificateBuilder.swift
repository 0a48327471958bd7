internal import COpenSSL
public import Foundation

/// Builds and signs X.509 v3 certificates. Signet uses it for the software authenticator's
/// attestation certificates and for tests; it never signs anything a relying party trusts.
public struct CertificateBuilder {
    public var subject: [(oid: String, value: String)]
    public var serial: Int
    public var notBefore: Date
    public var notAfter: Date
    public var version: Int = 3
    /// Extensions as (OID, critical, DER value).
    public var extensions: [(oid: String, critical: Bool, value: [UInt8])] = []

    public init(subject: [(oid: String, value: String)], serial: Int = 1, notBefore: Date, notAfter: Date) {
        self.subject = subject
        self.serial = serial
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// Signs a certificate for `publicKey`, issued by `issuer` (self-issued when `nil`) with `issuerKey`.
    public func sign(publicKey: PublicKey, issuer: Certificate?, issuerKey: PrivateKey) throws -> Certificate {
        guard let x = X509_new() else { throw CryptoError(.library, "X509_new") }
        var owned = true
        defer { if owned { X509_free(x) } }
        guard X509_set_version(x, version - 1) == 1,
              ASN1_INTEGER_set(X509_get_serialNumber(x), serial) == 1,
              ASN1_TIME_set(X509_getm_notBefore(x), time_t(notBefore.timeIntervalSince1970)) != nil,
              ASN1_TIME_set(X509_getm_notAfter(x), time_t(notAfter.timeIntervalSince1970)) != nil,
              X509_set_pubkey(x, publicKey.pkey) == 1
        else { throw CryptoError(.library, openSSLError()) }
        let name = try Self.name(subject)
        defer { X509_NAME_free(name) }
        guard X509_set_subject_name(x, name) == 1,
              X509_set_issuer_name(x, issuer.map { X509_get_subject_name($0.x509) } ?? name) == 1
        else { throw CryptoError(.library, openSSLError()) }
        for ext in extensions {
            guard let object = OBJ_txt2obj(ext.oid, 1) else { throw CryptoError(.invalidEncoding, "bad OID \(ext.oid)") }
            defer { ASN1_OBJECT_free(object) }
            guard let octets = ASN1_OCTET_STRING_new() else { throw CryptoError(.library, "ASN1_OCTET_STRING_new") }
            defer { ASN1_OCTET_STRING_free(octets) }
            guard ext.value.withUnsafeBufferPointer({ ASN1_OCTET_STRING_set(octets, $0.baseAddress, Int32($0.count)) }) == 1,
                  let created = X509_EXTENSION_create_by_OBJ(nil, object, ext.critical ? 1 : 0, octets)
            else { throw CryptoError(.library, openSSLError()) }
            defer { X509_EXTENSION_free(created) }
            guard X509_add_ext(x, created, -1) == 1 else { throw CryptoError(.library, openSSLError()) }
        }
        let md: OpaquePointer? = if case .edwards = issuerKey.publicKey.kind { nil } else { EVP_sha256() }
        guard X509_sign(x, issuerKey.pkey, md) > 0 else { throw CryptoError(.library, openSSLError()) }
        owned = false
        return try Certificate(owning: x)
    }

    private static func name(_ entries: [(oid: String, value: String)]) throws -> OpaquePointer {
        guard let name = X509_NAME_new() else { throw CryptoError(.library, "X509_NAME_new") }
        for entry in entries {
            guard let object = OBJ_txt2obj(entry.oid, 1) else {
                X509_NAME_free(name)
                throw CryptoError(.invalidEncoding, "bad OID \(entry.oid)")
            }
            defer { ASN1_OBJECT_free(object) }
            let bytes = Array(entry.value.utf8)
            guard bytes.withUnsafeBufferPointer({
                X509_NAME_add_entry_by_OBJ(name, object, MBSTRING_UTF8, $0.baseAddress, Int32($0.count), -1, 0)
            }) == 1 else {
                X509_NAME_free(name)
                throw CryptoError(.library, openSSLError())
            }
        }
        return name
    }
}
