/* plot_vars: what the figure builders share (plot_internal.h): gnuplot variables, the
 * figure list and its data files, the one title wording of every figure, JSON helpers,
 * and the plan figure's variables.
 *
 * Titles.  Every figure names what ran on what: model, GPU, TP/PP, KV dtype and block
 * size (kv__setup_title), from summary.json for a run, from sweep.csv's columns or each
 * configuration's summary.json for a sweep (a setup option that varies goes to the
 * legend instead, plot_sweep.c), from plan.json's config echo for a plan.
 *
 *   plan   the SLO thresholds (plan.json "slo"), the answer (the highest load whose row
 *          has meets_slo true) and its arrival rate; the x axis is the arrival rate
 *          (requests/s, plan.csv arrival_rate_req_s) with the load multiple as a second
 *          axis when every row has a rate; the latency axes' ranges from the data and
 *          the thresholds.  A replica plan (plan.json "over" replicas) has replicas on x
 *          and plan.json's fewest replicas as the answer.
 *
 * Out of scope: a run's figures (plot_run.c), a sweep's (plot_sweep.c).
 */
#include <assert.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvsim/afile.h"
#include "kvsim/mem.h"
#include "kvsim/path.h"
#include "kvsim/report.h"
#include "plot_internal.h"

/* ---- gnuplot variables --------------------------------------------------------------- */

void kv__gpvars_num(kv_buf *v, const char *name, double x)
{
    /* %.17g may print "1e+20": valid gnuplot.  Integers stay integers ("28180"). */
    if (isfinite(x))
        kv_buf_printf(v, "%s = %.17g; ", name, x);
}

void kv__gpvars_str(kv_buf *v, const char *name, const char *text)
{
    kv_buf_puts(v, name);
    kv_buf_puts(v, " = '");
    for (const char *p = text; *p; p++) {
        if (*p == '\'')
            kv_buf_puts(v, "''");
        else
            kv_buf_putc(v, (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p);
    }
    kv_buf_puts(v, "'; ");
}

void kv__gpvars_title(kv_buf *v, const char *title, size_t split)
{
    /* Longer than a 1200-pixel line at 14 pt holds (bytes; "·" is two): two lines. */
    enum { ONE_LINE = 110 };
    static const char sep[] = " · ";
    size_t len = strlen(title);
    if (len <= ONE_LINE || split == 0 || split >= len || strncmp(title + split, sep, 4) != 0) {
        kv__gpvars_str(v, "title_info", title);
        return;
    }
    char *first = kv_xmalloc(split + 1);
    memcpy(first, title, split);
    first[split] = '\0';
    kv__gpvars_str(v, "title_info", first);
    kv__gpvars_str(v, "title_info2", title + split + strlen(sep));
    free(first);
}

kv__fig *kv__figlist_add(kv__figlist *l, const char *name)
{
    assert(l->n < KV_PLOT_MAX_FIGURES); /* the kinds add 3 + 3 + 1 figures at most */
    kv__fig *f = &l->f[l->n++];
    f->name = name;
    memset(&f->vars, 0, sizeof f->vars);
    return f;
}

void kv__figlist_release(kv__figlist *l)
{
    for (int i = 0; i < l->n; i++)
        kv_buf_release(&l->f[i].vars);
    l->n = 0;
    for (int i = 0; i < l->n_data; i++) {
        unlink(l->data[i]);
        kv_afile_untrack(l->data[i]);
        free(l->data[i]);
    }
    l->n_data = 0;
}

void kv__figlist_add_data(kv__figlist *l, char *path)
{
    assert(l->n_data < KV__MAX_DATA); /* a run writes four */
    l->data[l->n_data++] = path;
    kv_afile_track(path);
}

char *kv__plot_data_path(const char *dir, const char *name)
{
    char base[96];
    snprintf(base, sizeof base, "%s.dat.tmp-%ld", name, (long)getpid());
    return kv_path_join(dir, base);
}

/* ---- small helpers ------------------------------------------------------------------- */

/* Append sep (when buf is not empty) and text to a fixed buffer, truncating. */
void kv__add_part(char *buf, size_t n, const char *sep, const char *text)
{
    size_t len = strlen(buf);
    snprintf(buf + len, n - len, "%s%s", len ? sep : "", text);
}

/* "MODEL on GPU · TPt PPp · DTYPE KV · block B tokens" */
void kv__setup_title(const kv__setup_text *t, char *out, size_t n)
{
    char part[160];
    out[0] = '\0';
    if (t->model && t->gpu)
        snprintf(part, sizeof part, "%s on %s", t->model, t->gpu);
    else
        snprintf(part, sizeof part, "%s", t->model ? t->model : t->gpu ? t->gpu : "");
    if (*part)
        kv__add_part(out, n, " · ", part);
    if (isfinite(t->tp) || isfinite(t->pp)) {
        char tp[24] = "", pp[24] = "";
        if (isfinite(t->tp))
            snprintf(tp, sizeof tp, "TP%.0f", t->tp);
        if (isfinite(t->pp))
            snprintf(pp, sizeof pp, "%sPP%.0f", *tp ? " " : "", t->pp);
        snprintf(part, sizeof part, "%s%s", tp, pp);
        kv__add_part(out, n, " · ", part);
    }
    if (t->kv_dtype) {
        snprintf(part, sizeof part, "%s KV", t->kv_dtype);
        kv__add_part(out, n, " · ", part);
    }
    if (isfinite(t->block_size)) {
        snprintf(part, sizeof part, "block %.0f tokens", t->block_size);
        kv__add_part(out, n, " · ", part);
    }
}

/* ---- JSON ---------------------------------------------------------------------------- */

int kv__load_json(const char *dir, const char *name, json_t **out, kv_diag *diag)
{
    char *path = kv_path_join(dir, name);
    json_error_t e;
    *out = json_load_file(path, 0, &e);
    int rc = 0;
    if (!*out)
        rc = kv_diag_set(diag, -KV_EPARSE, "%s:%d:%d: %s", path, e.line, e.column, e.text);
    else if (!json_is_object(*out)) {
        rc = kv_diag_set(diag, -KV_EPARSE, "%s: not a JSON object", path);
        json_decref(*out);
        *out = NULL;
    }
    free(path);
    return rc;
}

/* root.a.b.c as a number, NAN when absent or not a number. */
double kv__jnum(const json_t *root, const char *path)
{
    const json_t *v = kv_json_at(root, path);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *kv__jstr(const json_t *obj, const char *key)
{
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* ---- a plan -------------------------------------------------------------------------- */

static int parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"true", "1", "yes"}, *const no[] = {"false", "0", "no"};
    for (size_t i = 0; i < 3; i++) {
        if (strcmp(s, yes[i]) == 0)
            return *out = true, 0;
        if (strcmp(s, no[i]) == 0)
            return *out = false, 0;
    }
    return -1;
}

/* What plan.csv says: the highest load meeting the SLOs and its rate, and whether every
 * row has an arrival rate (then the x axis is requests/s; base: rate per unit of load). */
typedef struct plan_rows {
    double best, best_rate, base_rate;
    bool all_rates;
} plan_rows;

static int scan_plan(const kv__table *t, plan_rows *pr, kv_diag *diag)
{
    pr->best = pr->best_rate = pr->base_rate = NAN;
    pr->all_rates = kv__col_of(t, "arrival_rate_req_s") >= 0;
    int c_load = kv__col_of(t, "load"), c_ok = kv__col_of(t, "meets_slo");
    int c_rate = kv__col_of(t, "arrival_rate_req_s");
    for (size_t r = 0; r < t->n_rows; r++) {
        double load, rate = NAN;
        bool ok;
        if (!kv__parse_num(kv__cell(t, r, c_load), &load))
            return kv_diag_set(diag, -KV_EPARSE, "%s: load '%s' is not a number", t->path,
                               kv__cell(t, r, c_load));
        if (parse_bool(kv__cell(t, r, c_ok), &ok) != 0)
            return kv_diag_set(diag, -KV_EPARSE, "%s: meets_slo '%s' is not true or false", t->path,
                               kv__cell(t, r, c_ok));
        bool has_rate = c_rate >= 0 && kv__parse_num(kv__cell(t, r, c_rate), &rate) && rate > 0;
        pr->all_rates &= has_rate && load > 0;
        if (has_rate && load > 0)
            pr->base_rate = rate / load;
        if (ok && !(load <= pr->best)) {
            pr->best = load;
            pr->best_rate = rate;
        }
    }
    return 0;
}

/* The title: trace · setup (plan.json's config echo) · count. */
static void plan_title(const json_t *plan, size_t n_rows, const char *over, char *title, size_t n)
{
    const json_t *cfg = plan ? json_object_get(plan, "config") : NULL;
    kv__setup_text st = {kv__jstr(cfg, "model"), kv__jstr(cfg, "gpu"), kv__jstr(cfg, "kv_dtype"),
                         kv__jnum(cfg, "tp"),    kv__jnum(cfg, "pp"),  kv__jnum(cfg, "block_size")};
    char setup[256], part[64];
    kv__setup_title(&st, setup, sizeof setup);
    title[0] = '\0';
    const char *trace = plan ? kv__jstr(plan, "trace") : NULL;
    if (trace)
        kv__add_part(title, n, " · ", kv_path_base(trace));
    if (*setup)
        kv__add_part(title, n, " · ", setup);
    snprintf(part, sizeof part, "%zu %s", n_rows,
             strcmp(over, "replicas") == 0     ? "replica counts"
             : strcmp(over, "num_blocks") == 0 ? "pool sizes"
             : strcmp(over, "kv_budget") == 0  ? "KV budgets"
                                               : "loads");
    kv__add_part(title, n, " · ", part);
}

/* The plan figure's variables into f. */
static void plan_vars(kv__fig *f, const json_t *plan, const kv__table *t, const plan_rows *pr)
{
    const char *over = plan && kv__jstr(plan, "over") ? kv__jstr(plan, "over") : "load";
    const json_t *slo = plan ? json_object_get(plan, "slo") : NULL;
    if (strcmp(over, "replicas") == 0) { /* x: replicas; the answer: the fewest */
        kv__gpvars_str(&f->vars, "xcol", "replicas");
        kv__gpvars_num(&f->vars, "answer_replicas", kv__jnum(plan, "answer_replicas"));
        kv__gpvars_num(&f->vars, "answer_gpus", kv__jnum(plan, "answer_gpus"));
    } else if (strcmp(over, "num_blocks") == 0 || strcmp(over, "kv_budget") == 0) {
        bool blocks = strcmp(over, "num_blocks") == 0;
        kv__gpvars_str(&f->vars, "xcol", blocks ? "num_blocks" : "kv_budget_bytes");
        kv__gpvars_num(&f->vars, "answer_pool",
                       kv__jnum(plan, blocks ? "answer_num_blocks" : "answer_kv_budget_bytes"));
    } else {
        kv__gpvars_num(&f->vars, "answer_load", pr->best);
        kv__gpvars_num(&f->vars, "answer_rate", pr->best_rate);
        if (pr->all_rates && t->n_rows > 0) { /* x: requests/s, the load on top */
            kv__gpvars_str(&f->vars, "xcol", "arrival_rate_req_s");
            kv__gpvars_num(&f->vars, "base_rate", pr->base_rate);
        }
    }
    kv__gpvars_num(&f->vars, "slo_ttft_p99_s", kv__jnum(slo, "ttft_p99_s"));
    kv__gpvars_num(&f->vars, "slo_tpot_p99_s", kv__jnum(slo, "tpot_p99_s"));
    kv__gpvars_num(&f->vars, "slo_preemption_rate", kv__jnum(slo, "preemption_rate"));
    char title[512];
    plan_title(plan, t->n_rows, over, title, sizeof title);
    kv__gpvars_title(&f->vars, title, 0); /* three lines already */
}

int kv__plot_plan_figs(const char *dir, kv__figlist *out, char *note, size_t note_n, kv_diag *diag)
{
    kv__table t;
    int rc = kv__table_load(&t, dir, "plan.csv", diag);
    static const char *const need[] = {"load",      "ttft_p99_s", "tpot_p99_s", "preemption_rate",
                                       "meets_slo", NULL};
    if (rc == 0)
        rc = kv__require_cols(&t, need, diag);
    if (rc == 0 && t.n_rows == 0) {
        snprintf(note, note_n, "%s has no rows: no plan chart", t.path);
        kv__table_release(&t);
        return 0;
    }
    plan_rows pr;
    if (rc == 0)
        rc = scan_plan(&t, &pr, diag);
    json_t *plan = NULL;
    char *json_path = kv_path_join(dir, "plan.json");
    FILE *probe = fopen(json_path, "rb");
    free(json_path);
    if (probe) {
        fclose(probe);
        if (rc == 0)
            rc = kv__load_json(dir, "plan.json", &plan, diag);
    }
    const char *over = plan ? kv__jstr(plan, "over") : NULL;
    static const char *const over_col[][2] = {
        {"replicas", "replicas"}, {"num_blocks", "num_blocks"}, {"kv_budget", "kv_budget_bytes"}};
    for (size_t i = 0; rc == 0 && over && i < 3; i++)
        if (strcmp(over, over_col[i][0]) == 0 && kv__col_of(&t, over_col[i][1]) < 0)
            rc = kv_diag_set(diag, -KV_EPARSE, "%s: a plan over %s without a '%s' column", t.path,
                             over, over_col[i][1]);
    if (rc == 0)
        plan_vars(kv__figlist_add(out, "plan_curve"), plan, &t, &pr);
    json_decref(plan);
    kv__table_release(&t);
    return rc;
}
