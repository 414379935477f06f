/* plot_run: the variables of a run's figures (DESIGN §8), from summary.json and the
 * data files plot_series.c reduces timeseries.csv and requests.csv to.
 *
 *   blocks       title; usable blocks N−1 and watermark blocks W; the series file; whether
 *                it was thinned (then each series is a min–max band and a mean line);
 *                whether to draw the cached-free band: only when some request's first
 *                admission hit the cache (summary prefix.hits > 0).  A content-less trace
 *                (no tokens, no hash_ids, no --shared-prefix) can never hit, and then the
 *                free blocks that still carry a hash are no prefix anyone can revive.
 *   pressure     the series and bins files, the bin width and the largest bins, totals;
 *                the largest queue, for the y tics.
 *   latency_cdf  the two CDF files with their counts and ranges, and summary.json's
 *                P50/P95/P99 (the marked points; the key prints them in human units).
 *
 * A cluster (summary.json with a cluster block) gets plot_cluster.c's per-replica figures
 * instead of blocks and pressure: its timeseries rows interleave replicas.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/path.h"
#include "kvsim/summary.h"
#include "kvsim/text.h"
#include "plot_internal.h"

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
    int rc = kv__load_json(dir, "summary.json", &j, diag);
    if (rc != 0)
        return rc;
    char *path = kv_path_join(dir, "summary.json");
    rc = kv_summary_from_json(j, path, sum, diag);
    free(path);
    json_decref(j);
    return rc;
}

/* "trace · model on GPU · TPt PPp · DTYPE KV · block B tokens · N blocks · watermark W" */
/* Returns where the pool part starts (a " · "), for a title on two lines. */
static size_t run_title(const kv_summary *s, char *title, size_t n)
{
    const kv_summary_config *c = &s->config;
    kv__setup_text st = {c->model,      c->gpu,        c->kv_dtype,
                         (double)c->tp, (double)c->pp, (double)c->block_size};
    char part[256], num[32];
    title[0] = '\0';
    kv__add_part(title, n, " · ", kv_path_base(c->trace));
    kv__setup_title(&st, part, sizeof part);
    kv__add_part(title, n, " · ", part);
    size_t split = strlen(title);
    kv_grouped(num, sizeof num, (double)s->config.num_blocks);
    if (s->has_cluster)
        snprintf(part, sizeof part, "%llu replicas of %s blocks",
                 (unsigned long long)s->cluster.replicas, num);
    else
        snprintf(part, sizeof part, "%s blocks", num);
    kv__add_part(title, n, " · ", part);
    snprintf(part, sizeof part, "watermark %g", c->watermark);
    kv__add_part(title, n, " · ", part);
    return split;
}

/* What blocks and pressure share: title, the series file, its size, the watermark. */
static void series_vars(kv__fig *f, const kv_summary *s, const char *title, size_t split,
                        const kv__series_info *si)
{
    kv__gpvars_title(&f->vars, title, split);
    kv__gpvars_str(&f->vars, "data", si->path[0]);
    kv__gpvars_num(&f->vars, "nrows", si->rows);
    kv__gpvars_num(&f->vars, "thinned", si->thinned);
    char wm[32];
    snprintf(wm, sizeof wm, "%g", s->config.watermark);
    kv__gpvars_str(&f->vars, "wm_label", wm);
}

static void blocks_vars(kv__fig *f, const kv_summary *s, const char *title, size_t split,
                        const kv__series_info *si)
{
    series_vars(f, s, title, split, si);
    kv__gpvars_num(&f->vars, "usable", (double)s->blocks.usable);
    kv__gpvars_num(&f->vars, "wm_blocks", (double)s->watermark.blocks);
    kv__gpvars_num(&f->vars, "show_cached", s->prefix.hits > 0);
    kv__gpvars_num(&f->vars, "shared",
                   s->blocks.peak_logical != s->blocks.peak_physical ||
                       s->blocks.mean_logical != s->blocks.mean_physical);
}

static void pressure_vars(kv__fig *f, const kv_summary *s, const char *title, size_t split,
                          const kv__series_info *si)
{
    series_vars(f, s, title, split, si);
    kv__gpvars_str(&f->vars, "data_bins", si->path[1]);
    kv__gpvars_num(&f->vars, "t_end", s->sim_time_s > 0 ? s->sim_time_s : NAN);
    kv__gpvars_num(&f->vars, "bin_s", si->bin_s);
    kv__gpvars_num(&f->vars, "pre_max", si->bin_max[0]);
    kv__gpvars_num(&f->vars, "def_max", si->bin_max[1]);
    kv__gpvars_num(&f->vars, "queue_max", fmax(si->max[3], si->max[4]));
    kv__gpvars_num(&f->vars, "n_preempt", (double)s->preemptions);
    kv__gpvars_num(&f->vars, "n_defer", (double)s->watermark.deferrals);
}

static void latency_vars(kv__fig *f, const kv_summary *s, const char *title, size_t split,
                         const kv__latency_info *li)
{
    kv__gpvars_title(&f->vars, title, split);
    kv__gpvars_num(&f->vars, "n_finished", (double)s->requests.finished);
    kv__gpvars_num(&f->vars, "n_total", (double)s->requests.total);
    static const char *const lat[] = {"ttft", "tpot"}, *const pct[] = {"p50", "p95", "p99"};
    for (int i = 0; i < 2; i++) {
        char var[32];
        snprintf(var, sizeof var, "data_%s", lat[i]);
        kv__gpvars_str(&f->vars, var, li->path[i]);
        snprintf(var, sizeof var, "n_%s", lat[i]);
        kv__gpvars_num(&f->vars, var, li->n[i]);
        snprintf(var, sizeof var, "lo_%s", lat[i]);
        kv__gpvars_num(&f->vars, var, li->lo[i]);
        snprintf(var, sizeof var, "hi_%s", lat[i]);
        kv__gpvars_num(&f->vars, var, li->hi[i]);
        for (int j = 0; j < 3; j++) {
            char path[64];
            snprintf(path, sizeof path, "latency_s.%s.%s", lat[i], pct[j]);
            snprintf(var, sizeof var, "%s_%s", lat[i], pct[j]);
            double x = kv_summary_number(s, kv_summary_field(path));
            kv__gpvars_num(&f->vars, var, x > 0 ? x : NAN);
        }
    }
}

int kv__plot_run_figs(const char *dir, const kv__progress *pg, kv__figlist *out, kv_diag *diag)
{
    kv_summary s;
    int rc = load_summary(dir, &s, diag);
    if (rc != 0)
        return rc;
    char title[512];
    size_t split = run_title(&s, title, sizeof title);
    if (s.has_cluster) { /* per-replica figures instead of blocks and pressure */
        double rows = 0;
        char *ts = kv_path_join(dir, "timeseries.csv");
        rc = count_rows(ts, &rows, diag);
        free(ts);
        if (rc == 0)
            rc = kv__plot_cluster_figs(dir, &s, title, split, rows, pg, out, diag);
    } else {
        kv__series_info si;
        rc = kv__plot_series(dir, s.sim_time_s, pg, out, &si, diag);
        if (rc == 0) {
            blocks_vars(kv__figlist_add(out, "blocks"), &s, title, split, &si);
            pressure_vars(kv__figlist_add(out, "pressure"), &s, title, split, &si);
        }
    }
    kv__latency_info li;
    if (rc == 0)
        rc = kv__plot_latency(dir, pg, out, &li, diag);
    if (rc == 0)
        latency_vars(kv__figlist_add(out, "latency_cdf"), &s, title, split, &li);
    kv_summary_release(&s);
    return rc;
}
