/* cluster (DESIGN §10 C1, C2, C4, C6–C8): the event order at equal times across
 * replicas, refresh sampling, router accuracy counted over and under, imbalance figures,
 * the R = 1 identity with kv_replay on every bundled trace, determinism under seeds, the
 * invariant walks of every replica after every step, and a planted corruption caught with
 * the replica named. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/cluster.h"
#include "kvsim/metrics.h"
#include "kvsim/report.h"
#include "kvsim/rng.h"
#include "kvsim/sim.h"
#include "kvsim/summary.h"
#include "pool_internal.h"
#include "support.h"

#define MAXR 256
#define SEC  1000000000LL

static kv_trace trace;
static kv_request_spec specs[MAXR];
static uint32_t *tokens[MAXR];
static kv_run_result res, ref;

/* Request i: `prompt` tokens of family f (a family shares every prefix), arriving at t. */
static void add_req(size_t i, int64_t t, uint32_t prompt, uint32_t output, uint32_t family)
{
    specs[i] = test_family_request(&tokens[i], i, t, prompt, output, family);
}

static void set_trace(size_t n)
{
    memset(&trace, 0, sizeof trace);
    trace.reqs = specs;
    trace.n = n;
    trace.trace_block_size = 512;
    trace.format = KV_TRACE_KVSIM_JSONL;
    trace.path = "test.jsonl";
}

static void random_trace(uint64_t seed, size_t n)
{
    kv_rng rng;
    kv_rng_seed(&rng, seed);
    int64_t t = 0;
    for (size_t i = 0; i < n; i++) {
        t += (int64_t)kv_rng_below(&rng, 40000000);
        add_req(i, t, 1 + (uint32_t)kv_rng_below(&rng, 200), 1 + (uint32_t)kv_rng_below(&rng, 30),
                (uint32_t)kv_rng_below(&rng, 5));
    }
    set_trace(n);
}

/* sync: the tests' default; config_as picks the scheduler (DESIGN §6.6). */
static kv_engine_config config_as(uint32_t num_blocks, uint32_t b, const char *time_model,
                                  bool async)
{
    kv_engine_config c = test_engine_config(num_blocks, b, time_model);
    c.sched.async_scheduling = async;
    return c;
}

static kv_engine_config config(uint32_t num_blocks, uint32_t b, const char *time_model)
{
    return config_as(num_blocks, b, time_model, false);
}

static kv_router_config router(const char *spec, uint64_t seed)
{
    kv_router_config r;
    kv_router_config_init(&r);
    kv_diag d;
    cr_assert_eq(kv_router_parse(spec, &r, &d), 0, "%s", d.msg);
    r.seed = seed;
    return r;
}

static void teardown(void)
{
    kv_run_result_release(&res);
    kv_run_result_release(&ref);
    for (int i = 0; i < MAXR; i++) {
        free(tokens[i]);
        tokens[i] = NULL;
    }
}

TestSuite(cluster, .fini = teardown);

/* ---- C1: one heap, (time, kind, replica, seq) ------------------------------------------ */

typedef struct evlog {
    char ev[64][24];
    size_t n;
} evlog;

static void log_start(void *ctx, const kv_sample *s)
{
    evlog *l = ctx;
    if (l->n < 64)
        snprintf(l->ev[l->n++], 24, "start %u @%.1f", s->replica, (double)s->time_ns / 1e9);
}

static void log_end(void *ctx, const kv_step_view *v)
{
    evlog *l = ctx;
    if (l->n < 64)
        snprintf(l->ev[l->n++], 24, "end %u @%.1f", v->replica, (double)v->end_ns / 1e9);
}

/* The C1 scenario (derivation in the tests below) under either scheduler: the routings,
 * the first schedulings, and the log of sample publications ("start") and step ends. */
static void c1_scenario(bool async, const char *const *want, size_t n_want)
{
    add_req(0, 0, 8, 1, 1);
    add_req(1, 0, 4, 3, 2);
    add_req(2, SEC / 2, 4, 3, 3);
    add_req(3, SEC, 4, 1, 4);
    add_req(4, SEC, 4, 1, 5);
    set_trace(5);
    kv_engine_config c = config_as(64, 4, "fixed:1", async);
    kv_router_config rc = router("least-kv", 0);
    evlog l = {0};
    kv_sim_hooks h = {.on_sample = log_start, .on_step_end = log_end, .ctx = &l};
    kv_diag d;
    cr_assert_eq(kv_cluster_replay(&c, 3, &rc, &trace, "t", "bf16", 0, &h, &res, &d), 0, "%s",
                 d.msg);
    const uint32_t *rep = res.cluster->replica_of;
    cr_assert_eq(rep[0], 1);
    cr_assert_eq(rep[1], 0);
    cr_assert_eq(rep[2], 2);
    cr_assert_eq(rep[3], 1, "a routing at t sees every step end at t");
    cr_assert_eq(rep[4], 1);
    cr_assert_eq(res.reqs[3].first_scheduled_ns, SEC, "a step starting at t sees arrivals at t");
    cr_assert_eq(res.reqs[4].first_scheduled_ns, SEC);
    cr_assert_geq(l.n, n_want);
    for (size_t i = 0; i < n_want; i++)
        cr_assert_str_eq(l.ev[i], want[i], "event %zu", i);
}

Test(cluster, c1_step_ends_then_arrivals_then_step_starts_replicas_in_order)
{
    /* Three replicas, least-kv, seed 0 (d1..d4 = …CDAF, …65F4, …454F, …81EC), 1 s steps,
     * block size 4, the sync scheduler.  Derivation:
     *   r0 t=0   8 tokens, 1 out: used (0,0,0), tie of three, d1 mod 3 = 1 → replica 1
     *   r1 t=0   4 tokens, 3 out: the same usage (a burst sees one instant), d2 mod 3 = 0 → 0
     *   r2 t=0.5 4 tokens, 3 out: used (1,2,0) → replica 2 (its step runs 0.5–1.5)
     *   r3 t=1   4 tokens, 1 out: the step ends at 1 come first, r0 has finished and freed
     *            its 2 blocks: used (1,0,1) → replica 1.  (Routed before the step end it
     *            would see (1,2,1), tie {0,2}, d4 mod 2 = 0 → replica 0.)
     *   r4 t=1   4 tokens, 1 out: used (1,0,1) → replica 1; the step replica 1 starts at 1
     *            comes after both arrivals and admits both. */
    static const char *const want[] = {"start 0 @0.0", "start 1 @0.0", "start 2 @0.5",
                                       "end 0 @1.0",   "end 1 @1.0",   "start 0 @1.0",
                                       "start 1 @1.0", "end 2 @1.5",   "start 2 @1.5"};
    c1_scenario(false, want, sizeof want / sizeof want[0]);
}

Test(cluster, c1_the_same_order_under_async_scheduling)
{
    /* The scenario above under async scheduling (DESIGN §6.6): a step start runs the pass
     * of the next step too, so a replica's used blocks include the slots planned for its
     * next decode.
     *   r0, r1 t=0: as above → replicas 1 and 0.  Replica 0 plans r1's decode (block 2);
     *            replica 1 plans nothing (r0's only token is in flight): an empty step.
     *   r2 t=0.5: used (2,2,0) → replica 2.
     *   r3, r4 t=1: after the step ends at 1 (r0 finished): used (2,0,2) → replica 1 both.
     *            Replica 1 at 1 executes its empty planned step (0 ns) and plans r3 and r4
     *            in the same instant, so they are scheduled at 1; that step starts at 1
     *            after the empty one ends at 1.
     * Samples are published when their step starts executing, at their time stamps. */
    static const char *const want[] = {"start 0 @0.0", "start 1 @0.0", "start 2 @0.5",
                                       "end 0 @1.0",   "end 1 @1.0",   "start 0 @1.0",
                                       "start 1 @1.0", "end 1 @1.0",   "start 1 @1.0",
                                       "end 2 @1.5",   "start 2 @1.5"};
    c1_scenario(true, want, sizeof want / sizeof want[0]);
}

/* ---- C2: --router-refresh --------------------------------------------------------------- */

static void c2_scenario(bool async)
{
    /* Three replicas, least-requests, refresh 1 s, seed 0, 1 s steps, short requests
     * (1 output token: done in one step).  d1..d8 mod 3 = 1 0 1 1 1 0 2 2, mod 2 =
     * 1 0 1 0 1 0 1 0.
     *   r0..r3 t=0: every one sees the sample at 0, all loads 0: d1..d4 mod 3 → 1, 0, 1, 1
     *          (live loads would send r2 to replica 2)
     *   r4 t=0.5: still the sample at 0: d5 mod 3 = 1 → replica 1 (live: replica 2)
     *   r5 t=1: the sample at 1, taken after the step ends at 1: replica 1 finished r0, r2,
     *          r3 and holds r4 waiting: loads (0,1,0), tie {0,2}, d6 mod 2 = 0 → replica 0
     *          (a sample taken before those step ends would send it to replica 2)
     *   r6 t=1: the same sample: (0,1,0), d7 mod 2 = 1 → replica 2
     *   r7 t=1.5: still the sample at 1: (0,1,0), d8 mod 2 = 0 → replica 0 (live: all
     *          busy, d8 mod 3 = 2 → replica 2)
     * Async scheduling changes none of it: each step's planned pass finds nothing new (r4
     * arrives after replica 1's pass at 0, every request's only token is in flight), so
     * the loads at 0 and at 1 are the same. */
    static const int64_t at[8] = {0, 0, 0, 0, SEC / 2, SEC, SEC, 3 * SEC / 2};
    for (size_t i = 0; i < 8; i++)
        add_req(i, at[i], 4, 1, (uint32_t)i + 1);
    set_trace(8);
    kv_engine_config c = config_as(64, 4, "fixed:1", async);
    kv_router_config rc = router("least-requests", 0);
    rc.refresh_s = 1;
    kv_diag d;
    cr_assert_eq(kv_cluster_replay(&c, 3, &rc, &trace, "t", "bf16", 0, NULL, &res, &d), 0, "%s",
                 d.msg);
    static const uint32_t want[8] = {1, 0, 1, 1, 1, 0, 2, 0};
    for (size_t i = 0; i < 8; i++)
        cr_assert_eq(res.cluster->replica_of[i], want[i], "request %zu", i);
    kv_run_result_release(&res);
    rc.refresh_s = 0; /* live: r2 goes elsewhere */
    cr_assert_eq(kv_cluster_replay(&c, 3, &rc, &trace, "t", "bf16", 0, NULL, &res, &d), 0, "%s",
                 d.msg);
    cr_assert_eq(res.cluster->replica_of[2], 2, "live signals see r0 and r1 queued");
}

Test(cluster, c2_refresh_samples_the_load_at_multiples_of_d)
{
    c2_scenario(false);
}

Test(cluster, c2_refresh_samples_the_same_under_async_scheduling)
{
    c2_scenario(true);
}

Test(cluster, c2_live_signals_are_the_replica_as_it_stands_planned_step_included)
{
    /* Two replicas, least-kv, seed 0 (d1..d4 odd, even, odd, even), 1 s steps, block 4.
     * The router sees each pool as it stands; under async scheduling that includes the
     * slots the pass of the next step has already taken (vLLM's scheduler has them
     * allocated while the current step runs), not the state of the step in flight.
     *   r0 t=0   8 tokens, 3 out: tie (0,0), d1 odd → replica 1: 2 blocks; async, its
     *            next step's decode already holds a third.
     *   r1 t=0.1 12 tokens, 1 out: used (0, 2|3) → replica 0: 3 blocks (async plans
     *            nothing: its only token is in flight).
     *   r2 t=0.2 4 tokens, 1 out: sync (3,2) → replica 1; async (3,3) tie, d3 odd → 1;
     *            it waits there (no blocks until the step at 1).
     *   r3 t=0.5 4 tokens, 1 out: sync (3,2) → replica 1; async (3,3), d4 even → 0. */
    add_req(0, 0, 8, 3, 1);
    add_req(1, SEC / 10, 12, 1, 2);
    add_req(2, SEC / 5, 4, 1, 3);
    add_req(3, SEC / 2, 4, 1, 4);
    set_trace(4);
    kv_router_config rc = router("least-kv", 0);
    kv_diag d;
    for (int async = 0; async <= 1; async++) {
        kv_engine_config c = config_as(64, 4, "fixed:1", async);
        cr_assert_eq(kv_cluster_replay(&c, 2, &rc, &trace, "t", "bf16", 0, NULL, &res, &d), 0,
                     "%s", d.msg);
        static const uint32_t want[2][4] = {{1, 0, 1, 1}, {1, 0, 1, 0}};
        for (size_t i = 0; i < 4; i++)
            cr_assert_eq(res.cluster->replica_of[i], want[async][i], "%s: request %zu",
                         async ? "async" : "sync", i);
        kv_run_result_release(&res);
    }
}

/* A random trace whose arrivals fall on whole milliseconds, as 1 ms steps end, so step
 * ends and arrivals meet at equal times; `distinct`: no two arrivals at one instant. */
static void ms_trace(uint64_t seed, size_t n, bool distinct)
{
    kv_rng rng;
    kv_rng_seed(&rng, seed);
    int64_t t = 0;
    for (size_t i = 0; i < n; i++) {
        t += (int64_t)(kv_rng_below(&rng, 4) + (distinct ? 1 : 0)) * 1000000;
        add_req(i, t, 1 + (uint32_t)kv_rng_below(&rng, 60), 1 + (uint32_t)kv_rng_below(&rng, 12),
                (uint32_t)kv_rng_below(&rng, 4));
    }
    set_trace(n);
}

Test(cluster, c2_a_1_ns_refresh_is_live_routing_when_arrivals_are_distinct)
{
    /* C8: the sample at t is taken after the step ends at t and before the first arrival
     * at t, which is where a live routing of a lone arrival at t looks; so with D = 1 ns
     * and no two arrivals at one instant every choice is the live one, whatever the
     * policy and the scheduler.  With bursts the later arrivals of a burst see the
     * sample, not the ones routed before them (least-requests: they would count them). */
    static const char *const policies[] = {"least-requests", "least-kv", "weighted", "kv-cost"};
    kv_diag d;
    for (int async = 0; async <= 1; async++)
        for (int p = 0; p < 4; p++) {
            ms_trace(40 + (uint64_t)p, 150, true);
            kv_engine_config c = config_as(90, 4, "fixed:0.001", async);
            kv_router_config rc = router(policies[p], 5);
            cr_assert_eq(kv_cluster_replay(&c, 3, &rc, &trace, "t", "bf16", 0, NULL, &ref, &d),
                         0, "%s", d.msg);
            rc.refresh_s = 1e-9;
            cr_assert_eq(kv_cluster_replay(&c, 3, &rc, &trace, "t", "bf16", 0, NULL, &res, &d),
                         0, "%s", d.msg);
            for (size_t i = 0; i < trace.n; i++)
                cr_assert_eq(res.cluster->replica_of[i], ref.cluster->replica_of[i],
                             "%s %s: request %zu", policies[p], async ? "async" : "sync", i);
            kv_run_result_release(&ref);
            kv_run_result_release(&res);
        }
    /* Bursts: with least-requests and D = 1 ns, a burst's members all see the loads
     * before the burst, so some choices differ from live routing. */
    ms_trace(7, 150, false);
    kv_engine_config c = config_as(90, 4, "fixed:0.001", true);
    kv_router_config rc = router("least-requests", 5);
    cr_assert_eq(kv_cluster_replay(&c, 3, &rc, &trace, "t", "bf16", 0, NULL, &ref, &d), 0);
    rc.refresh_s = 1e-9;
    cr_assert_eq(kv_cluster_replay(&c, 3, &rc, &trace, "t", "bf16", 0, NULL, &res, &d), 0);
    cr_assert_neq(memcmp(res.cluster->replica_of, ref.cluster->replica_of,
                         trace.n * sizeof(uint32_t)),
                  0, "a burst sees one sample");
}

/* ---- C6: router accuracy ---------------------------------------------------------------- */

Test(cluster, c6_over_and_under_predictions_are_counted)
{
    /* Two replicas, round-robin (request k to replica k mod 2), exact view, block size 4,
     * 9 blocks (8 usable), 1 s steps.
     *   k0 A  t=0    9 tokens, 1 out → replica 0: done at 1, leaves A's 2 full blocks cached
     *   k1    t=0.5  filler → replica 1
     *   k2 C  t=1.5  28 tokens (7 blocks), 5 out → replica 0: its 7 blocks evict A's second
     *                block; its first decode step takes the last free block, A's first
     *   k3    t=1.6  filler → replica 1
     *   k4 B  t=1.7  A's prompt → replica 0: the router sees A0 still cached: predicted 4
     *                tokens; B waits for C to finish and is granted 0: over-predicted
     *   k5 D  t=2    prompt X, 9 tokens → replica 1: predicted 0, granted 0
     *   k6    t=2.1  filler → replica 0
     *   k7 F  t=2.2  prompt X → replica 1: predicted 0 (D is still waiting), but D is
     *                admitted first in the same step and F hits its 2 blocks: granted 8,
     *                under-predicted */
    add_req(0, 0, 9, 1, 1);
    add_req(1, SEC / 2, 4, 1, 10);
    add_req(2, 3 * SEC / 2, 28, 5, 2);
    add_req(3, 16 * SEC / 10, 4, 1, 11);
    add_req(4, 17 * SEC / 10, 9, 1, 1);
    add_req(5, 2 * SEC, 9, 1, 3);
    add_req(6, 21 * SEC / 10, 4, 1, 12);
    add_req(7, 22 * SEC / 10, 9, 1, 3);
    set_trace(8);
    kv_engine_config c = config(9, 4, "fixed:1");
    c.sched.watermark = 0;
    kv_router_config rc = router("round-robin", 0);
    kv_diag d;
    cr_assert_eq(kv_cluster_replay(&c, 2, &rc, &trace, "t", "bf16", 0, NULL, &res, &d), 0, "%s",
                 d.msg);
    const kv_cluster_result *cl = res.cluster;
    cr_assert_eq(cl->predicted_tokens[4], 4);
    cr_assert_eq(res.reqs[4].hit_tokens, 0);
    cr_assert_eq(cl->predicted_tokens[7], 0);
    cr_assert_eq(res.reqs[7].hit_tokens, 8);
    cr_assert_eq(cl->overpredicted, 1);
    cr_assert_eq(cl->underpredicted, 1);
    cr_assert_eq(cl->predicted_hit_tokens, 4);
    cr_assert_eq(cl->granted_hit_tokens, 8);
    kv_summary s;
    memset(&s, 0, sizeof s);
    kv_summary_from_run(&s, &res);
    cr_assert_eq(s.cluster.router_accuracy.overpredicted, 1);
    cr_assert_eq(s.cluster.router_accuracy.underpredicted, 1);
    kv_summary_release(&s);
}

Test(cluster, c6_a_request_never_admitted_is_granted_nothing)
{
    /* The same prompt twice on one replica of a tiny pool: the second is predicted a hit,
     * but it can never fit (exceeds_capacity at arrival): granted 0, over-predicted. */
    add_req(0, 0, 9, 1, 1);
    add_req(1, 2 * SEC, 9, 1, 1);
    add_req(2, 3 * SEC, 4, 1, 2);
    specs[1].output_len = 40; /* ⌈(9 + 40 − 1)/4⌉ = 12 blocks > 8 usable */
    set_trace(3);
    kv_engine_config c = config(9, 4, "fixed:1");
    kv_router_config rc = router("prefix", 0);
    kv_diag d;
    cr_assert_eq(kv_cluster_replay(&c, 2, &rc, &trace, "t", "bf16", 0, NULL, &res, &d), 0, "%s",
                 d.msg);
    cr_assert_eq(res.reqs[1].status, KV_REQ_REJECTED);
    cr_assert_eq(res.cluster->replica_of[1], res.cluster->replica_of[0], "prefix follows A");
    cr_assert_eq(res.cluster->predicted_tokens[1], 8);
    cr_assert_eq(res.cluster->overpredicted, 1);
    cr_assert_eq(res.cluster->replica[res.cluster->replica_of[1]].rejected, 1);
}

/* ---- C7: imbalance -------------------------------------------------------------------- */

Test(cluster, c7_gini_and_max_over_mean_on_known_inputs)
{
    const double a[] = {1, 2, 3, 4}, b[] = {0, 0, 0, 10}, e[] = {5, 5, 5}, z[] = {0, 0};
    cr_assert_float_eq(kv_gini(a, 4), 0.25, 1e-12); /* Σ|xi−xj| = 20, 2·n²·mean = 80 */
    cr_assert_float_eq(kv_max_over_mean(a, 4), 1.6, 1e-12);
    cr_assert_float_eq(kv_gini(b, 4), 0.75, 1e-12); /* 60 / 80 */
    cr_assert_float_eq(kv_max_over_mean(b, 4), 4.0, 1e-12);
    cr_assert_eq(kv_gini(e, 3), 0.0);
    cr_assert_eq(kv_max_over_mean(e, 3), 1.0);
    cr_assert_eq(kv_gini(z, 2), 0.0, "all zero: Gini 0");
    cr_assert_eq(kv_max_over_mean(z, 2), 1.0, "all zero: max/mean 1");
    const double one[] = {7};
    cr_assert_eq(kv_gini(one, 1), 0.0);
    /* The order of the replicas does not matter: kv_gini sorts a copy. */
    const double a2[] = {4, 1, 3, 2}, b2[] = {10, 0, 0, 0};
    cr_assert_float_eq(kv_gini(a2, 4), 0.25, 1e-12);
    cr_assert_float_eq(kv_gini(b2, 4), 0.75, 1e-12);
    cr_assert_eq(a2[0], 4, "the input is left as it was");
}

Test(cluster, c7_c8_totals_are_sums_and_peaks_of_sums)
{
    /* Two replicas, round-robin, the same work on each at the same times: the cluster peak
     * is twice one replica's, the means add up, the counters add up. */
    for (size_t i = 0; i < 8; i++)
        add_req(i, (int64_t)(i / 2) * SEC, 12, 3, (uint32_t)i);
    set_trace(8);
    kv_engine_config c = config(40, 4, "fixed:1");
    kv_router_config rc = router("round-robin", 0);
    kv_diag d;
    cr_assert_eq(kv_cluster_replay(&c, 2, &rc, &trace, "t", "bf16", 0, NULL, &res, &d), 0, "%s",
                 d.msg);
    const kv_cluster_result *cl = res.cluster;
    const kv_engine_stats *r0 = &cl->replica[0].stats, *r1 = &cl->replica[1].stats;
    cr_assert_eq(r0->metrics.peak_physical, r1->metrics.peak_physical);
    cr_assert_eq(cl->peak_physical, 2 * (uint64_t)r0->metrics.peak_physical);
    cr_assert_eq(res.stats.steps, r0->steps + r1->steps);
    cr_assert_eq(res.stats.sched.finished, 8);
    kv_summary s;
    memset(&s, 0, sizeof s);
    s.config.tp = 2;
    s.config.pp = 1;
    kv_summary_from_run(&s, &res);
    cr_assert(s.has_cluster);
    cr_assert_eq(s.blocks.num_blocks, 80, "R·N");
    cr_assert_eq(s.blocks.usable, 78, "R·(N−1)");
    cr_assert_eq(s.blocks.peak_physical, cl->peak_physical);
    cr_assert_float_eq(s.blocks.mean_physical,
                       kv_metrics_mean_physical(&r0->metrics) +
                           kv_metrics_mean_physical(&r1->metrics),
                       1e-9);
    cr_assert_eq(s.cluster.gpus, 4, "replicas × TP × PP");
    cr_assert_eq(s.cluster.imbalance.requests_gini, 0.0);
    cr_assert_eq(s.cluster.imbalance.requests_max_over_mean, 1.0);
    cr_assert_eq(s.cluster.per_replica[1].requests, 4);
    cr_assert_eq(s.cluster.n_per_replica, 2);
    /* The cluster block round-trips through the schema, records included. */
    json_t *j = kv_summary_to_json(&s);
    kv_summary back;
    cr_assert_eq(kv_summary_from_json(j, "x", &back, &d), 0, "%s", d.msg);
    json_t *k = kv_summary_to_json(&back);
    char *sa = json_dumps(j, KV_JSON_FLAGS), *sb = json_dumps(k, KV_JSON_FLAGS);
    cr_assert_str_eq(sa, sb);
    cr_assert_eq(back.cluster.per_replica[1].steps, s.cluster.per_replica[1].steps);
    cr_assert_eq(kv_summary_number(&back, kv_summary_field("cluster.replicas")), 2);
    /* A record with a field missing is refused. */
    json_object_del(json_array_get(kv_json_at(j, "cluster.per_replica"), 1), "steps");
    kv_summary bad;
    cr_assert_eq(kv_summary_from_json(j, "s.json", &bad, &d), -KV_EPARSE);
    cr_assert_str_eq(d.msg, "'s.json' is not a kvsim run summary: no 'cluster.per_replica'");
    free(sa);
    free(sb);
    json_decref(j);
    json_decref(k);
    kv_summary_release(&back);
    kv_summary_release(&s);
}

/* Every published sample, in publication order. */
typedef struct sample_log {
    kv_sample *s;
    size_t n, cap;
} sample_log;

static void keep_sample(void *ctx, const kv_sample *s)
{
    sample_log *l = ctx;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->s = realloc(l->s, l->cap * sizeof *l->s);
    }
    l->s[l->n++] = *s;
}

static int by_stamp(const void *pa, const void *pb)
{
    const kv_sample *a = pa, *b = pb;
    if (a->time_ns != b->time_ns)
        return a->time_ns < b->time_ns ? -1 : 1;
    if (a->replica != b->replica)
        return a->replica < b->replica ? -1 : 1;
    return (a->step > b->step) - (a->step < b->step);
}

/* C8 from the samples alone: walk them in (time stamp, replica, step) order keeping each
 * replica's latest; the peaks of the sums. */
static void c8_oracle(sample_log *l, uint32_t R, uint64_t *phys, uint64_t *logi)
{
    qsort(l->s, l->n, sizeof *l->s, by_stamp);
    uint64_t cur_p[8] = {0}, cur_l[8] = {0};
    *phys = *logi = 0;
    for (size_t i = 0; i < l->n; i++) {
        cur_p[l->s[i].replica] = l->s[i].physical_blocks;
        cur_l[l->s[i].replica] = l->s[i].logical_blocks;
        uint64_t sp = 0, sl = 0;
        for (uint32_t r = 0; r < R; r++) {
            sp += cur_p[r];
            sl += cur_l[r];
        }
        *phys = sp > *phys ? sp : *phys;
        *logi = sl > *logi ? sl : *logi;
    }
}

Test(cluster, c8_the_peak_sums_the_steps_in_flight_not_the_planned_ones)
{
    /* Two replicas, round-robin, block 4, steps of 0.1 s + 0.01 s per scheduled token, a
     * token budget of 100.  At t=0 A (100 tokens, 2 out) → replica 0, B (40, 1 out) → 1,
     * C (40, 1 out) → 0; at 0.8 D (4, 1 out) → 1.
     *   replica 0: step 1 [0, 1.1) prefills A: 25 blocks; step 2 from 1.1 decodes A (block
     *              26) and admits C (10 blocks): 36.
     *   replica 1: step 1 [0, 0.5) prefills B: 10 blocks; B finishes at 0.5; D's step
     *              from 0.8 holds 1 block.
     * So the sum is 25 + 10 = 35 until 0.8, 25 + 1 = 26 until 1.1, then 36 + 1 = 37: the
     * peak is 37, not the 46 of the replicas' own peaks together.  Under async scheduling
     * replica 0 plans step 2 (its 36 blocks) at t=0 and replica 1 its empty second step
     * (B's 10 blocks still held) too; a total that read each replica's sample when its
     * pass ran would add 36 and 10 at t=0. */
    add_req(0, 0, 100, 2, 1);
    add_req(1, 0, 40, 1, 2);
    add_req(2, 0, 40, 1, 3);
    add_req(3, 8 * SEC / 10, 4, 1, 4);
    set_trace(4);
    kv_router_config rc = router("round-robin", 0);
    kv_diag d;
    for (int async = 0; async <= 1; async++) {
        kv_engine_config c = config_as(200, 4, "linear:0.1,0.01,0", async);
        c.sched.max_batched_tokens = 100;
        cr_assert_eq(kv_cluster_replay(&c, 2, &rc, &trace, "t", "bf16", 0, NULL, &res, &d), 0,
                     "%s", d.msg);
        const kv_cluster_result *cl = res.cluster;
        cr_assert_eq(cl->replica[0].stats.metrics.peak_physical, 36);
        cr_assert_eq(cl->replica[1].stats.metrics.peak_physical, 10);
        cr_assert_eq(res.reqs[2].first_scheduled_ns, async ? 0 : 1100000000,
                     "C is planned at 0 (async) or scheduled at 1.1 (sync)");
        cr_assert_eq(cl->peak_physical, 37, "%s: the sum of the steps in flight",
                     async ? "async" : "sync");
        kv_run_result_release(&res);
    }
}

Test(cluster, c8_peaks_are_of_the_sum_of_latest_samples_in_time_order_sync_and_async)
{
    /* Random clusters under both schedulers: every step's sample is published once, in
     * (time stamp, replica) order — timeseries.csv's row order — and the cluster peaks
     * are those of the sum of each replica's latest sample taken in that order.  Async, a
     * pass runs one step early; a total that read its sample then (or skipped the first
     * step after an idle spell) would not match. */
    static const char *const policies[] = {"round-robin", "least-kv", "prefix", "random"};
    kv_diag d;
    for (int async = 0; async <= 1; async++)
        for (uint64_t seed = 1; seed <= 8; seed++) {
            random_trace(100 + seed, 80);
            kv_engine_config c = config_as(120 + 40 * (uint32_t)(seed % 3), 8, "fixed:0.01",
                                           async);
            kv_router_config rc = router(policies[seed % 4], seed);
            uint32_t R = 2 + (uint32_t)(seed % 3);
            sample_log l = {0};
            kv_sim_hooks h = {.on_sample = keep_sample, .ctx = &l};
            cr_assert_eq(kv_cluster_replay(&c, R, &rc, &trace, "t", "bf16", 0, &h, &res, &d), 0,
                         "%s", d.msg);
            cr_assert_eq(l.n, res.stats.steps, "one sample per step");
            for (size_t i = 1; i < l.n; i++)
                cr_assert_leq(by_stamp(&l.s[i - 1], &l.s[i]), 0,
                              "%s seed %llu: sample %zu published out of time order",
                              async ? "async" : "sync", (unsigned long long)seed, i);
            uint64_t phys, logi, max_peak = 0, sum_peaks = 0;
            c8_oracle(&l, R, &phys, &logi);
            const kv_cluster_result *cl = res.cluster;
            cr_assert_eq(cl->peak_physical, phys, "%s seed %llu", async ? "async" : "sync",
                         (unsigned long long)seed);
            cr_assert_eq(cl->peak_logical, logi);
            for (uint32_t r = 0; r < R; r++) {
                uint32_t p = cl->replica[r].stats.metrics.peak_physical;
                max_peak = p > max_peak ? p : max_peak;
                sum_peaks += p;
            }
            cr_assert(max_peak <= phys && phys <= sum_peaks, "between max and Σ of the peaks");
            free(l.s);
            kv_run_result_release(&res);
        }
}

Test(cluster, a_summary_without_a_cluster_block_is_one_replica)
{
    add_req(0, 0, 12, 3, 0);
    set_trace(1);
    kv_engine_config c = config(40, 4, "fixed:1");
    kv_router_config rc = router("prefix", 0);
    kv_diag d;
    cr_assert_eq(kv_cluster_replay(&c, 1, &rc, &trace, "t", "bf16", 0, NULL, &res, &d), 0, "%s",
                 d.msg);
    cr_assert_null(res.cluster);
    kv_summary s;
    memset(&s, 0, sizeof s);
    kv_summary_from_run(&s, &res);
    json_t *j = kv_summary_to_json(&s);
    cr_assert_null(json_object_get(j, "cluster"), "R = 1 writes no cluster block");
    kv_summary back;
    cr_assert_eq(kv_summary_from_json(j, "x", &back, &d), 0, "%s", d.msg);
    cr_assert_not(back.has_cluster);
    cr_assert_eq(kv_summary_number(&back, kv_summary_field("cluster.replicas")), 1);
    cr_assert(isnan(kv_summary_number(&back, kv_summary_field("cluster.imbalance.requests_gini"))));
    json_decref(j);
    kv_summary_release(&s);
    kv_summary_release(&back);
}

/* ---- R = 1 is kv_replay ----------------------------------------------------------------- */

typedef struct rows {
    kv_buf b;
} rows;

static void keep_row(void *ctx, const kv_sample *s)
{
    kv_report_timeseries_row(&((rows *)ctx)->b, s, false);
}

static char *summary_text(const kv_run_result *r)
{
    kv_summary s;
    memset(&s, 0, sizeof s);
    kv_summary_from_run(&s, r);
    json_t *j = kv_summary_to_json(&s);
    char *t = json_dumps(j, KV_JSON_FLAGS);
    json_decref(j);
    kv_summary_release(&s);
    return t;
}

static char *requests_text(const kv_run_result *r)
{
    kv_buf b = {0};
    kv_report_requests_header(&b, r);
    for (size_t i = 0; i < r->n; i++)
        kv_report_request_row(&b, r, i);
    return b.s;
}

/* One bundled trace, replayed by kv_replay and by a cluster of one under a router that
 * would matter with more replicas: the same samples, requests and summary, byte for byte,
 * under the sync and the async scheduler. */
static void identity_as(const char *rel, const kv_trace_options *to, uint32_t num_blocks,
                        uint32_t b, bool async)
{
    kv_trace *t;
    kv_diag d;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", getenv("KVSIM_SRC"), rel);
    cr_assert_eq(kv_trace_load(&t, path, to, &d), 0, "%s", d.msg);
    kv_engine_config c = config_as(num_blocks, b, "fixed:0.01", async);
    c.check_invariants = false; /* the walks are the debug build's business here */
    rows ra = {{0}}, rb = {{0}};
    kv_sim_hooks ha = {.sample_every = 3, .on_sample = keep_row, .ctx = &ra};
    kv_sim_hooks hb = {.sample_every = 3, .on_sample = keep_row, .ctx = &rb};
    cr_assert_eq(kv_replay(&c, t, "llama-3-8b", "bf16", 0, &ha, &ref, &d), 0, "%s", d.msg);
    kv_router_config rc = router("weighted", 7);
    rc.view = KV_ROUTER_APPROX;
    rc.refresh_s = 0.25;
    cr_assert_eq(kv_cluster_replay(&c, 1, &rc, t, "llama-3-8b", "bf16", 0, &hb, &res, &d), 0,
                 "%s", d.msg);
    cr_assert_null(res.cluster);
    cr_assert_str_eq(ra.b.s, rb.b.s, "%s (%s): timeseries rows", rel, async ? "async" : "sync");
    char *qa = requests_text(&ref), *qb = requests_text(&res);
    cr_assert_str_eq(qa, qb, "%s (%s): requests", rel, async ? "async" : "sync");
    char *sa = summary_text(&ref), *sb = summary_text(&res);
    cr_assert_str_eq(sa, sb, "%s (%s): summary", rel, async ? "async" : "sync");
    cr_assert_eq(memcmp(&ref.stats, &res.stats, sizeof res.stats), 0, "%s (%s): stats", rel,
                 async ? "async" : "sync");
    /* The same hasher (kv_replay_hasher: algorithm, chain memo, plan's chain store). */
    cr_assert_eq(ref.blocks_hashed, res.blocks_hashed, "%s: blocks hashed %llu vs %llu", rel,
                 (unsigned long long)ref.blocks_hashed, (unsigned long long)res.blocks_hashed);
    free(qa);
    free(qb);
    free(sa);
    free(sb);
    kv_buf_release(&ra.b);
    kv_buf_release(&rb.b);
    kv_run_result_release(&ref);
    kv_run_result_release(&res);
    kv_trace_free(t);
}

static void identity(const char *rel, const kv_trace_options *to, uint32_t num_blocks, uint32_t b)
{
    identity_as(rel, to, num_blocks, b, false);
    identity_as(rel, to, num_blocks, b, true);
}

Test(cluster, one_replica_is_kv_replay_on_every_bundled_trace)
{
    /* The small traces whole; the six full public traces (traces/real) on their first
     * 1500 rows (300 under sanitizers, support.h), in a pool small enough to preempt and
     * evict. */
    kv_trace_options to = {.format = KV_TRACE_AUTO, .time_scale = 1, .rate = 20, .seed = 1};
    identity("traces/tiny.csv", &to, 64, 16);
    identity("traces/tiny_shared.jsonl", &to, 64, 16);
    identity("traces/mooncake_conv_500.jsonl", &to, 3000, 16);
    identity("traces/azure_conv_1000.csv", &to, 2000, 16);
    identity("traces/sharegpt_lengths_1000.csv", &to, 3000, 16);
    to.limit = KV_TEST_SANITIZED ? 300 : 1500;
    static const char *const real[] = {
        "traces/real/mooncake_fast25_conversation_trace.jsonl",
        "traces/real/mooncake_fast25_synthetic_trace.jsonl",
        "traces/real/azure_llm_inference_2023_conv.csv",
        "traces/real/azure_llm_inference_2023_code.csv",
        "traces/real/sharegpt_8k_filtered_stats_llama2_tokenizer.csv",
        "traces/real/arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv",
    };
    for (size_t i = 0; i < sizeof real / sizeof real[0]; i++)
        identity(real[i], &to, 4000, 16);
}

/* ---- determinism, invariants ---------------------------------------------------------- */

static void seeds(bool async)
{
    random_trace(3, 120);
    kv_engine_config c = config_as(200, 8, "fixed:0.01", async);
    kv_router_config rc = router("random", 7);
    kv_diag d;
    cr_assert_eq(kv_cluster_replay(&c, 4, &rc, &trace, "t", "bf16", 0, NULL, &ref, &d), 0);
    cr_assert_eq(kv_cluster_replay(&c, 4, &rc, &trace, "t", "bf16", 0, NULL, &res, &d), 0);
    char *a = summary_text(&ref), *b = summary_text(&res);
    cr_assert_str_eq(a, b);
    cr_assert_eq(memcmp(ref.cluster->replica_of, res.cluster->replica_of, 120 * sizeof(uint32_t)),
                 0);
    free(b);
    kv_run_result_release(&res);
    rc.seed = 8;
    cr_assert_eq(kv_cluster_replay(&c, 4, &rc, &trace, "t", "bf16", 0, NULL, &res, &d), 0);
    cr_assert_neq(memcmp(ref.cluster->replica_of, res.cluster->replica_of, 120 * sizeof(uint32_t)),
                  0, "another seed routes differently");
    free(a);
    kv_run_result_release(&res);
    kv_run_result_release(&ref);
}

Test(cluster, equal_seeds_give_equal_runs_other_seeds_other_ties)
{
    seeds(false);
    seeds(true);
}

typedef struct corrupt {
    uint32_t replica;
    uint64_t at_step;
    bool done;
} corrupt;

static void plant(void *ctx, const kv_step_view *v)
{
    corrupt *k = ctx;
    if (k->done || v->replica != k->replica || v->step != k->at_step)
        return;
    struct kv_pool *p = (struct kv_pool *)v->pool;
    p->num_cached_free++; /* the count no longer matches the queue (destroy does not mind) */
    k->done = true;
}

Test(cluster, every_replica_walks_its_invariants_and_a_broken_one_is_named)
{
    for (int async = 0; async <= 1; async++) {
        random_trace(11, 60);
        kv_engine_config c = config_as(120, 8, "fixed:0.01", async);
        kv_router_config rc = router("least-requests", 0);
        corrupt k = {2, 3, false};
        kv_sim_hooks h = {.on_step_end = plant, .ctx = &k};
        kv_diag d;
        int rc_ = kv_cluster_replay(&c, 3, &rc, &trace, "t", "bf16", 0, &h, &res, &d);
        cr_assert(k.done, "replica 2 reached step 3");
        cr_assert_eq(rc_, -KV_EINVARIANT);
        cr_assert(strstr(d.msg, "replica 2: after step 3: pool: "), "diag: %s", d.msg);
        cr_assert_eq(res.stop, -KV_EINVARIANT);
        cr_assert_gt(res.unfinished, 0, "the stopped run leaves its requests unfinished");
        kv_run_result_release(&res);
    }
}

Test(cluster, the_debug_build_walks_every_replica_after_every_step)
{
    /* -Dinvariants=true (KVSIM_DEBUG) turns the walks on for every replay the CLI runs,
     * a cluster's included (kv_sim_engine_config); the normal build leaves them off. */
    kv_sim_options o;
    kv_sim_options_init(&o);
    o.replicas = 4;
    kv_setup setup;
    memset(&setup, 0, sizeof setup);
    setup.cap.num_blocks = 100;
    setup.block_size = 16;
    kv_engine_config c;
    kv_diag d;
    cr_assert_eq(kv_sim_engine_config(&o, &setup, &c, &d), 0, "%s", d.msg);
#ifdef KVSIM_DEBUG
    cr_assert(c.check_invariants, "the debug build walks the invariants");
#else
    cr_assert_not(c.check_invariants, "the normal build does not");
#endif
    cr_assert(c.sched.async_scheduling, "async scheduling is the default");
}

/* Random clusters under every policy and view with every walk after every step; with
 * arrivals spaced so that each request finds the cluster idle, the exact view's
 * prediction is exactly the hit granted (C4). */
Test(cluster, randomized_clusters_keep_every_invariant_and_c4_holds_when_idle)
{
    static const char *const policies[] = {"round-robin",    "random", "least-requests",
                                           "least-kv",       "prefix", "weighted",
                                           "weighted:kv=1",  "kv-cost"};
    for (uint64_t seed = 1; seed <= 24; seed++) {
        kv_rng rng;
        kv_rng_seed(&rng, seed * 977);
        size_t n = 30 + (size_t)kv_rng_below(&rng, 60);
        bool spaced = seed % 3 == 0;
        int64_t t = 0;
        for (size_t i = 0; i < n; i++) {
            t += spaced ? 10 * SEC : (int64_t)kv_rng_below(&rng, 30000000);
            add_req(i, t, 1 + (uint32_t)kv_rng_below(&rng, 120),
                    1 + (uint32_t)kv_rng_below(&rng, 20), (uint32_t)kv_rng_below(&rng, 3));
        }
        set_trace(n);
        uint32_t b = 1u << kv_rng_below(&rng, 4);
        kv_engine_config c = config(160 / b + 10 + (uint32_t)kv_rng_below(&rng, 300), b,
                                    "fixed:0.01");
        kv_router_config rc = router(policies[seed % 8], seed);
        rc.view = spaced || kv_rng_below(&rng, 2) ? KV_ROUTER_EXACT : KV_ROUTER_APPROX;
        rc.refresh_s = kv_rng_below(&rng, 3) == 0 ? 0.02 : 0;
        uint32_t R = 2 + (uint32_t)kv_rng_below(&rng, 4);
        kv_diag d;
        int rcode = kv_cluster_replay(&c, R, &rc, &trace, "t", "bf16", 0, NULL, &res, &d);
        cr_assert_eq(rcode, 0, "seed %llu: %s", (unsigned long long)seed, d.msg);
        const kv_cluster_result *cl = res.cluster;
        uint64_t routed = 0;
        for (uint32_t r = 0; r < R; r++)
            routed += cl->replica[r].routed;
        cr_assert_eq(routed, n);
        cr_assert_eq(res.stats.sched.finished + res.rejected, n, "seed %llu",
                     (unsigned long long)seed);
        if (spaced)
            for (size_t i = 0; i < n; i++)
                cr_assert_eq(cl->predicted_tokens[i], res.reqs[i].hit_tokens,
                             "seed %llu request %zu: C4 on an idle cluster",
                             (unsigned long long)seed, i);
        kv_run_result_release(&res);
    }
}

Test(cluster, session_router_needs_a_format_with_sessions)
{
    add_req(0, 0, 12, 3, 0);
    set_trace(1);
    trace.format = KV_TRACE_MOONCAKE;
    trace.path = "conv.jsonl";
    kv_engine_config c = config(40, 4, "fixed:1");
    kv_router_config rc = router("session", 0);
    kv_diag d;
    cr_assert_eq(kv_cluster_replay(&c, 2, &rc, &trace, "t", "bf16", 0, NULL, &res, &d),
                 -KV_EINVAL);
    cr_assert_str_eq(d.msg, "'conv.jsonl' is a mooncake trace, which has no 'session' field: "
                            "{router} session needs a kvsim JSONL or CSV trace");
}

Test(cluster, session_rows_follow_their_first_row)
{
    /* Sessions a, b, a, b, a with least-requests for first rows. */
    static const char *const sess[] = {"a", "b", "a", NULL, "b", "a"};
    for (size_t i = 0; i < 6; i++) {
        add_req(i, (int64_t)i * SEC / 4, 8, 2, (uint32_t)i);
        specs[i].session = sess[i];
    }
    set_trace(6);
    kv_engine_config c = config(64, 4, "fixed:1");
    kv_router_config rc = router("session", 0);
    kv_diag d;
    cr_assert_eq(kv_cluster_replay(&c, 3, &rc, &trace, "t", "bf16", 0, NULL, &res, &d), 0, "%s",
                 d.msg);
    const uint32_t *rep = res.cluster->replica_of;
    cr_assert_eq(rep[2], rep[0]);
    cr_assert_eq(rep[5], rep[0]);
    cr_assert_eq(rep[4], rep[1]);
    cr_assert_neq(rep[0], rep[1], "b's first row sees a's replica loaded");
    cr_assert_eq(res.cluster->session_rows, 5);
}

Test(cluster, every_block_is_hashed_once_whatever_r_and_the_policy)
{
    /* DESIGN §9/§10: a request's chain is computed once and shared; with every request
     * finished the run hashes each one's ⌊(prompt + output − 1)/b⌋ full blocks exactly
     * once, for one replica or many, under any router or view.  In the reference mode
     * (every full block hashed): by default a block no other request can share is never
     * hashed at all (private blocks, §9). */
    random_trace(21, 100);
    kv_engine_config c = config(400, 8, "fixed:0.01");
    c.hash_all_blocks = true;
    uint64_t want = 0;
    for (size_t i = 0; i < trace.n; i++)
        want += (specs[i].prompt_len + specs[i].output_len - 1) / 8;
    kv_diag d;
    cr_assert_eq(kv_replay(&c, &trace, "t", "bf16", 0, NULL, &ref, &d), 0, "%s", d.msg);
    cr_assert_eq(ref.stats.sched.finished, trace.n);
    cr_assert_eq(ref.blocks_hashed, want);
    static const char *const policies[] = {"prefix", "round-robin", "weighted", "kv-cost"};
    for (int k = 0; k < 4; k++) {
        kv_router_config rc = router(policies[k], 3);
        rc.view = k % 2 ? KV_ROUTER_APPROX : KV_ROUTER_EXACT;
        cr_assert_eq(kv_cluster_replay(&c, 3 + (uint32_t)k, &rc, &trace, "t", "bf16", 0, NULL,
                                       &res, &d),
                     0, "%s", d.msg);
        cr_assert_eq(res.stats.sched.finished, trace.n);
        cr_assert_eq(res.blocks_hashed, want, "%s: hashed %llu, want %llu", policies[k],
                     (unsigned long long)res.blocks_hashed, (unsigned long long)want);
        kv_run_result_release(&res);
    }
}

Test(cluster, private_blocks_are_hashed_by_no_router_and_change_no_choice)
{
    /* DESIGN §9 with §10: content-less prompts past a 48-token shared prefix, and tokens
     * prompts, mixed.  A private block (content-less or generated) is never hashed, by a
     * replica or by a router: every cluster hashes exactly what one replica hashes (the
     * shared-kind full blocks: the prefix's and the tokens prompts'), and its outputs equal
     * the reference mode's (every block hashed), the approx view's LRU included, under
     * both schedulers. */
    random_trace(31, 90);
    for (size_t i = 0; i < trace.n; i += 2) {
        specs[i].content = KV_CONTENT_NONE;
        specs[i].tokens = NULL;
    }
    uint64_t want = 0;
    for (size_t i = 0; i < trace.n; i++)
        want += (specs[i].content == KV_CONTENT_NONE
                     ? (specs[i].prompt_len < 48 ? specs[i].prompt_len : 48)
                     : specs[i].prompt_len) /
                8;
    static const char *const policies[] = {"prefix", "round-robin", "weighted", "kv-cost"};
    kv_diag d;
    for (int async = 0; async <= 1; async++) {
        kv_engine_config c = config_as(400, 8, "fixed:0.01", async);
        cr_assert_eq(kv_replay(&c, &trace, "t", "bf16", 48, NULL, &ref, &d), 0, "%s", d.msg);
        cr_assert_eq(ref.stats.sched.finished, trace.n);
        cr_assert_eq(ref.blocks_hashed, want);
        kv_run_result_release(&ref);
        for (int k = 0; k < 4; k++) {
            kv_router_config rc = router(policies[k], 3);
            rc.view = k % 2 ? KV_ROUTER_EXACT : KV_ROUTER_APPROX;
            uint32_t R = 2 + (uint32_t)k;
            c.hash_all_blocks = false;
            cr_assert_eq(kv_cluster_replay(&c, R, &rc, &trace, "t", "bf16", 48, NULL, &res, &d),
                         0, "%s", d.msg);
            cr_assert_eq(res.blocks_hashed, want, "%s: hashed %llu, want %llu", policies[k],
                         (unsigned long long)res.blocks_hashed, (unsigned long long)want);
            c.hash_all_blocks = true;
            cr_assert_eq(kv_cluster_replay(&c, R, &rc, &trace, "t", "bf16", 48, NULL, &ref, &d),
                         0, "%s", d.msg);
            cr_assert_gt(ref.blocks_hashed, want, "the reference mode hashes private blocks");
            cr_assert_eq(memcmp(res.cluster->replica_of, ref.cluster->replica_of,
                                trace.n * sizeof(uint32_t)),
                         0, "%s: the same choices", policies[k]);
            char *a = summary_text(&res), *b = summary_text(&ref);
            cr_assert_str_eq(a, b, "%s", policies[k]);
            free(a);
            free(b);
            kv_run_result_release(&res);
            kv_run_result_release(&ref);
        }
    }
}

/* §9 "Hash function" and "Shared work": a replay's hasher, made once for kv_replay and
 * the cluster driver alike, takes the configured algorithm and a chain memo for a
 * hash_ids trace. */
Test(cluster, replay_hasher_takes_the_algorithm_and_the_memo)
{
    kv_trace *t;
    kv_diag d;
    char path[4096];
    snprintf(path, sizeof path, "%s/traces/mooncake_conv_500.jsonl", getenv("KVSIM_SRC"));
    kv_trace_options to = {.format = KV_TRACE_AUTO, .time_scale = 1, .rate = 20, .seed = 1};
    cr_assert_eq(kv_trace_load(&t, path, &to, &d), 0, "%s", d.msg);
    kv_engine_config c = config(3000, 16, "fixed:0.01");
    for (int a = 0; a < 2; a++) {
        c.hash_algo = a ? KV_HASH_XXH3_128 : KV_HASH_SHA256;
        kv_hasher *h, *plain;
        if (kv_hasher_create_algo(&plain, "llama-3-8b", "bf16", 16, c.hash_algo) != 0)
            continue; /* built without libxxhash */
        cr_assert_eq(kv_replay_hasher(&h, &c, t, "llama-3-8b", "bf16", 0, &d), 0, "%s", d.msg);
        cr_assert_eq(memcmp(kv_hasher_seed(h), kv_hasher_seed(plain), KV_DIGEST_LEN), 0,
                     "%s: the seed of another algorithm", kv_hash_algo_name(c.hash_algo));
        kv_content ct;
        kv_content_from_spec(&ct, &t->reqs[1], t->trace_block_size, 0);
        kv_digest x[4], y[4];
        kv_hasher_chain(h, &ct, x, 0, 4);
        kv_hasher_chain(h, &ct, y, 0, 4); /* the same pairs again: memo hits */
        uint64_t hits = 0, misses = 0;
        kv_hasher_memo_stats(h, &hits, &misses);
        cr_assert_gt(hits, 0, "no chain memo for a hash_ids trace");
        cr_assert_eq(memcmp(x, y, sizeof x), 0);
        kv_hasher_destroy(h);
        kv_hasher_destroy(plain);
    }
    kv_trace_free(t);
}

/* ---- §9 "Memory per request": one replica attaches a request at the queue's head ------ */

typedef struct attach_log {
    size_t max_unattached; /* most waiting requests without cache state at one step end */
    size_t max_fresh;      /* most never-admitted waiting requests with cache state */
    size_t waiting_seen;   /* most waiting requests at one step end */
} attach_log;

static void count_attached(void *ctx, const kv_step_view *v)
{
    attach_log *l = ctx;
    size_t unattached = 0, fresh = 0, waiting = 0;
    for (size_t i = 0; i < v->n; i++) {
        const kv_req *r = &v->reqs[i];
        if (r->status != KV_REQ_WAITING)
            continue;
        waiting++;
        unattached += r->seq == NULL;
        fresh += r->seq != NULL && !r->admitted;
    }
    l->max_unattached = unattached > l->max_unattached ? unattached : l->max_unattached;
    l->max_fresh = fresh > l->max_fresh ? fresh : l->max_fresh;
    l->waiting_seen = waiting > l->waiting_seen ? waiting : l->waiting_seen;
}

Test(cluster, one_replica_attaches_a_request_when_it_first_heads_the_waiting_queue)
{
    /* An overloaded replica (4 running at most) of content-less rows past a 48-token shared
     * prefix and tokens rows: kv_replay gives every request its cache state at arrival; the
     * cluster driver of one replica only to the queue's head, so a long FCFS queue holds at
     * most one never-admitted attached request (preempted ones keep theirs).  The outputs
     * and the blocks hashed are kv_replay's, under both schedulers. */
    random_trace(47, 200);
    for (size_t i = 0; i < trace.n; i += 2) {
        specs[i].content = KV_CONTENT_NONE;
        specs[i].tokens = NULL;
    }
    kv_diag d;
    for (int async = 0; async <= 1; async++) {
        kv_engine_config c = config_as(60, 8, "fixed:0.01", async);
        c.sched.max_seqs = 4;
        attach_log la = {0}, lb = {0};
        kv_sim_hooks ha = {.on_step_end = count_attached, .ctx = &la};
        kv_sim_hooks hb = {.on_step_end = count_attached, .ctx = &lb};
        cr_assert_eq(kv_replay(&c, &trace, "t", "bf16", 48, &ha, &ref, &d), 0, "%s", d.msg);
        kv_router_config rc = router("round-robin", 1);
        cr_assert_eq(kv_cluster_replay(&c, 1, &rc, &trace, "t", "bf16", 48, &hb, &res, &d), 0,
                     "%s", d.msg);
        cr_assert_gt(la.waiting_seen, 50, "the queue is long");
        cr_assert_eq(la.max_unattached, 0, "kv_replay attaches at arrival");
        cr_assert_eq(lb.waiting_seen, la.waiting_seen);
        cr_assert_geq(lb.max_unattached + 1, lb.waiting_seen, "all but the head unattached");
        cr_assert_leq(lb.max_fresh, 1, "only the head gets cache state before admission");
        cr_assert_gt(res.stats.sched.preemptions, 0, "preempted requests keep theirs");
        char *a = summary_text(&ref), *b = summary_text(&res);
        cr_assert_str_eq(a, b, "%s", async ? "async" : "sync");
        char *qa = requests_text(&ref), *qb = requests_text(&res);
        cr_assert_str_eq(qa, qb, "%s", async ? "async" : "sync");
        cr_assert_eq(ref.blocks_hashed, res.blocks_hashed);
        free(a);
        free(b);
        free(qa);
        free(qb);
        kv_run_result_release(&res);
        kv_run_result_release(&ref);
    }
}
