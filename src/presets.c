/* presets: the model and GPU presets of DESIGN §2, with where each number comes from.
 *
 * Models: the geometry is copied from each model's Hugging Face config.json (cited per
 * row); parameter counts are what the formula in hfconfig.c derives from that config, and
 * they agree with the published figures (e.g. 8,030,261,248 for Llama-3-8B, the count the
 * HF hub shows for the safetensors).  Every preset's KV dtype is bf16, the checkpoints'
 * torch_dtype, and weights are 2 bytes each.
 *
 * GPUs: datasheet figures.  Memory capacities are the marketing "GB", which for HBM and
 * GDDR parts is a binary size (the A100-80G reports 81920 MiB = 80 GiB in nvidia-smi), so
 * they are stored as GiB; drivers reserve a little (an H100-SXM shows 81559 MiB), which is
 * one reason --num-blocks exists.  Bandwidth is decimal (TB/s = 10^12 B/s).  FLOP/s are
 * dense BF16 tensor-core peaks: NVIDIA datasheets print the 2:4-sparsity figure with an
 * asterisk, and the dense figure is half of it.
 *
 * Lookup is case-insensitive; the preset's canonical spelling is what lands in kv_model.name
 * (it seeds the block hashes, DESIGN §3), so "LLAMA-3-8B" and "llama-3-8b" hash alike.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kvsim/model.h"

typedef struct model_preset {
    const char *name;        /* canonical spelling, lower case */
    uint32_t layers;         /* num_hidden_layers */
    uint32_t heads;          /* num_attention_heads */
    uint32_t kv_heads;       /* num_key_value_heads */
    uint32_t head_dim;       /* hidden / heads for every preset */
    uint32_t hidden;         /* hidden_size */
    uint32_t vocab;          /* vocab_size */
    uint64_t params, active; /* total, and touched per token (MoE: top-k experts) */
} model_preset;

static const model_preset models[] = {
    /* meta-llama/Llama-2-7b-hf config.json: 32 layers, 32 heads, 32 KV heads (MHA),
     * hidden 4096, intermediate 11008, vocab 32000. */
    {"llama-2-7b", 32, 32, 32, 128, 4096, 32000, 6738415616ull, 6738415616ull},
    /* meta-llama/Meta-Llama-3-8B config.json: 32 layers, 32 heads, 8 KV heads (GQA),
     * hidden 4096, intermediate 14336, vocab 128256. */
    {"llama-3-8b", 32, 32, 8, 128, 4096, 128256, 8030261248ull, 8030261248ull},
    /* meta-llama/Meta-Llama-3-70B config.json: 80 layers, 64 heads, 8 KV heads,
     * hidden 8192, intermediate 28672, vocab 128256. */
    {"llama-3-70b", 80, 64, 8, 128, 8192, 128256, 70553706496ull, 70553706496ull},
    /* mistralai/Mistral-7B-v0.1 config.json: 32 layers, 32 heads, 8 KV heads, hidden 4096,
     * intermediate 14336, vocab 32000 (sliding_window 4096 is not modelled). */
    {"mistral-7b", 32, 32, 8, 128, 4096, 32000, 7241732096ull, 7241732096ull},
    /* Qwen/Qwen2.5-7B config.json: 28 layers, 28 heads, 4 KV heads, hidden 3584
     * (head dim 128), intermediate 18944, vocab 152064, q/k/v biases. */
    {"qwen2.5-7b", 28, 28, 4, 128, 3584, 152064, 7615616512ull, 7615616512ull},
    /* Qwen/Qwen2.5-72B config.json: 80 layers, 64 heads, 8 KV heads, hidden 8192,
     * intermediate 29568, vocab 152064, q/k/v biases. */
    {"qwen2.5-72b", 80, 64, 8, 128, 8192, 152064, 72706203648ull, 72706203648ull},
    /* mistralai/Mixtral-8x7B-v0.1 config.json: 32 layers, 32 heads, 8 KV heads, hidden 4096,
     * 8 experts of intermediate 14336, 2 per token, vocab 32000 → 46.7 B total, 12.9 B
     * active. */
    {"mixtral-8x7b", 32, 32, 8, 128, 4096, 32000, 46702792704ull, 12879925248ull},
};

#define GIB (1024.0 * 1024.0 * 1024.0)

typedef struct gpu_preset {
    const char *name;  /* canonical spelling */
    double mem_gib;    /* datasheet capacity, GiB (see above) */
    double hbm_bw;     /* bytes/s, decimal */
    double peak_flops; /* dense BF16 FLOP/s */
} gpu_preset;

static const gpu_preset gpus[] = {
    /* NVIDIA A100 datasheet (SXM4 40GB): 40 GB HBM2, 1,555 GB/s, BF16 312 TFLOPS dense
     * (624 with sparsity). */
    {"A100-40G", 40, 1555e9, 312e12},
    /* NVIDIA A100 datasheet (SXM4 80GB): 80 GB HBM2e, 2,039 GB/s, BF16 312 TFLOPS dense. */
    {"A100-80G", 80, 2039e9, 312e12},
    /* NVIDIA H100 datasheet (SXM): 80 GB HBM3, 3.35 TB/s, BF16 1,979 TFLOPS with sparsity
     * → 989.5 dense. */
    {"H100-SXM", 80, 3.35e12, 989.5e12},
    /* NVIDIA H200 datasheet (SXM): 141 GB HBM3e, 4.8 TB/s, BF16 1,979 TFLOPS with sparsity
     * → 989.5 dense. */
    {"H200", 141, 4.8e12, 989.5e12},
    /* NVIDIA L40S datasheet: 48 GB GDDR6 with ECC, 864 GB/s, BF16 tensor 362.05 TFLOPS
     * dense (733 with sparsity). */
    {"L40S", 48, 864e9, 362.05e12},
    /* AMD Instinct MI300X datasheet: 192 GB HBM3, 5.3 TB/s peak bandwidth, BF16 1,307.4
     * TFLOPS dense (2,614.9 with sparsity). */
    {"MI300X", 192, 5.3e12, 1307.4e12},
};

#define N_MODELS (sizeof models / sizeof models[0])
#define N_GPUS   (sizeof gpus / sizeof gpus[0])

const char *kv_model_preset_names(void)
{
    return "llama-2-7b, llama-3-8b, llama-3-70b, mistral-7b, qwen2.5-7b, qwen2.5-72b, "
           "mixtral-8x7b";
}

const char *kv_gpu_preset_names(void)
{
    return "A100-40G, A100-80G, H100-SXM, H200, L40S, MI300X";
}

int kv_model_preset(const char *name, kv_model *out, kv_diag *diag)
{
    for (size_t i = 0; i < N_MODELS; i++) {
        const model_preset *p = &models[i];
        if (strcasecmp(name, p->name) != 0)
            continue;
        memset(out, 0, sizeof *out);
        snprintf(out->name, sizeof out->name, "%s", p->name);
        out->num_layers = p->layers;
        out->num_heads = p->heads;
        out->num_kv_heads = p->kv_heads;
        out->head_dim = p->head_dim;
        out->hidden_size = p->hidden;
        out->vocab_size = p->vocab;
        out->num_params = p->params;
        out->active_params = p->active;
        out->kv_dtype = KV_DTYPE_BF16;
        out->weight_bytes = 2.0;
        return 0;
    }
    return kv_diag_set(diag, -KV_ENOENT, "unknown model preset '%s' (known: %s)", name,
                       kv_model_preset_names());
}

int kv_gpu_preset(const char *name, kv_gpu *out, kv_diag *diag)
{
    for (size_t i = 0; i < N_GPUS; i++) {
        const gpu_preset *p = &gpus[i];
        if (strcasecmp(name, p->name) != 0)
            continue;
        memset(out, 0, sizeof *out);
        snprintf(out->name, sizeof out->name, "%s", p->name);
        out->mem_bytes = (uint64_t)(p->mem_gib * GIB);
        out->hbm_bw = p->hbm_bw;
        out->peak_flops = p->peak_flops;
        return 0;
    }
    return kv_diag_set(diag, -KV_ENOENT, "unknown GPU preset '%s' (known: %s)", name,
                       kv_gpu_preset_names());
}
