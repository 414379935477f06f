/* sim: one complete replay of a trace, the way every command replays it (DESIGN §6–§8).
 *
 *   kv_sim_options   what a replay is configured with beyond the setup: trace reading,
 *                    scheduler and pool policy, the time model;
 *   kv_sim_engine_config   those options and a resolved kv_setup → an engine config
 *                    (validates the time model: -KV_EINVAL, a front end's usage error);
 *   kv_replay        the driver: the trace's arrivals, in order, merged with the engine's
 *                    step events on one clock (at equal times step ends, then arrivals,
 *                    then step starts), until every request has ended;
 *   kv_sim_replay    both of the above.
 *
 * The result holds every request's final state in trace order and the run's counters.
 * A run stops early only on an engine error (livelock guard, clock overflow, a broken
 * invariant): the requests left are then unfinished, the result is still complete, and
 * the error code is both returned and recorded in result.stop for reports.
 */
#ifndef KVSIM_SIM_H
#define KVSIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim/engine.h"
#include "kvsim/router.h"
#include "kvsim/setup.h"
#include "kvsim/trace.h"

/* The chain memo a replay of a hash_ids trace gives its hasher (kv_hasher_memo). */
#define KV_SIM_MEMO_BYTES ((size_t)64 << 20)
/* Digests hashed ahead and not yet asked for, at most (kv_sim_options.hash_ahead). */
#define KV_SIM_AHEAD_BYTES ((size_t)8 << 20)
/* The most replicas a replay takes (each is a whole pool). */
#define KV_SIM_MAX_REPLICAS 4096u

typedef struct kv_sim_options {
    kv_trace_options trace;
    uint32_t shared_prefix; /* content-less prompts all begin with the same N tokens */
    kv_sched_config sched;
    bool prefix_caching;
    kv_free_order free_order;
    const char *time_model; /* kv_timing_parse's spec; default "roofline" */
    const char *frontend;   /* kv_frontend_parse's spec; default "none" */
    uint32_t max_concurrency; /* vllm bench serve's --max-concurrency: a semaphore of N
                                 slots in front of the open-loop rows (arrivals.h); 0 =
                                 none (the default; kvsim calibrate sets it) */
    kv_hash_algo hash_algo; /* default KV_HASH_SHA256 */
    bool hash_ahead;        /* hash prompt chains on a second thread ahead of the replay
                               (kv_hasher_ahead); the same outputs; default off */
    kv_chain_store *chains; /* optional, borrowed: chain digests shared by replays of one
                               trace (kvsim plan's probes); NULL = none */
    double gpu_cost_per_hour; /* cost of one GPU-hour, for the summary's cost per million
                                 output tokens; 0 = none (the default) */
    uint32_t replicas;      /* DESIGN §10: R replicas behind a router; default 1 */
    kv_router_config router; /* its seed is ignored: routing draws from trace.seed (--seed) */
} kv_sim_options;

/* DESIGN's defaults: watermark 0.01 under the vllm rule, max_seqs 256, 8192 batched
 * tokens, chunked prefill, full-prompt admission gate, FCFS policy and preemption, async
 * scheduling (vLLM's default, §6.6), prefix caching, split free order, the roofline time
 * model, seed 1, one replica (the router's defaults: round-robin, exact view, live
 * signals).  (A zeroed kv_sched_config is sync.) */
void kv_sim_options_init(kv_sim_options *o);

/* The engine config of a replay (observers unset, invariants per the build option).
 * 0 or -KV_EINVAL with a diag (a bad time model, no replica, a router config
 * kv_router_config_check refuses). */
int kv_sim_engine_config(const kv_sim_options *o, const kv_setup *setup, kv_engine_config *c,
                         kv_diag *diag);

/* The default timeseries interval for a trace of n requests: 1 below 40,000 requests,
 * else ⌊n / 20,000⌋, so that timeseries.csv stays near 20,000 rows per step per request
 * (a million requests: every 50th step, ~40 MB instead of ~2 GB).  Summary figures use
 * every step whatever the interval. */
uint32_t kv_sim_default_sample_every(size_t n_requests);

typedef struct kv_progress {
    int64_t now_ns;
    uint64_t arrived, finished, total;
} kv_progress;

/* Observers of a replay; any may be NULL / 0. */
typedef struct kv_sim_hooks {
    uint32_t sample_every; /* on_sample every N steps; 0 means 1 */
    void (*on_sample)(void *ctx, const kv_sample *s);
    void (*on_step_end)(void *ctx, const kv_step_view *view);
    void (*on_progress)(void *ctx, const kv_progress *p); /* every 4096 steps and at the end */
    void *ctx;
} kv_sim_hooks;

typedef struct kv_run_result {
    kv_req *reqs; /* one per trace request, in trace order */
    size_t n;
    uint64_t rejected;   /* Σ rejections by reason (arrivals and re-joins after preemption) */
    uint64_t unfinished; /* stopped by an engine error before they ended */
    int64_t last_arrival_ns;
    int64_t sim_time_ns; /* max(end of the last step, last arrival) */
    kv_engine_stats stats;
    int stop; /* 0, or the engine error that stopped the run (-KV_ELIVELOCK, …) */
    uint64_t blocks_hashed; /* SHA-256 block hashes computed (perf.json; DESIGN §9) */
    bool hashed_ahead;      /* a second thread hashed ahead (hash_ahead; perf.json) */
    struct kv_cluster_result *cluster; /* R ≥ 2 replicas (cluster.h), else NULL; owned */
    kv_request_spec *sent_specs; /* closed-loop rows' specs as sent (arrivals.h), which
                                    their reqs point to; owned, NULL if none */
} kv_run_result;

/* The replay driver.  cfg's reqs/n_reqs are set here.  0, or a negative KV_E*: -KV_EINVAL
 * / -KV_ECAPACITY for a config the engine refuses (result empty), or the engine error that
 * stopped the run (result complete, see the top comment).  The result must be released
 * whenever the call returned 0 or stopped a run. */
int kv_replay(const kv_engine_config *cfg, const kv_trace *trace, const char *model_name,
              const char *dtype_name, uint32_t shared_prefix, const kv_sim_hooks *hooks,
              kv_run_result *out, kv_diag *diag);

/* The hasher of a replay of trace under cfg: cfg's hash algorithm and chain store, and a
 * chain memo (at most KV_SIM_MEMO_BYTES, and no more than two entries per hash_id of the
 * trace) when the trace has hash_ids and b divides its block size; with cfg->hash_ahead,
 * prefix caching, no chain store and rows with shared-kind blocks, hashing ahead on a
 * second thread (kv_hasher_ahead, at most KV_SIM_AHEAD_BYTES waiting; without the thread
 * when it cannot be had).  0, or a negative KV_E* with diag set. */
int kv_replay_hasher(kv_hasher **out, const kv_engine_config *cfg, const kv_trace *trace,
                     const char *model_name, const char *dtype_name, uint32_t shared_prefix,
                     kv_diag *diag);

/* Options + setup → engine config → kv_cluster_replay with the options' replicas and
 * router (R = 1: exactly kv_replay's result; cluster.h). */
int kv_sim_replay(const kv_sim_options *o, const kv_setup *setup, const kv_trace *trace,
                  const kv_sim_hooks *hooks, kv_run_result *out, kv_diag *diag);

void kv_run_result_release(kv_run_result *r); /* NULL-safe on a zeroed result */

#endif
