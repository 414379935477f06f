/* model: the capacity model of DESIGN §2 (seed formulas, exactly).
 *
 * Bytes per token c = 2 · L · H_kv · d · s (+ quantisation scale metadata), the three
 * ledgers (effective, padded, paged) plus unique-physical blocks for shared prefixes,
 * per-rank figures under TP/PP, and KV budget → num_blocks → max tokens → max concurrency.
 * Presets for the models and GPUs DESIGN §2 lists; any Hugging Face config.json.
 * Pure functions over plain structs: no I/O except kv_model_from_hf_config().
 */
#ifndef KVSIM_MODEL_H
#define KVSIM_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kvsim/error.h"

typedef enum kv_dtype {
    KV_DTYPE_FP16,
    KV_DTYPE_BF16,
    KV_DTYPE_FP8,
    KV_DTYPE_INT8,
    KV_DTYPE_INT4,
} kv_dtype;

/* "fp16" … "int4" (case-insensitive; also "float16", "bfloat16", "fp8_e4m3", "fp8_e5m2")
 * → 0 or -KV_EINVAL. */
int kv_dtype_parse(const char *s, kv_dtype *out);
const char *kv_dtype_name(kv_dtype d);
double kv_dtype_bytes(kv_dtype d); /* 2, 2, 1, 1, 0.5 */

typedef struct kv_model {
    char name[64];           /* preset name; for a config.json its directory name when the
                                file is called config.json, else the file name */
    uint32_t num_layers;     /* L */
    uint32_t num_heads;      /* attention (query) heads */
    uint32_t num_kv_heads;   /* H_kv; num_heads when the config has no num_key_value_heads */
    uint32_t head_dim;       /* d; hidden_size / num_heads when the config has none */
    uint32_t hidden_size;    /* d_model */
    uint32_t vocab_size;     /* for the roofline's LM-head flops; 0 if unknown */
    uint64_t num_params;     /* total parameters (weights bytes = num_params · weight bytes);
                                0 = unknown (a config.json without intermediate/vocab size) */
    uint64_t active_params;  /* parameters touched per token (≠ num_params for MoE) */
    kv_dtype kv_dtype;       /* KV cache element type (default: the model's, bf16) */
    double weight_bytes;     /* bytes per weight element, 2 for bf16; 1 for fp8/int8 checkpoints
                                (their GEMMs run at the GPU's FP8 peak where it has one);
                                0 = unknown: a config.json quantisation kvsim does not read
                                (weight_quant says which), refused unless the weight dtype
                                is given (kv_setup_options.weight_dtype) */
    char weight_quant[128];   /* when weight_bytes is 0: the quantization_config that could
                                not be read, e.g. "quant_method 'gguf'"; else "" */
    bool tied_embeddings;    /* the LM head is the input embedding matrix (tie_word_embeddings);
                                false for every preset */
    uint32_t kv_scale_group; /* G: elements per quantisation scale; 0 = no scales */
    uint32_t kv_scale_bytes; /* S: bytes per scale */
} kv_model;

/* GPU-to-GPU links (DESIGN §6 "Step time": tensor- and pipeline-parallel communication).
 * Each kind carries a measured all-reduce bus bandwidth and a per-collective latency, cited
 * in src/presets.c; KV_LINK_NONE means no fast link (TP/PP traffic is charged nothing). */
typedef enum kv_link {
    KV_LINK_NONE = 0,
    KV_LINK_NVLINK3, /* A100 SXM: NVLink 3 through NVSwitch */
    KV_LINK_NVLINK4, /* H100 / H200 SXM: NVLink 4 through NVSwitch */
    KV_LINK_PCIE4,   /* PCIe Gen4 x16, no NVLink (L40S) */
    KV_LINK_PCIE5,   /* PCIe Gen5 x16, no NVLink */
    KV_LINK_XGMI3,   /* MI300X: Infinity Fabric, one link per peer (bandwidth grows with TP) */
} kv_link;

/* "nvlink4" … (case-insensitive) → 0 or -KV_EINVAL. */
int kv_link_parse(const char *s, kv_link *out);
const char *kv_link_name(kv_link l);
const char *kv_link_names(void); /* "none, nvlink3, …", for messages */
/* Achieved all-reduce bus bandwidth (bytes/s, the busbw of nccl-tests, so a ring all-reduce
 * of S bytes over n ranks moves 2·(n−1)/n · S / bw) and latency (s per all-reduce) of a
 * link for a group of tp ranks.  NONE gives 0, 0. */
void kv_link_allreduce(kv_link l, uint32_t tp, double *bw, double *lat);

typedef struct kv_gpu {
    char name[32];
    uint64_t mem_bytes; /* device memory, bytes */
    double hbm_bw;      /* bytes/s, datasheet */
    double peak_flops;  /* dense bf16 FLOP/s, datasheet */
    double fp8_flops;   /* dense FP8 tensor FLOP/s, datasheet; 0 = none (A100: FP8 weights
                           are dequantised and run at the bf16 peak) */
    kv_link link;       /* the link of the preset's usual 8-GPU system */
    /* Achieved fractions, each from a cited microbenchmark (src/presets.c): */
    double mfu;      /* large bf16 GEMM: achieved / peak_flops, (0, 1] */
    double mfu_fp8;  /* large FP8 GEMM: achieved / fp8_flops, (0, 1] (= mfu without FP8) */
    double mbu;      /* streaming weights: achieved / hbm_bw, (0, 1] */
    double attn_bw;  /* decode attention reading a long KV history: achieved / hbm_bw */
    double attn_lat; /* decode attention fixed cost per layer and step, s (kernel latency,
                        split-KV reduction): why short or small-batch KV reads fall short of
                        attn_bw */
    double layer_lat; /* fixed cost per layer and step of a layer's other kernels (the
                         weight GEMMs' launch and tail, norms, rotary, activation), s: why
                         a rank streaming a small share of the weights falls short of mbu */
    double smooth;    /* p of the smooth maximum of compute and memory time (0 = max) */
    double act_bytes; /* activation traffic per token, hidden unit and layer, bytes */
} kv_gpu;

/* Presets.  0, or -KV_ENOENT with diag "unknown model preset 'x' (known: …)". */
int kv_model_preset(const char *name, kv_model *out, kv_diag *diag);
int kv_gpu_preset(const char *name, kv_gpu *out, kv_diag *diag);
/* Comma-separated preset names, for --help. */
const char *kv_model_preset_names(void);
const char *kv_gpu_preset_names(void);

/* Read a Hugging Face config.json.  Errors name the file and the field (and line for JSON
 * syntax): -KV_ENOENT cannot open, -KV_EIO cannot read, -KV_EPARSE malformed (duplicate
 * keys included), larger than KV_HF_CONFIG_MAX, missing or ill-typed field, inconsistent
 * geometry (KV heads above or not dividing attention heads, an MoE top-k above the
 * expert count), -KV_ERANGE a parameter count that does not fit 64 bits. */
int kv_model_from_hf_config(const char *path, kv_model *out, kv_diag *diag);
/* The same from an open stream (not closed); `path` names the model and the messages. */
int kv_model_from_hf_stream(FILE *f, const char *path, kv_model *out, kv_diag *diag);
#define KV_HF_CONFIG_MAX ((size_t)16 << 20) /* bytes; real config.json files are < 100 KB */

/* c = 2 · L · H_kv · d · (s + S/G), whole model, bytes per token. */
double kv_model_bytes_per_token(const kv_model *m);

/* Per-rank sharding (DESIGN §2 "Parallelism"). */
typedef struct kv_shard {
    uint32_t tp, pp;
    uint32_t layers_per_rank;    /* ⌈L/PP⌉ (largest stage bounds) */
    uint32_t kv_heads_per_rank;  /* H_kv/TP, or ⌈H_kv/TP⌉ when replicated or indivisible */
    bool kv_replicated;          /* TP > H_kv: each rank holds a replicated head */
    bool kv_indivisible;         /* neither H_kv % TP == 0 nor TP % H_kv == 0: reported,
                                    heads per rank rounded up (vLLM refuses such a TP) */
    uint32_t kv_replication;     /* copies of each KV head across the TP group: ⌈TP/H_kv⌉ when
                                    replicated, else 1 */
    uint64_t bpt_rank_num;       /* c_rank = bpt_rank_num / bpt_rank_den exactly (int4 and */
    uint64_t bpt_rank_den;       /* scale metadata make it fractional); den ≥ 1, reduced */
    double bytes_per_token;      /* c, whole model */
    double bytes_per_token_rank; /* c_rank, what one rank stores per token */
    uint64_t weight_bytes_rank;  /* ⌈weights / (TP·PP)⌉ */
} kv_shard;

/* tp, pp ≥ 1 or -KV_EINVAL; -KV_ERANGE when the geometry overflows 64-bit byte counts. */
int kv_shard_compute(const kv_model *m, uint32_t tp, uint32_t pp, kv_shard *out, kv_diag *diag);

/* Bytes of one block of b tokens on one rank: ⌈b · c_rank⌉ (exact; UINT64_MAX if it
 * overflows, which the capacity functions report as -KV_ERANGE). */
uint64_t kv_block_bytes(const kv_shard *s, uint32_t block_size);

/* Budget and pool size.  kv_budget = util · gpu_mem − weights_per_rank − reserve
 * (or given directly); num_blocks = ⌊kv_budget / block_bytes⌋. */
typedef struct kv_capacity {
    uint64_t kv_budget_bytes;
    uint64_t block_bytes;
    uint32_t num_blocks;    /* N, as vLLM's num_gpu_blocks */
    uint32_t usable_blocks; /* N − 1 (the null block, R2) */
    uint64_t max_tokens;    /* ⌊kv_budget / c_rank⌋, the seed's theory */
} kv_capacity;

/* From a GPU: -KV_ECAPACITY with a diag when the budget is ≤ 0 or gives < 2 blocks;
 * -KV_ERANGE when num_blocks would exceed UINT32_MAX; -KV_EINVAL for util outside (0, 1]. */
int kv_capacity_from_gpu(const kv_shard *s, const kv_gpu *g, double util, uint64_t reserve_bytes,
                         uint32_t block_size, kv_capacity *out, kv_diag *diag);
int kv_capacity_from_budget(const kv_shard *s, uint64_t kv_budget_bytes, uint32_t block_size,
                            kv_capacity *out, kv_diag *diag);
/* From a pasted num_gpu_blocks: budget = N · block_bytes. */
int kv_capacity_from_blocks(const kv_shard *s, uint32_t num_blocks, uint32_t block_size,
                            kv_capacity *out, kv_diag *diag);

/* The three ledgers for lengths T_1..T_n, with block size b; shared_prefix tokens at the
 * start of every sequence are physically shared (full blocks only, as the pool shares). */
typedef struct kv_ledgers {
    uint64_t effective_tokens;  /* ΣT */
    uint64_t padded_tokens;     /* n · max T */
    uint64_t allocated_tokens;  /* b · Σ⌈T/b⌉, token slots in allocated blocks */
    double effective_bytes;     /* c · ΣT */
    double padded_bytes;        /* c · n · max T */
    double paged_bytes;         /* c · b · Σ⌈T/b⌉ */
    uint64_t tail_waste_tokens; /* b·Σ⌈T/b⌉ − ΣT, always < n·b */
    double tail_waste_bytes;    /* c · tail_waste_tokens */
    uint64_t logical_blocks;    /* Σ⌈T/b⌉ */
    uint64_t physical_blocks;   /* unique: shared full prefix blocks counted once */
    double physical_bytes;      /* c · b · physical_blocks */
} kv_ledgers;

void kv_ledgers_compute(double bytes_per_token, const uint64_t *lengths, size_t n,
                        uint32_t block_size, uint64_t shared_prefix, kv_ledgers *out);

/* Sizes: "24GiB", "512MiB", "80GB", "1.5GiB", "1024" (bytes).  Binary units are powers
 * of 1024, decimal of 1000.  0, -KV_EINVAL (syntax, unknown unit) or -KV_ERANGE (zero,
 * negative, overflow); the diag names the text. */
int kv_parse_size(const char *s, uint64_t *out, kv_diag *diag);
/* The same, but "0" (with or without a unit) is accepted: for --reserve. */
int kv_parse_size_or_zero(const char *s, uint64_t *out, kv_diag *diag);
/* "24.00 GiB (25.77 GB)" into buf. */
void kv_format_size(char *buf, size_t n, double bytes);

#endif
