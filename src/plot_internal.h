/* plot_internal.h: what src/plot.c (finding scripts and gnuplot, running it, renaming the
 * figures) shares with src/plot_vars.c (reading a directory's files into the variables
 * each script is given). */
#ifndef KVSIM_PLOT_INTERNAL_H
#define KVSIM_PLOT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "kvsim/plot.h"
#include "kvsim/strbuf.h"

/* A gnuplot `-e` argument is built in a kv_buf: "name = value; name = 'text'; ...". */
void kv__gpvars_num(kv_buf *v, const char *name, double x); /* non-finite: skipped */
/* A string, single-quoted for gnuplot ('' for a quote; control characters become spaces). */
void kv__gpvars_str(kv_buf *v, const char *name, const char *text);

/* One figure to draw: plots/<name>.gp with these variables (plot.c adds dir, outdir,
 * plots and suffix). */
typedef struct kv__fig {
    const char *name; /* static: "blocks", "sweep_watermark", ... */
    kv_buf vars;      /* the figure's own variables */
} kv__fig;

typedef struct kv__figlist {
    kv__fig f[KV_PLOT_MAX_FIGURES];
    int n;
} kv__figlist;

/* A new figure at the end of the list (zeroed vars).  The list has room: callers add at
 * most KV_PLOT_MAX_FIGURES in all (asserted). */
kv__fig *kv__figlist_add(kv__figlist *l, const char *name);
void kv__figlist_release(kv__figlist *l);

/* Append the figures of one kind found in dir.  0 or a negative KV_E* with the diag set.
 * A sweep or plan that supports no figure adds none and explains in note (size note_n). */
int kv__plot_run_figs(const char *dir, kv__figlist *out, kv_diag *diag);
int kv__plot_sweep_figs(const char *dir, kv__figlist *out, char *note, size_t note_n,
                        kv_diag *diag);
int kv__plot_plan_figs(const char *dir, kv__figlist *out, char *note, size_t note_n, kv_diag *diag);

/* A cluster run's own figures (plot_cluster.c): cluster_blocks (physical blocks over time
 * per replica from timeseries.csv, lines up to 16 replicas, quantile bands beyond) and
 * cluster_replicas (routed requests and hit rate per replica, from the summary).  s is
 * the run's summary, title its figure title, rows timeseries.csv's data rows.  0 or
 * -KV_EIO / -KV_EPARSE with the diag set. */
struct kv_summary;
int kv__plot_cluster_figs(const char *dir, const struct kv_summary *s, const char *title,
                          double rows, kv__figlist *out, kv_diag *diag);

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
