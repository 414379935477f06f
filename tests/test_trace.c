/* Tests for the trace readers (DESIGN §7, include/kvsim/trace.h).
 *
 * Fixtures live in tests/data/traces/; suites that use them chdir there first, so
 * messages read "err_missing.jsonl:2: …" exactly as a user passing a relative path would
 * see them.  Variants too small to deserve a file are written to a temp dir the same way.
 * Expected values were computed independently (Python, exact integers for the Azure
 * dates and the real-trace sums), never copied from the reader's output.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvsim/rng.h"
#include "kvsim/trace.h"
#include "support.h"

/* ---- helpers ----------------------------------------------------------------------- */

static void enter_data_dir(void)
{
    cr_assert_eq(chdir(src_path("tests/data/traces")), 0, "cannot chdir to fixtures");
}

/* What every loaded trace must satisfy (trace.c's invariants). */
static void check_trace(const kv_trace *t)
{
    cr_assert_geq(t->n, 1);
    bool *seen = calloc(t->n, 1);
    for (size_t i = 0; i < t->n; i++) {
        const kv_request_spec *q = &t->reqs[i];
        cr_assert_lt(q->row, t->n);
        cr_assert(!seen[q->row], "row %u twice", q->row);
        seen[q->row] = true;
        cr_assert_geq(q->arrival_ns, 0);
        cr_assert(q->prompt_len >= 1 && q->prompt_len <= KV_TRACE_MAX_LEN);
        cr_assert(q->output_len >= 1 && q->output_len <= KV_TRACE_MAX_LEN);
        cr_assert_geq(q->line, 1);
        if (i > 0) {
            const kv_request_spec *p = &t->reqs[i - 1];
            cr_assert(p->arrival_ns < q->arrival_ns ||
                          (p->arrival_ns == q->arrival_ns && p->row < q->row),
                      "not ordered at %zu", i);
        }
        cr_assert_eq(q->content == KV_CONTENT_TOKENS, q->tokens != NULL);
        cr_assert_eq(q->content == KV_CONTENT_HASH_IDS, q->hash_ids != NULL);
        if (q->content == KV_CONTENT_HASH_IDS)
            cr_assert_eq(q->n_hash_ids,
                         (q->prompt_len + t->trace_block_size - 1) / t->trace_block_size);
        cr_assert(!q->id || *q->id);
        cr_assert(!q->adapter || *q->adapter);
        cr_assert(!q->salt || *q->salt);
    }
    free(seen);
}

static kv_trace *load_ok(const char *path, const kv_trace_options *o)
{
    kv_trace *t = NULL;
    kv_diag d = {{0}};
    int rc = kv_trace_load(&t, path, o, &d);
    cr_assert_eq(rc, 0, "%s: rc %d: %s", path, rc, d.msg);
    cr_assert_not_null(t);
    check_trace(t);
    return t;
}

static void expect_err(const char *path, const kv_trace_options *o, int want_rc,
                       const char *want_msg)
{
    kv_trace *t = (kv_trace *)&t; /* must be reset to NULL */
    kv_diag d = {{0}};
    int rc = kv_trace_load(&t, path, o, &d);
    cr_assert_eq(rc, want_rc, "%s: rc %d (%s), want %d; diag: %s", path, rc, kv_strerror(rc),
                 want_rc, d.msg);
    cr_assert_null(t, "%s: *out not NULL on error", path);
    cr_assert_str_eq(d.msg, want_msg, "%s:\n  got  %s\n  want %s", path, d.msg, want_msg);
}

/* Load text written to a fresh temp dir as `name` (cwd = that dir, so messages show the
 * bare name).  Returns the trace (or NULL) and fills rc/diag. */
static kv_trace *load_text(const char *name, const char *text, const kv_trace_options *o, int *rc,
                           kv_diag *d)
{
    char *dir = make_temp_dir();
    free(write_file(dir, name, text));
    cr_assert_eq(chdir(dir), 0);
    kv_trace *t = NULL;
    *rc = kv_trace_load(&t, name, o, d);
    cr_assert_eq(chdir("/"), 0);
    rm_rf(dir);
    free(dir);
    return t;
}

static void expect_text_err(const char *name, const char *text, const kv_trace_options *o,
                            int want_rc, const char *want_msg)
{
    kv_diag d = {{0}};
    int rc;
    kv_trace *t = load_text(name, text, o, &rc, &d);
    cr_assert_null(t, "%s: loaded, want '%s'", text, want_msg);
    cr_assert_eq(rc, want_rc, "%s: rc %d, want %d; diag: %s", text, rc, want_rc, d.msg);
    cr_assert_str_eq(d.msg, want_msg, "input: %s\n  got  %s\n  want %s", text, d.msg, want_msg);
}

static kv_trace *text_ok(const char *name, const char *text, const kv_trace_options *o)
{
    kv_diag d = {{0}};
    int rc;
    kv_trace *t = load_text(name, text, o, &rc, &d);
    cr_assert_eq(rc, 0, "%s: %s", text, d.msg);
    check_trace(t);
    return t;
}

static const kv_request_spec *by_row(const kv_trace *t, uint32_t row)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->reqs[i].row == row)
            return &t->reqs[i];
    cr_assert_fail("row %u not found", row);
    return NULL;
}

/* ---- format names ------------------------------------------------------------------ */

Test(trace_format, names_round_trip)
{
    const char *names[] = {"auto", "jsonl", "csv", "mooncake", "azure", "lengths"};
    const kv_trace_format fmts[] = {KV_TRACE_AUTO,     KV_TRACE_KVSIM_JSONL, KV_TRACE_KVSIM_CSV,
                                    KV_TRACE_MOONCAKE, KV_TRACE_AZURE,       KV_TRACE_LENGTHS};
    for (size_t i = 0; i < 6; i++) {
        kv_trace_format f = (kv_trace_format)99;
        cr_assert_eq(kv_trace_format_parse(names[i], &f), 0);
        cr_assert_eq(f, fmts[i]);
        cr_assert_str_eq(kv_trace_format_name(fmts[i]), names[i]);
    }
}

Test(trace_format, unknown_name)
{
    kv_trace_format f = KV_TRACE_AZURE;
    cr_assert_eq(kv_trace_format_parse("xml", &f), -KV_EINVAL);
    cr_assert_eq(kv_trace_format_parse("JSONL", &f), -KV_EINVAL);
    kv_diag d = {{0}};
    cr_assert_eq(kv_trace_format_parse_diag("xml", &f, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "unknown trace format 'xml' (expected one of: auto, jsonl, csv, "
                            "mooncake, azure, lengths)");
    cr_assert_eq(f, KV_TRACE_AZURE, "output untouched on error");
    cr_assert_eq(kv_trace_format_parse_diag("lengths", &f, &d), 0);
    cr_assert_eq(f, KV_TRACE_LENGTHS);
}

/* Two option sets read the same trace exactly when every field agrees (cmd_run reuses a
 * preloaded trace on that). */
Test(trace_format, options_equal_compares_every_field)
{
    kv_trace_options a = {KV_TRACE_KVSIM_JSONL, 16, 10, 0.5, 2.0, 7, 4096}, v[7];
    for (int f = 0; f < 7; f++)
        v[f] = a;
    v[0].format = KV_TRACE_AUTO;
    v[1].trace_block_size = 32;
    v[2].limit = 11;
    v[3].time_scale = 1.0;
    v[4].rate = 3.0;
    v[5].seed = 8;
    v[6].max_line = 8192;
    kv_trace_options same = a;
    cr_assert(kv_trace_options_equal(&a, &same));
    for (int f = 0; f < 7; f++)
        cr_assert_not(kv_trace_options_equal(&a, &v[f]), "field %d differs", f);
}

Test(trace_format, free_null)
{
    kv_trace_free(NULL);
}

/* ---- kvsim JSONL and Mooncake ------------------------------------------------------ */

TestSuite(trace_json, .init = enter_data_dir);

Test(trace_json, kvsim_all_fields)
{
    kv_trace *t = load_ok("kvsim.jsonl", NULL);
    cr_assert_eq(t->format, KV_TRACE_KVSIM_JSONL);
    cr_assert_eq(t->trace_block_size, 512);
    cr_assert_str_eq(t->path, "kvsim.jsonl");
    cr_assert_eq(t->n, 5);
    /* arrivals 2.5, 0.3, 2.5, 1, 1.0000000005 → by arrival, tie 2.5 in file order */
    const uint32_t order[] = {1, 3, 4, 0, 2};
    const int64_t arr[] = {300000000, 1000000000, 1000000001, 2500000000, 2500000000};
    const uint32_t lines[] = {3, 6, 7, 1, 5};
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(t->reqs[i].row, order[i], "position %zu", i);
        cr_assert_eq(t->reqs[i].arrival_ns, arr[i], "position %zu", i);
        cr_assert_eq(t->reqs[i].line, lines[i], "position %zu", i);
    }

    const kv_request_spec *q = by_row(t, 0);
    cr_assert_eq(q->prompt_len, 4);
    cr_assert_eq(q->output_len, 3);
    cr_assert_str_eq(q->id, "b");
    cr_assert_str_eq(q->adapter, "lora-a");
    cr_assert_null(q->salt, "empty salt means none");
    cr_assert_eq(q->priority, -3);
    cr_assert_eq(q->content, KV_CONTENT_TOKENS);
    const uint32_t toks0[] = {7, 8, 9, 4294967295u};
    cr_assert_arr_eq(q->tokens, toks0, sizeof toks0);

    q = by_row(t, 1);
    cr_assert_str_eq(q->id, "17", "an integer id becomes its decimal text");
    cr_assert_eq(q->content, KV_CONTENT_HASH_IDS);
    cr_assert_eq(q->n_hash_ids, 2);
    cr_assert_eq(q->hash_ids[0], 5);
    cr_assert_eq(q->hash_ids[1], 6);
    cr_assert_null(q->adapter);
    cr_assert_eq(q->priority, 0);

    q = by_row(t, 2); /* tokens and hash_ids: tokens win */
    cr_assert_eq(q->content, KV_CONTENT_TOKENS);
    cr_assert_null(q->hash_ids);
    cr_assert_eq(q->n_hash_ids, 0);
    const uint32_t toks2[] = {0, 1, 2};
    cr_assert_arr_eq(q->tokens, toks2, sizeof toks2);
    cr_assert_eq(q->output_len, KV_TRACE_MAX_LEN, "the maximum length is allowed");
    cr_assert_str_eq(q->salt, "tenant");
    cr_assert_null(q->adapter);
    cr_assert_null(q->id, "empty id means none");

    q = by_row(t, 3); /* null optional fields count as absent */
    cr_assert_eq(q->prompt_len, KV_TRACE_MAX_LEN);
    cr_assert_null(q->id);
    cr_assert_eq(q->content, KV_CONTENT_NONE);
    cr_assert_null(q->tokens);
    cr_assert_eq(q->priority, 2147483647);

    q = by_row(t, 4);
    cr_assert_eq(q->prompt_len, 7);
    cr_assert_eq(q->content, KV_CONTENT_NONE);
    kv_trace_free(t);
}

Test(trace_json, forced_format_reads_the_same)
{
    kv_trace_options o = {.format = KV_TRACE_KVSIM_JSONL};
    kv_trace *a = load_ok("kvsim.jsonl", NULL), *b = load_ok("kvsim.jsonl", &o);
    cr_assert_eq(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        cr_assert_eq(a->reqs[i].row, b->reqs[i].row);
        cr_assert_eq(a->reqs[i].arrival_ns, b->reqs[i].arrival_ns);
    }
    kv_trace_free(a);
    kv_trace_free(b);
}

Test(trace_json, mooncake)
{
    kv_trace *t = load_ok("mooncake.jsonl", NULL);
    cr_assert_eq(t->format, KV_TRACE_MOONCAKE);
    cr_assert_eq(t->n, 5);
    /* timestamps 3000, 0, 3000, 1.5, 9223372036854 ms */
    const uint32_t order[] = {1, 3, 0, 2, 4};
    const int64_t arr[] = {0, 1500000, 3000000000, 3000000000,
                           INT64_C(9223372036854000000)}; /* exact: no double on the way */
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(t->reqs[i].row, order[i], "position %zu", i);
        cr_assert_eq(t->reqs[i].arrival_ns, arr[i], "position %zu", i);
        cr_assert_eq(t->reqs[i].content, KV_CONTENT_HASH_IDS);
        cr_assert_null(t->reqs[i].id);
    }
    const kv_request_spec *q = by_row(t, 0);
    cr_assert_eq(q->prompt_len, 1025);
    cr_assert_eq(q->output_len, 7);
    cr_assert_eq(q->n_hash_ids, 3);
    cr_assert_eq(q->hash_ids[2], 2);
    q = by_row(t, 3);
    cr_assert_eq(q->line, 5, "the blank line 4 still counts as a physical line");
    cr_assert_eq(q->n_hash_ids, 2);
    cr_assert_eq(by_row(t, 4)->hash_ids[0], UINT64_C(9223372036854775807));
    kv_trace_free(t);
}

Test(trace_json, trace_block_size_sets_hash_id_count)
{
    kv_trace_options o = {.trace_block_size = 256};
    expect_err("mooncake.jsonl", &o, -KV_EPARSE,
               "mooncake.jsonl:1: 'hash_ids' has 3 ids, expected 5 = ceil(input_length 1025 / "
               "trace block size 256)");
    o.trace_block_size = 1024;
    expect_err("mooncake.jsonl", &o, -KV_EPARSE,
               "mooncake.jsonl:1: 'hash_ids' has 3 ids, expected 2 = ceil(input_length 1025 / "
               "trace block size 1024)");
    o.trace_block_size = 16;
    kv_trace *t = text_ok("tb16.jsonl",
                          "{\"arrival\": 0, \"prompt_len\": 33, \"output_len\": 1, "
                          "\"hash_ids\": [1, 2, 3]}\n",
                          &o);
    cr_assert_eq(t->trace_block_size, 16);
    cr_assert_eq(t->reqs[0].n_hash_ids, 3);
    kv_trace_free(t);
}

Test(trace_json, forced_format_mismatch)
{
    kv_trace_options o = {.format = KV_TRACE_MOONCAKE};
    expect_err("kvsim.jsonl", &o, -KV_EPARSE, "kvsim.jsonl:1: missing field 'timestamp'");
    o.format = KV_TRACE_KVSIM_JSONL;
    expect_err("mooncake.jsonl", &o, -KV_EPARSE, "mooncake.jsonl:1: missing field 'arrival'");
    expect_err("kvsim.csv", &o, -KV_EPARSE,
               "kvsim.csv:1: malformed JSON at column 8: invalid token near 'priority'");
}

/* ---- CSV formats ------------------------------------------------------------------- */

TestSuite(trace_csv, .init = enter_data_dir);

Test(trace_csv, kvsim_csv_rfc4180)
{
    kv_trace *t = load_ok("kvsim.csv", NULL);
    cr_assert_eq(t->format, KV_TRACE_KVSIM_CSV);
    cr_assert_eq(t->n, 4);
    const uint32_t order[] = {3, 1, 0, 2};
    const int64_t arr[] = {1000000, 250000000, 500000000, 500000000};
    const uint32_t lines[] = {7, 4, 2, 5};
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(t->reqs[i].row, order[i], "position %zu", i);
        cr_assert_eq(t->reqs[i].arrival_ns, arr[i], "position %zu", i);
        cr_assert_eq(t->reqs[i].line, lines[i], "position %zu", i);
        cr_assert_eq(t->reqs[i].content, KV_CONTENT_NONE);
    }
    const kv_request_spec *q = by_row(t, 0);
    cr_assert_eq(q->prompt_len, 10);
    cr_assert_eq(q->output_len, 3);
    cr_assert_str_eq(q->id, "a");
    cr_assert_null(q->adapter);
    cr_assert_null(q->salt);
    cr_assert_eq(q->priority, 0, "an empty priority is 0");
    q = by_row(t, 1);
    cr_assert_str_eq(q->id, "quoted \"id\"");
    cr_assert_str_eq(q->adapter, "lora");
    cr_assert_str_eq(q->salt, "salt,1");
    cr_assert_eq(q->priority, -7);
    q = by_row(t, 2); /* its quoted note spans lines 5-6 */
    cr_assert_null(q->id);
    cr_assert_eq(q->prompt_len, 30);
    cr_assert_eq(q->priority, 2);
    q = by_row(t, 3);
    cr_assert_null(q->id, "\"\" is empty: none");
    cr_assert_str_eq(q->adapter, "lora-b", "spaces around a field are trimmed");
    cr_assert_str_eq(q->salt, "s");
    cr_assert_eq(q->priority, 3);
    kv_trace_free(t);
}

Test(trace_csv, azure_exact_and_earliest_is_zero)
{
    kv_trace *t = load_ok("azure.csv", NULL);
    cr_assert_eq(t->format, KV_TRACE_AZURE);
    cr_assert_eq(t->n, 6);
    /* earliest TIMESTAMP is row 1 (line 3), not the first row; values from Python with
     * exact integer arithmetic */
    const int64_t by_row_ns[] = {52000000,        0, 100, 3908576020039900, 3908576143496789,
                                 9049376020040000};
    const uint32_t prompt[] = {3180, 4808, 100, 5, 6, 7};
    const uint32_t output[] = {8, 10, 1, 5, 6, 7};
    const uint32_t lines[] = {2, 3, 4, 5, 7, 8};
    for (uint32_t r = 0; r < 6; r++) {
        const kv_request_spec *q = by_row(t, r);
        cr_assert_eq(q->arrival_ns, by_row_ns[r], "row %u: %lld", r, (long long)q->arrival_ns);
        cr_assert_eq(q->prompt_len, prompt[r]);
        cr_assert_eq(q->output_len, output[r]);
        cr_assert_eq(q->line, lines[r]);
        cr_assert_eq(q->content, KV_CONTENT_NONE);
    }
    cr_assert_eq(t->reqs[0].row, 1);
    cr_assert_eq(t->reqs[1].row, 2);
    cr_assert_eq(t->reqs[2].row, 0);
    kv_trace_free(t);
}

Test(trace_csv, azure_limit_uses_earliest_row_read)
{
    kv_trace_options o = {.limit = 1};
    kv_trace *t = load_ok("azure.csv", &o);
    cr_assert_eq(t->n, 1);
    cr_assert_eq(t->reqs[0].arrival_ns, 0);
    kv_trace_free(t);
}

/* Arrivals t_i = Σ_{k≤i} Exp(rate), one kv_rng draw per row in file order. */
static void expect_poisson(const kv_trace *t, double rate, uint64_t seed)
{
    kv_rng rng;
    kv_rng_seed(&rng, seed);
    double s = 0;
    for (uint32_t r = 0; r < t->n; r++) {
        s += kv_rng_exponential(&rng, rate);
        cr_assert_eq(by_row(t, r)->arrival_ns, llround(s * 1e9), "row %u", r);
    }
}

Test(trace_csv, lengths_poisson_arrivals)
{
    kv_trace_options o = {.rate = 1.0, .seed = 0};
    kv_trace *t = load_ok("lengths.csv", &o);
    cr_assert_eq(t->format, KV_TRACE_LENGTHS);
    cr_assert_eq(t->n, 3);
    const uint32_t prompt[] = {74, 290, 1}, output[] = {918, 905, 2};
    for (uint32_t r = 0; r < 3; r++) {
        cr_assert_eq(t->reqs[r].row, r, "Poisson arrivals keep file order");
        cr_assert_eq(t->reqs[r].prompt_len, prompt[r]);
        cr_assert_eq(t->reqs[r].output_len, output[r]);
    }
    cr_assert_gt(t->reqs[0].arrival_ns, 0, "the first request arrives one gap in");
    expect_poisson(t, 1.0, 0);
    /* pinned: a change in the draw order or the rng would change every length-stats run */
    cr_assert_eq(t->reqs[0].arrival_ns, 508722837);
    cr_assert_eq(t->reqs[2].arrival_ns, 3072209437);
    kv_trace_free(t);
}

Test(trace_csv, lengths_seed_determinism)
{
    kv_trace_options o = {.rate = 4.0, .seed = 42};
    const char *path = src_path("traces/real/sharegpt_8k_filtered_stats_llama2_tokenizer.csv");
    kv_trace *a = load_ok(path, &o), *b = load_ok(path, &o);
    o.seed = 43;
    kv_trace *c = load_ok(path, &o);
    o.seed = 42;
    o.limit = 100;
    kv_trace *d = load_ok(path, &o);
    size_t differ = 0;
    for (size_t i = 0; i < a->n; i++) {
        cr_assert_eq(a->reqs[i].arrival_ns, b->reqs[i].arrival_ns);
        differ += a->reqs[i].arrival_ns != c->reqs[i].arrival_ns;
    }
    cr_assert_gt(differ, a->n - 10, "another seed gives other arrivals");
    for (size_t i = 0; i < d->n; i++)
        cr_assert_eq(d->reqs[i].arrival_ns, a->reqs[i].arrival_ns, "limit keeps a prefix");
    /* 30,731 gaps of mean 1/4 s: the mean is within 2 % (about 3.5 standard errors) */
    double mean = (double)a->reqs[a->n - 1].arrival_ns / 1e9 / (double)a->n;
    cr_assert(fabs(mean - 0.25) < 0.005, "mean gap %g", mean);
    expect_poisson(a, 4.0, 42);
    kv_trace_free(a);
    kv_trace_free(b);
    kv_trace_free(c);
    kv_trace_free(d);
}

Test(trace_csv, rate_is_ignored_where_times_exist)
{
    kv_trace_options o = {.rate = -5};
    kv_trace *t = load_ok("azure.csv", &o);
    cr_assert_eq(t->reqs[0].arrival_ns, 0);
    kv_trace_free(t);
}

Test(trace_csv, forced_format_mismatch)
{
    kv_trace_options o = {.format = KV_TRACE_AZURE};
    expect_err("kvsim.csv", &o, -KV_EPARSE,
               "kvsim.csv:1: missing column 'TIMESTAMP' in the CSV header");
    o.format = KV_TRACE_LENGTHS;
    o.rate = 1;
    expect_err("azure.csv", &o, -KV_EPARSE,
               "azure.csv:1: missing column 'num_prefill_tokens' in the CSV header");
    o.format = KV_TRACE_KVSIM_CSV;
    /* a JSON line read as CSV: field 2 is "input_length" followed by ": 1025" */
    expect_err("mooncake.jsonl", &o, -KV_EPARSE,
               "mooncake.jsonl:1: malformed quoted field in column 2: text after the closing "
               "quote");
}

/* ---- rows, limit, ordering ----------------------------------------------------------- */

TestSuite(trace_rows, .init = enter_data_dir);

Test(trace_rows, limit_stops_reading)
{
    /* rows on lines 1, 3, 4; line 6 is not JSON */
    kv_trace_options o = {.limit = 3};
    kv_trace *t = load_ok("after_limit.jsonl", &o);
    cr_assert_eq(t->n, 3);
    const uint32_t lines[] = {1, 3, 4};
    for (uint32_t r = 0; r < 3; r++) {
        cr_assert_eq(t->reqs[r].row, r);
        cr_assert_eq(t->reqs[r].line, lines[r]);
        cr_assert_eq(t->reqs[r].prompt_len, r + 1);
    }
    kv_trace_free(t);
    o.limit = 1;
    t = load_ok("after_limit.jsonl", &o);
    cr_assert_eq(t->n, 1);
    kv_trace_free(t);
    const char *msg = "after_limit.jsonl:6: malformed JSON at column 4: invalid token near 'this'";
    o.limit = 4;
    expect_err("after_limit.jsonl", &o, -KV_EPARSE, msg);
    expect_err("after_limit.jsonl", NULL, -KV_EPARSE, msg);
}

Test(trace_rows, limit_in_csv_skips_header_and_blanks)
{
    kv_trace_options o = {.limit = 2};
    kv_trace *t = load_ok("kvsim.csv", &o);
    cr_assert_eq(t->n, 2);
    cr_assert_eq(t->reqs[0].row, 1);
    cr_assert_eq(t->reqs[0].line, 4);
    cr_assert_eq(t->reqs[1].row, 0);
    cr_assert_eq(t->reqs[1].line, 2);
    kv_trace_free(t);
    o.limit = 1000;
    t = load_ok("kvsim.csv", &o);
    cr_assert_eq(t->n, 4);
    kv_trace_free(t);
}

Test(trace_rows, ties_keep_file_order)
{
    /* arrivals 1, 0.5, 1.0, 0.5, 0, 1, 0.5; prompt_len = row + 1 */
    kv_trace *t = load_ok("ties.jsonl", NULL);
    const uint32_t order[] = {4, 1, 3, 6, 0, 2, 5};
    for (size_t i = 0; i < 7; i++) {
        cr_assert_eq(t->reqs[i].row, order[i], "position %zu", i);
        cr_assert_eq(t->reqs[i].prompt_len, order[i] + 1);
    }
    kv_trace_free(t);
}

Test(trace_rows, many_ties_stay_stable)
{
    /* 2,000 rows on 3 timestamps in a shuffled pattern: the sort is stable */
    size_t cap = 2000 * 64;
    char *text = malloc(cap), *p = text;
    for (int i = 0; i < 2000; i++)
        p += sprintf(p, "{\"arrival\": %d, \"prompt_len\": %d, \"output_len\": 1}\n", (i * 7) % 3,
                     i + 1);
    kv_trace *t = text_ok("many.jsonl", text, NULL);
    free(text);
    cr_assert_eq(t->n, 2000);
    for (size_t i = 1; i < t->n; i++)
        if (t->reqs[i].arrival_ns == t->reqs[i - 1].arrival_ns)
            cr_assert_lt(t->reqs[i - 1].row, t->reqs[i].row);
    kv_trace_free(t);
}

Test(trace_rows, crlf_bom_and_missing_final_newline)
{
    kv_trace *t = text_ok("bom.csv",
                          "\xEF\xBB\xBF"
                          "arrival,prompt_len,output_len\r\n0.5,3,4\r\n\r\n1,5,6",
                          NULL);
    cr_assert_eq(t->n, 2);
    cr_assert_eq(t->reqs[1].line, 4);
    cr_assert_eq(t->reqs[1].prompt_len, 5);
    cr_assert_eq(t->reqs[1].output_len, 6);
    kv_trace_free(t);
    t = text_ok("bom.jsonl",
                "\xEF\xBB\xBF{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 2}\r\n", NULL);
    cr_assert_eq(t->format, KV_TRACE_KVSIM_JSONL);
    kv_trace_free(t);
}

Test(trace_rows, optional_csv_columns)
{
    /* only the required columns, in another order, with an unknown one */
    kv_trace *t = text_ok("min.csv", "output_len,x,prompt_len,arrival\n2,foo,3,0.125\n", NULL);
    cr_assert_eq(t->format, KV_TRACE_KVSIM_CSV);
    cr_assert_eq(t->reqs[0].arrival_ns, 125000000);
    cr_assert_eq(t->reqs[0].prompt_len, 3);
    cr_assert_null(t->reqs[0].id);
    cr_assert_eq(t->reqs[0].priority, 0);
    kv_trace_free(t);
}

/* ---- time conversions ---------------------------------------------------------------- */

Test(trace_time, seconds_round_with_llround)
{
    /* expected = C llround(double(s) * 1e9), computed independently */
    static const struct {
        const char *s;
        int64_t ns;
    } cases[] = {
        {"0.3", 300000000},
        {"2.5e-9", 3},
        {"1.5e-9", 2},
        {"0.0000000005", 1},
        {"1e-10", 0},
        {"1.0000000005", 1000000001},
        {"123456.789012345", 123456789012345},
        {"9223372036.854775", INT64_C(9223372036854774784)},
        {"0", 0},
        {"-0.0", 0},
    };
    char text[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(text, sizeof text, "{\"arrival\": %s, \"prompt_len\": 1, \"output_len\": 1}\n",
                 cases[i].s);
        kv_trace *t = text_ok("s.jsonl", text, NULL);
        cr_assert_eq(t->reqs[0].arrival_ns, cases[i].ns, "JSON %s: %lld", cases[i].s,
                     (long long)t->reqs[0].arrival_ns);
        kv_trace_free(t);
        snprintf(text, sizeof text, "arrival,prompt_len,output_len\n%s,1,1\n", cases[i].s);
        t = text_ok("s.csv", text, NULL);
        cr_assert_eq(t->reqs[0].arrival_ns, cases[i].ns, "CSV %s", cases[i].s);
        kv_trace_free(t);
    }
    expect_text_err("s.jsonl",
                    "{\"arrival\": 9223372036.854776, \"prompt_len\": 1, "
                    "\"output_len\": 1}\n",
                    NULL, -KV_ERANGE,
                    "s.jsonl:1: 'arrival' is too large for 64-bit nanoseconds, got "
                    "9223372036.85478");
}

Test(trace_time, time_scale, .init = enter_data_dir)
{
    kv_trace_options o = {.time_scale = 0.5};
    kv_trace *t = load_ok("kvsim.jsonl", &o);
    const int64_t half[] = {150000000, 500000000, 500000001 /* llround(500000000.5) */, 1250000000,
                            1250000000};
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(t->reqs[i].arrival_ns, half[i], "position %zu", i);
    kv_trace_free(t);
    o.time_scale = 3;
    t = load_ok("kvsim.jsonl", &o);
    cr_assert_eq(t->reqs[2].arrival_ns, 3000000003);
    kv_trace_free(t);
    o.time_scale = 1e-3; /* Azure: applied after making times relative */
    t = load_ok("azure.csv", &o);
    cr_assert_eq(by_row(t, 5)->arrival_ns, 9049376020040);
    cr_assert_eq(by_row(t, 1)->arrival_ns, 0);
    kv_trace_free(t);
    o.time_scale = 1e-9; /* compresses; ties may appear and keep file order */
    t = load_ok("kvsim.jsonl", &o);
    kv_trace_free(t);
}

Test(trace_time, time_scale_errors, .init = enter_data_dir)
{
    kv_trace_options o = {.time_scale = -1};
    expect_err("kvsim.jsonl", &o, -KV_EINVAL,
               "time scale must be a positive finite number, got -1");
    o.time_scale = INFINITY;
    expect_err("kvsim.jsonl", &o, -KV_EINVAL,
               "time scale must be a positive finite number, got inf");
    o.time_scale = 2;
    expect_err("mooncake.jsonl", &o, -KV_ERANGE,
               "mooncake.jsonl:6: arrival 9223372036854000000 ns scaled by time scale 2 is too "
               "large for 64-bit nanoseconds");
}

/* ---- one test per error path ----------------------------------------------------------- */

TestSuite(trace_err, .init = enter_data_dir);

Test(trace_err, cannot_open)
{
    expect_err("no-such-trace.jsonl", NULL, -KV_ENOENT,
               "cannot open 'no-such-trace.jsonl': No such file or directory");
}

Test(trace_err, cannot_read_directory)
{
    expect_err(".", NULL, -KV_EIO, ".: cannot read: Is a directory");
}

Test(trace_err, malformed_json)
{
    expect_err("err_malformed.jsonl", NULL, -KV_EPARSE,
               "err_malformed.jsonl:3: malformed JSON at column 32: string or '}' expected "
               "near '}'");
}

Test(trace_err, duplicate_json_key)
{
    expect_err("err_dup_key.jsonl", NULL, -KV_EPARSE,
               "err_dup_key.jsonl:1: malformed JSON at column 61: duplicate object key near "
               "'\"prompt_len\"'");
}

Test(trace_err, not_an_object)
{
    expect_err("err_not_object.jsonl", NULL, -KV_EPARSE,
               "err_not_object.jsonl:2: row is not a JSON object, got [1,2]");
}

Test(trace_err, missing_field)
{
    expect_err("err_missing.jsonl", NULL, -KV_EPARSE,
               "err_missing.jsonl:2: missing field 'output_len'");
}

Test(trace_err, missing_hash_ids_in_mooncake)
{
    expect_err("err_missing_hash_ids.jsonl", NULL, -KV_EPARSE,
               "err_missing_hash_ids.jsonl:2: missing field 'hash_ids'");
}

Test(trace_err, ill_typed_real_length)
{
    expect_err("err_ill_typed.jsonl", NULL, -KV_EPARSE,
               "err_ill_typed.jsonl:3: 'prompt_len' must be a positive integer, got 2.0");
}

Test(trace_err, ill_typed_string_length)
{
    expect_err("err_string_len.jsonl", NULL, -KV_EPARSE,
               "err_string_len.jsonl:1: 'output_len' must be a positive integer, got \"8\"");
}

Test(trace_err, negative_time)
{
    expect_err("err_negative_time.jsonl", NULL, -KV_ERANGE,
               "err_negative_time.jsonl:2: 'arrival' must not be negative, got -1.5");
}

Test(trace_err, negative_mooncake_timestamp)
{
    expect_err("err_negative_ts.jsonl", NULL, -KV_ERANGE,
               "err_negative_ts.jsonl:1: 'timestamp' must not be negative, got -3");
}

Test(trace_err, non_finite_time)
{
    expect_err("err_nonfinite.csv", NULL, -KV_ERANGE,
               "err_nonfinite.csv:3: 'arrival' must be a finite number, got 'inf'");
}

Test(trace_err, time_overflows_int64_ns)
{
    expect_err("err_overflow_time.jsonl", NULL, -KV_ERANGE,
               "err_overflow_time.jsonl:1: 'arrival' is too large for 64-bit nanoseconds, got "
               "10000000000.0");
}

Test(trace_err, zero_length)
{
    expect_err("err_zero_len.jsonl", NULL, -KV_ERANGE,
               "err_zero_len.jsonl:4: 'output_length' must be a positive integer, got 0");
}

Test(trace_err, absurd_length)
{
    expect_err("err_absurd_len.jsonl", NULL, -KV_ERANGE,
               "err_absurd_len.jsonl:1: 'prompt_len' is 16777217, above the maximum length "
               "16777216");
}

Test(trace_err, hash_ids_length_mismatch)
{
    expect_err("err_hash_len.jsonl", NULL, -KV_EPARSE,
               "err_hash_len.jsonl:2: 'hash_ids' has 2 ids, expected 3 = ceil(input_length "
               "1025 / trace block size 512)");
}

Test(trace_err, bad_hash_id)
{
    expect_err("err_hash_id.jsonl", NULL, -KV_ERANGE,
               "err_hash_id.jsonl:2: 'hash_ids'[1] must be a non-negative integer, got -1");
}

Test(trace_err, token_id_out_of_range)
{
    expect_err("err_token_range.jsonl", NULL, -KV_ERANGE,
               "err_token_range.jsonl:1: 'tokens'[1] must be a token id in 0..4294967295, got "
               "4294967296");
}

Test(trace_err, tokens_length_mismatch)
{
    expect_err("err_tokens_len.jsonl", NULL, -KV_EPARSE,
               "err_tokens_len.jsonl:1: 'tokens' has 2 ids but 'prompt_len' is 3");
}

Test(trace_err, priority_out_of_range)
{
    expect_err("err_priority.jsonl", NULL, -KV_ERANGE,
               "err_priority.jsonl:1: 'priority' must be a 32-bit integer, got 2147483648");
}

Test(trace_err, csv_wrong_column_count)
{
    expect_err("err_columns.csv", NULL, -KV_EPARSE,
               "err_columns.csv:4: row has 2 columns, the header has 3");
}

Test(trace_err, csv_missing_column)
{
    expect_err("err_missing_col.csv", NULL, -KV_EPARSE,
               "err_missing_col.csv:1: missing column 'GeneratedTokens' in the CSV header");
}

Test(trace_err, csv_duplicate_column)
{
    expect_err("err_dup_col.csv", NULL, -KV_EPARSE,
               "err_dup_col.csv:1: duplicate column 'prompt_len' in the CSV header");
}

Test(trace_err, csv_unterminated_quote)
{
    expect_err("err_unterminated.csv", NULL, -KV_EPARSE,
               "err_unterminated.csv:3: unterminated quoted field in column 4");
}

Test(trace_err, csv_text_after_quote)
{
    expect_err("err_after_quote.csv", NULL, -KV_EPARSE,
               "err_after_quote.csv:2: malformed quoted field in column 4: text after the "
               "closing quote");
}

Test(trace_err, bad_datetime)
{
    expect_err("err_datetime.csv", NULL, -KV_EPARSE,
               "err_datetime.csv:3: 'TIMESTAMP' must be a date-time YYYY-MM-DD "
               "HH:MM:SS[.fffffff], got '2023-02-29 00:00:00.0000000'");
}

Test(trace_err, azure_span_overflows)
{
    expect_err("err_azure_far.csv", NULL, -KV_ERANGE,
               "err_azure_far.csv:2: 'TIMESTAMP' is too far after the earliest TIMESTAMP (line "
               "3) for 64-bit nanoseconds");
}

Test(trace_err, empty_file)
{
    expect_err("err_empty.jsonl", NULL, -KV_EPARSE, "err_empty.jsonl: trace has no requests");
}

Test(trace_err, blank_lines_only)
{
    expect_err("err_blank.jsonl", NULL, -KV_EPARSE, "err_blank.jsonl: trace has no requests");
}

Test(trace_err, header_only)
{
    expect_err("err_header_only.csv", NULL, -KV_EPARSE,
               "err_header_only.csv: trace has no requests");
}

Test(trace_err, undetectable_json)
{
    expect_err("err_undetect.jsonl", NULL, -KV_EPARSE,
               "err_undetect.jsonl:2: cannot detect the trace format: expected JSON objects "
               "with 'arrival' and 'prompt_len' (kvsim JSONL) or 'timestamp' and "
               "'input_length' (Mooncake); or force one with --format");
}

Test(trace_err, undetectable_csv)
{
    expect_err("err_undetect.csv", NULL, -KV_EPARSE,
               "err_undetect.csv:1: cannot detect the trace format: expected a CSV header "
               "with arrival,prompt_len (kvsim CSV), TIMESTAMP,ContextTokens (Azure) or "
               "num_prefill_tokens (length stats), or JSON Lines; or force one with --format");
}

Test(trace_err, json_array_file)
{
    expect_err("err_array.json", NULL, -KV_EPARSE,
               "err_array.json:1: cannot detect the trace format: a JSON array; kvsim reads "
               "JSON Lines (one object per line) or CSV");
}

Test(trace_err, lengths_without_rate)
{
    expect_err("lengths.csv", NULL, -KV_EINVAL,
               "lengths.csv: a length-stats trace has no arrival times: give --rate R "
               "(requests per second)");
    kv_trace_options o = {.rate = -2};
    expect_err("lengths.csv", &o, -KV_EINVAL,
               "lengths.csv: --rate must be a positive finite number of requests per second, "
               "got -2");
    o.rate = NAN;
    expect_err("lengths.csv", &o, -KV_EINVAL,
               "lengths.csv: --rate must be a positive finite number of requests per second, "
               "got nan");
}

Test(trace_err, lengths_arrival_overflow)
{
    kv_trace_options o = {.rate = 1e-12, .seed = 1};
    kv_diag d = {{0}};
    kv_trace *t = NULL;
    /* mean gap 1e12 s: the first draw alone overflows int64 ns with near certainty; the
     * exact draw is seed-dependent, so check the code and the message's shape */
    int rc = kv_trace_load(&t, "lengths.csv", &o, &d);
    cr_assert_eq(rc, -KV_ERANGE, "%s", d.msg);
    cr_assert_null(t);
    cr_assert(strncmp(d.msg, "lengths.csv:2: Poisson arrival ", 31) == 0, "%s", d.msg);
    cr_assert(strstr(d.msg, "s at --rate 1e-12 is too large for 64-bit nanoseconds"), "%s", d.msg);
}

Test(trace_err, nul_byte)
{
    static const char text[] = "arrival,prompt_len,output_len\n0,1\0"
                               "9,1\n";
    char *dir = make_temp_dir();
    char path[4200];
    snprintf(path, sizeof path, "%s/nul.csv", dir);
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    fwrite(text, 1, sizeof text - 1, f);
    fclose(f);
    cr_assert_eq(chdir(dir), 0);
    expect_err("nul.csv", NULL, -KV_EPARSE, "nul.csv:2: NUL byte at column 4");
    rm_rf(dir);
    free(dir);
}

Test(trace_err, nul_byte_after_bom_counts_columns_as_shown)
{
    static const char text[] = "\xEF\xBB\xBF{\"a\0";
    kv_trace *t = (kv_trace *)&t;
    kv_diag d = {{0}};
    FILE *f = fmemopen((void *)text, sizeof text - 1, "rb");
    cr_assert(f);
    cr_assert_eq(kv_trace_load_stream(&t, f, "b.jsonl", NULL, &d), -KV_EPARSE);
    fclose(f);
    cr_assert_null(t);
    cr_assert_str_eq(d.msg, "b.jsonl:1: NUL byte at column 4", "the byte-order mark is no column");
}

Test(trace_err, nul_stream_fails_without_reading_on)
{
    /* /dev/zero never ends: the NUL is an error as soon as it is read. */
    kv_trace *t = NULL;
    kv_diag d = {{0}};
    cr_assert_eq(kv_trace_load(&t, "/dev/zero", NULL, &d), -KV_EPARSE);
    cr_assert_str_eq(d.msg, "/dev/zero:1: NUL byte at column 1");
}

/* ---- line and record limits (README "Limits") ---------------------------------------- */

Test(trace_limits, defaults_derive_from_the_longest_prompt)
{
    cr_assert_eq(KV_TRACE_MAX_JSON_LINE, (size_t)16 * KV_TRACE_MAX_LEN);
    cr_assert_eq(KV_TRACE_MAX_JSON_LINE, (size_t)256 << 20);
    cr_assert_eq(KV_TRACE_MAX_CSV_RECORD, (size_t)1 << 20);
    /* a full tokens array of the largest ids, with ", ", fits with room to spare */
    cr_assert_lt((size_t)KV_TRACE_MAX_LEN * sizeof "4294967295, ", KV_TRACE_MAX_JSON_LINE);
}

Test(trace_limits, jsonl_line_at_and_over_the_limit)
{
    /* 64-byte limit: line 1 is exactly 64 bytes (+ CRLF), line 2 is 65. */
    static const char row64[] =
        "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, \"id\": \"abcdef\"}";
    cr_assert_eq(strlen(row64), 64);
    kv_trace_options o = {.max_line = 64};
    char text[1200];
    snprintf(text, sizeof text, "%s\r\n%s\n", row64, row64);
    kv_trace *t = text_ok("l.jsonl", text, &o);
    cr_assert_eq(t->n, 2);
    kv_trace_free(t);
    snprintf(text, sizeof text, "%s\n%.*sX\"}\n", row64, 62, row64);
    expect_text_err("l.jsonl", text, &o, -KV_EPARSE,
                    "l.jsonl:2: a JSON Lines row is longer than the limit of 64 bytes");
    /* a last line without newline is bounded the same way */
    snprintf(text, sizeof text, "%s\n%.*sX\"}", row64, 62, row64);
    expect_text_err("l.jsonl", text, &o, -KV_EPARSE,
                    "l.jsonl:2: a JSON Lines row is longer than the limit of 64 bytes");
    /* the limit counts the line as written, blanks included */
    o.max_line = 1024;
    snprintf(text, sizeof text, "\n\n%s%*s\n", row64, 961, "");
    expect_text_err("l.jsonl", text, &o, -KV_EPARSE,
                    "l.jsonl:3: a JSON Lines row is longer than the limit of 1024 bytes (1 KiB)");
}

Test(trace_limits, csv_record_limit_covers_quoted_line_breaks)
{
    kv_trace_options o = {.max_line = 40};
    /* line 3 starts a record whose quoted id spans lines 3..5: 14 + 1 + 20 + 1 + 10 bytes */
    const char *text = "arrival,prompt_len,output_len,id\n"
                       "0,1,1,a\n"
                       "1,1,1,\"first\n"
                       "xxxxxxxxxxxxxxxxxxxx\n"
                       "xxxxxxxx\"\n";
    expect_text_err("q.csv", text, &o, -KV_EPARSE,
                    "q.csv:3: a CSV record is longer than the limit of 40 bytes");
    o.max_line = 64;
    kv_trace *t = text_ok("q.csv", text, &o);
    cr_assert_str_eq(by_row(t, 1)->id, "first\nxxxxxxxxxxxxxxxxxxxx\nxxxxxxxx");
    kv_trace_free(t);
}

Test(trace_limits, csv_header_read_before_detection)
{
    /* Auto-detection reads line 1 under the JSON Lines limit; the CSV reader then holds the
     * header to the CSV limit too. */
    size_t n = KV_TRACE_MAX_CSV_RECORD + 1;
    char *text = malloc(n + 64);
    strcpy(text, "arrival,prompt_len,output_len,");
    size_t k = strlen(text);
    memset(text + k, 'x', n - k);
    strcpy(text + n, "\n0,1,1,x\n");
    expect_text_err("h.csv", text, NULL, -KV_EPARSE,
                    "h.csv:1: a CSV record is longer than the limit of 1048576 bytes (1 MiB)");
    /* at the limit it is a header like any other */
    text[n - 1] = '\n';
    text[n] = '\0';
    strcat(text, "0,1,1,x\n");
    kv_trace *t = text_ok("h.csv", text, NULL);
    cr_assert_eq(t->n, 1);
    kv_trace_free(t);
    free(text);
}

Test(trace_limits, forced_csv_uses_the_csv_limit_from_line_one)
{
    kv_trace_options o = {.format = KV_TRACE_KVSIM_CSV};
    size_t n = KV_TRACE_MAX_CSV_RECORD + 10;
    char *text = malloc(n + 2);
    memset(text, 'a', n);
    strcpy(text + n, "\n");
    expect_text_err("f.csv", text, &o, -KV_EPARSE,
                    "f.csv:1: a CSV record is longer than the limit of 1048576 bytes (1 MiB)");
    free(text);
}

/* ---- the stream entry point ---------------------------------------------------------- */

Test(trace_stream, reads_like_a_file_and_names_the_stream)
{
    static const char text[] = "arrival,prompt_len,output_len\n1,5,2\n0,3,1\n";
    FILE *f = fmemopen((void *)text, sizeof text - 1, "rb");
    cr_assert(f);
    kv_trace *t = NULL;
    kv_diag d = {{0}};
    cr_assert_eq(kv_trace_load_stream(&t, f, "<pipe>", NULL, &d), 0, "%s", d.msg);
    fclose(f);
    check_trace(t);
    cr_assert_str_eq(t->path, "<pipe>");
    cr_assert_eq(t->n, 2);
    cr_assert_eq(t->reqs[0].prompt_len, 3, "ordered by arrival");
    kv_trace_free(t);

    static const char bad[] = "{\"arrival\": 0, \"prompt_len\": 0, \"output_len\": 1}\n";
    f = fmemopen((void *)bad, sizeof bad - 1, "rb");
    t = (kv_trace *)&t;
    cr_assert_eq(kv_trace_load_stream(&t, f, "<pipe>", NULL, &d), -KV_ERANGE);
    fclose(f);
    cr_assert_null(t);
    cr_assert_str_eq(d.msg, "<pipe>:1: 'prompt_len' must be a positive integer, got 0");
}

Test(trace_stream, options_are_checked_first)
{
    FILE *f = fmemopen((void *)"x", 1, "rb");
    kv_trace_options o = {.time_scale = -1};
    kv_trace *t = NULL;
    kv_diag d = {{0}};
    cr_assert_eq(kv_trace_load_stream(&t, f, "s", &o, &d), -KV_EINVAL);
    fclose(f);
    cr_assert_str_eq(d.msg, "time scale must be a positive finite number, got -1");
}

/* Smaller variants of the same paths, inline. */
Test(trace_err, variants)
{
    static const struct {
        const char *name, *text;
        int rc;
        const char *msg;
    } cases[] = {
        /* kvsim JSONL typing */
        {"v.jsonl", "{\"arrival\": \"1.5\", \"prompt_len\": 1, \"output_len\": 1}", -KV_EPARSE,
         "v.jsonl:1: 'arrival' must be a number of seconds, got \"1.5\""},
        {"v.jsonl", "{\"arrival\": null, \"prompt_len\": 1, \"output_len\": 1}", -KV_EPARSE,
         "v.jsonl:1: 'arrival' must be a number of seconds, got null"},
        {"v.jsonl", "{\"arrival\": 0, \"prompt_len\": -4, \"output_len\": 1}", -KV_ERANGE,
         "v.jsonl:1: 'prompt_len' must be a positive integer, got -4"},
        {"v.jsonl", "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, \"id\": true}",
         -KV_EPARSE, "v.jsonl:1: 'id' must be a string or an integer, got true"},
        {"v.jsonl", "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, \"id\": 1.5}",
         -KV_EPARSE, "v.jsonl:1: 'id' must be a string or an integer, got 1.5"},
        {"v.jsonl", "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, \"adapter\": 5}",
         -KV_EPARSE, "v.jsonl:1: 'adapter' must be a string, got 5"},
        {"v.jsonl", "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, \"salt\": [\"a\"]}",
         -KV_EPARSE, "v.jsonl:1: 'salt' must be a string, got [\"a\"]"},
        {"v.jsonl", "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, \"priority\": 1.0}",
         -KV_EPARSE, "v.jsonl:1: 'priority' must be an integer, got 1.0"},
        {"v.jsonl",
         "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, \"priority\": -2147483649}",
         -KV_ERANGE, "v.jsonl:1: 'priority' must be a 32-bit integer, got -2147483649"},
        {"v.jsonl", "{\"arrival\": 0, \"prompt_len\": 2, \"output_len\": 1, \"tokens\": \"ab\"}",
         -KV_EPARSE, "v.jsonl:1: 'tokens' must be an array of token ids, got \"ab\""},
        {"v.jsonl", "{\"arrival\": 0, \"prompt_len\": 2, \"output_len\": 1, \"tokens\": [1, 2.0]}",
         -KV_EPARSE, "v.jsonl:1: 'tokens'[1] must be an integer token id, got 2.0"},
        {"v.jsonl", "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, \"tokens\": [-1]}",
         -KV_ERANGE, "v.jsonl:1: 'tokens'[0] must be a token id in 0..4294967295, got -1"},
        {"v.jsonl",
         "{\"arrival\": 0, \"prompt_len\": 2, \"output_len\": 1, \"tokens\": [1, 2], "
         "\"hash_ids\": [-5]}",
         -KV_ERANGE, "v.jsonl:1: 'hash_ids'[0] must be a non-negative integer, got -5"},
        {"v.jsonl",
         "{\"arrival\": 0, \"prompt_len\": 2, \"output_len\": 1, \"tokens\": [1, 2], "
         "\"hash_ids\": [1, 2]}",
         -KV_EPARSE,
         "v.jsonl:1: 'hash_ids' has 2 ids, expected 1 = ceil(prompt_len 2 / trace block "
         "size 512)"},
        {"v.jsonl", "{\"arrival\": 0, \"prompt_len\": 2, \"output_len\": 1, \"hash_ids\": 7}",
         -KV_EPARSE, "v.jsonl:1: 'hash_ids' must be an array of non-negative integers, got 7"},
        {"v.jsonl", "{\"arrival\": 0, \"prompt_len\": 2, \"output_len\": 1, \"hash_ids\": [\"x\"]}",
         -KV_EPARSE, "v.jsonl:1: 'hash_ids'[0] must be a non-negative integer, got \"x\""},
        {"v.jsonl", "{\"arrival\": 1e400, \"prompt_len\": 1, \"output_len\": 1}", -KV_EPARSE,
         "v.jsonl:1: malformed JSON at column 17: real number overflow near '1e400'"},
        {"v.jsonl", "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1}\n42", -KV_EPARSE,
         "v.jsonl:2: row is not a JSON object, got 42"},
        {"v.jsonl", "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, \"timestamp\": 0}",
         -KV_EPARSE,
         "v.jsonl:1: cannot detect the trace format: the object has both kvsim keys "
         "('arrival'/'prompt_len') and Mooncake keys ('timestamp'/'input_length'); use "
         "--format jsonl or --format mooncake"},
        /* Mooncake */
        {"m.jsonl",
         "{\"timestamp\": \"0\", \"input_length\": 1, \"output_length\": 1, "
         "\"hash_ids\": [0]}",
         -KV_EPARSE, "m.jsonl:1: 'timestamp' must be a number of milliseconds, got \"0\""},
        {"m.jsonl",
         "{\"timestamp\": 9223372036855, \"input_length\": 1, \"output_length\": 1, "
         "\"hash_ids\": [0]}",
         -KV_ERANGE,
         "m.jsonl:1: 'timestamp' is too large for 64-bit nanoseconds, got 9223372036855"},
        {"m.jsonl",
         "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, "
         "\"hash_ids\": null}",
         -KV_EPARSE, "m.jsonl:1: 'hash_ids' must be an array of non-negative integers, got null"},
        {"m.jsonl", "{\"timestamp\": 0, \"input_length\": 1.5, \"output_length\": 1}", -KV_EPARSE,
         "m.jsonl:1: 'input_length' must be a positive integer, got 1.5"},
        /* kvsim CSV */
        {"v.csv", "arrival,prompt_len,output_len\n0,2.0,1\n", -KV_EPARSE,
         "v.csv:2: 'prompt_len' must be a positive integer, got '2.0'"},
        {"v.csv", "arrival,prompt_len,output_len\n0,,1\n", -KV_EPARSE,
         "v.csv:2: 'prompt_len' must be a positive integer, got ''"},
        {"v.csv", "arrival,prompt_len,output_len\n0,-3,1\n", -KV_ERANGE,
         "v.csv:2: 'prompt_len' must be a positive integer, got '-3'"},
        {"v.csv", "arrival,prompt_len,output_len\n0,1,0\n", -KV_ERANGE,
         "v.csv:2: 'output_len' must be a positive integer, got '0'"},
        {"v.csv", "arrival,prompt_len,output_len\n0,99999999999999999999999,1\n", -KV_ERANGE,
         "v.csv:2: 'prompt_len' is 99999999999999999999999, above the maximum length "
         "16777216"},
        {"v.csv", "arrival,prompt_len,output_len\n1 s,1,1\n", -KV_EPARSE,
         "v.csv:2: 'arrival' must be a number of seconds, got '1 s'"},
        {"v.csv", "arrival,prompt_len,output_len\n0x10,1,1\n", -KV_EPARSE,
         "v.csv:2: 'arrival' must be a number of seconds, got '0x10'"},
        {"v.csv", "arrival,prompt_len,output_len\nNaN,1,1\n", -KV_ERANGE,
         "v.csv:2: 'arrival' must be a finite number, got 'NaN'"},
        {"v.csv", "arrival,prompt_len,output_len\n-0.5,1,1\n", -KV_ERANGE,
         "v.csv:2: 'arrival' must not be negative, got '-0.5'"},
        {"v.csv", "arrival,prompt_len,output_len\n1e999,1,1\n", -KV_ERANGE,
         "v.csv:2: 'arrival' is too large for 64-bit nanoseconds, got '1e999'"},
        {"v.csv", "arrival,prompt_len,output_len\n-1e999,1,1\n", -KV_ERANGE,
         "v.csv:2: 'arrival' must not be negative, got '-1e999'"},
        {"v.csv", "arrival,prompt_len,output_len\n-inf,1,1\n", -KV_ERANGE,
         "v.csv:2: 'arrival' must be a finite number, got '-inf'"},
        {"v.csv", "arrival,prompt_len,output_len\n1e,1,1\n", -KV_EPARSE,
         "v.csv:2: 'arrival' must be a number of seconds, got '1e'"},
        {"v.csv", "arrival,prompt_len,output_len\n.,1,1\n", -KV_EPARSE,
         "v.csv:2: 'arrival' must be a number of seconds, got '.'"},
        {"v.csv", "arrival,prompt_len,output_len,priority\n0,1,1,1.5\n", -KV_EPARSE,
         "v.csv:2: 'priority' must be an integer, got '1.5'"},
        {"v.csv", "arrival,prompt_len,output_len,priority\n0,1,1,-2147483649\n", -KV_ERANGE,
         "v.csv:2: 'priority' must be a 32-bit integer, got '-2147483649'"},
        {"v.csv", "arrival,prompt_len,output_len\n0,1,1,\n", -KV_EPARSE,
         "v.csv:2: row has 4 columns, the header has 3"},
        {"v.csv", "arrival,prompt_len\n0,1\n", -KV_EPARSE,
         "v.csv:1: missing column 'output_len' in the CSV header"},
        {"v.csv", "arrival,prompt_len,output_len,num_prefill_tokens\n0,1,1,1\n", -KV_EPARSE,
         "v.csv:1: cannot detect the trace format: the CSV header fits more than one format; "
         "use --format csv, azure or lengths"},
        /* Azure datetimes */
        {"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 24:00:00.0,1,1\n",
         -KV_EPARSE,
         "a.csv:2: 'TIMESTAMP' must be a date-time YYYY-MM-DD HH:MM:SS[.fffffff], got "
         "'2023-11-16 24:00:00.0'"},
        {"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.1234567890,1,1\n",
         -KV_EPARSE,
         "a.csv:2: 'TIMESTAMP' must be a date-time YYYY-MM-DD HH:MM:SS[.fffffff], got "
         "'2023-11-16 18:17:03.1234567890'"},
        {"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.,1,1\n", -KV_EPARSE,
         "a.csv:2: 'TIMESTAMP' must be a date-time YYYY-MM-DD HH:MM:SS[.fffffff], got "
         "'2023-11-16 18:17:03.'"},
        {"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03Z,1,1\n", -KV_EPARSE,
         "a.csv:2: 'TIMESTAMP' must be a date-time YYYY-MM-DD HH:MM:SS[.fffffff], got "
         "'2023-11-16 18:17:03Z'"},
        {"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-01 00:00:00,1,1\n", -KV_EPARSE,
         "a.csv:2: 'TIMESTAMP' must be a date-time YYYY-MM-DD HH:MM:SS[.fffffff], got "
         "'2023-13-01 00:00:00'"},
        {"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n1900-02-29 00:00:00,1,1\n", -KV_EPARSE,
         "a.csv:2: 'TIMESTAMP' must be a date-time YYYY-MM-DD HH:MM:SS[.fffffff], got "
         "'1900-02-29 00:00:00'"},
        {"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:60,1,1\n", -KV_EPARSE,
         "a.csv:2: 'TIMESTAMP' must be a date-time YYYY-MM-DD HH:MM:SS[.fffffff], got "
         "'2023-11-16 18:17:60'"},
        {"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,0,1\n", -KV_ERANGE,
         "a.csv:2: 'ContextTokens' must be a positive integer, got '0'"},
        {"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,1,0\n", -KV_ERANGE,
         "a.csv:2: 'GeneratedTokens' must be a positive integer, got '0'"},
        /* length stats */
        {"l.csv", "num_prefill_tokens,num_decode_tokens\n5,x\n", -KV_EPARSE,
         "l.csv:2: 'num_decode_tokens' must be a positive integer, got 'x'"},
        {"l.csv", "num_prefill_tokens,pd_ratio\n5,1.0\n", -KV_EPARSE,
         "l.csv:1: missing column 'num_decode_tokens' in the CSV header"},
    };
    kv_trace_options o = {.rate = 1};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_text_err(cases[i].name, cases[i].text, &o, cases[i].rc, cases[i].msg);
}

/* Accepted edge values next to the rejected ones above. */
Test(trace_err, accepted_edges)
{
    kv_trace *t = text_ok("e.csv",
                          "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                          "2000-02-29 23:59:59.999999999,16777216,1\n"
                          "2000-03-01 00:00:00,1,16777216\n",
                          NULL);
    cr_assert_eq(by_row(t, 1)->arrival_ns, 1, "one nanosecond across a leap day");
    cr_assert_eq(by_row(t, 0)->prompt_len, KV_TRACE_MAX_LEN);
    kv_trace_free(t);
    t = text_ok("e.csv",
                "arrival,prompt_len,output_len,priority\n"
                "+2.,+3,1,-2147483648\n.5,1,1,2147483647\n",
                NULL);
    cr_assert_eq(by_row(t, 0)->arrival_ns, 2000000000);
    cr_assert_eq(by_row(t, 0)->prompt_len, 3);
    cr_assert_eq(by_row(t, 0)->priority, INT32_MIN);
    cr_assert_eq(by_row(t, 1)->arrival_ns, 500000000);
    cr_assert_eq(by_row(t, 1)->priority, INT32_MAX);
    kv_trace_free(t);
    /* the one number grammar (README "Numbers"): 5., 1e3 and -0 are seconds too */
    t = text_ok("e.csv", "arrival,prompt_len,output_len\n5.,1,1\n1e-3,1,1\n-0,1,1\n", NULL);
    cr_assert_eq(by_row(t, 0)->arrival_ns, 5000000000);
    cr_assert_eq(by_row(t, 1)->arrival_ns, 1000000);
    cr_assert_eq(by_row(t, 2)->arrival_ns, 0);
    kv_trace_free(t);
}

/* ---- the six real traces ------------------------------------------------------------- */

static uint32_t ceil_div(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}

typedef struct sums {
    uint64_t arrival, prompt, output, hash, n_hash;
} sums;

static sums sum_trace(const kv_trace *t)
{
    sums s = {0};
    for (size_t i = 0; i < t->n; i++) {
        const kv_request_spec *q = &t->reqs[i];
        s.arrival += (uint64_t)q->arrival_ns;
        s.prompt += q->prompt_len;
        s.output += q->output_len;
        for (uint32_t k = 0; k < q->n_hash_ids; k++)
            s.hash += q->hash_ids[k];
        s.n_hash += q->n_hash_ids;
    }
    return s;
}

static void check_mooncake(const kv_trace *t)
{
    cr_assert_eq(t->format, KV_TRACE_MOONCAKE);
    for (size_t i = 0; i < t->n; i++) {
        const kv_request_spec *q = &t->reqs[i];
        cr_assert_eq(q->row, i, "already sorted: file order kept");
        cr_assert_eq(q->content, KV_CONTENT_HASH_IDS);
        cr_assert_eq(q->n_hash_ids, ceil_div(q->prompt_len, 512), "row %zu", i);
        cr_assert_eq(q->arrival_ns % 1000000, 0, "integer milliseconds");
    }
}

Test(trace_real, mooncake_conversation)
{
    kv_trace *t = load_ok(src_path("traces/real/mooncake_fast25_conversation_trace.jsonl"), NULL);
    cr_assert_eq(t->n, 12031);
    check_mooncake(t);
    const kv_request_spec *f = &t->reqs[0], *l = &t->reqs[t->n - 1];
    cr_assert_eq(f->arrival_ns, 0);
    cr_assert_eq(f->prompt_len, 6758);
    cr_assert_eq(f->output_len, 500);
    cr_assert_eq(f->n_hash_ids, 14);
    for (uint32_t k = 0; k < 14; k++)
        cr_assert_eq(f->hash_ids[k], k);
    cr_assert_eq(l->arrival_ns, INT64_C(3536999000000));
    cr_assert_eq(l->prompt_len, 20774);
    cr_assert_eq(l->output_len, 508);
    cr_assert_eq(l->hash_ids[0], 0);
    cr_assert_eq(l->hash_ids[l->n_hash_ids - 1], 182789);
    sums s = sum_trace(t);
    cr_assert_eq(s.arrival, UINT64_C(22224626588) * 1000000);
    cr_assert_eq(s.prompt, 144793823);
    cr_assert_eq(s.output, 4122048);
    cr_assert_eq(s.hash, UINT64_C(23407000830));
    cr_assert_eq(s.n_hash, 288500);
    kv_trace_free(t);
}

Test(trace_real, mooncake_synthetic)
{
    kv_trace *t = load_ok(src_path("traces/real/mooncake_fast25_synthetic_trace.jsonl"), NULL);
    cr_assert_eq(t->n, 3993);
    check_mooncake(t);
    cr_assert_eq(t->reqs[0].prompt_len, 40160);
    cr_assert_eq(t->reqs[0].output_len, 6);
    cr_assert_eq(t->reqs[0].n_hash_ids, 79);
    const kv_request_spec *l = &t->reqs[t->n - 1];
    cr_assert_eq(l->arrival_ns, INT64_C(1022025000000));
    cr_assert_eq(l->prompt_len, 18440);
    cr_assert_eq(l->output_len, 83);
    cr_assert_eq(l->hash_ids[l->n_hash_ids - 1], 43923);
    sums s = sum_trace(t);
    cr_assert_eq(s.arrival, UINT64_C(2097594543) * 1000000);
    cr_assert_eq(s.prompt, 61194628);
    cr_assert_eq(s.output, 595432);
    cr_assert_eq(s.hash, UINT64_C(2510208276));
    cr_assert_eq(s.n_hash, 121877);
    kv_trace_free(t);
}

static void check_azure(const char *rel, size_t n, int64_t last_ns, uint32_t first_p,
                        uint32_t first_o, uint32_t last_p, uint32_t last_o, uint64_t sum_arr,
                        uint64_t sum_p, uint64_t sum_o)
{
    kv_trace *t = load_ok(src_path(rel), NULL);
    cr_assert_eq(t->format, KV_TRACE_AZURE);
    cr_assert_eq(t->n, n);
    cr_assert_eq(t->reqs[0].arrival_ns, 0);
    cr_assert_eq(t->reqs[0].prompt_len, first_p);
    cr_assert_eq(t->reqs[0].output_len, first_o);
    const kv_request_spec *l = &t->reqs[t->n - 1];
    cr_assert_eq(l->row, n - 1);
    cr_assert_eq(l->line, n + 1);
    cr_assert_eq(l->arrival_ns, last_ns);
    cr_assert_eq(l->prompt_len, last_p);
    cr_assert_eq(l->output_len, last_o);
    for (size_t i = 0; i < t->n; i++) {
        cr_assert_eq(t->reqs[i].arrival_ns % 100, 0, "100 ns precision, exactly");
        cr_assert_eq(t->reqs[i].content, KV_CONTENT_NONE);
    }
    sums s = sum_trace(t);
    cr_assert_eq(s.arrival, sum_arr, "exact Σ arrival: %llu", (unsigned long long)s.arrival);
    cr_assert_eq(s.prompt, sum_p);
    cr_assert_eq(s.output, sum_o);
    kv_trace_free(t);
}

Test(trace_real, azure_code)
{
    check_azure("traces/real/azure_llm_inference_2023_code.csv", 8819, INT64_C(3435948056000), 4808,
                10, 549, 173, UINT64_C(13327267954592000), 18059974, 245896);
}

Test(trace_real, azure_conv)
{
    check_azure("traces/real/azure_llm_inference_2023_conv.csv", 19366, INT64_C(3501721937000), 374,
                44, 197, 183, UINT64_C(33473340385407000), 22361870, 4088665);
}

static void check_lengths(const char *rel, size_t n, uint32_t fp, uint32_t fo, uint32_t lp,
                          uint32_t lo, uint64_t sum_p, uint64_t sum_o)
{
    kv_trace_options o = {.rate = 10, .seed = 7};
    kv_trace *t = load_ok(src_path(rel), &o);
    cr_assert_eq(t->format, KV_TRACE_LENGTHS);
    cr_assert_eq(t->n, n);
    cr_assert_eq(t->reqs[0].prompt_len, fp);
    cr_assert_eq(t->reqs[0].output_len, fo);
    cr_assert_eq(t->reqs[n - 1].prompt_len, lp);
    cr_assert_eq(t->reqs[n - 1].output_len, lo);
    cr_assert_eq(t->reqs[n - 1].row, n - 1);
    sums s = sum_trace(t);
    cr_assert_eq(s.prompt, sum_p);
    cr_assert_eq(s.output, sum_o);
    expect_poisson(t, 10, 7);
    kv_trace_free(t);
}

Test(trace_real, sharegpt_lengths)
{
    check_lengths("traces/real/sharegpt_8k_filtered_stats_llama2_tokenizer.csv", 30731, 74, 918,
                  2285, 363, 71911571, 13481988);
}

Test(trace_real, arxiv_lengths)
{
    check_lengths("traces/real/arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv", 28257,
                  3772, 54, 3178, 313, 73131321, 8234948);
}

/* ---- the bundled example traces ------------------------------------------------------ */

Test(trace_bundled, examples_load)
{
    kv_trace *t = load_ok(src_path("traces/mooncake_conv_500.jsonl"), NULL);
    cr_assert_eq(t->n, 500);
    check_mooncake(t);
    kv_trace_free(t);

    t = load_ok(src_path("traces/azure_conv_1000.csv"), NULL);
    cr_assert_eq(t->n, 1000);
    cr_assert_eq(t->format, KV_TRACE_AZURE);
    kv_trace_free(t);

    kv_trace_options o = {.rate = 2};
    t = load_ok(src_path("traces/sharegpt_lengths_1000.csv"), &o);
    cr_assert_eq(t->n, 1000);
    kv_trace_free(t);

    t = load_ok(src_path("traces/tiny.csv"), NULL);
    cr_assert_eq(t->format, KV_TRACE_KVSIM_CSV);
    cr_assert_eq(t->n, 6);
    cr_assert_str_eq(by_row(t, 2)->id, "summarize, long");
    kv_trace_free(t);
}

Test(trace_bundled, tiny_shared_prefixes)
{
    kv_trace *t = load_ok(src_path("traces/tiny_shared.jsonl"), NULL);
    cr_assert_eq(t->n, 10);
    size_t with_tokens = 0, adapters = 0, salts = 0, prios = 0;
    for (size_t i = 0; i < t->n; i++) {
        const kv_request_spec *q = &t->reqs[i];
        with_tokens += q->content == KV_CONTENT_TOKENS;
        adapters += q->adapter != NULL;
        salts += q->salt != NULL;
        prios += q->priority != 0;
    }
    cr_assert_eq(with_tokens, 9);
    cr_assert_eq(adapters, 1);
    cr_assert_eq(salts, 1);
    cr_assert_geq(prios, 2);
    /* rows 0 and 9 are the same prompt; row 2 extends row 0 (a second turn) */
    const kv_request_spec *a = by_row(t, 0), *b = by_row(t, 9), *c = by_row(t, 2);
    cr_assert_eq(a->prompt_len, b->prompt_len);
    cr_assert_arr_eq(a->tokens, b->tokens, a->prompt_len * sizeof *a->tokens);
    cr_assert_arr_eq(a->tokens, c->tokens, a->prompt_len * sizeof *a->tokens);
    cr_assert_str_eq(b->id, "9");
    kv_trace_free(t);
}

/* DESIGN §7: the optional 'session' of the kvsim formats (for --router session, §10 C3):
 * a string like adapter and salt, empty meaning none; the other formats carry none. */
Test(trace, session_field_in_the_kvsim_formats)
{
    kv_trace *t = text_ok("s.jsonl",
                          "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, "
                          "\"session\": \"conv-7\"}\n"
                          "{\"arrival\": 1, \"prompt_len\": 1, \"output_len\": 1, \"session\": \"\"}\n"
                          "{\"arrival\": 2, \"prompt_len\": 1, \"output_len\": 1, \"session\": null}\n"
                          "{\"arrival\": 3, \"prompt_len\": 1, \"output_len\": 1}\n",
                          NULL);
    cr_assert_str_eq(by_row(t, 0)->session, "conv-7");
    for (uint32_t r = 1; r < 4; r++)
        cr_assert_null(by_row(t, r)->session, "row %u: empty, null or absent is none", r);
    kv_trace_free(t);
    t = text_ok("s.csv", "arrival,prompt_len,output_len,session\n0,1,1,\"a,b\"\n1,1,1,\n", NULL);
    cr_assert_str_eq(by_row(t, 0)->session, "a,b");
    cr_assert_null(by_row(t, 1)->session);
    kv_trace_free(t);
    t = text_ok("n.csv", "arrival,prompt_len,output_len\n0,1,1\n", NULL);
    cr_assert_null(by_row(t, 0)->session, "no column, no session");
    kv_trace_free(t);
    expect_text_err("v.jsonl",
                    "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, \"session\": 12}",
                    NULL, -KV_EPARSE, "v.jsonl:1: 'session' must be a string, got 12");
    expect_text_err("d.csv", "arrival,prompt_len,output_len,session,session\n0,1,1,a,b\n", NULL,
                    -KV_EPARSE, "d.csv:1: duplicate column 'session' in the CSV header");
}

/* Issue 11: the closed-loop fields of the kvsim formats.  'client' is a string like
 * session; 'think' (seconds, ≥ 0) needs a client; both absent on open-loop rows. */
Test(trace, client_and_think_fields_in_the_kvsim_formats)
{
    kv_trace *t = text_ok("c.jsonl",
                          "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, "
                          "\"client\": \"c1\"}\n"
                          "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, "
                          "\"client\": \"c1\", \"think\": 0.25}\n"
                          "{\"arrival\": 1, \"prompt_len\": 1, \"output_len\": 1}\n",
                          NULL);
    cr_assert_str_eq(by_row(t, 0)->client, "c1");
    cr_assert_eq(by_row(t, 0)->think_ns, 0);
    cr_assert_eq(by_row(t, 1)->think_ns, 250000000);
    cr_assert_null(by_row(t, 2)->client);
    kv_trace_free(t);
    t = text_ok("c.csv", "arrival,prompt_len,output_len,client,think\n0,1,1,a,\n0,1,1,a,1.5\n"
                "1,1,1,,\n",
                NULL);
    cr_assert_str_eq(by_row(t, 1)->client, "a");
    cr_assert_eq(by_row(t, 0)->think_ns, 0);
    cr_assert_eq(by_row(t, 1)->think_ns, 1500000000);
    cr_assert_null(by_row(t, 2)->client);
    kv_trace_free(t);
    expect_text_err("t.jsonl", "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, \"think\": 1}",
                    NULL, -KV_EPARSE, "t.jsonl:1: 'think' needs a 'client' (a closed-loop row)");
    expect_text_err("t.csv", "arrival,prompt_len,output_len,think\n0,1,1,2\n", NULL, -KV_EPARSE,
                    "t.csv:2: 'think' needs a 'client' (a closed-loop row)");
    expect_text_err("n.jsonl",
                    "{\"arrival\": 0, \"prompt_len\": 1, \"output_len\": 1, \"client\": \"a\", "
                    "\"think\": -1}",
                    NULL, -KV_ERANGE, "n.jsonl:1: 'think' must not be negative, got -1");
}
