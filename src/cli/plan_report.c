/* plan_report: what `kvsim plan` says: the human answer with its binding SLO and the probe
 * table, plan.json, and plan.csv (README "Capacity planning" documents both files).
 *
 * Everything is derived from the recorded probes and the search result; nothing here
 * replays.  The binding SLO is the one that stops the answer from going further: among the
 * SLOs the next probe beyond the answer violates, the one furthest over its limit
 * (value/limit; ties go to the first in spec order).  With no probe beyond the answer (the
 * bound was reached) no SLO binds, and the closest one is named instead; with no answer,
 * the SLO most violated at the easiest probe is named.
 *
 * Files are written as "<name>.tmp" in DIR and renamed into place only when both were
 * written and closed without error.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/plan_cli.h"
#include "kvsim/mem.h"
#include "kvsim/report.h"

/* ---- formatting --------------------------------------------------------------------- */

static const char *grouped(char *buf, size_t n, uint64_t v)
{
    char raw[32];
    snprintf(raw, sizeof raw, "%llu", (unsigned long long)v);
    size_t len = strlen(raw), o = 0;
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        buf[o++] = raw[i];
        size_t left = len - i - 1;
        if (left > 0 && left % 3 == 0)
            buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}

/* 1.97 → "1.97 s", 0.1 → "100 ms", 2.5e-4 → "250 us". */
static const char *fmt_seconds(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "n/a");
    else if (v >= 1 || v == 0)
        snprintf(buf, n, "%.4g s", v);
    else if (v >= 1e-3)
        snprintf(buf, n, "%.4g ms", v * 1e3);
    else
        snprintf(buf, n, "%.4g us", v * 1e6);
    return buf;
}

static const char *fmt_slo(char *buf, size_t n, const kv_slo *s, double v)
{
    if (s->unit == KV_SLO_SECONDS)
        return fmt_seconds(buf, n, v);
    if (isnan(v))
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, "%.4g", v);
    return buf;
}

static const char *fmt_bytes(char *buf, size_t n, uint64_t b)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    snprintf(buf, n, u ? "%.2f %s" : "%.0f %s", v, units[u]);
    return buf;
}

/* A point of the search axis (a load, or a pool in blocks) as a reader wants it:
 * "3.46x", "2,345 blocks", "4.58 GiB (2,345 blocks)". */
static const char *fmt_axis(char *buf, size_t n, const plan *p, double x)
{
    char g[32], b[32];
    if (p->over == PLAN_OVER_LOAD)
        snprintf(buf, n, "%gx", x);
    else if (p->over == PLAN_OVER_NUM_BLOCKS)
        snprintf(buf, n, "%s blocks", grouped(g, sizeof g, (uint64_t)x));
    else
        snprintf(buf, n, "%s (%s blocks)", fmt_bytes(b, sizeof b, (uint64_t)x * p->block_bytes),
                 grouped(g, sizeof g, (uint64_t)x));
    return buf;
}

static const char *fmt_value(char *buf, size_t n, const plan *p, const plan_probe *pr)
{
    return fmt_axis(buf, n, p, p->over == PLAN_OVER_LOAD ? pr->load : pr->num_blocks);
}

static const char *fmt_rate(char *buf, size_t n, double r)
{
    if (isnan(r))
        snprintf(buf, n, "all at once");
    else
        snprintf(buf, n, "%.4g req/s", r);
    return buf;
}

/* ---- binding SLO -------------------------------------------------------------------- */

/* The SLO with the largest value/limit at probe pr, only among violated ones if
 * violated_only; -1 if none. */
static long worst_slo(const plan *p, const plan_probe *pr, bool violated_only)
{
    long best = -1;
    double best_r = -1;
    for (size_t i = 0; i < p->slos.n; i++) {
        const kv_slo *s = &p->slos.slo[i];
        if (violated_only && kv_slo_met(s, pr->slo[i]))
            continue;
        double r = kv_slo_ratio(s, pr->slo[i]);
        if (r > best_r) {
            best_r = r;
            best = (long)i;
        }
    }
    return best;
}

typedef struct binding {
    long slo;   /* index into p->slos, -1 none */
    bool binds; /* false: only the closest SLO (bound reached) */
    const plan_probe *answer, *next;
} binding;

static binding get_binding(const plan *p)
{
    binding b = {-1, false, NULL, NULL};
    const kv_search_result *r = &p->result;
    b.answer = r->answer >= 0 ? &p->probes[r->answer] : NULL;
    b.next = r->next >= 0 ? &p->probes[r->next] : NULL;
    if (b.next) {
        b.slo = worst_slo(p, b.next, true);
        b.binds = true;
    } else if (b.answer) {
        b.slo = worst_slo(p, b.answer, false);
    }
    return b;
}

/* ---- human output ------------------------------------------------------------------- */

static void print_slos(FILE *f, const plan *p)
{
    char v[32];
    fputs("  SLOs       ", f);
    for (size_t i = 0; i < p->slos.n; i++) {
        const kv_slo *s = &p->slos.slo[i];
        fprintf(f, "%s %s <= %s%s", i ? "," : "", s->name, fmt_slo(v, sizeof v, s, s->limit),
                s->implicit ? " (implied)" : "");
    }
    fputc('\n', f);
}

static void print_answer(FILE *f, const plan *p, const binding *b)
{
    char v[96], r[32], t[32];
    const kv_search_result *res = &p->result;
    const kv_search_config *c = &p->search.cfg;
    bool load = p->over == PLAN_OVER_LOAD;
    const plan_probe *a = b->answer;
    if (a && res->status != KV_SEARCH_BOUND) {
        if (load)
            fprintf(f,
                    "  answer      highest load within SLOs%s: %gx the trace rate = %s "
                    "(--time-scale %.12g)\n",
                    res->status == KV_SEARCH_FOUND ? "" : " so far", a->load,
                    fmt_rate(r, sizeof r, a->rate), a->time_scale);
        else
            fprintf(f,
                    "  answer      smallest pool within SLOs%s: %s blocks = %s = %llu bytes of KV "
                    "per rank, at load %gx = %s\n",
                    res->status == KV_SEARCH_FOUND ? "" : " so far",
                    grouped(v, sizeof v, a->num_blocks), fmt_bytes(t, sizeof t, a->kv_budget),
                    (unsigned long long)a->kv_budget, a->load, fmt_rate(r, sizeof r, a->rate));
    } else if (a) {
        fprintf(f,
                "  answer      every %s probed meets the SLOs, %s the bound %s (%s): the "
                "answer is at least that good\n",
                load ? "load" : "pool", load ? "up to" : "down to", fmt_value(v, sizeof v, p, a),
                load ? "--max" : "--min");
    } else if (res->status == KV_SEARCH_NONE && p->whole_trace_max) {
        fprintf(f,
                "  answer      no pool within SLOs: even %s, enough to hold every request at "
                "once, violates them: at this load the SLOs are not limited by KV blocks\n",
                fmt_value(v, sizeof v, p, b->next));
    } else if (res->status == KV_SEARCH_NONE) {
        fprintf(f, "  answer      no %s within SLOs: even the bound %s violates them%s\n",
                load ? "load" : "pool", fmt_value(v, sizeof v, p, b->next),
                load ? " (--min)" : " (--max)");
    } else {
        fprintf(f, "  answer      no %s within SLOs found in %zu probes (--max-probes)\n",
                load ? "load" : "pool", p->search.n);
    }

    if (b->slo >= 0) {
        const kv_slo *s = &p->slos.slo[b->slo];
        if (b->binds && a) {
            fprintf(f, "  binding     %s (%s <= %s)", s->name,
                    fmt_slo(r, sizeof r, s, a->slo[b->slo]), fmt_slo(t, sizeof t, s, s->limit));
            fprintf(f, "; at %s: %s\n", fmt_value(v, sizeof v, p, b->next),
                    fmt_slo(r, sizeof r, s, b->next->slo[b->slo]));
        } else if (b->binds) {
            fprintf(f, "  binding     %s (%s > %s at %s)\n", s->name,
                    fmt_slo(r, sizeof r, s, b->next->slo[b->slo]),
                    fmt_slo(t, sizeof t, s, s->limit), fmt_value(v, sizeof v, p, b->next));
        } else {
            fprintf(f, "  binding     %s; closest: %s (%s <= %s)\n",
                    res->status == KV_SEARCH_BOUND
                        ? "none within the bounds"
                        : "unknown: nothing beyond the answer was probed",
                    s->name, fmt_slo(r, sizeof r, s, a->slo[b->slo]),
                    fmt_slo(t, sizeof t, s, s->limit));
        }
    }
    if (res->confirm >= 0) {
        const plan_probe *cp = &p->probes[res->confirm];
        long w = worst_slo(p, cp, true);
        fprintf(f, "  checked     %g%% %s (%s): %s", 100 * c->confirm, load ? "higher" : "smaller",
                fmt_value(v, sizeof v, p, cp), cp->meets ? "meets" : "violates");
        if (w >= 0)
            fprintf(f, " (%s %s)", p->slos.slo[w].name,
                    fmt_slo(r, sizeof r, &p->slos.slo[w], cp->slo[w]));
        fputc('\n', f);
    }
    char lo[96], hi[96];
    fprintf(f, "  search      %s after %zu probes in [%s, %s], tolerance %g%%\n",
            kv_search_status_name(res->status), p->search.n, fmt_axis(lo, sizeof lo, p, c->min),
            fmt_axis(hi, sizeof hi, p, c->max), 100 * c->tolerance);
    if (res->non_monotone)
        fprintf(f,
                "  note        not monotone: a probe %s the answer violates the SLOs; the "
                "answer is the %s probe that met, and every probe beyond it violated\n",
                load ? "below" : "above", load ? "highest" : "smallest");
}

static void sorted_order(const plan *p, size_t *idx)
{
    size_t n = p->search.n;
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = 1; i < n; i++) /* insertion sort: n ≤ max_probes */
        for (size_t j = i; j > 0 && p->probes[idx[j - 1]].value > p->probes[idx[j]].value; j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
}

static void print_table(FILE *f, const plan *p)
{
    char v[96], r[32];
    size_t n = p->search.n;
    if (n == 0)
        return;
    size_t *idx = kv_xmalloc(n * sizeof *idx);
    sorted_order(p, idx);
    const char *vname = p->over == PLAN_OVER_LOAD         ? "load"
                        : p->over == PLAN_OVER_NUM_BLOCKS ? "pool"
                                                          : "KV budget";
    int vw = p->over == PLAN_OVER_KV_BUDGET ? 28 : 16;
    fprintf(f, "\n  %-*s %-14s", vw, vname, "arrival rate");
    for (size_t i = 0; i < p->slos.n; i++)
        fprintf(f, " %12s", p->slos.slo[i].name);
    fputs("  SLOs\n", f);
    for (size_t k = 0; k < n; k++) {
        const plan_probe *pr = &p->probes[idx[k]];
        fprintf(f, "  %-*s %-14s", vw, fmt_value(v, sizeof v, p, pr),
                fmt_rate(r, sizeof r, pr->rate));
        for (size_t i = 0; i < p->slos.n; i++)
            fprintf(f, " %12s", fmt_slo(r, sizeof r, &p->slos.slo[i], pr->slo[i]));
        fprintf(f, "  %s%s\n", pr->meets ? "met" : "violated",
                (long)idx[k] == p->result.answer ? "  <- answer" : "");
    }
    free(idx);
}

void plan_print(FILE *f, const plan *p)
{
    char r[32], g[32];
    fprintf(f, "kvsim plan: %s (%s requests, %s as loaded), over %s\n", p->trace_path,
            grouped(g, sizeof g, p->n_requests), fmt_rate(r, sizeof r, p->base_rate),
            plan_over_name(p->over));
    const plan_probe *any = p->search.n ? &p->probes[0] : NULL;
    if (any) {
        const json_t *c = json_object_get(any->summary, "config");
#define S(k) json_string_value(json_object_get(c, k))
#define I(k) (long long)json_integer_value(json_object_get(c, k))
        fprintf(f, "  setup       %s on %s, TP%lld PP%lld, %s KV, block %lld tokens, ", S("model"),
                S("gpu"), I("tp"), I("pp"), S("kv_dtype"), I("block_size"));
        if (p->over == PLAN_OVER_LOAD)
            fprintf(f, "%s blocks (from %s)\n", grouped(g, sizeof g, any->num_blocks),
                    S("num_blocks_from"));
        else
            fprintf(f, "pool searched in blocks of %s (%llu bytes)\n",
                    fmt_bytes(r, sizeof r, p->block_bytes), (unsigned long long)p->block_bytes);
#undef S
#undef I
    }
    print_slos(f, p);
    binding b = get_binding(p);
    print_answer(f, p, &b);
    print_table(f, p);
}

/* ---- plan.json ---------------------------------------------------------------------- */

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *value_json(const plan *p, double v)
{
    return p->over == PLAN_OVER_LOAD ? json_real(v) : json_integer((json_int_t)v);
}

static json_t *probe_json(const plan *p, const plan_probe *pr)
{
    char key[40];
    json_t *o = json_object();
    json_object_set_new(o, "value", value_json(p, pr->value));
    json_object_set_new(o, "load", json_real(pr->load));
    json_object_set_new(o, "arrival_rate_req_s", real_or_null(pr->rate));
    json_object_set_new(o, "time_scale", json_real(pr->time_scale));
    json_object_set_new(o, "num_blocks", json_integer(pr->num_blocks));
    json_object_set_new(o, "kv_budget_bytes", json_integer((json_int_t)pr->kv_budget));
    json_object_set_new(o, "meets_slo", json_boolean(pr->meets));
    json_t *viol = json_array(), *slo = json_object();
    for (size_t i = 0; i < p->slos.n; i++) {
        const kv_slo *s = &p->slos.slo[i];
        kv_slo_key(s, key, sizeof key);
        json_object_set_new(slo, key, real_or_null(pr->slo[i]));
        if (!kv_slo_met(s, pr->slo[i]))
            json_array_append_new(viol, json_string(s->name));
    }
    json_object_set_new(o, "violated", viol);
    json_object_set_new(o, "slo", slo);
    json_object_set_new(o, "ttft_p99_s", real_or_null(pr->ttft_p99));
    json_object_set_new(o, "tpot_p99_s", real_or_null(pr->tpot_p99));
    json_object_set_new(o, "preemption_rate", real_or_null(pr->preemption_rate));
    json_object_set_new(o, "reject_rate", real_or_null(pr->reject_rate));
    json_object_set_new(o, "preemptions", json_integer((json_int_t)pr->preemptions));
    json_object_set_new(o, "finished", json_integer((json_int_t)pr->finished));
    json_object_set_new(o, "rejected", json_integer((json_int_t)pr->rejected));
    json_object_set_new(o, "unfinished", json_integer((json_int_t)pr->unfinished));
    return o;
}

/* A search bound in value units (bytes for kv_budget). */
static json_t *bound_json(const plan *p, double blocks_or_load)
{
    if (p->over == PLAN_OVER_KV_BUDGET)
        return json_integer((json_int_t)((uint64_t)blocks_or_load * p->block_bytes));
    return value_json(p, blocks_or_load);
}

json_t *plan_json(const plan *p)
{
    char key[40];
    const kv_search_result *r = &p->result;
    const kv_search_config *c = &p->search.cfg;
    binding b = get_binding(p);
    json_t *j = json_object();
    json_object_set_new(j, "trace", json_string(p->trace_path));
    json_object_set_new(j, "requests", json_integer((json_int_t)p->n_requests));
    json_object_set_new(j, "over", json_string(plan_over_name(p->over)));
    json_t *slo = json_object(), *implied = json_array();
    for (size_t i = 0; i < p->slos.n; i++) {
        kv_slo_key(&p->slos.slo[i], key, sizeof key);
        json_object_set_new(slo, key, json_real(p->slos.slo[i].limit));
        if (p->slos.slo[i].implicit)
            json_array_append_new(implied, json_string(p->slos.slo[i].name));
    }
    json_object_set_new(j, "slo", slo);
    json_object_set_new(j, "slo_implied", implied);
    json_object_set_new(j, "status", json_string(kv_search_status_name(r->status)));
    const plan_probe *a = b.answer;
    json_object_set_new(j, "answer", a ? value_json(p, a->value) : json_null());
    json_object_set_new(j, "answer_load", a ? json_real(a->load) : json_null());
    json_object_set_new(j, "answer_arrival_rate_req_s", a ? real_or_null(a->rate) : json_null());
    json_object_set_new(j, "answer_time_scale", a ? json_real(a->time_scale) : json_null());
    json_object_set_new(j, "answer_num_blocks", a ? json_integer(a->num_blocks) : json_null());
    json_object_set_new(j, "answer_kv_budget_bytes",
                        a ? json_integer((json_int_t)a->kv_budget) : json_null());
    const kv_slo *bs = b.slo >= 0 ? &p->slos.slo[b.slo] : NULL;
    json_object_set_new(j, "binding", bs && b.binds ? json_string(bs->name) : json_null());
    json_object_set_new(j, "closest", bs && !b.binds ? json_string(bs->name) : json_null());
    json_object_set_new(j, "binding_limit", bs ? json_real(bs->limit) : json_null());
    json_object_set_new(j, "binding_at_answer",
                        bs && a ? real_or_null(a->slo[b.slo]) : json_null());
    json_object_set_new(j, "binding_at_next",
                        bs && b.next ? real_or_null(b.next->slo[b.slo]) : json_null());
    json_object_set_new(j, "next", b.next ? value_json(p, b.next->value) : json_null());
    json_object_set_new(j, "confirm",
                        r->confirm >= 0 ? value_json(p, p->probes[r->confirm].value) : json_null());
    json_object_set_new(j, "non_monotone", json_boolean(r->non_monotone));
    json_t *base = json_object();
    json_object_set_new(base, "time_scale", json_real(p->base_time_scale));
    json_object_set_new(base, "arrival_rate_req_s", real_or_null(p->base_rate));
    json_object_set_new(base, "load", json_real(p->over == PLAN_OVER_LOAD ? 1.0 : p->fixed_load));
    if (p->over != PLAN_OVER_LOAD)
        json_object_set_new(base, "block_bytes", json_integer((json_int_t)p->block_bytes));
    json_object_set_new(j, "base", base);
    json_t *s = json_object();
    json_object_set_new(s, "min", bound_json(p, c->min));
    json_object_set_new(s, "max", bound_json(p, c->max));
    json_object_set_new(s, "start", bound_json(p, c->start));
    if (p->over != PLAN_OVER_LOAD)
        json_object_set_new(s, "max_holds_whole_trace", json_boolean(p->whole_trace_max));
    json_object_set_new(s, "factor", json_real(c->factor));
    json_object_set_new(s, "tolerance", json_real(c->tolerance));
    json_object_set_new(s, "confirm", json_real(c->confirm));
    json_object_set_new(s, "max_probes", json_integer(c->max_probes));
    json_object_set_new(s, "probes", json_integer((json_int_t)p->search.n));
    json_object_set_new(j, "search", s);
    json_object_set_new(j, "at_answer", a ? probe_json(p, a) : json_null());
    json_object_set_new(j, "at_next", b.next ? probe_json(p, b.next) : json_null());
    const plan_probe *cfg_from = a ? a : b.next;
    json_t *cfg = cfg_from ? json_object_get(cfg_from->summary, "config") : NULL;
    json_object_set(j, "config", cfg ? cfg : json_null());
    json_t *probes = json_array();
    size_t *idx = kv_xmalloc((p->search.n + 1) * sizeof *idx);
    sorted_order(p, idx);
    for (size_t k = 0; k < p->search.n; k++)
        json_array_append_new(probes, probe_json(p, &p->probes[idx[k]]));
    free(idx);
    json_object_set_new(j, "probes", probes);
    return j;
}

/* ---- plan.csv and the files --------------------------------------------------------- */

static bool is_fixed_column(const kv_slo *s)
{
    return strcmp(s->name, "ttft_p99") == 0 || strcmp(s->name, "tpot_p99") == 0 ||
           strcmp(s->name, "preemption_rate") == 0 || strcmp(s->name, "reject_rate") == 0;
}

static void csv_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, ",%.12g", v);
    else
        fputc(',', f);
}

static void write_csv(FILE *f, const plan *p)
{
    char key[40];
    fputs("load,arrival_rate_req_s,ttft_p99_s,tpot_p99_s,preemption_rate,meets_slo,value,"
          "time_scale,num_blocks,kv_budget_bytes,reject_rate,preemptions,finished,rejected,"
          "unfinished",
          f);
    for (size_t i = 0; i < p->slos.n; i++)
        if (!is_fixed_column(&p->slos.slo[i])) {
            kv_slo_key(&p->slos.slo[i], key, sizeof key);
            fprintf(f, ",%s", key);
        }
    fputc('\n', f);
    size_t *idx = kv_xmalloc((p->search.n + 1) * sizeof *idx);
    sorted_order(p, idx);
    for (size_t k = 0; k < p->search.n; k++) {
        const plan_probe *pr = &p->probes[idx[k]];
        fprintf(f, "%.12g", pr->load);
        csv_num(f, pr->rate);
        csv_num(f, pr->ttft_p99);
        csv_num(f, pr->tpot_p99);
        csv_num(f, pr->preemption_rate);
        fprintf(f, ",%d", pr->meets ? 1 : 0);
        if (p->over == PLAN_OVER_LOAD)
            fprintf(f, ",%.12g", pr->value);
        else
            fprintf(f, ",%.0f", pr->value);
        fprintf(f, ",%.12g,%u,%llu", pr->time_scale, pr->num_blocks,
                (unsigned long long)pr->kv_budget);
        csv_num(f, pr->reject_rate);
        fprintf(f, ",%llu,%llu,%llu,%llu", (unsigned long long)pr->preemptions,
                (unsigned long long)pr->finished, (unsigned long long)pr->rejected,
                (unsigned long long)pr->unfinished);
        for (size_t i = 0; i < p->slos.n; i++)
            if (!is_fixed_column(&p->slos.slo[i]))
                csv_num(f, pr->slo[i]);
        fputc('\n', f);
    }
    free(idx);
}

static char *join(const char *dir, const char *name, const char *suffix)
{
    size_t n = strlen(dir) + strlen(name) + strlen(suffix) + 2;
    char *s = kv_xmalloc(n);
    snprintf(s, n, "%s/%s%s", dir, name, suffix);
    return s;
}

enum { F_CSV, F_JSON, F_COUNT };

int plan_write_files(const plan *p, const char *dir, kv_diag *diag)
{
    static const char *const names[F_COUNT] = {"plan.csv", "plan.json"};
    int rc = kv_mkdir_p(dir, diag);
    char *tmp[F_COUNT] = {NULL, NULL};
    for (int i = 0; rc == 0 && i < F_COUNT; i++) {
        tmp[i] = join(dir, names[i], ".tmp");
        FILE *f = fopen(tmp[i], "w");
        if (!f) {
            rc = kv_diag_set(diag, -KV_EIO, "cannot write '%s': %s", tmp[i], strerror(errno));
            free(tmp[i]);
            tmp[i] = NULL;
            break;
        }
        errno = 0;
        if (i == F_CSV) {
            write_csv(f, p);
        } else {
            json_t *j = plan_json(p);
            if (json_dumpf(j, f, KV_JSON_FLAGS))
                errno = errno ? errno : EIO;
            fputc('\n', f);
            json_decref(j);
        }
        bool bad = fflush(f) != 0 || ferror(f);
        bad |= fclose(f) != 0;
        if (bad)
            rc = kv_diag_set(diag, -KV_EIO, "cannot write '%s': %s", tmp[i],
                             errno ? strerror(errno) : "write error");
    }
    for (int i = 0; rc == 0 && i < F_COUNT; i++) {
        char *final = join(dir, names[i], "");
        if (rename(tmp[i], final) != 0)
            rc = kv_diag_set(diag, -KV_EIO, "cannot rename '%s': %s", tmp[i], strerror(errno));
        else {
            free(tmp[i]);
            tmp[i] = NULL;
        }
        free(final);
    }
    for (int i = 0; i < F_COUNT; i++) {
        if (tmp[i])
            unlink(tmp[i]);
        free(tmp[i]);
    }
    return rc;
}
