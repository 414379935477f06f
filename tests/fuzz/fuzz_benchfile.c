/* Harness: the benchmark readers of kvsim calibrate (kv_bench_load_stream; README
 * "Calibrating the time model") and the send-time rebuild (kv_bench_sends).
 *
 * Checks on an accepted run: 1 ≤ n, fewer failures than requests, every successful request
 * with prompt and output lengths ≥ 1 and 0 ≤ TTFT ≤ E2E (finite), every failed one with
 * output 0 (JSON only); the rebuilt sends (both rules, the seed from the input's length)
 * finite and ≥ 0, each at or after its scheduled time, the schedule non-decreasing.  A
 * rejected input has a diagnostic that names the file.
 */
#include <math.h>
#include <stdbool.h>

#include "fuzz.h"
#include "kvsim/benchfile.h"

#define NAME "fuzz/run.json"

static void check_run(kv_bench *b, size_t size)
{
    FUZZ_CHECK(b->n >= 1 && b->n_failed < b->n, "n %zu, failed %zu", b->n, b->n_failed);
    for (size_t i = 0; i < b->n; i++) {
        const kv_bench_req *r = &b->reqs[i];
        FUZZ_CHECK(r->prompt_len >= 1, "request %zu: prompt %u", i, r->prompt_len);
        if (!r->ok) {
            FUZZ_CHECK(b->kind == KV_BENCH_VLLM_JSON, "a failed CSV row");
            continue;
        }
        FUZZ_CHECK(r->output_len >= 1, "request %zu: output %u", i, r->output_len);
        FUZZ_CHECK(isfinite(r->e2e_s) && r->ttft_s >= 0 && r->ttft_s <= r->e2e_s,
                   "request %zu: ttft %g, e2e %g", i, r->ttft_s, r->e2e_s);
    }
    for (int rule = KV_BENCH_RULE_SERVE; rule <= KV_BENCH_RULE_LEGACY; rule++) {
        kv_diag d = {{0}};
        int rc = kv_bench_sends(b, (kv_bench_rule)rule, (uint32_t)size, &d);
        if (rc != 0) {
            fuzz_check_diag(rc, &d);
            continue;
        }
        for (size_t i = 0; i < b->n; i++) {
            const kv_bench_req *r = &b->reqs[i];
            FUZZ_CHECK(isfinite(r->send_s) && r->sched_s >= 0 && r->send_s >= r->sched_s,
                       "request %zu: scheduled %g, sent %g", i, r->sched_s, r->send_s);
            FUZZ_CHECK(i == 0 || r->sched_s >= b->reqs[i - 1].sched_s, "schedule at %zu", i);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_stream(data, size);
    if (!f)
        return 0;
    kv_bench *b = NULL;
    kv_diag d = {{0}};
    int rc = kv_bench_load_stream(&b, f, NAME, &d);
    fclose(f);
    if (rc != 0) {
        fuzz_check_diag(rc, &d);
        FUZZ_CHECK(b == NULL, "a result after an error");
        FUZZ_CHECK(strncmp(d.msg, NAME, strlen(NAME)) == 0, "diag does not name the file: %s",
                   d.msg);
        return 0;
    }
    check_run(b, size);
    kv_bench_free(b);
    return 0;
}
