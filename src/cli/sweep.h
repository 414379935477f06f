/* sweep: what `kvsim sweep` and `kvsim merge` share — one sweep.csv row per configuration
 * directory, built from that directory's summary.json and nothing else, the row order, the
 * atomic sweep.csv, and the human table.  Because both commands go through these functions,
 * `kvsim merge` of a sweep's directory rebuilds its sweep.csv byte for byte. */
#ifndef KVSIM_CLI_SWEEP_H
#define KVSIM_CLI_SWEEP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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
