/* Test support: run the kvsim binary and capture what it says, temp dirs, file reads. */
#ifndef KVSIM_TEST_SUPPORT_H
#define KVSIM_TEST_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim/engine.h"

/* KV_TEST_SANITIZED: 1 when this test binary is built with AddressSanitizer, as
 * scripts/test's build-asan is (-Db_sanitize=address,undefined -Dinvariants=true).  Its
 * kvsim walks the pool invariants after every engine step (DESIGN R9), O(num_blocks) per
 * step, so a real trace at full size on a GPU-sized pool takes minutes there: heavy cases
 * run at full size in the normal build and on a slice (KV_TEST_SLICE_ARGS) under ASan.
 * Every rule is still tested in both builds; only the sizes differ. */
#if defined(__SANITIZE_ADDRESS__)
#define KV_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KV_TEST_SANITIZED 1
#endif
#endif
#ifndef KV_TEST_SANITIZED
#define KV_TEST_SANITIZED 0
#endif

/* The slice a heavy real-trace replay takes under ASan: its first KV_TEST_SLICE_ROWS rows
 * in a pool of KV_TEST_SLICE_BLOCKS blocks (small enough to preempt and evict, so the
 * invariant walks see a busy pool, cheap enough to walk after every step). */
#define KV_TEST_SLICE_ROWS   "150"
#define KV_TEST_SLICE_BLOCKS "2000"

/* A smaller pool still, for a sanitizer-build case whose subject is not the pool's size:
 * 1,000 blocks hold the bundled Mooncake subset's typical prompt (about 450 blocks) twice,
 * so its replays still preempt and evict (and reject its longest prompts). */
#define KV_TEST_SMALL_BLOCKS "1000"

/* The last arguments of a small replay that would run on the GPU-sized default pool
 * (28,181 blocks for llama-3-8b on an H100, 88,765 at TP 3): under ASan "--num-blocks"
 * KV_TEST_SLICE_BLOCKS, which such a trace never fills; otherwise nothing, the NULL ending
 * the argument list (run_kvsim's or an argv array's) early.  Put it last, before the NULL. */
#define KV_TEST_SMALL_POOL_ARGS (KV_TEST_SANITIZED ? "--num-blocks" : NULL), KV_TEST_SLICE_BLOCKS

typedef struct run_result {
    int status; /* exit code, or 128 + signal */
    char *out;  /* stdout, NUL-terminated */
    char *err;  /* stderr, NUL-terminated */
} run_result;

/* Run `kvsim args…` (NULL-terminated) with cwd unchanged.  Aborts the test on spawn
 * failure.  Free with run_result_free. */
run_result run_kvsim(const char *arg0, ...);
/* Same, with an argv array (NULL-terminated). */
run_result run_kvsimv(const char *const *args);
/* Same, with the environment changed for the child only: env is NULL-terminated, each
 * entry "NAME=value" (set or replace) or "NAME" (remove). */
run_result run_kvsim_env(const char *const *env, const char *const *args);
/* Same, with standard input read from the file `in`. */
run_result run_kvsim_stdin(const char *in, const char *const *args);
void run_result_free(run_result *r);

/* How to run kvsim beyond its arguments: the fault a test injects. */
typedef struct run_opts {
    const char *const *env;  /* as run_kvsim_env, or NULL */
    const char *stdin_path;  /* the child's stdin is this file; NULL: inherited */
    const char *stdin_text;  /* or this text through a pipe (a stream, not a file; small) */
    const char *stdout_path; /* the child's stdout goes to this file ("/dev/full"); NULL:
                                captured in out */
    long long fsize_limit;   /* > 0: RLIMIT_FSIZE in bytes, SIGXFSZ ignored, so a write past
                                it fails with EFBIG as on a full disk */
} run_opts;
run_result run_kvsim_opts(const run_opts *o, const char *const *args);

/* The same, in two halves, for a test that acts while kvsim runs (sends it a signal). */
typedef struct kvsim_child {
    int pid;
    int out, err; /* pipes, read by finish_kvsim */
} kvsim_child;
kvsim_child start_kvsim(const run_opts *o, const char *const *args);
run_result finish_kvsim(kvsim_child *c);

/* A fresh directory with a tmpfs of `bytes` mounted on it, private to this test process
 * (a mount namespace; a user namespace too without root) and the kvsim it runs: a full
 * file system on demand.  NULL when the system allows neither (then skip the test).
 * Undo with unmount_small_tmpfs (which frees dir). */
char *mount_small_tmpfs(size_t bytes);
void unmount_small_tmpfs(char *dir);

/* kvsim's error contract: exit `status`, nothing on stdout, stderr exactly one line that
 * starts with `prefix` (e.g. "kvsim: error: ") and, when `contains` is not NULL, holds it. */
void assert_error_line(const run_result *r, int status, const char *prefix, const char *contains);

/* $KVSIM_SRC/rel: a path into the source tree (test data, bundled traces). */
const char *src_path(const char *rel);

/* A fresh empty directory under /tmp; removed by rm_rf. */
char *make_temp_dir(void);
void rm_rf(const char *path);

/* A suite's scratch directory: a static `dir`, made fresh by init() before each test and
 * removed by fini() after it (TestSuite(name, .init = init, .fini = fini), or called from
 * the suite's own fixtures). */
#define KV_TEST_SCRATCH_DIR(init, fini)                                                            \
    static char *dir;                                                                              \
    static void init(void)                                                                         \
    {                                                                                              \
        dir = make_temp_dir();                                                                     \
    }                                                                                              \
    static void fini(void)                                                                         \
    {                                                                                              \
        rm_rf(dir);                                                                                \
        free(dir);                                                                                 \
    }
/* Write text to dir/name; returns the malloc'd path. */
char *write_file(const char *dir, const char *name, const char *text);
/* Whole file, NUL-terminated, or NULL if unreadable. */
char *read_file(const char *path, size_t *len);
bool file_exists(const char *path);
/* Files a and b hold the same bytes, but for summary.json's "command" line (the command
 * line that wrote it, which names the output directory); false if either is unreadable. */
bool same_output(const char *a, const char *b);

/* The engine config the engine-level tests start from: num_blocks blocks of block_size
 * tokens, prefix caching on, the split free order, the scheduler's defaults of vLLM
 * (8,192 tokens and 256 requests a step, chunked prefill, full-prompt admission, no
 * watermark, FCFS victims, sync), time_model's steps (kv_timing_parse; asserted), a sample
 * every step and the invariant walks after every step.  Callers set what differs. */
kv_engine_config test_engine_config(uint32_t num_blocks, uint32_t block_size,
                                    const char *time_model);

/* Request row i of a token trace: `prompt` tokens of family f (ids f·100,000 + position, so
 * a family shares every prefix), `output` tokens out, arriving at t.  *tokens is freed and
 * reallocated for the ids (the caller frees it at the end); the spec points at it. */
kv_request_spec test_family_request(uint32_t **tokens, size_t i, int64_t t, uint32_t prompt,
                                    uint32_t output, uint32_t family);

#endif
