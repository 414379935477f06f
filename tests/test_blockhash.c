/* blockhash (DESIGN §3): the chain, identity extras, the content sources, canonicality,
 * and the `kvsim hash` command. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "kvsim/blockhash.h"
#include "support.h"

static kv_hasher *h;

static void setup(void)
{
    cr_assert_eq(kv_hasher_create(&h, "llama-3-8b", "bf16", 2), 0);
}

static void teardown(void)
{
    kv_hasher_destroy(h);
    h = NULL;
}

TestSuite(blockhash, .init = setup, .fini = teardown);

static void chain_tokens(const uint32_t *t, uint32_t n, const char *adapter, const char *salt,
                         kv_digest *out)
{
    kv_request_spec spec = {.prompt_len = n,
                            .output_len = 1,
                            .content = KV_CONTENT_TOKENS,
                            .tokens = t,
                            .adapter = adapter,
                            .salt = salt};
    kv_content c;
    kv_content_from_spec(&c, &spec, 0, 0);
    kv_hasher_chain(h, &c, out, 0, n / kv_hasher_block_size(h));
}

static bool same(const kv_digest *a, const kv_digest *b)
{
    return memcmp(a->b, b->b, KV_DIGEST_LEN) == 0;
}

Test(blockhash, seed_cases_chain_identity)
{
    uint32_t A[] = {1, 2, 3, 4}, B[] = {9, 2, 3, 4}, C[] = {1, 2, 3, 4, 5};
    kv_digest a[2], b[2], c[2];
    chain_tokens(A, 4, NULL, NULL, a);
    chain_tokens(B, 4, NULL, NULL, b);
    chain_tokens(C, 5, NULL, NULL, c);
    cr_assert(!same(&a[0], &b[0]));
    cr_assert(!same(&a[1], &b[1]), "equal last blocks, different prefix: the chain differs");
    cr_assert(same(&a[0], &c[0]) && same(&a[1], &c[1]), "C shares both full blocks with A");
}

Test(blockhash, adapter_on_every_block_salt_on_first)
{
    uint32_t A[] = {1, 2, 3, 4};
    kv_digest plain[2], ad[2], ad2[2], salted[2], salted2[2], other_salt[2];
    chain_tokens(A, 4, NULL, NULL, plain);
    chain_tokens(A, 4, "lora-a", NULL, ad);
    chain_tokens(A, 4, "lora-a", NULL, ad2);
    chain_tokens(A, 4, NULL, "tenant-1", salted);
    chain_tokens(A, 4, NULL, "tenant-1", salted2);
    chain_tokens(A, 4, NULL, "tenant-2", other_salt);
    for (int j = 0; j < 2; j++) {
        cr_assert(!same(&plain[j], &ad[j]), "a different adapter shares nothing");
        cr_assert(!same(&plain[j], &salted[j]), "a salt propagates through the chain");
        cr_assert(!same(&salted[j], &other_salt[j]));
        cr_assert(same(&ad[j], &ad2[j]), "the same adapter hits");
        cr_assert(same(&salted[j], &salted2[j]), "the same salt hits");
    }
    /* Empty adapter/salt mean none (DESIGN §6.5). */
    kv_digest empty[2];
    chain_tokens(A, 4, "", "", empty);
    cr_assert(same(&empty[1], &plain[1]));
}

Test(blockhash, salt_only_in_block_zero_extras)
{
    /* Block 1 of a salted chain = hash(salted h0 ‖ tokens) with no salt bytes: recompute
     * it from the salted parent with an unsalted content and compare. */
    uint32_t A[] = {1, 2, 3, 4};
    kv_digest salted[2], again;
    chain_tokens(A, 4, NULL, "s", salted);
    kv_request_spec spec = {
        .prompt_len = 4, .output_len = 1, .content = KV_CONTENT_TOKENS, .tokens = A};
    kv_content c;
    kv_content_from_spec(&c, &spec, 0, 0);
    kv_hasher_block(h, &salted[0], &c, 1, &again);
    cr_assert(same(&again, &salted[1]));
}

Test(blockhash, seed_depends_on_model_dtype_block_size)
{
    kv_hasher *o;
    cr_assert_eq(kv_hasher_create(&o, "llama-3-8b", "fp8", 2), 0);
    cr_assert(!same(kv_hasher_seed(h), kv_hasher_seed(o)));
    kv_hasher_destroy(o);
    cr_assert_eq(kv_hasher_create(&o, "llama-3-8b", "bf16", 2), 0);
    cr_assert(same(kv_hasher_seed(h), kv_hasher_seed(o)), "the seed is deterministic");
    kv_hasher_destroy(o);
    cr_assert_eq(kv_hasher_create(&o, "x", "bf16", 0), -KV_EINVAL);
}

/* Mooncake content: position p carries (hash_ids[p/tb], p mod tb), so two requests sharing
 * their first hash_ids share every sim block inside them, for any b ≤ tb. */
Test(blockhash, hash_ids_share_at_any_smaller_block_size)
{
    uint32_t sizes[] = {1, 4, 16, 64, 512};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        kv_hasher *hb;
        uint32_t b = sizes[k];
        cr_assert_eq(kv_hasher_create(&hb, "m", "bf16", b), 0);
        uint64_t ids_a[] = {0, 1, 2}, ids_b[] = {0, 1, 7};
        kv_request_spec ra = {.prompt_len = 1500,
                              .content = KV_CONTENT_HASH_IDS,
                              .hash_ids = ids_a,
                              .n_hash_ids = 3,
                              .row = 0};
        kv_request_spec rb = ra;
        rb.hash_ids = ids_b;
        rb.row = 1;
        kv_content ca, cb;
        kv_content_from_spec(&ca, &ra, 512, 0);
        kv_content_from_spec(&cb, &rb, 512, 0);
        uint32_t n = 1500 / b;
        kv_digest *da = calloc(n, sizeof *da), *db = calloc(n, sizeof *db);
        kv_hasher_chain(hb, &ca, da, 0, n);
        kv_hasher_chain(hb, &cb, db, 0, n);
        uint32_t shared = 1024 / b;
        for (uint32_t j = 0; j < n; j++)
            cr_assert_eq(same(&da[j], &db[j]), j < shared, "b=%u block %u", b, j);
        free(da);
        free(db);
        kv_hasher_destroy(hb);
    }
}

Test(blockhash, sources_never_match_each_other)
{
    /* Content-less rows are unique per row; --shared-prefix shares its positions only;
     * generated tokens are (row, offset); tokens and hash_ids are distinct sources. */
    kv_request_spec none0 = {.prompt_len = 6, .row = 0};
    kv_request_spec none1 = {.prompt_len = 6, .row = 1};
    kv_content c0, c1, s0, s1;
    kv_content_from_spec(&c0, &none0, 0, 0);
    kv_content_from_spec(&c1, &none1, 0, 0);
    kv_content_from_spec(&s0, &none0, 0, 4);
    kv_content_from_spec(&s1, &none1, 0, 4);
    kv_digest d0[3], d1[3], e0[3], e1[3];
    kv_hasher_chain(h, &c0, d0, 0, 3);
    kv_hasher_chain(h, &c1, d1, 0, 3);
    kv_hasher_chain(h, &s0, e0, 0, 3);
    kv_hasher_chain(h, &s1, e1, 0, 3);
    cr_assert(!same(&d0[0], &d1[0]), "content-less prompts never share");
    cr_assert(same(&e0[0], &e1[0]) && same(&e0[1], &e1[1]), "--shared-prefix 4: 2 blocks");
    cr_assert(!same(&e0[2], &e1[2]), "past the shared prefix, rows differ");
    /* Positions 6, 7 of a 6-token prompt are generated: block 3 is (row, 0..1). */
    kv_digest g0, g0b;
    kv_hasher_block(h, &d0[2], &c0, 3, &g0);
    kv_hasher_block(h, &d0[2], &c0, 3, &g0b);
    cr_assert(same(&g0, &g0b), "generated content is deterministic");
    uint32_t tok[] = {0, 0};
    kv_request_spec t = {.prompt_len = 2, .content = KV_CONTENT_TOKENS, .tokens = tok};
    uint64_t ids[] = {0};
    kv_request_spec m = {
        .prompt_len = 2, .content = KV_CONTENT_HASH_IDS, .hash_ids = ids, .n_hash_ids = 1};
    kv_content ct, cm;
    kv_content_from_spec(&ct, &t, 0, 0);
    kv_content_from_spec(&cm, &m, 2, 0);
    kv_digest dt, dm, ds;
    kv_hasher_chain(h, &ct, &dt, 0, 1);
    kv_hasher_chain(h, &cm, &dm, 0, 1);
    cr_assert(!same(&dt, &dm) && !same(&dt, &e0[0]) && !same(&dm, &e0[0]));
    kv_hasher_chain(h, &s0, &ds, 0, 1);
    cr_assert(same(&ds, &e0[0]));
}

/* ---- bit identity with libcrypto's EVP SHA-256 ------------------------------------ */

static void evp_sha256(const uint8_t *m, size_t n, kv_digest *out)
{
    unsigned int len = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    cr_assert(ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) && EVP_DigestUpdate(ctx, m, n) &&
              EVP_DigestFinal_ex(ctx, out->b, &len) && len == KV_DIGEST_LEN);
    EVP_MD_CTX_free(ctx);
}

static uint8_t *le32(uint8_t *p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        *p++ = (uint8_t)(v >> (8 * k));
    return p;
}

/* The seed and token blocks of every message length from 42 to ~700 bytes (block sizes
 * 1..64, adapters of 0..40 bytes), hashed by kv_hasher and by EVP over the encoding of
 * src/blockhash.c's top comment: every padding case (one or two final compressions, a
 * message ending on a 64-byte boundary) gives EVP's digest bit for bit. */
Test(blockhash, digests_equal_evp_sha256_at_every_length)
{
    static const char tag[] = "kvsim-block-hash-v1";
    uint32_t tok[64];
    for (uint32_t i = 0; i < 64; i++)
        tok[i] = 0x9e3779b9u * (i + 1);
    char adapter[41];
    for (uint32_t b = 1; b <= 64; b++) {
        kv_hasher *hb;
        cr_assert_eq(kv_hasher_create(&hb, "llama-3-8b", "bf16", b), 0);
        uint8_t m[1024], *p = m;
        memcpy(p, tag, sizeof tag);
        p = le32(p + sizeof tag, 10);
        memcpy(p, "llama-3-8b", 10);
        p = le32(p + 10, 4);
        memcpy(p, "bf16", 4);
        p = le32(p + 4, b);
        kv_digest want, got;
        evp_sha256(m, (size_t)(p - m), &want);
        cr_assert(same(&want, kv_hasher_seed(hb)), "seed digest at block size %u", b);
        for (uint32_t na = 0; na <= 40; na += 1 + (b % 3)) {
            memset(adapter, 'a' + (char)(na % 26), na);
            adapter[na] = '\0';
            kv_request_spec spec = {.prompt_len = 64,
                                    .output_len = 1,
                                    .content = KV_CONTENT_TOKENS,
                                    .tokens = tok,
                                    .adapter = na ? adapter : NULL};
            kv_content c;
            kv_content_from_spec(&c, &spec, 0, 0);
            kv_hasher_block(hb, kv_hasher_seed(hb), &c, 0, &got);
            p = m;
            memcpy(p, kv_hasher_seed(hb)->b, KV_DIGEST_LEN);
            p += KV_DIGEST_LEN;
            *p++ = 'T';
            p = le32(p, b);
            for (uint32_t i = 0; i < b; i++)
                p = le32(p, tok[i]);
            if (na) {
                *p++ = 'A';
                p = le32(p, na);
                memcpy(p, adapter, na);
                p += na;
            }
            evp_sha256(m, (size_t)(p - m), &want);
            cr_assert(same(&want, &got), "block size %u, adapter of %u bytes: %zu-byte message", b,
                      na, (size_t)(p - m));
        }
        kv_hasher_destroy(hb);
    }
}

Test(blockhash, digest_hex)
{
    kv_digest d;
    for (int i = 0; i < KV_DIGEST_LEN; i++)
        d.b[i] = (uint8_t)(i * 17);
    char hex[65];
    kv_digest_hex(&d, hex);
    cr_assert_eq(strlen(hex), 64);
    cr_assert_eq(strncmp(hex, "0011223344", 10), 0);
}

/* ---- kvsim hash ------------------------------------------------------------------- */

static char *line(const char *out, int k)
{
    const char *p = out;
    for (int i = 0; i < k && p; i++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    cr_assert(p && *p, "output has no line %d", k);
    size_t n = strcspn(p, "\n");
    char *l = strndup(p, n);
    return l;
}

Test(blockhash, cli_hash_seed_cases)
{
    run_result a = run_kvsim("hash", "--block-size", "2", "1", "2", "3", "4", NULL);
    run_result b = run_kvsim("hash", "--block-size", "2", "9,2,3,4", NULL);
    run_result c = run_kvsim("hash", "-b", "2", "1", "2", "3", "4", "5", NULL);
    run_result d = run_kvsim("hash", "-b", "2", "--adapter", "x", "1", "2", "3", "4", NULL);
    cr_assert_eq(a.status, 0, "%s", a.err);
    cr_assert_eq(c.status, 0);
    char *a1 = line(a.out, 1), *b1 = line(b.out, 1), *c0 = line(c.out, 0), *a0 = line(a.out, 0);
    char *c1 = line(c.out, 1), *d0 = line(d.out, 0);
    cr_assert_eq(strncmp(a0, "0 ", 2), 0);
    cr_assert_eq(strlen(a0), 2 + 64);
    cr_assert_str_neq(a1, b1, "same last block, different chain");
    cr_assert_str_eq(a0, c0);
    cr_assert_str_eq(a1, c1, "C shares both full blocks with A");
    cr_assert_str_neq(a0, d0, "a different adapter shares nothing");
    cr_assert_null(strstr(c.out, "\n2 "), "the partial last block has no hash");
    free(a1), free(b1), free(c0), free(a0), free(c1), free(d0);
    run_result_free(&a), run_result_free(&b), run_result_free(&c), run_result_free(&d);
}

Test(blockhash, cli_hash_errors)
{
    struct {
        const char *args[6];
        int status;
        const char *msg;
    } cases[] = {
        {{"hash", "1", "2", NULL}, 2, "kvsim: error: kvsim hash needs --block-size B\n"},
        {{"hash", "-b", "0", "1", NULL}, 2, "kvsim: error: --block-size: '0' must be between 1"},
        {{"hash", "-b", "x", "1", NULL}, 2, "kvsim: error: --block-size: 'x' is not a whole"},
        {{"hash", "-b", "2", NULL}, 2, "kvsim: error: kvsim hash needs at least one token id\n"},
        {{"hash", "-b", "2", "1", "-3", NULL}, 2, "kvsim: error: token 2: '-3' must not be"},
        {{"hash", "-b", "2", "4294967296", NULL}, 2, "kvsim: error: token 1: '4294967296'"},
        {{"hash", "--bogus", NULL}, 2, "kvsim: error: unknown option '--bogus' for 'kvsim hash'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r = run_kvsimv(cases[i].args);
        assert_error_line(&r, cases[i].status, cases[i].msg, NULL);
        run_result_free(&r);
    }
}

/* The chain memo caches a pure function: chains computed through it, in pieces, with
 * repeated, partly covered and conflicting trace blocks, equal the chains without it. */
Test(blockhash, memo_gives_the_same_chains)
{
    kv_hasher *plain, *memo;
    cr_assert_eq(kv_hasher_create(&plain, "m", "bf16", 4), 0);
    cr_assert_eq(kv_hasher_create(&memo, "m", "bf16", 4), 0);
    /* Tiny: 8 entries for the 16 pairs of a round (an LRU set smaller than one row's
     * pairs would never hit: rows 0 and 1 share their first two). */
    cr_assert_eq(kv_hasher_memo(memo, 8 * (sizeof(kv_digest) * 5 + 64), 4), 0);
    uint64_t ids[3][6] = {{1, 2, 3, 4, 5, 6}, {1, 2, 9, 4, 5, 6}, {7, 2, 3, 4, 5, 6}};
    for (int round = 0; round < 3; round++) {
        for (int r = 0; r < 3; r++) {
            uint32_t prompt = 16 * 6 - (uint32_t)(r * 5 + round); /* last trace block partial */
            kv_request_spec spec = {.prompt_len = prompt,
                                    .output_len = 9,
                                    .row = (uint32_t)r,
                                    .content = KV_CONTENT_HASH_IDS,
                                    .hash_ids = ids[r],
                                    .n_hash_ids = 6};
            kv_content c;
            kv_content_from_spec(&c, &spec, 16, 0);
            uint32_t n = (prompt + 8) / 4; /* generated blocks too */
            kv_digest want[32], got[32];
            kv_hasher_chain(plain, &c, want, 0, n);
            uint32_t cut = (uint32_t)(round * 7 + r) % n; /* in two pieces */
            kv_hasher_chain(memo, &c, got, 0, cut);
            kv_hasher_chain(memo, &c, got, cut, n);
            for (uint32_t j = 0; j < n; j++)
                cr_assert(same(&want[j], &got[j]), "round %d row %d block %u", round, r, j);
        }
    }
    uint64_t hits, misses;
    kv_hasher_memo_stats(memo, &hits, &misses);
    cr_assert_gt(hits, 0, "repeated trace blocks were found");
    kv_hasher_destroy(plain);
    kv_hasher_destroy(memo);
}

/* Hash single-id 16-token prompts ids[order[0..n)] through memo: its hit count so far. */
static uint64_t memo_hits_of(kv_hasher *memo, const uint64_t *ids, const int *order, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        kv_request_spec spec = {.prompt_len = 16,
                                .output_len = 1,
                                .content = KV_CONTENT_HASH_IDS,
                                .hash_ids = &ids[order[i]],
                                .n_hash_ids = 1};
        kv_content c;
        kv_content_from_spec(&c, &spec, 16, 0);
        kv_digest d[4];
        kv_hasher_chain(memo, &c, d, 0, 4);
    }
    uint64_t hits, misses;
    kv_hasher_memo_stats(memo, &hits, &misses);
    return hits;
}

/* The memo's sets keep their most recently used pairs: with room for one set of four, a
 * fifth pair replaces the least recently used one, whatever the pairs' slot keys. */
Test(blockhash, memo_replaces_the_least_recently_used)
{
    kv_hasher *memo;
    cr_assert_eq(kv_hasher_create(&memo, "m", "bf16", 4), 0);
    cr_assert_eq(kv_hasher_memo(memo, 4 * (sizeof(kv_digest) * 4 + 80), 4), 0);
    uint64_t ids[5] = {11, 22, 33, 44, 55};
    int order[] = {0, 1, 2, 3, 0, 4, 0, 2, 1}; /* 4 misses, hit, miss (out: 1), hit, hit, miss */
    cr_assert_eq(memo_hits_of(memo, ids, order, sizeof order / sizeof order[0]), 3);
    uint64_t hits, misses;
    kv_hasher_memo_stats(memo, &hits, &misses);
    cr_assert_eq(misses, 6);
    kv_hasher_destroy(memo);
}

/* kv_hasher_memo_bytes(per, e) is exactly the room for e pairs (a power of two): the four
 * pairs of a trace fit in kv_hasher_memo_bytes(4, 4) and all hit the second time round; a
 * byte less leaves two entries, which the four pairs keep evicting (replay sizes its memo
 * this way, so a small trace gets a small one). */
Test(blockhash, memo_bytes_is_the_room_for_the_pairs)
{
    uint64_t ids[4] = {11, 22, 33, 44};
    int order[] = {0, 1, 2, 3, 0, 1, 2, 3};
    size_t fit = kv_hasher_memo_bytes(4, 4);
    cr_assert_eq(kv_hasher_memo_bytes(4, 3), fit, "rounded up to a power of two");
    cr_assert_eq(kv_hasher_memo_bytes(4, 5), 2 * fit);
    kv_hasher *memo;
    cr_assert_eq(kv_hasher_create(&memo, "m", "bf16", 4), 0);
    cr_assert_eq(kv_hasher_memo(memo, fit, 4), 0);
    cr_assert_eq(memo_hits_of(memo, ids, order, 8), 4);
    kv_hasher_destroy(memo);
    cr_assert_eq(kv_hasher_create(&memo, "m", "bf16", 4), 0);
    cr_assert_eq(kv_hasher_memo(memo, fit - 1, 4), 0);
    cr_assert_eq(memo_hits_of(memo, ids, order, 8), 0, "two entries for four pairs: LRU misses");
    kv_hasher_destroy(memo);
}
