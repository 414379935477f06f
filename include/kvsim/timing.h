/* timing: how long one engine step takes (DESIGN §6 "Step time").
 *
 *   roofline   overhead + PP · max(flops / (TP·PP · peak · mfu), bytes_rank / (hbm · mbu))
 *              flops = 2 · active_params · tokens + 4 · L · H_q · d · attn_pairs
 *              bytes_rank = weights_rank + (kv_read_tokens + tokens) · c_rank
 *   linear     A + B · tokens + C · kv_read_tokens   (seconds; fit from measurements)
 *   fixed      DT                                   (seconds, rounded to integer ns)
 *
 * kv_read_tokens = Σ over scheduled requests of the KV history the request's queries read
 * this step (computed + newly scheduled tokens): prefix hits are read like any other
 * history (a cache saves compute, not reading), and a request's history is read once per
 * step, as a tiled attention kernel streams it.  attn_pairs = Σ over scheduled tokens of
 * the positions each query attends to: the attention FLOPs.  For decode (one token per
 * request) both equal the context length.  Results are integer nanoseconds (fixed:DT ≥ 1;
 * the others may round to 0 for an empty step).
 * Absolute times are estimates; block counts are exact for the given time model.
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
int64_t kv_timing_step_ns(const kv_timing *t, uint64_t tokens, uint64_t kv_read_tokens,
                          uint64_t attn_pairs);
/* Canonical text of the model, for the config echo: "fixed:0.010000000". */
void kv_timing_describe(const kv_timing *t, char *buf, size_t n);

#endif
