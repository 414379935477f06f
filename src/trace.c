/* trace: load a request trace file into an ordered, validated request stream (DESIGN §7).
 *
 * Pipeline.  kv_trace_load validates the options, opens the file and finds the first
 * non-blank line.  A '{' there (or a forced JSON format) hands the file to trace_json.c,
 * anything else to trace_csv.c; each family reader detects its exact format from the first
 * row's keys or the header's columns, then appends one kv_request_spec per data row, in
 * file order, stopping after `limit` rows without reading further.  This file then
 * finishes the stream: Azure absolute times become relative to the earliest TIMESTAMP
 * read, --time-scale multiplies every arrival (llround of a double product), and a stable
 * sort orders requests by arrival with ties in file order (`row` breaks them, so qsort is
 * stable here).
 *
 * Lines.  kvsim reads them itself (fread into a 64 KiB buffer, memchr for the newline)
 * rather than with getline, so that a line is bounded before it is buffered: a line longer
 * than the format's limit (KV_TRACE_MAX_JSON_LINE, KV_TRACE_MAX_CSV_RECORD) is an error
 * once that many bytes have been read, and a NUL byte as soon as it is read.  The line
 * buffer doubles up to the limit; its allocation failing is this line's error (-KV_ENOMEM
 * naming file and line), while every other allocation goes to the out-of-memory handler.
 * Nothing is kept per line but the row.
 *
 * Memory.  One kv_request_spec array (grown by doubling) plus an arena (kv__arena) for
 * every id, adapter, salt, token array and hash-id array: a million-row trace costs a
 * handful of large allocations, and kv_trace_free releases it all at once.
 *
 * Invariants of a loaded trace:  n ≥ 1;  reqs[i].arrival_ns ≤ reqs[i+1].arrival_ns, and
 * equal arrivals have increasing row;  {reqs[i].row} = {0..n−1};  content == TOKENS ⇔
 * tokens != NULL (prompt_len ids);  content == HASH_IDS ⇔ hash_ids != NULL with
 * n_hash_ids == ⌈prompt_len/tb⌉;  empty adapter/salt/session/id strings are stored as NULL.
 *
 * Errors.  Every message starts with the path as given, and with ":line" (1-based
 * physical line, where the offending row or record starts) whenever a line is to blame.
 * On error nothing is returned: the reader is torn down and *out stays NULL.
 *
 * Out of scope: content hashing (blockhash), --shared-prefix (engine), any simulation.
 */
#include "kvsim/trace.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "trace_internal.h"

/* 2^63 as a double: the first value llround cannot represent in int64. */
#define NS_LIMIT 9223372036854775808.0

static const char *const format_names[] = {
    [KV_TRACE_AUTO] = "auto",     [KV_TRACE_KVSIM_JSONL] = "jsonl",
    [KV_TRACE_KVSIM_CSV] = "csv", [KV_TRACE_MOONCAKE] = "mooncake",
    [KV_TRACE_AZURE] = "azure",   [KV_TRACE_LENGTHS] = "lengths",
};
#define NUM_FORMATS (sizeof format_names / sizeof format_names[0])

int kv_trace_format_parse(const char *s, kv_trace_format *out)
{
    for (size_t i = 0; i < NUM_FORMATS; i++) {
        if (strcmp(s, format_names[i]) == 0) {
            *out = (kv_trace_format)i;
            return 0;
        }
    }
    return -KV_EINVAL;
}

int kv_trace_format_parse_diag(const char *s, kv_trace_format *out, kv_diag *diag)
{
    if (kv_trace_format_parse(s, out) == 0)
        return 0;
    return kv_diag_set(diag, -KV_EINVAL, "unknown trace format '%s' (expected one of: %s)", s,
                       KV_TRACE_FORMAT_NAMES);
}

const char *kv_trace_format_name(kv_trace_format f)
{
    return (unsigned)f < NUM_FORMATS ? format_names[f] : "unknown";
}

/* ---- arena ------------------------------------------------------------------------- */

#define ARENA_CHUNK ((size_t)256 * 1024)

typedef struct chunk {
    struct chunk *next;
    size_t size; /* usable bytes in data */
    max_align_t data[];
} chunk;

struct kv__arena {
    chunk *head; /* newest chunk first */
    char *p;     /* next free byte in head */
    size_t left; /* free bytes after p in head */
};

kv__arena *kv__arena_create(void)
{
    return kv_xcalloc(1, sizeof(kv__arena));
}

void kv__arena_destroy(kv__arena *a)
{
    if (!a)
        return;
    for (chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(a);
}

void *kv__arena_alloc(kv__arena *a, size_t n, size_t align)
{
    assert(align && (align & (align - 1)) == 0 && align <= alignof(max_align_t));
    size_t pad = (size_t)(-(uintptr_t)a->p) & (align - 1);
    if (!a->head || a->left < pad + n) {
        size_t size = n > ARENA_CHUNK / 4 ? n : ARENA_CHUNK;
        chunk *c = kv_xmalloc(offsetof(chunk, data) + size);
        c->size = size;
        if (size == n && a->head) {
            /* a big array gets a chunk of its own, behind the current one, so the
             * current chunk's free tail stays usable */
            c->next = a->head->next;
            a->head->next = c;
            return c->data;
        }
        c->next = a->head;
        a->head = c;
        a->p = (char *)c->data;
        a->left = size;
        pad = 0;
    }
    void *r = a->p + pad;
    a->p += pad + n;
    a->left -= pad + n;
    return r;
}

char *kv__arena_strndup(kv__arena *a, const char *s, size_t n)
{
    char *d = kv__arena_alloc(a, n + 1, 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* ---- reader helpers ---------------------------------------------------------------- */

int kv__fail(kv__reader *r, int err, uint64_t line, const char *fmt, ...)
{
    if (!r->diag)
        return err;
    char msg[sizeof r->diag->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line)
        return kv_diag_set(r->diag, err, "%s:%llu: %s", r->path, (unsigned long long)line, msg);
    return kv_diag_set(r->diag, err, "%s: %s", r->path, msg);
}

#define IN_CHUNK ((size_t)64 * 1024)

static void format_bytes(char *buf, size_t n, size_t bytes)
{
    if (bytes >= ((size_t)1 << 20) && bytes % ((size_t)1 << 20) == 0)
        snprintf(buf, n, "%zu bytes (%zu MiB)", bytes, bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(buf, n, "%zu bytes (%zu KiB)", bytes, bytes >> 10);
    else
        snprintf(buf, n, "%zu bytes", bytes);
}

int kv__too_long(kv__reader *r, uint64_t line)
{
    char lim[64];
    format_bytes(lim, sizeof lim, r->max_line);
    return kv__fail(r, -KV_EPARSE, line, "%s is longer than the limit of %s", r->max_what, lim);
}

/* Append n bytes to the line in r->buf, growing it by doubling up to max_line + 2 bytes
 * (a CR and the NUL).
 * The allocation may fail without the process being out of memory for good (a line of
 * hundreds of MB under a ulimit): that is this line's error, with file and line, not a
 * call to the out-of-memory handler. */
static int line_append(kv__reader *r, const char *s, size_t n)
{
    size_t need = r->len + n + 1;
    if (need > r->buf_cap) {
        size_t cap = r->buf_cap ? r->buf_cap : 256;
        while (cap < need)
            cap = cap > (r->max_line + 2) / 2 ? r->max_line + 2 : cap * 2;
        char *p = realloc(r->buf, cap);
        if (!p)
            return kv__fail(r, -KV_ENOMEM, r->lineno + 1,
                            "out of memory reading this line (%zu bytes read so far)", r->len);
        r->buf = p;
        r->buf_cap = cap;
    }
    memcpy(r->buf + r->len, s, n);
    r->len += n;
    return 0;
}

/* Column (1-based, as the user counts it: after a byte-order mark) of a NUL at byte `at`
 * of the raw line. */
static size_t nul_column(const kv__reader *r, size_t at)
{
    bool bom = r->lineno == 0 && r->len >= 3 && memcmp(r->buf, "\xEF\xBB\xBF", 3) == 0;
    return at + 1 - (bom && at >= 3 ? 3 : 0);
}

int kv__next_line(kv__reader *r)
{
    if (r->pending) {
        r->pending = false;
        return 1;
    }
    if (!r->in)
        r->in = kv_xmalloc(IN_CHUNK);
    r->len = 0;
    bool any = false, newline = false;
    while (!newline) {
        if (r->in_pos == r->in_len) {
            if (r->in_eof)
                break;
            errno = 0;
            r->in_len = fread(r->in, 1, IN_CHUNK, r->f);
            r->in_pos = 0;
            if (r->in_len < IN_CHUNK) {
                /* fread is short only at the end of the stream or on an error, and an error
                 * must not look like the end of the trace. */
                int e = errno;
                if (ferror(r->f))
                    return kv__fail(r, -KV_EIO, r->lineno || any ? r->lineno + 1 : 0,
                                    "cannot read: %s", strerror(e ? e : EIO));
                r->in_eof = true;
            }
            if (r->in_len == 0)
                break;
        }
        any = true;
        const char *s = r->in + r->in_pos;
        size_t avail = r->in_len - r->in_pos;
        const char *nl = memchr(s, '\n', avail);
        size_t take = nl ? (size_t)(nl - s) : avail;
        if (take > r->max_line + 1 - r->len) /* + 1: room for the '\r' of a CRLF */
            return kv__too_long(r, r->lineno + 1);
        /* NUL bytes are found as they arrive, so a stream of them (/dev/zero) fails at
         * once rather than at the length limit: text formats only, a NUL would cut a CSV
         * field or a JSON string short. */
        const char *nul = memchr(s, '\0', take);
        int rc = line_append(r, s, nul ? (size_t)(nul - s) + 1 : take);
        if (rc < 0)
            return rc;
        if (nul) {
            size_t col = nul_column(r, r->len - 1);
            r->lineno++;
            return kv__fail(r, -KV_EPARSE, r->lineno, "NUL byte at column %zu", col);
        }
        r->in_pos += take + (nl != NULL);
        newline = nl != NULL;
    }
    if (!any)
        return 0;
    size_t n = r->len;
    if (n && r->buf[n - 1] == '\r')
        n--;
    if (n > r->max_line)
        return kv__too_long(r, r->lineno + 1);
    r->lineno++;
    if (r->lineno == 1 && n >= 3 && memcmp(r->buf, "\xEF\xBB\xBF", 3) == 0) {
        memmove(r->buf, r->buf + 3, n - 3);
        n -= 3;
    }
    r->buf[n] = '\0';
    r->len = n;
    return 1;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

bool kv__is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!is_space(s[i]))
            return false;
    }
    return true;
}

bool kv__limit_reached(const kv__reader *r)
{
    return r->limit && r->n >= r->limit;
}

int kv__push(kv__reader *r, uint64_t line, kv_request_spec **out)
{
    if (r->n >= UINT32_MAX || line > UINT32_MAX)
        return kv__fail(r, -KV_ERANGE, line, "too many rows (at most %u are supported)",
                        (unsigned)UINT32_MAX);
    void *p = r->reqs;
    kv_grow(&p, &r->cap, r->n + 1, sizeof *r->reqs);
    r->reqs = p;
    kv_request_spec *q = &r->reqs[r->n];
    memset(q, 0, sizeof *q);
    q->row = (uint32_t)r->n;
    q->line = (uint32_t)line;
    r->n++;
    *out = q;
    return 0;
}

int kv__time_to_ns(double value, double ns_per_unit, int64_t *out)
{
    if (!isfinite(value))
        return KV__TIME_NONFINITE;
    if (value < 0)
        return KV__TIME_NEGATIVE;
    double ns = value * ns_per_unit;
    if (!(ns < NS_LIMIT))
        return KV__TIME_OVERFLOW;
    *out = llround(ns);
    return KV__TIME_OK;
}

int kv__time_fail(kv__reader *r, uint64_t line, const char *field, int why, const char *shown)
{
    switch (why) {
    case KV__TIME_NONFINITE:
        return kv__fail(r, -KV_ERANGE, line, "'%s' must be a finite number, got %s", field, shown);
    case KV__TIME_NEGATIVE:
        return kv__fail(r, -KV_ERANGE, line, "'%s' must not be negative, got %s", field, shown);
    default:
        assert(why == KV__TIME_OVERFLOW);
        return kv__fail(r, -KV_ERANGE, line, "'%s' is too large for 64-bit nanoseconds, got %s",
                        field, shown);
    }
}

uint32_t kv__hash_blocks(uint32_t prompt_len, uint32_t tb)
{
    return (uint32_t)(((uint64_t)prompt_len + tb - 1) / tb);
}

/* ---- finishing --------------------------------------------------------------------- */

/* Azure: arrival = (abs_sec, frac ns) − earliest (abs_sec, frac ns), in exact integers. */
static int azure_relative(kv__reader *r)
{
    size_t first = 0;
    for (size_t i = 1; i < r->n; i++) {
        if (r->abs_sec[i] < r->abs_sec[first] ||
            (r->abs_sec[i] == r->abs_sec[first] &&
             r->reqs[i].arrival_ns < r->reqs[first].arrival_ns))
            first = i;
    }
    int64_t sec0 = r->abs_sec[first], frac0 = r->reqs[first].arrival_ns;
    for (size_t i = 0; i < r->n; i++) {
        int64_t dsec = r->abs_sec[i] - sec0; /* ≥ 0; |abs_sec| < 2^39, no overflow */
        int64_t dfrac = r->reqs[i].arrival_ns - frac0;
        if (dsec > (INT64_MAX - 999999999) / 1000000000)
            return kv__fail(r, -KV_ERANGE, r->reqs[i].line,
                            "'TIMESTAMP' is too far after the earliest TIMESTAMP (line %u) "
                            "for 64-bit nanoseconds",
                            (unsigned)r->reqs[first].line);
        r->reqs[i].arrival_ns = dsec * 1000000000 + dfrac;
    }
    return 0;
}

static int apply_time_scale(kv__reader *r, double scale)
{
    for (size_t i = 0; i < r->n; i++) {
        double x = (double)r->reqs[i].arrival_ns * scale;
        if (!(x < NS_LIMIT))
            return kv__fail(r, -KV_ERANGE, r->reqs[i].line,
                            "arrival %lld ns scaled by time scale %g is too large for 64-bit "
                            "nanoseconds",
                            (long long)r->reqs[i].arrival_ns, scale);
        r->reqs[i].arrival_ns = llround(x);
    }
    return 0;
}

static int by_arrival(const void *pa, const void *pb)
{
    const kv_request_spec *a = pa, *b = pb;
    if (a->arrival_ns != b->arrival_ns)
        return a->arrival_ns < b->arrival_ns ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

static void sort_by_arrival(kv__reader *r)
{
    for (size_t i = 1; i < r->n; i++) {
        if (r->reqs[i].arrival_ns < r->reqs[i - 1].arrival_ns) {
            qsort(r->reqs, r->n, sizeof *r->reqs, by_arrival);
            return;
        }
    }
}

/* ---- public entry ------------------------------------------------------------------ */

static int open_and_read(kv__reader *r, bool is_json_format, bool is_csv_format)
{
    int rc;
    while ((rc = kv__next_line(r)) == 1 && kv__is_blank(r->buf, r->len))
        ;
    if (rc < 0)
        return rc;
    if (rc == 0)
        return kv__fail(r, -KV_EPARSE, 0, "trace has no requests");
    r->pending = true;
    if (!is_json_format && !is_csv_format) {
        size_t i = 0;
        while (i < r->len && is_space(r->buf[i]))
            i++;
        if (r->buf[i] == '[')
            return kv__fail(r, -KV_EPARSE, r->lineno,
                            "cannot detect the trace format: a JSON array; kvsim reads JSON "
                            "Lines (one object per line) or CSV");
        is_json_format = r->buf[i] == '{';
    }
    rc = is_json_format ? kv__read_jsonl(r) : kv__read_csv(r);
    if (rc < 0)
        return rc;
    if (r->n == 0)
        return kv__fail(r, -KV_EPARSE, 0, "trace has no requests");
    return 0;
}

static const kv_trace_options default_options;

static int check_options(const kv_trace_options *opt, kv_diag *diag)
{
    assert((unsigned)opt->format < NUM_FORMATS);
    double scale = opt->time_scale == 0 ? 1.0 : opt->time_scale;
    if (!(scale > 0) || !isfinite(scale))
        return kv_diag_set(diag, -KV_EINVAL, "time scale must be a positive finite number, got %g",
                           scale);
    return 0;
}

static int load_stream(kv_trace **out, FILE *f, const char *path, const kv_trace_options *opt,
                       kv_diag *diag)
{
    bool json = opt->format == KV_TRACE_KVSIM_JSONL || opt->format == KV_TRACE_MOONCAKE;
    bool csv = opt->format == KV_TRACE_KVSIM_CSV || opt->format == KV_TRACE_AZURE ||
               opt->format == KV_TRACE_LENGTHS;
    kv__reader r = {
        .path = path,
        .diag = diag,
        .format = opt->format,
        .tb = opt->trace_block_size ? opt->trace_block_size : 512,
        .limit = opt->limit,
        .rate = opt->rate,
        .seed = opt->seed,
        .f = f,
        /* Until the format is known the line limit is the larger one; the CSV reader lowers
         * it (and checks its header against it). */
        .max_line = csv ? KV_TRACE_MAX_CSV_RECORD : KV_TRACE_MAX_JSON_LINE,
        .max_what = csv ? "a CSV record" : "a JSON Lines row",
    };
    if (opt->max_line && opt->max_line < r.max_line)
        r.max_line = opt->max_line;
    kv_mem_route_json();
    r.arena = kv__arena_create();
    int rc = open_and_read(&r, json, csv);
    free(r.in);
    free(r.buf);
    if (rc == 0 && r.format == KV_TRACE_AZURE)
        rc = azure_relative(&r);
    free(r.abs_sec);
    double scale = opt->time_scale == 0 ? 1.0 : opt->time_scale;
    if (rc == 0 && scale != 1.0)
        rc = apply_time_scale(&r, scale);
    if (rc < 0) {
        free(r.reqs);
        kv__arena_destroy(r.arena);
        return rc;
    }
    sort_by_arrival(&r);

    kv_trace *t = kv_xcalloc(1, sizeof *t);
    t->reqs = r.reqs;
    t->n = r.n;
    t->format = r.format;
    t->trace_block_size = r.tb;
    t->path = kv_xstrdup(path);
    t->arena__ = r.arena;
    *out = t;
    return 0;
}

int kv_trace_load_stream(kv_trace **out, FILE *f, const char *name, const kv_trace_options *opt,
                         kv_diag *diag)
{
    assert(out && f && name);
    *out = NULL;
    if (!opt)
        opt = &default_options;
    int rc = check_options(opt, diag);
    return rc < 0 ? rc : load_stream(out, f, name, opt, diag);
}

int kv_trace_load(kv_trace **out, const char *path, const kv_trace_options *opt, kv_diag *diag)
{
    assert(out && path);
    *out = NULL;
    if (!opt)
        opt = &default_options;
    int rc = check_options(opt, diag);
    if (rc < 0)
        return rc;
    if (strcmp(path, "-") == 0) { /* TRACE "-": standard input, read once */
        rc = load_stream(out, stdin, "<stdin>", opt, diag);
        if (rc == 0) { /* messages say <stdin>; the trace's name is what was given */
            free((*out)->path);
            (*out)->path = kv_xstrdup(path);
        }
        return rc;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        return kv_diag_set(diag, e == ENOENT ? -KV_ENOENT : -KV_EIO, "cannot open '%s': %s", path,
                           strerror(e));
    }
    rc = load_stream(out, f, path, opt, diag);
    fclose(f);
    return rc;
}

/* The fields kv_trace_options_equal compares, in order: a field added to kv_trace_options
 * changes its size and stops the build here until it is compared too. */
struct trace_options_fields {
    kv_trace_format format;
    uint32_t trace_block_size;
    uint64_t limit;
    double time_scale, rate;
    uint64_t seed;
    size_t max_line;
};
_Static_assert(sizeof(kv_trace_options) == sizeof(struct trace_options_fields),
               "kv_trace_options_equal must compare every field of kv_trace_options");

bool kv_trace_options_equal(const kv_trace_options *a, const kv_trace_options *b)
{
    return a->format == b->format && a->trace_block_size == b->trace_block_size &&
           a->limit == b->limit && a->time_scale == b->time_scale && a->rate == b->rate &&
           a->seed == b->seed && a->max_line == b->max_line;
}

void kv_trace_free(kv_trace *t)
{
    if (!t)
        return;
    kv__arena_destroy(t->arena__);
    free(t->reqs);
    free(t->path);
    free(t);
}
