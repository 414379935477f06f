/* timing: how long one engine step takes (DESIGN §6 "Step time").
 *
 *   roofline   overhead + seq_overhead · N + PP · (max_p(C, M) + E + A) + X
 *     C = (2 · P_tok · T + 2 · P_head · N) / (TP·PP · peak_w · mfu_w)   weight GEMMs
 *         + 4 · L · H_q · d · kv_tokens_read / (TP·PP · peak · mfu)     attention FLOPs
 *     M = W_rank / (hbm · mbu)                                          weights, once
 *         + (kv_tokens_streamed + T) · c_rank / (hbm · attn)            KV read + written
 *         + L_rank · (attn_lat + layer_lat)                             per-layer fixed costs
 *     max_p(C, M) = (C^p + M^p)^(1/p), p = smooth (0: max(C, M))       the ridge is gradual
 *     E = L_rank · T · h · act_bytes / hbm                              the layers' activations
 *     A = 2 · L_rank · (ar_lat + 2·(TP−1)/TP · T · h · 2 B / ar_bw)     two all-reduces a layer
 *     X = (PP − 1) · (pp_lat + T · h · 2 B / pp_bw)                      stage-to-stage activations
 *   linear     A + B · tokens + C · kv_tokens_read   (seconds; fit from measurements)
 *   fixed      DT                                   (seconds, rounded to integer ns)
 *
 * T = scheduled tokens, N = scheduled requests (each computes one row of logits: vLLM
 * samples from the last scheduled position of every request), L_rank = ⌈L/PP⌉.  P_tok =
 * parameters a token multiplies (active parameters less the embedding table, which is
 * looked up, and the LM head), P_head = V·h (the LM head, once per request); W_rank = weights
 * per rank less the input embedding table (only T rows of it are read; a tied table is read
 * as the LM head).  peak_w, mfu_w = the FP8 peak and mfu8 for 1-byte weights on a GPU with
 * FP8 tensor cores, else the bf16 peak and mfu.  A and X are 0 at TP = 1, PP = 1; A is the
 * un-overlapped all-reduce time (vLLM issues them between GEMMs), X charges the activations
 * crossing PP − 1 stage boundaries; the PP · stage factor is the pipeline bubble of one batch
 * in flight (kvsim runs one step at a time).
 *
 * The attention terms make a "curve": at a per-layer KV read of x bytes a decode attention
 * kernel sustains attn · x / (x + attn · hbm · attn_lat) of the HBM bandwidth — little for a
 * small batch of short histories, approaching attn for long ones.
 *
 * kv_tokens_read is DESIGN's "KV tokens read": every scheduled token's query reads its whole
 * visible history (its own position included), so a chunk of n tokens after c computed ones
 * reads n·c + n(n+1)/2; prefix hits are read like any history (a cache saves compute, not
 * reading).  It drives the attention FLOPs and linear's C term.  The roofline's memory term
 * instead counts each scheduled request's history once per step (kv_tokens_streamed = c +
 * n), as a tiled attention kernel streams it.  For decode (n = 1) the two are equal.
 *
 * Free parameters of the roofline (one flat list; kv_timing_describe prints them all, and
 * its text parses back to the same model): overhead, seq_overhead, mfu, mfu8, mbu, attn,
 * attn_lat, layer_lat, smooth, act_bytes, link, ar_bw, ar_lat, pp_bw, pp_lat.  A key the spec
 * leaves out takes the GPU preset's value at kv_timing_bind (src/presets.c cites each); link=K
 * takes that interconnect's ar_bw, ar_lat (and pp_bw, pp_lat) unless those are given too.  A
 * calibrator fits any subset by passing the rest through.  With attn = mbu, attn_lat = 0,
 * layer_lat = 0, smooth = 0, act_bytes = 0, seq_overhead = 0, TP = PP = 1 and a model of
 * unknown vocabulary the roofline is
 * exactly the pre-2026-09 overhead + max(flops / (peak·mfu), bytes / (hbm·mbu)).
 *
 * Results are integer nanoseconds (fixed:DT ≥ 1; the others may round to 0 for an empty
 * step).  Absolute times are estimates; block counts are exact for the given time model.
 */
#ifndef KVSIM_TIMING_H
#define KVSIM_TIMING_H

#include <stdint.h>

#include "kvsim/error.h"
#include "kvsim/model.h"

typedef enum kv_time_kind {
    KV_TIME_ROOFLINE = 0,
    KV_TIME_LINEAR,
    KV_TIME_FIXED,
} kv_time_kind;

typedef struct kv_timing {
    kv_time_kind kind;
    /* roofline free parameters (names in the spec in brackets) */
    double overhead_s;     /* [overhead] per step: scheduling, launches, sampling, ≥ 0 */
    double seq_overhead_s; /* [seq_overhead] per scheduled request and step, ≥ 0 */
    double mfu;            /* [mfu] achieved fraction of the bf16 peak, (0, 1] */
    double mfu_fp8;        /* [mfu8] achieved fraction of the FP8 peak; 0 = mfu */
    double mbu;            /* [mbu] achieved fraction of HBM bandwidth streaming weights */
    double attn_bw;        /* [attn] the same for attention's KV reads; 0 = mbu */
    double attn_lat_s;     /* [attn_lat] fixed attention cost per layer and step, ≥ 0 */
    double layer_lat_s;    /* [layer_lat] fixed cost per layer and step of the layer's kernels
                              but attention (launches and tails, norms, rotary, activation),
                              ≥ 0; the GPU preset's (src/presets.c [VIDURTP]) */
    double smooth;         /* [smooth] p of the smooth maximum of C and M: 0 (max) or ≥ 1 */
    double act_bytes;      /* [act_bytes] bytes each rank moves per token, hidden unit and
                              layer in the kernels that handle whole activations, ≥ 0 */
    kv_link link;          /* [link] interconnect whose figures seed ar_* and pp_* */
    double ar_bw;          /* [ar_bw] all-reduce bus bandwidth, bytes/s; 0 = not charged */
    double ar_lat_s;       /* [ar_lat] latency of one all-reduce, s */
    double pp_bw;          /* [pp_bw] stage-to-stage bandwidth, bytes/s; 0 = not charged */
    double pp_lat_s;       /* [pp_lat] latency of one stage hand-off, s */
    uint32_t given;        /* bit per key the spec set (kv_timing_bind keeps those) */
    bool overlap_host;     /* async scheduling (set from the scheduler, not the spec): a
                              roofline step lasts max(host, GPU) instead of host + GPU,
                              host = overhead + seq_overhead·N, as vLLM's AsyncScheduler
                              (PR #19970) and async model runner (PR #23569) overlap the
                              CPU work of step k+1 with the GPU's execution of step k */
    /* roofline hardware and model terms, filled by kv_timing_bind */
    double peak_flops, hbm_bw;  /* bf16 peak FLOP/s, HBM bytes/s */
    double gemm_peak;           /* peak of the weight GEMMs (FP8 for 1-byte weights); 0 = bf16 */
    double active_params;       /* P_tok: parameters multiplied per scheduled token */
    double head_params;         /* P_head: LM-head parameters, once per scheduled request */
    double attn_flops_per_pair; /* 4 · L · H_q · d */
    double weight_bytes_rank;   /* W_rank: weights one rank streams per step */
    double kv_bytes_rank;       /* c_rank */
    double hidden;              /* h, activation width for TP/PP traffic */
    uint32_t layers_rank;       /* ⌈L/PP⌉ */
    uint32_t tp, pp;
    /* linear */
    double a, b, c;
    /* fixed */
    int64_t fixed_ns;
} kv_timing;

/* (E is the traffic of the kernels that read and write whole activations — the norms, the
 * residual adds, the GEMMs' inputs and outputs — which every rank runs on all h columns
 * however the weights are split, so it does not shrink with TP.  smooth blends the two
 * bounds where neither dominates: kernels near the ridge reach neither peak.) */

/* Generic values of the three original constants, used when no GPU is bound (the GPU
 * presets carry their own, see src/presets.c). */
#define KV_ROOFLINE_OVERHEAD_S 0.002
#define KV_ROOFLINE_MFU        0.6
#define KV_ROOFLINE_MBU        0.8
/* seq_overhead's default, the same for every GPU (host CPU, not GPU work): vLLM's own v1
 * scheduler, Scheduler.schedule() + update_from_output() per decode step, costs 9.5 us per
 * running request (tools/vllm_sched_cpu.py over the vllm_ref tree of vLLM main
 * bf292b5f6b53, 2026-06-26, on a 2.3 GHz Xeon: 9.45 and 9.50 us in two runs of N = 1 to
 * 512; docs/accuracy.md).  A lower bound: input preparation, sampling and the outputs'
 * hand-off to the API server are per-request host work too, and are not in it. */
#define KV_ROOFLINE_SEQ_OVERHEAD_S 9.5e-6

/* Longest text kv_timing_describe writes, terminator included. */
#define KV_TIMING_DESCRIBE_MAX 512

/* The work one step schedules (the engine fills it from its batch). */
typedef struct kv_step_load {
    uint64_t tokens;             /* T: Σ scheduled tokens */
    uint64_t kv_tokens_read;     /* DESIGN's KV tokens read */
    uint64_t kv_tokens_streamed; /* Σ over scheduled requests of (computed + new) */
    uint32_t num_seqs;           /* N: scheduled requests */
} kv_step_load;

/* Parse "roofline[:KEY=VALUE,…]", "linear:A,B,C" or "fixed:DT".  Roofline keys the spec
 * leaves out are filled by kv_timing_bind.  0 or -KV_EINVAL with a one-line diag naming the
 * spec and the key: unknown key, key given twice, missing '=', not a number, out of range
 * ("'mfu' must be in (0, 1], got 1.5"), unknown interconnect. */
int kv_timing_parse(const char *spec, kv_timing *out, kv_diag *diag);
/* Fill the roofline's model/GPU terms and every parameter the spec did not give.  Can't
 * fail. */
void kv_timing_bind(kv_timing *t, const kv_model *m, const kv_gpu *g, const kv_shard *s);
/* Step duration in ns (≥ 0; INT64_MAX if it does not fit). */
int64_t kv_timing_step(const kv_timing *t, const kv_step_load *load);
/* The same with num_seqs = tokens (logits for every token: the accounting of callers that
 * do not know their requests). */
int64_t kv_timing_step_ns(const kv_timing *t, uint64_t tokens, uint64_t kv_tokens_read,
                          uint64_t kv_tokens_streamed);
/* Canonical text of the model, for the config echo: "fixed:0.010000000", or every roofline
 * key with its value (%.9g); it parses back to the same step times.  n ≥
 * KV_TIMING_DESCRIBE_MAX never truncates. */
void kv_timing_describe(const kv_timing *t, char *buf, size_t n);

#endif
