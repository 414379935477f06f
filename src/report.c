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

/* ---- summary.json ------------------------------------------------------------------- */

static json_t *dist_json(const kv_dist *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "p50", json_real(d->p50));
    json_object_set_new(o, "p90", json_real(d->p90));
    json_object_set_new(o, "p95", json_real(d->p95));
    json_object_set_new(o, "p99", json_real(d->p99));
    json_object_set_new(o, "max", json_real(d->max));
    json_object_set_new(o, "mean", json_real(d->mean));
    return o;
}

static json_t *u64(uint64_t v)
{
    return json_integer((json_int_t)v);
}

json_t *kv_report_summary(const kv_run_result *r, json_t *config)
{
    json_t *s = json_object();
    json_object_set_new(s, "config", config ? config : json_object());

    json_t *req = json_object();
    json_object_set_new(req, "total", u64(r->n));
    json_object_set_new(req, "finished", u64(r->finished));
    json_object_set_new(req, "rejected", u64(r->rejected));
    json_object_set_new(req, "unfinished", u64(r->unfinished));
    json_object_set_new(s, "requests", req);

    json_t *rej = json_object();
    json_object_set_new(rej, "exceeds_capacity", u64(r->sched.rejected[KV_REJECT_CAPACITY]));
    json_object_set_new(rej, "exceeds_watermark", u64(r->sched.rejected[KV_REJECT_WATERMARK]));
    json_object_set_new(rej, "exceeds_batch", u64(r->sched.rejected[KV_REJECT_BATCH]));
    json_object_set_new(s, "rejections", rej);

    json_object_set_new(s, "preemptions", u64(r->sched.preemptions));
    json_object_set_new(s, "evictions", u64(r->evictions));

    json_t *px = json_object();
    json_object_set_new(px, "queries", u64(r->prefix.queries));
    json_object_set_new(px, "hits", u64(r->prefix.hits));
    json_object_set_new(
        px, "hit_rate",
        json_real(r->prefix.queries ? (double)r->prefix.hits / (double)r->prefix.queries : 0.0));
    json_object_set_new(px, "preempted_queries", u64(r->prefix.preempted_queries));
    json_object_set_new(px, "preempted_hits", u64(r->prefix.preempted_hits));
    json_object_set_new(s, "prefix", px);

    json_t *bl = json_object();
    json_object_set_new(bl, "num_blocks", u64((uint64_t)r->usable_blocks + 1));
    json_object_set_new(bl, "usable", u64(r->usable_blocks));
    json_object_set_new(bl, "peak_physical", u64(r->metrics.peak_physical));
    json_object_set_new(bl, "peak_logical", u64(r->metrics.peak_logical));
    json_object_set_new(bl, "mean_physical", json_real(kv_metrics_mean_physical(&r->metrics)));
    json_object_set_new(bl, "mean_logical", json_real(kv_metrics_mean_logical(&r->metrics)));
    json_object_set_new(bl, "sharing_ratio", json_real(kv_metrics_sharing_ratio(&r->metrics)));
    json_object_set_new(s, "blocks", bl);

    json_t *wm = json_object();
    json_t *cfg_wm = config ? json_object_get(config, "watermark") : NULL;
    json_object_set(wm, "watermark", cfg_wm ? cfg_wm : json_null());
    json_object_set_new(wm, "blocks", u64(r->watermark_blocks));
    json_object_set_new(wm, "deferrals", u64(r->sched.deferrals));
    json_object_set_new(wm, "deferral_steps", u64(r->sched.deferral_steps));
    json_object_set_new(wm, "deferred_requests", u64(r->sched.deferred_requests));
    json_object_set_new(s, "watermark", wm);

    kv_latency lat;
    kv_latency_compute(r->reqs, r->n, &lat);
    json_t *l = json_object();
    json_object_set_new(l, "ttft", dist_json(&lat.ttft));
    json_object_set_new(l, "tpot", dist_json(&lat.tpot));
    json_object_set_new(l, "e2e", dist_json(&lat.e2e));
    json_object_set_new(l, "queue", dist_json(&lat.queue));
    json_object_set_new(s, "latency_s", l);

    double t = (double)r->sim_time_ns / 1e9;
    json_t *th = json_object();
    json_object_set_new(th, "output_tok_per_s",
                        json_real(t > 0 ? (double)r->output_tokens / t : 0));
    json_object_set_new(th, "requests_per_s", json_real(t > 0 ? (double)r->finished / t : 0));
    json_object_set_new(s, "throughput", th);

    json_object_set_new(s, "steps", u64(r->steps));
    json_object_set_new(s, "sim_time_s", json_real(t));
    json_object_set_new(s, "livelock_guard_fired", json_boolean(r->livelock));
    return s;
}

/* ---- CSV rows ----------------------------------------------------------------------- */

static void put_time(FILE *f, int64_t ns)
{
    if (ns >= 0)
        fprintf(f, "%lld.%09lld", (long long)(ns / 1000000000), (long long)(ns % 1000000000));
}

static void put_secs(FILE *f, double s)
{
    if (s >= 0)
        fprintf(f, "%.9f", s);
}

void kv_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
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

void kv_report_request_row(FILE *f, const kv_req *r)
{
    const kv_request_spec *q = r->spec;
    if (q->id)
        kv_csv_field(f, q->id);
    else
        fprintf(f, "%u", q->row);
    fputc(',', f);
    put_time(f, q->arrival_ns);
    fputc(',', f);
    put_time(f, r->first_scheduled_ns);
    fputc(',', f);
    put_time(f, r->first_token_ns);
    fputc(',', f);
    put_time(f, r->finish_ns);
    fprintf(f, ",%u,%u,%u,%u,", q->prompt_len, q->output_len, r->hit_tokens, r->preemptions);
    put_secs(f, r->status == KV_REQ_FINISHED ? kv_req_ttft_s(r) : -1);
    fputc(',', f);
    put_secs(f, r->status == KV_REQ_FINISHED ? kv_req_tpot_s(r) : -1);
    fputc(',', f);
    put_secs(f, r->status == KV_REQ_FINISHED ? kv_req_e2e_s(r) : -1);
    fprintf(f, ",%s\n", kv_req_status_name(r->status));
}

static const char timeseries_header[] =
    "time_s,step,running,waiting,physical_blocks,logical_blocks,cached_free_blocks,"
    "free_blocks,usage,effective_tokens,scheduled_tokens,preemptions,evictions,prefix_hits,"
    "prefix_queries,watermark_deferrals,admitted,finished\n";

static const char requests_header[] =
    "id,arrival_s,first_scheduled_s,first_token_s,finish_s,prompt_len,output_len,hit_tokens,"
    "preemptions,ttft_s,tpot_s,e2e_s,status\n";

/* ---- atomic files ------------------------------------------------------------------- */

enum { F_TIMESERIES, F_REQUESTS, F_SUMMARY, F_PERF, F_COUNT };
static const char *const file_names[F_COUNT] = {"timeseries.csv", "requests.csv", "summary.json",
                                                "perf.json"};

struct kv_out {
    char *dir;
    char *tmp[F_COUNT]; /* temp paths; NULL when not created */
    FILE *ts;
    bool committed;
};

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
    fputs(timeseries_header, o->ts);
    *out = o;
    return 0;
}

void kv_out_sample(void *ctx, const kv_sample *s)
{
    kv_out *o = ctx;
    FILE *f = o->ts;
    put_time(f, s->time_ns);
    fprintf(f, ",%llu,%u,%u,%u,%llu,%u,%u,%.6f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n",
            (unsigned long long)s->step, s->running, s->waiting, s->physical_blocks,
            (unsigned long long)s->logical_blocks, s->cached_free_blocks, s->free_blocks, s->usage,
            (unsigned long long)s->effective_tokens, (unsigned long long)s->scheduled_tokens,
            (unsigned long long)s->preemptions, (unsigned long long)s->evictions,
            (unsigned long long)s->prefix_hits, (unsigned long long)s->prefix_queries,
            (unsigned long long)s->watermark_deferrals, (unsigned long long)s->admitted,
            (unsigned long long)s->finished);
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
            fputs(requests_header, f);
            for (size_t i = 0; i < r->n; i++)
                kv_report_request_row(f, &r->reqs[i]);
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
    for (int i = 0; i < F_COUNT; i++) {
        if (o->tmp[i]) {
            unlink(o->tmp[i]);
            free(o->tmp[i]);
        }
    }
    free(o->dir);
    free(o);
}
