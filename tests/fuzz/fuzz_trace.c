/* Harness: the trace readers (kv_trace_load_stream; README "Trace formats").  Built once
 * per format: FUZZ_FORMAT is the forced format (KV_TRACE_AUTO: detection too).
 *
 * Input: one option byte, then the file.  The option byte picks --limit (bits 0-1: none,
 * 1, 3, 7), --trace-block-size (bits 2-3: 512, 1, 16, 7), --time-scale (bits 4-5: 1, 0.5,
 * 1e-6, 1e10), a small line limit (bit 6: 200 bytes) and --rate (bit 7: 2.5, or none).
 *
 * Checks on an accepted trace (trace.c's invariants, README "Reading rules"): 1 ≤ n ≤
 * --limit and ≤ the non-blank lines; rows 0..n−1 once each; lines within the file and
 * increasing with the row; arrivals ≥ 0 and sorted, ties in row order; lengths in
 * 1..KV_TRACE_MAX_LEN; content consistent (tokens: prompt_len ids; hash_ids:
 * ⌈prompt_len/tb⌉ ids); id/adapter/salt NULL or non-empty strings; priority 0 unless the
 * format has it; the detected format is the forced one or a real one; for JSON Lines the
 * row's line holds its prompt and output lengths as written.  On error: a diagnostic that
 * names the file, and a line number (when given) within the file.
 */
#include <stdbool.h>

#include "fuzz.h"
#include "kvsim/trace.h"

#ifndef FUZZ_FORMAT
#define FUZZ_FORMAT KV_TRACE_AUTO
#endif

#define NAME "fuzz.trace"

/* Where physical line `line` (1-based) starts in the file, and its length. */
static bool find_line(const char *f, size_t n, uint64_t line, size_t *start, size_t *len)
{
    size_t at = 0;
    for (uint64_t l = 1; l < line; l++) {
        const char *nl = memchr(f + at, '\n', n - at);
        if (!nl)
            return false;
        at = (size_t)(nl - f) + 1;
    }
    if (at > n || (at == n && line > 1 && n > 0 && f[n - 1] == '\n'))
        return false;
    const char *nl = memchr(f + at, '\n', n - at);
    *start = at;
    *len = nl ? (size_t)(nl - f) - at : n - at;
    return true;
}

static bool holds_number(const char *s, size_t n, uint32_t v)
{
    char num[16];
    int k = snprintf(num, sizeof num, "%u", v);
    for (size_t i = 0; i + (size_t)k <= n; i++)
        if (memcmp(s + i, num, (size_t)k) == 0)
            return true;
    return false;
}

static void check_trace(const kv_trace *t, const kv_trace_options *o, const char *f, size_t n)
{
    size_t lines = 1, nonblank = 0;
    bool blank = true;
    for (size_t i = 0; i < n; i++) {
        if (f[i] == '\n') {
            lines++;
            nonblank += !blank;
            blank = true;
        } else if (f[i] != ' ' && f[i] != '\t' && f[i] != '\r' && f[i] != '\v' && f[i] != '\f') {
            blank = false;
        }
    }
    nonblank += !blank;
    bool json = t->format == KV_TRACE_KVSIM_JSONL || t->format == KV_TRACE_MOONCAKE;
    FUZZ_CHECK(t->n >= 1, "an empty trace accepted");
    FUZZ_CHECK(!o->limit || t->n <= o->limit, "%zu rows past --limit %llu", t->n,
               (unsigned long long)o->limit);
    FUZZ_CHECK(t->n <= nonblank, "%zu rows from %zu non-blank lines", t->n, nonblank);
    FUZZ_CHECK(FUZZ_FORMAT == KV_TRACE_AUTO ? t->format != KV_TRACE_AUTO
                                            : t->format == (kv_trace_format)FUZZ_FORMAT,
               "format %d", (int)t->format);
    FUZZ_CHECK(t->trace_block_size == (o->trace_block_size ? o->trace_block_size : 512), "tb");
    FUZZ_CHECK(!strcmp(t->path, NAME), "path '%s'", t->path);
    bool *seen = calloc(t->n, 1);
    uint32_t *line_of = calloc(t->n, sizeof *line_of);
    for (size_t i = 0; i < t->n; i++) {
        const kv_request_spec *q = &t->reqs[i];
        FUZZ_CHECK(q->row < t->n && !seen[q->row], "row %u", q->row);
        seen[q->row] = true;
        line_of[q->row] = q->line;
        FUZZ_CHECK(q->line >= 1 && q->line <= lines, "line %u of %zu", q->line, lines);
        FUZZ_CHECK(q->arrival_ns >= 0, "arrival %lld", (long long)q->arrival_ns);
        FUZZ_CHECK(q->prompt_len >= 1 && q->prompt_len <= KV_TRACE_MAX_LEN, "prompt %u",
                   q->prompt_len);
        FUZZ_CHECK(q->output_len >= 1 && q->output_len <= KV_TRACE_MAX_LEN, "output %u",
                   q->output_len);
        if (i) {
            const kv_request_spec *p = &t->reqs[i - 1];
            FUZZ_CHECK(p->arrival_ns < q->arrival_ns ||
                           (p->arrival_ns == q->arrival_ns && p->row < q->row),
                       "not ordered at %zu", i);
        }
        switch (q->content) {
        case KV_CONTENT_NONE:
            FUZZ_CHECK(!q->tokens && !q->hash_ids && !q->n_hash_ids, "content none");
            break;
        case KV_CONTENT_TOKENS: {
            FUZZ_CHECK(q->tokens && !q->hash_ids, "tokens");
            FUZZ_CHECK(t->format == KV_TRACE_KVSIM_JSONL, "tokens from format %d", t->format);
            volatile uint32_t sum = 0;
            for (uint32_t k = 0; k < q->prompt_len; k++) /* ASan checks the extent */
                sum += q->tokens[k];
            (void)sum;
            break;
        }
        case KV_CONTENT_HASH_IDS: {
            FUZZ_CHECK(q->hash_ids && !q->tokens && json, "hash ids");
            uint32_t tb = t->trace_block_size;
            FUZZ_CHECK(q->n_hash_ids == (q->prompt_len + tb - 1) / tb, "%u hash ids for %u/%u",
                       q->n_hash_ids, q->prompt_len, tb);
            volatile uint64_t sum = 0;
            for (uint32_t k = 0; k < q->n_hash_ids; k++)
                sum += q->hash_ids[k];
            (void)sum;
            for (uint32_t k = 0; k < q->n_hash_ids; k++)
                FUZZ_CHECK(q->hash_ids[k] <= (uint64_t)INT64_MAX, "hash id");
            break;
        }
        default:
            FUZZ_CHECK(0, "content %d", (int)q->content);
        }
        FUZZ_CHECK(!q->id || *q->id, "empty id");
        FUZZ_CHECK(!q->adapter || *q->adapter, "empty adapter");
        FUZZ_CHECK(!q->salt || *q->salt, "empty salt");
        if (t->format != KV_TRACE_KVSIM_JSONL && t->format != KV_TRACE_KVSIM_CSV)
            FUZZ_CHECK(!q->id && !q->adapter && !q->salt && q->priority == 0,
                       "fields the format does not have");
        if (json) { /* one row per line: the line holds both lengths as written */
            size_t at, len;
            FUZZ_CHECK(find_line(f, n, q->line, &at, &len), "no line %u", q->line);
            FUZZ_CHECK(holds_number(f + at, len, q->prompt_len) &&
                           holds_number(f + at, len, q->output_len),
                       "line %u does not hold %u and %u", q->line, q->prompt_len, q->output_len);
        }
    }
    for (size_t r = 1; r < t->n; r++)
        FUZZ_CHECK(line_of[r] > line_of[r - 1], "rows %zu, %zu on lines %u, %u", r - 1, r,
                   line_of[r - 1], line_of[r]);
    free(seen);
    free(line_of);
}

static void check_error(int rc, const kv_diag *d, const char *f, size_t n)
{
    fuzz_check_diag(rc, d);
    FUZZ_CHECK(rc == -KV_EPARSE || rc == -KV_ERANGE || rc == -KV_EINVAL, "rc %d: %s", rc, d->msg);
    if (rc == -KV_EINVAL && strncmp(d->msg, NAME, strlen(NAME)) != 0)
        return; /* an option: "time scale must be …" */
    size_t k = strlen(NAME);
    FUZZ_CHECK(strncmp(d->msg, NAME, k) == 0 && d->msg[k] == ':', "diag does not name the file: %s",
               d->msg);
    if (d->msg[k + 1] >= '0' && d->msg[k + 1] <= '9') {
        size_t lines = 1;
        for (size_t i = 0; i < n; i++)
            lines += f[i] == '\n';
        unsigned long long l = strtoull(d->msg + k + 1, NULL, 10);
        FUZZ_CHECK(l >= 1 && l <= lines, "line %llu of %zu: %s", l, lines, d->msg);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const uint64_t limits[] = {0, 1, 3, 7};
    static const uint32_t tbs[] = {0, 1, 16, 7};
    static const double scales[] = {0, 0.5, 1e-6, 1e10};
    uint8_t b = data[0];
    kv_trace_options o = {
        .format = (kv_trace_format)FUZZ_FORMAT,
        .limit = limits[b & 3],
        .trace_block_size = tbs[(b >> 2) & 3],
        .time_scale = scales[(b >> 4) & 3],
        .max_line = (b >> 6) & 1 ? 200 : 0,
        .rate = (b >> 7) & 1 ? 0 : 2.5,
        .seed = 7,
    };
    const char *f = (const char *)data + 1;
    size_t n = size - 1;
    FILE *fp = fuzz_stream(data + 1, n);
    if (!fp)
        return 0;
    kv_trace *t = (kv_trace *)&o; /* must come back NULL on error */
    kv_diag d = {{0}};
    int rc = kv_trace_load_stream(&t, fp, NAME, &o, &d);
    fclose(fp);
    if (rc == 0) {
        FUZZ_CHECK(t != NULL, "no trace");
        check_trace(t, &o, f, n);
        kv_trace_free(t);
    } else {
        FUZZ_CHECK(t == NULL, "*out set on error");
        check_error(rc, &d, f, n);
    }
    return 0;
}
