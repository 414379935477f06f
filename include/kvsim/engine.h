/* engine: one replica — pool, cache, scheduler, step clock — as an object that a driver
 * steps on its own clock (DESIGN §6 "Engine", §6.5 exact rules).
 *
 * An engine has at most one step in flight and no event queue of its own: it says what
 * its next event is (a step start or a step end, and when) and does it when told.  The
 * driver (sim.c: one replica; a cluster: several) owns the clock and the arrivals and
 * merges them with every engine's next event in DESIGN's order: at equal times step ends
 * first, then arrivals, then step starts, so a step starting at t sees every arrival ≤ t.
 * Arrivals during a step wait for the next step; idle, an engine waits for an arrival.
 *
 * A step start runs one scheduling pass, takes the step's sample (after scheduling, before
 * step-end frees: the state the step computes on) and schedules the step's end after the
 * time model's duration.  A step end lets sched advance, sample and finish the step's
 * requests in scheduling order; the next step starts at once if work remains.
 *
 * With sched.async_scheduling (DESIGN §6.6) the pass of step k+1 runs when step k starts
 * executing, before step k ends (vLLM's AsyncScheduler behind a batch queue of two): a
 * step start executes the step planned at the previous start and plans the next; a step
 * that schedules nothing lasts 0 ns.  Each pass's sample is stamped with its step's start.
 *
 * Failure has one channel, the return code of kv_engine_advance: the livelock guard (a
 * step that schedules no token and preempts nothing while work waits; by DESIGN's
 * rejection rules it never fires), a clock that would pass 2^63 ns, or (with
 * check_invariants) the first invariant violation, each with a diag.  The engine is left
 * consistent, and kv_engine_abandon ends its requests.
 */
#ifndef KVSIM_ENGINE_H
#define KVSIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim/arrivals.h"
#include "kvsim/kvcache.h"
#include "kvsim/metrics.h"
#include "kvsim/pool.h"
#include "kvsim/sched.h"
#include "kvsim/timing.h"

typedef struct kv_engine kv_engine; /* opaque */

/* What on_step_end sees: the state after the step's frees (async: after the step's sampled
 * tokens were applied, with the next step already scheduled). */
typedef struct kv_step_view {
    uint32_t replica; /* the engine config's replica */
    uint64_t step;    /* 1-based */
    int64_t start_ns, end_ns;
    const kv_req *reqs; /* the engine config's reqs (all requests, trace order) */
    size_t n;
    const kv_pool *pool;
    const kv_batch *batch; /* the step's scheduled requests, in scheduling order */
} kv_step_view;

typedef struct kv_engine_config {
    uint32_t num_blocks; /* N, null block included; ≥ 2 */
    uint32_t block_size; /* b; must equal the hasher's */
    bool prefix_caching; /* default on */
    kv_free_order free_order;
    kv_sched_config sched;
    kv_timing timing;
    kv_frontend frontend;  /* the serving front end the replay drivers put before the
                              scheduler (arrivals.h); the engine itself ignores it */
    uint32_t max_concurrency; /* the client semaphore of the replay drivers (arrivals.h);
                                 0 = none (the default); the engine ignores it */
    bool check_invariants; /* R9 and the sched/kvcache walks after every step */
    kv_hash_algo hash_algo; /* the block identity function (default SHA-256) */
    kv_chain_store *chains; /* optional, borrowed: digests kept across replays (plan) */
    bool hash_ahead;        /* the replay drivers hash ahead on a second thread
                               (kv_replay_hasher); the engine ignores it */
    bool hash_all_blocks;  /* reference mode (tests): no private blocks (DESIGN §9), every
                              full block hashed and indexed; same outputs, slower */
    uint32_t replica;      /* index in a cluster (DESIGN §10), echoed in every sample and
                              step view; 0 for a lone replica */
    /* Observers (optional); ctx is passed back. */
    uint32_t sample_every; /* on_sample every N steps (≥ 1); metrics see every step.
                              on_sample sees a step's sample when the step starts
                              executing, so in time-stamp order (async too) */
    void (*on_sample)(void *ctx, const kv_sample *s);
    void (*on_step_end)(void *ctx, const kv_step_view *view);
    void *ctx;
    const kv_req *reqs; /* for the view: the array the engine's requests live in */
    size_t n_reqs;
} kv_engine_config;

typedef enum kv_engine_event {
    KV_ENGINE_IDLE = 0,   /* nothing due until a request arrives */
    KV_ENGINE_STEP_START, /* a step starts (and may find nothing to do) */
    KV_ENGINE_STEP_END,   /* the step in flight ends */
} kv_engine_event;

/* Counters for reports: cumulative since creation. */
typedef struct kv_engine_stats {
    uint64_t steps;          /* scheduling passes (executed steps), the livelock step
                                included */
    int64_t last_step_end;   /* end of the last completed step, 0 before any */
    kv_sched_counters sched; /* finished, output tokens, preemptions, deferrals, … */
    kv_prefix_stats prefix;
    uint64_t evictions;
    kv_metrics metrics;        /* peaks and time-weighted means of the step samples */
    uint32_t watermark_blocks; /* W */
    uint32_t usable_blocks;    /* N − 1 */
} kv_engine_stats;

/* 0, or -KV_EINVAL (bad config: diag says which) / -KV_ECAPACITY (fewer than 2 blocks).
 * The hasher is borrowed (shared by a cluster's replicas, so a request is hashed once). */
int kv_engine_create(kv_engine **out, const kv_engine_config *cfg, kv_hasher *hasher,
                     kv_diag *diag);
/* NULL ok.  Every request must have ended (finished, rejected or abandoned). */
void kv_engine_destroy(kv_engine *e);

/* An attached request arrives at now: it joins the waiting queue or is rejected there
 * (returns whether it was queued).  An idle engine's next step is then due at now. */
bool kv_engine_arrive(kv_engine *e, kv_req *r, int64_t now);

/* The next event and its time (*at untouched when idle). */
kv_engine_event kv_engine_next(const kv_engine *e, int64_t *at);

/* Do the next event (not when idle).  0, or -KV_ELIVELOCK, -KV_ERANGE (the step would
 * end past INT64_MAX ns), -KV_EINVARIANT, each with a diag.  After an error the engine
 * does nothing more until its requests are abandoned. */
int kv_engine_advance(kv_engine *e, kv_diag *diag);

/* End every queued and running request as unfinished (a run that stopped); returns how
 * many. */
uint32_t kv_engine_abandon(kv_engine *e);

void kv_engine_get_stats(const kv_engine *e, kv_engine_stats *out);

/* Read-only views for routers and tools. */
const kv_pool *kv_engine_pool(const kv_engine *e);
/* The sample of the step in flight, or of the last step executed (taken after its
 * scheduling pass, before its step-end frees, as every step's is; effective_tokens only on
 * steps handed to on_sample); all zero before the first step.  Async, a step's pass runs
 * one step early, but its sample becomes the latest only when the step starts executing,
 * at its time stamp.  A cluster sums these across replicas (C8's peaks). */
const kv_sample *kv_engine_last_sample(const kv_engine *e);
uint32_t kv_engine_num_running(const kv_engine *e);
uint32_t kv_engine_num_waiting(const kv_engine *e);
uint64_t kv_engine_steps(const kv_engine *e); /* steps executed so far */

/* The full invariant walk (pool R9, sched, kvcache): 0 or -KV_EINVARIANT with a diag. */
int kv_engine_check(const kv_engine *e, kv_diag *diag);

#endif
