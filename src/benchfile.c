/* benchfile: the benchmark readers and the client's send schedule (include/kvsim/benchfile.h).
 *
 * JSON: the whole file is read (at most KV_BENCH_MAX_BYTES) and parsed once with jansson,
 * duplicate keys rejected as the trace readers do; the arrays are checked in a fixed order
 * (presence and type, then equal lengths, then each request), so the first problem is the
 * one reported.  CSV: the same bounded read, then one line at a time (each at most
 * KV_TRACE_MAX_CSV_RECORD bytes, split in place on commas), every value through
 * kv_parse_number (the one number grammar).
 *
 * The schedule: MT19937 (Matsumoto & Nishimura, init_genrand seeding) feeding numpy's
 * legacy double (a>>5 · 2^26 + b>>6) / 2^53 and legacy exponential −ln(1 − U), which is
 * what RandomState.gamma(1, θ) returns (numpy's legacy_gamma takes the exponential for
 * shape 1).  scripts/accuracy has the same generator in Python; tests/test_calibrate.c
 * checks both against hand-computed first draws.
 *
 * Memory: the request array; the JSON tree only while loading.  Out of scope: reading
 * the prompts themselves (prefix sharing between requests is not known from the file).
 */
#include "kvsim/benchfile.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/path.h"
#include "kvsim/text.h"
#include "kvsim/trace.h"

#include "heap_internal.h"

/* ---- the generator ------------------------------------------------------------------ */

typedef struct mt19937 {
    uint32_t mt[624];
    int index;
} mt19937;

static void mt_seed(mt19937 *m, uint32_t seed)
{
    m->mt[0] = seed;
    for (int i = 1; i < 624; i++)
        m->mt[i] = 1812433253u * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t)i;
    m->index = 624;
}

static uint32_t mt_next(mt19937 *m)
{
    if (m->index >= 624) {
        for (int i = 0; i < 624; i++) {
            uint32_t y = (m->mt[i] & 0x80000000u) | (m->mt[(i + 1) % 624] & 0x7fffffffu);
            m->mt[i] = m->mt[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        m->index = 0;
    }
    uint32_t y = m->mt[m->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

static double mt_double(mt19937 *m)
{
    uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
}

void kv_bench_schedule(size_t n, double rate, kv_bench_rule rule, uint32_t seed, double *out)
{
    if (n == 0)
        return;
    if (!(rate > 0)) {
        for (size_t i = 0; i < n; i++)
            out[i] = 0;
        return;
    }
    mt19937 m;
    mt_seed(&m, seed);
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        double gap = -log(1.0 - mt_double(&m)) / rate;
        if (rule == KV_BENCH_RULE_LEGACY) {
            out[i] = t; /* sent, then the client sleeps the gap */
            t += gap;
        } else {
            t += gap; /* the cumulative delays, then normalised to n / rate */
            out[i] = t;
        }
    }
    if (rule == KV_BENCH_RULE_SERVE && out[n - 1] > 0) {
        double f = ((double)n / rate) / out[n - 1];
        for (size_t i = 0; i < n; i++)
            out[i] *= f;
    }
}

static bool sooner(const double *a, const double *b)
{
    return *a < *b;
}

/* The k-th smallest completion, k = i − N + 1, by a min-heap of the N in flight: each
 * send pops the earliest completion (the slot it takes) and pushes its own. */
KV_HEAP_DEFINE(done_heap, double, sooner)

static void semaphore(kv_bench *b)
{
    /* At most n requests are ever in flight: N above that holds nobody back (and must not
     * size the heap: fuzz_benchfile's max_concurrency 442949296 asked for 3.5 GB). */
    size_t slots = b->max_concurrency < b->n ? b->max_concurrency : b->n, n_heap = 0;
    if (slots == b->n)
        return;
    double *heap = kv_xmalloc(slots * sizeof *heap);
    for (size_t i = 0; i < b->n; i++) {
        kv_bench_req *r = &b->reqs[i];
        if (n_heap == slots) { /* wait for the earliest completion */
            if (heap[0] > r->send_s)
                r->send_s = heap[0];
            done_heap_pop(heap, &n_heap);
        }
        done_heap_push(heap, &n_heap, r->send_s + (r->ok ? r->e2e_s : 0));
    }
    free(heap);
}

int kv_bench_sends(kv_bench *b, kv_bench_rule rule, uint32_t seed, kv_diag *diag)
{
    if (b->kind == KV_BENCH_CSV)
        return 0;
    if (b->rate > 0 && b->burstiness != 1.0)
        return kv_diag_set(diag, -KV_EINVAL,
                           "%s: burstiness %g: only 1 (Poisson) send times are rebuilt; give "
                           "the run as a CSV with its send times (send_s,prompt_len,"
                           "output_len,ttft_s,e2e_s)",
                           b->path, b->burstiness);
    double *t = kv_xmalloc(b->n * sizeof *t);
    kv_bench_schedule(b->n, b->rate, rule, seed, t);
    for (size_t i = 0; i < b->n; i++)
        b->reqs[i].sched_s = b->reqs[i].send_s = t[i];
    free(t);
    if (b->max_concurrency > 0)
        semaphore(b);
    b->has_sends = true;
    return 0;
}

/* ---- reading -------------------------------------------------------------------------- */

static kv_bench *bench_new(const char *path, kv_bench_kind kind, size_t n)
{
    kv_bench *b = kv_xcalloc(1, sizeof *b);
    b->path = kv_xstrdup(path);
    b->kind = kind;
    b->burstiness = 1.0;
    b->n = n;
    b->reqs = kv_xcalloc(n ? n : 1, sizeof *b->reqs);
    return b;
}

void kv_bench_free(kv_bench *b)
{
    if (!b)
        return;
    free(b->reqs);
    free(b->path);
    free(b);
}

/* A required array of the top-level object. */
static int get_array(const char *path, json_t *root, const char *key, json_t **out, kv_diag *diag)
{
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v))
        return kv_diag_set(diag, -KV_EPARSE,
                           "%s: missing per-request field '%s' (save the run with vllm bench "
                           "serve --save-result --save-detailed)",
                           path, key);
    if (!json_is_array(v))
        return kv_diag_set(diag, -KV_EPARSE, "%s: '%s' must be an array", path, key);
    *out = v;
    return 0;
}

static int get_time(const char *path, json_t *v, const char *what, size_t i, double *out,
                    kv_diag *diag)
{
    if (!json_is_number(v))
        return kv_diag_set(diag, -KV_EPARSE, "%s: request %zu: %s must be a number", path, i, what);
    double x = json_number_value(v);
    if (!isfinite(x) || x < 0)
        return kv_diag_set(diag, -KV_ERANGE,
                           "%s: request %zu: %s must be a non-negative time, got %g", path, i, what,
                           x);
    *out = x;
    return 0;
}

static int get_len(const char *path, json_t *v, const char *what, size_t i, uint32_t lo,
                   uint32_t *out, kv_diag *diag)
{
    if (!json_is_integer(v))
        return kv_diag_set(diag, -KV_EPARSE, "%s: request %zu: %s must be an integer", path, i,
                           what);
    json_int_t x = json_integer_value(v);
    if (x < (json_int_t)lo || x > (json_int_t)KV_TRACE_MAX_LEN)
        return kv_diag_set(diag, -KV_ERANGE,
                           "%s: request %zu: %s is %" JSON_INTEGER_FORMAT ", outside [%u, %u]",
                           path, i, what, x, (unsigned)lo, (unsigned)KV_TRACE_MAX_LEN);
    *out = (uint32_t)x;
    return 0;
}

typedef struct arrays {
    json_t *in, *out, *ttft, *itl, *err; /* err may be NULL */
} arrays;

/* Request i: its lengths, TTFT and E2E (ttft + Σ itls), or failed. */
static int read_request(kv_bench *b, const arrays *a, size_t i, kv_diag *diag)
{
    kv_bench_req *r = &b->reqs[i];
    json_t *e = a->err ? json_array_get(a->err, i) : NULL;
    if (e && !json_is_null(e) && !json_is_string(e))
        return kv_diag_set(diag, -KV_EPARSE, "%s: request %zu: errors must be a string", b->path,
                           i);
    r->ok = !e || json_is_null(e) || json_string_length(e) == 0;
    int rc = get_len(b->path, json_array_get(a->in, i), "input_lens", i, 1, &r->prompt_len, diag);
    if (rc == 0)
        rc = get_len(b->path, json_array_get(a->out, i), "output_lens", i, r->ok ? 1 : 0,
                     &r->output_len, diag);
    if (rc == 0)
        rc = get_time(b->path, json_array_get(a->ttft, i), "ttfts", i, &r->ttft_s, diag);
    json_t *gaps = json_array_get(a->itl, i);
    if (rc == 0 && !json_is_array(gaps))
        rc = kv_diag_set(diag, -KV_EPARSE, "%s: request %zu: itls must be an array", b->path, i);
    if (rc != 0 || !r->ok) {
        b->n_failed += rc == 0;
        return rc;
    }
    size_t n_gaps = json_array_size(gaps);
    if (n_gaps >= r->output_len) /* fewer is a chunk of several tokens; more is impossible */
        return kv_diag_set(diag, -KV_EPARSE,
                           "%s: request %zu: output_lens is %u but itls has %zu entries (at "
                           "most output_lens - 1)",
                           b->path, i, (unsigned)r->output_len, n_gaps);
    r->n_gaps = (uint32_t)n_gaps;
    double e2e = r->ttft_s;
    for (size_t k = 0; k < n_gaps && rc == 0; k++) {
        double g = 0;
        rc = get_time(b->path, json_array_get(gaps, k), "itls", i, &g, diag);
        e2e += g;
    }
    r->e2e_s = e2e;
    return rc;
}

/* request_rate, burstiness, max_concurrency, ramp-up. */
static int read_client(kv_bench *b, json_t *root, kv_diag *diag)
{
    json_t *rate = json_object_get(root, "request_rate");
    if (json_is_string(rate) && strcmp(json_string_value(rate), "inf") == 0)
        b->rate = 0;
    else if (json_is_number(rate) && json_number_value(rate) > 0 &&
             isfinite(json_number_value(rate)))
        b->rate = json_number_value(rate);
    else
        return kv_diag_set(diag, -KV_EPARSE,
                           "%s: 'request_rate' must be a positive number or \"inf\"", b->path);
    json_t *burst = json_object_get(root, "burstiness");
    if (burst && !json_is_null(burst)) {
        if (!json_is_number(burst) || !(json_number_value(burst) > 0))
            return kv_diag_set(diag, -KV_EPARSE, "%s: 'burstiness' must be a positive number",
                               b->path);
        b->burstiness = json_number_value(burst);
    }
    json_t *mc = json_object_get(root, "max_concurrency");
    if (mc && !json_is_null(mc)) {
        if (!json_is_integer(mc))
            return kv_diag_set(diag, -KV_EPARSE, "%s: 'max_concurrency' must be null or an integer",
                               b->path);
        json_int_t c = json_integer_value(mc);
        if (c < 1 || c > (json_int_t)UINT32_MAX)
            return kv_diag_set(diag, -KV_ERANGE,
                               "%s: 'max_concurrency' is %" JSON_INTEGER_FORMAT
                               ": a concurrency must be at least 1",
                               b->path, c);
        b->max_concurrency = (uint32_t)c;
    }
    json_t *ramp = json_object_get(root, "ramp_up_strategy");
    if (ramp && !json_is_null(ramp))
        return kv_diag_set(diag, -KV_EPARSE,
                           "%s: 'ramp_up_strategy' is set: a ramped request rate is not "
                           "rebuilt (give the run as a CSV with its send times)",
                           b->path);
    return 0;
}

/* The arrays, their common length and num_prompts. */
static int read_arrays(const char *path, json_t *root, arrays *a, size_t *n, kv_diag *diag)
{
    int rc = get_array(path, root, "input_lens", &a->in, diag);
    if (rc == 0)
        rc = get_array(path, root, "output_lens", &a->out, diag);
    if (rc == 0)
        rc = get_array(path, root, "ttfts", &a->ttft, diag);
    if (rc == 0)
        rc = get_array(path, root, "itls", &a->itl, diag);
    a->err = json_object_get(root, "errors");
    if (rc == 0 && a->err && !json_is_null(a->err) && !json_is_array(a->err))
        rc = kv_diag_set(diag, -KV_EPARSE, "%s: 'errors' must be an array", path);
    if (rc != 0)
        return rc;
    if (json_is_null(a->err))
        a->err = NULL;
    *n = json_array_size(a->in);
    const char *names[] = {"output_lens", "ttfts", "itls", "errors"};
    json_t *arr[] = {a->out, a->ttft, a->itl, a->err};
    for (int k = 0; k < 4; k++)
        if (arr[k] && json_array_size(arr[k]) != *n)
            return kv_diag_set(diag, -KV_EPARSE,
                               "%s: '%s' has %zu entries but 'input_lens' has %zu", path, names[k],
                               json_array_size(arr[k]), *n);
    json_t *np = json_object_get(root, "num_prompts");
    if (!json_is_integer(np))
        return kv_diag_set(diag, -KV_EPARSE, "%s: missing or non-integer 'num_prompts'", path);
    if (json_integer_value(np) != (json_int_t)*n)
        return kv_diag_set(diag, -KV_EPARSE,
                           "%s: 'num_prompts' is %" JSON_INTEGER_FORMAT
                           " but the per-request arrays have %zu entries",
                           path, json_integer_value(np), *n);
    if (*n == 0 || *n > KV_BENCH_MAX_REQUESTS)
        return kv_diag_set(diag, -KV_ERANGE, "%s: %zu requests (want 1 to %u)", path, *n,
                           (unsigned)KV_BENCH_MAX_REQUESTS);
    return 0;
}

static int load_json(kv_bench **out, const char *path, const char *text, size_t len, kv_diag *diag)
{
    kv_mem_route_json();
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return kv_diag_set(diag, -KV_EPARSE, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    arrays a = {0};
    size_t n = 0;
    int rc = json_is_object(root)
                 ? read_arrays(path, root, &a, &n, diag)
                 : kv_diag_set(diag, -KV_EPARSE, "%s: expected a JSON object", path);
    kv_bench *b = rc == 0 ? bench_new(path, KV_BENCH_VLLM_JSON, n) : NULL;
    if (rc == 0)
        rc = read_client(b, root, diag);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = read_request(b, &a, i, diag);
    if (rc == 0 && b->n_failed == n)
        rc = kv_diag_set(diag, -KV_EPARSE, "%s: every request failed (nothing to compare)", path);
    json_decref(root);
    if (rc != 0) {
        kv_bench_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

/* ---- CSV ------------------------------------------------------------------------------ */

enum { C_SEND, C_PROMPT, C_OUTPUT, C_TTFT, C_E2E, N_COLS };
static const char *const col_names[N_COLS] = {"send_s", "prompt_len", "output_len", "ttft_s",
                                              "e2e_s"};

/* Split line (a final CR trimmed) at commas into at most N_COLS + 1 fields. */
static int split(char *line, char **f)
{
    size_t len = strlen(line);
    while (len > 0 && line[len - 1] == '\r')
        line[--len] = '\0';
    int n = 0;
    for (char *p = line;; p++) {
        f[n++] = p;
        p = strchr(p, ',');
        if (!p || n > N_COLS)
            return n;
        *p = '\0';
    }
}

static int header(const char *path, char *line, int *order, kv_diag *diag)
{
    char *f[N_COLS + 1];
    int n = split(line, f);
    bool seen[N_COLS] = {false};
    for (int k = 0; k < n; k++) {
        int c = 0;
        while (c < N_COLS && strcmp(f[k], col_names[c]) != 0)
            c++;
        if (k >= N_COLS || c == N_COLS || seen[c])
            return kv_diag_set(diag, -KV_EPARSE,
                               "%s:1: the header must name exactly the columns "
                               "send_s,prompt_len,output_len,ttft_s,e2e_s (got '%s')",
                               path, f[k]);
        seen[c] = true;
        order[k] = c;
    }
    if (n != N_COLS)
        return kv_diag_set(diag, -KV_EPARSE,
                           "%s:1: the header must name exactly the columns "
                           "send_s,prompt_len,output_len,ttft_s,e2e_s (%d given)",
                           path, n);
    return 0;
}

static int csv_row(const char *path, uint64_t line, char **f, const int *order, kv_bench_req *r,
                   kv_diag *diag)
{
    double v[N_COLS];
    for (int k = 0; k < N_COLS; k++) {
        int c = order[k];
        if (kv_parse_number(f[k], strlen(f[k]), &v[c]) != 0 || !isfinite(v[c]) || v[c] < 0)
            return kv_diag_set(
                diag, -KV_EPARSE, "%s:%llu: '%s' must be a non-negative %s, got '%s'", path,
                (unsigned long long)line, col_names[c],
                c == C_PROMPT || c == C_OUTPUT ? "integer" : "number of seconds", f[k]);
        if ((c == C_PROMPT || c == C_OUTPUT) &&
            (v[c] != floor(v[c]) || v[c] < 1 || v[c] > KV_TRACE_MAX_LEN ||
             strspn(f[k], "0123456789") != strlen(f[k])))
            return kv_diag_set(
                diag, -KV_ERANGE, "%s:%llu: '%s' must be an integer in [1, %u], got '%s'", path,
                (unsigned long long)line, col_names[c], (unsigned)KV_TRACE_MAX_LEN, f[k]);
    }
    if (v[C_E2E] < v[C_TTFT])
        return kv_diag_set(diag, -KV_ERANGE, "%s:%llu: e2e_s %g is below ttft_s %g", path,
                           (unsigned long long)line, v[C_E2E], v[C_TTFT]);
    *r = (kv_bench_req){.sched_s = v[C_SEND],
                        .send_s = v[C_SEND],
                        .ttft_s = v[C_TTFT],
                        .e2e_s = v[C_E2E],
                        .prompt_len = (uint32_t)v[C_PROMPT],
                        .output_len = (uint32_t)v[C_OUTPUT],
                        .n_gaps = (uint32_t)v[C_OUTPUT] - 1,
                        .ok = true};
    return 0;
}

/* Sort by send time, ties in file order (a merge sort: qsort is not stable), since the
 * replay sends in this order. */
static void sort_sends(kv_bench_req *v, kv_bench_req *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_sends(v, tmp, h);
    sort_sends(v + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = v[j].send_s < v[i].send_s ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

/* One record of the CSV: line ln, NUL-terminated in place, its terminator removed. */
static int csv_line(kv_bench *b, uint64_t ln, char *line, size_t len, int *order, bool *have_header,
                    size_t *room, kv_diag *diag)
{
    const char *path = b->path;
    char *fields[N_COLS + 1];
    if (len > KV_TRACE_MAX_CSV_RECORD)
        return kv_diag_set(diag, -KV_EPARSE, "%s:%llu: a line longer than %zu bytes", path,
                           (unsigned long long)ln, (size_t)KV_TRACE_MAX_CSV_RECORD);
    if (strlen(line) != len)
        return kv_diag_set(diag, -KV_EPARSE, "%s:%llu: a NUL byte", path, (unsigned long long)ln);
    if (strchr(line, '"'))
        return kv_diag_set(diag, -KV_EPARSE, "%s:%llu: quoted fields are not read", path,
                           (unsigned long long)ln);
    if (strspn(line, "\r") == len)
        return 0; /* a blank line */
    if (!*have_header) {
        *have_header = true;
        return header(path, line, order, diag);
    }
    if (split(line, fields) != N_COLS)
        return kv_diag_set(diag, -KV_EPARSE, "%s:%llu: want 5 fields", path,
                           (unsigned long long)ln);
    if (b->n == KV_BENCH_MAX_REQUESTS)
        return kv_diag_set(diag, -KV_ERANGE, "%s:%llu: more than %u requests", path,
                           (unsigned long long)ln, (unsigned)KV_BENCH_MAX_REQUESTS);
    if (b->n == *room)
        b->reqs = kv_xrealloc(b->reqs, (*room = *room * 2 + 64) * sizeof *b->reqs);
    return csv_row(path, ln, fields, order, &b->reqs[b->n++], diag);
}

/* The CSV form, from the whole text (modified in place). */
static int load_csv(kv_bench **out, const char *path, char *text, size_t len, kv_diag *diag)
{
    int order[N_COLS];
    kv_bench *b = bench_new(path, KV_BENCH_CSV, 0);
    size_t room = 0, pos = 0;
    int rc = 0;
    bool have_header = false;
    for (uint64_t ln = 1; rc == 0 && pos < len; ln++) {
        char *line = text + pos, *nl = memchr(line, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - line) : len - pos;
        line[n] = '\0'; /* the newline, or the buffer's own terminator */
        rc = csv_line(b, ln, line, n, order, &have_header, &room, diag);
        pos += n + 1;
    }
    if (rc == 0 && b->n == 0)
        rc = kv_diag_set(diag, -KV_EPARSE, "%s: no requests", path);
    if (rc != 0) {
        kv_bench_free(b);
        return rc;
    }
    kv_bench_req *tmp = kv_xmalloc(b->n * sizeof *tmp);
    sort_sends(b->reqs, tmp, b->n);
    free(tmp);
    b->has_sends = true;
    *out = b;
    return 0;
}

int kv_bench_load_stream(kv_bench **out, FILE *f, const char *name, kv_diag *diag)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = kv_path_slurp(f, name, KV_BENCH_MAX_BYTES, "", &text, &len, diag);
    if (rc != 0)
        return rc;
    size_t lead = 0;
    while (lead < len && text[lead] && strchr(" \t\r\n", text[lead]))
        lead++;
    if (lead < len && (text[lead] == '{' || text[lead] == '['))
        rc = load_json(out, name, text, len, diag);
    else
        rc = load_csv(out, name, text, len, diag);
    free(text);
    return rc;
}

int kv_bench_load(kv_bench **out, const char *path, kv_diag *diag)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return kv_diag_set(diag, errno == ENOENT ? -KV_ENOENT : -KV_EIO, "cannot open '%s': %s",
                           path, strerror(errno));
    int rc = kv_bench_load_stream(out, f, path, diag);
    fclose(f);
    return rc;
}
