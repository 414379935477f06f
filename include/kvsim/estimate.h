/* estimate: the capacity model (DESIGN §2) without a trace — given a resolved setup and a
 * set of sequence lengths, the three ledgers, blocks per request and the concurrencies.
 *
 * Concurrency, three ways (they differ by how the last block of a request is counted):
 *   max_concurrency          = ⌊max_tokens · safety / target_len⌋          token theory
 *   paged_max_concurrency    = ⌊usable_blocks · safety / ⌈target_len/b⌉⌋   whole blocks
 *   usable_token_concurrency = ⌊⌊usable_blocks · b / target_len⌋ · safety⌋ DESIGN §2's
 *                              formula: usable tokens, ignoring that requests round up
 * Ledgers are given for the whole model (c) and for one rank of the largest pipeline
 * stage (c_rank), which is what a GPU holds.  Pure arithmetic: prints nothing.
 */
#ifndef KVSIM_ESTIMATE_H
#define KVSIM_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "kvsim/error.h"
#include "kvsim/model.h"
#include "kvsim/setup.h"

#define KV_ESTIMATE_TARGET_LEN    4096    /* the default target_len */
#define KV_ESTIMATE_MAX_SEQUENCES 1000000 /* lengths at most */

typedef struct kv_estimate_options {
    const uint64_t *lengths; /* tokens per sequence, each ≥ 1; NULL/0: one of target_len */
    size_t n_lengths;        /* ≤ KV_ESTIMATE_MAX_SEQUENCES */
    uint64_t shared_prefix;  /* tokens common to every sequence; may exceed some lengths */
    uint64_t target_len;     /* tokens per request for concurrency, ≥ 1 */
    double safety;           /* headroom factor in (0, 1] */
} kv_estimate_options;

typedef struct kv_estimate {
    kv_estimate_options opt;            /* as given; lengths NULL (not kept), n_lengths ≥ 1 */
    kv_ledgers whole;                   /* at c, the whole model */
    kv_ledgers rank;                    /* at c_rank, one GPU of the largest stage */
    uint64_t blocks_per_request;        /* ⌈target_len / b⌉ */
    uint64_t max_concurrency;           /* see the top comment */
    uint64_t paged_max_concurrency;     /* see the top comment */
    uint64_t usable_token_concurrency;  /* see the top comment */
    uint64_t sum_len, min_len, max_len; /* over the lengths */
} kv_estimate;

/* Defaults: no lengths, no shared prefix, target_len 4096, safety 1. */
void kv_estimate_options_init(kv_estimate_options *o);

/* 0, or -KV_EINVAL with a diag for options out of range ("{target_len} …"). */
int kv_estimate_compute(const kv_setup *s, const kv_estimate_options *o, kv_estimate *e,
                        kv_diag *diag);

#endif
