/* report: the files a run writes (DESIGN §8), atomically.
 *
 * Every file goes to a temporary directory beside the output directory first (kv_afile
 * files in a kv_outdir); kv_out_commit puts it in the output directory's place only when
 * every file was written and closed without error, and kv_out_abort removes it, so a
 * failed or interrupted run never leaves a truncated file that looks complete, nor its
 * files beside an earlier run's.
 * timeseries.csv streams one row per sample during the run (memory stays O(1) in steps).
 */
#ifndef KVSIM_REPORT_H
#define KVSIM_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "kvsim/error.h"
#include "kvsim/metrics.h"
#include "kvsim/outdir.h"
#include "kvsim/sim.h"
#include "kvsim/strbuf.h"

/* How every JSON output file is printed: 2-space indent, keys in insertion order, reals
 * with 15 significant digits (exact to the nanosecond for times below 10^6 s). */
#define KV_JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

/* The version of kvsim (meson's project version, "0.1.0"), stamped into every JSON
 * output as "kvsim_version". */
const char *kv_version(void);
/* obj (a JSON object, whose reference this takes) with "kvsim_version" and "command" (the
 * command line that made it; NULL: JSON null) first and obj's own keys after them, in
 * their order.  For the JSON outputs built outside the summary schema: plan.json,
 * perf.json, `kvsim estimate --json`. */
json_t *kv_json_stamped(json_t *obj, const char *command);
/* The value at a dotted path ("blocks.peak_physical") of a JSON object such as
 * summary.json; NULL when a key is missing or a step is not an object. */
const json_t *kv_json_at(const json_t *root, const char *path);

/* One CSV field, RFC 4180: quoted when it holds a comma, a quote or a line break. */
void kv_csv_field(kv_buf *b, const char *s);

/* requests.csv: its header line, and request i's row (trace order, DESIGN §8), both from
 * one column table; a cluster run (res->cluster) adds `replica` after `id` and
 * `predicted_hit_tokens` before `hit_tokens` (§10). */
void kv_report_requests_header(kv_buf *b, const kv_run_result *res);
void kv_report_request_row(kv_buf *b, const kv_run_result *res, size_t i);
/* timeseries.csv: its header line and one sample's row, both from KV_SAMPLE_COLUMNS; with
 * replica (a cluster run) a `replica` column follows time_s. */
void kv_report_timeseries_header(kv_buf *b, bool replica);
void kv_report_timeseries_row(kv_buf *b, const kv_sample *s, bool replica);

/* perf.json's object (new reference): wall time, peak RSS and simulation speed of a run
 * that took wall seconds.  The only output with machine-dependent numbers. */
json_t *kv_report_perf_json(double wall, const kv_run_result *r);

/* ---- plan.json and plan.csv (report_plan.c) ------------------------------------------ */
struct kv_plan;
/* plan.json's object (new reference). */
json_t *kv_plan_json(const struct kv_plan *p);
/* Check dir for a plan's files (missing, or holding only plan.csv, plan.json and the plan's
 * figure: outdir.h) and make the temporary directory they are written into — before the
 * search, so an unusable DIR is an error before any replay.  0, or -KV_EINVAL / -KV_EIO
 * with a diag (*o done). */
int kv_plan_out_open(kv_outdir *o, const char *dir, kv_diag *diag);
/* Write plan.csv and plan.json into o and commit it: DIR then holds this plan's files and
 * nothing of an earlier one.  0 or -KV_EIO with a diag (o aborted, DIR as it was); *o is
 * done either way. */
int kv_plan_write_files(const struct kv_plan *p, kv_outdir *o, kv_diag *diag);

/* ---- estimate (report_estimate.c) ----------------------------------------------------- */
struct kv_estimate;
/* `kvsim estimate --json`'s object (new reference): the setup, the options it was resolved
 * from (for the budget's breakdown: gpu_util, reserve) and the estimate. */
json_t *kv_estimate_json(const kv_setup *s, const kv_setup_options *so,
                         const struct kv_estimate *e);

/* ---- a run's files ------------------------------------------------------------------ */
typedef struct kv_out kv_out; /* opaque */

/* Check dir (a missing directory, or one holding only what a run writes: outdir.h) and
 * open timeseries.csv (with the replica column for a cluster run) in a temporary
 * directory beside it.  0, or -KV_EINVAL / -KV_EIO with
 * a diag; nothing is left behind on error. */
int kv_out_open(kv_out **out, const char *dir, bool replica_column, kv_diag *diag);
/* Engine on_sample callback: ctx is the kv_out.  A write error surfaces at commit
 * (ferror on close). */
void kv_out_sample(void *ctx, const kv_sample *s);
/* Write summary.json, perf.json (NULL skips it) and requests.csv, then put the directory
 * in dir's place (kv_outdir_commit): dir then holds this run's files and nothing else.
 * Takes ownership of nothing.  0 or -KV_EIO with a diag naming DIR/NAME (dir as it was). */
int kv_out_commit(kv_out *o, const json_t *summary, const json_t *perf, const kv_run_result *r,
                  kv_diag *diag);
/* Remove the temporary directory and free.  Safe after commit (then it only frees).  NULL
 * ok. */
void kv_out_abort(kv_out *o);
/* The files a run directory may hold besides its figures, NULL-terminated: the four a run
 * writes and stderr.txt (where sweep keeps a failed configuration's messages). */
const char *const *kv_out_file_names(void);

/* Create dir and its parents (mkdir -p).  0, or -KV_EINVAL for "" or -KV_EIO with a diag
 * ("cannot create directory …", "'x' is not a directory"). */
int kv_mkdir_p(const char *dir, kv_diag *diag);

/* A JSON string of text that may not be valid UTF-8 (a path, a name from the command line):
 * each byte that is not part of a valid UTF-8 sequence becomes U+FFFD, so the value is
 * never dropped (jansson refuses invalid UTF-8).  New reference; text NULL gives "". */
json_t *kv_json_text(const char *text);

#endif
