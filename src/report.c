/* report: summary.json, perf.json, timeseries.csv and requests.csv (DESIGN §8).
 *
 * Determinism: summary.json, timeseries.csv and requests.csv depend only on the run's
 * inputs: JSON keys in a fixed insertion order, numbers printed with fixed formats, times
 * from integer nanoseconds.  Wall-clock figures live in perf.json only.
 *
 * Atomicity: each file is a kv_afile (a temp file in the output directory) and is renamed
 * into place by kv_out_commit only after every file was written and closed without error
 * (fflush/ferror/fclose checked).  rename(2) within one directory is atomic, so a reader
 * sees either the old complete file or the new complete one.
 */
#include "kvsim/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvsim/afile.h"
#include "kvsim/cluster.h"
#include "kvsim/mem.h"
#include "kvsim/path.h"
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

/* One request's row: the request, and the cluster's record of it (R ≥ 2). */
typedef struct row {
    const kv_req *r;
    const kv_cluster_result *cl; /* NULL for one replica */
    size_t i;                    /* trace index */
} row;

static void col_id(kv_buf *b, const row *w)
{
    if (w->r->spec->id)
        kv_csv_field(b, w->r->spec->id);
    else
        kv_buf_u64(b, w->r->spec->row);
}
static void col_replica(kv_buf *b, const row *w)
{
    if (w->cl->replica_of[w->i] != KV_CLUSTER_NOT_ROUTED)
        kv_buf_u64(b, w->cl->replica_of[w->i]);
}
static void col_arrival(kv_buf *b, const row *w)
{
    put_time(b, w->r->spec->arrival_ns);
}
static void col_first_scheduled(kv_buf *b, const row *w)
{
    put_time(b, w->r->first_scheduled_ns);
}
static void col_first_token(kv_buf *b, const row *w)
{
    put_time(b, w->r->first_token_ns);
}
static void col_finish(kv_buf *b, const row *w)
{
    put_time(b, w->r->finish_ns);
}
static void col_prompt_len(kv_buf *b, const row *w)
{
    kv_buf_u64(b, w->r->spec->prompt_len);
}
static void col_output_len(kv_buf *b, const row *w)
{
    kv_buf_u64(b, w->r->spec->output_len);
}
static void col_predicted(kv_buf *b, const row *w)
{
    kv_buf_u64(b, w->cl->predicted_tokens[w->i]);
}
static void col_hit_tokens(kv_buf *b, const row *w)
{
    kv_buf_u64(b, w->r->hit_tokens);
}
static void col_preemptions(kv_buf *b, const row *w)
{
    kv_buf_u64(b, w->r->preemptions);
}
static void col_ttft(kv_buf *b, const row *w)
{
    put_secs(b, w->r, kv_req_ttft_s);
}
static void col_tpot(kv_buf *b, const row *w)
{
    put_secs(b, w->r, kv_req_tpot_s);
}
static void col_e2e(kv_buf *b, const row *w)
{
    put_secs(b, w->r, kv_req_e2e_s);
}
static void col_status(kv_buf *b, const row *w)
{
    kv_buf_puts(b, kv_req_status_name(w->r->status));
}

/* requests.csv's columns, in order: the header and every row come from this table.  The
 * cluster columns are written only for a cluster run (DESIGN §10). */
static const struct {
    const char *name;
    void (*put)(kv_buf *b, const row *w);
    bool cluster;
} request_columns[] = {
    {"id", col_id, false},
    {"replica", col_replica, true},
    {"arrival_s", col_arrival, false},
    {"first_scheduled_s", col_first_scheduled, false},
    {"first_token_s", col_first_token, false},
    {"finish_s", col_finish, false},
    {"prompt_len", col_prompt_len, false},
    {"output_len", col_output_len, false},
    {"predicted_hit_tokens", col_predicted, true},
    {"hit_tokens", col_hit_tokens, false},
    {"preemptions", col_preemptions, false},
    {"ttft_s", col_ttft, false},
    {"tpot_s", col_tpot, false},
    {"e2e_s", col_e2e, false},
    {"status", col_status, false},
};
enum { N_REQUEST_COLUMNS = sizeof request_columns / sizeof request_columns[0] };

void kv_report_requests_header(kv_buf *b, const kv_run_result *res)
{
    const char *sep = "";
    for (size_t c = 0; c < N_REQUEST_COLUMNS; c++) {
        if (request_columns[c].cluster && !res->cluster)
            continue;
        kv_buf_puts(b, sep);
        kv_buf_puts(b, request_columns[c].name);
        sep = ",";
    }
    kv_buf_putc(b, '\n');
}

void kv_report_request_row(kv_buf *b, const kv_run_result *res, size_t i)
{
    row w = {&res->reqs[i], res->cluster, i};
    const char *sep = "";
    for (size_t c = 0; c < N_REQUEST_COLUMNS; c++) {
        if (request_columns[c].cluster && !res->cluster)
            continue;
        kv_buf_puts(b, sep);
        request_columns[c].put(b, &w);
        sep = ",";
    }
    kv_buf_putc(b, '\n');
}

/* ---- timeseries.csv ----------------------------------------------------------------- */

/* A cluster's rows carry the replica right after time_s. */
void kv_report_timeseries_header(kv_buf *b, bool replica)
{
    const char *sep = "";
#define X(name, kind, member)                                                                      \
    kv_buf_puts(b, sep);                                                                           \
    kv_buf_puts(b, #name);                                                                         \
    if (replica && !*sep)                                                                          \
        kv_buf_puts(b, ",replica");                                                                \
    sep = ",";
    KV_SAMPLE_COLUMNS(X)
#undef X
    kv_buf_putc(b, '\n');
}

/* A timeseries row is formatted into one stack buffer and appended once: it is written
 * for every step of every replica, so its cost is per-step overhead (a cluster of R
 * replicas runs about R times as many steps).  The digits are exactly those of "%llu",
 * kv_buf_ns and "%.6f". */
enum { ROW_MAX = 1024 }; /* 18 columns of at most 32 characters */

static char *row_u(char *p, uint64_t v)
{
    char d[20];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = d[--n];
    return p;
}

static char *row_time(char *p, int64_t ns)
{
    p = row_u(p, (uint64_t)(ns / 1000000000));
    int64_t f = ns % 1000000000;
    *p = '.';
    for (int i = 9; i >= 1; i--) {
        p[i] = (char)('0' + f % 10);
        f /= 10;
    }
    return p + 10;
}

static char *row_f6(char *p, double v)
{
    int n = snprintf(p, 64, "%.6f", v);
    return p + (n > 0 && n < 64 ? n : 0);
}

#define PUT_TIME(p, v) row_time(p, v)
#define PUT_U(p, v)    row_u(p, (uint64_t)(v))
#define PUT_F6(p, v)   row_f6(p, v)

void kv_report_timeseries_row(kv_buf *b, const kv_sample *s, bool replica)
{
    char line[ROW_MAX], *p = line;
    bool first = true;
#define X(name, kind, member)                                                                      \
    if (!first)                                                                                    \
        *p++ = ',';                                                                                \
    p = PUT_##kind(p, s->member);                                                                  \
    if (replica && first) {                                                                        \
        *p++ = ',';                                                                                \
        p = row_u(p, s->replica);                                                                  \
    }                                                                                              \
    first = false;
    KV_SAMPLE_COLUMNS(X)
#undef X
    *p++ = '\n';
    kv_buf_put(b, line, (size_t)(p - line));
}

/* ---- perf.json ---------------------------------------------------------------------- */

json_t *kv_report_perf_json(double wall, const kv_run_result *r)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    json_t *p = json_object();
    json_object_set_new(p, "wall_s", json_real(wall));
    json_object_set_new(p, "max_rss_bytes", json_integer((json_int_t)ru.ru_maxrss * 1024));
    json_object_set_new(p, "requests", json_integer((json_int_t)r->n));
    json_object_set_new(p, "steps", json_integer((json_int_t)r->stats.steps));
    json_object_set_new(p, "blocks_hashed", json_integer((json_int_t)r->blocks_hashed));
    json_object_set_new(p, "sim_requests_per_s", json_real(wall > 0 ? (double)r->n / wall : 0));
    json_object_set_new(p, "steps_per_s", json_real(wall > 0 ? (double)r->stats.steps / wall : 0));
    json_object_set_new(p, "sim_seconds_per_wall_second",
                        json_real(wall > 0 ? (double)r->sim_time_ns / 1e9 / wall : 0));
    return p;
}

/* ---- atomic files ------------------------------------------------------------------- */

enum { F_TIMESERIES, F_REQUESTS, F_SUMMARY, F_PERF, F_COUNT };
static const char *const file_names[F_COUNT] = {"timeseries.csv", "requests.csv", "summary.json",
                                                "perf.json"};

struct kv_out {
    char *dir;
    bool replica;           /* timeseries.csv has the replica column */
    kv_afile file[F_COUNT]; /* timeseries.csv from kv_out_open, the others at commit */
    kv_buf row;             /* timeseries rows not yet handed to stdio */
};

/* Rows are formatted into a buffer and written in large pieces. */
enum { ROW_FLUSH = 1 << 16 };

static void flush_rows(kv_out *o)
{
    if (o->row.len)
        fwrite(o->row.s, 1, o->row.len, o->file[F_TIMESERIES].f);
    kv_buf_reset(&o->row);
}

static int open_file(kv_out *o, int which, kv_diag *diag)
{
    char *path = kv_path_join(o->dir, file_names[which]);
    int rc = kv_afile_open(&o->file[which], path, diag);
    free(path);
    return rc;
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

int kv_out_open(kv_out **out, const char *dir, bool replica_column, kv_diag *diag)
{
    *out = NULL;
    int rc = kv_mkdir_p(dir, diag);
    if (rc != 0)
        return rc;
    kv_out *o = kv_xcalloc(1, sizeof *o);
    o->dir = kv_xstrdup(dir);
    if ((rc = open_file(o, F_TIMESERIES, diag)) != 0) {
        kv_out_abort(o);
        return rc;
    }
    o->replica = replica_column;
    kv_report_timeseries_header(&o->row, replica_column);
    *out = o;
    return 0;
}

void kv_out_sample(void *ctx, const kv_sample *s)
{
    kv_out *o = ctx;
    kv_report_timeseries_row(&o->row, s, o->replica);
    if (o->row.len >= ROW_FLUSH)
        flush_rows(o);
}

static int write_json(kv_out *o, int which, const json_t *v, kv_diag *diag)
{
    int rc = open_file(o, which, diag);
    if (rc == 0 && (json_dumpf(v, o->file[which].f, KV_JSON_FLAGS) != 0 ||
                    fputc('\n', o->file[which].f) == EOF))
        rc = kv_diag_set(diag, -KV_EIO, "cannot write '%s'", o->file[which].path);
    return rc;
}

static int write_requests(kv_out *o, const kv_run_result *r, kv_diag *diag)
{
    int rc = open_file(o, F_REQUESTS, diag);
    if (rc != 0)
        return rc;
    FILE *f = o->file[F_REQUESTS].f;
    kv_buf b = {0};
    kv_report_requests_header(&b, r);
    for (size_t i = 0; i < r->n; i++) {
        kv_report_request_row(&b, r, i);
        if (b.len >= ROW_FLUSH) {
            fwrite(b.s, 1, b.len, f);
            kv_buf_reset(&b);
        }
    }
    if (b.len)
        fwrite(b.s, 1, b.len, f);
    kv_buf_release(&b);
    return 0;
}

int kv_out_commit(kv_out *o, const json_t *summary, const json_t *perf, const kv_run_result *r,
                  kv_diag *diag)
{
    flush_rows(o);
    int rc = kv_afile_close(&o->file[F_TIMESERIES], diag);
    if (rc == 0)
        rc = write_requests(o, r, diag);
    if (rc == 0)
        rc = write_json(o, F_SUMMARY, summary, diag);
    if (rc == 0 && perf)
        rc = write_json(o, F_PERF, perf, diag);
    /* Every file closed without error before any is renamed into place. */
    for (int i = 0; rc == 0 && i < F_COUNT; i++)
        rc = kv_afile_close(&o->file[i], diag);
    for (int i = 0; rc == 0 && i < F_COUNT; i++)
        rc = kv_afile_commit(&o->file[i], diag);
    return rc;
}

int kv_out_clear(const char *dir, kv_diag *diag)
{
    static const char *const names[] = {"summary.json", "perf.json", "timeseries.csv",
                                        "requests.csv", "stderr.txt"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *p = kv_path_join(dir, names[i]);
        int e = unlink(p) != 0 && errno != ENOENT ? errno : 0;
        free(p);
        if (e)
            return kv_diag_set(diag, -KV_EIO, "cannot remove '%s/%s': %s", dir, names[i],
                               strerror(e));
    }
    return 0;
}

void kv_out_abort(kv_out *o)
{
    if (!o)
        return;
    kv_buf_release(&o->row);
    for (int i = 0; i < F_COUNT; i++)
        kv_afile_abort(&o->file[i]);
    free(o->dir);
    free(o);
}
