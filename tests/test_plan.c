/* plan: SLO specs and the search (library, on synthetic verdicts), and `kvsim plan` end to
 * end: its answer is checked against independent `kvsim run` replays — the answer meets
 * every SLO, 10 % more load (one block less) violates one — with the SLOs evaluated here
 * from summary.json, not by the code under test. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/plan.h"
#include "kvsim/rng.h"
#include "support.h"

/* ---- SLO specs ---------------------------------------------------------------------- */

Test(plan_slo, parses_units_and_implies_reject_rate)
{
    kv_slo_set s;
    kv_diag d;
    kv_slo_set_init(&s);
    cr_assert_eq(kv_slo_parse(&s, "ttft_p99=2s, tpot_p99=100ms,queue_p50=250us", &d), 0, "%s",
                 d.msg);
    cr_assert_eq(kv_slo_parse(&s, "preemption_rate=1%,e2e_mean=1.5s", &d), 0, "%s", d.msg);
    cr_assert_eq(kv_slo_finish(&s, &d), 0);
    const char *names[] = {"ttft_p99",        "tpot_p99", "queue_p50",
                           "preemption_rate", "e2e_mean", "reject_rate"};
    double limits[] = {2.0, 0.1, 250e-6, 0.01, 1.5, 0};
    cr_assert_eq(s.n, 6);
    for (size_t i = 0; i < 6; i++) {
        cr_assert_str_eq(s.slo[i].name, names[i]);
        cr_assert(fabs(s.slo[i].limit - limits[i]) <= 1e-15, "%s = %g", names[i], s.slo[i].limit);
        cr_assert_eq(s.slo[i].implicit, i == 5);
    }
    cr_assert_eq(s.slo[0].unit, KV_SLO_SECONDS);
    cr_assert_eq(s.slo[3].unit, KV_SLO_FRACTION);
    char key[40];
    kv_slo_key(&s.slo[1], key, sizeof key);
    cr_assert_str_eq(key, "tpot_p99_s");
    kv_slo_key(&s.slo[3], key, sizeof key);
    cr_assert_str_eq(key, "preemption_rate");

    /* A spec that bounds reject_rate gets no implied one. */
    kv_slo_set_init(&s);
    cr_assert_eq(kv_slo_parse(&s, "reject_rate=0.02,ttft_p50=1s", &d), 0);
    cr_assert_eq(kv_slo_finish(&s, &d), 0);
    cr_assert_eq(s.n, 2);
    cr_assert(fabs(s.slo[0].limit - 0.02) < 1e-15);
    cr_assert_not(s.slo[0].implicit);
}

typedef struct slo_err {
    char spec[64];
    char msg[128];
} slo_err;

ParameterizedTestParameters(plan_slo, errors_name_the_key)
{
    static slo_err cases[] = {
        {"ttft_p99=2", "'ttft_p99': '2' needs a time unit: s, ms or us"},
        {"ttft_p99=2m", "'ttft_p99': unknown time unit 'm' in '2m'"},
        {"ttft_p99=0s", "'ttft_p99' must be a positive time (got '0s')"},
        /* found by fuzz_slo: positive, but 0 once in seconds */
        {"queue_mean=111e-320us", "'queue_mean' must be a positive time (got '111e-320us')"},
        {"tpot_p99=-1ms", "'tpot_p99' must not be negative (got '-1ms')"},
        {"tpot_p99=fast", "'tpot_p99': 'fast' is not a number"},
        {"ttft_p99=infs", "'ttft_p99': 'infs' is not a number"},
        {"ttft_p98=2s", "unknown SLO 'ttft_p98' (known: ttft, tpot, e2e or queue"},
        {"latency_p99=2s", "unknown SLO 'latency_p99'"},
        {"preemption_rate=2s", "'preemption_rate': '2s' is not a fraction (e.g. 0.01 or 1%)"},
        {"reject_rate=1.5", "'reject_rate' must be at most 1 (got '1.5')"},
        {"ttft_p99", "'ttft_p99' is not KEY=VALUE"},
        {"ttft_p99=2s,,tpot_p99=1s", "empty entry in 'ttft_p99=2s,,tpot_p99=1s'"},
        {"ttft_p99=2s,", "empty entry in 'ttft_p99=2s,'"},
        {"ttft_p99=2s,ttft_p99=3s", "'ttft_p99' is given twice"},
        {"", "empty SLO spec"},
    };
    return cr_make_param_array(slo_err, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(slo_err *c, plan_slo, errors_name_the_key)
{
    kv_slo_set s;
    kv_diag d;
    kv_slo_set_init(&s);
    cr_assert_eq(kv_slo_parse(&s, "e2e_p50=9s", &d), 0);
    cr_assert_eq(kv_slo_parse(&s, c->spec, &d), -KV_EINVAL, "'%s' was accepted", c->spec);
    cr_assert(strstr(d.msg, c->msg), "'%s': message '%s' lacks '%s'", c->spec, d.msg, c->msg);
    cr_assert_eq(s.n, 1, "a failed parse left the set changed");
}

Test(plan_slo, measures_summary_figures)
{
    kv_summary sum;
    memset(&sum, 0, sizeof sum);
    sum.requests.total = 200;
    sum.requests.finished = 190;
    sum.requests.rejected = 6;
    sum.requests.unfinished = 4;
    sum.preemptions = 5;
    sum.latency_s.ttft.p99 = 1.25;
    sum.latency_s.queue.mean = 0.5;
    kv_slo_set s;
    kv_diag d;
    kv_slo_set_init(&s);
    cr_assert_eq(kv_slo_parse(&s, "ttft_p99=1s,queue_mean=1s,preemption_rate=0.05", &d), 0);
    cr_assert_eq(kv_slo_finish(&s, &d), 0);
    double v[4];
    for (int i = 0; i < 4; i++)
        v[i] = kv_slo_measure(&s.slo[i], &sum);
    cr_assert_eq(v[0], 1.25);
    cr_assert_eq(v[1], 0.5);
    cr_assert_eq(v[2], 5.0 / 200);  /* preemptions per request of the trace */
    cr_assert_eq(v[3], 10.0 / 200); /* rejected + unfinished */
    cr_assert_not(kv_slo_met(&s.slo[0], v[0]));
    cr_assert(kv_slo_met(&s.slo[1], v[1]));
    cr_assert(kv_slo_met(&s.slo[2], v[2]));
    cr_assert_not(kv_slo_met(&s.slo[3], v[3]), "the implied reject_rate=0 is violated");
    cr_assert_eq(kv_slo_ratio(&s.slo[0], v[0]), 1.25);
    cr_assert(isinf(kv_slo_ratio(&s.slo[3], v[3])));
    cr_assert_eq(kv_slo_ratio(&s.slo[3], 0), 0);
    cr_assert(kv_slo_met(&s.slo[0], 1.0), "the bound itself meets");

    /* Nothing finished: latency figures are undefined and never meet. */
    sum.requests.finished = 0;
    cr_assert(isnan(kv_slo_measure(&s.slo[0], &sum)));
    cr_assert_not(kv_slo_met(&s.slo[0], kv_slo_measure(&s.slo[0], &sum)));
}

/* ---- the search, on synthetic verdicts ---------------------------------------------- */

typedef bool (*verdict_fn)(double x, const void *ctx);

static void drive(kv_search *s, verdict_fn f, const void *ctx)
{
    double x;
    while (kv_search_next(s, &x)) {
        for (size_t i = 0; i < s->n; i++)
            cr_assert_neq(s->pts[i].x, x, "value %g proposed twice", x);
        cr_assert(x >= s->cfg.min && x <= s->cfg.max, "%g outside the bounds", x);
        if (s->cfg.integer)
            cr_assert_eq(x, floor(x), "%g is not whole", x);
        kv_search_record(s, x, f(x, ctx));
    }
}

static bool below(double x, const void *ctx)
{
    return x <= *(const double *)ctx;
}

static bool at_least(double x, const void *ctx)
{
    return x >= *(const double *)ctx;
}

static kv_search_config load_cfg(void)
{
    return (kv_search_config){.min = 0.001,
                              .max = 1000,
                              .start = 1,
                              .harder_up = true,
                              .factor = 2,
                              .tolerance = 0.01,
                              .confirm = 0.1,
                              .max_probes = 40};
}

Test(plan_search, monotone_thresholds_are_bracketed_within_tolerance)
{
    kv_rng rng;
    kv_rng_seed(&rng, 42);
    for (int k = 0; k < 300; k++) {
        /* thresholds log-uniform over [0.002, 500] */
        double t = exp(log(0.002) + kv_rng_uniform(&rng) * (log(500) - log(0.002)));
        kv_search_config c = load_cfg();
        kv_search s;
        kv_search_init(&s, &c);
        drive(&s, below, &t);
        kv_search_result r;
        kv_search_result_get(&s, &r);
        cr_assert_eq(r.status, KV_SEARCH_FOUND, "threshold %g: %s", t,
                     kv_search_status_name(r.status));
        double a = s.pts[r.answer].x, n = s.pts[r.next].x;
        cr_assert(a <= t && n > t, "threshold %g: answer %g, next %g", t, a, n);
        cr_assert(n / a <= 1.01 + 1e-12, "threshold %g: bracket %g..%g wider than 1%%", t, a, n);
        cr_assert(r.confirm >= 0 && !s.pts[r.confirm].meets, "threshold %g: no +10%% check", t);
        cr_assert(fabs(s.pts[r.confirm].x / a - 1.1) < 0.001);
        cr_assert_not(r.non_monotone);
        cr_assert(s.n <= 30, "threshold %g took %zu probes", t, s.n);
        kv_search_release(&s);
    }
}

Test(plan_search, pools_search_down_to_the_exact_block)
{
    double t = 1234;
    kv_search_config c = {.min = 2,
                          .max = 100000,
                          .start = 100000,
                          .harder_up = false,
                          .integer = true,
                          .factor = 2,
                          .tolerance = 1e-6,
                          .confirm = 0.1,
                          .max_probes = 60};
    kv_search s;
    kv_search_init(&s, &c);
    drive(&s, at_least, &t);
    kv_search_result r;
    kv_search_result_get(&s, &r);
    cr_assert_eq(r.status, KV_SEARCH_FOUND);
    cr_assert_eq(s.pts[r.answer].x, 1234);
    cr_assert_eq(s.pts[r.next].x, 1233);
    cr_assert_eq(s.pts[r.confirm].x, floor(1234 / 1.1 + 0.5));
    kv_search_release(&s);
}

Test(plan_search, bounds_none_and_probe_limit)
{
    kv_search_config c = load_cfg();
    kv_search s;
    kv_search_result r;
    double t = 1e9; /* everything meets */
    kv_search_init(&s, &c);
    drive(&s, below, &t);
    kv_search_result_get(&s, &r);
    cr_assert_eq(r.status, KV_SEARCH_BOUND);
    cr_assert_eq(s.pts[r.answer].x, 1000);
    cr_assert_eq(r.next, -1);
    kv_search_release(&s);

    t = 1e-9; /* nothing meets */
    kv_search_init(&s, &c);
    drive(&s, below, &t);
    kv_search_result_get(&s, &r);
    cr_assert_eq(r.status, KV_SEARCH_NONE);
    cr_assert_eq(r.answer, -1);
    cr_assert_eq(s.pts[r.next].x, 0.001, "the easiest probe is the --min bound");
    kv_search_release(&s);

    t = 3.7;
    c.max_probes = 4;
    kv_search_init(&s, &c);
    drive(&s, below, &t);
    kv_search_result_get(&s, &r);
    cr_assert_eq(s.n, 4);
    cr_assert_eq(r.status, KV_SEARCH_PROBE_LIMIT);
    cr_assert(s.pts[r.answer].x <= 3.7 && s.pts[r.next].x > 3.7);
    kv_search_release(&s);
}

/* Meets below 1.5 and again in [1.6, 1.65]: the +10 % check lands in the second window. */
static bool two_windows(double x, const void *ctx)
{
    (void)ctx;
    return x <= 1.5 || (x >= 1.6 && x <= 1.65);
}

Test(plan_search, non_monotone_verdicts_are_reported)
{
    kv_search_config c = load_cfg();
    kv_search s;
    kv_search_init(&s, &c);
    drive(&s, two_windows, NULL);
    kv_search_result r;
    kv_search_result_get(&s, &r);
    cr_assert_eq(r.status, KV_SEARCH_FOUND);
    double a = s.pts[r.answer].x;
    cr_assert(a >= 1.6 && a <= 1.65, "answer %g is not the highest passing probe", a);
    cr_assert(r.non_monotone, "failing probes below the answer went unreported");
    for (size_t i = 0; i < s.n; i++)
        if (s.pts[i].x > a)
            cr_assert_not(s.pts[i].meets, "probe %g above the answer %g meets", s.pts[i].x, a);
    kv_search_release(&s);
}

Test(plan_search, rounds_to_significant_digits)
{
    cr_assert_eq(kv_round_sig(1.41421356, 4), 1.414);
    cr_assert_eq(kv_round_sig(0.0156249, 4), 0.01562);
    cr_assert_eq(kv_round_sig(1.0 / 3.0, 12), 0.333333333333);
    char buf[32];
    snprintf(buf, sizeof buf, "%.12g", kv_round_sig(2.0 / 3.83, 12));
    cr_assert_eq(strtod(buf, NULL), kv_round_sig(2.0 / 3.83, 12), "12 digits round-trip");
}

/* ---- kvsim plan against kvsim run --------------------------------------------------- */

#define TIME_MODEL "linear:0.002,0.00002,0.0000001"
#define SLO_SPEC   "ttft_p99=1s,tpot_p99=50ms,preemption_rate=0.05"
/* A replica's pool in the replica searches: llama-3-8b's own at TP 2 on an H100, or under
 * sanitizers (invariant walks O(pool) after every step) 3,000 blocks, which the trace never
 * fills: the answer is the same. */
#define REPLICA_POOL (KV_TEST_SANITIZED ? "3000" : "64021")

/* 80 requests, about 4.7 req/s, generated into dir. */
static char *make_trace(const char *dir)
{
    size_t n = strlen(dir) + 16;
    char *path = malloc(n);
    snprintf(path, n, "%s/t.jsonl", dir);
    run_result r = run_kvsim("gen", "--prompt", "p50=400,p95=1500,p99=3000", "--output",
                             "p50=100,p95=300,p99=500", "--rate", "4", "--requests", "80", "--seed",
                             "7", "--out", path, NULL);
    cr_assert_eq(r.status, 0, "gen: %s", r.err);
    run_result_free(&r);
    return path;
}

static json_t *json_of(const run_result *r)
{
    json_error_t je;
    json_t *j = json_loads(r->out, 0, &je);
    cr_assert(j, "stdout is not JSON (%s): %.300s", je.text, r->out);
    return j;
}

static double num(const json_t *o, const char *k1, const char *k2, const char *k3)
{
    const json_t *v = json_object_get(o, k1);
    if (k2)
        v = json_object_get(v, k2);
    if (k3)
        v = json_object_get(v, k3);
    cr_assert(json_is_number(v), "%s.%s.%s is not a number", k1, k2 ? k2 : "", k3 ? k3 : "");
    return json_number_value(v);
}

/* SLO_SPEC and the implied reject_rate=0, evaluated from a run's summary.json: the names
 * of the violated SLOs, comma-separated ("" when every SLO holds). */
static void violated(const json_t *s, char *out, size_t n)
{
    double total = num(s, "requests", "total", NULL);
    out[0] = '\0';
    if (num(s, "latency_s", "ttft", "p99") > 1.0)
        strncat(out, "ttft_p99,", n - strlen(out) - 1);
    if (num(s, "latency_s", "tpot", "p99") > 0.050)
        strncat(out, "tpot_p99,", n - strlen(out) - 1);
    if (num(s, "preemptions", NULL, NULL) / total > 0.05)
        strncat(out, "preemption_rate,", n - strlen(out) - 1);
    if (num(s, "requests", "rejected", NULL) + num(s, "requests", "unfinished", NULL) > 0)
        strncat(out, "reject_rate,", n - strlen(out) - 1);
}

/* kvsim run TRACE --json with the plan's setup, plus `extra` (NULL-terminated pairs). */
static json_t *replay(const char *trace, const char *time_scale, const char *pool_opt,
                      const char *pool)
{
    const char *args[16] = {"run",          trace,      "--time-model", TIME_MODEL,
                            "--time-scale", time_scale, "--json"};
    size_t n = 7;
    args[n++] = pool_opt;
    args[n++] = pool;
    args[n] = NULL;
    run_result r = run_kvsimv(args);
    cr_assert_eq(r.status, 0, "run: %s", r.err);
    json_t *j = json_of(&r);
    run_result_free(&r);
    return j;
}

static const char *g17(char *buf, double v)
{
    sprintf(buf, "%.17g", v);
    return buf;
}

Test(plan_cli, load_answer_meets_and_ten_percent_more_violates)
{
    char *dir = make_temp_dir();
    char *trace = make_trace(dir);
    run_result r = run_kvsim("plan", trace, "--num-blocks", "600", "--time-model", TIME_MODEL,
                             "--slo", SLO_SPEC, "--json", NULL);
    cr_assert_eq(r.status, 0, "plan: %s", r.err);
    json_t *p = json_of(&r);
    cr_assert_str_eq(json_string_value(json_object_get(p, "status")), "found");
    cr_assert_str_eq(json_string_value(json_object_get(p, "over")), "load");
    double answer = num(p, "answer", NULL, NULL);
    double ts = num(p, "answer_time_scale", NULL, NULL);
    cr_assert(answer > 1, "the trace holds more than its own rate (answer %g)", answer);
    cr_assert(fabs(ts * answer - 1) < 1e-11, "time scale %.17g is not 1/answer %g", ts, answer);

    /* The answer replayed by kvsim run: every SLO holds, and the figures are the plan's. */
    char buf[64], v[128];
    json_t *at = replay(trace, g17(buf, ts), "--num-blocks", "600");
    violated(at, v, sizeof v);
    cr_assert_str_empty(v, "at the answer %gx, run violates %s", answer, v);
    const json_t *pa = json_object_get(p, "at_answer");
    cr_assert_eq(num(pa, "ttft_p99_s", NULL, NULL), num(at, "latency_s", "ttft", "p99"));
    cr_assert_eq(num(pa, "tpot_p99_s", NULL, NULL), num(at, "latency_s", "tpot", "p99"));
    cr_assert_eq(num(at, "config", "time_scale", NULL), ts);

    /* 10 % more load: arrivals compressed by another factor 1.1. */
    json_t *above = replay(trace, g17(buf, ts / 1.1), "--num-blocks", "600");
    violated(above, v, sizeof v);
    cr_assert_str_not_empty(v, "at 1.1 x the answer (%gx) every SLO still holds", answer * 1.1);
    cr_assert(strstr(v, json_string_value(json_object_get(p, "binding"))),
              "binding %s is not among the SLOs violated above the answer (%s)",
              json_string_value(json_object_get(p, "binding")), v);

    /* The probe just above the answer is within the tolerance and violates. */
    double next = num(p, "next", NULL, NULL);
    cr_assert(next > answer && next <= answer * 1.01 + 1e-12, "next %g, answer %g", next, answer);
    cr_assert_not(json_is_true(json_object_get(json_object_get(p, "at_next"), "meets_slo")));
    json_decref(at);
    json_decref(above);
    json_decref(p);
    run_result_free(&r);
    free(trace);
    rm_rf(dir);
    free(dir);
}

Test(plan_cli, time_scale_option_is_the_base_load)
{
    char *dir = make_temp_dir();
    char *trace = make_trace(dir);
    /* One probe (load 1) is enough for the trace's own rate. */
    run_result r1 = run_kvsim("plan", trace, "--num-blocks", "600", "--time-model", TIME_MODEL,
                              "--slo", SLO_SPEC, "--max-probes", "1", "--json", NULL);
    run_result r2 = run_kvsim("plan", trace, "--num-blocks", "600", "--time-model", TIME_MODEL,
                              "--slo", SLO_SPEC, "--time-scale", "2", "--json", NULL);
    cr_assert_eq(r1.status, 0, "%s", r1.err);
    cr_assert_eq(r2.status, 0, "%s", r2.err);
    json_t *p1 = json_of(&r1), *p2 = json_of(&r2);
    /* Stretching the trace by 2 halves its rate: load 1 of the second plan offers half. */
    cr_assert_eq(num(p2, "base", "time_scale", NULL), 2.0);
    double rate1 = num(p1, "base", "arrival_rate_req_s", NULL);
    double rate2 = num(p2, "base", "arrival_rate_req_s", NULL);
    cr_assert(fabs(rate1 / rate2 - 2) < 1e-6, "rates %g and %g", rate1, rate2);
    double ts = num(p2, "answer_time_scale", NULL, NULL);
    cr_assert(fabs(ts * num(p2, "answer", NULL, NULL) / 2 - 1) < 1e-11);
    /* Whatever the base, `kvsim run --time-scale <answer_time_scale>` is the same replay. */
    char buf[64];
    json_t *at = replay(trace, g17(buf, ts), "--num-blocks", "600");
    const json_t *pa = json_object_get(p2, "at_answer");
    cr_assert_eq(num(pa, "ttft_p99_s", NULL, NULL), num(at, "latency_s", "ttft", "p99"));
    cr_assert_eq(num(pa, "tpot_p99_s", NULL, NULL), num(at, "latency_s", "tpot", "p99"));
    cr_assert_eq(num(pa, "preemptions", NULL, NULL), num(at, "preemptions", NULL, NULL));
    json_decref(at);
    json_decref(p1);
    json_decref(p2);
    run_result_free(&r1);
    run_result_free(&r2);
    free(trace);
    rm_rf(dir);
    free(dir);
}

Test(plan_cli, smallest_pool_meets_and_one_block_less_violates)
{
    char *dir = make_temp_dir();
    char *trace = make_trace(dir);
    run_result r = run_kvsim("plan", trace, "--over", "num_blocks", "--load", "2", "--max", "1200",
                             "--tolerance", "0.000001", "--time-model", TIME_MODEL, "--slo",
                             SLO_SPEC, "--json", NULL);
    cr_assert_eq(r.status, 0, "plan: %s", r.err);
    json_t *p = json_of(&r);
    cr_assert_str_eq(json_string_value(json_object_get(p, "status")), "found");
    double blocks = num(p, "answer", NULL, NULL);
    cr_assert_eq(num(p, "answer_num_blocks", NULL, NULL), blocks);
    cr_assert_eq(num(p, "next", NULL, NULL), blocks - 1, "exact search: next is one block less");
    cr_assert_eq(num(p, "answer_time_scale", NULL, NULL), 0.5);

    char buf[32], v[128];
    snprintf(buf, sizeof buf, "%.0f", blocks);
    json_t *at = replay(trace, "0.5", "--num-blocks", buf);
    violated(at, v, sizeof v);
    cr_assert_str_empty(v, "at the answer %s blocks, run violates %s", buf, v);
    snprintf(buf, sizeof buf, "%.0f", blocks - 1);
    json_t *less = replay(trace, "0.5", "--num-blocks", buf);
    violated(less, v, sizeof v);
    cr_assert_str_not_empty(v, "one block less (%s) still meets every SLO", buf);

    /* --over kv_budget walks the same block axis and reports bytes; bounds given in bytes
     * that are not block multiples become whole blocks.  (Its answer need not equal the
     * num_blocks one: preemption counts are not monotone in the pool size, and a search
     * from other bounds may stop at another pool that meets with one block less failing.) */
    char lo[32], hi[32];
    double bb = 2097152; /* llama-3-8b, bf16, 16 tokens: 16 x 128 KiB */
    snprintf(lo, sizeof lo, "%.0f", (blocks - 6) * bb + 1000);
    snprintf(hi, sizeof hi, "%.0f", blocks * bb + 1000);
    run_result rb = run_kvsim("plan", trace, "--over", "kv-budget", "--load", "2", "--min", lo,
                              "--max", hi, "--tolerance", "0.000001", "--time-model", TIME_MODEL,
                              "--slo", SLO_SPEC, "--json", NULL);
    cr_assert_eq(rb.status, 0, "plan: %s", rb.err);
    json_t *pb = json_of(&rb);
    cr_assert_str_eq(json_string_value(json_object_get(pb, "over")), "kv_budget");
    cr_assert_str_eq(json_string_value(json_object_get(pb, "status")), "found");
    cr_assert_eq(num(pb, "base", "block_bytes", NULL), bb);
    cr_assert_eq(num(pb, "search", "min", NULL), (blocks - 6) * bb, "bounds are whole blocks");
    cr_assert_eq(num(pb, "search", "max", NULL), blocks * bb);
    double nb = num(pb, "answer_num_blocks", NULL, NULL);
    double bytes = num(pb, "answer", NULL, NULL);
    cr_assert_eq(bytes, nb * bb);
    cr_assert_eq(num(pb, "next", NULL, NULL), (nb - 1) * bb);
    snprintf(buf, sizeof buf, "%.0f", bytes);
    json_t *atb = replay(trace, "0.5", "--kv-budget", buf);
    cr_assert_eq(num(atb, "blocks", "num_blocks", NULL), nb);
    violated(atb, v, sizeof v);
    cr_assert_str_empty(v, "at the answer budget %s, run violates %s", buf, v);
    json_decref(less);
    snprintf(buf, sizeof buf, "%.0f", bytes - 1);
    less = replay(trace, "0.5", "--kv-budget", buf);
    violated(less, v, sizeof v);
    cr_assert_str_not_empty(v, "one byte less (a block less) still meets every SLO");

    json_decref(atb);
    json_decref(pb);
    run_result_free(&rb);
    json_decref(at);
    json_decref(less);
    json_decref(p);
    run_result_free(&r);
    free(trace);
    rm_rf(dir);
    free(dir);
}

Test(plan_cli, fewest_replicas_meet_and_one_fewer_violates)
{
    /* The trace at 8x its rate: one replica cannot hold it, a few can.  The search doubles
     * from 1, then bisects, so the answer R comes with a violating probe at R − 1, and
     * `kvsim run --replicas R` reproduces both verdicts. */
    char *dir = make_temp_dir();
    char *trace = make_trace(dir);
    run_result r = run_kvsim("plan", trace, "--over", "replicas", "--load", "8", "--router",
                             "least-requests", "--tp", "2", "--num-blocks", REPLICA_POOL,
                             "--time-model", TIME_MODEL, "--slo", SLO_SPEC, "--json", NULL);
    cr_assert_eq(r.status, 0, "plan: %s", r.err);
    json_t *p = json_of(&r);
    cr_assert_str_eq(json_string_value(json_object_get(p, "over")), "replicas");
    cr_assert_str_eq(json_string_value(json_object_get(p, "status")), "found");
    double R = num(p, "answer", NULL, NULL);
    cr_assert_gt(R, 1);
    cr_assert_eq(num(p, "answer_replicas", NULL, NULL), R);
    cr_assert_eq(num(p, "answer_gpus", NULL, NULL), 2 * R, "replicas x TP 2");
    cr_assert_eq(num(p, "base", "gpus_per_replica", NULL), 2);
    cr_assert_eq(num(p, "next", NULL, NULL), R - 1, "R - 1 was probed and violates");
    /* The probes were 1, 2, 4, ... up to the first that met, then the bisection. */
    json_t *probes = json_object_get(p, "probes");
    cr_assert_eq(num(json_array_get(probes, 0), "value", NULL, NULL), 1);
    cr_assert_eq(num(json_array_get(probes, 0), "gpus", NULL, NULL), 2);
    char buf[32], v[128];
    for (int k = 0; k < 2; k++) {
        snprintf(buf, sizeof buf, "%.0f", R - k);
        const char *args[] = {"run",          trace,
                              "--time-model", TIME_MODEL,
                              "--time-scale", "0.125",
                              "--replicas",   buf,
                              "--router",     "least-requests",
                              "--tp",         "2",
                              "--num-blocks", REPLICA_POOL,
                              "--json",       NULL};
        run_result rr = run_kvsimv(args);
        cr_assert_eq(rr.status, 0, "run: %s", rr.err);
        json_t *s = json_of(&rr);
        violated(s, v, sizeof v);
        if (k == 0)
            cr_assert_str_empty(v, "at %s replicas, run violates %s", buf, v);
        else
            cr_assert_str_not_empty(v, "%s replicas still meet every SLO", buf);
        json_decref(s);
        run_result_free(&rr);
    }
    json_decref(p);
    run_result_free(&r);
    /* The human answer says replicas x TP x PP = GPUs, and that R - 1 violates. */
    r = run_kvsim("plan", trace, "--over", "replicas", "--load", "8", "--router", "least-requests",
                  "--tp", "2", "--num-blocks", REPLICA_POOL, "--time-model", TIME_MODEL, "--slo",
                  SLO_SPEC, NULL);
    cr_assert_eq(r.status, 0, "plan: %s", r.err);
    snprintf(v, sizeof v,
             "  answer      fewest replicas within SLOs: %.0f x TP2 PP1 = %.0f H100-SXM GPUs", R,
             2 * R);
    cr_assert(strstr(r.out, v), "%s", r.out);
    snprintf(v, sizeof v, "  checked     %.0f replicas violate the SLOs: %.0f is the fewest\n",
             R - 1, R);
    cr_assert(strstr(r.out, v), "%s", r.out);
    run_result_free(&r);
    /* A load search with --replicas R answers what R replicas hold. */
    snprintf(buf, sizeof buf, "%.0f", R);
    r = run_kvsim("plan", trace, "--replicas", buf, "--router", "least-requests", "--tp", "2",
                  "--num-blocks", REPLICA_POOL, "--time-model", TIME_MODEL, "--slo", SLO_SPEC,
                  "--json", NULL);
    cr_assert_eq(r.status, 0, "plan: %s", r.err);
    p = json_of(&r);
    cr_assert_geq(num(p, "answer_load", NULL, NULL), 8, "R replicas hold at least the load 8");
    cr_assert_eq(num(p, "answer_replicas", NULL, NULL), R);
    json_decref(p);
    run_result_free(&r);
    free(trace);
    rm_rf(dir);
    free(dir);
}

/* --target-rate R: "what holds R requests/s" is the replica search (the default with it)
 * at the load that offers R, R / the trace's rate; every probe offers R.  The answer is the
 * one `--over replicas --load <that load>` gives, and it carries tokens/s per GPU and the
 * cost per million output tokens of the replay at the answer. */
Test(plan_cli, target_rate_is_the_replica_search_at_the_load_that_offers_it)
{
    char *dir = make_temp_dir();
    char *trace = make_trace(dir);
    run_result r = run_kvsim("plan", trace, "--target-rate", "30", "--router", "least-requests",
                             "--tp", "2", "--num-blocks", REPLICA_POOL, "--gpu-cost-per-hour", "3",
                             "--time-model", TIME_MODEL, "--slo", SLO_SPEC, "--json", NULL);
    cr_assert_eq(r.status, 0, "plan: %s", r.err);
    json_t *p = json_of(&r);
    run_result_free(&r);
    cr_assert_str_eq(json_string_value(json_object_get(p, "over")), "replicas");
    cr_assert_eq(num(p, "base", "target_rate_req_s", NULL), 30);
    double load = num(p, "base", "load", NULL), base = num(p, "base", "arrival_rate_req_s", NULL);
    cr_assert(fabs(load * base / 30 - 1) < 1e-11, "load %.17g x rate %.17g is not 30", load, base);
    json_t *probes = json_object_get(p, "probes");
    cr_assert_gt(json_array_size(probes), 1);
    for (size_t i = 0; i < json_array_size(probes); i++) {
        const json_t *pr = json_array_get(probes, i);
        cr_assert(fabs(num(pr, "arrival_rate_req_s", NULL, NULL) / 30 - 1) < 1e-6,
                  "probe %zu offers %g req/s", i, num(pr, "arrival_rate_req_s", NULL, NULL));
        double tok = num(pr, "output_tok_per_s", NULL, NULL), gpus = num(pr, "gpus", NULL, NULL);
        cr_assert(fabs(num(pr, "output_tok_per_s_per_gpu", NULL, NULL) / (tok / gpus) - 1) < 1e-13);
        cr_assert(fabs(num(pr, "cost_per_million_output_tokens", NULL, NULL) /
                           (3 * gpus / 3600 / tok * 1e6) -
                       1) < 1e-12);
    }
    double R = num(p, "answer", NULL, NULL);
    const json_t *at = json_object_get(p, "at_answer");
    cr_assert_eq(num(p, "answer_output_tok_per_s_per_gpu", NULL, NULL),
                 num(at, "output_tok_per_s_per_gpu", NULL, NULL));
    cr_assert_eq(num(p, "answer_cost_per_million_output_tokens", NULL, NULL),
                 num(at, "cost_per_million_output_tokens", NULL, NULL));
    /* The same search, spelled as a load. */
    char lbuf[40];
    snprintf(lbuf, sizeof lbuf, "%.12g", load);
    r = run_kvsim("plan", trace, "--over", "replicas", "--load", lbuf, "--router", "least-requests",
                  "--tp", "2", "--num-blocks", REPLICA_POOL, "--time-model", TIME_MODEL, "--slo",
                  SLO_SPEC, "--json", NULL);
    cr_assert_eq(r.status, 0, "plan: %s", r.err);
    json_t *q = json_of(&r);
    run_result_free(&r);
    cr_assert_eq(num(q, "answer", NULL, NULL), R);
    cr_assert(json_is_null(json_object_get(q, "answer_cost_per_million_output_tokens")),
              "no --gpu-cost-per-hour, no cost");
    json_decref(q);
    /* The human answer says what it searched for, and the cost at the answer. */
    r = run_kvsim("plan", trace, "--target-rate", "30", "--router", "least-requests", "--tp", "2",
                  "--num-blocks", REPLICA_POOL, "--gpu-cost-per-hour", "3", "--time-model",
                  TIME_MODEL, "--slo", SLO_SPEC, NULL);
    cr_assert_eq(r.status, 0, "plan: %s", r.err);
    char want[160];
    snprintf(want, sizeof want,
             "\n  target      30 req/s = load %gx the trace's %.4g req/s: the "
             "fewest replicas that hold it\n",
             load, base);
    cr_assert(strstr(r.out, want), "%s\nlacks: %s", r.out, want);
    snprintf(want, sizeof want,
             "\n  per GPU     %.1f output tokens/s at the answer (%.0f GPUs); "
             "%.4g per million output tokens at 3 per GPU-hour\n",
             num(at, "output_tok_per_s_per_gpu", NULL, NULL), 2 * R,
             num(at, "cost_per_million_output_tokens", NULL, NULL));
    cr_assert(strstr(r.out, want), "%s\nlacks: %s", r.out, want);
    run_result_free(&r);
    json_decref(p);
    free(trace);
    rm_rf(dir);
    free(dir);
}

Test(plan_cli, target_rate_errors)
{
    char *dir = make_temp_dir();
    char *trace = make_trace(dir);
    struct {
        const char *extra[4];
        int status;
        const char *msg;
    } cases[] = {
        {{"--load", "2"},
         2,
         "kvsim: error: --target-rate R and --load S both fix the load: give one\n"},
        {{"--over", "load"},
         2,
         "kvsim: error: --target-rate fixes the load: it needs --over replicas, num_blocks or "
         "kv_budget\n"},
        {{"--over", "num_blocks", "--target-rate", "1e9"}, 2, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *args[16] = {"plan", trace, "--slo", SLO_SPEC, "--target-rate", "30"};
        size_t n = 6;
        for (size_t k = 0; k < 4 && cases[i].extra[k]; k++)
            args[n++] = cases[i].extra[k];
        args[n] = NULL;
        run_result r = run_kvsimv(args);
        cr_assert_eq(r.status, cases[i].status, "case %zu: %s", i, r.err);
        if (cases[i].msg)
            cr_assert_str_eq(r.err, cases[i].msg);
        else
            cr_assert(strstr(r.err, "kvsim: error: --target-rate 1e+09 requests/s is ") &&
                          strstr(r.err, "outside the loads 1e-06 to 1e+06 a plan replays\n"),
                      "%s", r.err);
        run_result_free(&r);
    }
    /* Every request at once: no rate to scale. */
    char *once = write_file(dir, "once.jsonl",
                            "{\"arrival\": 0, \"prompt_len\": 40, \"output_len\": 8}\n"
                            "{\"arrival\": 0, \"prompt_len\": 50, \"output_len\": 8}\n");
    run_result r = run_kvsim("plan", once, "--slo", SLO_SPEC, "--target-rate", "30", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "kvsim: error: --target-rate: every request of the trace arrives at "
                            "once, so it has no arrival rate to scale to 30 requests/s\n");
    run_result_free(&r);
    free(once);
    free(trace);
    rm_rf(dir);
    free(dir);
}

/* plan.csv's rows, parsed: the first six columns and the column count. */
typedef struct csv_row {
    double load, rate, ttft, tpot, preempt;
    int meets;
} csv_row;

static size_t parse_csv(char *text, csv_row *rows, size_t max, char **header)
{
    char *save = NULL;
    *header = strtok_r(text, "\n", &save);
    size_t n = 0;
    for (char *line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cr_assert(n < max);
        csv_row *w = &rows[n++];
        int used = 0;
        cr_assert_eq(sscanf(line, "%lf,%lf,%lf,%lf,%lf,%d%n", &w->load, &w->rate, &w->ttft,
                            &w->tpot, &w->preempt, &w->meets, &used),
                     6, "row '%s'", line);
        cr_assert(line[used] == ',', "row '%s' ends after the six columns", line);
    }
    return n;
}

Test(plan_cli, files_are_deterministic_and_follow_the_schema)
{
    char *dir = make_temp_dir();
    char *trace = make_trace(dir);
    char out[2][512];
    char *text[2][2];
    const char *names[2] = {"plan.csv", "plan.json"};
    for (int k = 0; k < 2; k++) {
        snprintf(out[k], sizeof out[k], "%s/out%d/sub", dir, k);
        run_result r =
            run_kvsim("plan", trace, "--num-blocks", "600", "--time-model", TIME_MODEL, "--slo",
                      SLO_SPEC, "--slo", "e2e_p50=30s", "--out", out[k], "--quiet", NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_assert_str_empty(r.out, "--quiet printed: %s", r.out);
        run_result_free(&r);
        for (int f = 0; f < 2; f++) {
            char path[600], tmp[610];
            snprintf(path, sizeof path, "%s/%s", out[k], names[f]);
            snprintf(tmp, sizeof tmp, "%s.tmp", path);
            text[k][f] = read_file(path, NULL);
            cr_assert(text[k][f], "%s missing", path);
            cr_assert_not(file_exists(tmp), "%s left behind", tmp);
        }
    }
    cr_assert_str_eq(text[0][0], text[1][0], "plan.csv differs between two runs");
    /* plan.json differs only in its stamp's command line, which names each --out. */
    json_t *pj = json_loads(text[0][1], 0, NULL), *pj2 = json_loads(text[1][1], 0, NULL);
    cr_assert(pj && pj2);
    for (int k = 0; k < 2; k++) {
        const char *cmd = json_string_value(json_object_get(k ? pj2 : pj, "command"));
        cr_assert(cmd && strncmp(cmd, "kvsim plan ", 11) == 0 && strstr(cmd, out[k]),
                  "plan.json's command '%s' is not the command line run", cmd ? cmd : "(null)");
        cr_assert(json_is_string(json_object_get(k ? pj2 : pj, "kvsim_version")));
    }
    char *dumped[2];
    for (int k = 0; k < 2; k++) {
        json_t *c = json_deep_copy(k ? pj2 : pj);
        json_object_del(c, "command");
        dumped[k] = json_dumps(c, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
        json_decref(c);
    }
    cr_assert_str_eq(dumped[0], dumped[1], "plan.json differs between two runs");
    free(dumped[0]), free(dumped[1]);
    json_decref(pj2);
    cr_assert_eq(num(pj, "slo", "ttft_p99_s", NULL), 1.0);
    cr_assert_eq(num(pj, "slo", "tpot_p99_s", NULL), 0.05);
    cr_assert_eq(num(pj, "slo", "preemption_rate", NULL), 0.05);
    cr_assert_eq(num(pj, "slo", "e2e_p50_s", NULL), 30.0);
    cr_assert_eq(num(pj, "slo", "reject_rate", NULL), 0.0);
    const json_t *probes = json_object_get(pj, "probes");

    char *header;
    csv_row rows[64];
    size_t n = parse_csv(text[0][0], rows, 64, &header);
    cr_assert_str_eq(header,
                     "load,arrival_rate_req_s,ttft_p99_s,tpot_p99_s,preemption_rate,"
                     "meets_slo,value,time_scale,num_blocks,kv_budget_bytes,reject_rate,"
                     "preemptions,finished,rejected,unfinished,replicas,gpus,output_tok_per_s,"
                     "output_tok_per_s_per_gpu,cost_per_million_output_tokens,e2e_p50_s");
    cr_assert_eq(n, json_array_size(probes));
    cr_assert_eq(n, (size_t)num(pj, "search", "probes", NULL));
    size_t met = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *pr = json_array_get(probes, i);
        if (i > 0)
            cr_assert(rows[i].load > rows[i - 1].load, "rows not sorted by load");
        cr_assert_eq(rows[i].load, num(pr, "load", NULL, NULL));
        cr_assert_eq(rows[i].meets, json_is_true(json_object_get(pr, "meets_slo")));
        cr_assert_eq(rows[i].meets, rows[i].ttft <= 1.0 && rows[i].tpot <= 0.05 &&
                                        rows[i].preempt <= 0.05 &&
                                        num(pr, "slo", "e2e_p50_s", NULL) <= 30 &&
                                        num(pr, "reject_rate", NULL, NULL) == 0);
        cr_assert(fabs(rows[i].rate / rows[i].load / num(pj, "base", "arrival_rate_req_s", NULL) -
                       1) < 1e-6,
                  "arrival rate is not load x the trace's rate");
        met += (size_t)rows[i].meets;
    }
    cr_assert(met > 0 && met < n);
    json_decref(pj);
    for (int k = 0; k < 2; k++)
        for (int f = 0; f < 2; f++)
            free(text[k][f]);
    free(trace);
    rm_rf(dir);
    free(dir);
}

Test(plan_cli, no_answer_and_bound_are_answers_too)
{
    char *dir = make_temp_dir();
    char *trace = make_trace(dir);
    /* 20 blocks cannot hold the longest requests: they are rejected at every load, and the
     * implied reject_rate=0 makes every load violate. */
    run_result r = run_kvsim("plan", trace, "--num-blocks", "20", "--time-model", TIME_MODEL,
                             "--slo", "ttft_p99=1s", "--json", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    json_t *p = json_of(&r);
    cr_assert_str_eq(json_string_value(json_object_get(p, "status")), "none");
    cr_assert(json_is_null(json_object_get(p, "answer")));
    cr_assert_str_eq(json_string_value(json_object_get(p, "binding")), "reject_rate");
    cr_assert_eq(num(p, "next", NULL, NULL), 0.001, "the --min bound was probed");
    json_decref(p);
    run_result_free(&r);

    r = run_kvsim("plan", trace, "--num-blocks", "20", "--time-model", TIME_MODEL, "--slo",
                  "ttft_p99=1s", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "no load within SLOs: even the bound 0.001x violates them"), "%s",
              r.out);
    run_result_free(&r);

    r = run_kvsim("plan", trace, "--num-blocks", "600", "--time-model", TIME_MODEL, "--slo",
                  "ttft_p99=1000s,tpot_p99=1s", "--max", "3", "--json", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    p = json_of(&r);
    cr_assert_str_eq(json_string_value(json_object_get(p, "status")), "bound");
    cr_assert_eq(num(p, "answer", NULL, NULL), 3);
    cr_assert(json_is_null(json_object_get(p, "binding")));
    cr_assert(json_is_string(json_object_get(p, "closest")));
    json_decref(p);
    run_result_free(&r);
    free(trace);
    rm_rf(dir);
    free(dir);
}

Test(plan_cli, human_answer_names_the_binding_slo)
{
    char *dir = make_temp_dir();
    char *trace = make_trace(dir);
    run_result r = run_kvsim("plan", trace, "--num-blocks", "600", "--time-model", TIME_MODEL,
                             "--slo", SLO_SPEC, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_empty(r.err);
    const char *want[] = {"kvsim plan: ",
                          "(80 requests, ",
                          "highest load within SLOs: ",
                          "x the trace rate = ",
                          " req/s (--time-scale ",
                          "binding     ",
                          "checked     10% higher",
                          "search      found after ",
                          "<- answer",
                          "reject_rate <= 0 (implied)"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert(strstr(r.out, want[i]), "output lacks '%s':\n%s", want[i], r.out);
    run_result_free(&r);

    r = run_kvsim("plan", "--help", NULL);
    cr_assert_eq(r.status, 0);
    const char *help[] = {
        "--slo SPEC",  "--over WHAT",    "--tolerance",
        "--confirm",   "--max-probes",   "preemption_rate = preemptions / requests",
        "reject_rate", "--time-scale F", "--num-blocks N"};
    for (size_t i = 0; i < sizeof help / sizeof help[0]; i++)
        cr_assert(strstr(r.out, help[i]), "--help lacks '%s'", help[i]);
    run_result_free(&r);
    r = run_kvsim("--help", NULL);
    cr_assert(strstr(r.out, "  plan "), "the command list names plan");
    run_result_free(&r);
    free(trace);
    rm_rf(dir);
    free(dir);
}

/* ---- errors ------------------------------------------------------------------------- */

typedef struct err_case {
    char args[10][48]; /* after "plan"; "@rel" is a path under the source tree */
    int status;
    char msg[128];
} err_case;

ParameterizedTestParameters(plan_cli, errors)
{
    static err_case cases[] = {
        {{"--slo", "ttft_p99=2s"}, 2, "kvsim plan needs a TRACE file"},
        {{"@traces/tiny.csv"}, 2, "kvsim plan needs --slo, e.g. --slo ttft_p99=2s"},
        {{"@traces/tiny.csv", "@traces/tiny.csv", "--slo", "ttft_p99=2s"},
         2,
         "kvsim plan takes one TRACE, got 2"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2"},
         2,
         "--slo: 'ttft_p99': '2' needs a time unit: s, ms or us"},
        {{"@traces/tiny.csv", "--slo", "ttft_p42=2s"}, 2, "--slo: unknown SLO 'ttft_p42'"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--slo", "ttft_p99=1s"},
         2,
         "--slo: 'ttft_p99' is given twice"},
        {{"@traces/tiny.csv", "--slo", "reject_rate=5%,preemption_rate=x"},
         2,
         "--slo: 'preemption_rate': 'x' is not a number"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--over", "memory"},
         2,
         "--over: unknown quantity 'memory' (load, num_blocks, kv_budget or replicas)"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--min", "4", "--max", "2"},
         2,
         "--min (4) must be below --max (2)"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--min", "0"},
         2,
         "--min: '0' must be between 1e-06 and 1e+06"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--max", "lots"},
         2,
         "--max: 'lots' is not a number"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--over", "num_blocks", "--min", "1"},
         2,
         "--min: '1' must be at least 2"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--over", "kv_budget", "--max", "3MiB"},
         2,
         "--max: '3MiB' holds 1 blocks of 2097152 bytes"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--over", "num_blocks", "--min", "9000000",
          "--max", "8000000"},
         2,
         "--min (9e+06) must be below --max (8e+06)"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--load", "2"},
         2,
         "--load fixes the load of a pool or replica search: it needs --over num_blocks"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--over", "num_blocks", "--num-blocks",
          "100"},
         2,
         "--over num_blocks searches the pool size: drop --num-blocks"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--over", "kv_budget", "--kv-budget", "8GiB"},
         2,
         "--over kv_budget searches the pool size: drop --kv-budget"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--over", "replicas", "--replicas", "4"},
         2,
         "--over replicas searches the number of replicas: drop --replicas"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--over", "replicas", "--min", "0"},
         2,
         "--min: '0' must be between 1 and 4096"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--over", "replicas", "--max", "2.5"},
         2,
         "--max: '2.5' is not a whole number"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--over", "replicas", "--min", "3", "--max",
          "3"},
         2,
         "--min (3) must be below --max (3)"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--tolerance", "0"},
         2,
         "--tolerance: '0' must be between 1e-06 and 1"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--max-probes", "0"},
         2,
         "--max-probes: '0' must be between 1 and 10000"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--confirm", "-1"},
         2,
         "--confirm: '-1' must be between 0 and 10"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--bogus"},
         2,
         "unknown option '--bogus' for 'kvsim plan'"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--time-model", "warp:9"},
         2,
         "--time-model 'warp:9': expected roofline"},
        {{"no-such-trace.jsonl", "--slo", "ttft_p99=2s"},
         1,
         "cannot open 'no-such-trace.jsonl': No such file or directory"},
        {{"@traces/tiny.csv", "--slo", "ttft_p99=2s", "--out", "/dev/null/x"},
         1,
         "cannot create directory '/dev/null/x'"},
    };
    return cr_make_param_array(err_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(err_case *c, plan_cli, errors)
{
    const char *args[16] = {"plan"};
    size_t n = 1;
    for (size_t i = 0; i < 10 && c->args[i][0]; i++)
        args[n++] = c->args[i][0] == '@' ? src_path(c->args[i] + 1) : c->args[i];
    args[n] = NULL;
    run_result r = run_kvsimv(args);
    assert_error_line(&r, c->status, "kvsim: error: ", c->msg);
    run_result_free(&r);
}
