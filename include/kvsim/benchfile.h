/* benchfile: a user's own serving benchmark, read for kvsim calibrate (issue 11 item 4).
 *
 * Two formats, told apart by content (a file whose first non-blank byte is '{' or '[' is JSON):
 *
 * 1. A `vllm bench serve --save-result --save-detailed` result (also benchmark_serving.py's):
 *    one JSON object with the per-request arrays input_lens, output_lens, ttfts (s) and itls
 *    (a list per request of the gaps between its streamed chunks, s), errors (optional: a
 *    non-empty string marks a failed request), num_prompts, request_rate (a number or "inf"),
 *    burstiness (optional, default 1) and max_concurrency (null or a positive integer).
 *    Other keys (the aggregates, generated_texts, duration) are ignored.  A successful
 *    request's E2E is ttft + Σ itls; len(itls) is at most output_lens − 1 (vLLM's stream
 *    may carry several tokens in one chunk, and its result then has fewer itls).  The send
 *    times are not in the file: kv_bench_sends rebuilds them.
 * 2. A CSV of per-request measurements: the header names exactly the five columns
 *    send_s,prompt_len,output_len,ttft_s,e2e_s (any order; an extra or missing column is an
 *    error), then one row per request: times in seconds in kvsim's number grammar
 *    (kv_parse_number), lengths positive integers.  No quoting; blank lines are skipped;
 *    CRLF is accepted.  Every row is a successful request sent at send_s.
 *
 * Errors name the file and the field (JSON) or line (CSV), e.g.
 *   "run.json: request 7: output_lens is 12 but itls has 12 entries (at most output_lens − 1)"
 * Sizes are bounded (KV_BENCH_MAX_BYTES a file, KV_TRACE_MAX_CSV_RECORD a CSV line,
 * KV_TRACE_MAX_LEN a length); nothing is returned on error.
 */
#ifndef KVSIM_BENCHFILE_H
#define KVSIM_BENCHFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kvsim/error.h"

/* Largest benchmark JSON read, in bytes (a 10,000-request run with its texts is ~60 MB). */
#define KV_BENCH_MAX_BYTES ((size_t)1 << 30)
/* Most requests one benchmark file may hold. */
#define KV_BENCH_MAX_REQUESTS 10000000u

typedef enum kv_bench_kind {
    KV_BENCH_VLLM_JSON = 0,
    KV_BENCH_CSV,
} kv_bench_kind;

/* How the benchmark client spaced its sends (kv_bench_sends). */
typedef enum kv_bench_rule {
    KV_BENCH_RULE_SERVE = 0, /* vllm bench serve (vllm/benchmarks/serve.py get_request):
                                request i at S_i · (n / rate) / S_{n−1}, S_i = Σ_{k≤i} g_k */
    KV_BENCH_RULE_LEGACY,    /* benchmark_serving.py before that normalisation (≤ 0.9):
                                request 0 at 0, request i at Σ_{k<i} g_k */
} kv_bench_rule;

typedef struct kv_bench_req {
    double sched_s;      /* when the client meant to send it (its rate schedule); = send_s
                            but for a wait on the semaphore */
    double send_s;       /* when the client sent it (CSV: given; JSON: kv_bench_sends) */
    double ttft_s;       /* measured time to first token, from the send */
    double e2e_s;        /* measured end-to-end latency, ≥ ttft_s */
    uint32_t prompt_len; /* ≥ 1 */
    uint32_t output_len; /* ≥ 1 for a successful request, 0 for a failed one */
    uint32_t n_gaps;     /* its inter-token latencies measured: JSON len(itls), at most
                            output_len − 1 (a streamed chunk may carry several tokens);
                            CSV output_len − 1 */
    bool ok;             /* false: a failed request (skipped by the replay) */
} kv_bench_req;

typedef struct kv_bench {
    char *path; /* as given */
    kv_bench_kind kind;
    kv_bench_req *reqs; /* n, in the file's order (the order they were sent) */
    size_t n;
    size_t n_failed;          /* requests with ok false */
    double rate;              /* requests/s; 0 = inf (all sent at 0).  JSON only */
    double burstiness;        /* gamma shape; 1 = Poisson.  JSON only */
    uint32_t max_concurrency; /* the client semaphore; 0 = none.  JSON only */
    bool has_sends;           /* send_s filled (CSV, or after kv_bench_sends) */
} kv_bench;

/* Read one benchmark file.  0, or -KV_ENOENT / -KV_EIO (cannot open or read), -KV_EPARSE
 * (malformed, missing or ill-typed fields, lengths that disagree), -KV_ERANGE (a negative
 * time or length out of range, a concurrency of 0) with the diag naming file and field or
 * line.  *out is NULL on error. */
int kv_bench_load(kv_bench **out, const char *path, kv_diag *diag);
/* The same from an open stream, read to its end and not closed; name stands for the file
 * in messages and in kv_bench.path. */
int kv_bench_load_stream(kv_bench **out, FILE *f, const char *name, kv_diag *diag);
void kv_bench_free(kv_bench *b); /* NULL ok */

/* The client's schedule of n sends at rate requests/s (0 = inf: all at 0), gaps drawn as
 * numpy's legacy RandomState(seed).gamma(1, 1/rate) = the exponential −ln(1 − U)/rate with
 * U from MT19937 init_genrand(seed), spaced by rule.  Burstiness 1 only.  Can't fail. */
void kv_bench_schedule(size_t n, double rate, kv_bench_rule rule, uint32_t seed, double *out);

/* A JSON benchmark's send times (a CSV's are given: then nothing changes): the schedule,
 * and with max_concurrency N the semaphore — request i is sent at max(its scheduled time,
 * the (i − N + 1)-th completion), a completion being send + measured E2E (a failed
 * request's slot frees at its send).  0, or -KV_EINVAL with a diag: a burstiness other
 * than 1 (numpy's gamma for shape ≠ 1 is not reproduced; the message suggests the CSV
 * form). */
int kv_bench_sends(kv_bench *b, kv_bench_rule rule, uint32_t seed, kv_diag *diag);

#endif
