/* kvsim run end to end: a golden summary on a bundled trace, byte-identical outputs,
 * every real trace, atomic outputs, and every error path (exit code + one-line message).
 * In sanitizer builds the real traces are cut with --limit: the debug engine walks the
 * pool invariants after every step (DESIGN R9), which is O(N) per step. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static char *dir;

static void setup(void)
{
    dir = make_temp_dir();
}

static void teardown(void)
{
    rm_rf(dir);
    free(dir);
}

TestSuite(cli_run, .init = setup, .fini = teardown);

static char *path_in(const char *d, const char *name)
{
    size_t n = strlen(d) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", d, name);
    return p;
}

static json_t *load_json(const char *path)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    cr_assert(j, "cannot parse %s: %s (line %d)", path, e.text, e.line);
    return j;
}

static double jnum(const json_t *j, const char *a, const char *b)
{
    const json_t *v = json_object_get(j, a);
    if (b)
        v = json_object_get(v, b);
    cr_assert(v, "missing %s.%s", a, b ? b : "");
    return json_number_value(v);
}

/* ---- golden run on the bundled hand-made trace ------------------------------------ */

Test(cli_run, golden_tiny_shared)
{
    char *out = path_in(dir, "g");
    run_result r = run_kvsim("run", src_path("traces/tiny_shared.jsonl"), "--time-model",
                             "fixed:0.01", "--out", out, "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "", "--quiet prints nothing");
    char *sp = path_in(out, "summary.json");
    json_t *s = load_json(sp);
    /* Hand-checked against the trace (block size 16): sys-b, turn-2, three-blocks and
     * row 9 hit the 32-token common prefix (2 blocks); exact-prefix (32 tokens) hits one
     * block by the n−1 cap; the adapter and the salt share nothing; content-less and
     * fresh prompts are unique. */
    cr_assert_eq(jnum(s, "prefix", "queries"), 388);
    cr_assert_eq(jnum(s, "prefix", "hits"), 32 + 32 + 32 + 16 + 32);
    cr_assert_eq(jnum(s, "requests", "finished"), 10);
    cr_assert_eq(jnum(s, "preemptions", NULL), 0);
    /* sys-a: prefill in step 1 (ends 0.01 s), 7 decode steps → finishes at 0.08 s. */
    size_t n;
    char *rq = read_file(path_in(out, "requests.csv"), &n);
    cr_assert(strstr(rq, "\nsys-a,0.000000000,0.000000000,0.010000000,0.080000000,40,8,0,0,0,"
                         "0.010000000,0.010000000,0.080000000,finished\n"),
              "%s", rq);
    cr_assert(strstr(rq, "\nsys-b,0.000000000,0.000000000,0.010000000,"));
    cr_assert(strstr(rq, ",52,16,32,32,0,"), "sys-b hit 32 tokens (num_cached_tokens too)");
    cr_assert(strstr(rq, "\nexact-prefix,2.000000000,"));
    cr_assert(strstr(rq, ",32,1,16,16,0,"), "exact-prefix: the whole last block recomputes");
    cr_assert(strstr(rq, "\nlora,0.500000000,"));
    cr_assert(strstr(rq, ",40,8,0,0,0,"));
    cr_assert(strstr(rq, "\n9,3.000000000,"), "an integer id is printed as its number");

    /* The whole summary against the stored golden file (config.trace differs by path). */
    json_t *g = load_json(src_path("tests/data/golden/tiny_shared.summary.json"));
    json_object_del(json_object_get(s, "config"), "trace");
    json_object_del(json_object_get(g, "config"), "trace");
    char *a = json_dumps(s, JSON_SORT_KEYS | JSON_INDENT(1) | JSON_REAL_PRECISION(15));
    char *b = json_dumps(g, JSON_SORT_KEYS | JSON_INDENT(1) | JSON_REAL_PRECISION(15));
    cr_assert_str_eq(a, b, "summary.json differs from tests/data/golden/tiny_shared.summary.json");
    free(a), free(b), free(rq), free(sp), free(out);
    json_decref(s), json_decref(g);
    run_result_free(&r);
}

Test(cli_run, scheduler_options_reach_the_config_echo_and_the_summary)
{
    /* DESIGN §6.6: the rule, the policy and async scheduling are echoed in summary.json
     * (config.preempt is the victim rule in effect: --policy priority implies it) and
     * named in the human summary. */
    run_result r = run_kvsim("run", src_path("traces/tiny_shared.jsonl"), "--watermark-rule", "v0",
                             "--policy", "priority", "--async-scheduling", "--json", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    json_error_t e;
    json_t *j = json_loads(r.out, 0, &e);
    cr_assert(j, "%s", e.text);
    json_t *c = json_object_get(j, "config");
    cr_assert_str_eq(json_string_value(json_object_get(c, "watermark_rule")), "v0");
    cr_assert_str_eq(json_string_value(json_object_get(c, "policy")), "priority");
    cr_assert_str_eq(json_string_value(json_object_get(c, "preempt")), "priority");
    cr_assert(json_is_true(json_object_get(c, "async_scheduling")));
    cr_assert_eq(jnum(j, "watermark", "blocks"), 281, "v0: floor(0.01 · 28180)");
    json_decref(j);
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny_shared.jsonl"), "--policy", "priority",
                  "--async-scheduling", "--no-async-scheduling", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "  scheduler   priority policy, sync scheduling\n"), "%s", r.out);
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny_shared.jsonl"), "--no-async-scheduling",
                  "--async-scheduling", "--policy", "priority", NULL);
    cr_assert(strstr(r.out, "  scheduler   priority policy, async scheduling\n"), "%s", r.out);
    cr_assert(strstr(r.out, "  watermark   0.01 (vllm rule) = 281 blocks: "), "%s", r.out);
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny_shared.jsonl"), NULL);
    cr_assert_null(strstr(r.out, "scheduler"), "defaults (fcfs, async) print no scheduler line");
    run_result_free(&r);
}

Test(cli_run, json_stdout_equals_summary_file)
{
    char *out = path_in(dir, "j");
    run_result r = run_kvsim("run", src_path("traces/tiny.csv"), "--time-model", "fixed:0.02",
                             "--out", out, "--json", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *file = read_file(path_in(out, "summary.json"), NULL);
    cr_assert_str_eq(r.out, file, "--json prints summary.json");
    free(file);
    free(out);
    run_result_free(&r);
}

Test(cli_run, requests_csv_row_index_when_no_id)
{
    char *t =
        write_file(dir, "t.jsonl",
                   "{\"arrival\": 0.5, \"prompt_len\": 4, \"output_len\": 2}\n\n"
                   "{\"arrival\": 0.25, \"prompt_len\": 4, \"output_len\": 1, \"id\": \"x\"}\n"
                   "{\"arrival\": 0.5, \"prompt_len\": 4, \"output_len\": 2}\n");
    char *out = path_in(dir, "r");
    run_result r = run_kvsim("run", t, "--out", out, "-q", "--time-model", "fixed:0.5", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *rq = read_file(path_in(out, "requests.csv"), NULL);
    /* Trace order: by arrival, ties in file order; blank lines are not rows. */
    const char *want = "id,arrival_s,first_scheduled_s,first_token_s,finish_s,prompt_len,"
                       "output_len,hit_tokens,num_cached_tokens,preemptions,ttft_s,tpot_s,e2e_s,"
                       "status\n"
                       "x,0.250000000,0.250000000,0.750000000,0.750000000,4,1,0,0,0,0.500000000,,"
                       "0.500000000,finished\n"
                       "0,0.500000000,0.750000000,1.250000000,1.750000000,4,2,0,0,0,0.750000000,"
                       "0.500000000,1.250000000,finished\n"
                       "2,0.500000000,0.750000000,1.250000000,1.750000000,4,2,0,0,0,0.750000000,"
                       "0.500000000,1.250000000,finished\n";
    cr_assert_str_eq(rq, want);
    free(rq), free(out), free(t);
    run_result_free(&r);
}

Test(cli_run, human_summary_names_every_figure)
{
    run_result r = run_kvsim("run", src_path("traces/tiny_shared.jsonl"), NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *want[] = {"unique physical peak",
                          "logical peak",
                          "sharing x",
                          "hit rate",
                          "evictions",
                          "preemptions",
                          "deferrals",
                          "rejections",
                          "TTFT",
                          "TPOT",
                          "E2E",
                          "p99"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert(strstr(r.out, want[i]), "summary lacks '%s':\n%s", want[i], r.out);
    run_result_free(&r);
}

/* ---- determinism --------------------------------------------------------------- */

Test(cli_run, two_runs_byte_identical)
{
    const char *files[] = {"summary.json", "timeseries.csv", "requests.csv"};
    char *o1 = path_in(dir, "a"), *o2 = path_in(dir, "b");
    for (int k = 0; k < 2; k++) {
        run_result r =
            run_kvsim("run", src_path("traces/mooncake_conv_500.jsonl"), "--limit", "150",
                      "--num-blocks", "1500", "--out", k ? o2 : o1, "--quiet", NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        run_result_free(&r);
    }
    for (size_t i = 0; i < 3; i++) {
        size_t n1, n2;
        char *a = read_file(path_in(o1, files[i]), &n1), *b = read_file(path_in(o2, files[i]), &n2);
        cr_assert(a && b);
        cr_assert_gt(n1, 100);
        cr_assert(n1 == n2 && memcmp(a, b, n1) == 0, "%s differs between runs", files[i]);
        free(a), free(b);
    }
    free(o1), free(o2);
}

/* ---- every real trace ---------------------------------------------------------- */

typedef struct real_case {
    const char *file;
    const char *rate; /* length-stats files need one */
} real_case;

static void replay_real(const char *file, const char *rate)
{
    char trace[512];
    snprintf(trace, sizeof trace, "%s", src_path(file));
    char *out = path_in(dir, "real");
    const char *args[20];
    int n = 0;
    args[n++] = "run";
    args[n++] = trace;
    args[n++] = "--out";
    args[n++] = out;
    args[n++] = "--quiet";
    args[n++] = "--sample-every";
    args[n++] = "50";
    if (rate) {
        args[n++] = "--rate";
        args[n++] = rate;
    }
    if (SANITIZED) {
        args[n++] = "--limit";
        args[n++] = "300";
    }
    args[n] = NULL;
    run_result r = run_kvsimv(args);
    cr_assert_eq(r.status, 0, "%s: %s", file, r.err);
    json_t *s = load_json(path_in(out, "summary.json"));
    double total = jnum(s, "requests", "total"), fin = jnum(s, "requests", "finished");
    double rej = jnum(s, "requests", "rejected");
    cr_assert_gt(total, 0);
    cr_assert_eq(fin + rej, total, "%s: finished + rejected = total", file);
    cr_assert_leq(jnum(s, "blocks", "peak_physical"), jnum(s, "blocks", "usable"),
                  "%s: peak_physical ≤ usable", file);
    cr_assert_eq(jnum(s, "requests", "unfinished"), 0);
    json_decref(s);
    free(out);
    run_result_free(&r);
}

Test(cli_run, real_mooncake_conversation, .timeout = 300)
{
    replay_real("traces/real/mooncake_fast25_conversation_trace.jsonl", NULL);
}

Test(cli_run, real_mooncake_synthetic, .timeout = 300)
{
    replay_real("traces/real/mooncake_fast25_synthetic_trace.jsonl", NULL);
}

Test(cli_run, real_azure_code, .timeout = 300)
{
    replay_real("traces/real/azure_llm_inference_2023_code.csv", NULL);
}

Test(cli_run, real_azure_conv, .timeout = 300)
{
    replay_real("traces/real/azure_llm_inference_2023_conv.csv", NULL);
}

Test(cli_run, real_sharegpt_lengths, .timeout = 300)
{
    replay_real("traces/real/sharegpt_8k_filtered_stats_llama2_tokenizer.csv", "4");
}

Test(cli_run, real_arxiv_lengths, .timeout = 300)
{
    replay_real("traces/real/arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv", "2");
}

/* ---- atomic outputs ------------------------------------------------------------ */

Test(cli_run, failed_run_leaves_no_output_and_keeps_old_files)
{
    char *out = path_in(dir, "o");
    run_result r = run_kvsim("run", src_path("traces/tiny.csv"), "--out", out, "-q", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    char *before = read_file(path_in(out, "summary.json"), NULL);
    char *bad = write_file(dir, "bad.jsonl",
                           "{\"arrival\": 0, \"prompt_len\": 4, \"output_len\": 2}\n"
                           "{\"arrival\": 1, \"prompt_len\": 4, \"output_len\": 0}\n");
    r = run_kvsim("run", bad, "--out", out, NULL);
    assert_error_line(&r, 1, "kvsim: error: ", "bad.jsonl:2: 'output_len'");
    char *after = read_file(path_in(out, "summary.json"), NULL);
    cr_assert_str_eq(before, after, "an earlier complete summary.json is untouched");
    cr_assert(!file_exists(path_in(out, "summary.json.tmp")));
    cr_assert(!file_exists(path_in(out, "timeseries.csv.tmp")));
    run_result_free(&r);

    char *fresh = path_in(dir, "fresh");
    r = run_kvsim("run", bad, "--out", fresh, NULL);
    cr_assert_eq(r.status, 1);
    cr_assert(!file_exists(path_in(fresh, "summary.json")), "no half-written output");
    cr_assert(!file_exists(path_in(fresh, "requests.csv")));
    run_result_free(&r);
    free(before), free(after), free(bad), free(out), free(fresh);
}

/* ---- error paths --------------------------------------------------------------- */

typedef struct err_case {
    const char *args[12];
    int status;
    const char *prefix;
} err_case;

Test(cli_run, error_paths)
{
    char *blocker = write_file(dir, "file", "x");
    char notdir[600];
    snprintf(notdir, sizeof notdir, "%s/sub", blocker);
    const char *tiny = src_path("traces/tiny.csv");
    const char *lengths = src_path("traces/sharegpt_lengths_1000.csv");
    err_case cases[] = {
        {{"run", NULL}, 2, "kvsim: error: kvsim run needs a TRACE file\n"},
        {{"run", tiny, tiny, NULL}, 2, "kvsim: error: kvsim run takes one TRACE, got 2\n"},
        {{"run", "/nonexistent/trace.jsonl", NULL}, 1, "kvsim: error: cannot open"},
        {{"run", tiny, "--bogus", NULL},
         2,
         "kvsim: error: unknown option '--bogus' for 'kvsim run'"},
        {{"run", tiny, "--watermark", "1.5", NULL}, 2, "kvsim: error: --watermark: '1.5' must be"},
        {{"run", tiny, "--watermark", "1", NULL},
         2,
         "kvsim: error: --watermark: '1' must be below 1\n"},
        {{"run", tiny, "--watermark", "x", NULL},
         2,
         "kvsim: error: --watermark: 'x' is not a number\n"},
        {{"run", tiny, "--free-order", "lru", NULL},
         2,
         "kvsim: error: --free-order: 'lru' is not split or append\n"},
        {{"run", tiny, "--preempt", "lifo", NULL},
         2,
         "kvsim: error: --preempt: 'lifo' is not fcfs or priority\n"},
        {{"run", tiny, "--watermark-rule", "v1", NULL},
         2,
         "kvsim: error: --watermark-rule: 'v1' is not vllm or v0\n"},
        {{"run", tiny, "--policy", "lifo", NULL},
         2,
         "kvsim: error: --policy: 'lifo' is not fcfs or priority\n"},
        {{"run", tiny, "--async-scheduling", "yes", NULL},
         2,
         "kvsim: error: kvsim run takes one TRACE, got 2\n"},
        {{"run", tiny, "--time-model", "warp", NULL},
         2,
         "kvsim: error: --time-model 'warp': expected"},
        {{"run", tiny, "--time-model", "fixed:0", NULL},
         2,
         "kvsim: error: --time-model 'fixed:0': a step must take at least 1 ns\n"},
        {{"run", tiny, "--time-model", "linear:1,2", NULL},
         2,
         "kvsim: error: --time-model 'linear:1,2': linear:A,B,C needs"},
        {{"run", tiny, "--max-seqs", "0", NULL},
         2,
         "kvsim: error: --max-seqs: '0' must be between 1"},
        {{"run", tiny, "--max-batched-tokens", "-3", NULL},
         2,
         "kvsim: error: --max-batched-tokens: '-3' must not be negative\n"},
        {{"run", tiny, "--sample-every", "0", NULL},
         2,
         "kvsim: error: --sample-every: '0' must be at least 1\n"},
        {{"run", tiny, "--format", "xml", NULL}, 2, "kvsim: error: --format: unknown format 'xml'"},
        {{"run", tiny, "--limit", "0", NULL}, 2, "kvsim: error: --limit: '0' must be at least 1\n"},
        {{"run", tiny, "--num-blocks", "1", NULL},
         2,
         "kvsim: error: --num-blocks: '1' must be at least 2\n"},
        {{"run", lengths, NULL}, 1, "kvsim: error: "},
        {{"run", tiny, "--out", notdir, NULL}, 1, "kvsim: error: cannot create directory"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r = run_kvsimv(cases[i].args);
        cr_assert_eq(r.status, cases[i].status, "case %zu: exit %d (%s)", i, r.status, r.err);
        assert_error_line(&r, cases[i].status, cases[i].prefix, NULL);
        run_result_free(&r);
    }
    free(blocker);
}

Test(cli_run, errors_from_file_contents_are_one_line)
{
    /* A quoted newline inside a CSV field is echoed escaped, never raw. */
    char *q = write_file(dir, "q.csv", "arrival,prompt_len,output_len\n0,\"1\n0\",5\n");
    run_result r = run_kvsim("run", q, "--num-blocks", "100", NULL);
    assert_error_line(
        &r, 1, "kvsim: error: ", "q.csv:2: 'prompt_len' must be a positive integer, got '1\\n0'");
    run_result_free(&r);
    free(q);
}

Test(cli_run, clock_overflow_is_an_error_not_a_wrap)
{
    char *t =
        write_file(dir, "late.jsonl",
                   "{\"arrival\": 9223372036.854, \"prompt_len\": 100, \"output_len\": 50}\n");
    char *out = path_in(dir, "late");
    run_result r = run_kvsim("run", t, "--num-blocks", "1000", "--out", out, NULL);
    assert_error_line(&r, 1, "kvsim: error: the simulated clock passed 2^63 ns", NULL);
    cr_assert(!file_exists(path_in(out, "summary.json")), "no output after the error");
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny.csv"), "--time-model", "linear:1e9,1e9,1e9", NULL);
    assert_error_line(&r, 1, "kvsim: error: the simulated clock passed 2^63 ns", NULL);
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny.csv"), "--time-model", "fixed:1e10", NULL);
    assert_error_line(&r, 2,
                      "kvsim: error: --time-model 'fixed:1e10': a step of 1e+10 s does not fit "
                      "64-bit nanoseconds\n",
                      NULL);
    run_result_free(&r);
    free(t), free(out);
}

Test(cli_run, help_lists_defaults)
{
    run_result r = run_kvsim("run", "--help", NULL);
    cr_assert_eq(r.status, 0);
    const char *want[] = {"--watermark",
                          "default 0.01",
                          "--max-seqs",
                          "default 256",
                          "--max-batched-tokens",
                          "default 8192",
                          "--no-chunked-prefill",
                          "--no-prefix-caching",
                          "--admit-full-prompt",
                          "--free-order",
                          "--preempt",
                          "--watermark-rule",
                          "--policy",
                          "--no-async-scheduling",
                          "--time-model",
                          "roofline",
                          "--seed",
                          "--out",
                          "--sample-every",
                          "--json",
                          "--quiet",
                          "--model",
                          "llama-3-8b",
                          "--gpu",
                          "H100-SXM",
                          "--gpu-util",
                          "0.9",
                          "--block-size",
                          "16",
                          "--num-blocks",
                          "--kv-budget",
                          "--reserve",
                          "--tp",
                          "--pp",
                          "--kv-dtype",
                          "--limit",
                          "--time-scale",
                          "--rate",
                          "--shared-prefix",
                          "--trace-block-size",
                          "--format"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert(strstr(r.out, want[i]), "--help lacks '%s'", want[i]);
    run_result_free(&r);
}
