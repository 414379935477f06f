/* report: summary.json, perf.json, timeseries.csv and requests.csv (DESIGN §8).
 *
 * Determinism: summary.json, timeseries.csv and requests.csv depend only on the run's
 * inputs: JSON keys in a fixed insertion order, numbers printed with fixed formats, times
 * from integer nanoseconds.  Wall-clock figures live in perf.json only.
 *
 * Atomicity: each file is written as "<name>.tmp" in the output directory and renamed
 * into place by kv_out_commit only after every file was written and closed without error
 * (fflush/ferror/fclose checked).  rename(2) within one directory is atomic, so a reader
 * sees either the old complete file or the new complete one.
 */
#include "kvsim/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvsim/mem.h"
#include "kvsim/strbuf.h"

/* ---- CSV rows ----------------------------------------------------------------------- */

void kv_csv_field(kv_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        kv_buf_puts(b, s);
        return;
    }
    kv_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            kv_buf_putc(b, '"');
        kv_buf_putc(b, *s);
    }
    kv_buf_putc(b, '"');
}

const json_t *kv_json_at(const json_t *root, const char *path)
{
    char key[64];
    const json_t *v = root;
    while (v && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        v = json_is_object(v) ? json_object_get(v, key) : NULL;
        path += n + (path[n] == '.');
    }
    return v;
}

/* ---- requests.csv ------------------------------------------------------------------ */

/* A time column: empty while the event has not happened. */
static void put_time(kv_buf *b, int64_t ns)
{
    if (ns >= 0)
        kv_buf_ns(b, ns);
}

/* A latency column: finished requests only, empty when undefined. */
static void put_secs(kv_buf *b, const kv_req *r, double (*fn)(const kv_req *))
{
    double v = r->status == KV_REQ_FINISHED ? fn(r) : -1;
    if (v >= 0)
        kv_buf_printf(b, "%.9f", v);
}

static void col_id(kv_buf *b, const kv_req *r)
{
    if (r->spec->id)
        kv_csv_field(b, r->spec->id);
    else
        kv_buf_u64(b, r->spec->row);
}
static void col_arrival(kv_buf *b, const kv_req *r)
{
    put_time(b, r->spec->arrival_ns);
}
static void col_first_scheduled(kv_buf *b, const kv_req *r)
{
    put_time(b, r->first_scheduled_ns);
}
static void col_first_token(kv_buf *b, const kv_req *r)
{
    put_time(b, r->first_token_ns);
}
static void col_finish(kv_buf *b, const kv_req *r)
{
    put_time(b, r->finish_ns);
}
static void col_prompt_len(kv_buf *b, const kv_req *r)
{
    kv_buf_u64(b, r->spec->prompt_len);
}
static void col_output_len(kv_buf *b, const kv_req *r)
{
    kv_buf_u64(b, r->spec->output_len);
}
static void col_hit_tokens(kv_buf *b, const kv_req *r)
{
    kv_buf_u64(b, r->hit_tokens);
}
static void col_num_cached_tokens(kv_buf *b, const kv_req *r)
{
    kv_buf_u64(b, r->num_cached_tokens);
}
static void col_preemptions(kv_buf *b, const kv_req *r)
{
    kv_buf_u64(b, r->preemptions);
}
static void col_ttft(kv_buf *b, const kv_req *r)
{
    put_secs(b, r, kv_req_ttft_s);
}
static void col_tpot(kv_buf *b, const kv_req *r)
{
    put_secs(b, r, kv_req_tpot_s);
}
static void col_e2e(kv_buf *b, const kv_req *r)
{
    put_secs(b, r, kv_req_e2e_s);
}
static void col_status(kv_buf *b, const kv_req *r)
{
    kv_buf_puts(b, kv_req_status_name(r->status));
}

/* requests.csv's columns, in order: the header and every row come from this table. */
static const struct {
    const char *name;
    void (*put)(kv_buf *b, const kv_req *r);
} request_columns[] = {
    {"id", col_id},
    {"arrival_s", col_arrival},
    {"first_scheduled_s", col_first_scheduled},
    {"first_token_s", col_first_token},
    {"finish_s", col_finish},
    {"prompt_len", col_prompt_len},
    {"output_len", col_output_len},
    {"hit_tokens", col_hit_tokens},
    {"num_cached_tokens", col_num_cached_tokens},
    {"preemptions", col_preemptions},
    {"ttft_s", col_ttft},
    {"tpot_s", col_tpot},
    {"e2e_s", col_e2e},
    {"status", col_status},
};
enum { N_REQUEST_COLUMNS = sizeof request_columns / sizeof request_columns[0] };

void kv_report_requests_header(kv_buf *b)
{
    for (size_t c = 0; c < N_REQUEST_COLUMNS; c++) {
        if (c)
            kv_buf_putc(b, ',');
        kv_buf_puts(b, request_columns[c].name);
    }
    kv_buf_putc(b, '\n');
}

void kv_report_request_row(kv_buf *b, const kv_req *r)
{
    for (size_t c = 0; c < N_REQUEST_COLUMNS; c++) {
        if (c)
            kv_buf_putc(b, ',');
        request_columns[c].put(b, r);
    }
    kv_buf_putc(b, '\n');
}

/* ---- timeseries.csv ----------------------------------------------------------------- */

void kv_report_timeseries_header(kv_buf *b)
{
    const char *sep = "";
#define X(name, kind, member)                                                                      \
    kv_buf_puts(b, sep);                                                                           \
    kv_buf_puts(b, #name);                                                                         \
    sep = ",";
    KV_SAMPLE_COLUMNS(X)
#undef X
    kv_buf_putc(b, '\n');
}

#define PUT_TIME(b, v) kv_buf_ns(b, v)
#define PUT_U(b, v)    kv_buf_u64(b, (uint64_t)(v))
#define PUT_F6(b, v)   kv_buf_printf(b, "%.6f", v)

void kv_report_timeseries_row(kv_buf *b, const kv_sample *s)
{
    bool first = true;
#define X(name, kind, member)                                                                      \
    if (!first)                                                                                    \
        kv_buf_putc(b, ',');                                                                       \
    first = false;                                                                                 \
    PUT_##kind(b, s->member);
    KV_SAMPLE_COLUMNS(X)
#undef X
    kv_buf_putc(b, '\n');
}

/* ---- atomic files ------------------------------------------------------------------- */

enum { F_TIMESERIES, F_REQUESTS, F_SUMMARY, F_PERF, F_COUNT };
static const char *const file_names[F_COUNT] = {"timeseries.csv", "requests.csv", "summary.json",
                                                "perf.json"};

struct kv_out {
    char *dir;
    char *tmp[F_COUNT]; /* temp paths; NULL when not created */
    FILE *ts;
    kv_buf row; /* timeseries rows not yet handed to stdio */
    bool committed;
};

/* Rows are formatted into a buffer and written in large pieces. */
enum { ROW_FLUSH = 1 << 16 };

static void flush_rows(kv_out *o)
{
    if (o->row.len)
        fwrite(o->row.s, 1, o->row.len, o->ts);
    kv_buf_reset(&o->row);
}

static char *join_path(const char *dir, const char *name, const char *suffix)
{
    size_t n = strlen(dir) + strlen(name) + strlen(suffix) + 2;
    char *p = kv_xmalloc(n);
    snprintf(p, n, "%s/%s%s", dir, name, suffix);
    return p;
}

int kv_mkdir_p(const char *dir, kv_diag *diag)
{
    char *p = kv_xstrdup(dir);
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                rc = kv_diag_set(diag, -KV_EIO, "cannot create directory '%s': %s", p,
                                 strerror(errno));
                break;
            }
            *s = c;
            if (c == '\0')
                break;
        }
    }
    free(p);
    struct stat st;
    if (rc == 0 && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
        rc = kv_diag_set(diag, -KV_EIO, "'%s' is not a directory", dir);
    return rc;
}

static int close_checked(FILE *f, const char *path, kv_diag *diag)
{
    int bad = fflush(f) != 0 || ferror(f);
    bad |= fclose(f) != 0;
    if (bad)
        return kv_diag_set(diag, -KV_EIO, "cannot write '%s': %s", path,
                           errno ? strerror(errno) : "write error");
    return 0;
}

int kv_write_json_file(const char *path, const json_t *v, kv_diag *diag)
{
    char *tmp = join_path(path, "", ".tmp");
    FILE *f = fopen(tmp, "w");
    int rc = 0;
    if (!f) {
        rc = kv_diag_set(diag, -KV_EIO, "cannot write '%s': %s", tmp, strerror(errno));
    } else {
        if (json_dumpf(v, f, KV_JSON_FLAGS) != 0)
            errno = EIO;
        fputc('\n', f);
        rc = close_checked(f, tmp, diag);
        if (rc == 0 && rename(tmp, path) != 0)
            rc = kv_diag_set(diag, -KV_EIO, "cannot rename '%s': %s", tmp, strerror(errno));
        if (rc != 0)
            unlink(tmp);
    }
    free(tmp);
    return rc;
}

int kv_out_open(kv_out **out, const char *dir, kv_diag *diag)
{
    *out = NULL;
    int rc = kv_mkdir_p(dir, diag);
    if (rc != 0)
        return rc;
    kv_out *o = kv_xcalloc(1, sizeof *o);
    o->dir = kv_xstrdup(dir);
    o->tmp[F_TIMESERIES] = join_path(dir, file_names[F_TIMESERIES], ".tmp");
    o->ts = fopen(o->tmp[F_TIMESERIES], "w");
    if (!o->ts) {
        rc = kv_diag_set(diag, -KV_EIO, "cannot write '%s': %s", o->tmp[F_TIMESERIES],
                         strerror(errno));
        free(o->tmp[F_TIMESERIES]);
        o->tmp[F_TIMESERIES] = NULL;
        kv_out_abort(o);
        return rc;
    }
    kv_report_timeseries_header(&o->row);
    *out = o;
    return 0;
}

void kv_out_sample(void *ctx, const kv_sample *s)
{
    kv_out *o = ctx;
    kv_report_timeseries_row(&o->row, s);
    if (o->row.len >= ROW_FLUSH)
        flush_rows(o);
}

static int write_json_tmp(kv_out *o, int which, const json_t *v, kv_diag *diag)
{
    o->tmp[which] = join_path(o->dir, file_names[which], ".tmp");
    FILE *f = fopen(o->tmp[which], "w");
    if (!f)
        return kv_diag_set(diag, -KV_EIO, "cannot write '%s': %s", o->tmp[which], strerror(errno));
    int bad = json_dumpf(v, f, KV_JSON_FLAGS) != 0;
    fputc('\n', f);
    int rc = close_checked(f, o->tmp[which], diag);
    if (rc == 0 && bad)
        rc = kv_diag_set(diag, -KV_EIO, "cannot write '%s'", o->tmp[which]);
    return rc;
}

int kv_out_commit(kv_out *o, const json_t *summary, const json_t *perf, const kv_run_result *r,
                  kv_diag *diag)
{
    flush_rows(o);
    FILE *ts = o->ts;
    o->ts = NULL;
    int rc = close_checked(ts, o->tmp[F_TIMESERIES], diag);
    if (rc == 0) {
        o->tmp[F_REQUESTS] = join_path(o->dir, file_names[F_REQUESTS], ".tmp");
        FILE *f = fopen(o->tmp[F_REQUESTS], "w");
        if (!f) {
            rc = kv_diag_set(diag, -KV_EIO, "cannot write '%s': %s", o->tmp[F_REQUESTS],
                             strerror(errno));
        } else {
            kv_buf b = {0};
            kv_report_requests_header(&b);
            for (size_t i = 0; i < r->n; i++) {
                kv_report_request_row(&b, &r->reqs[i]);
                if (b.len >= ROW_FLUSH) {
                    fwrite(b.s, 1, b.len, f);
                    kv_buf_reset(&b);
                }
            }
            if (b.len)
                fwrite(b.s, 1, b.len, f);
            kv_buf_release(&b);
            rc = close_checked(f, o->tmp[F_REQUESTS], diag);
        }
    }
    if (rc == 0)
        rc = write_json_tmp(o, F_SUMMARY, summary, diag);
    if (rc == 0 && perf)
        rc = write_json_tmp(o, F_PERF, perf, diag);
    for (int i = 0; rc == 0 && i < F_COUNT; i++) {
        if (!o->tmp[i])
            continue;
        char *final = join_path(o->dir, file_names[i], "");
        if (rename(o->tmp[i], final) != 0)
            rc = kv_diag_set(diag, -KV_EIO, "cannot rename '%s': %s", o->tmp[i], strerror(errno));
        else {
            free(o->tmp[i]);
            o->tmp[i] = NULL;
        }
        free(final);
    }
    o->committed = rc == 0;
    return rc;
}

void kv_out_abort(kv_out *o)
{
    if (!o)
        return;
    if (o->ts)
        fclose(o->ts);
    kv_buf_release(&o->row);
    for (int i = 0; i < F_COUNT; i++) {
        if (o->tmp[i]) {
            unlink(o->tmp[i]);
            free(o->tmp[i]);
        }
    }
    free(o->dir);
    free(o);
}
