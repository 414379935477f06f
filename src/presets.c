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
 * asterisk, and the dense figure is half of it.  Each GPU also carries the achieved
 * fractions of those peaks and its GPU-to-GPU link, from cited microbenchmarks (below).
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
    double fp8_flops;  /* dense FP8 FLOP/s, 0 = no FP8 tensor cores */
    kv_link link;
    double mfu, mfu_fp8, mbu, attn_bw, attn_lat, layer_lat, smooth, act_bytes; /* kv_gpu */
} gpu_preset;

/* Achieved fractions, and where each comes from.  They are microbenchmark and datasheet
 * figures, never fitted to the serving results in tests/data/published/ (docs/accuracy.md
 * replays those as a test of prediction).
 *
 * [MAMF] Maximum Achievable Matmul FLOPS, stas00/ml-engineering
 *        compute/accelerator/README.md @744d01e (2026-08): best BF16 / FP8 torch.matmul over
 *        a shape search, mean of 100 iterations.  A100 SXM 271.2 TFLOPS BF16; H100 SXM 794.5
 *        BF16, 1402.6 FP8 ("H200 is the same" for BF16); H200 SXM 1453.4 FP8; MI300X 668.4
 *        BF16 (ROCm 6.3, tunable ops on).  Not measured there: L40S, MI300X FP8.
 * [A100BW] NVIDIA developer forum, "Trouble to reach peak bandwidth of A100" (2025): a read
 *        kernel on A100-SXM4-80GB reaches 1.80 of 2.04 TB/s (88 %, confirmed by Nsight), and
 *        "the maximum memory bandwidth achieved by any kernel was around 90 %" in a GTC talk.
 * [H100BW] mikamirai.com "GPU Memory Bandwidth: What Your Profiler Isn't Telling You"
 *        (2026-03-28): Nsight Compute on H100 SXM5 in a TP-8 70B decode: MLP weight loads
 *        2.6 TB/s (78 % of 3.35) — the operation mbu models, so 0.78 — while a synthetic
 *        coalesced matrix load reaches 2.8 TB/s (84 %).
 * [FD]   Flash-Decoding, Dao, Haziza, Massa, Sizov (PyTorch/Stanford CRFM blog 2023-10-12),
 *        A100, f16, 2 KV heads x 128, batch 1: 65,536 KV tokens (64 MiB) 64.4 us, 131,072
 *        (128 MiB) 106.6 us.  The slope is 1.59 TB/s = 0.78 of 2.039 TB/s; the intercept,
 *        22 us, is the fixed cost of one attention call (both kernels of split-KV).
 * [ORT]  microsoft/onnxruntime PR #21414 (2024-08-29), FlashAttention-2 paged batch decode on
 *        H100 SXM, 64 sequences, 64/8 heads x 128, page 256, nvbench GPU time: 33 MiB read
 *        28.8 us, 65 MiB 43.6 us.  Slope 2.27 TB/s = 0.68 of 3.35 TB/s; intercept 13.5 us.
 * [VIDUR] microsoft/vidur data/profiling/compute/{a100,h100}/meta-llama/Llama-2-7b-hf/mlp.csv
 *        @7d47513 (2024): median CUDA time of every operator of one Llama-2-7B layer but
 *        attention (QKV, O, gate/up and down projections, activation, RoPE, both RMSNorms,
 *        the residual add), TP 1, per number of tokens; "a100" is an 80 GB A100, "h100" a
 *        DGX H100 (docs/profiling.md).  The sum over a layer against its GEMM FLOPs (2 B
 *        weights of 202.4 M parameters) is the sustained efficiency of the work the
 *        roofline's C and M terms charge: at 2,048 tokens A100 4.172 ms = 0.637 of 312
 *        TFLOPS, H100 1.266 ms = 0.661 of 989.5 (0.626–0.650 and 0.638–0.661 from 1,024 to
 *        4,096 tokens); at 8 tokens (decode) A100 0.283 ms = 0.70 of 2.039 TB/s, H100
 *        0.172 ms = 0.70 of 3.35 TB/s (0.68–0.71 from 1 to 8 tokens).  The GEMM-only
 *        microbenchmarks above are ceilings of the same work (MAMF 0.87 and 0.80; the
 *        layer's own GEMMs alone reach 0.70 and 0.77 here): a layer also runs its small
 *        kernels, and its GEMMs are not MAMF's best shapes.  TensorRT-LLM v0.5's first-token
 *        latency (docs/source/performance.md: A100 SXM 80GB FP16, LLaMA 7B, batch 1, 2,048
 *        tokens, 133 ms) is 0.67 of 312 for a whole pass, attention included.
 * [VIDURTP] the same profiles, every model there but phi-2 (whose parallel block has one
 *        norm), 1 to 8 tokens, TP 1, 2, 4 and 8 (each rank multiplies 1/TP of every weight
 *        matrix): A100 Llama-2-7B, Llama-2-70B, Llama-3-8B, Llama-3-70B, CodeLlama-34B,
 *        InternLM-20B, Qwen-72B (112 rows); H100 the same but the Llama-3 pair (80 rows).
 *        A rank's layer time t against the weight bytes W it streams falls short of one
 *        bandwidth fraction as W shrinks (A100 0.68 of peak for Llama-2-7B at TP 1, 0.36 at
 *        TP 8), as the layer's kernels keep a fixed cost whatever their size.  t = W / (hbm
 *        · mbu) + layer_lat, by least squares on the relative error: A100 mbu 0.770,
 *        layer_lat 35.8 us (mean |error| 2.4 %, at most 9.6 %); H100 mbu 0.855, layer_lat
 *        29.2 us (1.9 %, at most 14.4 %).  One fraction for every size (0.70, the 7B TP 1
 *        figure above) errs by 13 % and 16 % on average there, at most 51 % and 56 %.  The
 *        fraction is the slope, in line with [FD]'s 0.78 and [H100BW]'s 0.84.
 * [VIDURK] the same profiles, every row of 1 to 4,096 tokens (A100 7,308, H100 5,220), with
 *        mbu and layer_lat as above: the layer against the roofline's C (its GEMM FLOPs)
 *        and M (its weights and fixed cost) as (C^p + M^p)^(1/p) + E, E = T · h ·
 *        act_bytes / hbm the activations every rank reads and writes in full (norms,
 *        residual add, the GEMMs' inputs and outputs), by the mean relative error: A100
 *        mfu 0.709, p (smooth) 1.46, act_bytes 32.1 B (mean |error| 4.2 %, at most 38 %,
 *        near the ridge, 128–256 tokens); H100 0.705, 1.32, 35.5 B (5.6 %, at most 42 %).
 *        tools/vidur_fit.py prints both fits from a Vidur checkout.
 *        max(C, M) with the one-layer figures ([VIDUR] mfu, mbu 0.70) errs there by 10.1 %
 *        and 21.4 % on average, at most 65 % and 77 %: it misses the gradual ridge, where
 *        kernels reach neither peak, and a rank's activations, which do not shrink with TP.
 * Rows marked "no measurement" keep kvsim's earlier generic values (mfu 0.6, mbu 0.8,
 * attention = mbu with no fixed cost); docs/accuracy.md lists them. */
static const gpu_preset gpus[] = {
    /* NVIDIA A100 datasheet (SXM4 40GB): 40 GB HBM2, 1,555 GB/s, BF16 312 TFLOPS dense
     * (624 with sparsity); no FP8; NVLink 3 600 GB/s (both directions) through NVSwitch.
     * mbu and layer_lat [VIDURTP] 0.770, 35.8 us; mfu, smooth, act_bytes [VIDURK] 0.709,
     * 1.46, 32.1 B (the 80 GB part's; the same chip); attention [FD].  (Before December
     * 2026 the ceilings: mfu [MAMF] 271.2/312, mbu [A100BW] 0.88; then [VIDUR] 0.637 and
     * 0.70 with max(C, M) and no layer_lat.) */
    {"A100-40G", 40, 1555e9, 312e12, 0, KV_LINK_NVLINK3, 0.709, 0.709, 0.770, 0.78, 22e-6,
     35.8e-6, 1.46, 32.1},
    /* NVIDIA A100 datasheet (SXM4 80GB): 80 GB HBM2e, 2,039 GB/s, BF16 312 TFLOPS dense.
     * Same sources as the 40 GB part. */
    {"A100-80G", 80, 2039e9, 312e12, 0, KV_LINK_NVLINK3, 0.709, 0.709, 0.770, 0.78, 22e-6,
     35.8e-6, 1.46, 32.1},
    /* NVIDIA H100 datasheet (SXM): 80 GB HBM3, 3.35 TB/s, BF16 1,979 TFLOPS with sparsity
     * → 989.5 dense, FP8 3,958 with sparsity → 1,979 dense; NVLink 4 900 GB/s.
     * mbu, layer_lat [VIDURTP] 0.855, 29.2 us; mfu, smooth, act_bytes [VIDURK] 0.705, 1.32,
     * 35.5 B; mfu_fp8 [MAMF] 1402.6/1979 (no layer profile in FP8: a ceiling); attention
     * [ORT].  (Before December 2026: mfu [MAMF] 794.5/989.5, mbu [H100BW] 0.78; then
     * [VIDUR] 0.661 and 0.70 with max(C, M) and no layer_lat.)  The one published H100
     * serving source replayed (docs/accuracy.md, S2) fits mfu 0.35 instead, with its
     * bandwidth intact: a GPU that ran its GEMMs at half the profiled rate; not a default. */
    {"H100-SXM", 80, 3.35e12, 989.5e12, 1979e12, KV_LINK_NVLINK4, 0.705, 1402.6 / 1979, 0.855,
     0.68, 13.5e-6, 29.2e-6, 1.32, 35.5},
    /* NVIDIA H200 datasheet (SXM): 141 GB HBM3e, 4.8 TB/s, BF16 1,979 TFLOPS with sparsity
     * → 989.5 dense, FP8 1,979 dense; NVLink 4 900 GB/s.  mfu [VIDURK] as H100 (the same chip
     * and clocks), mfu_fp8 [MAMF] 1453.4/1979.  No measurement of its memory or attention
     * efficiency: the H100's fractions and fixed costs (same Hopper chip and memory system,
     * faster HBM3e). */
    {"H200", 141, 4.8e12, 989.5e12, 1979e12, KV_LINK_NVLINK4, 0.705, 1453.4 / 1979, 0.855,
     0.68, 13.5e-6, 29.2e-6, 1.32, 35.5},
    /* NVIDIA L40S datasheet: 48 GB GDDR6 with ECC, 864 GB/s, BF16 tensor 362.05 TFLOPS dense
     * (733 with sparsity), FP8 733 dense (1,466 with sparsity); PCIe Gen4 x16, no NVLink.
     * No measurement of any efficiency. */
    {"L40S", 48, 864e9, 362.05e12, 733e12, KV_LINK_PCIE4, 0.6, 0.6, 0.8, 0.8, 0, 0, 0, 0},
    /* AMD Instinct MI300X datasheet: 192 GB HBM3, 5.3 TB/s peak bandwidth, BF16 1,307.4
     * TFLOPS dense (2,614.9 with sparsity), FP8 2,614.9 dense; 7 Infinity Fabric links, one
     * per peer in an 8-GPU platform.  mfu [MAMF] 668.4/1307.4; no FP8, memory or attention
     * measurement. */
    {"MI300X", 192, 5.3e12, 1307.4e12, 2614.9e12, KV_LINK_XGMI3, 668.4 / 1307.4, 668.4 / 1307.4,
     0.8, 0.8, 0, 0, 0, 0},
};

/* All-reduce figures of each link: bus bandwidth (nccl-tests busbw, bytes/s) and latency
 * (s per all-reduce).
 * NVLINK3  NVIDIA/nccl-tests #149 (2023-06): 8x A100-SXM4-80GB, NCCL 2.18, all_reduce busbw
 *          "~200 GB/s"; NVIDIA/nccl-tests #331: 8-byte all_reduce over A100 NVLink 3, 9.85 us.
 * NVLINK4  NVIDIA/nccl-tests #212 (2024-05, NVIDIA's sjeaugey): 450 GB/s line rate, "NCCL can
 *          get an effective NVLink bandwidth of 370GB/s" for a ring; vllm-project/vllm PR
 *          #24532 (2025-09), vLLM's benchmark_device_communicators on 4x H100: best 0.5 MiB
 *          all-reduce 10 us, so 10 − 1.5 · 0.52 MB / 370 GB/s ≈ 8 us of latency.
 * PCIE4/5  line rate 32 / 64 GB/s per direction (PCIe Gen4 / Gen5 x16) less the ~20 %
 *          protocol overhead NVIDIA quotes for NVLink (#212): an assumption, no measurement;
 *          latency NVIDIA/nccl #1530 (2024-11): 8-byte all_reduce over PCIe, 8 GPUs, 42 us.
 * XGMI3    ROCm/rccl #1210 (2024-07, AMD's gilbertlee): MI300X xGMI "max theoretical
 *          per-direction bandwidth ... is 48GB/s" per link after protocol and ECC; one link
 *          per peer, so a group of tp ranks has (tp − 1) · 48 GB/s (ROCm/rccl PR #1270: fewer
 *          than 8 GPUs use a fraction of the links).  Latency: no measurement; NVLink 4's. */
typedef struct link_preset {
    const char *name;
    double bw;     /* bus bandwidth, bytes/s (per peer link for XGMI3) */
    double lat;    /* s per all-reduce */
    bool per_peer; /* bandwidth scales with tp − 1 */
} link_preset;

static const link_preset links[] = {
    [KV_LINK_NONE] = {"none", 0, 0, false},
    [KV_LINK_NVLINK3] = {"nvlink3", 200e9, 9.85e-6, false},
    [KV_LINK_NVLINK4] = {"nvlink4", 370e9, 8e-6, false},
    [KV_LINK_PCIE4] = {"pcie4", 0.8 * 32e9, 42e-6, false},
    [KV_LINK_PCIE5] = {"pcie5", 0.8 * 64e9, 42e-6, false},
    [KV_LINK_XGMI3] = {"xgmi3", 48e9, 8e-6, true},
};

#define N_LINKS (sizeof links / sizeof links[0])

int kv_link_parse(const char *s, kv_link *out)
{
    for (size_t i = 0; i < N_LINKS; i++) {
        if (strcasecmp(s, links[i].name) == 0) {
            *out = (kv_link)i;
            return 0;
        }
    }
    return -KV_EINVAL;
}

const char *kv_link_name(kv_link l)
{
    return (size_t)l < N_LINKS ? links[l].name : "?";
}

const char *kv_link_names(void)
{
    return "none, nvlink3, nvlink4, pcie4, pcie5, xgmi3";
}

void kv_link_allreduce(kv_link l, uint32_t tp, double *bw, double *lat)
{
    const link_preset *p = &links[(size_t)l < N_LINKS ? l : KV_LINK_NONE];
    *bw = p->per_peer ? p->bw * (tp > 1 ? tp - 1 : 1) : p->bw;
    *lat = p->lat;
}

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
        out->fp8_flops = p->fp8_flops;
        out->link = p->link;
        out->mfu = p->mfu;
        out->mfu_fp8 = p->mfu_fp8;
        out->mbu = p->mbu;
        out->attn_bw = p->attn_bw;
        out->attn_lat = p->attn_lat;
        out->layer_lat = p->layer_lat;
        out->smooth = p->smooth;
        out->act_bytes = p->act_bytes;
        return 0;
    }
    return kv_diag_set(diag, -KV_ENOENT, "unknown GPU preset '%s' (known: %s)", name,
                       kv_gpu_preset_names());
}
