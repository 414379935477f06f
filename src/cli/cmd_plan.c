/* kvsim plan TRACE --slo SPEC: the SLO capacity search (README "Capacity planning").
 *
 * Flow: options → kv_plan_init (setup and time model, before any file is read) → the
 * search bounds from --min/--max (parsed here: sizes need the setup's block bytes) → the
 * trace, loaded once with its arrivals unscaled → kv_plan_set_trace → kv_plan_run (the
 * library's planner: src/planner.c replays every probe in process) → the answer on stdout
 * (or --json) → plan.csv and plan.json with --out (src/report_plan.c).
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

enum {
    OPT_HELP = 1,
    OPT_SLO,
    OPT_OVER,
    OPT_LOAD,
    OPT_MIN,
    OPT_MAX,
    OPT_TOLERANCE,
    OPT_CONFIRM,
    OPT_MAX_PROBES,
    OPT_OUT,
    OPT_JSON,
    OPT_QUIET,
    OPT_PLOT,
};

static const cli_opt options[] = {
    {"help", 'h', false, OPT_HELP},
    {"slo", 0, true, OPT_SLO},
    {"over", 0, true, OPT_OVER},
    {"load", 0, true, OPT_LOAD},
    {"min", 0, true, OPT_MIN},
    {"max", 0, true, OPT_MAX},
    {"tolerance", 0, true, OPT_TOLERANCE},
    {"confirm", 0, true, OPT_CONFIRM},
    {"max-probes", 0, true, OPT_MAX_PROBES},
    {"out", 'o', true, OPT_OUT},
    {"json", 0, false, OPT_JSON},
    {"quiet", 'q', false, OPT_QUIET},
    {"plot", 0, false, OPT_PLOT},
    {NULL, 0, false, 0},
};

static void help(void)
{
    fputs("usage: kvsim plan TRACE --slo SPEC [options]\n"
          "\n"
          "The highest load a setup holds within latency and preemption SLOs (or, with\n"
          "--over num_blocks|kv_budget, the smallest KV pool that holds a given load), found by\n"
          "replaying the trace in process at each probed value.\n"
          "\n"
          "SLOs:\n"
          "      --slo SPEC         comma list of KEY=VALUE upper bounds (repeatable), e.g.\n"
          "                         ttft_p99=2s,tpot_p99=100ms,preemption_rate=0.01\n"
          "                         latency keys: ttft, tpot, e2e, queue with _p50, _p90, _p95,\n"
          "                         _p99, _max or _mean; values need a unit: s, ms, us.\n"
          "                         preemption_rate = preemptions / requests in the trace;\n"
          "                         reject_rate = (rejected + unfinished) / requests, implied\n"
          "                         reject_rate=0 unless given. Rates: 0.01 or 1%.\n"
          "                         A probe meets the SLOs when every figure is <= its bound.\n"
          "search:\n"
          "      --over WHAT        load (default): arrival-rate scale factor s; arrivals are\n"
          "                         multiplied by time scale F/s (F = --time-scale, default 1),\n"
          "                         so s = 2 offers twice the trace's rate.\n"
          "                         num_blocks / kv_budget: the smallest pool at --load\n"
          "      --load S           load for the pool searches (default 1)\n"
          "      --min V, --max V   search bounds: loads (default 0.001 and 1000); blocks or\n"
          "                         SIZE (default 2 blocks and the pool that holds the whole\n"
          "                         trace at once, watermark included, at most 1048576 blocks)\n"
          "      --tolerance F      stop bisecting when the bracket's ratio is <= 1 + F\n"
          "                         (default 0.01; pools also stop at adjacent block counts)\n"
          "      --confirm F        then also probe F beyond the answer (load x (1+F), pool /\n"
          "                         (1+F)); if that meets, the search continues from it\n"
          "                         (default 0.1; 0 = off)\n"
          "      --max-probes N     replay at most N times (default 40)\n"
          "The search starts at load 1 (pools: at --max), doubles or halves until the SLO\n"
          "verdict changes, then bisects in log space; probe loads are rounded to 4 significant\n"
          "digits. The answer is the highest load (smallest pool) probed that meets the SLOs;\n"
          "every probe beyond it violated. Replays need not be monotone, so a violating probe\n"
          "below the answer is reported, not hidden.\n"
          "output:\n"
          "  -o, --out DIR            write plan.csv (one row per probe) and plan.json\n"
          "      --json               print plan.json instead of the human answer\n"
          "  -q, --quiet              print nothing on success\n"
          "      --plot               draw plan_curve.png/.svg into DIR (needs --out)\n"
          "exit status: 0 with an answer or a statement that none exists; 2 usage; 1 runtime.\n",
          stdout);
    fputs(cli_sim_opts_help, stdout);
    fputs(cli_model_opts_help, stdout);
}

static int parse_bound(kv_plan_over over, const char *opt, const char *arg, uint64_t block_bytes,
                       double *out)
{
    if (over == KV_PLAN_LOAD)
        return cli_parse_double(opt, arg, 1e-6, 1e6, out);
    uint64_t v;
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

/* ---- the command -------------------------------------------------------------------- */

typedef struct plan_args {
    const char *slo_specs[16];
    int n_slo;
    const char *over, *load, *min, *max, *out;
    double tolerance, confirm;
    uint32_t max_probes;
    bool json, quiet, plot;
} plan_args;

static int handle(plan_args *a, int id, const char *arg)
{
    switch (id) {
    case OPT_SLO:
        if (a->n_slo == (int)(sizeof a->slo_specs / sizeof a->slo_specs[0]))
            return cli_error(CLI_USAGE, "--slo: given more than %d times", a->n_slo);
        a->slo_specs[a->n_slo++] = arg;
        return CLI_OK;
    case OPT_OVER:
        a->over = arg;
        return CLI_OK;
    case OPT_LOAD:
        a->load = arg;
        return CLI_OK;
    case OPT_MIN:
        a->min = arg;
        return CLI_OK;
    case OPT_MAX:
        a->max = arg;
        return CLI_OK;
    case OPT_TOLERANCE:
        return cli_parse_double("tolerance", arg, 1e-6, 1, &a->tolerance);
    case OPT_CONFIRM:
        return cli_parse_double("confirm", arg, 0, 10, &a->confirm);
    case OPT_MAX_PROBES:
        return cli_parse_u32("max-probes", arg, 1, 10000, &a->max_probes);
    case OPT_OUT:
        a->out = arg;
        return CLI_OK;
    case OPT_JSON:
        a->json = true;
        return CLI_OK;
    case OPT_QUIET:
        a->quiet = true;
        return CLI_OK;
    case OPT_PLOT:
        a->plot = true;
        return CLI_OK;
    }
    return cli_error(CLI_USAGE, "internal: option %d is not a plan option", id);
}

/* Checks that need only the options, filling the plan config: 0 or CLI_USAGE. */
static int check_args(kv_plan_config *pc, const plan_args *a, const cli_parser *ps)
{
    kv_diag d;
    if (ps->n_positional != 1)
        return cli_error(CLI_USAGE,
                         ps->n_positional ? "kvsim plan takes one TRACE, got %d"
                                          : "kvsim plan needs a TRACE file%.0d",
                         ps->n_positional);
    if (a->n_slo == 0)
        return cli_error(CLI_USAGE,
                         "kvsim plan needs --slo, e.g. --slo ttft_p99=2s,tpot_p99=100ms");
    if (a->plot && !a->out)
        return cli_error(CLI_USAGE, "--plot needs --out DIR to write the figure into");
    for (int i = 0; i < a->n_slo; i++)
        if (kv_slo_parse(&pc->slos, a->slo_specs[i], &d) != 0)
            return cli_error(CLI_USAGE, "--slo: %s", d.msg);
    if (kv_slo_finish(&pc->slos, &d) != 0)
        return cli_error(CLI_USAGE, "--slo: %s", d.msg);
    if (a->over && kv_plan_over_parse(a->over, &pc->over) != 0)
        return cli_error(CLI_USAGE, "--over: unknown quantity '%s' (load, num_blocks or kv_budget)",
                         a->over);
    pc->fixed_load = 1;
    if (a->load) {
        if (pc->over == KV_PLAN_LOAD)
            return cli_error(CLI_USAGE, "--load fixes the load of a pool search: it needs "
                                        "--over num_blocks or --over kv_budget");
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
    else
        fprintf(stderr, "\rkvsim: probe %zu: %.0f blocks   ", i + 1, x);
    fflush(stderr);
}

/* Options parsed: set up, load, search.  0 or an exit code after printing. */
static int plan_search(kv_plan *p, kv_plan_config *pc, const plan_args *a, const char *path,
                       const kv_setup_options *mo, const kv_sim_options *so, kv_trace **trace)
{
    kv_diag d;
    int rc = kv_plan_init(p, pc, mo, so, &d);
    if (rc != 0)
        return cli_diag(cli_code(rc), &d);
    if ((rc = parse_bounds(pc, a, p->block_bytes)) != CLI_OK)
        return rc;
    p->cfg__ = *pc;
    kv_trace_options raw = so->trace;
    raw.time_scale = 1.0; /* each probe applies its own scale (planner.h) */
    if (kv_trace_load(trace, path, &raw, &d) != 0)
        return cli_diag(CLI_RUNTIME, &d);
    if ((rc = kv_plan_set_trace(p, *trace, path, &d)) != 0)
        return cli_diag(CLI_USAGE, &d);
    progress_ctx pg = {!a->quiet && !a->json && isatty(2)};
    rc = kv_plan_run(p, show_progress, &pg, &d);
    if (pg.on)
        fputs("\r\033[K", stderr);
    return rc == 0 ? CLI_OK : cli_diag(CLI_RUNTIME, &d);
}

static int plan_output(const kv_plan *p, const plan_args *a)
{
    kv_diag d;
    int rc = CLI_OK;
    if (a->out && kv_plan_write_files(p, a->out, &d) != 0)
        rc = cli_diag(CLI_RUNTIME, &d);
    if (rc == CLI_OK && !a->quiet) {
        if (a->json) {
            json_t *j = kv_plan_json(p);
            json_dumpf(j, stdout, KV_JSON_FLAGS);
            fputc('\n', stdout);
            json_decref(j);
        } else {
            cli_plan_print(stdout, p);
        }
        if (fflush(stdout) != 0 || ferror(stdout))
            rc = cli_error(CLI_RUNTIME, "cannot write to standard output");
    }
    /* After the answer: a figure problem never hides it. */
    if (rc == CLI_OK && a->plot)
        rc = cli_plot_dir(a->out, a->quiet || a->json);
    return rc;
}

int cmd_plan(int argc, char **argv)
{
    const cli_opt *tables[] = {options, cli_sim_options, cli_model_options, NULL};
    cli_parser ps;
    cli_parser_init(&ps, "plan", argc, argv, tables);
    kv_sim_options so;
    kv_setup_options mo;
    kv_sim_options_init(&so);
    kv_setup_options_init(&mo);
    plan_args a = {.tolerance = 0.01, .confirm = 0.1, .max_probes = 40};
    kv_plan_config pc;
    memset(&pc, 0, sizeof pc);
    kv_slo_set_init(&pc.slos);
    int rc = CLI_OK, id;
    const char *arg;
    while (rc == CLI_OK && (id = cli_next(&ps, &arg)) != CLI_OPT_END) {
        if (id == CLI_OPT_ERROR)
            rc = CLI_USAGE;
        else if (id == OPT_HELP) {
            help();
            cli_parser_release(&ps);
            return CLI_OK;
        } else if (cli_sim_opts_owns(id))
            rc = cli_sim_opts_handle(&so, id, arg);
        else if (cli_model_opts_owns(id))
            rc = cli_model_opts_handle(&mo, id, arg);
        else
            rc = handle(&a, id, arg);
    }
    if (rc == CLI_OK)
        rc = check_args(&pc, &a, &ps);
    kv_plan p;
    memset(&p, 0, sizeof p);
    kv_trace *trace = NULL;
    if (rc == CLI_OK)
        rc = plan_search(&p, &pc, &a, ps.positional[0], &mo, &so, &trace);
    if (rc == CLI_OK)
        rc = plan_output(&p, &a);
    kv_plan_release(&p);
    kv_trace_free(trace);
    cli_parser_release(&ps);
    return rc;
}
