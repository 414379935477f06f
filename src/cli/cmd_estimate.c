/* kvsim estimate: the capacity model (DESIGN §2) without a trace — bytes per token, per-rank
 * sharding, KV budget → num_blocks, max tokens and concurrency, and the three ledgers for
 * a set of sequence lengths.
 *
 * The numbers are the core's (src/estimate.c, the formulas in include/kvsim/estimate.h);
 * this file parses --lengths, and prints either the table for people (every size in
 * binary units with the decimal figure in parentheses, exact bytes where they are the
 * answer) or, with --json, report_estimate.c's object.  Without --lengths the ledgers
 * describe one sequence of --target-len tokens.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "kvsim/estimate.h"
#include "kvsim/mem.h"
#include "kvsim/report.h"
#include "kvsim/text.h"

typedef struct est_cmd {
    uint64_t *lengths; /* owned; NULL until --lengths (the last --lengths wins) */
    size_t n_lengths, cap_lengths;
    kv_estimate_options e; /* lengths set from the above at exec */
    bool json;
    kv_setup_options mo;
} est_cmd;

enum { OPT_LENGTHS = 1, OPT_SHARED_PREFIX, OPT_TARGET_LEN, OPT_SAFETY };

static const cli_opt options[] = {
    {"lengths", 0, "L,...", CLI_ID(OPT_LENGTHS),
     "sequence lengths in tokens; LxN repeats L N times, e.g.\n"
     "4096x20 (default: one sequence of --target-len)"},
    {"shared-prefix", 0, "N", CLI_ID(OPT_SHARED_PREFIX),
     "every sequence starts with the same N tokens; its full\n"
     "blocks are stored once (default 0)"},
    {"target-len", 0, "T", CLI_ID(OPT_TARGET_LEN),
     "tokens per request for concurrency (default 4096)"},
    {"safety", 0, "F", CLI_ID(OPT_SAFETY),
     "headroom factor, 0 < F <= 1, applied to concurrency\n(default 1.0)"},
    {"json", 0, NULL, CLI_SET(est_cmd, json), "print JSON instead of the table"},
    {0},
};

static const cli_section sections[] = {{"estimate options", options, NULL}, {0}};

/* One "L" or "LxN" item of --lengths (cut in place): CLI_OK, or CLI_USAGE after printing. */
static int add_lengths(est_cmd *c, char *item)
{
    uint64_t len, count = 1;
    char *x = strchr(item, 'x');
    if (x)
        *x = '\0';
    if (cli_parse_u64("lengths", item, 1, UINT32_MAX, &len) != 0)
        return CLI_USAGE;
    if (x && cli_parse_u64("lengths", x + 1, 1, KV_ESTIMATE_MAX_SEQUENCES, &count) != 0)
        return CLI_USAGE;
    if (count > KV_ESTIMATE_MAX_SEQUENCES - c->n_lengths)
        return cli_error(CLI_USAGE, "--lengths: more than %d sequences", KV_ESTIMATE_MAX_SEQUENCES);
    kv_grow((void **)&c->lengths, &c->cap_lengths, c->n_lengths + count, sizeof *c->lengths);
    for (uint64_t i = 0; i < count; i++)
        c->lengths[c->n_lengths++] = len;
    return CLI_OK;
}

static int handle(void *target, const cli_opt *opt, const char *arg)
{
    est_cmd *c = target;
    switch (opt->id) {
    case OPT_LENGTHS: { /* "1024,3072" or "4096x20,512" */
        c->n_lengths = 0;
        kv_kvlist list;
        kv_kvlist_init(&list, arg, 0, NULL);
        kv_kvitem it;
        int rc = CLI_OK, got;
        while (rc == CLI_OK && (got = kv_kvlist_next(&list, &it, NULL)) != 0)
            rc = got < 0 ? cli_error(CLI_USAGE, "--lengths: empty length in '%s'", arg)
                         : add_lengths(c, it.text);
        kv_kvlist_release(&list);
        return rc;
    }
    case OPT_SHARED_PREFIX:
        return cli_parse_u64(opt->name, arg, 0, UINT32_MAX, &c->e.shared_prefix);
    case OPT_TARGET_LEN:
        return cli_parse_u64(opt->name, arg, 1, UINT32_MAX, &c->e.target_len);
    default: /* OPT_SAFETY */
        if (cli_parse_double(opt->name, arg, 0.0, 1.0, &c->e.safety) != 0)
            return CLI_USAGE;
        if (c->e.safety <= 0.0)
            return cli_error(CLI_USAGE, "--safety: '%s' must be greater than 0", arg);
        return CLI_OK;
    }
}

static const cli_group group = {sections, handle, NULL};

static void init(void *state)
{
    est_cmd *c = state;
    kv_estimate_options_init(&c->e);
    kv_setup_options_init(&c->mo);
}

static void release(void *state)
{
    free(((est_cmd *)state)->lengths);
}

/* "131072 B = 128.00 KiB (131.07 KB)", or without the exact prefix when fractional. */
static const char *exact(char *buf, size_t n, double bytes)
{
    char f[64];
    kv_format_size(f, sizeof f, bytes);
    if (bytes == floor(bytes) && bytes >= 1024.0)
        snprintf(buf, n, "%.0f B = %s", bytes, f);
    else
        snprintf(buf, n, "%s", f);
    return buf;
}

static void print_ledger_row(const char *label, uint64_t tokens, double whole, double rank,
                             bool sharded)
{
    char a[96], b[96];
    kv_format_size(a, sizeof a, whole);
    kv_format_size(b, sizeof b, rank);
    if (sharded)
        printf("  %-11s %12llu tok  %-28s %s\n", label, (unsigned long long)tokens, a, b);
    else
        printf("  %-11s %12llu tok  %s\n", label, (unsigned long long)tokens, a);
}

/* Model, KV geometry, bytes per token and per block, weights. */
static void print_geometry(const kv_setup *s)
{
    const kv_model *m = &s->model;
    const kv_shard *sh = &s->shard;
    char a[128];
    printf("kvsim estimate: %s on %s, KV %s, block size %u, TP %u x PP %u\n", m->name, s->gpu.name,
           kv_dtype_name(m->kv_dtype), s->block_size, sh->tp, sh->pp);
    printf("sizes: binary units (KiB = 1024 B), decimal units (KB = 1000 B) in parentheses\n\n");

    printf("KV geometry     %u layers x %u KV heads x head dim %u x %g B (%s)", m->num_layers,
           m->num_kv_heads, m->head_dim, kv_dtype_bytes(m->kv_dtype), kv_dtype_name(m->kv_dtype));
    if (m->kv_scale_group)
        printf(" + %u B scale per %u elements", m->kv_scale_bytes, m->kv_scale_group);
    printf(" x 2 (K, V)\n");
    printf("bytes/token     %s  whole model\n", exact(a, sizeof a, sh->bytes_per_token));
    printf("  per rank      %s  %u layers, %u KV head%s\n",
           exact(a, sizeof a, sh->bytes_per_token_rank), sh->layers_per_rank, sh->kv_heads_per_rank,
           sh->kv_heads_per_rank == 1 ? "" : "s");
    if (sh->kv_replicated)
        printf("  note          TP %u > %u KV heads: each head is replicated on %u ranks\n", sh->tp,
               m->num_kv_heads, sh->kv_replication);
    if (sh->kv_indivisible)
        printf("  note          %u KV heads do not split evenly over TP %u: %u per rank, "
               "rounded up (vLLM refuses this TP)\n",
               m->num_kv_heads, sh->tp, sh->kv_heads_per_rank);
    if (m->num_layers % sh->pp != 0)
        printf("  note          %u layers over PP %u: the largest stage holds %u\n", m->num_layers,
               sh->pp, sh->layers_per_rank);
    printf("block           %s  %u tokens, one rank\n",
           exact(a, sizeof a, (double)s->cap.block_bytes), s->block_size);
    printf("weights/rank    %s  %llu params x %g B / (TP %u x PP %u)\n",
           exact(a, sizeof a, (double)sh->weight_bytes_rank), (unsigned long long)m->num_params,
           m->weight_bytes, sh->tp, sh->pp);
}

/* The budget, its source, blocks, tokens and the three concurrencies. */
static void print_capacity(const est_cmd *o, const kv_setup *s, const kv_estimate *e)
{
    const kv_shard *sh = &s->shard;
    char a[128], b[128], c[128];
    printf("\nKV budget       %s  per rank\n", exact(a, sizeof a, (double)s->cap.kv_budget_bytes));
    if (strcmp(s->budget_source, "gpu") == 0) {
        kv_format_size(a, sizeof a, (double)s->gpu.mem_bytes);
        kv_format_size(b, sizeof b, (double)sh->weight_bytes_rank);
        kv_format_size(c, sizeof c, (double)o->mo.reserve);
        printf("                = %g x GPU memory %s\n", o->mo.gpu_util, a);
        printf("                  - weights per rank %s\n", b);
        printf("                  - reserve %s (--reserve)\n", c);
    } else if (strcmp(s->budget_source, "num-blocks") == 0) {
        printf("                = %u blocks x %llu B (--num-blocks)\n", s->cap.num_blocks,
               (unsigned long long)s->cap.block_bytes);
    } else {
        printf("                (--kv-budget)\n");
    }
    printf("num_blocks      %u (%u usable: block 0 is the null block)\n", s->cap.num_blocks,
           s->cap.usable_blocks);
    printf("max tokens      %llu  (budget / bytes per token per rank)\n",
           (unsigned long long)s->cap.max_tokens);
    printf("concurrency     %llu requests of %llu tokens  (max tokens x %g / %llu)\n",
           (unsigned long long)e->max_concurrency, (unsigned long long)e->opt.target_len,
           e->opt.safety, (unsigned long long)e->opt.target_len);
    printf("  paged         %llu requests  (%u usable blocks x %g / %llu blocks each)\n",
           (unsigned long long)e->paged_max_concurrency, s->cap.usable_blocks, e->opt.safety,
           (unsigned long long)e->blocks_per_request);
    printf("  usable tokens %llu requests  (floor(%u usable blocks x %u / %llu) x %g)\n",
           (unsigned long long)e->usable_token_concurrency, s->cap.usable_blocks, s->block_size,
           (unsigned long long)e->opt.target_len, e->opt.safety);
}

static void print_ledgers(const kv_setup *s, const kv_estimate *e)
{
    bool sharded = s->shard.tp * s->shard.pp > 1;
    printf("\nledgers: %zu sequence%s, %llu tokens (max %llu), shared prefix %llu\n",
           e->opt.n_lengths, e->opt.n_lengths == 1 ? "" : "s", (unsigned long long)e->sum_len,
           (unsigned long long)e->max_len, (unsigned long long)e->opt.shared_prefix);
    if (sharded)
        printf("  %-11s %16s  %-28s %s\n", "", "", "whole model", "per rank");
    const kv_ledgers *w = &e->whole, *k = &e->rank;
    print_ledger_row("effective", w->effective_tokens, w->effective_bytes, k->effective_bytes,
                     sharded);
    print_ledger_row("padded", w->padded_tokens, w->padded_bytes, k->padded_bytes, sharded);
    print_ledger_row("paged", w->allocated_tokens, w->paged_bytes, k->paged_bytes, sharded);
    print_ledger_row("tail waste", w->tail_waste_tokens, w->tail_waste_bytes, k->tail_waste_bytes,
                     sharded);
    printf("  blocks      %12llu logical, %llu physical (full shared-prefix blocks once)\n",
           (unsigned long long)w->logical_blocks, (unsigned long long)w->physical_blocks);
    print_ledger_row("physical", w->physical_blocks * s->block_size, w->physical_bytes,
                     k->physical_bytes, sharded);
}

static int exec(void *state, int argc, char **argv)
{
    est_cmd *c = state;
    kv_setup s;
    kv_estimate e;
    kv_diag d;
    int rc = cli_model_resolve(&c->mo, &s);
    if (rc != CLI_OK)
        return rc;
    c->e.lengths = c->lengths;
    c->e.n_lengths = c->n_lengths;
    if ((rc = kv_estimate_compute(&s, &c->e, &e, &d)) != 0)
        return cli_diag(cli_code(rc), &d);
    if (c->json) {
        json_t *j = kv_json_stamped(kv_estimate_json(&s, &c->mo, &e), cli_command_line());
        if (json_dumpf(j, stdout, KV_JSON_FLAGS) != 0 || fputc('\n', stdout) == EOF)
            rc = cli_flush_stdout(); /* says why */
        json_decref(j);
    } else {
        print_geometry(&s);
        print_capacity(c, &s, &e);
        print_ledgers(&s, &e);
    }
    if (rc == CLI_OK)
        rc = cli_flush_stdout();
    return rc;
}

const cli_cmd cli_cmd_estimate = {
    .name = "estimate",
    .summary = "KV-cache capacity: bytes per token, blocks, concurrency, ledgers",
    .synopsis = "[model options] [--lengths L1,L2,...] [--shared-prefix N]\n"
                "[--target-len T] [--safety F] [--json]",
    .description =
        "KV-cache capacity without a trace: bytes per token c = 2 x layers x KV heads x head\n"
        "dim x bytes per element, per rank under TP/PP, the KV budget and num_blocks, max\n"
        "tokens and max concurrency, and the effective / padded / paged ledgers for the given\n"
        "lengths.\n",
    .uses = {{&group, 0}, {&cli_model_group, offsetof(est_cmd, mo)}},
    .args = {0, 0, NULL, "kvsim estimate takes no arguments (got '{arg}')"},
    .state_size = sizeof(est_cmd),
    .init = init,
    .exec = exec,
    .release = release,
};
