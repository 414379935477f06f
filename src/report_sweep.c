/* report_sweep: sweep.csv rows from configuration directories (include/kvsim/sweep.h).
 *
 * A row is a pure function of one configuration's summary: every column is a path of the
 * summary schema (one table below, so the header and the values cannot drift apart),
 * printed as summary.json writes it — integers as integers, reals with 15 significant
 * digits, so the CSV text and the JSON text name the same number — except the trace,
 * written as the absolute path of the file it names when that resolves.  Nothing depends on
 * which process ran a configuration or when, so `sweep -j 1`, `sweep -j 8` and `merge` of
 * the same directories write byte-identical files.
 *
 * Out of scope: comparing configurations of different traces or models — merge puts any
 * finished directories side by side; the config echo in each summary says what ran.
 */
#define _XOPEN_SOURCE 700 /* realpath(3) */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/afile.h"
#include "kvsim/mem.h"
#include "kvsim/path.h"
#include "kvsim/report.h"
#include "kvsim/strbuf.h"
#include "kvsim/sweep.h"

typedef struct column {
    const char *name; /* sweep.csv header */
    const char *path; /* summary schema path; NULL: config and dir */
    bool option;      /* an option of the run a sweep can vary: a row-order key after the
                         classic knobs (sort_keys), in column order */
} column;

/* The order and names are a contract with the plot scripts under plots/. */
static const column columns[] = {
    {"config", NULL, false},
    {"dir", NULL, false},
    {"block_size", "config.block_size", false},
    {"num_blocks", "config.num_blocks", false},
    {"kv_budget_bytes", "config.kv_budget_bytes", false},
    {"watermark", "config.watermark", false},
    {"free_order", "config.free_order", false},
    {"max_seqs", "config.max_seqs", false},
    {"preempt", "config.preempt", false},
    {"finished", "requests.finished", false},
    {"rejected", "requests.rejected", false},
    {"peak_physical", "blocks.peak_physical", false},
    {"mean_physical", "blocks.mean_physical", false},
    {"peak_logical", "blocks.peak_logical", false},
    {"mean_logical", "blocks.mean_logical", false},
    {"sharing_ratio", "blocks.sharing_ratio", false},
    {"hit_rate", "prefix.hit_rate", false},
    {"evictions", "evictions", false},
    {"preemptions", "preemptions", false},
    {"watermark_deferrals", "watermark.deferrals", false},
    {"ttft_p50_s", "latency_s.ttft.p50", false},
    {"ttft_p99_s", "latency_s.ttft.p99", false},
    {"tpot_p50_s", "latency_s.tpot.p50", false},
    {"tpot_p99_s", "latency_s.tpot.p99", false},
    {"output_tok_per_s", "throughput.output_tok_per_s", false},
    {"requests_per_s", "throughput.requests_per_s", false},
    {"output_tok_per_s_per_gpu", "throughput.output_tok_per_s_per_gpu", false},
    {"cost_per_million_output_tokens", "throughput.cost_per_million_output_tokens", false},
    /* every other option of the run (the config echo): swept or fixed, each row says
     * what ran, so merged sweeps of several models, GPUs or traces stay apart */
    {"requests", "requests.total", false},
    {"model", "config.model", true},
    {"gpu", "config.gpu", true},
    {"tp", "config.tp", true},
    {"pp", "config.pp", true},
    {"kv_dtype", "config.kv_dtype", true},
    {"weight_bytes", "config.weight_bytes", true},
    {"layers", "config.layers", true},
    {"kv_heads", "config.kv_heads", true},
    {"head_dim", "config.head_dim", true},
    {"bytes_per_token_rank", "config.bytes_per_token_rank", true},
    {"block_bytes", "config.block_bytes", false},
    {"gpu_util", "config.gpu_util", true},
    {"reserve_bytes", "config.reserve_bytes", true},
    {"num_blocks_from", "config.num_blocks_from", false},
    {"watermark_rule", "config.watermark_rule", true},
    {"max_batched_tokens", "config.max_batched_tokens", true},
    {"chunked_prefill", "config.chunked_prefill", true},
    {"prefix_caching", "config.prefix_caching", true},
    {"admit_full_prompt", "config.admit_full_prompt", true},
    {"policy", "config.policy", true},
    {"async_scheduling", "config.async_scheduling", true},
    {"time_model", "config.time_model", true},
    {"gpu_cost_per_hour", "config.gpu_cost_per_hour", true},
    {"trace", "config.trace", true},
    {"format", "config.format", true},
    {"trace_block_size", "config.trace_block_size", true},
    {"limit", "config.limit", true},
    {"time_scale", "config.time_scale", true},
    {"rate", "config.rate", true},
    {"shared_prefix", "config.shared_prefix", true},
    {"seed", "config.seed", true},
    /* the cluster (DESIGN §10): replicas is 1 and the others empty for one replica */
    {"replicas", "cluster.replicas", false},
    {"router", "cluster.router", false},
    {"router_weight_prefix", "cluster.router_weights.prefix", false},
    {"router_weight_queue", "cluster.router_weights.queue", false},
    {"router_weight_kv", "cluster.router_weights.kv", false},
    {"router_view", "cluster.router_view", true},
    {"router_refresh_s", "cluster.router_refresh_s", true},
    {"router_overlap_weight", "cluster.router_overlap_weight", true},
    {"gpus", "cluster.gpus", false},
    {"requests_max_over_mean", "cluster.imbalance.requests_max_over_mean", false},
    {"requests_gini", "cluster.imbalance.requests_gini", false},
    {"blocks_max_over_mean", "cluster.imbalance.blocks_max_over_mean", false},
    {"blocks_gini", "cluster.imbalance.blocks_gini", false},
    {"predicted_hit_tokens", "cluster.router_accuracy.predicted_hit_tokens", false},
    {"granted_hit_tokens", "cluster.router_accuracy.granted_hit_tokens", false},
    {"overpredicted", "cluster.router_accuracy.overpredicted", false},
    {"underpredicted", "cluster.router_accuracy.underpredicted", false},
};
enum { N_COLUMNS = sizeof columns / sizeof columns[0] };

/* Row order: the classic knobs a sweep varies, outermost first, then the option columns
 * (column.option) in column order. */
static const char *const sort_keys[] = {
    "config.block_size",
    "config.num_blocks",
    "config.kv_budget_bytes",
    "config.watermark",
    "config.free_order",
    "config.max_seqs",
    "config.preempt",
    "cluster.replicas",
    "cluster.router",
    "cluster.router_weights.prefix",
    "cluster.router_weights.queue",
    "cluster.router_weights.kv",
};
enum { N_SORT_KEYS = sizeof sort_keys / sizeof sort_keys[0] };

int kv_sweep_row_load(kv_sweep_row *r, const char *dir, kv_diag *diag)
{
    memset(r, 0, sizeof *r);
    char *d = kv_path_join(dir, "");
    char *path = kv_path_join(d, "summary.json");
    json_error_t je;
    errno = 0;
    json_t *s = json_load_file(path, 0, &je);
    int rc = 0;
    if (!s) {
        if (je.line < 1)
            rc = kv_diag_set(diag, -KV_EIO, "cannot read '%s': %s", path,
                             errno ? strerror(errno) : je.text);
        else
            rc = kv_diag_set(diag, -KV_EPARSE, "%s:%d: malformed JSON at column %d: %s", path,
                             je.line, je.column, je.text);
    }
    if (rc == 0)
        rc = kv_summary_from_json(s, path, &r->summary, diag);
    json_decref(s);
    free(path);
    if (rc != 0) {
        free(d);
        memset(r, 0, sizeof *r);
        return rc;
    }
    r->config = kv_xstrdup(kv_path_base(d));
    r->dir = d;
    r->ok = true;
    return 0;
}

void kv_sweep_row_failed(kv_sweep_row *r, const char *dir, const char *failure)
{
    memset(r, 0, sizeof *r);
    r->dir = kv_path_join(dir, "");
    r->config = kv_xstrdup(kv_path_base(r->dir));
    r->failure = kv_xstrdup(failure);
}

void kv_sweep_row_release(kv_sweep_row *r)
{
    free(r->config);
    free(r->dir);
    free(r->failure);
    kv_summary_release(&r->summary);
    memset(r, 0, sizeof *r);
}

/* Two rows' values of one field: numbers compared as numbers, strings as strings. */
static int cmp_field(const kv_summary *a, const kv_summary *b, const kv_field *f)
{
    if (f->type == KV_FIELD_STR) {
        const char *x = kv_summary_has(a, f) ? *(char *const *)((const char *)a + f->offset) : 0;
        const char *y = kv_summary_has(b, f) ? *(char *const *)((const char *)b + f->offset) : 0;
        return strcmp(x ? x : "", y ? y : "");
    }
    double x = kv_summary_number(a, f), y = kv_summary_number(b, f);
    if (isnan(x) || isnan(y)) /* a null (no rate, no cost, one replica) sorts first */
        return !isnan(x) - !isnan(y);
    return (x > y) - (x < y);
}

static int cmp_rows(const void *pa, const void *pb)
{
    const kv_sweep_row *a = pa, *b = pb;
    if (a->ok != b->ok)
        return a->ok ? -1 : 1;
    for (size_t i = 0; a->ok && i < N_SORT_KEYS; i++) {
        int c = cmp_field(&a->summary, &b->summary, kv_summary_field(sort_keys[i]));
        if (c != 0)
            return c;
    }
    for (size_t i = 0; a->ok && i < N_COLUMNS; i++) {
        int c = columns[i].option
                    ? cmp_field(&a->summary, &b->summary, kv_summary_field(columns[i].path))
                    : 0;
        if (c != 0)
            return c;
    }
    return strcmp(a->dir, b->dir);
}

void kv_sweep_rows_sort(kv_sweep_row *rows, size_t n)
{
    if (n > 1)
        qsort(rows, n, sizeof *rows, cmp_rows);
}

/* One cell as summary.json writes the value (null, or a cluster field of a run of one
 * replica: an empty cell). */
static void csv_value(kv_buf *b, const kv_summary *s, const kv_field *f)
{
    const void *p = (const char *)s + f->offset;
    double v;
    if (!kv_summary_has(s, f))
        return;
    switch (f->type) {
    case KV_FIELD_STR:
        kv_csv_field(b, *(char *const *)p ? *(char *const *)p : "");
        return;
    case KV_FIELD_BOOL:
        kv_buf_puts(b, *(const bool *)p ? "true" : "false");
        return;
    case KV_FIELD_U64:
    case KV_FIELD_U64Z:
        if (f->type == KV_FIELD_U64 || *(const uint64_t *)p)
            kv_buf_u64(b, *(const uint64_t *)p);
        return;
    default:
        v = kv_summary_number(s, f);
        if (!isnan(v))
            kv_buf_printf(b, "%.15g", v);
        return;
    }
}

static void write_rows(kv_buf *b, const kv_sweep_row *rows, size_t m)
{
    for (size_t c = 0; c < N_COLUMNS; c++) {
        kv_buf_puts(b, c ? "," : "");
        kv_buf_puts(b, columns[c].name);
    }
    kv_buf_putc(b, '\n');
    for (size_t i = 0; i < m; i++) {
        kv_csv_field(b, rows[i].config);
        kv_buf_putc(b, ',');
        kv_csv_field(b, rows[i].dir);
        for (size_t c = 2; c < N_COLUMNS; c++) {
            kv_buf_putc(b, ',');
            const kv_field *f = kv_summary_field(columns[c].path);
            char real[PATH_MAX];
            /* The trace as the file it names, so a sweep's own rows and the rows of its
             * --emit-jobs lines (absolute paths) are one text. */
            if (f->offset == offsetof(kv_summary, config.trace) &&
                realpath(rows[i].summary.config.trace, real))
                kv_csv_field(b, real);
            else
                csv_value(b, &rows[i].summary, f);
        }
        kv_buf_putc(b, '\n');
    }
}

int kv_sweep_csv_write(const char *path, const kv_sweep_row *rows, size_t n, kv_diag *diag)
{
    kv_sweep_row *sorted = kv_xcalloc(n ? n : 1, sizeof *sorted);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].ok)
            sorted[m++] = rows[i]; /* shallow copies: only the order is ours */
    kv_sweep_rows_sort(sorted, m);
    kv_buf b = {0};
    write_rows(&b, sorted, m);
    free(sorted);
    kv_afile o;
    int rc = kv_afile_open(&o, path, diag);
    if (rc == 0) {
        kv_afile_write(&o, b.s, b.len); /* checked at commit */
        rc = kv_afile_commit(&o, diag);
    }
    kv_buf_release(&b);
    return rc;
}
