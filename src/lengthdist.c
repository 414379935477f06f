/* lengthdist: percentile specs → a quantile function → integer lengths.
 *
 * Model.  Knots (q_i, v_i) from the spec, q strictly increasing, v non-decreasing.  In the
 * coordinates z = Φ⁻¹(q) and y = ln v the quantile function is the polyline through
 * (z_i, y_i), continued past both ends with the slope of the end segment:
 *
 *     Q(u) = exp(y_i + (Φ⁻¹(u) − z_i) · slope_i)   for the segment i that holds Φ⁻¹(u)
 *
 * Two knots make a lognormal; more knots make a piecewise lognormal whose pieces meet at
 * the knots, so Q(q_i) = v_i exactly and Q is continuous and monotone (slopes ≥ 0 because
 * v is non-decreasing).  Equal neighbouring values give a flat piece (an atom).  One knot
 * gives a constant: we do not invent a spread the planner did not state.
 *
 * Why log space and z: length distributions of prompts and outputs are close to lognormal
 * in the bulk, so two percentiles pin a plausible shape, and the tails extend the way the
 * last stated segment points instead of being cut off at P99.  The extension is still a
 * guess; max= is how a planner caps it (and the trace format's KV_TRACE_MAX_LEN always).
 *
 * Integers.  Q(u) is rounded half up and clamped to [lo, hi].  Rounding moves a percentile
 * by at most half a token.
 *
 * Sampling.  u → Q(u) (inverse CDF).  Stratified mode draws u = (π(k) + U)/S where π is a
 * fresh random permutation of the S = KV_LEN_STRATA strata for every S draws: each u is
 * exactly uniform on its own, and every full run of S draws covers each stratum once.
 * Cost per draw: one Φ⁻¹ (a rational function, plus log/sqrt in the tails), one exp, and
 * amortised one bounded draw for the shuffle.
 *
 * Out of scope: correlation between prompt and output lengths (samplers are independent);
 * fitting a distribution to data (give the data's percentiles).
 */
#include "kvsim/lengthdist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/trace.h"
#include "kvsim/text.h"

/* ---- Φ⁻¹: Wichura, Algorithm AS 241 (PPND16), Applied Statistics 37 (1988) 477–484 ---- */

static double poly8(const double *c, double x)
{
    double r = c[7];
    for (int i = 6; i >= 0; i--)
        r = r * x + c[i];
    return r;
}

double kv_norm_quantile(double p)
{
    static const double a[8] = {3.3871328727963666080e0,  1.3314166789178437745e+2,
                                1.9715909503065514427e+3, 1.3731693765509461125e+4,
                                4.5921953931549871457e+4, 6.7265770927008700853e+4,
                                3.3430575583588128105e+4, 2.5090809287301226727e+3};
    static const double b[8] = {1.0,
                                4.2313330701600911252e+1,
                                6.8718700749205790830e+2,
                                5.3941960214247511077e+3,
                                2.1213794301586595867e+4,
                                3.9307895800092710610e+4,
                                2.8729085735721942674e+4,
                                5.2264952788528545610e+3};
    static const double c[8] = {1.42343711074968357734e0,  4.63033784615654529590e0,
                                5.76949722146069140550e0,  3.64784832476320460504e0,
                                1.27045825245236838258e0,  2.41780725177450611770e-1,
                                2.27238449892691845833e-2, 7.74545014278341407640e-4};
    static const double d[8] = {1.0,
                                2.05319162663775882187e0,
                                1.67638483018380384940e0,
                                6.89767334985100004550e-1,
                                1.48103976427480074590e-1,
                                1.51986665636164571966e-2,
                                5.47593808499534494600e-4,
                                1.05075007164441684324e-9};
    static const double e[8] = {6.65790464350110377720e0,  5.46378491116411436990e0,
                                1.78482653991729133580e0,  2.96560571828504891230e-1,
                                2.65321895265761230930e-2, 1.24266094738807843860e-3,
                                2.71155556874348757815e-5, 2.01033439929228813265e-7};
    static const double f[8] = {1.0,
                                5.99832206555887937690e-1,
                                1.36929880922735805310e-1,
                                1.48753612908506148525e-2,
                                7.86869131145613259100e-4,
                                1.84631831751005468180e-5,
                                1.42151175831644588870e-7,
                                2.04426310338993978564e-15};
    if (!(p > 0.0))
        return -INFINITY;
    if (!(p < 1.0))
        return INFINITY;
    double q = p - 0.5;
    if (fabs(q) <= 0.425) {
        double r = 0.180625 - q * q;
        return q * poly8(a, r) / poly8(b, r);
    }
    double r = q < 0.0 ? p : 1.0 - p;
    r = sqrt(-log(r));
    double v;
    if (r <= 5.0) {
        r -= 1.6;
        v = poly8(c, r) / poly8(d, r);
    } else {
        r -= 5.0;
        v = poly8(e, r) / poly8(f, r);
    }
    return q < 0.0 ? -v : v;
}

/* ---- spec parsing ----------------------------------------------------------------------- */

static const char keys_hint[] = "keys: p50 (required), other percentiles pNN with 0 < NN < 100 "
                                "such as p90, p95, p99, p99.9, and min, max";

/* A number in the one grammar (kvsim/text.h), the whole string.  A magnitude beyond the
 * largest double is +-HUGE_VAL, so the range checks report it as too large. */
static bool parse_number(const char *s, double *out)
{
    int rc = kv_parse_number(s, strlen(s), out);
    if (rc == -KV_ERANGE)
        *out = *s == '-' ? -HUGE_VAL : HUGE_VAL;
    return rc == 0 || rc == -KV_ERANGE;
}

/* "p" digits [ "." digits ] with 0 < NN < 100: a percentile key.  Keys are names, not
 * numbers: no sign, exponent or bare point ("p9.99e1" is not p99.9). */
static bool percentile_key(const char *key, double *pct)
{
    if (key[0] != 'p')
        return false;
    const char *s = key + 1;
    size_t n_int = strspn(s, "0123456789");
    size_t n = n_int;
    if (s[n] == '.')
        n += 1 + strspn(s + n + 1, "0123456789");
    if (n_int == 0 || s[n] != '\0' || s[n - 1] == '.')
        return false;
    return kv_parse_number(s, n, pct) == 0 && *pct > 0.0 && *pct < 100.0;
}

static void finish_model(kv_lendist *d)
{
    for (uint32_t i = 0; i < d->n_knots; i++) {
        d->z[i] = kv_norm_quantile(d->q[i]);
        d->lv[i] = log(d->value[i]);
    }
    for (uint32_t i = 0; i + 1 < d->n_knots; i++)
        d->slope[i] = (d->lv[i + 1] - d->lv[i]) / (d->z[i + 1] - d->z[i]);
    if (d->n_knots > 1)
        d->slope[d->n_knots - 1] = d->slope[d->n_knots - 2];
    else
        d->slope[0] = 0.0;
}

void kv_lendist_constant(kv_lendist *d, uint32_t v)
{
    memset(d, 0, sizeof *d);
    d->n_knots = 1;
    d->q[0] = 0.5;
    d->value[0] = v;
    snprintf(d->key[0], sizeof d->key[0], "p50");
    d->lo = 1;
    d->hi = KV_TRACE_MAX_LEN;
    finish_model(d);
}

/* A percentile knot key=v into d, kept sorted by percentile. */
static int add_knot(kv_lendist *d, const char *key, const char *ks, double v, kv_diag *diag)
{
    double pct;
    if (!percentile_key(key, &pct))
        return kv_diag_set(diag, -KV_EINVAL, "unknown key '%s' (%s)", ks, keys_hint);
    if (strlen(key) >= sizeof d->key[0])
        return kv_diag_set(diag, -KV_EINVAL, "key '%s' is too long", ks);
    double q = pct / 100.0;
    uint32_t pos = 0;
    while (pos < d->n_knots && d->q[pos] < q)
        pos++;
    if (pos < d->n_knots && d->q[pos] == q)
        return kv_diag_set(diag, -KV_EINVAL, "'%s' repeats the percentile of '%s'", key,
                           d->key[pos]);
    if (d->n_knots == KV_LEN_MAX_KNOTS)
        return kv_diag_set(diag, -KV_EINVAL, "at most %d percentiles", KV_LEN_MAX_KNOTS);
    for (uint32_t i = d->n_knots; i > pos; i--) {
        d->q[i] = d->q[i - 1];
        d->value[i] = d->value[i - 1];
        memcpy(d->key[i], d->key[i - 1], sizeof d->key[i]);
    }
    d->q[pos] = q;
    d->value[pos] = v;
    snprintf(d->key[pos], sizeof d->key[pos], "%s", key);
    d->n_knots++;
    return 0;
}

/* One KEY=VALUE item: a bound (min, max into *min_v, *max_v) or a percentile knot. */
static int parse_item(kv_lendist *d, const kv_kvitem *item, double *min_v, double *max_v,
                      kv_diag *diag)
{
    const char *key = item->key, *val = item->value;
    char kb[KV_SHOWN_MAX], vb[KV_SHOWN_MAX]; /* as messages quote them */
    const char *ks = kv_shown(key, kb), *vs = kv_shown(val, vb);
    double v;
    if (!parse_number(val, &v))
        return kv_diag_set(diag, -KV_EINVAL, "'%s': '%s' is not a number", ks, vs);
    if (v < 1.0)
        return kv_diag_set(diag, -KV_EINVAL, "'%s' must be a length of at least 1 (got %s)", ks,
                           vs);
    if (v > (double)KV_TRACE_MAX_LEN)
        return kv_diag_set(diag, -KV_EINVAL, "'%s' must be at most %u (got %s)", ks,
                           KV_TRACE_MAX_LEN, vs);
    if (strcmp(key, "min") != 0 && strcmp(key, "max") != 0)
        return add_knot(d, key, ks, v, diag);
    bool is_min = key[1] == 'i';
    if (v != floor(v))
        return kv_diag_set(diag, -KV_EINVAL, "'%s' must be a whole number (got %s)", ks, vs);
    if (is_min ? d->has_min : d->has_max)
        return kv_diag_set(diag, -KV_EINVAL, "'%s' is given twice", key);
    if (is_min) {
        d->has_min = true;
        *min_v = v;
    } else {
        d->has_max = true;
        *max_v = v;
    }
    return 0;
}

/* The whole spec's rules: p50 given, percentiles non-decreasing, bounds around them. */
static int check_spec(const kv_lendist *d, double min_v, double max_v, kv_diag *diag)
{
    bool has_p50 = false;
    for (uint32_t i = 0; i < d->n_knots; i++)
        has_p50 |= d->q[i] == 0.5;
    if (!has_p50)
        return kv_diag_set(diag, -KV_EINVAL, "'p50' is required (%s)", keys_hint);
    for (uint32_t i = 1; i < d->n_knots; i++)
        if (d->value[i] < d->value[i - 1])
            return kv_diag_set(diag, -KV_EINVAL,
                               "'%s' (%g) must not be below '%s' (%g): percentiles are "
                               "non-decreasing",
                               d->key[i], d->value[i], d->key[i - 1], d->value[i - 1]);
    if (d->has_min && min_v > d->value[0])
        return kv_diag_set(diag, -KV_EINVAL, "'min' (%g) must not exceed '%s' (%g)", min_v,
                           d->key[0], d->value[0]);
    uint32_t top = d->n_knots - 1;
    if (d->has_max && max_v < d->value[top])
        return kv_diag_set(diag, -KV_EINVAL, "'max' (%g) must not be below '%s' (%g)", max_v,
                           d->key[top], d->value[top]);
    return 0;
}

int kv_lendist_parse(kv_lendist *d, const char *spec, kv_diag *diag)
{
    memset(d, 0, sizeof *d);
    kv_kvlist list;
    kv_kvlist_init(&list, spec, KV_KVLIST_PAIRS | KV_KVLIST_TRIM | KV_KVLIST_SKIP_EMPTY, keys_hint);
    int rc = 0;
    double min_v = 0, max_v = 0;
    bool any = false;
    kv_kvitem item;
    while (rc == 0 && (rc = kv_kvlist_next(&list, &item, diag)) == 1) {
        any = true;
        rc = parse_item(d, &item, &min_v, &max_v, diag);
    }
    kv_kvlist_release(&list);
    if (rc != 0)
        return rc;
    if (!any)
        return kv_diag_set(diag, -KV_EINVAL,
                           "empty length spec (expected e.g. p50=1000,p95=4000,p99=8000)");
    rc = check_spec(d, min_v, max_v, diag);
    if (rc != 0)
        return rc;
    d->lo = d->has_min ? (uint32_t)min_v : 1;
    d->hi = d->has_max ? (uint32_t)max_v : KV_TRACE_MAX_LEN;
    finish_model(d);
    return 0;
}

/* ---- evaluation ------------------------------------------------------------------------- */

double kv_lendist_quantile(const kv_lendist *d, double u)
{
    double y;
    if (d->n_knots == 1) {
        y = d->lv[0];
    } else {
        double z = kv_norm_quantile(u);
        /* Segment i holds z in [z_i, z_{i+1}); below z_0 the first segment continues,
         * from z_last on the last slope continues from the last knot.  Anchoring each
         * piece at its left knot makes Q(q_i) = v_i to the last bit. */
        uint32_t i = 0;
        while (i + 1 < d->n_knots && z >= d->z[i + 1])
            i++;
        y = d->lv[i] + (z - d->z[i]) * d->slope[i];
    }
    double x = exp(y);
    if (x < (double)d->lo)
        return d->lo;
    if (x > (double)d->hi) /* also catches +inf */
        return d->hi;
    return x;
}

uint32_t kv_lendist_length(const kv_lendist *d, double u)
{
    double x = kv_lendist_quantile(d, u);
    double r = floor(x + 0.5);
    if (r < (double)d->lo)
        return d->lo;
    if (r > (double)d->hi)
        return d->hi;
    return (uint32_t)r;
}

void kv_lendist_format(const kv_lendist *d, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
#define APPEND(...)                                                                                \
    do {                                                                                           \
        if (len < n) {                                                                             \
            int w_ = snprintf(buf + len, n - len, __VA_ARGS__);                                    \
            if (w_ > 0)                                                                            \
                len += (size_t)w_;                                                                 \
        }                                                                                          \
    } while (0)
    if (d->has_min)
        APPEND("min=%u,", d->lo);
    for (uint32_t i = 0; i < d->n_knots; i++)
        APPEND("%s=%.10g,", d->key[i], d->value[i]);
    if (d->has_max)
        APPEND("max=%u,", d->hi);
#undef APPEND
    if (len > 0 && len <= n && buf[len - 1] == ',')
        buf[len - 1] = '\0';
}

/* ---- sampling --------------------------------------------------------------------------- */

void kv_lensampler_init(kv_lensampler *s, const kv_lendist *d, uint64_t seed, bool stratified)
{
    memset(s, 0, sizeof *s);
    s->dist = d;
    kv_rng_seed(&s->rng, seed);
    s->stratified = stratified;
    if (stratified) {
        s->perm = kv_xmalloc(KV_LEN_STRATA * sizeof *s->perm);
        for (uint32_t k = 0; k < KV_LEN_STRATA; k++)
            s->perm[k] = k;
        s->pos = KV_LEN_STRATA;
    }
}

void kv_lensampler_release(kv_lensampler *s)
{
    free(s->perm);
    s->perm = NULL;
}

/* Uniforms on the grid (k + 0.5) · 2^-52, k a 52-bit integer: strictly inside (0, 1)
 * (the largest is 1 − 2^-53, exactly representable), so Φ⁻¹ is always finite. */
static double open_uniform(kv_rng *r)
{
    return ((double)(kv_rng_next(r) >> 12) + 0.5) * 0x1.0p-52;
}

_Static_assert(KV_LEN_STRATA == 1024u, "kv_lensampler_uniform packs the stratum into 10 bits");

double kv_lensampler_uniform(kv_lensampler *s)
{
    if (!s->stratified)
        return open_uniform(&s->rng);
    if (s->pos == KV_LEN_STRATA) {
        /* Fisher–Yates over the previous permutation: uniform over all orders. */
        for (uint32_t k = KV_LEN_STRATA - 1; k > 0; k--) {
            uint32_t j = (uint32_t)kv_rng_below(&s->rng, (uint64_t)k + 1);
            uint32_t t = s->perm[k];
            s->perm[k] = s->perm[j];
            s->perm[j] = t;
        }
        s->pos = 0;
    }
    /* (stratum + U)/S built in integers: the stratum is the top 10 of 52 bits, 42 random
     * bits below it, so the result is on the same open grid as open_uniform. */
    uint64_t stratum = s->perm[s->pos++];
    uint64_t k = (stratum << 42) | (kv_rng_next(&s->rng) >> 22);
    return ((double)k + 0.5) * 0x1.0p-52;
}

uint32_t kv_lensampler_next(kv_lensampler *s)
{
    return kv_lendist_length(s->dist, kv_lensampler_uniform(s));
}
