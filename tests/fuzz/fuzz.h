/* Shared by the libFuzzer harnesses (README "Fuzzing", scripts/fuzz).
 *
 * Every harness checks more than "no crash": an accepted input must satisfy the documented
 * invariants of what was parsed (silent acceptance is a finding), and a rejected one must
 * come with a diagnostic that is non-empty and names its subject.  A failed check aborts,
 * which libFuzzer reports as a crash with the input saved.
 */
#ifndef KVSIM_FUZZ_H
#define KVSIM_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The input as a read-only stream (fmemopen needs a non-empty buffer: an empty input is a
 * one-byte buffer read out), or NULL when fmemopen fails.  Close with fclose(). */
static inline FILE *fuzz_stream(const uint8_t *data, size_t size)
{
    FILE *f = fmemopen(size ? (void *)data : (void *)"", size ? size : 1, "rb");
    if (f && !size) {
        int c = fgetc(f);
        (void)c;
    }
    return f;
}

/* The input as a NUL-terminated string (cut at its first NUL, as a C argument would be).
 * Free with free(). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* An error's diagnostic: a negative code from the table, a message that is not empty, does
 * not end in a newline (the CLI adds one), and says more than a bare prefix. */
static inline void fuzz_check_diag(int rc, const kv_diag *d)
{
    FUZZ_CHECK(rc < 0, "rc %d", rc);
    FUZZ_CHECK(strcmp(kv_strerror(rc), "unknown error") != 0, "rc %d is not a KV_E code", rc);
    size_t n = strnlen(d->msg, sizeof d->msg);
    FUZZ_CHECK(n > 0 && n < sizeof d->msg, "empty or unterminated diag");
    FUZZ_CHECK(d->msg[n - 1] != '\n', "diag ends in a newline: %s", d->msg);
    FUZZ_CHECK(d->msg[n - 1] != ' ' && d->msg[n - 1] != ':', "diag has no reason: '%s'", d->msg);
}

#endif
