/* report and summary (DESIGN §8): the CSV rows are generated from their column tables
 * (exact text), and summary.json round-trips through its schema; a missing or ill-typed
 * field is an error naming it. */
#include <criterion/criterion.h>
#include <string.h>

#include "kvsim/cluster.h"
#include "kvsim/report.h"
#include "kvsim/summary.h"

Test(report, timeseries_header_and_row_follow_the_column_table)
{
    kv_buf b = {0};
    kv_report_timeseries_header(&b, false);
    cr_assert_str_eq(b.s, "time_s,step,running,waiting,physical_blocks,logical_blocks,"
                          "cached_free_blocks,free_blocks,usage,effective_tokens,scheduled_tokens,"
                          "preemptions,evictions,prefix_hits,prefix_queries,watermark_deferrals,"
                          "admitted,finished\n");
    kv_buf_reset(&b);
    kv_sample s = {.time_ns = 12000000500,
                   .dt_ns = 7,
                   .step = 3,
                   .running = 4,
                   .waiting = 5,
                   .physical_blocks = 6,
                   .logical_blocks = 7,
                   .cached_free_blocks = 8,
                   .free_blocks = 9,
                   .usage = 0.125,
                   .effective_tokens = 10,
                   .scheduled_tokens = 11,
                   .preemptions = 12,
                   .evictions = 13,
                   .prefix_hits = 14,
                   .prefix_queries = 15,
                   .watermark_deferrals = 16,
                   .admitted = 17,
                   .finished = 18};
    kv_report_timeseries_row(&b, &s, false);
    cr_assert_str_eq(b.s, "12.000000500,3,4,5,6,7,8,9,0.125000,10,11,12,13,14,15,16,17,18\n");
    kv_buf_reset(&b);
    s.replica = 2;
    kv_report_timeseries_header(&b, true);
    kv_report_timeseries_row(&b, &s, true);
    cr_assert_str_eq(b.s, "time_s,replica,step,running,waiting,physical_blocks,logical_blocks,"
                          "cached_free_blocks,free_blocks,usage,effective_tokens,scheduled_tokens,"
                          "preemptions,evictions,prefix_hits,prefix_queries,watermark_deferrals,"
                          "admitted,finished\n"
                          "12.000000500,2,3,4,5,6,7,8,9,0.125000,10,11,12,13,14,15,16,17,18\n",
                     "a cluster's rows name their replica after the time");
    kv_buf_release(&b);
}

Test(report, request_rows)
{
    kv_buf b = {0};
    kv_run_result res;
    memset(&res, 0, sizeof res);
    kv_report_requests_header(&b, &res);
    cr_assert_str_eq(b.s, "id,arrival_s,first_scheduled_s,first_token_s,finish_s,prompt_len,"
                          "output_len,hit_tokens,num_cached_tokens,preemptions,ttft_s,tpot_s,"
                          "e2e_s,status\n");
    kv_buf_reset(&b);
    kv_request_spec spec = {.arrival_ns = 500000000, .prompt_len = 64, .output_len = 3, .row = 7};
    kv_req r;
    kv_req_init(&r, &spec);
    r.status = KV_REQ_FINISHED;
    r.first_scheduled_ns = 600000000;
    r.first_token_ns = 1000000000;
    r.finish_ns = 2000000000;
    r.hit_tokens = 32;
    r.num_cached_tokens = 48;
    r.preemptions = 1;
    res.reqs = &r;
    res.n = 1;
    kv_report_request_row(&b, &res, 0);
    cr_assert_str_eq(b.s, "7,0.500000000,0.600000000,1.000000000,2.000000000,64,3,32,48,1,"
                          "0.500000000,0.500000000,1.500000000,finished\n");
    kv_buf_reset(&b);
    spec.id = "a,\"b\"";
    kv_req_init(&r, &spec);
    r.status = KV_REQ_REJECTED;
    kv_report_request_row(&b, &res, 0);
    cr_assert_str_eq(b.s, "\"a,\"\"b\"\"\",0.500000000,,,,64,3,0,0,0,,,,rejected\n",
                     "an id with a comma or quote is quoted; undefined times are empty");
    kv_buf_release(&b);
}

Test(report, cluster_request_rows_add_replica_and_predicted_hits)
{
    kv_buf b = {0};
    kv_request_spec spec[2] = {{.arrival_ns = 0, .prompt_len = 64, .output_len = 3, .row = 0},
                               {.arrival_ns = 1, .prompt_len = 64, .output_len = 3, .row = 1}};
    kv_req r[2];
    kv_req_init(&r[0], &spec[0]);
    kv_req_init(&r[1], &spec[1]);
    r[0].status = KV_REQ_REJECTED;
    r[0].hit_tokens = 16;
    uint32_t replica_of[2] = {2, KV_CLUSTER_NOT_ROUTED}, predicted[2] = {48, 0};
    kv_cluster_result cl = {.replicas = 3, .replica_of = replica_of, .predicted_tokens = predicted};
    kv_run_result res = {.reqs = r, .n = 2, .cluster = &cl};
    kv_report_requests_header(&b, &res);
    kv_report_request_row(&b, &res, 0);
    kv_report_request_row(&b, &res, 1);
    cr_assert_str_eq(b.s,
                     "id,replica,arrival_s,first_scheduled_s,first_token_s,finish_s,prompt_len,"
                     "output_len,predicted_hit_tokens,hit_tokens,num_cached_tokens,preemptions,"
                     "ttft_s,tpot_s,e2e_s,status\n"
                     "0,2,0.000000000,,,,64,3,48,16,0,0,,,,rejected\n"
                     "1,,0.000000001,,,,64,3,0,0,0,0,,,,pending\n",
                     "a request never routed has no replica");
    kv_buf_release(&b);
}

static void fill(kv_summary *s)
{
    memset(s, 0, sizeof *s);
    s->config.trace = strdup("t.jsonl");
    s->config.format = strdup("jsonl");
    s->config.model = strdup("m");
    s->config.gpu = strdup("g");
    s->config.kv_dtype = strdup("bf16");
    s->config.num_blocks_from = strdup("gpu");
    s->config.free_order = strdup("split");
    s->config.preempt = strdup("fcfs");
    s->config.watermark_rule = strdup("vllm");
    s->config.policy = strdup("priority");
    s->config.async_scheduling = true;
    s->config.time_model = strdup("fixed:0.010000000");
    s->config.notes = calloc(1, sizeof *s->config.notes);
    s->config.notes[0] = strdup("a note");
    s->config.n_notes = 1;
    s->config.watermark = 0.01;
    s->config.rate = 0;  /* → null */
    s->config.limit = 0; /* → null */
    s->config.block_size = 16;
    s->requests.total = 5;
    s->blocks.mean_physical = 1.5;
    s->latency_s.ttft.p99 = 0.25;
    s->livelock_guard_fired = true;
}

Test(summary, json_round_trip_through_the_schema)
{
    kv_summary a, b;
    kv_diag d;
    fill(&a);
    json_t *j = kv_summary_to_json(&a);
    cr_assert(json_is_null(json_object_get(json_object_get(j, "config"), "rate")));
    cr_assert(json_is_null(json_object_get(json_object_get(j, "config"), "limit")));
    cr_assert_eq(kv_summary_from_json(j, "x", &b, &d), 0, "%s", d.msg);
    json_t *k = kv_summary_to_json(&b);
    char *sa = json_dumps(j, KV_JSON_FLAGS), *sb = json_dumps(k, KV_JSON_FLAGS);
    cr_assert_str_eq(sa, sb);
    cr_assert_str_eq(b.config.notes[0], "a note");
    cr_assert_eq(b.latency_s.ttft.p99, 0.25);
    free(sa);
    free(sb);
    json_decref(j);
    json_decref(k);
    kv_summary_release(&a);
    kv_summary_release(&b);
}

Test(summary, the_first_key_order_is_summary_json_order)
{
    size_t n;
    const kv_field *f = kv_summary_fields(&n);
    cr_assert_str_eq(f[0].path, "kvsim_version");
    cr_assert_str_eq(f[1].path, "command");
    cr_assert_str_eq(f[2].path, "config.trace");
    size_t top = 0;
    while (top < n && !f[top].in_cluster)
        top++;
    cr_assert_str_eq(f[top - 1].path, "livelock_guard_fired");
    cr_assert_str_eq(f[top].path, "cluster.replicas", "the cluster block comes last");
    cr_assert_str_eq(f[n - 1].path, "cluster.per_replica");
    for (size_t i = top; i < n; i++)
        cr_assert(f[i].in_cluster);
    cr_assert_not_null(kv_summary_field("latency_s.tpot.p95"));
    cr_assert_null(kv_summary_field("latency_s.tpot.p42"));
}

Test(summary, missing_or_ill_typed_fields_are_named)
{
    kv_summary a, b;
    kv_diag d;
    fill(&a);
    json_t *j = kv_summary_to_json(&a);
    json_object_del(json_object_get(j, "blocks"), "peak_logical");
    cr_assert_eq(kv_summary_from_json(j, "s.json", &b, &d), -KV_EPARSE);
    cr_assert_str_eq(d.msg, "'s.json' is not a kvsim run summary: no 'blocks.peak_logical'");
    json_object_set_new(json_object_get(j, "blocks"), "peak_logical", json_string("9"));
    cr_assert_eq(kv_summary_from_json(j, "s.json", &b, &d), -KV_EPARSE, "a string is no count");
    cr_assert_str_eq(d.msg, "'s.json' is not a kvsim run summary: no 'blocks.peak_logical'");
    json_decref(j);
    kv_summary_release(&a);
}

/* A summary.json of kvsim 0.1.0 has no stamp, per-GPU, cost or extra config echo: it
 * still reads (merge and plot take old run directories), those fields 0 / NULL. */
Test(summary, a_0_1_summary_without_the_later_fields_reads)
{
    kv_summary a, b;
    kv_diag d;
    fill(&a);
    json_t *j = kv_summary_to_json(&a);
    json_object_del(j, "kvsim_version");
    json_object_del(j, "command");
    const char *config[] = {"gpu_util", "reserve_bytes", "weight_bytes", "layers", "kv_heads",
                            "head_dim", "gpu_cost_per_hour"};
    for (size_t i = 0; i < sizeof config / sizeof config[0]; i++)
        cr_assert_eq(json_object_del(json_object_get(j, "config"), config[i]), 0, "%s", config[i]);
    json_object_del(json_object_get(j, "throughput"), "output_tok_per_s_per_gpu");
    json_object_del(json_object_get(j, "throughput"), "cost_per_million_output_tokens");
    cr_assert_eq(kv_summary_from_json(j, "old.json", &b, &d), 0, "%s", d.msg);
    cr_assert_null(b.kvsim_version);
    cr_assert_null(b.command);
    cr_assert_eq(b.config.layers, 0);
    cr_assert_eq(b.throughput.output_tok_per_s_per_gpu, 0);
    cr_assert_eq(b.throughput.output_tok_per_s, a.throughput.output_tok_per_s);
    kv_summary_release(&b);
    /* Other fields stay required. */
    json_object_del(json_object_get(j, "throughput"), "requests_per_s");
    cr_assert_eq(kv_summary_from_json(j, "old.json", &b, &d), -KV_EPARSE);
    cr_assert_str_eq(d.msg, "'old.json' is not a kvsim run summary: no 'throughput.requests_per_s'");
    json_decref(j);
    kv_summary_release(&a);
}

Test(summary, from_run_maps_every_counter)
{
    kv_run_result r;
    memset(&r, 0, sizeof r);
    kv_req reqs[10];
    memset(reqs, 0, sizeof reqs); /* none finished: latencies are all zero */
    r.reqs = reqs;
    r.n = 10;
    r.rejected = 2;
    r.unfinished = 1;
    r.sim_time_ns = 4000000000;
    r.stats.steps = 77;
    r.stats.evictions = 5;
    r.stats.usable_blocks = 99;
    r.stats.watermark_blocks = 3;
    r.stats.prefix =
        (kv_prefix_stats){.queries = 100, .hits = 40, .preempted_queries = 10, .preempted_hits = 5};
    r.stats.sched.finished = 7;
    r.stats.sched.output_tokens = 800;
    r.stats.sched.preemptions = 4;
    r.stats.sched.deferrals = 6;
    r.stats.sched.deferral_steps = 6;
    r.stats.sched.deferred_requests = 2;
    r.stats.sched.rejected[KV_REJECT_CAPACITY] = 1;
    r.stats.sched.rejected[KV_REJECT_BATCH] = 1;
    kv_summary s;
    memset(&s, 0, sizeof s);
    s.config.watermark = 0.05;
    kv_summary_from_run(&s, &r);
    cr_assert_eq(s.requests.total, 10);
    cr_assert_eq(s.requests.finished, 7);
    cr_assert_eq(s.requests.rejected, 2);
    cr_assert_eq(s.requests.unfinished, 1);
    cr_assert_eq(s.rejections.exceeds_capacity, 1);
    cr_assert_eq(s.rejections.exceeds_watermark, 0);
    cr_assert_eq(s.rejections.exceeds_batch, 1);
    cr_assert_eq(s.preemptions, 4);
    cr_assert_eq(s.evictions, 5);
    cr_assert_eq(s.prefix.queries, 100, "first admissions only");
    cr_assert_eq(s.prefix.hits, 40, "first admissions only");
    cr_assert_float_eq(s.prefix.hit_rate, 0.4, 1e-12);
    cr_assert_eq(s.prefix.preempted_queries, 10);
    cr_assert_eq(s.prefix.preempted_hits, 5);
    cr_assert_eq(s.blocks.num_blocks, 100);
    cr_assert_eq(s.blocks.usable, 99);
    cr_assert_eq(s.watermark.watermark, 0.05, "the config's watermark");
    cr_assert_eq(s.watermark.blocks, 3);
    cr_assert_eq(s.watermark.deferrals, 6);
    cr_assert_eq(s.watermark.deferred_requests, 2);
    cr_assert_float_eq(s.throughput.output_tok_per_s, 200, 1e-9);
    cr_assert_float_eq(s.throughput.requests_per_s, 1.75, 1e-12);
    cr_assert_eq(s.steps, 77);
    cr_assert_eq(s.sim_time_s, 4.0);
    cr_assert_not(s.livelock_guard_fired);
    r.stop = -KV_ELIVELOCK;
    kv_summary_from_run(&s, &r);
    cr_assert(s.livelock_guard_fired, "a run the guard stopped says so");
    kv_summary_release(&s);
}

/* kv_buf_f6 is "%.6f" exactly: pool usages 1 − f/u for every f of many pool sizes, random
 * doubles, and the rounding ties of 6-decimal halves. */
Test(report, f6_f9_equal_printf)
{
    char want[400];
    kv_buf b = {0};
    uint64_t x = 88172645463325252ull;
    for (long i = 0; i < 400000; i++) {
        double v;
        if (i < 100000) {
            uint32_t u = 1 + (uint32_t)(i % 997) * 13, f = (uint32_t)(i / 997) % (u + 1);
            v = 1.0 - (double)f / (double)u;
        } else if (i < 200000) {
            v = (double)(i - 100000) / 1e6 + 5e-7; /* near the halves */
        } else {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint64_t bits = x >> 2; /* any finite positive double below 2 */
            memcpy(&v, &bits, sizeof v);
            if (i % 3 == 0)
                v = (double)(x % 100000000) / 1e7;
        }
        kv_buf_reset(&b);
        kv_buf_f6(&b, v);
        snprintf(want, sizeof want, "%.6f", v);
        cr_assert_str_eq(b.s, want, "%.17g", v);
        double w = v * 1000 + (double)(i % 1000) / 1e9; /* latencies: ns / 1e9 */
        kv_buf_reset(&b);
        kv_buf_f9(&b, w);
        snprintf(want, sizeof want, "%.9f", w);
        cr_assert_str_eq(b.s, want, "%.17g", w);
    }
    double odd[] = {0.0, 1.0, 0.5, 0.0000005, 0.0000015, 0.0000025, 1e-300, 4.9e-324, 9e15, 1e300};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        kv_buf_reset(&b);
        kv_buf_f6(&b, odd[i]);
        snprintf(want, sizeof want, "%.6f", odd[i]);
        cr_assert_str_eq(b.s, want, "%.17g", odd[i]);
    }
    kv_buf_release(&b);
}

/* kv_buf_u64 is "%llu" exactly and kv_buf_ns "%lld.%09lld": every value next to a power of
 * ten or of two (where the digit count and the 32-bit path change), random values, and
 * appends after existing text. */
Test(report, u64_ns_equal_printf)
{
    char want[64];
    kv_buf b = {0};
    uint64_t vals[4096];
    size_t n = 0;
    vals[n++] = 0;
    vals[n++] = UINT64_MAX;
    for (uint64_t p = 1; p <= UINT64_MAX / 10; p *= 10)
        for (int d = -2; d <= 2; d++)
            vals[n++] = p * 10 + (uint64_t)(int64_t)d;
    for (int k = 1; k < 64; k++)
        for (int d = -1; d <= 1; d++)
            vals[n++] = (1ull << k) + (uint64_t)(int64_t)d;
    uint64_t x = 88172645463325252ull;
    while (n < sizeof vals / sizeof vals[0]) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        vals[n++] = x >> (x % 64);
    }
    for (size_t i = 0; i < n; i++) {
        kv_buf_reset(&b);
        kv_buf_puts(&b, "x,");
        kv_buf_u64(&b, vals[i]);
        snprintf(want, sizeof want, "x,%llu", (unsigned long long)vals[i]);
        cr_assert_str_eq(b.s, want);
        cr_assert_eq(b.len, strlen(want));
        int64_t ns = (int64_t)(vals[i] >> 1);
        kv_buf_reset(&b);
        kv_buf_ns(&b, ns);
        snprintf(want, sizeof want, "%lld.%09lld", (long long)(ns / 1000000000),
                 (long long)(ns % 1000000000));
        cr_assert_str_eq(b.s, want);
    }
    kv_buf_release(&b);
}
