/* kvsim gen: write a kvsim JSONL trace from planner figures (see include/kvsim/gen.h and
 * the README section "Generating traces").
 *
 * This file parses options, opens the output and reports; the model lives in src/gen.c
 * and src/lengthdist.c.  --out FILE is written atomically (cli_outfile, src/cli/outfile.c):
 * no partial trace ever carries the requested name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "kvsim/gen.h"
#include "kvsim/afile.h"
#include "kvsim/mem.h"
#include "kvsim/trace.h"

enum {
    OPT_HELP = 1,
    OPT_OUT,
    OPT_PROMPT,
    OPT_OUTPUT,
    OPT_MESSAGE,
    OPT_RATE,
    OPT_BURSTINESS,
    OPT_REQUESTS,
    OPT_DURATION,
    OPT_SEED,
    OPT_SYSTEM_PROMPTS,
    OPT_SYSTEM_PROMPT_LEN,
    OPT_ZIPF,
    OPT_SESSIONS,
    OPT_TURNS,
    OPT_THINK_TIME,
    OPT_ADAPTERS,
    OPT_PRIORITIES,
    OPT_TRACE_BLOCK_SIZE,
    OPT_LENGTH_SAMPLING,
    OPT_COUNT_
};

static const cli_opt options[] = {
    {"help", 'h', false, OPT_HELP},
    {"out", 'o', true, OPT_OUT},
    {"prompt", 0, true, OPT_PROMPT},
    {"output", 0, true, OPT_OUTPUT},
    {"message", 0, true, OPT_MESSAGE},
    {"rate", 0, true, OPT_RATE},
    {"burstiness", 0, true, OPT_BURSTINESS},
    {"requests", 'n', true, OPT_REQUESTS},
    {"duration", 0, true, OPT_DURATION},
    {"seed", 0, true, OPT_SEED},
    {"system-prompts", 0, true, OPT_SYSTEM_PROMPTS},
    {"system-prompt-len", 0, true, OPT_SYSTEM_PROMPT_LEN},
    {"zipf", 0, true, OPT_ZIPF},
    {"sessions", 0, false, OPT_SESSIONS},
    {"turns", 0, true, OPT_TURNS},
    {"think-time", 0, true, OPT_THINK_TIME},
    {"adapters", 0, true, OPT_ADAPTERS},
    {"priorities", 0, true, OPT_PRIORITIES},
    {"trace-block-size", 0, true, OPT_TRACE_BLOCK_SIZE},
    {"length-sampling", 0, true, OPT_LENGTH_SAMPLING},
    {NULL, 0, false, 0},
};

/* Help, in pieces: ISO C caps a string literal at 4095 characters. */
static const char *const help[] = {
    "usage: kvsim gen --prompt SPEC --output SPEC --rate R (--requests N | --duration S)\n"
    "                 [options] [--out FILE]\n"
    "\n",
    "Write a kvsim JSONL request trace (one JSON object per line, sorted by arrival) from\n"
    "length percentiles and a request rate.  The same options and --seed give\n"
    "byte-identical output.\n"
    "\n",
    "Lengths (SPEC = comma-separated KEY=VALUE; keys pNN for 0 < NN < 100, min, max):\n"
    "  --prompt SPEC        prompt lengths, e.g. p50=1000,p95=4000,p99=8000,max=32768;\n"
    "                       p50 is required (with --sessions: the first turn's prompt)\n"
    "  --output SPEC        output lengths, e.g. p50=200,p95=600,p99=1000\n"
    "  The quantile function passes exactly through every given percentile: ln(length)\n"
    "  is piecewise linear in z = Phi^-1(u) (a piecewise lognormal).  Below the lowest\n"
    "  and above the highest percentile the nearest segment's slope continues (above\n"
    "  P99 the tail continues the P95->P99 lognormal slope), capped by max.  With p50\n"
    "  only, every length is p50 (no spread is invented).  Lengths are integers: rounded\n"
    "  half up, then clamped to [min, max] (defaults 1 and 16777216).  Percentiles must\n"
    "  be non-decreasing and min <= every percentile <= max.  Prompt and output lengths\n"
    "  are independent.\n"
    "  --length-sampling M  stratified (default): every 1024 consecutive draws take one\n"
    "                       uniform from each 1/1024 quantile stratum, in random order,\n"
    "                       so sample percentiles sit tightly on the requested ones;\n"
    "                       iid: independent draws (same distribution, noisier)\n"
    "\n",
    "Arrivals:\n"
    "  --rate R             requests per second (required; up to 1e6)\n"
    "  --burstiness CV      coefficient of variation of the gaps between arrivals\n"
    "                       (default 1 = Poisson: exponential gaps); other values draw\n"
    "                       gamma gaps with shape 1/CV^2 and the same mean 1/R; 0 gives\n"
    "                       evenly spaced arrivals; at most 10\n"
    "  -n, --requests N     generate N requests, or\n"
    "  --duration S         all requests arriving in [0, S) seconds (exactly one of them)\n"
    "  --seed N             random seed (default 0)\n"
    "  Arrival times are printed in seconds with 9 decimals (exact nanoseconds); the\n"
    "  first arrival is one gap after 0.\n"
    "\n",
    "Shared system prompts (rows then carry hash_ids):\n"
    "  --system-prompts K   K distinct system prompts (default 0: none)\n"
    "  --system-prompt-len L  tokens in each system prompt (required with K)\n"
    "  --zipf S             a request uses prompt k = 1..K with probability ~ 1/k^S\n"
    "                       (default 0: uniform)\n"
    "  The drawn prompt length is the whole prompt, so the percentiles hold; its first\n"
    "  min(L, length) tokens are the system prompt.  A trace block whose tokens all\n"
    "  belong to the system prompt gets that prompt's shared id; a block that mixes\n"
    "  system and user tokens gets an id of its own, so sharing is exact for the first\n"
    "  floor(L/tb)*tb tokens (choose L a multiple of tb for exact sharing).\n"
    "\n",
    "Multi-turn conversations (rows then carry hash_ids):\n"
    "  --sessions           requests are turns of conversations: turn t's prompt is turn\n"
    "                       t-1's prompt + turn t-1's output + a new message, and its\n"
    "                       hash_ids begin with turn t-1's\n"
    "  --turns T            mean turns per conversation, geometric (default 4; an\n"
    "                       illustrative default, not a measurement)\n"
    "  --think-time S       mean time from one turn's arrival to the next, exponential\n"
    "                       (default 30 s; it includes waiting for the reply)\n"
    "  --message SPEC       new-message lengths of later turns (default: the --prompt SPEC)\n"
    "  Conversations start at rate R/T, so requests arrive at about R in the long run.  A\n"
    "  conversation ends early when its next prompt would exceed the --prompt max (else\n"
    "  16777216).  A previous output becomes prompt content of the next turn; kvsim never\n"
    "  matches generated tokens to prompt content, so turn t-1's output first hits\n"
    "  the cache in turn t+1.  Ids are \"s<conversation>.<turn>\"; without --sessions \"r<row>\".\n"
    "\n",
    "Other fields:\n"
    "  --adapters K         each request (conversation) uses one of K LoRA adapters\n"
    "                       \"lora-1\"..\"lora-K\", uniformly (default 0: no adapter field)\n"
    "  --priorities P       priority 0..P-1, uniformly, lower = more important\n"
    "                       (default 0: no priority field)\n"
    "  --trace-block-size TB  tokens per hash_ids entry (default 512, the default of\n"
    "                       'kvsim run'; if you change it, pass the same value to\n"
    "                       'kvsim run --trace-block-size')\n"
    "\n",
    "Output:\n"
    "  -o, --out FILE       write to FILE atomically (temp file + rename; nothing is left\n"
    "                       on error; an existing FILE is kept) instead of standard\n"
    "                       output ('-'); prints a one-line summary on stderr\n"
    "  Keys, in this order: id, arrival, prompt_len, output_len, then hash_ids,\n"
    "  adapter, priority when present.  Rows without hash_ids are content-less: kvsim\n"
    "  treats them as unique (no invented sharing).\n"
    "\n",
    "example:\n"
    "  kvsim gen --prompt p50=1000,p95=4000,p99=8000 --output p50=200,p95=600,p99=1000 \\\n"
    "            --rate 10 --requests 100000 --out trace.jsonl\n",
    NULL,
};

static int parse_spec(const char *opt, const char *arg, kv_lendist *d)
{
    kv_diag diag;
    if (kv_lendist_parse(d, arg, &diag) != 0)
        return cli_error(CLI_USAGE, "--%s: %s", opt, diag.msg);
    return 0;
}

/* ---- command ---------------------------------------------------------------------------- */

int cmd_gen(int argc, char **argv)
{
    const cli_opt *tables[] = {options, NULL};
    cli_parser p;
    cli_parser_init(&p, "gen", argc, argv, tables);
    kv_gen_config cfg;
    kv_gen_config_init(&cfg);
    bool given[OPT_COUNT_] = {false};
    const char *out_path = NULL;
    int rc = CLI_OK, id;
    const char *arg;
    while (rc == CLI_OK && (id = cli_next(&p, &arg)) != CLI_OPT_END) {
        if (id > 0)
            given[id] = true;
        switch (id) {
        case CLI_OPT_ERROR:
            rc = CLI_USAGE;
            break;
        case OPT_HELP:
            for (const char *const *h = help; *h; h++)
                fputs(*h, stdout);
            cli_parser_release(&p);
            return CLI_OK;
        case OPT_OUT:
            out_path = arg;
            break;
        case OPT_PROMPT:
            rc = parse_spec("prompt", arg, &cfg.prompt);
            break;
        case OPT_OUTPUT:
            rc = parse_spec("output", arg, &cfg.output);
            break;
        case OPT_MESSAGE:
            rc = parse_spec("message", arg, &cfg.message);
            break;
        case OPT_RATE:
            rc = cli_parse_double("rate", arg, 0.0, KV_GEN_MAX_RATE, &cfg.rate);
            if (rc == CLI_OK && cfg.rate <= 0.0)
                rc = cli_error(CLI_USAGE, "--rate: '%s' must be above 0", arg);
            break;
        case OPT_BURSTINESS:
            rc = cli_parse_double("burstiness", arg, 0.0, KV_GEN_MAX_BURSTINESS, &cfg.burstiness);
            break;
        case OPT_REQUESTS:
            rc = cli_parse_u64("requests", arg, 1, KV_GEN_MAX_REQUESTS, &cfg.requests);
            break;
        case OPT_DURATION:
            rc = cli_parse_double("duration", arg, 0.0, KV_GEN_MAX_DURATION, &cfg.duration_s);
            if (rc == CLI_OK && cfg.duration_s <= 0.0)
                rc = cli_error(CLI_USAGE, "--duration: '%s' must be above 0", arg);
            break;
        case OPT_SEED:
            rc = cli_parse_u64("seed", arg, 0, UINT64_MAX, &cfg.seed);
            break;
        case OPT_SYSTEM_PROMPTS:
            rc = cli_parse_u32("system-prompts", arg, 1, KV_GEN_MAX_SYSTEM_PROMPTS,
                               &cfg.system_prompts);
            break;
        case OPT_SYSTEM_PROMPT_LEN:
            rc = cli_parse_u32("system-prompt-len", arg, 1, KV_TRACE_MAX_LEN,
                               &cfg.system_prompt_len);
            break;
        case OPT_ZIPF:
            rc = cli_parse_double("zipf", arg, 0.0, 10.0, &cfg.zipf);
            break;
        case OPT_SESSIONS:
            cfg.sessions = true;
            break;
        case OPT_TURNS:
            rc = cli_parse_double("turns", arg, 1.0, KV_GEN_MAX_TURNS, &cfg.turns);
            break;
        case OPT_THINK_TIME:
            rc = cli_parse_double("think-time", arg, 0.0, KV_GEN_MAX_THINK_TIME, &cfg.think_time_s);
            break;
        case OPT_ADAPTERS:
            rc = cli_parse_u32("adapters", arg, 0, KV_GEN_MAX_ADAPTERS, &cfg.adapters);
            break;
        case OPT_PRIORITIES:
            rc = cli_parse_u32("priorities", arg, 0, KV_GEN_MAX_PRIORITIES, &cfg.priorities);
            break;
        case OPT_TRACE_BLOCK_SIZE:
            rc = cli_parse_u32("trace-block-size", arg, 1, KV_TRACE_MAX_LEN, &cfg.trace_block_size);
            break;
        case OPT_LENGTH_SAMPLING:
            if (strcmp(arg, "stratified") == 0)
                cfg.iid_lengths = false;
            else if (strcmp(arg, "iid") == 0)
                cfg.iid_lengths = true;
            else
                rc = cli_error(CLI_USAGE, "--length-sampling: '%s' is not one of stratified, iid",
                               arg);
            break;
        }
    }
    if (rc == CLI_OK && p.n_positional > 0)
        rc = cli_error(CLI_USAGE,
                       "kvsim gen takes no arguments (got '%s'; see 'kvsim gen "
                       "--help')",
                       p.positional[0]);
    /* What kv_gen_validate cannot see: options given without the one they refine. */
    static const struct {
        int opt, needs;
        const char *msg;
    } deps[] = {
        {OPT_TURNS, OPT_SESSIONS, "--turns needs --sessions"},
        {OPT_THINK_TIME, OPT_SESSIONS, "--think-time needs --sessions"},
        {OPT_MESSAGE, OPT_SESSIONS, "--message needs --sessions"},
        {OPT_ZIPF, OPT_SYSTEM_PROMPTS, "--zipf needs --system-prompts K"},
        {OPT_SYSTEM_PROMPT_LEN, OPT_SYSTEM_PROMPTS, "--system-prompt-len needs --system-prompts K"},
    };
    for (size_t i = 0; rc == CLI_OK && i < sizeof deps / sizeof deps[0]; i++)
        if (given[deps[i].opt] && !given[deps[i].needs])
            rc = cli_error(CLI_USAGE, "%s", deps[i].msg);
    if (rc == CLI_OK && !given[OPT_PROMPT])
        rc = cli_error(CLI_USAGE, "kvsim gen needs --prompt SPEC (e.g. p50=1000,p99=8000)");
    if (rc == CLI_OK && !given[OPT_OUTPUT])
        rc = cli_error(CLI_USAGE, "kvsim gen needs --output SPEC (e.g. p50=200,p99=1000)");
    if (rc == CLI_OK && !given[OPT_RATE])
        rc = cli_error(CLI_USAGE, "kvsim gen needs --rate R (requests per second)");
    if (rc == CLI_OK && given[OPT_REQUESTS] && given[OPT_DURATION])
        rc = cli_error(CLI_USAGE, "give either --requests N or --duration S, not both");
    if (rc == CLI_OK && !given[OPT_REQUESTS] && !given[OPT_DURATION])
        rc = cli_error(CLI_USAGE, "kvsim gen needs --requests N or --duration S");
    kv_diag diag;
    if (rc == CLI_OK && kv_gen_validate(&cfg, &diag) != 0)
        rc = cli_diag(CLI_USAGE, &diag);
    cli_parser_release(&p);
    if (rc != CLI_OK)
        return rc;

    kv_afile o;
    if (kv_afile_open(&o, out_path, &diag) != 0)
        return cli_diag(CLI_RUNTIME, &diag);
    bool to_file = o.path != NULL;
    /* A big buffer for files: traces are written in one pass of many short lines.  (Set
     * before the first write; stdout keeps its own buffer, which outlives this frame.) */
    char *buf = NULL;
    if (to_file) {
        buf = kv_xmalloc(1 << 20);
        setvbuf(o.f, buf, _IOFBF, 1 << 20);
    }
    kv_gen_stats st;
    int err = kv_gen_write(&cfg, o.f, &st, &diag);
    if (err != 0) {
        if (err == -KV_EIO)
            snprintf(diag.msg, sizeof diag.msg, "cannot write %s%s%s: %s", o.path ? "'" : "",
                     o.path ? o.path : "standard output", o.path ? "'" : "", strerror(errno));
        if (to_file)
            kv_afile_abort(&o);
        else
            fflush(stdout);
        rc = cli_diag(CLI_RUNTIME, &diag);
    } else if (kv_afile_commit(&o, &diag) != 0) {
        rc = cli_diag(CLI_RUNTIME, &diag);
    }
    free(buf); /* the file using it is closed by now */
    if (rc == CLI_OK && to_file) {
        char conv[96] = "";
        if (cfg.sessions)
            snprintf(conv, sizeof conv, " in %llu conversations of up to %llu turns%s",
                     (unsigned long long)st.conversations, (unsigned long long)st.max_turns,
                     st.capped ? " (some cut by the context cap)" : "");
        fprintf(stderr, "kvsim: wrote %llu requests%s, %s, arriving over %.3f s, to '%s'\n",
                (unsigned long long)st.requests, conv,
                st.hash_ids ? "with hash_ids" : "content-less", st.last_arrival_ns / 1e9, out_path);
    }
    return rc;
}
