/* router: which replica of a cluster a request goes to (DESIGN §10, rules C2–C5, C8).
 *
 * The router is a pure decision-maker: it owns its policy state (the round-robin
 * counter, the tie-break stream, the session table, and with the approximate view one LRU
 * of routed block hashes per replica) and nothing else.  At each routing the caller
 * hands it what a real router would see at that instant:
 *   - each replica's load signals (kv_replica_signals: live, or the last --router-refresh
 *     sample; C2), and
 *   - for the exact view, each replica's pool, whose hash index it probes read-only (C5:
 *     "as vLLM's KV events would report it with no delay");
 * plus the request's prompt chain (kv_route_input: the full-block digests, computed once
 * per request by the caller and shared by every replica, C4).  It answers with the
 * replica and the overlap it predicted there (C6's predicted hit, in blocks).
 *
 * Exactness (C8).  One SplitMix64 draw per routed request, whatever the policy; among
 * tied replicas, listed by increasing index, the choice is candidates[draw mod count].
 * Scores are compared as integers: weights and the overlap weight are decimals held in
 * millionths (KV_ROUTER_UNIT), the weighted score's three scorers are put over one
 * common denominator (P · (max_q − min_q) · usable, the same for every replica because
 * replicas are identical) and compared by their 128-bit numerators, kv-cost compares
 * WO·(P − overlap) + used·UNIT, least-kv compares used blocks.  Equal scores tie exactly.
 *
 * Out of scope: time (the cluster owns the clock and the refresh sampling), the engines'
 * state (read through const pools and the signals only).
 */
#ifndef KVSIM_ROUTER_H
#define KVSIM_ROUTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim/blockhash.h"
#include "kvsim/error.h"
#include "kvsim/pool.h"

typedef enum kv_router_policy {
    KV_ROUTER_ROUND_ROBIN = 0, /* the k-th routed request goes to k mod R (default) */
    KV_ROUTER_RANDOM,          /* uniform: every replica is a candidate */
    KV_ROUTER_LEAST_REQUESTS,  /* smallest running + waiting */
    KV_ROUTER_LEAST_KV,        /* smallest usage (R8) */
    KV_ROUTER_PREFIX,          /* largest overlap (C4), then smallest running + waiting */
    KV_ROUTER_WEIGHTED,        /* llm-d's weighted scorers: prefix, queue, kv */
    KV_ROUTER_KV_COST,         /* Dynamo's cost WO·(P − overlap) + used, smallest wins */
    KV_ROUTER_SESSION,         /* a session's first replica; else least-requests */
} kv_router_policy;

typedef enum kv_router_view {
    KV_ROUTER_EXACT = 0, /* the replica's pool index as it stands (default) */
    KV_ROUTER_APPROX,    /* a per-replica LRU of the routed prompts' block hashes */
} kv_router_view;

/* Decimal weights are held exactly in millionths: 1.5 is 1500000. */
#define KV_ROUTER_UNIT       1000000u
#define KV_ROUTER_WEIGHT_MAX 1000u /* whole units: keeps the weighted numerator in 128 bits */
#define KV_ROUTER_NO_SESSION UINT32_MAX

/* The policy names for messages and help. */
#define KV_ROUTER_POLICY_NAMES                                                                     \
    "round-robin, random, least-requests, least-kv, prefix, "                                      \
    "weighted[:prefix=WP,queue=WQ,kv=WK], kv-cost, session"

typedef struct kv_router_config {
    kv_router_policy policy;
    uint64_t w_prefix, w_queue, w_kv; /* weighted: millionths, ≤ WEIGHT_MAX units, not all 0 */
    uint64_t overlap_weight;          /* kv-cost's WO, millionths (default 1 unit) */
    kv_router_view view;
    double refresh_s; /* C2: load signals sampled every refresh_s seconds; 0 = live */
    uint64_t seed;    /* the tie-break SplitMix64 state (--seed) */
} kv_router_config;

/* round-robin, weights prefix=2,queue=1,kv=1, WO 1, exact view, live signals, seed 0. */
void kv_router_config_init(kv_router_config *c);

/* "prefix", "weighted", "weighted:prefix=3,kv=1" … into c's policy (and weights; the other
 * fields are kept).  0, or -KV_EINVAL with a diag naming {router}: an unknown policy, a
 * malformed, repeated, unknown or out-of-range weight, or weights that are all 0.  On
 * error c is unchanged. */
int kv_router_parse(const char *spec, kv_router_config *c, kv_diag *diag);
/* "exact" / "approx": 0 or -KV_EINVAL naming {router_view}. */
int kv_router_view_parse(const char *s, kv_router_view *out, kv_diag *diag);
/* A weight "1", "0.25", "2.": a decimal in [0, KV_ROUTER_WEIGHT_MAX] with at most 6
 * decimals, into millionths.  0 or -KV_EINVAL with diag "<what>: …". */
int kv_router_weight_parse(const char *text, const char *what, uint64_t *micro, kv_diag *diag);
/* Whether c can be run: refresh_s is 0 or at least 1 ns and at most 1e9 s, finite, and
 * the weights are in range.  0 or -KV_EINVAL with a diag. */
int kv_router_config_check(const kv_router_config *c, kv_diag *diag);

const char *kv_router_policy_name(kv_router_policy p); /* "kv-cost" */
const char *kv_router_view_name(kv_router_view v);     /* "exact" */
/* The canonical spec kv_router_parse reads back to the same policy and weights:
 * "weighted:prefix=2,queue=1,kv=1", "prefix".  Truncated to n. */
void kv_router_spec(const kv_router_config *c, char *buf, size_t n);
/* A millionths value as the shortest decimal: 2000000 → "2", 250000 → "0.25". */
void kv_router_micro_text(uint64_t micro, char *buf, size_t n);

/* ---- routing ------------------------------------------------------------------------ */

typedef struct kv_router kv_router; /* opaque */

/* What the router knows of one replica at a routing instant. */
typedef struct kv_replica_signals {
    uint32_t running, waiting;
    uint32_t used_blocks; /* refcount > 0 (kv-cost's `used`) */
    uint32_t free_blocks; /* the free queue, cached blocks included: usage = 1 − free/usable */
} kv_replica_signals;

/* One request as routed. */
typedef struct kv_route_input {
    const kv_digest *chain; /* its prompt's full-block digests [0, n_full − n_private), or
                               NULL: then every overlap is 0 (prefix caching off, exact
                               view) */
    uint32_t n_full;        /* P = ⌊prompt_len / b⌋ */
    uint32_t max_hit;       /* §5's cap on a hit: ⌊(prompt_len − 1) / b⌋ blocks (≤ P) */
    uint32_t session;       /* KV_ROUTER_NO_SESSION, or a dense id < n_sessions */
    uint32_t n_private;     /* the last n_private of the P blocks are private (DESIGN §9:
                               content no other request has), so never hashed: no view can
                               hold them, but the approx LRU still spends a slot on each,
                               as llm-d's indexer does, under a key made from `id` */
    uint64_t id;            /* unique per request (the trace index): private blocks' keys */
} kv_route_input;

typedef struct kv_route {
    uint32_t replica;
    uint32_t overlap; /* the overlap (C4) the router's view shows on that replica, in
                         blocks: C6's predicted hit is overlap · b */
} kv_route;

/* A router for `replicas` identical replicas of `usable` blocks each (the approx LRU's
 * capacity) and n_sessions dense session ids.  0 or -KV_EINVAL (a config
 * kv_router_config_check refuses, or no replica).  Memory: O(R) plus, with the approx
 * view, O(blocks inserted) ≤ O(R · usable); the session table O(n_sessions). */
int kv_router_create(kv_router **out, const kv_router_config *cfg, uint32_t replicas,
                     uint32_t usable, uint32_t n_sessions, kv_diag *diag);
void kv_router_destroy(kv_router *rt); /* NULL ok */

/* Route one request (C2–C4, C8): signals[0..R), pools[0..R) (read only with the exact
 * view; may be NULL with the approx view).  Draws once from the tie-break stream,
 * advances round-robin, records a new session's replica, and with the approx view inserts
 * or refreshes the prompt's n_full blocks (the private ones by their keys), in prompt
 * order, in the chosen replica's LRU (evicting the least recently routed beyond its
 * capacity).  Can't fail. */
void kv_router_route(kv_router *rt, const kv_route_input *in, const kv_replica_signals *signals,
                     const kv_pool *const *pools, kv_route *out);

/* The overlap (C4) of `in` with replica r in the router's view (pool: that replica's, for
 * the exact view).  No side effects. */
uint32_t kv_router_overlap(const kv_router *rt, uint32_t r, const kv_route_input *in,
                           const kv_pool *pool);
/* Block hashes in replica r's approx LRU (0 with the exact view). */
uint32_t kv_router_lru_size(const kv_router *rt, uint32_t r);
/* Requests routed so far (= tie-break draws made). */
uint64_t kv_router_routed(const kv_router *rt);

/* Invariant walk of the approx LRUs (list and table agree, size ≤ capacity, no digest
 * twice), O(R · usable).  0 or -KV_EINVARIANT with a diag. */
int kv_router_check(const kv_router *rt, kv_diag *diag);

#endif
