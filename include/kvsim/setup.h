/* setup: what a replay runs on — model, GPU, sharding and pool capacity (DESIGN §2) —
 * resolved from plain options, the way every command resolves it.
 *
 * Options are validated one by one by whoever reads them (the CLI parses each value);
 * kv_setup_resolve then loads the preset or config.json, applies the geometry overrides,
 * shards, and sizes the pool from the GPU, a KV budget or a block count.  It prints
 * nothing.  Errors: -KV_EINVAL for contradictory or unknown options (a front end's usage
 * error), anything else for inputs that were well-formed but do not work (an unreadable
 * config.json, a pool that does not fit).
 */
#ifndef KVSIM_SETUP_H
#define KVSIM_SETUP_H

#include <stdint.h>

#include "kvsim/error.h"
#include "kvsim/model.h"

/* Default --reserve: activations of a max_batched_tokens forward pass, cuBLAS/NCCL
 * workspace and CUDA graphs.  vLLM measures this at startup; 2 GiB is a typical figure for
 * 7–8 B models at 8192 batched tokens. */
#define KV_SETUP_DEFAULT_RESERVE (2ull << 30)

typedef struct kv_setup_options {
    const char *model;                       /* preset or config.json path; default "llama-3-8b" */
    const char *gpu;                         /* preset; default "H100-SXM" */
    double gpu_util;                         /* (0, 1]; default 0.9 */
    uint64_t reserve;                        /* bytes; default KV_SETUP_DEFAULT_RESERVE */
    uint32_t tp, pp;                         /* ≥ 1; default 1, 1 */
    const char *kv_dtype;                    /* NULL = the model's */
    uint32_t block_size;                     /* default 16 */
    uint32_t num_blocks;                     /* 0 = derive (not with kv_budget) */
    uint64_t kv_budget;                      /* 0 = derive (not with num_blocks) */
    uint32_t layers, kv_heads, head_dim;     /* 0 = no override */
    uint32_t kv_scale_group, kv_scale_bytes; /* both or neither */
    const char *weight_dtype;                /* NULL = the model's (config.json's
                                                quantization_config, 2 bytes otherwise) */
} kv_setup_options;

typedef struct kv_setup {
    kv_model model;
    kv_gpu gpu;
    kv_shard shard;
    kv_capacity cap;
    uint32_t block_size;
    const char *budget_source; /* "gpu", "kv-budget" or "num-blocks" */
    const char *model_path;    /* the config.json read (the model option), or NULL for a
                                  preset */
    double gpu_util;           /* the options' gpu_util and reserve, echoed in summaries */
    uint64_t reserve;
} kv_setup;

void kv_setup_options_init(kv_setup_options *o);

/* Whether a model option names a config.json file (it contains '/' or ends in .json)
 * rather than a preset. */
bool kv_setup_model_is_path(const char *model);

/* 0 or a negative KV_E* with a diag (see the top comment for which). */
int kv_setup_resolve(const kv_setup_options *o, kv_setup *out, kv_diag *diag);

#endif
