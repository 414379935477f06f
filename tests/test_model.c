/* Unit tests of the capacity model (DESIGN §2): every formula, the presets, config.json
 * reading (tests/data/hf/), sizes. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kvsim/model.h"
#include "kvsim/setup.h"
#include "support.h"

#define KIB (1ull << 10)
#define MIB (1ull << 20)
#define GIB (1ull << 30)

/* A plain model with the given KV geometry and dtype, no weights. */
static kv_model geometry(uint32_t layers, uint32_t kv_heads, uint32_t head_dim, kv_dtype dt)
{
    kv_model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "test");
    m.num_layers = layers;
    m.num_heads = kv_heads;
    m.num_kv_heads = kv_heads;
    m.head_dim = head_dim;
    m.kv_dtype = dt;
    m.weight_bytes = 2.0;
    return m;
}

static kv_shard shard_of(const kv_model *m, uint32_t tp, uint32_t pp)
{
    kv_shard s;
    kv_diag d;
    int rc = kv_shard_compute(m, tp, pp, &s, &d);
    cr_assert_eq(rc, 0, "kv_shard_compute: %s", d.msg);
    return s;
}

/* ---- dtypes --------------------------------------------------------------------------- */

/* Parameters are copied into each test's process, so strings are stored inline. */
typedef struct dtype_case {
    char text[16];
    kv_dtype dtype;
    double bytes;
    char name[8];
} dtype_case;

ParameterizedTestParameters(model, dtype_parse)
{
    static dtype_case cases[] = {
        {"fp16", KV_DTYPE_FP16, 2, "fp16"},     {"bf16", KV_DTYPE_BF16, 2, "bf16"},
        {"fp8", KV_DTYPE_FP8, 1, "fp8"},        {"int8", KV_DTYPE_INT8, 1, "int8"},
        {"int4", KV_DTYPE_INT4, 0.5, "int4"},   {"BF16", KV_DTYPE_BF16, 2, "bf16"},
        {"bfloat16", KV_DTYPE_BF16, 2, "bf16"}, {"float16", KV_DTYPE_FP16, 2, "fp16"},
        {"fp8_e4m3", KV_DTYPE_FP8, 1, "fp8"},   {"fp8_e5m2", KV_DTYPE_FP8, 1, "fp8"},
    };
    return cr_make_param_array(dtype_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(dtype_case *c, model, dtype_parse)
{
    kv_dtype d;
    cr_assert_eq(kv_dtype_parse(c->text, &d), 0, "%s", c->text);
    cr_assert_eq(d, c->dtype);
    cr_assert_eq(kv_dtype_bytes(d), c->bytes);
    cr_assert_str_eq(kv_dtype_name(d), c->name);
}

Test(model, dtype_parse_rejects_unknown)
{
    kv_dtype d = KV_DTYPE_BF16;
    cr_assert_eq(kv_dtype_parse("fp32", &d), -KV_EINVAL);
    cr_assert_eq(kv_dtype_parse("", &d), -KV_EINVAL);
    cr_assert_eq(kv_dtype_parse("int", &d), -KV_EINVAL);
    cr_assert_eq(d, KV_DTYPE_BF16, "a failed parse leaves the output alone");
}

/* ---- bytes per token ------------------------------------------------------------------ */

Test(model, bytes_per_token_seed_example)
{
    /* DESIGN §2: 32 layers · 8 KV heads · 128 · FP16 = 131,072 B = 128 KiB/token. */
    kv_model m = geometry(32, 8, 128, KV_DTYPE_FP16);
    cr_assert_eq(kv_model_bytes_per_token(&m), 131072.0);
    cr_assert_eq(kv_model_bytes_per_token(&m), 128.0 * KIB);
}

typedef struct bpt_case {
    kv_dtype dtype;
    uint32_t group, scale_bytes;
    double bytes_per_token;
} bpt_case;

ParameterizedTestParameters(model, bytes_per_token_dtypes)
{
    /* 32 layers, 8 KV heads, head dim 128: 65,536 elements per token. */
    static bpt_case cases[] = {
        {KV_DTYPE_FP16, 0, 0, 131072},  {KV_DTYPE_BF16, 0, 0, 131072},
        {KV_DTYPE_FP8, 0, 0, 65536},                                  /* fp8 halves */
        {KV_DTYPE_INT8, 0, 0, 65536},   {KV_DTYPE_INT4, 0, 0, 32768}, /* int4 quarters */
        {KV_DTYPE_INT4, 32, 2, 36864},  /* + 2/32 B per element = 4,096 B */
        {KV_DTYPE_FP8, 16, 4, 81920},   /* + 4/16 B per element = 16,384 B */
        {KV_DTYPE_INT8, 128, 4, 67584}, /* + 4/128 B per element = 2,048 B */
    };
    return cr_make_param_array(bpt_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bpt_case *c, model, bytes_per_token_dtypes)
{
    kv_model m = geometry(32, 8, 128, c->dtype);
    m.kv_scale_group = c->group;
    m.kv_scale_bytes = c->scale_bytes;
    cr_assert_eq(kv_model_bytes_per_token(&m), c->bytes_per_token, "%s G=%u S=%u: %f",
                 kv_dtype_name(c->dtype), c->group, c->scale_bytes, kv_model_bytes_per_token(&m));
    kv_shard s = shard_of(&m, 1, 1);
    cr_assert_eq(s.bytes_per_token_rank, c->bytes_per_token);
    cr_assert_eq((double)s.bpt_rank_num / (double)s.bpt_rank_den, c->bytes_per_token);
}

Test(model, gqa_versus_mha)
{
    kv_model gqa, mha;
    cr_assert_eq(kv_model_preset("llama-3-8b", &gqa, NULL), 0);
    cr_assert_eq(kv_model_preset("llama-2-7b", &mha, NULL), 0);
    /* Same layers, heads and head dim; Llama-2-7B keeps 32 KV heads, Llama-3-8B 8. */
    cr_assert_eq(mha.num_heads, gqa.num_heads);
    cr_assert_eq(kv_model_bytes_per_token(&gqa), 128.0 * KIB);
    cr_assert_eq(kv_model_bytes_per_token(&mha), 512.0 * KIB);
}

/* ---- presets -------------------------------------------------------------------------- */

typedef struct model_case {
    char name[16];
    uint32_t layers, heads, kv_heads, head_dim, hidden, vocab;
    uint64_t params, active;
    double bytes_per_token;
    char config[64]; /* tests/data/hf file with the same model */
} model_case;

ParameterizedTestParameters(model, model_presets)
{
    static model_case cases[] = {
        {"llama-2-7b", 32, 32, 32, 128, 4096, 32000, 6738415616ull, 6738415616ull, 524288,
         "tests/data/hf/Llama-2-7b-hf.json"},
        {"llama-3-8b", 32, 32, 8, 128, 4096, 128256, 8030261248ull, 8030261248ull, 131072,
         "tests/data/hf/Meta-Llama-3-8B/config.json"},
        {"llama-3-70b", 80, 64, 8, 128, 8192, 128256, 70553706496ull, 70553706496ull, 327680,
         "tests/data/hf/Meta-Llama-3-70B.json"},
        {"mistral-7b", 32, 32, 8, 128, 4096, 32000, 7241732096ull, 7241732096ull, 131072,
         "tests/data/hf/Mistral-7B-v0.1.json"},
        {"qwen2.5-7b", 28, 28, 4, 128, 3584, 152064, 7615616512ull, 7615616512ull, 57344,
         "tests/data/hf/Qwen2.5-7B.json"},
        {"qwen2.5-72b", 80, 64, 8, 128, 8192, 152064, 72706203648ull, 72706203648ull, 327680,
         "tests/data/hf/Qwen2.5-72B.json"},
        {"mixtral-8x7b", 32, 32, 8, 128, 4096, 32000, 46702792704ull, 12879925248ull, 131072,
         "tests/data/hf/Mixtral-8x7B-v0.1.json"},
    };
    return cr_make_param_array(model_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(model_case *c, model, model_presets)
{
    kv_model m;
    kv_diag d;
    cr_assert_eq(kv_model_preset(c->name, &m, &d), 0, "%s: %s", c->name, d.msg);
    cr_assert_str_eq(m.name, c->name);
    cr_assert_eq(m.num_layers, c->layers);
    cr_assert_eq(m.num_heads, c->heads);
    cr_assert_eq(m.num_kv_heads, c->kv_heads);
    cr_assert_eq(m.head_dim, c->head_dim);
    cr_assert_eq(m.hidden_size, c->hidden);
    cr_assert_eq(m.vocab_size, c->vocab);
    cr_assert_eq(m.num_params, c->params);
    cr_assert_eq(m.active_params, c->active);
    cr_assert_eq(m.kv_dtype, KV_DTYPE_BF16);
    cr_assert_eq(m.weight_bytes, 2.0);
    cr_assert_eq(kv_model_bytes_per_token(&m), c->bytes_per_token);
    cr_assert(strstr(kv_model_preset_names(), c->name), "%s missing from the names list", c->name);

    /* The preset and the model's own config.json agree: geometry, and the parameter
     * counts that hfconfig.c derives with its formula. */
    kv_model f;
    cr_assert_eq(kv_model_from_hf_config(src_path(c->config), &f, &d), 0, "%s", d.msg);
    cr_assert_eq(f.num_layers, m.num_layers);
    cr_assert_eq(f.num_kv_heads, m.num_kv_heads);
    cr_assert_eq(f.head_dim, m.head_dim);
    cr_assert_eq(f.hidden_size, m.hidden_size);
    cr_assert_eq(f.vocab_size, m.vocab_size);
    cr_assert_eq(f.num_params, m.num_params, "%s: derived %llu", c->name,
                 (unsigned long long)f.num_params);
    cr_assert_eq(f.active_params, m.active_params, "%s: derived active %llu", c->name,
                 (unsigned long long)f.active_params);
    cr_assert_eq(kv_model_bytes_per_token(&f), c->bytes_per_token);
}

Test(model, model_preset_case_insensitive_and_unknown)
{
    kv_model m;
    kv_diag d;
    cr_assert_eq(kv_model_preset("LLaMA-3-8B", &m, &d), 0);
    cr_assert_str_eq(m.name, "llama-3-8b", "the canonical spelling is kept");
    cr_assert_eq(kv_model_preset("llama-4", &m, &d), -KV_ENOENT);
    cr_assert(strstr(d.msg, "unknown model preset 'llama-4'"), "%s", d.msg);
    cr_assert(strstr(d.msg, "mixtral-8x7b"), "the message lists the presets: %s", d.msg);
}

typedef struct gpu_case {
    char name[16];
    uint64_t mem;
    double bw, flops;
} gpu_case;

ParameterizedTestParameters(model, gpu_presets)
{
    static gpu_case cases[] = {
        {"A100-40G", 40 * GIB, 1555e9, 312e12},    {"A100-80G", 80 * GIB, 2039e9, 312e12},
        {"H100-SXM", 80 * GIB, 3.35e12, 989.5e12}, {"H200", 141 * GIB, 4.8e12, 989.5e12},
        {"L40S", 48 * GIB, 864e9, 362.05e12},      {"MI300X", 192 * GIB, 5.3e12, 1307.4e12},
    };
    return cr_make_param_array(gpu_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(gpu_case *c, model, gpu_presets)
{
    kv_gpu g;
    kv_diag d;
    cr_assert_eq(kv_gpu_preset(c->name, &g, &d), 0, "%s", d.msg);
    cr_assert_str_eq(g.name, c->name);
    cr_assert_eq(g.mem_bytes, c->mem);
    cr_assert_eq(g.hbm_bw, c->bw);
    cr_assert_eq(g.peak_flops, c->flops);
    cr_assert(strstr(kv_gpu_preset_names(), c->name));
}

Test(model, gpu_preset_case_insensitive_and_unknown)
{
    kv_gpu g;
    kv_diag d;
    cr_assert_eq(kv_gpu_preset("h100-sxm", &g, &d), 0);
    cr_assert_str_eq(g.name, "H100-SXM");
    cr_assert_eq(kv_gpu_preset("B200", &g, &d), -KV_ENOENT);
    cr_assert(strstr(d.msg, "unknown GPU preset 'B200'"), "%s", d.msg);
    cr_assert(strstr(d.msg, "MI300X"), "%s", d.msg);
}

/* ---- sharding ------------------------------------------------------------------------- */

Test(model, shard_tp2_halves_per_rank_bytes)
{
    kv_model m;
    kv_model_preset("llama-3-8b", &m, NULL);
    kv_shard s = shard_of(&m, 2, 1);
    cr_assert_eq(s.kv_heads_per_rank, 4);
    cr_assert_eq(s.layers_per_rank, 32);
    cr_assert_not(s.kv_replicated);
    cr_assert_not(s.kv_indivisible);
    cr_assert_eq(s.kv_replication, 1);
    cr_assert_eq(s.bytes_per_token, 131072.0);
    cr_assert_eq(s.bytes_per_token_rank, 65536.0);
    cr_assert_eq(s.weight_bytes_rank, 8030261248ull); /* 16,060,522,496 B / 2 */
}

Test(model, shard_tp_equal_to_kv_heads_is_not_replication)
{
    kv_model m = geometry(32, 8, 128, KV_DTYPE_FP16);
    kv_shard s = shard_of(&m, 8, 1);
    cr_assert_eq(s.kv_heads_per_rank, 1);
    cr_assert_not(s.kv_replicated);
    cr_assert_eq(s.kv_replication, 1);
    cr_assert_eq(s.bytes_per_token_rank, 16384.0);
}

Test(model, shard_tp16_replicates_8_kv_heads)
{
    kv_model m = geometry(32, 8, 128, KV_DTYPE_FP16);
    kv_shard s = shard_of(&m, 16, 1);
    cr_assert(s.kv_replicated);
    cr_assert_not(s.kv_indivisible);
    cr_assert_eq(s.kv_heads_per_rank, 1, "one (replicated) head per rank, not half a head");
    cr_assert_eq(s.kv_replication, 2);
    cr_assert_eq(s.bytes_per_token_rank, 16384.0, "2 · 32 · 1 · 128 · 2");
    cr_assert_eq(s.bytes_per_token, 131072.0);
}

Test(model, shard_indivisible_is_reported_and_rounded_up)
{
    kv_model m = geometry(32, 8, 128, KV_DTYPE_FP16);
    kv_shard s = shard_of(&m, 3, 1);
    cr_assert(s.kv_indivisible);
    cr_assert_not(s.kv_replicated);
    cr_assert_eq(s.kv_heads_per_rank, 3, "⌈8/3⌉, never 8/3");
    cr_assert_eq(s.bytes_per_token_rank, 2.0 * 32 * 3 * 128 * 2);

    s = shard_of(&m, 12, 1); /* TP > H_kv but not a multiple: replicated and indivisible */
    cr_assert(s.kv_replicated);
    cr_assert(s.kv_indivisible);
    cr_assert_eq(s.kv_heads_per_rank, 1);
    cr_assert_eq(s.kv_replication, 2);
}

Test(model, shard_pp3_largest_stage)
{
    kv_model m = geometry(32, 8, 128, KV_DTYPE_FP16);
    kv_shard s = shard_of(&m, 1, 3);
    cr_assert_eq(s.layers_per_rank, 11, "⌈32/3⌉ = 11 on the largest stage");
    cr_assert_eq(s.bytes_per_token_rank, 2.0 * 11 * 8 * 128 * 2);
    s = shard_of(&m, 2, 4);
    cr_assert_eq(s.layers_per_rank, 8);
    cr_assert_eq(s.kv_heads_per_rank, 4);
    cr_assert_eq(s.bytes_per_token_rank, 2.0 * 8 * 4 * 128 * 2);
}

Test(model, shard_rejects_zero_degrees)
{
    kv_model m = geometry(32, 8, 128, KV_DTYPE_FP16);
    kv_shard s;
    kv_diag d;
    cr_assert_eq(kv_shard_compute(&m, 0, 1, &s, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, ">= 1"), "%s", d.msg);
    cr_assert_eq(kv_shard_compute(&m, 1, 0, &s, &d), -KV_EINVAL);
}

Test(model, shard_overflow_is_an_error)
{
    kv_model m = geometry(UINT32_MAX, UINT32_MAX, UINT32_MAX, KV_DTYPE_FP16);
    kv_shard s;
    kv_diag d;
    cr_assert_eq(kv_shard_compute(&m, 1, 1, &s, &d), -KV_ERANGE);
    cr_assert(strstr(d.msg, "overflow"), "%s", d.msg);
}

/* ---- block bytes and capacity --------------------------------------------------------- */

Test(model, block_bytes_exact_and_rounded_up)
{
    kv_model m = geometry(32, 8, 128, KV_DTYPE_FP16);
    kv_shard s = shard_of(&m, 1, 1);
    cr_assert_eq(kv_block_bytes(&s, 16), 2 * MIB);
    cr_assert_eq(kv_block_bytes(&s, 1), 128 * KIB);

    /* c = 2 elements · (1 + 1/3) B = 8/3 B per token: 16 tokens = 42.67 → 43 B. */
    kv_model f = geometry(1, 1, 1, KV_DTYPE_FP8);
    f.kv_scale_group = 3;
    f.kv_scale_bytes = 1;
    kv_shard t = shard_of(&f, 1, 1);
    cr_assert_eq(t.bpt_rank_num, 8);
    cr_assert_eq(t.bpt_rank_den, 3);
    cr_assert_eq(kv_block_bytes(&t, 16), 43);
    cr_assert_eq(kv_block_bytes(&t, 3), 8, "3 tokens are exactly 8 bytes");
    kv_capacity cap;
    kv_diag d;
    cr_assert_eq(kv_capacity_from_budget(&t, 100, 3, &cap, &d), 0, "%s", d.msg);
    cr_assert_eq(cap.max_tokens, 37, "⌊100 · 3/8⌋");
    cr_assert_eq(cap.num_blocks, 12, "⌊100/8⌋");
}

Test(model, capacity_from_budget_golden)
{
    /* 64 layers · 8 KV heads · 128 · fp16 = 256 KiB/token, budget 24 GiB. */
    kv_model m = geometry(64, 8, 128, KV_DTYPE_FP16);
    kv_shard s = shard_of(&m, 1, 1);
    cr_assert_eq(s.bytes_per_token_rank, 256.0 * KIB);
    kv_capacity cap;
    kv_diag d;
    cr_assert_eq(kv_capacity_from_budget(&s, 24 * GIB, 16, &cap, &d), 0, "%s", d.msg);
    cr_assert_eq(cap.kv_budget_bytes, 24 * GIB);
    cr_assert_eq(cap.block_bytes, 4 * MIB);
    cr_assert_eq(cap.max_tokens, 98304);
    cr_assert_eq(cap.num_blocks, 6144);
    cr_assert_eq(cap.usable_blocks, 6143);
}

Test(model, capacity_from_gpu_default_setup)
{
    kv_model m;
    kv_gpu g;
    kv_model_preset("llama-3-8b", &m, NULL);
    kv_gpu_preset("H100-SXM", &g, NULL);
    kv_shard s = shard_of(&m, 1, 1);
    cr_assert_eq(s.weight_bytes_rank, 16060522496ull, "8,030,261,248 params · 2 B");
    kv_capacity cap;
    kv_diag d;
    cr_assert_eq(kv_capacity_from_gpu(&s, &g, 0.9, 2 * GIB, 16, &cap, &d), 0, "%s", d.msg);
    /* ⌊0.9 · 80 GiB⌋ − weights − 2 GiB reserve */
    uint64_t budget = 77309411328ull - 16060522496ull - 2 * GIB;
    cr_assert_eq(cap.kv_budget_bytes, budget);
    cr_assert_eq(cap.num_blocks, budget / (2 * MIB));
    cr_assert_eq(cap.num_blocks, 28181);
    cr_assert_eq(cap.usable_blocks, 28180);
    cr_assert_eq(cap.max_tokens, budget / (128 * KIB));

    /* TP=2 halves both the weights and the bytes per token of each rank. */
    kv_shard s2 = shard_of(&m, 2, 1);
    kv_capacity cap2;
    cr_assert_eq(kv_capacity_from_gpu(&s2, &g, 0.9, 2 * GIB, 16, &cap2, &d), 0);
    cr_assert_eq(cap2.kv_budget_bytes, 77309411328ull - 8030261248ull - 2 * GIB);
    cr_assert_eq(cap2.block_bytes, 1 * MIB);
}

Test(model, capacity_from_gpu_without_room)
{
    kv_model m;
    kv_gpu g;
    kv_model_preset("llama-3-70b", &m, NULL);
    kv_gpu_preset("A100-40G", &g, NULL);
    kv_shard s = shard_of(&m, 1, 1);
    kv_capacity cap;
    kv_diag d;
    cr_assert_eq(kv_capacity_from_gpu(&s, &g, 0.9, 2 * GIB, 16, &cap, &d), -KV_ECAPACITY);
    cr_assert(strstr(d.msg, "no memory left for the KV cache on A100-40G"), "%s", d.msg);
    cr_assert_eq(kv_capacity_from_gpu(&s, &g, 0.0, 0, 16, &cap, &d), -KV_EINVAL);
    cr_assert_eq(kv_capacity_from_gpu(&s, &g, 1.5, 0, 16, &cap, &d), -KV_EINVAL);
}

Test(model, capacity_needs_two_blocks)
{
    kv_model m = geometry(32, 8, 128, KV_DTYPE_FP16);
    kv_shard s = shard_of(&m, 1, 1);
    kv_capacity cap;
    kv_diag d;
    cr_assert_eq(kv_capacity_from_budget(&s, 4 * MIB - 1, 16, &cap, &d), -KV_ECAPACITY);
    cr_assert(strstr(d.msg, "holds 1 blocks"), "%s", d.msg);
    cr_assert_eq(kv_capacity_from_budget(&s, 4 * MIB, 16, &cap, &d), 0);
    cr_assert_eq(cap.num_blocks, 2);
    cr_assert_eq(cap.usable_blocks, 1);
    cr_assert_eq(kv_capacity_from_blocks(&s, 1, 16, &cap, &d), -KV_ECAPACITY);
}

Test(model, capacity_from_blocks_budget_is_n_blocks)
{
    kv_model m = geometry(32, 8, 128, KV_DTYPE_FP16);
    kv_shard s = shard_of(&m, 1, 1);
    kv_capacity cap;
    kv_diag d;
    cr_assert_eq(kv_capacity_from_blocks(&s, 1000, 16, &cap, &d), 0, "%s", d.msg);
    cr_assert_eq(cap.kv_budget_bytes, 1000 * 2 * MIB, "1000 · block_bytes");
    cr_assert_eq(cap.num_blocks, 1000);
    cr_assert_eq(cap.usable_blocks, 999);
    cr_assert_eq(cap.max_tokens, 16000);
}

Test(model, capacity_too_many_blocks)
{
    kv_model m = geometry(1, 1, 1, KV_DTYPE_INT4); /* 1 byte per token */
    kv_shard s = shard_of(&m, 1, 1);
    kv_capacity cap;
    kv_diag d;
    cr_assert_eq(kv_capacity_from_budget(&s, 8ull << 40, 1, &cap, &d), -KV_ERANGE);
    cr_assert(strstr(d.msg, "more than 4294967295"), "%s", d.msg);
}

/* ---- ledgers -------------------------------------------------------------------------- */

Test(model, ledgers_1024_3072)
{
    kv_ledgers l;
    uint64_t len[] = {1024, 3072};
    kv_ledgers_compute(131072.0, len, 2, 16, 0, &l);
    cr_assert_eq(l.effective_bytes, 512.0 * MIB);
    cr_assert_eq(l.paged_bytes, 512.0 * MIB);
    cr_assert_eq(l.padded_bytes, 768.0 * MIB);
    cr_assert_eq(l.tail_waste_tokens, 0);
    cr_assert_eq(l.logical_blocks, 256);
    cr_assert_eq(l.physical_blocks, 256);
}

Test(model, ledgers_tail_waste)
{
    kv_ledgers l;
    uint64_t len[] = {17, 31, 32};
    kv_ledgers_compute(131072.0, len, 3, 16, 0, &l);
    cr_assert_eq(l.allocated_tokens, 96);
    cr_assert_eq(l.effective_tokens, 80);
    cr_assert_eq(l.tail_waste_tokens, 16);
    cr_assert_eq(l.tail_waste_bytes, 2.0 * MIB);
    cr_assert_eq(l.padded_tokens, 96);
    cr_assert_eq(l.logical_blocks, 6);
}

Test(model, ledgers_shared_prefix_counted_once)
{
    kv_ledgers l;
    uint64_t len[] = {33, 33};
    kv_ledgers_compute(131072.0, len, 2, 16, 32, &l);
    cr_assert_eq(l.logical_blocks, 6);
    cr_assert_eq(l.physical_blocks, 4);
    cr_assert_eq(l.physical_bytes, 8.0 * MIB, "not 12 MiB");
    cr_assert_eq(l.paged_bytes, 12.0 * MIB, "the block tables still reference 6 blocks");
}

Test(model, ledgers_only_full_prefix_blocks_are_shared)
{
    kv_ledgers l;
    uint64_t len[] = {100, 100, 100};
    /* A 40-token prefix fills 2 blocks of 16; its last 8 tokens sit in a partial block
     * that each sequence owns. */
    kv_ledgers_compute(1.0, len, 3, 16, 40, &l);
    cr_assert_eq(l.logical_blocks, 21);
    cr_assert_eq(l.physical_blocks, 2 + 3 * 5);
    /* A sequence shorter than the prefix shares only its own full blocks. */
    uint64_t mixed[] = {20, 64};
    kv_ledgers_compute(1.0, mixed, 2, 16, 64, &l);
    cr_assert_eq(l.logical_blocks, 2 + 4);
    cr_assert_eq(l.physical_blocks, 4 + 1, "block 0 shared, 20's partial block private");
}

Test(model, ledgers_4096_sequences)
{
    /* DESIGN's "one 4096-token sequence = 1 GiB, 20 of them = 20 GiB" holds at 256 KiB/token
     * (64 layers, the geometry of its 24 GiB example: 24 GiB / 1 GiB = concurrency 24).  At
     * 128 KiB/token the same sequence is 512 MiB, as the 1024 + 3072 example shows. */
    kv_ledgers l;
    uint64_t one[] = {4096};
    kv_ledgers_compute(128.0 * KIB, one, 1, 16, 0, &l);
    cr_assert_eq(l.effective_bytes, 512.0 * MIB);
    kv_ledgers_compute(256.0 * KIB, one, 1, 16, 0, &l);
    cr_assert_eq(l.effective_bytes, 1.0 * GIB);
    uint64_t twenty[20];
    for (int i = 0; i < 20; i++)
        twenty[i] = 4096;
    kv_ledgers_compute(256.0 * KIB, twenty, 20, 16, 0, &l);
    cr_assert_eq(l.effective_bytes, 20.0 * GIB);
    cr_assert_eq(l.paged_bytes, 20.0 * GIB);
    cr_assert_eq(l.physical_blocks, 20 * 256);
}

Test(model, ledgers_properties_on_random_lengths)
{
    /* Seeded LCG: tail waste < n·b, effective ≤ paged ≤ padded-or-more-by-tail, physical ≤
     * logical, and the per-sequence identities hold on every draw. */
    uint64_t x = 12345;
    uint64_t len[64];
    for (int round = 0; round < 500; round++) {
        size_t n = 1 + round % 64;
        uint32_t b = 1u << (round % 8);
        uint64_t prefix = 0, sum = 0, blocks = 0;
        for (size_t i = 0; i < n; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            len[i] = 1 + (x >> 33) % 5000;
            sum += len[i];
            blocks += (len[i] + b - 1) / b;
        }
        prefix = (x >> 20) % 3000;
        kv_ledgers l;
        kv_ledgers_compute(2.0, len, n, b, prefix, &l);
        cr_assert_eq(l.effective_tokens, sum);
        cr_assert_eq(l.logical_blocks, blocks);
        cr_assert_eq(l.allocated_tokens, b * blocks);
        cr_assert_lt(l.tail_waste_tokens, n * b);
        cr_assert_leq(l.effective_bytes, l.paged_bytes);
        cr_assert_leq(l.effective_tokens, l.padded_tokens);
        cr_assert_leq(l.physical_blocks, l.logical_blocks);
        cr_assert_geq(l.physical_blocks, (blocks + n - 1) / n, "at least the longest table");
        cr_assert_eq(l.paged_bytes, 2.0 * (double)b * (double)blocks);
    }
}

/* ---- sizes ---------------------------------------------------------------------------- */

typedef struct size_case {
    char text[32];
    uint64_t bytes;
} size_case;

ParameterizedTestParameters(model, parse_size_valid)
{
    static size_case cases[] = {
        {"1024", 1024},
        {"1", 1},
        {"1B", 1},
        {"24GiB", 24ull << 30},
        {"512MiB", 512ull << 20},
        {"4KiB", 4096},
        {"2TiB", 2ull << 40},
        {"1PiB", 1ull << 50},
        {"80GB", 80000000000ull},
        {"1KB", 1000},
        {"1kB", 1000},
        {"3MB", 3000000},
        {"2TB", 2000000000000ull},
        {"1.5GiB", 1610612736ull},
        {"0.5MiB", 524288},
        {"1.25 GB", 1250000000ull},
        {"0.3KiB", 307}, /* 307.2 B, rounded down */
        {"007MiB", 7ull << 20},
        {"8191PiB", 8191ull << 50},
        /* The one number grammar (README "Numbers"): what every option accepts, sizes too. */
        {".5GiB", 512ull << 20},
        {"1.GiB", 1ull << 30},
        {"1e9", 1000000000ull},
        {"1.5e3MiB", 1500ull << 20},
        {"2E-1KB", 200},
        {"+1KiB", 1024},
        {"1.00000000000000000000GiB", 1ull << 30}, /* trailing zeros are not precision */
        {"0.000000000000000000001e21B", 1},        /* leading zeros neither */
        {"9223372036854775807", 9223372036854775807ull},
        {"1e-15PiB", 1}, /* 1.1259 bytes, rounded down */
        {"10e-1B", 1},
    };
    return cr_make_param_array(size_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(size_case *c, model, parse_size_valid)
{
    uint64_t v = 0;
    kv_diag d = {{0}};
    cr_assert_eq(kv_parse_size(c->text, &v, &d), 0, "%s: %s", c->text, d.msg);
    cr_assert_eq(v, c->bytes, "%s → %llu", c->text, (unsigned long long)v);
}

typedef struct bad_size_case {
    char text[32];
    int err;
    char msg[80]; /* a substring of the diagnostic */
} bad_size_case;

ParameterizedTestParameters(model, parse_size_invalid)
{
    static bad_size_case cases[] = {
        {"0", -KV_ERANGE, "size '0' must be at least 1 byte"},
        {"0GiB", -KV_ERANGE, "size '0GiB' must be at least 1 byte"},
        {"0.0001B", -KV_ERANGE, "must be at least 1 byte"},
        {"-1GiB", -KV_ERANGE, "size '-1GiB' must not be negative"},
        {"abc", -KV_EINVAL, "invalid size 'abc'"},
        {"", -KV_EINVAL, "invalid size ''"},
        {"GiB", -KV_EINVAL, "invalid size 'GiB'"},
        {".GiB", -KV_EINVAL, "invalid size '.GiB'"},
        {"12XB", -KV_EINVAL, "unknown unit 'XB' in size '12XB'"},
        {"12gib", -KV_EINVAL, "unknown unit 'gib'"},
        {"12Gb", -KV_EINVAL, "unknown unit 'Gb'"},
        {"1..GiB", -KV_EINVAL, "unknown unit '.GiB'"},
        {"1eGiB", -KV_EINVAL, "unknown unit 'eGiB'"},
        {"0x10GiB", -KV_EINVAL, "unknown unit 'x10GiB'"},
        {" 1GiB", -KV_EINVAL, "invalid size ' 1GiB'"},
        {"1GiB ", -KV_EINVAL, "unknown unit 'GiB '"},
        {"1  GiB", -KV_EINVAL, "unknown unit ' GiB'"},
        {"infGiB", -KV_EINVAL, "invalid size 'infGiB'"},
        {"1.000000000000000000001GiB", -KV_EINVAL, "more than 19 significant digits"},
        {"-0.5GiB", -KV_ERANGE, "must not be negative"},
        {"-1e999", -KV_ERANGE, "must not be negative"},
        {"1e20", -KV_ERANGE, "too large"},
        {"1e99999999999999999999KiB", -KV_ERANGE, "too large"},
        {"9223372036854775808", -KV_ERANGE, "too large"},
        {"1e-400GiB", -KV_ERANGE, "must be at least 1 byte"},
        {"24G", -KV_EINVAL, "ambiguous unit 'G' in size '24G' (use GiB"},
        {"24Gi", -KV_EINVAL, "ambiguous unit 'Gi'"},
        {"5k", -KV_EINVAL, "use KiB for powers of 1024 or KB"},
        {"8EiB", -KV_EINVAL, "unknown unit 'EiB'"},
        {"8192PiB", -KV_ERANGE, "too large"},
        {"99999999999999999999", -KV_ERANGE, "too large"},
        {"20000000TB", -KV_ERANGE, "too large"},
    };
    return cr_make_param_array(bad_size_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_size_case *c, model, parse_size_invalid)
{
    uint64_t v = 42;
    kv_diag d = {{0}};
    cr_assert_eq(kv_parse_size(c->text, &v, &d), c->err, "%s: %s", c->text, d.msg);
    cr_assert(strstr(d.msg, c->msg), "'%s' gave '%s'", c->text, d.msg);
    cr_assert_eq(v, 42, "a failed parse leaves the output alone");
}

Test(model, parse_size_or_zero)
{
    uint64_t v = 1;
    kv_diag d;
    cr_assert_eq(kv_parse_size_or_zero("0", &v, &d), 0);
    cr_assert_eq(v, 0);
    cr_assert_eq(kv_parse_size_or_zero("0GiB", &v, &d), 0);
    cr_assert_eq(v, 0);
    cr_assert_eq(kv_parse_size_or_zero("2GiB", &v, &d), 0);
    cr_assert_eq(v, 2 * GIB);
    cr_assert_eq(kv_parse_size_or_zero("-0", &v, &d), 0, "-0 is 0 (README \"Numbers\")");
    cr_assert_eq(v, 0);
    cr_assert_eq(kv_parse_size_or_zero("-1", &v, &d), -KV_ERANGE);
    cr_assert_eq(kv_parse_size_or_zero("x", &v, &d), -KV_EINVAL);
}

typedef struct fmt_case {
    double bytes;
    char text[40];
} fmt_case;

ParameterizedTestParameters(model, format_size)
{
    static fmt_case cases[] = {
        {0, "0 B"},
        {512, "512 B"},
        {0.5, "0.50 B"},
        {1000, "1000 B (1.00 KB)"},
        {131072, "128.00 KiB (131.07 KB)"},
        {536870912, "512.00 MiB (536.87 MB)"},
        {25769803776.0, "24.00 GiB (25.77 GB)"},
        {80e9, "74.51 GiB (80.00 GB)"},
    };
    return cr_make_param_array(fmt_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(fmt_case *c, model, format_size)
{
    char buf[64];
    kv_format_size(buf, sizeof buf, c->bytes);
    cr_assert_str_eq(buf, c->text);
}

/* ---- HF config.json ------------------------------------------------------------------- */

static int load(const char *rel, kv_model *m, kv_diag *d)
{
    memset(d, 0, sizeof *d);
    return kv_model_from_hf_config(src_path(rel), m, d);
}

Test(model, hf_llama3_8b)
{
    kv_model m;
    kv_diag d;
    cr_assert_eq(load("tests/data/hf/Meta-Llama-3-8B/config.json", &m, &d), 0, "%s", d.msg);
    cr_assert_str_eq(m.name, "Meta-Llama-3-8B", "the directory names a config.json");
    cr_assert_eq(m.num_layers, 32);
    cr_assert_eq(m.num_heads, 32);
    cr_assert_eq(m.num_kv_heads, 8);
    cr_assert_eq(m.head_dim, 128, "hidden_size / num_attention_heads");
    cr_assert_eq(m.vocab_size, 128256);
    cr_assert_eq(m.kv_dtype, KV_DTYPE_BF16);
    cr_assert_eq(m.weight_bytes, 2.0);
    cr_assert_eq(m.num_params, 8030261248ull);
    cr_assert_eq(kv_model_bytes_per_token(&m), 131072.0);
}

/* quantization_config → bytes per weight (src/hfquant.c), on Llama-3-8B's geometry; 0 is
 * "unknown", with what could not be read. */
typedef struct quant_case {
    char file[48];
    double bytes;
    char why[96];
} quant_case;

ParameterizedTestParameters(model, hf_quantisation_sets_weight_bytes)
{
    static quant_case cases[] = {
        {"fbgemm_fp8", 1.0, ""},
        {"compressed_tensors_fp8", 1.0, ""},
        {"compressed_tensors_w4a16", 0.5, ""},
        {"bitsandbytes_4bit", 0.5, ""},
        {"bitsandbytes_8bit", 1.0, ""},
        {"gptq_4bit", 0.5, ""},
        {"compressed_tensors_mixed", 0,
         "quantization_config 'compressed-tensors' whose config groups have different weight "
         "bits"},
        {"unknown_method", 0, "quantization_config quant_method 'hqq'"},
    };
    return cr_make_param_array(quant_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(quant_case *c, model, hf_quantisation_sets_weight_bytes)
{
    char rel[96];
    snprintf(rel, sizeof rel, "tests/data/hf/quant/%s.json", c->file);
    kv_model m;
    kv_diag d;
    cr_assert_eq(load(rel, &m, &d), 0, "%s", d.msg);
    cr_assert_eq(m.weight_bytes, c->bytes, "%s: %g bytes per weight", c->file, m.weight_bytes);
    cr_assert_str_eq(m.weight_quant, c->why);
    cr_assert_eq(m.num_params, 8030261248ull);
}

/* An unknown quantisation is refused, never counted at 2 bytes; --weight-dtype decides. */
Test(model, setup_refuses_unknown_weights_unless_the_dtype_is_given)
{
    kv_setup_options o;
    kv_setup s;
    kv_diag d;
    kv_setup_options_init(&o);
    char path[600];
    snprintf(path, sizeof path, "%s", src_path("tests/data/hf/quant/unknown_method.json"));
    o.model = path;
    cr_assert_eq(kv_setup_resolve(&o, &s, &d), -KV_EPARSE);
    cr_assert(strstr(d.msg, "unknown_method.json: quantization_config quant_method 'hqq': bytes "
                            "per weight unknown; give {weight_dtype} (bf16, fp16, fp8, int8 or "
                            "int4)"),
              "%s", d.msg);
    o.weight_dtype = "int4";
    cr_assert_eq(kv_setup_resolve(&o, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.model.weight_bytes, 0.5);
    cr_assert_eq(s.shard.weight_bytes_rank, 8030261248ull / 2);
    /* A preset's 2 bytes are overridden the same way; a bad name is a usage error. */
    o.model = "llama-3-8b";
    o.weight_dtype = "fp8";
    cr_assert_eq(kv_setup_resolve(&o, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.shard.weight_bytes_rank, 8030261248ull);
    o.weight_dtype = "fp9";
    cr_assert_eq(kv_setup_resolve(&o, &s, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "{weight_dtype}: unknown dtype 'fp9'");
}

Test(model, hf_qwen_biases_and_tied_embeddings)
{
    kv_model m;
    kv_diag d;
    cr_assert_eq(load("tests/data/hf/Qwen2.5-0.5B.json", &m, &d), 0, "%s", d.msg);
    cr_assert_str_eq(m.name, "Qwen2.5-0.5B");
    cr_assert_eq(m.head_dim, 64);
    cr_assert_eq(m.num_kv_heads, 2);
    /* Tied LM head (not counted twice) and q/k/v biases: 494,032,768 as published. */
    cr_assert_eq(m.num_params, 494032768ull);
    cr_assert_eq(kv_model_bytes_per_token(&m), 2.0 * 24 * 2 * 64 * 2);
}

Test(model, hf_mha_fallback_without_kv_heads)
{
    kv_model m;
    kv_diag d;
    cr_assert_eq(load("tests/data/hf/llama-7b-mha.json", &m, &d), 0, "%s", d.msg);
    cr_assert_eq(m.num_kv_heads, 32, "no num_key_value_heads: one KV head per query head");
    cr_assert_eq(m.kv_dtype, KV_DTYPE_FP16, "torch_dtype float16");
    cr_assert_eq(kv_model_bytes_per_token(&m), 512.0 * KIB);
    cr_assert_eq(m.num_params, 6738415616ull);
}

Test(model, hf_text_config_and_explicit_head_dim)
{
    kv_model m;
    kv_diag d;
    cr_assert_eq(load("tests/data/hf/text-config.json", &m, &d), 0, "%s", d.msg);
    cr_assert_eq(m.num_layers, 34);
    cr_assert_eq(m.num_kv_heads, 4);
    cr_assert_eq(m.head_dim, 256, "head_dim wins over 2560/8 = 320");
    uint64_t h = 2560, H = 8, kv = 4, dd = 256, I = 10240, V = 262208, L = 34;
    uint64_t layer = 2 * h * H * dd + 2 * h * kv * dd + 3 * h * I + 2 * h;
    cr_assert_eq(m.num_params, 2 * V * h + L * layer + h);
}

Test(model, hf_no_mlp_means_unknown_weights)
{
    kv_model m;
    kv_diag d;
    cr_assert_eq(load("tests/data/hf/no-mlp.json", &m, &d), 0, "%s", d.msg);
    cr_assert_eq(m.num_params, 0);
    cr_assert_eq(m.vocab_size, 0);
    cr_assert_eq(kv_model_bytes_per_token(&m), 131072.0);
}

typedef struct bad_config_case {
    char rel[48];
    int err;
    char msg[112];
} bad_config_case;

ParameterizedTestParameters(model, hf_errors)
{
    static bad_config_case cases[] = {
        {"tests/data/hf/malformed.json", -KV_EPARSE,
         "malformed.json:4:21: '}' expected near '\"num_hidden_layers\"'"},
        {"tests/data/hf/incomplete.json", -KV_EPARSE,
         "incomplete.json: missing required field 'num_attention_heads'"},
        {"tests/data/hf/real-layers.json", -KV_EPARSE,
         "real-layers.json: 'num_hidden_layers' must be a positive integer, not 32.0"},
        {"tests/data/hf/negative-kv-heads.json", -KV_EPARSE,
         "'num_key_value_heads' must be a positive integer, not -8"},
        {"tests/data/hf/string-heads.json", -KV_EPARSE,
         "'num_attention_heads' must be a positive integer, not \"32\""},
        {"tests/data/hf/indivisible-hidden.json", -KV_EPARSE,
         "hidden_size 4000 is not a multiple of num_attention_heads 48"},
        {"tests/data/hf/array.json", -KV_EPARSE, "array.json: expected a JSON object"},
        {"tests/data/hf/missing.json", -KV_ENOENT, "cannot open '",
         /* then the path, ": No such file or directory" */},
        {"tests/data/hf", -KV_EIO, "data/hf': Is a directory"},
        /* geometry and parameter counts that cannot be (issue 12) */
        {"tests/data/hf/kv-heads-above.json", -KV_EPARSE,
         "kv-heads-above.json: 'num_key_value_heads' is 64, more than 'num_attention_heads' 32"},
        {"tests/data/hf/kv-heads-indivisible.json", -KV_EPARSE,
         "'num_key_value_heads' 6 does not divide 'num_attention_heads' 32"},
        {"tests/data/hf/text-config-kv-heads.json", -KV_EPARSE,
         "'text_config.num_key_value_heads' 3 does not divide 'text_config.num_attention"},
        {"tests/data/hf/duplicate-key.json", -KV_EPARSE,
         "duplicate-key.json:7:23: duplicate key 'num_key_value_heads'"},
        {"tests/data/hf/moe-topk-above-experts.json", -KV_EPARSE,
         "'num_experts_per_tok' is 9, more than the 8 experts of 'num_local_experts'"},
        {"tests/data/hf/params-wrap.json", -KV_ERANGE,
         "params-wrap.json: the parameter count from 'vocab_size', 'hidden_size', the MLP"},
    };
    return cr_make_param_array(bad_config_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_config_case *c, model, hf_errors)
{
    kv_model m;
    kv_diag d;
    cr_assert_eq(load(c->rel, &m, &d), c->err, "%s: %s", c->rel, d.msg);
    cr_assert(strstr(d.msg, c->msg), "%s gave '%s'", c->rel, d.msg);
    cr_assert(strstr(d.msg, src_path(c->rel)) || strstr(d.msg, c->rel),
              "the message names the file: %s", d.msg);
}

Test(model, hf_moe_top_k_equal_to_experts_is_dense_in_effect)
{
    kv_model m;
    kv_diag d;
    cr_assert_eq(load("tests/data/hf/moe-topk-equal.json", &m, &d), 0, "%s", d.msg);
    cr_assert_eq(m.num_params, m.active_params, "every expert is active");
    /* by the formula at the top of hfconfig.c */
    uint64_t h = 2048, H = 32, kv = 4, dd = 64, Ie = 768, E = 4, V = 1000, L = 2;
    uint64_t layer = 2 * h * H * dd + 2 * h * kv * dd + E * 3 * h * Ie + h * E + 2 * h;
    cr_assert_eq(m.num_params, 2 * V * h + L * layer + h);
}

Test(model, hf_params_near_the_limit_do_not_wrap)
{
    /* The largest fields a config may hold (32-bit) with a parameter count that still fits:
     * the check is exact, not a cap on each field. */
    char *dir = make_temp_dir();
    char *p = write_file(dir, "config.json",
                         "{\"hidden_size\": 65536, \"num_attention_heads\": 1, "
                         "\"num_hidden_layers\": 1, \"vocab_size\": 4294967295, "
                         "\"intermediate_size\": 1, \"tie_word_embeddings\": true}");
    kv_model m;
    kv_diag d = {{0}};
    cr_assert_eq(kv_model_from_hf_config(p, &m, &d), 0, "%s", d.msg);
    uint64_t h = 65536, V = 4294967295u;
    cr_assert_eq(m.num_params, V * h + (4 * h * h + 3 * h + 2 * h) + h);
    free(p);
    rm_rf(dir);
    free(dir);
}

Test(model, hf_stream_and_size_limit)
{
    static const char cfg[] = "{\"hidden_size\": 4096, \"num_attention_heads\": 32, "
                              "\"num_hidden_layers\": 32}";
    FILE *f = fmemopen((void *)cfg, sizeof cfg - 1, "rb");
    kv_model m;
    kv_diag d = {{0}};
    cr_assert_eq(kv_model_from_hf_stream(f, "x/Foo/config.json", &m, &d), 0, "%s", d.msg);
    fclose(f);
    cr_assert_str_eq(m.name, "Foo");
    /* 16 MiB of blanks before the object: bounded whatever the file is (a pipe too). */
    size_t n = KV_HF_CONFIG_MAX + 1;
    char *big = malloc(n + sizeof cfg);
    memset(big, ' ', n);
    memcpy(big + n, cfg, sizeof cfg);
    f = fmemopen(big, n + sizeof cfg - 1, "rb");
    cr_assert_eq(kv_model_from_hf_stream(f, "big.json", &m, &d), -KV_EPARSE);
    fclose(f);
    free(big);
    cr_assert_str_eq(d.msg, "big.json: larger than 16 MiB (a config.json is a few KB)");
}

/* Found by fuzz_hfconfig: an ill-typed value was quoted cut at 40 bytes with no mark, so a
 * long object read as if the message ended inside it. */
Test(model, hf_long_ill_typed_value_is_shown_shortened)
{
    char *dir = make_temp_dir();
    char *p = write_file(dir, "config.json",
                         "{\"num_hidden_layers\": {\"hidden_size\": 96, "
                         "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
                         "\"head_dim\": 24}, \"num_attention_heads\": 4, \"hidden_size\": 96}");
    kv_model m;
    kv_diag d = {{0}};
    cr_assert_eq(kv_model_from_hf_config(p, &m, &d), -KV_EPARSE);
    cr_assert(strstr(d.msg, "config.json: 'num_hidden_layers' must be a positive integer, not "
                            "{\"hidden_size\":96,\"num_attention_heads\":4,"),
              "%s", d.msg);
    size_t n = strlen(d.msg);
    cr_assert(n > 3 && strcmp(d.msg + n - 3, "...") == 0, "shortened visibly: %s", d.msg);
    free(p);
    rm_rf(dir);
    free(dir);
}

Test(model, hf_validation_errors_exit_1_with_one_line)
{
    run_result r =
        run_kvsim("estimate", "--model", src_path("tests/data/hf/kv-heads-above.json"), NULL);
    assert_error_line(
        &r, 1, "kvsim: error: ", "'num_key_value_heads' is 64, more than 'num_attention_heads' 32");
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny.csv"), "--model",
                  src_path("tests/data/hf/duplicate-key.json"), NULL);
    assert_error_line(&r, 1, "kvsim: error: ", "duplicate key 'num_key_value_heads'");
    run_result_free(&r);
}

Test(model, hf_missing_file_says_why)
{
    kv_model m;
    kv_diag d;
    cr_assert_eq(load("tests/data/hf/missing.json", &m, &d), -KV_ENOENT);
    cr_assert(strstr(d.msg, "missing.json': No such file or directory"), "%s", d.msg);
}
