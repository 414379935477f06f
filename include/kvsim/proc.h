/* proc: run child processes, a bounded number at once — the one child-process runner,
 * behind `kvsim sweep` (this binary, once per configuration) and the figures (gnuplot,
 * once per figure).
 *
 * Each job is posix_spawn(program, argv), by default "/proc/self/exe": the same kvsim; no
 * shell, no PATH lookup, so what runs is exactly the argv built — or a fork running a
 * function on that argv (kv_job.fn), for children that share what the parent read.  stdin and stdout go to
 * /dev/null; stderr goes to a pipe the parent reads while the child runs, so what a child
 * says reaches the caller in memory even when no file can be written (a full file system
 * is exactly when a child has something to say).  Every child is reaped before
 * kv_proc_run returns.
 */
#ifndef KVSIM_PROC_H
#define KVSIM_PROC_H

#include <stdbool.h>
#include <stddef.h>

/* What is kept of a child's stderr: its first KV_PROC_ERR_HEAD bytes and its last
 * KV_PROC_ERR_TAIL bytes (a line saying how many were skipped in between). */
enum { KV_PROC_ERR_HEAD = 16384, KV_PROC_ERR_TAIL = 16384 };

typedef struct kv_job {
    const char *program; /* the executable's path; NULL: this binary */
    char *const *argv;   /* NULL-terminated; argv[1…] are the program's arguments */
    /* Or, fn set: no exec — a forked copy of this process runs fn(ctx, argv) with the same
     * descriptors 0–2 as a spawned child (none other open) and ends with its return value
     * as exit status; what this process holds (sweep: the trace read once) is shared. */
    int (*fn)(void *ctx, char *const *argv);
    void *ctx;
    int exit_code;       /* out: exit status, 128 + signal, or -1 if never started */
    int signal;          /* out: the signal that ended it, or 0 */
    char *err;           /* out, malloc'd: what it wrote on stderr (kept as above),
                            NUL-terminated; NULL when it wrote nothing */
    size_t err_len;      /* out: bytes in err */
    char *failure;       /* out, malloc'd: "exit 1: <first stderr line>"; NULL on 0 */
} kv_job;

/* Called whenever jobs started or ended, once the free slots were refilled: done of n
 * ended, running now running (min(parallel, n − done) while jobs wait to start); first
 * with done 0, last with done n and running 0. */
typedef void (*kv_proc_progress)(void *ctx, size_t done, size_t n, size_t running);

/* Run every job, at most `parallel` at once, started in order.  Returns when all have
 * ended and were reaped; release each job's outputs with kv_job_release. */
void kv_proc_run(kv_job *jobs, size_t n, unsigned parallel, kv_proc_progress progress, void *ctx);
/* Free a job's outputs (err, failure). */
void kv_job_release(kv_job *j);

/* Send sig to every child kv_proc_run has running in this process and wait for each to
 * end.  Async-signal-safe (kill, waitpid): for the CLI's signal handler, so an
 * interrupted sweep leaves no configuration running (each cleans up after itself). */
void kv_proc_signal_children(int sig);

#endif
