internal import COpenSSL
import Foundation

/// An `EVP_MD_CTX` on which `EVP_DigestVerifyInit` or `EVP_DigestSignInit` was done once, for
/// one key and digest, copied for each signature (`EVP_MD_CTX_copy_ex`) instead of initialising
/// a new context: the init fetches the digest and signature implementations from the provider,
/// about 25k instructions a call (OpenSSL 3, `EVP_DigestSignInit(3)`). Made on first use; the
/// template itself is never used, only copied, so threads share it.
final class ContextTemplate: @unchecked Sendable {
    /// `SIGNET_OPENSSL_TEMPLATES=0` turns templates off, so the benchmarks can measure both ways.
    static let enabled = ProcessInfo.processInfo.environment["SIGNET_OPENSSL_TEMPLATES"] != "0"

    private let lock = NSLock()
    private var context: OpaquePointer?
    private var made = false

    /// The template for `pkey` and `md` (`sign`: a signing one), or `nil` when templates are off
    /// or the library refused.
    func context(pkey: OpaquePointer, md: OpaquePointer?, sign: Bool) -> OpaquePointer? {
        guard Self.enabled else { return nil }
        lock.lock()
        defer { lock.unlock() }
        if !made {
            context = signet_template_new(pkey, md, sign ? 1 : 0)
            made = true
        }
        return context
    }

    deinit { if let context { EVP_MD_CTX_free(context) } }
}
