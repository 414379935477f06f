/* kvsim hash: print the chain hash of every full block of an explicit token list
 * (DESIGN §3), so users can see what shares and what does not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "kvsim/blockhash.h"
#include "kvsim/mem.h"

enum { OPT_HELP = 1, OPT_BLOCK_SIZE, OPT_ADAPTER, OPT_SALT, OPT_MODEL, OPT_DTYPE };

static const cli_opt options[] = {
    {"help", 'h', false, OPT_HELP},
    {"block-size", 'b', true, OPT_BLOCK_SIZE},
    {"adapter", 0, true, OPT_ADAPTER},
    {"salt", 0, true, OPT_SALT},
    {"model", 0, true, OPT_MODEL},
    {"kv-dtype", 0, true, OPT_DTYPE},
    {NULL, 0, false, 0},
};

static const char help[] =
    "usage: kvsim hash --block-size B [--adapter A] [--salt S] TOKEN...\n"
    "\n"
    "Print 'index hex-digest' for each full block of the token ids (a partial last block\n"
    "has no hash).  h_j = SHA256(h_{j-1} | tokens of block j | extras); the adapter is in\n"
    "every block's extras, the salt in block 0's only, and the chain carries both on.\n"
    "\n"
    "  -b, --block-size B   tokens per block (required, 1..65536)\n"
    "      --adapter A      LoRA adapter name (default: none)\n"
    "      --salt S         cache salt (default: none)\n"
    "      --model NAME     model name in the run seed (default: llama-3-8b)\n"
    "      --kv-dtype D     KV dtype name in the run seed (default: bf16)\n"
    "TOKEN: token ids 0..4294967295, as separate arguments or comma-separated.\n";

int cmd_hash(int argc, char **argv)
{
    const cli_opt *tables[] = {options, NULL};
    cli_parser p;
    cli_parser_init(&p, "hash", argc, argv, tables);
    uint32_t block_size = 0;
    const char *adapter = NULL, *salt = NULL, *model = "llama-3-8b", *dtype = "bf16";
    int rc = CLI_OK, id;
    const char *arg;
    while (rc == CLI_OK && (id = cli_next(&p, &arg)) != CLI_OPT_END) {
        switch (id) {
        case CLI_OPT_ERROR:
            rc = CLI_USAGE;
            break;
        case OPT_HELP:
            fputs(help, stdout);
            cli_parser_release(&p);
            return CLI_OK;
        case OPT_BLOCK_SIZE:
            rc = cli_parse_u32("block-size", arg, 1, 65536, &block_size);
            break;
        case OPT_ADAPTER:
            adapter = arg;
            break;
        case OPT_SALT:
            salt = arg;
            break;
        case OPT_MODEL:
            model = arg;
            break;
        case OPT_DTYPE:
            dtype = arg;
            break;
        }
    }
    if (rc == CLI_OK && block_size == 0)
        rc = cli_error(CLI_USAGE, "kvsim hash needs --block-size B");

    uint32_t *tokens = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; rc == CLI_OK && i < p.n_positional; i++) {
        char *copy = kv_xstrdup(p.positional[i]), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t && rc == CLI_OK;
             t = strtok_r(NULL, ",", &save)) {
            uint64_t v;
            char name[32];
            snprintf(name, sizeof name, "token %zu", n + 1);
            if ((rc = cli_parse_count(name, t, 0, UINT32_MAX, &v)) != CLI_OK)
                break;
            kv_grow((void **)&tokens, &cap, n + 1, sizeof *tokens);
            tokens[n++] = (uint32_t)v;
        }
        free(copy);
    }
    if (rc == CLI_OK && n == 0)
        rc = cli_error(CLI_USAGE, "kvsim hash needs at least one token id");

    kv_hasher *h = NULL;
    if (rc == CLI_OK && kv_hasher_create(&h, model, dtype, block_size) != 0)
        rc = cli_error(CLI_RUNTIME, "cannot initialise SHA-256");
    if (rc == CLI_OK) {
        kv_request_spec spec = {.prompt_len = (uint32_t)n,
                                .output_len = 1,
                                .content = KV_CONTENT_TOKENS,
                                .tokens = tokens,
                                .adapter = adapter,
                                .salt = salt};
        kv_content c;
        kv_content_from_spec(&c, &spec, 0, 0);
        uint32_t full = (uint32_t)(n / block_size);
        kv_digest *d = kv_xcalloc(full ? full : 1, sizeof *d);
        kv_hasher_chain(h, &c, d, 0, full);
        for (uint32_t j = 0; j < full; j++) {
            char hex[2 * KV_DIGEST_LEN + 1];
            kv_digest_hex(&d[j], hex);
            printf("%u %s\n", j, hex);
        }
        if (full == 0)
            fprintf(stderr, "kvsim: note: %zu tokens make no full block of %u\n", n, block_size);
        free(d);
        if (fflush(stdout) != 0 || ferror(stdout))
            rc = cli_error(CLI_RUNTIME, "cannot write to standard output");
    }
    kv_hasher_destroy(h);
    free(tokens);
    cli_parser_release(&p);
    return rc;
}
