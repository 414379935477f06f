/* metrics: accumulation of step samples and latency distributions (metrics.h).
 *
 * O(1) per step; O(n log n) once at the end for the percentiles, sorted in place (below).
 * Time-weighted means use integer-nanosecond durations as weights, summed in doubles.
 */
#include "kvsim/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"

void kv_metrics_init(kv_metrics *m)
{
    memset(m, 0, sizeof *m);
}

void kv_metrics_add(kv_metrics *m, const kv_sample *s)
{
    m->steps++;
    if (s->physical_blocks > m->peak_physical)
        m->peak_physical = s->physical_blocks;
    if (s->logical_blocks > m->peak_logical)
        m->peak_logical = s->logical_blocks;
    double dt = (double)s->dt_ns;
    m->w_physical += dt * s->physical_blocks;
    m->w_logical += dt * (double)s->logical_blocks;
    m->w_time += dt;
}

double kv_metrics_mean_physical(const kv_metrics *m)
{
    return m->w_time > 0 ? m->w_physical / m->w_time : 0.0;
}

double kv_metrics_mean_logical(const kv_metrics *m)
{
    return m->w_time > 0 ? m->w_logical / m->w_time : 0.0;
}

double kv_metrics_sharing_ratio(const kv_metrics *m)
{
    return m->w_physical > 0 ? m->w_logical / m->w_physical : 0.0;
}

double kv_max_over_mean(const double *x, size_t n)
{
    double sum = 0, max = 0;
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
        max = x[i] > max ? x[i] : max;
    }
    return sum > 0 ? max / (sum / (double)n) : 1.0;
}

/* Over sorted values x_(1) ≤ … ≤ x_(n): G = 2 Σ i·x_(i) / (n Σ x) − (n + 1)/n, the
 * population form without the O(n²) pair sum. */
double kv_gini(const double *x, size_t n)
{
    double *v = kv_xmalloc((n ? n : 1) * sizeof *v);
    memcpy(v, x, n * sizeof *v);
    kv_sort_doubles(v, n);
    double sum = 0, weighted = 0;
    for (size_t i = 0; i < n; i++) {
        sum += v[i];
        weighted += (double)(i + 1) * v[i];
    }
    free(v);
    if (!(sum > 0))
        return 0.0;
    double g = 2 * weighted / ((double)n * sum) - (double)(n + 1) / (double)n;
    return g > 0 ? g : 0.0; /* equal values: rounding may leave −1e-17 */
}

/* ---- an in-place sort for the distributions ------------------------------------------
 * glibc's qsort merge-sorts through a temporary copy of the array: at the end of a
 * 10M-request run, 80 MB more than the values themselves (issue 9: memory per request).
 * This is an introsort (quicksort on a median-of-three pivot with Hoare's partition,
 * heapsort below a depth of 2·log2 n, insertion sort for runs of 16 or fewer), in place
 * and O(n log n) in the worst case.  Equal finite values are indistinguishable, so every
 * correct sort gives qsort's array: the values here are latencies and kv_gini's per-replica
 * loads, never NaN. */

static void swap_d(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

static void insertion_sort(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        double x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

static void sift_down(double *v, size_t root, size_t n)
{
    for (size_t c; (c = 2 * root + 1) < n; root = c) {
        if (c + 1 < n && v[c + 1] > v[c])
            c++;
        if (!(v[c] > v[root]))
            return;
        swap_d(&v[c], &v[root]);
    }
}

static void heap_sort(double *v, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(v, i, n);
    for (size_t e = n; e-- > 1;) {
        swap_d(&v[0], &v[e]);
        sift_down(v, 0, e);
    }
}

static double median3(double a, double b, double c)
{
    if (a < b)
        return b < c ? b : a < c ? c : a;
    return a < c ? a : b < c ? c : b;
}

/* Hoare's partition around p, a median of three of v[0], v[n/2], v[n−1] with n > 3: both
 * sides non-empty, v[0..k) ≤ p ≤ v[k..n); returns k. */
static size_t partition(double *v, size_t n, double p)
{
    size_t i = 0, j = n - 1;
    for (;; i++, j--) {
        while (v[i] < p)
            i++;
        while (v[j] > p)
            j--;
        if (i >= j)
            return j + 1;
        swap_d(&v[i], &v[j]);
    }
}

static void intro_sort(double *v, size_t n, unsigned depth)
{
    while (n > 16) {
        if (depth-- == 0) {
            heap_sort(v, n);
            return;
        }
        size_t k = partition(v, n, median3(v[0], v[n / 2], v[n - 1]));
        if (k < n - k) { /* recurse into the smaller side: O(log n) stack */
            intro_sort(v, k, depth);
            v += k;
            n -= k;
        } else {
            intro_sort(v + k, n - k, depth);
            n = k;
        }
    }
    insertion_sort(v, n);
}

void kv_sort_doubles_depth(double *v, size_t n, unsigned depth)
{
    intro_sort(v, n, depth);
}

void kv_sort_doubles(double *v, size_t n)
{
    unsigned depth = 0;
    for (size_t m = n; m > 1; m >>= 1)
        depth += 2;
    intro_sort(v, n, depth);
}

double kv_percentile(const double *sorted, size_t n, double p)
{
    double pos = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - (double)lo);
}

void kv_dist_compute(double *v, size_t n, kv_dist *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n == 0)
        return;
    kv_sort_doubles(v, n);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    out->p50 = kv_percentile(v, n, 50);
    out->p90 = kv_percentile(v, n, 90);
    out->p95 = kv_percentile(v, n, 95);
    out->p99 = kv_percentile(v, n, 99);
    out->max = v[n - 1];
    out->mean = sum / (double)n;
}

double kv_req_ttft_s(const kv_req *r)
{
    return r->first_token_ns < 0 ? -1.0 : (double)(r->first_token_ns - r->spec->arrival_ns) / 1e9;
}

double kv_req_tpot_s(const kv_req *r)
{
    if (r->finish_ns < 0 || r->spec->output_len < 2)
        return -1.0;
    return (double)(r->finish_ns - r->first_token_ns) / 1e9 / (double)(r->spec->output_len - 1);
}

double kv_req_e2e_s(const kv_req *r)
{
    return r->finish_ns < 0 ? -1.0 : (double)(r->finish_ns - r->spec->arrival_ns) / 1e9;
}

double kv_req_queue_s(const kv_req *r)
{
    return r->first_scheduled_ns < 0 ? -1.0
                                     : (double)(r->first_scheduled_ns - r->spec->arrival_ns) / 1e9;
}

void kv_latency_compute(const kv_req *reqs, size_t n, kv_latency *out)
{
    /* One distribution at a time through one array: 8 bytes a request at the end of a
     * run, not 32 (issue 9: memory per request). */
    double (*const fn[4])(const kv_req *) = {kv_req_ttft_s, kv_req_tpot_s, kv_req_e2e_s,
                                             kv_req_queue_s};
    kv_dist *const dst[4] = {&out->ttft, &out->tpot, &out->e2e, &out->queue};
    double *v = kv_xmalloc((n ? n : 1) * sizeof *v);
    for (int m = 0; m < 4; m++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            const kv_req *r = &reqs[i];
            if (r->status != KV_REQ_FINISHED || (m == 1 && r->spec->output_len < 2))
                continue;
            v[k++] = fn[m](r);
        }
        kv_dist_compute(v, k, dst[m]);
    }
    free(v);
}
