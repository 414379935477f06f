/* summary: a run's outcome as one typed record, and the schema every output of it is
 * generated from (DESIGN §8).
 *
 * kv_summary mirrors summary.json member for member: `s.blocks.peak_physical` is the
 * value at "blocks.peak_physical".  KV_SUMMARY_SCHEMA lists every field once, in file
 * order, with its type; from that one list come summary.json's writer and reader, the
 * lookup by dotted path that sweep.csv columns, SLO keys and plot variables use, and the
 * human summary's typed access.  Nothing inside kvsim reads summary.json back to get a
 * number it already has: in-process consumers take the kv_summary; only commands that
 * are given a directory (merge, plot) parse the file, through this schema, and a missing
 * or ill-typed field is an error naming it.
 */
#ifndef KVSIM_SUMMARY_H
#define KVSIM_SUMMARY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim/error.h"
#include "kvsim/metrics.h"
#include "kvsim/sim.h"

typedef struct kv_summary_config {
    char *trace;
    char *format;
    uint64_t trace_block_size;
    uint64_t limit; /* 0 = all (null) */
    double time_scale;
    double rate; /* ≤ 0 = none (null) */
    uint64_t shared_prefix;
    uint64_t seed;
    char *model;
    char *gpu;
    double gpu_util;        /* the fraction of GPU memory the pool was sized from */
    uint64_t reserve_bytes; /* memory held back besides weights (--reserve) */
    uint64_t tp, pp;
    double weight_bytes; /* bytes per parameter in effect (--weight-dtype or the model's) */
    uint64_t layers, kv_heads, head_dim; /* the KV geometry in effect (overrides applied) */
    char *kv_dtype;
    double bytes_per_token_rank;
    uint64_t block_size;
    uint64_t block_bytes;
    uint64_t kv_budget_bytes;
    uint64_t num_blocks;
    char *num_blocks_from;
    double watermark;
    char *watermark_rule;
    uint64_t max_seqs;
    uint64_t max_batched_tokens;
    bool chunked_prefill;
    bool prefix_caching;
    bool admit_full_prompt;
    char *free_order;
    char *preempt; /* the victim rule in effect (--policy priority implies priority) */
    char *policy;
    bool async_scheduling;
    char *time_model;
    char *frontend; /* kv_frontend_describe; NULL for none (the key is then left out) */
    double gpu_cost_per_hour; /* --gpu-cost-per-hour; ≤ 0 = not given (null) */
    char **notes; /* n_notes strings */
    size_t n_notes;
} kv_summary_config;

/* One replica of a cluster (summary.json's cluster.per_replica[i]). */
typedef struct kv_replica_summary {
    uint64_t replica;
    uint64_t requests; /* routed to it, rejected ones included */
    uint64_t finished, rejected, preemptions, evictions;
    struct {
        uint64_t queries, hits;
        double hit_rate;
    } prefix;
    struct {
        uint64_t peak_physical;
        double mean_physical, mean_logical; /* over its own step durations */
    } blocks;
    uint64_t steps;
} kv_replica_summary;

/* The cluster block (DESIGN §10 "Outputs with R > 1"): written only with R ≥ 2. */
typedef struct kv_summary_cluster {
    uint64_t replicas; /* R; 1 when the summary has no cluster block */
    char *router;      /* the policy's name ("weighted"); its weights are separate */
    char *router_view;
    double router_refresh_s;
    struct {
        double prefix, queue, kv;
    } router_weights;             /* weighted's weights (the defaults for other policies) */
    double router_overlap_weight; /* kv-cost's WO */
    uint64_t gpus;                /* replicas × TP × PP */
    uint64_t session_rows;        /* trace rows with a session */
    struct {
        double requests_max_over_mean, requests_gini, blocks_max_over_mean, blocks_gini;
    } imbalance; /* C7: requests routed, and each replica's mean used blocks */
    struct {
        uint64_t predicted_hit_tokens, granted_hit_tokens, overpredicted, underpredicted;
    } router_accuracy;               /* C6 */
    kv_replica_summary *per_replica; /* n_per_replica = replicas records, owned */
    size_t n_per_replica;
} kv_summary_cluster;

typedef struct kv_summary {
    char *kvsim_version; /* the kvsim that wrote it (kv_version()); NULL: an older file */
    char *command;       /* the command line that ran it, shell-quoted, the program written
                            "kvsim"; NULL (null): not recorded (a library caller, an older
                            file) */
    kv_summary_config config;
    struct {
        uint64_t total, finished, rejected, unfinished;
    } requests;
    struct {
        uint64_t exceeds_capacity, exceeds_watermark, exceeds_batch;
    } rejections;
    uint64_t preemptions;
    uint64_t evictions;
    struct {
        uint64_t queries, hits;
        double hit_rate;
        uint64_t preempted_queries, preempted_hits;
    } prefix;
    struct {
        uint64_t num_blocks, usable, peak_physical, peak_logical;
        double mean_physical, mean_logical, sharing_ratio;
    } blocks;
    struct {
        double watermark;
        uint64_t blocks, deferrals, deferral_steps, deferred_requests;
    } watermark;
    struct {
        kv_dist ttft, tpot, e2e, queue;
    } latency_s;
    struct {
        double output_tok_per_s, requests_per_s;
        double output_tok_per_s_per_gpu;       /* output_tok_per_s / GPUs (R · TP · PP) */
        double cost_per_million_output_tokens; /* gpu_cost_per_hour · GPUs / 3600 /
                                                  output_tok_per_s · 1e6; ≤ 0 = no cost
                                                  given or no output (null) */
    } throughput;
    uint64_t steps;
    double sim_time_s;
    bool livelock_guard_fired;
    bool has_cluster; /* R ≥ 2: the cluster block exists (not a JSON field) */
    kv_summary_cluster cluster;
} kv_summary;

typedef enum kv_field_type {
    KV_FIELD_U64,  /* JSON integer */
    KV_FIELD_U64Z, /* JSON integer, or null for 0 */
    KV_FIELD_F64,  /* JSON real */
    KV_FIELD_F64P, /* JSON real, or null for a value ≤ 0 */
    KV_FIELD_BOOL,
    KV_FIELD_STR,  /* char *, owned */
    KV_FIELD_STRV, /* char **, owned, with a size_t count right after it */
    KV_FIELD_STRN, /* char *, owned; NULL is JSON null, and an absent key reads as NULL */
    KV_FIELD_STRO, /* char *, owned; the key is omitted when NULL, and an absent key reads
                      as NULL */
    KV_FIELD_RECS, /* an array of records, owned, with a size_t count right after it;
                      each record is written and read through the field's sub-schema */
} kv_field_type;

/* The schema: type, and the member of kv_summary whose designator is the JSON path. */
#define KV_SUMMARY_DIST(X, d)                                                                      \
    X(F64, latency_s.d.p50)                                                                        \
    X(F64, latency_s.d.p90)                                                                        \
    X(F64, latency_s.d.p95)                                                                        \
    X(F64, latency_s.d.p99)                                                                        \
    X(F64, latency_s.d.max)                                                                        \
    X(F64, latency_s.d.mean)

#define KV_SUMMARY_SCHEMA(X)                                                                       \
    X(STRN, kvsim_version)                                                                         \
    X(STRN, command)                                                                               \
    X(STR, config.trace)                                                                           \
    X(STR, config.format)                                                                          \
    X(U64, config.trace_block_size)                                                                \
    X(U64Z, config.limit)                                                                          \
    X(F64, config.time_scale)                                                                      \
    X(F64P, config.rate)                                                                           \
    X(U64, config.shared_prefix)                                                                   \
    X(U64, config.seed)                                                                            \
    X(STR, config.model)                                                                           \
    X(STR, config.gpu)                                                                             \
    X(F64, config.gpu_util)                                                                        \
    X(U64, config.reserve_bytes)                                                                   \
    X(U64, config.tp)                                                                              \
    X(U64, config.pp)                                                                              \
    X(F64, config.weight_bytes)                                                                    \
    X(U64, config.layers)                                                                          \
    X(U64, config.kv_heads)                                                                        \
    X(U64, config.head_dim)                                                                        \
    X(STR, config.kv_dtype)                                                                        \
    X(F64, config.bytes_per_token_rank)                                                            \
    X(U64, config.block_size)                                                                      \
    X(U64, config.block_bytes)                                                                     \
    X(U64, config.kv_budget_bytes)                                                                 \
    X(U64, config.num_blocks)                                                                      \
    X(STR, config.num_blocks_from)                                                                 \
    X(F64, config.watermark)                                                                       \
    X(STR, config.watermark_rule)                                                                  \
    X(U64, config.max_seqs)                                                                        \
    X(U64, config.max_batched_tokens)                                                              \
    X(BOOL, config.chunked_prefill)                                                                \
    X(BOOL, config.prefix_caching)                                                                 \
    X(BOOL, config.admit_full_prompt)                                                              \
    X(STR, config.free_order)                                                                      \
    X(STR, config.preempt)                                                                         \
    X(STR, config.policy)                                                                          \
    X(BOOL, config.async_scheduling)                                                               \
    X(STR, config.time_model)                                                                      \
    X(STRO, config.frontend)                                                                       \
    X(F64P, config.gpu_cost_per_hour)                                                              \
    X(STRV, config.notes)                                                                          \
    X(U64, requests.total)                                                                         \
    X(U64, requests.finished)                                                                      \
    X(U64, requests.rejected)                                                                      \
    X(U64, requests.unfinished)                                                                    \
    X(U64, rejections.exceeds_capacity)                                                            \
    X(U64, rejections.exceeds_watermark)                                                           \
    X(U64, rejections.exceeds_batch)                                                               \
    X(U64, preemptions)                                                                            \
    X(U64, evictions)                                                                              \
    X(U64, prefix.queries)                                                                         \
    X(U64, prefix.hits)                                                                            \
    X(F64, prefix.hit_rate)                                                                        \
    X(U64, prefix.preempted_queries)                                                               \
    X(U64, prefix.preempted_hits)                                                                  \
    X(U64, blocks.num_blocks)                                                                      \
    X(U64, blocks.usable)                                                                          \
    X(U64, blocks.peak_physical)                                                                   \
    X(U64, blocks.peak_logical)                                                                    \
    X(F64, blocks.mean_physical)                                                                   \
    X(F64, blocks.mean_logical)                                                                    \
    X(F64, blocks.sharing_ratio)                                                                   \
    X(F64, watermark.watermark)                                                                    \
    X(U64, watermark.blocks)                                                                       \
    X(U64, watermark.deferrals)                                                                    \
    X(U64, watermark.deferral_steps)                                                               \
    X(U64, watermark.deferred_requests)                                                            \
    KV_SUMMARY_DIST(X, ttft)                                                                       \
    KV_SUMMARY_DIST(X, tpot)                                                                       \
    KV_SUMMARY_DIST(X, e2e)                                                                        \
    KV_SUMMARY_DIST(X, queue)                                                                      \
    X(F64, throughput.output_tok_per_s)                                                            \
    X(F64, throughput.requests_per_s)                                                              \
    X(F64, throughput.output_tok_per_s_per_gpu)                                                    \
    X(F64P, throughput.cost_per_million_output_tokens)                                             \
    X(U64, steps)                                                                                  \
    X(F64, sim_time_s)                                                                             \
    X(BOOL, livelock_guard_fired)

/* The cluster block, after every field above, present only with R ≥ 2: (type, member,
 * always).  A summary without it (one replica) reads every field here as absent — a NAN
 * number, an empty sweep.csv cell — except those marked always: cluster.replicas is 1. */
#define KV_SUMMARY_CLUSTER_SCHEMA(X)                                                               \
    X(U64, cluster.replicas, 1)                                                                    \
    X(STR, cluster.router, 0)                                                                      \
    X(STR, cluster.router_view, 0)                                                                 \
    X(F64, cluster.router_refresh_s, 0)                                                            \
    X(F64, cluster.router_weights.prefix, 0)                                                       \
    X(F64, cluster.router_weights.queue, 0)                                                        \
    X(F64, cluster.router_weights.kv, 0)                                                           \
    X(F64, cluster.router_overlap_weight, 0)                                                       \
    X(U64, cluster.gpus, 0)                                                                        \
    X(U64, cluster.session_rows, 0)                                                                \
    X(F64, cluster.imbalance.requests_max_over_mean, 0)                                            \
    X(F64, cluster.imbalance.requests_gini, 0)                                                     \
    X(F64, cluster.imbalance.blocks_max_over_mean, 0)                                              \
    X(F64, cluster.imbalance.blocks_gini, 0)                                                       \
    X(U64, cluster.router_accuracy.predicted_hit_tokens, 0)                                        \
    X(U64, cluster.router_accuracy.granted_hit_tokens, 0)                                          \
    X(U64, cluster.router_accuracy.overpredicted, 0)                                               \
    X(U64, cluster.router_accuracy.underpredicted, 0)                                              \
    X(RECS, cluster.per_replica, 0)

/* One cluster.per_replica record: (type, member of kv_replica_summary). */
#define KV_SUMMARY_REPLICA_SCHEMA(X)                                                               \
    X(U64, replica)                                                                                \
    X(U64, requests)                                                                               \
    X(U64, finished)                                                                               \
    X(U64, rejected)                                                                               \
    X(U64, preemptions)                                                                            \
    X(U64, evictions)                                                                              \
    X(U64, prefix.queries)                                                                         \
    X(U64, prefix.hits)                                                                            \
    X(F64, prefix.hit_rate)                                                                        \
    X(U64, blocks.peak_physical)                                                                   \
    X(F64, blocks.mean_physical)                                                                   \
    X(F64, blocks.mean_logical)                                                                    \
    X(U64, steps)

typedef struct kv_schema kv_schema;

typedef struct kv_field {
    const char *path; /* "blocks.peak_physical" (relative to its record for a sub-schema) */
    kv_field_type type;
    size_t offset;            /* into kv_summary (into the record for a sub-schema) */
    bool in_cluster;          /* in the cluster block: absent without one (see above) */
    bool always;              /* in_cluster, yet meaningful for one replica too */
    const kv_schema *records; /* KV_FIELD_RECS: the schema of each record */
} kv_field;

/* A record type's fields, in file order, and the record's size. */
struct kv_schema {
    const kv_field *fields;
    size_t n;
    size_t size;
};

/* The schema as data, in file order: every top-level field, then the cluster block's;
 * n fields. */
const kv_field *kv_summary_fields(size_t *n);
/* The schema of one cluster.per_replica record. */
const kv_schema *kv_summary_replica_schema(void);
/* The field at a dotted path, or NULL. */
const kv_field *kv_summary_field(const char *path);
/* Whether s has a value for f: every field but the cluster block's, which need the block
 * (R ≥ 2), except the always ones. */
bool kv_summary_has(const kv_summary *s, const kv_field *f);
/* A numeric field's value as a double (integers and booleans converted); NAN for a string
 * or records field, a null optional, or a field s does not have. */
double kv_summary_number(const kv_summary *s, const kv_field *f);
/* A numeric field of a record (its sub-schema's), as kv_summary_number. */
double kv_summary_record_number(const void *record, const kv_field *f);

/* Fill everything but the config from a run (s->config untouched; its tp, pp and
 * gpu_cost_per_hour, set by kv_summary_set_config first, give the per-GPU figures and a
 * cluster's GPU count).  A cluster run (r->cluster) fills the cluster block and takes the
 * block totals of DESIGN §10 C8: num_blocks R·N, usable R·(N−1), the peaks of the
 * cluster-wide sums, and as the means the sums of the replicas' time-weighted means (each
 * over its own step durations), whose ratio is the sharing ratio. */
void kv_summary_from_run(kv_summary *s, const kv_run_result *r);
/* The config echo of a replay configured by o on setup, over trace t, with engine config
 * c (for the time model's canonical text). */
void kv_summary_set_config(kv_summary *s, const kv_sim_options *o, const kv_setup *setup,
                           const kv_trace *t, const kv_engine_config *c);
/* Free the owned strings; s is zeroed. */
void kv_summary_release(kv_summary *s);

/* summary.json's object (new reference). */
json_t *kv_summary_to_json(const kv_summary *s);
/* Its "config" object alone (new reference). */
json_t *kv_summary_config_json(const kv_summary *s);
/* Parse a summary.json object: 0, or -KV_EPARSE with diag "'<what>' is not a kvsim run
 * summary: no '<path>'" for the first missing or ill-typed field.  Fields added after
 * kvsim 0.1.0 (the stamp, the per-GPU and cost figures, the extra config echo) may be
 * absent: an older file reads with them 0 / NULL.  On error *s is empty. */
int kv_summary_from_json(const json_t *j, const char *what, kv_summary *s, kv_diag *diag);

#endif
