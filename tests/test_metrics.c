/* metrics (DESIGN §6.5, §8): percentiles by linear interpolation between closest ranks
 * (numpy's default), time-weighted means over non-uniform step durations, the sharing
 * ratio, and the per-request latency figures. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/metrics.h"

Test(metrics, percentile_interpolates_between_closest_ranks)
{
    const double v[] = {1, 2, 3, 4};
    cr_assert_eq(kv_percentile(v, 4, 0), 1);
    cr_assert_eq(kv_percentile(v, 4, 100), 4);
    cr_assert_float_eq(kv_percentile(v, 4, 50), 2.5, 1e-12, "pos 1.5");
    cr_assert_float_eq(kv_percentile(v, 4, 99), 3.97, 1e-12, "pos 2.97");
    cr_assert_float_eq(kv_percentile(v, 4, 90), 3.7, 1e-12, "pos 2.7");
    const double one[] = {7};
    cr_assert_eq(kv_percentile(one, 1, 99), 7, "one value is every percentile");
}

Test(metrics, dist_sorts_and_summarises)
{
    double v[] = {10, 0, 5, 20, 15};
    kv_dist d;
    kv_dist_compute(v, 5, &d);
    cr_assert_eq(d.n, 5);
    cr_assert_eq(d.p50, 10);
    cr_assert_float_eq(d.p90, 18, 1e-12, "pos 3.6 between 15 and 20");
    cr_assert_float_eq(d.p95, 19, 1e-12);
    cr_assert_float_eq(d.p99, 19.8, 1e-12);
    cr_assert_eq(d.max, 20);
    cr_assert_eq(d.mean, 10);
    kv_dist_compute(v, 0, &d);
    cr_assert(d.n == 0 && d.p99 == 0 && d.max == 0 && d.mean == 0, "no values: all zeros");
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Value i of pattern p (of 6) for an array of n: random with many ties, random distinct,
 * sorted, reversed, all equal, organ pipe. */
static double pattern(int p, size_t i, size_t n, uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    switch (p) {
    case 0:
        return (double)((*x >> 33) % 7);
    case 1:
        return (double)(*x >> 11) / 9007199254740992.0;
    case 2:
        return (double)i;
    case 3:
        return (double)(n - i);
    case 4:
        return 0.25;
    default:
        return (double)(i < n / 2 ? i : n - i);
    }
}

/* §9 (issue 9): the distributions' in-place sort gives qsort's array on every pattern and
 * size, through the quicksort, the heapsort below the depth limit and the insertion sort. */
Test(metrics, in_place_sort_of_the_distributions_is_qsort_without_a_copy)
{
    static const size_t sizes[] = {0, 1, 2, 3, 16, 17, 18, 100, 1000, 4099};
    static double a[4099], b[4099];
    uint64_t x = 9;
    for (int p = 0; p < 6; p++)
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
            for (unsigned depth = 0; depth < 3; depth++) {
                size_t n = sizes[k];
                for (size_t i = 0; i < n; i++)
                    a[i] = b[i] = pattern(p, i, n, &x);
                qsort(b, n, sizeof *b, cmp_d);
                if (depth == 2)
                    kv_sort_doubles(a, n);
                else
                    kv_sort_doubles_depth(a, n, depth);
                cr_assert_eq(memcmp(a, b, n * sizeof *a), 0, "pattern %d, n %zu, depth %u", p,
                             n, depth);
            }
}

static kv_sample sample(int64_t dt, uint32_t physical, uint64_t logical)
{
    kv_sample s;
    memset(&s, 0, sizeof s);
    s.dt_ns = dt;
    s.physical_blocks = physical;
    s.logical_blocks = logical;
    return s;
}

Test(metrics, means_are_weighted_by_step_duration)
{
    kv_metrics m;
    kv_metrics_init(&m);
    cr_assert_eq(kv_metrics_mean_physical(&m), 0, "no steps");
    cr_assert_eq(kv_metrics_sharing_ratio(&m), 0, "nothing held");
    kv_sample a = sample(1000, 10, 30), b = sample(3000, 20, 20);
    kv_metrics_add(&m, &a);
    kv_metrics_add(&m, &b);
    cr_assert_eq(m.steps, 2);
    cr_assert_eq(m.peak_physical, 20);
    cr_assert_eq(m.peak_logical, 30);
    cr_assert_float_eq(kv_metrics_mean_physical(&m), (10 * 1 + 20 * 3) / 4.0, 1e-12,
                       "a 3 µs step weighs three times a 1 µs step");
    cr_assert_float_eq(kv_metrics_mean_logical(&m), (30 * 1 + 20 * 3) / 4.0, 1e-12);
    cr_assert_float_eq(kv_metrics_sharing_ratio(&m), 90.0 / 70.0, 1e-12,
                       "time-weighted logical over physical");
}

Test(metrics, zero_length_steps_weigh_nothing)
{
    kv_metrics m;
    kv_metrics_init(&m);
    kv_sample a = sample(0, 100, 100), b = sample(2000, 4, 8);
    kv_metrics_add(&m, &a);
    kv_metrics_add(&m, &b);
    cr_assert_eq(m.peak_physical, 100, "peaks see every step");
    cr_assert_float_eq(kv_metrics_mean_physical(&m), 4, 1e-12, "means see durations");
}

static kv_req finished(const kv_request_spec *spec, int64_t sched, int64_t first, int64_t fin)
{
    kv_req r;
    kv_req_init(&r, spec);
    r.status = KV_REQ_FINISHED;
    r.first_scheduled_ns = sched;
    r.first_token_ns = first;
    r.finish_ns = fin;
    return r;
}

Test(metrics, request_latencies)
{
    kv_request_spec s = {.arrival_ns = 1000000000, .prompt_len = 8, .output_len = 5};
    kv_req r = finished(&s, 1500000000, 2000000000, 6000000000);
    cr_assert_float_eq(kv_req_ttft_s(&r), 1.0, 1e-12, "first token − arrival");
    cr_assert_float_eq(kv_req_queue_s(&r), 0.5, 1e-12, "first scheduled − arrival");
    cr_assert_float_eq(kv_req_e2e_s(&r), 5.0, 1e-12, "finish − arrival");
    cr_assert_float_eq(kv_req_tpot_s(&r), 1.0, 1e-12, "(finish − first token)/(output − 1)");
    kv_request_spec one = {.arrival_ns = 0, .prompt_len = 8, .output_len = 1};
    kv_req q = finished(&one, 0, 10, 10);
    cr_assert_lt(kv_req_tpot_s(&q), 0, "one output token: TPOT undefined");
}

Test(metrics, latency_covers_finished_requests_only)
{
    kv_request_spec s[3] = {{.arrival_ns = 0, .prompt_len = 4, .output_len = 2},
                            {.arrival_ns = 0, .prompt_len = 4, .output_len = 1},
                            {.arrival_ns = 0, .prompt_len = 4, .output_len = 2}};
    kv_req r[3] = {finished(&s[0], 0, 1000000000, 3000000000),
                   finished(&s[1], 0, 2000000000, 2000000000),
                   finished(&s[2], 0, 9000000000, 9000000000)};
    r[2].status = KV_REQ_REJECTED;
    kv_latency l;
    kv_latency_compute(r, 3, &l);
    cr_assert_eq(l.ttft.n, 2, "the rejected request is left out");
    cr_assert_eq(l.tpot.n, 1, "TPOT needs two output tokens");
    cr_assert_float_eq(l.ttft.mean, 1.5, 1e-12);
    cr_assert_float_eq(l.tpot.max, 2.0, 1e-12);
    cr_assert_float_eq(l.e2e.max, 3.0, 1e-12);
}
