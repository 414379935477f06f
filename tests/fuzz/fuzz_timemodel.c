/* Harness: time-model specs (kv_timing_parse; README "Time").
 *
 * Checks on an accepted spec: the kind is one of the three; roofline: overhead ≥ 0 and
 * finite, 0 < mfu ≤ 1, 0 < mbu ≤ 1; linear: A, B, C finite, ≥ 0, not all 0; fixed: DT ≥ 1
 * ns.  The parsed model is bound to a preset model and GPU and must give a finite,
 * non-negative step time for a range of batch sizes, and its description must fit.
 */
#include <math.h>
#include <stdbool.h>

#include "fuzz.h"
#include "kvsim/model.h"
#include "kvsim/timing.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1024)
        return 0;
    char *spec = fuzz_string(data, size);
    kv_timing t;
    kv_diag d = {{0}};
    int rc = kv_timing_parse(spec, &t, &d);
    if (rc != 0) {
        fuzz_check_diag(rc, &d);
        FUZZ_CHECK(rc == -KV_EINVAL, "rc %d", rc);
        free(spec);
        return 0;
    }
    switch (t.kind) {
    case KV_TIME_ROOFLINE:
        FUZZ_CHECK(isfinite(t.overhead_s) && t.overhead_s >= 0, "overhead %g", t.overhead_s);
        FUZZ_CHECK(t.mfu > 0 && t.mfu <= 1 && t.mbu > 0 && t.mbu <= 1, "mfu %g mbu %g", t.mfu,
                   t.mbu);
        break;
    case KV_TIME_LINEAR:
        FUZZ_CHECK(isfinite(t.a) && isfinite(t.b) && isfinite(t.c), "linear not finite");
        FUZZ_CHECK(t.a >= 0 && t.b >= 0 && t.c >= 0, "linear negative");
        FUZZ_CHECK(t.a > 0 || t.b > 0 || t.c > 0, "a step of no time");
        break;
    case KV_TIME_FIXED:
        FUZZ_CHECK(t.fixed_ns >= 1, "fixed %lld ns", (long long)t.fixed_ns);
        break;
    default:
        FUZZ_CHECK(0, "kind %d", (int)t.kind);
    }
    kv_model m;
    kv_gpu g;
    kv_shard sh;
    FUZZ_CHECK(kv_model_preset("llama-3-8b", &m, &d) == 0, "preset");
    FUZZ_CHECK(kv_gpu_preset("H100-SXM", &g, &d) == 0, "gpu");
    FUZZ_CHECK(kv_shard_compute(&m, 1, 1, &sh, &d) == 0, "shard");
    kv_timing_bind(&t, &m, &g, &sh);
    static const uint64_t tokens[] = {0, 1, 16, 8192};
    for (size_t i = 0; i < 4; i++) {
        int64_t ns = kv_timing_step_ns(&t, tokens[i], tokens[i] * 4096, tokens[i] * 4096);
        FUZZ_CHECK(ns >= 0, "step of %lld ns", (long long)ns);
    }
    char desc[KV_TIMING_DESCRIBE_MAX]; /* as summary.c gives it */
    kv_timing_describe(&t, desc, sizeof desc);
    FUZZ_CHECK(strlen(desc) < sizeof desc - 1, "description truncated: %s", desc);
    /* the description (the config echo of summary.json) reads back as the same model */
    kv_timing back;
    rc = kv_timing_parse(desc, &back, &d);
    FUZZ_CHECK(rc == 0, "description '%s' of '%s' rejected: %s", desc, spec, d.msg);
    FUZZ_CHECK(back.kind == t.kind, "kind changed");
#define CLOSE(x, y) (fabs((x) - (y)) <= 1e-8 * fabs(y))
    if (t.kind == KV_TIME_FIXED)
        FUZZ_CHECK(back.fixed_ns == t.fixed_ns, "fixed %lld → '%s'", (long long)t.fixed_ns, desc);
    else if (t.kind == KV_TIME_LINEAR)
        FUZZ_CHECK(CLOSE(back.a, t.a) && CLOSE(back.b, t.b) && CLOSE(back.c, t.c), "'%s'", desc);
    else
        FUZZ_CHECK(CLOSE(back.overhead_s, t.overhead_s) && CLOSE(back.mfu, t.mfu) &&
                       CLOSE(back.mbu, t.mbu),
                   "'%s'", desc);
    free(spec);
    return 0;
}
