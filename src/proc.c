/* proc: the child-process runner (include/kvsim/proc.h).
 *
 * Each job is posix_spawn(program, argv), "/proc/self/exe" unless the job names another
 * program: no shell, no PATH lookup, so what runs is exactly the argv built (and sweep's
 * --emit-jobs prints).  A
 * failed exec is posix_spawn's return value, recorded as the job's failure.  A pool of
 * `parallel` slots: start jobs in order while a slot is free, then waitpid(-1) for any
 * child; waitpid's status gives the exit code or the signal.
 *
 * Invariant: running = number of started jobs not yet reaped ≤ parallel.  Every child is
 * reaped before kv_proc_run returns (no zombies, no orphans writing after sweep.csv).
 * Complexity: O(n · parallel) to map a pid back to its job — n and parallel are small.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "kvsim/proc.h"
#include "kvsim/mem.h"

static char *xprintf2(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *p = kv_xmalloc(n);
    snprintf(p, n, "%s%s", a, b);
    return p;
}

/* "exit 1: <first line of the stderr file, without 'kvsim: error: '>" */
static char *describe_failure(const kv_job *j)
{
    char what[96], line[512] = "";
    if (j->exit_code > 128)
        snprintf(what, sizeof what, "killed by signal %d (%s)", j->exit_code - 128,
                 strsignal(j->exit_code - 128));
    else
        snprintf(what, sizeof what, "exit %d", j->exit_code);
    FILE *f = fopen(j->stderr_path, "r");
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        fclose(f);
    }
    line[strcspn(line, "\r\n")] = '\0';
    const char *msg = line;
    if (strncmp(msg, "kvsim: error: ", 14) == 0)
        msg += 14;
    char *t = xprintf2(what, ": ");
    char *r = xprintf2(t, *msg ? msg : "(nothing on stderr)");
    free(t);
    return r;
}

/* Start job j: 0, or -1 with j->failure set (it then counts as finished).  posix_spawn
 * reports an exec failure as its return value, so the child never has to. */
static int start(kv_job *j, pid_t *pid)
{
    int fd = open(j->stderr_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        j->failure = xprintf2("cannot create stderr file: ", strerror(errno));
        return -1;
    }
    fflush(NULL); /* nothing buffered is written twice */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fd, 2);
    const char *prog = j->program ? j->program : "/proc/self/exe";
    int e = posix_spawn(pid, prog, &fa, NULL, j->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd);
    if (e != 0) {
        char *t = xprintf2("cannot execute '", prog);
        char *u = xprintf2(t, "': ");
        j->failure = xprintf2(u, strerror(e));
        free(t);
        free(u);
        return -1;
    }
    return 0;
}

static void finish(kv_job *j, int status)
{
    j->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    j->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    struct stat st;
    if (j->exit_code != 0)
        j->failure = describe_failure(j);
    else if (stat(j->stderr_path, &st) == 0 && st.st_size == 0)
        unlink(j->stderr_path);
}

void kv_proc_run(kv_job *jobs, size_t n, unsigned parallel, kv_proc_progress progress, void *ctx)
{
    pid_t *pids = kv_xcalloc(n ? n : 1, sizeof *pids); /* 0: not running */
    size_t next = 0, running = 0, done = 0;
    for (size_t i = 0; i < n; i++) {
        jobs[i].exit_code = -1;
        jobs[i].signal = 0;
        jobs[i].failure = NULL;
    }
    while (done < n) {
        while (running < parallel && next < n) {
            if (start(&jobs[next], &pids[next]) == 0)
                running++;
            else
                done++;
            next++;
        }
        if (running == 0)
            continue;
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break; /* ECHILD: cannot happen while running > 0 */
        }
        for (size_t i = 0; i < next; i++) {
            if (pids[i] == pid) {
                pids[i] = 0;
                finish(&jobs[i], status);
                running--;
                done++;
                break;
            }
        }
        if (progress)
            progress(ctx, done, n, running);
    }
    free(pids);
}
