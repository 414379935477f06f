/* proc: the child-process runner (include/kvsim/proc.h).
 *
 * Each job is posix_spawn(program, argv), "/proc/self/exe" unless the job names another
 * program: no shell, no PATH lookup, so what runs is exactly the argv built (and sweep's
 * --emit-jobs prints).  A failed exec is posix_spawn's return value, recorded as the job's
 * failure.  A pool of `parallel` slots: start jobs in order while a slot is free, then
 * poll the running children's stderr pipes, reading what arrives, and reap children with
 * waitpid(WNOHANG); a job has ended when its pipe reached end of file and it was reaped.
 *
 * Why a pipe and not a file: the caller used to hand each child a stderr file, and on a
 * full file system that file could not be written either, so a failing child's message
 * was lost exactly when it mattered.  A pipe needs no disk; the parent keeps the head and
 * the tail of what arrives (proc.h) and the caller decides where to save it.
 *
 * Invariants: running = number of started jobs not yet ended ≤ parallel; a running job's
 * pipe is open until end of file, and it is reaped exactly once.  Every child is reaped
 * before kv_proc_run returns (no zombies, no orphans writing after sweep.csv).
 * Complexity: O(n · parallel) per event to map pids and pipes back to jobs — n and
 * parallel are small (≤ 10,000 and ≤ 1,024).
 *
 * The live table: the pids of running children, in one process-wide array of atomics, so
 * a signal handler can pass the signal on (kv_proc_signal_children) — as with afile's
 * temp table, a handler has no context to reach them through.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "kvsim/afile.h"
#include "kvsim/mem.h"
#include "kvsim/proc.h"
#include "kvsim/strbuf.h"

/* ---- the live table ------------------------------------------------------------------ */

enum { MAX_LIVE = 1024 };
static _Atomic pid_t live[MAX_LIVE];

static void live_add(pid_t pid)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        pid_t empty = 0;
        if (atomic_compare_exchange_strong(&live[i], &empty, pid))
            return;
    }
}

static void live_remove(pid_t pid)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        pid_t p = pid;
        if (atomic_compare_exchange_strong(&live[i], &p, 0))
            return;
    }
}

void kv_proc_signal_children(int sig)
{
    int saved = errno;
    for (int i = 0; i < MAX_LIVE; i++) {
        pid_t p = atomic_load(&live[i]);
        if (p > 0)
            kill(p, sig);
    }
    for (int i = 0; i < MAX_LIVE; i++) {
        pid_t p = atomic_exchange(&live[i], 0);
        while (p > 0 && waitpid(p, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    errno = saved;
}

/* ---- what a child says --------------------------------------------------------------- */

typedef struct capture {
    char head[KV_PROC_ERR_HEAD];
    size_t head_len;
    char *tail; /* a ring of KV_PROC_ERR_TAIL bytes once the head is full */
    size_t tail_pos, tail_len;
    size_t total;
} capture;

static void capture_add(capture *c, const char *buf, size_t n)
{
    c->total += n;
    size_t h = KV_PROC_ERR_HEAD - c->head_len;
    if (h > n)
        h = n;
    memcpy(c->head + c->head_len, buf, h);
    c->head_len += h;
    buf += h;
    n -= h;
    if (n && !c->tail)
        c->tail = kv_xmalloc(KV_PROC_ERR_TAIL);
    for (; n; n--, buf++) {
        c->tail[c->tail_pos] = *buf;
        c->tail_pos = (c->tail_pos + 1) % KV_PROC_ERR_TAIL;
        if (c->tail_len < KV_PROC_ERR_TAIL)
            c->tail_len++;
    }
}

/* The kept text, NUL-terminated (NULL when nothing arrived), into the job; c released. */
static void capture_finish(capture *c, kv_job *j)
{
    if (c->total > 0) {
        kv_buf b = {0};
        kv_buf_printf(&b, "%.*s", (int)c->head_len, c->head);
        size_t skipped = c->total - c->head_len - c->tail_len;
        if (skipped)
            kv_buf_printf(&b, "\n[... %zu bytes not kept ...]\n", skipped);
        size_t start = (c->tail_pos + KV_PROC_ERR_TAIL - c->tail_len) % KV_PROC_ERR_TAIL;
        for (size_t i = 0; i < c->tail_len; i++)
            kv_buf_putc(&b, c->tail[(start + i) % KV_PROC_ERR_TAIL]);
        j->err = b.s;
        j->err_len = b.len;
    }
    free(c->tail);
    c->tail = NULL;
}

static char *xprintf2(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *p = kv_xmalloc(n);
    snprintf(p, n, "%s%s", a, b);
    return p;
}

/* "exit 1: <first line of stderr, without 'kvsim: error: '>" */
static char *describe_failure(const kv_job *j)
{
    char what[96];
    if (j->exit_code > 128)
        snprintf(what, sizeof what, "killed by signal %d (%s)", j->exit_code - 128,
                 strsignal(j->exit_code - 128));
    else
        snprintf(what, sizeof what, "exit %d", j->exit_code);
    const char *msg = j->err ? j->err : "";
    size_t len = strcspn(msg, "\r\n");
    if (strncmp(msg, "kvsim: error: ", 14) == 0 && len >= 14) {
        msg += 14;
        len -= 14;
    }
    kv_buf b = {0};
    kv_buf_printf(&b, "%s: ", what);
    if (len)
        kv_buf_printf(&b, "%.*s", (int)len, msg);
    else
        kv_buf_puts(&b, "(nothing on stderr)");
    return b.s;
}

/* ---- running ------------------------------------------------------------------------- */

typedef struct run_state {
    pid_t pid;    /* 0: not running */
    int fd;       /* the stderr pipe's read end, -1 once at end of file */
    bool reaped;  /* waitpid returned it */
    int status;   /* its wait status, once reaped */
    capture *cap; /* while running */
} run_state;

/* A kv_job.fn child: fork, and in the child set descriptors 0–2 as posix_spawn's file
 * actions would (stdin, stdout /dev/null; stderr the pipe), close every other one (what
 * an exec would drop with O_CLOEXEC, and the other children's pipes), forget the other
 * children (the live table is this process's, not the child's: its signal handler must
 * not pass a signal to its siblings), restore the signal mask and run fn.  0 or errno. */
static int fork_job(const kv_job *j, int err_fd, const sigset_t *mask, pid_t *pid)
{
    pid_t c = fork();
    if (c < 0)
        return errno;
    if (c > 0) {
        *pid = c;
        return 0;
    }
    int null_in = open("/dev/null", O_RDONLY), null_out = open("/dev/null", O_WRONLY);
    if (null_in < 0 || null_out < 0 || dup2(null_in, 0) < 0 || dup2(null_out, 1) < 0 ||
        dup2(err_fd, 2) < 0)
        _exit(127); /* as a failed exec */
    close_range(3, ~0U, 0);
    for (int i = 0; i < MAX_LIVE; i++)
        atomic_store(&live[i], 0);
    sigprocmask(SIG_SETMASK, mask, NULL);
    int rc = j->fn(j->ctx, j->argv);
    fflush(NULL);
    _exit(rc);
}

/* Start job j: 0, or -1 with j->failure set (it then counts as ended). */
static int start(kv_job *j, run_state *st)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        j->failure = xprintf2("cannot create a pipe: ", strerror(errno));
        return -1;
    }
    fflush(NULL); /* nothing buffered is written twice */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 2); /* dup2 clears O_CLOEXEC on 2 */
    const char *prog = j->program ? j->program : "/proc/self/exe";
    /* Signals held from the spawn until the pid is in the live table, so a handler never
     * misses a child; the child starts with the mask as it was. */
    sigset_t held;
    kv_afile_hold_signals(&held);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigmask(&attr, &held);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    int e = j->fn ? fork_job(j, p[1], &held, &st->pid)
                  : posix_spawn(&st->pid, prog, &fa, &attr, j->argv, environ);
    if (e == 0)
        live_add(st->pid);
    kv_afile_release_signals(&held);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (e != 0) {
        close(p[0]);
        st->pid = 0;
        char *t = xprintf2(j->fn ? "cannot fork '" : "cannot execute '", j->fn ? j->argv[0] : prog);
        char *u = xprintf2(t, "': ");
        j->failure = xprintf2(u, strerror(e));
        free(t);
        free(u);
        return -1;
    }
    st->fd = p[0];
    st->reaped = false;
    st->cap = kv_xcalloc(1, sizeof *st->cap);
    return 0;
}

static void finish(kv_job *j, run_state *st)
{
    int status = st->status;
    j->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    j->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    capture_finish(st->cap, j);
    free(st->cap);
    st->cap = NULL;
    st->pid = 0;
    if (j->exit_code != 0)
        j->failure = describe_failure(j);
}

/* Read what is there on a readable pipe; close it at end of file. */
static void drain(run_state *st)
{
    char buf[4096];
    ssize_t r = read(st->fd, buf, sizeof buf);
    if (r > 0) {
        capture_add(st->cap, buf, (size_t)r);
    } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(st->fd);
        st->fd = -1;
    }
}

/* Mark every child that has ended as reaped (blocking for one when block). */
static void reap(run_state *sts, size_t next, bool block)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, block ? 0 : WNOHANG);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid <= 0)
            return;
        live_remove(pid);
        for (size_t i = 0; i < next; i++)
            if (sts[i].pid == pid && !sts[i].reaped) {
                sts[i].reaped = true;
                sts[i].status = status;
                break;
            }
        block = false;
    }
}

void kv_proc_run(kv_job *jobs, size_t n, unsigned parallel, kv_proc_progress progress, void *ctx)
{
    run_state *sts = kv_xcalloc(n ? n : 1, sizeof *sts);
    struct pollfd *pfd = kv_xcalloc(parallel ? parallel : 1, sizeof *pfd);
    size_t *pjob = kv_xcalloc(parallel ? parallel : 1, sizeof *pjob);
    size_t next = 0, running = 0, done = 0;
    for (size_t i = 0; i < n; i++) {
        jobs[i].exit_code = -1;
        jobs[i].signal = 0;
        jobs[i].err = jobs[i].failure = NULL;
        jobs[i].err_len = 0;
        sts[i].fd = -1;
    }
    bool changed = false;
    for (;;) {
        while (running < parallel && next < n) {
            if (start(&jobs[next], &sts[next]) == 0)
                running++;
            else
                done++;
            next++;
            changed = true;
        }
        /* Reported after the free slots were refilled, so running is what runs now (not
         * one less between a job's end and the next one's start). */
        if (changed && progress)
            progress(ctx, done, n, running);
        changed = false;
        if (done == n)
            break;
        nfds_t k = 0;
        bool unreaped_eof = false;
        for (size_t i = 0; i < next; i++) {
            if (!sts[i].pid)
                continue;
            if (sts[i].fd >= 0) {
                pfd[k] = (struct pollfd){sts[i].fd, POLLIN, 0};
                pjob[k++] = i;
            } else if (!sts[i].reaped) {
                unreaped_eof = true;
            }
        }
        if (k == 0) {
            reap(sts, next, true); /* every pipe closed: wait for an exit */
        } else {
            /* A child whose pipe closed but that has not exited yet is looked at again
             * soon; otherwise sleep until a pipe says something. */
            int r = poll(pfd, k, unreaped_eof ? 10 : -1);
            for (nfds_t q = 0; r > 0 && q < k; q++)
                if (pfd[q].revents)
                    drain(&sts[pjob[q]]);
            reap(sts, next, false);
        }
        for (size_t i = 0; i < next; i++) {
            if (!sts[i].pid || sts[i].fd >= 0 || !sts[i].reaped)
                continue;
            finish(&jobs[i], &sts[i]);
            running--;
            done++;
            changed = true;
        }
    }
    free(pjob);
    free(pfd);
    free(sts);
}

void kv_job_release(kv_job *j)
{
    free(j->err);
    free(j->failure);
    j->err = j->failure = NULL;
    j->err_len = 0;
}
