/* plot_internal.h: what src/plot.c (finding scripts and gnuplot, running it, renaming the
 * figures) shares with the modules that read a directory's files into the variables and
 * data files each script is given: plot_vars.c (shared helpers, titles, the plan),
 * plot_run.c, plot_series.c, plot_cluster.c, plot_sweep.c and plot_table.c. */
#ifndef KVSIM_PLOT_INTERNAL_H
#define KVSIM_PLOT_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "kvsim/plot.h"
#include "kvsim/strbuf.h"

/* A gnuplot `-e` argument is built in a kv_buf: "name = value; name = 'text'; ...". */
void kv__gpvars_num(kv_buf *v, const char *name, double x); /* non-finite: skipped */
/* A string, single-quoted for gnuplot ('' for a quote; control characters become spaces). */
void kv__gpvars_str(kv_buf *v, const char *name, const char *text);
/* A figure's title as title_info; when it is too long for one line and " · " stands at
 * byte split (after what ran on what), what follows as title_info2, which common.gp puts
 * on a line of its own. */
void kv__gpvars_title(kv_buf *v, const char *title, size_t split);

/* Append sep (when buf is not empty) and text to buf (size n), truncating. */
void kv__add_part(char *buf, size_t n, const char *sep, const char *text);
/* dir/name as a JSON object: 0, or -KV_EPARSE with the diag naming file, line and column. */
int kv__load_json(const char *dir, const char *name, json_t **out, kv_diag *diag);
double kv__jnum(const json_t *root, const char *path);    /* root.a.b; NAN: absent, not a number */
const char *kv__jstr(const json_t *obj, const char *key); /* NULL: absent, not a string */

/* One figure to draw: plots/<name>.gp with these variables (plot.c adds dir, outdir,
 * plots and suffix). */
typedef struct kv__fig {
    const char *name; /* static: "blocks", "sweep_watermark", ... */
    kv_buf vars;      /* the figure's own variables */
} kv__fig;

enum { KV__MAX_DATA = 8 };
typedef struct kv__figlist {
    kv__fig f[KV_PLOT_MAX_FIGURES];
    int n;
    char *data[KV__MAX_DATA]; /* data files written for the figures (tracked, afile.h) */
    int n_data;
} kv__figlist;

/* A new figure at the end of the list (zeroed vars).  The list has room: callers add at
 * most KV_PLOT_MAX_FIGURES in all (asserted). */
kv__fig *kv__figlist_add(kv__figlist *l, const char *name);
/* A data file the figures read: path (malloc'd) is owned and tracked by l from now on,
 * and removed by kv__figlist_release.  At most KV__MAX_DATA (asserted). */
void kv__figlist_add_data(kv__figlist *l, char *path);
void kv__figlist_release(kv__figlist *l);

/* Where a data file NAME goes: dir/NAME.dat.tmp-<pid> (a kvsim temporary, outdir.h). */
char *kv__plot_data_path(const char *dir, const char *name);

/* The caller's progress callback and the directory it is about. */
typedef struct kv__progress {
    kv_plot_progress_fn fn; /* NULL: none */
    void *ctx;
    const char *dir;
} kv__progress;

/* A figure's title: what ran, on what (model, GPU, TP/PP, KV dtype, block size), the same
 * words for every kind of figure.  Parts that are unknown are left out. */
typedef struct kv__setup_text {
    const char *model, *gpu, *kv_dtype;
    double tp, pp, block_size; /* NAN: unknown (a sweep's varying block size) */
} kv__setup_text;
void kv__setup_title(const kv__setup_text *t, char *out, size_t n);

/* ---- a run's long inputs, thinned (plot_series.c) ------------------------------------ */
enum { KV__PIXEL_COLS = 1000 }; /* columns of equal time a long series is reduced to */

typedef struct kv__series_info {
    double rows;         /* timeseries.csv's data rows */
    bool thinned;        /* more than 2 · KV__PIXEL_COLS rows: per-column min/max/mean */
    double bin_s;        /* the width of the pressure bins */
    double bin_max[2];   /* the largest bin of preemptions, of watermark deferrals */
    double max[5];       /* the largest physical, logical, cached-free, running, waiting */
    const char *path[2]; /* the series and bins data files (owned by the figlist) */
} kv__series_info;

/* Read dir/timeseries.csv once over [0, t_end] into the series and bins data files
 * (plot_series.c's top comment has their layout), adding them to figs.  0, or -KV_EIO /
 * -KV_EPARSE with the diag set. */
int kv__plot_series(const char *dir, double t_end, const kv__progress *pg, kv__figlist *figs,
                    kv__series_info *info, kv_diag *diag);

/* A cluster's dir/timeseries.csv (R replicas) into the replicas data file: per pixel
 * column t, the lowest and highest physical blocks of any replica, each replica's mean.
 * info->path[0] is the file.  As above. */
int kv__plot_replica_series(const char *dir, double t_end, size_t R, const kv__progress *pg,
                            kv__figlist *figs, kv__series_info *info, kv_diag *diag);

typedef struct kv__latency_info {
    double n[2], lo[2], hi[2]; /* TTFT, TPOT: values drawn, smallest, largest */
    const char *path[2];       /* their CDF data files (owned by the figlist) */
} kv__latency_info;
/* Read dir/requests.csv once into the TTFT and TPOT CDF data files.  As above. */
int kv__plot_latency(const char *dir, const kv__progress *pg, kv__figlist *figs,
                     kv__latency_info *info, kv_diag *diag);

/* A 1-2-5 value near x (1 for x ≤ 0). */
double kv__nice_125(double x);

/* Append the figures of one kind found in dir.  0 or a negative KV_E* with the diag set.
 * A sweep or plan that supports no figure adds none and explains in note (size note_n). */
int kv__plot_run_figs(const char *dir, const kv__progress *pg, kv__figlist *out, kv_diag *diag);
int kv__plot_sweep_figs(const char *dir, kv__figlist *out, char *note, size_t note_n,
                        kv_diag *diag);
int kv__plot_plan_figs(const char *dir, kv__figlist *out, char *note, size_t note_n, kv_diag *diag);

/* A cluster run's own figures (plot_cluster.c): cluster_blocks (physical blocks over time
 * per replica from timeseries.csv, lines up to 16 replicas, quantile bands beyond) and
 * cluster_replicas (routed requests and hit rate per replica, from the summary).  s is
 * the run's summary, title its figure title (split: kv__gpvars_title), rows
 * timeseries.csv's data rows.  0 or
 * -KV_EIO / -KV_EPARSE with the diag set. */
struct kv_summary;
int kv__plot_cluster_figs(const char *dir, const struct kv_summary *s, const char *title,
                          size_t split, double rows, const kv__progress *pg, kv__figlist *out,
                          kv_diag *diag);

/* ---- CSV tables (plot_table.c) ----------------------------------------------------- */
typedef struct kv__table {
    char *path;    /* dir/name, for messages */
    char **cell;   /* (n_rows + 1) × n_cols strings, row-major, header first; each malloc'd */
    size_t n_cols; /* header fields */
    size_t n_rows; /* data records */
    size_t cap;    /* cells allocated */
} kv__table;

/* Read dir/name.  0, or -KV_EIO (unreadable) / -KV_EPARSE (malformed, too large) with the
 * diag set; t must be released either way. */
int kv__table_load(kv__table *t, const char *dir, const char *name, kv_diag *diag);
void kv__table_release(kv__table *t);
/* Data row `row` (from 0), column col (from kv__col_of, ≥ 0). */
const char *kv__cell(const kv__table *t, size_t row, int col);
int kv__col_of(const kv__table *t, const char *name); /* -1 when absent */
/* 0, or -KV_EPARSE naming the first of names (NULL-terminated) that is not a column. */
int kv__require_cols(const kv__table *t, const char *const *names, kv_diag *diag);
/* A whole field as a finite number (C locale, blanks around allowed). */
bool kv__parse_num(const char *s, double *out);
/* Equal as numbers when both are numbers, else as text. */
bool kv__same_value(const char *a, const char *b);
/* Distinct values in column col. */
size_t kv__n_distinct(const kv__table *t, int col);

#endif
