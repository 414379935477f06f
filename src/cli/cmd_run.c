/* kvsim run TRACE: replay a trace and report blocks, admissions, preemptions, prefix hits
 * and latency (DESIGN §8).  Flow: options (the framework, with the simulation and model
 * groups) → model setup and engine config (usage errors before any file is read) → trace
 * → engine (streaming timeseries rows into a temp file) → summary → atomic commit of every
 * output file → human summary (or --json) on stdout → figures (--plot).  Any error before
 * the commit leaves no output file behind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/sim.h"
#include "kvsim/mem.h"
#include "kvsim/report.h"

typedef struct run_cmd {
    const char *out;       /* --out DIR, or NULL: nothing written */
    uint32_t sample_every; /* ≥ 1 */
    bool json, quiet, plot;
    kv_sim_options so;
    kv_setup_options mo;
} run_cmd;

enum { OPT_SAMPLE_EVERY = 1 };

static const cli_opt options[] = {
    {"out", 'o', "DIR", CLI_FILE(run_cmd, out),
     "write the output files into DIR (created if missing)"},
    {"sample-every", 0, "N", CLI_ID(OPT_SAMPLE_EVERY),
     "one timeseries.csv row every N steps (default: 1 for\ntraces below 40,000 requests, else requests / 20,000)"},
    {"json", 0, NULL, CLI_SET(run_cmd, json), "print summary.json instead of the human summary"},
    {"quiet", 'q', NULL, CLI_SET(run_cmd, quiet), "print nothing on success"},
    {"plot", 0, NULL, CLI_SET(run_cmd, plot),
     "also draw the figures into DIR with gnuplot (needs\n--out; see 'kvsim plot --help')"},
    {0},
};

static const cli_opt speed_opts[] = {
    {"hash-thread", 0, NULL, CLI_SET(run_cmd, so.hash_ahead),
     "hash prompt blocks on a second thread ahead of the\nreplay (default off): the same outputs, less wall\ntime when a second core is idle"},
    {0},
};

static const cli_section sections[] = {
    {"output", options, NULL}, {"speed", speed_opts, NULL}, {0}};

static const cli_dep deps[] = {
    {CLI_REQUIRES, "plot", "out",
     "--plot needs --out DIR (the figures are drawn from the files written there)", NULL},
    {0},
};

static int handle(void *target, const cli_opt *opt, const char *arg)
{
    return cli_parse_u32(opt->name, arg, 1, UINT32_MAX, &((run_cmd *)target)->sample_every);
}

static const cli_group group = {sections, handle, deps};

static void init(void *state)
{
    run_cmd *r = state;
    r->sample_every = 0; /* 0: the default for the trace's size */
    kv_sim_options_init(&r->so);
    kv_setup_options_init(&r->mo);
}

typedef struct progress {
    bool on;
    double last;
} progress;

static void on_progress(void *ctx, const kv_progress *pg)
{
    progress *p = ctx;
    double t = cli_wall_now();
    if (!p->on || t - p->last < 0.2)
        return;
    p->last = t;
    char line[160];
    cli_progress_text(line, sizeof line, pg);
    fprintf(stderr, "\r%s   ", line);
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

/* What a replay leaves to report: released by release_run. */
typedef struct run_out {
    observers obs;
    kv_run_result res;
    kv_summary summary;
    json_t *sj;
} run_out;

static void release_run(run_out *o)
{
    json_decref(o->sj);
    kv_summary_release(&o->summary);
    kv_out_abort(o->obs.out);
    kv_run_result_release(&o->res);
}

/* The files, then stdout, then the livelock verdict (after the files that record it). */
static int report(const run_cmd *r, run_out *o, double t0)
{
    kv_diag d;
    int rc = CLI_OK;
    if (o->obs.out) {
        json_t *perf =
            kv_json_stamped(kv_report_perf_json(cli_wall_now() - t0, &o->res), cli_command_line());
        if (kv_out_commit(o->obs.out, o->sj, perf, &o->res, &d) != 0)
            rc = cli_diag(CLI_RUNTIME, &d);
        json_decref(perf);
    }
    if (rc == CLI_OK && !r->quiet) {
        if (r->json) {
            json_dumpf(o->sj, stdout, KV_JSON_FLAGS);
            fputc('\n', stdout);
        } else {
            cli_print_summary(stdout, &o->summary);
        }
        if (rc == CLI_OK)
            rc = cli_flush_stdout();
    }
    if (rc == CLI_OK && o->res.stop == -KV_ELIVELOCK)
        rc = cli_error(CLI_RUNTIME,
                       "livelock guard fired: a step scheduled nothing and preempted nothing "
                       "while work waited; %llu requests marked unfinished (please report)",
                       (unsigned long long)o->res.unfinished);
    return rc;
}

static cli_run_preload *preload;

void cli_run_preload_set(cli_run_preload *p)
{
    preload = p;
}

/* The preloaded trace when it is this run's (its chain store into *so), else read it. */
static int load_trace(const char *path, kv_sim_options *so, kv_trace **trace)
{
    kv_diag d;
    if (preload && preload->trace && strcmp(preload->path, path) == 0 &&
        kv_trace_options_equal(&preload->opt, &so->trace)) {
        *trace = preload->trace;
        preload->trace = NULL;
        so->chains = preload->chains;
        return CLI_OK;
    }
    return kv_trace_load(trace, path, &so->trace, &d) == 0 ? CLI_OK : cli_diag(CLI_RUNTIME, &d);
}

/* Load, replay (streaming timeseries rows into DIR), report, plot. */
static int replay(const run_cmd *r, const kv_setup *setup, const char *trace_path)
{
    double t0 = cli_wall_now();
    kv_trace *trace = NULL;
    kv_diag d;
    run_out o;
    memset(&o, 0, sizeof o);
    o.obs.prog.on = !r->quiet && !r->json && isatty(2);
    kv_sim_options so = r->so;
    int rc = load_trace(trace_path, &so, &trace);
    if (rc == CLI_OK && r->out && kv_out_open(&o.obs.out, r->out, r->so.replicas > 1, &d) != 0)
        rc = cli_diag(CLI_RUNTIME, &d);
    if (rc == CLI_OK) {
        kv_sim_hooks hooks = {.sample_every = r->sample_every
                                                  ? r->sample_every
                                                  : kv_sim_default_sample_every(trace->n),
                              .on_sample = o.obs.out ? obs_sample : NULL,
                              .on_progress = obs_progress,
                              .ctx = &o.obs};
        rc = cli_replay(&so, setup, trace, &hooks, &o.res, &o.summary);
        if (o.obs.prog.on)
            fputs("\r\033[K", stderr);
    }
    if (rc == CLI_OK) {
        o.sj = kv_summary_to_json(&o.summary);
        rc = report(r, &o, t0);
    }
    if (rc == CLI_OK && r->plot)
        rc = cli_plot_dir(r->out, r->quiet || r->json);
    release_run(&o);
    kv_trace_free(trace);
    return rc;
}

static int exec(void *state, int argc, char **argv)
{
    const run_cmd *r = state;
    kv_setup setup;
    kv_engine_config check;
    if (r->out && strcmp(r->out, "-") == 0)
        return cli_error(CLI_USAGE,
                         "--out -: a run writes four files into a directory, not to standard "
                         "output (--json prints summary.json there; --out ./- names a directory "
                         "'-')");
    int rc = cli_model_resolve(&r->mo, &setup);
    if (rc == CLI_OK) /* option errors before any file is read */
        rc = cli_engine_config(&r->so, &setup, &check);
    return rc == CLI_OK ? replay(r, &setup, argv[argc - 1]) : rc;
}

const cli_cmd cli_cmd_run = {
    .name = "run",
    .summary = "replay a trace: blocks, admissions, preemptions, prefix hits, latency",
    .synopsis = "TRACE|- [options]",
    .description =
        "Replay a request trace through a vLLM-v1-style paged KV block pool and scheduler.\n"
        "Prints a summary; with --out DIR also writes summary.json, perf.json,\n"
        "timeseries.csv and requests.csv there (each atomically).  TRACE '-' reads the\n"
        "trace from standard input (messages call it <stdin>).\n",
    .uses = {{&group, 0},
             {&cli_sim_group, offsetof(run_cmd, so)},
             {&cli_model_group, offsetof(run_cmd, mo)}},
    .args = {1, 1, "kvsim run needs a TRACE file", "kvsim run takes one TRACE, got {n}"},
    .state_size = sizeof(run_cmd),
    .init = init,
    .exec = exec,
};
