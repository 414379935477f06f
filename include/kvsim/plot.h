/* plot: kvsim's figures, drawn by gnuplot from what an output directory holds (DESIGN §8).
 *
 * kv_plot_dir looks at a directory, decides which figures its files support, and runs the
 * gnuplot scripts of plots/ on them, one gnuplot process per figure (fork/exec, no shell;
 * every parameter a script needs travels as a gnuplot `-e` assignment).  Each figure is
 * written as NAME.png (pngcairo) and NAME.svg, 1200×700, into the same directory, under
 * temporary names renamed into place only after gnuplot succeeded.
 *
 *   a run    timeseries.csv + requests.csv + summary.json  → blocks, pressure, latency_cdf
 *            (a cluster: cluster_blocks, cluster_replicas, latency_cdf).  The long CSVs
 *            are read once in C and reduced to a figure's resolution (src/plot_series.c)
 *            into temporary data files beside the figures, removed when gnuplot is done.
 *   a sweep  sweep.csv → sweep_block_size, sweep_watermark (each only when that knob takes
 *            two or more values), sweep_router (two or more routers)
 *   a plan   plan.csv (+ plan.json for the SLO thresholds) → plan_curve
 *
 * Where things are found is the caller's business: the library reads no environment
 * and compiles in no path.  The caller passes a kv_plot_options with the scripts'
 * directory and the gnuplot to run; kvsim's CLI (src/cli/cmd_plot.c) takes them from
 * $KVSIM_PLOTS and $KVSIM_GNUPLOT, else from its executable's location and PATH, with
 * kv_plot_is_scripts_dir and kv_plot_find_gnuplot below.  No gnuplot is
 * -KV_ENOPROG, which the caller reports and carries on.
 *
 * The library prints nothing: results are return codes, a kv_plot_report and a kv_diag.
 */
#ifndef KVSIM_PLOT_H
#define KVSIM_PLOT_H

#include <stdbool.h>

#include "kvsim/error.h"

/* What a directory holds (kv_plot_detect's mask). */
enum {
    KV_PLOT_RUN = 1 << 0,   /* timeseries.csv, requests.csv and summary.json */
    KV_PLOT_SWEEP = 1 << 1, /* sweep.csv */
    KV_PLOT_PLAN = 1 << 2,  /* plan.csv */
};

enum { KV_PLOT_MAX_FIGURES = 8 };

typedef struct kv_plot_report {
    unsigned kinds;                           /* KV_PLOT_* mask of what the directory holds */
    int n_figures;                            /* figures written; each is NAME.png and NAME.svg */
    const char *figures[KV_PLOT_MAX_FIGURES]; /* their NAMEs (static strings), in order */
    char note[256]; /* why something found gave no figure ("sweep.csv varies neither
                       block size nor watermark"), or "" */
} kv_plot_report;

/* Progress while a directory is plotted: reading a run's CSVs (bytes of the file), then
 * drawing (figures finished).  Called at each file's start and end, every few MiB, and
 * as each figure is finished. */
typedef enum kv_plot_stage { KV_PLOT_READING, KV_PLOT_DRAWING } kv_plot_stage;
typedef struct kv_plot_progress {
    const char *dir; /* the directory being plotted */
    kv_plot_stage stage;
    const char *file;   /* KV_PLOT_READING: the file's name ("requests.csv"); else NULL */
    double done, total; /* bytes read of the file's size; figures drawn of the figures */
} kv_plot_progress;
typedef void (*kv_plot_progress_fn)(void *ctx, const kv_plot_progress *p);

/* What kv_plot_dir runs.  The strings are the caller's and must outlive the call. */
typedef struct kv_plot_options {
    const char *scripts;          /* directory of the gnuplot scripts (common.gp and one
                                     NAME.gp per figure); NULL when the caller found none */
    const char *scripts_error;    /* the diag when scripts is NULL or no scripts directory,
                                     worded by the caller, who knows where it looked; NULL:
                                     a generic one naming scripts */
    const char *gnuplot;          /* the gnuplot executable (a path, kv_plot_find_gnuplot);
                                     NULL when there is none: -KV_ENOPROG */
    kv_plot_progress_fn progress; /* NULL: none */
    void *progress_ctx;
} kv_plot_options;

/* The figures one kind of directory can get (kind: one KV_PLOT_* bit), NULL-terminated:
 * each is NAME.png and NAME.svg.  An output directory kvsim replaces as a whole may hold
 * them (outdir.h). */
const char *const *kv_plot_figure_names(unsigned kind);

/* The KV_PLOT_* mask for dir; 0 when it holds nothing plottable or is not a directory.
 * Cannot fail. */
unsigned kv_plot_detect(const char *dir);

/* Draw every figure dir supports, with the scripts and gnuplot of *opts (not NULL).
 * Checks in this order: dir, then gnuplot, then the scripts.  Returns 0 (figures listed
 * in *rep; possibly none, with rep->note saying why), or a negative KV_E* with the diag
 * set: -KV_ENOPROG no gnuplot (nothing written: a caller may carry on without figures); -KV_ENOENT
 * dir missing, not a directory, holding nothing plottable, or opts->scripts NULL or without
 * common.gp (opts->scripts_error); -KV_EPARSE an input file malformed (summary.json, sweep.csv,
 * plan.csv/plan.json); -KV_EIO gnuplot failed (its error in one line) or a file could not
 * be renamed.  The figures are drawn concurrently; when one fails, the others that
 * succeeded are kept (and listed in *rep), and no half-written figure is left behind. */
int kv_plot_dir(const char *dir, const kv_plot_options *opts, kv_plot_report *rep, kv_diag *diag);

/* Whether dir is a scripts directory (holds common.gp); false for NULL or "".  Cannot
 * fail. */
bool kv_plot_is_scripts_dir(const char *dir);

/* The gnuplot to run, as a malloc'd path, or NULL if there is none.  name holding a '/'
 * is a path, taken if it is an executable file; otherwise it is searched in the
 * colon-separated directories of path_list (PATH's syntax; empty entries skipped),
 * or in /usr/local/bin:/usr/bin:/bin when path_list is NULL. */
char *kv_plot_find_gnuplot(const char *name, const char *path_list);

#endif
