/* kvsim plot DIR...: draw the figures of run, sweep and plan output directories with
 * gnuplot (DESIGN §8), and cli_plot_dir, the same for `run --plot`, `sweep --plot` and
 * `plan --plot`.
 *
 * Messages: on success one line on stdout per directory naming the figures (not with
 * --quiet); a missing gnuplot is one note on stderr and exit 0, since the outputs the
 * figures would be drawn from are there; anything else (no such directory, nothing
 * plottable, malformed input, gnuplot failing) is one "kvsim: error:" line and exit 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "kvsim/plot.h"

typedef struct plot_cmd {
    bool quiet;
} plot_cmd;

static const cli_opt options[] = {
    {"quiet", 'q', NULL, CLI_SET(plot_cmd, quiet), "print nothing on success"},
    {0},
};

static const cli_section sections[] = {
    {"options", options, NULL},
    {"environment", NULL,
     "  KVSIM_GNUPLOT  the gnuplot to run (default: gnuplot in PATH); without one kvsim\n"
     "                 prints a note and exits 0\n"
     "  KVSIM_PLOTS    the directory of the gnuplot scripts (default: the source tree's\n"
     "                 plots/, or next to the executable)\n"},
    {0},
};

static const cli_group group = {sections, NULL, NULL};

static const char no_gnuplot_note[] =
    "kvsim: note: gnuplot not found; figures skipped (install gnuplot-nox)\n";

/* Plot one directory; *no_gnuplot set when gnuplot is missing (the note is printed once
 * by the caller of this helper). */
static int plot_one(const char *dir, bool quiet, bool *no_gnuplot)
{
    kv_plot_report rep;
    kv_diag d;
    int rc = kv_plot_dir(dir, &rep, &d);
    if (rc == KV_PLOT_NO_GNUPLOT) {
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
        if (fflush(stdout) != 0 || ferror(stdout))
            return cli_error(CLI_RUNTIME, "cannot write to standard output");
    }
    return CLI_OK;
}

int cli_plot_dir(const char *dir, bool quiet)
{
    bool no_gnuplot = false;
    int rc = plot_one(dir, quiet, &no_gnuplot);
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
    for (int i = 0; i < argc && !no_gnuplot; i++) {
        int r = plot_one(argv[i], o->quiet, &no_gnuplot);
        if (r != CLI_OK && rc == CLI_OK)
            rc = r;
    }
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
        "  a plan  (plan.csv, plan.json)  plan_curve: SLO metrics against load, the answer\n",
    .uses = {{&group, 0}},
    .args = {1, -1, "kvsim plot needs an output DIR (see 'kvsim plot --help')", NULL},
    .state_size = sizeof(plot_cmd),
    .exec = exec,
};
