#ifndef SIGNET_COPENSSL_SHIM_H
#define SIGNET_COPENSSL_SHIM_H
/* OpenSSL 3 libcrypto, as SignetCrypto sees it. Function-like macros and parameter names
 * are re-exported here as real functions and static strings: a Swift temporary char*
 * would dangle inside an OSSL_PARAM. */
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/rsa.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/objects.h>
#include <openssl/sha.h>

static const char signet_param_group[] = OSSL_PKEY_PARAM_GROUP_NAME;
static const char signet_param_pub[] = OSSL_PKEY_PARAM_PUB_KEY;
static const char signet_param_priv[] = OSSL_PKEY_PARAM_PRIV_KEY;
static const char signet_param_rsa_n[] = OSSL_PKEY_PARAM_RSA_N;
static const char signet_param_rsa_e[] = OSSL_PKEY_PARAM_RSA_E;
static const char signet_param_ec_x[] = OSSL_PKEY_PARAM_EC_PUB_X;
static const char signet_param_ec_y[] = OSSL_PKEY_PARAM_EC_PUB_Y;

static inline const char *signet_param_name_group(void) { return signet_param_group; }
static inline const char *signet_param_name_pub(void) { return signet_param_pub; }
static inline const char *signet_param_name_priv(void) { return signet_param_priv; }
static inline const char *signet_param_name_rsa_n(void) { return signet_param_rsa_n; }
static inline const char *signet_param_name_rsa_e(void) { return signet_param_rsa_e; }
static inline const char *signet_param_name_ec_x(void) { return signet_param_ec_x; }
static inline const char *signet_param_name_ec_y(void) { return signet_param_ec_y; }

static const int signet_evp_pkey_public_key = EVP_PKEY_PUBLIC_KEY;
static const int signet_evp_pkey_keypair = EVP_PKEY_KEYPAIR;
static const int signet_rsa_pss_saltlen_digest = RSA_PSS_SALTLEN_DIGEST;

static inline void signet_openssl_free(void *p) { OPENSSL_free(p); }

static inline STACK_OF(X509) *signet_sk_x509_new(void) { return sk_X509_new_null(); }
static inline int signet_sk_x509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
static inline void signet_sk_x509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }

/* The error queue is per thread: clear it after a failed call so that it does not grow. */
static inline unsigned long signet_err_get_and_clear(void) {
    unsigned long e = ERR_peek_last_error();
    ERR_clear_error();
    return e;
}
/* The benchmark floor: `iterations` one-shot EVP_DigestVerify calls in C, each with a fresh
 * EVP_MD_CTX, exactly as a caller of OpenSSL must make them. Returns how many verified. */
static inline long signet_bench_digest_verify(EVP_PKEY *pkey, const EVP_MD *md, const unsigned char *sig, size_t siglen,
                                              const unsigned char *msg, size_t msglen, long iterations) {
    long ok = 0;
    for (long i = 0; i < iterations; i++) {
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        if (ctx && EVP_DigestVerifyInit(ctx, NULL, md, NULL, pkey) == 1 &&
            EVP_DigestVerify(ctx, sig, siglen, msg, msglen) == 1) ok++;
        EVP_MD_CTX_free(ctx);
    }
    return ok;
}
/* Template contexts: EVP_DigestVerifyInit / EVP_DigestSignInit done once per key (the fetch of
 * the digest and signature implementations, about 25k instructions), and copied per call.
 * The template is only ever read (EVP_MD_CTX_copy_ex duplicates it), so threads may share it. */
static inline EVP_MD_CTX *signet_template_new(EVP_PKEY *pkey, const EVP_MD *md, int sign) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx) return NULL;
    int rc = sign ? EVP_DigestSignInit(ctx, NULL, md, NULL, pkey) : EVP_DigestVerifyInit(ctx, NULL, md, NULL, pkey);
    if (rc != 1) { EVP_MD_CTX_free(ctx); ERR_clear_error(); return NULL; }
    return ctx;
}
/* One verification from a template: 1 verified, 0 did not, -1 the library failed. */
static inline int signet_template_verify(const EVP_MD_CTX *tpl, const unsigned char *sig, size_t siglen, const unsigned char *msg, size_t msglen) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx) return -1;
    int rc = EVP_MD_CTX_copy_ex(ctx, tpl) == 1 ? EVP_DigestVerify(ctx, sig, siglen, msg, msglen) : -1;
    EVP_MD_CTX_free(ctx);
    if (rc != 1) ERR_clear_error();
    return rc;
}
/* One signature from a template into sig (capacity *siglen, which becomes its length). */
static inline int signet_template_sign(const EVP_MD_CTX *tpl, unsigned char *sig, size_t *siglen, const unsigned char *msg, size_t msglen) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx) return -1;
    int rc = EVP_MD_CTX_copy_ex(ctx, tpl) == 1 ? EVP_DigestSign(ctx, sig, siglen, msg, msglen) : -1;
    EVP_MD_CTX_free(ctx);
    if (rc != 1) ERR_clear_error();
    return rc;
}
/* The floor both ways: `iterations` verifications copied from one template. */
static inline long signet_bench_template_verify(EVP_PKEY *pkey, const EVP_MD *md, const unsigned char *sig, size_t siglen,
                                                const unsigned char *msg, size_t msglen, long iterations) {
    EVP_MD_CTX *tpl = signet_template_new(pkey, md, 0);
    if (!tpl) return 0;
    long ok = 0;
    for (long i = 0; i < iterations; i++) if (signet_template_verify(tpl, sig, siglen, msg, msglen) == 1) ok++;
    EVP_MD_CTX_free(tpl);
    return ok;
}
/* ES256 through the EC_KEY interface: a signature straight into r || s, and (measured only) with
 * its per-signature values made ahead (FIPS 186-4 §6.3: k⁻¹ and r need not wait for the message;
 * ECDSA_sign_setup, ECDSA_do_sign_ex). OpenSSL 3 deprecates the interface and its providers offer
 * neither in its place, so it is reached here alone, and a caller falls back to EVP_DigestSign
 * when any of it fails. The EC_KEY is only read. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
/* The key's EC_KEY (its own reference), or NULL when it is not a P-256 key. */
static inline EC_KEY *signet_p256_key(EVP_PKEY *pkey) {
    EC_KEY *key = EVP_PKEY_get1_EC_KEY(pkey);
    if (key && EC_GROUP_get_curve_name(EC_KEY_get0_group(key)) == NID_X9_62_prime256v1) return key;
    EC_KEY_free(key);
    ERR_clear_error();
    return NULL;
}
static inline void signet_p256_key_free(EC_KEY *key) { EC_KEY_free(key); }
/* Up to n pairs (k⁻¹ mod n, r) into kinv[] and r[], one after the other so that the fixed-base
 * table stays in the caches between them; returns how many were made. */
static inline int signet_ecdsa_precompute(EC_KEY *key, BIGNUM **kinv, BIGNUM **r, int n) {
    BN_CTX *ctx = BN_CTX_new();
    if (!ctx) return 0;
    int made = 0;
    for (; made < n; made++) {
        kinv[made] = NULL;
        r[made] = NULL;
        if (ECDSA_sign_setup(key, ctx, &kinv[made], &r[made]) != 1) break;
    }
    BN_CTX_free(ctx);
    if (made < n) ERR_clear_error();
    return made;
}
/* sig (freed here) as r || s into out (RFC 7518 §3.4): 1, or 0 when there is none. */
static inline int signet_ecdsa_sig_raw(ECDSA_SIG *sig, unsigned char out[64]) {
    if (!sig) { ERR_clear_error(); return 0; }
    const BIGNUM *sr = NULL, *ss = NULL;
    ECDSA_SIG_get0(sig, &sr, &ss);
    int ok = BN_bn2binpad(sr, out, 32) == 32 && BN_bn2binpad(ss, out + 32, 32) == 32;
    ECDSA_SIG_free(sig);
    return ok;
}
/* Signs SHA-256(msg) into out as r || s (RFC 7518 §3.4): the same ECDSA as EVP_DigestSign's
 * (k from OpenSSL's mixing of the key, the digest and fresh random bytes), without the provider's
 * dispatch and the DER that the caller would only take apart again. 1, or 0 when refused. */
static inline int signet_ecdsa_sign_p256(EC_KEY *key, const unsigned char *msg, size_t len, unsigned char out[64]) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(msg, len, digest);
    ECDSA_SIG *sig = ECDSA_do_sign(digest, sizeof digest, key);
    return signet_ecdsa_sig_raw(sig, out);
}
/* Clears and frees one pair that will not be used. */
static inline void signet_ecdsa_discard(BIGNUM *kinv, BIGNUM *r) { BN_clear_free(kinv); BN_clear_free(r); }
/* Signs SHA-256(msg) with one pair, which is cleared and freed whatever happens, into out as
 * r || s (RFC 7518 §3.4). 1 on success, 0 when the library refused. */
static inline int signet_ecdsa_sign_precomputed(EC_KEY *key, const unsigned char *msg, size_t len, BIGNUM *kinv, BIGNUM *r,
                                                unsigned char out[64]) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(msg, len, digest);
    ECDSA_SIG *sig = ECDSA_do_sign_ex(digest, sizeof digest, kinv, r, key);
    signet_ecdsa_discard(kinv, r);
    return signet_ecdsa_sig_raw(sig, out);
}
#pragma clang diagnostic pop
#endif
