/* planner: the SLO capacity search of `kvsim plan`, as a library (README "Capacity
 * planning").  plan.h has the SLOs and the bracket-and-bisect search; this module runs
 * the search against replays: it proposes a value, replays the trace there in process
 * (kv_sim_replay, exactly what `kvsim run` does with the same options), measures every
 * SLO on the replay's summary, records the verdict, and repeats.
 *
 * Load.  A probe at load s replays the trace with every arrival multiplied by the time
 * scale ts = F/s, F being the base --time-scale (default 1), rounded to 12 significant
 * digits: arrival' = llround(arrival · ts) in doubles, then ordered by (arrival', file
 * row) — exactly what the trace reader does for `kvsim run --time-scale ts`.  The 12-digit
 * rounding makes ts print exactly in every output, so a probe is reproduced bit for bit by
 * `kvsim run --time-scale <its time_scale>`.  Each probe works on a shallow copy of the
 * request array: the specs' token and hash_ids pointers stay shared with the loaded trace.
 *
 * Pools.  KV_PLAN_NUM_BLOCKS and KV_PLAN_KV_BUDGET search the pool size in whole blocks at
 * a fixed load, resolving each probe through kv_setup_resolve with num_blocks = N or
 * kv_budget = N·block_bytes in a copy of the setup options, so each probe's setup is
 * exactly what `kvsim run` gets from the same options.  A budget between two multiples of
 * the block size gives the pool of the lower one, so budgets are searched in block steps.
 *
 * Digests.  The probes share one chain store (KV_PLAN_CHAIN_BYTES): a request's chain is
 * hashed by the first probe that admits it and copied by every later one.
 *
 * Target rate.  A pool or replica search answers "what holds R requests/s" when the
 * config gives target_rate R: its fixed load is R / r1, r1 the trace's arrival rate at
 * load 1 ((n−1)/(last − first arrival) after the base time scale), rounded to 12
 * significant digits, so each probe offers R requests/s up to the rounding of arrivals to
 * whole nanoseconds (the probe's measured rate is reported beside it).
 *
 * Replicas.  KV_PLAN_REPLICAS searches the fewest replicas (DESIGN §10) that meet the
 * SLOs at a fixed load, each replica the setup's pool: integers from 1, where a probe at R
 * replays with --replicas R.  The search starts at 1 and doubles until the SLOs are met,
 * then bisects down to adjacent counts, so the answer R comes with a probe at R − 1 that
 * violates (unless R is 1 or the bound); its tolerance and confirmation step are
 * therefore 0.  Every search reports replicas × TP · PP = GPUs for each probe; a load or
 * pool search replays with the options' --replicas.
 *
 * Memory: the trace (the caller's), one copy of its request array, the chain store, one
 * summary per probe.
 */
#ifndef KVSIM_PLANNER_H
#define KVSIM_PLANNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim/plan.h"
#include "kvsim/setup.h"
#include "kvsim/sim.h"
#include "kvsim/summary.h"
#include "kvsim/trace.h"

typedef enum kv_plan_over {
    KV_PLAN_LOAD,       /* highest arrival-rate scale factor within the SLOs */
    KV_PLAN_NUM_BLOCKS, /* smallest pool, in blocks, at a fixed load */
    KV_PLAN_KV_BUDGET,  /* the same pool search, reported as KV bytes per rank */
    KV_PLAN_REPLICAS,   /* fewest replicas at a fixed load */
} kv_plan_over;

/* "load", "num_blocks", "kv_budget", "replicas" */
const char *kv_plan_over_name(kv_plan_over o);
/* Those names, or "num-blocks" / "kv-budget": 0 or -KV_EINVAL. */
int kv_plan_over_parse(const char *s, kv_plan_over *out);

/* Default bounds.  Loads: a million-fold range around the trace's own rate.  Pools: from
 * the smallest pool the engine accepts up to one that holds every request of the trace at
 * full length at once, watermark included (blocks never run short there), at most
 * KV_PLAN_MAX_BLOCKS_DEFAULT (about 120 MB of pool bookkeeping). */
#define KV_PLAN_LOAD_MIN_DEFAULT   0.001
#define KV_PLAN_LOAD_MAX_DEFAULT   1000.0
#define KV_PLAN_MAX_BLOCKS_DEFAULT 1048576u
#define KV_PLAN_MAX_REPLICAS_DEFAULT 256u

typedef struct kv_plan_config {
    kv_plan_over over;
    kv_slo_set slos;   /* finished (kv_slo_finish) */
    double fixed_load; /* pool and replica searches: the load they replay at (default 1) */
    double target_rate; /* > 0: pool and replica searches replay at this arrival rate,
                           req/s, instead: fixed_load = target_rate / the trace's rate at
                           load 1 (set by kv_plan_set_trace); 0 = none */
    bool has_min, has_max;
    double min, max; /* axis units: loads, blocks for both pool searches, or replicas */
    double tolerance, confirm;
    uint32_t max_probes;
} kv_plan_config;

/* One replay of the search. */
typedef struct kv_plan_probe {
    double value;      /* the searched quantity: load, blocks, or budget bytes */
    double load;       /* arrival-rate scale factor against the trace as loaded */
    double time_scale; /* `kvsim run --time-scale` that replays this probe exactly */
    double rate;       /* offered arrival rate, req/s: (n−1)/(last − first arrival); NAN
                          when every request arrives at once */
    uint32_t num_blocks;    /* per replica */
    uint64_t kv_budget;     /* KV bytes per rank the pool was sized from (config echo's
                               kv_budget_bytes; N·block_bytes in pool searches) */
    uint32_t replicas;      /* the probe's replicas */
    uint64_t gpus;          /* replicas × TP × PP */
    double slo[KV_SLO_MAX]; /* each SLO's measured figure, in the set's order */
    double ttft_p99, tpot_p99, preemption_rate, reject_rate; /* always measured */
    double output_tok_per_s;         /* the replay's output tokens per simulated second */
    double output_tok_per_s_per_gpu; /* ... divided by its GPUs (replicas × TP × PP) */
    double cost_per_million;         /* --gpu-cost-per-hour × GPUs per million output
                                        tokens; NAN without a cost or output */
    uint64_t preemptions, finished, rejected, unfinished;
    bool meets;
    kv_summary summary; /* the replay's summary, config echo included (owned) */
} kv_plan_probe;

typedef struct kv_plan {
    kv_plan_over over;
    kv_slo_set slos;
    kv_search search;
    kv_plan_probe *probes; /* parallel to search.pts */
    size_t cap_probes;
    kv_search_result result;
    const char *trace_path;
    const char *command; /* the command line that ran the plan, for plan.json's stamp; set
                            by the caller, NULL: not recorded */
    size_t n_requests;
    double base_time_scale; /* the options' --time-scale (load 1 replays with it) */
    double base_rate;       /* offered rate at load 1, req/s (NAN: all at once) */
    double fixed_load;      /* pool and replica searches: the load they replay at */
    double target_rate;     /* the config's target_rate (0 = none) */
    uint64_t block_bytes;   /* bytes per block per rank */
    uint32_t gpus_per_replica; /* TP × PP */
    bool whole_trace_max;   /* pool searches: --max is the default, a pool that holds every
                               request at once (so blocks never run short there) */
    /* private: what probes replay */
    kv_plan_config cfg__;
    const kv_trace *trace__;
    kv_request_spec *reqs__;
    kv_trace view__;
    double view_ts__;
    kv_setup_options setup_opts__;
    kv_sim_options sim_opts__;
    kv_setup setup__;
    kv_chain_store *chains__; /* the probes' shared chain digests */
} kv_plan;

/* The chain store a plan's probes share (blockhash.h): digests hashed by one probe are
 * copied by the next ones, up to this many bytes (Mooncake's conversation trace needs
 * about 290 MB at block size 16). */
#define KV_PLAN_CHAIN_BYTES ((size_t)512 << 20)

/* Set up a plan from the options alone (before any file is read): resolve the setup
 * (for a pool search, one of 2 blocks, for the block size and bytes per block) and check
 * the time model.  so's time_scale is the base F.  0, or -KV_EINVAL with a diag for
 * options that cannot work (a pool option with a pool search, replicas with a replica
 * search), or the setup's own error.  kv_plan_release in every case. */
int kv_plan_init(kv_plan *p, const kv_plan_config *cfg, const kv_setup_options *mo,
                 const kv_sim_options *so, kv_diag *diag);
/* Bind the trace (loaded with time scale 1: each probe applies its own; it must outlive
 * the plan), derive a target rate's load, and set the search bounds.  0 or -KV_EINVAL
 * with a diag (bounds that cannot work; a target rate for a trace whose requests all
 * arrive at once, which has no rate to scale). */
int kv_plan_set_trace(kv_plan *p, const kv_trace *trace, const char *trace_path, kv_diag *diag);

/* Observer of the search: before each probe. */
typedef void (*kv_plan_progress)(void *ctx, size_t probe, double value, kv_plan_over over);

/* Run the search to its end.  0, or the error of a probe's replay (diag names the probe);
 * the probes made so far stay recorded. */
int kv_plan_run(kv_plan *p, kv_plan_progress progress, void *ctx, kv_diag *diag);

void kv_plan_release(kv_plan *p);

/* The SLO that stops the answer from going further: among the SLOs the next probe beyond
 * the answer violates, the one furthest over its limit (value/limit; ties to the first in
 * spec order).  With no probe beyond the answer (a bound reached) no SLO binds and the
 * closest one is named instead; with no answer, the SLO most violated at the easiest
 * probe. */
typedef struct kv_plan_binding {
    long slo;   /* index into slos, -1 none */
    bool binds; /* false: only the closest SLO (bound reached) */
    const kv_plan_probe *answer, *next;
} kv_plan_binding;

void kv_plan_get_binding(const kv_plan *p, kv_plan_binding *out);
/* The SLO with the largest value/limit at probe pr, only among violated ones if
 * violated_only; -1 if none. */
long kv_plan_worst_slo(const kv_plan *p, const kv_plan_probe *pr, bool violated_only);
/* Probe indices sorted by value (ascending) into idx[0..search.n). */
void kv_plan_sorted(const kv_plan *p, size_t *idx);

#endif
