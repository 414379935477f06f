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

enum { OPT_HELP = 1, OPT_QUIET };

static const cli_opt options[] = {
    {"help", 'h', false, OPT_HELP},
    {"quiet", 'q', false, OPT_QUIET},
    {NULL, 0, false, 0},
};

static const char help[] =
    "usage: kvsim plot DIR... [options]\n"
    "\n"
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
    "  a plan  (plan.csv, plan.json)  plan_curve: SLO metrics against load, the answer\n"
    "\n"
    "  -q, --quiet   print nothing on success\n"
    "\n"
    "environment:\n"
    "  KVSIM_GNUPLOT  the gnuplot to run (default: gnuplot in PATH); without one kvsim\n"
    "                 prints a note and exits 0\n"
    "  KVSIM_PLOTS    the directory of the gnuplot scripts (default: the source tree's\n"
    "                 plots/, or next to the executable)\n";

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

int cmd_plot(int argc, char **argv)
{
    const cli_opt *tables[] = {options, NULL};
    cli_parser p;
    cli_parser_init(&p, "plot", argc, argv, tables);
    bool quiet = false;
    int rc = CLI_OK, id;
    const char *arg;
    while (rc == CLI_OK && (id = cli_next(&p, &arg)) != CLI_OPT_END) {
        if (id == CLI_OPT_ERROR)
            rc = CLI_USAGE;
        else if (id == OPT_HELP) {
            fputs(help, stdout);
            cli_parser_release(&p);
            return CLI_OK;
        } else if (id == OPT_QUIET)
            quiet = true;
    }
    if (rc == CLI_OK && p.n_positional == 0)
        rc = cli_error(CLI_USAGE, "kvsim plot needs an output DIR (see 'kvsim plot --help')");
    /* Every directory is tried; the exit code is the first failure's. */
    bool no_gnuplot = false;
    for (int i = 0; rc != CLI_USAGE && i < p.n_positional && !no_gnuplot; i++) {
        int r = plot_one(p.positional[i], quiet, &no_gnuplot);
        if (r != CLI_OK && rc == CLI_OK)
            rc = r;
    }
    if (no_gnuplot)
        fputs(no_gnuplot_note, stderr);
    cli_parser_release(&p);
    return rc;
}
