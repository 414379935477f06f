/* timing: how long one engine step takes (DESIGN §6 "Step time").
 *
 *   roofline   overhead + PP · max(flops / (TP·PP · peak · mfu), bytes_rank / (hbm · mbu))
 *              flops = 2 · active_params · tokens + 4 · L · H_q · d · kv_tokens_read
 *              bytes_rank = weights_rank + (kv_tokens_streamed + tokens) · c_rank
 *   linear     A + B · tokens + C · kv_tokens_read   (seconds; fit from measurements)
 *   fixed      DT                                   (seconds, rounded to integer ns)
 *
 * kv_tokens_read is DESIGN's "KV tokens read": every scheduled token's query reads its
 * whole visible history (its own position included), so a chunk of n tokens after c
 * computed ones reads n·c + n(n+1)/2; prefix hits are read like any history (a cache
 * saves compute, not reading).  It drives the attention FLOPs and linear's C term.  The
 * roofline's memory term instead counts each scheduled request's history once per step
 * (kv_tokens_streamed = c + n), as a tiled attention kernel streams it: counting it per
 * token would make an 8k-token prefill look 100x memory-bound.  For decode (n = 1) the
 * two are equal.  Results are integer nanoseconds (fixed:DT >= 1; the others may round
 * to 0 for an empty step).  Absolute times are estimates; block counts are exact for the
 * given time model.
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
    /* roofline */
    double overhead_s; /* per step: scheduling, launches, sampling */
    double mfu;        /* achieved fraction of peak FLOP/s */
    double mbu;        /* achieved fraction of HBM bandwidth */
    double peak_flops, hbm_bw;
    double active_params;
    double attn_flops_per_pair; /* 4 · L · H_q · d */
    double weight_bytes_rank;
    double kv_bytes_rank; /* c_rank */
    uint32_t tp, pp;
    /* linear */
    double a, b, c;
    /* fixed */
    int64_t fixed_ns;
} kv_timing;

/* Defaults of the roofline's free constants (README states them). */
#define KV_ROOFLINE_OVERHEAD_S 0.002
#define KV_ROOFLINE_MFU        0.6
#define KV_ROOFLINE_MBU        0.8

/* Parse "roofline[:overhead=S,mfu=F,mbu=F]", "linear:A,B,C" or "fixed:DT".  The roofline
 * hardware terms are filled by kv_timing_bind.  0 or -KV_EINVAL with a diag. */
int kv_timing_parse(const char *spec, kv_timing *out, kv_diag *diag);
/* Fill the roofline's model/GPU terms. */
void kv_timing_bind(kv_timing *t, const kv_model *m, const kv_gpu *g, const kv_shard *s);
/* Step duration in ns (≥ 0). */
int64_t kv_timing_step_ns(const kv_timing *t, uint64_t tokens, uint64_t kv_tokens_read,
                          uint64_t kv_tokens_streamed);
/* Canonical text of the model, for the config echo: "fixed:0.010000000". */
void kv_timing_describe(const kv_timing *t, char *buf, size_t n);

#endif
