/* sweep_rows: sweep.csv rows from configuration directories (see sweep.h).
 *
 * A row is a pure function of one summary.json: every column is a path into that object
 * (one table below, so the header and the values cannot drift apart), printed as JSON wrote
 * it — integers as integers, reals with 15 significant digits (the precision summary.json
 * itself is written with, so the CSV text and the JSON text name the same number).  Nothing
 * depends on which process ran a configuration or when, so `sweep -j 1`, `sweep -j 8` and
 * `merge` of the same directories write byte-identical files.
 *
 * Out of scope: comparing configurations of different traces or models — merge puts any
 * finished directories side by side; the config echo in each summary.json says what ran.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/sweep.h"
#include "kvsim/mem.h"
#include "kvsim/report.h"

typedef struct column {
    const char *name; /* sweep.csv header */
    const char *path; /* dotted path into summary.json; NULL: config and dir */
} column;

/* The order and names are a contract with the plot scripts under plots/. */
static const column columns[] = {
    {"config", NULL},
    {"dir", NULL},
    {"block_size", "config.block_size"},
    {"num_blocks", "config.num_blocks"},
    {"kv_budget_bytes", "config.kv_budget_bytes"},
    {"watermark", "config.watermark"},
    {"free_order", "config.free_order"},
    {"max_seqs", "config.max_seqs"},
    {"preempt", "config.preempt"},
    {"finished", "requests.finished"},
    {"rejected", "requests.rejected"},
    {"peak_physical", "blocks.peak_physical"},
    {"mean_physical", "blocks.mean_physical"},
    {"peak_logical", "blocks.peak_logical"},
    {"mean_logical", "blocks.mean_logical"},
    {"sharing_ratio", "blocks.sharing_ratio"},
    {"hit_rate", "prefix.hit_rate"},
    {"evictions", "evictions"},
    {"preemptions", "preemptions"},
    {"watermark_deferrals", "watermark.deferrals"},
    {"ttft_p50_s", "latency_s.ttft.p50"},
    {"ttft_p99_s", "latency_s.ttft.p99"},
    {"tpot_p50_s", "latency_s.tpot.p50"},
    {"tpot_p99_s", "latency_s.tpot.p99"},
    {"output_tok_per_s", "throughput.output_tok_per_s"},
    {"requests_per_s", "throughput.requests_per_s"},
};
enum { N_COLUMNS = sizeof columns / sizeof columns[0] };

/* Row order after block_size…preempt: the knobs a sweep varies, outermost first. */
static const char *const sort_keys[] = {
    "config.block_size", "config.num_blocks", "config.kv_budget_bytes", "config.watermark",
    "config.free_order", "config.max_seqs",   "config.preempt",
};

static char *base_name(const char *dir)
{
    const char *slash = strrchr(dir, '/');
    return kv_xstrdup(slash ? slash + 1 : dir);
}

char *sweep_path(const char *dir, const char *name)
{
    size_t base = strlen(dir);
    while (base > 1 && dir[base - 1] == '/')
        base--;
    size_t n = base + strlen(name) + 2;
    char *p = kv_xmalloc(n);
    snprintf(p, n, "%.*s%s%s", (int)base, dir, *name ? "/" : "", name);
    return p;
}

int sweep_row_load(sweep_row *r, const char *dir)
{
    memset(r, 0, sizeof *r);
    char *d = sweep_path(dir, "");
    char *path = sweep_path(d, "summary.json");
    json_error_t je;
    errno = 0;
    json_t *s = json_load_file(path, 0, &je);
    int rc = CLI_OK;
    if (!s) {
        if (je.line < 1)
            rc = cli_error(CLI_RUNTIME, "cannot read '%s': %s", path,
                           errno ? strerror(errno) : je.text);
        else
            rc = cli_error(CLI_RUNTIME, "%s:%d: malformed JSON at column %d: %s", path, je.line,
                           je.column, je.text);
    }
    for (size_t i = 0; rc == CLI_OK && i < N_COLUMNS; i++) {
        const json_t *v = columns[i].path ? kv_json_at(s, columns[i].path) : NULL;
        if (columns[i].path && !json_is_number(v) && !json_is_string(v) && !json_is_null(v))
            rc = cli_error(CLI_RUNTIME, "'%s' is not a kvsim run summary: no '%s'", path,
                           columns[i].path);
    }
    free(path);
    if (rc != CLI_OK) {
        json_decref(s);
        free(d);
        return rc;
    }
    r->config = base_name(d);
    r->dir = d;
    r->summary = s;
    return CLI_OK;
}

void sweep_row_failed(sweep_row *r, const char *dir, const char *failure)
{
    memset(r, 0, sizeof *r);
    r->dir = sweep_path(dir, "");
    r->config = base_name(r->dir);
    r->failure = kv_xstrdup(failure);
}

void sweep_row_release(sweep_row *r)
{
    free(r->config);
    free(r->dir);
    free(r->failure);
    json_decref(r->summary);
    memset(r, 0, sizeof *r);
}

/* null < numbers < strings; integers compared exactly, other numbers as doubles. */
static int cmp_value(const json_t *a, const json_t *b)
{
    int ta = !a || json_is_null(a) ? 0 : json_is_number(a) ? 1 : 2;
    int tb = !b || json_is_null(b) ? 0 : json_is_number(b) ? 1 : 2;
    if (ta != tb || ta == 0)
        return (ta > tb) - (ta < tb);
    if (ta == 2)
        return strcmp(json_string_value(a), json_string_value(b));
    if (json_is_integer(a) && json_is_integer(b)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        return (x > y) - (x < y);
    }
    double x = json_number_value(a), y = json_number_value(b);
    return (x > y) - (x < y);
}

static int cmp_rows(const void *pa, const void *pb)
{
    const sweep_row *a = pa, *b = pb;
    if (!a->summary != !b->summary)
        return a->summary ? -1 : 1;
    for (size_t i = 0; a->summary && i < sizeof sort_keys / sizeof sort_keys[0]; i++) {
        int c =
            cmp_value(kv_json_at(a->summary, sort_keys[i]), kv_json_at(b->summary, sort_keys[i]));
        if (c != 0)
            return c;
    }
    return strcmp(a->dir, b->dir);
}

void sweep_rows_sort(sweep_row *rows, size_t n)
{
    if (n > 1)
        qsort(rows, n, sizeof *rows, cmp_rows);
}

static void csv_value(FILE *f, const json_t *v)
{
    if (json_is_integer(v))
        fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        fprintf(f, "%.15g", json_real_value(v));
    else if (json_is_string(v))
        kv_csv_field(f, json_string_value(v));
    /* null: an empty cell */
}

int sweep_csv_write(const char *path, const sweep_row *rows, size_t n)
{
    sweep_row *sorted = kv_xcalloc(n ? n : 1, sizeof *sorted);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].summary)
            sorted[m++] = rows[i]; /* shallow copies: only the order is ours */
    sweep_rows_sort(sorted, m);

    cli_outfile o;
    int rc = cli_outfile_open(&o, path);
    if (rc == CLI_OK) {
        for (size_t c = 0; c < N_COLUMNS; c++)
            fprintf(o.f, "%s%s", c ? "," : "", columns[c].name);
        fputc('\n', o.f);
        for (size_t i = 0; i < m; i++) {
            kv_csv_field(o.f, sorted[i].config);
            fputc(',', o.f);
            kv_csv_field(o.f, sorted[i].dir);
            for (size_t c = 2; c < N_COLUMNS; c++) {
                fputc(',', o.f);
                csv_value(o.f, kv_json_at(sorted[i].summary, columns[c].path));
            }
            fputc('\n', o.f);
        }
        rc = cli_outfile_commit(&o);
    }
    free(sorted);
    return rc;
}

static double num(const json_t *s, const char *path)
{
    return json_number_value(kv_json_at(s, path));
}

void sweep_print_table(FILE *f, const sweep_row *rows, size_t n)
{
    int w = 6;
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(rows[i].config) > w)
            w = (int)strlen(rows[i].config);
    fprintf(f, "  %-*s %10s %8s %8s %10s %7s %6s %10s %8s %8s %9s %9s %9s\n", w, "config",
            "num_blocks", "finished", "rejected", "peak_phys", "sharing", "hit%", "evictions",
            "preempt", "wm_defer", "ttft_p99", "tpot_p99", "tok/s");
    for (size_t i = 0; i < n; i++) {
        const json_t *s = rows[i].summary;
        if (!s) {
            fprintf(f, "  %-*s FAILED: %s\n", w, rows[i].config, rows[i].failure);
            continue;
        }
        fprintf(
            f,
            "  %-*s %10.0f %8.0f %8.0f %10.0f %7.3f %6.2f %10.0f %8.0f %8.0f %9.3f %9.4f %9.1f\n",
            w, rows[i].config, num(s, "config.num_blocks"), num(s, "requests.finished"),
            num(s, "requests.rejected"), num(s, "blocks.peak_physical"),
            num(s, "blocks.sharing_ratio"), 100.0 * num(s, "prefix.hit_rate"), num(s, "evictions"),
            num(s, "preemptions"), num(s, "watermark.deferrals"), num(s, "latency_s.ttft.p99"),
            num(s, "latency_s.tpot.p99"), num(s, "throughput.output_tok_per_s"));
    }
}
