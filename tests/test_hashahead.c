/* hashahead (src/hashahead.c): chains hashed ahead on a second thread are the chains a
 * plain hasher computes, whichever thread gets to a row first; a row the producer has
 * made is copied, not hashed again; a row the replay took first is not hashed over there;
 * the byte bound puts the producer to sleep and a served row wakes it; a request that is
 * not the trace's row is computed, not served; and a whole replay (one replica and a
 * cluster) is the same with and without it (issue 9, lever 9). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvsim/blockhash.h"
#include "kvsim/cluster.h"
#include "kvsim/sim.h"
#include "support.h"

enum { ROWS = 48, IDS = 6, TB = 8, B = 4, MAX_BLOCKS = IDS * TB / B };

static uint64_t ids[ROWS][IDS];
static kv_request_spec specs[ROWS];
static kv_trace trace;

/* ROWS requests in arrival order whose file rows are reversed (row ≠ index), each 6
 * hash_ids of 8 tokens (12 blocks of 4), sharing prefixes of 0–5 trace blocks. */
static void make_trace(void)
{
    for (uint32_t i = 0; i < ROWS; i++) {
        for (uint32_t k = 0; k < IDS; k++)
            ids[i][k] = k < i % IDS ? k + 1 : 1000 * (i + 1) + k;
        specs[i] = (kv_request_spec){.prompt_len = IDS * TB + 3, /* a partial block, 'U' */
                                     .output_len = 4,
                                     .row = ROWS - 1 - i,
                                     .content = KV_CONTENT_HASH_IDS,
                                     .hash_ids = ids[i],
                                     .n_hash_ids = IDS};
    }
    trace = (kv_trace){.reqs = specs, .n = ROWS, .trace_block_size = TB};
}

static kv_hasher *hasher(void)
{
    kv_hasher *h;
    cr_assert_eq(kv_hasher_create(&h, "m", "bf16", B), 0);
    return h;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Wait up to 10 s for h to have hashed `want` blocks (the producer's work). */
static void wait_hashed(const kv_hasher *h, uint64_t want)
{
    for (int i = 0; i < 10000 && kv_hasher_blocks_hashed(h) < want; i++)
        sleep_ms(1);
    cr_assert_eq(kv_hasher_blocks_hashed(h), want, "the producer hashed %llu blocks, not %llu",
                 (unsigned long long)kv_hasher_blocks_hashed(h), (unsigned long long)want);
}

/* Request i's chain through h in pieces [0, 5) and [5, 12), against a plain hasher. */
static void check_chain(kv_hasher *h, uint32_t i)
{
    kv_content c;
    kv_content_from_spec(&c, &specs[i], TB, 0);
    kv_hasher *plain = hasher();
    kv_digest want[MAX_BLOCKS], got[MAX_BLOCKS];
    kv_hasher_chain(plain, &c, want, 0, MAX_BLOCKS);
    kv_hasher_chain(h, &c, got, 0, 5);
    kv_hasher_chain(h, &c, got, 5, MAX_BLOCKS);
    cr_assert_eq(memcmp(want, got, sizeof want), 0, "request %u's chain", i);
    kv_hasher_destroy(plain);
}

TestSuite(hashahead, .init = make_trace);

/* Every shared-kind block is hashed once, over there; serving copies them all. */
Test(hashahead, rows_made_ahead_are_copied_not_hashed_again)
{
    kv_hasher *h = hasher();
    cr_assert_eq(kv_hasher_ahead(h, &trace, 0, (size_t)1 << 20), 0);
    wait_hashed(h, ROWS * MAX_BLOCKS);
    for (uint32_t i = 0; i < ROWS; i++)
        check_chain(h, i);
    cr_assert_eq(kv_hasher_blocks_hashed(h), ROWS * MAX_BLOCKS, "served rows were hashed again");
    kv_hasher_destroy(h);
}

/* Room for one row: the producer makes the first arrival's chain and sleeps.  Asked in
 * reverse, every other row is taken and computed here; serving the first row wakes the
 * producer, which skips the taken rows: each block hashed once in all. */
Test(hashahead, rows_taken_here_are_skipped_there_and_a_served_row_wakes_the_producer)
{
    kv_hasher *h = hasher();
    cr_assert_eq(kv_hasher_ahead(h, &trace, 0, MAX_BLOCKS * sizeof(kv_digest)), 0);
    wait_hashed(h, MAX_BLOCKS);
    for (uint32_t i = ROWS; i-- > 0;)
        check_chain(h, i);
    sleep_ms(200); /* time for a producer that did not skip to hash again */
    cr_assert_eq(kv_hasher_blocks_hashed(h), ROWS * MAX_BLOCKS);
    kv_hasher_destroy(h);
}

/* No room for any row: nothing is made ahead, everything is computed here, correctly. */
Test(hashahead, a_row_over_the_bound_is_computed_here)
{
    kv_hasher *h = hasher();
    cr_assert_eq(kv_hasher_ahead(h, &trace, 0, MAX_BLOCKS * sizeof(kv_digest) - 1), 0);
    sleep_ms(50);
    cr_assert_eq(kv_hasher_blocks_hashed(h), 0);
    for (uint32_t i = 0; i < ROWS; i++)
        check_chain(h, i);
    cr_assert_eq(kv_hasher_blocks_hashed(h), ROWS * MAX_BLOCKS);
    kv_hasher_destroy(h);
}

/* A content naming a row of the trace but not its content gets its own chain. */
Test(hashahead, a_request_that_is_not_the_rows_is_not_served)
{
    kv_hasher *h = hasher();
    cr_assert_eq(kv_hasher_ahead(h, &trace, 0, (size_t)1 << 20), 0);
    wait_hashed(h, ROWS * MAX_BLOCKS);
    uint64_t other[IDS] = {77, 78, 79, 80, 81, 82};
    kv_request_spec s = specs[3];
    s.hash_ids = other;
    kv_content c;
    kv_content_from_spec(&c, &s, TB, 0);
    kv_hasher *plain = hasher();
    kv_digest want[MAX_BLOCKS], got[MAX_BLOCKS];
    kv_hasher_chain(plain, &c, want, 0, MAX_BLOCKS);
    kv_hasher_chain(h, &c, got, 0, MAX_BLOCKS);
    cr_assert_eq(memcmp(want, got, sizeof want), 0, "served another content's chain");
    check_chain(h, 3); /* the row itself is still there */
    kv_hasher_destroy(plain);
    kv_hasher_destroy(h);
}

/* The memo moves to the producer; a second start, or one over a chain store, is refused. */
Test(hashahead, takes_the_memo_and_starts_once)
{
    kv_hasher *h = hasher();
    cr_assert_eq(kv_hasher_memo(h, (size_t)1 << 20, TB / B), 0);
    cr_assert_eq(kv_hasher_ahead(h, &trace, 0, (size_t)1 << 20), 0);
    cr_assert_eq(kv_hasher_ahead(h, &trace, 0, (size_t)1 << 20), -KV_EINVAL);
    for (uint32_t i = 0; i < ROWS; i++)
        check_chain(h, i);
    uint64_t hits = 1, misses = 1;
    kv_hasher_memo_stats(h, &hits, &misses);
    cr_assert_eq(hits + misses, 0, "the replay's hasher still has the memo");
    kv_hasher_destroy(h);
    kv_chain_store *s = kv_chain_store_create(1 << 20);
    h = hasher();
    kv_hasher_use_store(h, s);
    cr_assert_eq(kv_hasher_ahead(h, &trace, 0, (size_t)1 << 20), -KV_EINVAL);
    kv_hasher_destroy(h);
    kv_chain_store_destroy(s);
}

/* --shared-prefix rows: content-less prompts whose first N tokens are shared. */
Test(hashahead, shared_prefix_rows_are_hashed_ahead)
{
    kv_request_spec none[ROWS];
    for (uint32_t i = 0; i < ROWS; i++)
        none[i] = (kv_request_spec){.prompt_len = 20 + i, .output_len = 2, .row = i};
    kv_trace t = {.reqs = none, .n = ROWS, .trace_block_size = TB};
    kv_hasher *h = hasher(), *plain = hasher();
    cr_assert_eq(kv_hasher_ahead(h, &t, 12, (size_t)1 << 20), 0);
    wait_hashed(h, ROWS * 3); /* 12 shared tokens: 3 blocks a row */
    for (uint32_t i = 0; i < ROWS; i++) {
        kv_content c;
        kv_content_from_spec(&c, &none[i], TB, 12);
        kv_digest want[3], got[3];
        kv_hasher_chain(plain, &c, want, 0, 3);
        kv_hasher_chain(h, &c, got, 0, 3);
        cr_assert_eq(memcmp(want, got, sizeof want), 0, "row %u", i);
    }
    cr_assert_eq(kv_hasher_blocks_hashed(h), ROWS * 3);
    kv_hasher_destroy(h);
    kv_hasher_destroy(plain);
}

/* ---- a whole replay ------------------------------------------------------------------ */

static void same_runs(const kv_run_result *a, const kv_run_result *b)
{
    cr_assert_eq(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const kv_req *x = &a->reqs[i], *y = &b->reqs[i];
        cr_assert(x->status == y->status && x->preemptions == y->preemptions &&
                      x->hit_tokens == y->hit_tokens &&
                      x->num_cached_tokens == y->num_cached_tokens &&
                      x->first_token_ns == y->first_token_ns && x->finish_ns == y->finish_ns,
                  "request %zu differs", i);
    }
    cr_assert(a->stats.steps == b->stats.steps && a->stats.evictions == b->stats.evictions &&
                  memcmp(&a->stats.sched, &b->stats.sched, sizeof a->stats.sched) == 0 &&
                  memcmp(&a->stats.prefix, &b->stats.prefix, sizeof a->stats.prefix) == 0,
              "the run's counters differ");
    cr_assert_eq(a->sim_time_ns, b->sim_time_ns);
}

/* The Mooncake subset on a tight pool (evictions, preemptions), one replica and three
 * behind the prefix router: the same requests, times and counters with hash_ahead. */
Test(hashahead, a_replay_is_the_same_with_and_without_it)
{
    kv_trace *t;
    kv_diag d;
    kv_trace_options to = {.format = KV_TRACE_AUTO, .time_scale = 1, .seed = 1,
                           .limit = KV_TEST_SANITIZED ? 120 : 500};
    cr_assert_eq(kv_trace_load(&t, src_path("traces/mooncake_conv_500.jsonl"), &to, &d), 0,
                 "%s", d.msg);
    kv_engine_config c = test_engine_config(KV_TEST_SANITIZED ? 1500 : 6000, 16, "fixed:0.01");
    c.check_invariants = false; /* walked elsewhere; here only the two runs are compared */
    kv_router_config r;
    kv_router_config_init(&r);
    cr_assert_eq(kv_router_parse("prefix", &r, &d), 0, "%s", d.msg);
    for (uint32_t replicas = 1; replicas <= 3; replicas += 2) {
        kv_run_result plain, ahead;
        c.hash_ahead = false;
        cr_assert_eq(kv_cluster_replay(&c, replicas, &r, t, "llama-3-8b", "bf16", 0, NULL, &plain,
                                       &d),
                     0, "%s", d.msg);
        c.hash_ahead = true;
        cr_assert_eq(kv_cluster_replay(&c, replicas, &r, t, "llama-3-8b", "bf16", 0, NULL, &ahead,
                                       &d),
                     0, "%s", d.msg);
        cr_assert_gt(plain.stats.sched.preemptions, 0, "the pool is not tight");
        same_runs(&plain, &ahead);
        cr_assert(!plain.hashed_ahead && ahead.hashed_ahead, "R = %u: hashed_ahead", replicas);
        kv_run_result_release(&plain);
        kv_run_result_release(&ahead);
    }
    kv_trace_free(t);
}

/* kv_replay_hasher hashes ahead when the config asks, with prefix caching and no chain
 * store: the producer's blocks show before the replay asks for any. */
Test(hashahead, the_replay_hasher_hashes_ahead_only_when_asked)
{
    kv_trace *t;
    kv_diag d;
    kv_trace_options to = {.format = KV_TRACE_AUTO, .time_scale = 1, .seed = 1, .limit = 50};
    cr_assert_eq(kv_trace_load(&t, src_path("traces/mooncake_conv_500.jsonl"), &to, &d), 0,
                 "%s", d.msg);
    kv_chain_store *s = kv_chain_store_create(1 << 20);
    for (int k = 0; k < 4; k++) {
        kv_engine_config c = test_engine_config(3000, 16, "fixed:0.01");
        c.hash_ahead = k != 0;
        c.prefix_caching = k != 2;
        c.chains = k == 3 ? s : NULL;
        kv_hasher *h;
        cr_assert_eq(kv_replay_hasher(&h, &c, t, "llama-3-8b", "bf16", 0, &d), 0, "%s", d.msg);
        for (int i = 0; i < (k == 1 ? 5000 : 100) && kv_hasher_blocks_hashed(h) == 0; i++)
            sleep_ms(1);
        if (k == 1)
            cr_assert_gt(kv_hasher_blocks_hashed(h), 0, "nothing hashed ahead");
        else
            cr_assert_eq(kv_hasher_blocks_hashed(h), 0, "case %d hashed ahead", k);
        kv_hasher_destroy(h);
    }
    kv_chain_store_destroy(s);
    kv_trace_free(t);
}

/* Room for one row, asked in arrival order as each is made: every chain is copied, so
 * each served row must make room for, and wake the producer for, the next. */
Test(hashahead, a_served_row_makes_room_for_the_next)
{
    kv_hasher *h = hasher();
    cr_assert_eq(kv_hasher_ahead(h, &trace, 0, MAX_BLOCKS * sizeof(kv_digest)), 0);
    for (uint32_t i = 0; i < ROWS; i++) {
        wait_hashed(h, (uint64_t)(i + 1) * MAX_BLOCKS);
        check_chain(h, i);
    }
    cr_assert_eq(kv_hasher_blocks_hashed(h), ROWS * MAX_BLOCKS);
    kv_hasher_destroy(h);
}

/* A row over the bound is left to the replay; the producer goes on with the next rows. */
Test(hashahead, the_producer_passes_a_row_over_the_bound)
{
    kv_request_spec three[3] = {specs[0], specs[1], specs[2]};
    three[0].row = 0, three[1].row = 1, three[2].row = 2;
    three[1].n_hash_ids = three[2].n_hash_ids = 1; /* 11 tokens: 2 full blocks each */
    three[1].prompt_len = three[2].prompt_len = TB + 3;
    kv_trace t = {.reqs = three, .n = 3, .trace_block_size = TB};
    kv_hasher *h = hasher();
    cr_assert_eq(kv_hasher_ahead(h, &t, 0, 4 * sizeof(kv_digest)), 0);
    wait_hashed(h, 4);
    kv_hasher_destroy(h);
}
