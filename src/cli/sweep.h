/* sweep: what `kvsim sweep` and `kvsim merge` share — one sweep.csv row per configuration
 * directory, built from that directory's summary.json and nothing else, the row order, the
 * atomic sweep.csv, and the human table.  Because both commands go through these functions,
 * `kvsim merge` of a sweep's directory rebuilds its sweep.csv byte for byte. */
#ifndef KVSIM_CLI_SWEEP_H
#define KVSIM_CLI_SWEEP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/sim.h"

/* ---- the configurations: lists and their product (sweep_space.c) --------------------- */
enum {
    SWEEP_AX_BLOCK,     /* --block-size */
    SWEEP_AX_POOL,      /* --num-blocks or --kv-budget; may be empty */
    SWEEP_AX_WATERMARK, /* --watermark */
    SWEEP_AX_FREE,      /* --free-order */
    SWEEP_AX_SEQS,      /* --max-seqs */
    SWEEP_AX_PREEMPT,   /* --preempt */
    SWEEP_N_AXES
};

typedef struct sweep_value {
    char arg[32];   /* canonical text for `kvsim run --OPT` */
    char label[40]; /* its part of the directory name: "b16", "kv24GiB", "wm0.01", "split" */
    uint64_t u;     /* the value of a count or size */
    double d;       /* the value of --watermark */
} sweep_value;

typedef struct sweep_axis {
    const char *opt; /* run's option name ("block-size"); NULL while the axis is empty */
    sweep_value *v;  /* n values, sorted, distinct */
    size_t n;
} sweep_axis;

typedef struct sweep_space {
    sweep_axis ax[SWEEP_N_AXES];
} sweep_space;

/* Whether --opt (without the dashes) is one of the sweep lists. */
bool sweep_space_is_list(const char *opt);
/* --opt LIST: every item validated by run's handler on mo/so (which keep the last item),
 * then sorted; a repeated list replaces the earlier one.  0, or CLI_USAGE after printing
 * (an invalid or empty item, a repeated value, --num-blocks with --kv-budget). */
int sweep_space_parse(sweep_space *sp, const char *opt, const char *list, cli_model_opts *mo,
                      cli_sim_opts *so);
/* Give every unlisted axis but the pool run's default (from mo/so, not yet touched by a
 * list); returns the number of configurations (saturating at SIZE_MAX). */
size_t sweep_space_complete(sweep_space *sp, const cli_model_opts *mo, const cli_sim_opts *so);
/* Configuration i (0-based, in order): its index on every axis and its directory name. */
void sweep_space_at(const sweep_space *sp, size_t i, size_t at[SWEEP_N_AXES], char *name, size_t n);
void sweep_space_release(sweep_space *sp);
/* "24GiB", "512MiB", "3KiB" when exact, else the bytes. */
void sweep_size_label(char *buf, size_t n, uint64_t bytes);

/* dir + "/" + name, without dir's trailing slashes ("out/" + "x" → "out/x"); name ""
 * gives dir alone, trimmed.  malloc'd. */
char *sweep_path(const char *dir, const char *name);

typedef struct sweep_row {
    char *config;    /* the directory's base name, e.g. "b16_wm0.01_split_s256_fcfs" */
    char *dir;       /* the directory as given or found, no trailing '/' */
    json_t *summary; /* its parsed summary.json; NULL for a configuration that failed */
    char *failure;   /* why it failed, for the table ("exit 1: …"); NULL when it did not */
} sweep_row;

/* Fill r from dir/summary.json (r->config = base name of dir).  Checks that every field a
 * sweep.csv row needs is there.  0, or CLI_RUNTIME after printing "kvsim: error: …"
 * (r is then empty and needs no release). */
int sweep_row_load(sweep_row *r, const char *dir);
/* A row for a configuration that produced no summary: failure is copied. */
void sweep_row_failed(sweep_row *r, const char *dir, const char *failure);
void sweep_row_release(sweep_row *r);

/* The canonical row order: block_size, num_blocks, kv_budget_bytes, watermark, free_order,
 * max_seqs, preempt (numbers ascending, names alphabetically), then dir.  Failed rows go
 * last, by dir. */
void sweep_rows_sort(sweep_row *rows, size_t n);

/* Write sweep.csv to path ("-" = standard output) atomically: the header, then one line per
 * row that has a summary, in the canonical order whatever the order of `rows`.  0, or
 * CLI_RUNTIME after printing. */
int sweep_csv_write(const char *path, const sweep_row *rows, size_t n);

/* The human table: one line per row in the given order, key columns only (failed rows say
 * so). */
void sweep_print_table(FILE *f, const sweep_row *rows, size_t n);

/* ---- running configurations as child processes (sweep_exec.c) ------------------------- */
typedef struct sweep_job {
    char *const *argv;       /* NULL-terminated; argv[1…] are this binary's arguments */
    const char *stderr_path; /* the child's stderr goes here (truncated first) */
    int exit_code;           /* out: exit status, 128 + signal, or -1 if never started */
    char *failure;           /* out, malloc'd: "exit 1: <first stderr line>"; NULL on 0 */
} sweep_job;

/* Run every job as `/proc/self/exe argv[1…]` (fork + execv, no shell), stdin and stdout on
 * /dev/null, at most `parallel` at once, in order.  Returns when all have finished; an
 * empty stderr file of a successful job is removed.  progress: a status line on stderr. */
void sweep_exec(sweep_job *jobs, size_t n, unsigned parallel, bool progress);

#endif
