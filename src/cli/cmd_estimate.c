/* kvsim estimate: the capacity model (DESIGN §2) without a trace — bytes per token, per-rank
 * sharding, KV budget → num_blocks, max tokens and concurrency, and the three ledgers for
 * a set of sequence lengths.
 *
 * Output is a table for people (every size in binary units with the decimal figure in
 * parentheses, exact bytes where they are the answer) or, with --json, one JSON object
 * whose keys come out in a fixed order (JSON_PRESERVE_ORDER) and whose whole numbers are
 * JSON integers, so scripts and golden tests can compare it byte for byte.
 *
 * Concurrency, two ways (they differ by the tail waste of the last block):
 *   max_concurrency       = ⌊max_tokens · safety / target_len⌋          token theory
 *   paged_max_concurrency = ⌊usable_blocks · safety / ⌈target_len/b⌉⌋   whole blocks
 *   usable_token_concurrency = ⌊⌊usable_blocks · b / target_len⌋ · safety⌋  DESIGN §2's
 *                           formula: usable tokens, ignoring that requests round up to blocks
 * Ledgers are given for the whole model (c) and for one rank of the largest pipeline stage
 * (c_rank), which is what a GPU holds.  Without --lengths they describe one sequence of
 * --target-len tokens.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "kvsim/mem.h"

enum {
    OPT_HELP = 1,
    OPT_LENGTHS,
    OPT_SHARED_PREFIX,
    OPT_TARGET_LEN,
    OPT_SAFETY,
    OPT_JSON,
};

static const cli_opt options[] = {
    {"help", 'h', false, OPT_HELP},
    {"lengths", 0, true, OPT_LENGTHS},
    {"shared-prefix", 0, true, OPT_SHARED_PREFIX},
    {"target-len", 0, true, OPT_TARGET_LEN},
    {"safety", 0, true, OPT_SAFETY},
    {"json", 0, false, OPT_JSON},
    {NULL, 0, false, 0},
};

#define DEFAULT_TARGET_LEN 4096
#define MAX_SEQUENCES      1000000

static const char help[] =
    "usage: kvsim estimate [model options] [--lengths L1,L2,...] [--shared-prefix N]\n"
    "                      [--target-len T] [--safety F] [--json]\n"
    "\n"
    "KV-cache capacity without a trace: bytes per token c = 2 x layers x KV heads x head dim\n"
    "x bytes per element, per rank under TP/PP, the KV budget and num_blocks, max tokens and\n"
    "max concurrency, and the effective / padded / paged ledgers for the given lengths.\n"
    "\n"
    "      --lengths L,...    sequence lengths in tokens; LxN repeats L N times, e.g.\n"
    "                         4096x20 (default: one sequence of --target-len)\n"
    "      --shared-prefix N  every sequence starts with the same N tokens; its full blocks\n"
    "                         are stored once (default 0)\n"
    "      --target-len T     tokens per request for concurrency (default 4096)\n"
    "      --safety F         headroom factor, 0 < F <= 1, applied to concurrency\n"
    "                         (default 1.0)\n"
    "      --json             print JSON instead of the table\n"
    "  -h, --help             show this help\n"
    "\n";

typedef struct est_opts {
    uint64_t *lengths;      /* owned; NULL until --lengths (the last --lengths wins) */
    size_t n_lengths;       /* ≤ MAX_SEQUENCES */
    uint64_t shared_prefix; /* tokens common to every sequence; may exceed some lengths */
    uint64_t target_len;    /* tokens per request for concurrency, ≥ 1 */
    double safety;          /* in (0, 1] */
    bool json;              /* --json */
} est_opts;

/* "1024,3072" or "4096x20,512": CLI_OK, or CLI_USAGE after printing. */
static int parse_lengths(const char *arg, est_opts *e)
{
    size_t cap = 0;
    e->n_lengths = 0;
    char *copy = kv_xstrdup(arg);
    int rc = CLI_OK;
    char *p = copy;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (*p == '\0') {
            rc = cli_error(CLI_USAGE, "--lengths: empty length in '%s'", arg);
            break;
        }
        uint64_t len, count = 1;
        char *x = strchr(p, 'x');
        if (x)
            *x = '\0';
        if ((rc = cli_parse_u64("lengths", p, 1, UINT32_MAX, &len)) != CLI_OK)
            break;
        if (x && (rc = cli_parse_u64("lengths", x + 1, 1, MAX_SEQUENCES, &count)) != CLI_OK)
            break;
        if (count > MAX_SEQUENCES - e->n_lengths) {
            rc = cli_error(CLI_USAGE, "--lengths: more than %d sequences", MAX_SEQUENCES);
            break;
        }
        kv_grow((void **)&e->lengths, &cap, e->n_lengths + count, sizeof *e->lengths);
        for (uint64_t i = 0; i < count; i++)
            e->lengths[e->n_lengths++] = len;
        if (!comma)
            break;
        p = comma + 1;
    }
    free(copy);
    return rc;
}

/* Whole numbers as JSON integers, others as reals. */
static json_t *jnum(double v)
{
    if (v == floor(v) && fabs(v) < 9.0e15)
        return json_integer((json_int_t)v);
    return json_real(v);
}

static json_t *ju(uint64_t v)
{
    return json_integer((json_int_t)v);
}

static json_t *ledgers_json(const kv_ledgers *l)
{
    json_t *o = json_object();
    json_object_set_new(o, "effective_tokens", ju(l->effective_tokens));
    json_object_set_new(o, "padded_tokens", ju(l->padded_tokens));
    json_object_set_new(o, "allocated_tokens", ju(l->allocated_tokens));
    json_object_set_new(o, "effective_bytes", jnum(l->effective_bytes));
    json_object_set_new(o, "padded_bytes", jnum(l->padded_bytes));
    json_object_set_new(o, "paged_bytes", jnum(l->paged_bytes));
    json_object_set_new(o, "tail_waste_tokens", ju(l->tail_waste_tokens));
    json_object_set_new(o, "tail_waste_bytes", jnum(l->tail_waste_bytes));
    json_object_set_new(o, "logical_blocks", ju(l->logical_blocks));
    json_object_set_new(o, "physical_blocks", ju(l->physical_blocks));
    json_object_set_new(o, "physical_bytes", jnum(l->physical_bytes));
    return o;
}

typedef struct results {
    const kv_setup_options *mo; /* the options, for the budget breakdown */
    const kv_setup *s;          /* resolved model, GPU, shard and capacity */
    const est_opts *e;
    kv_ledgers whole;                  /* at c, the whole model */
    kv_ledgers rank;                   /* at c_rank, one GPU of the largest stage */
    uint64_t blocks_per_request;       /* ⌈target_len / b⌉ */
    uint64_t max_concurrency;          /* ⌊max_tokens · safety / target_len⌋ */
    uint64_t paged_max_concurrency;    /* ⌊usable · safety / blocks_per_request⌋ */
    uint64_t usable_token_concurrency; /* DESIGN §2: ⌊⌊usable · b / target_len⌋ · safety⌋ */
    uint64_t sum_len, max_len, min_len; /* over e->lengths */
} results;

static int print_json(const results *r)
{
    const kv_setup *s = r->s;
    const kv_model *m = &s->model;
    json_t *root = json_object(), *o;

    o = json_object();
    json_object_set_new(o, "name", json_string(m->name));
    json_object_set_new(o, "source", json_string(s->model_path ? s->model_path : "preset"));
    json_object_set_new(o, "num_layers", ju(m->num_layers));
    json_object_set_new(o, "num_heads", ju(m->num_heads));
    json_object_set_new(o, "num_kv_heads", ju(m->num_kv_heads));
    json_object_set_new(o, "head_dim", ju(m->head_dim));
    json_object_set_new(o, "hidden_size", ju(m->hidden_size));
    json_object_set_new(o, "vocab_size", ju(m->vocab_size));
    json_object_set_new(o, "num_params", ju(m->num_params));
    json_object_set_new(o, "active_params", ju(m->active_params));
    json_object_set_new(o, "weight_bytes_per_param", jnum(m->weight_bytes));
    json_object_set_new(root, "model", o);

    o = json_object();
    json_object_set_new(o, "name", json_string(s->gpu.name));
    json_object_set_new(o, "mem_bytes", ju(s->gpu.mem_bytes));
    json_object_set_new(o, "hbm_bytes_per_s", jnum(s->gpu.hbm_bw));
    json_object_set_new(o, "peak_flops", jnum(s->gpu.peak_flops));
    json_object_set_new(root, "gpu", o);

    json_object_set_new(root, "kv_dtype", json_string(kv_dtype_name(m->kv_dtype)));
    json_object_set_new(root, "kv_dtype_bytes", jnum(kv_dtype_bytes(m->kv_dtype)));
    json_object_set_new(root, "kv_scale_group", ju(m->kv_scale_group));
    json_object_set_new(root, "kv_scale_bytes", ju(m->kv_scale_bytes));
    json_object_set_new(root, "block_size", ju(s->block_size));
    json_object_set_new(root, "bytes_per_token", jnum(s->shard.bytes_per_token));
    json_object_set_new(root, "bytes_per_token_per_rank", jnum(s->shard.bytes_per_token_rank));
    json_object_set_new(root, "block_bytes", ju(s->cap.block_bytes));

    o = json_object();
    json_object_set_new(o, "tp", ju(s->shard.tp));
    json_object_set_new(o, "pp", ju(s->shard.pp));
    json_object_set_new(o, "layers_per_rank", ju(s->shard.layers_per_rank));
    json_object_set_new(o, "kv_heads_per_rank", ju(s->shard.kv_heads_per_rank));
    json_object_set_new(o, "kv_replicated", json_boolean(s->shard.kv_replicated));
    json_object_set_new(o, "kv_replication", ju(s->shard.kv_replication));
    json_object_set_new(o, "kv_indivisible", json_boolean(s->shard.kv_indivisible));
    json_object_set_new(o, "weight_bytes_per_rank", ju(s->shard.weight_bytes_rank));
    json_object_set_new(root, "sharding", o);

    o = json_object();
    json_object_set_new(o, "budget_source", json_string(s->budget_source));
    if (strcmp(s->budget_source, "gpu") == 0) {
        json_object_set_new(o, "gpu_util", json_real(r->mo->gpu_util));
        json_object_set_new(o, "reserve_bytes", ju(r->mo->reserve));
    }
    json_object_set_new(o, "kv_budget_bytes", ju(s->cap.kv_budget_bytes));
    json_object_set_new(o, "num_blocks", ju(s->cap.num_blocks));
    json_object_set_new(o, "usable_blocks", ju(s->cap.usable_blocks));
    json_object_set_new(o, "max_tokens", ju(s->cap.max_tokens));
    json_object_set_new(o, "target_len", ju(r->e->target_len));
    json_object_set_new(o, "safety", json_real(r->e->safety));
    json_object_set_new(o, "blocks_per_request", ju(r->blocks_per_request));
    json_object_set_new(o, "max_concurrency", ju(r->max_concurrency));
    json_object_set_new(o, "paged_max_concurrency", ju(r->paged_max_concurrency));
    json_object_set_new(o, "usable_token_concurrency", ju(r->usable_token_concurrency));
    json_object_set_new(root, "capacity", o);

    o = json_object();
    json_object_set_new(o, "count", ju(r->e->n_lengths));
    json_object_set_new(o, "total_tokens", ju(r->sum_len));
    json_object_set_new(o, "min", ju(r->min_len));
    json_object_set_new(o, "max", ju(r->max_len));
    json_object_set_new(o, "shared_prefix", ju(r->e->shared_prefix));
    json_object_set_new(root, "lengths", o);
    json_object_set_new(root, "ledgers", ledgers_json(&r->whole));
    json_object_set_new(root, "ledgers_per_rank", ledgers_json(&r->rank));

    int rc =
        json_dumpf(root, stdout, JSON_PRESERVE_ORDER | JSON_INDENT(2) | JSON_REAL_PRECISION(15));
    json_decref(root);
    if (rc != 0)
        return -1;
    return fputc('\n', stdout) == EOF ? -1 : 0;
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

static void print_table(const results *r)
{
    const kv_setup *s = r->s;
    const kv_model *m = &s->model;
    const kv_shard *sh = &s->shard;
    char a[128], b[128], c[128];
    bool sharded = sh->tp * sh->pp > 1;

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

    printf("\nKV budget       %s  per rank\n", exact(a, sizeof a, (double)s->cap.kv_budget_bytes));
    if (strcmp(s->budget_source, "gpu") == 0) {
        kv_format_size(a, sizeof a, (double)s->gpu.mem_bytes);
        kv_format_size(b, sizeof b, (double)sh->weight_bytes_rank);
        kv_format_size(c, sizeof c, (double)r->mo->reserve);
        printf("                = %g x GPU memory %s\n", r->mo->gpu_util, a);
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
           (unsigned long long)r->max_concurrency, (unsigned long long)r->e->target_len,
           r->e->safety, (unsigned long long)r->e->target_len);
    printf("  paged         %llu requests  (%u usable blocks x %g / %llu blocks each)\n",
           (unsigned long long)r->paged_max_concurrency, s->cap.usable_blocks, r->e->safety,
           (unsigned long long)r->blocks_per_request);
    printf("  usable tokens %llu requests  (floor(%u usable blocks x %u / %llu) x %g)\n",
           (unsigned long long)r->usable_token_concurrency, s->cap.usable_blocks, s->block_size,
           (unsigned long long)r->e->target_len, r->e->safety);

    printf("\nledgers: %zu sequence%s, %llu tokens (max %llu), shared prefix %llu\n",
           r->e->n_lengths, r->e->n_lengths == 1 ? "" : "s", (unsigned long long)r->sum_len,
           (unsigned long long)r->max_len, (unsigned long long)r->e->shared_prefix);
    if (sharded)
        printf("  %-11s %16s  %-28s %s\n", "", "", "whole model", "per rank");
    const kv_ledgers *w = &r->whole, *k = &r->rank;
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

int cmd_estimate(int argc, char **argv)
{
    const cli_opt *tables[] = {options, cli_model_options, NULL};
    cli_parser p;
    cli_parser_init(&p, "estimate", argc, argv, tables);
    kv_setup_options mo;
    kv_setup_options_init(&mo);
    est_opts e = {.target_len = DEFAULT_TARGET_LEN, .safety = 1.0};
    int rc = CLI_OK, id;
    const char *arg;
    while (rc == CLI_OK && (id = cli_next(&p, &arg)) != CLI_OPT_END) {
        if (cli_model_opts_owns(id)) {
            rc = cli_model_opts_handle(&mo, id, arg);
            continue;
        }
        switch (id) {
        case CLI_OPT_ERROR:
            rc = CLI_USAGE;
            break;
        case OPT_HELP:
            fputs(help, stdout);
            fputs(cli_model_opts_help, stdout);
            free(e.lengths);
            cli_parser_release(&p);
            return CLI_OK;
        case OPT_LENGTHS:
            rc = parse_lengths(arg, &e);
            break;
        case OPT_SHARED_PREFIX:
            rc = cli_parse_u64("shared-prefix", arg, 0, UINT32_MAX, &e.shared_prefix);
            break;
        case OPT_TARGET_LEN:
            rc = cli_parse_u64("target-len", arg, 1, UINT32_MAX, &e.target_len);
            break;
        case OPT_SAFETY:
            rc = cli_parse_double("safety", arg, 0.0, 1.0, &e.safety);
            if (rc == CLI_OK && e.safety <= 0.0)
                rc = cli_error(CLI_USAGE, "--safety: '%s' must be greater than 0", arg);
            break;
        case OPT_JSON:
            e.json = true;
            break;
        }
    }
    if (rc == CLI_OK && p.n_positional > 0)
        rc = cli_error(CLI_USAGE, "kvsim estimate takes no arguments (got '%s')", p.positional[0]);

    kv_setup s;
    if (rc == CLI_OK)
        rc = cli_model_resolve(&mo, &s);
    if (rc == CLI_OK) {
        if (e.n_lengths == 0) {
            free(e.lengths);
            e.lengths = kv_xmalloc(sizeof *e.lengths);
            e.lengths[0] = e.target_len;
            e.n_lengths = 1;
        }
        results r = {.mo = &mo, .s = &s, .e = &e};
        r.min_len = UINT64_MAX;
        for (size_t i = 0; i < e.n_lengths; i++) {
            r.sum_len += e.lengths[i];
            r.max_len = e.lengths[i] > r.max_len ? e.lengths[i] : r.max_len;
            r.min_len = e.lengths[i] < r.min_len ? e.lengths[i] : r.min_len;
        }
        kv_ledgers_compute(s.shard.bytes_per_token, e.lengths, e.n_lengths, s.block_size,
                           e.shared_prefix, &r.whole);
        kv_ledgers_compute(s.shard.bytes_per_token_rank, e.lengths, e.n_lengths, s.block_size,
                           e.shared_prefix, &r.rank);
        r.blocks_per_request = e.target_len / s.block_size + (e.target_len % s.block_size != 0);
        r.max_concurrency =
            (uint64_t)floor((double)s.cap.max_tokens * e.safety / (double)e.target_len);
        r.paged_max_concurrency =
            (uint64_t)floor((double)s.cap.usable_blocks * e.safety / (double)r.blocks_per_request);
        r.usable_token_concurrency = (uint64_t)floor(
            (double)((uint64_t)s.cap.usable_blocks * s.block_size / e.target_len) * e.safety);
        if (e.json) {
            if (print_json(&r) != 0)
                rc = cli_error(CLI_RUNTIME, "cannot write to standard output");
        } else {
            print_table(&r);
        }
        if (rc == CLI_OK && (fflush(stdout) != 0 || ferror(stdout)))
            rc = cli_error(CLI_RUNTIME, "cannot write to standard output");
    }
    free(e.lengths);
    cli_parser_release(&p);
    return rc;
}
