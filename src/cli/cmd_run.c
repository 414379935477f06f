/* kvsim run TRACE: replay a trace and report blocks, admissions, preemptions, prefix hits
 * and latency (DESIGN §8).  Flow: options → model setup → trace → engine (streaming
 * timeseries rows into a temp file) → summary → atomic commit of every output file →
 * human summary (or --json) on stdout.  Any error before the commit leaves no output file
 * behind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/sim.h"
#include "kvsim/mem.h"
#include "kvsim/report.h"

enum { OPT_HELP = 1, OPT_OUT, OPT_SAMPLE_EVERY, OPT_JSON, OPT_QUIET, OPT_PLOT };

static const cli_opt options[] = {
    {"help", 'h', false, OPT_HELP},
    {"out", 'o', true, OPT_OUT},
    {"sample-every", 0, true, OPT_SAMPLE_EVERY},
    {"json", 0, false, OPT_JSON},
    {"quiet", 'q', false, OPT_QUIET},
    {"plot", 0, false, OPT_PLOT},
    {NULL, 0, false, 0},
};

static void help(void)
{
    fputs("usage: kvsim run TRACE [options]\n"
          "\n"
          "Replay a request trace through a vLLM-v1-style paged KV block pool and scheduler.\n"
          "Prints a summary; with --out DIR also writes summary.json, perf.json,\n"
          "timeseries.csv and requests.csv there (each atomically).\n"
          "\n"
          "output:\n"
          "  -o, --out DIR            write the output files into DIR (created if missing)\n"
          "      --sample-every N     one timeseries.csv row every N steps (default: 1 for\n"
          "                           traces below 40,000 requests, else requests / 20,000)\n"
          "      --json               print summary.json instead of the human summary\n"
          "  -q, --quiet              print nothing on success\n"
          "      --plot               also draw the figures into DIR with gnuplot (needs\n"
          "                           --out; see 'kvsim plot --help')\n",
          stdout);
    fputs(cli_sim_opts_help, stdout);
    fputs(cli_model_opts_help, stdout);
}

typedef struct progress {
    bool on;
    double last;
} progress;

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_progress(void *ctx, const kv_progress *pg)
{
    progress *p = ctx;
    double t = wall_now();
    if (!p->on || t - p->last < 0.2)
        return;
    p->last = t;
    fprintf(stderr, "\rkvsim: simulated %.1f s, %llu/%llu requests arrived, %llu finished   ",
            (double)pg->now_ns / 1e9, (unsigned long long)pg->arrived,
            (unsigned long long)pg->total, (unsigned long long)pg->finished);
}

/* Observers need one ctx: the output writer, and progress. */
typedef struct observers {
    kv_out *out;
    progress prog;
} observers;

static void obs_sample(void *ctx, const kv_sample *s)
{
    kv_out_sample(((observers *)ctx)->out, s);
}

static void obs_progress(void *ctx, const kv_progress *p)
{
    on_progress(&((observers *)ctx)->prog, p);
}

static json_t *perf_json(double wall, const kv_run_result *r)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    json_t *p = json_object();
    json_object_set_new(p, "wall_s", json_real(wall));
    json_object_set_new(p, "max_rss_bytes", json_integer((json_int_t)ru.ru_maxrss * 1024));
    json_object_set_new(p, "requests", json_integer((json_int_t)r->n));
    json_object_set_new(p, "steps", json_integer((json_int_t)r->stats.steps));
    json_object_set_new(p, "sim_requests_per_s", json_real(wall > 0 ? (double)r->n / wall : 0));
    json_object_set_new(p, "steps_per_s", json_real(wall > 0 ? (double)r->stats.steps / wall : 0));
    json_object_set_new(p, "sim_seconds_per_wall_second",
                        json_real(wall > 0 ? (double)r->sim_time_ns / 1e9 / wall : 0));
    return p;
}

int cmd_run(int argc, char **argv)
{
    const cli_opt *tables[] = {options, cli_sim_options, cli_model_options, NULL};
    cli_parser p;
    cli_parser_init(&p, "run", argc, argv, tables);
    kv_sim_options so;
    kv_setup_options mo;
    kv_sim_options_init(&so);
    kv_setup_options_init(&mo);
    const char *out_dir = NULL;
    uint32_t sample_every = 0; /* 0: the default for the trace's size */
    bool json_out = false, quiet = false, plot = false;
    int rc = CLI_OK, id;
    const char *arg;
    while (rc == CLI_OK && (id = cli_next(&p, &arg)) != CLI_OPT_END) {
        if (id == CLI_OPT_ERROR)
            rc = CLI_USAGE;
        else if (id == OPT_HELP) {
            help();
            cli_parser_release(&p);
            return CLI_OK;
        } else if (id == OPT_OUT)
            out_dir = arg;
        else if (id == OPT_SAMPLE_EVERY)
            rc = cli_parse_u32("sample-every", arg, 1, UINT32_MAX, &sample_every);
        else if (id == OPT_JSON)
            json_out = true;
        else if (id == OPT_QUIET)
            quiet = true;
        else if (id == OPT_PLOT)
            plot = true;
        else if (cli_sim_opts_owns(id))
            rc = cli_sim_opts_handle(&so, id, arg);
        else if (cli_model_opts_owns(id))
            rc = cli_model_opts_handle(&mo, id, arg);
    }
    if (rc == CLI_OK && p.n_positional != 1)
        rc = cli_error(CLI_USAGE,
                       p.n_positional ? "kvsim run takes one TRACE, got %d"
                                      : "kvsim run needs a TRACE file%.0d",
                       p.n_positional);
    if (rc == CLI_OK && plot && !out_dir)
        rc = cli_error(CLI_USAGE, "--plot needs --out DIR (the figures are drawn from the "
                                  "files written there)");
    const char *trace_path = rc == CLI_OK ? p.positional[0] : NULL;

    kv_setup setup;
    if (rc == CLI_OK)
        rc = cli_model_resolve(&mo, &setup);
    kv_engine_config check;
    if (rc == CLI_OK) /* option errors before any file is read */
        rc = cli_engine_config(&so, &setup, &check);

    double t0 = wall_now();
    kv_trace *trace = NULL;
    kv_diag d;
    if (rc == CLI_OK && kv_trace_load(&trace, trace_path, &so.trace, &d) != 0)
        rc = cli_diag(CLI_RUNTIME, &d);

    observers obs = {NULL, {!quiet && !json_out && isatty(2), 0}};
    if (rc == CLI_OK && out_dir && kv_out_open(&obs.out, out_dir, &d) != 0)
        rc = cli_diag(CLI_RUNTIME, &d);

    kv_run_result res;
    memset(&res, 0, sizeof res);
    kv_summary summary;
    memset(&summary, 0, sizeof summary);
    json_t *sj = NULL;
    if (rc == CLI_OK) {
        kv_sim_hooks hooks = {.sample_every = sample_every ? sample_every
                                                           : kv_sim_default_sample_every(trace->n),
                              .on_sample = obs.out ? obs_sample : NULL,
                              .on_progress = obs_progress,
                              .ctx = &obs};
        rc = cli_replay(&so, &setup, trace, &hooks, &res, &summary);
        if (obs.prog.on)
            fputs("\r\033[K", stderr);
    }
    if (rc == CLI_OK)
        sj = kv_summary_to_json(&summary);
    if (rc == CLI_OK && obs.out) {
        json_t *perf = perf_json(wall_now() - t0, &res);
        if (kv_out_commit(obs.out, sj, perf, &res, &d) != 0)
            rc = cli_diag(CLI_RUNTIME, &d);
        json_decref(perf);
    }
    if (rc == CLI_OK && !quiet) {
        if (json_out)
            json_dumpf(sj, stdout, KV_JSON_FLAGS);
        else
            cli_print_summary(stdout, &summary);
        if (json_out)
            fputc('\n', stdout);
        if (fflush(stdout) != 0 || ferror(stdout))
            rc = cli_error(CLI_RUNTIME, "cannot write to standard output");
    }
    if (rc == CLI_OK && res.stop == -KV_ELIVELOCK)
        rc = cli_error(CLI_RUNTIME,
                       "livelock guard fired: a step scheduled nothing and preempted nothing "
                       "while work waited; %llu requests marked unfinished (please report)",
                       (unsigned long long)res.unfinished);
    if (rc == CLI_OK && plot)
        rc = cli_plot_dir(out_dir, quiet || json_out);
    json_decref(sj);
    kv_summary_release(&summary);
    kv_out_abort(obs.out);
    kv_run_result_release(&res);
    kv_trace_free(trace);
    cli_parser_release(&p);
    return rc;
}
