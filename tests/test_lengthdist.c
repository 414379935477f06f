/* lengthdist: Φ⁻¹, spec parsing and validation, the quantile model (through the knots,
 * monotone, tails, clamps) and the samplers. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/lengthdist.h"
#include "kvsim/trace.h"

static kv_lendist parse_ok(const char *spec)
{
    kv_lendist d;
    kv_diag diag = {{0}};
    int rc = kv_lendist_parse(&d, spec, &diag);
    cr_assert_eq(rc, 0, "'%s' should parse: %s", spec, diag.msg);
    return d;
}

/* ---- Φ⁻¹ -------------------------------------------------------------------------------- */

Test(norm_quantile, known_values)
{
    /* Reference values: Python's statistics.NormalDist().inv_cdf (also AS 241) and
     * standard tables. */
    static const struct {
        double p, z;
    } t[] = {
        {0.5, 0.0},
        {0.9, 1.2815515655446008},
        {0.95, 1.6448536269514715},
        {0.975, 1.959963984540054},
        {0.99, 2.3263478740408408},
        {0.999, 3.090232306167813},
        {1e-10, -6.361340902404056},
        {1e-300, -37.0470962993612},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        double z = kv_norm_quantile(t[i].p);
        cr_assert(fabs(z - t[i].z) <= 1e-14 * fmax(1.0, fabs(t[i].z)),
                  "Φ⁻¹(%g) = %.17g, want %.17g", t[i].p, z, t[i].z);
    }
    cr_assert(isinf(kv_norm_quantile(0.0)) && kv_norm_quantile(0.0) < 0);
    cr_assert(isinf(kv_norm_quantile(1.0)) && kv_norm_quantile(1.0) > 0);
}

Test(norm_quantile, inverts_the_normal_cdf_and_is_symmetric)
{
    /* Φ(z) = erfc(−z/√2)/2; check Φ(Φ⁻¹(p)) = p over 1e-300 .. 0.5 (the lower half, where
     * p is represented exactly), monotonicity, and the symmetry Φ⁻¹(1 − p) = −Φ⁻¹(p). */
    double prev = -INFINITY;
    for (double lg = -300.0; lg <= log10(0.5) + 1e-12; lg += 0.01) {
        double p = pow(10.0, lg);
        double z = kv_norm_quantile(p);
        double back = 0.5 * erfc(-z / sqrt(2.0));
        /* dp/p = z·dz: a z accurate to ~1e-16 relative moves p by ~z²·1e-16 relative. */
        cr_assert(fabs(back - p) <= 1e-14 * (1.0 + z * z) * p, "Φ(Φ⁻¹(%g)) = %.17g", p, back);
        cr_assert(z > prev, "Φ⁻¹ not increasing at %g", p);
        prev = z;
        if (p > 1e-15) {
            double q = 1.0 - p; /* exact only where 1 − p is: compare with tolerance */
            cr_assert(fabs(kv_norm_quantile(q) + kv_norm_quantile(1.0 - q)) < 1e-9,
                      "asymmetric at %g", p);
        }
    }
}

/* ---- parsing ---------------------------------------------------------------------------- */

Test(lendist_parse, knots_sorted_with_keys_and_clamps)
{
    kv_lendist d = parse_ok("p99=8000, p50=1000 ,max=32768,p95=4000,min=16");
    cr_assert_eq(d.n_knots, 3);
    cr_assert_eq(d.q[0], 0.50);
    cr_assert_eq(d.q[1], 0.95);
    cr_assert_eq(d.q[2], 0.99);
    cr_assert_eq(d.value[0], 1000);
    cr_assert_eq(d.value[1], 4000);
    cr_assert_eq(d.value[2], 8000);
    cr_assert_str_eq(d.key[2], "p99");
    cr_assert(d.has_min && d.has_max);
    cr_assert_eq(d.lo, 16);
    cr_assert_eq(d.hi, 32768);
    char buf[128];
    kv_lendist_format(&d, buf, sizeof buf);
    cr_assert_str_eq(buf, "min=16,p50=1000,p95=4000,p99=8000,max=32768");
}

Test(lendist_parse, defaults_and_fractional_percentiles)
{
    kv_lendist d = parse_ok("p50=10,p99.9=500.5,p1=2");
    cr_assert_eq(d.n_knots, 3);
    cr_assert_eq(d.q[0], 0.01);
    cr_assert(fabs(d.q[2] - 0.999) < 1e-15);
    cr_assert(!d.has_min && !d.has_max);
    cr_assert_eq(d.lo, 1);
    cr_assert_eq(d.hi, KV_TRACE_MAX_LEN);
}

typedef struct bad_spec {
    char spec[64];
    char msg[96]; /* a substring of the diagnostic */
} bad_spec;

ParameterizedTestParameters(lendist_parse, rejects)
{
    static bad_spec t[] = {
        {"", "empty length spec"},
        {" , ", "empty length spec"},
        {"p95=4000,p99=8000", "'p50' is required"},
        {"p50=1000,p95=900", "'p95' (900) must not be below 'p50' (1000)"},
        {"p50=1000,p95=4000,p99=3000", "'p99' (3000) must not be below 'p95' (4000)"},
        {"p10=500,p50=400", "'p50' (400) must not be below 'p10' (500)"},
        {"p50=1000,min=2000", "'min' (2000) must not exceed 'p50' (1000)"},
        {"p50=1000,p99=8000,max=5000", "'max' (5000) must not be below 'p99' (8000)"},
        {"p50=abc", "'p50': 'abc' is not a number"},
        {"p50=1e3x", "'p50': '1e3x' is not a number"},
        {"p50=0x10", "'p50': '0x10' is not a number"},
        {"p50=inf", "'p50': 'inf' is not a number"},
        {"p50=", "'p50': '' is not a number"},
        {"p50=0", "'p50' must be a length of at least 1"},
        {"p50=-5", "'p50' must be a length of at least 1"},
        {"p50=100000000", "'p50' must be at most 16777216"},
        {"p50=10,max=12.5", "'max' must be a whole number"},
        {"p50=10,min=1,min=2", "'min' is given twice"},
        {"p50=10,p50.0=12", "'p50.0' repeats the percentile of 'p50'"},
        {"p50=10,q90=12", "unknown key 'q90'"},
        {"p50=10,p100=12", "unknown key 'p100'"},
        {"p50=10,p0=1", "unknown key 'p0'"},
        {"p50=10,avg=12", "unknown key 'avg'"},
        {"p50", "'p50' is not KEY=VALUE"},
    };
    return cr_make_param_array(bad_spec, t, sizeof t / sizeof t[0]);
}

ParameterizedTest(bad_spec *b, lendist_parse, rejects)
{
    kv_lendist d;
    kv_diag diag = {{0}};
    cr_assert_eq(kv_lendist_parse(&d, b->spec, &diag), -KV_EINVAL, "'%s' accepted", b->spec);
    cr_assert(strstr(diag.msg, b->msg), "'%s': got '%s', want '%s'", b->spec, diag.msg, b->msg);
}

/* ---- the quantile model ----------------------------------------------------------------- */

Test(lendist_model, passes_exactly_through_every_knot)
{
    const char *specs[] = {"p50=1000,p95=4000,p99=8000", "p50=200,p95=600,p99=1000",
                           "p1=3,p10=40,p50=500,p90=8000,p99=60000,p99.9=200000",
                           "p50=1000,p99=8000", "p25=7,p50=7,p75=7,p90=31"};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        kv_lendist d = parse_ok(specs[s]);
        for (uint32_t i = 0; i < d.n_knots; i++) {
            double x = kv_lendist_quantile(&d, d.q[i]);
            cr_assert(fabs(x - d.value[i]) <= 1e-12 * d.value[i], "%s: Q(%g) = %.17g, want %g",
                      specs[s], d.q[i], x, d.value[i]);
            cr_assert_eq(kv_lendist_length(&d, d.q[i]), (uint32_t)d.value[i], "%s: Q(%g)", specs[s],
                         d.q[i]);
        }
    }
}

Test(lendist_model, monotone_and_within_clamps)
{
    kv_lendist d = parse_ok("min=20,p1=20,p50=500,p90=8000,p99=60000,max=100000");
    double prev = 0.0;
    uint32_t prev_len = 0;
    for (int k = 1; k < 100000; k++) {
        double u = k / 100000.0;
        double x = kv_lendist_quantile(&d, u);
        uint32_t n = kv_lendist_length(&d, u);
        cr_assert(x >= prev, "Q decreases at u=%g", u);
        cr_assert(n >= prev_len, "length decreases at u=%g", u);
        cr_assert(x >= 20.0 && x <= 100000.0);
        cr_assert(n >= 20 && n <= 100000);
        prev = x;
        prev_len = n;
    }
    cr_assert_eq(kv_lendist_length(&d, 1e-12), 20, "min clamps the lower tail");
    cr_assert_eq(kv_lendist_length(&d, 1.0 - 1e-12), 100000, "max clamps the upper tail");
}

Test(lendist_model, tails_continue_the_nearest_segment_in_log_space)
{
    kv_lendist d = parse_ok("p50=1000,p95=4000,p99=8000");
    double z95 = kv_norm_quantile(0.95), z99 = kv_norm_quantile(0.99), z50 = 0.0;
    double upper = log(8000.0 / 4000.0) / (z99 - z95);
    double lower = log(4000.0 / 1000.0) / (z95 - z50);
    const double us[] = {0.995, 0.999, 0.9999, 0.999999};
    for (size_t i = 0; i < sizeof us / sizeof us[0]; i++) {
        double want = 8000.0 * exp((kv_norm_quantile(us[i]) - z99) * upper);
        double got = kv_lendist_quantile(&d, us[i]);
        cr_assert(fabs(got - want) <= 1e-9 * want, "Q(%g) = %g, want %g", us[i], got, want);
    }
    const double ls[] = {0.3, 0.1, 0.01, 1e-4};
    for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++) {
        double want = 1000.0 * exp(kv_norm_quantile(ls[i]) * lower);
        double got = kv_lendist_quantile(&d, ls[i]);
        cr_assert(fabs(got - want) <= 1e-9 * want, "Q(%g) = %g, want %g", ls[i], got, want);
    }
    /* Between knots: linear in z, i.e. a lognormal piece. */
    double u = 0.97, want = 4000.0 * exp((kv_norm_quantile(u) - z95) * upper);
    cr_assert(fabs(kv_lendist_quantile(&d, u) - want) <= 1e-9 * want);
    /* Without max the extrapolation is capped only by the trace limit. */
    cr_assert_eq(kv_lendist_length(&d, 1.0 - 1e-16),
                 (uint32_t)llround(8000.0 * exp((kv_norm_quantile(1.0 - 1e-16) - z99) * upper)));
}

Test(lendist_model, p50_only_is_a_constant)
{
    kv_lendist d = parse_ok("p50=200");
    for (int k = 1; k < 1000; k++)
        cr_assert_eq(kv_lendist_length(&d, k / 1000.0), 200);
    cr_assert_eq(kv_lendist_length(&d, 1e-15), 200);
    cr_assert_eq(kv_lendist_length(&d, 1.0 - 1e-15), 200);
    kv_lendist_constant(&d, 77);
    cr_assert_eq(kv_lendist_length(&d, 0.001), 77);
    cr_assert_eq(kv_lendist_length(&d, 0.999), 77);
}

Test(lendist_model, equal_percentiles_make_an_atom)
{
    kv_lendist d = parse_ok("p50=64,p95=64,p99=64");
    for (int k = 1; k < 1000; k++)
        cr_assert_eq(kv_lendist_length(&d, k / 1000.0), 64);
    d = parse_ok("p50=100,p90=100,p99=400");
    for (int k = 500; k <= 900; k++)
        cr_assert_eq(kv_lendist_length(&d, k / 1000.0), 100, "flat between p50 and p90");
    cr_assert(kv_lendist_length(&d, 0.95) > 100);
    /* Below p50 the nearest segment (p50→p90, flat) continues: no spread is invented. */
    cr_assert_eq(kv_lendist_length(&d, 0.2), 100);
    cr_assert_eq(kv_lendist_length(&d, 1e-9), 100);
}

Test(lendist_model, lengths_round_half_up_and_stay_at_least_one)
{
    kv_lendist d = parse_ok("p50=2,p99=3");
    for (int k = 1; k < 10000; k++) {
        double u = k / 10000.0;
        double x = kv_lendist_quantile(&d, u);
        uint32_t n = kv_lendist_length(&d, u);
        cr_assert_eq(n, (uint32_t)floor(x + 0.5) < 1 ? 1 : (uint32_t)floor(x + 0.5));
        cr_assert(n >= 1);
    }
}

/* ---- samplers --------------------------------------------------------------------------- */

Test(lensampler, stratified_runs_cover_every_stratum_once)
{
    kv_lendist d = parse_ok("p50=100");
    kv_lensampler s;
    kv_lensampler_init(&s, &d, 42, true);
    static unsigned hits[KV_LEN_STRATA];
    for (int run = 0; run < 5; run++) {
        memset(hits, 0, sizeof hits);
        for (uint32_t i = 0; i < KV_LEN_STRATA; i++) {
            double u = kv_lensampler_uniform(&s);
            cr_assert(u > 0.0 && u < 1.0);
            uint32_t k = (uint32_t)(u * KV_LEN_STRATA);
            hits[k]++;
        }
        for (uint32_t k = 0; k < KV_LEN_STRATA; k++)
            cr_assert_eq(hits[k], 1, "run %d: stratum %u drawn %u times", run, k, hits[k]);
    }
    kv_lensampler_release(&s);
}

Test(lensampler, uniform_moments_and_determinism)
{
    kv_lendist d = parse_ok("p50=100,p99=1000");
    for (int strat = 0; strat < 2; strat++) {
        kv_lensampler a, b, c;
        kv_lensampler_init(&a, &d, 7, strat);
        kv_lensampler_init(&b, &d, 7, strat);
        kv_lensampler_init(&c, &d, 8, strat);
        double sum = 0, sum2 = 0;
        int same_c = 0;
        const int n = 200000;
        for (int i = 0; i < n; i++) {
            double u = kv_lensampler_uniform(&a);
            cr_assert_eq(u, kv_lensampler_uniform(&b), "same seed, same stream");
            same_c += u == kv_lensampler_uniform(&c);
            sum += u;
            sum2 += u * u;
        }
        double mean = sum / n, var = sum2 / n - mean * mean;
        /* i.i.d.: se(mean) = 0.29/√n ≈ 6.5e-4; 0.003 is > 4.5 se.  Stratified is tighter. */
        cr_assert(fabs(mean - 0.5) < 0.003, "mean %g (stratified %d)", mean, strat);
        cr_assert(fabs(var - 1.0 / 12.0) < 0.002, "variance %g (stratified %d)", var, strat);
        cr_assert(same_c < 10, "different seeds give different streams");
        kv_lensampler_release(&a);
        kv_lensampler_release(&b);
        kv_lensampler_release(&c);
    }
}

Test(lensampler, never_returns_0_or_1)
{
    /* The extreme grid points: the top stratum with all-ones low bits must stay below 1. */
    kv_lendist d = parse_ok("p50=100,p99=1000");
    kv_lensampler s;
    kv_lensampler_init(&s, &d, 1, true);
    for (int i = 0; i < 300000; i++) {
        double u = kv_lensampler_uniform(&s);
        cr_assert(u > 0.0 && u < 1.0);
        uint32_t n = kv_lensampler_next(&s);
        cr_assert(n >= 1 && n <= KV_TRACE_MAX_LEN);
    }
    kv_lensampler_release(&s);
}
