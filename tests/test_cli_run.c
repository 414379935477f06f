/* kvsim run end to end: a golden summary on a bundled trace, byte-identical outputs,
 * every real trace, atomic outputs, and every error path (exit code + one-line message).
 * In sanitizer builds the real traces run on a slice (support.h KV_TEST_SANITIZED): the
 * debug engine walks the pool invariants after every step (DESIGN R9), O(N) per step. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

KV_TEST_SCRATCH_DIR(setup, remove_dir)

static void free_scratch(void);

static void teardown(void)
{
    remove_dir();
    free_scratch();
}

TestSuite(cli_run, .init = setup, .fini = teardown);

static char *path_in(const char *d, const char *name)
{
    size_t n = strlen(d) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", d, name);
    return p;
}

/* path_in for a path used once inside an expression: freed by the suite's teardown. */
static char *scratch_paths[32];
static size_t n_scratch;

static const char *at(const char *d, const char *name)
{
    cr_assert_lt(n_scratch, sizeof scratch_paths / sizeof scratch_paths[0]);
    return scratch_paths[n_scratch++] = path_in(d, name);
}

/* No temporary (".NAME.tmp-XXXXXX") left in d. */
static void assert_no_temp_files(const char *d)
{
    DIR *dd = opendir(d);
    cr_assert_not_null(dd);
    for (struct dirent *e; (e = readdir(dd)) != NULL;)
        cr_assert_null(strstr(e->d_name, ".tmp"), "temporary file left: %s/%s", d, e->d_name);
    closedir(dd);
}

static void free_scratch(void)
{
    while (n_scratch)
        free(scratch_paths[--n_scratch]);
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
    char *rq = read_file(at(out, "requests.csv"), &n);
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

    /* The stamp: the version `kvsim --version` prints and the command line as run. */
    run_result v = run_kvsim("--version", NULL);
    char want_cmd[1200];
    snprintf(want_cmd, sizeof want_cmd, "kvsim run %s --time-model fixed:0.01 --out %s --quiet",
             src_path("traces/tiny_shared.jsonl"), out);
    const char *ver = json_string_value(json_object_get(s, "kvsim_version"));
    cr_assert(ver && *ver, "summary.json has no kvsim_version");
    cr_assert(strncmp(v.out, "kvsim ", 6) == 0 && strncmp(v.out + 6, ver, strlen(ver)) == 0 &&
                  v.out[6 + strlen(ver)] == '\n',
              "kvsim --version says '%s', summary.json '%s'", v.out, ver);
    cr_assert_str_eq(json_string_value(json_object_get(s, "command")), want_cmd);
    run_result_free(&v);
    json_object_del(s, "kvsim_version");
    json_object_del(s, "command");

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

/* --hash-algo xxh3-128 changes the identity function, not the simulation: the Mooncake
 * subset's summary is the same but for the note that says so. */
Test(cli_run, xxh3_gives_the_same_simulation)
{
    const char *t = src_path("traces/mooncake_conv_500.jsonl");
    /* Under sanitizers 60 rows on a small pool (support.h); the whole subset otherwise. */
    const char *rows = KV_TEST_SANITIZED ? "60" : "500";
    const char *pool = KV_TEST_SANITIZED ? KV_TEST_SMALL_BLOCKS : "28181";
    run_result a = run_kvsim("run", t, "--json", "--limit", rows, "--num-blocks", pool, NULL);
    run_result b = run_kvsim("run", t, "--json", "--limit", rows, "--num-blocks", pool,
                             "--hash-algo", "xxh3-128", NULL);
    cr_assert_eq(a.status, 0, "%s", a.err);
    if (b.status == 2 && strstr(b.err, "not built into")) { /* a build without libxxhash */
        run_result_free(&a), run_result_free(&b);
        return;
    }
    cr_assert_eq(b.status, 0, "%s", b.err);
    json_t *x = json_loads(a.out, 0, NULL), *y = json_loads(b.out, 0, NULL);
    cr_assert(x && y);
    json_t *notes = json_object_get(json_object_get(y, "config"), "notes");
    cr_assert_str_eq(json_string_value(json_array_get(notes, json_array_size(notes) - 1)),
                     "block identity by xxh3-128 (--hash-algo), not SHA-256");
    json_array_remove(notes, json_array_size(notes) - 1);
    json_object_del(x, "command"); /* the command lines differ, of course */
    json_object_del(y, "command");
    cr_assert(json_equal(x, y), "the same simulation under xxh3-128");
    json_decref(x), json_decref(y);
    run_result_free(&a), run_result_free(&b);
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
    char *file = read_file(at(out, "summary.json"), NULL);
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
    char *rq = read_file(at(out, "requests.csv"), NULL);
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

/* Read files[0..n) of directory o into text/len (each must exist). */
static void read_outputs(const char *o, const char *const *files, size_t n, char **text,
                         size_t *len)
{
    for (size_t i = 0; i < n; i++) {
        char *p = path_in(o, files[i]);
        text[i] = read_file(p, &len[i]);
        cr_assert(text[i], "%s missing", p);
        free(p);
    }
}

/* The same command twice (same --out too: summary.json records the command line). */
Test(cli_run, two_runs_byte_identical)
{
    const char *files[] = {"summary.json", "timeseries.csv", "requests.csv"};
    char *o = path_in(dir, "a");
    char *text[2][3];
    size_t len[2][3];
    for (int k = 0; k < 2; k++) {
        run_result r = run_kvsim("run", src_path("traces/mooncake_conv_500.jsonl"), "--limit", "60",
                                 "--num-blocks", KV_TEST_SANITIZED ? KV_TEST_SMALL_BLOCKS : "1500",
                                 "--out", o, "--quiet", NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        run_result_free(&r);
        read_outputs(o, files, 3, text[k], len[k]);
        rm_rf(o);
    }
    for (size_t i = 0; i < 3; i++) {
        cr_assert_gt(len[0][i], 100);
        cr_assert(len[0][i] == len[1][i] && memcmp(text[0][i], text[1][i], len[0][i]) == 0,
                  "%s differs between runs", files[i]);
        free(text[0][i]), free(text[1][i]);
    }
    free(o);
}

/* --hash-thread (issue 9, lever 9) changes who hashes, not what: the same files, the
 * summary's command line apart; on one replica and behind a router. */
Test(cli_run, hash_thread_gives_the_same_files)
{
    const char *files[] = {"timeseries.csv", "requests.csv"};
    const char *replicas[] = {"1", "2"};
    char *o = path_in(dir, "h");
    for (size_t c = 0; c < 2; c++) {
        char *text[2][2];
        size_t len[2][2];
        json_t *sj[2];
        for (int k = 0; k < 2; k++) {
            run_result r = run_kvsim(
                "run", src_path("traces/mooncake_conv_500.jsonl"), "--limit", "60", "--num-blocks",
                KV_TEST_SANITIZED ? KV_TEST_SMALL_BLOCKS : "1500", "--replicas", replicas[c],
                "--router", "prefix", "--out", o, "--quiet", k ? "--hash-thread" : NULL, NULL);
            cr_assert_eq(r.status, 0, "%s", r.err);
            run_result_free(&r);
            read_outputs(o, files, 2, text[k], len[k]);
            sj[k] = load_json(at(o, "summary.json"));
            json_object_del(sj[k], "command");
            json_t *perf = load_json(at(o, "perf.json"));
            cr_assert(json_is_boolean(json_object_get(perf, "hash_thread")) &&
                          json_boolean_value(json_object_get(perf, "hash_thread")) == (k == 1),
                      "perf.json: hash_thread is not %s", k ? "true" : "false");
            json_decref(perf);
            rm_rf(o);
        }
        for (size_t i = 0; i < 2; i++) {
            cr_assert_gt(len[0][i], 100);
            cr_assert(len[0][i] == len[1][i] && memcmp(text[0][i], text[1][i], len[0][i]) == 0,
                      "%s differs with --hash-thread (--replicas %s)", files[i], replicas[c]);
            free(text[0][i]), free(text[1][i]);
        }
        cr_assert(json_equal(sj[0], sj[1]), "summary.json differs with --hash-thread");
        json_decref(sj[0]), json_decref(sj[1]);
    }
    free(o);
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
    if (KV_TEST_SANITIZED) {
        args[n++] = "--limit";
        args[n++] = KV_TEST_SLICE_ROWS;
        args[n++] = "--num-blocks";
        args[n++] = KV_TEST_SLICE_BLOCKS;
    }
    args[n] = NULL;
    run_result r = run_kvsimv(args);
    cr_assert_eq(r.status, 0, "%s: %s", file, r.err);
    json_t *s = load_json(at(out, "summary.json"));
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

Test(cli_run, real_mooncake_conversation)
{
    replay_real("traces/real/mooncake_fast25_conversation_trace.jsonl", NULL);
}

Test(cli_run, real_mooncake_synthetic)
{
    replay_real("traces/real/mooncake_fast25_synthetic_trace.jsonl", NULL);
}

Test(cli_run, real_azure_code)
{
    replay_real("traces/real/azure_llm_inference_2023_code.csv", NULL);
}

Test(cli_run, real_azure_conv)
{
    replay_real("traces/real/azure_llm_inference_2023_conv.csv", NULL);
}

Test(cli_run, real_sharegpt_lengths)
{
    replay_real("traces/real/sharegpt_8k_filtered_stats_llama2_tokenizer.csv", "4");
}

Test(cli_run, real_arxiv_lengths)
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
    char *before = read_file(at(out, "summary.json"), NULL);
    char *bad = write_file(dir, "bad.jsonl",
                           "{\"arrival\": 0, \"prompt_len\": 4, \"output_len\": 2}\n"
                           "{\"arrival\": 1, \"prompt_len\": 4, \"output_len\": 0}\n");
    r = run_kvsim("run", bad, "--out", out, NULL);
    assert_error_line(&r, 1, "kvsim: error: ", "bad.jsonl:2: 'output_len'");
    char *after = read_file(at(out, "summary.json"), NULL);
    cr_assert_str_eq(before, after, "an earlier complete summary.json is untouched");
    assert_no_temp_files(out);
    run_result_free(&r);

    char *fresh = path_in(dir, "fresh");
    r = run_kvsim("run", bad, "--out", fresh, NULL);
    cr_assert_eq(r.status, 1);
    cr_assert(!file_exists(at(fresh, "summary.json")), "no half-written output");
    cr_assert(!file_exists(at(fresh, "requests.csv")));
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
        {{"run", tiny, "--hash-algo", "md5", NULL},
         2,
         "kvsim: error: --hash-algo: 'md5' is not sha256 or xxh3-128\n"},
        {{"run", tiny, "--limit", "0", NULL}, 2, "kvsim: error: --limit: '0' must be at least 1\n"},
        /* A value too large is reported as too large (issue 7 defect). */
        {{"run", tiny, "--num-blocks", "99999999999", NULL},
         2,
         "kvsim: error: --num-blocks: '99999999999' must be at most 4294967295\n"},
        {{"run", tiny, "--seed", "99999999999999999999999", NULL},
         2,
         "kvsim: error: --seed: '99999999999999999999999' must be at most 18446744073709551615\n"},
        {{"run", tiny, "--trace-block-size", "16777217", NULL},
         2,
         "kvsim: error: --trace-block-size: '16777217' must be between 1 and 16777216\n"},
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
    /* The message names the trace and the row (issue 12). */
    char want[4200];
    snprintf(want, sizeof want,
             "kvsim: error: %s: the simulated clock passed 2^63 ns (292 years) at step 1, in "
             "the step of row 0 (line 1, arriving at 9223372036.853999616 s): arrivals or step "
             "times are too large\n",
             t);
    assert_error_line(&r, 1, want, NULL);
    cr_assert(!file_exists(at(out, "summary.json")), "no output after the error");
    run_result_free(&r);
    const char *tiny = src_path("traces/tiny.csv");
    /* Sync, so step 2 is scheduled after row 5 arrives (async plans it at time 0). */
    r = run_kvsim("run", tiny, "--time-model", "linear:1e9,1e9,1e9", "--no-async-scheduling",
                  NULL);
    snprintf(want, sizeof want,
             "kvsim: error: %s: the simulated clock passed 2^63 ns (292 years) at step 2, in "
             "the step of row 5 (line 7, arriving at 2.000000000 s)",
             tiny);
    assert_error_line(&r, 1, want, NULL);
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

/* gen and run take the same --trace-block-size range: a trace gen writes, run reads. */
Test(cli_run, trace_block_size_range_matches_gen)
{
    char *t = path_in(dir, "tb.jsonl");
    run_result r = run_kvsim("gen", "--prompt", "p50=40", "--output", "p50=4", "--rate", "10",
                             "--requests", "5", "--system-prompts", "1", "--system-prompt-len",
                             "16", "--trace-block-size", "16777216", "--out", t, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    r = run_kvsim("run", t, "--trace-block-size", "16777216", "-q", NULL);
    cr_assert_eq(r.status, 0, "run refuses what gen wrote: %s", r.err);
    run_result_free(&r);
    r = run_kvsim("gen", "--prompt", "p50=40", "--output", "p50=4", "--rate", "10", "--requests",
                  "5", "--trace-block-size", "16777217", NULL);
    assert_error_line(&r, 2, "kvsim: error: ", "16777216");
    run_result_free(&r);
    free(t);
}

/* ---- TRACE '-', --out '-' ---------------------------------------------------------- */

/* `kvsim run -` reads the trace from standard input: the same replay as the file. */
Test(cli_run, dash_reads_the_trace_from_stdin)
{
    const char *tiny = src_path("traces/tiny.csv");
    char file_out[600];
    snprintf(file_out, sizeof file_out, "%s", tiny);
    run_result a = run_kvsim("run", file_out, "--json", NULL);
    const char *args[] = {"run", "-", "--json", NULL};
    run_result b = run_kvsim_stdin(file_out, args);
    cr_assert_eq(a.status, 0, "%s", a.err);
    cr_assert_eq(b.status, 0, "%s", b.err);
    json_t *ja = json_loads(a.out, 0, NULL), *jb = json_loads(b.out, 0, NULL);
    cr_assert(ja && jb);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(jb, "config"), "trace")),
                     "-");
    /* Everything but the trace's name and the command line is the same. */
    json_t *objs[2] = {ja, jb};
    char *text[2];
    for (int k = 0; k < 2; k++) {
        json_object_del(json_object_get(objs[k], "config"), "trace");
        json_object_del(objs[k], "command");
        text[k] = json_dumps(objs[k], JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    }
    cr_assert_str_eq(text[0], text[1]);
    free(text[0]), free(text[1]);
    json_decref(ja), json_decref(jb);
    run_result_free(&a), run_result_free(&b);

    /* A problem in the input names it <stdin>. */
    char *bad = write_file(dir, "bad.csv", "arrival,prompt_len,output_len\n0,4,0\n");
    run_result c = run_kvsim_stdin(bad, args);
    assert_error_line(&c, 1,
                      "kvsim: error: <stdin>:2: 'output_len' must be a positive integer, got "
                      "'0'\n",
                      NULL);
    run_result_free(&c);
    free(bad);
}

Test(cli_run, out_dash_is_refused)
{
    run_result r = run_kvsim("run", src_path("traces/tiny.csv"), "--out", "-", NULL);
    assert_error_line(&r, 2,
                      "kvsim: error: --out -: a run writes four files into a directory, not to "
                      "standard output (--json prints summary.json there; --out ./- names a "
                      "directory '-')\n",
                      NULL);
    cr_assert(!file_exists("-"), "no directory '-' was created");
    run_result_free(&r);
    r = run_kvsim("sweep", "-", "--out", dir, NULL);
    assert_error_line(&r, 2,
                      "kvsim: error: kvsim sweep reads TRACE once per configuration, so it "
                      "cannot be '-' (standard input): save it to a file first\n",
                      NULL);
    run_result_free(&r);
}

/* ---- model honesty and cost --------------------------------------------------------- */

/* TP 3 over 8 KV heads runs (heads rounded up per rank) and says so, as estimate does. */
Test(cli_run, tp_that_does_not_divide_the_kv_heads_is_a_note)
{
    const char *note = "8 KV heads do not split evenly over TP 3: 3 per rank, rounded up (vLLM "
                       "refuses this TP)";
    run_result r = run_kvsim("run", src_path("traces/tiny.csv"), "--tp", "3", "--json",
                             KV_TEST_SMALL_POOL_ARGS, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    json_t *j = json_loads(r.out, 0, NULL);
    const json_t *notes = json_object_get(json_object_get(j, "config"), "notes");
    cr_assert_eq(json_array_size(notes), 1);
    cr_assert_str_eq(json_string_value(json_array_get(notes, 0)), note);
    json_decref(j);
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny.csv"), "--tp", "3", KV_TEST_SMALL_POOL_ARGS, NULL);
    char line[256];
    snprintf(line, sizeof line, "\n  note        %s\n", note);
    cr_assert(strstr(r.out, line), "%s", r.out);
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny.csv"), "--tp", "2", "--pp", "3", "--json",
                  KV_TEST_SMALL_POOL_ARGS, NULL);
    j = json_loads(r.out, 0, NULL);
    notes = json_object_get(json_object_get(j, "config"), "notes");
    cr_assert_eq(json_array_size(notes), 1, "TP 2 divides 8 heads; PP 3 does not divide 32 layers");
    cr_assert_str_eq(json_string_value(json_array_get(notes, 0)),
                     "32 layers over PP 3: the largest stage holds 11");
    json_decref(j);
    run_result_free(&r);
}

Test(cli_run, tokens_per_gpu_and_cost_per_million_output_tokens)
{
    run_result r = run_kvsim("run", src_path("traces/tiny.csv"), "--tp", "2", "--pp", "2",
                             "--gpu-cost-per-hour", "3.6", "--json", KV_TEST_SMALL_POOL_ARGS, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    json_t *j = json_loads(r.out, 0, NULL);
    double tok = jnum(j, "throughput", "output_tok_per_s");
    cr_assert_gt(tok, 0);
    /* (JSON carries 15 significant digits.) */
    cr_assert(fabs(jnum(j, "throughput", "output_tok_per_s_per_gpu") / (tok / 4) - 1) < 1e-13);
    /* 4 GPUs at 3.6 per hour = 0.004 per second: 0.004 / tok per token. */
    double want = 3.6 * 4 / 3600 / tok * 1e6;
    cr_assert(fabs(jnum(j, "throughput", "cost_per_million_output_tokens") / want - 1) < 1e-12);
    cr_assert_eq(jnum(j, "config", "gpu_cost_per_hour"), 3.6);
    json_decref(j);
    run_result_free(&r);
    /* Without a cost: null, and the human summary gives the per-GPU figure only. */
    r = run_kvsim("run", src_path("traces/tiny.csv"), "--json", KV_TEST_SMALL_POOL_ARGS, NULL);
    j = json_loads(r.out, 0, NULL);
    cr_assert(json_is_null(json_object_get(json_object_get(j, "throughput"),
                                           "cost_per_million_output_tokens")));
    cr_assert(json_is_null(json_object_get(json_object_get(j, "config"), "gpu_cost_per_hour")));
    json_decref(j);
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny.csv"), "--gpu-cost-per-hour", "2",
                  KV_TEST_SMALL_POOL_ARGS, NULL);
    cr_assert(strstr(r.out, "\n  per GPU     225.1 output tokens/s (1 GPU: TP1 x PP1); "),
              "%s", r.out);
    cr_assert(strstr(r.out, " per million output tokens at 2 per GPU-hour\n"), "%s", r.out);
    run_result_free(&r);
    const char *bad[][2] = {{"0", "'0' must be greater than 0"},
                            {"-1", "'-1' must be greater than 0"},
                            {"cheap", "'cheap' is not a number"}};
    for (size_t i = 0; i < 3; i++) {
        r = run_kvsim("run", src_path("traces/tiny.csv"), "--gpu-cost-per-hour", bad[i][0],
                      KV_TEST_SMALL_POOL_ARGS, NULL);
        char want_err[160];
        snprintf(want_err, sizeof want_err, "kvsim: error: --gpu-cost-per-hour: %s\n", bad[i][1]);
        assert_error_line(&r, 2, want_err, NULL);
        run_result_free(&r);
    }
}

/* A cluster's GPUs are every replica's TP x PP group: per-GPU throughput and the cost per
 * token count all of them. */
Test(cli_run, per_gpu_figures_of_a_cluster_count_every_replica)
{
    run_result r = run_kvsim("run", src_path("traces/tiny.csv"), "--replicas", "3", "--tp", "2",
                             "--gpu-cost-per-hour", "3.6", "--json", KV_TEST_SMALL_POOL_ARGS, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    json_t *j = json_loads(r.out, 0, NULL);
    double tok = jnum(j, "throughput", "output_tok_per_s");
    cr_assert_gt(tok, 0);
    cr_assert_eq(jnum(j, "cluster", "gpus"), 6);
    cr_assert(fabs(jnum(j, "throughput", "output_tok_per_s_per_gpu") / (tok / 6) - 1) < 1e-13);
    cr_assert(fabs(jnum(j, "throughput", "cost_per_million_output_tokens") /
                       (3.6 * 6 / 3600 / tok * 1e6) -
                   1) < 1e-12);
    json_decref(j);
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny.csv"), "--replicas", "3", "--tp", "2",
                  KV_TEST_SMALL_POOL_ARGS, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, " output tokens/s (6 GPUs: 3 replicas x TP2 x PP1)\n"), "%s", r.out);
    run_result_free(&r);
}
