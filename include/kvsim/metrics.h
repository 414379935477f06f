/* metrics: per-step samples, peaks and time-weighted means, latency distributions.
 *
 * The engine hands every step's sample (taken after scheduling, before step-end frees:
 * the state the step computes on) to kv_metrics_add; means are weighted by step
 * duration.  Latency percentiles come from sorted arrays at the end (linear interpolation
 * between closest ranks, numpy's default), never per step.
 */
#ifndef KVSIM_METRICS_H
#define KVSIM_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "kvsim/sched.h"

/* One row of timeseries.csv.  Counters marked cumulative are totals so far. */
typedef struct kv_sample {
    int64_t time_ns; /* step start */
    int64_t dt_ns;   /* step duration */
    uint64_t step;   /* 1-based */
    uint32_t replica; /* the replica that took it (a cluster's timeseries.csv column) */
    uint32_t running, waiting;
    uint32_t physical_blocks;    /* refcount > 0 */
    uint64_t logical_blocks;     /* Σ block-table lengths */
    uint32_t cached_free_blocks; /* free blocks still holding a hash */
    uint32_t free_blocks;        /* free-queue length (cached included) */
    double usage;                /* 1 − free/(N−1) */
    uint64_t effective_tokens;   /* tokens whose KV the running tables hold after the step */
    uint64_t scheduled_tokens;
    /* cumulative */
    uint64_t preemptions, evictions, prefix_hits, prefix_queries, watermark_deferrals;
    uint64_t admitted, finished;
} kv_sample;

/* timeseries.csv's columns, in order: (header name, kind, kv_sample member).  report.c
 * generates the header and every row from this list.  Kinds: TIME integer ns printed as
 * seconds with 9 decimals, U integer, F6 a real with 6 decimals. */
#define KV_SAMPLE_COLUMNS(X)                                                                       \
    X(time_s, TIME, time_ns)                                                                       \
    X(step, U, step)                                                                               \
    X(running, U, running)                                                                         \
    X(waiting, U, waiting)                                                                         \
    X(physical_blocks, U, physical_blocks)                                                         \
    X(logical_blocks, U, logical_blocks)                                                           \
    X(cached_free_blocks, U, cached_free_blocks)                                                   \
    X(free_blocks, U, free_blocks)                                                                 \
    X(usage, F6, usage)                                                                            \
    X(effective_tokens, U, effective_tokens)                                                       \
    X(scheduled_tokens, U, scheduled_tokens)                                                       \
    X(preemptions, U, preemptions)                                                                 \
    X(evictions, U, evictions)                                                                     \
    X(prefix_hits, U, prefix_hits)                                                                 \
    X(prefix_queries, U, prefix_queries)                                                           \
    X(watermark_deferrals, U, watermark_deferrals)                                                 \
    X(admitted, U, admitted)                                                                       \
    X(finished, U, finished)

typedef struct kv_metrics {
    uint64_t steps;
    uint32_t peak_physical;
    uint64_t peak_logical;
    double w_physical, w_logical, w_time; /* Σ x·dt (ns), Σ dt */
} kv_metrics;

void kv_metrics_init(kv_metrics *m);
void kv_metrics_add(kv_metrics *m, const kv_sample *s);
double kv_metrics_mean_physical(const kv_metrics *m); /* 0 with no steps */
double kv_metrics_mean_logical(const kv_metrics *m);
/* mean logical / mean physical (time-weighted); 0 when nothing was ever held. */
double kv_metrics_sharing_ratio(const kv_metrics *m);

/* Imbalance of n ≥ 1 non-negative values (DESIGN §10 C7, C8): the maximum over the mean,
 * and the Gini coefficient in its population form, Σ_i Σ_j |x_i − x_j| / (2 n² mean).
 * All-zero values give max/mean 1 and Gini 0.  Can't fail. */
double kv_max_over_mean(const double *x, size_t n);
double kv_gini(const double *x, size_t n);

typedef struct kv_dist {
    uint64_t n;
    double p50, p90, p95, p99, max, mean;
} kv_dist;

/* Ascending, in place, O(n log n) worst case and no allocation (an introsort; glibc's
 * qsort would copy the array), finite values only.  Can't fail.  The _depth form is for
 * tests: the quicksort levels allowed before heapsort takes over (0: heapsort at once). */
void kv_sort_doubles(double *v, size_t n);
void kv_sort_doubles_depth(double *v, size_t n, unsigned depth);

/* Sorts values in place (kv_sort_doubles).  n = 0 gives all zeros. */
void kv_dist_compute(double *values, size_t n, kv_dist *out);
/* p in [0, 100] over sorted values (n ≥ 1). */
double kv_percentile(const double *sorted, size_t n, double p);

typedef struct kv_latency {
    kv_dist ttft;  /* first token − arrival, finished requests */
    kv_dist tpot;  /* (finish − first token)/(output − 1), finished with output ≥ 2 */
    kv_dist e2e;   /* finish − arrival */
    kv_dist queue; /* first scheduled − arrival */
} kv_latency;

/* Per-request figures in seconds; tpot < 0 when undefined (output_len 1). */
double kv_req_ttft_s(const kv_req *r);
double kv_req_tpot_s(const kv_req *r);
double kv_req_e2e_s(const kv_req *r);
double kv_req_queue_s(const kv_req *r);

void kv_latency_compute(const kv_req *reqs, size_t n, kv_latency *out);

#endif
