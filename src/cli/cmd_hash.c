/* kvsim hash: print the chain hash of every full block of an explicit token list
 * (DESIGN §3), so users can see what shares and what does not.  Tokens are the positional
 * arguments, each a comma list (empty items skipped); the hashing is blockhash.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "kvsim/blockhash.h"
#include "kvsim/mem.h"
#include "kvsim/text.h"

typedef struct hash_cmd {
    uint32_t block_size; /* required, ≥ 1 */
    const char *adapter, *salt, *model, *dtype;
} hash_cmd;

enum { OPT_BLOCK_SIZE = 1 };

static const cli_opt options[] = {
    {"block-size", 'b', "B", CLI_ID(OPT_BLOCK_SIZE), "tokens per block (required, 1..65536)"},
    {"adapter", 0, "A", CLI_TEXT(hash_cmd, adapter), "LoRA adapter name (default: none)"},
    {"salt", 0, "S", CLI_TEXT(hash_cmd, salt), "cache salt (default: none)"},
    {"model", 0, "NAME", CLI_TEXT(hash_cmd, model),
     "model name in the run seed (default: llama-3-8b)"},
    {"kv-dtype", 0, "D", CLI_TEXT(hash_cmd, dtype),
     "KV dtype name in the run seed (default: bf16)"},
    {0},
};

static const cli_section sections[] = {
    {"options", options,
     "TOKEN: token ids 0..4294967295, as separate arguments or comma-separated.\n"},
    {0},
};

static const cli_dep deps[] = {
    {CLI_REQUIRED, "block-size", NULL, "kvsim hash needs --block-size B", NULL},
    {0},
};

static int handle(void *target, const cli_opt *opt, const char *arg)
{
    return cli_parse_u32(opt->name, arg, 1, 65536, &((hash_cmd *)target)->block_size);
}

static const cli_group group = {sections, handle, deps};

static void init(void *state)
{
    hash_cmd *h = state;
    h->model = "llama-3-8b";
    h->dtype = "bf16";
}

/* Every comma-separated id of every argument, in order: CLI_OK or CLI_USAGE. */
static int parse_tokens(int argc, char **argv, uint32_t **tokens, size_t *n)
{
    size_t cap = 0;
    int rc = CLI_OK;
    for (int i = 0; rc == CLI_OK && i < argc; i++) {
        kv_kvlist list;
        kv_kvlist_init(&list, argv[i], KV_KVLIST_SKIP_EMPTY, NULL);
        kv_kvitem it;
        while (rc == CLI_OK && kv_kvlist_next(&list, &it, NULL) == 1) {
            uint64_t v;
            char name[32];
            snprintf(name, sizeof name, "token %zu", *n + 1);
            if ((rc = cli_parse_count(name, it.text, 0, UINT32_MAX, &v)) != CLI_OK)
                break;
            kv_grow((void **)tokens, &cap, *n + 1, sizeof **tokens);
            (*tokens)[(*n)++] = (uint32_t)v;
        }
        kv_kvlist_release(&list);
    }
    if (rc == CLI_OK && *n == 0)
        rc = cli_error(CLI_USAGE, "kvsim hash needs at least one token id");
    return rc;
}

static int print_hashes(const hash_cmd *o, const uint32_t *tokens, size_t n)
{
    kv_hasher *h = NULL;
    if (kv_hasher_create(&h, o->model, o->dtype, o->block_size) != 0)
        return cli_error(CLI_RUNTIME, "cannot initialise SHA-256");
    kv_request_spec spec = {.prompt_len = (uint32_t)n,
                            .output_len = 1,
                            .content = KV_CONTENT_TOKENS,
                            .tokens = tokens,
                            .adapter = o->adapter,
                            .salt = o->salt};
    kv_content c;
    kv_content_from_spec(&c, &spec, 0, 0);
    uint32_t full = (uint32_t)(n / o->block_size);
    kv_digest *d = kv_xcalloc(full ? full : 1, sizeof *d);
    kv_hasher_chain(h, &c, d, 0, full);
    for (uint32_t j = 0; j < full; j++) {
        char hex[2 * KV_DIGEST_LEN + 1];
        kv_digest_hex(&d[j], hex);
        printf("%u %s\n", j, hex);
    }
    if (full == 0)
        fprintf(stderr, "kvsim: note: %zu tokens make no full block of %u\n", n, o->block_size);
    free(d);
    kv_hasher_destroy(h);
    if (cli_flush_stdout() != CLI_OK)
        return CLI_RUNTIME;
    return CLI_OK;
}

static int exec(void *state, int argc, char **argv)
{
    uint32_t *tokens = NULL;
    size_t n = 0;
    int rc = parse_tokens(argc, argv, &tokens, &n);
    if (rc == CLI_OK)
        rc = print_hashes(state, tokens, n);
    free(tokens);
    return rc;
}

const cli_cmd cli_cmd_hash = {
    .name = "hash",
    .summary = "print the chain hash of each full block of a token list",
    .synopsis = "--block-size B [--adapter A] [--salt S] TOKEN...",
    .description =
        "Print 'index hex-digest' for each full block of the token ids (a partial last block\n"
        "has no hash).  h_j = SHA256(h_{j-1} | tokens of block j | extras); the adapter is in\n"
        "every block's extras, the salt in block 0's only, and the chain carries both on.\n",
    .uses = {{&group, 0}},
    .args = {0, -1, NULL, NULL},
    .state_size = sizeof(hash_cmd),
    .init = init,
    .exec = exec,
};
