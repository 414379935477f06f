/* sim_opts: the option group shared by every command that replays a trace (run, sweep,
 * plan): trace reading, scheduler and pool policy, time model, seed.  It also turns the
 * options into an engine configuration and the config echo of summary.json, so every
 * command configures a replay the same way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/sim.h"
#include "kvsim/mem.h"
#include "kvsim/report.h"

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
    "  --watermark F            fraction of usable blocks kept free at admission\n"
    "                           (default 0.01; 0 = current vLLM v1)\n"
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
    "time:\n"
    "  --time-model M           roofline (default) [:KEY=VALUE,...], keys overhead,\n"
    "                           seq_overhead, mfu, mfu8, mbu, attn, attn_lat, layer_lat,\n"
    "                           link, ar_bw, ar_lat, pp_bw, pp_lat (unset: the GPU's);\n"
    "                           linear:A,B,C (s, s/token, s/KV token read) or fixed:DT\n";

void cli_sim_opts_init(cli_sim_opts *o)
{
    memset(o, 0, sizeof *o);
    o->trace.format = KV_TRACE_AUTO;
    o->trace.time_scale = 1.0;
    o->trace.seed = 1;
    o->sched = (kv_sched_config){.max_batched_tokens = 8192,
                                 .max_seqs = 256,
                                 .chunked_prefill = true,
                                 .admit_full_prompt = true,
                                 .watermark = 0.01,
                                 .preempt = KV_PREEMPT_FCFS};
    o->prefix_caching = true;
    o->free_order = KV_FREE_SPLIT;
    o->time_model = "roofline";
}

bool cli_sim_opts_owns(int id)
{
    return id >= OPT_FORMAT && id < OPT_SIM_LAST;
}

int cli_sim_opts_handle(cli_sim_opts *o, int id, const char *arg)
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

int cli_engine_config(const cli_sim_opts *o, const cli_setup *setup, kv_engine_config *c)
{
    memset(c, 0, sizeof *c);
    c->num_blocks = setup->cap.num_blocks;
    c->block_size = setup->block_size;
    c->prefix_caching = o->prefix_caching;
    c->free_order = o->free_order;
    c->sched = o->sched;
    kv_diag d;
    if (kv_timing_parse(o->time_model, &c->timing, &d) != 0)
        return cli_diag(CLI_USAGE, &d);
    kv_timing_bind(&c->timing, &setup->model, &setup->gpu, &setup->shard);
    c->shared_prefix = o->shared_prefix;
    c->model_name = setup->model.name;
    c->kv_dtype = kv_dtype_name(setup->model.kv_dtype);
    c->sample_every = 1;
#ifdef KVSIM_DEBUG
    c->check_invariants = true;
#endif
    return 0;
}

json_t *cli_config_json(const cli_sim_opts *o, const cli_setup *setup, const kv_trace *t,
                        const kv_engine_config *c)
{
    json_t *j = json_object();
    char buf[KV_TIMING_DESCRIBE_MAX];
    json_object_set_new(j, "trace", json_string(t->path));
    json_object_set_new(j, "format", json_string(kv_trace_format_name(t->format)));
    json_object_set_new(j, "trace_block_size", json_integer(t->trace_block_size));
    json_object_set_new(j, "limit",
                        o->trace.limit ? json_integer((json_int_t)o->trace.limit) : json_null());
    json_object_set_new(j, "time_scale", json_real(o->trace.time_scale));
    json_object_set_new(j, "rate", o->trace.rate > 0 ? json_real(o->trace.rate) : json_null());
    json_object_set_new(j, "shared_prefix", json_integer(o->shared_prefix));
    json_object_set_new(j, "seed", json_integer((json_int_t)o->trace.seed));
    json_object_set_new(j, "model", json_string(setup->model.name));
    json_object_set_new(j, "gpu", json_string(setup->gpu.name));
    json_object_set_new(j, "tp", json_integer(setup->shard.tp));
    json_object_set_new(j, "pp", json_integer(setup->shard.pp));
    json_object_set_new(j, "kv_dtype", json_string(kv_dtype_name(setup->model.kv_dtype)));
    json_object_set_new(j, "bytes_per_token_rank", json_real(setup->shard.bytes_per_token_rank));
    json_object_set_new(j, "block_size", json_integer(setup->block_size));
    json_object_set_new(j, "block_bytes", json_integer((json_int_t)setup->cap.block_bytes));
    json_object_set_new(j, "kv_budget_bytes", json_integer((json_int_t)setup->cap.kv_budget_bytes));
    json_object_set_new(j, "num_blocks", json_integer(setup->cap.num_blocks));
    json_object_set_new(j, "num_blocks_from", json_string(setup->budget_source));
    json_object_set_new(j, "watermark", json_real(o->sched.watermark));
    json_object_set_new(j, "max_seqs", json_integer(o->sched.max_seqs));
    json_object_set_new(j, "max_batched_tokens", json_integer(o->sched.max_batched_tokens));
    json_object_set_new(j, "chunked_prefill", json_boolean(o->sched.chunked_prefill));
    json_object_set_new(j, "prefix_caching", json_boolean(o->prefix_caching));
    json_object_set_new(j, "admit_full_prompt", json_boolean(o->sched.admit_full_prompt));
    json_object_set_new(j, "free_order", json_string(kv_free_order_name(o->free_order)));
    json_object_set_new(j, "preempt", json_string(kv_preempt_name(o->sched.preempt)));
    kv_timing_describe(&c->timing, buf, sizeof buf);
    json_object_set_new(j, "time_model", json_string(buf));
    json_t *notes = json_array();
    bool has_ids = false;
    for (size_t i = 0; i < t->n && !has_ids; i++)
        has_ids = t->reqs[i].content == KV_CONTENT_HASH_IDS;
    if (has_ids && setup->block_size > t->trace_block_size) {
        snprintf(buf, sizeof buf,
                 "block size %u > trace block size %u: hash_ids sharing is only approximate",
                 setup->block_size, t->trace_block_size);
        json_array_append_new(notes, json_string(buf));
    }
    if (setup->shard.kv_replicated) {
        snprintf(buf, sizeof buf, "TP %u > %u KV heads: each rank holds a replicated KV head",
                 setup->shard.tp, setup->model.num_kv_heads);
        json_array_append_new(notes, json_string(buf));
    }
    json_object_set_new(j, "notes", notes);
    return j;
}

int cli_replay(const cli_sim_opts *o, const cli_setup *setup, const kv_trace *trace,
               const kv_engine_config *hooks, kv_run_result *res, json_t **summary)
{
    kv_engine_config cfg;
    *summary = NULL;
    memset(res, 0, sizeof *res);
    int rc = cli_engine_config(o, setup, &cfg);
    if (rc != CLI_OK)
        return rc;
    if (hooks) {
        cfg.sample_every = hooks->sample_every ? hooks->sample_every : 1;
        cfg.on_sample = hooks->on_sample;
        cfg.on_progress = hooks->on_progress;
        cfg.on_step_end = hooks->on_step_end;
        cfg.ctx = hooks->ctx;
    }
    kv_diag d;
    if (kv_engine_run(&cfg, trace, res, &d) != 0)
        return cli_diag(CLI_RUNTIME, &d);
    *summary = kv_report_summary(res, cli_config_json(o, setup, trace, &cfg));
    return CLI_OK;
}
