/* plot_vars: read what a directory holds into the variables each gnuplot script is given.
 *
 * gnuplot reads the CSV files itself; what it cannot do is read JSON, or decide how a
 * sweep's rows group into lines.  So this file passes:
 *   run    from summary.json: the title (trace, model, GPU, block size, pool, watermark),
 *          usable blocks N−1 and watermark blocks W, totals, the P50/P95/P99 latencies,
 *          the simulated time (for the bin width); from timeseries.csv its row count, so
 *          long runs are thinned to about THIN_TARGET groups of rows, each drawn as its
 *          first, lowest, highest and last value (M4; plots/common.gp).
 *   sweep  per chart (x = block_size or watermark): which line group each row belongs to
 *          (rowgroup), the groups' legend text, the swept values for the tics, and what
 *          every configuration has in common for the title.  A group is the set of rows
 *          agreeing on every other knob column; num_blocks and kv_budget_bytes are left
 *          out of the key when one of them is derived from the block size (a fixed budget
 *          gives fewer, bigger blocks; fixed blocks give a bigger budget), found by trying
 *          the key without them until some group holds two x values.
 *   plan   the SLO thresholds (plan.json "slo"), the answer (the highest load whose row
 *          has meets_slo true) and its arrival rate; for a replica plan (plan.json "over"
 *          replicas) the x column is replicas and the answer plan.json's fewest replicas.
 *
 * sweep.csv and plan.csv are read by plot_table.c.  Group finding is O(rows² · knobs),
 * fine for a row per configuration.
 */
#include <assert.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/path.h"
#include "kvsim/report.h"
#include "kvsim/summary.h"
#include "kvsim/text.h"
#include "plot_internal.h"

enum { THIN_TARGET = 1000 };

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
}

/* ---- small helpers ------------------------------------------------------------------- */

/* Append "sep" then printf text to a fixed buffer, truncating. */
static void add_part(char *buf, size_t n, const char *sep, const char *text)
{
    size_t len = strlen(buf);
    snprintf(buf + len, n - len, "%s%s", len ? sep : "", text);
}

/* ---- JSON ---------------------------------------------------------------------------- */

static int load_json(const char *dir, const char *name, json_t **out, kv_diag *diag)
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
static double jnum(const json_t *root, const char *path)
{
    const json_t *v = kv_json_at(root, path);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *jstr(const json_t *obj, const char *key)
{
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* ---- a run --------------------------------------------------------------------------- */

/* Data rows of a CSV with a header: newlines, less the header's, plus an unterminated
 * last line. */
static int count_rows(const char *path, double *rows, kv_diag *diag)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return kv_diag_set(diag, -KV_EIO, "cannot open '%s'", path);
    char buf[65536];
    size_t n;
    uint64_t lines = 0;
    char last = '\n';
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        for (size_t i = 0; i < n; i++)
            lines += buf[i] == '\n';
        last = buf[n - 1];
    }
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return kv_diag_set(diag, -KV_EIO, "cannot read '%s'", path);
    if (last != '\n')
        lines++;
    *rows = lines > 0 ? (double)(lines - 1) : 0;
    return 0;
}

/* summary.json of a run, through the summary schema (a missing field is an error). */
static int load_summary(const char *dir, kv_summary *sum, kv_diag *diag)
{
    json_t *j;
    int rc = load_json(dir, "summary.json", &j, diag);
    if (rc != 0)
        return rc;
    char *path = kv_path_join(dir, "summary.json");
    rc = kv_summary_from_json(j, path, sum, diag);
    free(path);
    json_decref(j);
    return rc;
}

/* "trace · model on GPU TPn · block B tokens · N blocks · watermark W" */
static void run_title(const kv_summary *s, char *title, size_t n)
{
    const kv_summary_config *c = &s->config;
    char part[160], num[32];
    title[0] = '\0';
    add_part(title, n, " · ", kv_path_base(c->trace));
    snprintf(part, sizeof part, "%s on %s", c->model, c->gpu);
    if (c->tp > 1 || c->pp > 1) {
        size_t l = strlen(part);
        snprintf(part + l, sizeof part - l, " TP%llu PP%llu", (unsigned long long)c->tp,
                 (unsigned long long)c->pp);
    }
    add_part(title, n, " · ", part);
    snprintf(part, sizeof part, "block %llu tokens", (unsigned long long)c->block_size);
    add_part(title, n, " · ", part);
    kv_grouped(num, sizeof num, (double)s->config.num_blocks);
    if (s->has_cluster)
        snprintf(part, sizeof part, "%llu replicas of %s blocks", (unsigned long long)s->cluster.replicas,
                 num);
    else
        snprintf(part, sizeof part, "%s blocks", num);
    add_part(title, n, " · ", part);
    snprintf(part, sizeof part, "watermark %g", c->watermark);
    add_part(title, n, " · ", part);
}

int kv__plot_run_figs(const char *dir, kv__figlist *out, kv_diag *diag)
{
    kv_summary s;
    int rc = load_summary(dir, &s, diag);
    if (rc != 0)
        return rc;
    double rows = 0;
    char *ts = kv_path_join(dir, "timeseries.csv");
    rc = count_rows(ts, &rows, diag);
    free(ts);
    if (rc != 0) {
        kv_summary_release(&s);
        return rc;
    }
    char title[512], wm[32];
    run_title(&s, title, sizeof title);
    snprintf(wm, sizeof wm, "%g", s.config.watermark);
    double every = rows > THIN_TARGET ? ceil(rows / THIN_TARGET) : 1;
    kv__fig *f;
    if (s.has_cluster) { /* a cluster: per-replica figures instead of blocks and pressure */
        rc = kv__plot_cluster_figs(dir, &s, title, rows, out, diag);
        goto latency;
    }

    f = kv__figlist_add(out, "blocks");
    kv__gpvars_str(&f->vars, "title_info", title);
    kv__gpvars_num(&f->vars, "nrows", rows);
    kv__gpvars_num(&f->vars, "every_n", every);
    kv__gpvars_num(&f->vars, "usable", (double)s.blocks.usable);
    kv__gpvars_num(&f->vars, "wm_blocks", (double)s.watermark.blocks);
    kv__gpvars_str(&f->vars, "wm_label", wm);

    f = kv__figlist_add(out, "pressure");
    kv__gpvars_str(&f->vars, "title_info", title);
    kv__gpvars_num(&f->vars, "nrows", rows);
    kv__gpvars_num(&f->vars, "every_n", every);
    kv__gpvars_num(&f->vars, "t_end", s.sim_time_s > 0 ? s.sim_time_s : NAN);
    kv__gpvars_num(&f->vars, "n_preempt", (double)s.preemptions);
    kv__gpvars_num(&f->vars, "n_defer", (double)s.watermark.deferrals);
    kv__gpvars_str(&f->vars, "wm_label", wm);

latency:
    f = kv__figlist_add(out, "latency_cdf");
    kv__gpvars_str(&f->vars, "title_info", title);
    if (s.has_cluster) /* requests.csv's replica and predicted_hit_tokens columns */
        kv__gpvars_num(&f->vars, "col_shift", 2);
    kv__gpvars_num(&f->vars, "n_finished", (double)s.requests.finished);
    kv__gpvars_num(&f->vars, "n_total", (double)s.requests.total);
    static const char *const lat[] = {"ttft", "tpot"}, *const pct[] = {"p50", "p95", "p99"};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            char path[64], var[32];
            snprintf(path, sizeof path, "latency_s.%s.%s", lat[i], pct[j]);
            snprintf(var, sizeof var, "%s_%s", lat[i], pct[j]);
            double x = kv_summary_number(&s, kv_summary_field(path));
            kv__gpvars_num(&f->vars, var, x > 0 ? x : NAN);
        }
    kv_summary_release(&s);
    return rc;
}

/* ---- a sweep ------------------------------------------------------------------------- */

/* The knob columns of sweep.csv, and how a value reads in a legend or title. */
typedef struct knob {
    const char *col;
    const char *label;
} knob;

static const knob knobs[] = {
    {"block_size", "block"},    {"num_blocks", "blocks"},     {"kv_budget_bytes", "KV"},
    {"watermark", "watermark"}, {"free_order", "free-order"}, {"max_seqs", "max-seqs"},
    {"preempt", "preempt"},     {"replicas", "replicas"},     {"router", "router"},
};
enum { KNOB_ROUTER = 8 };
enum { N_KNOBS = sizeof knobs / sizeof knobs[0] };

static void knob_text(const knob *k, const char *value, char *out, size_t n)
{
    double x;
    char num[32];
    if (strcmp(k->col, "num_blocks") == 0 && kv__parse_num(value, &x)) {
        kv_grouped(num, sizeof num, x);
        snprintf(out, n, "%s blocks", num);
    } else if (strcmp(k->col, "kv_budget_bytes") == 0 && kv__parse_num(value, &x)) {
        snprintf(out, n, "KV %.4g GiB", x / (1024.0 * 1024.0 * 1024.0));
    } else {
        snprintf(out, n, "%s %s", k->label, value);
    }
}

/* Group rows by the knob columns in key[] (n_key of them): group[r] for each row,
 * representative row rep[g] of each group; returns the group count. */
static size_t group_rows(const kv__table *t, const int *key, size_t n_key, size_t *group,
                         size_t *rep)
{
    size_t n_groups = 0;
    for (size_t r = 0; r < t->n_rows; r++) {
        size_t g = 0;
        for (; g < n_groups; g++) {
            size_t k = 0;
            while (k < n_key && kv__same_value(kv__cell(t, rep[g], key[k]), kv__cell(t, r, key[k])))
                k++;
            if (k == n_key)
                break;
        }
        if (g == n_groups)
            rep[n_groups++] = r;
        group[r] = g;
    }
    return n_groups;
}

/* Most distinct x values in any one group. */
static size_t max_x_per_group(const kv__table *t, int xcol, const size_t *group, size_t n_groups)
{
    size_t best = 0;
    for (size_t g = 0; g < n_groups; g++) {
        size_t n = 0;
        for (size_t r = 0; r < t->n_rows; r++) {
            if (group[r] != g)
                continue;
            size_t q = 0;
            while (q < r &&
                   !(group[q] == g && kv__same_value(kv__cell(t, q, xcol), kv__cell(t, r, xcol))))
                q++;
            n += q == r;
        }
        best = n > best ? n : best;
    }
    return best;
}

/* Whether column c is a function of column by (equal by-values, equal c-values). */
static bool follows(const kv__table *t, int c, int by)
{
    for (size_t r = 0; r < t->n_rows; r++)
        for (size_t q = 0; q < r; q++)
            if (kv__same_value(kv__cell(t, q, by), kv__cell(t, r, by)) &&
                !kv__same_value(kv__cell(t, q, c), kv__cell(t, r, c)))
                return false;
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One chart against knob x: variables into fig.  0 or -KV_EPARSE (x not numeric). */
static int sweep_chart(const kv__table *t, int x, kv__fig *fig, kv_diag *diag)
{
    int xcol = kv__col_of(t, knobs[x].col);
    double *xs = kv_xmalloc(t->n_rows * sizeof *xs);
    for (size_t r = 0; r < t->n_rows; r++)
        if (!kv__parse_num(kv__cell(t, r, xcol), &xs[r])) {
            free(xs);
            return kv_diag_set(diag, -KV_EPARSE, "%s: %s '%s' is not a number", t->path,
                               knobs[x].col, kv__cell(t, r, xcol));
        }

    /* The key: every other knob column present; then without the derived capacity
     * columns until some group holds two x values. */
    size_t *group = kv_xmalloc(t->n_rows * sizeof *group);
    size_t *rep = kv_xmalloc(t->n_rows * sizeof *rep);
    int key[N_KNOBS];
    size_t n_key = 0, n_groups = 0;
    bool in_key[N_KNOBS] = {false};
    static const unsigned drops[] = {0, 1u << 1, 1u << 2, (1u << 1) | (1u << 2)};
    for (size_t d = 0; d < sizeof drops / sizeof drops[0]; d++) {
        n_key = 0;
        for (int k = 0; k < N_KNOBS; k++) {
            in_key[k] = k != x && !(drops[d] & (1u << k)) && kv__col_of(t, knobs[k].col) >= 0;
            if (in_key[k])
                key[n_key++] = kv__col_of(t, knobs[k].col);
        }
        n_groups = group_rows(t, key, n_key, group, rep);
        if (max_x_per_group(t, xcol, group, n_groups) >= 2)
            break;
    }

    /* Legend per group: the key columns that differ between groups, except a capacity
     * column that only follows the block size ("block 16, 8,192 blocks" says nothing
     * "block 16" does not, under a fixed budget). */
    char text[160], var[32];
    int c_bs = kv__col_of(t, knobs[0].col);
    for (size_t g = 0; n_groups > 1 && g < n_groups; g++) {
        char legend[256] = "";
        for (int k = 0; k < N_KNOBS; k++) {
            int c = kv__col_of(t, knobs[k].col);
            bool varies = false;
            for (size_t h = 0; in_key[k] && h < n_groups && !varies; h++)
                varies = !kv__same_value(kv__cell(t, rep[h], c), kv__cell(t, rep[0], c));
            if (varies && (k == 1 || k == 2) && in_key[0] && follows(t, c, c_bs))
                varies = false;
            if (varies) {
                knob_text(&knobs[k], kv__cell(t, rep[g], c), text, sizeof text);
                add_part(legend, sizeof legend, ", ", text);
            }
        }
        snprintf(var, sizeof var, "gtitle%zu", g);
        kv__gpvars_str(&fig->vars, var, legend);
    }
    kv__gpvars_num(&fig->vars, "ngroups", (double)n_groups);

    /* Title: the count and every knob (but x) that is the same in all rows. */
    char title[512];
    snprintf(title, sizeof title, "%zu configurations", t->n_rows);
    for (int k = 0; k < N_KNOBS; k++) {
        int c = kv__col_of(t, knobs[k].col);
        if (k != x && c >= 0 && kv__n_distinct(t, c) == 1) {
            knob_text(&knobs[k], kv__cell(t, 0, c), text, sizeof text);
            add_part(title, sizeof title, " · ", text);
        }
    }
    kv__gpvars_str(&fig->vars, "title_info", title);

    kv_buf rowgroup = {0};
    for (size_t r = 0; r < t->n_rows; r++) {
        snprintf(text, sizeof text, r ? " %zu" : "%zu", group[r]);
        kv_buf_puts(&rowgroup, text);
    }
    kv__gpvars_str(&fig->vars, "rowgroup", rowgroup.s ? rowgroup.s : "");
    kv_buf_release(&rowgroup);

    /* The swept values, sorted, for the tics. */
    qsort(xs, t->n_rows, sizeof *xs, cmp_double);
    kv_buf vals = {0};
    for (size_t r = 0; r < t->n_rows; r++)
        if (r == 0 || xs[r] != xs[r - 1]) {
            snprintf(text, sizeof text, r ? " %.10g" : "%.10g", xs[r]);
            kv_buf_puts(&vals, text);
        }
    kv__gpvars_str(&fig->vars, "xvals", vals.s);
    kv_buf_release(&vals);
    free(xs);
    free(group);
    free(rep);
    return 0;
}

/* A router's category on the chart: its policy, with weighted's weights when a sweep
 * compares several (the weights are sweep.csv columns of their own). */
static void router_category(const kv__table *t, size_t r, char *out, size_t n)
{
    const char *name = kv__cell(t, r, kv__col_of(t, "router"));
    int cp = kv__col_of(t, "router_weight_prefix"), cq = kv__col_of(t, "router_weight_queue"),
        ck = kv__col_of(t, "router_weight_kv");
    if (strcmp(name, "weighted") == 0 && cp >= 0 && cq >= 0 && ck >= 0)
        snprintf(out, n, "weighted p%s q%s k%s", kv__cell(t, r, cp), kv__cell(t, r, cq),
                 kv__cell(t, r, ck));
    else
        snprintf(out, n, "%s", name);
}

/* The router comparison (sweep_router.gp): one category per router policy (rows of one
 * replica have no router and are left out), one bar per group of the other knobs. */
static int router_chart(const kv__table *t, kv__fig *fig)
{
    size_t n = t->n_rows;
    char (*cat)[64] = kv_xcalloc(n ? n : 1, sizeof *cat);
    int *rowx = kv_xmalloc((n ? n : 1) * sizeof *rowx);
    size_t n_cat = 0;
    /* Categories in policy order, as --help lists them, then by text. */
    static const char *const order[] = {"round-robin", "random", "least-requests", "least-kv",
                                        "prefix",      "weighted", "kv-cost",      "session"};
    char text[64];
    for (size_t o = 0; o <= sizeof order / sizeof order[0]; o++)
        for (size_t r = 0; r < n; r++) {
            const char *name = kv__cell(t, r, kv__col_of(t, "router"));
            bool listed = false;
            for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
                listed |= strcmp(name, order[k]) == 0;
            if (!*name || (o < sizeof order / sizeof order[0] ? strcmp(name, order[o]) != 0
                                                               : listed))
                continue;
            router_category(t, r, text, sizeof text);
            size_t c = 0;
            while (c < n_cat && strcmp(cat[c], text) != 0)
                c++;
            if (c == n_cat)
                snprintf(cat[n_cat++], sizeof cat[0], "%s", text);
        }
    kv_buf rx = {0};
    for (size_t r = 0; r < n; r++) {
        rowx[r] = -1;
        if (*kv__cell(t, r, kv__col_of(t, "router"))) {
            router_category(t, r, text, sizeof text);
            for (size_t c = 0; c < n_cat; c++)
                if (strcmp(cat[c], text) == 0)
                    rowx[r] = (int)c;
        }
        kv_buf_printf(&rx, r ? " %d" : "%d", rowx[r]);
    }
    kv__gpvars_str(&fig->vars, "rowx", rx.s ? rx.s : "");
    kv__gpvars_num(&fig->vars, "ncat", (double)n_cat);
    for (size_t c = 0; c < n_cat; c++) {
        char var[32];
        snprintf(var, sizeof var, "cat%zu", c);
        kv__gpvars_str(&fig->vars, var, cat[c]);
    }
    /* Groups: rows with a router agreeing on every other knob. */
    size_t *group = kv_xmalloc((n ? n : 1) * sizeof *group), *rep = kv_xmalloc((n ? n : 1) * sizeof *rep);
    int key[N_KNOBS];
    size_t n_key = 0;
    for (int k = 0; k < N_KNOBS; k++)
        if (k != KNOB_ROUTER && kv__col_of(t, knobs[k].col) >= 0)
            key[n_key++] = kv__col_of(t, knobs[k].col);
    size_t n_groups = group_rows(t, key, n_key, group, rep);
    /* Renumber the groups of rows with a router, in order of appearance. */
    size_t *renum = kv_xmalloc((n_groups ? n_groups : 1) * sizeof *renum), m = 0;
    for (size_t g = 0; g < n_groups; g++)
        renum[g] = SIZE_MAX;
    kv_buf rg = {0};
    for (size_t r = 0; r < n; r++) {
        if (rowx[r] >= 0 && renum[group[r]] == SIZE_MAX)
            renum[group[r]] = m++;
        kv_buf_printf(&rg, r ? " %d" : "%d", rowx[r] >= 0 ? (int)renum[group[r]] : -1);
    }
    kv__gpvars_str(&fig->vars, "rowgroup", rg.s ? rg.s : "");
    kv__gpvars_num(&fig->vars, "ngroups", (double)(m ? m : 1));
    for (size_t g = 0; g < n_groups && m > 1; g++) {
        if (renum[g] == SIZE_MAX)
            continue;
        char legend[256] = "", var[32];
        for (size_t i = 0; i < n_key; i++) {
            bool varies = false;
            for (size_t h = 0; h < n_groups && !varies; h++)
                varies = renum[h] != SIZE_MAX &&
                         !kv__same_value(kv__cell(t, rep[h], key[i]), kv__cell(t, rep[g], key[i]));
            for (int k = 0; varies && k < N_KNOBS; k++)
                if (kv__col_of(t, knobs[k].col) == key[i]) {
                    knob_text(&knobs[k], kv__cell(t, rep[g], key[i]), text, sizeof text);
                    add_part(legend, sizeof legend, ", ", text);
                }
        }
        snprintf(var, sizeof var, "gtitle%zu", renum[g]);
        kv__gpvars_str(&fig->vars, var, legend);
    }
    /* Title: the count and every knob that is the same in all the rows drawn. */
    char title[512];
    snprintf(title, sizeof title, "%zu routers", n_cat);
    size_t first = 0;
    while (first < n && rowx[first] < 0)
        first++;
    for (int k = 0; k < N_KNOBS && first < n; k++) {
        int c = kv__col_of(t, knobs[k].col);
        bool same = k != KNOB_ROUTER && c >= 0;
        for (size_t r = first; same && r < n; r++)
            same = rowx[r] < 0 || kv__same_value(kv__cell(t, r, c), kv__cell(t, first, c));
        if (same) {
            knob_text(&knobs[k], kv__cell(t, first, c), text, sizeof text);
            add_part(title, sizeof title, " · ", text);
        }
    }
    kv__gpvars_str(&fig->vars, "title_info", title);
    kv_buf_release(&rx);
    kv_buf_release(&rg);
    free(renum);
    free(group);
    free(rep);
    free(cat);
    free(rowx);
    return 0;
}

/* Whether sweep.csv compares two or more routers (rows with one replica have none). */
static bool compares_routers(const kv__table *t)
{
    static const char *const need[] = {"router", "replicas", "requests_gini", "overpredicted",
                                       "finished", "rejected"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (kv__col_of(t, need[i]) < 0)
            return false;
    int c = kv__col_of(t, "router");
    for (size_t r = 0; r < t->n_rows; r++)
        for (size_t q = 0; q < r; q++)
            if (*kv__cell(t, r, c) && *kv__cell(t, q, c) &&
                strcmp(kv__cell(t, r, c), kv__cell(t, q, c)) != 0)
                return true;
    return false;
}

int kv__plot_sweep_figs(const char *dir, kv__figlist *out, char *note, size_t note_n, kv_diag *diag)
{
    kv__table t;
    int rc = kv__table_load(&t, dir, "sweep.csv", diag);
    static const char *const need[] = {
        "block_size",       "num_blocks",          "watermark",  "hit_rate",
        "preemptions",      "mean_physical",       "ttft_p99_s", "tpot_p99_s",
        "output_tok_per_s", "watermark_deferrals", NULL};
    if (rc == 0)
        rc = kv__require_cols(&t, need, diag);
    if (rc == 0) {
        static const struct {
            int knob;
            const char *fig;
        } charts[] = {{0, "sweep_block_size"}, {3, "sweep_watermark"}};
        int made = 0;
        for (size_t i = 0; rc == 0 && i < 2; i++) {
            if (kv__n_distinct(&t, kv__col_of(&t, knobs[charts[i].knob].col)) < 2)
                continue;
            kv__fig *f = kv__figlist_add(out, charts[i].fig);
            rc = sweep_chart(&t, charts[i].knob, f, diag);
            made++;
        }
        if (rc == 0 && compares_routers(&t)) {
            rc = router_chart(&t, kv__figlist_add(out, "sweep_router"));
            made++;
        }
        if (rc == 0 && !made)
            snprintf(note, note_n, "%s %s: no sweep chart", t.path,
                     t.n_rows ? "varies neither block size, watermark nor router"
                              : "has no rows");
    }
    kv__table_release(&t);
    return rc;
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
    double best = NAN, best_rate = NAN;
    int c_load = kv__col_of(&t, "load"), c_ok = kv__col_of(&t, "meets_slo");
    int c_rate = kv__col_of(&t, "arrival_rate_req_s");
    for (size_t r = 0; rc == 0 && r < t.n_rows; r++) {
        double load, rate = NAN;
        bool ok;
        if (!kv__parse_num(kv__cell(&t, r, c_load), &load))
            rc = kv_diag_set(diag, -KV_EPARSE, "%s: load '%s' is not a number", t.path,
                             kv__cell(&t, r, c_load));
        else if (parse_bool(kv__cell(&t, r, c_ok), &ok) != 0)
            rc = kv_diag_set(diag, -KV_EPARSE, "%s: meets_slo '%s' is not true or false", t.path,
                             kv__cell(&t, r, c_ok));
        else if (ok && !(load <= best)) {
            best = load;
            if (c_rate >= 0 && kv__parse_num(kv__cell(&t, r, c_rate), &rate))
                best_rate = rate;
            else
                best_rate = NAN;
        }
    }
    json_t *plan = NULL;
    char *json_path = kv_path_join(dir, "plan.json");
    FILE *probe = fopen(json_path, "rb");
    free(json_path);
    if (probe) {
        fclose(probe);
        if (rc == 0)
            rc = load_json(dir, "plan.json", &plan, diag);
    }
    const char *over = plan ? jstr(plan, "over") : NULL;
    if (rc == 0 && over && strcmp(over, "replicas") == 0 && kv__col_of(&t, "replicas") < 0)
        rc = kv_diag_set(diag, -KV_EPARSE, "%s: a replica plan without a 'replicas' column",
                         t.path);
    if (rc == 0) {
        kv__fig *f = kv__figlist_add(out, "plan_curve");
        const json_t *slo = plan ? json_object_get(plan, "slo") : NULL;
        if (over && strcmp(over, "replicas") == 0) { /* x: replicas; the answer: the fewest */
            kv__gpvars_str(&f->vars, "xcol", "replicas");
            kv__gpvars_num(&f->vars, "answer_replicas", jnum(plan, "answer_replicas"));
            kv__gpvars_num(&f->vars, "answer_gpus", jnum(plan, "answer_gpus"));
            best = NAN; /* the load is fixed: no load answer */
        }
        kv__gpvars_num(&f->vars, "slo_ttft_p99_s", jnum(slo, "ttft_p99_s"));
        kv__gpvars_num(&f->vars, "slo_tpot_p99_s", jnum(slo, "tpot_p99_s"));
        kv__gpvars_num(&f->vars, "slo_preemption_rate", jnum(slo, "preemption_rate"));
        kv__gpvars_num(&f->vars, "answer_load", best);
        kv__gpvars_num(&f->vars, "answer_rate", best_rate);
        char title[512] = "", part[64];
        const char *trace = plan ? jstr(plan, "trace") : NULL;
        if (trace)
            add_part(title, sizeof title, " · ", kv_path_base(trace));
        snprintf(part, sizeof part, "%zu %s", t.n_rows,
                 over && strcmp(over, "replicas") == 0 ? "replica counts" : "loads");
        add_part(title, sizeof title, " · ", part);
        kv__gpvars_str(&f->vars, "title_info", title);
    }
    json_decref(plan);
    kv__table_release(&t);
    return rc;
}
