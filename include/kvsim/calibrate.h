/* calibrate: fit the roofline's free parameters to a user's own benchmark runs by replaying
 * them (issue 11 item 4; the C port of scripts/accuracy --fit).
 *
 * Each run (benchfile.h, its send times rebuilt) becomes a trace of its successful
 * requests — content-less prompts of the measured lengths, sent at the client's schedule
 * behind its semaphore (sim.h max_concurrency) — and is replayed through kv_sim_replay with
 * the caller's options and setup, only the time model changing.  Both sides are summarised
 * the way vllm bench serve does (kv_cal_metrics_compute), and the fit minimises
 *
 *   loss = √(mean over the fitted runs and the five metrics of ln(predicted / measured)²)
 *
 * (a metric undefined on either side — TPOT with single-token outputs — is left out; the
 * root mean square rather than the mean |ln|, whose kink at every metric's zero stops the
 * search's moves along the keys short of the optimum: docs/accuracy.md "The fit's
 * objective"), deterministically, in two stages.  First Hooke–Jeeves' pattern search: from
 * the start point, try ± step on each key in turn, keep any move that lowers the loss by
 * more than 1e-9, jump on along a successful move, and when no move helps, halve every
 * step, KV_CAL_HALVINGS times (evaluations are memoised).  Then Levenberg–Marquardt on the
 * residuals from where it stopped (finite-difference Jacobian at the final steps, at most
 * KV_CAL_LM_ITERATIONS of them): the compass moves stall in a narrow valley that runs
 * across the keys (overhead against mbu, where no single key's move is downhill), the
 * least-squares step walks along it.  Either stage stops early when the replay budget is
 * spent.  Keys (KV_CAL_KEYS): overhead, seq_overhead, layer_lat are fitted in seconds
 * from the base model's value; mfu and mbu as factors on it (mfu scales mfu and mfu8, mbu
 * scales mbu and attn, each capped at 1), so the preset's ratios are kept.
 *
 * Hold-out: `alternate` fits on runs 0, 2, 4, … and reports runs 1, 3, … as held out
 * (out-of-sample); `none` fits on all.
 */
#ifndef KVSIM_CALIBRATE_H
#define KVSIM_CALIBRATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim/benchfile.h"
#include "kvsim/error.h"
#include "kvsim/setup.h"
#include "kvsim/sim.h"
#include "kvsim/timing.h"

/* id, name, label, unit, scale from the base unit (s or tokens/s) to the unit shown. */
#define KV_CAL_METRICS(X)                                                                          \
    X(TTFT_MEAN, "ttft_mean", "TTFT mean", "ms", 1e3)                                              \
    X(TTFT_P99, "ttft_p99", "TTFT P99", "ms", 1e3)                                                 \
    X(TPOT_MEAN, "tpot_mean", "TPOT mean", "ms", 1e3)                                              \
    X(ITL_MEAN, "itl_mean", "ITL mean", "ms", 1e3)                                                 \
    X(OUT_TPUT, "out_tput", "output tok/s", "tok/s", 1.0)

#define KV_CAL_AS_ENUM(id, name, label, unit, scale) KV_CAL_##id,
enum { KV_CAL_METRICS(KV_CAL_AS_ENUM) KV_CAL_N_METRICS };
#undef KV_CAL_AS_ENUM

typedef struct kv_cal_metric_info {
    const char *name, *label, *unit;
    double scale;
} kv_cal_metric_info;
extern const kv_cal_metric_info kv_cal_metric_infos[KV_CAL_N_METRICS];

/* id, name, absolute (seconds) or a factor, first step, lower and upper bound. */
#define KV_CAL_KEYS(X)                                                                             \
    X(OVERHEAD, "overhead", true, 0.004, 0.0, 0.1)                                                 \
    X(SEQ, "seq_overhead", true, 0.00005, 0.0, 0.002)                                              \
    X(LAYER_LAT, "layer_lat", true, 0.00002, 0.0, 0.001)                                           \
    X(MFU, "mfu", false, 0.25, 0.05, 1.5)                                                          \
    X(MBU, "mbu", false, 0.25, 0.05, 1.5)

#define KV_CAL_AS_ENUM(id, name, abs, step, lo, hi) KV_CAL_KEY_##id,
enum { KV_CAL_KEYS(KV_CAL_AS_ENUM) KV_CAL_N_KEYS };
#undef KV_CAL_AS_ENUM

/* A key's name ("overhead"), and whether it is fitted in seconds (else as a factor). */
const char *kv_cal_key_name(int key);
bool kv_cal_key_absolute(int key);

/* Step halvings of the pattern search; Jacobians of the Levenberg–Marquardt polish. */
#define KV_CAL_HALVINGS      12
#define KV_CAL_LM_ITERATIONS 40

/* The residuals of θ, m of them into r (NaN = left out): 0, 1 (stop: the budget is spent),
 * or an error (-KV_E*, with diag). */
typedef int (*kv_cal_resid_fn)(void *ctx, const double *theta, double *r, kv_diag *diag);

/* The fit's second stage on any residuals: Levenberg–Marquardt from θ (n ≤ KV_CAL_N_KEYS
 * keys, updated in place; *best its loss, the root mean square of the residuals that are
 * not NaN) within the box [lo, hi].  A forward-difference Jacobian, each key moved by its
 * step (the pattern search's final one; away from a bound it sits on); the damped normal
 * equations (JᵀJ + λ·diag JᵀJ) d = −Jᵀr over the keys not held at a bound (one the
 * descent would push out stays there); θ + d clamped to the box; accept when the loss
 * falls by more than 1e-12 (λ / 4), else λ · 4; stop when no λ up to 1e12 helps, when d
 * is shorter than step on every key (the search has looked there), or after
 * KV_CAL_LM_ITERATIONS Jacobians.  It walks the narrow valleys (overhead against mbu)
 * where the compass moves stall because no single key's move is downhill.  0, 1 (fn said
 * stop), fn's error, or -KV_EINVAL for n outside 1..KV_CAL_N_KEYS or m = 0.
 * scripts/accuracy's lm_polish is the same in Python. */
int kv_cal_polish(kv_cal_resid_fn fn, void *ctx, size_t n, size_t m, double *theta,
                  const double *lo, const double *hi, const double *step, double *best,
                  kv_diag *diag);

/* One run's summary as vllm bench serve computes it (NaN where undefined). */
typedef struct kv_cal_metrics {
    double v[KV_CAL_N_METRICS];
} kv_cal_metrics;

/* One successful request as the client saw it. */
typedef struct kv_cal_sample {
    double send_s, ttft_s, e2e_s;
    uint32_t output_len; /* ≥ 1 */
    uint32_t n_gaps;     /* inter-token latencies measured, ≤ output_len − 1 (a replay's:
                            output_len − 1) */
} kv_cal_sample;

/* TTFT mean and P99 (linear interpolation between order statistics, numpy's default),
 * TPOT mean over requests with more than one output token ((e2e − ttft) / (out − 1)), ITL
 * mean = Σ (e2e − ttft) / Σ n_gaps (the mean of every measured gap), output throughput = Σ out /
 * (last finish − first send).  n ≥ 1.  Can't fail (out of memory aborts). */
void kv_cal_metrics_compute(const kv_cal_sample *s, size_t n, kv_cal_metrics *out);

/* Σ ln(p / m)² over the metrics defined and positive on both sides, and their count. */
double kv_cal_log_error(const kv_cal_metrics *pred, const kv_cal_metrics *meas, int *count);

typedef enum kv_cal_holdout {
    KV_CAL_HOLDOUT_NONE = 0,
    KV_CAL_HOLDOUT_ALTERNATE,
} kv_cal_holdout;

/* The prefix cache at the start of each run.  A warm-up prompt is replayed with one output
 * token, sent at 0, and the run's own requests KV_CAL_WARM_GAP_S later (a replay where
 * the warm-up is still running then is an error); the warm-up copy of prompt i and the
 * run's request i share every full block, distinct prompts nothing (KV_CAL_WARM_TB-token
 * hash_ids per prompt index), and only the run's own requests are measured. */
typedef enum kv_cal_warm {
    KV_CAL_WARM_NONE = 0, /* a cold cache: content-less prompts, no warm-up */
    KV_CAL_WARM_FIRST,    /* each run after its request 0 (the client's initial single-prompt
                             test, which vllm bench serve and benchmark_serving.py send) */
    KV_CAL_WARM_PREVIOUS, /* the runs ran in the given order on one server with prefix
                             caching and send the same prompts (same dataset and seed: equal
                             prompt lengths at every index, else an error): run 1 as FIRST,
                             run k + 1 after every prompt of run k */
} kv_cal_warm;

#define KV_CAL_WARM_TB    16
#define KV_CAL_WARM_GAP_S 100000

/* "none", "first", "previous"; parse: 0, or -KV_EINVAL for anything else. */
const char *kv_cal_warm_name(kv_cal_warm w);
int kv_cal_warm_parse(const char *s, kv_cal_warm *out);

typedef struct kv_cal_options {
    const char *fit;        /* comma list of KV_CAL_KEYS names; default "overhead,mbu" */
    kv_cal_holdout holdout; /* default none */
    kv_cal_warm warm;       /* default none */
    uint32_t max_replays;   /* budget of run replays for the search; default 2000 */
} kv_cal_options;

void kv_cal_options_init(kv_cal_options *o);

/* "overhead,mbu" → the keys, in the list's order.  0, or -KV_EINVAL naming {fit}: an
 * unknown key (the message lists the known ones), one given twice, an empty list. */
int kv_cal_keys_parse(const char *list, int *keys, size_t *n_keys, kv_diag *diag);

typedef struct kv_cal_run {
    const kv_bench *bench;
    bool held_out;
    size_t n_warm;     /* warm-up prompts replayed before it (kv_cal_warm) */
    size_t n_replayed; /* its successful requests */
    kv_cal_metrics measured, before, after;
} kv_cal_run;

typedef struct kv_cal_result {
    size_t n_keys;
    int keys[KV_CAL_N_KEYS];
    double fitted[KV_CAL_N_KEYS]; /* seconds, or the factor on base[] */
    double base[KV_CAL_N_KEYS];   /* the base model's value of each key (mfu, mbu: the value
                                     the factor scales) */
    char before_model[KV_TIMING_DESCRIBE_MAX], after_model[KV_TIMING_DESCRIBE_MAX];
    kv_cal_warm warm; /* the options' */
    kv_cal_run *runs; /* one per bench, in order */
    size_t n_runs;
    uint32_t replays;               /* run replays the search spent */
    bool budget_spent;              /* stopped by max_replays, not by the last halving */
    double loss_before, loss_after; /* on the fitted runs */
} kv_cal_result;

/* Fit.  so: the replay options (its time_model the base: a roofline spec; max_concurrency
 * is set per run); setup: model, GPU, pool; benches[0..n) with send times (kv_bench_sends).
 * 0, or a negative KV_E* with a diag: -KV_EINVAL for options (a time model that is not a
 * roofline, a bad fit list, alternate with one run, `previous` warm-up over runs whose
 * prompts differ), a replay's own error, or -KV_ECAPACITY when a replay rejects requests
 * or its warm-up outlasts KV_CAL_WARM_GAP_S (the message names the run).  The result must
 * be released after 0. */
int kv_calibrate(const kv_sim_options *so, const kv_setup *setup, kv_bench *const *benches,
                 size_t n, const kv_cal_options *co, kv_cal_result *out, kv_diag *diag);
void kv_cal_result_release(kv_cal_result *r); /* NULL-safe on a zeroed result */

/* The result as a JSON object (kvsim calibrate --json): "fit" (the keys), "holdout",
 * "replays", "budget_spent", "loss_before", "loss_after", "time_model_before", "time_model"
 * (the fitted spec), "warm" (kv_cal_warm_name), "parameters" (per key: "fitted" — seconds, or the
 * factor — "base" and "value", the value the spec carries), and "runs" (per run: "path",
 * "held_out", "warm_prompts", "requests" replayed, "failed", and "measured", "before", "after",
 * each the five metrics by name in seconds and tokens/s, null where undefined).  New reference;
 * can't fail. */
json_t *kv_cal_result_to_json(const kv_cal_result *r, kv_cal_holdout holdout);

#endif
