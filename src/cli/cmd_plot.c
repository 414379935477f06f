/* kvsim plot DIR...: draw the figures of run, sweep and plan output directories with
 * gnuplot (DESIGN §8), and cli_plot_dir, the same for `run --plot`, `sweep --plot` and
 * `plan --plot`.
 *
 * Messages: on success one line on stdout per directory naming the figures (not with
 * --quiet); a missing gnuplot is one note on stderr and exit 0, since the outputs the
 * figures would be drawn from are there; anything else (no such directory, nothing
 * plottable, malformed input, gnuplot failing) is one "kvsim: error:" line and exit 1.
 *
 * Finding the tools is this file's job, not the library's (the core reads no
 * environment): the scripts are $KVSIM_PLOTS when set (no fallback: a wrong override is
 * an error), else the first of plots/, ../plots (a build tree: BUILDDIR/src/kvsim and
 * BUILDDIR/plots, which plots/meson.build fills) and ../share/kvsim/plots (an install)
 * that holds common.gp, relative to the executable's directory; gnuplot is
 * $KVSIM_GNUPLOT when set (a path, or a name searched in PATH), else "gnuplot" in PATH.
 * They are looked up once per command; kv_plot_dir checks them after the directory.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "kvsim/mem.h"
#include "kvsim/plot.h"

typedef struct plot_cmd {
    bool quiet, progress;
} plot_cmd;

static const cli_opt options[] = {
    {"quiet", 'q', NULL, CLI_SET(plot_cmd, quiet), "print nothing on success"},
    {"progress", 0, NULL, CLI_SET(plot_cmd, progress),
     "progress on stderr as a line per file read and per figure drawn,\nalso when stderr "
     "is not a terminal (a terminal gets one line\nrewritten in place without it; -q hides "
     "that)"},
    {0},
};

static const cli_section sections[] = {
    {"options", options, NULL},
    {"environment", NULL,
     "  KVSIM_GNUPLOT  the gnuplot to run (default: gnuplot in PATH); without one kvsim\n"
     "                 prints a note and exits 0\n"
     "  KVSIM_PLOTS    the directory of the gnuplot scripts (default: found from the\n"
     "                 executable: the build tree's plots/, or share/kvsim/plots installed)\n"},
    {0},
};

static const cli_group group = {sections, NULL, NULL};

static const char no_gnuplot_note[] =
    "kvsim: note: gnuplot not found; figures skipped (install gnuplot-nox)\n";

/* The scripts and gnuplot kv_plot_dir is to run (see the top of this file). */
typedef struct plot_tools {
    kv_plot_options opts; /* points into the fields below */
    char *scripts;        /* malloc'd, or NULL when none was found */
    char *gnuplot;        /* malloc'd, or NULL when none was found */
    char scripts_error[sizeof(kv_diag)];
} plot_tools;

static char *scripts_near_executable(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    static const char *const rel[] = {"plots", "../plots", "../share/kvsim/plots"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char dir[PATH_MAX + 32];
        snprintf(dir, sizeof dir, "%s/%s", exe, rel[i]);
        if (kv_plot_is_scripts_dir(dir))
            return kv_xstrdup(dir);
    }
    return NULL;
}

static void plot_tools_init(plot_tools *t)
{
    memset(t, 0, sizeof *t);
    const char *env = getenv("KVSIM_PLOTS");
    if (env && *env) {
        t->scripts = kv_xstrdup(env);
        snprintf(t->scripts_error, sizeof t->scripts_error,
                 "KVSIM_PLOTS='%s' is not a kvsim plots directory (no common.gp)", env);
    } else {
        t->scripts = scripts_near_executable();
        snprintf(t->scripts_error, sizeof t->scripts_error,
                 "cannot find the gnuplot scripts (plots/common.gp); set KVSIM_PLOTS to the "
                 "plots directory");
    }
    const char *name = getenv("KVSIM_GNUPLOT");
    t->gnuplot = kv_plot_find_gnuplot(name && *name ? name : "gnuplot", getenv("PATH"));
    t->opts.scripts = t->scripts;
    t->opts.scripts_error = t->scripts_error;
    t->opts.gnuplot = t->gnuplot;
}

static void plot_tools_release(plot_tools *t)
{
    free(t->scripts);
    free(t->gnuplot);
}

/* Progress on stderr: on a terminal one line rewritten in place (at most 5 times a
 * second, cleared when done); else (--progress) a line per file read and per figure. */
typedef struct progress {
    bool on, tty;
    double last;
} progress;

static void show_progress(void *ctx, const kv_plot_progress *p)
{
    progress *pg = ctx;
    bool edge = p->done == 0 || p->done >= p->total;
    double now = cli_wall_now();
    if (!pg->on || (pg->tty ? !edge && now - pg->last < 0.2 : p->stage == KV_PLOT_READING && !edge))
        return;
    pg->last = now;
    char what[160];
    if (p->stage == KV_PLOT_READING)
        snprintf(what, sizeof what, "reading %s: %.0f%% of %.1f MB", p->file,
                 p->total > 0 ? 100 * p->done / p->total : 100, p->total / 1e6);
    else
        snprintf(what, sizeof what, "drawing: %.0f of %.0f figures done", p->done, p->total);
    fprintf(stderr, pg->tty ? "\rkvsim plot: %s: %s\033[K" : "kvsim plot: %s: %s\n", p->dir, what);
}

static void end_progress(const progress *pg)
{
    if (pg->on && pg->tty)
        fputs("\r\033[K", stderr);
}

/* Plot one directory; *no_gnuplot set when gnuplot is missing (the note is printed once
 * by the caller of this helper). */
static int plot_one(const char *dir, plot_tools *tools, bool quiet, progress *pg, bool *no_gnuplot)
{
    kv_plot_report rep;
    kv_diag d;
    tools->opts.progress = show_progress;
    tools->opts.progress_ctx = pg;
    int rc = kv_plot_dir(dir, &tools->opts, &rep, &d);
    end_progress(pg);
    if (rc == -KV_ENOPROG) {
        *no_gnuplot = true;
        return CLI_OK;
    }
    if (rc != 0)
        return cli_diag(CLI_RUNTIME, &d);
    if (*rep.note && !quiet)
        fprintf(stderr, "kvsim: note: %s\n", rep.note);
    if (rep.n_figures > 0 && !quiet) {
        printf("figures in %s:", dir);
        for (int i = 0; i < rep.n_figures; i++)
            printf("%s %s", i ? "," : "", rep.figures[i]);
        printf(" (.png, .svg)\n");
        if (cli_flush_stdout() != CLI_OK)
            return CLI_RUNTIME;
    }
    return CLI_OK;
}

int cli_plot_dir(const char *dir, bool quiet)
{
    bool no_gnuplot = false;
    plot_tools tools;
    plot_tools_init(&tools);
    progress pg = {!quiet && isatty(2), true, 0};
    int rc = plot_one(dir, &tools, quiet, &pg, &no_gnuplot);
    plot_tools_release(&tools);
    if (no_gnuplot)
        fputs(no_gnuplot_note, stderr);
    return rc;
}

static int exec(void *state, int argc, char **argv)
{
    const plot_cmd *o = state;
    /* Every directory is tried; the exit code is the first failure's. */
    int rc = CLI_OK;
    bool no_gnuplot = false;
    plot_tools tools;
    plot_tools_init(&tools);
    bool tty = isatty(2);
    progress pg = {o->progress || (!o->quiet && tty), tty && !o->progress, 0};
    for (int i = 0; i < argc && !no_gnuplot; i++) {
        int r = plot_one(argv[i], &tools, o->quiet, &pg, &no_gnuplot);
        if (r != CLI_OK && rc == CLI_OK)
            rc = r;
    }
    plot_tools_release(&tools);
    if (no_gnuplot)
        fputs(no_gnuplot_note, stderr);
    return rc;
}

const cli_cmd cli_cmd_plot = {
    .name = "plot",
    .summary = "draw PNG and SVG figures of run, sweep and plan outputs (gnuplot)",
    .synopsis = "DIR... [options]",
    .description =
        "Draw the figures of each output directory with gnuplot, as NAME.png (1200x700) and\n"
        "NAME.svg in that directory:\n"
        "  a run   (timeseries.csv, requests.csv, summary.json; kvsim run --out DIR)\n"
        "          blocks       unique physical vs logical blocks over time, cached-free band,\n"
        "                       usable-capacity and watermark lines\n"
        "          pressure     preemptions and watermark deferrals per interval, running and\n"
        "                       waiting queues\n"
        "          latency_cdf  TTFT and TPOT CDFs with P50/P95/P99 marked\n"
        "  a sweep (sweep.csv)  sweep_block_size, sweep_watermark: metrics against each knob\n"
        "                       that takes two or more values\n"
        "  a plan  (plan.csv, plan.json)  plan_curve: SLO metrics against the arrival rate\n"
        "          (requests/s; the load multiple on the top axis), the answer\n"
        "  a cluster run: cluster_blocks, cluster_replicas, latency_cdf; a router sweep:\n"
        "          sweep_router\n"
        "A run's timeseries.csv and requests.csv are read once and reduced to the figures'\n"
        "resolution first (per pixel column the minimum, maximum and mean, so peaks survive).\n",
    .uses = {{&group, 0}},
    .args = {1, -1, "kvsim plot needs an output DIR (see 'kvsim plot --help')", NULL},
    .state_size = sizeof(plot_cmd),
    .exec = exec,
};
