/* plan: SLO specs and the capacity search behind `kvsim plan` (see include/kvsim/plan.h).
 *
 * SLOs.  A spec is a comma list of KEY=VALUE.  Latency keys are <dist>_<stat> with dist in
 * ttft, tpot, e2e, queue and stat in p50, p90, p95, p99, max, mean — exactly the figures
 * of summary.json's latency_s object, which is where they are measured, so a plan's
 * numbers are the numbers `kvsim run` prints for the same replay.  Their values need a
 * unit (s, ms, us): a bare "2" could mean either.  Rates are fractions, "0.01" or "1%".
 * reject_rate ≤ 0 is implied unless given, because latency percentiles cover finished
 * requests only: a replay that rejects or strands requests must not look fast.
 *
 * Search.  The state is the list of probes; every proposal is a function of it:
 *   E = the hardest probe that meets, H = the easiest failing probe harder than E.
 *   - no probe yet: the start value;
 *   - no E: step from the easiest probe towards the easy bound by `factor` (a failing
 *     probe at the easy bound ends the search: no answer);
 *   - E but no H: step from E towards the hard bound (E at the bound ends it: the answer
 *     is the bound);
 *   - E and H further apart than the tolerance: their geometric mean (bisection in log
 *     space), rounded to a few significant digits so probe values read well;
 *   - converged: once, the confirmation probe E·(1+confirm) on the hard side.  If it meets,
 *     E moves there and the rules above continue from the new E.
 * No probe lies strictly between E and H (it would be a harder meet than E or an easier
 * failure than H), so the midpoint is always new, and expansion steps go past every probe
 * made so far; the search therefore never repeats a value and ends after at most
 * max_probes probes.  A replay is not guaranteed to be monotone in load or pool size: the
 * answer is the hardest probe that met, every probe harder than it failed, and a failing
 * probe easier than it is reported as non-monotone.
 *
 * Complexity: O(n) per proposal over n ≤ max_probes probes.  No I/O.
 */
#include "kvsim/plan.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/text.h"

/* ---- SLO specs ---------------------------------------------------------------------- */

void kv_slo_set_init(kv_slo_set *s)
{
    memset(s, 0, sizeof *s);
}

/* The summary field a latency key "<dist>_<stat>" names: latency_s.<dist>.<stat>, or NULL
 * (so the latency keys are exactly the schema's latency figures). */
static const kv_field *latency_field(const char *key)
{
    const char *us = strchr(key, '_');
    char path[64];
    if (!us || (size_t)(us - key) > 16)
        return NULL;
    snprintf(path, sizeof path, "latency_s.%.*s.%s", (int)(us - key), key, us + 1);
    return kv_summary_field(path);
}

/* 0 and the unit, or -1 for an unknown key. */
static int classify(const char *key, kv_slo_unit *unit)
{
    if (strcmp(key, "preemption_rate") == 0 || strcmp(key, "reject_rate") == 0) {
        *unit = KV_SLO_FRACTION;
        return 0;
    }
    if (!latency_field(key))
        return -1;
    *unit = KV_SLO_SECONDS;
    return 0;
}

/* VALUE = number [unit]: the number in the one grammar (kvsim/text.h), then for times a
 * unit s, ms or us, for rates nothing or '%'. */
static int parse_value(const char *key, kv_slo_unit unit, const char *text, double *out,
                       kv_diag *diag)
{
    char vb[KV_SHOWN_MAX], ub[KV_SHOWN_MAX];
    const char *val = kv_shown(text, vb); /* as messages quote it */
    kv_number_parts lx;
    double v;
    if (!kv_number_lex(text, strlen(text), &lx))
        return kv_diag_set(diag, -KV_EINVAL, "'%s': '%s' is not a number", key, val);
    int rc = kv_parse_number(text, lx.len, &v);
    if (rc == -KV_ERANGE)
        return kv_diag_set(diag, -KV_EINVAL, "'%s': '%s' is out of range", key, val);
    if (lx.negative && v != 0)
        return kv_diag_set(diag, -KV_EINVAL, "'%s' must not be negative (got '%s')", key, val);
    const char *end = text + lx.len;
    if (unit == KV_SLO_SECONDS) {
        double scale;
        if (*end == '\0')
            return kv_diag_set(diag, -KV_EINVAL,
                               "'%s': '%s' needs a time unit: s, ms or us (e.g. 2s, 100ms, "
                               "250us)",
                               key, val);
        if (strcmp(end, "s") == 0)
            scale = 1;
        else if (strcmp(end, "ms") == 0)
            scale = 1e-3;
        else if (strcmp(end, "us") == 0)
            scale = 1e-6;
        else
            return kv_diag_set(diag, -KV_EINVAL,
                               "'%s': unknown time unit '%s' in '%s' (s, ms or us)", key,
                               kv_shown(end, ub), val);
        /* Checked in seconds: 1e-320us is positive but underflows to 0 s. */
        if (!(v * scale > 0))
            return kv_diag_set(diag, -KV_EINVAL, "'%s' must be a positive time (got '%s')", key,
                               val);
        *out = v * scale;
        return 0;
    }
    if (strcmp(end, "%") == 0)
        v /= 100;
    else if (*end != '\0')
        return kv_diag_set(diag, -KV_EINVAL, "'%s': '%s' is not a fraction (e.g. 0.01 or 1%%)", key,
                           val);
    if (strcmp(key, "reject_rate") == 0 && v > 1)
        return kv_diag_set(diag, -KV_EINVAL, "'reject_rate' must be at most 1 (got '%s')", val);
    *out = v;
    return 0;
}

int kv_slo_parse(kv_slo_set *s, const char *spec, kv_diag *diag)
{
    kv_slo_set next = *s;
    int rc = 0;
    if (spec[strspn(spec, " \t")] == '\0')
        rc = kv_diag_set(diag, -KV_EINVAL, "empty SLO spec (KEY=VALUE,...; keys: %s)",
                         KV_SLO_KEYS_HINT);
    /* Empty entries are errors: "a=1,,b=2" or a trailing comma is a typo worth reporting. */
    kv_kvlist list;
    kv_kvlist_init(&list, spec, KV_KVLIST_PAIRS | KV_KVLIST_TRIM, "keys: " KV_SLO_KEYS_HINT);
    kv_kvitem item;
    while (rc == 0 && (rc = kv_kvlist_next(&list, &item, diag)) == 1) {
        rc = 0;
        const char *key = item.key, *val = item.value;
        char kb[KV_SHOWN_MAX]; /* a key as messages quote it */
        kv_slo_unit unit;
        if (classify(key, &unit) != 0) {
            rc = kv_diag_set(diag, -KV_EINVAL, "unknown SLO '%s' (known: %s)", kv_shown(key, kb),
                             KV_SLO_KEYS_HINT);
            break;
        }
        for (size_t i = 0; i < next.n && rc == 0; i++)
            if (strcmp(next.slo[i].name, key) == 0)
                rc = kv_diag_set(diag, -KV_EINVAL, "'%s' is given twice", key);
        if (rc == 0 && next.n == KV_SLO_MAX)
            rc = kv_diag_set(diag, -KV_EINVAL, "at most %d SLOs", KV_SLO_MAX);
        kv_slo *o = &next.slo[next.n];
        if (rc == 0 && (rc = parse_value(key, unit, val, &o->limit, diag)) == 0) {
            snprintf(o->name, sizeof o->name, "%s", key);
            o->unit = unit;
            o->implicit = false;
            next.n++;
        }
    }
    kv_kvlist_release(&list);
    if (rc == 0)
        *s = next;
    return rc;
}

int kv_slo_finish(kv_slo_set *s, kv_diag *diag)
{
    if (s->n == 0)
        return kv_diag_set(diag, -KV_EINVAL, "no SLO given (keys: %s)", KV_SLO_KEYS_HINT);
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->slo[i].name, "reject_rate") == 0)
            return 0;
    if (s->n == KV_SLO_MAX)
        return kv_diag_set(diag, -KV_EINVAL, "at most %d SLOs", KV_SLO_MAX - 1);
    kv_slo *o = &s->slo[s->n++];
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "reject_rate");
    o->unit = KV_SLO_FRACTION;
    o->limit = 0;
    o->implicit = true;
    return 0;
}

double kv_slo_measure(const kv_slo *slo, const kv_summary *s)
{
    double total = (double)s->requests.total;
    if (strcmp(slo->name, "preemption_rate") == 0)
        return (double)s->preemptions / total;
    if (strcmp(slo->name, "reject_rate") == 0)
        return (double)(s->requests.rejected + s->requests.unfinished) / total;
    if (s->requests.finished == 0)
        return NAN;
    const kv_field *f = latency_field(slo->name);
    assert(f);
    return kv_summary_number(s, f);
}

bool kv_slo_met(const kv_slo *slo, double value)
{
    return value <= slo->limit; /* false for NAN */
}

double kv_slo_ratio(const kv_slo *slo, double value)
{
    if (isnan(value))
        return INFINITY;
    if (slo->limit == 0)
        return value > 0 ? INFINITY : 0;
    return value / slo->limit;
}

void kv_slo_key(const kv_slo *slo, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s", slo->name, slo->unit == KV_SLO_SECONDS ? "_s" : "");
}

/* ---- the search --------------------------------------------------------------------- */

static const char *const status_names[] = {
    [KV_SEARCH_FOUND] = "found",
    [KV_SEARCH_NONE] = "none",
    [KV_SEARCH_BOUND] = "bound",
    [KV_SEARCH_PROBE_LIMIT] = "probe_limit",
};

const char *kv_search_status_name(kv_search_status s)
{
    return status_names[s];
}

double kv_round_sig(double x, int digits)
{
    if (x == 0 || !isfinite(x))
        return x;
    char buf[64];
    snprintf(buf, sizeof buf, "%.*e", digits - 1, x);
    return strtod(buf, NULL);
}

void kv_search_init(kv_search *s, const kv_search_config *cfg)
{
    assert(cfg->min > 0 && cfg->min < cfg->max && cfg->factor > 1);
    assert(cfg->tolerance >= 0 && cfg->confirm >= 0 && cfg->max_probes >= 1);
    memset(s, 0, sizeof *s);
    s->cfg = *cfg;
    /* Two digits finer than the tolerance, so rounding never stalls the bisection. */
    int d = cfg->tolerance > 0 ? (int)ceil(-log10(cfg->tolerance)) + 2 : 15;
    s->sig_digits = d < 4 ? 4 : d > 15 ? 15 : d;
}

void kv_search_release(kv_search *s)
{
    free(s->pts);
    memset(s, 0, sizeof *s);
}

void kv_search_record(kv_search *s, double x, bool meets)
{
    kv_grow((void **)&s->pts, &s->cap, s->n + 1, sizeof *s->pts);
    s->pts[s->n++] = (kv_search_point){x, meets};
}

/* a is harder than b */
static bool harder(const kv_search *s, double a, double b)
{
    return s->cfg.harder_up ? a > b : a < b;
}

static double hard_bound(const kv_search *s)
{
    return s->cfg.harder_up ? s->cfg.max : s->cfg.min;
}

static double easy_bound(const kv_search *s)
{
    return s->cfg.harder_up ? s->cfg.min : s->cfg.max;
}

/* A proposal as it will be probed: whole or rounded, inside the bounds. */
static double tidy(const kv_search *s, double x)
{
    x = s->cfg.integer ? floor(x + 0.5) : kv_round_sig(x, s->sig_digits);
    return x < s->cfg.min ? s->cfg.min : x > s->cfg.max ? s->cfg.max : x;
}

/* x moved by ratio f ≥ 1 towards the hard (or easy) side. */
static double toward(const kv_search *s, double x, double f, bool hard)
{
    return tidy(s, hard == s->cfg.harder_up ? x * f : x / f);
}

static long find(const kv_search *s, double x)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->pts[i].x == x)
            return (long)i;
    return -1;
}

typedef struct bracket {
    long e, h, f; /* hardest meet, easiest harder failure, easiest probe; -1 = none */
} bracket;

static bracket get_bracket(const kv_search *s)
{
    bracket b = {-1, -1, -1};
    for (size_t i = 0; i < s->n; i++) {
        if (s->pts[i].meets && (b.e < 0 || harder(s, s->pts[i].x, s->pts[b.e].x)))
            b.e = (long)i;
        if (b.f < 0 || harder(s, s->pts[b.f].x, s->pts[i].x))
            b.f = (long)i;
    }
    if (b.e >= 0)
        for (size_t i = 0; i < s->n; i++)
            if (!s->pts[i].meets && harder(s, s->pts[i].x, s->pts[b.e].x) &&
                (b.h < 0 || harder(s, s->pts[b.h].x, s->pts[i].x)))
                b.h = (long)i;
    return b;
}

/* Whether the bracket [E, H] is as tight as it gets; else *mid is the bisection probe. */
static bool converged(const kv_search *s, double e, double h, double *mid)
{
    double lo = e < h ? e : h, hi = e < h ? h : e;
    if (hi <= lo * (1 + s->cfg.tolerance))
        return true;
    double m = tidy(s, sqrt(lo) * sqrt(hi));
    *mid = m;
    return !(m > lo && m < hi);
}

static double confirm_value(const kv_search *s, double e)
{
    return toward(s, e, 1 + s->cfg.confirm, true);
}

bool kv_search_next(const kv_search *s, double *x)
{
    const kv_search_config *c = &s->cfg;
    if (s->n >= c->max_probes)
        return false;
    if (s->n == 0) {
        *x = tidy(s, c->start);
        return true;
    }
    bracket b = get_bracket(s);
    if (b.e < 0) {
        double f = s->pts[b.f].x;
        *x = toward(s, f, c->factor, false);
        return harder(s, f, *x);
    }
    double e = s->pts[b.e].x;
    if (b.h < 0) {
        *x = toward(s, e, c->factor, true);
        return harder(s, *x, e);
    }
    if (!converged(s, e, s->pts[b.h].x, x))
        return true;
    if (c->confirm > 0) {
        *x = confirm_value(s, e);
        return harder(s, *x, e) && find(s, *x) < 0;
    }
    return false;
}

void kv_search_result_get(const kv_search *s, kv_search_result *r)
{
    bracket b = get_bracket(s);
    memset(r, 0, sizeof *r);
    r->answer = b.e;
    r->next = b.e >= 0 ? b.h : b.f;
    r->confirm = -1;
    r->status = KV_SEARCH_PROBE_LIMIT;
    if (b.e < 0) {
        if (b.f >= 0 && s->pts[b.f].x == easy_bound(s))
            r->status = KV_SEARCH_NONE;
        return;
    }
    double e = s->pts[b.e].x, mid;
    if (b.h < 0 && e == hard_bound(s))
        r->status = KV_SEARCH_BOUND;
    else if (b.h >= 0 && converged(s, e, s->pts[b.h].x, &mid))
        r->status = KV_SEARCH_FOUND;
    if (s->cfg.confirm > 0) {
        double cv = confirm_value(s, e);
        if (harder(s, cv, e))
            r->confirm = find(s, cv);
    }
    for (size_t i = 0; i < s->n; i++)
        if (!s->pts[i].meets && harder(s, e, s->pts[i].x))
            r->non_monotone = true;
}
