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
    uint64_t tp, pp;
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
    char **notes; /* n_notes strings */
    size_t n_notes;
} kv_summary_config;

typedef struct kv_summary {
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
    } throughput;
    uint64_t steps;
    double sim_time_s;
    bool livelock_guard_fired;
} kv_summary;

typedef enum kv_field_type {
    KV_FIELD_U64,  /* JSON integer */
    KV_FIELD_U64Z, /* JSON integer, or null for 0 */
    KV_FIELD_F64,  /* JSON real */
    KV_FIELD_F64P, /* JSON real, or null for a value ≤ 0 */
    KV_FIELD_BOOL,
    KV_FIELD_STR,  /* char *, owned */
    KV_FIELD_STRV, /* char **, owned, with a size_t count right after it */
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
    X(U64, config.tp)                                                                              \
    X(U64, config.pp)                                                                              \
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
    X(U64, steps)                                                                                  \
    X(F64, sim_time_s)                                                                             \
    X(BOOL, livelock_guard_fired)

typedef struct kv_field {
    const char *path; /* "blocks.peak_physical" */
    kv_field_type type;
    size_t offset; /* into kv_summary */
} kv_field;

/* The schema as data, in file order; n fields. */
const kv_field *kv_summary_fields(size_t *n);
/* The field at a dotted path, or NULL. */
const kv_field *kv_summary_field(const char *path);
/* A numeric field's value as a double (integers and booleans converted); NAN for a string
 * field or a null optional. */
double kv_summary_number(const kv_summary *s, const kv_field *f);

/* Fill everything but the config from a run (s->config untouched). */
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
 * summary: no '<path>'" for the first missing or ill-typed field.  On error *s is empty. */
int kv_summary_from_json(const json_t *j, const char *what, kv_summary *s, kv_diag *diag);

#endif
