/* kvsim plan TRACE --slo SPEC: the SLO capacity search (README "Capacity planning").
 *
 * Flow: options → model setup → the trace, loaded once with its arrivals unscaled → the
 * search (src/plan.c) proposes a value, a probe replays it in process through cli_replay
 * (the same function `kvsim run` uses) and records whether every SLO held → the answer on
 * stdout (or --json) → plan.csv and plan.json with --out.
 *
 * Load.  A probe at load s replays the trace with every arrival multiplied by the time
 * scale ts = F/s, F being the --time-scale given (default 1), rounded to 12 significant
 * digits: arrival' = llround(arrival · ts) in doubles, then ordered by (arrival', file
 * row) — exactly what the trace reader does for `kvsim run --time-scale ts`.  The 12-digit
 * rounding makes ts print exactly in every output (JSON reals carry 12 digits), so a
 * probe is reproduced bit for bit by `kvsim run --time-scale <its time_scale>`.  Each
 * probe works on a shallow copy of the request array: the specs' token and hash_ids
 * pointers stay shared with the loaded trace.
 *
 * Pools.  --over num_blocks and --over kv_budget search the pool size in whole blocks at
 * a fixed load (--load, default 1), resolving each probe through cli_model_resolve with
 * --num-blocks N or --kv-budget N·block_bytes in a copy of the model options, so each
 * probe's setup is exactly what `kvsim run` gets from the same options.  A budget between
 * two multiples of the block size gives the pool of the lower one, so budgets are
 * searched in block steps and reported as N·block_bytes.
 *
 * Memory: the trace, one copy of its request array, and one summary per probe.
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

/* Default bounds.  Loads: a million-fold range around the trace's own rate.  Pools: from
 * the smallest pool the engine accepts up to one that holds every request of the trace at
 * full length at once, watermark included (blocks never run short there), at most
 * MAX_BLOCKS_DEFAULT (about 120 MB of pool bookkeeping). */
#define LOAD_MIN_DEFAULT   0.001
#define LOAD_MAX_DEFAULT   1000.0
#define MAX_BLOCKS_DEFAULT 1048576u
/* 2^63 as a double: the first value llround cannot represent in int64 (as trace.c). */
#define NS_LIMIT 9223372036854775808.0

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

const char *plan_over_name(plan_over o)
{
    return o == PLAN_OVER_LOAD ? "load" : o == PLAN_OVER_NUM_BLOCKS ? "num_blocks" : "kv_budget";
}

static int parse_over(const char *arg, plan_over *out)
{
    if (strcmp(arg, "load") == 0)
        *out = PLAN_OVER_LOAD;
    else if (strcmp(arg, "num_blocks") == 0 || strcmp(arg, "num-blocks") == 0)
        *out = PLAN_OVER_NUM_BLOCKS;
    else if (strcmp(arg, "kv_budget") == 0 || strcmp(arg, "kv-budget") == 0)
        *out = PLAN_OVER_KV_BUDGET;
    else
        return cli_error(CLI_USAGE, "--over: unknown quantity '%s' (load, num_blocks or kv_budget)",
                         arg);
    return CLI_OK;
}

/* ---- probes ------------------------------------------------------------------------- */

typedef struct scaled {
    const kv_trace *base;  /* arrivals as loaded, unscaled */
    kv_request_spec *reqs; /* the copy probes replay */
    kv_trace view;         /* base, with reqs swapped in; never freed as a trace */
    double ts;             /* time scale the copy holds; 0 = none yet */
} scaled;

static int by_arrival(const void *pa, const void *pb)
{
    const kv_request_spec *a = pa, *b = pb;
    if (a->arrival_ns != b->arrival_ns)
        return a->arrival_ns < b->arrival_ns ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

/* Arrivals × ts as the trace reader's --time-scale does it (the caller has checked that
 * the last arrival fits in 64-bit nanoseconds). */
static void scale_to(scaled *s, double ts)
{
    if (s->ts == ts)
        return;
    size_t n = s->base->n;
    memcpy(s->reqs, s->base->reqs, n * sizeof *s->reqs);
    bool sorted = true;
    for (size_t i = 0; i < n; i++) {
        if (ts != 1.0)
            s->reqs[i].arrival_ns = llround((double)s->reqs[i].arrival_ns * ts);
        if (i > 0 && by_arrival(&s->reqs[i - 1], &s->reqs[i]) > 0)
            sorted = false;
    }
    if (!sorted)
        qsort(s->reqs, n, sizeof *s->reqs, by_arrival);
    s->ts = ts;
}

static double arrival_rate(const kv_request_spec *r, size_t n)
{
    if (n < 2 || r[n - 1].arrival_ns <= r[0].arrival_ns)
        return NAN;
    return (double)(n - 1) / ((double)(r[n - 1].arrival_ns - r[0].arrival_ns) / 1e9);
}

typedef struct plan_ctx {
    plan p;
    const cli_sim_opts *so;
    const cli_model_opts *mo;
    const cli_setup *setup; /* --over load: the setup every probe uses */
    scaled sc;
    bool progress;
} plan_ctx;

static double time_scale_for(const plan *p, double load)
{
    return kv_round_sig(p->base_time_scale / load, 12);
}

static void measure(const plan *p, plan_probe *pr)
{
    const json_t *s = pr->summary;
    const json_t *rq = json_object_get(s, "requests");
    pr->finished = (uint64_t)json_integer_value(json_object_get(rq, "finished"));
    pr->rejected = (uint64_t)json_integer_value(json_object_get(rq, "rejected"));
    pr->unfinished = (uint64_t)json_integer_value(json_object_get(rq, "unfinished"));
    pr->preemptions = (uint64_t)json_integer_value(json_object_get(s, "preemptions"));
    /* The figures plan.csv always carries, whatever the SLOs. */
    static const kv_slo fixed[4] = {{"ttft_p99", KV_SLO_SECONDS, 0, false},
                                    {"tpot_p99", KV_SLO_SECONDS, 0, false},
                                    {"preemption_rate", KV_SLO_FRACTION, 0, false},
                                    {"reject_rate", KV_SLO_FRACTION, 0, false}};
    pr->ttft_p99 = kv_slo_measure(&fixed[0], s);
    pr->tpot_p99 = kv_slo_measure(&fixed[1], s);
    pr->preemption_rate = kv_slo_measure(&fixed[2], s);
    pr->reject_rate = kv_slo_measure(&fixed[3], s);
    pr->meets = true;
    for (size_t i = 0; i < p->slos.n; i++) {
        pr->slo[i] = kv_slo_measure(&p->slos.slo[i], s);
        pr->meets &= kv_slo_met(&p->slos.slo[i], pr->slo[i]);
    }
}

/* Replay at search value x (a load, or a pool in blocks) into *pr: 0 or an exit code. */
static int probe(plan_ctx *c, double x, plan_probe *pr)
{
    plan *p = &c->p;
    memset(pr, 0, sizeof *pr);
    cli_setup pool_setup;
    const cli_setup *setup = c->setup;
    pr->load = p->over == PLAN_OVER_LOAD ? x : p->fixed_load;
    pr->value = x;
    if (p->over != PLAN_OVER_LOAD) {
        cli_model_opts mo = *c->mo;
        mo.num_blocks = 0;
        mo.kv_budget = 0;
        if (p->over == PLAN_OVER_NUM_BLOCKS)
            mo.num_blocks = (uint32_t)x;
        else
            pr->value = (double)(mo.kv_budget = (uint64_t)x * p->block_bytes);
        int rc = cli_model_resolve(&mo, &pool_setup);
        if (rc != CLI_OK)
            return rc;
        if (pool_setup.cap.num_blocks != (uint32_t)x)
            return cli_error(CLI_RUNTIME,
                             "internal: a budget of %llu bytes gave %u blocks, not %.0f",
                             (unsigned long long)mo.kv_budget, pool_setup.cap.num_blocks, x);
        setup = &pool_setup;
    }
    pr->num_blocks = setup->cap.num_blocks;
    pr->kv_budget = setup->cap.kv_budget_bytes;
    pr->time_scale = time_scale_for(p, pr->load);
    scale_to(&c->sc, pr->time_scale);
    pr->rate = arrival_rate(c->sc.reqs, c->sc.base->n);

    cli_sim_opts so = *c->so;
    so.trace.time_scale = pr->time_scale; /* the config echo says how to replay it */
    kv_run_result res;
    int rc = cli_replay(&so, setup, &c->sc.view, NULL, &res, &pr->summary);
    if (rc == CLI_OK && res.livelock)
        rc = cli_error(CLI_RUNTIME,
                       "livelock guard fired at %s %g: a step scheduled nothing and preempted "
                       "nothing while work waited (please report)",
                       plan_over_name(p->over), pr->value);
    if (rc == CLI_OK && res.invariant_failed)
        rc = cli_error(CLI_RUNTIME, "pool invariants broken at %s %g (please report)",
                       plan_over_name(p->over), pr->value);
    kv_run_result_release(&res);
    if (rc == CLI_OK)
        measure(p, pr);
    return rc;
}

/* ---- bounds ------------------------------------------------------------------------- */

/* Σ over requests of the blocks each holds at full length (DESIGN §6.4). */
static uint64_t trace_demand_blocks(const kv_trace *t, uint32_t block_size)
{
    uint64_t d = 0;
    for (size_t i = 0; i < t->n; i++)
        d += ((uint64_t)t->reqs[i].prompt_len + t->reqs[i].output_len - 1 + block_size - 1) /
             block_size;
    return d;
}

static int parse_bound(plan_over over, const char *opt, const char *arg, uint64_t block_bytes,
                       double *out)
{
    if (over == PLAN_OVER_LOAD)
        return cli_parse_double(opt, arg, 1e-6, 1e6, out);
    uint64_t v;
    if (over == PLAN_OVER_NUM_BLOCKS) {
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

/* Search bounds and start; usage errors name the option. */
static int search_config(plan_ctx *c, const char *min_arg, const char *max_arg,
                         const kv_trace *trace, kv_search_config *sc)
{
    plan *p = &c->p;
    int rc;
    sc->factor = 2;
    if (p->over == PLAN_OVER_LOAD) {
        sc->harder_up = true;
        sc->min = LOAD_MIN_DEFAULT;
        sc->max = LOAD_MAX_DEFAULT;
        sc->start = 1;
    } else {
        sc->harder_up = false;
        sc->integer = true;
        sc->min = 2;
        double w = c->so->sched.watermark;
        double need = ceil((double)trace_demand_blocks(trace, c->setup->block_size) / (1 - w)) + 2;
        sc->max = need < MAX_BLOCKS_DEFAULT ? need : MAX_BLOCKS_DEFAULT;
        p->whole_trace_max = !max_arg && need <= MAX_BLOCKS_DEFAULT;
    }
    if (min_arg && (rc = parse_bound(p->over, "min", min_arg, p->block_bytes, &sc->min)) != 0)
        return rc;
    if (max_arg && (rc = parse_bound(p->over, "max", max_arg, p->block_bytes, &sc->max)) != 0)
        return rc;
    /* Budgets are N·block_bytes in 64 bits. */
    double max_n = floor((double)UINT64_MAX / (double)(p->block_bytes ? p->block_bytes : 1));
    if (p->over == PLAN_OVER_KV_BUDGET && sc->max > max_n)
        sc->max = max_n;
    if (!(sc->min < sc->max))
        return cli_error(CLI_USAGE, "--min (%g) must be below --max (%g)%s", sc->min, sc->max,
                         p->over == PLAN_OVER_LOAD || max_arg
                             ? ""
                             : ": the default --max is the pool that holds the whole trace");
    if (p->over != PLAN_OVER_LOAD)
        sc->start = sc->max;
    /* The most stretched probe must still fit 64-bit nanoseconds. */
    double slowest = p->over == PLAN_OVER_LOAD ? sc->min : p->fixed_load;
    double last = (double)trace->reqs[trace->n - 1].arrival_ns * time_scale_for(p, slowest);
    if (!(last < NS_LIMIT))
        return cli_error(CLI_USAGE,
                         "--%s %g stretches the trace beyond 64-bit nanoseconds (its last "
                         "arrival would be at %.3g s); raise it",
                         p->over == PLAN_OVER_LOAD ? "min" : "load", slowest, last / 1e9);
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

/* Checks that need only the options: 0 or CLI_USAGE. */
static int check_args(plan_ctx *c, const plan_args *a, const cli_parser *ps)
{
    plan *p = &c->p;
    kv_diag d;
    int rc;
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
        if (kv_slo_parse(&p->slos, a->slo_specs[i], &d) != 0)
            return cli_error(CLI_USAGE, "--slo: %s", d.msg);
    if (kv_slo_finish(&p->slos, &d) != 0)
        return cli_error(CLI_USAGE, "--slo: %s", d.msg);
    if (a->over && (rc = parse_over(a->over, &p->over)) != CLI_OK)
        return rc;
    p->fixed_load = 1;
    if (a->load) {
        if (p->over == PLAN_OVER_LOAD)
            return cli_error(CLI_USAGE, "--load fixes the load of a pool search: it needs "
                                        "--over num_blocks or --over kv_budget");
        if (cli_parse_double("load", a->load, 1e-6, 1e6, &p->fixed_load) != 0)
            return CLI_USAGE;
    }
    if (p->over != PLAN_OVER_LOAD && (c->mo->num_blocks || c->mo->kv_budget))
        return cli_error(CLI_USAGE, "--over %s searches the pool size: drop --%s",
                         plan_over_name(p->over), c->mo->num_blocks ? "num-blocks" : "kv-budget");
    return CLI_OK;
}

static void free_probes(plan *p)
{
    for (size_t i = 0; i < p->search.n; i++)
        json_decref(p->probes[i].summary);
    free(p->probes);
    p->probes = NULL;
}

static void show_progress(const plan_ctx *c, size_t i, double x)
{
    if (!c->progress)
        return;
    if (c->p.over == PLAN_OVER_LOAD)
        fprintf(stderr, "\rkvsim: probe %zu: load %gx   ", i + 1, x);
    else
        fprintf(stderr, "\rkvsim: probe %zu: %.0f blocks   ", i + 1, x);
    fflush(stderr);
}

/* The search loop: 0 or an exit code. */
static int search(plan_ctx *c)
{
    plan *p = &c->p;
    size_t cap = 0;
    double x;
    int rc = CLI_OK;
    while (rc == CLI_OK && kv_search_next(&p->search, &x)) {
        show_progress(c, p->search.n, x);
        kv_grow((void **)&p->probes, &cap, p->search.n + 1, sizeof *p->probes);
        plan_probe *pr = &p->probes[p->search.n];
        rc = probe(c, x, pr);
        if (rc == CLI_OK)
            kv_search_record(&p->search, x, pr->meets);
        else
            json_decref(pr->summary);
    }
    if (c->progress)
        fputs("\r\033[K", stderr);
    kv_search_result_get(&p->search, &p->result);
    return rc;
}

int cmd_plan(int argc, char **argv)
{
    const cli_opt *tables[] = {options, cli_sim_options, cli_model_options, NULL};
    cli_parser ps;
    cli_parser_init(&ps, "plan", argc, argv, tables);
    cli_sim_opts so;
    cli_model_opts mo;
    cli_sim_opts_init(&so);
    cli_model_opts_init(&mo);
    plan_args a = {.tolerance = 0.01, .confirm = 0.1, .max_probes = 40};
    plan_ctx c;
    memset(&c, 0, sizeof c);
    c.so = &so;
    c.mo = &mo;
    kv_slo_set_init(&c.p.slos);
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
        rc = check_args(&c, &a, &ps);

    /* The setup: the user's pool for --over load; for pool searches a 2-block pool of the
     * same geometry, for the block size and bytes per block. */
    cli_setup setup;
    if (rc == CLI_OK) {
        cli_model_opts base = mo;
        if (c.p.over != PLAN_OVER_LOAD)
            base.num_blocks = 2;
        rc = cli_model_resolve(&base, &setup);
        c.setup = &setup;
        c.p.block_bytes = setup.cap.block_bytes;
    }
    kv_engine_config check;
    if (rc == CLI_OK) /* option errors before any file is read */
        rc = cli_engine_config(&so, &setup, &check);

    kv_trace *trace = NULL;
    kv_diag d;
    if (rc == CLI_OK) {
        kv_trace_options raw = so.trace;
        raw.time_scale = 1.0; /* each probe applies its own scale, see the top comment */
        if (kv_trace_load(&trace, ps.positional[0], &raw, &d) != 0)
            rc = cli_diag(CLI_RUNTIME, &d);
    }
    kv_search_config sc = {
        .tolerance = a.tolerance, .confirm = a.confirm, .max_probes = a.max_probes};
    if (rc == CLI_OK)
        rc = search_config(&c, a.min, a.max, trace, &sc);
    if (rc == CLI_OK) {
        plan *p = &c.p;
        p->trace_path = ps.positional[0];
        p->n_requests = trace->n;
        p->base_time_scale = so.trace.time_scale;
        c.sc.base = trace;
        c.sc.reqs = kv_xmalloc(trace->n * sizeof *c.sc.reqs);
        c.sc.view = *trace;
        c.sc.view.reqs = c.sc.reqs;
        scale_to(&c.sc, time_scale_for(p, 1.0));
        p->base_rate = arrival_rate(c.sc.reqs, trace->n);
        c.progress = !a.quiet && !a.json && isatty(2);
        kv_search_init(&p->search, &sc);
        rc = search(&c);
    }
    if (rc == CLI_OK && a.out && plan_write_files(&c.p, a.out, &d) != 0)
        rc = cli_diag(CLI_RUNTIME, &d);
    if (rc == CLI_OK && !a.quiet) {
        if (a.json) {
            json_t *j = plan_json(&c.p);
            json_dumpf(j, stdout, KV_JSON_FLAGS);
            fputc('\n', stdout);
            json_decref(j);
        } else {
            plan_print(stdout, &c.p);
        }
        if (fflush(stdout) != 0 || ferror(stdout))
            rc = cli_error(CLI_RUNTIME, "cannot write to standard output");
    }
    /* After the answer: a figure problem never hides it. */
    if (rc == CLI_OK && a.plot)
        rc = cli_plot_dir(a.out, a.quiet || a.json);
    free_probes(&c.p);
    kv_search_release(&c.p.search);
    free(c.sc.reqs);
    kv_trace_free(trace);
    cli_parser_release(&ps);
    return rc;
}
