/* Harness: length specs (kv_lendist_parse; README "Length model").
 *
 * Checks on an accepted spec: 1..KV_LEN_MAX_KNOTS knots with strictly increasing
 * percentiles in (0, 1), one of them 0.5; non-decreasing values in [1, KV_TRACE_MAX_LEN];
 * clamps 1 ≤ lo ≤ hi ≤ KV_TRACE_MAX_LEN; the quantile function returns integers in
 * [lo, hi], non-decreasing in u, through every knot (to rounding).  A rejected spec has a
 * diagnostic.
 */
#include <math.h>
#include <stdbool.h>

#include "fuzz.h"
#include "kvsim/lengthdist.h"
#include "kvsim/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1024)
        return 0;
    char *s = fuzz_string(data, size);
    kv_lendist ld;
    kv_diag d = {{0}};
    int rc = kv_lendist_parse(&ld, s, &d);
    if (rc != 0) {
        fuzz_check_diag(rc, &d);
        FUZZ_CHECK(rc == -KV_EINVAL, "rc %d", rc);
        free(s);
        return 0;
    }
    FUZZ_CHECK(ld.n_knots >= 1 && ld.n_knots <= KV_LEN_MAX_KNOTS, "%u knots", ld.n_knots);
    bool p50 = false;
    for (uint32_t i = 0; i < ld.n_knots; i++) {
        FUZZ_CHECK(ld.q[i] > 0 && ld.q[i] < 1, "q %g", ld.q[i]);
        FUZZ_CHECK(ld.value[i] >= 1 && ld.value[i] <= KV_TRACE_MAX_LEN, "value %g", ld.value[i]);
        FUZZ_CHECK(isfinite(ld.z[i]) && isfinite(ld.lv[i]) && isfinite(ld.slope[i]), "finite");
        FUZZ_CHECK(ld.key[i][0] == 'p', "key '%s'", ld.key[i]);
        if (i) {
            FUZZ_CHECK(ld.q[i] > ld.q[i - 1], "q not increasing");
            FUZZ_CHECK(ld.value[i] >= ld.value[i - 1], "values decrease");
        }
        p50 |= ld.q[i] == 0.5;
    }
    FUZZ_CHECK(p50, "no p50 in '%s'", s);
    FUZZ_CHECK(ld.lo >= 1 && ld.lo <= ld.hi && ld.hi <= KV_TRACE_MAX_LEN, "clamps %u..%u", ld.lo,
               ld.hi);
    /* u in (0, 1), the documented domain (the samplers never draw 0 or 1) */
    static const double us[] = {1e-300, 1e-12, 0.001, 0.25, 0.5, 0.75, 0.999, 1 - 1e-16};
    double prev = 0;
    uint32_t prev_len = 0;
    for (size_t i = 0; i < sizeof us / sizeof us[0]; i++) {
        double x = kv_lendist_quantile(&ld, us[i]);
        FUZZ_CHECK(x >= ld.lo && x <= ld.hi, "Q(%g) = %g outside [%u, %u] for '%s'", us[i], x,
                   ld.lo, ld.hi, s);
        FUZZ_CHECK(x >= prev, "Q not monotone at %g for '%s'", us[i], s);
        uint32_t len = kv_lendist_length(&ld, us[i]);
        FUZZ_CHECK(len >= ld.lo && len <= ld.hi && len >= prev_len, "length %u at %g", len, us[i]);
        prev = x;
        prev_len = len;
    }
    for (uint32_t i = 0; i < ld.n_knots; i++) {
        double x = kv_lendist_quantile(&ld, ld.q[i]);
        double want = ld.value[i] < ld.lo ? ld.lo : ld.value[i] > ld.hi ? ld.hi : ld.value[i];
        FUZZ_CHECK(fabs(x - want) <= 1e-9 * want, "Q(%g) = %.17g, knot %.17g in '%s'", ld.q[i], x,
                   ld.value[i], s);
    }
    /* the canonical form reads back as the same distribution */
    char canon[1024];
    kv_lendist_format(&ld, canon, sizeof canon);
    kv_lendist back;
    rc = kv_lendist_parse(&back, canon, &d);
    FUZZ_CHECK(rc == 0, "canonical form '%s' of '%s' rejected: %s", canon, s, d.msg);
    FUZZ_CHECK(back.n_knots == ld.n_knots && back.lo == ld.lo && back.hi == ld.hi,
               "canonical form '%s' of '%s' differs", canon, s);
    for (uint32_t i = 0; i < ld.n_knots; i++)
        FUZZ_CHECK(back.q[i] == ld.q[i] && fabs(back.value[i] - ld.value[i]) <= 1e-9 * ld.value[i],
                   "canonical knot %u of '%s' differs", i, s);
    free(s);
    return 0;
}
