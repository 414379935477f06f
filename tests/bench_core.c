/* bench_core: micro-benchmarks behind scripts/bench (a benchmark, never a timed test).
 *
 *   bench_core pool            pool allocate/free/touch operations per second
 *   bench_core hash            full 16-token block hashes per second (explicit tokens)
 *   bench_core floor TRACE B   CPU seconds to SHA-256 every full block of every request once
 *                              (Σ ⌊(prompt + output − 1)/B⌋ blocks: the replay's floor)
 *
 * Prints one "name value unit" line per figure, for scripts/bench to read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvsim/blockhash.h"
#include "kvsim/pool.h"
#include "kvsim/rng.h"
#include "kvsim/trace.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: a busy machine inflates wall time */
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A request-shaped workload: tables of 1–64 blocks are allocated (pop), half their blocks
 * cached, some blocks touched as hits, then freed tail first.  Every pop, cache, touch and
 * per-block free counts as one operation. */
static int bench_pool(void)
{
    enum { N = 32768, ROUNDS = 400000 };
    kv_pool *pool;
    if (kv_pool_create(&pool, N, true, KV_FREE_SPLIT) != 0)
        return 1;
    kv_rng rng;
    kv_rng_seed(&rng, 7);
    kv_block_id table[128];
    uint64_t ops = 0, tag = 0;
    double t0 = now();
    for (int round = 0; round < ROUNDS; round++) {
        uint32_t n = 1 + (uint32_t)(kv_rng_next(&rng) % 64);
        uint32_t k = 0;
        for (; k < n && kv_pool_num_free(pool) > 0; k++) {
            table[k] = kv_pool_pop(pool);
            if (k < n / 2) {
                kv_digest d;
                memset(&d, 0, sizeof d);
                tag++;
                memcpy(d.b, &tag, sizeof tag);
                kv_pool_cache(pool, table[k], &d);
                ops++;
            }
        }
        ops += k;
        /* touch a few of this table's blocks again, as hits of a sibling request */
        uint32_t hits = k < 4 ? k : 4;
        for (uint32_t i = 0; i < hits; i++)
            kv_pool_touch(pool, table[i]);
        ops += hits;
        kv_block_id rev[132];
        for (uint32_t i = 0; i < k; i++)
            rev[i] = table[k - 1 - i];
        for (uint32_t i = 0; i < hits; i++)
            rev[k + i] = table[i];
        kv_pool_free(pool, rev, k + hits);
        ops += k + hits;
    }
    double dt = now() - t0;
    kv_diag d;
    int ok = kv_pool_check(pool, &d) == 0;
    kv_pool_destroy(pool);
    printf("pool_ops_per_s %.0f ops/s\n", (double)ops / dt);
    printf("pool_ops %llu ops\n", (unsigned long long)ops);
    return ok ? 0 : 1;
}

static int bench_hash(void)
{
    enum { BLOCKS = 3000000 };
    kv_hasher *h;
    if (kv_hasher_create(&h, "llama-3-8b", "bf16", 16) != 0)
        return 1;
    uint32_t *tok = malloc(16 * 1024 * sizeof *tok);
    for (uint32_t i = 0; i < 16 * 1024; i++)
        tok[i] = i * 2654435761u;
    kv_request_spec spec = {
        .prompt_len = 16 * 1024, .output_len = 1, .content = KV_CONTENT_TOKENS, .tokens = tok};
    kv_content c;
    kv_content_from_spec(&c, &spec, 0, 0);
    kv_digest prev = *kv_hasher_seed(h), out;
    double t0 = now();
    for (uint32_t i = 0; i < BLOCKS; i++) {
        kv_hasher_block(h, &prev, &c, i % 1024, &out);
        prev = out;
    }
    double dt = now() - t0;
    printf("hash_tokens16_per_s %.0f blocks/s\n", BLOCKS / dt);
    /* The same for hash_ids content (Mooncake): one 17-byte run per block. */
    uint64_t ids[2] = {1, 2};
    kv_request_spec m = {.prompt_len = 1024,
                         .output_len = 1,
                         .content = KV_CONTENT_HASH_IDS,
                         .hash_ids = ids,
                         .n_hash_ids = 2};
    kv_content_from_spec(&c, &m, 512, 0);
    t0 = now();
    for (uint32_t i = 0; i < BLOCKS; i++) {
        kv_hasher_block(h, &prev, &c, i % 64, &out);
        prev = out;
    }
    dt = now() - t0;
    printf("hash_ids16_per_s %.0f blocks/s\n", BLOCKS / dt);
    free(tok);
    kv_hasher_destroy(h);
    return 0;
}

static int bench_floor(const char *path, uint32_t b)
{
    kv_trace_options opt = {.format = KV_TRACE_AUTO, .time_scale = 1, .rate = 1, .seed = 1};
    kv_trace *t;
    kv_diag d;
    if (kv_trace_load(&t, path, &opt, &d) != 0) {
        fprintf(stderr, "bench_core: %s\n", d.msg);
        return 1;
    }
    kv_hasher *h;
    if (kv_hasher_create(&h, "llama-3-8b", "bf16", b) != 0)
        return 1;
    size_t cap = 0;
    kv_digest *dig = NULL;
    uint64_t blocks = 0;
    double t0 = now();
    for (size_t i = 0; i < t->n; i++) {
        const kv_request_spec *r = &t->reqs[i];
        uint32_t full = (uint32_t)(((uint64_t)r->prompt_len + r->output_len - 1) / b);
        if (full > cap) {
            cap = full;
            dig = realloc(dig, cap * sizeof *dig);
        }
        kv_content c;
        kv_content_from_spec(&c, r, t->trace_block_size, 0);
        kv_hasher_chain(h, &c, dig, 0, full);
        blocks += full;
    }
    double dt = now() - t0;
    printf("floor_blocks %llu blocks\n", (unsigned long long)blocks);
    printf("floor_s %.4f s\n", dt);
    free(dig);
    kv_hasher_destroy(h);
    kv_trace_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "pool") == 0)
        return bench_pool();
    if (argc >= 2 && strcmp(argv[1], "hash") == 0)
        return bench_hash();
    if (argc >= 4 && strcmp(argv[1], "floor") == 0)
        return bench_floor(argv[2], (uint32_t)atoi(argv[3]));
    fputs("usage: bench_core pool | hash | floor TRACE BLOCK_SIZE\n", stderr);
    return 2;
}
