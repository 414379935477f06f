/* Test support: spawn kvsim with pipes, temp dirs, file helpers (see support.h). */
#define _GNU_SOURCE /* unshare, CLONE_NEW* */
#include "support.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *drain(int fd_out, int fd_err, char **err_out)
{
    char *buf[2] = {NULL, NULL};
    size_t len[2] = {0, 0}, cap[2] = {0, 0};
    struct pollfd p[2] = {{fd_out, POLLIN, 0}, {fd_err, POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(p, 2, -1) < 0)
            break;
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (cap[i] - len[i] < 4096) {
                cap[i] = cap[i] ? cap[i] * 2 : 8192;
                buf[i] = realloc(buf[i], cap[i]);
            }
            ssize_t n = read(p[i].fd, buf[i] + len[i], cap[i] - len[i] - 1);
            if (n <= 0) {
                close(p[i].fd);
                p[i].fd = -1;
                open_fds--;
            } else {
                len[i] += (size_t)n;
            }
        }
    }
    for (int i = 0; i < 2; i++) {
        if (!buf[i])
            buf[i] = malloc(1);
        buf[i][len[i]] = '\0';
    }
    *err_out = buf[1];
    return buf[0];
}

extern char **environ;

/* environ with the changes in env applied (see run_kvsim_env); the strings are shared. */
static char **child_env(const char *const *env)
{
    size_t n = 0, m = 0;
    while (environ[n])
        n++;
    while (env && env[m])
        m++;
    char **out = calloc(n + m + 1, sizeof *out);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool replaced = false;
        for (size_t j = 0; j < m && !replaced; j++) {
            size_t len = strcspn(env[j], "=");
            replaced = strncmp(environ[i], env[j], len) == 0 && environ[i][len] == '=';
        }
        if (!replaced)
            out[k++] = environ[i];
    }
    for (size_t j = 0; j < m; j++)
        if (strchr(env[j], '='))
            out[k++] = (char *)env[j];
    out[k] = NULL;
    return out;
}

static run_result spawn(const char *const *env, const char *const *args)
{
    run_opts o = {.env = env};
    return run_kvsim_opts(&o, args);
}

run_result run_kvsimv(const char *const *args)
{
    return spawn(NULL, args);
}

run_result run_kvsim_env(const char *const *env, const char *const *args)
{
    return spawn(env, args);
}

run_result run_kvsim_stdin(const char *in, const char *const *args)
{
    run_opts o = {.stdin_path = in};
    return run_kvsim_opts(&o, args);
}

/* In the child, before exec: the file descriptors and limits of *o. */
static void child_setup(const run_opts *o, int out_w, int err_w, int in_r)
{
    if (o->stdin_text) {
        dup2(in_r, 0);
        close(in_r);
    } else if (o->stdin_path) {
        int fd = open(o->stdin_path, O_RDONLY);
        if (fd < 0)
            _exit(126);
        dup2(fd, 0);
        close(fd);
    }
    if (o->stdout_path) {
        int fd = open(o->stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0)
            _exit(126);
        dup2(fd, 1);
        close(fd);
    } else {
        dup2(out_w, 1);
    }
    dup2(err_w, 2);
    if (o->fsize_limit > 0) {
        signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails (EFBIG) instead */
        struct rlimit rl = {(rlim_t)o->fsize_limit, (rlim_t)o->fsize_limit};
        setrlimit(RLIMIT_FSIZE, &rl);
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

kvsim_child start_kvsim(const run_opts *o, const char *const *args)
{
    const char *bin = getenv("KVSIM_BIN");
    cr_assert(bin, "KVSIM_BIN not set (run the tests through meson test)");
    size_t n = 0;
    while (args[n])
        n++;
    char **argv = calloc(n + 2, sizeof *argv);
    argv[0] = (char *)bin;
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];
    char **envp = child_env(o->env);
    int out_pipe[2], err_pipe[2], in_pipe[2] = {-1, -1};
    cr_assert(pipe(out_pipe) == 0 && pipe(err_pipe) == 0);
    if (o->stdin_text)
        cr_assert(pipe(in_pipe) == 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        child_setup(o, out_pipe[1], err_pipe[1], in_pipe[0]);
        close(out_pipe[0]);
        close(err_pipe[0]);
        close(out_pipe[1]);
        close(err_pipe[1]);
        if (in_pipe[1] >= 0)
            close(in_pipe[1]);
        execve(bin, argv, envp);
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (o->stdin_text) {
        close(in_pipe[0]);
        size_t len = strlen(o->stdin_text); /* small: fits the pipe's buffer */
        ssize_t w = write(in_pipe[1], o->stdin_text, len);
        cr_assert_eq(w, (ssize_t)len);
        close(in_pipe[1]);
    }
    free(argv);
    free(envp);
    return (kvsim_child){pid, out_pipe[0], err_pipe[0]};
}

run_result finish_kvsim(kvsim_child *c)
{
    run_result r;
    r.out = drain(c->out, c->err, &r.err);
    int st = 0;
    waitpid(c->pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return r;
}

run_result run_kvsim_opts(const run_opts *o, const char *const *args)
{
    kvsim_child c = start_kvsim(o, args);
    return finish_kvsim(&c);
}

/* ---- a small file system ------------------------------------------------------------ */

static bool write_proc(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return false;
    bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    close(fd);
    return ok;
}

/* This test process in a mount namespace of its own (and, without root, a user namespace
 * that maps the caller to root), so its mounts are seen only by it and the kvsim it runs,
 * and vanish with it. */
static bool private_mounts(void)
{
    static int state; /* 0 not tried, 1 done, -1 impossible */
    if (state)
        return state > 0;
    state = -1;
    if (unshare(CLONE_NEWNS) != 0) {
        uid_t uid = getuid();
        gid_t gid = getgid();
        char map[64];
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
            return false;
        write_proc("/proc/self/setgroups", "deny");
        snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
        if (!write_proc("/proc/self/uid_map", map))
            return false;
        snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
        if (!write_proc("/proc/self/gid_map", map))
            return false;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return false;
    state = 1;
    return true;
}

char *mount_small_tmpfs(size_t bytes)
{
    if (!private_mounts())
        return NULL;
    char *dir = make_temp_dir();
    char opt[64];
    snprintf(opt, sizeof opt, "size=%zu", bytes);
    if (mount("tmpfs", dir, "tmpfs", 0, opt) != 0) {
        rmdir(dir);
        free(dir);
        return NULL;
    }
    return dir;
}

void unmount_small_tmpfs(char *dir)
{
    if (!dir)
        return;
    umount2(dir, MNT_DETACH);
    rmdir(dir);
    free(dir);
}

run_result run_kvsim(const char *arg0, ...)
{
    const char *args[128];
    size_t n = 0;
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && n < 127; a = va_arg(ap, const char *))
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    return run_kvsimv(args);
}

void run_result_free(run_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

void assert_error_line(const run_result *r, int status, const char *prefix, const char *contains)
{
    cr_assert_eq(r->status, status, "exit %d, want %d; stderr: %s", r->status, status, r->err);
    cr_assert_str_empty(r->out, "nothing on stdout after an error: %s", r->out);
    cr_assert_eq(strncmp(r->err, prefix, strlen(prefix)), 0, "stderr: '%s', want prefix '%s'",
                 r->err, prefix);
    const char *nl = strchr(r->err, '\n');
    cr_assert(nl && nl[1] == '\0', "stderr is not exactly one line: '%s'", r->err);
    if (contains)
        cr_assert(strstr(r->err, contains), "stderr '%s' lacks '%s'", r->err, contains);
}

static const char *join_env(const char *var, const char *rel)
{
    static char buf[8][4096];
    static int slot;
    const char *root = getenv(var);
    cr_assert(root, "%s not set (run the tests through meson test)", var);
    char *b = buf[slot++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", root, rel);
    return b;
}

const char *src_path(const char *rel)
{
    return join_env("KVSIM_SRC", rel);
}

char *make_temp_dir(void)
{
    char *t = strdup("/tmp/kvsim-test-XXXXXX");
    cr_assert(mkdtemp(t), "mkdtemp failed");
    return t;
}

void rm_rf(const char *path)
{
    if (!path || strncmp(path, "/tmp/kvsim-test-", 16) != 0)
        return;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    int rc = system(cmd);
    (void)rc;
}

char *write_file(const char *dir, const char *name, const char *text)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    cr_assert(f, "cannot write %s", p);
    fputs(text, f);
    fclose(f);
    return p;
}

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 8192, n = 0;
    char *b = malloc(cap);
    size_t k;
    while ((k = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 4096) {
            cap *= 2;
            b = realloc(b, cap);
        }
    }
    fclose(f);
    b[n] = '\0';
    if (len)
        *len = n;
    return b;
}

bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

kv_engine_config test_engine_config(uint32_t num_blocks, uint32_t block_size,
                                    const char *time_model)
{
    kv_engine_config c;
    memset(&c, 0, sizeof c);
    c.num_blocks = num_blocks;
    c.block_size = block_size;
    c.prefix_caching = true;
    c.free_order = KV_FREE_SPLIT;
    c.sched = (kv_sched_config){.max_batched_tokens = 8192,
                                .max_seqs = 256,
                                .chunked_prefill = true,
                                .admit_full_prompt = true,
                                .preempt = KV_PREEMPT_FCFS};
    kv_diag d;
    cr_assert_eq(kv_timing_parse(time_model, &c.timing, &d), 0, "%s: %s", time_model, d.msg);
    c.sample_every = 1;
    c.check_invariants = true;
    return c;
}

/* The text without its summary.json "command" line (the command line that wrote it,
 * which names the output directory); *n updated. */
static void drop_command(char *t, size_t *n)
{
    char *c = t ? strstr(t, "\n  \"command\": ") : NULL;
    char *e = c ? strchr(c + 1, '\n') : NULL;
    if (e) {
        memmove(c, e, (size_t)(t + *n - e) + 1);
        *n -= (size_t)(e - c);
    }
}

bool same_output(const char *a, const char *b)
{
    size_t na, nb;
    char *x = read_file(a, &na), *y = read_file(b, &nb);
    drop_command(x, &na);
    drop_command(y, &nb);
    bool same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

kv_request_spec test_family_request(uint32_t **tokens, size_t i, int64_t t, uint32_t prompt,
                                    uint32_t output, uint32_t family)
{
    free(*tokens);
    *tokens = malloc((prompt ? prompt : 1) * sizeof **tokens);
    cr_assert(*tokens != NULL);
    for (uint32_t p = 0; p < prompt; p++)
        (*tokens)[p] = family * 100000 + p;
    return (kv_request_spec){.arrival_ns = t,
                             .prompt_len = prompt,
                             .output_len = output,
                             .row = (uint32_t)i,
                             .content = KV_CONTENT_TOKENS,
                             .tokens = *tokens};
}
