/* engine and the replay driver (DESIGN §6.5, R9): what the observers see (sampling every
 * N steps, effective tokens), the event order at equal times, each invariant walk catching
 * a corruption planted on purpose, and a seeded randomized property test that replays
 * random traces under random configurations with every walk after every step. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvcache_internal.h"
#include "kvsim/rng.h"
#include "kvsim/sim.h"
#include "pool_internal.h"
#include "support.h"

#define MAXR 512

static kv_trace trace;
static kv_request_spec specs[MAXR];
static uint32_t *tokens[MAXR];
static kv_run_result res;

static void add_req(size_t i, int64_t arrival_ns, uint32_t prompt, uint32_t output, uint32_t family)
{
    specs[i] = test_family_request(&tokens[i], i, arrival_ns, prompt, output, family);
}

static void set_trace(size_t n)
{
    memset(&trace, 0, sizeof trace);
    trace.reqs = specs;
    trace.n = n;
    trace.trace_block_size = 512;
}

static kv_engine_config config(uint32_t num_blocks, uint32_t b, const char *time_model)
{
    return test_engine_config(num_blocks, b, time_model);
}

static void teardown(void)
{
    kv_run_result_release(&res);
    for (int i = 0; i < MAXR; i++) {
        free(tokens[i]);
        tokens[i] = NULL;
    }
}

TestSuite(engine, .fini = teardown);

/* ---- observers --------------------------------------------------------------------- */

typedef struct seen {
    uint64_t step[16];
    uint64_t effective[16];
    size_t n;
} seen;

static void on_sample(void *ctx, const kv_sample *s)
{
    seen *v = ctx;
    if (v->n < 16) {
        v->step[v->n] = s->step;
        v->effective[v->n++] = s->effective_tokens;
    }
}

Test(engine, sample_every_n_steps_starts_at_the_first)
{
    add_req(0, 0, 4, 7, 0); /* 7 steps: one prefill that samples, then 6 decodes */
    set_trace(1);
    kv_engine_config c = config(20, 4, "fixed:0.001");
    seen v = {0};
    kv_sim_hooks h = {.sample_every = 3, .on_sample = on_sample, .ctx = &v};
    kv_diag d;
    cr_assert_eq(kv_replay(&c, &trace, "t", "bf16", 0, &h, &res, &d), 0, "%s", d.msg);
    cr_assert_eq(res.stats.steps, 7);
    cr_assert_eq(v.n, 3, "rows for steps 1, 4 and 7");
    cr_assert_eq(v.step[0], 1);
    cr_assert_eq(v.step[1], 4);
    cr_assert_eq(v.step[2], 7);
    cr_assert_eq(res.stats.metrics.steps, 7, "the metrics see every step");
}

Test(engine, effective_tokens_are_the_slots_filled_by_the_step)
{
    /* budget 8, chunked: 8 prompt tokens, then the last 2, then decode tokens. */
    add_req(0, 0, 10, 3, 0);
    set_trace(1);
    kv_engine_config c = config(20, 4, "fixed:0.001");
    c.sched.max_batched_tokens = 8;
    seen v = {0};
    kv_sim_hooks h = {.on_sample = on_sample, .ctx = &v};
    kv_diag d;
    cr_assert_eq(kv_replay(&c, &trace, "t", "bf16", 0, &h, &res, &d), 0, "%s", d.msg);
    cr_assert_eq(v.n, 4);
    cr_assert_eq(v.effective[0], 8);
    cr_assert_eq(v.effective[1], 10);
    cr_assert_eq(v.effective[2], 11, "a decode step fills one slot");
    cr_assert_eq(v.effective[3], 12);
}

Test(engine, an_arrival_at_a_step_end_joins_the_next_step)
{
    /* C1/§6.5: at equal times the step end, then the arrival, then the next step start. */
    add_req(0, 0, 4, 3, 0);
    add_req(1, 1000000, 4, 1, 1); /* exactly when step 1 ends */
    set_trace(2);
    kv_engine_config c = config(20, 4, "fixed:0.001");
    kv_diag d;
    cr_assert_eq(kv_replay(&c, &trace, "t", "bf16", 0, NULL, &res, &d), 0, "%s", d.msg);
    cr_assert_eq(res.reqs[1].first_scheduled_ns, 1000000, "seen by the step starting then");
    cr_assert_eq(res.stats.steps, 3, "no idle step, no extra step");
    cr_assert_eq(res.sim_time_ns, 3000000);
}

Test(engine, arrivals_far_apart_jump_the_clock)
{
    add_req(0, 0, 4, 1, 0);
    add_req(1, 5000000000, 4, 1, 1);
    set_trace(2);
    kv_engine_config c = config(20, 4, "fixed:0.001");
    kv_diag d;
    cr_assert_eq(kv_replay(&c, &trace, "t", "bf16", 0, NULL, &res, &d), 0, "%s", d.msg);
    cr_assert_eq(res.stats.steps, 2);
    cr_assert_eq(res.reqs[1].first_scheduled_ns, 5000000000);
    cr_assert_eq(res.sim_time_ns, 5001000000);
}

/* ---- the walks catch corruption ---------------------------------------------------- */

typedef struct live {
    kv_engine *e;
    kv_hasher *h;
    kv_req r[2];
} live;

/* Two requests running, mid-run, state after a step end. */
static void start_live(live *L)
{
    add_req(0, 0, 10, 50, 0);
    add_req(1, 0, 10, 50, 0); /* same family: shares its first 2 blocks */
    kv_engine_config c = config(32, 4, "fixed:0.001");
    c.check_invariants = false;
    kv_diag d;
    cr_assert_eq(kv_hasher_create(&L->h, "t", "bf16", 4), 0);
    cr_assert_eq(kv_engine_create(&L->e, &c, L->h, &d), 0, "%s", d.msg);
    for (int i = 0; i < 2; i++) {
        kv_req_init(&L->r[i], &specs[i]);
        kv_content ct;
        kv_content_from_spec(&ct, &specs[i], 512, 0);
        kv_req_attach(&L->r[i], &ct);
        kv_engine_arrive(L->e, &L->r[i], 0);
    }
    for (int k = 0; k < 4; k++) /* two steps: start, end, start, end */
        cr_assert_eq(kv_engine_advance(L->e, &d), 0, "%s", d.msg);
    cr_assert_eq(kv_engine_check(L->e, &d), 0, "a healthy engine passes: %s", d.msg);
    cr_assert_eq(kv_engine_num_running(L->e), 2);
}

static void stop_live(live *L)
{
    kv_engine_abandon(L->e);
    kv_engine_destroy(L->e);
    kv_hasher_destroy(L->h);
}

static void expect_violation(live *L, const char *what)
{
    kv_diag d;
    cr_assert_eq(kv_engine_check(L->e, &d), -KV_EINVARIANT, "corruption not noticed");
    cr_assert(strstr(d.msg, what), "diag '%s' lacks '%s'", d.msg, what);
}

Test(engine, pool_walk_catches_a_refcount_off_the_queue)
{
    live L;
    start_live(&L);
    struct kv_pool *p = (struct kv_pool *)kv_engine_pool(L.e);
    kv_block_id head = KV_NO_BLOCK;
    kv_pool_queue(p, &head, 1); /* a free block */
    p->blocks[head].ref = 1;
    expect_violation(&L, "pool: ");
    p->blocks[head].ref = 0;
    p->num_free++;
    expect_violation(&L, "queue length");
    p->num_free--;
    stop_live(&L);
}

Test(engine, kvcache_walk_catches_a_wrong_table)
{
    live L;
    start_live(&L);
    struct kv_seq *s = L.r[1].seq;
    kv_block_id saved = s->table[2];
    s->table[2] = s->table[1];
    expect_violation(&L, "twice");
    s->table[2] = saved;
    s->num_cached++;
    expect_violation(&L, "kvcache: ");
    s->num_cached--;
    stop_live(&L);
}

Test(engine, sched_walk_catches_a_request_out_of_step_with_its_table)
{
    live L;
    start_live(&L);
    L.r[0].num_computed -= 4;
    expect_violation(&L, "sched: row 0 holds 3 blocks for 7 tokens");
    L.r[0].num_computed += 4;
    L.r[0].status = KV_REQ_WAITING;
    expect_violation(&L, "sched: running entry 0 is waiting");
    L.r[0].status = KV_REQ_RUNNING;
    L.r[0].num_computed -= 1; /* 10 tokens still fill 3 blocks: only the counter disagrees */
    expect_violation(&L, "sched: running entries hold 21 computed and scheduled tokens, "
                         "counter 22");
    L.r[0].num_computed += 1;
    kv_diag d;
    cr_assert_eq(kv_engine_advance(L.e, &d), 0, "%s", d.msg); /* a step starts: in flight */
    cr_assert(L.r[0].step_new > 0);
    cr_assert_eq(kv_engine_check(L.e, &d), 0, "the counter holds the scheduled tokens: %s",
                 d.msg);
    stop_live(&L);
}

/* §9 "Memory per request": a waiting request may lack cache state only under
 * attach_at_head and only until its first admission; the walk says so. */
static void waiting_walk(bool at_head)
{
    add_req(0, 0, 10, 50, 0);
    add_req(1, 0, 10, 50, 1);
    kv_engine_config c = config(32, 4, "fixed:0.001");
    c.check_invariants = false;
    c.sched.max_seqs = 1; /* request 1 waits behind request 0 */
    c.sched.attach_at_head = at_head;
    c.sched.content_tb = 512;
    kv_hasher *h;
    kv_engine *e;
    kv_req r[2];
    kv_diag d;
    cr_assert_eq(kv_hasher_create(&h, "t", "bf16", 4), 0);
    cr_assert_eq(kv_engine_create(&e, &c, h, &d), 0, "%s", d.msg);
    for (int i = 0; i < 2; i++) {
        kv_req_init(&r[i], &specs[i]);
        kv_content ct;
        kv_content_from_spec(&ct, &specs[i], 512, 0);
        if (!at_head)
            kv_req_attach(&r[i], &ct);
        kv_engine_arrive(e, &r[i], 0);
    }
    for (int k = 0; k < 4; k++)
        cr_assert_eq(kv_engine_advance(e, &d), 0, "%s", d.msg);
    cr_assert_eq(r[1].status, KV_REQ_WAITING);
    kv_seq *saved = r[1].seq;
    /* at_head: max_seqs kept it from every lookup, so it has no cache state yet */
    cr_assert_eq(saved == NULL, at_head);
    r[1].seq = NULL;
    cr_assert_eq(kv_engine_check(e, &d), at_head ? 0 : -KV_EINVARIANT, "%s", d.msg);
    if (!at_head)
        cr_assert(strstr(d.msg, "sched: waiting entry 0 (row 1)"), "%s", d.msg);
    r[1].admitted = true;
    cr_assert_eq(kv_engine_check(e, &d), -KV_EINVARIANT, "admitted before, no cache state");
    r[1].admitted = false;
    r[1].seq = saved;
    cr_assert_eq(kv_engine_check(e, &d), 0, "%s", d.msg);
    kv_engine_abandon(e);
    kv_engine_destroy(e);
    kv_hasher_destroy(h);
    for (int i = 0; i < 2; i++) { /* called twice: the second add_req must not leak these */
        free(tokens[i]);
        tokens[i] = NULL;
    }
}

Test(engine, sched_walk_allows_a_waiting_request_without_cache_state_only_at_head_mode)
{
    waiting_walk(false);
    waiting_walk(true);
}

Test(engine, refcount_sum_equals_logical_entries)
{
    live L;
    start_live(&L);
    struct kv_pool *p = (struct kv_pool *)kv_engine_pool(L.e);
    kv_block_id b = L.r[0].seq->table[0]; /* shared by both requests: refcount 2 */
    cr_assert_eq(p->blocks[b].ref, 2);
    p->blocks[b].ref = 3;
    p->num_refs++; /* the pool's own counter agrees: the cross-module walk must notice */
    expect_violation(&L, "R9: Σ refcounts");
    p->blocks[b].ref = 2;
    expect_violation(&L, "pool: Σ refcounts 6 != counter 7");
    p->num_refs--;
    stop_live(&L);
}

/* ---- randomized property test ------------------------------------------------------- */

typedef struct prop {
    uint64_t steps;
    uint64_t last_queries, last_hits;
    bool bad;
    char why[256];
} prop;

static void on_step(void *ctx, const kv_step_view *v)
{
    prop *p = ctx;
    p->steps++;
    uint32_t used = kv_pool_num_used(v->pool);
    if (used > kv_pool_usable(v->pool) && !p->bad) {
        p->bad = true;
        snprintf(p->why, sizeof p->why, "step %llu: %u physical > usable",
                 (unsigned long long)v->step, used);
    }
    for (size_t i = 0; i < v->n && !p->bad; i++) {
        const kv_req *r = &v->reqs[i];
        if (r->num_computed > kv_req_num_tokens(r) + r->placeholders ||
            r->num_generated > r->spec->output_len || r->placeholders > 1) {
            p->bad = true;
            snprintf(p->why, sizeof p->why, "step %llu: request %zu over its lengths",
                     (unsigned long long)v->step, i);
        }
    }
}

static void random_case(uint64_t seed)
{
    kv_rng rng;
    kv_rng_seed(&rng, seed);
    size_t n = 20 + (size_t)kv_rng_below(&rng, 120);
    int64_t t = 0;
    for (size_t i = 0; i < n; i++) {
        t += (int64_t)kv_rng_below(&rng, 3000000);
        uint32_t prompt = 1 + (uint32_t)kv_rng_below(&rng, 300);
        uint32_t output = 1 + (uint32_t)kv_rng_below(&rng, 60);
        add_req(i, t, prompt, output, (uint32_t)kv_rng_below(&rng, 4));
    }
    set_trace(n);
    uint32_t b = 1u << kv_rng_below(&rng, 6); /* 1 … 32 */
    uint32_t need = (300 + 60) / b + 2;       /* the longest request always fits */
    uint32_t nb = need + (uint32_t)kv_rng_below(&rng, 4 * need);
    kv_engine_config c = config(nb, b, kv_rng_below(&rng, 2) ? "fixed:0.001" : "roofline");
    if (c.timing.kind == KV_TIME_ROOFLINE) {
        kv_model m;
        kv_gpu g;
        kv_shard sh;
        kv_diag d;
        cr_assert_eq(kv_model_preset("llama-3-8b", &m, &d), 0);
        cr_assert_eq(kv_gpu_preset("H100-SXM", &g, &d), 0);
        cr_assert_eq(kv_shard_compute(&m, 1, 1, &sh, &d), 0);
        kv_timing_bind(&c.timing, &m, &g, &sh);
    }
    c.prefix_caching = kv_rng_below(&rng, 4) != 0;
    c.free_order = kv_rng_below(&rng, 2) ? KV_FREE_SPLIT : KV_FREE_APPEND;
    c.sched.watermark = (double)kv_rng_below(&rng, 20) / 100.0;
    c.sched.max_seqs = 1 + (uint32_t)kv_rng_below(&rng, 32);
    c.sched.max_batched_tokens = 16 + (uint32_t)kv_rng_below(&rng, 1024);
    c.sched.chunked_prefill = kv_rng_below(&rng, 3) != 0;
    c.sched.admit_full_prompt = kv_rng_below(&rng, 2) != 0;
    c.sched.preempt = kv_rng_below(&rng, 2) ? KV_PREEMPT_FCFS : KV_PREEMPT_PRIORITY;
    c.sched.watermark_rule = kv_rng_below(&rng, 2) ? KV_WATERMARK_VLLM : KV_WATERMARK_V0;
    c.sched.policy = kv_rng_below(&rng, 3) ? KV_POLICY_FCFS : KV_POLICY_PRIORITY;
    c.sched.async_scheduling = kv_rng_below(&rng, 2) != 0;
    for (size_t i = 0; i < n; i++)
        specs[i].priority = (int32_t)kv_rng_below(&rng, 3);
    prop p = {0};
    kv_sim_hooks h = {.on_step_end = on_step, .ctx = &p};
    kv_diag d;
    int rc = kv_replay(&c, &trace, "t", "bf16", 0, &h, &res, &d);
    cr_assert_eq(rc, 0, "seed %llu: %s", (unsigned long long)seed, d.msg);
    cr_assert(!p.bad, "seed %llu: %s", (unsigned long long)seed, p.why);
    const kv_sched_counters *sc = &res.stats.sched;
    cr_assert_eq(sc->finished + res.rejected + res.unfinished, n,
                 "seed %llu: finished + rejected + unfinished = total", (unsigned long long)seed);
    cr_assert_eq(res.unfinished, 0, "seed %llu: nothing stranded", (unsigned long long)seed);
    cr_assert_leq(res.stats.prefix.hits, res.stats.prefix.queries, "seed %llu: hits ≤ queries",
                  (unsigned long long)seed);
    cr_assert_leq(res.stats.prefix.preempted_hits, res.stats.prefix.preempted_queries);
    cr_assert_leq(res.stats.metrics.peak_physical, nb - 1, "physical ≤ usable");
    cr_assert_eq(p.steps, res.stats.steps, "one step end per step");
    uint64_t out = 0;
    for (size_t i = 0; i < n; i++) {
        const kv_req *r = &res.reqs[i];
        cr_assert_eq(r->placeholders, 0, "seed %llu: request %zu ended with a token in flight",
                     (unsigned long long)seed, i);
        if (r->status == KV_REQ_FINISHED) {
            out += r->spec->output_len;
            cr_assert_eq(r->num_generated, r->spec->output_len);
            cr_assert(r->first_token_ns >= r->first_scheduled_ns &&
                          r->first_scheduled_ns >= r->spec->arrival_ns &&
                          r->finish_ns >= r->first_token_ns,
                      "seed %llu: request %zu times out of order", (unsigned long long)seed, i);
        }
        cr_assert_null(r->seq, "every ended request dropped its cache state");
        free(tokens[i]);
        tokens[i] = NULL;
    }
    cr_assert_eq(out, sc->output_tokens);
    kv_run_result_release(&res);
}

Test(engine, randomized_replays_keep_every_invariant)
{
    for (uint64_t seed = 1; seed <= 120; seed++)
        random_case(seed);
}

/* ---- private blocks against the reference mode (DESIGN §9) -------------------------- */

static uint64_t hash_ids[MAXR][64];

/* An FNV-1a digest of every sample the engine takes: the whole timeseries. */
static void fold(uint64_t *h, uint64_t v)
{
    for (int k = 0; k < 8; k++)
        *h = (*h ^ ((v >> (8 * k)) & 0xff)) * 1099511628211ull;
}

static void on_sample_fold(void *ctx, const kv_sample *s)
{
    uint64_t *h = ctx;
    uint64_t usage;
    memcpy(&usage, &s->usage, sizeof usage);
    uint64_t v[] = {(uint64_t)s->time_ns, s->step, s->running, s->waiting, s->physical_blocks,
                    s->logical_blocks, s->cached_free_blocks, s->free_blocks, usage,
                    s->effective_tokens, s->scheduled_tokens, s->preemptions, s->evictions,
                    s->prefix_hits, s->prefix_queries, s->watermark_deferrals, s->admitted,
                    s->finished};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        fold(h, v[i]);
}

typedef struct outcome {
    uint64_t samples;
    kv_run_result res;
} outcome;

static void replay_mode(const kv_engine_config *c0, uint32_t shared_prefix, bool hash_all,
                        outcome *o)
{
    kv_engine_config c = *c0;
    c.hash_all_blocks = hash_all;
    o->samples = 14695981039346656037ull;
    kv_sim_hooks h = {.on_sample = on_sample_fold, .ctx = &o->samples};
    kv_diag d;
    cr_assert_eq(kv_replay(&c, &trace, "t", "bf16", shared_prefix, &h, &o->res, &d), 0, "%s",
                 d.msg);
}

/* Random traces mixing every content source (explicit tokens, hash_ids with several trace
 * block sizes, content-less prompts with and without --shared-prefix), replayed in small
 * pools (evictions, preemptions, re-admissions that re-hit their own private blocks) both
 * ways: every request's times and counts, every sample and every counter agree. */
static void private_case(uint64_t seed, uint64_t *preempted_hits)
{
    kv_rng rng;
    kv_rng_seed(&rng, seed);
    size_t n = 20 + (size_t)kv_rng_below(&rng, 100);
    uint32_t b = 1u << kv_rng_below(&rng, 5);    /* 1 … 16 */
    uint32_t tb = b << kv_rng_below(&rng, 3);    /* a multiple of b, 1 … 64 */
    uint32_t sp = (uint32_t)kv_rng_below(&rng, 3) * (uint32_t)kv_rng_below(&rng, 90);
    int64_t t = 0;
    for (size_t i = 0; i < n; i++) {
        t += (int64_t)kv_rng_below(&rng, 2000000);
        uint32_t prompt = 1 + (uint32_t)kv_rng_below(&rng, 200);
        uint32_t output = 1 + (uint32_t)kv_rng_below(&rng, 50);
        uint32_t family = (uint32_t)kv_rng_below(&rng, 3);
        add_req(i, t, prompt, output, family);
        switch (kv_rng_below(&rng, 3)) {
        case 0: /* explicit tokens, as add_req made them */
            break;
        case 1: {
            uint32_t k = (prompt + tb - 1) / tb;
            if (k > 64)
                break;
            for (uint32_t j = 0; j < k; j++)
                hash_ids[i][j] = family * 1000 + j;
            specs[i].content = KV_CONTENT_HASH_IDS;
            specs[i].hash_ids = hash_ids[i];
            specs[i].n_hash_ids = k;
            specs[i].tokens = NULL;
            break;
        }
        default:
            specs[i].content = KV_CONTENT_NONE;
            specs[i].tokens = NULL;
        }
    }
    set_trace(n);
    trace.trace_block_size = tb;
    uint32_t need = (200 + 50) / b + 2;
    uint32_t nb = need + (uint32_t)kv_rng_below(&rng, 3 * need);
    kv_engine_config c = config(nb, b, "fixed:0.001");
    c.free_order = kv_rng_below(&rng, 2) ? KV_FREE_SPLIT : KV_FREE_APPEND;
    c.sched.watermark = (double)kv_rng_below(&rng, 10) / 100.0;
    c.sched.max_seqs = 1 + (uint32_t)kv_rng_below(&rng, 32);
    c.sched.max_batched_tokens = 16 + (uint32_t)kv_rng_below(&rng, 512);
    c.sched.preempt = kv_rng_below(&rng, 2) ? KV_PREEMPT_FCFS : KV_PREEMPT_PRIORITY;
    for (size_t i = 0; i < n; i++)
        specs[i].priority = (int32_t)kv_rng_below(&rng, 3);
    outcome fast, ref;
    replay_mode(&c, sp, false, &fast);
    replay_mode(&c, sp, true, &ref);
    const kv_engine_stats *a = &fast.res.stats, *r = &ref.res.stats;
    cr_assert_eq(fast.samples, ref.samples, "seed %llu: the timeseries differ",
                 (unsigned long long)seed);
    cr_assert_eq(a->steps, r->steps, "seed %llu: steps", (unsigned long long)seed);
    cr_assert_eq(a->evictions, r->evictions, "seed %llu: evictions", (unsigned long long)seed);
    cr_assert(memcmp(&a->sched, &r->sched, sizeof a->sched) == 0, "seed %llu: counters",
              (unsigned long long)seed);
    cr_assert(memcmp(&a->prefix, &r->prefix, sizeof a->prefix) == 0, "seed %llu: prefix",
              (unsigned long long)seed);
    cr_assert(memcmp(&a->metrics, &r->metrics, sizeof a->metrics) == 0, "seed %llu: metrics",
              (unsigned long long)seed);
    for (size_t i = 0; i < n; i++) {
        const kv_req *x = &fast.res.reqs[i], *y = &ref.res.reqs[i];
        cr_assert(x->status == y->status && x->first_scheduled_ns == y->first_scheduled_ns &&
                      x->first_token_ns == y->first_token_ns && x->finish_ns == y->finish_ns &&
                      x->hit_tokens == y->hit_tokens && x->preemptions == y->preemptions,
                  "seed %llu: request %zu differs", (unsigned long long)seed, i);
    }
    *preempted_hits += a->prefix.preempted_hits;
    kv_run_result_release(&fast.res);
    kv_run_result_release(&ref.res);
    for (size_t i = 0; i < n; i++) {
        free(tokens[i]);
        tokens[i] = NULL;
    }
}

Test(engine, private_blocks_match_the_reference_mode)
{
    uint64_t preempted_hits = 0;
    for (uint64_t seed = 1; seed <= 80; seed++)
        private_case(seed, &preempted_hits);
    cr_assert_gt(preempted_hits, 0, "the cases re-admit preempted requests that hit");
}

Test(engine, default_sample_every_keeps_big_timeseries_small)
{
    cr_assert_eq(kv_sim_default_sample_every(0), 1);
    cr_assert_eq(kv_sim_default_sample_every(39999), 1, "every step below 40,000 requests");
    cr_assert_eq(kv_sim_default_sample_every(40000), 2);
    cr_assert_eq(kv_sim_default_sample_every(1000000), 50);
    cr_assert_eq(kv_sim_default_sample_every(10000000), 500);
}
