/* proc: run child processes, a bounded number at once — the one child-process runner,
 * behind `kvsim sweep` (this binary, once per configuration) and the figures (gnuplot,
 * once per figure).
 *
 * Each job is posix_spawn(program, argv), by default "/proc/self/exe": the same kvsim; no
 * shell, no PATH lookup, so what runs is exactly the argv built.  stdin and stdout go to
 * /dev/null, stderr to the job's own file (opened by the parent before spawning).  Every
 * child is reaped before kv_proc_run returns.
 */
#ifndef KVSIM_PROC_H
#define KVSIM_PROC_H

#include <stdbool.h>
#include <stddef.h>

typedef struct kv_job {
    const char *program;     /* the executable's path; NULL: this binary */
    char *const *argv;       /* NULL-terminated; argv[1…] are the program's arguments */
    const char *stderr_path; /* the child's stderr goes here (truncated first) */
    int exit_code;           /* out: exit status, 128 + signal, or -1 if never started */
    int signal;              /* out: the signal that ended it, or 0 */
    char *failure;           /* out, malloc'd: "exit 1: <first stderr line>"; NULL on 0 */
} kv_job;

/* Called after every job that ends: done of n, running still. */
typedef void (*kv_proc_progress)(void *ctx, size_t done, size_t n, size_t running);

/* Run every job, at most `parallel` at once, started in order.  Returns when all have
 * ended; an empty stderr file of a successful job is removed. */
void kv_proc_run(kv_job *jobs, size_t n, unsigned parallel, kv_proc_progress progress, void *ctx);

#endif
