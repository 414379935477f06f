/* Harness: SLO specs (kv_slo_parse, kv_slo_finish; README "SLOs").
 *
 * Checks: a parse that fails leaves the set exactly as it was; one that succeeds appends
 * known, distinct keys with a finite limit — a positive time for latencies, a fraction
 * ≥ 0 for rates, reject_rate ≤ 1 — and at most KV_SLO_MAX of them; kv_slo_finish then
 * bounds reject_rate exactly once.  A spec is parsed into an empty set and into a set that
 * already holds one SLO, so "given twice" is exercised.
 */
#include <math.h>
#include <stdbool.h>

#include "fuzz.h"
#include "kvsim/plan.h"

static bool known_key(const char *k)
{
    static const char *const dists[] = {"ttft", "tpot", "e2e", "queue"};
    static const char *const stats[] = {"p50", "p90", "p95", "p99", "max", "mean"};
    if (!strcmp(k, "preemption_rate") || !strcmp(k, "reject_rate"))
        return true;
    for (size_t d = 0; d < 4; d++)
        for (size_t s = 0; s < 6; s++) {
            char buf[32];
            snprintf(buf, sizeof buf, "%s_%s", dists[d], stats[s]);
            if (!strcmp(k, buf))
                return true;
        }
    return false;
}

static void check_set(const kv_slo_set *s)
{
    FUZZ_CHECK(s->n <= KV_SLO_MAX, "%zu SLOs", s->n);
    for (size_t i = 0; i < s->n; i++) {
        const kv_slo *o = &s->slo[i];
        FUZZ_CHECK(known_key(o->name), "unknown key '%s' accepted", o->name);
        FUZZ_CHECK(isfinite(o->limit) && o->limit >= 0, "%s limit %g", o->name, o->limit);
        bool rate = !strcmp(o->name, "preemption_rate") || !strcmp(o->name, "reject_rate");
        FUZZ_CHECK(o->unit == (rate ? KV_SLO_FRACTION : KV_SLO_SECONDS), "%s unit", o->name);
        if (!rate)
            FUZZ_CHECK(o->limit > 0, "%s: a zero time", o->name);
        if (!strcmp(o->name, "reject_rate"))
            FUZZ_CHECK(o->limit <= 1, "reject_rate %g", o->limit);
        for (size_t j = 0; j < i; j++)
            FUZZ_CHECK(strcmp(o->name, s->slo[j].name) != 0, "'%s' twice", o->name);
    }
}

static void one(const char *spec, bool preload)
{
    kv_slo_set s, before;
    kv_slo_set_init(&s);
    kv_diag d = {{0}};
    if (preload)
        FUZZ_CHECK(kv_slo_parse(&s, "ttft_p99=2s", &d) == 0, "preload");
    memcpy(&before, &s, sizeof s);
    int rc = kv_slo_parse(&s, spec, &d);
    if (rc != 0) {
        fuzz_check_diag(rc, &d);
        FUZZ_CHECK(rc == -KV_EINVAL, "rc %d", rc);
        FUZZ_CHECK(memcmp(&before, &s, sizeof s) == 0, "set changed by a failed parse");
        return;
    }
    FUZZ_CHECK(s.n > before.n, "'%s' accepted and added nothing", spec);
    check_set(&s);
    rc = kv_slo_finish(&s, &d);
    if (rc != 0) {
        fuzz_check_diag(rc, &d);
        return;
    }
    check_set(&s);
    size_t rejects = 0;
    for (size_t i = 0; i < s.n; i++)
        rejects += !strcmp(s.slo[i].name, "reject_rate");
    FUZZ_CHECK(rejects == 1, "reject_rate %zu times after finish", rejects);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 2048)
        return 0;
    char *spec = fuzz_string(data, size);
    one(spec, false);
    one(spec, true);
    free(spec);
    return 0;
}
