/* kvsim plan TRACE --slo SPEC: the SLO capacity search (README "Capacity planning").
 *
 * Flow: options → kv_plan_init (setup and time model, before any file is read) → the
 * search bounds from --min/--max (parsed here: sizes need the setup's block bytes) → the
 * trace, loaded once with its arrivals unscaled → kv_plan_set_trace → --out DIR checked →
 * kv_plan_run (the library's planner: src/planner.c replays every probe in process) → the
 * answer on stdout (or --json) → plan.csv and plan.json with --out (src/report_plan.c), into a
 * temporary directory checked and made before the first replay and put in DIR's place at the end.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/plan_cli.h"
#include "cli/sim.h"
#include "kvsim/mem.h"
#include "kvsim/planner.h"
#include "kvsim/report.h"

typedef struct plan_args {
    const char *slo_specs[16];
    int n_slo;
    const char *over, *load, *min, *max, *out; /* parsed once the setup is known */
    double target_rate;                        /* 0: not given */
    double tolerance, confirm;
    uint32_t max_probes;
    bool json, quiet, plot;
    kv_sim_options so;
    kv_setup_options mo;
} plan_args;

enum { OPT_SLO = 1, OPT_TOLERANCE, OPT_CONFIRM, OPT_MAX_PROBES, OPT_TARGET_RATE };

#define PA plan_args

static const cli_opt slo_opts[] = {
    {"slo", 0, "SPEC", CLI_ID(OPT_SLO),
     "comma list of KEY=VALUE upper bounds (repeatable), e.g.\n"
     "ttft_p99=2s,tpot_p99=100ms,preemption_rate=0.01\n"
     "latency keys: ttft, tpot, e2e, queue with _p50, _p90,\n"
     "_p95, _p99, _max or _mean; values need a unit: s, ms, us.\n"
     "preemption_rate = preemptions / requests in the trace;\n"
     "reject_rate = (rejected + unfinished) / requests, implied\n"
     "reject_rate=0 unless given. Rates: 0.01 or 1%.\n"
     "A probe meets the SLOs when every figure is <= its bound."},
    {0},
};

static const cli_opt search_opts[] = {
    {"over", 0, "WHAT", CLI_TEXT(PA, over),
     "load (default): arrival-rate scale factor s; arrivals are\n"
     "multiplied by time scale F/s (F = --time-scale, default\n"
     "1), so s = 2 offers twice the trace's rate (with\n"
     "--replicas R: what R replicas hold).\n"
     "num_blocks / kv_budget: the smallest pool at --load.\n"
     "replicas: the fewest replicas at --load, as replicas x\n"
     "TP*PP = GPUs (1, 2, 4, ... until met, then bisected)"},
    {"load", 0, "S", CLI_TEXT(PA, load), "load for the pool and replica searches (default 1)"},
    {"target-rate", 0, "R", CLI_ID(OPT_TARGET_RATE),
     "what holds R requests/s: the pool or replica search at\n"
     "the load that offers R (R / the trace's rate; not with\n"
     "--load); --over defaults to replicas with it"},
    {"min", 0, "V", CLI_TEXT(PA, min),
     "search bound: loads (default 0.001), blocks or SIZE\n"
     "(default 2 blocks), or replicas (default 1)"},
    {"max", 0, "V", CLI_TEXT(PA, max),
     "search bound: loads (default 1000), blocks or SIZE\n"
     "(default: the pool that holds the whole trace at once,\n"
     "watermark included, at most 1048576 blocks), or\n"
     "replicas (default 256)"},
    {"tolerance", 0, "F", CLI_ID(OPT_TOLERANCE),
     "stop bisecting when the bracket's ratio is <= 1 + F\n"
     "(default 0.01; pools also stop at adjacent block counts)"},
    {"confirm", 0, "F", CLI_ID(OPT_CONFIRM),
     "then also probe F beyond the answer (load x (1+F), pool\n"
     "/ (1+F)); if that meets, the search continues from it\n"
     "(default 0.1; 0 = off)"},
    {"max-probes", 0, "N", CLI_ID(OPT_MAX_PROBES), "replay at most N times (default 40)"},
    {0},
};

static const cli_opt output_opts[] = {
    {"out", 'o', "DIR", CLI_FILE(PA, out), "write plan.csv (one row per probe) and plan.json"},
    {"json", 0, NULL, CLI_SET(PA, json), "print plan.json instead of the human answer"},
    {"quiet", 'q', NULL, CLI_SET(PA, quiet), "print nothing on success"},
    {"plot", 0, NULL, CLI_SET(PA, plot), "draw plan_curve.png/.svg into DIR (needs --out)"},
    {0},
};

static const cli_section sections[] = {
    {"SLOs", slo_opts, NULL},
    {"search", search_opts,
     "The search starts at load 1 (pools: at --max), doubles or halves until the SLO\n"
     "verdict changes, then bisects in log space; probe loads are rounded to 4 significant\n"
     "digits. The answer is the highest load (smallest pool) probed that meets the SLOs;\n"
     "every probe beyond it violated. Replays need not be monotone, so a violating probe\n"
     "below the answer is reported, not hidden.\n"},
    {"output", output_opts,
     "exit status: 0 with an answer or a statement that none exists; 2 usage; 1 runtime.\n"},
    {0},
};

static const cli_dep deps[] = {
    {CLI_REQUIRED, "slo", NULL, "kvsim plan needs --slo, e.g. --slo ttft_p99=2s,tpot_p99=100ms",
     NULL},
    {CLI_REQUIRES, "plot", "out", "--plot needs --out DIR to write the figure into", NULL},
    {CLI_EXCLUDES, "target-rate", "load",
     "--target-rate R and --load S both fix the load: give one", NULL},
    {0},
};

static int handle(void *target, const cli_opt *opt, const char *arg)
{
    plan_args *a = target;
    switch (opt->id) {
    case OPT_SLO:
        if (a->n_slo == (int)(sizeof a->slo_specs / sizeof a->slo_specs[0]))
            return cli_error(CLI_USAGE, "--slo: given more than %d times", a->n_slo);
        a->slo_specs[a->n_slo++] = arg;
        return CLI_OK;
    case OPT_TOLERANCE:
        return cli_parse_double(opt->name, arg, 1e-6, 1, &a->tolerance);
    case OPT_CONFIRM:
        return cli_parse_double(opt->name, arg, 0, 10, &a->confirm);
    case OPT_TARGET_RATE:
        return cli_parse_double(opt->name, arg, 1e-9, 1e12, &a->target_rate);
    default: /* OPT_MAX_PROBES */
        return cli_parse_u32(opt->name, arg, 1, 10000, &a->max_probes);
    }
}

static const cli_group group = {sections, handle, deps};

static void init(void *state)
{
    plan_args *a = state;
    a->tolerance = 0.01;
    a->confirm = 0.1;
    a->max_probes = 40;
    kv_sim_options_init(&a->so);
    kv_setup_options_init(&a->mo);
}

static int parse_bound(kv_plan_over over, const char *opt, const char *arg, uint64_t block_bytes,
                       double *out)
{
    if (over == KV_PLAN_LOAD)
        return cli_parse_double(opt, arg, 1e-6, 1e6, out);
    uint64_t v;
    if (over == KV_PLAN_REPLICAS) {
        if (cli_parse_u64(opt, arg, 1, KV_SIM_MAX_REPLICAS, &v) != 0)
            return CLI_USAGE;
        *out = (double)v;
        return CLI_OK;
    }
    if (over == KV_PLAN_NUM_BLOCKS) {
        if (cli_parse_u64(opt, arg, 2, UINT32_MAX, &v) != 0)
            return CLI_USAGE;
        *out = (double)v;
        return CLI_OK;
    }
    if (cli_parse_size(opt, arg, &v) != 0)
        return CLI_USAGE;
    uint64_t blocks = v / block_bytes;
    if (blocks < 2 || blocks > UINT32_MAX)
        return cli_error(
            CLI_USAGE, "--%s: '%s' holds %llu blocks of %llu bytes; a pool has 2 to %u blocks", opt,
            arg, (unsigned long long)blocks, (unsigned long long)block_bytes, UINT32_MAX);
    *out = (double)blocks;
    return CLI_OK;
}

/* Checks that need only the options, filling the plan config: 0 or CLI_USAGE. */
static int check_args(kv_plan_config *pc, const plan_args *a)
{
    kv_diag d;
    for (int i = 0; i < a->n_slo; i++)
        if (kv_slo_parse(&pc->slos, a->slo_specs[i], &d) != 0)
            return cli_error(CLI_USAGE, "--slo: %s", d.msg);
    if (kv_slo_finish(&pc->slos, &d) != 0)
        return cli_error(CLI_USAGE, "--slo: %s", d.msg);
    if (a->over && kv_plan_over_parse(a->over, &pc->over) != 0)
        return cli_error(CLI_USAGE,
                         "--over: unknown quantity '%s' (load, num_blocks, kv_budget or replicas)",
                         a->over);
    if (!a->over && a->target_rate > 0)
        pc->over = KV_PLAN_REPLICAS; /* "what holds R requests/s": how many replicas */
    pc->target_rate = a->target_rate;
    pc->fixed_load = 1;
    if (a->load) {
        if (pc->over == KV_PLAN_LOAD)
            return cli_error(CLI_USAGE, "--load fixes the load of a pool or replica search: "
                                        "it needs --over num_blocks, kv_budget or replicas");
        if (cli_parse_double("load", a->load, 1e-6, 1e6, &pc->fixed_load) != 0)
            return CLI_USAGE;
    }
    pc->tolerance = a->tolerance;
    pc->confirm = a->confirm;
    pc->max_probes = a->max_probes;
    return CLI_OK;
}

/* --min and --max in axis units, once the block bytes are known. */
static int parse_bounds(kv_plan_config *pc, const plan_args *a, uint64_t block_bytes)
{
    int rc = CLI_OK;
    if (a->min && (rc = parse_bound(pc->over, "min", a->min, block_bytes, &pc->min)) != CLI_OK)
        return rc;
    if (a->max && (rc = parse_bound(pc->over, "max", a->max, block_bytes, &pc->max)) != CLI_OK)
        return rc;
    pc->has_min = a->min != NULL;
    pc->has_max = a->max != NULL;
    return CLI_OK;
}

typedef struct progress_ctx {
    bool on;
} progress_ctx;

static void show_progress(void *ctx, size_t i, double x, kv_plan_over over)
{
    if (!((progress_ctx *)ctx)->on)
        return;
    if (over == KV_PLAN_LOAD)
        fprintf(stderr, "\rkvsim: probe %zu: load %gx   ", i + 1, x);
    else if (over == KV_PLAN_REPLICAS)
        fprintf(stderr, "\rkvsim: probe %zu: %.0f replicas   ", i + 1, x);
    else
        fprintf(stderr, "\rkvsim: probe %zu: %.0f blocks   ", i + 1, x);
    fflush(stderr);
}

/* Options parsed: set up, load, check --out, search.  0 or an exit code after printing. */
static int plan_search(kv_plan *p, kv_plan_config *pc, const plan_args *a, const char *path,
                       kv_trace **trace, kv_outdir *out)
{
    const kv_sim_options *so = &a->so;
    kv_diag d;
    int rc = kv_plan_init(p, pc, &a->mo, so, &d);
    if (rc != 0)
        return cli_diag(cli_code(rc), &d);
    if ((rc = parse_bounds(pc, a, p->block_bytes)) != CLI_OK)
        return rc;
    p->command = cli_command_line();
    p->cfg__ = *pc;
    kv_trace_options raw = so->trace;
    raw.time_scale = 1.0; /* each probe applies its own scale (planner.h) */
    if (kv_trace_load(trace, path, &raw, &d) != 0)
        return cli_diag(CLI_RUNTIME, &d);
    if ((rc = kv_plan_set_trace(p, *trace, path, &d)) != 0)
        return cli_diag(CLI_USAGE, &d);
    /* --out DIR is usable before the first replay, not after the last. */
    if (a->out && kv_plan_out_open(out, a->out, &d) != 0)
        return cli_diag(CLI_RUNTIME, &d);
    progress_ctx pg = {!a->quiet && !a->json && isatty(2)};
    rc = kv_plan_run(p, show_progress, &pg, &d);
    if (pg.on)
        fputs("\r\033[K", stderr);
    return rc == 0 ? CLI_OK : cli_diag(CLI_RUNTIME, &d);
}

static int plan_output(const kv_plan *p, const plan_args *a, kv_outdir *out)
{
    kv_diag d;
    int rc = CLI_OK;
    if (a->out && kv_plan_write_files(p, out, &d) != 0)
        rc = cli_diag(CLI_RUNTIME, &d);
    if (rc == CLI_OK && !a->quiet) {
        if (a->json) {
            json_t *j = kv_plan_json(p); /* p->command: set by run_plan */
            json_dumpf(j, stdout, KV_JSON_FLAGS);
            fputc('\n', stdout);
            json_decref(j);
        } else {
            cli_plan_print(stdout, p);
        }
        if (rc == CLI_OK)
            rc = cli_flush_stdout();
    }
    /* After the answer: a figure problem never hides it. */
    if (rc == CLI_OK && a->plot)
        rc = cli_plot_dir(a->out, a->quiet || a->json);
    return rc;
}

static int exec(void *state, int argc, char **argv)
{
    const plan_args *a = state;
    kv_plan_config pc;
    memset(&pc, 0, sizeof pc);
    kv_slo_set_init(&pc.slos);
    int rc = check_args(&pc, a);
    kv_plan p;
    memset(&p, 0, sizeof p);
    kv_trace *trace = NULL;
    kv_outdir out;
    memset(&out, 0, sizeof out);
    if (rc == CLI_OK)
        rc = plan_search(&p, &pc, a, argv[argc - 1], &trace, &out);
    if (rc == CLI_OK)
        rc = plan_output(&p, a, &out);
    kv_outdir_abort(&out); /* a search that failed: nothing of it in DIR */
    kv_plan_release(&p);
    kv_trace_free(trace);
    return rc;
}

const cli_cmd cli_cmd_plan = {
    .name = "plan",
    .summary = "SLO capacity search: highest load, smallest pool or fewest replicas",
    .synopsis = "TRACE --slo SPEC [options]",
    .description =
        "The highest load a setup holds within latency and preemption SLOs (or, with\n"
        "--over num_blocks|kv_budget, the smallest KV pool that holds a given load; with\n"
        "--over replicas, the fewest replicas), found by replaying the trace in process at\n"
        "each probed value.\n",
    .uses = {{&group, 0},
             {&cli_sim_group, offsetof(plan_args, so)},
             {&cli_model_group, offsetof(plan_args, mo)}},
    .args = {1, 1, "kvsim plan needs a TRACE file", "kvsim plan takes one TRACE, got {n}"},
    .state_size = sizeof(plan_args),
    .init = init,
    .exec = exec,
};
