/* engine: the discrete-event loop that replays a trace through sched, kvcache and pool
 * (DESIGN §6 "Engine", §6.5 exact rules).
 *
 * Events live in a binary heap ordered by (time, sequence number); time is integer
 * nanoseconds.  Arrivals are pushed first, so at equal times an arrival precedes a step
 * start and a step starting at t sees every arrival ≤ t.  Arrivals during a step wait for
 * the next step; idle, the clock jumps to the next arrival.  Same inputs ⇒ same outputs.
 */
#ifndef KVSIM_ENGINE_H
#define KVSIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "kvsim/kvcache.h"
#include "kvsim/metrics.h"
#include "kvsim/pool.h"
#include "kvsim/sched.h"
#include "kvsim/timing.h"
#include "kvsim/trace.h"

struct kv_step_view;

typedef struct kv_engine_config {
    uint32_t num_blocks; /* N, null block included */
    uint32_t block_size; /* b */
    bool prefix_caching; /* default on */
    kv_free_order free_order;
    kv_sched_config sched;
    kv_timing timing;
    uint32_t shared_prefix; /* --shared-prefix N for content-less rows */
    const char *model_name; /* hash seed (DESIGN §3) */
    const char *kv_dtype;
    uint32_t sample_every; /* on_sample every N steps (≥ 1); metrics see every step */
    bool check_invariants; /* R9 walk after every step (debug builds turn it on) */
    /* Optional observers; ctx is passed back. */
    void (*on_sample)(void *ctx, const kv_sample *s);
    void (*on_progress)(void *ctx, int64_t now_ns, uint64_t done, uint64_t total);
    /* After every step end (state after frees): for tests and debugging tools. */
    void (*on_step_end)(void *ctx, const struct kv_step_view *view);
    void *ctx;
} kv_engine_config;

/* What on_step_end sees. */
typedef struct kv_step_view {
    uint64_t step; /* 1-based */
    int64_t start_ns, end_ns;
    const kv_req *reqs; /* all requests, trace order */
    size_t n;
    const kv_pool *pool;
    const kv_batch *batch; /* the step's scheduled requests, in scheduling order */
} kv_step_view;

typedef struct kv_run_result {
    kv_req *reqs; /* one per trace request, in trace order */
    size_t n;
    uint64_t steps;
    int64_t sim_time_ns; /* max(end of the last step, last arrival) */
    uint64_t finished, rejected, unfinished;
    uint64_t evictions;
    uint64_t output_tokens; /* Σ output_len of finished requests */
    kv_prefix_stats prefix;
    kv_sched_counters sched;
    uint32_t watermark_blocks; /* W */
    uint32_t usable_blocks;    /* N − 1 */
    kv_metrics metrics;
    bool livelock;         /* the guard fired (should never happen) */
    bool clock_overflow;   /* a step would end past INT64_MAX ns: the run stopped */
    bool invariant_failed; /* check_invariants found a violation */
} kv_run_result;

/* Replay.  0, or -KV_EINVAL (bad config: diag says which) / -KV_ECAPACITY, or -KV_ERANGE
 * when the simulated clock would pass INT64_MAX ns (out is still filled and must be
 * released). */
int kv_engine_run(const kv_engine_config *cfg, const kv_trace *trace, kv_run_result *out,
                  kv_diag *diag);
void kv_run_result_release(kv_run_result *r);

#endif
