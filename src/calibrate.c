/* calibrate: the fit of the roofline to benchmark runs (include/kvsim/calibrate.h).
 *
 * Data.  One in-memory trace per run (its successful requests, content-less, arrival =
 * the client's scheduled send; the semaphore is the replay's, sim.h max_concurrency), made
 * once; with a warm-up (kv_cal_warm) its warm-up prompts come first and every prompt
 * carries hash_ids by its index.  A parameter vector θ (one entry per fitted key) becomes a
 * complete roofline spec by editing a copy of the bound base model and describing it
 * (kv_timing_describe), so the spec printed is exactly the one replayed.  The search memoises (θ,
 * loss) in a growing array; a lookup is linear, which is nothing next to a replay.
 *
 * Invariants: the loss of a θ is computed from replays of the fitted runs only; the
 * reported "after" of every run comes from one more replay with the final θ.
 *
 * Cost: (evaluations × fitted runs) replays, bounded by max_replays, plus two replays of
 * every run for the report.  Out of scope: fitting linear or fixed models, the front end.
 */
#include "kvsim/calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/metrics.h"

#define AS_INFO(id, name, label, unit, scale) {name, label, unit, scale},
const kv_cal_metric_info kv_cal_metric_infos[KV_CAL_N_METRICS] = {KV_CAL_METRICS(AS_INFO)};
#undef AS_INFO

typedef struct key_info {
    const char *name;
    bool absolute;
    double step, lo, hi;
} key_info;

#define AS_KEY(id, name, abs, step, lo, hi) {name, abs, step, lo, hi},
static const key_info key_infos[KV_CAL_N_KEYS] = {KV_CAL_KEYS(AS_KEY)};
#undef AS_KEY

#define AS_NAME(id, name, abs, step, lo, hi) name ", "
static const char key_names[] = KV_CAL_KEYS(AS_NAME);
#undef AS_NAME

const char *kv_cal_key_name(int key)
{
    return key_infos[key].name;
}

bool kv_cal_key_absolute(int key)
{
    return key_infos[key].absolute;
}

/* ---- metrics -------------------------------------------------------------------------- */

void kv_cal_metrics_compute(const kv_cal_sample *s, size_t n, kv_cal_metrics *out)
{
    double *ttft = kv_xmalloc(n * sizeof *ttft);
    double sum_ttft = 0, sum_tpot = 0, gap_s = 0, first = INFINITY, last = -INFINITY, toks = 0;
    size_t n_tpot = 0;
    uint64_t gaps = 0;
    for (size_t i = 0; i < n; i++) {
        ttft[i] = s[i].ttft_s;
        sum_ttft += s[i].ttft_s;
        if (s[i].output_len > 1) {
            sum_tpot += (s[i].e2e_s - s[i].ttft_s) / (s[i].output_len - 1);
            n_tpot++;
            gap_s += s[i].e2e_s - s[i].ttft_s;
            gaps += s[i].n_gaps;
        }
        first = s[i].send_s < first ? s[i].send_s : first;
        last = s[i].send_s + s[i].e2e_s > last ? s[i].send_s + s[i].e2e_s : last;
        toks += s[i].output_len;
    }
    out->v[KV_CAL_TTFT_MEAN] = sum_ttft / (double)n;
    kv_sort_doubles(ttft, n); /* numpy.percentile's default (linear) is kv_percentile */
    out->v[KV_CAL_TTFT_P99] = kv_percentile(ttft, n, 99);
    out->v[KV_CAL_TPOT_MEAN] = n_tpot ? sum_tpot / (double)n_tpot : NAN;
    out->v[KV_CAL_ITL_MEAN] = gaps ? gap_s / (double)gaps : NAN;
    out->v[KV_CAL_OUT_TPUT] = last > first ? toks / (last - first) : NAN;
    free(ttft);
}

/* ln(p / m), or NaN when either is not a positive finite number (the metric is left out). */
static double ln_ratio(double p, double m)
{
    return p > 0 && m > 0 && isfinite(p) && isfinite(m) ? log(p / m) : NAN;
}

double kv_cal_log_error(const kv_cal_metrics *pred, const kv_cal_metrics *meas, int *count)
{
    double sum = 0;
    *count = 0;
    for (int k = 0; k < KV_CAL_N_METRICS; k++) {
        double e = ln_ratio(pred->v[k], meas->v[k]);
        if (!isnan(e)) {
            sum += e * e;
            (*count)++;
        }
    }
    return sum;
}

/* ---- options -------------------------------------------------------------------------- */

const char *kv_cal_warm_name(kv_cal_warm w)
{
    return w == KV_CAL_WARM_FIRST ? "first" : w == KV_CAL_WARM_PREVIOUS ? "previous" : "none";
}

int kv_cal_warm_parse(const char *s, kv_cal_warm *out)
{
    for (int w = KV_CAL_WARM_NONE; w <= KV_CAL_WARM_PREVIOUS; w++)
        if (strcmp(s, kv_cal_warm_name((kv_cal_warm)w)) == 0) {
            *out = (kv_cal_warm)w;
            return 0;
        }
    return -KV_EINVAL;
}

void kv_cal_options_init(kv_cal_options *o)
{
    o->fit = "overhead,mbu";
    o->holdout = KV_CAL_HOLDOUT_NONE;
    o->warm = KV_CAL_WARM_NONE;
    o->max_replays = 2000;
}

int kv_cal_keys_parse(const char *list, int *keys, size_t *n_keys, kv_diag *diag)
{
    *n_keys = 0;
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        int k = 0;
        while (k < KV_CAL_N_KEYS &&
               !(strlen(key_infos[k].name) == len && strncmp(p, key_infos[k].name, len) == 0))
            k++;
        if (k == KV_CAL_N_KEYS)
            return kv_diag_set(diag, -KV_EINVAL, "{fit}: '%.*s' is not one of %.*s", (int)len, p,
                               (int)sizeof key_names - 3, key_names);
        for (size_t j = 0; j < *n_keys; j++)
            if (keys[j] == k)
                return kv_diag_set(diag, -KV_EINVAL, "{fit}: '%s' given twice", key_infos[k].name);
        keys[(*n_keys)++] = k;
        if (p[len] != ',')
            return 0;
        p += len + 1;
    }
}

/* ---- replays -------------------------------------------------------------------------- */

typedef struct fit_run {
    kv_trace trace; /* its warm-up prompts, then its successful requests; reqs owned here */
    uint64_t *ids;  /* the prompts' hash_ids (warm-up only), owned here */
    size_t n_warm;  /* the trace's first n_warm rows warm the cache; not measured */
    int64_t gap_ns; /* the run's requests are sent this much later than in the file */
    const kv_bench *bench;
    kv_cal_metrics measured;
} fit_run;

/* Prompt i's 16-token block j is hash_id (i + 1)·2^32 + j: a warm-up copy of prompt i and
 * the run's own request i share every full block (for any block size: the content of a
 * position depends on (i, position) alone), and distinct prompts share nothing, as
 * content-less prompts do.  ids holds every prompt's run of ids; at[i] is where prompt i's
 * starts. */
static uint32_t prompt_ids_n(uint32_t prompt_len)
{
    return (prompt_len + KV_CAL_WARM_TB - 1) / KV_CAL_WARM_TB;
}

static uint64_t *prompt_ids(const kv_bench *b, size_t *at)
{
    size_t total = 0;
    for (size_t i = 0; i < b->n; i++) {
        at[i] = total;
        total += prompt_ids_n(b->reqs[i].prompt_len);
    }
    uint64_t *ids = kv_xmalloc((total ? total : 1) * sizeof *ids);
    for (size_t i = 0; i < b->n; i++)
        for (size_t j = at[i]; j < (i + 1 < b->n ? at[i + 1] : total); j++)
            ids[j] = ((uint64_t)(i + 1) << 32) + (j - at[i]);
    return ids;
}

/* Give spec the content of prompt i (warm-up only; else it stays content-less). */
static void set_prompt(kv_request_spec *spec, const fit_run *r, const size_t *at, size_t i)
{
    if (!r->ids)
        return;
    spec->content = KV_CONTENT_HASH_IDS;
    spec->hash_ids = r->ids + at[i];
    spec->n_hash_ids = prompt_ids_n(spec->prompt_len);
}

/* Run b's trace: with warm (run b's warm-up prompts, in order: indices into b->reqs) first,
 * each with one output token and sent at 0, then b's successful requests from gap_ns on. */
static void make_run(fit_run *r, const kv_bench *b, const size_t *warm, size_t n_warm)
{
    memset(r, 0, sizeof *r);
    r->bench = b;
    size_t *at = NULL; /* where each prompt's ids start (warm-up only) */
    if (n_warm) {
        at = kv_xmalloc(b->n * sizeof *at);
        r->ids = prompt_ids(b, at);
        r->n_warm = n_warm;
        r->gap_ns = (int64_t)KV_CAL_WARM_GAP_S * 1000000000;
    }
    size_t n = b->n - b->n_failed, k = 0;
    kv_request_spec *specs = kv_xcalloc(n_warm + n, sizeof *specs);
    kv_cal_sample *s = kv_xmalloc((n ? n : 1) * sizeof *s);
    for (size_t w = 0; w < n_warm; w++, k++) {
        const kv_bench_req *q = &b->reqs[warm[w]];
        specs[k] = (kv_request_spec){.prompt_len = q->prompt_len,
                                     .output_len = 1,
                                     .row = (uint32_t)k,
                                     .line = (uint32_t)(warm[w] + 1),
                                     .content = KV_CONTENT_NONE};
        set_prompt(&specs[k], r, at, warm[w]);
    }
    for (size_t i = 0; i < b->n; i++) {
        const kv_bench_req *q = &b->reqs[i];
        if (!q->ok)
            continue;
        specs[k] = (kv_request_spec){.arrival_ns = r->gap_ns + llround(q->sched_s * 1e9),
                                     .prompt_len = q->prompt_len,
                                     .output_len = q->output_len,
                                     .row = (uint32_t)k,
                                     .line = (uint32_t)(i + 1),
                                     .content = KV_CONTENT_NONE};
        set_prompt(&specs[k], r, at, i);
        s[k - n_warm] = (kv_cal_sample){q->send_s, q->ttft_s, q->e2e_s, q->output_len, q->n_gaps};
        k++;
    }
    r->trace.reqs = specs;
    r->trace.n = n_warm + n;
    r->trace.format = KV_TRACE_KVSIM_JSONL;
    r->trace.trace_block_size = KV_CAL_WARM_TB;
    r->trace.path = b->path;
    kv_cal_metrics_compute(s, n, &r->measured);
    free(s);
    free(at);
}

static void free_run(fit_run *r)
{
    free(r->trace.reqs);
    free(r->ids);
}

/* Replay run r under the time model spec: its metrics, or an error naming the run. */
static int replay(const kv_sim_options *so, const kv_setup *setup, const fit_run *r,
                  const char *spec, kv_cal_metrics *out, kv_diag *diag)
{
    kv_sim_options o = *so;
    o.time_model = spec;
    o.max_concurrency = r->bench->max_concurrency;
    kv_run_result res;
    int rc = kv_sim_replay(&o, setup, &r->trace, NULL, &res, diag);
    if (rc != 0) {
        if (res.reqs)
            kv_run_result_release(&res);
        return rc;
    }
    size_t n = res.n - r->n_warm, bad = 0;
    kv_cal_sample *s = kv_xmalloc((n ? n : 1) * sizeof *s);
    int64_t warm_end = 0, g = r->gap_ns; /* 0 without warm-up: the times as replayed */
    for (size_t i = 0; i < res.n; i++) {
        const kv_req *q = &res.reqs[i];
        bad += q->status != KV_REQ_FINISHED;
        if (i < r->n_warm) {
            warm_end = q->finish_ns > warm_end ? q->finish_ns : warm_end;
            continue;
        }
        double send = (double)(q->spec->arrival_ns - g) / 1e9;
        s[i - r->n_warm] = (kv_cal_sample){send, (double)(q->first_token_ns - g) / 1e9 - send,
                                           (double)(q->finish_ns - g) / 1e9 - send,
                                           q->spec->output_len, q->spec->output_len - 1};
    }
    if (bad != 0)
        rc = kv_diag_set(diag, -KV_ECAPACITY,
                         "%s: %zu of %zu requests did not finish in the replay (rejected by "
                         "the simulated pool: check the model, GPU and pool options)",
                         r->bench->path, bad, res.n);
    else if (r->n_warm && warm_end > g)
        rc = kv_diag_set(diag, -KV_ECAPACITY,
                         "%s: its %zu warm-up prompts took %.0f s in the replay, longer than "
                         "the %d s before the run starts",
                         r->bench->path, r->n_warm, (double)warm_end / 1e9, KV_CAL_WARM_GAP_S);
    else
        kv_cal_metrics_compute(s, n, out);
    free(s);
    kv_run_result_release(&res);
    return rc;
}

/* ---- the search ----------------------------------------------------------------------- */

typedef struct search {
    const kv_sim_options *so;
    const kv_setup *setup;
    const fit_run *runs;
    size_t n_runs;
    const bool *train; /* fitted runs */
    kv_timing base;    /* the bound base model */
    const int *keys;
    size_t n_keys;
    double *memo; /* n_memo entries of n_keys + 1 doubles: θ, then its loss */
    size_t n_memo, cap_memo;
    uint32_t replays, max_replays;
} search;

static double cap1(double v)
{
    return v < 1.0 ? v : 1.0;
}

/* The complete spec of θ. */
static void spec_of(const search *s, const double *theta, char *buf, size_t n)
{
    kv_timing t = s->base;
    double mfu8 = s->base.mfu_fp8 > 0 ? s->base.mfu_fp8 : s->base.mfu;
    double attn = s->base.attn_bw > 0 ? s->base.attn_bw : s->base.mbu;
    for (size_t j = 0; j < s->n_keys; j++) {
        double v = theta[j];
        switch (s->keys[j]) {
        case KV_CAL_KEY_OVERHEAD:
            t.overhead_s = v;
            break;
        case KV_CAL_KEY_SEQ:
            t.seq_overhead_s = v;
            break;
        case KV_CAL_KEY_LAYER_LAT:
            t.layer_lat_s = v;
            break;
        case KV_CAL_KEY_MFU:
            t.mfu = cap1(s->base.mfu * v);
            t.mfu_fp8 = cap1(mfu8 * v);
            break;
        default: /* KV_CAL_KEY_MBU */
            t.mbu = cap1(s->base.mbu * v);
            t.attn_bw = cap1(attn * v);
            break;
        }
    }
    kv_timing_describe(&t, buf, n);
}

/* Number of fitted runs: the replays of one evaluation. */
static size_t n_fitted(const search *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_runs; i++)
        n += s->train[i];
    return n;
}

/* Number of residuals of one evaluation: five metrics of every fitted run. */
static size_t n_residuals(const search *s)
{
    return n_fitted(s) * KV_CAL_N_METRICS;
}

/* ln(predicted / measured) of every metric of every fitted run at θ, in run order, into r
 * (n_residuals entries; NaN where a metric is left out, ln_ratio).  0, 1 when
 * the budget would be exceeded, or an error. */
static int residuals_of(search *s, const double *theta, double *r, kv_diag *diag)
{
    if (s->replays + n_fitted(s) > s->max_replays)
        return 1;
    char spec[KV_TIMING_DESCRIBE_MAX];
    spec_of(s, theta, spec, sizeof spec);
    for (size_t i = 0; i < s->n_runs; i++) {
        if (!s->train[i])
            continue;
        kv_cal_metrics p;
        int rc = replay(s->so, s->setup, &s->runs[i], spec, &p, diag);
        s->replays++;
        if (rc != 0)
            return rc;
        for (int k = 0; k < KV_CAL_N_METRICS; k++)
            *r++ = ln_ratio(p.v[k], s->runs[i].measured.v[k]);
    }
    return 0;
}

/* The root mean square of the residuals that are not NaN (the loss; ∞ when none is). */
static double rms_of(const double *r, size_t n)
{
    double sum = 0;
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(r[i])) {
            sum += r[i] * r[i];
            count++;
        }
    return count ? sqrt(sum / (double)count) : INFINITY;
}

/* The loss of θ on the fitted runs: 0, 1 when the budget would be exceeded, or an error. */
static int loss_of(search *s, const double *theta, double *loss, kv_diag *diag)
{
    size_t w = s->n_keys + 1;
    for (size_t m = 0; m < s->n_memo; m++)
        if (memcmp(&s->memo[m * w], theta, s->n_keys * sizeof *theta) == 0) {
            *loss = s->memo[m * w + s->n_keys];
            return 0;
        }
    size_t n = n_residuals(s);
    double *r = kv_xmalloc((n ? n : 1) * sizeof *r);
    int rc = residuals_of(s, theta, r, diag);
    if (rc == 0)
        *loss = rms_of(r, n);
    free(r);
    if (rc != 0)
        return rc;
    if (s->n_memo == s->cap_memo) {
        s->cap_memo = s->cap_memo * 2 + 16;
        s->memo = kv_xrealloc(s->memo, s->cap_memo * w * sizeof *s->memo);
    }
    memcpy(&s->memo[s->n_memo * w], theta, s->n_keys * sizeof *theta);
    s->memo[s->n_memo++ * w + s->n_keys] = *loss;
    return 0;
}

/* v within [lo, hi]. */
static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

typedef struct box {
    double lo[KV_CAL_N_KEYS], hi[KV_CAL_N_KEYS], step[KV_CAL_N_KEYS];
} box;

/* Hooke–Jeeves' exploratory move around x (loss *fx), in place: ± step on each key in
 * turn, keeping every move that lowers the loss by more than 1e-9.  0, 1, or an error. */
static int explore(search *s, const box *bx, double *x, double *fx, kv_diag *diag)
{
    double th[KV_CAL_N_KEYS];
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < s->n_keys; j++)
        for (int sign = 1; rc == 0 && sign >= -1; sign -= 2) {
            memcpy(th, x, s->n_keys * sizeof *th);
            th[j] = clamp(x[j] + sign * bx->step[j], bx->lo[j], bx->hi[j]);
            if (th[j] == x[j])
                continue;
            double e;
            rc = loss_of(s, th, &e, diag);
            if (rc == 0 && e < *fx - 1e-9) {
                memcpy(x, th, s->n_keys * sizeof *th);
                *fx = e;
                break; /* this key moved: on to the next */
            }
        }
    return rc;
}

/* Hooke–Jeeves pattern search from theta (updated in place; *best its loss): explore; on
 * success jump on along the move just made (x + (x − base)) and explore there while that
 * keeps improving; on failure halve the steps, KV_CAL_HALVINGS times.  The jumps follow a
 * valley that runs across the keys (overhead against mbu), where a plain coordinate
 * search would crawl.  0, 1 (budget spent), or an error. */
static int pattern_search(search *s, double *theta, box *bx, double *best, kv_diag *diag)
{
    size_t n = s->n_keys;
    double x[KV_CAL_N_KEYS], p[KV_CAL_N_KEYS];
    int rc = loss_of(s, theta, best, diag);
    for (int h = 0; rc == 0 && h <= KV_CAL_HALVINGS;) {
        double fx = *best;
        memcpy(x, theta, n * sizeof *x);
        rc = explore(s, bx, x, &fx, diag);
        if (rc != 0 || !(fx < *best)) {
            for (size_t j = 0; j < n; j++)
                bx->step[j] /= 2;
            h++;
            continue;
        }
        while (rc == 0 && fx < *best) {
            for (size_t j = 0; j < n; j++)
                p[j] = clamp(2 * x[j] - theta[j], bx->lo[j], bx->hi[j]);
            memcpy(theta, x, n * sizeof *x);
            *best = fx;
            double fp;
            rc = loss_of(s, p, &fp, diag);
            if (rc == 0)
                rc = explore(s, bx, p, &fp, diag);
            if (rc == 0 && fp < fx) {
                memcpy(x, p, n * sizeof *x);
                fx = fp;
            }
        }
    }
    return rc;
}

/* x with a x = b for n ≤ KV_CAL_N_KEYS (Gaussian elimination with partial pivoting; a and b
 * are overwritten); false when a is singular. */
static bool solve(double a[KV_CAL_N_KEYS][KV_CAL_N_KEYS], double *b, double *x, size_t n)
{
    for (size_t c = 0; c < n; c++) {
        size_t piv = c;
        for (size_t i = c + 1; i < n; i++)
            if (fabs(a[i][c]) > fabs(a[piv][c]))
                piv = i;
        if (!(fabs(a[piv][c]) > 1e-300))
            return false;
        for (size_t j = 0; j < n; j++) {
            double t = a[c][j];
            a[c][j] = a[piv][j];
            a[piv][j] = t;
        }
        double t = b[c];
        b[c] = b[piv];
        b[piv] = t;
        for (size_t i = c + 1; i < n; i++) {
            double f = a[i][c] / a[c][c];
            for (size_t j = c; j < n; j++)
                a[i][j] -= f * a[c][j];
            b[i] -= f * b[c];
        }
    }
    for (size_t i = n; i-- > 0;) {
        double v = b[i];
        for (size_t j = i + 1; j < n; j++)
            v -= a[i][j] * x[j];
        x[i] = v / a[i][i];
    }
    return true;
}

int kv_cal_polish(kv_cal_resid_fn fn, void *ctx, size_t n, size_t m, double *theta,
                  const double *lo, const double *hi, const double *step, double *best,
                  kv_diag *diag)
{
    if (n == 0 || n > KV_CAL_N_KEYS || m == 0)
        return kv_diag_set(diag, -KV_EINVAL, "{fit}: %zu keys and %zu residuals (1 to %d keys)", n,
                           m, KV_CAL_N_KEYS);
    double *r = kv_xmalloc(m * (n + 2) * sizeof *r);
    double *jac = r + m, *trial = r + m * (n + 1); /* J's columns, then a trial's residuals */
    int rc = fn(ctx, theta, r, diag);
    if (rc == 0)
        *best = rms_of(r, m);
    double lambda = 1e-3;
    for (int it = 0; rc == 0 && it < KV_CAL_LM_ITERATIONS; it++) {
        for (size_t j = 0; rc == 0 && j < n; j++) {
            double th[KV_CAL_N_KEYS], h = step[j];
            memcpy(th, theta, n * sizeof *th);
            if (theta[j] + h > hi[j])
                h = -h;
            th[j] = theta[j] + h;
            double *col = jac + j * m;
            rc = fn(ctx, th, col, diag);
            for (size_t i = 0; rc == 0 && i < m; i++)
                col[i] = isnan(r[i]) || isnan(col[i]) ? 0 : (col[i] - r[i]) / h;
        }
        double g[KV_CAL_N_KEYS] = {0}, jtj[KV_CAL_N_KEYS][KV_CAL_N_KEYS] = {{0}};
        for (size_t a = 0; rc == 0 && a < n; a++)
            for (size_t i = 0; i < m; i++) {
                if (isnan(r[i]))
                    continue;
                g[a] += jac[a * m + i] * r[i];
                for (size_t b = 0; b < n; b++)
                    jtj[a][b] += jac[a * m + i] * jac[b * m + i];
            }
        /* A key at a bound that the descent (−g) would push out is held there (the active
         * set), so the other keys' step does not assume it moves. */
        size_t freek[KV_CAL_N_KEYS], nf = 0;
        for (size_t j = 0; j < n; j++)
            if (!(theta[j] <= lo[j] && g[j] > 0) && !(theta[j] >= hi[j] && g[j] < 0))
                freek[nf++] = j;
        bool moved = false;
        for (; rc == 0 && !moved && nf > 0 && lambda <= 1e12; lambda *= 4) {
            double a[KV_CAL_N_KEYS][KV_CAL_N_KEYS], rhs[KV_CAL_N_KEYS], df[KV_CAL_N_KEYS];
            double d[KV_CAL_N_KEYS] = {0};
            for (size_t i = 0; i < nf; i++) {
                for (size_t j = 0; j < nf; j++)
                    a[i][j] =
                        jtj[freek[i]][freek[j]] + (i == j ? lambda * jtj[freek[i]][freek[i]] : 0);
                rhs[i] = -g[freek[i]];
            }
            if (!solve(a, rhs, df, nf))
                continue;
            for (size_t i = 0; i < nf; i++)
                d[freek[i]] = df[i];
            bool within = true; /* inside the pattern search's last stencil: nothing to find */
            for (size_t j = 0; j < n; j++)
                within = within && fabs(d[j]) < step[j];
            if (within)
                break;
            double th[KV_CAL_N_KEYS];
            for (size_t j = 0; j < n; j++)
                th[j] = clamp(theta[j] + d[j], lo[j], hi[j]);
            rc = fn(ctx, th, trial, diag);
            if (rc != 0)
                break; /* trial holds no residuals: the budget is spent, or an error */
            double e = rms_of(trial, m);
            if (e < *best - 1e-12) {
                memcpy(theta, th, n * sizeof *th);
                memcpy(r, trial, m * sizeof *r);
                *best = e;
                moved = true;
                lambda /= 16; /* the loop's · 4 leaves it at λ / 4 */
            }
        }
        if (!moved)
            break;
    }
    free(r);
    return rc;
}

/* The fit's residuals for kv_cal_polish. */
static int search_residuals(void *ctx, const double *theta, double *r, kv_diag *diag)
{
    return residuals_of(ctx, theta, r, diag);
}

/* ---- the fit -------------------------------------------------------------------------- */

/* The bound base model: a roofline, or -KV_EINVAL. */
static int base_model(const kv_sim_options *so, const kv_setup *setup, kv_timing *t, kv_diag *diag)
{
    const char *spec = so->time_model ? so->time_model : "roofline";
    int rc = kv_timing_parse(spec, t, diag);
    if (rc != 0)
        return rc;
    if (t->kind != KV_TIME_ROOFLINE)
        return kv_diag_set(diag, -KV_EINVAL,
                           "{time_model} '%s': calibration fits the roofline's parameters "
                           "(give roofline or roofline:KEY=VALUE,...)",
                           spec);
    kv_timing_bind(t, &setup->model, &setup->gpu, &setup->shard);
    return 0;
}

static double key_value(const kv_timing *t, int key)
{
    switch (key) {
    case KV_CAL_KEY_OVERHEAD:
        return t->overhead_s;
    case KV_CAL_KEY_SEQ:
        return t->seq_overhead_s;
    case KV_CAL_KEY_LAYER_LAT:
        return t->layer_lat_s;
    case KV_CAL_KEY_MFU:
        return t->mfu;
    default:
        return t->mbu;
    }
}

/* Every run's before (the base spec as given) and after (the fitted spec). */
static int report_runs(const search *s, kv_cal_result *out, kv_diag *diag)
{
    const char *base = s->so->time_model ? s->so->time_model : "roofline";
    for (size_t i = 0; i < s->n_runs; i++) {
        kv_cal_run *r = &out->runs[i];
        int rc = replay(s->so, s->setup, &s->runs[i], base, &r->before, diag);
        if (rc == 0)
            rc = replay(s->so, s->setup, &s->runs[i], out->after_model, &r->after, diag);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static double train_loss(const kv_cal_result *out, bool after)
{
    double sum = 0;
    int count = 0;
    for (size_t i = 0; i < out->n_runs; i++) {
        const kv_cal_run *r = &out->runs[i];
        if (r->held_out)
            continue;
        int c;
        sum += kv_cal_log_error(after ? &r->after : &r->before, &r->measured, &c);
        count += c;
    }
    return count ? sqrt(sum / count) : INFINITY;
}

/* Run i's warm-up prompts (kv_cal_warm), as indices into its requests; 0 or -KV_EINVAL when
 * `previous` finds run i's prompts differ from run i − 1's. */
static int warm_list(kv_bench *const *b, size_t i, kv_cal_warm warm, size_t *list, size_t *n,
                     kv_diag *diag)
{
    *n = 0;
    if (warm == KV_CAL_WARM_NONE || b[i]->n == 0)
        return 0;
    if (warm == KV_CAL_WARM_FIRST || i == 0) {
        list[(*n)++] = 0; /* the client's initial single-prompt test: request 0 */
        return 0;
    }
    const kv_bench *p = b[i - 1], *c = b[i];
    if (p->n != c->n)
        return kv_diag_set(diag, -KV_EINVAL,
                           "{warm} previous: %s sends %zu prompts but %s before it sent %zu (the "
                           "runs must send the same prompts in the same order)",
                           c->path, c->n, p->path, p->n);
    for (size_t k = 0; k < c->n; k++) {
        if (p->reqs[k].prompt_len != c->reqs[k].prompt_len)
            return kv_diag_set(diag, -KV_EINVAL,
                               "{warm} previous: %s: request %zu's prompt is %u tokens but %s "
                               "sent %u (the runs must send the same prompts in the same order)",
                               c->path, k, c->reqs[k].prompt_len, p->path, p->reqs[k].prompt_len);
        list[(*n)++] = k;
    }
    return 0;
}

/* Runs, hold-out marks and the search's start, bounds and state. */
static int setup_fit(search *s, fit_run *runs, bool *train, kv_bench *const *benches, size_t n,
                     const kv_cal_options *co, kv_cal_result *out, kv_diag *diag)
{
    int rc = kv_cal_keys_parse(co->fit ? co->fit : "overhead,mbu", out->keys, &out->n_keys, diag);
    if (rc == 0 && co->holdout == KV_CAL_HOLDOUT_ALTERNATE && n < 2)
        rc = kv_diag_set(diag, -KV_EINVAL,
                         "{holdout} alternate needs at least two runs (one to fit, one to "
                         "hold out); got %zu",
                         n);
    if (rc == 0 && n == 0)
        rc = kv_diag_set(diag, -KV_EINVAL, "no benchmark runs to fit");
    if (rc != 0)
        return rc;
    out->runs = kv_xcalloc(n, sizeof *out->runs);
    out->n_runs = n;
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t *warm = kv_xmalloc((benches[i]->n ? benches[i]->n : 1) * sizeof *warm), n_warm;
        rc = warm_list(benches, i, co->warm, warm, &n_warm, diag);
        if (rc == 0)
            make_run(&runs[i], benches[i], warm, n_warm);
        free(warm);
        train[i] = co->holdout == KV_CAL_HOLDOUT_NONE || i % 2 == 0;
        out->runs[i] = (kv_cal_run){.bench = benches[i],
                                    .held_out = !train[i],
                                    .n_warm = runs[i].n_warm,
                                    .n_replayed = runs[i].trace.n - runs[i].n_warm,
                                    .measured = runs[i].measured};
    }
    if (rc != 0)
        return rc;
    s->runs = runs;
    s->n_runs = n;
    s->train = train;
    s->keys = out->keys;
    s->n_keys = out->n_keys;
    s->max_replays = co->max_replays;
    return 0;
}

int kv_calibrate(const kv_sim_options *so, const kv_setup *setup, kv_bench *const *benches,
                 size_t n, const kv_cal_options *co, kv_cal_result *out, kv_diag *diag)
{
    memset(out, 0, sizeof *out);
    out->warm = co->warm;
    search s;
    memset(&s, 0, sizeof s);
    s.so = so;
    s.setup = setup;
    int rc = base_model(so, setup, &s.base, diag);
    fit_run *runs = kv_xcalloc(n ? n : 1, sizeof *runs);
    bool *train = kv_xcalloc(n ? n : 1, sizeof *train);
    if (rc == 0)
        rc = setup_fit(&s, runs, train, benches, n, co, out, diag);
    double theta[KV_CAL_N_KEYS], best = INFINITY;
    box bx;
    for (size_t j = 0; rc == 0 && j < out->n_keys; j++) {
        const key_info *k = &key_infos[out->keys[j]];
        out->base[j] = key_value(&s.base, out->keys[j]);
        theta[j] = k->absolute ? out->base[j] : 1.0;
        bx.lo[j] = k->lo;
        bx.hi[j] = theta[j] > k->hi ? theta[j] : k->hi;
        bx.step[j] = k->step;
    }
    if (rc == 0) {
        kv_timing_describe(&s.base, out->before_model, sizeof out->before_model);
        rc = pattern_search(&s, theta, &bx, &best, diag);
        if (rc == 0)
            rc = kv_cal_polish(search_residuals, &s, s.n_keys, n_residuals(&s), theta, bx.lo, bx.hi,
                               bx.step, &best, diag);
        out->budget_spent = rc == 1;
        rc = rc == 1 ? 0 : rc;
    }
    if (rc == 0) {
        memcpy(out->fitted, theta, out->n_keys * sizeof *theta);
        spec_of(&s, theta, out->after_model, sizeof out->after_model);
        out->replays = s.replays;
        rc = report_runs(&s, out, diag);
    }
    out->loss_before = train_loss(out, false);
    out->loss_after = train_loss(out, true);
    for (size_t i = 0; i < n; i++)
        free_run(&runs[i]);
    free(runs);
    free(train);
    free(s.memo);
    if (rc != 0)
        kv_cal_result_release(out);
    return rc;
}

void kv_cal_result_release(kv_cal_result *r)
{
    free(r->runs);
    memset(r, 0, sizeof *r);
}

/* ---- JSON ----------------------------------------------------------------------------- */

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *metrics_json(const kv_cal_metrics *m)
{
    json_t *o = json_object();
    for (int k = 0; k < KV_CAL_N_METRICS; k++)
        json_object_set_new(o, kv_cal_metric_infos[k].name, real_or_null(m->v[k]));
    return o;
}

json_t *kv_cal_result_to_json(const kv_cal_result *r, kv_cal_holdout holdout)
{
    json_t *o = json_object(), *fit = json_array(), *params = json_object(), *runs = json_array();
    for (size_t j = 0; j < r->n_keys; j++) {
        const key_info *k = &key_infos[r->keys[j]];
        double value = k->absolute ? r->fitted[j] : cap1(r->fitted[j] * r->base[j]);
        json_array_append_new(fit, json_string(k->name));
        json_object_set_new(
            params, k->name,
            json_pack("{s:f,s:f,s:f}", "fitted", r->fitted[j], "base", r->base[j], "value", value));
    }
    for (size_t i = 0; i < r->n_runs; i++) {
        const kv_cal_run *run = &r->runs[i];
        json_array_append_new(
            runs,
            json_pack("{s:s,s:b,s:I,s:I,s:I,s:o,s:o,s:o}", "path", run->bench->path, "held_out",
                      run->held_out, "warm_prompts", (json_int_t)run->n_warm, "requests",
                      (json_int_t)run->n_replayed, "failed", (json_int_t)run->bench->n_failed,
                      "measured", metrics_json(&run->measured), "before",
                      metrics_json(&run->before), "after", metrics_json(&run->after)));
    }
    json_object_set_new(o, "fit", fit);
    json_object_set_new(o, "holdout",
                        json_string(holdout == KV_CAL_HOLDOUT_ALTERNATE ? "alternate" : "none"));
    json_object_set_new(o, "warm", json_string(kv_cal_warm_name(r->warm)));
    json_object_set_new(o, "replays", json_integer(r->replays));
    json_object_set_new(o, "budget_spent", json_boolean(r->budget_spent));
    json_object_set_new(o, "loss_before", real_or_null(r->loss_before));
    json_object_set_new(o, "loss_after", real_or_null(r->loss_after));
    json_object_set_new(o, "time_model_before", json_string(r->before_model));
    json_object_set_new(o, "time_model", json_string(r->after_model));
    json_object_set_new(o, "parameters", params);
    json_object_set_new(o, "runs", runs);
    return o;
}
