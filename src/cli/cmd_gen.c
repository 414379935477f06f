/* kvsim gen: write a kvsim JSONL trace from planner figures (see include/kvsim/gen.h and
 * the README section "Generating traces").
 *
 * This file declares the options (in the help's sections, with the rules between them as
 * data), opens the output and reports; the model lives in src/gen.c and src/lengthdist.c,
 * whose kv_gen_validate checks the values together.  --out FILE is written atomically
 * (kv_afile): no partial trace ever carries the requested name.
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

typedef struct gen_cmd {
    kv_gen_config cfg;
    const char *out; /* --out FILE; NULL or "-": standard output */
} gen_cmd;

enum {
    OPT_PROMPT = 1,
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
    OPT_TURNS,
    OPT_THINK_TIME,
    OPT_ADAPTERS,
    OPT_PRIORITIES,
    OPT_TRACE_BLOCK_SIZE,
    OPT_LENGTH_SAMPLING,
    OPT_CONCURRENCY,
};

static const cli_opt length_opts[] = {
    {"prompt", 0, "SPEC", CLI_ID(OPT_PROMPT),
     "prompt lengths, e.g. p50=1000,p95=4000,p99=8000,max=32768;\n"
     "p50 is required (with --sessions: the first turn's prompt)"},
    {"output", 0, "SPEC", CLI_ID(OPT_OUTPUT), "output lengths, e.g. p50=200,p95=600,p99=1000"},
    {"length-sampling", 0, "M", CLI_ID(OPT_LENGTH_SAMPLING),
     "stratified (default): every 1024 consecutive draws take one\n"
     "uniform from each 1/1024 quantile stratum, in random order,\n"
     "so sample percentiles sit tightly on the requested ones;\n"
     "iid: independent draws (same distribution, noisier)"},
    {0},
};

static const cli_opt arrival_opts[] = {
    {"rate", 0, "R", CLI_ID(OPT_RATE),
     "requests per second (up to 1e6; required unless\n"
     "--concurrency: then the earliest send times)"},
    {"concurrency", 0, "N", CLI_ID(OPT_CONCURRENCY),
     "N closed-loop clients (vllm bench serve --max-concurrency):\n"
     "row i is client i mod N's ('client' c<k>), sent when the\n"
     "client's previous row has been answered; with\n"
     "--think-time S, after an exponential think time of mean S\n"
     "(default 0; 'think' on the row)"},
    {"burstiness", 0, "CV", CLI_ID(OPT_BURSTINESS),
     "coefficient of variation of the gaps between arrivals\n"
     "(default 1 = Poisson: exponential gaps); other values draw\n"
     "gamma gaps with shape 1/CV^2 and the same mean 1/R; 0 gives\n"
     "evenly spaced arrivals; at most 10"},
    {"requests", 'n', "N", CLI_ID(OPT_REQUESTS), "generate N requests, or"},
    {"duration", 0, "S", CLI_ID(OPT_DURATION),
     "all requests arriving in [0, S) seconds (give exactly\n"
     "one of --requests and --duration)"},
    {"seed", 0, "N", CLI_ID(OPT_SEED), "random seed (default 0)"},
    {0},
};

static const cli_opt system_opts[] = {
    {"system-prompts", 0, "K", CLI_ID(OPT_SYSTEM_PROMPTS),
     "K distinct system prompts (default 0: none)"},
    {"system-prompt-len", 0, "L", CLI_ID(OPT_SYSTEM_PROMPT_LEN),
     "tokens in each system prompt (required with K)"},
    {"zipf", 0, "S", CLI_ID(OPT_ZIPF),
     "a request uses prompt k = 1..K with probability ~ 1/k^S\n(default 0: uniform)"},
    {0},
};

static const cli_opt session_opts[] = {
    {"sessions", 0, NULL, CLI_SET(gen_cmd, cfg.sessions),
     "requests are turns of conversations: turn t's prompt\n"
     "is turn t-1's prompt + turn t-1's output + a new\n"
     "message, and its hash_ids begin with turn t-1's; each\n"
     "row names its conversation in 'session' (s<conversation>)"},
    {"turns", 0, "T", CLI_ID(OPT_TURNS),
     "mean turns per conversation, geometric (default 4; an\n"
     "illustrative default, not a measurement)"},
    {"think-time", 0, "S", CLI_ID(OPT_THINK_TIME),
     "mean time from one turn's arrival to the next, exponential\n"
     "(default 30 s; it includes waiting for the reply); with\n"
     "--concurrency: from a reply to the client's next request"},
    {"message", 0, "SPEC", CLI_ID(OPT_MESSAGE),
     "new-message lengths of later turns (default: the --prompt\nSPEC)"},
    {0},
};

static const cli_opt other_opts[] = {
    {"adapters", 0, "K", CLI_ID(OPT_ADAPTERS),
     "each request (conversation) uses one of K LoRA adapters\n"
     "\"lora-1\"..\"lora-K\", uniformly (default 0: no adapter field)"},
    {"priorities", 0, "P", CLI_ID(OPT_PRIORITIES),
     "priority 0..P-1, uniformly, lower = more important\n(default 0: no priority field)"},
    {"trace-block-size", 0, "TB", CLI_ID(OPT_TRACE_BLOCK_SIZE),
     "tokens per hash_ids entry (default 512, the default of\n"
     "'kvsim run'; if you change it, pass the same value to\n"
     "'kvsim run --trace-block-size')"},
    {0},
};

static const cli_opt output_opts[] = {
    {"out", 'o', "FILE", CLI_FILE(gen_cmd, out),
     "write to FILE atomically (temp file + rename; nothing is\n"
     "left on error; an existing FILE is kept) instead of\n"
     "standard output ('-'); prints a one-line summary on stderr"},
    {0},
};

static const cli_section sections[] = {
    {"Lengths (SPEC = comma-separated KEY=VALUE; keys pNN for 0 < NN < 100, min, max)", length_opts,
     "  The quantile function passes exactly through every given percentile: ln(length)\n"
     "  is piecewise linear in z = Phi^-1(u) (a piecewise lognormal).  Below the lowest\n"
     "  and above the highest percentile the nearest segment's slope continues (above\n"
     "  P99 the tail continues the P95->P99 lognormal slope), capped by max.  With p50\n"
     "  only, every length is p50 (no spread is invented).  Lengths are integers: rounded\n"
     "  half up, then clamped to [min, max] (defaults 1 and 16777216).  Percentiles must\n"
     "  be non-decreasing and min <= every percentile <= max.  Prompt and output lengths\n"
     "  are independent.\n"},
    {"Arrivals", arrival_opts,
     "  Arrival times are printed in seconds with 9 decimals (exact nanoseconds); the\n"
     "  first arrival is one gap after 0.\n"},
    {"Shared system prompts (rows then carry hash_ids)", system_opts,
     "  The drawn prompt length is the whole prompt, so the percentiles hold; its first\n"
     "  min(L, length) tokens are the system prompt.  A trace block whose tokens all\n"
     "  belong to the system prompt gets that prompt's shared id; a block that mixes\n"
     "  system and user tokens gets an id of its own, so sharing is exact for the first\n"
     "  floor(L/tb)*tb tokens (choose L a multiple of tb for exact sharing).\n"},
    {"Multi-turn conversations (rows then carry hash_ids)", session_opts,
     "  Conversations start at rate R/T, so requests arrive at about R in the long run.  A\n"
     "  conversation ends early when its next prompt would exceed the --prompt max (else\n"
     "  16777216).  A previous output becomes prompt content of the next turn; kvsim never\n"
     "  matches generated tokens to prompt content, so turn t-1's output first hits\n"
     "  the cache in turn t+1.  Ids are \"s<conversation>.<turn>\"; without --sessions\n"
     "  \"r<row>\".\n"},
    {"Other fields", other_opts, NULL},
    {"Output", output_opts,
     "  Keys, in this order: id, arrival, prompt_len, output_len, then hash_ids,\n"
     "  adapter, priority, session, client, think when present.  Rows without hash_ids are\n"
     "  content-less: kvsim treats them as unique (no invented sharing).\n"},
    {"example", NULL,
     "  kvsim gen --prompt p50=1000,p95=4000,p99=8000 --output p50=200,p95=600,p99=1000 \\\n"
     "            --rate 10 --requests 100000 --out trace.jsonl\n"},
    {0},
};

/* What kv_gen_validate cannot see: options given without the one they refine, and the
 * required ones. */
static const cli_dep deps[] = {
    {CLI_REQUIRES, "turns", "sessions", "--turns needs --sessions", NULL},
    {CLI_REQUIRES, "message", "sessions", "--message needs --sessions", NULL},
    {CLI_REQUIRES, "zipf", "system-prompts", "--zipf needs --system-prompts K", NULL},
    {CLI_REQUIRES, "system-prompt-len", "system-prompts",
     "--system-prompt-len needs --system-prompts K", NULL},
    {CLI_REQUIRED, "prompt", NULL, "kvsim gen needs --prompt SPEC (e.g. p50=1000,p99=8000)", NULL},
    {CLI_REQUIRED, "output", NULL, "kvsim gen needs --output SPEC (e.g. p50=200,p99=1000)", NULL},
    {CLI_ONE_OF, "requests", "duration", "give either --requests N or --duration S, not both",
     "kvsim gen needs --requests N or --duration S"},
    {0},
};

static int parse_spec(const char *opt, const char *arg, kv_lendist *d)
{
    kv_diag diag;
    if (kv_lendist_parse(d, arg, &diag) != 0)
        return cli_error(CLI_USAGE, "--%s: %s", opt, diag.msg);
    return 0;
}

/* A value that must be above 0 (a rate, a duration). */
static int parse_positive(const char *opt, const char *arg, double max, double *out)
{
    if (cli_parse_double(opt, arg, 0.0, max, out) != 0)
        return CLI_USAGE;
    if (*out <= 0.0)
        return cli_error(CLI_USAGE, "--%s: '%s' must be above 0", opt, arg);
    return CLI_OK;
}

static int handle(void *target, const cli_opt *opt, const char *arg)
{
    kv_gen_config *c = &((gen_cmd *)target)->cfg;
    const char *n = opt->name;
    switch (opt->id) {
    case OPT_PROMPT:
        return parse_spec(n, arg, &c->prompt);
    case OPT_OUTPUT:
        return parse_spec(n, arg, &c->output);
    case OPT_MESSAGE:
        return parse_spec(n, arg, &c->message);
    case OPT_RATE:
        return parse_positive(n, arg, KV_GEN_MAX_RATE, &c->rate);
    case OPT_BURSTINESS:
        return cli_parse_double(n, arg, 0.0, KV_GEN_MAX_BURSTINESS, &c->burstiness);
    case OPT_REQUESTS:
        return cli_parse_u64(n, arg, 1, KV_GEN_MAX_REQUESTS, &c->requests);
    case OPT_DURATION:
        return parse_positive(n, arg, KV_GEN_MAX_DURATION, &c->duration_s);
    case OPT_SEED:
        return cli_parse_u64(n, arg, 0, UINT64_MAX, &c->seed);
    case OPT_SYSTEM_PROMPTS:
        return cli_parse_u32(n, arg, 1, KV_GEN_MAX_SYSTEM_PROMPTS, &c->system_prompts);
    case OPT_SYSTEM_PROMPT_LEN:
        return cli_parse_u32(n, arg, 1, KV_TRACE_MAX_LEN, &c->system_prompt_len);
    case OPT_ZIPF:
        return cli_parse_double(n, arg, 0.0, 10.0, &c->zipf);
    case OPT_TURNS:
        return cli_parse_double(n, arg, 1.0, KV_GEN_MAX_TURNS, &c->turns);
    case OPT_THINK_TIME:
        return cli_parse_double(n, arg, 0.0, KV_GEN_MAX_THINK_TIME, &c->think_time_s);
    case OPT_ADAPTERS:
        return cli_parse_u32(n, arg, 0, KV_GEN_MAX_ADAPTERS, &c->adapters);
    case OPT_PRIORITIES:
        return cli_parse_u32(n, arg, 0, KV_GEN_MAX_PRIORITIES, &c->priorities);
    case OPT_CONCURRENCY:
        return cli_parse_u32(n, arg, 1, KV_GEN_MAX_CONCURRENCY, &c->concurrency);
    case OPT_TRACE_BLOCK_SIZE:
        return cli_parse_u32(n, arg, 1, KV_TRACE_MAX_LEN, &c->trace_block_size);
    default: /* OPT_LENGTH_SAMPLING */
        if (strcmp(arg, "stratified") != 0 && strcmp(arg, "iid") != 0)
            return cli_error(CLI_USAGE, "--length-sampling: '%s' is not one of stratified, iid",
                             arg);
        c->iid_lengths = strcmp(arg, "iid") == 0;
        return CLI_OK;
    }
}

static const cli_group group = {sections, handle, deps};

static void init(void *state)
{
    kv_gen_config_init(&((gen_cmd *)state)->cfg);
}

/* The one-line summary on stderr after a trace was written to a file. */
static void print_wrote(const kv_gen_config *cfg, const kv_gen_stats *st, const char *path)
{
    char conv[96] = "";
    if (cfg->sessions)
        snprintf(conv, sizeof conv, " in %llu conversations of up to %llu turns%s",
                 (unsigned long long)st->conversations, (unsigned long long)st->max_turns,
                 st->capped ? " (some cut by the context cap)" : "");
    fprintf(stderr, "kvsim: wrote %llu requests%s, %s, arriving over %.3f s, to '%s'\n",
            (unsigned long long)st->requests, conv, st->hash_ids ? "with hash_ids" : "content-less",
            st->last_arrival_ns / 1e9, path);
}

static int exec(void *state, int argc, char **argv)
{
    const kv_gen_config *cfg = &((gen_cmd *)state)->cfg;
    const char *out_path = ((gen_cmd *)state)->out;
    int rc = CLI_OK;
    kv_diag diag;
    if (kv_gen_validate(cfg, &diag) != 0)
        return cli_diag(CLI_USAGE, &diag);

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
    int err = kv_gen_write(cfg, o.f, &st, &diag);
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
    if (rc == CLI_OK && to_file)
        print_wrote(cfg, &st, out_path);
    return rc;
}

const cli_cmd cli_cmd_gen = {
    .name = "gen",
    .summary = "write a request trace from length percentiles and a rate",
    .synopsis = "--prompt SPEC --output SPEC (--rate R | --concurrency N)\n"
                "(--requests N | --duration S) [options] [--out FILE]",
    .description =
        "Write a kvsim JSONL request trace (one JSON object per line, sorted by arrival) from\n"
        "length percentiles and a request rate.  The same options and --seed give\n"
        "byte-identical output.\n",
    .uses = {{&group, 0}},
    .args = {0, 0, NULL, "kvsim gen takes no arguments (got '{arg}'; see 'kvsim gen --help')"},
    .state_size = sizeof(gen_cmd),
    .init = init,
    .exec = exec,
};
