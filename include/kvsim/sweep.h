/* sweep: the configuration space of `kvsim sweep` and the sweep.csv it is summarised in.
 *
 * The space.  Axes, outermost first: block size, pool size (num_blocks or kv_budget, may
 * be empty), watermark, free order, max seqs, preempt, replicas and router (both may be
 * empty), then one axis for every other option of `kvsim run` (the enum below; each may
 * be empty) but --hash-algo, which changes no figure.  Each axis holds a sorted list of
 * distinct values (numbers ascending, names alphabetically, off before on), so the
 * configuration order and the names depend only on the set of values given.  A value
 * carries its canonical text for `kvsim run --OPT` (integers in decimal, sizes in bytes,
 * reals as the shortest decimal that reads back as the same double, routers as
 * kv_router_spec writes them, dtypes and other enumerations by their names, a model, GPU
 * or time model as given, "on"/"off" for a flag pair) and its label in a directory name.
 * Names join labels with '_': b<B>, then n<N> or kv<SIZE> when a pool size was listed,
 * wm<F>, the free order, s<N>, the preempt policy, then r<R> and the router when listed,
 * e.g. b16_wm0.01_split_s256_fcfs or b16_wm0.01_split_s256_fcfs_r4_prefix; then the label
 * of every later axis listed with two or more values (one value is passed to every run and
 * left out of the names, so a name does not change when a fixed option is given), e.g.
 * b16_wm0.01_split_s256_fcfs_tp2_nopc.  Labels are injective on an axis's values (names
 * whose labels collide are refused), so names are unique within a sweep.  A router label
 * is its policy, with weighted's weights when they are not the defaults
 * (weighted-p3-q1-k0).
 *
 * The constant-budget rule.  With several block sizes and no pool size, the KV budget is
 * derived once from the setup (model, GPU, util, reserve, sharding; once per setup when a
 * sweep lists several) and given to every configuration, so num_blocks =
 * ⌊budget / block bytes⌋ per block size: the comparison is at equal memory.  A num_blocks
 * list with several block sizes compares equal block counts instead (the budget then
 * differs, and the sweep says so).
 *
 * sweep.csv.  One row per configuration, each a pure function of that configuration's
 * summary (columns are schema paths, summary.h), rows in the axes' order, so sweeps run
 * with any parallelism, and `kvsim merge` of the same directories, write byte-identical
 * files.
 */
#ifndef KVSIM_SWEEP_H
#define KVSIM_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim/error.h"
#include "kvsim/setup.h"
#include "kvsim/sim.h"
#include "kvsim/summary.h"

/* ---- the space ---------------------------------------------------------------------- */

enum {
    KV_SWEEP_BLOCK,     /* block_size */
    KV_SWEEP_POOL,      /* num_blocks or kv_budget; may be empty */
    KV_SWEEP_WATERMARK, /* watermark */
    KV_SWEEP_FREE,      /* free_order */
    KV_SWEEP_SEQS,      /* max_seqs */
    KV_SWEEP_PREEMPT,   /* preempt */
    KV_SWEEP_REPLICAS,  /* replicas (DESIGN §10); may be empty */
    KV_SWEEP_ROUTER,    /* router; may be empty */
    /* Every other option of `kvsim run` (may be empty; named when listed with two or more
     * values): the setup, */
    KV_SWEEP_MODEL,
    KV_SWEEP_GPU,
    KV_SWEEP_GPU_UTIL,
    KV_SWEEP_RESERVE,
    KV_SWEEP_TP,
    KV_SWEEP_PP,
    KV_SWEEP_KV_DTYPE,
    KV_SWEEP_WEIGHT_DTYPE,
    KV_SWEEP_SCALE_GROUP,
    KV_SWEEP_SCALE_BYTES,
    KV_SWEEP_LAYERS,
    KV_SWEEP_KV_HEADS,
    KV_SWEEP_HEAD_DIM, /* the last setup axis */
    /* the trace, */
    KV_SWEEP_FORMAT,
    KV_SWEEP_TRACE_BLOCK,
    KV_SWEEP_LIMIT,
    KV_SWEEP_TIME_SCALE,
    KV_SWEEP_RATE,
    KV_SWEEP_SHARED_PREFIX,
    KV_SWEEP_SEED,
    /* the scheduler (the four on/off pairs take "on" and "off"), */
    KV_SWEEP_WATERMARK_RULE,
    KV_SWEEP_MAX_BATCHED,
    KV_SWEEP_CHUNKED,
    KV_SWEEP_PREFIX,
    KV_SWEEP_ADMIT_FULL,
    KV_SWEEP_POLICY,
    KV_SWEEP_ASYNC,
    /* time, cost and the cluster's other knobs */
    KV_SWEEP_TIME_MODEL,
    KV_SWEEP_GPU_COST,
    KV_SWEEP_ROUTER_VIEW,
    KV_SWEEP_ROUTER_REFRESH,
    KV_SWEEP_ROUTER_OVERLAP,
    KV_SWEEP_N_AXES
};

typedef struct kv_sweep_value {
    char arg[136];  /* canonical text for `kvsim run --OPT` ("on" / "off" for a flag pair;
                       a model, GPU or time model as given: items are < 128 bytes) */
    char label[64]; /* its part of the directory name: "b16", "kv24GiB", "wm0.01", "split",
                       "r4", "prefix", "weighted-p3-q1-k0" */
    uint64_t u;     /* the value of a count or size (a flag pair: 1 on, 0 off) */
    double d;       /* the value of a real */
} kv_sweep_value;

/* One list a sweep takes, named as run's option ("block-size"). */
typedef struct kv_sweep_list kv_sweep_list;

typedef struct kv_sweep_axis {
    const char *opt;   /* run's option name ("block-size"); NULL while the axis is empty */
    kv_sweep_value *v; /* n values, sorted, distinct */
    size_t n;
} kv_sweep_axis;

typedef struct kv_sweep_space {
    kv_sweep_axis ax[KV_SWEEP_N_AXES];
} kv_sweep_space;

/* The list named opt (without dashes), or NULL when opt is not a sweep list. */
const kv_sweep_list *kv_sweep_list_find(const char *opt);
/* Whether the list's values are set through kv_setup_options (else kv_sim_options). */
bool kv_sweep_list_is_setup(const kv_sweep_list *l);
/* Its axis (KV_SWEEP_*). */
int kv_sweep_axis_of(const kv_sweep_list *l);
/* Its run option's name ("block-size"). */
const char *kv_sweep_list_opt(const kv_sweep_list *l);
/* A flag pair's option that turns it off ("no-prefix-caching"; its values are "on" and
 * "off"), or NULL for a list of values. */
const char *kv_sweep_list_off(const kv_sweep_list *l);
/* The list's value as the options hold it now, canonical text and label filled. */
void kv_sweep_value_of(const kv_sweep_list *l, const kv_setup_options *mo, const kv_sim_options *so,
                       kv_sweep_value *out);
/* Set the list's axis to values[0..n) (they replace an earlier list of the axis), sorted.
 * 0, or -KV_EINVAL with diag "{opt}: V appears twice in the list 'TEXT'" for a repeated
 * value (text: the list as given), or "{opt}: 'A' and 'B' would both be named 'L' in the
 * directory names" for two names (models, GPUs, time models) whose labels collide. */
int kv_sweep_space_set(kv_sweep_space *sp, const kv_sweep_list *l, const kv_sweep_value *values,
                       size_t n, const char *text, kv_diag *diag);
/* Give every unlisted axis but the optional ones (pool, replicas, router and every axis
 * after it: left empty, so every run takes the options given) the options' value; returns
 * the number of configurations (saturating at SIZE_MAX). */
size_t kv_sweep_space_complete(kv_sweep_space *sp, const kv_setup_options *mo,
                               const kv_sim_options *so);
/* Configuration i (0-based, last axis fastest): its index on every axis and its name. */
void kv_sweep_space_at(const kv_sweep_space *sp, size_t i, size_t at[KV_SWEEP_N_AXES], char *name,
                       size_t n);
void kv_sweep_space_release(kv_sweep_space *sp);
/* "24GiB", "512MiB", "3KiB" when exact, else the bytes. */
void kv_size_label(char *buf, size_t n, uint64_t bytes);

typedef enum kv_sweep_pool_mode {
    KV_SWEEP_POOL_GPU,    /* one block size, no pool size: each run derives it */
    KV_SWEEP_POOL_CONST,  /* several block sizes, no pool size: budget derived once */
    KV_SWEEP_POOL_BUDGET, /* a kv_budget list */
    KV_SWEEP_POOL_BLOCKS, /* a num_blocks list */
} kv_sweep_pool_mode;

/* The pool rule for a completed space: its mode, the setup at the smallest block size
 * (2 blocks: for bytes per token), and for GPU/CONST the budget every run derives or gets.
 * mo is the setup of the configurations asked about: with a setup axis of two or more
 * values (kv_sweep_varies_setup) the budget is one per setup, so ask with each
 * configuration's options.  0 or the setup's error with a diag. */
int kv_sweep_pool(const kv_sweep_space *sp, const kv_setup_options *mo, kv_sweep_pool_mode *mode,
                  kv_setup *setup, uint64_t *budget, kv_diag *diag);
/* Whether an axis of the setup besides block size and pool (model … head dim) holds two
 * or more values. */
bool kv_sweep_varies_setup(const kv_sweep_space *sp);

/* ---- sweep.csv ---------------------------------------------------------------------- */

typedef struct kv_sweep_row {
    char *config;       /* the directory's base name, e.g. "b16_wm0.01_split_s256_fcfs" */
    char *dir;          /* the directory as given or found, no trailing '/' */
    bool ok;            /* summary is valid (a finished configuration) */
    kv_summary summary; /* its summary, when ok */
    char *failure;      /* why it failed, for the table ("exit 1: …"); NULL when ok */
} kv_sweep_row;

/* Fill r from dir/summary.json (r->config = base name of dir), parsed through the summary
 * schema.  0, or -KV_EIO / -KV_EPARSE with a diag (r is then empty and needs no release). */
int kv_sweep_row_load(kv_sweep_row *r, const char *dir, kv_diag *diag);
/* A row for a configuration that produced no summary: failure is copied. */
void kv_sweep_row_failed(kv_sweep_row *r, const char *dir, const char *failure);
void kv_sweep_row_release(kv_sweep_row *r);
/* The canonical row order: block_size, num_blocks, kv_budget_bytes, watermark, free_order,
 * max_seqs, preempt, the cluster's knobs, then every other option in its sweep.csv column
 * order (numbers ascending with nulls first, names alphabetically), then dir.  Failed rows go
 * last, by dir. */
void kv_sweep_rows_sort(kv_sweep_row *rows, size_t n);
/* Write sweep.csv to path ("-" = standard output) atomically: the header, then one line per
 * row that has a summary, in the canonical order whatever the order of rows.  0 or -KV_EIO
 * with a diag. */
int kv_sweep_csv_write(const char *path, const kv_sweep_row *rows, size_t n, kv_diag *diag);

/* ---- finished directories (sweep_collect.c) --------------------------------------------- */

/* Whether dir holds a summary.json: one configuration, rather than a sweep directory. */
bool kv_sweep_is_config_dir(const char *dir);
/* Told about a configuration directory left out because it has no summary.json but a
 * stderr.txt (one that sweep saw fail). */
typedef void (*kv_sweep_left_out)(void *ctx, const char *dir);
/* The rows of every finished configuration in dirs, sorted (kv_sweep_rows_sort): a
 * configuration directory is one row, any other is searched one level deep; a directory
 * given or found twice gives one row.  Rows may differ in anything: sweep.csv has a
 * column for every option of the run.  left_out may be NULL.  0, or -KV_EIO / -KV_EPARSE
 * with a diag (an unreadable directory or summary); *rows (*n of them, each to release)
 * must be freed either way. */
int kv_sweep_collect(const char *const *dirs, size_t n_dirs, kv_sweep_left_out left_out, void *ctx,
                     kv_sweep_row **rows, size_t *n, kv_diag *diag);

/* The name under which sweep keeps its copy of a trace that cannot be read twice (a pipe,
 * /dev/stdin), in the sweep directory: the configurations read it there. */
#define KV_SWEEP_TRACE_COPY "trace"

/* Remove an earlier sweep from dir (`kvsim sweep --force`): sweep.csv, the sweep figures,
 * the trace copy, and every subdirectory holding only what a run writes (its files,
 * figures and stderr.txt).  Anything else makes it refuse before it removes anything:
 * -KV_EIO naming the first such entry.  A missing dir is 0. */
int kv_sweep_clear(const char *dir, kv_diag *diag);

#endif
