/* cluster: R identical replicas on one simulated clock behind one router (DESIGN §10).
 *
 *   kv_cluster_replay   the cluster's replay driver: the trace's arrivals, routed in trace
 *                       order (C2), and every replica's step events on one event heap
 *                       ordered by (time, kind, replica, seq) (C1); the result is a
 *                       kv_run_result whose counters are cluster totals (C7) and whose
 *                       `cluster` member holds the per-replica figures, each request's
 *                       replica and predicted hit, and the router's accuracy (C6).
 *
 * With R = 1 the result is exactly kv_replay's (sim.h): the same events in the same
 * order, the same samples, `cluster` NULL, so every output is byte-identical to a replay
 * without replicas.  Each replica is a complete engine (engine.h) with its own pool of
 * N blocks; the block hasher is shared, so a request's chain is computed once whatever R
 * and the policy (DESIGN §9, §10 "Performance").
 *
 * Memory: O(R · N) for the pools (and the approx view's LRUs), O(requests) for the
 * request array and the per-request routing record.
 */
#ifndef KVSIM_CLUSTER_H
#define KVSIM_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim/router.h"
#include "kvsim/sim.h"

/* One replica's share of a cluster run. */
typedef struct kv_replica_result {
    kv_engine_stats stats; /* its engine's counters, peaks and time-weighted means */
    uint64_t routed;       /* requests routed to it, rejected ones included */
    uint64_t rejected;     /* Σ of its rejections (arrivals and re-joins) */
} kv_replica_result;

#define KV_CLUSTER_NOT_ROUTED UINT32_MAX

typedef struct kv_cluster_result {
    uint32_t replicas;          /* R ≥ 2 */
    kv_router_config router;    /* as run (seed included) */
    kv_replica_result *replica; /* R entries */
    uint32_t *replica_of;       /* per request, trace order: its replica, or
                                   KV_CLUSTER_NOT_ROUTED (a run stopped before it arrived) */
    uint32_t *predicted_tokens; /* per request: C6's predicted hit, overlap · b, at routing */
    /* C8: the peaks over time of the cluster-wide sums of each replica's latest sample */
    uint64_t peak_physical, peak_logical;
    /* C6, over every request (one never admitted was granted 0) */
    uint64_t predicted_hit_tokens, granted_hit_tokens;
    uint64_t overpredicted, underpredicted; /* requests: predicted above / below the grant */
    uint64_t session_rows; /* trace rows with a session */
} kv_cluster_result;

/* The cluster's replay: `replicas` engines configured by cfg (cfg->replica is set per
 * engine), `router` choosing among them (its seed is the tie-break stream's state).
 * Returns as kv_replay does: 0; -KV_EINVAL / -KV_ECAPACITY for a config refused before
 * anything ran (result empty), among them {router} session on a trace whose format has
 * no session field (a Mooncake, Azure or length-stats file: the diag names the file); or
 * the engine error that stopped the run ("replica 2: after step 7: …"; result complete,
 * requests not yet ended unfinished).  With R ≥ 2 out->cluster is set and out->stats
 * holds sums over the replicas (steps, counters, prefix statistics, evictions,
 * usable_blocks; last_step_end the latest; watermark_blocks W per replica; the metrics'
 * sums of x·dt and dt, whose ratio is not C8's mean: see summary.h).  The result must be
 * released with kv_run_result_release. */
int kv_cluster_replay(const kv_engine_config *cfg, uint32_t replicas,
                      const kv_router_config *router, const kv_trace *trace,
                      const char *model_name, const char *dtype_name, uint32_t shared_prefix,
                      const kv_sim_hooks *hooks, kv_run_result *out, kv_diag *diag);

/* Free a cluster result (NULL ok); kv_run_result_release calls it. */
void kv_cluster_result_free(kv_cluster_result *c);

#endif
