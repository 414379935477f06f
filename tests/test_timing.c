/* Step-time models (include/kvsim/timing.h, DESIGN §6 "Step time"): the roofline's TP and
 * PP terms and per-GPU efficiencies against step times computed by hand, the parse /
 * describe round trip of every parameter, every bad-input message, and the promise that
 * with the new terms zeroed the roofline is the pre-change formula — step by step through
 * the real engine, so block counts, hits and preemptions cannot move. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/sim.h"
#include "kvsim/model.h"
#include "kvsim/timing.h"
#include "support.h"

/* A 70B-shaped model with round numbers; vocab 0, so no embedding or LM-head terms. */
static kv_model round_model(void)
{
    kv_model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "round70");
    m.num_layers = 80;
    m.num_heads = 64;
    m.num_kv_heads = 8;
    m.head_dim = 128;
    m.hidden_size = 8192;
    m.num_params = m.active_params = 70000000000ull;
    m.kv_dtype = KV_DTYPE_BF16;
    m.weight_bytes = 2.0;
    return m;
}

/* A GPU with round numbers and no efficiencies of its own worth testing. */
static kv_gpu round_gpu(void)
{
    kv_gpu g;
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "round");
    g.mem_bytes = 80ull << 30;
    g.hbm_bw = 2e12;
    g.peak_flops = 1e15;
    g.link = KV_LINK_NVLINK4;
    g.mfu = g.mfu_fp8 = g.mbu = g.attn_bw = 0.5;
    return g;
}

static kv_timing bound(const char *spec, const kv_model *m, const kv_gpu *g, uint32_t tp,
                       uint32_t pp)
{
    kv_timing t;
    kv_diag d;
    kv_shard s;
    cr_assert_eq(kv_timing_parse(spec, &t, &d), 0, "%s", d.msg);
    cr_assert_eq(kv_shard_compute(m, tp, pp, &s, &d), 0, "%s", d.msg);
    kv_timing_bind(&t, m, g, &s);
    return t;
}

static int64_t step(const kv_timing *t, uint64_t tokens, uint64_t read, uint64_t streamed,
                    uint32_t seqs)
{
    kv_step_load ld = {tokens, read, streamed, seqs};
    return kv_timing_step(t, &ld);
}

/* ---- TP and PP against hand-computed step times ---------------------------------------- */

#define EXPLICIT                                                                                   \
    "roofline:overhead=0.001,seq_overhead=0,mfu=0.5,mbu=0.5,attn=0.5,attn_lat=0,ar_bw=1e11,"       \
    "ar_lat=1e-5,pp_bw=1e11,pp_lat=2e-5"

Test(timing, tp4_decode_adds_two_allreduces_per_layer)
{
    /* 16 decodes of 1,000-token histories on TP 4.  Per rank: weights 140e9/4 = 35e9 B,
     * c_rank = 2·80·(8/4)·128·2 = 81,920 B.
     *   C = (2·70e9·16 + 4·80·64·128·16,000) / (4 · 1e15 · 0.5) = 1.14097152 ms
     *   M = (35e9 + 16,016 · 81,920) / (2e12 · 0.5)             = 36.31203072 ms
     *   A = 2·80·(1e-5 + 2·3/4 · 16·8192·2 B / 1e11)            = 2.2291456 ms
     *   step = 1 ms + M + A = 39.54117632 ms */
    kv_model m = round_model();
    kv_gpu g = round_gpu();
    kv_timing t = bound(EXPLICIT, &m, &g, 4, 1);
    cr_assert_eq(step(&t, 16, 16000, 16000, 16), 39541176);
    /* The same step on one GPU has no communication term: 1 ms + (140e9 + 16,016·327,680)
     * / 1e12 = 146.24812288 ms. */
    kv_timing t1 = bound(EXPLICIT, &m, &g, 1, 1);
    cr_assert_eq(step(&t1, 16, 16000, 16000, 16), 146248123);
}

Test(timing, tp8_prefill_allreduce_is_bandwidth_bound)
{
    /* An 8,192-token prefill on TP 8: per rank 17.5e9 B of weights, c_rank 40,960 B.
     *   C = (2·70e9·8192 + 4·80·64·128·33,558,528) / (8·1e15·0.5)
     *     = (1.14688e15 + 8.797166764e13 FLOP) / 4e15                  = 308.7129169 ms
     *   M = (17.5e9 + 16,384·40,960) / 1e12                          = 18.17108864 ms
     *   A = 160 · (1e-5 + 2·7/8 · 8192·8192·2 B / 1e11)              = 376.3872 ms
     *   step = 1 ms + C + A */
    kv_model m = round_model();
    kv_gpu g = round_gpu();
    kv_timing t = bound(EXPLICIT, &m, &g, 8, 1);
    uint64_t pairs = 8192ull * 8193 / 2;
    double c = (2 * 70e9 * 8192 + 4.0 * 80 * 64 * 128 * (double)pairs) / (8 * 1e15 * 0.5);
    double a = 160 * (1e-5 + 2 * 7.0 / 8 * 8192.0 * 8192 * 2 / 1e11);
    cr_assert_eq(step(&t, 8192, pairs, 8192, 1), llround((0.001 + c + a) * 1e9));
    cr_assert(fabs(c - 0.3087129169) < 1e-9, "compute term %.10f", c);
}

Test(timing, pp2_runs_both_stages_and_hands_activations_over)
{
    /* PP 2, TP 1: each stage holds 40 layers, 70e9 B of weights, c_rank 163,840 B.
     *   stage = M = (70e9 + 16,016·163,840) / 1e12 = 72.62406144 ms (C = 2.28 ms)
     *   X = (2 − 1) · (2e-5 + 16·8192·2 B / 1e11)  = 0.02262144 ms
     *   step = 1 ms + 2 · stage + X = 146.27074432 ms */
    kv_model m = round_model();
    kv_gpu g = round_gpu();
    kv_timing t = bound(EXPLICIT, &m, &g, 1, 2);
    cr_assert_eq(step(&t, 16, 16000, 16000, 16), 146270744);
}

/* seq_overhead's default (timing.h KV_ROOFLINE_SEQ_OVERHEAD_S): vLLM's own scheduler costs
 * 9.5 us of host time per running request and step (tools/vllm_sched_cpu.py).  The round
 * model has no vocabulary, so the number of requests changes nothing but the host part:
 * 16 requests against 1 in the same tokens cost 15 · 9.5 us more in a sync engine, and
 * nothing more where the GPU part hides the host's (async). */
Test(timing, seq_overhead_default_is_the_schedulers_measured_cost)
{
    kv_model m = round_model();
    kv_gpu g = round_gpu();
    kv_timing t = bound("roofline", &m, &g, 1, 1);
    cr_assert_eq(t.seq_overhead_s, 9.5e-6);
    cr_assert_eq(step(&t, 16, 16000, 16000, 16) - step(&t, 16, 16000, 16000, 1), 142500);
    t.overlap_host = true;
    cr_assert_eq(step(&t, 16, 16000, 16000, 16), step(&t, 16, 16000, 16000, 1));
    char desc[KV_TIMING_DESCRIBE_MAX];
    kv_timing_describe(&t, desc, sizeof desc);
    cr_assert(strstr(desc, ",seq_overhead=9.5e-06,") != NULL, "%s", desc);
    /* A spec that names it wins. */
    t = bound("roofline:seq_overhead=0", &m, &g, 1, 1);
    cr_assert_eq(step(&t, 16, 16000, 16000, 16), step(&t, 16, 16000, 16000, 1));
}

/* Async scheduling (timing.h overlap_host): the host part (overhead + seq_overhead·N)
 * overlaps the GPU's, so the step is the larger of the two, PP hand-offs on the GPU side. */
Test(timing, async_hides_the_host_part_behind_the_gpu)
{
    kv_model m = round_model();
    kv_gpu g = round_gpu();
    /* The TP-4 decode above: GPU part 36.31203072 + 2.2291456 ms = 38.54117632 ms. */
    kv_timing t = bound(EXPLICIT, &m, &g, 4, 1);
    t.seq_overhead_s = 0.0001;
    cr_assert_eq(step(&t, 16, 16000, 16000, 16), 39541176 + 1600000, "sync: host + GPU");
    t.overlap_host = true;
    cr_assert_eq(step(&t, 16, 16000, 16000, 16), 38541176, "async: max(2.6 ms, GPU)");
    /* A host-bound step: 50 ms of overhead against the same GPU work. */
    kv_timing h = bound(EXPLICIT, &m, &g, 4, 1);
    h.overhead_s = 0.05;
    h.overlap_host = true;
    cr_assert_eq(step(&h, 16, 16000, 16000, 16), 50000000);
    /* PP 2: the hand-off is GPU time, 2 · 72.62406144 + 0.02262144 ms. */
    kv_timing p = bound(EXPLICIT, &m, &g, 1, 2);
    p.overlap_host = true;
    cr_assert_eq(step(&p, 16, 16000, 16000, 16), 145270744);
    /* Fixed and linear models have no host part of their own: unchanged. */
    kv_timing f = bound("fixed:0.01", &m, &g, 1, 1);
    f.overlap_host = true;
    cr_assert_eq(step(&f, 16, 16000, 16000, 16), 10000000);
}

Test(timing, link_defaults_follow_the_preset_and_the_link_key)
{
    kv_model m = round_model();
    kv_gpu g = round_gpu(); /* nvlink4: 370 GB/s, 8 us (src/presets.c) */
    kv_timing t = bound("roofline", &m, &g, 4, 1);
    cr_assert_eq(t.link, KV_LINK_NVLINK4);
    cr_assert_eq(t.ar_bw, 370e9);
    cr_assert_eq(t.ar_lat_s, 8e-6);
    /* link=pcie4 brings PCIe's figures; an explicit ar_lat still wins. */
    t = bound("roofline:ar_lat=3e-5,link=pcie4", &m, &g, 4, 1);
    cr_assert_eq(t.link, KV_LINK_PCIE4);
    cr_assert_eq(t.ar_bw, 0.8 * 32e9);
    cr_assert_eq(t.ar_lat_s, 3e-5);
    /* xGMI bandwidth grows with the peers in the group: (tp − 1) · 48 GB/s. */
    t = bound("roofline:link=xgmi3", &m, &g, 8, 1);
    cr_assert_eq(t.ar_bw, 7 * 48e9);
    t = bound("roofline:link=xgmi3", &m, &g, 2, 1);
    cr_assert_eq(t.ar_bw, 48e9);
    /* link=none charges nothing for TP traffic. */
    t = bound(
        "roofline:overhead=0.001,seq_overhead=0,mfu=0.5,mbu=0.5,attn=0.5,attn_lat=0,link=none", &m,
        &g, 4, 1);
    cr_assert_eq(step(&t, 16, 16000, 16000, 16), 1000000 + 36312031);
}

/* ---- per-GPU efficiencies against hand-computed step times ---------------------------- */

/* Parameters are copied into each test's process, so strings are stored inline. */
typedef struct gpu_case {
    char gpu[16];
    double hbm, mbu, attn, attn_lat, layer_lat, smooth, act_bytes; /* the cited preset figures */
} gpu_case;

ParameterizedTestParameters(timing, decode_uses_the_gpu_s_cited_efficiencies)
{
    static gpu_case cases[] = {
        /* mbu, layer_lat: Vidur's decode layers at TP 1-8 (presets.c [VIDURTP]) */
        /* smooth, act_bytes: Vidur's layers at 1-4,096 tokens (presets.c [VIDURK]) */
        {"A100-40G", 1555e9, 0.770, 0.78, 22e-6, 35.8e-6, 1.46, 32.1},
        {"A100-80G", 2039e9, 0.770, 0.78, 22e-6, 35.8e-6, 1.46, 32.1},
        {"H100-SXM", 3.35e12, 0.855, 0.68, 13.5e-6, 29.2e-6, 1.32, 35.5},
        {"H200", 4.8e12, 0.855, 0.68, 13.5e-6, 29.2e-6, 1.32, 35.5},
        {"L40S", 864e9, 0.8, 0.8, 0, 0, 0, 0},
        {"MI300X", 5.3e12, 0.8, 0.8, 0, 0, 0, 0},
    };
    return cr_make_param_array(gpu_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(gpu_case *c, timing, decode_uses_the_gpu_s_cited_efficiencies)
{
    /* Llama-3-8B (untied, V·h = 128,256·4,096 = 525,336,576), one decode over 1,000 tokens:
     * the embedding table is not streamed, so W = (8,030,261,248 − 525,336,576) · 2 B, and
     * the KV history goes at the attention efficiency plus 32 fixed per-layer costs (the
     * attention call's and the rest of the layer's).  The compute term C is blended in by
     * the smooth maximum, and the step's one token moves 32 · 4,096 · act_bytes bytes of
     * activations. */
    kv_model m;
    kv_gpu g;
    kv_diag d;
    cr_assert_eq(kv_model_preset("llama-3-8b", &m, &d), 0);
    cr_assert_eq(kv_gpu_preset(c->gpu, &g, &d), 0);
    kv_timing t = bound("roofline", &m, &g, 1, 1);
    double w = (8030261248.0 - 525336576.0) * 2;
    double kv = 1001.0 * 131072;
    double mem =
        w / (c->hbm * c->mbu) + kv / (c->hbm * c->attn) + 32 * (c->attn_lat + c->layer_lat);
    double flops =
        2 * (8030261248.0 - 2 * 525336576.0) + 2 * 525336576.0 + 4.0 * 32 * 32 * 128 * 1000;
    double comp = flops / (g.peak_flops * g.mfu);
    double stage =
        c->smooth > 0 ? pow(pow(comp, c->smooth) + pow(mem, c->smooth), 1 / c->smooth) : mem;
    double host = 0.002 + 9.5e-6; /* overhead + seq_overhead · 1 (timing.h defaults) */
    double want = host + stage + 32 * 4096 * c->act_bytes / c->hbm;
    cr_assert(llabs(step(&t, 1, 1000, 1000, 1) - llround(want * 1e9)) <= 1, "%s", c->gpu);
    /* Without the two new terms the step is exactly the weights and the history. */
    t = bound("roofline:smooth=0,act_bytes=0", &m, &g, 1, 1);
    cr_assert_eq(step(&t, 1, 1000, 1000, 1), llround((host + mem) * 1e9), "%s", c->gpu);
}

Test(timing, smooth_maximum_and_activation_traffic)
{
    /* The round GPU and model, TP 2, a 512-token chunk after 0 computed (read 131,328 pairs,
     * streamed 512).  Per rank: weights 70e9 B, c_rank 163,840 B, 80 layers.
     *   C = (2·70e9·512 + 4·80·64·128·131,328) / (2 · 1e15 · 0.5) = 71.3442 ms (rounded)
     *   M = (70e9 + 1,024 · 163,840) / (2e12 · 0.5)               = 70.1677 ms
     * smooth = 2: √(C² + M²); act_bytes = 30: E = 80 · 512 · 8,192 · 30 B / 2e12 = 5.0331648
     * ms.  No overhead and no all-reduce, so the step is √(C² + M²) + E. */
    kv_model m = round_model();
    kv_gpu g = round_gpu();
    const char *spec =
        "roofline:overhead=0,seq_overhead=0,mfu=0.5,mbu=0.5,attn=0.5,attn_lat=0,link=none,"
        "smooth=2,act_bytes=30";
    kv_timing t = bound(spec, &m, &g, 2, 1);
    double pairs = 512.0 * 513 / 2;
    double c = (2 * 70e9 * 512 + 4.0 * 80 * 64 * 128 * pairs) / (2 * 1e15 * 0.5);
    double mm = (70e9 + 1024.0 * 163840) / (2e12 * 0.5);
    double e = 80 * 512 * 8192 * 30.0 / 2e12;
    cr_assert(fabs(e - 0.0050331648) < 1e-12);
    int64_t got = step(&t, 512, (uint64_t)pairs, 512, 1);
    cr_assert(llabs(got - llround((sqrt(c * c + mm * mm) + e) * 1e9)) <= 1, "%lld", (long long)got);
    /* smooth = 0 is the maximum; a large p approaches it; p = 1 is the sum. */
    t = bound(
        "roofline:overhead=0,seq_overhead=0,mfu=0.5,mbu=0.5,attn=0.5,attn_lat=0,link=none,smooth=0,"
        "act_bytes=0",
        &m, &g, 2, 1);
    cr_assert_eq(step(&t, 512, (uint64_t)pairs, 512, 1), llround((c > mm ? c : mm) * 1e9));
    t = bound(
        "roofline:overhead=0,seq_overhead=0,mfu=0.5,mbu=0.5,attn=0.5,attn_lat=0,link=none,smooth=1,"
        "act_bytes=0",
        &m, &g, 2, 1);
    cr_assert(llabs(step(&t, 512, (uint64_t)pairs, 512, 1) - llround((c + mm) * 1e9)) <= 1);
    t = bound("roofline:overhead=0,seq_overhead=0,mfu=0.5,mbu=0.5,attn=0.5,attn_lat=0,link=none,"
              "smooth=100,"
              "act_bytes=0",
              &m, &g, 2, 1);
    int64_t near = step(&t, 512, (uint64_t)pairs, 512, 1);
    cr_assert(near > llround(c * 1e9) && near < llround(c * 1.01 * 1e9), "%lld", (long long)near);
    /* An empty step (C = 0, no tokens) is the weights' time alone: neither term adds. */
    t = bound(spec, &m, &g, 2, 1);
    cr_assert_eq(step(&t, 0, 0, 0, 0), llround(70e9 / (2e12 * 0.5) * 1e9));
}

Test(timing, prefill_uses_the_layer_efficiency_and_fp8_peak)
{
    /* An 8,192-token Llama-3-8B prefill is compute-bound.  GEMMs: 2 · P_tok · T with P_tok =
     * 8,030,261,248 − 2 · 525,336,576, plus the LM head once; attention 4·32·32·128 per
     * (query, key) pair.  bf16 on H100 runs at the GEMM efficiency of Vidur's layers, 0.705
     * of 989.5 TFLOPS (src/presets.c [VIDURK]); the smooth maximum and the activation
     * traffic are left out here (smooth_maximum_and_activation_traffic tests them). */
    kv_model m;
    kv_gpu h100, a100;
    kv_diag d;
    cr_assert_eq(kv_model_preset("llama-3-8b", &m, &d), 0);
    cr_assert_eq(kv_gpu_preset("H100-SXM", &h100, &d), 0);
    cr_assert_eq(kv_gpu_preset("A100-80G", &a100, &d), 0);
    uint64_t pairs = 8192ull * 8193 / 2;
    double host = 0.002 + 9.5e-6; /* overhead + seq_overhead · 1 request (timing.h defaults) */
    double gemm = 2 * (8030261248.0 - 2 * 525336576.0) * 8192 + 2 * 525336576.0;
    double attn = 4.0 * 32 * 32 * 128 * (double)pairs;
    kv_timing t = bound("roofline:smooth=0,act_bytes=0", &m, &h100, 1, 1);
    int64_t bf16 = step(&t, 8192, pairs, 8192, 1);
    cr_assert(llabs(bf16 - llround((host + (gemm + attn) / (0.705 * 989.5e12)) * 1e9)) <= 1, "%lld",
              (long long)bf16);
    /* FP8 weights: GEMMs at the FP8 MAMF 1,402.6 TFLOPS (a ceiling: no FP8 layer profile),
     * attention still at bf16's. */
    m.weight_bytes = 1.0;
    t = bound("roofline:smooth=0,act_bytes=0", &m, &h100, 1, 1);
    int64_t fp8 = step(&t, 8192, pairs, 8192, 1);
    cr_assert(llabs(fp8 - llround((host + gemm / 1402.6e12 + attn / (0.705 * 989.5e12)) * 1e9)) <=
                  1,
              "%lld", (long long)fp8);
    /* The A100 has no FP8 tensor cores: FP8 weights run at its bf16 efficiency, 0.709 of
     * 312 TFLOPS. */
    t = bound("roofline:smooth=0,act_bytes=0", &m, &a100, 1, 1);
    int64_t a = step(&t, 8192, pairs, 8192, 1);
    cr_assert(llabs(a - llround((host + (gemm + attn) / (0.709 * 312e12)) * 1e9)) <= 1, "%lld",
              (long long)a);
}

Test(timing, attention_efficiency_curve_rises_with_kv_read)
{
    /* No weights, no overhead: the step is the attention term alone, L·attn_lat + x/(hbm·attn),
     * i.e. an effective bandwidth attn·x/(x + attn·hbm·attn_lat) per layer. */
    kv_model m = round_model();
    m.num_params = m.active_params = 0;
    kv_gpu g = round_gpu();
    kv_timing t =
        bound("roofline:overhead=0,seq_overhead=0,mbu=0.9,attn=0.6,attn_lat=1e-5", &m, &g, 1, 1);
    double c = 327680; /* c_rank, 80 layers */
    double prev = 0;
    for (uint64_t hist = 100; hist <= 1000000; hist *= 10) {
        double x = (hist + 1) * c;
        int64_t ns = step(&t, 1, hist, hist, 1);
        cr_assert_eq(ns, llround((80 * 1e-5 + x / (2e12 * 0.6)) * 1e9));
        double per_layer = x / 80;
        double eff = 0.6 * per_layer / (per_layer + 0.6 * 2e12 * 1e-5);
        cr_assert(fabs(x / (ns * 1e-9) / 2e12 - eff) < 1e-6, "efficiency at %llu",
                  (unsigned long long)hist);
        cr_assert(eff > prev && eff < 0.6);
        prev = eff;
    }
}

Test(timing, lm_head_once_per_request_and_tied_tables_are_streamed)
{
    kv_model m;
    kv_gpu g;
    kv_diag d;
    cr_assert_eq(kv_model_preset("llama-3-8b", &m, &d), 0);
    cr_assert_eq(kv_gpu_preset("H100-SXM", &g, &d), 0);
    kv_timing t = bound("roofline", &m, &g, 1, 1);
    cr_assert_eq(t.head_params, 525336576.0);
    cr_assert_eq(t.active_params, 8030261248.0 - 2 * 525336576.0);
    cr_assert_eq(t.weight_bytes_rank, (8030261248.0 - 525336576.0) * 2);
    m.tied_embeddings = true; /* the same count, read as a tied model would be */
    t = bound("roofline", &m, &g, 1, 1);
    cr_assert_eq(t.active_params, 8030261248.0 - 525336576.0);
    cr_assert_eq(t.weight_bytes_rank, 8030261248.0 * 2);
    /* The compatibility entry point charges logits for every token. */
    kv_step_load ld = {8192, 8192ull * 8193 / 2, 8192, 8192};
    cr_assert_eq(kv_timing_step_ns(&t, ld.tokens, ld.kv_tokens_read, ld.kv_tokens_streamed),
                 kv_timing_step(&t, &ld));
}

/* ---- with the new terms zeroed, the pre-change roofline exactly ---------------------- */

/* The roofline before per-GPU efficiencies and communication, as it was written:
 * overhead + PP · max(flops / (TP·PP · peak · mfu), bytes / (hbm · mbu)). */
static int64_t old_roofline(double overhead, double mfu, double mbu, const kv_model *m,
                            const kv_gpu *g, const kv_shard *s, uint64_t tokens, uint64_t read,
                            uint64_t streamed)
{
    double active = (double)(m->active_params ? m->active_params : m->num_params);
    double pair = 4.0 * m->num_layers * (double)m->num_heads * m->head_dim;
    double flops = 2.0 * active * (double)tokens + pair * (double)read;
    double ranks = (double)s->tp * s->pp;
    double compute = flops / (ranks * g->peak_flops * mfu);
    double bytes = (double)s->weight_bytes_rank +
                   ((double)streamed + (double)tokens) * s->bytes_per_token_rank;
    double memory = bytes / (g->hbm_bw * mbu);
    double sec = overhead + s->pp * (compute > memory ? compute : memory);
    return llround(sec * 1e9);
}

#define ZEROED                                                                                     \
    "roofline:overhead=0.002,seq_overhead=0,mfu=0.6,mbu=0.8,attn=0.8,attn_lat=0,layer_lat=0,"      \
    "smooth=0,act_bytes=0"

Test(timing, zeroed_terms_are_the_old_roofline_on_a_grid)
{
    const char *gpus[] = {"A100-40G", "A100-80G", "H100-SXM", "H200", "L40S", "MI300X"};
    kv_model m;
    kv_diag d;
    cr_assert_eq(kv_model_preset("llama-3-70b", &m, &d), 0);
    m.vocab_size = 0; /* unknown vocabulary: no embedding or LM-head accounting */
    for (size_t gi = 0; gi < sizeof gpus / sizeof gpus[0]; gi++) {
        kv_gpu g;
        cr_assert_eq(kv_gpu_preset(gpus[gi], &g, &d), 0);
        kv_shard s;
        cr_assert_eq(kv_shard_compute(&m, 1, 1, &s, &d), 0);
        kv_timing t = bound(ZEROED, &m, &g, 1, 1);
        for (uint64_t n = 0; n <= 8192; n = n ? n * 4 : 1)
            for (uint64_t c = 0; c <= 100000; c = c ? c * 10 : 10) {
                uint64_t read = n * c + n * (n + 1) / 2, streamed = n ? c + n : 0;
                cr_assert_eq(step(&t, n, read, streamed, n ? 1 : 0),
                             old_roofline(0.002, 0.6, 0.8, &m, &g, &s, n, read, streamed),
                             "%s n=%llu c=%llu", gpus[gi], (unsigned long long)n,
                             (unsigned long long)c);
            }
    }
}

/* Every step of a real trace through the engine: the zeroed roofline's step times equal
 * the old formula's on that step's batch, so everything downstream is unchanged. */
typedef struct check_ctx {
    const kv_model *m;
    const kv_gpu *g;
    const kv_shard *s;
    uint64_t steps, mismatches;
} check_ctx;

static void check_step(void *ctx, const kv_step_view *v)
{
    check_ctx *c = ctx;
    c->steps++;
    if (v->batch->tokens == 0)
        return;
    int64_t want = old_roofline(0.002, 0.6, 0.8, c->m, c->g, c->s, v->batch->tokens,
                                v->batch->kv_tokens_read, v->batch->kv_tokens_streamed);
    if (v->end_ns - v->start_ns != want)
        c->mismatches++;
}

Test(timing, zeroed_terms_keep_every_engine_step_of_a_trace)
{
    kv_model m;
    kv_gpu g;
    kv_diag d;
    kv_shard s;
    cr_assert_eq(kv_model_preset("llama-3-8b", &m, &d), 0);
    m.vocab_size = 0;
    cr_assert_eq(kv_gpu_preset("A100-40G", &g, &d), 0);
    cr_assert_eq(kv_shard_compute(&m, 1, 1, &s, &d), 0);
    kv_trace *tr;
    kv_trace_options opt = {.limit = 300};
    cr_assert_eq(kv_trace_load(&tr, src_path("traces/azure_conv_1000.csv"), &opt, &d), 0, "%s",
                 d.msg);
    /* 2000 blocks: small enough to preempt; the steps are the zeroed roofline bound below */
    kv_engine_config c = test_engine_config(2000, 16, "roofline");
    c.sched.watermark = 0.01;
    c.timing = bound(ZEROED, &m, &g, 1, 1);
    check_ctx ctx = {&m, &g, &s, 0, 0};
    c.on_step_end = check_step;
    c.ctx = &ctx;
    kv_run_result r;
    cr_assert_eq(kv_replay(&c, tr, "llama-3-8b", "bf16", 0, NULL, &r, &d), 0, "%s", d.msg);
    cr_assert(ctx.steps > 100);
    cr_assert_eq(ctx.mismatches, 0, "%llu of %llu steps differ", (unsigned long long)ctx.mismatches,
                 (unsigned long long)ctx.steps);
    cr_assert(r.stats.sched.preemptions > 0, "the pool should be small enough to preempt");
    kv_run_result_release(&r);
    kv_trace_free(tr);
}

Test(timing, fixed_steps_ignore_every_roofline_term)
{
    kv_model m = round_model();
    kv_gpu g = round_gpu();
    kv_timing t = bound("fixed:0.01", &m, &g, 8, 2);
    cr_assert_eq(step(&t, 8192, 1u << 30, 8192, 64), 10000000);
    t = bound("linear:0.001,1e-6,1e-9", &m, &g, 8, 2);
    cr_assert_eq(step(&t, 1000, 1000000, 1000, 4), llround((0.001 + 1e-3 + 1e-3) * 1e9));
}

/* ---- describe / parse round trip ------------------------------------------------------- */

Test(timing, describe_parses_back_for_every_preset_and_parallelism)
{
    const char *gpus[] = {"A100-40G", "A100-80G", "H100-SXM", "H200", "L40S", "MI300X"};
    kv_model m;
    kv_diag d;
    cr_assert_eq(kv_model_preset("llama-3-70b", &m, &d), 0);
    for (size_t gi = 0; gi < sizeof gpus / sizeof gpus[0]; gi++)
        for (uint32_t tp = 1; tp <= 8; tp *= 2)
            for (uint32_t pp = 1; pp <= 2; pp++) {
                kv_gpu g;
                cr_assert_eq(kv_gpu_preset(gpus[gi], &g, &d), 0);
                kv_timing a = bound("roofline", &m, &g, tp, pp);
                char s1[KV_TIMING_DESCRIBE_MAX], s2[KV_TIMING_DESCRIBE_MAX];
                kv_timing_describe(&a, s1, sizeof s1);
                cr_assert(strlen(s1) < sizeof s1 - 1);
                kv_timing b = bound(s1, &m, &g, tp, pp);
                kv_timing_describe(&b, s2, sizeof s2);
                cr_assert_str_eq(s1, s2);
                uint64_t loads[][4] = {{1, 1000, 1000, 1},
                                       {64, 64000, 64000, 64},
                                       {8192, 8192ull * 8193 / 2, 8192, 1},
                                       {2048, 3000000, 2048 + 500, 40}};
                for (size_t i = 0; i < 4; i++) {
                    int64_t x =
                        step(&a, loads[i][0], loads[i][1], loads[i][2], (uint32_t)loads[i][3]);
                    int64_t y =
                        step(&b, loads[i][0], loads[i][1], loads[i][2], (uint32_t)loads[i][3]);
                    /* %.9g keeps 9 digits: the times agree to a part in 10^8. */
                    cr_assert(llabs(x - y) <= 1 + x / 100000000, "%s tp%u pp%u: %lld vs %lld",
                              gpus[gi], tp, pp, (long long)x, (long long)y);
                }
            }
}

typedef struct key_case {
    char spec[48], echo[32]; /* the key as given, and as describe prints it */
} key_case;

ParameterizedTestParameters(timing, every_key_round_trips)
{
    static key_case cases[] = {
        {"roofline:overhead=0.0035", "overhead=0.0035"},
        {"roofline:seq_overhead=2e-5", "seq_overhead=2e-05"},
        {"roofline:mfu=0.55", "mfu=0.55"},
        {"roofline:mfu8=0.7", "mfu8=0.7"},
        {"roofline:mbu=0.9", "mbu=0.9"},
        {"roofline:attn=0.5", "attn=0.5"},
        {"roofline:attn_lat=1.5e-5", "attn_lat=1.5e-05"},
        {"roofline:layer_lat=4e-6", "layer_lat=4e-06"},
        {"roofline:smooth=1.5", "smooth=1.5"},
        {"roofline:act_bytes=28", "act_bytes=28"},
        {"roofline:link=PCIe5", "link=pcie5"},
        {"roofline:ar_bw=2.5e11", "ar_bw=2.5e+11"},
        {"roofline:ar_lat=1e-5", "ar_lat=1e-05"},
        {"roofline:pp_bw=5e10", "pp_bw=5e+10"},
        {"roofline:pp_lat=3e-5", "pp_lat=3e-05"},
    };
    return cr_make_param_array(key_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(key_case *c, timing, every_key_round_trips)
{
    kv_model m = round_model();
    kv_gpu g = round_gpu();
    g.fp8_flops = 2e15; /* so mfu8 is live */
    m.weight_bytes = 1.0;
    kv_timing t = bound(c->spec, &m, &g, 4, 2);
    char s1[KV_TIMING_DESCRIBE_MAX], s2[KV_TIMING_DESCRIBE_MAX];
    kv_timing_describe(&t, s1, sizeof s1);
    cr_assert(strstr(s1, c->echo), "'%s' lacks '%s'", s1, c->echo);
    kv_timing u = bound(s1, &m, &g, 4, 2);
    kv_timing_describe(&u, s2, sizeof s2);
    cr_assert_str_eq(s1, s2);
    cr_assert_eq(u.given, (1u << 15) - 1, "describe gives every key");
}

Test(timing, describe_of_fixed_and_linear_is_unchanged)
{
    kv_timing t;
    kv_diag d;
    char buf[KV_TIMING_DESCRIBE_MAX];
    cr_assert_eq(kv_timing_parse("fixed:0.01", &t, &d), 0);
    kv_timing_describe(&t, buf, sizeof buf);
    cr_assert_str_eq(buf, "fixed:0.010000000");
    cr_assert_eq(kv_timing_parse("linear:0.002,1e-05,0", &t, &d), 0);
    kv_timing_describe(&t, buf, sizeof buf);
    cr_assert_str_eq(buf, "linear:0.002,1e-05,0");
}

/* ---- bad input: exact messages ---------------------------------------------------------- */

typedef struct bad_case {
    char spec[48], msg[256];
} bad_case;

#define KEYS                                                                                       \
    "(keys: overhead, seq_overhead, mfu, mfu8, mbu, attn, attn_lat, layer_lat, smooth, "           \
    "act_bytes, link, ar_bw, ar_lat, pp_bw, pp_lat)"

ParameterizedTestParameters(timing, bad_roofline_specs)
{
    static bad_case cases[] = {
        {"roofline:nvlink=1", "{time_model} 'roofline:nvlink=1': unknown key 'nvlink' " KEYS},
        {"roofline:mfu", "{time_model} 'roofline:mfu': expected KEY=VALUE, got 'mfu' " KEYS},
        {"roofline:mfu=0.5,", "{time_model} 'roofline:mfu=0.5,': expected KEY=VALUE, got '' " KEYS},
        {"roofline:", "{time_model} 'roofline:': expected KEY=VALUE, got '' " KEYS},
        {"roofline:link=infiniband",
         "{time_model} 'roofline:link=infiniband': unknown interconnect 'infiniband' (known: none, "
         "nvlink3, nvlink4, pcie4, pcie5, xgmi3)"},
        {"roofline:link=",
         "{time_model} 'roofline:link=': unknown interconnect '' (known: none, nvlink3, nvlink4, "
         "pcie4, pcie5, xgmi3)"},
        {"roofline:mfu=0", "{time_model} 'roofline:mfu=0': 'mfu' must be in (0, 1], got 0"},
        {"roofline:mfu=1.5", "{time_model} 'roofline:mfu=1.5': 'mfu' must be in (0, 1], got 1.5"},
        {"roofline:mfu8=2", "{time_model} 'roofline:mfu8=2': 'mfu8' must be in (0, 1], got 2"},
        {"roofline:mbu=0", "{time_model} 'roofline:mbu=0': 'mbu' must be in (0, 1], got 0"},
        {"roofline:attn=1.01",
         "{time_model} 'roofline:attn=1.01': 'attn' must be in (0, 1], got 1.01"},
        {"roofline:attn_lat=2",
         "{time_model} 'roofline:attn_lat=2': 'attn_lat' must be in [0, 1], got 2"},
        {"roofline:smooth=0.5",
         "{time_model} 'roofline:smooth=0.5': 'smooth' must be 0 (the maximum) or in [1, 100], "
         "got 0.5"},
        {"roofline:smooth=101",
         "{time_model} 'roofline:smooth=101': 'smooth' must be in [0, 100], got 101"},
        {"roofline:act_bytes=-1",
         "{time_model} 'roofline:act_bytes=-1': 'act_bytes' needs a non-negative number, got "
         "'-1'"},
        {"roofline:ar_bw=1e16",
         "{time_model} 'roofline:ar_bw=1e16': 'ar_bw' must be in [0, 1e+15], got 1e+16"},
        {"roofline:mbu=-0.5",
         "{time_model} 'roofline:mbu=-0.5': 'mbu' needs a non-negative number, got '-0.5'"},
        {"roofline:ar_lat=fast",
         "{time_model} 'roofline:ar_lat=fast': 'ar_lat' needs a non-negative number, got 'fast'"},
        {"roofline:mbu=0.5,mbu=0.6", "{time_model} 'roofline:mbu=0.5,mbu=0.6': 'mbu' given twice"},
        {"roofline;mfu=0.5",
         "{time_model} 'roofline;mfu=0.5': expected roofline[:KEY=VALUE,...], linear:A,B,C or "
         "fixed:DT"},
    };
    return cr_make_param_array(bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_case *c, timing, bad_roofline_specs)
{
    kv_timing t;
    kv_diag d;
    cr_assert_eq(kv_timing_parse(c->spec, &t, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, c->msg, "the library names the quantity; the CLI renders it");
}

Test(timing, cli_reports_a_bad_interconnect_as_a_usage_error)
{
    run_result r = run_kvsim("run", src_path("traces/tiny.csv"), "--time-model",
                             "roofline:link=ethernet", NULL);
    assert_error_line(&r, 2, "kvsim: error: ",
                      "--time-model 'roofline:link=ethernet': unknown interconnect 'ethernet'");
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny.csv"), "--time-model", "roofline:mbu=1.2", NULL);
    assert_error_line(&r, 2, "kvsim: error: ", "'mbu' must be in (0, 1], got 1.2");
    run_result_free(&r);
}

Test(timing, cli_echoes_the_resolved_model)
{
    /* summary.json's config names every parameter, resolved for the GPU and parallelism. */
    run_result r =
        run_kvsim("run", src_path("traces/tiny.csv"), "--model", "llama-3-70b", "--gpu", "A100-80G",
                  "--tp", "4", "--time-model", "roofline:overhead=0.003", "--json", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"time_model\": \"roofline:overhead=0.003,seq_overhead=9.5e-06,"
                            "mfu=0.709,mfu8=0.709,mbu=0.77,attn=0.78,"
                            "attn_lat=2.2e-05,layer_lat=3.58e-05,smooth=1.46,act_bytes=32.1,"
                            "link=nvlink3,ar_bw=2e+11,ar_lat=9.85e-06,"
                            "pp_bw=2e+11,pp_lat=9.85e-06\""),
              "%s", r.out);
    run_result_free(&r);
}
