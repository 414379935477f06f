/* plot_sweep: the variables of a sweep's charts (plot_internal.h), from sweep.csv.
 *
 * Per chart (x = block_size or watermark): which line group each row belongs to
 * (rowgroup), the groups' legend text, the swept values for the tics, which panels to
 * draw, and what every configuration has in common for the title.  A group is the set
 * of rows agreeing on every other knob column; num_blocks and kv_budget_bytes are left
 * out of the key when one of them is derived from the block size (a fixed budget gives
 * fewer, bigger blocks; fixed blocks give a bigger budget), found by trying the key
 * without them until some group holds two x values.  The router comparison has one
 * category per router and one bar per group of the other knobs.
 *
 * Titles name model, GPU, TP/PP, KV dtype (and block size when it is not on x) like
 * every figure's: from sweep.csv's columns of those names when it has them (a column that
 * varies is a knob: it splits the lines and goes to the legend), else from the
 * configurations' own summary.json (DIR/<config>/summary.json, else the dir column's
 * path), when every one agrees.  A knob whose value is empty (the router of one
 * replica) is not named, nor one replica.
 *
 * Panels: a metric that is 0 in every configuration drawn (no preemptions anywhere, no
 * hit on a content-less trace) is an empty chart; it is left out, and the title says
 * which metrics were, and that they were zero.
 *
 * Group finding is O(rows² · knobs), fine for a row per configuration.
 */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/metrics.h"
#include "kvsim/path.h"
#include "kvsim/report.h"
#include "kvsim/text.h"
#include "plot_internal.h"

/* The knob columns of sweep.csv, and how a value reads in a legend or title. */
typedef struct knob {
    const char *col;
    const char *label;
} knob;

static const knob knobs[] = {
    {"block_size", "block"},
    {"num_blocks", "blocks"},
    {"kv_budget_bytes", "KV"},
    {"watermark", "watermark"},
    {"free_order", "free-order"},
    {"max_seqs", "max-seqs"},
    {"preempt", "preempt"},
    {"replicas", "replicas"},
    {"router", "router"},
    /* setup columns, when sweep.csv has them (the title's wording: kv__setup_title) */
    {"model", ""},
    {"gpu", ""},
    {"kv_dtype", "KV"},
    {"tp", "TP"},
    {"pp", "PP"},
    {"prefix_caching", "prefix caching"},
};
enum { KNOB_ROUTER = 8, KNOB_MODEL = 9, KNOB_PP = 13 }; /* model … pp: the setup */
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
    } else if (!*k->label) { /* model, GPU: the name alone */
        snprintf(out, n, "%s", value);
    } else if (strcmp(k->col, "tp") == 0 || strcmp(k->col, "pp") == 0) {
        snprintf(out, n, "%s%s", k->label, value);
    } else if (strcmp(k->col, "kv_dtype") == 0) {
        snprintf(out, n, "%s KV", value);
    } else {
        snprintf(out, n, "%s %s", k->label, value);
    }
}

/* ---- what the configurations share: the title ---------------------------------------- */

/* The sweep being drawn, and its setup as the configurations' summary.json say it (for a
 * sweep.csv without setup columns; fields NULL/NAN when unknown or not all the same). */
typedef struct sweep_ctx {
    const kv__table *t;
    kv__setup_text from_summaries;
    char text[3][128]; /* model, gpu, kv_dtype storage */
} sweep_ctx;

/* The setup of every row's DIR/<dir>/summary.json, kept where all rows agree. */
static void setup_from_summaries(sweep_ctx *c, const char *dir)
{
    static const char *const str_keys[3] = {"model", "gpu", "kv_dtype"};
    static const char *const num_keys[2] = {"tp", "pp"};
    kv__setup_text *st = &c->from_summaries;
    *st = (kv__setup_text){NULL, NULL, NULL, NAN, NAN, NAN};
    int cn = kv__col_of(c->t, "config"), cd = kv__col_of(c->t, "dir");
    bool same_s[3] = {true, true, true}, same_n[2] = {true, true};
    double nv[2] = {NAN, NAN};
    for (size_t r = 0; cn >= 0 && r < c->t->n_rows; r++) {
        /* DIR/<config> (a sweep's own subdirectory), else the dir column as written */
        char *sub = kv_path_join(dir, kv__cell(c->t, r, cn));
        json_t *j = NULL;
        int rc = *kv__cell(c->t, r, cn) ? kv__load_json(sub, "summary.json", &j, NULL) : -1;
        free(sub);
        if (rc != 0 && cd >= 0 && *kv__cell(c->t, r, cd))
            rc = kv__load_json(kv__cell(c->t, r, cd), "summary.json", &j, NULL);
        if (rc != 0)
            return; /* a configuration unknown: nothing is known for all */
        const json_t *cfg = json_object_get(j, "config");
        for (int k = 0; k < 3; k++) {
            const char *v = kv__jstr(cfg, str_keys[k]);
            if (r == 0)
                snprintf(c->text[k], sizeof c->text[k], "%s", v ? v : "");
            same_s[k] &= v && strcmp(v, c->text[k]) == 0;
        }
        for (int k = 0; k < 2; k++) {
            double v = kv__jnum(cfg, num_keys[k]);
            if (r == 0)
                nv[k] = v;
            same_n[k] &= v == nv[k];
        }
        json_decref(j);
    }
    if (cn < 0 || c->t->n_rows == 0)
        return;
    st->model = same_s[0] ? c->text[0] : NULL;
    st->gpu = same_s[1] ? c->text[1] : NULL;
    st->kv_dtype = same_s[2] ? c->text[2] : NULL;
    st->tp = same_n[0] ? nv[0] : NAN;
    st->pp = same_n[1] ? nv[1] : NAN;
}

/* Column col's value when every drawn row (drawn NULL: every row) has the same, else NULL. */
static const char *same_value(const kv__table *t, int col, const bool *drawn)
{
    const char *v = NULL;
    for (size_t r = 0; col >= 0 && r < t->n_rows; r++) {
        if (drawn && !drawn[r])
            continue;
        if (v && !kv__same_value(v, kv__cell(t, r, col)))
            return NULL;
        v = v ? v : kv__cell(t, r, col);
    }
    return v;
}

/* The title: "count · setup" into fig's title_info, and every other knob (but x) the
 * same in all rows drawn into title_knobs (a line of its own). */
static void sweep_title(const sweep_ctx *c, int x, const bool *drawn, const char *count,
                        kv__fig *fig)
{
    char title[512], knobs_text[512] = "";
    size_t n = sizeof title;
    const kv__table *t = c->t;
    kv__setup_text st = c->from_summaries;
    const char **str[3] = {&st.model, &st.gpu, &st.kv_dtype};
    double *num[2] = {&st.tp, &st.pp};
    for (int k = KNOB_MODEL; k <= KNOB_PP; k++) {
        int col = kv__col_of(t, knobs[k].col);
        if (col < 0)
            continue; /* the summaries' word stands */
        const char *v = same_value(t, col, drawn);
        double d = NAN;
        if (k < KNOB_MODEL + 3)
            *str[k - KNOB_MODEL] = v;
        else
            *num[k - KNOB_MODEL - 3] = v && kv__parse_num(v, &d) ? d : NAN;
    }
    const char *bs = x != 0 ? same_value(t, kv__col_of(t, "block_size"), drawn) : NULL;
    if (!bs || !kv__parse_num(bs, &st.block_size))
        st.block_size = NAN;
    char setup[256], text[160];
    kv__setup_title(&st, setup, sizeof setup);
    snprintf(title, n, "%s", count);
    if (*setup)
        kv__add_part(title, n, " · ", setup);
    for (int k = 1; k < N_KNOBS; k++) {
        const char *v = same_value(t, kv__col_of(t, knobs[k].col), drawn);
        bool one_replica = k == KNOB_ROUTER - 1 && v && kv__same_value(v, "1");
        if (k != x && (k < KNOB_MODEL || k > KNOB_PP) && v && *v && !one_replica) {
            knob_text(&knobs[k], v, text, sizeof text);
            kv__add_part(knobs_text, sizeof knobs_text, " · ", text);
        }
    }
    kv__gpvars_str(&fig->vars, "title_info", title);
    kv__gpvars_str(&fig->vars, "title_knobs", knobs_text);
}

/* ---- panels -------------------------------------------------------------------------- */

/* A panel's metric: a column (two for the watermark trade-off, empty when either is). */
typedef struct metric {
    const char *col, *col2, *name;
} metric;

static bool all_zero(const kv__table *t, const char *name, const bool *drawn)
{
    int col = kv__col_of(t, name);
    for (size_t r = 0; col >= 0 && r < t->n_rows; r++) {
        double v;
        if ((!drawn || drawn[r]) && kv__parse_num(kv__cell(t, r, col), &v) && v != 0)
            return false;
    }
    return true;
}

/* panels = the 1-based indices of the metrics with a non-zero value somewhere, dropped =
 * the names of the others (the title says so).  At least one panel stays. */
static void set_panels(const kv__table *t, const metric *m, size_t n, const bool *drawn,
                       kv__fig *fig)
{
    kv_buf panels = {0};
    char dropped[256] = "";
    for (size_t i = 0; i < n; i++) {
        bool zero = all_zero(t, m[i].col, drawn) || (m[i].col2 && all_zero(t, m[i].col2, drawn));
        if (zero && !(i + 1 == n && panels.len == 0))
            kv__add_part(dropped, sizeof dropped, ", ", m[i].name);
        else
            kv_buf_printf(&panels, panels.len ? " %zu" : "%zu", i + 1);
    }
    kv__gpvars_str(&fig->vars, "panels", panels.s);
    if (*dropped) {
        char text[300];
        snprintf(text, sizeof text, "not drawn, 0 in every configuration: %s", dropped);
        kv__gpvars_str(&fig->vars, "dropped", text);
    }
    kv_buf_release(&panels);
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

/* Legend per group: the key columns that differ between groups, except a capacity
 * column that only follows the block size ("block 16, 8,192 blocks" says nothing
 * "block 16" does not, under a fixed budget). */
static void group_legends(const kv__table *t, const bool *in_key, const size_t *rep,
                          size_t n_groups, kv__fig *fig)
{
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
                kv__add_part(legend, sizeof legend, ", ", text);
            }
        }
        snprintf(var, sizeof var, "gtitle%zu", g);
        kv__gpvars_str(&fig->vars, var, legend);
    }
}

/* One chart against knob x: variables into fig.  0 or -KV_EPARSE (x not numeric). */
static int sweep_chart(const sweep_ctx *ctx, int x, kv__fig *fig, kv_diag *diag)
{
    const kv__table *t = ctx->t;
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

    group_legends(t, in_key, rep, n_groups, fig);
    kv__gpvars_num(&fig->vars, "ngroups", (double)n_groups);

    char count[32], text[64];
    snprintf(count, sizeof count, "%zu configurations", t->n_rows);
    sweep_title(ctx, x, NULL, count, fig);

    kv_buf rowgroup = {0};
    for (size_t r = 0; r < t->n_rows; r++) {
        snprintf(text, sizeof text, r ? " %zu" : "%zu", group[r]);
        kv_buf_puts(&rowgroup, text);
    }
    kv__gpvars_str(&fig->vars, "rowgroup", rowgroup.s ? rowgroup.s : "");
    kv_buf_release(&rowgroup);

    /* The swept values, sorted, for the tics. */
    kv_sort_doubles(xs, t->n_rows);
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

/* The categories of the router chart (cat0, cat1, … and ncat into fig), in policy order
 * as --help lists them, then by text; each row's category into rowx (-1: no router) and
 * fig's rowx.  Returns the category count. */
static size_t router_categories(const kv__table *t, int *rowx, kv__fig *fig)
{
    size_t n = t->n_rows;
    char(*cat)[64] = kv_xcalloc(n ? n : 1, sizeof *cat);
    size_t n_cat = 0;
    static const char *const order[] = {"round-robin", "random",   "least-requests", "least-kv",
                                        "prefix",      "weighted", "kv-cost",        "session"};
    char text[64];
    for (size_t o = 0; o <= sizeof order / sizeof order[0]; o++)
        for (size_t r = 0; r < n; r++) {
            const char *name = kv__cell(t, r, kv__col_of(t, "router"));
            bool listed = false;
            for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
                listed |= strcmp(name, order[k]) == 0;
            if (!*name ||
                (o < sizeof order / sizeof order[0] ? strcmp(name, order[o]) != 0 : listed))
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
    kv_buf_release(&rx);
    free(cat);
    return n_cat;
}

/* The router comparison (sweep_router.gp): one category per router policy (rows of one
 * replica have no router and are left out), one bar per group of the other knobs. */
static int router_chart(const sweep_ctx *ctx, kv__fig *fig)
{
    const kv__table *t = ctx->t;
    size_t n = t->n_rows;
    int *rowx = kv_xmalloc((n ? n : 1) * sizeof *rowx);
    size_t n_cat = router_categories(t, rowx, fig);
    char text[64];
    /* Groups: rows with a router agreeing on every other knob. */
    size_t *group = kv_xmalloc((n ? n : 1) * sizeof *group),
           *rep = kv_xmalloc((n ? n : 1) * sizeof *rep);
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
                    kv__add_part(legend, sizeof legend, ", ", text);
                }
        }
        snprintf(var, sizeof var, "gtitle%zu", renum[g]);
        kv__gpvars_str(&fig->vars, var, legend);
    }
    bool *drawn = kv_xmalloc((n ? n : 1) * sizeof *drawn);
    for (size_t r = 0; r < n; r++)
        drawn[r] = rowx[r] >= 0;
    snprintf(text, sizeof text, "%zu routers", n_cat);
    sweep_title(ctx, KNOB_ROUTER, drawn, text, fig);
    static const metric router_metrics[] = {{"hit_rate", NULL, "prefix hit rate"},
                                            {"ttft_p99_s", NULL, "P99 TTFT"},
                                            {"requests_gini", NULL, "imbalance"},
                                            {"overpredicted", NULL, "over-prediction"}};
    set_panels(t, router_metrics, 4, drawn, fig);
    free(drawn);
    kv_buf_release(&rg);
    free(renum);
    free(group);
    free(rep);
    free(rowx);
    return 0;
}

/* Whether sweep.csv compares two or more routers (rows with one replica have none). */
static bool compares_routers(const kv__table *t)
{
    static const char *const need[] = {"router",        "replicas", "requests_gini",
                                       "overpredicted", "finished", "rejected"};
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
        static const metric bs_metrics[] = {
            {"hit_rate", NULL, "prefix hit rate"},     {"preemptions", NULL, "preemptions"},
            {"mean_physical", NULL, "pool occupancy"}, {"ttft_p99_s", NULL, "P99 TTFT"},
            {"tpot_p99_s", NULL, "P99 TPOT"},          {"output_tok_per_s", NULL, "throughput"}};
        static const metric wm_metrics[] = {{"preemptions", NULL, "preemptions"},
                                            {"watermark_deferrals", NULL, "deferrals"},
                                            {"preemptions", "watermark_deferrals", "the trade-off"},
                                            {"ttft_p99_s", NULL, "P99 TTFT"}};
        int made = 0;
        sweep_ctx c = {.t = &t};
        setup_from_summaries(&c, dir);
        for (size_t i = 0; rc == 0 && i < 2; i++) {
            if (kv__n_distinct(&t, kv__col_of(&t, knobs[charts[i].knob].col)) < 2)
                continue;
            kv__fig *f = kv__figlist_add(out, charts[i].fig);
            rc = sweep_chart(&c, charts[i].knob, f, diag);
            if (rc == 0)
                set_panels(&t, charts[i].knob == 0 ? bs_metrics : wm_metrics,
                           charts[i].knob == 0 ? 6 : 4, NULL, f);
            made++;
        }
        if (rc == 0 && compares_routers(&t)) {
            rc = router_chart(&c, kv__figlist_add(out, "sweep_router"));
            made++;
        }
        if (rc == 0 && !made)
            snprintf(note, note_n, "%s %s: no sweep chart", t.path,
                     t.n_rows ? "varies neither block size, watermark nor router" : "has no rows");
    }
    kv__table_release(&t);
    return rc;
}
