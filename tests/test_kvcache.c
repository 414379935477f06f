/* kvcache (DESIGN §5) and the pool conformance examples of DESIGN §4, driven exactly as
 * vLLM's tests/v1/core/test_prefix_caching.py drives its manager: lookup → allocate →
 * free.  Expected block ids are vLLM's (docs/design.md S1–S9).  Teardown checks the pool
 * invariants and Σ refcounts = Σ table lengths (R9). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "kvcache_internal.h" /* num_cached, and tables to corrupt */
#include "kvsim/kvcache.h"

#define MAXSEQ 8

static kv_pool *pool;
static kv_hasher *hasher;
static kv_cache *cache;
static kv_seq *seqs[MAXSEQ];
static uint32_t *toks[MAXSEQ];
static int n_seqs;

static void setup_cache(uint32_t num_blocks, uint32_t b, bool caching, kv_free_order order)
{
    cr_assert_eq(kv_pool_create(&pool, num_blocks, caching, order), 0);
    cr_assert_eq(kv_hasher_create(&hasher, "test-model", "bf16", b), 0);
    cr_assert_eq(kv_cache_create(&cache, pool, hasher), 0);
    n_seqs = 0;
}

static void pool_ok(void)
{
    kv_diag d;
    cr_assert_eq(kv_pool_check(pool, &d), 0, "%s", d.msg);
    cr_assert_eq(kv_cache_check(cache, seqs, (size_t)n_seqs, &d), 0, "%s", d.msg);
}

static void teardown(void)
{
    if (!pool)
        return;
    uint64_t logical = 0;
    for (int i = 0; i < n_seqs; i++)
        logical += kv_seq_len(seqs[i]);
    pool_ok();
    cr_assert_eq(kv_pool_refcount_sum(pool), logical, "R9: Σ refcounts = Σ table lengths");
    for (int i = 0; i < n_seqs; i++) {
        kv_cache_free(cache, seqs[i]);
        kv_seq_destroy(seqs[i]);
        free(toks[i]);
    }
    n_seqs = 0;
    pool_ok();
    kv_cache_destroy(cache);
    kv_hasher_destroy(hasher);
    kv_pool_destroy(pool);
    pool = NULL;
}

TestSuite(kvcache, .fini = teardown);

/* A request whose prompt is tokens[0..n). */
static kv_seq *new_seq(const uint32_t *tokens, uint32_t n)
{
    cr_assert_lt(n_seqs, MAXSEQ);
    int i = n_seqs++;
    toks[i] = malloc(n * sizeof *toks[i]);
    memcpy(toks[i], tokens, n * sizeof *tokens);
    kv_request_spec spec = {.prompt_len = n,
                            .output_len = 100,
                            .row = (uint32_t)i,
                            .content = KV_CONTENT_TOKENS,
                            .tokens = toks[i]};
    kv_content c;
    kv_content_from_spec(&c, &spec, 0, 0);
    seqs[i] = kv_seq_create(&c, 0);
    return seqs[i];
}

static kv_seq *seq_range(uint32_t from, uint32_t n)
{
    uint32_t *t = malloc(n * sizeof *t);
    for (uint32_t i = 0; i < n; i++)
        t[i] = from + i;
    kv_seq *s = new_seq(t, n);
    free(t);
    return s;
}

/* Admit a fresh request for its whole prompt: lookup, then allocate. Returns hit blocks. */
static uint32_t admit(kv_seq *s)
{
    kv_hits h;
    uint32_t n = kv_seq_content(s)->prompt_len;
    kv_cache_lookup(cache, s, n, &h);
    uint32_t hit_tokens = h.n * kv_cache_block_size(cache);
    cr_assert(kv_cache_allocate(cache, s, 0, &h, n - hit_tokens, n), "allocation failed");
    return h.n;
}

static void assert_table(const kv_seq *s, const kv_block_id *want, uint32_t n)
{
    cr_assert_eq(kv_seq_len(s), n, "table length %u, want %u", kv_seq_len(s), n);
    for (uint32_t i = 0; i < n; i++)
        cr_assert_eq(kv_seq_table(s)[i], want[i], "table[%u] = %d, want %d", i, kv_seq_table(s)[i],
                     want[i]);
}

static void assert_queue(const kv_block_id *want, size_t n)
{
    kv_block_id got[64];
    size_t len = kv_pool_queue(pool, got, 64);
    cr_assert_eq(len, n, "queue length %zu, want %zu", len, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "queue[%zu] = %d, want %d", i, got[i], want[i]);
}

/* ---- DESIGN §4 conformance example 1 (vLLM test_prefill; docs/design.md S1) --------- */

static void conformance_1(kv_free_order order)
{
    setup_cache(11, 16, true, order);
    uint32_t t[55];
    for (uint32_t i = 0; i < 48; i++)
        t[i] = i; /* common */
    for (uint32_t i = 48; i < 55; i++)
        t[i] = 1000 + i;
    kv_seq *r0 = new_seq(t, 55);
    cr_assert_eq(admit(r0), 0);
    kv_block_id w0[] = {1, 2, 3, 4};
    assert_table(r0, w0, 4);
    cr_assert(kv_pool_is_hashed(pool, 3) && !kv_pool_is_hashed(pool, 4));

    for (uint32_t i = 48; i < 53; i++)
        t[i] = 2000 + i;
    kv_seq *r1 = new_seq(t, 53);
    cr_assert_eq(admit(r1), 3);
    kv_block_id w1[] = {1, 2, 3, 5};
    assert_table(r1, w1, 4);
    cr_assert_eq(kv_pool_refcount(pool, 1), 2);
    cr_assert_eq(kv_pool_num_free(pool), 5);

    kv_cache_free(cache, r0);
    kv_cache_free(cache, r1);
    if (order == KV_FREE_SPLIT) {
        kv_block_id q[] = {5, 4, 6, 7, 8, 9, 10, 3, 2, 1};
        assert_queue(q, 10);
    } else {
        kv_block_id q[] = {6, 7, 8, 9, 10, 4, 5, 3, 2, 1};
        assert_queue(q, 10);
    }

    for (uint32_t i = 48; i < 54; i++)
        t[i] = 3000 + i;
    kv_seq *r2 = new_seq(t, 54);
    cr_assert_eq(admit(r2), 3);
    kv_block_id w2s[] = {1, 2, 3, 5}, w2a[] = {1, 2, 3, 6};
    assert_table(r2, order == KV_FREE_SPLIT ? w2s : w2a, 4);
    cr_assert_eq(kv_pool_num_free(pool), 6);

    /* S1 step 5: free r2, then 160 × token 99 takes all 10 blocks in queue order. */
    kv_cache_free(cache, r2);
    uint32_t big[160];
    for (int i = 0; i < 160; i++)
        big[i] = 99;
    kv_seq *r3 = new_seq(big, 160);
    cr_assert_eq(admit(r3), 0);
    kv_block_id w3s[] = {5, 4, 6, 7, 8, 9, 10, 3, 2, 1}, w3a[] = {7, 8, 9, 10, 4, 5, 6, 3, 2, 1};
    assert_table(r3, order == KV_FREE_SPLIT ? w3s : w3a, 10);
    cr_assert_eq(kv_pool_evictions(pool), 3, "blocks 1–3 held cached hashes");
}

Test(kvcache, design4_example1_split)
{
    conformance_1(KV_FREE_SPLIT);
}

Test(kvcache, design4_example1_append)
{
    conformance_1(KV_FREE_APPEND);
}

/* ---- DESIGN §4 conformance example 2 (vLLM test_evict; docs/design.md S2) ----------- */

static void conformance_2(kv_free_order order)
{
    setup_cache(11, 16, true, order);
    kv_seq *r0 = seq_range(0, 87);
    admit(r0);
    kv_block_id w0[] = {1, 2, 3, 4, 5, 6};
    assert_table(r0, w0, 6);
    kv_seq *r1 = seq_range(100000, 48);
    admit(r1);
    kv_block_id w1[] = {7, 8, 9};
    assert_table(r1, w1, 3);
    cr_assert_eq(kv_pool_num_free(pool), 1);

    kv_cache_free(cache, r0);
    if (order == KV_FREE_SPLIT) {
        kv_block_id q[] = {6, 10, 5, 4, 3, 2, 1};
        assert_queue(q, 7);
    } else {
        kv_block_id q[] = {10, 6, 5, 4, 3, 2, 1};
        assert_queue(q, 7);
    }
    kv_cache_free(cache, r1);
    if (order == KV_FREE_SPLIT) {
        kv_block_id q[] = {6, 10, 5, 4, 3, 2, 1, 9, 8, 7};
        assert_queue(q, 10);
    } else {
        kv_block_id q[] = {10, 6, 5, 4, 3, 2, 1, 9, 8, 7};
        assert_queue(q, 10);
    }

    kv_seq *r2 = seq_range(0, 35);
    cr_assert_eq(admit(r2), 2, "35 − 1 = 34 tokens → 2 full blocks hit");
    kv_block_id w2s[] = {1, 2, 6}, w2a[] = {1, 2, 10};
    assert_table(r2, order == KV_FREE_SPLIT ? w2s : w2a, 3);
    cr_assert_eq(kv_pool_num_free(pool), 7);
}

Test(kvcache, design4_example2_split)
{
    conformance_2(KV_FREE_SPLIT);
}

Test(kvcache, design4_example2_append)
{
    conformance_2(KV_FREE_APPEND);
}

/* ---- §5 rules -------------------------------------------------------------------- */

Test(kvcache, touch_before_pop_hits_not_self_evicted)
{
    /* S3: N=3.  r0 = range(16) → [1]; r1 = range(16,32) → [2] (a *first* block). */
    setup_cache(3, 16, true, KV_FREE_SPLIT);
    kv_seq *r0 = seq_range(0, 16), *r1 = seq_range(16, 16);
    admit(r0);
    admit(r1);
    kv_cache_free(cache, r0);
    kv_cache_free(cache, r1);
    kv_block_id q[] = {1, 2};
    assert_queue(q, 2);
    kv_seq *r2 = seq_range(0, 32);
    cr_assert_eq(admit(r2), 1, "block 2's parent is the seed, so only block 1 hits");
    kv_block_id w[] = {1, 2};
    assert_table(r2, w, 2);
    cr_assert_eq(kv_pool_evictions(pool), 1, "block 2's old hash is evicted, not block 1");
}

Test(kvcache, n_minus_1_hit_cap_and_duplicates)
{
    /* S4: B=4, N=10. */
    setup_cache(10, 4, true, KV_FREE_SPLIT);
    kv_seq *a = seq_range(1, 8);
    admit(a);
    kv_cache_free(cache, a);
    kv_block_id q[] = {3, 4, 5, 6, 7, 8, 9, 2, 1};
    assert_queue(q, 9);
    kv_seq *b = seq_range(1, 8);
    cr_assert_eq(admit(b), 1, "n−1 cap: ⌊7/4⌋ = 1 block, the whole last block recomputes");
    kv_block_id wb[] = {1, 3};
    assert_table(b, wb, 2);
    kv_cache_record_admission(cache, 8, 4, false);
    cr_assert_eq(kv_cache_prefix_stats(cache)->queries, 8);
    cr_assert_eq(kv_cache_prefix_stats(cache)->hits, 4);
    cr_assert(kv_pool_is_hashed(pool, 3), "R5: block 3 gets h2 again, no dedup");
    kv_cache_free(cache, b);
    kv_block_id q2[] = {4, 5, 6, 7, 8, 9, 2, 3, 1};
    assert_queue(q2, 9);
    kv_seq *c = seq_range(1, 12);
    cr_assert_eq(admit(c), 2);
    kv_block_id wc[] = {1, 2, 4};
    assert_table(c, wc, 3);
}

Test(kvcache, partial_block_reuse_order_split_vs_append)
{
    /* S5: B=4, N=6. */
    for (int o = 0; o < 2; o++) {
        setup_cache(6, 4, true, (kv_free_order)o);
        kv_seq *a = seq_range(10, 6);
        admit(a);
        kv_cache_free(cache, a);
        kv_seq *b = seq_range(500, 3);
        admit(b);
        cr_assert_eq(kv_seq_table(b)[0], o == KV_FREE_SPLIT ? 2 : 3);
        uint32_t ct[5] = {10, 11, 12, 13, 77};
        kv_seq *c = new_seq(ct, 5);
        cr_assert_eq(admit(c), 1);
        cr_assert_eq(kv_seq_table(c)[0], 1);
        teardown();
    }
}

Test(kvcache, need_counts_evictable_hits_and_failure_changes_nothing)
{
    /* S8: B=4, N=4 (3 usable). */
    setup_cache(4, 4, true, KV_FREE_SPLIT);
    kv_seq *a = seq_range(1, 8);
    admit(a);
    kv_cache_free(cache, a);
    kv_block_id q[] = {3, 2, 1};
    assert_queue(q, 3);
    kv_seq *b = seq_range(1, 12);
    kv_hits h;
    kv_cache_lookup(cache, b, 12, &h);
    cr_assert_eq(h.n, 2);
    cr_assert_eq(h.n_evictable, 2);
    cr_assert_eq(kv_cache_need(cache, b, 0, &h, 4), 3, "(3 − 2) new + 2 evictable hits");
    cr_assert(kv_cache_allocate(cache, b, 0, &h, 4, 12));
    kv_block_id w[] = {1, 2, 3};
    assert_table(b, w, 3);
    teardown();

    /* N=3 (2 usable): need 3 > free 2 → fail, no touch, nothing changes. */
    setup_cache(3, 4, true, KV_FREE_SPLIT);
    a = seq_range(1, 8);
    admit(a);
    kv_cache_free(cache, a);
    b = seq_range(1, 12);
    kv_cache_lookup(cache, b, 12, &h);
    cr_assert_eq(h.n, 2);
    cr_assert(!kv_cache_allocate(cache, b, 0, &h, 4, 12), "need 3 > 2 free");
    cr_assert_eq(kv_seq_len(b), 0);
    cr_assert_eq(kv_pool_refcount(pool, 1), 0);
    cr_assert_eq(kv_pool_refcount(pool, 2), 0);
    kv_block_id q2[] = {2, 1};
    assert_queue(q2, 2);
    cr_assert_eq(kv_pool_evictions(pool), 0);
}

Test(kvcache, hashing_at_schedule_time_later_request_same_step_hits)
{
    setup_cache(20, 4, true, KV_FREE_SPLIT);
    kv_seq *a = seq_range(0, 10);
    admit(a); /* blocks 0,1 full → hashed now, before any "compute" */
    cr_assert_eq(a->num_cached, 2);
    kv_seq *b = seq_range(0, 10);
    cr_assert_eq(admit(b), 2, "a later request in the same step hits blocks just allocated");
    cr_assert_eq(kv_pool_refcount(pool, kv_seq_table(a)[0]), 2);
}

Test(kvcache, chunked_allocation_hashes_only_full_computed_blocks)
{
    setup_cache(20, 4, true, KV_FREE_SPLIT);
    kv_seq *a = seq_range(0, 10);
    kv_hits h;
    kv_cache_lookup(cache, a, 10, &h);
    cr_assert(kv_cache_allocate(cache, a, 0, &h, 6, 10)); /* chunk of 6 tokens */
    cr_assert_eq(kv_seq_len(a), 2);
    cr_assert_eq(a->num_cached, 1, "only the first block is full after 6 tokens");
    cr_assert(kv_cache_allocate(cache, a, 6, NULL, 4, 10));
    cr_assert_eq(kv_seq_len(a), 3);
    cr_assert_eq(a->num_cached, 2);
}

Test(kvcache, decode_blocks_are_hashed_too)
{
    setup_cache(20, 4, true, KV_FREE_SPLIT);
    kv_seq *a = seq_range(0, 6);
    admit(a);
    cr_assert_eq(a->num_cached, 1);
    /* Decode: known tokens 7, 8 (generated); each step computes one token. */
    cr_assert(kv_cache_allocate(cache, a, 6, NULL, 1, 7));
    cr_assert_eq(a->num_cached, 1);
    cr_assert(kv_cache_allocate(cache, a, 7, NULL, 1, 8));
    cr_assert_eq(a->num_cached, 2, "the block with generated tokens is hashed when full");
    cr_assert(kv_pool_is_hashed(pool, kv_seq_table(a)[1]));
    /* Freed and re-admitted with 8 known tokens, it hits its own decode block?  The
     * n−1 cap allows ⌊7/4⌋ = 1 block; with 9 known tokens both blocks hit. */
    kv_cache_free(cache, a);
    kv_hits h;
    kv_cache_lookup(cache, a, 9, &h);
    cr_assert_eq(h.n, 2, "a preempted request re-hits its own generated-token block");
}

Test(kvcache, running_request_need_has_no_hits)
{
    setup_cache(20, 4, true, KV_FREE_SPLIT);
    kv_seq *a = seq_range(0, 8);
    admit(a);
    cr_assert_eq(kv_cache_need(cache, a, 8, NULL, 1), 1, "9th token opens a new block");
    cr_assert_eq(kv_cache_need(cache, a, 7, NULL, 1), 0);
}

Test(kvcache, prefix_stats_preempted_admissions_kept_apart)
{
    setup_cache(8, 4, true, KV_FREE_SPLIT);
    kv_cache_record_admission(cache, 9, 4, true);
    kv_cache_record_admission(cache, 33, 32, false);
    const kv_prefix_stats *st = kv_cache_prefix_stats(cache);
    cr_assert_eq(st->queries, 33);
    cr_assert_eq(st->hits, 32);
    cr_assert_eq(st->preempted_queries, 9);
    cr_assert_eq(st->preempted_hits, 4);
}

Test(kvcache, caching_off_no_lookup_no_hash_no_stats)
{
    setup_cache(8, 4, false, KV_FREE_SPLIT);
    kv_seq *a = seq_range(0, 8);
    admit(a);
    cr_assert(!kv_pool_is_hashed(pool, kv_seq_table(a)[0]));
    kv_cache_free(cache, a);
    kv_seq *b = seq_range(0, 8);
    cr_assert_eq(admit(b), 0, "no lookup with prefix caching off");
    kv_cache_record_admission(cache, 8, 0, false);
    cr_assert_eq(kv_cache_prefix_stats(cache)->queries, 0);
    cr_assert_eq(kv_seq_table(b)[0], 2, "LIFO: the table's tail block (freed first) is reused");
}

/* S9 metric arithmetic: a 32-token prompt P cached; exactly P → 16 hits of 32 queried;
 * P + 1 token → 32 hits of 33.  Parameterised over the two prompt lengths. */
typedef struct s9 {
    uint32_t len, hits;
} s9;

ParameterizedTestParameters(kvcache, s9_hit_tokens)
{
    static s9 cases[] = {{32, 16}, {33, 32}, {31, 16}, {48, 32}};
    return cr_make_param_array(s9, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(s9 *c, kvcache, s9_hit_tokens)
{
    setup_cache(11, 16, true, KV_FREE_SPLIT);
    kv_seq *p = seq_range(0, 48);
    admit(p);
    kv_seq *q = seq_range(0, c->len);
    cr_assert_eq(admit(q) * 16, c->hits);
}
