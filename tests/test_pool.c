/* Pool rules R1–R9 (DESIGN §4), one test per rule, plus a seeded random stress test that
 * walks the invariants throughout.  Every fixture checks kv_pool_check() at teardown. */
#include <criterion/criterion.h>
#include <string.h>

#include "kvsim/pool.h"
#include "kvsim/rng.h"

static kv_pool *pool;

/* Check the invariants, then destroy (which asserts no block is still referenced). */
static void finish(void)
{
    if (pool) {
        kv_diag d;
        cr_assert_eq(kv_pool_check(pool, &d), 0, "pool invariants broken at teardown: %s", d.msg);
        kv_pool_destroy(pool);
        pool = NULL;
    }
}

static void teardown(void)
{
    finish();
}

static kv_digest digest_of(uint32_t v)
{
    kv_digest d;
    memset(&d, 0, sizeof d);
    for (int i = 0; i < KV_DIGEST_LEN; i += 4)
        memcpy(&d.b[i], &v, 4);
    d.b[0] ^= (uint8_t)(v * 131u);
    return d;
}

static void assert_queue(const kv_pool *p, const kv_block_id *want, size_t n)
{
    kv_block_id got[64];
    size_t len = kv_pool_queue(p, got, 64);
    cr_assert_eq(len, n, "queue length %zu, want %zu", len, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "queue[%zu] = %d, want %d", i, got[i], want[i]);
}

TestSuite(pool, .fini = teardown);

Test(pool, R1_R2_initial_queue_and_null_block)
{
    cr_assert_eq(kv_pool_create(&pool, 6, true, KV_FREE_SPLIT), 0);
    kv_block_id want[] = {1, 2, 3, 4, 5};
    assert_queue(pool, want, 5);
    cr_assert_eq(kv_pool_num_blocks(pool), 6);
    cr_assert_eq(kv_pool_usable(pool), 5);
    cr_assert_eq(kv_pool_refcount(pool, KV_NULL_BLOCK), 0);
    cr_assert(!kv_pool_is_hashed(pool, KV_NULL_BLOCK));
    cr_assert_eq(kv_pool_pop(pool), 1, "R2: the first allocation gets block 1");
    kv_block_id b = 1;
    kv_pool_free(pool, &b, 1);
    finish();
    kv_pool *tiny = NULL;
    cr_assert_eq(kv_pool_create(&tiny, 1, true, KV_FREE_SPLIT), -KV_EINVAL,
                 "a pool needs the null block plus one usable block");
    cr_assert_null(tiny);
}

Test(pool, R3_num_free_counts_cached_blocks)
{
    cr_assert_eq(kv_pool_create(&pool, 4, true, KV_FREE_SPLIT), 0);
    kv_block_id a = kv_pool_pop(pool);
    kv_digest d = digest_of(7);
    kv_pool_cache(pool, a, &d);
    cr_assert_eq(kv_pool_num_free(pool), 2);
    kv_pool_free(pool, &a, 1);
    cr_assert_eq(kv_pool_num_free(pool), 3, "R3: a cached idle block is free");
    cr_assert_eq(kv_pool_num_cached_free(pool), 1);
    cr_assert_eq(kv_pool_lookup(pool, &d), a, "R4: eviction is lazy; still hittable");
}

Test(pool, R4_head_pop_and_lazy_eviction_counted)
{
    cr_assert_eq(kv_pool_create(&pool, 3, true, KV_FREE_SPLIT), 0);
    kv_block_id a = kv_pool_pop(pool), b = kv_pool_pop(pool);
    cr_assert_eq(a, 1);
    cr_assert_eq(b, 2);
    kv_digest da = digest_of(1), db = digest_of(2);
    kv_pool_cache(pool, a, &da);
    kv_pool_cache(pool, b, &db);
    kv_block_id order[] = {b, a};
    kv_pool_free(pool, order, 2);
    kv_block_id want[] = {2, 1};
    assert_queue(pool, want, 2);
    cr_assert_eq(kv_pool_evictions(pool), 0);
    cr_assert_eq(kv_pool_pop(pool), 2, "R4: allocation pops the head");
    cr_assert_eq(kv_pool_evictions(pool), 1, "R4: popping a hashed block evicts it");
    cr_assert_eq(kv_pool_lookup(pool, &db), KV_NO_BLOCK, "evicted hash leaves the index");
    cr_assert(!kv_pool_is_hashed(pool, 2));
    cr_assert_eq(kv_pool_lookup(pool, &da), 1);
    kv_block_id two = 2;
    kv_pool_free(pool, &two, 1);
}

Test(pool, R5_first_inserted_wins_no_dedup)
{
    cr_assert_eq(kv_pool_create(&pool, 5, true, KV_FREE_SPLIT), 0);
    kv_digest d = digest_of(42);
    kv_block_id a = kv_pool_pop(pool), b = kv_pool_pop(pool), c = kv_pool_pop(pool);
    kv_pool_cache(pool, a, &d);
    kv_pool_cache(pool, b, &d);
    kv_pool_cache(pool, c, &d);
    cr_assert(kv_pool_is_hashed(pool, b), "R5: a duplicate is added alongside");
    cr_assert_eq(kv_pool_lookup(pool, &d), a, "R5: lookup returns the first inserted");
    /* Free c, b, a (all hashed: appended) → queue [4, c, b, a]. */
    kv_block_id order[] = {c, b, a};
    kv_pool_free(pool, order, 3);
    kv_block_id want[] = {4, 3, 2, 1};
    assert_queue(pool, want, 4);
    kv_block_id x = kv_pool_pop(pool), y = kv_pool_pop(pool);
    cr_assert_eq(x, 4);
    cr_assert_eq(y, c);
    cr_assert_eq(kv_pool_lookup(pool, &d), a, "removing the last holder keeps the first");
    kv_block_id z = kv_pool_pop(pool);
    cr_assert_eq(z, b);
    kv_block_id w = kv_pool_pop(pool);
    cr_assert_eq(w, a);
    cr_assert_eq(kv_pool_lookup(pool, &d), KV_NO_BLOCK);
    cr_assert_eq(kv_pool_evictions(pool), 3);
    kv_block_id all[] = {x, y, z, w};
    kv_pool_free(pool, all, 4);
}

Test(pool, R5_first_holder_evicted_next_takes_over)
{
    cr_assert_eq(kv_pool_create(&pool, 4, true, KV_FREE_SPLIT), 0);
    kv_digest d = digest_of(5);
    kv_block_id a = kv_pool_pop(pool), b = kv_pool_pop(pool);
    kv_pool_cache(pool, a, &d);
    kv_pool_cache(pool, b, &d);
    kv_pool_free(pool, &a, 1); /* queue [3, a] */
    cr_assert_eq(kv_pool_pop(pool), 3);
    cr_assert_eq(kv_pool_pop(pool), a); /* evicted */
    cr_assert_eq(kv_pool_lookup(pool, &d), b, "R5: the next holder in insertion order");
    kv_block_id all[] = {3, a, b};
    kv_pool_free(pool, all, 3);
}

Test(pool, R5_middle_holder_removed_keeps_order)
{
    cr_assert_eq(kv_pool_create(&pool, 5, true, KV_FREE_SPLIT), 0);
    kv_digest d = digest_of(9);
    kv_block_id a = kv_pool_pop(pool), b = kv_pool_pop(pool), c = kv_pool_pop(pool);
    kv_pool_cache(pool, a, &d);
    kv_pool_cache(pool, b, &d);
    kv_pool_cache(pool, c, &d);
    kv_pool_free(pool, &b, 1); /* queue [4, b] */
    cr_assert_eq(kv_pool_pop(pool), 4);
    cr_assert_eq(kv_pool_pop(pool), b);
    kv_pool_free(pool, &a, 1); /* queue [a] */
    cr_assert_eq(kv_pool_pop(pool), a);
    cr_assert_eq(kv_pool_lookup(pool, &d), c, "only c still holds the digest");
    kv_block_id all[] = {4, b, a, c};
    kv_pool_free(pool, all, 4);
}

Test(pool, R6_touch_unlinks_from_middle)
{
    cr_assert_eq(kv_pool_create(&pool, 6, true, KV_FREE_SPLIT), 0);
    kv_pool_touch(pool, 3);
    cr_assert_eq(kv_pool_refcount(pool, 3), 1);
    kv_block_id want[] = {1, 2, 4, 5};
    assert_queue(pool, want, 4);
    kv_pool_touch(pool, 3);
    cr_assert_eq(kv_pool_refcount(pool, 3), 2, "R6: touching a referenced block only counts");
    cr_assert_eq(kv_pool_num_free(pool), 4);
    kv_block_id t[] = {3, 3};
    kv_pool_free(pool, t, 2);
}

static void r7_case(kv_free_order order, const kv_block_id *want, size_t n)
{
    /* Table [1,2,3,4]: 1 and 2 hashed, 3 and 4 not.  Free tail first: [4,3,2,1]. */
    cr_assert_eq(kv_pool_create(&pool, 7, true, order), 0);
    kv_block_id t[4];
    for (int i = 0; i < 4; i++)
        t[i] = kv_pool_pop(pool);
    kv_digest d1 = digest_of(1), d2 = digest_of(2);
    kv_pool_cache(pool, t[0], &d1);
    kv_pool_cache(pool, t[1], &d2);
    kv_block_id rev[] = {t[3], t[2], t[1], t[0]};
    kv_pool_free(pool, rev, 4);
    assert_queue(pool, want, n);
}

Test(pool, R7_split_prepends_unhashed_appends_hashed)
{
    kv_block_id want[] = {4, 3, 5, 6, 2, 1};
    r7_case(KV_FREE_SPLIT, want, 6);
}

Test(pool, R7_append_order_appends_all_tail_first)
{
    kv_block_id want[] = {5, 6, 4, 3, 2, 1};
    r7_case(KV_FREE_APPEND, want, 6);
}

/* S13 with caching off: free [3,2,1] (a table [1,2,3] tail first), then allocate. */
static void r7_caching_off(kv_free_order order, const kv_block_id *want, kv_block_id first)
{
    cr_assert_eq(kv_pool_create(&pool, 6, false, order), 0);
    kv_block_id t[3] = {kv_pool_pop(pool), kv_pool_pop(pool), kv_pool_pop(pool)};
    kv_block_id rev[] = {t[2], t[1], t[0]};
    kv_pool_free(pool, rev, 3);
    assert_queue(pool, want, 5);
    kv_block_id b = kv_pool_pop(pool);
    cr_assert_eq(b, first, "R7 (%s, caching off): got block %d", kv_free_order_name(order), b);
    kv_pool_free(pool, &b, 1);
    finish();
}

Test(pool, R7_caching_off_split_is_lifo)
{
    /* No block has a hash, so split prepends them all: block 3 comes back (current vLLM,
     * block_pool.py@bf292b5f free_blocks, prepend_n of the hashless blocks; S13). */
    kv_block_id want[] = {3, 2, 1, 4, 5};
    r7_caching_off(KV_FREE_SPLIT, want, 3);
}

Test(pool, R7_caching_off_append_is_fifo)
{
    /* §6.6 "Free order with caching off": append appends every freed block, as vLLM did
     * before PR #42656 (block_pool.py@9d4dc4ca free_blocks, append_n): the old head, 4,
     * comes back first. */
    kv_block_id want[] = {4, 5, 3, 2, 1};
    r7_caching_off(KV_FREE_APPEND, want, 4);
}

Test(pool, R8_usage_counts_cached_as_free)
{
    /* S9: N=11, one request holding 3 blocks and 5 idle cached blocks → 1 − 7/10 = 0.3. */
    cr_assert_eq(kv_pool_create(&pool, 11, true, KV_FREE_SPLIT), 0);
    kv_block_id held[8];
    for (int i = 0; i < 8; i++)
        held[i] = kv_pool_pop(pool);
    for (int i = 3; i < 8; i++) {
        kv_digest d = digest_of((uint32_t)i);
        kv_pool_cache(pool, held[i], &d);
    }
    kv_pool_free(pool, held + 3, 5);
    cr_assert_eq(kv_pool_num_used(pool), 3, "R8: physical = refcount > 0");
    cr_assert_eq(kv_pool_num_cached_free(pool), 5);
    cr_assert_float_eq(kv_pool_usage(pool), 0.3, 1e-12);
    kv_pool_free(pool, held, 3);
    cr_assert_float_eq(kv_pool_usage(pool), 0.0, 1e-12);
}

Test(pool, R9_check_holds_and_refcount_sum)
{
    cr_assert_eq(kv_pool_create(&pool, 8, true, KV_FREE_SPLIT), 0);
    kv_block_id a = kv_pool_pop(pool);
    kv_pool_touch(pool, a);
    kv_pool_touch(pool, 5);
    cr_assert_eq(kv_pool_refcount_sum(pool), 3);
    {
        kv_diag d;
        cr_assert_eq(kv_pool_check(pool, &d), 0, "%s", d.msg);
    }
    kv_block_id t[] = {a, a, 5};
    kv_pool_free(pool, t, 3);
    cr_assert_eq(kv_pool_refcount_sum(pool), 0);
}

Test(pool, free_order_names)
{
    kv_free_order o;
    cr_assert_eq(kv_free_order_parse("split", &o), 0);
    cr_assert_eq(o, KV_FREE_SPLIT);
    cr_assert_eq(kv_free_order_parse("append", &o), 0);
    cr_assert_eq(o, KV_FREE_APPEND);
    cr_assert_eq(kv_free_order_parse("lru", &o), -KV_EINVAL);
    cr_assert_str_eq(kv_free_order_name(KV_FREE_APPEND), "append");
}

/* Move 1..max (at most *n_held) random references from held to batch; their count. */
static size_t take_batch(kv_rng *rng, kv_block_id *held, size_t *n_held, kv_block_id *batch,
                         size_t max)
{
    size_t k = 1 + (size_t)kv_rng_below(rng, *n_held < max ? *n_held : max);
    for (size_t i = 0; i < k; i++) {
        size_t at = (size_t)kv_rng_below(rng, *n_held);
        batch[i] = held[at];
        held[at] = held[--*n_held];
    }
    return k;
}

/* Seeded random operations against a reference model of refcounts, with the full
 * invariant walk every 97 operations and at the end: ≥ 100,000 operations per case. */
static void stress(kv_free_order order, bool caching, uint64_t seed)
{
    enum { N = 64, OPS = 120000, MAXREF = 4 };
    cr_assert_eq(kv_pool_create(&pool, N, caching, order), 0);
    kv_rng rng;
    kv_rng_seed(&rng, seed);
    uint32_t ref[N] = {0};
    kv_block_id held[N * MAXREF];
    size_t n_held = 0;
    uint64_t pops = 0, touches = 0, frees = 0;
    for (int op = 0; op < OPS; op++) {
        uint64_t r = kv_rng_below(&rng, 100);
        if (r < 35 && kv_pool_num_free(pool) > 0) {
            kv_block_id b = kv_pool_pop(pool);
            cr_assert_eq(ref[b], 0, "popped a referenced block %d", b);
            ref[b] = 1;
            held[n_held++] = b;
            pops++;
            if (caching && kv_rng_below(&rng, 2)) {
                kv_digest d = digest_of((uint32_t)kv_rng_below(&rng, 40));
                kv_pool_cache(pool, b, &d);
                cr_assert_neq(kv_pool_lookup(pool, &d), KV_NO_BLOCK);
            }
        } else if (r < 55 && caching) {
            kv_digest d = digest_of((uint32_t)kv_rng_below(&rng, 40));
            kv_block_id b = kv_pool_lookup(pool, &d);
            if (b != KV_NO_BLOCK && ref[b] < MAXREF) {
                kv_pool_touch(pool, b);
                ref[b]++;
                held[n_held++] = b;
                touches++;
            }
        } else if (n_held > 0) {
            kv_block_id batch[5];
            size_t k = take_batch(&rng, held, &n_held, batch, 5);
            for (size_t i = 0; i < k; i++)
                ref[batch[i]]--;
            kv_pool_free(pool, batch, k);
            frees++;
        }
        if (op % 97 == 0) {
            kv_diag d;
            cr_assert_eq(kv_pool_check(pool, &d), 0, "invariants broken after op %d: %s", op,
                         d.msg);
            uint32_t used = 0;
            for (int b = 1; b < N; b++) {
                cr_assert_eq(kv_pool_refcount(pool, b), ref[b]);
                used += ref[b] > 0;
            }
            cr_assert_eq(kv_pool_num_used(pool), used);
            cr_assert_eq(kv_pool_refcount_sum(pool), n_held);
        }
    }
    cr_assert_gt(pops, 10000);
    cr_assert_gt(frees, 10000);
    if (caching)
        cr_assert_gt(touches, 1000);
    {
        kv_diag d;
        cr_assert_eq(kv_pool_check(pool, &d), 0, "%s", d.msg);
    }
    kv_pool_free(pool, held, n_held);
}

Test(pool, R9_stress_split)
{
    stress(KV_FREE_SPLIT, true, 1);
}

Test(pool, R9_stress_append)
{
    stress(KV_FREE_APPEND, true, 2);
}

Test(pool, R9_stress_caching_off)
{
    stress(KV_FREE_SPLIT, false, 3);
}

/* The free queue's order (R4, R6, R7) against a plain list, through many compactions of
 * the ring that holds it (DESIGN §9, pool.c "Layout": a ring of 2N slots is compacted
 * after at least N links; 16 blocks and 30,000 operations compact it hundreds of times). */
typedef struct {
    kv_block_id q[64];
    size_t n;
} list_model;

static void model_remove(list_model *m, kv_block_id b)
{
    size_t i = 0;
    while (i < m->n && m->q[i] != b)
        i++;
    cr_assert_lt(i, m->n, "block %d not in the model queue", b);
    memmove(m->q + i, m->q + i + 1, (m->n - i - 1) * sizeof *m->q);
    m->n--;
}

/* R7: the blocks of batch reaching refcount 0 (ref drops as the batch is walked; a block
 * may occur twice), appended or prepended in the given order. */
static void model_free(list_model *m, const kv_block_id *batch, size_t k, uint32_t *ref,
                       kv_free_order order)
{
    kv_block_id front[8];
    size_t nf = 0;
    for (size_t i = 0; i < k; i++) {
        if (--ref[batch[i]] > 0)
            continue;
        if (order == KV_FREE_SPLIT && !kv_pool_is_hashed(pool, batch[i]))
            front[nf++] = batch[i];
        else
            m->q[m->n++] = batch[i];
    }
    memmove(m->q + nf, m->q, m->n * sizeof *m->q);
    memcpy(m->q, front, nf * sizeof *front);
    m->n += nf;
}

static void queue_order_walk(kv_free_order order, uint64_t seed)
{
    enum { N = 16, OPS = 30000 };
    cr_assert_eq(kv_pool_create(&pool, N, true, order), 0);
    list_model m = {.n = 0};
    for (kv_block_id b = 1; b < N; b++)
        m.q[m.n++] = b;
    uint32_t ref[N] = {0};
    kv_block_id held[4 * N];
    size_t n_held = 0;
    kv_rng rng;
    kv_rng_seed(&rng, seed);
    for (int op = 0; op < OPS; op++) {
        uint64_t r = kv_rng_below(&rng, 100);
        if (r < 40 && m.n > 0) {
            kv_block_id b = kv_pool_pop(pool);
            cr_assert_eq(b, m.q[0], "op %d: popped %d, the model's head is %d", op, b, m.q[0]);
            model_remove(&m, b);
            ref[b] = 1;
            held[n_held++] = b;
            if (kv_rng_below(&rng, 2)) {
                kv_digest d = digest_of((uint32_t)kv_rng_below(&rng, 24));
                kv_pool_cache(pool, b, &d);
            }
        } else if (r < 60) {
            kv_digest d = digest_of((uint32_t)kv_rng_below(&rng, 24));
            kv_block_id b = kv_pool_lookup(pool, &d);
            if (b != KV_NO_BLOCK && n_held < 4 * N) {
                if (ref[b] == 0)
                    model_remove(&m, b); /* R6: touch unlinks it from anywhere */
                kv_pool_touch(pool, b);
                ref[b]++;
                held[n_held++] = b;
            }
        } else if (n_held > 0) {
            kv_block_id batch[6];
            size_t k = take_batch(&rng, held, &n_held, batch, 6);
            model_free(&m, batch, k, ref, order);
            kv_pool_free(pool, batch, k);
        }
        assert_queue(pool, m.q, m.n);
    }
    kv_diag d;
    cr_assert_eq(kv_pool_check(pool, &d), 0, "%s", d.msg);
    kv_pool_free(pool, held, n_held);
}

Test(pool, R7_queue_order_through_ring_compactions_split)
{
    queue_order_walk(KV_FREE_SPLIT, 11);
}

Test(pool, R7_queue_order_through_ring_compactions_append)
{
    queue_order_walk(KV_FREE_APPEND, 12);
}
