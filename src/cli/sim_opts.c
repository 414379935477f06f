/* sim_opts: the option group shared by every command that replays a trace (run, sweep,
 * plan): trace reading, scheduler and pool policy, time model, seed, parsed into the
 * core's kv_sim_options (three help sections, one handler; the on/off pairs are plain
 * stores); and the replay every such command runs (src/sim.c) with its summary
 * (src/summary.c), errors printed.  Values are checked one by one here; how they combine
 * is the core's (kv_sim_engine_config). */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/sim.h"
#include "kvsim/mem.h"
#include "kvsim/text.h"

enum {
    OPT_FORMAT = 1,
    OPT_TRACE_BLOCK_SIZE,
    OPT_LIMIT,
    OPT_TIME_SCALE,
    OPT_RATE,
    OPT_SHARED_PREFIX,
    OPT_SEED,
    OPT_WATERMARK,
    OPT_MAX_SEQS,
    OPT_MAX_BATCHED,
    OPT_FREE_ORDER,
    OPT_PREEMPT,
    OPT_TIME_MODEL,
    OPT_FRONTEND,
    OPT_HASH_ALGO,
    OPT_GPU_COST,
    OPT_REPLICAS,
    OPT_ROUTER,
    OPT_ROUTER_VIEW,
    OPT_ROUTER_REFRESH,
    OPT_ROUTER_OVERLAP_WEIGHT,
    OPT_WATERMARK_RULE,
    OPT_POLICY,
};

#define SO kv_sim_options

static const cli_opt trace_opts[] = {
    {"format", 0, "F", CLI_ID(OPT_FORMAT), "auto (default), jsonl, csv, mooncake, azure, lengths"},
    {"trace-block-size", 0, "N", CLI_ID(OPT_TRACE_BLOCK_SIZE),
     "tokens per hash_ids entry (default 512)"},
    {"limit", 0, "N", CLI_ID(OPT_LIMIT), "keep the first N non-empty data rows (default: all)"},
    {"time-scale", 0, "F", CLI_ID(OPT_TIME_SCALE), "multiply arrival times by F (default 1)"},
    {"rate", 0, "R", CLI_ID(OPT_RATE), "requests/s for length-stats traces (Poisson, seeded)"},
    {"shared-prefix", 0, "N", CLI_ID(OPT_SHARED_PREFIX),
     "content-less prompts all begin with the same N tokens"},
    {"seed", 0, "N", CLI_ID(OPT_SEED), "random seed (default 1)"},
    {0},
};

static const cli_opt sched_opts[] = {
    {"watermark", 0, "F", CLI_ID(OPT_WATERMARK),
     "fraction of blocks kept free at admission\n(default 0.01; vLLM's own default is 0)"},
    {"watermark-rule", 0, "R", CLI_ID(OPT_WATERMARK_RULE),
     "vllm (default: W = floor(F * N), only while a\nrequest runs) or v0 (floor(F * (N-1)), always,\nwith rejections)"},
    {"max-seqs", 0, "N", CLI_ID(OPT_MAX_SEQS), "running requests cap (default 256)"},
    {"max-batched-tokens", 0, "N", CLI_ID(OPT_MAX_BATCHED), "token budget per step (default 8192)"},
    {"chunked-prefill", 0, NULL, CLI_SET(SO, sched.chunked_prefill),
     "split a long prompt across steps (default)"},
    {"no-chunked-prefill", 0, NULL, CLI_CLEAR(SO, sched.chunked_prefill),
     "never split a prompt across steps"},
    {"prefix-caching", 0, NULL, CLI_SET(SO, prefix_caching), "hash-keyed prefix sharing (default)"},
    {"no-prefix-caching", 0, NULL, CLI_CLEAR(SO, prefix_caching), "no hash-keyed prefix sharing"},
    {"admit-full-prompt", 0, NULL, CLI_SET(SO, sched.admit_full_prompt),
     "the admission gate needs blocks for all known tokens\n(default)"},
    {"no-admit-full-prompt", 0, NULL, CLI_CLEAR(SO, sched.admit_full_prompt),
     "the gate needs blocks for this step's chunk only"},
    {"free-order", 0, "O", CLI_ID(OPT_FREE_ORDER),
     "split (default, vLLM >= #42656) or append (older vLLM)"},
    {"preempt", 0, "P", CLI_ID(OPT_PREEMPT), "fcfs (default: last running) or priority"},
    {"policy", 0, "P", CLI_ID(OPT_POLICY),
     "fcfs (default) or priority: the waiting queue by\n(priority, arrival), priority victims (vLLM's\npolicy)"},
    {"async-scheduling", 0, NULL, CLI_SET(SO, sched.async_scheduling),
     "vLLM's async scheduler (default): step k+1 is\nscheduled before step k's tokens are applied"},
    {"no-async-scheduling", 0, NULL, CLI_CLEAR(SO, sched.async_scheduling),
     "schedule each step after the previous one's\ntokens are applied"},
    {0},
};

static const cli_opt time_opts[] = {
    {"time-model", 0, "M", CLI_ID(OPT_TIME_MODEL),
     "roofline (default) [:KEY=VALUE,...], keys overhead,\n"
     "seq_overhead, mfu, mfu8, mbu, attn, attn_lat, layer_lat,\n"
     "link, ar_bw, ar_lat, pp_bw, pp_lat (unset: the GPU's);\n"
     "linear:A,B,C (s, s/token, s/KV token read) or fixed:DT"},
    {"frontend", 0, "F", CLI_ID(OPT_FRONTEND),
     "the serving front end before the scheduler: none\n"
     "(default), vllm, or either with\n"
     ":in=MS,out=MS,rate=R,tok=MS (latency send->scheduler,\n"
     "token->client; API-server admissions per second, 0 =\n"
     "unlimited; its work per streamed token, booked at\n"
     "admission)"},
    {"hash-algo", 0, "A", CLI_ID(OPT_HASH_ALGO),
     "block identity: sha256 (default) or xxh3-128 (faster;\nneeds a kvsim built with libxxhash)"},
    {0},
};

static const cli_opt cost_opts[] = {
    {"gpu-cost-per-hour", 0, "C", CLI_ID(OPT_GPU_COST),
     "cost of one GPU-hour (any currency): adds the cost per\n"
     "million output tokens, C x TP x PP / output tokens per\n"
     "hour x 1e6 (default: none)"},
    {0},
};

static const cli_opt cluster_opts[] = {
    {"replicas", 0, "R", CLI_ID(OPT_REPLICAS),
     "R identical replicas behind one router (default 1), each\n"
     "with the pool, scheduler and step clock of one run"},
    {"router", 0, "POLICY", CLI_ID(OPT_ROUTER),
     "round-robin (default), random, least-requests, least-kv,\n"
     "prefix, weighted[:prefix=WP,queue=WQ,kv=WK] (default\n"
     "2,1,1), kv-cost, session; ties broken by --seed"},
    {"router-view", 0, "V", CLI_ID(OPT_ROUTER_VIEW),
     "the router's view of the caches: exact (default: each\n"
     "pool's index) or approx (an LRU of routed prompt blocks)"},
    {"router-refresh", 0, "D", CLI_ID(OPT_ROUTER_REFRESH),
     "load signals as sampled every D seconds (default 0: live)"},
    {"router-overlap-weight", 0, "W", CLI_ID(OPT_ROUTER_OVERLAP_WEIGHT),
     "kv-cost's weight of uncached prompt blocks (default 1)"},
    {0},
};

static const cli_section sections[] = {
    {"trace", trace_opts, NULL},
    {"scheduler and pool", sched_opts, NULL},
    {"time", time_opts, NULL},
    {"cost", cost_opts, NULL},
    {"cluster (DESIGN §10)", cluster_opts, NULL},
    {0},
};

/* The trace section's options (OPT_FORMAT … OPT_SEED). */
static int handle_trace(kv_sim_options *o, const cli_opt *opt, const char *arg)
{
    const char *name = opt->name;
    switch (opt->id) {
    case OPT_FORMAT:
        if (kv_trace_format_parse(arg, &o->trace.format) != 0)
            return cli_error(CLI_USAGE,
                             "--format: unknown format '%s' (auto, jsonl, csv, mooncake, azure, "
                             "lengths)",
                             arg);
        return 0;
    case OPT_TRACE_BLOCK_SIZE:
        return cli_parse_u32(name, arg, 1, KV_TRACE_MAX_LEN, &o->trace.trace_block_size);
    case OPT_LIMIT:
        return cli_parse_u64(name, arg, 1, UINT64_MAX, &o->trace.limit);
    case OPT_TIME_SCALE:
        return cli_parse_double(name, arg, 1e-9, 1e9, &o->trace.time_scale);
    case OPT_RATE:
        return cli_parse_double(name, arg, 1e-9, 1e12, &o->trace.rate);
    case OPT_SHARED_PREFIX:
        return cli_parse_u32(name, arg, 0, KV_TRACE_MAX_LEN, &o->shared_prefix);
    default: /* OPT_SEED */
        return cli_parse_u64(name, arg, 0, UINT64_MAX, &o->trace.seed);
    }
}

/* The cluster section's options (OPT_REPLICAS … OPT_ROUTER_OVERLAP_WEIGHT). */
static int handle_cluster(kv_sim_options *o, const cli_opt *opt, const char *arg)
{
    kv_diag d;
    switch (opt->id) {
    case OPT_REPLICAS:
        return cli_parse_u32(opt->name, arg, 1, KV_SIM_MAX_REPLICAS, &o->replicas);
    case OPT_ROUTER:
        return kv_router_parse(arg, &o->router, &d) == 0 ? 0 : cli_diag(CLI_USAGE, &d);
    case OPT_ROUTER_VIEW:
        return kv_router_view_parse(arg, &o->router.view, &d) == 0 ? 0 : cli_diag(CLI_USAGE, &d);
    case OPT_ROUTER_REFRESH:
        if (cli_parse_double(opt->name, arg, 0, 1e9, &o->router.refresh_s) != 0)
            return CLI_USAGE;
        return kv_router_config_check(&o->router, &d) == 0 ? 0 : cli_diag(CLI_USAGE, &d);
    default: /* OPT_ROUTER_OVERLAP_WEIGHT */
        return kv_router_weight_parse(arg, "{router_overlap_weight}", &o->router.overlap_weight,
                                      &d) == 0
                   ? 0
                   : cli_diag(CLI_USAGE, &d);
    }
}

static int handle(void *target, const cli_opt *opt, const char *arg)
{
    kv_sim_options *o = target;
    const char *name = opt->name;
    kv_diag d;
    if (opt->id >= OPT_FORMAT && opt->id <= OPT_SEED)
        return handle_trace(o, opt, arg);
    if (opt->id >= OPT_REPLICAS && opt->id <= OPT_ROUTER_OVERLAP_WEIGHT)
        return handle_cluster(o, opt, arg);
    switch (opt->id) {
    case OPT_WATERMARK:
        if (cli_parse_double(name, arg, 0, 1, &o->sched.watermark) != 0)
            return CLI_USAGE;
        if (o->sched.watermark >= 1)
            return cli_error(CLI_USAGE, "--watermark: '%s' must be below 1", arg);
        return 0;
    case OPT_MAX_SEQS:
        return cli_parse_u32(name, arg, 1, 1u << 24, &o->sched.max_seqs);
    case OPT_MAX_BATCHED:
        return cli_parse_u32(name, arg, 1, 1u << 30, &o->sched.max_batched_tokens);
    case OPT_FREE_ORDER:
        if (kv_free_order_parse(arg, &o->free_order) != 0)
            return cli_error(CLI_USAGE, "--free-order: '%s' is not split or append", arg);
        return 0;
    case OPT_PREEMPT:
        if (kv_preempt_parse(arg, &o->sched.preempt) != 0)
            return cli_error(CLI_USAGE, "--preempt: '%s' is not fcfs or priority", arg);
        return 0;
    case OPT_HASH_ALGO: {
        int rc = kv_hash_algo_parse(arg, &o->hash_algo);
        if (rc == -KV_ENOTSUP)
            return cli_error(CLI_USAGE, "--hash-algo: '%s' is not built into this kvsim (it "
                                        "needs libxxhash at build time)",
                             arg);
        if (rc != 0)
            return cli_error(CLI_USAGE, "--hash-algo: '%s' is not sha256 or xxh3-128", arg);
        return 0;
    }
    case OPT_GPU_COST:
        if (cli_parse_double(name, arg, -DBL_MAX, DBL_MAX, &o->gpu_cost_per_hour) != 0)
            return CLI_USAGE;
        if (o->gpu_cost_per_hour <= 0)
            return cli_error(CLI_USAGE, "--gpu-cost-per-hour: '%s' must be greater than 0", arg);
        return 0;
    case OPT_WATERMARK_RULE:
    case OPT_POLICY: {
        int rc = opt->id == OPT_POLICY ? kv_sched_policy_parse(arg, &o->sched.policy, &d)
                                  : kv_watermark_rule_parse(arg, &o->sched.watermark_rule, &d);
        return rc == 0 ? 0 : cli_diag(CLI_USAGE, &d);
    }
    case OPT_TIME_MODEL: {
        kv_timing t;
        if (kv_timing_parse(arg, &t, &d) != 0)
            return cli_diag(CLI_USAGE, &d);
        o->time_model = arg;
        return 0;
    }
    case OPT_FRONTEND: {
        kv_frontend f;
        if (kv_frontend_parse(arg, &f, &d) != 0)
            return cli_diag(CLI_USAGE, &d);
        o->frontend = arg;
        return 0;
    }
    default:
        return cli_error(CLI_USAGE, "internal: option %d not in the simulation group", opt->id);
    }
}

const cli_group cli_sim_group = {sections, handle, NULL};

int cli_engine_config(const kv_sim_options *o, const kv_setup *setup, kv_engine_config *c)
{
    kv_diag d;
    int rc = kv_sim_engine_config(o, setup, c, &d);
    return rc == 0 ? CLI_OK : cli_diag(CLI_USAGE, &d);
}

int cli_replay(const kv_sim_options *o, const kv_setup *setup, const kv_trace *trace,
               const kv_sim_hooks *hooks, kv_run_result *res, kv_summary *summary)
{
    kv_engine_config cfg;
    kv_diag d;
    memset(summary, 0, sizeof *summary);
    int rc = cli_engine_config(o, setup, &cfg);
    if (rc != CLI_OK)
        return rc;
    rc = kv_sim_replay(o, setup, trace, hooks, res, &d);
    if (rc != 0 && rc != -KV_ELIVELOCK) {
        kv_run_result_release(res);
        return cli_diag(CLI_RUNTIME, &d);
    }
    kv_summary_set_config(summary, o, setup, trace, &cfg);
    kv_summary_from_run(summary, res);
    if (cli_command_line())
        summary->command = kv_xstrdup(cli_command_line());
    return CLI_OK;
}

void cli_progress_text(char *buf, size_t n, const kv_progress *p)
{
    char fin[32], tot[32], arr[32];
    kv_grouped(fin, sizeof fin, (double)p->finished);
    kv_grouped(tot, sizeof tot, (double)p->total);
    kv_grouped(arr, sizeof arr, (double)p->arrived);
    double pct = p->total ? 100.0 * (double)p->finished / (double)p->total : 100.0;
    int len = snprintf(buf, n, "kvsim: %s of %s requests finished (%.1f%%) at %.1f s simulated",
                       fin, tot, pct, (double)p->now_ns / 1e9);
    if (len >= 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, ", %s arrived", p->arrived < p->total ? arr : "all");
}
