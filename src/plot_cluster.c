/* plot_cluster: the variables of a cluster run's figures (DESIGN §10 "Figures").
 *
 *   cluster_blocks    physical blocks over time, per replica.  Up to 16 replicas one line
 *                     each, the replica's mean per pixel column, under the band of the
 *                     lowest and highest value of any replica there (plot_series.c reduces
 *                     timeseries.csv to that); beyond that a line per replica is
 *                     unreadable, so this file reads timeseries.csv once and passes, for
 *                     about BANDS time bins, the minimum, P10, median, P90 and maximum
 *                     over the replicas of each one's latest sample (its state carried
 *                     forward, as C8's cluster peaks are taken).
 *   cluster_replicas  routed requests and prefix hit rate per replica, from the summary's
 *                     per_replica records.
 *
 * gnuplot gets everything as `-e` variables (plot_internal.h); the bands as space-separated
 * numbers, a few kilobytes.  Reading timeseries.csv is one streaming pass, O(rows + bins ·
 * R log R), memory O(R + bins).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/metrics.h"
#include "kvsim/path.h"
#include "kvsim/summary.h"
#include "plot_internal.h"

enum { MAX_LINES = 16, BANDS = 300 };

/* The five band series, each a space-separated list. */
typedef struct bands {
    kv_buf t, lo, p10, p50, p90, hi;
} bands;

static void bands_release(bands *b)
{
    kv_buf_release(&b->t);
    kv_buf_release(&b->lo);
    kv_buf_release(&b->p10);
    kv_buf_release(&b->p50);
    kv_buf_release(&b->p90);
    kv_buf_release(&b->hi);
}

/* One bin's row: its end time and the quantiles of cur[0..R). */
static void emit(bands *b, double t, const double *cur, double *sorted, size_t R)
{
    memcpy(sorted, cur, R * sizeof *sorted);
    kv_dist d;
    kv_dist_compute(sorted, R, &d); /* sorts */
    const char *sep = b->t.len ? " " : "";
    kv_buf_printf(&b->t, "%s%.6g", sep, t);
    kv_buf_printf(&b->lo, "%s%.0f", sep, sorted[0]);
    kv_buf_printf(&b->p10, "%s%.1f", sep, kv_percentile(sorted, R, 10));
    kv_buf_printf(&b->p50, "%s%.1f", sep, d.p50);
    kv_buf_printf(&b->p90, "%s%.1f", sep, d.p90);
    kv_buf_printf(&b->hi, "%s%.0f", sep, d.max);
}

/* timeseries.csv with the replica column: time_s (1st), replica (2nd), physical_blocks
 * (6th).  Bins of t_end / BANDS seconds. */
static int read_bands(const char *dir, size_t R, double t_end, bands *b, kv_diag *diag)
{
    char *path = kv_path_join(dir, "timeseries.csv");
    FILE *f = fopen(path, "rb");
    if (!f) {
        int rc = kv_diag_set(diag, -KV_EIO, "cannot open '%s': %s", path, strerror(errno));
        free(path);
        return rc;
    }
    double *cur = kv_xcalloc(R, sizeof *cur), *sorted = kv_xmalloc(R * sizeof *sorted);
    double width = t_end > 0 ? t_end / BANDS : 1, bin_end = width;
    char line[4096];
    int rc = 0;
    unsigned long lineno = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        if (++lineno == 1)
            continue; /* the header */
        char *p = line, *end;
        double t = strtod(p, &end);
        unsigned long r = 0;
        double phys = 0;
        int ok = end != p && *end == ',';
        if (ok) {
            p = end + 1;
            r = strtoul(p, &end, 10);
            ok = end != p && *end == ',' && r < R;
        }
        for (int col = 3; ok && col <= 6; col++) { /* step, running, waiting, physical */
            p = end + 1;
            phys = strtod(p, &end);
            ok = end != p && (*end == ',' || *end == '\n');
        }
        if (!ok) {
            rc =
                kv_diag_set(diag, -KV_EPARSE, "%s:%lu: not a cluster timeseries row", path, lineno);
            break;
        }
        while (t >= bin_end) { /* bins before this row hold the state so far */
            emit(b, bin_end, cur, sorted, R);
            bin_end += width;
        }
        cur[r] = phys;
    }
    if (rc == 0 && ferror(f))
        rc = kv_diag_set(diag, -KV_EIO, "cannot read '%s'", path);
    if (rc == 0)
        emit(b, bin_end, cur, sorted, R);
    fclose(f);
    free(path);
    free(cur);
    free(sorted);
    return rc;
}

int kv__plot_cluster_figs(const char *dir, const kv_summary *s, const char *title, size_t split,
                          double rows, const kv__progress *pg, kv__figlist *out, kv_diag *diag)
{
    const kv_summary_cluster *c = &s->cluster;
    size_t R = c->n_per_replica;
    kv__fig *f = kv__figlist_add(out, "cluster_blocks");
    kv__gpvars_title(&f->vars, title, split);
    kv__gpvars_num(&f->vars, "nrep", (double)R);
    kv__gpvars_num(&f->vars, "nrows", rows);
    kv__gpvars_num(&f->vars, "usable",
                   (double)(s->config.num_blocks ? s->config.num_blocks - 1 : 0));
    if (R <= MAX_LINES && rows > 0) { /* lines: reduced per pixel column (plot_series.c) */
        kv__series_info si;
        int rc = kv__plot_replica_series(dir, s->sim_time_s, R, pg, out, &si, diag);
        if (rc != 0)
            return rc;
        kv__gpvars_str(&f->vars, "data", si.path[0]);
    }
    if (R > MAX_LINES && rows > 0) {
        bands b;
        memset(&b, 0, sizeof b);
        int rc = read_bands(dir, R, s->sim_time_s, &b, diag);
        if (rc != 0) {
            bands_release(&b);
            return rc;
        }
        kv__gpvars_str(&f->vars, "band_t", b.t.s);
        kv__gpvars_str(&f->vars, "band_lo", b.lo.s);
        kv__gpvars_str(&f->vars, "band_p10", b.p10.s);
        kv__gpvars_str(&f->vars, "band_p50", b.p50.s);
        kv__gpvars_str(&f->vars, "band_p90", b.p90.s);
        kv__gpvars_str(&f->vars, "band_hi", b.hi.s);
        bands_release(&b);
    }

    f = kv__figlist_add(out, "cluster_replicas");
    kv__gpvars_title(&f->vars, title, split);
    kv__gpvars_num(&f->vars, "nrep", (double)R);
    kv_buf req = {0}, hit = {0}, fin = {0};
    for (size_t i = 0; i < R; i++) {
        const kv_replica_summary *r = &c->per_replica[i];
        const char *sep = i ? " " : "";
        kv_buf_printf(&req, "%s%llu", sep, (unsigned long long)r->requests);
        kv_buf_printf(&fin, "%s%llu", sep, (unsigned long long)r->finished);
        kv_buf_printf(&hit, "%s%.4f", sep, 100.0 * r->prefix.hit_rate);
    }
    kv__gpvars_str(&f->vars, "rep_requests", req.s ? req.s : "");
    kv__gpvars_str(&f->vars, "rep_finished", fin.s ? fin.s : "");
    kv__gpvars_str(&f->vars, "rep_hit", hit.s ? hit.s : "");
    kv__gpvars_num(&f->vars, "hit_all", 100.0 * s->prefix.hit_rate);
    kv__gpvars_num(&f->vars, "req_gini", c->imbalance.requests_gini);
    kv__gpvars_num(&f->vars, "req_mom", c->imbalance.requests_max_over_mean);
    kv__gpvars_str(&f->vars, "router", c->router ? c->router : "");
    kv_buf_release(&req);
    kv_buf_release(&hit);
    kv_buf_release(&fin);
    return 0;
}
