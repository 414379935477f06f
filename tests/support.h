/* Test support: run the kvsim binary and capture what it says, temp dirs, file reads. */
#ifndef KVSIM_TEST_SUPPORT_H
#define KVSIM_TEST_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>

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
void run_result_free(run_result *r);

/* kvsim's error contract: exit `status`, nothing on stdout, stderr exactly one line that
 * starts with `prefix` (e.g. "kvsim: error: ") and, when `contains` is not NULL, holds it. */
void assert_error_line(const run_result *r, int status, const char *prefix, const char *contains);

/* $KVSIM_SRC/rel: a path into the source tree (test data, bundled traces). */
const char *src_path(const char *rel);

/* A fresh empty directory under /tmp; removed by rm_rf. */
char *make_temp_dir(void);
void rm_rf(const char *path);
/* Write text to dir/name; returns the malloc'd path. */
char *write_file(const char *dir, const char *name, const char *text);
/* Whole file, NUL-terminated, or NULL if unreadable. */
char *read_file(const char *path, size_t *len);
bool file_exists(const char *path);

#endif
