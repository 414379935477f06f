/* sim_opts: the option group shared by every command that replays a trace (run, sweep,
 * plan): trace reading, scheduler and pool policy, time model, seed, parsed into the
 * core's kv_sim_options; and the replay every such command runs (src/sim.c) with its
 * summary (src/summary.c), errors printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/sim.h"
#include "kvsim/mem.h"

enum {
    OPT_FORMAT = 200,
    OPT_TRACE_BLOCK_SIZE,
    OPT_LIMIT,
    OPT_TIME_SCALE,
    OPT_RATE,
    OPT_SHARED_PREFIX,
    OPT_SEED,
    OPT_WATERMARK,
    OPT_MAX_SEQS,
    OPT_MAX_BATCHED,
    OPT_CHUNKED,
    OPT_NO_CHUNKED,
    OPT_NO_PREFIX_CACHING,
    OPT_PREFIX_CACHING,
    OPT_ADMIT_FULL,
    OPT_NO_ADMIT_FULL,
    OPT_FREE_ORDER,
    OPT_PREEMPT,
    OPT_TIME_MODEL,
    OPT_WATERMARK_RULE,
    OPT_POLICY,
    OPT_ASYNC,
    OPT_NO_ASYNC,
    OPT_SIM_LAST,
};

const cli_opt cli_sim_options[] = {
    {"format", 0, true, OPT_FORMAT},
    {"trace-block-size", 0, true, OPT_TRACE_BLOCK_SIZE},
    {"limit", 0, true, OPT_LIMIT},
    {"time-scale", 0, true, OPT_TIME_SCALE},
    {"rate", 0, true, OPT_RATE},
    {"shared-prefix", 0, true, OPT_SHARED_PREFIX},
    {"seed", 0, true, OPT_SEED},
    {"watermark", 0, true, OPT_WATERMARK},
    {"max-seqs", 0, true, OPT_MAX_SEQS},
    {"max-batched-tokens", 0, true, OPT_MAX_BATCHED},
    {"chunked-prefill", 0, false, OPT_CHUNKED},
    {"no-chunked-prefill", 0, false, OPT_NO_CHUNKED},
    {"prefix-caching", 0, false, OPT_PREFIX_CACHING},
    {"no-prefix-caching", 0, false, OPT_NO_PREFIX_CACHING},
    {"admit-full-prompt", 0, false, OPT_ADMIT_FULL},
    {"no-admit-full-prompt", 0, false, OPT_NO_ADMIT_FULL},
    {"free-order", 0, true, OPT_FREE_ORDER},
    {"preempt", 0, true, OPT_PREEMPT},
    {"time-model", 0, true, OPT_TIME_MODEL},
    {"watermark-rule", 0, true, OPT_WATERMARK_RULE},
    {"policy", 0, true, OPT_POLICY},
    {"async-scheduling", 0, false, OPT_ASYNC},
    {"no-async-scheduling", 0, false, OPT_NO_ASYNC},
    {NULL, 0, false, 0},
};

const char cli_sim_opts_help[] =
    "trace:\n"
    "  --format F               auto (default), jsonl, csv, mooncake, azure, lengths\n"
    "  --trace-block-size N     tokens per hash_ids entry (default 512)\n"
    "  --limit N                keep the first N non-empty data rows (default: all)\n"
    "  --time-scale F           multiply arrival times by F (default 1)\n"
    "  --rate R                 requests/s for length-stats traces (Poisson, seeded)\n"
    "  --shared-prefix N        content-less prompts all begin with the same N tokens\n"
    "  --seed N                 random seed (default 1)\n"
    "scheduler and pool:\n"
    "  --watermark F            fraction of blocks kept free at admission\n"
    "                           (default 0.01; vLLM's own default is 0)\n"
    "  --watermark-rule R       vllm (default: W = floor(F * N), only while a request\n"
    "                           runs) or v0 (floor(F * (N-1)), always, with rejections)\n"
    "  --max-seqs N             running requests cap (default 256)\n"
    "  --max-batched-tokens N   token budget per step (default 8192)\n"
    "  --no-chunked-prefill     never split a prompt across steps (default: chunked;\n"
    "                           --chunked-prefill turns it back on)\n"
    "  --no-prefix-caching      no hash-keyed prefix sharing (default: on;\n"
    "                           --prefix-caching turns it back on)\n"
    "  --admit-full-prompt      the admission gate needs blocks for all known tokens\n"
    "                           (default); --no-admit-full-prompt: for this step's chunk\n"
    "  --free-order O           split (default, vLLM >= #42656) or append (older vLLM)\n"
    "  --preempt P              fcfs (default: last running) or priority\n"
    "  --policy P               fcfs (default) or priority: the waiting queue by\n"
    "                           (priority, arrival), priority victims (vLLM's policy)\n"
    "  --no-async-scheduling    schedule each step after the previous one's tokens are\n"
    "                           applied (default: vLLM's async scheduler, which schedules\n"
    "                           step k+1 first; --async-scheduling turns it back on)\n"
    "time:\n"
    "  --time-model M           roofline (default) [:KEY=VALUE,...], keys overhead,\n"
    "                           seq_overhead, mfu, mfu8, mbu, attn, attn_lat, layer_lat,\n"
    "                           link, ar_bw, ar_lat, pp_bw, pp_lat (unset: the GPU's);\n"
    "                           linear:A,B,C (s, s/token, s/KV token read) or fixed:DT\n";

bool cli_sim_opts_owns(int id)
{
    return id >= OPT_FORMAT && id < OPT_SIM_LAST;
}

int cli_sim_opts_handle(kv_sim_options *o, int id, const char *arg)
{
    switch (id) {
    case OPT_FORMAT:
        if (kv_trace_format_parse(arg, &o->trace.format) != 0)
            return cli_error(CLI_USAGE,
                             "--format: unknown format '%s' (auto, jsonl, csv, mooncake, azure, "
                             "lengths)",
                             arg);
        return 0;
    case OPT_TRACE_BLOCK_SIZE:
        return cli_parse_u32("trace-block-size", arg, 1, 1u << 20, &o->trace.trace_block_size);
    case OPT_LIMIT:
        return cli_parse_u64("limit", arg, 1, UINT64_MAX, &o->trace.limit);
    case OPT_TIME_SCALE:
        return cli_parse_double("time-scale", arg, 1e-9, 1e9, &o->trace.time_scale);
    case OPT_RATE:
        return cli_parse_double("rate", arg, 1e-9, 1e12, &o->trace.rate);
    case OPT_SHARED_PREFIX:
        return cli_parse_u32("shared-prefix", arg, 0, KV_TRACE_MAX_LEN, &o->shared_prefix);
    case OPT_SEED:
        return cli_parse_u64("seed", arg, 0, UINT64_MAX, &o->trace.seed);
    case OPT_WATERMARK:
        if (cli_parse_double("watermark", arg, 0, 1, &o->sched.watermark) != 0)
            return CLI_USAGE;
        if (o->sched.watermark >= 1)
            return cli_error(CLI_USAGE, "--watermark: '%s' must be below 1", arg);
        return 0;
    case OPT_MAX_SEQS:
        return cli_parse_u32("max-seqs", arg, 1, 1u << 24, &o->sched.max_seqs);
    case OPT_MAX_BATCHED:
        return cli_parse_u32("max-batched-tokens", arg, 1, 1u << 30, &o->sched.max_batched_tokens);
    case OPT_CHUNKED:
    case OPT_NO_CHUNKED:
        o->sched.chunked_prefill = id == OPT_CHUNKED;
        return 0;
    case OPT_PREFIX_CACHING:
    case OPT_NO_PREFIX_CACHING:
        o->prefix_caching = id == OPT_PREFIX_CACHING;
        return 0;
    case OPT_ADMIT_FULL:
    case OPT_NO_ADMIT_FULL:
        o->sched.admit_full_prompt = id == OPT_ADMIT_FULL;
        return 0;
    case OPT_FREE_ORDER:
        if (kv_free_order_parse(arg, &o->free_order) != 0)
            return cli_error(CLI_USAGE, "--free-order: '%s' is not split or append", arg);
        return 0;
    case OPT_PREEMPT:
        if (kv_preempt_parse(arg, &o->sched.preempt) != 0)
            return cli_error(CLI_USAGE, "--preempt: '%s' is not fcfs or priority", arg);
        return 0;
    case OPT_WATERMARK_RULE:
    case OPT_POLICY: {
        kv_diag d;
        int rc = id == OPT_POLICY ? kv_sched_policy_parse(arg, &o->sched.policy, &d)
                                  : kv_watermark_rule_parse(arg, &o->sched.watermark_rule, &d);
        return rc == 0 ? 0 : cli_diag(CLI_USAGE, &d);
    }
    case OPT_ASYNC:
    case OPT_NO_ASYNC:
        o->sched.async_scheduling = id == OPT_ASYNC;
        return 0;
    case OPT_TIME_MODEL: {
        kv_timing t;
        kv_diag d;
        if (kv_timing_parse(arg, &t, &d) != 0)
            return cli_diag(CLI_USAGE, &d);
        o->time_model = arg;
        return 0;
    }
    default:
        return cli_error(CLI_USAGE, "internal: option %d not in the simulation group", id);
    }
}

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
    return CLI_OK;
}
