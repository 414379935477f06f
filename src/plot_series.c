/* plot_series: a run's long inputs reduced in C to what a figure can show, before
 * gnuplot sees them (plot_internal.h).
 *
 * A million-request run has a requests.csv of 140 MB and a timeseries.csv of tens of
 * thousands to millions of rows; gnuplot reading them row by row, several times per
 * figure, took minutes.  So this file reads each file once, streaming, and writes small
 * whitespace-separated data files the scripts draw as they are:
 *
 *   series  timeseries.csv in PIXEL_COLS columns of equal simulated time over [0, t_end]:
 *           per column and per series (physical, logical and cached-free blocks, running
 *           and waiting requests) the minimum, the maximum and the time-weighted mean
 *           (a row's value holds until the next row, in every column it reaches).  The
 *           minimum and maximum keep every peak and dip at the figure's resolution; the
 *           mean is the line a reader follows (a series that swings by thousands of
 *           blocks from one step to the next is a solid band as a line, a band and a
 *           line as min/max and mean).  A short series (at most 2·PIXEL_COLS rows) is
 *           written row by row (min = max = mean = the row's value): nothing is thinned.
 *   bins    the increase of the cumulative preemptions and watermark_deferrals counters
 *           per time bin of a 1-2-5 width giving about 100 bins, exactly: a row's
 *           increase over the previous row goes to the bin of its time.
 *   replicas  a cluster's timeseries.csv (rows of every replica, a replica column), for
 *           up to 16 replicas: per pixel column the lowest and highest physical blocks of
 *           any replica (the peaks) and each replica's time-weighted mean.
 *   cdf     per latency (TTFT, TPOT) the empirical CDF of the finished requests' positive
 *           values, thinned for a log-x plot: a point is kept when it moves the curve by
 *           at least 1/CDF_STEPS of the decades spanned or of the height, and the first
 *           and last points always, so the extremes survive.
 *
 * Columns are found by header name, so added columns (a cluster's replica, num_cached
 * tokens) shift nothing.  Complexity: one pass per file, O(rows) time; memory
 * O(PIXEL_COLS + bins) for the series and O(finished requests) for the CDFs (the values
 * are sorted).  A malformed row is an error naming file and line.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kvsim/mem.h"
#include "kvsim/metrics.h"
#include "kvsim/path.h"
#include "plot_internal.h"

enum { CDF_STEPS = 2000, PROGRESS_BYTES = 4 << 20 };

/* ---- reading a CSV by column name --------------------------------------------------- */

typedef struct csv_in {
    FILE *f;
    char *path; /* for messages */
    char *line;
    size_t cap;
    unsigned long lineno;
    double size, done; /* bytes, for progress */
    double next_report;
    const kv__progress *pg;
    const char *name;
} csv_in;

static void report(csv_in *c)
{
    if (c->pg && c->pg->fn) {
        kv_plot_progress p = {c->pg->dir, KV_PLOT_READING, c->name, c->done, c->size};
        c->pg->fn(c->pg->ctx, &p);
    }
}

static int csv_open(csv_in *c, const char *dir, const char *name, const kv__progress *pg,
                    kv_diag *diag)
{
    memset(c, 0, sizeof *c);
    c->path = kv_path_join(dir, name);
    c->name = name;
    c->pg = pg;
    c->f = fopen(c->path, "rb");
    if (!c->f)
        return kv_diag_set(diag, -KV_EIO, "cannot open '%s': %s", c->path, strerror(errno));
    struct stat st;
    c->size = fstat(fileno(c->f), &st) == 0 ? (double)st.st_size : 0;
    report(c);
    c->next_report = PROGRESS_BYTES;
    return 0;
}

static void csv_close(csv_in *c)
{
    if (c->f) {
        c->done = c->size;
        report(c);
        fclose(c->f);
    }
    free(c->path);
    free(c->line);
    memset(c, 0, sizeof *c);
}

/* The next line without its end, or NULL at the end (or on a read error: check ferror). */
static char *csv_next(csv_in *c)
{
    ssize_t n = getline(&c->line, &c->cap, c->f);
    if (n < 0)
        return NULL;
    c->lineno++;
    c->done += (double)n;
    if (c->done >= c->next_report) {
        report(c);
        c->next_report = c->done + PROGRESS_BYTES;
    }
    while (n > 0 && (c->line[n - 1] == '\n' || c->line[n - 1] == '\r'))
        c->line[--n] = '\0';
    return c->line;
}

/* Split line in place into at most max fields (quotes honoured, "" inside a quoted field
 * left doubled: only numbers and plain words are read from the fields).  Returns the
 * field count, or -1 for an unterminated quote. */
static int split(char *line, char **field, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n < max)
            field[n] = p;
        n++;
        if (*p == '"') {
            p++;
            while (*p && !(*p == '"' && p[1] != '"'))
                p += *p == '"' ? 2 : 1;
            if (!*p)
                return -1;
            p++;
        }
        while (*p && *p != ',')
            p++;
        if (!*p)
            return n;
        *p++ = '\0';
    }
}

/* Find each of names[0..k) in the header: idx[i], or an error naming the first missing. */
static int header_cols(csv_in *c, const char *const *names, int k, int *idx, kv_diag *diag)
{
    char *line = csv_next(c);
    if (!line)
        return kv_diag_set(diag, -KV_EPARSE, "%s: empty file (no header)", c->path);
    char *field[256];
    int n = split(line, field, 256);
    n = n > 256 ? 256 : n;
    for (int i = 0; i < k; i++) {
        idx[i] = -1;
        for (int j = 0; j < n && idx[i] < 0; j++)
            if (strcmp(field[j], names[i]) == 0)
                idx[i] = j;
        if (idx[i] < 0)
            return kv_diag_set(diag, -KV_EPARSE, "%s: no column '%s'", c->path, names[i]);
    }
    return 0;
}

static bool num(const char *s, double *out)
{
    char *end;
    if (!*s)
        return false;
    *out = strtod(s, &end);
    return *end == '\0' && isfinite(*out);
}

/* ---- writing a data file ------------------------------------------------------------ */

/* Open path for writing; the path is tracked (afile.h) until kv__figlist_release. */
static FILE *data_open(kv__figlist *figs, char *path, kv_diag *diag, int *rc)
{
    kv__figlist_add_data(figs, path);
    FILE *f = fopen(path, "w");
    if (!f)
        *rc = kv_diag_set(diag, -KV_EIO, "cannot write '%s': %s", path, strerror(errno));
    return f;
}

static int data_close(FILE *f, const char *path, kv_diag *diag)
{
    bool bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    return bad ? kv_diag_set(diag, -KV_EIO, "cannot write '%s': %s", path, strerror(errno)) : 0;
}

/* ---- the time series ---------------------------------------------------------------- */

enum { N_SERIES = 5, N_COUNTERS = 2 };
static const char *const ts_cols[N_SERIES + N_COUNTERS + 1] = {
    "time_s",  "physical_blocks", "logical_blocks", "cached_free_blocks",
    "running", "waiting",         "preemptions",    "watermark_deferrals"};

typedef struct pixel {
    double min[N_SERIES], max[N_SERIES], wsum[N_SERIES], sum[N_SERIES];
    double w; /* seconds of the column the rows cover */
    size_t n; /* rows */
} pixel;

typedef struct row {
    double t, v[N_SERIES];
} row;

typedef struct series_pass {
    double t_end, width, bin_s;
    pixel *px;
    row *raw; /* the first 2·PIXEL_COLS rows, for a short series */
    size_t n_rows;
    double *bins[N_COUNTERS];
    size_t n_bins;
    double last_count[N_COUNTERS];
    row prev; /* the row before, waiting for its duration */
    kv__series_info *info;
} series_pass;

static size_t pixel_of(const series_pass *s, double t)
{
    double c = s->width > 0 ? floor(t / s->width) : 0;
    return c < 0 ? 0 : c >= KV__PIXEL_COLS ? KV__PIXEL_COLS - 1 : (size_t)c;
}

/* Row r's value held for w seconds of column p. */
static void credit(series_pass *s, pixel *p, const row *r, double w)
{
    for (int k = 0; k < N_SERIES; k++) {
        double v = r->v[k];
        p->min[k] = p->n == 0 || v < p->min[k] ? v : p->min[k];
        p->max[k] = p->n == 0 || v > p->max[k] ? v : p->max[k];
        p->wsum[k] += v * w;
        p->sum[k] += v;
        s->info->max[k] = fmax(s->info->max[k], v);
    }
    p->w += w;
    p->n++;
}

/* Row r holds until t_next (the last row: t_next = its own time, weight 0): every column
 * the interval covers gets it, with the seconds it covers there.  Rows come in time
 * order, so all rows together visit O(rows + columns) columns. */
static void add_row(series_pass *s, const row *r, double t_next)
{
    size_t c0 = pixel_of(s, r->t), c1 = t_next > r->t ? pixel_of(s, t_next) : c0;
    for (size_t c = c0; c <= c1; c++) {
        double lo = fmax(r->t, (double)c * s->width), hi = fmin(t_next, (double)(c + 1) * s->width);
        double w = hi > lo ? hi - lo : 0;
        if (c == c0 || w > 0) /* t_next on a column's start does not reach into it */
            credit(s, &s->px[c], r, w);
    }
}

static void add_counts(series_pass *s, double t, const double *count)
{
    double b = floor(t / s->bin_s);
    size_t i = b < 0 ? 0 : b >= (double)s->n_bins ? s->n_bins - 1 : (size_t)b;
    for (int k = 0; k < N_COUNTERS; k++) {
        s->bins[k][i] += count[k] - s->last_count[k];
        s->last_count[k] = count[k];
    }
}

/* A 1-2-5 width near x. */
double kv__nice_125(double x)
{
    if (!(x > 0))
        return 1;
    double e = pow(10, floor(log10(x))), m = x / e;
    return e * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
}

static int read_series(csv_in *c, series_pass *s, kv_diag *diag)
{
    int idx[N_SERIES + N_COUNTERS + 1];
    int rc = header_cols(c, ts_cols, N_SERIES + N_COUNTERS + 1, idx, diag);
    char *line, *field[64];
    while (rc == 0 && (line = csv_next(c))) {
        if (!*line)
            continue;
        int n = split(line, field, 64);
        row r;
        double count[N_COUNTERS];
        bool ok = n > 0;
        for (int k = 0; ok && k < N_SERIES + N_COUNTERS + 1; k++) {
            double *dst = k == 0 ? &r.t : k <= N_SERIES ? &r.v[k - 1] : &count[k - 1 - N_SERIES];
            ok = idx[k] < n && idx[k] < 64 && num(field[idx[k]], dst);
        }
        if (!ok) {
            rc = kv_diag_set(diag, -KV_EPARSE, "%s:%lu: not a timeseries row", c->path, c->lineno);
            break;
        }
        if (s->n_rows > 0)
            add_row(s, &s->prev, r.t);
        if (s->n_rows < 2 * KV__PIXEL_COLS)
            s->raw[s->n_rows] = r;
        add_counts(s, r.t, count);
        s->prev = r;
        s->n_rows++;
    }
    if (rc == 0 && ferror(c->f))
        rc = kv_diag_set(diag, -KV_EIO, "cannot read '%s'", c->path);
    if (rc == 0 && s->n_rows > 0)
        add_row(s, &s->prev, s->prev.t);
    return rc;
}

/* One data line per pixel column (or per row): t, then min max mean of each series. */
static void write_series(FILE *f, const series_pass *s)
{
    bool thin = s->n_rows > 2 * KV__PIXEL_COLS;
    size_t n = thin ? KV__PIXEL_COLS : s->n_rows;
    for (size_t i = 0; i < n; i++) {
        if (thin && s->px[i].n == 0)
            continue;
        const pixel *p = &s->px[i];
        fprintf(f, "%.9g", thin ? ((double)i + 0.5) * s->width : s->raw[i].t);
        for (int k = 0; k < N_SERIES; k++) {
            if (!thin) {
                fprintf(f, " %.10g %.10g %.10g", s->raw[i].v[k], s->raw[i].v[k], s->raw[i].v[k]);
                continue;
            }
            double mean = p->w > 0 ? p->wsum[k] / p->w : p->sum[k] / (double)p->n;
            fprintf(f, " %.10g %.10g %.10g", p->min[k], p->max[k], mean);
        }
        fputc('\n', f);
    }
}

static void write_bins(FILE *f, const series_pass *s)
{
    for (size_t i = 0; i < s->n_bins; i++)
        fprintf(f, "%.9g %.10g %.10g\n", ((double)i + 0.5) * s->bin_s, s->bins[0][i],
                s->bins[1][i]);
}

int kv__plot_series(const char *dir, double t_end, const kv__progress *pg, kv__figlist *figs,
                    kv__series_info *info, kv_diag *diag)
{
    memset(info, 0, sizeof *info);
    series_pass s;
    memset(&s, 0, sizeof s);
    s.info = info;
    s.t_end = t_end > 0 ? t_end : 1;
    s.width = s.t_end / KV__PIXEL_COLS;
    s.bin_s = kv__nice_125(s.t_end / 100.0);
    s.n_bins = (size_t)floor(s.t_end / s.bin_s) + 1;
    s.px = kv_xcalloc(KV__PIXEL_COLS, sizeof *s.px);
    s.raw = kv_xmalloc(2 * KV__PIXEL_COLS * sizeof *s.raw);
    for (int k = 0; k < N_COUNTERS; k++)
        s.bins[k] = kv_xcalloc(s.n_bins, sizeof *s.bins[k]);
    csv_in c;
    int rc = csv_open(&c, dir, "timeseries.csv", pg, diag);
    if (rc == 0)
        rc = read_series(&c, &s, diag);
    csv_close(&c);
    info->rows = (double)s.n_rows;
    info->thinned = s.n_rows > 2 * KV__PIXEL_COLS;
    info->bin_s = s.bin_s;
    for (size_t i = 0; i < s.n_bins; i++)
        for (int k = 0; k < N_COUNTERS; k++)
            info->bin_max[k] = fmax(info->bin_max[k], s.bins[k][i]);
    const char *names[2] = {"series", "bins"};
    for (int k = 0; rc == 0 && k < 2; k++) {
        char *path = kv__plot_data_path(dir, names[k]);
        FILE *f = data_open(figs, path, diag, &rc);
        if (f) {
            (k == 0 ? write_series : write_bins)(f, &s);
            rc = data_close(f, path, diag);
        }
        info->path[k] = path;
    }
    free(s.px);
    free(s.raw);
    for (int k = 0; k < N_COUNTERS; k++)
        free(s.bins[k]);
    return rc;
}

/* ---- a cluster's replicas ------------------------------------------------------------ */

/* Per replica, its own rows (a row holds until that replica's next row). */
typedef struct replica_pass {
    series_pass s; /* width and info shared; px unused */
    pixel *px;     /* R × KV__PIXEL_COLS */
    row *prev;     /* R: each replica's last row */
    bool *seen;
} replica_pass;

static int read_replicas(csv_in *c, replica_pass *rp, size_t R, kv_diag *diag)
{
    static const char *const cols[3] = {"time_s", "replica", "physical_blocks"};
    int idx[3];
    int rc = header_cols(c, cols, 3, idx, diag);
    char *line, *field[64];
    while (rc == 0 && (line = csv_next(c))) {
        if (!*line)
            continue;
        int n = split(line, field, 64);
        row r = {0};
        double rep = -1;
        bool ok = n > 0 && idx[0] < n && idx[1] < n && idx[2] < n && idx[2] < 64 &&
                  num(field[idx[0]], &r.t) && num(field[idx[1]], &rep) &&
                  num(field[idx[2]], &r.v[0]) && rep >= 0 && rep < (double)R;
        if (!ok) {
            rc = kv_diag_set(diag, -KV_EPARSE, "%s:%lu: not a cluster timeseries row", c->path,
                             c->lineno);
            break;
        }
        size_t k = (size_t)rep;
        rp->s.px = rp->px + k * KV__PIXEL_COLS;
        if (rp->seen[k])
            add_row(&rp->s, &rp->prev[k], r.t);
        rp->prev[k] = r;
        rp->seen[k] = true;
        rp->s.n_rows++;
    }
    if (rc == 0 && ferror(c->f))
        rc = kv_diag_set(diag, -KV_EIO, "cannot read '%s'", c->path);
    for (size_t k = 0; rc == 0 && k < R; k++)
        if (rp->seen[k]) {
            rp->s.px = rp->px + k * KV__PIXEL_COLS;
            add_row(&rp->s, &rp->prev[k], rp->prev[k].t);
        }
    return rc;
}

/* Per pixel column: t, the lowest and highest physical blocks of any replica, then each
 * replica's time-weighted mean (NaN where it has no row yet). */
static void write_replicas(FILE *f, const replica_pass *rp, size_t R)
{
    for (size_t i = 0; i < KV__PIXEL_COLS; i++) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t k = 0; k < R; k++) {
            const pixel *p = &rp->px[k * KV__PIXEL_COLS + i];
            if (p->n) {
                lo = fmin(lo, p->min[0]);
                hi = fmax(hi, p->max[0]);
            }
        }
        if (!(lo <= hi))
            continue;
        fprintf(f, "%.9g %.10g %.10g", ((double)i + 0.5) * rp->s.width, lo, hi);
        for (size_t k = 0; k < R; k++) {
            const pixel *p = &rp->px[k * KV__PIXEL_COLS + i];
            if (p->n)
                fprintf(f, " %.10g", p->w > 0 ? p->wsum[0] / p->w : p->sum[0] / (double)p->n);
            else
                fputs(" NaN", f);
        }
        fputc('\n', f);
    }
}

int kv__plot_replica_series(const char *dir, double t_end, size_t R, const kv__progress *pg,
                            kv__figlist *figs, kv__series_info *info, kv_diag *diag)
{
    memset(info, 0, sizeof *info);
    replica_pass rp;
    memset(&rp, 0, sizeof rp);
    rp.s.info = info;
    rp.s.t_end = t_end > 0 ? t_end : 1;
    rp.s.width = rp.s.t_end / KV__PIXEL_COLS;
    rp.px = kv_xcalloc(R * KV__PIXEL_COLS, sizeof *rp.px);
    rp.prev = kv_xcalloc(R, sizeof *rp.prev);
    rp.seen = kv_xcalloc(R, sizeof *rp.seen);
    csv_in c;
    int rc = csv_open(&c, dir, "timeseries.csv", pg, diag);
    if (rc == 0)
        rc = read_replicas(&c, &rp, R, diag);
    csv_close(&c);
    info->rows = (double)rp.s.n_rows;
    info->thinned = true;
    if (rc == 0) {
        char *path = kv__plot_data_path(dir, "replicas");
        FILE *f = data_open(figs, path, diag, &rc);
        if (f) {
            write_replicas(f, &rp, R);
            rc = data_close(f, path, diag);
        }
        info->path[0] = path;
    }
    free(rp.px);
    free(rp.prev);
    free(rp.seen);
    return rc;
}

/* ---- latency CDFs ------------------------------------------------------------------- */

typedef struct values {
    double *v;
    size_t n, cap;
} values;

static void push(values *a, double x)
{
    void *p = a->v;
    kv_grow(&p, &a->cap, a->n + 1, sizeof *a->v);
    a->v = p;
    a->v[a->n++] = x;
}

static int read_latencies(csv_in *c, values *val, kv_diag *diag)
{
    static const char *const names[3] = {"status", "ttft_s", "tpot_s"};
    int idx[3];
    int rc = header_cols(c, names, 3, idx, diag);
    char *line, *field[64];
    while (rc == 0 && (line = csv_next(c))) {
        if (!*line)
            continue;
        int n = split(line, field, 64);
        if (n < 0 || idx[0] >= n || idx[1] >= n || idx[2] >= n) {
            rc = kv_diag_set(diag, -KV_EPARSE, "%s:%lu: not a requests row", c->path, c->lineno);
            break;
        }
        if (strcmp(field[idx[0]], "finished") != 0)
            continue;
        for (int k = 0; k < 2; k++) {
            double x;
            if (num(field[idx[k + 1]], &x) && x > 0) /* empty: undefined (one-token TPOT) */
                push(&val[k], x);
        }
    }
    if (rc == 0 && ferror(c->f))
        rc = kv_diag_set(diag, -KV_EIO, "cannot read '%s'", c->path);
    return rc;
}

/* The sorted values a[0..n) as "x F" points, thinned for a log-x step plot. */
static void write_cdf(FILE *f, const double *a, size_t n)
{
    if (n == 0)
        return;
    double dx = (log10(a[n - 1]) - log10(a[0])) / CDF_STEPS, dy = 1.0 / CDF_STEPS;
    double kx = 0, ky = -1;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && a[i + 1] == a[i])
            continue; /* a step's top: the last of equal values */
        double y = (double)(i + 1) / (double)n, lx = log10(a[i]);
        if (i + 1 == n || ky < 0 || lx - kx >= dx || y - ky >= dy) {
            fprintf(f, "%.9g %.9g\n", a[i], y);
            kx = lx;
            ky = y;
        }
    }
}

int kv__plot_latency(const char *dir, const kv__progress *pg, kv__figlist *figs,
                     kv__latency_info *info, kv_diag *diag)
{
    memset(info, 0, sizeof *info);
    values val[2] = {{0}, {0}};
    csv_in c;
    int rc = csv_open(&c, dir, "requests.csv", pg, diag);
    if (rc == 0)
        rc = read_latencies(&c, val, diag);
    csv_close(&c);
    static const char *const names[2] = {"cdf_ttft", "cdf_tpot"};
    for (int k = 0; k < 2; k++) {
        if (val[k].n > 1)
            kv_sort_doubles(val[k].v, val[k].n);
        info->n[k] = (double)val[k].n;
        info->lo[k] = val[k].n ? val[k].v[0] : NAN;
        info->hi[k] = val[k].n ? val[k].v[val[k].n - 1] : NAN;
        if (rc == 0) {
            char *path = kv__plot_data_path(dir, names[k]);
            FILE *f = data_open(figs, path, diag, &rc);
            if (f) {
                write_cdf(f, val[k].v, val[k].n);
                rc = data_close(f, path, diag);
            }
            info->path[k] = path;
        }
        free(val[k].v);
    }
    return rc;
}
