/* kvsim_blockdump: replay a trace through kvsim's replay driver (the public library API:
 * kv_replay with an on_step_end hook, kv_req_table, kv_pool_queue) and print, after every
 * step's end, the free queue head→tail and every request's block table.  A reference
 * harness that runs vLLM's own scheduler prints the same lines, so the two runs can be
 * compared block id by block id (DESIGN §6.6 "vLLM parity").  Built, never installed.
 *
 *   kvsim_blockdump TRACE NUM_BLOCKS BLOCK_SIZE [KEY=VALUE ...]
 *
 * Keys (default): seqs (256), tokens (8192), dt (0.05, fixed step time in s), chunked (1),
 * caching (1), free (split|append), preempt (fcfs|priority), policy (fcfs|priority),
 * watermark (0), rule (vllm|v0), full (1, --admit-full-prompt), async (0), tb (512, trace
 * block size), limit (0 = all), shared_prefix (0), time_scale (1).
 *
 * One line per step, in step order:
 *   S <step> F <free ids,> T <row>:<ids,> <row>:<ids,> ...   (rows ascending, empty omitted)
 * A summary line goes to stderr: steps, finished, and "invariants ok" unless a walk failed.
 * Exit status: 0, 1 for a run an error stopped, 2 for bad arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/error.h"
#include "kvsim/mem.h"
#include "kvsim/sim.h"

typedef struct dump {
    FILE *f;
    kv_block_id *q; /* free-queue scratch */
    size_t qcap;
    size_t *idx; /* request indices sorted by row */
    size_t n_idx;
} dump;

static void on_step_end(void *ctx, const kv_step_view *v)
{
    dump *d = ctx;
    size_t nq = kv_pool_queue(v->pool, NULL, 0);
    kv_grow((void **)&d->q, &d->qcap, nq ? nq : 1, sizeof *d->q);
    kv_pool_queue(v->pool, d->q, d->qcap);
    fprintf(d->f, "S %llu F ", (unsigned long long)v->step);
    for (size_t i = 0; i < nq; i++)
        fprintf(d->f, "%d,", d->q[i]);
    fputs(" T", d->f);
    for (size_t k = 0; k < d->n_idx; k++) {
        const kv_req *r = &v->reqs[d->idx[k]];
        uint32_t len;
        const kv_block_id *t = kv_req_table(r, &len);
        if (!len)
            continue;
        fprintf(d->f, " %u:", r->spec->row);
        for (uint32_t j = 0; j < len; j++)
            fprintf(d->f, "%d,", t[j]);
    }
    fputc('\n', d->f);
}

static int by_row(const void *a, const void *b, const kv_trace *t)
{
    uint32_t x = t->reqs[*(const size_t *)a].row, y = t->reqs[*(const size_t *)b].row;
    return (x > y) - (x < y);
}

/* Insertion sort (qsort has no context argument in C11). */
static void sort_rows(size_t *idx, size_t n, const kv_trace *t)
{
    for (size_t i = 1; i < n; i++) {
        size_t x = idx[i], j = i;
        while (j > 0 && by_row(&idx[j - 1], &x, t) > 0) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = x;
    }
}

static int bad(const char *what)
{
    fprintf(stderr, "kvsim_blockdump: %s (see the comment at the top of kvsim_blockdump.c)\n",
            what);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return bad("usage: kvsim_blockdump TRACE NUM_BLOCKS BLOCK_SIZE [KEY=VALUE ...]");
    kv_sim_options o;
    kv_sim_options_init(&o);
    o.sched.watermark = 0; /* vLLM's default, not kvsim's */
    o.trace.trace_block_size = 512;
    const char *dt = "0.05";
    kv_diag diag = {{0}};
    for (int i = 4; i < argc; i++) {
        char key[32];
        const char *eq = strchr(argv[i], '=');
        if (!eq || (size_t)(eq - argv[i]) >= sizeof key)
            return bad("arguments after BLOCK_SIZE are KEY=VALUE");
        memcpy(key, argv[i], (size_t)(eq - argv[i]));
        key[eq - argv[i]] = '\0';
        const char *v = eq + 1;
        long long n = atoll(v);
        if (strcmp(key, "seqs") == 0)
            o.sched.max_seqs = (uint32_t)n;
        else if (strcmp(key, "tokens") == 0)
            o.sched.max_batched_tokens = (uint32_t)n;
        else if (strcmp(key, "dt") == 0)
            dt = v;
        else if (strcmp(key, "chunked") == 0)
            o.sched.chunked_prefill = n != 0;
        else if (strcmp(key, "caching") == 0)
            o.prefix_caching = n != 0;
        else if (strcmp(key, "full") == 0)
            o.sched.admit_full_prompt = n != 0;
        else if (strcmp(key, "async") == 0)
            o.sched.async_scheduling = n != 0;
        else if (strcmp(key, "watermark") == 0)
            o.sched.watermark = atof(v);
        else if (strcmp(key, "tb") == 0)
            o.trace.trace_block_size = (uint32_t)n;
        else if (strcmp(key, "limit") == 0)
            o.trace.limit = (uint64_t)n;
        else if (strcmp(key, "shared_prefix") == 0)
            o.shared_prefix = (uint32_t)n;
        else if (strcmp(key, "time_scale") == 0)
            o.trace.time_scale = atof(v);
        else if (strcmp(key, "free") == 0) {
            if (kv_free_order_parse(v, &o.free_order) != 0)
                return bad("free is split or append");
        } else if (strcmp(key, "preempt") == 0) {
            if (kv_preempt_parse(v, &o.sched.preempt) != 0)
                return bad("preempt is fcfs or priority");
        } else if (strcmp(key, "policy") == 0) {
            if (kv_sched_policy_parse(v, &o.sched.policy, &diag) != 0)
                return bad(diag.msg);
        } else if (strcmp(key, "rule") == 0) {
            if (kv_watermark_rule_parse(v, &o.sched.watermark_rule, &diag) != 0)
                return bad(diag.msg);
        } else
            return bad("unknown key");
    }
    kv_trace *t = NULL;
    if (kv_trace_load(&t, argv[1], &o.trace, &diag) != 0) {
        fprintf(stderr, "kvsim_blockdump: %s\n", diag.msg);
        return 1;
    }
    kv_engine_config c;
    memset(&c, 0, sizeof c);
    char tm[64];
    snprintf(tm, sizeof tm, "fixed:%s", dt);
    if (kv_timing_parse(tm, &c.timing, &diag) != 0) {
        kv_trace_free(t);
        return bad(diag.msg);
    }
    c.num_blocks = (uint32_t)atoi(argv[2]);
    c.block_size = (uint32_t)atoi(argv[3]);
    c.prefix_caching = o.prefix_caching;
    c.free_order = o.free_order;
    c.sched = o.sched;
    c.check_invariants = true;

    dump d = {stdout, NULL, 0, kv_xcalloc(t->n ? t->n : 1, sizeof(size_t)), t->n};
    for (size_t i = 0; i < t->n; i++)
        d.idx[i] = i;
    sort_rows(d.idx, d.n_idx, t);
    kv_sim_hooks hooks = {.sample_every = 1, .on_step_end = on_step_end, .ctx = &d};
    kv_run_result res;
    /* The model and dtype only seed the block hashes: kvsim run's defaults. */
    int rc = kv_replay(&c, t, "llama-3-8b", "bf16", o.shared_prefix, &hooks, &res, &diag);
    if (rc != 0)
        fprintf(stderr, "kvsim_blockdump: %s\n", diag.msg);
    fprintf(stderr, "kvsim_blockdump: %llu steps, %llu finished, invariants %s\n",
            (unsigned long long)res.stats.steps, (unsigned long long)res.stats.sched.finished,
            rc == -KV_EINVARIANT ? "FAILED" : "ok");
    int fail = fflush(stdout) != 0 || ferror(stdout);
    kv_run_result_release(&res);
    kv_trace_free(t);
    free(d.q);
    free(d.idx);
    return rc != 0 || fail;
}
