/* calibrate and benchfile (include/kvsim/calibrate.h, benchfile.h; issue 11 item 4): the
 * send-time rebuild (MT19937 + numpy's legacy exponential, hand-checked first draws; the
 * serve normalisation; the semaphore on measured and on replayed requests, the latter on a
 * hand-derived fixed: scenario), the metrics as vllm bench serve computes them, recovery of
 * known roofline parameters from a benchmark kvsim itself generated, the hold-out split,
 * every bad-input path of both readers, and the CLI's error lines. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/arrivals.h"
#include "kvsim/calibrate.h"
#include "kvsim/mem.h"
#include "kvsim/path.h"
#include "kvsim/sim.h"
#include "support.h"

#define MS 1000000LL

/* ---- the send schedule ------------------------------------------------------------------- */

Test(calibrate, schedule_draws_numpy_legacy_exponentials_from_mt19937)
{
    /* init_genrand(0)'s first outputs are 2357136044, 2546248239 (the reference
     * mt19937ar.c); numpy's legacy double is (a>>5 · 2^26 + b>>6) / 2^53 and its legacy
     * exponential −ln(1 − U): np.random.seed(0); np.random.exponential() = 0.79587450816311,
     * as scripts/accuracy's MT19937 gives too. */
    double u = ((2357136044u >> 5) * 67108864.0 + (2546248239u >> 6)) / 9007199254740992.0;
    double g0 = -log(1.0 - u);
    cr_assert_float_eq(g0, 0.79587450816311, 1e-13);
    double t[4];
    kv_bench_schedule(4, 2.0, KV_BENCH_RULE_LEGACY, 0, t);
    /* scripts/accuracy's arrivals() for rate 2, seed 0: 0, 0.3979…, 1.0259…, 1.4875… */
    double want[4] = {0.0, 0.397937254081555, 1.0259026355644738, 1.4875142084665083};
    for (int i = 0; i < 4; i++)
        cr_assert_float_eq(t[i], want[i], 1e-12, "legacy send %d: %.17g", i, t[i]);
    /* serve: request i at the cumulative delay g0 + … + gi (legacy's send i + 1), all scaled
     * so the last is n / rate. */
    double s[4];
    kv_bench_schedule(4, 2.0, KV_BENCH_RULE_SERVE, 0, s);
    cr_assert_float_eq(s[3], 2.0, 1e-12, "the last send is n / rate");
    for (int i = 0; i < 2; i++)
        cr_assert_float_eq(s[i] / s[i + 1], want[i + 1] / want[i + 2], 1e-12,
                           "serve %d keeps legacy's cumulative ratios", i);
    kv_bench_schedule(3, 0, KV_BENCH_RULE_SERVE, 0, s);
    cr_assert(s[0] == 0 && s[1] == 0 && s[2] == 0, "rate inf: every request at 0");
}

/* ---- files ------------------------------------------------------------------------------- */

KV_TEST_SCRATCH_DIR(setup_dir, teardown_dir)

static kv_bench *load_ok(const char *name, const char *text)
{
    char *p = write_file(dir, name, text);
    kv_bench *b = NULL;
    kv_diag d;
    cr_assert_eq(kv_bench_load(&b, p, &d), 0, "%s", d.msg);
    free(p);
    return b;
}

/* The error of loading text: its code and that the message holds want (after the path). */
static void load_bad(const char *text, int code, const char *want)
{
    char *p = write_file(dir, "bad.json", text);
    kv_bench *b = (kv_bench *)1;
    kv_diag d;
    int rc = kv_bench_load(&b, p, &d);
    cr_assert_eq(rc, code, "%s: got %d (%s)", text, rc, d.msg);
    cr_assert_null(b);
    cr_assert(strncmp(d.msg, p, strlen(p)) == 0, "names the file: %s", d.msg);
    cr_assert(strstr(d.msg, want), "'%s' in '%s'", want, d.msg);
    free(p);
}

#define J_HEAD "{\"num_prompts\":2,\"request_rate\":\"inf\",\"max_concurrency\":null,"
#define J_OK   "\"input_lens\":[10,20],\"output_lens\":[3,1],\"ttfts\":[0.5,0.25],"

TestSuite(benchfile, .init = setup_dir, .fini = teardown_dir);

Test(benchfile, json_reads_lengths_ttft_and_e2e_and_skips_failures)
{
    kv_bench *b = load_ok("ok.json", "{\"num_prompts\":3,\"request_rate\":4,\"burstiness\":1.0,"
                                     "\"input_lens\":[10,20,30],\"output_lens\":[3,1,0],"
                                     "\"ttfts\":[0.5,0.25,0],\"itls\":[[0.1,0.2],[],[]],"
                                     "\"errors\":[\"\",\"\",\"timeout\"],\"mean_ttft_ms\":1}");
    cr_assert_eq(b->n, 3);
    cr_assert_eq(b->n_failed, 1);
    cr_assert_eq(b->rate, 4.0);
    cr_assert(b->reqs[0].ok && b->reqs[1].ok && !b->reqs[2].ok);
    cr_assert_float_eq(b->reqs[0].e2e_s, 0.8, 1e-12);
    cr_assert_float_eq(b->reqs[1].e2e_s, 0.25, 1e-12);
    cr_assert_eq(b->reqs[0].prompt_len, 10);
    kv_bench_free(b);
}

Test(benchfile, json_bad_input_names_file_and_field)
{
    load_bad("[1]", -KV_EPARSE, "expected a JSON object");
    load_bad("{\"num_prompts\":2", -KV_EPARSE, ":1:");
    load_bad(J_HEAD "\"output_lens\":[3,1],\"ttfts\":[0.5,0.25],\"itls\":[[1,1],[]]}", -KV_EPARSE,
             "missing per-request field 'input_lens'");
    load_bad(J_HEAD J_OK "\"itls\":[[1,1]]}", -KV_EPARSE,
             "'itls' has 1 entries but 'input_lens' has 2");
    load_bad(J_HEAD J_OK "\"itls\":[[1,1,1],[]]}", -KV_EPARSE,
             "request 0: output_lens is 3 but itls has 3 entries (at most output_lens - 1)");
    load_bad(J_HEAD J_OK "\"itls\":[[1,1],[0.5]]}", -KV_EPARSE,
             "request 1: output_lens is 1 but itls has 1 entries");
    load_bad("{\"num_prompts\":3,\"request_rate\":\"inf\"," J_OK "\"itls\":[[1,1],[]]}", -KV_EPARSE,
             "'num_prompts' is 3 but the per-request arrays have 2 entries");
    load_bad(J_HEAD "\"input_lens\":[10,20],\"output_lens\":[3,1],\"ttfts\":[-0.5,0.25],"
                    "\"itls\":[[1,1],[]]}",
             -KV_ERANGE, "request 0: ttfts must be a non-negative time, got -0.5");
    load_bad(J_HEAD J_OK "\"itls\":[[1,-1],[]]}", -KV_ERANGE,
             "request 0: itls must be a non-negative time");
    load_bad(J_HEAD "\"input_lens\":[0,20],\"output_lens\":[3,1],\"ttfts\":[0.5,0.25],"
                    "\"itls\":[[1,1],[]]}",
             -KV_ERANGE, "request 0: input_lens is 0");
    load_bad("{\"num_prompts\":2,\"request_rate\":\"inf\",\"max_concurrency\":0," J_OK
             "\"itls\":[[1,1],[]]}",
             -KV_ERANGE, "a concurrency must be at least 1");
    load_bad("{\"num_prompts\":2,\"request_rate\":\"fast\"," J_OK "\"itls\":[[1,1],[]]}",
             -KV_EPARSE, "'request_rate' must be a positive number or \"inf\"");
    load_bad("{\"num_prompts\":2,\"request_rate\":1,\"ramp_up_strategy\":\"linear\"," J_OK
             "\"itls\":[[1,1],[]]}",
             -KV_EPARSE, "'ramp_up_strategy' is set");
    load_bad(J_HEAD J_OK "\"itls\":[[1,1],[]],\"errors\":[\"x\",\"y\"]}", -KV_EPARSE,
             "every request failed");
    load_bad("{\"num_prompts\":2,\"num_prompts\":2}", -KV_EPARSE, ":1:");
}

Test(benchfile, burstiness_other_than_one_suggests_the_csv)
{
    kv_bench *b = load_ok("b.json", "{\"num_prompts\":2,\"request_rate\":2,\"burstiness\":0.5," J_OK
                                    "\"itls\":[[1,1],[]]}");
    kv_diag d;
    cr_assert_eq(kv_bench_sends(b, KV_BENCH_RULE_SERVE, 0, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, "burstiness 0.5") && strstr(d.msg, "as a CSV"), "%s", d.msg);
    kv_bench_free(b);
}

Test(benchfile, measured_sends_wait_for_the_semaphore)
{
    /* All sent at 0 behind 2 slots: E2E 1, 3, 1, 1 s.  Request 2 takes the slot request 0
     * frees at 1; request 3 the one request 2 frees at 2 (request 1 holds its slot to 3). */
    kv_bench *b = load_ok("c.json", "{\"num_prompts\":4,\"request_rate\":\"inf\","
                                    "\"max_concurrency\":2,\"input_lens\":[1,1,1,1],"
                                    "\"output_lens\":[1,1,1,1],\"ttfts\":[1,3,1,1],"
                                    "\"itls\":[[],[],[],[]]}");
    kv_diag d;
    cr_assert_eq(kv_bench_sends(b, KV_BENCH_RULE_SERVE, 0, &d), 0, "%s", d.msg);
    double want[4] = {0, 0, 1, 2};
    for (int i = 0; i < 4; i++) {
        cr_assert_float_eq(b->reqs[i].send_s, want[i], 1e-12, "request %d", i);
        cr_assert_eq(b->reqs[i].sched_s, 0.0);
    }
    kv_bench_free(b);
    /* More slots than requests hold nobody back (fuzz_benchfile: 442949296 slots once
     * sized a 3.5 GB heap). */
    b = load_ok("c2.json", "{\"num_prompts\":2,\"request_rate\":\"inf\","
                           "\"max_concurrency\":442949296,\"input_lens\":[1,1],"
                           "\"output_lens\":[1,1],\"ttfts\":[1,3],\"itls\":[[],[]]}");
    cr_assert_eq(kv_bench_sends(b, KV_BENCH_RULE_SERVE, 0, &d), 0, "%s", d.msg);
    cr_assert(b->reqs[0].send_s == 0 && b->reqs[1].send_s == 0);
    kv_bench_free(b);
}

Test(benchfile, csv_reads_columns_by_name_in_send_order)
{
    kv_bench *b = load_ok("ok.csv", "e2e_s,ttft_s,send_s,prompt_len,output_len\r\n"
                                    "2,0.5,1.5,100,4\r\n\r\n1,0.25,0,50,2\n1,0.1,1.5,7,1\n");
    cr_assert_eq(b->kind, KV_BENCH_CSV);
    cr_assert_eq(b->n, 3);
    cr_assert(b->has_sends);
    cr_assert_eq(b->reqs[0].prompt_len, 50, "sorted by send");
    cr_assert_eq(b->reqs[1].prompt_len, 100, "ties in file order");
    cr_assert_eq(b->reqs[2].prompt_len, 7);
    cr_assert_float_eq(b->reqs[1].e2e_s, 2.0, 1e-12);
    kv_bench_free(b);
}

Test(benchfile, csv_bad_input_names_file_and_line)
{
    const char *h = "send_s,prompt_len,output_len,ttft_s,e2e_s\n";
    char buf[256];
    struct {
        const char *rows;
        int code;
        const char *want;
    } bad[] = {
        {"0,1,1,0.1,0.2,9\n", -KV_EPARSE, ":2: want 5 fields"},
        {"0,1,1,nan,0.2\n", -KV_EPARSE, ":2: 'ttft_s' must be a non-negative number"},
        {"-1,1,1,0.1,0.2\n", -KV_EPARSE, ":2: 'send_s' must be a non-negative"},
        {"0,1.5,1,0.1,0.2\n", -KV_ERANGE, ":2: 'prompt_len' must be an integer"},
        {"0,1,0,0.1,0.2\n", -KV_ERANGE, ":2: 'output_len' must be an integer in [1,"},
        {"0,1,1,0.3,0.2\n", -KV_ERANGE, ":2: e2e_s 0.2 is below ttft_s 0.3"},
        {"0,1,1,\"0.1\",0.2\n", -KV_EPARSE, ":2: quoted fields are not read"},
        {"", -KV_EPARSE, ": no requests"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(buf, sizeof buf, "%s%s", h, bad[i].rows);
        load_bad(buf, bad[i].code, bad[i].want);
    }
    load_bad("send_s,prompt_len,output_len,ttft_s\n0,1,1,0.1\n", -KV_EPARSE,
             ":1: the header must name exactly the columns");
    load_bad("send_s,prompt_len,output_len,ttft_s,e2e_s,extra\n", -KV_EPARSE,
             ":1: the header must name exactly the columns");
    load_bad("send_s,send_s,output_len,ttft_s,e2e_s\n", -KV_EPARSE, "(got 'send_s')");
    size_t big = KV_TRACE_MAX_CSV_RECORD + 100;
    char *longline = kv_xmalloc(big + 64);
    int n = snprintf(longline, 64, "%s", h);
    memset(longline + n, '1', big);
    longline[n + big] = '\0';
    load_bad(longline, -KV_EPARSE, ":2: a line longer than 1048576 bytes");
    free(longline);
    char *p = kv_path_join(dir, "nul.csv");
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f);
    fprintf(f, "%s0,1,1,0.1,0.2", h);
    fputc('\0', f);
    fputs("9\n", f);
    fclose(f);
    kv_bench *nb = NULL;
    kv_diag nd;
    cr_assert_eq(kv_bench_load(&nb, p, &nd), -KV_EPARSE);
    cr_assert(strstr(nd.msg, ":2: a NUL byte"), "%s", nd.msg);
    free(p);
    kv_bench *b = NULL;
    kv_diag d;
    cr_assert_eq(kv_bench_load(&b, "/nonexistent/run.json", &d), -KV_ENOENT);
    cr_assert(strstr(d.msg, "cannot open '/nonexistent/run.json'"), "%s", d.msg);
}

Test(benchfile, json_takes_chunks_of_several_tokens)
{
    /* vLLM streams a chunk with several tokens now and then, and its result has fewer itls
     * than output_lens − 1 (25 requests of S1's qps-4 run, two tokens short each). */
    kv_bench *b = load_ok("chunk.json", J_HEAD "\"input_lens\":[10,20],\"output_lens\":[5,1],"
                                               "\"ttfts\":[0.5,0.25],\"itls\":[[0.1,0.3],[]]}");
    cr_assert_eq(b->reqs[0].output_len, 5);
    cr_assert_eq(b->reqs[0].n_gaps, 2);
    cr_assert_float_eq(b->reqs[0].e2e_s, 0.9, 1e-12);
    cr_assert_eq(b->reqs[1].n_gaps, 0);
    kv_bench_free(b);
    b = load_ok("rows.csv", "send_s,prompt_len,output_len,ttft_s,e2e_s\n0,10,4,0.1,0.4\n");
    cr_assert_eq(b->reqs[0].n_gaps, 3, "a CSV row: one gap per token after the first");
    kv_bench_free(b);
}

/* The measured side of every shipped S1 run reproduces the aggregates benchmark_serving.py
 * wrote into the same file (its ttfts and itls are rounded to 1 us, hence the tolerance). */
Test(benchfile, shipped_runs_reproduce_their_published_means)
{
    static const char *const runs[] = {"01", "04", "16", "inf"};
    static const char *const keys[] = {"mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
                                       "mean_itl_ms"};
    for (size_t r = 0; r < 4; r++) {
        char rel[64];
        snprintf(rel, sizeof rel, "tests/data/bench/s1-tp8-qps%s.json", runs[r]);
        const char *path = src_path(rel);
        kv_bench *b = NULL;
        kv_diag d;
        cr_assert_eq(kv_bench_load(&b, path, &d), 0, "%s", d.msg);
        kv_cal_sample *s = kv_xmalloc(b->n * sizeof *s);
        for (size_t i = 0; i < b->n; i++)
            s[i] = (kv_cal_sample){0, b->reqs[i].ttft_s, b->reqs[i].e2e_s, b->reqs[i].output_len,
                                   b->reqs[i].n_gaps};
        kv_cal_metrics m;
        kv_cal_metrics_compute(s, b->n, &m);
        json_error_t je;
        json_t *j = json_load_file(path, 0, &je);
        cr_assert_not_null(j, "%s", je.text);
        for (int k = 0; k < 4; k++) {
            double pub = json_number_value(json_object_get(j, keys[k])) / 1e3;
            cr_assert_float_eq(m.v[k], pub, pub * 1e-4, "%s %s: %.9g against %.9g", rel, keys[k],
                               m.v[k], pub);
        }
        json_decref(j);
        free(s);
        kv_bench_free(b);
    }
}

/* ---- metrics ----------------------------------------------------------------------------- */

Test(calibrate, metrics_are_computed_as_vllm_bench_serve_does)
{
    /* TTFTs 1..100 ms: P99 by linear interpolation = 99.01 ms.  Outputs 1 and 3 tokens. */
    kv_cal_sample s[100];
    for (int i = 0; i < 100; i++)
        s[i] = (kv_cal_sample){i * 0.01, (100 - i) * 0.001, (100 - i) * 0.001, 1, 0};
    s[0].output_len = 3;
    s[0].n_gaps = 2;
    s[0].e2e_s = s[0].ttft_s + 0.04; /* TPOT 20 ms */
    s[1].output_len = 5;
    s[1].n_gaps = 2; /* streamed in three chunks: two gaps of 20 ms, TPOT still 10 ms */
    s[1].e2e_s = s[1].ttft_s + 0.04;
    kv_cal_metrics m;
    kv_cal_metrics_compute(s, 100, &m);
    cr_assert_float_eq(m.v[KV_CAL_TTFT_MEAN], 0.0505, 1e-12);
    cr_assert_float_eq(m.v[KV_CAL_TTFT_P99], 0.09901, 1e-12);
    cr_assert_float_eq(m.v[KV_CAL_TPOT_MEAN], 0.015, 1e-12, "mean of per-request TPOTs");
    cr_assert_float_eq(m.v[KV_CAL_ITL_MEAN], 0.08 / 4, 1e-12,
                       "the mean of every measured gap, as np.mean(itls)");
    /* 106 tokens between the first send (0) and the last finish (0.99 + 0.001). */
    cr_assert_float_eq(m.v[KV_CAL_OUT_TPUT], 106 / 0.991, 1e-9);
    int c;
    kv_cal_metrics p = m;
    p.v[KV_CAL_TTFT_MEAN] *= exp(0.5);
    p.v[KV_CAL_TTFT_P99] *= exp(-0.3);
    p.v[KV_CAL_TPOT_MEAN] = NAN;
    cr_assert_float_eq(kv_cal_log_error(&p, &m, &c), 0.25 + 0.09, 1e-12, "squares, either sign");
    cr_assert_eq(c, 4, "an undefined metric is left out");
}

/* ---- the replay semaphore ----------------------------------------------------------------- */

Test(calibrate, replay_semaphore_sends_when_a_slot_frees)
{
    /* max_concurrency 2, sync scheduler, 10 ms steps.  Rows 0..2 scheduled at 0, row 3 at
     * 50 ms.  Step [0,10) prefills rows 0, 1 (first tokens at 10); row 0 (2 tokens) ends at
     * 20, row 1 (1 token) at 10.  Row 2 takes row 1's slot at 10: [10,20) → ends 20.  Row 3
     * is free to go at its own 50 ms (both slots freed at 20): [50,60). */
    kv_request_spec specs[4];
    int64_t at[4] = {0, 0, 0, 50 * MS};
    uint32_t outs[4] = {2, 1, 1, 1};
    for (uint32_t i = 0; i < 4; i++)
        specs[i] = (kv_request_spec){.arrival_ns = at[i],
                                     .prompt_len = 16,
                                     .output_len = outs[i],
                                     .row = i,
                                     .content = KV_CONTENT_NONE};
    kv_trace t = {.reqs = specs, .n = 4, .trace_block_size = 16};
    kv_engine_config c = test_engine_config(100, 16, "fixed:0.01");
    c.prefix_caching = false;
    c.max_concurrency = 2;
    kv_diag d;
    kv_run_result res;
    cr_assert_eq(kv_replay(&c, &t, "t", "bf16", 0, NULL, &res, &d), 0, "%s", d.msg);
    int64_t sent[4] = {0, 0, 10 * MS, 50 * MS}, first[4] = {10 * MS, 10 * MS, 20 * MS, 60 * MS},
            fin[4] = {20 * MS, 10 * MS, 20 * MS, 60 * MS};
    for (int i = 0; i < 4; i++) {
        const kv_req *r = &res.reqs[i];
        cr_assert_eq(r->spec->arrival_ns, sent[i], "row %d sent at %lld", i,
                     (long long)r->spec->arrival_ns);
        cr_assert_eq(r->first_token_ns, first[i], "row %d first token %lld", i,
                     (long long)r->first_token_ns);
        cr_assert_eq(r->finish_ns, fin[i], "row %d finish %lld", i, (long long)r->finish_ns);
    }
    kv_run_result_release(&res);
    c.max_concurrency = 0; /* off: row 2 joins the first step */
    cr_assert_eq(kv_replay(&c, &t, "t", "bf16", 0, NULL, &res, &d), 0, "%s", d.msg);
    cr_assert_eq(res.reqs[2].spec->arrival_ns, 0);
    cr_assert_eq(res.reqs[2].finish_ns, 10 * MS);
    kv_run_result_release(&res);
}

/* ---- recovery of known parameters ---------------------------------------------------------- */

/* A synthetic `vllm bench serve` JSON (runs of 80-240 requests: with a dozen, P99 TTFT is
 * one request's and the loss is too jagged for any local search): run i of n requests at rate (0 =
 * inf) replayed by kvsim under spec, prompts of prompt_base + 97 · (k mod 7) tokens; ITLs split
 * each request's decode time evenly. */
static char *synthetic(const kv_sim_options *so, const kv_setup *setup, int i, size_t n,
                       double rate, uint32_t conc, uint32_t prompt_base, const char *spec)
{
    kv_request_spec *specs = kv_xcalloc(n, sizeof *specs);
    double *t = kv_xmalloc(n * sizeof *t);
    kv_bench_schedule(n, rate, KV_BENCH_RULE_SERVE, (uint32_t)i, t);
    for (size_t k = 0; k < n; k++)
        specs[k] = (kv_request_spec){.arrival_ns = llround(t[k] * 1e9),
                                     .prompt_len = prompt_base + 97 * (uint32_t)(k % 7),
                                     .output_len = 20 + 40 * (uint32_t)i + 13 * (uint32_t)(k % 5),
                                     .row = (uint32_t)k,
                                     .content = KV_CONTENT_NONE};
    kv_trace tr = {.reqs = specs, .n = n, .trace_block_size = 16};
    kv_sim_options o = *so;
    o.time_model = spec;
    o.max_concurrency = conc;
    kv_run_result res;
    kv_diag d;
    cr_assert_eq(kv_sim_replay(&o, setup, &tr, NULL, &res, &d), 0, "%s", d.msg);
    size_t cap = 64 * n * 60 + 4096, len = 0;
    char *js = kv_xmalloc(cap);
    len += (size_t)snprintf(js + len, cap - len, "{\"num_prompts\":%zu,\"request_rate\":", n);
    len += (size_t)(rate > 0 ? snprintf(js + len, cap - len, "%.17g", rate)
                             : snprintf(js + len, cap - len, "\"inf\""));
    len += (size_t)(conc ? snprintf(js + len, cap - len, ",\"max_concurrency\":%u", conc)
                         : snprintf(js + len, cap - len, ",\"max_concurrency\":null"));
    const char *keys[] = {"input_lens", "output_lens", "ttfts", "itls"};
    for (int a = 0; a < 4; a++) {
        len += (size_t)snprintf(js + len, cap - len, ",\"%s\":[", keys[a]);
        for (size_t k = 0; k < n; k++) {
            const kv_req *r = &res.reqs[k];
            cr_assert_eq(r->status, KV_REQ_FINISHED);
            double send = (double)r->spec->arrival_ns / 1e9;
            double ttft = (double)r->first_token_ns / 1e9 - send;
            double gap =
                ((double)(r->finish_ns - r->first_token_ns) / 1e9) / (r->spec->output_len - 1);
            const char *sep = k ? "," : "";
            if (a == 0)
                len += (size_t)snprintf(js + len, cap - len, "%s%u", sep, r->spec->prompt_len);
            else if (a == 1)
                len += (size_t)snprintf(js + len, cap - len, "%s%u", sep, r->spec->output_len);
            else if (a == 2)
                len += (size_t)snprintf(js + len, cap - len, "%s%.17g", sep, ttft);
            else {
                len += (size_t)snprintf(js + len, cap - len, "%s[", sep);
                for (uint32_t g = 1; g < r->spec->output_len; g++)
                    len += (size_t)snprintf(js + len, cap - len, "%s%.17g", g > 1 ? "," : "", gap);
                len += (size_t)snprintf(js + len, cap - len, "]");
            }
        }
        len += (size_t)snprintf(js + len, cap - len, "]");
    }
    snprintf(js + len, cap - len, "}");
    cr_assert_lt(len + 2, cap);
    char name[32];
    snprintf(name, sizeof name, "syn%d.json", i);
    char *p = write_file(dir, name, js);
    free(js);
    free(t);
    free(specs);
    kv_run_result_release(&res);
    return p;
}

/* The default model on gpu (NULL: the default) with num_blocks blocks (0: from memory),
 * and default replay options. */
static void setup_with(const char *gpu, uint32_t num_blocks, kv_setup *setup, kv_sim_options *so)
{
    kv_setup_options mo;
    kv_setup_options_init(&mo);
    if (gpu)
        mo.gpu = gpu;
    mo.num_blocks = num_blocks;
    kv_diag d;
    cr_assert_eq(kv_setup_resolve(&mo, setup, &d), 0, "%s", d.msg);
    kv_sim_options_init(so);
}

TestSuite(calibrate_fit, .init = setup_dir, .fini = teardown_dir);

/* The recovery scenario.  The base model the fit starts from: the A100's MAMF and
 * bandwidth ceilings and a layer_lat, smooth and act_bytes, fixed here so that the scenario
 * does not move with the presets (src/presets.c).  The truth: the base with overhead and
 * mbu (attn likewise: the A100's 0.78) times mbu_factor.  The fitted runs are closed loops
 * of one client (runs 0 and 2): each request finds the engine idle, so TTFT is overhead +
 * prefill and TPOT overhead + a decode step, and the two keys are told apart; runs 1 (four
 * clients) and 3 (8 requests/s) are held out.  Fitted on open-loop runs alone, overhead and
 * mbu trade along a valley whose floor is the replays' scheduling noise (an arrival just
 * before or after a step boundary waits a step more) and the fit lands anywhere on it:
 * docs/accuracy.md "The fit's objective".  Under ASan every replay walks the pool after
 * every step: a small pool there (the fit's subject is the time model; preemptions are
 * replayed alike on both sides). */
#define RECOVERY_FIXED                                                                             \
    "roofline:mfu=0.869230769,mfu8=0.869230769,layer_lat=3.58e-05,smooth=1.46,act_bytes=32.1"

typedef struct recovery {
    kv_setup setup;
    kv_sim_options so;
    kv_bench *b[4];
} recovery;

static void recovery_make(recovery *rc, double overhead, double mbu_factor, uint32_t prompt_base)
{
    setup_with("A100-80G", KV_TEST_SANITIZED ? (uint32_t)atoi(KV_TEST_SLICE_BLOCKS) : 0, &rc->setup,
               &rc->so);
    rc->so.sched.max_batched_tokens = 2048;
    rc->so.sched.async_scheduling = false; /* else the host overhead hides behind the GPU */
    rc->so.time_model = RECOVERY_FIXED ",mbu=0.88";
    char truth[512];
    snprintf(truth, sizeof truth, RECOVERY_FIXED ",overhead=%.9g,mbu=%.9g,attn=%.9g", overhead,
             0.88 * mbu_factor, 0.78 * mbu_factor);
    double rates[4] = {0, 0, 0, 8.0};
    uint32_t conc[4] = {1, 4, 1, 0};
    size_t sizes[4] = {120, 240, 80, 160};
    kv_diag d;
    for (int i = 0; i < 4; i++) {
        /* A quarter of the requests under ASan, whose replays are some 50 times slower: the
         * one-client runs identify the keys at any length. */
        size_t n = KV_TEST_SANITIZED ? sizes[i] / 4 : sizes[i];
        char *p = synthetic(&rc->so, &rc->setup, i, n, rates[i], conc[i], prompt_base, truth);
        cr_assert_eq(kv_bench_load(&rc->b[i], p, &d), 0, "%s", d.msg);
        cr_assert_eq(kv_bench_sends(rc->b[i], KV_BENCH_RULE_SERVE, (uint32_t)i, &d), 0);
        free(p);
    }
}

/* Fit the scenario with co (holdout alternate when co is NULL). */
static void recovery_fit(recovery *rc, const kv_cal_options *co, kv_cal_result *r)
{
    kv_cal_options dflt;
    kv_cal_options_init(&dflt);
    dflt.holdout = KV_CAL_HOLDOUT_ALTERNATE;
    kv_diag d;
    cr_assert_eq(kv_calibrate(&rc->so, &rc->setup, rc->b, 4, co ? co : &dflt, r, &d), 0, "%s",
                 d.msg);
}

static void recovery_free(recovery *rc)
{
    for (int i = 0; i < 4; i++)
        kv_bench_free(rc->b[i]);
}

Test(calibrate_fit, recovers_known_parameters_and_holds_out_alternate_runs)
{
    /* The truth: overhead 4.2 ms and mbu at 0.83 of the base's (0.88 → 0.7304), off the
     * search's lattice (start ± step / 2^k: overhead 2 ms ± 4 ms / 2^k, the factor 1 ±
     * 0.25 / 2^k), so an exact hit is not a matter of arithmetic. */
    recovery rc;
    recovery_make(&rc, 0.0042, 0.83, 64);
    kv_cal_options co;
    kv_cal_options_init(&co);
    co.holdout = KV_CAL_HOLDOUT_ALTERNATE;
    kv_cal_result r;
    recovery_fit(&rc, &co, &r);
    cr_assert_eq(r.n_keys, 2);
    cr_assert_eq(r.keys[0], KV_CAL_KEY_OVERHEAD);
    cr_assert_float_eq(r.fitted[0], 0.0042, 0.0042 * 0.001, "overhead %.9g", r.fitted[0]);
    cr_assert_float_eq(r.fitted[1], 0.83, 0.83 * 0.001, "mbu factor %.9g", r.fitted[1]);
    bool held[4] = {false, true, false, true};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(r.runs[i].held_out, held[i], "run %d", i);
        for (int k = 0; k < KV_CAL_N_METRICS; k++) {
            double m = r.runs[i].measured.v[k];
            cr_assert_lt(fabs(r.runs[i].after.v[k] / m - 1), 0.02, "run %d metric %d after", i, k);
        }
    }
    cr_assert_gt(
        fabs(r.runs[1].before.v[KV_CAL_TPOT_MEAN] / r.runs[1].measured.v[KV_CAL_TPOT_MEAN] - 1),
        0.05, "the defaults are off: a real test");
    cr_assert_lt(r.loss_after, r.loss_before);
    cr_assert_leq(r.replays, co.max_replays);
    cr_assert(!r.budget_spent);
    kv_cal_result_release(&r);
    /* A tiny budget stops the search early, saying so. */
    co.max_replays = 6;
    co.fit = "overhead";
    recovery_fit(&rc, &co, &r);
    cr_assert(r.budget_spent);
    cr_assert_leq(r.replays, 6);
    kv_cal_result_release(&r);
    recovery_free(&rc);
}

/* The same scenario for five more truths, on and off the search's lattice: the one-client
 * runs pin overhead and mbu wherever they are (README "Which runs to fit on"). */
typedef struct truth_case {
    double overhead, mbu;
} truth_case;

ParameterizedTestParameters(calibrate_fit, recovers_other_truths_from_one_client_runs)
{
    static truth_case cases[] = {
        {0.005, 0.75}, {0.006, 0.70}, {0.003, 0.60}, {0.008, 0.90}, {0.0055, 0.78}};
    return cr_make_param_array(truth_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(truth_case *c, calibrate_fit, recovers_other_truths_from_one_client_runs)
{
    if (KV_TEST_SANITIZED) /* the same code as the test above, five more times: minutes */
        cr_skip_test("five more fits are for the normal build");
    recovery rc;
    recovery_make(&rc, c->overhead, c->mbu, 64);
    kv_cal_result r;
    recovery_fit(&rc, NULL, &r);
    cr_assert_float_eq(r.fitted[0], c->overhead, c->overhead * 0.001, "overhead %.9g for %g",
                       r.fitted[0], c->overhead);
    cr_assert_float_eq(r.fitted[1], c->mbu, c->mbu * 0.001, "mbu factor %.9g for %g", r.fitted[1],
                       c->mbu);
    kv_cal_result_release(&r);
    recovery_free(&rc);
}

/* Long prompts (1,500-2,082 tokens: prefill compute-bound, so TTFT ≈ overhead + a step that
 * mbu barely moves and TPOT = overhead + a decode step that it does): the loss is a narrow
 * valley across the keys, where no single key's move is downhill short of the truth.
 * Hooke–Jeeves alone stops 0.4 % (overhead) and 0.2 % (mbu) off, at a loss of 6e-5; the
 * Levenberg–Marquardt polish walks on to within 1e-7.  tests/accuracy_fit.py is the same
 * stall in scripts/accuracy's port. */
Test(calibrate_fit, walks_the_valley_of_compute_bound_prompts)
{
    if (KV_TEST_SANITIZED)
        cr_skip_test("another full fit is for the normal build");
    recovery rc;
    recovery_make(&rc, 0.0042, 0.83, 1500);
    kv_cal_result r;
    recovery_fit(&rc, NULL, &r);
    cr_assert_float_eq(r.fitted[0], 0.0042, 0.0042 * 0.001, "overhead %.9g", r.fitted[0]);
    cr_assert_float_eq(r.fitted[1], 0.83, 0.83 * 0.001, "mbu factor %.9g", r.fitted[1]);
    cr_assert(!r.budget_spent);
    /* A budget the polish runs out of: it stops there, says so, and keeps its best θ. */
    kv_cal_options co;
    kv_cal_options_init(&co);
    co.holdout = KV_CAL_HOLDOUT_ALTERNATE;
    co.max_replays = r.replays - 3;
    double loss = r.loss_after;
    kv_cal_result_release(&r);
    recovery_fit(&rc, &co, &r);
    cr_assert(r.budget_spent);
    cr_assert_leq(r.replays, co.max_replays);
    cr_assert_geq(r.loss_after, loss);
    cr_assert_lt(r.loss_after, r.loss_before);
    kv_cal_result_release(&r);
    recovery_free(&rc);
}

/* kv_cal_polish on Rosenbrock's valley, residuals (10 (y − x²), 1 − x), minimum (1, 1)
 * with loss 0: a curved valley that compass moves crawl along.  Steps 0.25 / 2¹³ (the
 * pattern search's last, from 0.25), box [−2, 2]².  tests/accuracy_fit.py runs
 * scripts/accuracy's lm_polish on the same three starts and expects the same end points:
 * the two fitters' arithmetic agrees to the last bit here. */
static int stop_at_once(void *ctx, const double *th, double *r, kv_diag *diag)
{
    (void)ctx;
    (void)th;
    (void)r;
    (void)diag;
    return 1;
}

static int rosenbrock(void *ctx, const double *th, double *r, kv_diag *diag)
{
    (void)ctx;
    (void)diag;
    r[0] = 10 * (th[1] - th[0] * th[0]);
    r[1] = 1 - th[0];
    return 0;
}

Test(calibrate, polish_walks_rosenbrocks_valley_and_holds_a_bound)
{
    struct {
        double start[2], hi0, want[2];
    } cases[] = {
        {{0.9, 0.8}, 2, {0.9999959623097616, 0.999991825672464}},
        {{-1.2, 1.0}, 2, {0.999992027251687, 0.9999836865125025}},
        /* x's bound 0.5 excludes the minimum: x held there, y walks on to x² = 0.25. */
        {{0.2, 0.0}, 0.5, {0.5, 0.25000001728730487}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double th[2] = {cases[c].start[0], cases[c].start[1]}, best = 0;
        double lo[2] = {-2, -2}, hi[2] = {cases[c].hi0, 2}, step[2] = {0.25 / 8192, 0.25 / 8192};
        kv_diag d;
        cr_assert_eq(kv_cal_polish(rosenbrock, NULL, 2, 2, th, lo, hi, step, &best, &d), 0);
        for (int j = 0; j < 2; j++)
            cr_assert_float_eq(th[j], cases[c].want[j], 1e-12, "case %zu key %d: %.17g", c, j,
                               th[j]);
        if (c < 2)
            cr_assert_lt(best, 1e-5, "case %zu: loss %g", c, best);
    }
    /* A residual function that says stop: the polish stops with it, θ untouched. */
    double th[2] = {0.9, 0.8}, best = 0, lo[2] = {-2, -2}, hi[2] = {2, 2}, step[2] = {1e-4, 1e-4};
    kv_diag d;
    cr_assert_eq(kv_cal_polish(stop_at_once, NULL, 2, 2, th, lo, hi, step, &best, &d), 1);
    cr_assert(th[0] == 0.9 && th[1] == 0.8);
    cr_assert_eq(kv_cal_polish(rosenbrock, NULL, 0, 2, th, lo, hi, step, &best, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "{fit}: 0 keys and 2 residuals (1 to 5 keys)");
    cr_assert_eq(kv_cal_polish(rosenbrock, NULL, KV_CAL_N_KEYS + 1, 2, th, lo, hi, step, &best, &d),
                 -KV_EINVAL);
}

Test(calibrate, option_errors)
{
    int keys[KV_CAL_N_KEYS];
    size_t n;
    kv_diag d;
    cr_assert_eq(kv_cal_keys_parse("overhead,mfu", keys, &n, &d), 0);
    cr_assert_eq(n, 2);
    cr_assert_eq(kv_cal_keys_parse("overhead,gpu", keys, &n, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "{fit}: 'gpu' is not one of overhead, seq_overhead, layer_lat, "
                            "mfu, mbu");
    cr_assert_eq(kv_cal_keys_parse("mbu,mbu", keys, &n, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "{fit}: 'mbu' given twice");
    cr_assert_eq(kv_cal_keys_parse("", keys, &n, &d), -KV_EINVAL);
}

/* ---- the CLI ------------------------------------------------------------------------------- */

Test(calibrate, cli_error_lines)
{
    const char *run = src_path("tests/data/bench/s1-tp8-qps01.json");
    struct {
        const char *args[8];
        int status;
        const char *want;
    } cases[] = {
        {{"calibrate", NULL}, 2, "needs at least one RUN"},
        {{"calibrate", run, "--fit", "overhead,gpu", NULL}, 2, "--fit: 'gpu' is not one of"},
        {{"calibrate", run, "--holdout", "half", NULL}, 2, "--holdout: 'half'"},
        {{"calibrate", run, "--holdout", "alternate", NULL}, 2, "needs at least two runs"},
        {{"calibrate", run, "--time-model", "fixed:0.01", NULL}, 2, "fits the roofline"},
        {{"calibrate", run, "--rate", "3", NULL}, 2, "--rate does not apply to kvsim calibrate"},
        {{"calibrate", run, "--arrivals", "poisson", NULL}, 2, "--arrivals: 'poisson'"},
        {{"calibrate", run, "--warm", "hot", NULL},
         2,
         "--warm: 'hot' is not none, first or previous"},
        {{"calibrate", run, "--gpu", "TPU", NULL}, 2, "TPU"},
        {{"calibrate", "/nonexistent.json", NULL}, 1, "cannot open '/nonexistent.json'"},
        {{"calibrate", run, "--seed", "4294967296", NULL}, 2, "--seed"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r = run_kvsimv(cases[i].args);
        assert_error_line(&r, cases[i].status, "kvsim: error: ", cases[i].want);
        run_result_free(&r);
    }
}

Test(calibrate_fit, failed_requests_are_skipped_and_rejections_are_errors)
{
    kv_setup setup;
    kv_sim_options so;
    setup_with(NULL, 20, &setup, &so); /* 19 usable 16-token blocks */
    kv_diag d;
    kv_cal_options co;
    kv_cal_options_init(&co);
    co.fit = "overhead";
    co.max_replays = 4;
    kv_bench *b = load_ok("f.json", "{\"num_prompts\":3,\"request_rate\":\"inf\","
                                    "\"input_lens\":[10,20,30],\"output_lens\":[3,0,2],"
                                    "\"ttfts\":[0.05,0,0.06],\"itls\":[[0.01,0.01],[],[0.01]],"
                                    "\"errors\":[\"\",\"boom\",\"\"]}");
    cr_assert_eq(kv_bench_sends(b, KV_BENCH_RULE_SERVE, 0, &d), 0);
    kv_cal_result r;
    cr_assert_eq(kv_calibrate(&so, &setup, &b, 1, &co, &r, &d), 0, "%s", d.msg);
    cr_assert_eq(r.runs[0].n_replayed, 2, "the failed request is not replayed");
    cr_assert_eq(r.runs[0].bench->n_failed, 1);
    kv_cal_result_release(&r);
    kv_bench_free(b);
    /* A prompt longer than the whole pool is rejected by the replay: an error naming the run. */
    b = load_ok("big.csv", "send_s,prompt_len,output_len,ttft_s,e2e_s\n0,1000,2,0.1,0.2\n"
                           "0,10,2,0.1,0.2\n");
    cr_assert_eq(kv_calibrate(&so, &setup, &b, 1, &co, &r, &d), -KV_ECAPACITY);
    cr_assert(strstr(d.msg, "big.csv: 1 of 2 requests did not finish in the replay"), "%s", d.msg);
    kv_bench_free(b);
}

/* n rows of 64-token prompts, one a second (prompt of row `odd` 65 tokens, if < n). */
static kv_bench *same_prompts(const char *name, int n, int odd)
{
    char text[1024] = "send_s,prompt_len,output_len,ttft_s,e2e_s\n";
    for (int i = 0; i < n; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%d,%d,2,0.1,0.2\n", i,
                 i == odd ? 65 : 64);
    return load_ok(name, text);
}

/* Warm-up (kv_cal_warm): a 64-token prompt with 16-token chunks takes 4 steps cold and 1
 * when its first 3 blocks are cached (a hit stops one token short of the prompt).  Run b,
 * the same prompts after run a on one server (`previous`), finds every prompt cached; run a
 * and, under `first`, run b find request 0 cached; `none` finds nothing. */
Test(calibrate_fit, warm_up_replays_the_prompts_the_server_saw_before)
{
    kv_setup setup;
    kv_sim_options so;
    setup_with(NULL, 200, &setup, &so);
    kv_diag d;
    so.sched.max_batched_tokens = 16;
    kv_bench *b[2] = {same_prompts("a.csv", 3, -1), same_prompts("b.csv", 3, -1)};
    kv_cal_options co;
    kv_cal_options_init(&co);
    co.fit = "overhead";
    co.max_replays = 4;
    kv_cal_result cold, prev, first;
    cr_assert_eq(kv_calibrate(&so, &setup, b, 2, &co, &cold, &d), 0, "%s", d.msg);
    co.warm = KV_CAL_WARM_PREVIOUS;
    cr_assert_eq(kv_calibrate(&so, &setup, b, 2, &co, &prev, &d), 0, "%s", d.msg);
    co.warm = KV_CAL_WARM_FIRST;
    cr_assert_eq(kv_calibrate(&so, &setup, b, 2, &co, &first, &d), 0, "%s", d.msg);
    cr_assert_eq(cold.runs[0].n_warm + cold.runs[1].n_warm, 0);
    cr_assert_eq(prev.runs[0].n_warm, 1, "run 1: the client's single-prompt test");
    cr_assert_eq(prev.runs[1].n_warm, 3, "run 2: every prompt of run 1");
    cr_assert_eq(first.runs[1].n_warm, 1);
    cr_assert_eq(prev.runs[1].n_replayed, 3, "warm-up prompts are not measured");
#define TTFT(r, i) ((r).runs[i].before.v[KV_CAL_TTFT_MEAN])
    cr_assert_eq(TTFT(cold, 0), TTFT(cold, 1), "cold: the two runs alike");
    cr_assert_lt(TTFT(prev, 0), TTFT(cold, 0), "request 0 hits");
    cr_assert_lt(TTFT(prev, 1), TTFT(prev, 0), "every request hits");
    cr_assert_eq(TTFT(first, 1), TTFT(prev, 0), "first: the same replay as run 1's");
    /* 4 steps cold, 1 warm: three requests' TTFTs of 4, 4, 4 steps against 1, 1, 1. */
    cr_assert_float_eq(TTFT(prev, 1) / TTFT(cold, 1), 0.25, 0.25 * 0.05, "%g",
                       TTFT(prev, 1) / TTFT(cold, 1));
#undef TTFT
    json_t *j = kv_cal_result_to_json(&prev, KV_CAL_HOLDOUT_NONE);
    cr_assert_str_eq(json_string_value(json_object_get(j, "warm")), "previous");
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(json_object_get(j, "runs"), 1),
                                                    "warm_prompts")),
                 3);
    json_decref(j);
    kv_cal_result_release(&cold);
    kv_cal_result_release(&prev);
    kv_cal_result_release(&first);
    /* `previous` needs the same prompts in the same order. */
    kv_bench *c = same_prompts("c.csv", 3, 1), *pair[2] = {b[0], c};
    co.warm = KV_CAL_WARM_PREVIOUS;
    cr_assert_eq(kv_calibrate(&so, &setup, pair, 2, &co, &prev, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, "c.csv: request 1's prompt is 65 tokens but "), "%s", d.msg);
    cr_assert(strstr(d.msg, "a.csv sent 64 (the runs must send the same prompts"), "%s", d.msg);
    kv_bench *e = same_prompts("e.csv", 2, -1), *pair2[2] = {b[0], e};
    cr_assert_eq(kv_calibrate(&so, &setup, pair2, 2, &co, &prev, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, "e.csv sends 2 prompts but "), "%s", d.msg);
    /* A warm-up still running when the run starts: 8 prompts of 4 one-hour steps. */
    kv_bench *long8[2] = {same_prompts("l1.csv", 8, -1), same_prompts("l2.csv", 8, -1)};
    so.time_model = "roofline:overhead=3600";
    cr_assert_eq(kv_calibrate(&so, &setup, long8, 2, &co, &prev, &d), -KV_ECAPACITY);
    cr_assert(strstr(d.msg, "l2.csv: its 8 warm-up prompts took 115200 s in the replay, longer "
                            "than the 100000 s before the run starts"),
              "%s", d.msg);
    for (int i = 0; i < 2; i++) {
        kv_bench_free(b[i]);
        kv_bench_free(long8[i]);
    }
    kv_bench_free(c);
    kv_bench_free(e);
}

Test(calibrate_fit, cli_prints_a_time_model_kvsim_run_accepts_and_the_json_agrees)
{
    char *json = kv_path_join(dir, "cal.json");
    const char *args[] = {"calibrate",
                          src_path("tests/data/bench/s1-tp8-qps01.json"),
                          "--arrivals",
                          "legacy",
                          "--model",
                          "llama-3-70b",
                          "--gpu",
                          "A100-40G",
                          "--tp",
                          "8",
                          "--no-async-scheduling",
                          "--fit",
                          "overhead",
                          "--json",
                          json,
                          KV_TEST_SMALL_POOL_ARGS,
                          NULL};
    run_result r = run_kvsimv(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *last = strrchr(r.out, '\n');
    cr_assert(last && last[1] == '\0');
    *last = '\0';
    last = strrchr(r.out, '\n');
    cr_assert(last && strncmp(last + 1, "--time-model roofline:overhead=", 31) == 0, "%s", r.out);
    const char *spec = last + 1 + strlen("--time-model ");
    size_t len;
    char *text = read_file(json, &len);
    cr_assert_not_null(text);
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    cr_assert_not_null(j, "%s", je.text);
    cr_assert_str_eq(json_string_value(json_object_get(j, "time_model")), spec);
    const json_t *run0 = json_array_get(json_object_get(j, "runs"), 0);
    cr_assert_eq(json_integer_value(json_object_get(run0, "requests")), 200);
    /* measured TPOT mean as the published summary gives it (mean_tpot_ms 24.5644 ms; the
     * shipped ITLs are rounded to 1 us, which moves it by 6 ns) */
    cr_assert_float_eq(
        json_real_value(json_object_get(json_object_get(run0, "measured"), "tpot_mean")),
        0.024564414268982127, 1e-8);
    const char *run_args[] = {"run",          src_path("traces/tiny.csv"),
                              "--model",      "llama-3-70b",
                              "--gpu",        "A100-40G",
                              "--tp",         "8",
                              "--time-model", spec,
                              "--quiet",      NULL};
    run_result rr = run_kvsimv(run_args);
    cr_assert_eq(rr.status, 0, "kvsim run takes the line verbatim: %s", rr.err);
    run_result_free(&rr);
    json_decref(j);
    free(text);
    run_result_free(&r);
    free(json);
}
