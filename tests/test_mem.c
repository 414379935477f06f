/* mem: the out-of-memory handler (include/kvsim/mem.h) and the CLI's contract on it: out of
 * memory — real, under an address-space limit (RLIMIT_AS) — is exit 1 with one line
 * "kvsim: error: out of memory (…)", never SIGABRT, and a line too long for the memory left
 * is an error naming file and line.
 *
 * Time bounds are generous (a minute; the machine may be shared): what they catch is the
 * old behaviour, a quarter of an hour of retried allocations.
 *
 * The RLIMIT_AS cases run the normal build only: AddressSanitizer reserves terabytes of
 * shadow memory at startup, so an ASan binary cannot start under a small address-space
 * limit (and reports its own allocation failures).  They are skipped, saying so, there.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kvsim/mem.h"
#include "support.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* ---- the handler, in process ----------------------------------------------------------- */

static size_t seen_bytes;

static void exit_with_42(size_t bytes)
{
    seen_bytes = bytes;
    /* a handler must not return: leave the way a CLI would, with a recognisable code */
    _exit(bytes == SIZE_MAX ? 42 : 43);
}

Test(mem, grow_overflow_is_out_of_memory_not_a_short_buffer, .exit_code = 42)
{
    /* need · elem wraps size_t: this used to allocate a wrapped (small) size. */
    kv_mem_set_oom_handler(exit_with_42);
    void *p = NULL;
    size_t cap = 0;
    kv_grow(&p, &cap, SIZE_MAX / 8 + 2, 8);
    cr_assert_fail("kv_grow returned");
}

Test(mem, calloc_overflow_is_out_of_memory, .exit_code = 42)
{
    kv_mem_set_oom_handler(exit_with_42);
    void *p = kv_xcalloc(SIZE_MAX / 2, 4);
    (void)p;
    cr_assert_fail("kv_xcalloc returned");
}

Test(mem, the_handler_gets_the_failed_size, .exit_code = 43)
{
    if (UNDER_ASAN)
        exit(43); /* ASan's allocator reports a failed malloc itself */
    struct rlimit rl = {(rlim_t)1 << 30, (rlim_t)1 << 30};
    cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
    kv_mem_set_oom_handler(exit_with_42);
    void *p = kv_xmalloc((size_t)2 << 30);
    (void)p;
    cr_assert_fail("kv_xmalloc returned");
}

static void returns(size_t bytes)
{
    (void)bytes;
}

Test(mem, a_handler_that_returns_still_never_returns_null, .signal = SIGABRT)
{
    kv_mem_set_oom_handler(returns);
    void *p = kv_xcalloc(SIZE_MAX / 2, 4);
    (void)p;
}

Test(mem, default_handler_aborts, .signal = SIGABRT)
{
    kv_oom_handler old = kv_mem_set_oom_handler(NULL);
    cr_assert_not_null(old, "there is always a handler");
    void *p = kv_xcalloc(SIZE_MAX / 2, 4);
    (void)p;
}

Test(mem, set_returns_the_previous_handler)
{
    kv_oom_handler def = kv_mem_set_oom_handler(exit_with_42);
    cr_assert_eq(kv_mem_set_oom_handler(def), exit_with_42);
    cr_assert_eq(kv_mem_set_oom_handler(NULL), def, "NULL reinstalls the default");
}

/* ---- the CLI under an address-space limit ---------------------------------------------- */

typedef struct limited {
    int status; /* exit code, or 128 + signal */
    char *out, *err;
    double seconds;
} limited;

/* Run kvsim with RLIMIT_AS = as_bytes (0: no limit); when `endless` is set, stdin is a pipe
 * fed by a writer process with `endless` once, then 'x' forever (the test's stdin
 * otherwise). */
static limited run_limited(size_t as_bytes, const char *endless, const char *const *args)
{
    const char *bin = getenv("KVSIM_BIN");
    cr_assert(bin, "KVSIM_BIN not set (run the tests through meson test)");
    const char *argv[32] = {bin};
    size_t n = 1;
    for (; args[n - 1] && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    char *dir = make_temp_dir();
    char out_path[256], err_path[256];
    snprintf(out_path, sizeof out_path, "%s/stdout", dir);
    snprintf(err_path, sizeof err_path, "%s/stderr", dir);
    int in_pipe[2] = {-1, -1};
    pid_t writer = -1;
    if (endless) {
        cr_assert_eq(pipe(in_pipe), 0);
        fflush(NULL);
        writer = fork();
        cr_assert_geq(writer, 0);
        if (writer == 0) {
            signal(SIGPIPE, SIG_DFL);
            close(in_pipe[0]);
            char block[65536];
            memset(block, 'x', sizeof block);
            if (write(in_pipe[1], endless, strlen(endless)) < 0)
                _exit(0);
            while (write(in_pipe[1], block, sizeof block) > 0)
                ;
            _exit(0);
        }
        close(in_pipe[1]);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (as_bytes) {
            struct rlimit rl = {(rlim_t)as_bytes, (rlim_t)as_bytes};
            if (setrlimit(RLIMIT_AS, &rl) != 0)
                _exit(126);
        }
        if (!freopen(out_path, "w", stdout) || !freopen(err_path, "w", stderr))
            _exit(126);
        if (endless) {
            dup2(in_pipe[0], 0);
            close(in_pipe[0]);
        }
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    if (endless)
        close(in_pipe[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (writer > 0) {
        kill(writer, SIGKILL);
        waitpid(writer, NULL, 0);
    }
    limited r;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = read_file(out_path, NULL);
    r.err = read_file(err_path, NULL);
    r.seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    rm_rf(dir);
    free(dir);
    return r;
}

static void limited_free(limited *r)
{
    free(r->out);
    free(r->err);
}

static void assert_one_error_line(const limited *r, int status, const char *contains)
{
    run_result rr = {r->status, r->out, r->err};
    assert_error_line(&rr, status, "kvsim: error: ", contains);
}

/* Entries of a directory other than . and .. */
static size_t dir_entries(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return 0;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* A kvsim JSONL row whose `tokens` array holds n ids: 2 bytes of file per token, about 40
 * bytes of parser memory each. */
static char *write_token_row(const char *dir, size_t n)
{
    size_t cap = 2 * n + 128;
    char *text = malloc(cap);
    int k = snprintf(text, cap,
                     "{\"arrival\": 0, \"prompt_len\": %zu, \"output_len\": 1, \"tokens\": [", n);
    char *p = text + k;
    for (size_t i = 0; i < n; i++) {
        *p++ = '7';
        *p++ = i + 1 < n ? ',' : ']';
    }
    strcpy(p, "}\n");
    char *path = write_file(dir, "tokens.jsonl", text);
    free(text);
    return path;
}

#define AS_LIMIT ((size_t)192 << 20)

Test(mem_cli, huge_tokens_array_is_a_clean_out_of_memory)
{
    if (UNDER_ASAN)
        cr_skip_test("RLIMIT_AS cannot be tested under AddressSanitizer");
    char *dir = make_temp_dir();
    char *trace = write_token_row(dir, (size_t)8 << 20); /* 16 MiB of file, ~320 MiB parsed */
    char out[300];
    snprintf(out, sizeof out, "%s/out", dir);
    const char *args[] = {"run", trace, "--out", out, NULL};
    limited r = run_limited(AS_LIMIT, NULL, args);
    assert_one_error_line(&r, 1, "kvsim: error: out of memory (could not allocate ");
    cr_assert_lt(r.seconds, 60, "took %.1f s", r.seconds);
    cr_assert_eq(dir_entries(out), 0, "nothing left in --out");
    limited_free(&r);
    /* The same row loads without the limit: the failure was memory, not the row. */
    const char *args2[] = {"run", trace, "-q", NULL};
    r = run_limited(0, NULL, args2);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    limited_free(&r);
    free(trace);
    rm_rf(dir);
    free(dir);
}

/* A sweep configuration (a fork of the sweep since issue 9) that runs out of memory is
 * that configuration's failure: its one line, exit 1, nothing of it but stderr.txt; the
 * other configuration finishes and is in sweep.csv. */
Test(mem_cli, sweep_configuration_out_of_memory_is_its_own_failure)
{
    if (UNDER_ASAN)
        cr_skip_test("RLIMIT_AS cannot be tested under AddressSanitizer");
    char *dir = make_temp_dir();
    char out[300], failed[400], ok[400];
    snprintf(out, sizeof out, "%s/sw", dir);
    snprintf(failed, sizeof failed, "%s/b16_n50000000_wm0.01_split_s256_fcfs", out);
    snprintf(ok, sizeof ok, "%s/b16_n1000_wm0.01_split_s256_fcfs/summary.json", out);
    const char *args[] = {"sweep", src_path("traces/mooncake_conv_500.jsonl"), "--limit", "20",
                          "--out", out, "--num-blocks", "1000,50000000", "--time-model",
                          "fixed:0.01", "-q", NULL};
    limited r = run_limited(AS_LIMIT, NULL, args);
    assert_one_error_line(&r, 1,
                          "failed, exit 1: out of memory (could not allocate ");
    cr_assert(strstr(r.err, "configuration 'b16_n50000000_wm0.01_split_s256_fcfs'"), "%s", r.err);
    cr_assert_eq(dir_entries(failed), 1, "only stderr.txt in the failed configuration");
    cr_assert(file_exists(ok), "the other configuration finished");
    limited_free(&r);
    rm_rf(dir);
    free(dir);
}

Test(mem_cli, endless_line_under_a_limit_names_file_and_line)
{
    if (UNDER_ASAN)
        cr_skip_test("RLIMIT_AS cannot be tested under AddressSanitizer");
    const char *args[] = {"run", "/dev/stdin", NULL};
    limited r = run_limited((size_t)128 << 20, "{\"id\": \"", args);
    assert_one_error_line(&r, 1, "kvsim: error: /dev/stdin:1: out of memory reading this line (");
    cr_assert_lt(r.seconds, 60, "took %.1f s", r.seconds);
    limited_free(&r);
}

Test(mem_cli, endless_line_stops_at_the_line_limit)
{
    /* No memory limit: a 1 GiB line (here an endless one) stops after 256 MiB, at once. */
    const char *args[] = {"run", "/dev/stdin", NULL};
    limited r = run_limited(0, "{\"id\": \"", args);
    assert_one_error_line(&r, 1,
                          "kvsim: error: /dev/stdin:1: a JSON Lines row is longer than the limit "
                          "of 268435456 bytes (256 MiB)");
    cr_assert_lt(r.seconds, 60, "took %.1f s", r.seconds);
    limited_free(&r);
}

Test(mem_cli, endless_csv_record_stops_at_one_mib)
{
    /* An unbalanced quote must not gather the rest of the input into one field. */
    const char *args[] = {"run", "/dev/stdin", "--format", "csv", NULL};
    limited r = run_limited(0, "arrival,prompt_len,output_len\n0,1,\"", args);
    assert_one_error_line(&r, 1,
                          "kvsim: error: /dev/stdin:2: a CSV record is longer than the limit of "
                          "1048576 bytes (1 MiB)");
    limited_free(&r);
}

Test(mem_cli, nul_stream_fails_at_once)
{
    const char *args[] = {"run", "/dev/zero", NULL};
    limited r = run_limited(0, NULL, args);
    assert_one_error_line(&r, 1, "kvsim: error: /dev/zero:1: NUL byte at column 1");
    cr_assert_lt(r.seconds, 60, "took %.1f s", r.seconds);
    limited_free(&r);
}

Test(mem_cli, out_of_memory_in_the_replay_is_one_line)
{
    if (UNDER_ASAN)
        cr_skip_test("RLIMIT_AS cannot be tested under AddressSanitizer");
    /* A pool of 200 M blocks (about 24 GB of block state) cannot be allocated in 192 MiB. */
    char *dir = make_temp_dir();
    char out[300];
    snprintf(out, sizeof out, "%s/out", dir);
    const char *args[] = {
        "run", src_path("traces/tiny.csv"), "--num-blocks", "200000000", "--out", out, NULL};
    limited r = run_limited(AS_LIMIT, NULL, args);
    assert_one_error_line(&r, 1, "kvsim: error: out of memory (could not allocate ");
    limited_free(&r);
    rm_rf(dir);
    free(dir);
}

/* Enabled by the output half of issue 12: cli_cleanup_temp_files() (src/cli/main.c, a no-op
 * today) removing the temp files kv_out_open created. */
Test(mem_cli, out_of_memory_in_the_replay_leaves_nothing, .disabled = true)
{
    if (UNDER_ASAN)
        cr_skip_test("RLIMIT_AS cannot be tested under AddressSanitizer");
    char *dir = make_temp_dir();
    char out[300];
    snprintf(out, sizeof out, "%s/out", dir);
    const char *args[] = {
        "run", src_path("traces/tiny.csv"), "--num-blocks", "200000000", "--out", out, NULL};
    limited r = run_limited(AS_LIMIT, NULL, args);
    assert_one_error_line(&r, 1, "kvsim: error: out of memory (could not allocate ");
    cr_assert_eq(dir_entries(out), 0, "nothing left in --out");
    limited_free(&r);
    rm_rf(dir);
    free(dir);
}
