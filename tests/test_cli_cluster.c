/* kvsim run --replicas R --router … end to end (DESIGN §10): every bad input with its exact
 * message and exit code, --router session on traces with and without sessions, R = 1
 * byte-identical to a run without the options on every small bundled trace, and what a
 * cluster run writes (the cluster block, the replica columns, the human section). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* In sanitizer builds the engine walks every invariant after every step (O(N) each):
 * the bundled subsets are cut to their first rows there, on a small pool (support.h)
 * instead of 3,000 or 4,000 blocks or a GPU-sized default. */
#define SANITIZED KV_TEST_SANITIZED /* support.h */
#define LIMIT         (SANITIZED ? "60" : "100000")
#define LIMIT_CLUSTER (SANITIZED ? "60" : "500")
#define POOL(n)       (SANITIZED ? KV_TEST_SMALL_BLOCKS : (n))

KV_TEST_SCRATCH_DIR(setup, teardown)

TestSuite(cli_cluster, .init = setup, .fini = teardown);

static char *in_dir(const char *d, const char *name)
{
    size_t n = strlen(d) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", d, name);
    return p;
}

Test(cli_cluster, bad_cluster_options_are_usage_errors)
{
    static const struct {
        const char *opt, *val, *msg;
    } cases[] = {
        {"--replicas", "0", "kvsim: error: --replicas: '0' must be between 1 and 4096\n"},
        {"--replicas", "2.5", "kvsim: error: --replicas: '2.5' is not a whole number\n"},
        {"--replicas", "four", "kvsim: error: --replicas: 'four' is not a whole number\n"},
        {"--replicas", "-2", "kvsim: error: --replicas: '-2' must not be negative\n"},
        {"--router", "fastest",
         "kvsim: error: --router: unknown policy 'fastest' (expected one of: round-robin, "
         "random, least-requests, least-kv, prefix, weighted[:prefix=WP,queue=WQ,kv=WK], "
         "kv-cost, session)\n"},
        {"--router", "weighted:prefix=two",
         "kvsim: error: --router: weight 'prefix': 'two' is not a decimal number (e.g. 2 or "
         "0.5)\n"},
        {"--router", "weighted:prefix",
         "kvsim: error: --router: malformed weights in 'weighted:prefix': 'prefix' is not "
         "KEY=VALUE (prefix=WP,queue=WQ,kv=WK)\n"},
        {"--router", "weighted:prefix=1,,kv=1",
         "kvsim: error: --router: malformed weights in 'weighted:prefix=1,,kv=1': empty entry "
         "in 'prefix=1,,kv=1'\n"},
        {"--router", "weighted:prefix=0,queue=0,kv=0",
         "kvsim: error: --router: the weights in 'weighted:prefix=0,queue=0,kv=0' are all 0 "
         "(give at least one above 0)\n"},
        {"--router", "weighted:queue=0",
         "kvsim: error: --router: the weights in 'weighted:queue=0' are all 0 (give at least "
         "one above 0)\n"},
        {"--router", "prefix:2", "kvsim: error: --router: 'prefix' takes no parameters (got "
                                 "'prefix:2')\n"},
        {"--router-refresh", "-0.5",
         "kvsim: error: --router-refresh: '-0.5' must be between 0 and 1e+09\n"},
        {"--router-refresh", "inf", "kvsim: error: --router-refresh: 'inf' is not a number\n"},
        {"--router-refresh", "nan", "kvsim: error: --router-refresh: 'nan' is not a number\n"},
        {"--router-refresh", "1e-12",
         "kvsim: error: --router-refresh must be 0 or at least 1 ns\n"},
        {"--router-view", "stale",
         "kvsim: error: --router-view: unknown view 'stale' (exact or approx)\n"},
        {"--router-overlap-weight", "-1",
         "kvsim: error: --router-overlap-weight: '-1' is not a decimal number (e.g. 2 or 0.5)\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r = run_kvsim("run", src_path("traces/tiny.csv"), cases[i].opt, cases[i].val,
                                 NULL);
        assert_error_line(&r, 2, "kvsim: error: ", NULL);
        cr_assert_str_eq(r.err, cases[i].msg, "%s %s", cases[i].opt, cases[i].val);
        run_result_free(&r);
    }
    /* The same checks guard sweep and plan, which take the same option group. */
    run_result r = run_kvsim("plan", src_path("traces/tiny.csv"), "--slo", "ttft_p99=2s",
                             "--router", "fastest", NULL);
    assert_error_line(&r, 2, "kvsim: error: --router: unknown policy 'fastest'", NULL);
    run_result_free(&r);
}

Test(cli_cluster, session_router_needs_a_trace_format_with_sessions)
{
    run_result r = run_kvsim("run", src_path("traces/mooncake_conv_500.jsonl"), "--replicas",
                             "2", "--router", "session", NULL);
    assert_error_line(&r, 1, "kvsim: error: ", NULL);
    char want[4096];
    snprintf(want, sizeof want,
             "kvsim: error: '%s' is a mooncake trace, which has no 'session' field: --router "
             "session needs a kvsim JSONL or CSV trace\n",
             src_path("traces/mooncake_conv_500.jsonl"));
    cr_assert_str_eq(r.err, want);
    run_result_free(&r);
}

Test(cli_cluster, session_router_on_rows_without_sessions_says_how_many)
{
    char *out = in_dir(dir, "o");
    run_result r = run_kvsim("run", src_path("traces/tiny_shared.jsonl"), "--replicas", "2",
                             "--router", "session", "--out", out, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "  router      session (0 of 10 rows have a session); exact view; "
                            "live signals\n"),
              "%s", r.out);
    char *sj = in_dir(out, "summary.json");
    json_error_t e;
    json_t *j = json_load_file(sj, 0, &e);
    cr_assert_not_null(j);
    json_t *c = json_object_get(j, "cluster");
    cr_assert_eq(json_integer_value(json_object_get(c, "session_rows")), 0);
    cr_assert_str_eq(json_string_value(json_object_get(c, "router")), "session");
    json_decref(j);
    free(sj);
    free(out);
    run_result_free(&r);
}

Test(cli_cluster, gen_sessions_keep_every_turn_on_its_first_replica)
{
    char *trace = in_dir(dir, "conv.jsonl"), *out = in_dir(dir, "o");
    run_result g = run_kvsim("gen", "--prompt", "p50=300,p99=1200", "--output", "p50=20",
                             "--rate", "4", "--requests", "120", "--sessions", "--think-time",
                             "2", "--seed", "3", "--out", trace, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_result r = run_kvsim("run", trace, "--replicas", "3", "--router", "session",
                             "--num-blocks", "2000", "--out", out, "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* requests.csv rows are in trace order, as the trace is (gen sorts by arrival): the
     * session of row i is its id up to the '.'. */
    char *csv = in_dir(out, "requests.csv");
    char *text = read_file(csv, NULL);
    cr_assert(strncmp(text, "id,replica,", 11) == 0);
    char sess[64][32];
    int rep[64], n_sess = 0, rows = 0;
    for (char *line = strchr(text, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        char id[32];
        int replica;
        cr_assert_eq(sscanf(line, "%31[^,],%d,", id, &replica), 2, "row: %.60s", line);
        *strchr(id, '.') = '\0';
        int k = 0;
        while (k < n_sess && strcmp(sess[k], id) != 0)
            k++;
        if (k == n_sess) {
            cr_assert_lt(n_sess, 64);
            snprintf(sess[n_sess], sizeof sess[0], "%s", id);
            rep[n_sess++] = replica;
        }
        cr_assert_eq(replica, rep[k], "session %s moved from %d to %d", id, rep[k], replica);
        rows++;
    }
    cr_assert_eq(rows, 120);
    cr_assert_gt(n_sess, 3);
    free(text);
    free(csv);
    free(trace);
    free(out);
    run_result_free(&g);
    run_result_free(&r);
}

/* Run TRACE twice (plain, and with a one-replica cluster under a router that would matter
 * with more), compare every output byte for byte. */
static void same_outputs(const char *trace, const char *const *extra)
{
    char *a = in_dir(dir, "plain"), *b = in_dir(dir, "one");
    const char *args_a[32] = {"run", trace, "--out", a, "--sample-every", "2"};
    const char *args_b[40] = {"run",        trace,    "--out",    b,       "--sample-every",
                              "2",          "--replicas", "1",    "--router", "weighted:kv=2",
                              "--router-view", "approx", "--router-refresh", "0.5"};
    size_t na = 6, nb = 14;
    for (size_t i = 0; extra && extra[i]; i++)
        args_a[na++] = args_b[nb++] = extra[i];
    run_result ra = run_kvsimv(args_a), rb = run_kvsimv(args_b);
    cr_assert_eq(ra.status, 0, "%s", ra.err);
    cr_assert_eq(rb.status, 0, "%s", rb.err);
    cr_assert_str_eq(ra.out, rb.out, "%s: human summary", trace);
    static const char *const files[] = {"summary.json", "timeseries.csv", "requests.csv"};
    for (size_t i = 0; i < 3; i++) { /* summary.json: but for the command line that ran it */
        char *pa = in_dir(a, files[i]), *pb = in_dir(b, files[i]);
        cr_assert(same_output(pa, pb), "%s: %s differs", trace, files[i]);
        free(pa);
        free(pb);
    }
    run_result_free(&ra);
    run_result_free(&rb);
    free(a);
    free(b);
}

Test(cli_cluster, one_replica_is_byte_identical_to_no_cluster_options)
{
    const char *const small_pool[] = {"--num-blocks", POOL("3000"), "--limit", LIMIT, NULL};
    const char *const lengths[] = {"--rate", "20", "--num-blocks", POOL("4000"), "--limit",
                                   LIMIT,    NULL};
    /* The tiny traces on the GPU-sized default pool (on a small one under sanitizers). */
    const char *const tiny_pool[] = {"--num-blocks", KV_TEST_SMALL_BLOCKS, NULL};
    same_outputs(src_path("traces/tiny.csv"), SANITIZED ? tiny_pool : NULL);
    same_outputs(src_path("traces/tiny_shared.jsonl"), SANITIZED ? tiny_pool : NULL);
    same_outputs(src_path("traces/mooncake_conv_500.jsonl"), small_pool);
    same_outputs(src_path("traces/azure_conv_1000.csv"), small_pool);
    same_outputs(src_path("traces/sharegpt_lengths_1000.csv"), lengths);
    /* The sync scheduler too (every bundled trace under both: test_cluster.c). */
    const char *const sync_pool[] = {"--num-blocks",          POOL("3000"), "--limit", LIMIT,
                                     "--no-async-scheduling", NULL};
    const char *const sync_tiny[] = {"--num-blocks", KV_TEST_SMALL_BLOCKS, "--no-async-scheduling",
                                     NULL};
    same_outputs(src_path("traces/tiny_shared.jsonl"), SANITIZED ? sync_tiny : sync_pool + 4);
    same_outputs(src_path("traces/mooncake_conv_500.jsonl"), sync_pool);
}

Test(cli_cluster, a_cluster_run_writes_the_cluster_block_and_replica_columns)
{
    char *out = in_dir(dir, "c");
    run_result r = run_kvsim("run", src_path("traces/mooncake_conv_500.jsonl"), "--replicas", "3",
                             "--router", "prefix", "--num-blocks", POOL("3000"), "--tp", "2",
                             "--limit", LIMIT_CLUSTER, "--out", out, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "  cluster     3 replicas x TP2 PP1 = 6 GPUs\n"), "%s", r.out);
    cr_assert(strstr(r.out, "  router      prefix; exact view; live signals\n"), "%s", r.out);
    cr_assert(strstr(r.out, "  routing     predicted "), "%s", r.out);
    cr_assert(strstr(r.out, "  imbalance   requests max/mean "), "%s", r.out);
    cr_assert(strstr(r.out, "  replica     requests finished"), "%s", r.out);
    cr_assert(strstr(r.out, " output tokens/s (6 GPUs: 3 replicas x TP2 x PP1)\n"),
              "per GPU: every replica's GPUs: %s", r.out);

    char *p = in_dir(out, "summary.json");
    json_error_t e;
    json_t *j = json_load_file(p, 0, &e);
    cr_assert_not_null(j, "%s", e.text);
    json_t *c = json_object_get(j, "cluster");
    cr_assert_not_null(c);
    cr_assert_eq(json_integer_value(json_object_get(c, "replicas")), 3);
    cr_assert_eq(json_integer_value(json_object_get(c, "gpus")), 6);
    json_t *tp = json_object_get(j, "throughput");
    cr_assert_float_eq(json_real_value(json_object_get(tp, "output_tok_per_s_per_gpu")),
                       json_real_value(json_object_get(tp, "output_tok_per_s")) / 6, 1e-9,
                       "the cluster's throughput over replicas x TP x PP GPUs");
    cr_assert_str_eq(json_string_value(json_object_get(c, "router_view")), "exact");
    json_t *pr = json_object_get(c, "per_replica");
    cr_assert_eq(json_array_size(pr), 3);
    json_int_t routed = 0, steps = 0;
    for (size_t i = 0; i < 3; i++) {
        routed += json_integer_value(json_object_get(json_array_get(pr, i), "requests"));
        steps += json_integer_value(json_object_get(json_array_get(pr, i), "steps"));
    }
    cr_assert_eq(routed, atoi(LIMIT_CLUSTER));
    cr_assert_eq(steps, json_integer_value(json_object_get(j, "steps")), "steps add up");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(j, "blocks"), "num_blocks")),
                 3 * atoi(POOL("3000")), "R·N");
    json_t *acc = json_object_get(c, "router_accuracy");
    cr_assert_eq(json_integer_value(json_object_get(acc, "granted_hit_tokens")),
                 json_integer_value(json_object_get(json_object_get(j, "prefix"), "hits")),
                 "every first-admission hit is a grant");
    json_decref(j);
    free(p);

    p = in_dir(out, "requests.csv");
    char *text = read_file(p, NULL);
    static const char head[] =
        "id,replica,arrival_s,first_scheduled_s,first_token_s,finish_s,prompt_len,output_len,"
        "predicted_hit_tokens,hit_tokens,num_cached_tokens,preemptions,ttft_s,tpot_s,e2e_s,"
        "status\n";
    cr_assert(strncmp(text, head, sizeof head - 1) == 0, "%.200s", text);
    free(text);
    free(p);
    p = in_dir(out, "timeseries.csv");
    text = read_file(p, NULL);
    cr_assert(strncmp(text, "time_s,replica,step,running,", 28) == 0, "%.80s", text);
    /* DESIGN §10: rows ordered by step start time, then replica (async scheduling runs a
     * pass one step early; its row still comes at its step's start). */
    double t_prev = -1;
    long r_prev = -1, rows = 0;
    for (const char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char *end;
        double t = strtod(line + 1, &end);
        long rep = strtol(end + 1, NULL, 10);
        cr_assert(t > t_prev || (t == t_prev && rep >= r_prev), "row %ld: %.60s", rows, line + 1);
        t_prev = t;
        r_prev = rep;
        rows++;
    }
    cr_assert_eq(rows, steps, "one row per step of any replica");
    free(text);
    free(p);
    free(out);
    run_result_free(&r);
}
