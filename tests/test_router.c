/* router (DESIGN §10 C3–C5, C8): every policy on one hand-built three-replica scenario
 * whose choices are derived by hand in the comments, exact ties, the overlap rule against
 * kvcache's own lookup, the approx view's LRU eviction, the tie-break stream, and the
 * spec parser's messages. */
#include <criterion/criterion.h>
#include <string.h>

#include "kvsim/kvcache.h"
#include "kvsim/rng.h"
#include "kvsim/router.h"

enum { B = 16 };

/* Digest "k": a recognisable pattern, distinct for distinct k. */
static kv_digest dg(uint32_t k)
{
    kv_digest d;
    memset(&d, 0, sizeof d);
    for (int i = 0; i < KV_DIGEST_LEN; i++)
        d.b[i] = (uint8_t)(k * 37u + (uint32_t)i * 11u + (k >> 8));
    memcpy(d.b, &k, sizeof k); /* the first bytes differ: the LRU's hash key */
    return d;
}

/* A pool of 11 blocks (10 usable) holding the digests ks[0..n), each in its own block;
 * the first `freed` of them are released again (cached free: still in the index). */
static kv_pool *pool_with(const uint32_t *ks, size_t n, size_t freed)
{
    kv_pool *p;
    cr_assert_eq(kv_pool_create(&p, 11, true, KV_FREE_SPLIT), 0);
    for (size_t i = 0; i < n; i++) {
        kv_block_id b = kv_pool_pop(p);
        kv_digest d = dg(ks[i]);
        kv_pool_cache(p, b, &d);
        if (i < freed)
            kv_pool_free(p, &b, 1);
    }
    return p;
}

/* Give back every referenced block so kv_pool_destroy's check holds. */
static void pool_drop(kv_pool *p)
{
    for (kv_block_id b = 1; b < 11; b++)
        while (kv_pool_refcount(p, b) > 0)
            kv_pool_free(p, &b, 1);
    kv_pool_destroy(p);
}

/* The prompt A0 A1 A2 A3 of 65 tokens: P = 4 full blocks, §5's cap ⌊64/16⌋ = 4. */
static kv_digest chain_a[4];
static kv_route_input input_a(void)
{
    for (uint32_t j = 0; j < 4; j++)
        chain_a[j] = dg(100 + j);
    return (kv_route_input){chain_a, 4, 4, KV_ROUTER_NO_SESSION, 0, 0};
}

/* The scenario.  Replica 0 caches A0 A1 (overlap 2), replica 1 A0 A1 A2 (overlap 3;
 * two of them cached free), replica 2 A1 A2 (overlap 0: the walk stops at the first
 * miss).  Signals (running, waiting, used, free of 10 usable):
 *   r0 (2, 1, 6, 4)   load 3
 *   r1 (3, 3, 8, 2)   load 6
 *   r2 (1, 0, 2, 8)   load 1 */
typedef struct scenario {
    kv_pool *pool[3];
    kv_replica_signals sig[3];
} scenario;

static void scenario_make(scenario *s)
{
    static const uint32_t p0[] = {100, 101}, p1[] = {100, 101, 102, 7}, p2[] = {101, 102};
    s->pool[0] = pool_with(p0, 2, 0);
    s->pool[1] = pool_with(p1, 4, 2);
    s->pool[2] = pool_with(p2, 2, 0);
    s->sig[0] = (kv_replica_signals){2, 1, 6, 4};
    s->sig[1] = (kv_replica_signals){3, 3, 8, 2};
    s->sig[2] = (kv_replica_signals){1, 0, 2, 8};
}

static void scenario_free(scenario *s)
{
    for (int r = 0; r < 3; r++)
        pool_drop(s->pool[r]);
}

static kv_router *router_for(const char *spec, uint64_t seed)
{
    kv_router_config c;
    kv_router_config_init(&c);
    kv_diag d;
    cr_assert_eq(kv_router_parse(spec, &c, &d), 0, "%s", d.msg);
    c.seed = seed;
    kv_router *rt;
    cr_assert_eq(kv_router_create(&rt, &c, 3, 10, 4, &d), 0, "%s", d.msg);
    return rt;
}

static kv_route route(kv_router *rt, scenario *s, kv_route_input in)
{
    kv_route out;
    kv_router_route(rt, &in, s->sig, (const kv_pool *const *)s->pool, &out);
    return out;
}

/* The first draws of SplitMix64 from seed 0 (C8), and what they pick:
 *   d1 = 0xE220A8397B1DCDAF  (mod 2 = 1, mod 3 = 1)
 *   d2 = 0x6E789E6AA1B965F4  (mod 2 = 0, mod 3 = 0)
 *   d3 = 0x06C45D188009454F  (mod 2 = 1, mod 3 = 1) */
Test(router, c8_splitmix64_first_draws_from_seed_0)
{
    uint64_t st = 0;
    cr_assert_eq(kv_splitmix64(&st), 0xE220A8397B1DCDAFull);
    cr_assert_eq(kv_splitmix64(&st), 0x6E789E6AA1B965F4ull);
    cr_assert_eq(kv_splitmix64(&st), 0x06C45D188009454Full);
}

Test(router, c4_overlap_walks_leading_blocks_to_the_first_miss)
{
    scenario s;
    scenario_make(&s);
    kv_router *rt = router_for("prefix", 0);
    kv_route_input in = input_a();
    cr_assert_eq(kv_router_overlap(rt, 0, &in, s.pool[0]), 2);
    cr_assert_eq(kv_router_overlap(rt, 1, &in, s.pool[1]), 3, "cached free blocks count");
    cr_assert_eq(kv_router_overlap(rt, 2, &in, s.pool[2]), 0, "A1, A2 without A0 is no hit");
    in.max_hit = 2; /* a 48-token prompt: §5 recomputes its last block */
    cr_assert_eq(kv_router_overlap(rt, 1, &in, s.pool[1]), 2, "capped by the n-1 rule");
    in.chain = NULL;
    cr_assert_eq(kv_router_overlap(rt, 1, &in, s.pool[1]), 0, "no chain, no overlap");
    kv_router_destroy(rt);
    scenario_free(&s);
}

Test(router, c3_round_robin_counts_every_routed_request)
{
    scenario s;
    scenario_make(&s);
    kv_router *rt = router_for("round-robin", 0);
    for (uint32_t k = 0; k < 7; k++)
        cr_assert_eq(route(rt, &s, input_a()).replica, k % 3);
    cr_assert_eq(kv_router_routed(rt), 7);
    kv_router_destroy(rt);
    scenario_free(&s);
}

Test(router, c3_random_takes_the_draw_over_every_replica)
{
    scenario s;
    scenario_make(&s);
    kv_router *rt = router_for("random", 0);
    cr_assert_eq(route(rt, &s, input_a()).replica, 1, "d1 mod 3");
    cr_assert_eq(route(rt, &s, input_a()).replica, 0, "d2 mod 3");
    cr_assert_eq(route(rt, &s, input_a()).replica, 1, "d3 mod 3");
    kv_router_destroy(rt);
    scenario_free(&s);
}

Test(router, c3_least_requests_and_least_kv)
{
    scenario s;
    scenario_make(&s);
    kv_router *rt = router_for("least-requests", 0);
    cr_assert_eq(route(rt, &s, input_a()).replica, 2, "loads 3, 6, 1");
    /* A tie: loads 3, 3, 6 → candidates {0, 1}, d2 mod 2 = 0. */
    s.sig[1] = (kv_replica_signals){2, 1, 8, 2};
    s.sig[2] = (kv_replica_signals){5, 1, 2, 8};
    cr_assert_eq(route(rt, &s, input_a()).replica, 0);
    /* Again: d3 mod 2 = 1. */
    cr_assert_eq(route(rt, &s, input_a()).replica, 1);
    kv_router_destroy(rt);

    scenario_free(&s);
    scenario_make(&s);
    rt = router_for("least-kv", 0);
    cr_assert_eq(route(rt, &s, input_a()).replica, 2, "used 6, 8, 2");
    s.sig[2].used_blocks = 6; /* used 6, 8, 6 → {0, 2}, d2 mod 2 = 0 → 0 */
    cr_assert_eq(route(rt, &s, input_a()).replica, 0);
    kv_router_destroy(rt);
    scenario_free(&s);
}

Test(router, c3_prefix_takes_the_largest_overlap_then_the_least_load)
{
    scenario s;
    scenario_make(&s);
    kv_router *rt = router_for("prefix", 0);
    kv_route r = route(rt, &s, input_a());
    cr_assert_eq(r.replica, 1, "overlaps 2, 3, 0");
    cr_assert_eq(r.overlap, 3, "the predicted hit on the chosen replica");
    /* Equal overlaps: a prompt of B0 only (cached nowhere) → overlap 0 everywhere, the
     * least loaded wins (replica 2, load 1). */
    kv_digest b0 = dg(900);
    kv_route_input in = {&b0, 1, 1, KV_ROUTER_NO_SESSION, 0, 0};
    r = route(rt, &s, in);
    cr_assert_eq(r.replica, 2);
    cr_assert_eq(r.overlap, 0);
    kv_router_destroy(rt);
    scenario_free(&s);
}

Test(router, c3_weighted_scores_by_hand)
{
    /* Weights 2, 1, 1; P = 4; queue q = 1, 3, 0 (max 3, min 0); usable 10.
     *   r0: 2·2/4 + 1·(3−1)/3 + 1·4/10 = 1 + 0.667 + 0.4 = 2.067
     *   r1: 2·3/4 + 1·0/3     + 1·2/10 = 1.5 + 0   + 0.2 = 1.700
     *   r2: 2·0/4 + 1·3/3     + 1·8/10 = 0   + 1   + 0.8 = 1.800   → replica 0 */
    scenario s;
    scenario_make(&s);
    kv_router *rt = router_for("weighted", 0);
    cr_assert_eq(route(rt, &s, input_a()).replica, 0);
    kv_router_destroy(rt);
    /* prefix only: overlaps decide (replica 1). */
    rt = router_for("weighted:prefix=1", 0);
    cr_assert_eq(route(rt, &s, input_a()).replica, 1);
    kv_router_destroy(rt);
    /* queue only: the shortest waiting queue (replica 2, q = 0). */
    rt = router_for("weighted:queue=1", 0);
    cr_assert_eq(route(rt, &s, input_a()).replica, 2);
    kv_router_destroy(rt);
    /* Equal waiting counts: the queue scorer is 1 everywhere; kv decides (replica 2). */
    s.sig[0].waiting = s.sig[1].waiting = s.sig[2].waiting = 4;
    rt = router_for("weighted:queue=5,kv=1", 0);
    cr_assert_eq(route(rt, &s, input_a()).replica, 2);
    kv_router_destroy(rt);
    scenario_free(&s);
}

Test(router, c8_weighted_scores_tie_exactly_where_doubles_would_not)
{
    /* prefix=0.1, queue=0.2, kv=0.3.  r0: prefix s = 4/4, queue s = 1 (q = min), kv s = 0
     * → 0.1 + 0.2; r1: prefix 0, queue 0 (q = max), kv s = 10/10 → 0.3; r2: 0.  In doubles
     * 0.1 + 0.2 > 0.3; exactly they are equal: candidates {0, 1}, d1 mod 2 = 1. */
    scenario s;
    static const uint32_t all[] = {100, 101, 102, 103};
    s.pool[0] = pool_with(all, 4, 0);
    s.pool[1] = pool_with(all, 0, 0);
    s.pool[2] = pool_with(all, 0, 0);
    s.sig[0] = (kv_replica_signals){0, 0, 10, 0};
    s.sig[1] = (kv_replica_signals){0, 2, 0, 10};
    s.sig[2] = (kv_replica_signals){0, 2, 10, 0};
    kv_router *rt = router_for("weighted:prefix=0.1,queue=0.2,kv=0.3", 0);
    cr_assert_eq(route(rt, &s, input_a()).replica, 1, "an exact tie goes to the draw");
    kv_router_destroy(rt);
    rt = router_for("weighted:prefix=0.1,queue=0.2,kv=0.3", 1); /* seed 1: d1 is even */
    uint64_t st = 1;
    uint32_t want = (uint32_t)(kv_splitmix64(&st) % 2);
    cr_assert_eq(route(rt, &s, input_a()).replica, want);
    kv_router_destroy(rt);
    scenario_free(&s);
}

Test(router, c3_kv_cost_by_hand)
{
    /* cost = WO·(P − overlap) + used, P = 4:
     *   WO 1: r0 2 + 6 = 8, r1 1 + 8 = 9, r2 4 + 2 = 6    → replica 2
     *   WO 4: r0 8 + 6 = 14, r1 4 + 8 = 12, r2 16 + 2 = 18 → replica 1 */
    scenario s;
    scenario_make(&s);
    kv_router *rt = router_for("kv-cost", 0);
    cr_assert_eq(route(rt, &s, input_a()).replica, 2);
    kv_router_destroy(rt);
    kv_router_config c;
    kv_router_config_init(&c);
    c.policy = KV_ROUTER_KV_COST;
    c.overlap_weight = 4 * KV_ROUTER_UNIT;
    kv_diag d;
    cr_assert_eq(kv_router_create(&rt, &c, 3, 10, 0, &d), 0, "%s", d.msg);
    cr_assert_eq(route(rt, &s, input_a()).replica, 1);
    /* WO 2.5: r0 5 + 6 = 11, r1 2.5 + 8 = 10.5, r2 10 + 2 = 12 → replica 1 */
    kv_router_destroy(rt);
    c.overlap_weight = 2500000;
    cr_assert_eq(kv_router_create(&rt, &c, 3, 10, 0, &d), 0, "%s", d.msg);
    cr_assert_eq(route(rt, &s, input_a()).replica, 1);
    kv_router_destroy(rt);
    scenario_free(&s);
}

Test(router, c3_session_sticks_to_its_first_replica)
{
    scenario s;
    scenario_make(&s);
    kv_router *rt = router_for("session", 0);
    kv_route_input in = input_a();
    in.session = 3;
    cr_assert_eq(route(rt, &s, in).replica, 2, "first row: least-requests (loads 3, 6, 1)");
    s.sig[2] = (kv_replica_signals){9, 9, 9, 1}; /* replica 2 is now the busiest */
    cr_assert_eq(route(rt, &s, in).replica, 2, "later rows follow the session");
    in.session = KV_ROUTER_NO_SESSION;
    cr_assert_eq(route(rt, &s, in).replica, 0, "no session: least-requests (3, 6, 18)");
    in.session = 1;
    cr_assert_eq(route(rt, &s, in).replica, 0, "a new session: least-requests");
    kv_router_destroy(rt);
    scenario_free(&s);
}

Test(router, c8_one_draw_per_routed_request_whatever_the_policy)
{
    /* Session rows that follow their session still draw: the third request (all loads
     * equal, a three-way tie) takes d3 mod 3 = 1, not d2 mod 3 = 0. */
    scenario s;
    scenario_make(&s);
    for (int r = 0; r < 3; r++)
        s.sig[r] = (kv_replica_signals){1, 1, 1, 9};
    kv_router *rt = router_for("session", 0);
    kv_route_input in = input_a();
    in.session = 0;
    cr_assert_eq(route(rt, &s, in).replica, 1, "d1 mod 3");
    cr_assert_eq(route(rt, &s, in).replica, 1, "the session's replica (d2 drawn, unused)");
    in.session = KV_ROUTER_NO_SESSION;
    cr_assert_eq(route(rt, &s, in).replica, 1, "d3 mod 3");
    kv_router_destroy(rt);
    scenario_free(&s);
}

/* One replica behind the approx view, its LRU of capacity cap (round-robin: always 0). */
static kv_router *approx_router(uint32_t cap)
{
    kv_router_config c;
    kv_router_config_init(&c);
    c.view = KV_ROUTER_APPROX;
    kv_router *rt;
    kv_diag d;
    cr_assert_eq(kv_router_create(&rt, &c, 1, cap, 0, &d), 0, "%s", d.msg);
    return rt;
}

Test(router, c5_approx_view_lru_evicts_the_least_recently_routed)
{
    /* One replica, capacity 4 blocks, round-robin (always replica 0). */
    kv_router *rt = approx_router(4);
    kv_diag d;
    kv_replica_signals sig = {0, 0, 0, 4};
    kv_route out;
    kv_route_input a = input_a();
    kv_router_route(rt, &a, &sig, NULL, &out);
    cr_assert_eq(out.overlap, 0, "nothing routed yet");
    cr_assert_eq(kv_router_lru_size(rt, 0), 4);
    kv_router_route(rt, &a, &sig, NULL, &out);
    cr_assert_eq(out.overlap, 4, "A routed before: all four blocks");
    /* B0 B1 evicts A0 and A1, the least recently routed: A's overlap falls to 0 although
     * A2 and A3 are still there (the walk stops at the first miss). */
    kv_digest bb[2] = {dg(200), dg(201)};
    kv_route_input b = {bb, 2, 2, KV_ROUTER_NO_SESSION, 0, 0};
    kv_router_route(rt, &b, &sig, NULL, &out);
    cr_assert_eq(kv_router_lru_size(rt, 0), 4, "at capacity");
    cr_assert_eq(kv_router_overlap(rt, 0, &a, NULL), 0);
    kv_route_input a2 = {&chain_a[2], 1, 1, KV_ROUTER_NO_SESSION, 0, 0};
    kv_route_input a3 = {&chain_a[3], 1, 1, KV_ROUTER_NO_SESSION, 0, 0};
    cr_assert_eq(kv_router_overlap(rt, 0, &a2, NULL), 1);
    /* Routing A2 alone refreshes it; the next insert evicts A3, not A2. */
    kv_router_route(rt, &a2, &sig, NULL, &out);
    cr_assert_eq(out.overlap, 1);
    kv_digest e0 = dg(300);
    kv_route_input e = {&e0, 1, 1, KV_ROUTER_NO_SESSION, 0, 0};
    kv_router_route(rt, &e, &sig, NULL, &out);
    cr_assert_eq(kv_router_overlap(rt, 0, &a2, NULL), 1, "refreshed: kept");
    cr_assert_eq(kv_router_overlap(rt, 0, &a3, NULL), 0, "least recent: evicted");
    cr_assert_eq(kv_router_overlap(rt, 0, &b, NULL), 2, "B0 B1 kept");
    cr_assert_eq(kv_router_check(rt, &d), 0, "%s", d.msg);
    kv_router_destroy(rt);
}

Test(router, c5_private_blocks_take_approx_slots_but_are_in_no_view)
{
    /* DESIGN §9: a prompt's private blocks (content no other request has) are never
     * hashed.  The approx LRU still spends a slot on each, as llm-d's indexer hashes every
     * block of a routed prompt, under a key of its own per (request, block); no view ever
     * holds one, so an overlap stops before them.  One replica, capacity 5. */
    kv_router *rt = approx_router(5);
    kv_diag d;
    kv_replica_signals sig = {0, 0, 0, 5};
    kv_route out;
    /* X: A0 A1 then two private blocks; Y: A0 A1 then three private ones. */
    (void)input_a(); /* fills chain_a */
    kv_route_input x = {chain_a, 4, 4, KV_ROUTER_NO_SESSION, 2, 10};
    kv_route_input y = {chain_a, 5, 5, KV_ROUTER_NO_SESSION, 3, 11};
    kv_router_route(rt, &x, &sig, NULL, &out);
    cr_assert_eq(kv_router_lru_size(rt, 0), 4, "A0 A1 and X's two private keys");
    cr_assert_eq(kv_router_overlap(rt, 0, &x, NULL), 2, "the walk stops before the private");
    cr_assert_eq(kv_router_overlap(rt, 0, &y, NULL), 2);
    kv_router_route(rt, &y, &sig, NULL, &out);
    cr_assert_eq(out.overlap, 2);
    cr_assert_eq(kv_router_lru_size(rt, 0), 5, "at capacity");
    /* Y's three private keys (and the refresh of A0 A1) pushed out X's two: X's own
     * keys are distinct from Y's, so a request after both still overlaps A0 A1 only. */
    kv_route_input z = {chain_a, 3, 3, KV_ROUTER_NO_SESSION, 0, 12};
    cr_assert_eq(kv_router_overlap(rt, 0, &z, NULL), 2, "A2 was never routed");
    cr_assert_eq(kv_router_check(rt, &d), 0, "%s", d.msg);
    /* Capacity 4: Y's five blocks evict A0 first — its private blocks count. */
    kv_router_destroy(rt);
    rt = approx_router(4);
    kv_router_route(rt, &y, &sig, NULL, &out);
    cr_assert_eq(kv_router_lru_size(rt, 0), 4);
    cr_assert_eq(kv_router_overlap(rt, 0, &z, NULL), 0, "A0 evicted by Y's private keys");
    kv_router_destroy(rt);
}

Test(router, c5_approx_lru_survives_many_inserts_and_deletes)
{
    /* The open-addressing table's backward-shift deletion under churn: capacity 37,
     * 5000 inserts of digests drawn from 200, checked against a brute-force model. */
    kv_router_config c;
    kv_router_config_init(&c);
    c.view = KV_ROUTER_APPROX;
    kv_router *rt;
    kv_diag d;
    cr_assert_eq(kv_router_create(&rt, &c, 1, 37, 0, &d), 0, "%s", d.msg);
    uint32_t model[37];
    size_t n = 0;
    kv_rng rng;
    kv_rng_seed(&rng, 5);
    kv_replica_signals sig = {0, 0, 0, 0};
    for (int it = 0; it < 5000; it++) {
        uint32_t k = (uint32_t)kv_rng_below(&rng, 200);
        kv_digest x = dg(k);
        kv_route_input in = {&x, 1, 1, KV_ROUTER_NO_SESSION, 0, 0};
        kv_route out;
        kv_router_route(rt, &in, &sig, NULL, &out);
        size_t at = n;
        for (size_t i = 0; i < n; i++)
            if (model[i] == k)
                at = i;
        cr_assert_eq(out.overlap, at < n, "iteration %d: lookup before the insert", it);
        if (at < n) { /* refresh: move to the back */
            memmove(&model[at], &model[at + 1], (n - at - 1) * sizeof *model);
            model[n - 1] = k;
        } else if (n == 37) { /* evict the front */
            memmove(&model[0], &model[1], 36 * sizeof *model);
            model[36] = k;
        } else {
            model[n++] = k;
        }
        if (it % 500 == 0)
            cr_assert_eq(kv_router_check(rt, &d), 0, "%s", d.msg);
    }
    cr_assert_eq(kv_router_lru_size(rt, 0), n);
    for (uint32_t k = 0; k < 200; k++) {
        kv_digest x = dg(k);
        kv_route_input in = {&x, 1, 1, KV_ROUTER_NO_SESSION, 0, 0};
        bool in_model = false;
        for (size_t i = 0; i < n; i++)
            in_model |= model[i] == k;
        cr_assert_eq(kv_router_overlap(rt, 0, &in, NULL), in_model, "digest %u", k);
    }
    kv_router_destroy(rt);
}

Test(router, c4_overlap_equals_kvcache_lookup_on_the_same_pool)
{
    /* A request that ran and finished leaves cached blocks; for a second request with a
     * shared prefix the router's exact-view overlap is the hit kvcache grants. */
    kv_hasher *h;
    cr_assert_eq(kv_hasher_create(&h, "t", "bf16", 4), 0);
    kv_pool *p;
    cr_assert_eq(kv_pool_create(&p, 32, true, KV_FREE_SPLIT), 0);
    kv_cache *c;
    kv_cache_create(&c, p, h);
    uint32_t t1[20], t2[23];
    for (uint32_t i = 0; i < 20; i++)
        t1[i] = i;
    for (uint32_t i = 0; i < 23; i++)
        t2[i] = i < 13 ? i : 1000 + i; /* shares 13 tokens: 3 full blocks */
    kv_content c1 = {.kind = KV_CONTENT_TOKENS, .prompt_len = 20, .tokens = t1};
    kv_content c2 = {.kind = KV_CONTENT_TOKENS, .prompt_len = 23, .row = 1, .tokens = t2};
    kv_seq *s1 = kv_seq_create(&c1, 20), *s2 = kv_seq_create(&c2, 23);
    cr_assert(kv_cache_allocate(c, s1, 0, NULL, 20, 20));
    kv_cache_free(c, s1);
    kv_router_config cfg;
    kv_router_config_init(&cfg);
    kv_router *rt;
    kv_diag d;
    cr_assert_eq(kv_router_create(&rt, &cfg, 1, 31, 0, &d), 0, "%s", d.msg);
    kv_route_input in = {kv_seq_chain(s2, h, 23 / 4), 23 / 4, 22 / 4, KV_ROUTER_NO_SESSION, 0, 0};
    kv_hits hits;
    kv_cache_lookup(c, s2, 23, &hits);
    cr_assert_eq(hits.n, 3);
    cr_assert_eq(kv_router_overlap(rt, 0, &in, p), hits.n);
    kv_router_destroy(rt);
    kv_seq_destroy(s1);
    kv_seq_destroy(s2);
    kv_cache_destroy(c);
    kv_pool_destroy(p);
    kv_hasher_destroy(h);
}

/* ---- the spec parser ----------------------------------------------------------------- */

static void bad_spec(const char *spec, const char *msg)
{
    kv_router_config c;
    kv_router_config_init(&c);
    kv_diag d;
    cr_assert_eq(kv_router_parse(spec, &c, &d), -KV_EINVAL, "'%s' accepted", spec);
    cr_assert_str_eq(d.msg, msg);
    cr_assert_eq(c.policy, KV_ROUTER_ROUND_ROBIN, "unchanged on error");
}

Test(router, bad_specs_say_what_is_wrong)
{
    bad_spec("foo", "{router}: unknown policy 'foo' (expected one of: round-robin, random, "
                    "least-requests, least-kv, prefix, weighted[:prefix=WP,queue=WQ,kv=WK], "
                    "kv-cost, session)");
    bad_spec("prefix:x", "{router}: 'prefix' takes no parameters (got 'prefix:x')");
    bad_spec("weighted:prefix=0,queue=0,kv=0",
             "{router}: the weights in 'weighted:prefix=0,queue=0,kv=0' are all 0 (give at "
             "least one above 0)");
    bad_spec("weighted:prefix=x",
             "{router}: weight 'prefix': 'x' is not a decimal number (e.g. 2 or 0.5)");
    bad_spec("weighted:prefix=-1",
             "{router}: weight 'prefix': '-1' is not a decimal number (e.g. 2 or 0.5)");
    bad_spec("weighted:prefix=1e3",
             "{router}: weight 'prefix': '1e3' is not a decimal number (e.g. 2 or 0.5)");
    bad_spec("weighted:prefix=1000.5", "{router}: weight 'prefix': '1000.5' must be at most 1000");
    bad_spec("weighted:kv=0.1234567", "{router}: weight 'kv': '0.1234567' has more than 6 decimals");
    bad_spec("weighted:prefix=1,prefix=2",
             "{router}: weight 'prefix' given twice in 'weighted:prefix=1,prefix=2'");
    bad_spec("weighted:load=1", "{router}: unknown weight 'load' in 'weighted:load=1' (prefix, "
                                "queue, kv)");
    bad_spec("weighted:prefix", "{router}: malformed weights in 'weighted:prefix': 'prefix' is "
                                "not KEY=VALUE (prefix=WP,queue=WQ,kv=WK)");
    bad_spec("weighted:", "{router}: malformed weights in 'weighted:': empty entry in ''");
}

Test(router, specs_round_trip_in_canonical_form)
{
    static const char *const in[] = {"weighted", "weighted:kv=0.5", "weighted:queue=3,prefix=1.25",
                                     "kv-cost", "session"};
    static const char *const out[] = {"weighted:prefix=2,queue=1,kv=1",
                                      "weighted:prefix=0,queue=0,kv=0.5",
                                      "weighted:prefix=1.25,queue=3,kv=0", "kv-cost", "session"};
    for (size_t i = 0; i < 5; i++) {
        kv_router_config c, back;
        kv_router_config_init(&c);
        kv_diag d;
        cr_assert_eq(kv_router_parse(in[i], &c, &d), 0, "%s", d.msg);
        char buf[96];
        kv_router_spec(&c, buf, sizeof buf);
        cr_assert_str_eq(buf, out[i]);
        kv_router_config_init(&back);
        cr_assert_eq(kv_router_parse(buf, &back, &d), 0, "%s", d.msg);
        cr_assert_eq(back.policy, c.policy);
        cr_assert_eq(back.w_prefix, c.w_prefix);
        cr_assert_eq(back.w_queue, c.w_queue);
        cr_assert_eq(back.w_kv, c.w_kv);
    }
}

Test(router, views_and_refresh_are_checked)
{
    kv_router_view v;
    kv_diag d;
    cr_assert_eq(kv_router_view_parse("approx", &v, &d), 0);
    cr_assert_eq(v, KV_ROUTER_APPROX);
    cr_assert_eq(kv_router_view_parse("stale", &v, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "{router_view}: unknown view 'stale' (exact or approx)");
    kv_router_config c;
    kv_router_config_init(&c);
    c.refresh_s = 1e-12;
    cr_assert_eq(kv_router_config_check(&c, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "{router_refresh} must be 0 or at least 1 ns");
    c.refresh_s = -1;
    cr_assert_eq(kv_router_config_check(&c, &d), -KV_EINVAL);
    c.refresh_s = 0.5;
    cr_assert_eq(kv_router_config_check(&c, &d), 0);
}
