/* gen: synthesize a kvsim JSONL request trace from the figures a capacity planner has.
 *
 * Lengths come from percentile specs (lengthdist.h), arrivals from a Poisson or gamma
 * renewal process at a given rate, prefix structure from shared system prompts and
 * multi-turn conversations, emitted as Mooncake-style hash_ids with trace block size tb
 * (DESIGN §3, §7).  The same config and seed give byte-identical output.
 *
 * The module's only I/O is writing lines to the FILE * it is given; opening, atomic
 * renames and messages belong to the CLI.
 */
#ifndef KVSIM_GEN_H
#define KVSIM_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kvsim/error.h"
#include "kvsim/lengthdist.h"

/* Limits, checked by kv_gen_validate (the CLI states them in --help). */
#define KV_GEN_MAX_REQUESTS       4294967295ull /* the trace reader's 32-bit row index */
#define KV_GEN_MAX_RATE           1e6           /* requests/s: gaps stay well above 1 ns */
#define KV_GEN_MAX_DURATION       1e9           /* seconds of arrivals (~31 years) */
#define KV_GEN_MAX_BURSTINESS     10.0          /* CV of gaps: gamma shape ≥ 0.01 */
#define KV_GEN_MAX_SYSTEM_PROMPTS 1000000u
#define KV_GEN_MAX_TURNS          1000.0 /* mean turns per conversation */
#define KV_GEN_MAX_THINK_TIME     1e6    /* seconds */
#define KV_GEN_MAX_ADAPTERS       1000000u
#define KV_GEN_MAX_PRIORITIES     1000000u
#define KV_GEN_MAX_CONCURRENCY    1000000u /* closed-loop clients */
#define KV_GEN_DEFAULT_TB         512u /* kvsim run's default --trace-block-size */

typedef struct kv_gen_config {
    kv_lendist prompt;          /* required; with sessions: the first turn's prompt */
    kv_lendist output;          /* required */
    kv_lendist message;         /* sessions: a later turn's new message; n_knots 0 = prompt's */
    double rate;                /* requests per second, > 0 (sessions: long-run request rate);
                                   with concurrency, 0 = every row may be sent at 0 */
    double burstiness;          /* coefficient of variation of the gaps, ≥ 0; 1 = Poisson */
    uint64_t requests;          /* exactly one of requests > 0 … */
    double duration_s;          /* … or duration_s > 0 (arrivals in [0, duration)) */
    uint32_t system_prompts;    /* K shared system prompts; 0 = none */
    uint32_t system_prompt_len; /* L tokens each; required (> 0) when K > 0 */
    double zipf;                /* prompt k is picked with probability ∝ 1/k^zipf; 0 = uniform */
    bool sessions;              /* multi-turn conversations */
    double turns;               /* sessions: mean turns per conversation (geometric), ≥ 1 */
    double think_time_s;        /* sessions: mean gap between turns' arrivals; concurrency:
                                   mean time from a reply to the client's next request;
                                   exponential, ≥ 0; NAN = the mode's default (30 s, 0 s) */
    uint32_t concurrency;       /* N closed-loop clients (issue 11): row i is client i mod N's,
                                   sent when that client's previous row has been answered;
                                   0 = open loop */
    uint32_t adapters;          /* K LoRA adapters "lora-1".."lora-K", uniform; 0 = none */
    uint32_t priorities;        /* priorities 0..P-1, uniform; 0 = no priority field */
    uint32_t trace_block_size;  /* tb for hash_ids, ≥ 1 */
    uint64_t seed;
    bool iid_lengths; /* false (default): stratified length sampling, see lengthdist.h */
} kv_gen_config;

typedef struct kv_gen_stats {
    uint64_t requests;       /* rows written */
    uint64_t conversations;  /* distinct conversations among them (= requests without) */
    uint64_t capped;         /* conversations ended early by the prompt's context cap */
    uint64_t max_turns;      /* largest turn number written */
    int64_t last_arrival_ns; /* arrival of the last row */
    bool hash_ids;           /* whether rows carry hash_ids */
} kv_gen_stats;

/* Defaults: burstiness 1, zipf 0, turns 4, think time unset, tb 512, seed 0; everything
 * else zero/unset (prompt, output, rate and requests-or-duration must be set). */
void kv_gen_config_init(kv_gen_config *c);

/* 0, or -KV_EINVAL with a diag naming the setting (by its kvsim gen option name). */
int kv_gen_validate(const kv_gen_config *c, kv_diag *diag);

/* Generate and write the trace to out, one JSON object per line.  0; -KV_EINVAL (config,
 * as kv_gen_validate); -KV_ERANGE (the trace would exceed KV_GEN_MAX_REQUESTS rows or the
 * arrival clock); -KV_EIO (a write to out failed).  stats may be NULL.  Output may be
 * partial on error: the caller discards it. */
int kv_gen_write(const kv_gen_config *c, FILE *out, kv_gen_stats *stats, kv_diag *diag);

#endif
