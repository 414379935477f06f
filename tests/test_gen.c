/* gen: the kvsim gen command end to end (files parsed back with jansson) and the gen
 * library where the CLI cannot reach (write errors).
 *
 * Statistical checks use fixed seeds and tolerances of about 4–5 standard errors of the
 * estimate (stated at each check), so they test the model, not the luck of a seed. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/gen.h"
#include "support.h"

/* ---- reading a generated trace back ----------------------------------------------------- */

typedef struct trow {
    char id[32];
    int64_t arrival_ns;
    uint32_t prompt, output;
    uint64_t *ids; /* hash_ids, or NULL */
    size_t n_ids;
    char adapter[32]; /* "" = none */
    bool has_priority;
    long long priority;
} trow;

typedef struct trace {
    trow *rows;
    size_t n;
    char *text;
    size_t len;
    char *err; /* kvsim's stderr */
} trace;

static void trace_free(trace *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->rows[i].ids);
    free(t->rows);
    free(t->text);
    free(t->err);
    memset(t, 0, sizeof *t);
}

/* "arrival":S.NNNNNNNNN exactly as written, to integer nanoseconds. */
static int64_t raw_arrival(const char *line, size_t lineno)
{
    const char *a = strstr(line, "\"arrival\":");
    cr_assert(a, "line %zu: no arrival", lineno);
    a += strlen("\"arrival\":");
    int64_t s = 0;
    const char *p = a;
    cr_assert(*p >= '0' && *p <= '9', "line %zu: arrival '%.20s'", lineno, a);
    while (*p >= '0' && *p <= '9')
        s = s * 10 + (*p++ - '0');
    cr_assert_eq(*p, '.', "line %zu: arrival '%.20s' has no fraction", lineno, a);
    p++;
    int64_t frac = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9') {
        frac = frac * 10 + (*p++ - '0');
        digits++;
    }
    cr_assert_eq(digits, 9, "line %zu: arrival '%.20s' needs exactly 9 decimals", lineno, a);
    return s * 1000000000 + frac;
}

static void parse_trace(trace *t)
{
    static const char *const order[] = {
        "\"id\":",       "\"arrival\":", "\"prompt_len\":", "\"output_len\":",
        "\"hash_ids\":", "\"adapter\":", "\"priority\":", "\"session\":",
        "\"client\":",   "\"think\":"};
    size_t cap = 0;
    char *save = NULL;
    char *copy = strdup(t->text);
    size_t lineno = 0;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        if (t->n == cap) {
            cap = cap ? cap * 2 : 1024;
            t->rows = realloc(t->rows, cap * sizeof *t->rows);
        }
        trow *r = &t->rows[t->n++];
        memset(r, 0, sizeof *r);
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        cr_assert(o && json_is_object(o), "line %zu is not a JSON object: %s", lineno, je.text);
        /* Keys in the documented order, and nothing else. */
        const char *prev = line;
        size_t n_keys = 0;
        for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
            const char *at = strstr(line, order[k]);
            if (!at) {
                cr_assert(k >= 4, "line %zu lacks %s", lineno, order[k]);
                continue;
            }
            cr_assert(at > prev || k == 0, "line %zu: %s out of order", lineno, order[k]);
            prev = at;
            n_keys++;
        }
        cr_assert_eq(json_object_size(o), n_keys, "line %zu has unexpected keys", lineno);

        json_t *id = json_object_get(o, "id");
        cr_assert(json_is_string(id));
        snprintf(r->id, sizeof r->id, "%s", json_string_value(id));
        /* A turn "s<conv>.<turn>" names its conversation in 'session' (for --router
         * session); single requests have none. */
        json_t *sess = json_object_get(o, "session");
        const char *dot = strchr(r->id, '.');
        if (dot) {
            cr_assert(json_is_string(sess), "line %zu: a turn without its session", lineno);
            cr_assert_eq(strlen(json_string_value(sess)), (size_t)(dot - r->id));
            cr_assert_eq(strncmp(json_string_value(sess), r->id, (size_t)(dot - r->id)), 0,
                         "line %zu: session '%s' is not the id's conversation", lineno,
                         json_string_value(sess));
        } else {
            cr_assert_null(sess, "line %zu: a single request has no session", lineno);
        }
        r->arrival_ns = raw_arrival(line, lineno);
        json_t *arr = json_object_get(o, "arrival");
        cr_assert(json_is_real(arr));
        cr_assert_eq(llround(json_real_value(arr) * 1e9), r->arrival_ns,
                     "line %zu: arrival does not round-trip to the nanosecond", lineno);
        json_t *pl = json_object_get(o, "prompt_len"), *ol = json_object_get(o, "output_len");
        cr_assert(json_is_integer(pl) && json_is_integer(ol), "line %zu: lengths not integers",
                  lineno);
        cr_assert(json_integer_value(pl) >= 1 && json_integer_value(ol) >= 1);
        r->prompt = (uint32_t)json_integer_value(pl);
        r->output = (uint32_t)json_integer_value(ol);
        json_t *h = json_object_get(o, "hash_ids");
        if (h) {
            cr_assert(json_is_array(h));
            r->n_ids = json_array_size(h);
            r->ids = malloc((r->n_ids ? r->n_ids : 1) * sizeof *r->ids);
            for (size_t j = 0; j < r->n_ids; j++) {
                json_t *v = json_array_get(h, j);
                cr_assert(json_is_integer(v) && json_integer_value(v) >= 0, "line %zu: hash id %zu",
                          lineno, j);
                r->ids[j] = (uint64_t)json_integer_value(v);
            }
        }
        json_t *ad = json_object_get(o, "adapter");
        if (ad) {
            cr_assert(json_is_string(ad));
            snprintf(r->adapter, sizeof r->adapter, "%s", json_string_value(ad));
        }
        json_t *pr = json_object_get(o, "priority");
        if (pr) {
            cr_assert(json_is_integer(pr));
            r->has_priority = true;
            r->priority = json_integer_value(pr);
        }
        json_decref(o);
        if (t->n > 1)
            cr_assert(r->arrival_ns >= t->rows[t->n - 2].arrival_ns,
                      "line %zu: arrivals must be non-decreasing", lineno);
    }
    free(copy);
}

/* Run `kvsim gen ARGS… --out DIR/NAME` (args NULL-terminated), expect success, parse. */
static trace gen_trace(const char *dir, const char *name, const char *const *args)
{
    const char *argv[64];
    size_t n = 0;
    argv[n++] = "gen";
    for (size_t i = 0; args[i]; i++)
        argv[n++] = args[i];
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    argv[n++] = "--out";
    argv[n++] = path;
    argv[n] = NULL;
    run_result rr = run_kvsimv(argv);
    cr_assert_eq(rr.status, 0, "kvsim gen failed (%d): %s", rr.status, rr.err);
    trace t;
    memset(&t, 0, sizeof t);
    t.text = read_file(path, &t.len);
    cr_assert(t.text, "no output file %s", path);
    t.err = rr.err;
    free(rr.out);
    parse_trace(&t);
    return t;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank empirical percentile of the prompt (which = 0) or output (1) lengths. */
static double empirical(const trace *t, int which, double pct)
{
    uint32_t *v = malloc(t->n * sizeof *v);
    for (size_t i = 0; i < t->n; i++)
        v[i] = which ? t->rows[i].output : t->rows[i].prompt;
    qsort(v, t->n, sizeof *v, cmp_u32);
    size_t rank = (size_t)ceil(pct / 100.0 * (double)t->n);
    double x = v[rank ? rank - 1 : 0];
    free(v);
    return x;
}

static void assert_percentiles(const trace *t, int which, const double *pct, const double *want,
                               size_t n, double tol)
{
    for (size_t i = 0; i < n; i++) {
        double got = empirical(t, which, pct[i]);
        double dev = got / want[i] - 1.0;
        cr_assert(fabs(dev) <= tol, "%s P%g = %g, requested %g (%+.2f%%, tolerance ±%g%%)",
                  which ? "output" : "prompt", pct[i], got, want[i], 100 * dev, 100 * tol);
    }
}

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* ---- lengths ------------------------------------------------------------------------------ */

Test(gen, percentiles_within_2_percent_at_realistic_figures)
{
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt",   "p50=1000,p95=4000,p99=8000",
                          "--output",   "p50=200,p95=600,p99=1000",
                          "--rate",     "10",
                          "--requests", "100000",
                          "--seed",     "1",
                          NULL};
    trace t = gen_trace(dir, "t.jsonl", args);
    cr_assert_eq(t.n, 100000);
    const double pct[] = {50, 95, 99};
    const double wp[] = {1000, 4000, 8000}, wo[] = {200, 600, 1000};
    assert_percentiles(&t, 0, pct, wp, 3, 0.02);
    assert_percentiles(&t, 1, pct, wo, 3, 0.02);
    /* And the same with another seed: the margin is not a lucky draw. */
    trace_free(&t);
    const char *args2[] = {"--prompt",   "p50=1000,p95=4000,p99=8000",
                           "--output",   "p50=200,p95=600,p99=1000",
                           "--rate",     "10",
                           "--requests", "100000",
                           "--seed",     "987654321",
                           NULL};
    t = gen_trace(dir, "t2.jsonl", args2);
    assert_percentiles(&t, 0, pct, wp, 3, 0.02);
    assert_percentiles(&t, 1, pct, wo, 3, 0.02);
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

Test(gen, percentiles_within_2_percent_on_a_heavy_tail)
{
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt",   "p50=300,p90=6000,p95=12000,p99=100000,max=131072",
                          "--output",   "p50=50,p95=2000,p99=8000",
                          "--rate",     "3",
                          "--requests", "100000",
                          "--seed",     "5",
                          NULL};
    trace t = gen_trace(dir, "t.jsonl", args);
    const double pp[] = {50, 90, 95, 99}, wp[] = {300, 6000, 12000, 100000};
    const double po[] = {50, 95, 99}, wo[] = {50, 2000, 8000};
    assert_percentiles(&t, 0, pp, wp, 4, 0.02);
    assert_percentiles(&t, 1, po, wo, 3, 0.02);
    for (size_t i = 0; i < t.n; i++)
        cr_assert(t.rows[i].prompt <= 131072, "max clamps");
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

Test(gen, iid_sampling_is_within_its_standard_error)
{
    /* i.i.d. draws: standard errors at n = 100,000 are about 0.3 % (P50), 0.6 % (P95) and
     * 1.2 % (P99) for these figures; tolerances are ~5 of them. */
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt",
                          "p50=1000,p95=4000,p99=8000",
                          "--output",
                          "p50=200,p95=600,p99=1000",
                          "--rate",
                          "10",
                          "--requests",
                          "100000",
                          "--length-sampling",
                          "iid",
                          NULL};
    trace t = gen_trace(dir, "t.jsonl", args);
    const double p50[] = {50}, p95[] = {95}, p99[] = {99};
    const double w50p[] = {1000}, w95p[] = {4000}, w99p[] = {8000};
    const double w50o[] = {200}, w95o[] = {600}, w99o[] = {1000};
    assert_percentiles(&t, 0, p50, w50p, 1, 0.02);
    assert_percentiles(&t, 0, p95, w95p, 1, 0.03);
    assert_percentiles(&t, 0, p99, w99p, 1, 0.06);
    assert_percentiles(&t, 1, p50, w50o, 1, 0.02);
    assert_percentiles(&t, 1, p95, w95o, 1, 0.03);
    assert_percentiles(&t, 1, p99, w99o, 1, 0.06);
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

Test(gen, p50_only_gives_constant_lengths)
{
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt", "p50=1000,p99=8000", "--output", "p50=200", "--rate",
                          "5",        "--requests",        "2000",     NULL};
    trace t = gen_trace(dir, "t.jsonl", args);
    for (size_t i = 0; i < t.n; i++)
        cr_assert_eq(t.rows[i].output, 200);
    cr_assert(empirical(&t, 0, 1) < 300 && empirical(&t, 0, 99.9) > 12000,
              "the p50→p99 lognormal continues both ways");
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

/* ---- determinism ------------------------------------------------------------------------ */

Test(gen, same_seed_is_byte_identical_and_seeds_differ)
{
    char *dir = make_temp_dir();
    const char *a[] = {"--prompt",
                       "p50=1000,p95=4000,p99=8000",
                       "--output",
                       "p50=200,p99=900",
                       "--rate",
                       "10",
                       "--burstiness",
                       "2.5",
                       "--requests",
                       "20000",
                       "--system-prompts",
                       "5",
                       "--system-prompt-len",
                       "1300",
                       "--zipf",
                       "1.1",
                       "--adapters",
                       "3",
                       "--priorities",
                       "4",
                       "--seed",
                       "7",
                       NULL};
    trace t1 = gen_trace(dir, "a.jsonl", a);
    trace t2 = gen_trace(dir, "b.jsonl", a);
    cr_assert_eq(t1.len, t2.len);
    cr_assert(memcmp(t1.text, t2.text, t1.len) == 0, "same seed must give identical bytes");
    a[sizeof a / sizeof a[0] - 2] = "8";
    trace t3 = gen_trace(dir, "c.jsonl", a);
    cr_assert(t1.len != t3.len || memcmp(t1.text, t3.text, t1.len) != 0, "seed 8 == seed 7");
    /* Standard output carries the same bytes as --out. */
    a[sizeof a / sizeof a[0] - 2] = "7";
    const char *argv[64];
    size_t n = 0;
    argv[n++] = "gen";
    for (size_t i = 0; a[i]; i++)
        argv[n++] = a[i];
    argv[n] = NULL;
    run_result rr = run_kvsimv(argv);
    cr_assert_eq(rr.status, 0);
    cr_assert_str_eq(rr.out, t1.text);
    cr_assert_str_eq(rr.err, "", "nothing on stderr when writing to stdout");
    run_result_free(&rr);
    trace_free(&t1);
    trace_free(&t2);
    trace_free(&t3);
    rm_rf(dir);
    free(dir);
}

Test(gen, changing_the_rate_moves_arrivals_not_lengths)
{
    char *dir = make_temp_dir();
    const char *a[] = {"--prompt", "p50=1000,p99=8000", "--output", "p50=200,p99=900", "--rate",
                       "5",        "--requests",        "5000",     "--seed",          "3",
                       NULL};
    const char *b[] = {"--prompt", "p50=1000,p99=8000", "--output", "p50=200,p99=900", "--rate",
                       "50",       "--requests",        "5000",     "--seed",          "3",
                       NULL};
    trace ta = gen_trace(dir, "a.jsonl", a), tb = gen_trace(dir, "b.jsonl", b);
    cr_assert_eq(ta.n, tb.n);
    for (size_t i = 0; i < ta.n; i++) {
        cr_assert_eq(ta.rows[i].prompt, tb.rows[i].prompt);
        cr_assert_eq(ta.rows[i].output, tb.rows[i].output);
    }
    cr_assert(ta.rows[ta.n - 1].arrival_ns > 5 * tb.rows[tb.n - 1].arrival_ns);
    trace_free(&ta);
    trace_free(&tb);
    rm_rf(dir);
    free(dir);
}

/* ---- arrivals ---------------------------------------------------------------------------- */

static void gap_moments(const trace *t, double *mean, double *cv)
{
    double sum = 0, sum2 = 0;
    int64_t prev = 0;
    for (size_t i = 0; i < t->n; i++) {
        double g = (double)(t->rows[i].arrival_ns - prev) * 1e-9;
        prev = t->rows[i].arrival_ns;
        sum += g;
        sum2 += g * g;
    }
    *mean = sum / (double)t->n;
    double var = sum2 / (double)t->n - *mean * *mean;
    *cv = sqrt(var) / *mean;
}

typedef struct gap_case {
    char burstiness[8];
    double mean_tol, cv_tol; /* relative; ~4.5 standard errors at n = 100,000 */
} gap_case;

ParameterizedTestParameters(gen, gaps_have_the_requested_mean_and_cv)
{
    /* se(mean)/mean = CV/√n; se(CV)/CV ≈ ½·√((2 + excess kurtosis)/n), gamma kurtosis 6/k. */
    static gap_case t[] = {
        {"1", 0.015, 0.02},   /* Poisson: se 0.32 %, 0.45 % */
        {"2", 0.03, 0.04},    /* shape 0.25: se 0.63 %, 0.81 % */
        {"0.5", 0.01, 0.015}, /* shape 4: se 0.16 %, 0.28 % */
    };
    return cr_make_param_array(gap_case, t, sizeof t / sizeof t[0]);
}

ParameterizedTest(gap_case *c, gen, gaps_have_the_requested_mean_and_cv)
{
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt",     "p50=10",      "--output",   "p50=10", "--rate", "20",
                          "--burstiness", c->burstiness, "--requests", "100000", NULL};
    trace t = gen_trace(dir, "t.jsonl", args);
    double mean, cv, want_cv = atof(c->burstiness);
    gap_moments(&t, &mean, &cv);
    cr_assert(fabs(mean * 20 - 1) <= c->mean_tol, "CV %s: mean gap %g, want 0.05", c->burstiness,
              mean);
    cr_assert(fabs(cv / want_cv - 1) <= c->cv_tol, "CV %s: gap CV %g", c->burstiness, cv);
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

Test(gen, burstiness_zero_spaces_arrivals_evenly)
{
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt",     "p50=10", "--output",   "p50=10", "--rate", "3",
                          "--burstiness", "0",      "--requests", "1000",   NULL};
    trace t = gen_trace(dir, "t.jsonl", args);
    for (size_t i = 0; i < t.n; i++)
        cr_assert_eq(t.rows[i].arrival_ns, (int64_t)(i + 1) * 333333333, "row %zu", i);
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

Test(gen, burstiness_one_is_exactly_poisson)
{
    char *dir = make_temp_dir();
    const char *a[] = {"--prompt", "p50=10",     "--output", "p50=10", "--rate",
                       "3",        "--requests", "1000",     NULL};
    const char *b[] = {"--prompt",     "p50=10", "--output",   "p50=10", "--rate", "3",
                       "--burstiness", "1",      "--requests", "1000",   NULL};
    trace ta = gen_trace(dir, "a.jsonl", a), tb = gen_trace(dir, "b.jsonl", b);
    cr_assert_str_eq(ta.text, tb.text);
    trace_free(&ta);
    trace_free(&tb);
    rm_rf(dir);
    free(dir);
}

Test(gen, duration_keeps_arrivals_before_the_end)
{
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt", "p50=100",    "--output", "p50=10", "--rate",
                          "20",       "--duration", "1000",     NULL};
    trace t = gen_trace(dir, "t.jsonl", args);
    /* Poisson count: mean 20,000, sd 141; ±3 % is > 4 sd. */
    cr_assert(fabs((double)t.n / 20000.0 - 1) < 0.03, "%zu requests in 1000 s at 20/s", t.n);
    cr_assert(t.rows[0].arrival_ns > 0);
    cr_assert(t.rows[t.n - 1].arrival_ns < 1000000000000LL);
    cr_assert(t.rows[t.n - 1].arrival_ns > 990000000000LL);
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

/* ---- system prompts ------------------------------------------------------------------------ */

/* Check rules 1 and 3 of src/gen.c on every row of a trace without sessions: blocks whose
 * tokens are all system prompt carry the prompt's shared id k·nb + j; every other id is
 * used by exactly one block in the whole file.  Returns per-prompt use counts in uses. */
static void check_system_sharing(const trace *t, uint32_t k_count, uint32_t len_sys, uint32_t tb,
                                 size_t *uses)
{
    uint32_t nb = (len_sys + tb - 1) / tb;
    uint64_t n_sys = (uint64_t)k_count * nb;
    uint64_t max_id = 0;
    for (size_t i = 0; i < t->n; i++)
        for (size_t j = 0; j < t->rows[i].n_ids; j++)
            if (t->rows[i].ids[j] > max_id)
                max_id = t->rows[i].ids[j];
    unsigned char *seen = calloc(max_id + 1, 1);
    for (size_t i = 0; i < t->n; i++) {
        const trow *r = &t->rows[i];
        cr_assert(r->ids, "row %zu has no hash_ids", i);
        cr_assert_eq(r->n_ids, (r->prompt + tb - 1) / tb, "row %zu: len(hash_ids) != ⌈%u/%u⌉", i,
                     r->prompt, tb);
        uint32_t extent = len_sys < r->prompt ? len_sys : r->prompt;
        int64_t k = -1;
        for (uint32_t j = 0; j < r->n_ids; j++) {
            uint32_t end = (j + 1) * tb < r->prompt ? (j + 1) * tb : r->prompt;
            uint64_t id = r->ids[j];
            if (end <= extent) {
                cr_assert(id < n_sys, "row %zu block %u should be a system block", i, j);
                cr_assert_eq(id % nb, j, "row %zu block %u: system id of another block", i, j);
                if (k < 0)
                    k = (int64_t)(id / nb);
                cr_assert_eq((int64_t)(id / nb), k, "row %zu mixes system prompts", i);
            } else {
                cr_assert(id >= n_sys,
                          "row %zu block %u (ends at %u, system prompt %u) must be "
                          "private",
                          i, j, end, extent);
                cr_assert(!seen[id], "private id %llu used twice", (unsigned long long)id);
                seen[id] = 1;
            }
        }
        if (k >= 0)
            uses[k]++;
    }
    free(seen);
}

Test(gen, system_prompts_share_exactly_their_whole_blocks)
{
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt",
                          "p50=1000,p95=4000,p99=8000",
                          "--output",
                          "p50=200",
                          "--rate",
                          "10",
                          "--requests",
                          "20000",
                          "--system-prompts",
                          "4",
                          "--system-prompt-len",
                          "1100",
                          "--zipf",
                          "1",
                          NULL};
    trace t = gen_trace(dir, "t.jsonl", args);
    size_t uses[4] = {0};
    check_system_sharing(&t, 4, 1100, 512, uses);
    /* Every row starts with a whole system block here (L ≥ tb): uses sum to n. */
    cr_assert_eq(uses[0] + uses[1] + uses[2] + uses[3], t.n);
    /* Zipf(1) over 4: p_k = (1/k)/H_4, H_4 = 25/12; se of a share at n = 20,000 ≤ 0.0036. */
    for (int k = 0; k < 4; k++) {
        double want = (1.0 / (k + 1)) / (25.0 / 12.0), got = (double)uses[k] / (double)t.n;
        cr_assert(fabs(got - want) < 0.015, "prompt %d used %.4f, want %.4f", k + 1, got, want);
    }
    /* The designed boundaries, on concrete rows: a prompt of ≤ 1100 tokens is all system
     * (its partial second/third block shares too); a longer one shares exactly 2 blocks. */
    size_t short_rows = 0, long_rows = 0;
    for (size_t i = 0; i < t.n; i++) {
        const trow *r = &t.rows[i];
        uint64_t k = r->ids[0] / 3;
        if (r->prompt <= 1100) {
            for (uint32_t j = 0; j < r->n_ids; j++)
                cr_assert_eq(r->ids[j], k * 3 + j);
            short_rows++;
        } else {
            cr_assert_eq(r->ids[1], k * 3 + 1);
            cr_assert(r->ids[2] >= 12, "block 2 mixes system and user tokens: private");
            long_rows++;
        }
    }
    cr_assert(short_rows > 1000 && long_rows > 1000);
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

Test(gen, hash_ids_follow_the_trace_block_size)
{
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt",
                          "p50=300,p99=3000",
                          "--output",
                          "p50=20",
                          "--rate",
                          "10",
                          "--requests",
                          "5000",
                          "--system-prompts",
                          "3",
                          "--system-prompt-len",
                          "200",
                          "--trace-block-size",
                          "64",
                          "--seed",
                          "11",
                          NULL};
    trace t = gen_trace(dir, "t.jsonl", args);
    size_t uses[3] = {0};
    check_system_sharing(&t, 3, 200, 64, uses);
    /* Uniform (no --zipf): each share ≈ 1/3, se 0.0067. */
    for (int k = 0; k < 3; k++)
        cr_assert(fabs((double)uses[k] / (double)t.n - 1.0 / 3) < 0.03);
    trace_free(&t);
    /* Without prefix structure rows are content-less: no hash_ids key at all. */
    const char *plain[] = {"--prompt", "p50=300",    "--output", "p50=20", "--rate",
                           "10",       "--requests", "100",      NULL};
    t = gen_trace(dir, "p.jsonl", plain);
    cr_assert(!strstr(t.text, "hash_ids"));
    for (size_t i = 0; i < t.n; i++)
        cr_assert(!t.rows[i].ids && !t.rows[i].adapter[0] && !t.rows[i].has_priority);
    cr_assert_str_eq(t.rows[0].id, "r000000");
    cr_assert_str_eq(t.rows[99].id, "r000099");
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

Test(gen, adapters_and_priorities)
{
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt",     "p50=300",    "--output", "p50=20",     "--rate",
                          "10",           "--requests", "9000",     "--adapters", "3",
                          "--priorities", "2",          NULL};
    trace t = gen_trace(dir, "t.jsonl", args);
    size_t ad[4] = {0}, pr[2] = {0};
    for (size_t i = 0; i < t.n; i++) {
        int a = 0;
        cr_assert(sscanf(t.rows[i].adapter, "lora-%d", &a) == 1 && a >= 1 && a <= 3, "adapter '%s'",
                  t.rows[i].adapter);
        ad[a]++;
        cr_assert(t.rows[i].has_priority && t.rows[i].priority >= 0 && t.rows[i].priority < 2);
        pr[t.rows[i].priority]++;
    }
    for (int a = 1; a <= 3; a++)
        cr_assert(fabs((double)ad[a] / 9000 - 1.0 / 3) < 0.025); /* se 0.005 */
    cr_assert(fabs((double)pr[0] / 9000 - 0.5) < 0.025);         /* se 0.0053 */
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

/* ---- sessions ------------------------------------------------------------------------------ */

typedef struct conv_state {
    bool seen;
    uint32_t turn;
    size_t row; /* index of its latest turn */
} conv_state;

/* Check the session rules on every row (rows in file order = arrival order). */
static void check_sessions(const trace *t, uint32_t k_count, uint32_t len_sys, uint32_t tb,
                           size_t *n_conv)
{
    uint32_t nb = k_count ? (len_sys + tb - 1) / tb : 0;
    uint64_t n_sys = (uint64_t)k_count * nb;
    size_t cap = 0;
    conv_state *cs = NULL;
    uint64_t max_id = 0;
    for (size_t i = 0; i < t->n; i++)
        for (size_t j = 0; j < t->rows[i].n_ids; j++)
            if (t->rows[i].ids[j] > max_id)
                max_id = t->rows[i].ids[j];
    int64_t *owner = malloc((max_id + 1) * sizeof *owner); /* private id → conversation */
    for (uint64_t i = 0; i <= max_id; i++)
        owner[i] = -1;
    *n_conv = 0;
    size_t extension_checks = 0, replaced_checks = 0;
    for (size_t i = 0; i < t->n; i++) {
        const trow *r = &t->rows[i];
        unsigned conv, turn;
        cr_assert(sscanf(r->id, "s%u.%u", &conv, &turn) == 2, "id '%s'", r->id);
        if (conv >= cap) {
            size_t ncap = (conv + 1) * 2;
            cs = realloc(cs, ncap * sizeof *cs);
            memset(cs + cap, 0, (ncap - cap) * sizeof *cs);
            cap = ncap;
        }
        cr_assert(r->ids, "session rows carry hash_ids");
        cr_assert_eq(r->n_ids, (r->prompt + tb - 1) / tb, "row %zu: len(hash_ids)", i);
        for (uint32_t j = 0; j < r->n_ids; j++)
            if (r->ids[j] >= n_sys) {
                cr_assert(owner[r->ids[j]] < 0 || owner[r->ids[j]] == conv,
                          "private id %llu shared by two conversations",
                          (unsigned long long)r->ids[j]);
                owner[r->ids[j]] = conv;
            }
        conv_state *c = &cs[conv];
        if (!c->seen) {
            cr_assert_eq(turn, 1, "%s: the first row of a conversation is turn 1", r->id);
            c->seen = true;
            ++*n_conv;
        } else {
            const trow *p = &t->rows[c->row];
            cr_assert_eq(turn, c->turn + 1, "%s follows turn %u", r->id, c->turn);
            cr_assert(r->arrival_ns >= p->arrival_ns);
            cr_assert(r->prompt >= p->prompt + p->output + 1,
                      "%s: prompt %u < previous prompt %u + output %u + a message", r->id,
                      r->prompt, p->prompt, p->output);
            cr_assert_str_eq(r->adapter, p->adapter, "a conversation keeps its adapter");
            /* Turn t's ids begin with turn t−1's: every full block, and the partial last
             * block too when its id is private; a shared system partial block is replaced. */
            uint32_t full = p->prompt / tb;
            for (uint32_t j = 0; j < full; j++)
                cr_assert_eq(r->ids[j], p->ids[j], "%s block %u differs from turn %u", r->id, j,
                             c->turn);
            if (p->prompt % tb) {
                uint64_t last = p->ids[p->n_ids - 1];
                if (last >= n_sys) {
                    cr_assert_eq(r->ids[full], last, "%s: private partial block kept", r->id);
                    extension_checks++;
                } else {
                    cr_assert(r->ids[full] >= n_sys && r->ids[full] != last,
                              "%s: a system partial block cannot be extended", r->id);
                    replaced_checks++;
                }
            }
        }
        c->turn = turn;
        c->row = i;
        if (k_count) {
            /* System blocks only at the start, from one prompt, in block order. */
            for (uint32_t j = 0; j < r->n_ids && r->ids[j] < n_sys; j++) {
                cr_assert_eq(r->ids[j] % nb, j);
                cr_assert_eq(r->ids[j] / nb, r->ids[0] / nb);
            }
        }
    }
    cr_assert(extension_checks > 0, "the test data should exercise partial-block extension");
    if (k_count && len_sys % tb)
        cr_assert(replaced_checks > 0, "the test data should exercise system partial blocks");
    free(owner);
    free(cs);
}

Test(gen, sessions_extend_the_previous_turn)
{
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt",
                          "p50=400,p95=2000,p99=3000",
                          "--output",
                          "p50=150,p99=800",
                          "--rate",
                          "10",
                          "--requests",
                          "20000",
                          "--sessions",
                          "--turns",
                          "4",
                          "--think-time",
                          "5",
                          "--message",
                          "p50=100,p99=800",
                          "--system-prompts",
                          "3",
                          "--system-prompt-len",
                          "700",
                          "--adapters",
                          "3",
                          NULL};
    trace t = gen_trace(dir, "t.jsonl", args);
    cr_assert_eq(t.n, 20000, "--requests is exact with sessions too");
    size_t n_conv;
    check_sessions(&t, 3, 700, 512, &n_conv);
    cr_assert(n_conv > 3000 && n_conv < 8000, "%zu conversations for 20000 turns, T = 4", n_conv);
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

Test(gen, sessions_rate_and_turns_over_a_duration)
{
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt", "p50=400,p99=3000", "--output", "p50=150,p99=800", "--rate",
                          "10",       "--duration",       "2000",     "--sessions",      "--turns",
                          "4",        "--think-time",     "5",        "--seed",          "2",
                          NULL};
    trace t = gen_trace(dir, "t.jsonl", args);
    size_t n_conv;
    check_sessions(&t, 0, 0, 512, &n_conv);
    /* Long-run request rate ≈ R: relative se ≈ √((var + T²)/(n_conv·T²)) ≈ 1.9 %; the
     * conversations cut at the end lose < 1 %. */
    cr_assert(fabs((double)t.n / 20000.0 - 1) < 0.08, "%zu requests in 2000 s at 10/s", t.n);
    cr_assert(t.rows[t.n - 1].arrival_ns < 2000000000000LL);
    /* Mean turns of conversations that started in the first half (complete ones): geometric
     * mean 4, variance 12; ~2,500 conversations give se 0.07; tolerance 0.3. */
    size_t turns_sum = 0, convs = 0;
    unsigned conv, turn;
    for (size_t i = 0; i < t.n; i++) {
        cr_assert(sscanf(t.rows[i].id, "s%u.%u", &conv, &turn) == 2);
        if (turn == 1 && t.rows[i].arrival_ns < 1000000000000LL)
            convs++;
    }
    /* Conversation numbers follow start order: those started in the first half are the
     * ones numbered below convs; count all their rows. */
    for (size_t i = 0; i < t.n; i++) {
        cr_assert(sscanf(t.rows[i].id, "s%u.%u", &conv, &turn) == 2);
        turns_sum += conv < convs;
    }
    double mean_turns = (double)turns_sum / (double)convs;
    cr_assert(fabs(mean_turns - 4.0) < 0.3, "mean turns %g over %zu conversations", mean_turns,
              convs);
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

Test(gen, sessions_stop_at_the_context_cap)
{
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt",   "p50=1000,p99=3000,max=6000",
                          "--output",   "p50=300",
                          "--rate",     "5",
                          "--requests", "3000",
                          "--sessions", "--turns",
                          "10",         "--think-time",
                          "2",          "--message",
                          "p50=500",    NULL};
    trace t = gen_trace(dir, "t.jsonl", args);
    uint32_t max_prompt = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.rows[i].prompt > max_prompt)
            max_prompt = t.rows[i].prompt;
    cr_assert(max_prompt <= 6000 && max_prompt > 4000, "max prompt %u", max_prompt);
    cr_assert(strstr(t.err, "cut by the context cap"), "summary: %s", t.err);
    size_t n_conv;
    check_sessions(&t, 0, 0, 512, &n_conv);
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

Test(gen, sessions_are_deterministic)
{
    char *dir = make_temp_dir();
    const char *a[] = {"--prompt",   "p50=400,p99=3000",
                       "--output",   "p50=150,p99=800",
                       "--rate",     "10",
                       "--requests", "5000",
                       "--sessions", "--seed",
                       "9",          NULL};
    trace t1 = gen_trace(dir, "a.jsonl", a), t2 = gen_trace(dir, "b.jsonl", a);
    cr_assert_str_eq(t1.text, t2.text);
    trace_free(&t1);
    trace_free(&t2);
    rm_rf(dir);
    free(dir);
}

/* ---- closed-loop clients (issue 11) ------------------------------------------------------ */

/* gen --concurrency N: row i is client i mod N's; a client's later rows carry its think
 * time (none without --think-time); replayed, no client ever has two requests in flight. */
Test(gen_cli, concurrency_writes_clients_that_replay_closed_loop)
{
    char *dir = make_temp_dir();
    const char *args[] = {"--prompt", "p50=300,p99=900", "--output", "p50=40,p99=200",
                          "--concurrency", "4", "--requests", "40", "--think-time", "0.2",
                          "--seed", "3", NULL};
    trace t = gen_trace(dir, "c.jsonl", args);
    cr_assert_eq(t.n, 40);
    char *line = t.text;
    for (size_t i = 0; i < 40; i++) {
        char want[64];
        snprintf(want, sizeof want, "\"client\":\"c%06zu\"", i % 4);
        char *nl = strchr(line, '\n');
        *nl = '\0';
        cr_assert(strstr(line, want), "row %zu: %s", i, line);
        cr_assert_eq(strstr(line, "\"think\":") != NULL, i >= 4, "row %zu: %s", i, line);
        cr_assert_eq(t.rows[i].arrival_ns, 0, "no --rate: every row may be sent at 0");
        *nl = '\n';
        line = nl + 1;
    }
    const char *no_think[] = {"--prompt", "p50=300", "--output", "p50=40", "--concurrency", "2",
                              "--requests", "6", NULL};
    trace u = gen_trace(dir, "u.jsonl", no_think);
    cr_assert_null(strstr(u.text, "think"), "%s", u.text);
    trace_free(&u);
    char path[4200], out[4096];
    snprintf(path, sizeof path, "%s/c.jsonl", dir);
    snprintf(out, sizeof out, "%s/run", dir);
    run_result r = run_kvsim("run", path, "--out", out, "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    snprintf(path, sizeof path, "%s/requests.csv", out);
    size_t len;
    char *csv = read_file(path, &len);
    double sent[40], fin[40];
    char *p = strchr(csv, '\n') + 1;
    for (size_t i = 0; i < 40; i++) {
        /* id,arrival_s,first_scheduled_s,first_token_s,finish_s,... */
        cr_assert_eq(sscanf(p, "%*[^,],%lf,%*[^,],%*[^,],%lf", &sent[i], &fin[i]), 2, "%s", p);
        p = strchr(p, '\n') + 1;
    }
    for (size_t i = 4; i < 40; i++)
        cr_assert_geq(sent[i], fin[i - 4], "row %zu sent before client %zu's reply", i, i % 4);
    free(csv);
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

/* ---- CLI errors ----------------------------------------------------------------------------- */

/* Strings inline: Criterion may run a test in a freshly exec'd process, where pointers
 * into the parent's image are not valid. */
typedef struct cli_case {
    char args[20][48]; /* after "gen", up to the first ""; "@OUT" → DIR/t.jsonl, "@DIR" → DIR */
    int status;
    char msg[112]; /* substring of the one error line */
} cli_case;

#define GOOD_LENGTHS "--prompt", "p50=1000,p99=8000", "--output", "p50=200"

ParameterizedTestParameters(gen_cli, errors)
{
    static cli_case t[] = {
        {{"--prompt", "p50=1000,p95=900", "--output", "p50=200", "--rate", "1", "--requests", "10",
          "--out", "@OUT"},
         2,
         "--prompt: 'p95' (900) must not be below 'p50' (1000): percentiles are non-decreasing"},
        {{"--prompt", "p50=1000", "--output", "p95=10", "--rate", "1", "--requests", "10", "--out",
          "@OUT"},
         2,
         "--output: 'p50' is required"},
        {{"--prompt", "p50=abc", "--output", "p50=10", "--rate", "1", "--requests", "10", "--out",
          "@OUT"},
         2,
         "--prompt: 'p50': 'abc' is not a number"},
        {{"--prompt", "p50=1000,p99=8000,max=4000", "--output", "p50=10", "--rate", "1",
          "--requests", "10", "--out", "@OUT"},
         2,
         "--prompt: 'max' (4000) must not be below 'p99' (8000)"},
        {{GOOD_LENGTHS, "--requests", "10", "--out", "@OUT"}, 2, "--rate R is required"},
        {{"--output", "p50=200", "--rate", "1", "--requests", "10", "--out", "@OUT"},
         2,
         "kvsim gen needs --prompt SPEC"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "10", "--duration", "5", "--out", "@OUT"},
         2,
         "give either --requests N or --duration S, not both"},
        {{GOOD_LENGTHS, "--rate", "1", "--out", "@OUT"},
         2,
         "kvsim gen needs --requests N or --duration S"},
        {{GOOD_LENGTHS, "--rate", "abc", "--requests", "10", "--out", "@OUT"},
         2,
         "--rate: 'abc' is not a number"},
        {{GOOD_LENGTHS, "--rate", "0", "--requests", "10", "--out", "@OUT"},
         2,
         "--rate: '0' must be above 0"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "1.5", "--out", "@OUT"},
         2,
         "--requests: '1.5' is not a whole number"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "0", "--out", "@OUT"},
         2,
         "--requests: '0' must be at least 1\n"},
        {{GOOD_LENGTHS, "--rate", "1", "--duration", "-3", "--out", "@OUT"},
         2,
         "--duration: '-3' must be between 0 and"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "10", "--bogus", "--out", "@OUT"},
         2,
         "unknown option '--bogus' for 'kvsim gen'"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "10", "--burstiness", "11", "--out", "@OUT"},
         2,
         "--burstiness: '11' must be between 0 and 10"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "10", "--think-time", "3", "--out", "@OUT"},
         2,
         "--think-time needs --sessions or --concurrency"},
        {{GOOD_LENGTHS, "--concurrency", "0", "--requests", "10", "--out", "@OUT"},
         2,
         "--concurrency: '0' must be between 1 and"},
        {{GOOD_LENGTHS, "--concurrency", "2", "--sessions", "--requests", "10", "--out", "@OUT"},
         2,
         "--concurrency and --sessions cannot be combined"},
        {{GOOD_LENGTHS, "--concurrency", "2", "--duration", "10", "--out", "@OUT"},
         2,
         "--concurrency without --rate needs --requests N"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "10", "--turns", "3", "--out", "@OUT"},
         2,
         "--turns needs --sessions"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "10", "--message", "p50=5", "--out", "@OUT"},
         2,
         "--message needs --sessions"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "10", "--zipf", "1", "--out", "@OUT"},
         2,
         "--zipf needs --system-prompts K"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "10", "--system-prompts", "3", "--out",
          "@OUT"},
         2,
         "--system-prompts needs --system-prompt-len L"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "10", "--length-sampling", "sobol", "--out",
          "@OUT"},
         2,
         "--length-sampling: 'sobol' is not one of stratified, iid"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "10", "extra", "--out", "@OUT"},
         2,
         "kvsim gen takes no arguments (got 'extra'"},
        {{GOOD_LENGTHS, "--requests", "10", "--out", "@OUT", "--rate"},
         2,
         "option '--rate' needs a value"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "10", "--trace-block-size", "0", "--out",
          "@OUT"},
         2,
         "--trace-block-size: '0' must be between 1 and"},
        /* Runtime errors (exit 1): the arrival clock overflows mid-way, the output cannot be
         * created, the output is a directory. */
        {{GOOD_LENGTHS, "--rate", "1e-9", "--requests", "10", "--out", "@OUT"},
         1,
         "arrivals run past"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "10", "--out",
          "/nonexistent-kvsim-dir/t.jsonl"},
         1,
         "cannot create '/nonexistent-kvsim-dir/t.jsonl': No such file or directory"},
        {{GOOD_LENGTHS, "--rate", "1", "--requests", "10", "--out", "@DIR"}, 1, "Is a directory"},
    };
    return cr_make_param_array(cli_case, t, sizeof t / sizeof t[0]);
}

ParameterizedTest(cli_case *c, gen_cli, errors)
{
    char *dir = make_temp_dir();
    char out[4096];
    snprintf(out, sizeof out, "%s/t.jsonl", dir);
    const char *argv[32];
    size_t n = 0;
    argv[n++] = "gen";
    for (size_t i = 0; i < 20 && c->args[i][0]; i++)
        argv[n++] = strcmp(c->args[i], "@OUT") == 0   ? out
                    : strcmp(c->args[i], "@DIR") == 0 ? dir
                                                      : c->args[i];
    argv[n] = NULL;
    run_result r = run_kvsimv(argv);
    assert_error_line(&r, c->status, "kvsim: error: ", c->msg);
    cr_assert_eq(count_entries(dir), 0, "no output or temp file may be left behind");
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

Test(gen_cli, a_failed_run_leaves_an_existing_file_alone)
{
    char *dir = make_temp_dir();
    char *path = write_file(dir, "t.jsonl", "old\n");
    run_result r =
        run_kvsim("gen", GOOD_LENGTHS, "--rate", "1e-9", "--requests", "10", "--out", path, NULL);
    cr_assert_eq(r.status, 1);
    char *text = read_file(path, NULL);
    cr_assert_str_eq(text, "old\n");
    cr_assert_eq(count_entries(dir), 1, "the temp file is removed");
    free(text);
    run_result_free(&r);
    /* A successful run replaces it, with a plain file's permissions. */
    r = run_kvsim("gen", GOOD_LENGTHS, "--rate", "1", "--requests", "10", "--out", path, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "kvsim: wrote 10 requests"), "summary: %s", r.err);
    text = read_file(path, NULL);
    cr_assert(strncmp(text, "{\"id\":\"r000000\",\"arrival\":", 26) == 0, "%s", text);
    cr_assert_eq(count_entries(dir), 1);
    free(text);
    run_result_free(&r);
    free(path);
    rm_rf(dir);
    free(dir);
}

Test(gen_cli, help_lists_every_option)
{
    run_result r = run_kvsim("gen", "--help", NULL);
    cr_assert_eq(r.status, 0);
    const char *opts[] = {"--prompt",
                          "--output",
                          "--message",
                          "--rate",
                          "--burstiness",
                          "--requests",
                          "--duration",
                          "--seed",
                          "--system-prompts",
                          "--system-prompt-len",
                          "--zipf",
                          "--sessions",
                          "--turns",
                          "--think-time",
                          "--adapters",
                          "--priorities",
                          "--trace-block-size",
                          "--length-sampling",
                          "--out"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        cr_assert(strstr(r.out, opts[i]), "--help lacks %s", opts[i]);
    run_result_free(&r);
    r = run_kvsim("--help", NULL);
    cr_assert(strstr(r.out, "  gen "), "kvsim --help lists gen");
    run_result_free(&r);
}

/* ---- library: write errors -------------------------------------------------------------- */

Test(gen_lib, write_errors_are_reported)
{
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        cr_skip_test("no /dev/full");
    kv_gen_config c;
    kv_gen_config_init(&c);
    kv_diag d = {{0}};
    cr_assert_eq(kv_lendist_parse(&c.prompt, "p50=1000,p99=8000", &d), 0);
    cr_assert_eq(kv_lendist_parse(&c.output, "p50=200", &d), 0);
    c.rate = 10;
    c.requests = 100000; /* several MB: the stream must flush, and fail, before the end */
    int rc = kv_gen_write(&c, f, NULL, &d);
    fclose(f);
    cr_assert_eq(rc, -KV_EIO, "got %d (%s)", rc, d.msg);
}

Test(gen_lib, validate_names_the_setting)
{
    kv_gen_config c;
    kv_gen_config_init(&c);
    kv_diag d = {{0}};
    cr_assert_eq(kv_gen_validate(&c, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, "{prompt}"), "the library names the quantity: %s", d.msg);
    kv_lendist_constant(&c.prompt, 10);
    kv_lendist_constant(&c.output, 10);
    c.rate = 1;
    c.duration_s = 5e9;
    cr_assert_eq(kv_gen_validate(&c, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, "{duration}"), "%s", d.msg);
    c.duration_s = 1e9;
    c.rate = 100;
    cr_assert_eq(kv_gen_validate(&c, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, "above the limit"), "%s", d.msg);
    c.rate = 1;
    c.duration_s = 0;
    c.requests = 5;
    c.system_prompt_len = 7;
    cr_assert_eq(kv_gen_validate(&c, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, "{system_prompt_len} needs {system_prompts}"), "%s", d.msg);
    c.system_prompt_len = 0;
    cr_assert_eq(kv_gen_validate(&c, &d), 0, "%s", d.msg);
}
