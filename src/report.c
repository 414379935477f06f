/* report: summary.json, perf.json, timeseries.csv and requests.csv (DESIGN §8).
 *
 * Determinism: summary.json, timeseries.csv and requests.csv depend only on the run's
 * inputs: JSON keys in a fixed insertion order, numbers printed with fixed formats, times
 * from integer nanoseconds.  Wall-clock figures live in perf.json only.
 *
 * Atomicity: the files are kv_afiles in a kv_outdir, a temporary directory beside the
 * output directory, which kv_out_commit puts in DIR's place only after every file was
 * written and closed without error (fflush/ferror/fclose checked).  A reader of DIR sees
 * the earlier run's files or this run's, never some of each, and nothing of an earlier run
 * survives a rerun (outdir.h).
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
#include "kvsim/outdir.h"
#include "kvsim/path.h"
#include "kvsim/plot.h"
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

/* The length of the valid UTF-8 sequence at s, or 0 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n = c >= 0xC2 && c <= 0xDF   ? 2
               : c >= 0xE0 && c <= 0xEF ? 3
               : c >= 0xF0 && c <= 0xF4 ? 4
                                        : 0;
    unsigned char lo = 0x80, hi = 0xBF; /* the second byte's range */
    if (c == 0xE0)
        lo = 0xA0;
    else if (c == 0xED)
        hi = 0x9F;
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F;
    for (size_t i = 1; i < n; i++)
        if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xBF))
            return 0;
    return n;
}

json_t *kv_json_text(const char *text)
{
    if (!text)
        return json_string("");
    json_t *j = json_string(text);
    if (j)
        return j;
    kv_buf b = {0};
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        size_t n = utf8_len(s);
        if (n == 0) {
            kv_buf_puts(&b, "\xEF\xBF\xBD");
            s++;
        } else {
            kv_buf_printf(&b, "%.*s", (int)n, (const char *)s);
            s += n;
        }
    }
    j = json_string(b.s ? b.s : "");
    kv_buf_release(&b);
    return j;
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
        kv_buf_f9(b, v);
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
static void col_num_cached_tokens(kv_buf *b, const row *w)
{
    kv_buf_u64(b, w->r->num_cached_tokens);
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
    {"num_cached_tokens", col_num_cached_tokens, false},
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

#define PUT_TIME(b, v) kv_buf_ns(b, v)
#define PUT_U(b, v)    kv_buf_u64(b, (uint64_t)(v))
#define PUT_F6(b, v)   kv_buf_f6(b, v)

void kv_report_timeseries_row(kv_buf *b, const kv_sample *s, bool replica)
{
    bool first = true;
#define X(name, kind, member)                                                                      \
    if (!first)                                                                                    \
        kv_buf_putc(b, ',');                                                                       \
    PUT_##kind(b, s->member);                                                                      \
    if (replica && first) {                                                                        \
        kv_buf_putc(b, ',');                                                                       \
        kv_buf_u64(b, s->replica);                                                                 \
    }                                                                                              \
    first = false;
    KV_SAMPLE_COLUMNS(X)
#undef X
    kv_buf_putc(b, '\n');
}

/* ---- the stamp ---------------------------------------------------------------------- */

#ifndef KVSIM_VERSION
#define KVSIM_VERSION "unknown"
#endif

const char *kv_version(void)
{
    return KVSIM_VERSION;
}

json_t *kv_json_stamped(json_t *obj, const char *command)
{
    json_t *o = json_object();
    json_object_set_new(o, "kvsim_version", json_string(kv_version()));
    json_object_set_new(o, "command", command ? json_string(command) : json_null());
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) /* insertion order (jansson ≥ 2.8) */
    {
        if (strcmp(key, "kvsim_version") != 0 && strcmp(key, "command") != 0)
            json_object_set(o, key, v);
    }
    json_decref(obj);
    return o;
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
    json_object_set_new(p, "hash_thread", json_boolean(r->hashed_ahead));
    json_object_set_new(p, "sim_requests_per_s", json_real(wall > 0 ? (double)r->n / wall : 0));
    json_object_set_new(p, "steps_per_s", json_real(wall > 0 ? (double)r->stats.steps / wall : 0));
    json_object_set_new(p, "sim_seconds_per_wall_second",
                        json_real(wall > 0 ? (double)r->sim_time_ns / 1e9 / wall : 0));
    return p;
}

/* ---- a run's output directory -------------------------------------------------------- */

enum { F_TIMESERIES, F_REQUESTS, F_SUMMARY, F_PERF, F_COUNT };
static const char *const file_names[F_COUNT] = {"timeseries.csv", "requests.csv", "summary.json",
                                                "perf.json"};

/* What a run directory may hold: the run's files, the message file sweep keeps for a
 * configuration that failed, and the run's figures (kv_plot_figure_names). */
static const char *const run_files[] = {"timeseries.csv", "requests.csv", "summary.json",
                                        "perf.json",      "stderr.txt",   NULL};

const char *const *kv_out_file_names(void)
{
    return run_files;
}

struct kv_out {
    kv_outdir dir;          /* the temporary directory the files are written into */
    bool replica;           /* timeseries.csv has the replica column */
    kv_afile file[F_COUNT]; /* timeseries.csv from kv_out_open, the others at commit */
    kv_buf row;             /* timeseries rows not yet handed to stdio */
};

/* Rows are formatted into a buffer and written in large pieces. */
enum { ROW_FLUSH = 1 << 16 };

static void flush_rows(kv_out *o)
{
    if (o->row.len)
        kv_afile_write(&o->file[F_TIMESERIES], o->row.s, o->row.len); /* checked at close */
    kv_buf_reset(&o->row);
}

static int open_file(kv_out *o, int which, kv_diag *diag)
{
    return kv_afile_open(&o->file[which], kv_outdir_path(&o->dir, file_names[which]), diag);
}

int kv_mkdir_p(const char *dir, kv_diag *diag)
{
    if (!*dir)
        return kv_diag_set(diag, -KV_EINVAL, "cannot create directory '': empty name");
    char *p = kv_xstrdup(dir);
    int rc = 0;
    /* Each prefix that ends before a '/' (a leading '/' is no prefix), then the whole. */
    for (char *s = p + 1; rc == 0; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            rc = kv_diag_set(diag, -KV_EIO, "cannot create directory '%s': %s", p, strerror(errno));
        *s = c;
        if (c == '\0')
            break;
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
    kv_out *o = kv_xcalloc(1, sizeof *o);
    int rc = kv_outdir_open(&o->dir, dir, run_files, kv_plot_figure_names(KV_PLOT_RUN), diag);
    if (rc == 0)
        rc = kv_outdir_diag(&o->dir, open_file(o, F_TIMESERIES, diag), diag);
    if (rc != 0) {
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
        kv_afile_note_error(&o->file[which]); /* the commit reports it */
    return rc;
}

static int write_requests(kv_out *o, const kv_run_result *r, kv_diag *diag)
{
    int rc = open_file(o, F_REQUESTS, diag);
    if (rc != 0)
        return rc;
    kv_afile *f = &o->file[F_REQUESTS];
    kv_buf b = {0};
    kv_report_requests_header(&b, r);
    for (size_t i = 0; i < r->n; i++) {
        kv_report_request_row(&b, r, i);
        if (b.len >= ROW_FLUSH) {
            kv_afile_write(f, b.s, b.len); /* checked at commit */
            kv_buf_reset(&b);
        }
    }
    if (b.len)
        kv_afile_write(f, b.s, b.len);
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
    /* Every file complete in the temporary directory before it takes DIR's place. */
    for (int i = 0; rc == 0 && i < F_COUNT; i++)
        rc = kv_afile_commit(&o->file[i], diag);
    rc = kv_outdir_diag(&o->dir, rc, diag);
    if (rc == 0)
        rc = kv_outdir_commit(&o->dir, diag);
    return rc;
}

void kv_out_abort(kv_out *o)
{
    if (!o)
        return;
    kv_buf_release(&o->row);
    for (int i = 0; i < F_COUNT; i++)
        kv_afile_abort(&o->file[i]);
    kv_outdir_abort(&o->dir);
    free(o);
}
