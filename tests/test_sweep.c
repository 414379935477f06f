/* `kvsim sweep` and `kvsim merge` through the built binary: the cartesian product and its
 * directory names, the constant-budget rule (checked against `kvsim estimate`), sweep.csv
 * against every configuration's summary.json, -j independence, --emit-jobs lines run by a
 * shell and merged, a failing configuration, and every error path (exit code, one
 * "kvsim: error:" line, nothing created).  Small traces and --time-model fixed keep each
 * sweep to milliseconds. */
#define _XOPEN_SOURCE 700 /* realpath(3) */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvsim/proc.h"
#include "support.h"

static const char header[] =
    "config,dir,block_size,num_blocks,kv_budget_bytes,watermark,free_order,max_seqs,preempt,"
    "finished,rejected,peak_physical,mean_physical,peak_logical,mean_logical,sharing_ratio,"
    "hit_rate,evictions,preemptions,watermark_deferrals,ttft_p50_s,ttft_p99_s,tpot_p50_s,"
    "tpot_p99_s,output_tok_per_s,requests_per_s,output_tok_per_s_per_gpu,"
    "cost_per_million_output_tokens,requests,model,gpu,tp,pp,kv_dtype,weight_bytes,layers,"
    "kv_heads,head_dim,bytes_per_token_rank,block_bytes,gpu_util,reserve_bytes,num_blocks_from,"
    "watermark_rule,max_batched_tokens,chunked_prefill,prefix_caching,admit_full_prompt,policy,"
    "async_scheduling,time_model,gpu_cost_per_hour,trace,format,trace_block_size,limit,"
    "time_scale,rate,shared_prefix,seed,replicas,router,router_weight_prefix,"
    "router_weight_queue,router_weight_kv,router_view,router_refresh_s,router_overlap_weight,gpus,"
    "requests_max_over_mean,requests_gini,"
    "blocks_max_over_mean,blocks_gini,predicted_hit_tokens,granted_hit_tokens,overpredicted,"
    "underpredicted";

/* Where each sweep.csv column comes from in summary.json (NULL: config, dir). */
static const char *const paths[] = {
    NULL,
    NULL,
    "config.block_size",
    "config.num_blocks",
    "config.kv_budget_bytes",
    "config.watermark",
    "config.free_order",
    "config.max_seqs",
    "config.preempt",
    "requests.finished",
    "requests.rejected",
    "blocks.peak_physical",
    "blocks.mean_physical",
    "blocks.peak_logical",
    "blocks.mean_logical",
    "blocks.sharing_ratio",
    "prefix.hit_rate",
    "evictions",
    "preemptions",
    "watermark.deferrals",
    "latency_s.ttft.p50",
    "latency_s.ttft.p99",
    "latency_s.tpot.p50",
    "latency_s.tpot.p99",
    "throughput.output_tok_per_s",
    "throughput.requests_per_s",
    "throughput.output_tok_per_s_per_gpu",
    "throughput.cost_per_million_output_tokens",
    "requests.total",
    "config.model",
    "config.gpu",
    "config.tp",
    "config.pp",
    "config.kv_dtype",
    "config.weight_bytes",
    "config.layers",
    "config.kv_heads",
    "config.head_dim",
    "config.bytes_per_token_rank",
    "config.block_bytes",
    "config.gpu_util",
    "config.reserve_bytes",
    "config.num_blocks_from",
    "config.watermark_rule",
    "config.max_batched_tokens",
    "config.chunked_prefill",
    "config.prefix_caching",
    "config.admit_full_prompt",
    "config.policy",
    "config.async_scheduling",
    "config.time_model",
    "config.gpu_cost_per_hour",
    "config.trace",
    "config.format",
    "config.trace_block_size",
    "config.limit",
    "config.time_scale",
    "config.rate",
    "config.shared_prefix",
    "config.seed",
    "cluster.replicas", /* FIRST_CLUSTER_COL: summary.json has them with two or more replicas */
    "cluster.router",
    "cluster.router_weights.prefix",
    "cluster.router_weights.queue",
    "cluster.router_weights.kv",
    "cluster.router_view",
    "cluster.router_refresh_s",
    "cluster.router_overlap_weight",
    "cluster.gpus",
    "cluster.imbalance.requests_max_over_mean",
    "cluster.imbalance.requests_gini",
    "cluster.imbalance.blocks_max_over_mean",
    "cluster.imbalance.blocks_gini",
    "cluster.router_accuracy.predicted_hit_tokens",
    "cluster.router_accuracy.granted_hit_tokens",
    "cluster.router_accuracy.overpredicted",
    "cluster.router_accuracy.underpredicted",
};
enum { N_COLS = sizeof paths / sizeof paths[0], FIRST_CLUSTER_COL = 60 };

static char *path2(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

/* sweep.csv as rows of cells (no quoting in these tests: paths hold no commas).  The
 * header must be exactly the contract's. */
typedef struct table {
    char *text;
    char *cells[64][N_COLS];
    size_t n;
} table;

static void table_read(table *t, const char *csv_path)
{
    memset(t, 0, sizeof *t);
    t->text = read_file(csv_path, NULL);
    cr_assert(t->text, "no %s", csv_path);
    char *save = NULL;
    char *line = strtok_r(t->text, "\n", &save);
    cr_assert(line && strcmp(line, header) == 0, "header of %s: %s", csv_path, line);
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        cr_assert(t->n < 64);
        size_t c = 0;
        for (char *p = line;; c++) {
            cr_assert(c < N_COLS, "too many cells: %s", line);
            char *end = p;
            if (*p == '"') { /* a quoted cell (the time model's commas): unquoted in place */
                t->cells[t->n][c] = ++p;
                char *w = p;
                for (; *p && !(p[0] == '"' && p[1] != '"'); p++)
                    *w++ = p[0] == '"' ? *++p : *p;
                cr_assert(*p == '"', "unterminated quote: %s", line);
                end = p + 1;
                *w = '\0';
            } else {
                t->cells[t->n][c] = p;
            }
            char *comma = strchr(end, ',');
            if (!comma)
                break;
            *comma = '\0';
            p = comma + 1;
        }
        cr_assert_eq(c + 1, N_COLS, "row has %zu cells", c + 1);
        t->n++;
    }
}

static json_t *get(json_t *o, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
        o = json_object_get(o, k);
    cr_assert(o, "no '%s'", path);
    return o;
}

static json_t *load_summary(const char *dir)
{
    char *p = path2(dir, "summary.json");
    json_error_t je;
    json_t *s = json_load_file(p, 0, &je);
    cr_assert(s, "%s: %s", p, je.text);
    free(p);
    return s;
}

static const char *tiny(void)
{
    return src_path("traces/tiny_shared.jsonl");
}

static const char *mooncake(void)
{
    return src_path("traces/mooncake_conv_500.jsonl");
}

static void assert_ok(run_result *r)
{
    cr_assert_eq(r->status, 0, "exit %d, stderr: %s", r->status, r->err);
    cr_assert_str_empty(r->err, "stderr: %s", r->err);
}

/* ---- the product and its names ---------------------------------------------------------- */

Test(sweep, cartesian_product_and_directory_names)
{
    char *tmp = make_temp_dir();
    char *out = path2(tmp, "out");
    /* Lists given out of order come back sorted; the last axis varies fastest. */
    run_result r = run_kvsim("sweep", tiny(), "--out", out, "--block-size", "16,8", "--watermark",
                             "0.05,0", "--free-order", "split,append", "--num-blocks", "64",
                             "--time-model", "fixed:0.01", "-j", "3", NULL);
    assert_ok(&r);
    static const char *const names[] = {
        "b8_n64_wm0_append_s256_fcfs",     "b8_n64_wm0_split_s256_fcfs",
        "b8_n64_wm0.05_append_s256_fcfs",  "b8_n64_wm0.05_split_s256_fcfs",
        "b16_n64_wm0_append_s256_fcfs",    "b16_n64_wm0_split_s256_fcfs",
        "b16_n64_wm0.05_append_s256_fcfs", "b16_n64_wm0.05_split_s256_fcfs",
    };
    char *csv = path2(out, "sweep.csv");
    table t;
    table_read(&t, csv);
    cr_assert_eq(t.n, 8);
    for (size_t i = 0; i < 8; i++) {
        cr_assert_str_eq(t.cells[i][0], names[i]);
        char *dir = path2(out, names[i]);
        cr_assert_str_eq(t.cells[i][1], dir);
        cr_assert(file_exists(dir), "%s", dir);
        char *err = path2(dir, "stderr.txt");
        cr_assert(!file_exists(err), "an empty stderr.txt of a success is removed");
        free(err);
        json_t *s = load_summary(dir);
        /* The knobs the name promises are the ones the run used. */
        cr_assert_eq(json_integer_value(get(s, "config.block_size")), i < 4 ? 8 : 16);
        cr_assert_eq(json_integer_value(get(s, "config.num_blocks")), 64);
        cr_assert_str_eq(json_string_value(get(s, "config.num_blocks_from")), "num-blocks");
        cr_assert_eq(json_real_value(get(s, "config.watermark")), (i / 2) % 2 ? 0.05 : 0.0);
        cr_assert_str_eq(json_string_value(get(s, "config.free_order")),
                         i % 2 ? "split" : "append");
        json_decref(s);
        free(dir);
    }
    /* The human summary names every configuration and where sweep.csv went. */
    for (size_t i = 0; i < 8; i++)
        cr_assert(strstr(r.out, names[i]), "stdout lacks %s: %s", names[i], r.out);
    cr_assert(strstr(r.out, "8 of 8 configurations finished"), "%s", r.out);
    cr_assert(strstr(r.out, csv), "%s", r.out);
    free(t.text);
    free(csv);
    run_result_free(&r);
    free(out);
    rm_rf(tmp);
    free(tmp);
}

Test(sweep, other_options_reach_every_run_and_quiet_is_silent)
{
    char *tmp = make_temp_dir();
    run_result r = run_kvsim("sweep", tiny(), "--out", tmp, "--max-seqs", "4,2", "--preempt",
                             "priority,fcfs", "--limit", "6", "--seed", "7", "--no-prefix-caching",
                             "--time-model", "fixed:0.01", "--gpu", "A100-80G", "--quiet", NULL);
    assert_ok(&r);
    cr_assert_str_empty(r.out, "--quiet: %s", r.out);
    static const char *const names[] = {"b16_wm0.01_split_s2_fcfs", "b16_wm0.01_split_s2_priority",
                                        "b16_wm0.01_split_s4_fcfs", "b16_wm0.01_split_s4_priority"};
    for (size_t i = 0; i < 4; i++) {
        char *dir = path2(tmp, names[i]);
        json_t *s = load_summary(dir);
        cr_assert_eq(json_integer_value(get(s, "config.limit")), 6);
        cr_assert_eq(json_integer_value(get(s, "config.seed")), 7);
        cr_assert(json_is_false(get(s, "config.prefix_caching")));
        cr_assert_str_eq(json_string_value(get(s, "config.gpu")), "A100-80G");
        cr_assert_str_eq(json_string_value(get(s, "config.num_blocks_from")), "gpu",
                         "one block size: each run derives the budget itself");
        cr_assert_eq(json_integer_value(get(s, "config.max_seqs")), i < 2 ? 2 : 4);
        cr_assert_str_eq(json_string_value(get(s, "config.preempt")), i % 2 ? "priority" : "fcfs");
        cr_assert_eq(json_integer_value(get(s, "requests.total")), 6);
        json_decref(s);
        free(dir);
    }
    run_result_free(&r);
    rm_rf(tmp);
    free(tmp);
}

/* ---- constant budget ------------------------------------------------------------------ */

static long long estimate_at(const char *tp, const char *block_size, const char *path)
{
    run_result r = run_kvsim("estimate", "--json", "--tp", tp, "--block-size", block_size, NULL);
    assert_ok(&r);
    json_t *j = json_loads(r.out, 0, NULL);
    cr_assert(j);
    long long v = json_integer_value(get(j, path));
    json_decref(j);
    run_result_free(&r);
    return v;
}

static long long estimate_int(const char *block_size, const char *path)
{
    return estimate_at("1", block_size, path);
}

Test(sweep, block_sizes_compare_at_one_budget)
{
    char *tmp = make_temp_dir();
    run_result r = run_kvsim("sweep", tiny(), "--out", tmp, "--block-size", "64,8,32,16,128",
                             "--time-model", "fixed:0.01", NULL);
    assert_ok(&r);
    cr_assert(strstr(r.out, "budget     constant: "), "the header says so: %s", r.out);
    /* The budget kvsim estimate derives for the default model and GPU. */
    long long budget = estimate_int("16", "capacity.kv_budget_bytes");
    char text[64];
    snprintf(text, sizeof text, "--kv-budget %lld", budget);
    cr_assert(strstr(r.out, text), "the header names the bytes passed on: %s", r.out);
    char *csv = path2(tmp, "sweep.csv");
    table t;
    table_read(&t, csv);
    cr_assert_eq(t.n, 5);
    static const long long sizes[] = {8, 16, 32, 64, 128};
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(atoll(t.cells[i][2]), sizes[i]);
        cr_assert_eq(atoll(t.cells[i][4]), budget, "same kv_budget_bytes in every row");
        char b[16];
        snprintf(b, sizeof b, "%lld", sizes[i]);
        long long block_bytes = estimate_int(b, "block_bytes");
        cr_assert_eq(block_bytes, sizes[i] * 131072);
        cr_assert_eq(atoll(t.cells[i][3]), budget / block_bytes,
                     "num_blocks = floor(budget / block bytes) for b = %lld", sizes[i]);
        cr_assert_eq(atoll(t.cells[i][3]), estimate_int(b, "capacity.num_blocks"));
        char *dir = path2(tmp, t.cells[i][0]);
        json_t *s = load_summary(dir);
        cr_assert_str_eq(json_string_value(get(s, "config.num_blocks_from")), "kv-budget");
        json_decref(s);
        free(dir);
    }
    free(t.text);
    free(csv);
    run_result_free(&r);
    rm_rf(tmp);
    free(tmp);
}

Test(sweep, fixed_block_counts_say_the_budget_differs)
{
    char *tmp = make_temp_dir();
    run_result r = run_kvsim("sweep", tiny(), "--out", tmp, "--block-size", "8,16", "--num-blocks",
                             "40", "--time-model", "fixed:0.01", NULL);
    assert_ok(&r);
    cr_assert(strstr(r.out, "NOT constant"), "%s", r.out);
    cr_assert(strstr(r.out, "b8 40MiB, b16 80MiB"), "%s", r.out);
    char *csv = path2(tmp, "sweep.csv");
    table t;
    table_read(&t, csv);
    cr_assert_eq(t.n, 2);
    cr_assert_str_eq(t.cells[0][3], "40");
    cr_assert_str_eq(t.cells[1][3], "40");
    cr_assert_eq(atoll(t.cells[0][4]), 40ll * 8 * 131072);
    cr_assert_eq(atoll(t.cells[1][4]), 40ll * 16 * 131072);
    free(t.text);
    free(csv);
    run_result_free(&r);
    rm_rf(tmp);
    free(tmp);
}

/* ---- sweep.csv = the summaries -------------------------------------------------------- */

/* Every cell of row i is the value at its column's path in summary s, printed as
 * summary.json prints it; the cluster cells of a one-replica run are empty but replicas,
 * which is 1. */
static void cells_are_summary(const table *t, size_t i, json_t *s)
{
    for (size_t c = 2; c < N_COLS; c++) {
        if (c >= FIRST_CLUSTER_COL && !json_object_get(s, "cluster")) {
            cr_assert_str_eq(t->cells[i][c], c == FIRST_CLUSTER_COL ? "1" : "", "%s", paths[c]);
            continue;
        }
        json_t *v = get(s, paths[c]);
        if (json_is_null(v)) {
            cr_assert_str_empty(t->cells[i][c], "%s", paths[c]);
        } else if (json_is_boolean(v)) {
            cr_assert_str_eq(t->cells[i][c], json_is_true(v) ? "true" : "false", "%s", paths[c]);
        } else if (strcmp(paths[c], "config.trace") == 0) {
            char *real = realpath(json_string_value(v), NULL);
            cr_assert(real);
            cr_assert_str_eq(t->cells[i][c], real, "the trace as the file it names");
            free(real);
        } else if (json_is_string(v)) {
            cr_assert_str_eq(t->cells[i][c], json_string_value(v), "%s", paths[c]);
        } else if (json_is_integer(v)) {
            char want[32];
            snprintf(want, sizeof want, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
            cr_assert_str_eq(t->cells[i][c], want, "%s", paths[c]);
        } else {
            cr_assert(json_is_real(v), "%s", paths[c]);
            /* Same decimal number as summary.json's text, so the same double. */
            cr_assert_eq(strtod(t->cells[i][c], NULL), json_real_value(v), "%s: %s vs %.17g",
                         paths[c], t->cells[i][c], json_real_value(v));
        }
    }
}

Test(sweep, replicas_and_routers_are_sweep_lists)
{
    char *tmp = make_temp_dir();
    /* Under sanitizers on a smaller pool (the invariant walk after every step is O(pool)). */
    const char *pool = KV_TEST_SANITIZED ? KV_TEST_SMALL_BLOCKS : "3000";
    run_result r =
        run_kvsim("sweep", mooncake(), "--out", tmp, "--replicas", "2,1", "--router",
                  "prefix,weighted:prefix=3,kv=1,round-robin", "--num-blocks", pool, "--time-model",
                  "fixed:0.01", "--limit", KV_TEST_SANITIZED ? "60" : "200", NULL);
    assert_ok(&r);
    char *csv = path2(tmp, "sweep.csv");
    table t;
    table_read(&t, csv);
    cr_assert_eq(t.n, 6, "2 replica counts x 3 routers");
    static const char *const names[] = {
        "r1_prefix", "r1_round-robin", "r1_weighted-p3-q0-k1",
        "r2_prefix", "r2_round-robin", "r2_weighted-p3-q0-k1",
    };
    for (size_t i = 0; i < t.n; i++) {
        char name[80];
        snprintf(name, sizeof name, "b16_n%s_wm0.01_split_s256_fcfs_%s", pool, names[i]);
        cr_assert_str_eq(t.cells[i][0], name, "row %zu", i);
        char *dir = path2(tmp, t.cells[i][0]);
        json_t *s = load_summary(dir);
        cells_are_summary(&t, i, s);
        json_decref(s);
        free(dir);
    }
    cr_assert_str_eq(t.cells[5][FIRST_CLUSTER_COL + 1], "weighted");
    cr_assert_str_eq(t.cells[5][FIRST_CLUSTER_COL + 2], "3");
    cr_assert_str_eq(t.cells[5][FIRST_CLUSTER_COL + 3], "0");
    cr_assert(strstr(r.out, "_r2_weighted-p3-q0-k1"), "%s", r.out);
    free(t.text);
    run_result_free(&r);
    /* The two listed twice: a value given twice is an error, as for every list. */
    r = run_kvsim("sweep", mooncake(), "--out", tmp, "--router", "weighted,weighted:prefix=2,queue=1,kv=1",
                  NULL);
    assert_error_line(&r, 2, "kvsim: error: --router: weighted:prefix=2,queue=1,kv=1 appears "
                             "twice in the list 'weighted,weighted:prefix=2,queue=1,kv=1'",
                      NULL);
    run_result_free(&r);
    r = run_kvsim("sweep", mooncake(), "--out", tmp, "--router", "prefix,,kv-cost", NULL);
    assert_error_line(&r, 2, "kvsim: error: --router: empty item in the list 'prefix,,kv-cost'",
                      NULL);
    run_result_free(&r);
    r = run_kvsim("sweep", mooncake(), "--out", tmp, "--replicas", "2,0", NULL);
    assert_error_line(&r, 2, "kvsim: error: --replicas: '0' must be between 1 and 4096", NULL);
    run_result_free(&r);
    free(csv);
    rm_rf(tmp);
    free(tmp);
}

Test(sweep, every_cell_is_its_summary_value)
{
    char *tmp = make_temp_dir();
    /* Small pools on the tiny trace: preemptions, a rejection, prefix hits and evictions,
     * so the compared values are not all zero. */
    run_result r = run_kvsim("sweep", tiny(), "--out", tmp, "--block-size", "16,8", "--kv-budget",
                             "16MiB,10MiB", "--watermark", "0,0.1", NULL);
    assert_ok(&r);
    char *csv = path2(tmp, "sweep.csv");
    table t;
    table_read(&t, csv);
    cr_assert_eq(t.n, 8);
    cr_assert_str_eq(t.cells[0][0], "b8_kv10MiB_wm0_split_s256_fcfs");
    bool preempted = false, rejected = false, hits = false;
    for (size_t i = 0; i < t.n; i++) {
        char *dir = path2(tmp, t.cells[i][0]);
        json_t *s = load_summary(dir);
        cells_are_summary(&t, i, s);
        preempted |= json_integer_value(get(s, "preemptions")) > 0;
        rejected |= json_integer_value(get(s, "requests.rejected")) > 0;
        hits |= json_real_value(get(s, "prefix.hit_rate")) > 0;
        json_decref(s);
        free(dir);
    }
    cr_assert(preempted && rejected && hits, "the table covers non-trivial runs");
    free(t.text);
    free(csv);
    run_result_free(&r);
    rm_rf(tmp);
    free(tmp);
}

Test(sweep, j1_and_j2_write_identical_sweep_csv)
{
    char *tmp = make_temp_dir();
    char *csv = path2(tmp, "sweep.csv");
    char *first = NULL;
    const char *jobs[] = {"1", "2"};
    for (int k = 0; k < 2; k++) {
        /* The same --out both times: the dir column is part of the bytes compared, and a
         * rerun over an existing sweep (--force) is the case to get right. */
        run_result r = run_kvsim("sweep", mooncake(), "--limit", "20", "--out", tmp, "--watermark",
                                 "0,0.01,0.05,0.2", "--kv-budget", "1GiB", "--time-model",
                                 "fixed:0.01", "-j", jobs[k], "--force", NULL);
        assert_ok(&r);
        run_result_free(&r);
        char *text = read_file(csv, NULL);
        cr_assert(text);
        if (!first)
            first = text;
        else {
            cr_assert_str_eq(text, first, "-j 1 and -j 2 differ");
            free(text);
        }
    }
    free(first);
    free(csv);
    rm_rf(tmp);
    free(tmp);
}

/* The configurations are forked after sweep read the trace, and hash through one shared
 * chain store (cmd_sweep.c): each one's files are still exactly what `kvsim run` with its
 * options writes alone, and of two configurations of one identity (block size) run one
 * after the other, the second hashes nothing. */
static json_t *load_json(const char *dir, const char *name)
{
    char *p = path2(dir, name);
    json_t *j = json_load_file(p, 0, NULL);
    cr_assert(j, "%s", p);
    free(p);
    return j;
}

Test(sweep, configurations_share_the_trace_and_digests_yet_write_what_run_writes)
{
    char *tmp = make_temp_dir();
    char *out = path2(tmp, "sw");
    run_result r = run_kvsim("sweep", mooncake(), "--limit", "80", "--out", out, "--block-size",
                             "16,32", "--watermark", "0,0.05", "--kv-budget", "256MiB",
                             "--time-model", "fixed:0.01", "-j", "1", "--quiet", NULL);
    assert_ok(&r);
    run_result_free(&r);
    static const char *const bs[] = {"16", "32"}, *const wm[] = {"0", "0.05"};
    for (int b = 0; b < 2; b++) {
        long long alone_hashed = 0;
        for (int w = 0; w < 2; w++) {
            char name[64];
            snprintf(name, sizeof name, "b%s_kv256MiB_wm%s_split_s256_fcfs", bs[b], wm[w]);
            char *cfg = path2(out, name), *solo = path2(tmp, name);
            r = run_kvsim("run", mooncake(), "--limit", "80", "--block-size", bs[b],
                          "--watermark", wm[w], "--kv-budget", "256MiB", "--time-model",
                          "fixed:0.01", "--out", solo, "--quiet", NULL);
            assert_ok(&r);
            run_result_free(&r);
            static const char *const files[] = {"summary.json", "timeseries.csv", "requests.csv"};
            for (int f = 0; f < 3; f++) {
                char *x = path2(cfg, files[f]), *y = path2(solo, files[f]);
                cr_assert(same_output(x, y), "%s differs from kvsim run's %s", x, y);
                free(x);
                free(y);
            }
            json_t *pa = load_json(cfg, "perf.json"), *pc = load_json(solo, "perf.json");
            long long hashed = json_integer_value(json_object_get(pa, "blocks_hashed"));
            alone_hashed = json_integer_value(json_object_get(pc, "blocks_hashed"));
            cr_assert_gt(alone_hashed, 0, "a hash_ids trace hashes blocks");
            cr_assert_eq(hashed, w == 0 ? alone_hashed : 0,
                         "%s hashed %lld blocks (alone: %lld)", name, hashed, alone_hashed);
            json_decref(pa);
            json_decref(pc);
            free(cfg);
            free(solo);
        }
    }
    /* A list of a trace-reading option: the trace was read with the last value applied
     * (80), so only those configurations may take it; the others read their own. */
    char *lim = path2(tmp, "lim");
    r = run_kvsim("sweep", mooncake(), "--limit", "40,80", "--out", lim, "--watermark", "0,0.05",
                  "--kv-budget", "256MiB", "--time-model", "fixed:0.01", "-j", "2", "--quiet", NULL);
    assert_ok(&r);
    run_result_free(&r);
    static const char *const lims[] = {"lim40", "lim80"};
    for (int i = 0; i < 4; i++) {
        char name[64];
        snprintf(name, sizeof name, "b16_kv256MiB_wm%s_split_s256_fcfs_%s", wm[i / 2], lims[i % 2]);
        char *cfg = path2(lim, name);
        json_t *sj = load_summary(cfg);
        cr_assert_eq(json_integer_value(get(sj, "requests.total")), i % 2 ? 80 : 40, "%s", name);
        json_decref(sj);
        free(cfg);
    }
    free(lim);
    free(out);
    rm_rf(tmp);
    free(tmp);
}

/* ---- --emit-jobs and merge ------------------------------------------------------------- */

Test(sweep, emitted_jobs_run_by_a_shell_merge_into_the_same_csv)
{
    char *tmp = make_temp_dir();
    char *out = path2(tmp, "out");
    char *csv = path2(out, "sweep.csv");
    /* --model FILE, a watermark list and a pool list: every kind of argument a line holds. */
    const char *model = src_path("tests/data/hf/Qwen2.5-7B.json");
#define SWEEP_ARGS                                                                                 \
    "sweep", tiny(), "--out", out, "--block-size", "8,16", "--watermark", "0,0.01", "--model",     \
        model, "--kv-budget", "64MiB", "--time-model", "fixed:0.01"
    run_result r = run_kvsim(SWEEP_ARGS, NULL);
    assert_ok(&r);
    run_result_free(&r);
    char *direct = read_file(csv, NULL);
    cr_assert(direct);
    rm_rf(out);
    cr_assert(!file_exists(out));

    char *jobs = path2(tmp, "jobs.txt");
    r = run_kvsim(SWEEP_ARGS, "--emit-jobs", jobs, NULL);
    assert_ok(&r);
    cr_assert(strstr(r.out, "wrote 4 commands to"), "%s", r.out);
    run_result_free(&r);
    char *bad = path2(out, "b8_kv64MiB_wm0_split_s256_fcfs");
    cr_assert(!file_exists(bad), "--emit-jobs runs nothing");
    free(bad);

    char *text = read_file(jobs, NULL);
    cr_assert(text);
    size_t lines = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save), lines++) {
        cr_assert_eq(l[0], '/', "absolute program path: %s", l);
        cr_assert(strstr(l, " run /"), "absolute trace: %s", l);
        cr_assert(strstr(l, " --model /"), "absolute --model file: %s", l);
        cr_assert(strstr(l, " --out /"), "absolute --out: %s", l);
        cr_assert(strstr(l, " --quiet"), "%s", l);
        cr_assert_eq(system(l), 0, "line %zu failed: %s", lines + 1, l);
    }
    cr_assert_eq(lines, 4);
    free(text);

    r = run_kvsim("merge", out, NULL);
    assert_ok(&r);
    cr_assert(strstr(r.out, "kvsim merge: 4 configurations into"), "%s", r.out);
    run_result_free(&r);
    char *merged = read_file(csv, NULL);
    cr_assert(merged);
    cr_assert_str_eq(merged, direct, "merge of the emitted runs differs from the sweep");

    /* Merge again, from the configuration directories themselves, listed in another
     * order, one twice: the same rows. */
    char *c1 = path2(out, "b16_kv64MiB_wm0.01_split_s256_fcfs");
    char *c2 = path2(out, "b8_kv64MiB_wm0_split_s256_fcfs");
    char *again = path2(tmp, "again.csv");
    r = run_kvsim("merge", c1, out, c2, "--out", again, "--quiet", NULL);
    assert_ok(&r);
    cr_assert_str_empty(r.out);
    run_result_free(&r);
    char *t2 = read_file(again, NULL);
    cr_assert_str_eq(t2, direct);

    free(t2);
    free(again);
    free(c1);
    free(c2);
    free(merged);
    free(direct);
    free(jobs);
    free(csv);
    free(out);
    rm_rf(tmp);
    free(tmp);
#undef SWEEP_ARGS
}

Test(sweep, emit_jobs_to_stdout_prints_only_the_lines)
{
    char *tmp = make_temp_dir();
    run_result r = run_kvsim("sweep", tiny(), "--out", tmp, "--preempt", "fcfs,priority",
                             "--emit-jobs", "-", NULL);
    assert_ok(&r);
    size_t lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 2, "%s", r.out);
    cr_assert(strstr(r.out, "--preempt fcfs"), "%s", r.out);
    cr_assert(strstr(r.out, "--preempt priority"), "%s", r.out);
    run_result_free(&r);
    rm_rf(tmp);
    free(tmp);
}

/* ---- a failing configuration ---------------------------------------------------------- */

Test(sweep, a_failing_configuration_is_reported_and_the_rest_kept)
{
    char *tmp = make_temp_dir();
    /* 3 MiB holds three 1 MiB blocks of 8 tokens but one 2 MiB block of 16: that run
     * fails (it needs 2), the other finishes.  A stale summary.json in the failing
     * directory, from an earlier sweep, must not survive to be merged. */
    char *failing = path2(tmp, "b16_kv3MiB_wm0.01_split_s256_fcfs");
    char mk[4200];
    snprintf(mk, sizeof mk, "mkdir -p '%s'", failing);
    cr_assert_eq(system(mk), 0);
    free(write_file(failing, "summary.json", "{\"stale\": true}\n"));
    run_result r = run_kvsim("sweep", tiny(), "--out", tmp, "--block-size", "16,8", "--kv-budget",
                             "3MiB", "--time-model", "fixed:0.01", NULL);
    assert_error_line(&r, 1, "kvsim: error: ",
                      "is not empty (it holds "
                      "'b16_kv3MiB_wm0.01_split_s256_fcfs'; an earlier "
                      "sweep?): give a new directory, or --force");
    run_result_free(&r);
    r = run_kvsim("sweep", tiny(), "--out", tmp, "--block-size", "16,8", "--kv-budget", "3MiB",
                  "--time-model", "fixed:0.01", "--force", NULL);
    cr_assert_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "kvsim: error: configuration 'b16_kv3MiB_wm0.01_split_s256_fcfs' "
                            "failed, exit 1: KV budget 3.00 MiB (3.15 MB) holds 1 blocks of "
                            "2.00 MiB (2.10 MB); at least 2 are needed"),
              "%s", r.err);
    cr_assert(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "one line: %s", r.err);
    cr_assert(strstr(r.out, "FAILED: exit 1"), "%s", r.out);
    cr_assert(strstr(r.out, "1 of 2 configurations finished"), "%s", r.out);
    char *stale = path2(failing, "summary.json");
    cr_assert(!file_exists(stale), "the stale summary.json was removed");
    char *err = path2(failing, "stderr.txt");
    char *saved = read_file(err, NULL);
    cr_assert(saved && strstr(saved, "kvsim: error: KV budget 3.00 MiB"), "%s", saved);

    char *csv = path2(tmp, "sweep.csv");
    table t;
    table_read(&t, csv);
    cr_assert_eq(t.n, 1);
    cr_assert_str_eq(t.cells[0][0], "b8_kv3MiB_wm0.01_split_s256_fcfs");
    cr_assert_str_eq(t.cells[0][3], "3");
    free(t.text);
    run_result_free(&r);

    /* merge leaves the failed directory out and names it. */
    char *again = path2(tmp, "again.csv");
    r = run_kvsim("merge", tmp, "--out", again, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "left out"), "%s", r.err);
    cr_assert(strstr(r.err, "b16_kv3MiB_wm0.01_split_s256_fcfs"), "%s", r.err);
    char *a = read_file(csv, NULL), *b = read_file(again, NULL);
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
    run_result_free(&r);
    free(again);
    free(csv);
    free(saved);
    free(err);
    free(stale);
    free(failing);
    rm_rf(tmp);
    free(tmp);
}

/* ---- help ------------------------------------------------------------------------------ */

/* ---- every run option is a list ------------------------------------------------------- */

/* --tp and the prefix-caching pair as lists: their labels join the names (after the
 * classic axes), each setup gets its own constant budget over the block sizes, every cell
 * is its run's, and a list of one value changes no name. */
Test(sweep, every_run_option_is_a_list)
{
    char *tmp = make_temp_dir();
    run_result r = run_kvsim("sweep", tiny(), "--out", tmp, "--tp", "2,1", "--prefix-caching",
                             "on,off", "--block-size", "32,16", "--gpu-cost-per-hour", "2",
                             "--time-model", "fixed:0.01", "-j", "2", NULL);
    assert_ok(&r);
    cr_assert(strstr(r.out, "budget     constant per setup: "), "%s", r.out);
    static const char *const tails[] = {"tp1_nopc", "tp1_pc", "tp2_nopc", "tp2_pc"};
    char *csv = path2(tmp, "sweep.csv");
    table t;
    table_read(&t, csv);
    cr_assert_eq(t.n, 8);
    for (size_t i = 0; i < 8; i++) {
        const char *b = i < 4 ? "16" : "32", *tp = (i % 4) < 2 ? "1" : "2";
        char want[96];
        snprintf(want, sizeof want, "b%s_wm0.01_split_s256_fcfs_%s", b, tails[i % 4]);
        cr_assert_str_eq(t.cells[i][0], want);
        char *dir = path2(tmp, want);
        json_t *s = load_summary(dir);
        cells_are_summary(&t, i, s);
        cr_assert_eq(json_integer_value(get(s, "config.tp")), atoi(tp));
        cr_assert_eq(json_is_true(get(s, "config.prefix_caching")), i % 2 == 1);
        cr_assert_eq(json_real_value(get(s, "config.gpu_cost_per_hour")), 2.0);
        /* One budget per setup (TP changes the weights per rank), constant over the block
         * sizes: the budget kvsim estimate derives at that TP. */
        long long budget = estimate_at(tp, "16", "capacity.kv_budget_bytes");
        cr_assert_eq(json_integer_value(get(s, "config.kv_budget_bytes")), budget);
        cr_assert_eq(json_integer_value(get(s, "config.num_blocks")),
                     estimate_at(tp, b, "capacity.num_blocks"));
        json_decref(s);
        free(dir);
    }
    free(t.text);
    free(csv);
    run_result_free(&r);
    /* The emitted lines use run's flags for on and off. */
    char *out2 = path2(tmp, "two");
    r = run_kvsim("sweep", tiny(), "--out", out2, "--prefix-caching", "off,on", "--emit-jobs", "-",
                  NULL);
    assert_ok(&r);
    cr_assert(strstr(r.out, " --no-prefix-caching ") && strstr(r.out, " --prefix-caching "), "%s",
              r.out);
    cr_assert(strstr(r.out, "/b16_wm0.01_split_s256_fcfs_nopc --quiet\n"), "%s", r.out);
    run_result_free(&r);
    /* One value: passed to every run, no label. */
    char *out3 = path2(tmp, "one");
    r = run_kvsim("sweep", tiny(), "--out", out3, "--tp", "2", "--time-model", "fixed:0.01", "-q",
                  NULL);
    assert_ok(&r);
    char *dir = path2(out3, "b16_wm0.01_split_s256_fcfs");
    json_t *s = load_summary(dir);
    cr_assert_eq(json_integer_value(get(s, "config.tp")), 2);
    json_decref(s);
    run_result_free(&r);
    free(dir), free(out2), free(out3);
    rm_rf(tmp);
    free(tmp);
}

/* Rows that agree on every classic knob are ordered by the option columns as numbers
 * (512 before 4096, though "mbt4096" sorts first as a name); the trace cell is the file
 * the relative path names. */
Test(sweep, option_columns_order_rows_and_the_trace_is_its_file)
{
    char *tmp = make_temp_dir();
    char cwd[4096];
    cr_assert(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(src_path("")), 0);
    run_result r =
        run_kvsim("sweep", "traces/tiny_shared.jsonl", "--out", tmp, "--max-batched-tokens",
                  "4096,512", "--time-model", "fixed:0.01", "-q", NULL);
    char *abs = realpath("traces/tiny_shared.jsonl", NULL);
    cr_assert_eq(chdir(cwd), 0);
    assert_ok(&r);
    char *csv = path2(tmp, "sweep.csv");
    table t;
    table_read(&t, csv);
    cr_assert_eq(t.n, 2);
    size_t tp = 0, trace = 0;
    for (size_t c = 0; c < N_COLS; c++) {
        if (paths[c] && strcmp(paths[c], "config.max_batched_tokens") == 0)
            tp = c;
        if (paths[c] && strcmp(paths[c], "config.trace") == 0)
            trace = c;
    }
    cr_assert_str_eq(t.cells[0][tp], "512");
    cr_assert_str_eq(t.cells[1][tp], "4096");
    cr_assert_str_eq(t.cells[0][trace], abs);
    free(t.text);
    free(csv);
    free(abs);
    run_result_free(&r);
    rm_rf(tmp);
    free(tmp);
}

/* A model file in a list: named by its base name, and absolute in --emit-jobs lines. */
Test(sweep, model_files_in_a_list)
{
    char *tmp = make_temp_dir();
    char cwd[4096];
    cr_assert(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(src_path("")), 0);
    run_result r = run_kvsim("sweep", "traces/tiny_shared.jsonl", "--out", tmp, "--model",
                             "tests/data/hf/Qwen2.5-7B.json,llama-3-8b", "--emit-jobs", "-", NULL);
    assert_ok(&r);
    char *abs = realpath("tests/data/hf/Qwen2.5-7B.json", NULL);
    cr_assert_eq(chdir(cwd), 0);
    char want[4300];
    snprintf(want, sizeof want, " --model %s ", abs);
    cr_assert(strstr(r.out, want), "%s", r.out);
    cr_assert(strstr(r.out, "_fcfs_Qwen2.5-7B --quiet\n"), "%s", r.out);
    cr_assert(strstr(r.out, " --model llama-3-8b ") && strstr(r.out, "_fcfs_llama-3-8b --quiet\n"),
              "%s", r.out);
    run_result_free(&r);
    free(abs);
    rm_rf(tmp);
    free(tmp);
}

/* ---- progress -------------------------------------------------------------------------- */

typedef struct seen_progress {
    size_t done[16], running[16];
    size_t n;
} seen_progress;

static void record_progress(void *ctx, size_t done, size_t n, size_t running)
{
    seen_progress *p = ctx;
    cr_assert_eq(n, 5);
    cr_assert_lt(p->n, 16);
    p->done[p->n] = done;
    p->running[p->n++] = running;
}

/* `sweep -j 2` said "1 running" while two ran: the count was taken between a job's end
 * and the next one's start.  Now every report is after the refill. */
Test(sweep, progress_counts_the_jobs_running_after_the_refill)
{
    char *argv[] = {"sh", "-c", "sleep 0.05", NULL};
    kv_job jobs[5];
    for (int i = 0; i < 5; i++)
        jobs[i] = (kv_job){.program = "/bin/sh", .argv = argv};
    seen_progress p = {0};
    kv_proc_run(jobs, 5, 2, record_progress, &p);
    cr_assert_geq(p.n, 2);
    cr_assert_eq(p.done[0], 0, "a first report as the first jobs start");
    cr_assert_eq(p.running[0], 2);
    for (size_t i = 0; i < p.n; i++) {
        size_t left = 5 - p.done[i];
        cr_assert_eq(p.running[i], left < 2 ? left : 2, "report %zu: %zu done, %zu running", i,
                     p.done[i], p.running[i]);
        cr_assert(i == 0 || p.done[i] > p.done[i - 1], "each report after an end");
    }
    cr_assert_eq(p.done[p.n - 1], 5, "the last report: all done, none running");
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(jobs[i].exit_code, 0);
        kv_job_release(&jobs[i]);
    }
}

Test(sweep, help_documents_the_choices)
{
    run_result r = run_kvsim("sweep", "--help", NULL);
    assert_ok(&r);
    const char *must[] = {"constant budget",
                          "floor(budget / block bytes)",
                          "b16_wm0.01_split_s256_fcfs",
                          "--emit-jobs FILE",
                          "kvsim merge DIR",
                          "default: online cores",
                          "stderr.txt",
                          "--time-model",
                          "--gpu"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        cr_assert(strstr(r.out, must[i]), "--help lacks '%s'", must[i]);
    run_result_free(&r);
    r = run_kvsim("merge", "--help", NULL);
    assert_ok(&r);
    cr_assert(strstr(r.out, "usage: kvsim merge DIR..."), "%s", r.out);
    run_result_free(&r);
}

/* ---- errors ---------------------------------------------------------------------------- */

typedef struct err_case {
    char args[12][100]; /* after the command; @TRACE, @OUT, @FILE are substituted */
    int status;
    char msg[160]; /* a substring of the single stderr line */
} err_case;

ParameterizedTestParameters(sweep, errors)
{
    static err_case cases[] = {
        {{"@TRACE", "--out", "@OUT", "--block-size", "16,x"},
         2,
         "--block-size: 'x' is not a whole number"},
        {{"@TRACE", "--out", "@OUT", "--block-size", "16,0"},
         2,
         "--block-size: '0' must be between 1 and 65536"},
        {{"@TRACE", "--out", "@OUT", "--free-order", "split,lru"},
         2,
         "--free-order: 'lru' is not split or append"},
        {{"@TRACE", "--out", "@OUT", "--preempt", "fcfs,lifo"},
         2,
         "--preempt: 'lifo' is not fcfs or priority"},
        {{"@TRACE", "--out", "@OUT", "--watermark", "0.01,1"},
         2,
         "--watermark: '1' must be below 1"},
        {{"@TRACE", "--out", "@OUT", "--watermark", "0.01,lots"},
         2,
         "--watermark: 'lots' is not a number"},
        {{"@TRACE", "--out", "@OUT", "--max-seqs", "0,4"},
         2,
         "--max-seqs: '0' must be between 1 and 16777216"},
        {{"@TRACE", "--out", "@OUT", "--num-blocks", "1,64"},
         2,
         "--num-blocks: '1' must be at least 2"},
        {{"@TRACE", "--out", "@OUT", "--kv-budget", "1GiB,2G"},
         2,
         "--kv-budget: ambiguous unit 'G' in size '2G'"},
        {{"@TRACE", "--out", "@OUT", "--block-size", "16,16"},
         2,
         "--block-size: 16 appears twice in the list '16,16'"},
        /* every run option is a list: run's own messages, and the sweep's rules */
        {{"@TRACE", "--out", "@OUT", "--tp", "1,0"}, 2, "--tp: '0' must be between 1 and 4096"},
        {{"@TRACE", "--out", "@OUT", "--tp", "2,02"},
         2,
         "--tp: 2 appears twice in the list '2,02'"},
        {{"@TRACE", "--out", "@OUT", "--kv-dtype", "fp8,fp9"},
         2,
         "--kv-dtype: unknown dtype 'fp9' (known: fp16, bf16, fp8, int8, int4)"},
        {{"@TRACE", "--out", "@OUT", "--prefix-caching", "on,yes"},
         2,
         "--prefix-caching: 'yes' is not on or off (a sweep lists on, off or on,off)"},
        {{"@TRACE", "--out", "@OUT", "--prefix-caching", "on,off", "--no-prefix-caching"},
         2,
         "--no-prefix-caching and the list --prefix-caching: give the list only (with off in it)"},
        {{"@TRACE", "--out", "@OUT", "--chunked-prefill", "off,off"},
         2,
         "--chunked-prefill: off appears twice in the list 'off,off'"},
        {{"@TRACE", "--out", "@OUT", "--time-model", "fixed:0.01,linear:1,2"},
         2,
         "--time-model 'linear:1,2': linear:A,B,C needs three non-negative numbers"},
        {{"@TRACE", "--out", "@OUT", "--model", "llama-3-8b,llama-9"},
         2,
         "configuration 'b16_wm0.01_split_s256_fcfs_llama-9': --model: unknown model preset "
         "'llama-9'"},
        {{"@TRACE", "--out", "@OUT", "--model", "x/a.json,y/a.json"},
         2,
         "--model: 'x/a.json' and 'y/a.json' would both be named 'a' in the directory names"},
        {{"@TRACE", "--out", "@OUT", "--watermark", "0.01,0.010"},
         2,
         "--watermark: 0.01 appears twice in the list '0.01,0.010'"},
        {{"@TRACE", "--out", "@OUT", "--kv-budget", "1GiB,1024MiB"},
         2,
         "--kv-budget: 1073741824 appears twice"},
        {{"@TRACE", "--out", "@OUT", "--block-size", ",16"},
         2,
         "--block-size: empty item in the list ',16'"},
        {{"@TRACE", "--out", "@OUT", "--max-seqs", "4,"},
         2,
         "--max-seqs: empty item in the list '4,'"},
        {{"@TRACE", "--out", "@OUT", "--num-blocks", "64,128", "--kv-budget", "1GiB"},
         2,
         "--num-blocks and --kv-budget are mutually exclusive"},
        {{"@TRACE", "--out", "@OUT", "--kv-budget", "1GiB", "--num-blocks", "64"},
         2,
         "--num-blocks and --kv-budget are mutually exclusive"},
        {{"--out", "@OUT"}, 2, "kvsim sweep needs a TRACE file"},
        {{"@TRACE"}, 2, "kvsim sweep needs --out DIR"},
        {{"@TRACE", "@TRACE", "--out", "@OUT"}, 2, "kvsim sweep takes one TRACE, got 2"},
        {{"@TRACE", "--out", "@OUT", "-j", "0"}, 2, "--jobs: '0' must be between 1 and 1024"},
        {{"@TRACE", "--out", "@OUT", "--jobs", "many"}, 2, "--jobs: 'many' is not a whole number"},
        {{"@TRACE", "--out", "@OUT", "--json"}, 2, "unknown option '--json' for 'kvsim sweep'"},
        {{"@TRACE", "--out", "@OUT", "--model", "llama-9"},
         2,
         "--model: unknown model preset 'llama-9'"},
        {{"@TRACE", "--out", "@OUT", "--time-model", "fixed:0"},
         2,
         "a step must take at least 1 ns"},
        {{"@TRACE", "--out", "@OUT", "--block-size",
          "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22", "--max-seqs",
          "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22", "--num-blocks",
          "2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23"},
         2,
         "the lists make 10648 configurations, more than 10000"},
        /* runtime: checked before anything runs or is created */
        {{"@TRACE.nope", "--out", "@OUT"}, 1, "No such file or directory"},
        {{"@MALFORMED", "--out", "@OUT"}, 1, "err_malformed.jsonl:"},
        {{"@TRACE", "--out", "@OUT", "--model", "mixtral-8x7b", "--block-size", "16,32"},
         1,
         "no memory left for the KV cache on H100-SXM"},
        {{"@TRACE", "--out", "/dev/null/x"},
         1,
         "cannot create directory '/dev/null/x': Not a directory"},
        {{"@TRACE", "--out", "@TRACE"}, 1, "tiny_shared.jsonl' is not a directory"},
        {{"@TRACE", "--out", "@OUT", "--emit-jobs", "/dev/null/jobs"},
         1,
         "cannot create '/dev/null/jobs': Not a directory"},
    };
    return cr_make_param_array(err_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(err_case *c, sweep, errors)
{
    char *tmp = make_temp_dir();
    char *out = path2(tmp, "out");
    char trace_nope[4200];
    snprintf(trace_nope, sizeof trace_nope, "%s.nope", tiny());
    const char *args[16] = {"sweep"};
    size_t n = 1;
    for (size_t i = 0; i < 12 && c->args[i][0]; i++) {
        const char *a = c->args[i];
        if (strcmp(a, "@TRACE") == 0)
            a = tiny();
        else if (strcmp(a, "@TRACE.nope") == 0)
            a = trace_nope;
        else if (strcmp(a, "@MALFORMED") == 0)
            a = src_path("tests/data/traces/err_malformed.jsonl");
        else if (strcmp(a, "@OUT") == 0)
            a = out;
        args[n++] = a;
    }
    args[n] = NULL;
    run_result r = run_kvsimv(args);
    assert_error_line(&r, c->status, "kvsim: error: ", c->msg);
    cr_assert(!file_exists(out), "an invalid sweep created its output directory");
    run_result_free(&r);
    free(out);
    rm_rf(tmp);
    free(tmp);
}

typedef struct merge_case {
    char summary[64]; /* written to DIR/cfg/summary.json; "": none */
    int n_dirs;       /* how many DIR arguments (the same one repeated) */
    int status;
    char msg[128];
} merge_case;

ParameterizedTestParameters(merge, errors)
{
    static merge_case cases[] = {
        {"", 0, 2, "kvsim merge needs at least one DIR"},
        {"", 1, 1, "no finished configuration (a directory with summary.json) in '"},
        {"", 2, 2, "kvsim merge writes DIR/sweep.csv only for one sweep directory; give --out"},
        {"{\"config\": ", 1, 1, "summary.json:1: malformed JSON at column"},
        {"{\"config\": {}}", 1, 1, "is not a kvsim run summary: no 'config.trace'"},
        {"[1, 2]", 1, 1, "is not a kvsim run summary: no 'config.trace'"},
    };
    return cr_make_param_array(merge_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(merge_case *c, merge, errors)
{
    char *tmp = make_temp_dir();
    if (c->summary[0]) {
        char *cfg = path2(tmp, "cfg");
        char mk[4200];
        snprintf(mk, sizeof mk, "mkdir -p '%s'", cfg);
        cr_assert_eq(system(mk), 0);
        free(write_file(cfg, "summary.json", c->summary));
        free(cfg);
    }
    const char *args[4] = {"merge", NULL, NULL, NULL};
    for (int i = 0; i < c->n_dirs; i++)
        args[1 + i] = tmp;
    run_result r = run_kvsimv(args);
    assert_error_line(&r, c->status, "kvsim: error: ", c->msg);
    char *csv = path2(tmp, "sweep.csv");
    cr_assert(!file_exists(csv), "a failed merge wrote sweep.csv");
    free(csv);
    run_result_free(&r);
    rm_rf(tmp);
    free(tmp);
}

Test(merge, missing_directory)
{
    run_result r = run_kvsim("merge", "/tmp/kvsim-test-does-not-exist", NULL);
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "kvsim: error: cannot open directory "
                            "'/tmp/kvsim-test-does-not-exist': No such file or directory"),
              "%s", r.err);
    run_result_free(&r);
}
