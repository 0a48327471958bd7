/*
 * What an ES256 verification would cost with a table of multiples made for the public key, as
 * OpenSSL makes one for the curve's generator: a diagnosis for scripts/bench-key-table.sh, not
 * code Signet runs.
 *
 * ECDSA verification (SEC 1 v2 §4.1.4) computes u1·G + u2·Q. OpenSSL's P-256 code multiplies G
 * with a precomputed table (37 rows of 64 points) and Q with a window of 16 points it computes
 * every time, 256 doublings in all; most of a verification is that second product. A group whose
 * generator is set to Q gets such a table for Q from EC_GROUP_precompute_mult, and u2·Q becomes
 * as cheap as u1·G. Every input here is public, so nothing secret goes through the
 * variable-time arithmetic.
 *
 * Prints the standard and the table verification per call (one key, then KEYS keys in turn with
 * SWEEP KiB read between calls, as a server's other work would evict the tables), the time to
 * build a table, the memory a table takes, and exits 1 if the two verifications ever disagree.
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* EC_GROUP_precompute_mult, kept by OpenSSL 3 */
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/obj_mac.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Resident memory in KiB (/proc/self/statm counts pages). */
static long resident_kib(void) {
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
    if (f) fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

struct key {
    EC_KEY *key;
    EC_GROUP *table; /* the curve with Q as its generator, and Q's table */
    ECDSA_SIG *signature;
};

static const EC_GROUP *curve;
static BIGNUM *order;

static EC_GROUP *table_for(const EC_POINT *q, BN_CTX *ctx) {
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    EC_POINT *generator = EC_POINT_new(group);
    BIGNUM *x = BN_new(), *y = BN_new(), *one = BN_new();
    int ok = group && generator && x && y && one && BN_one(one) &&
             EC_POINT_get_affine_coordinates(curve, q, x, y, ctx) &&
             EC_POINT_set_affine_coordinates(group, generator, x, y, ctx) &&
             EC_GROUP_set_generator(group, generator, order, one) && EC_GROUP_precompute_mult(group, ctx);
    EC_POINT_free(generator);
    BN_free(x); BN_free(y); BN_free(one);
    if (!ok) { EC_GROUP_free(group); return NULL; }
    return group;
}

/* SEC 1 §4.1.4 with u2·Q from the key's table: 1 valid, 0 invalid, -1 an error. */
static int verify_with_table(const struct key *k, const unsigned char *digest, const ECDSA_SIG *signature, BN_CTX *ctx) {
    const BIGNUM *r, *s;
    ECDSA_SIG_get0(signature, &r, &s);
    if (BN_is_zero(r) || BN_is_negative(r) || BN_ucmp(r, order) >= 0 ||
        BN_is_zero(s) || BN_is_negative(s) || BN_ucmp(s, order) >= 0) return 0;
    BN_CTX_start(ctx);
    BIGNUM *w = BN_CTX_get(ctx), *e = BN_CTX_get(ctx), *u1 = BN_CTX_get(ctx), *u2 = BN_CTX_get(ctx), *x = BN_CTX_get(ctx);
    EC_POINT *sum = EC_POINT_new(curve), *product = EC_POINT_new(k->table);
    int result = -1;
    if (x && sum && product && BN_mod_inverse(w, s, order, ctx) && BN_bin2bn(digest, 32, e) &&
        BN_mod_mul(u1, e, w, order, ctx) && BN_mod_mul(u2, r, w, order, ctx) &&
        EC_POINT_mul(curve, sum, u1, NULL, NULL, ctx) && EC_POINT_mul(k->table, product, u2, NULL, NULL, ctx) &&
        EC_POINT_add(curve, sum, sum, product, ctx)) {
        if (EC_POINT_is_at_infinity(curve, sum)) result = 0;
        else if (EC_POINT_get_affine_coordinates(curve, sum, x, NULL, ctx) && BN_nnmod(x, x, order, ctx))
            result = BN_cmp(x, r) == 0;
    }
    EC_POINT_free(sum);
    EC_POINT_free(product);
    BN_CTX_end(ctx);
    return result;
}

/* Both verifications must give the same answer, valid or not. */
static int agree(const struct key *k, const unsigned char *digest, const ECDSA_SIG *signature, BN_CTX *ctx, int expected) {
    int standard = ECDSA_do_verify(digest, 32, signature, k->key);
    int table = verify_with_table(k, digest, signature, ctx);
    if (standard != expected || table != expected) {
        fprintf(stderr, "key-table: standard %d, table %d, expected %d\n", standard, table, expected);
        return 0;
    }
    return 1;
}

static int checks(const struct key *k, const unsigned char *digest, BN_CTX *ctx) {
    unsigned char other[32];
    memcpy(other, digest, 32);
    other[31] ^= 1;
    const BIGNUM *r, *s;
    ECDSA_SIG_get0(k->signature, &r, &s);
    ECDSA_SIG *bent = ECDSA_SIG_new(), *zero = ECDSA_SIG_new(), *high = ECDSA_SIG_new();
    BIGNUM *r1 = BN_dup(r), *s1 = BN_dup(s), *r2 = BN_dup(r), *s2 = BN_new(), *r3 = BN_dup(order), *s3 = BN_dup(s);
    BN_add_word(r1, 1);
    BN_zero(s2);
    ECDSA_SIG_set0(bent, r1, s1);
    ECDSA_SIG_set0(zero, r2, s2);
    ECDSA_SIG_set0(high, r3, s3);
    int ok = agree(k, digest, k->signature, ctx, 1) && agree(k, other, k->signature, ctx, 0) &&
             agree(k, digest, bent, ctx, 0) && agree(k, digest, zero, ctx, 0) && agree(k, digest, high, ctx, 0);
    ECDSA_SIG_free(bent); ECDSA_SIG_free(zero); ECDSA_SIG_free(high);
    return ok;
}

static volatile unsigned long sink;

/* Microseconds per call of each verification, keys in turn, `sweep` bytes read before each call. */
static void run(struct key *keys, int count, const unsigned char *digest, const unsigned char *sweep, size_t size, int calls,
                BN_CTX *ctx, double *standard, double *table) {
    double a = 0, b = 0;
    for (int i = 0; i < calls; i++) {
        struct key *k = &keys[i % count];
        for (size_t j = 0; j < size; j += 64) sink += sweep[j];
        double t0 = seconds();
        int standard_ok = ECDSA_do_verify(digest, 32, k->signature, k->key);
        double t1 = seconds();
        for (size_t j = 0; j < size; j += 64) sink += sweep[j];
        double t2 = seconds();
        int table_ok = verify_with_table(k, digest, k->signature, ctx);
        if (standard_ok != 1 || table_ok != 1) {
            fprintf(stderr, "key-table: a valid signature refused (standard %d, table %d)\n", standard_ok, table_ok);
            exit(1);
        }
        a += t1 - t0;
        b += seconds() - t2;
    }
    *standard = a / calls * 1e6;
    *table = b / calls * 1e6;
}

int main(int argc, char **argv) {
    int count = argc > 1 ? atoi(argv[1]) : 32;
    size_t sweep_kib = argc > 2 ? (size_t)atol(argv[2]) : 2048;
    int calls = argc > 3 ? atoi(argv[3]) : 3000;
    if (count < 1 || count > 4096 || calls < 1) { fprintf(stderr, "usage: key-table [KEYS] [SWEEP_KIB] [CALLS]\n"); return 2; }
    BN_CTX *ctx = BN_CTX_new();
    unsigned char digest[32];
    SHA256((const unsigned char *)"signet key-table", 16, digest);
    struct key *keys = calloc((size_t)count, sizeof *keys);
    double built = 0;
    long before = resident_kib();
    for (int i = 0; i < count; i++) {
        keys[i].key = EC_KEY_new_by_curve_name(NID_X9_62_prime256v1);
        if (!keys[i].key || !EC_KEY_generate_key(keys[i].key)) return 1;
        if (!curve) {
            curve = EC_KEY_get0_group(keys[i].key);
            order = BN_new();
            EC_GROUP_get_order(curve, order, ctx);
        }
        keys[i].signature = ECDSA_do_sign(digest, 32, keys[i].key);
        double t0 = seconds();
        keys[i].table = table_for(EC_KEY_get0_public_key(keys[i].key), ctx);
        built += seconds() - t0;
        if (!keys[i].table || !keys[i].signature || !checks(&keys[i], digest, ctx)) return 1;
    }
    long after = resident_kib();
    unsigned char *sweep = malloc(sweep_kib * 1024 + 1);
    memset(sweep, 1, sweep_kib * 1024 + 1);
    double one_standard, one_table, many_standard, many_table;
    run(keys, 1, digest, sweep, 0, calls, ctx, &one_standard, &one_table);
    run(keys, count, digest, sweep, sweep_kib * 1024, calls, ctx, &many_standard, &many_table);
    double build_us = built / count * 1e6;
    printf("checks: both verifications accept the signature and refuse another digest, r + 1, s = 0 and r = n\n");
    printf("one key, back to back:             standard %6.1f µs, with the key's table %6.1f µs (%.2f)\n",
           one_standard, one_table, one_table / one_standard);
    printf("%d keys in turn, %zu KiB read between: standard %6.1f µs, with the key's table %6.1f µs (%.2f)\n",
           count, sweep_kib, many_standard, many_table, many_table / many_standard);
    printf("a table: built in %.1f ms, about %ld KiB resident\n", build_us / 1000, (after - before) / count);
    printf("break-even: %.0f verifications of one key pay for its table (build / saving with %d keys)\n",
           build_us / (many_standard - many_table), count);
    return 0;
}
