/* kvsim error codes.
 *
 * One X-macro table generates both the enum and kv_strerror() (libuv's habit), so a code
 * and its text never drift apart.  Library functions return 0 or a negative KV_E* value;
 * a full pool is an expected outcome reported through return values, never an error.
 * Messages that need context (file and line of a trace, a bad option value) travel in a
 * kv_diag filled by the failing function; only src/cli prints them.
 */
#ifndef KVSIM_ERROR_H
#define KVSIM_ERROR_H

#include <stddef.h>

#define KV_ERRNO_MAP(X)                                                                            \
    X(EINVAL, "invalid argument")                                                                  \
    X(ENOMEM, "out of memory")                                                                     \
    X(EIO, "input/output error")                                                                   \
    X(ENOENT, "no such file or preset")                                                            \
    X(EPARSE, "malformed input")                                                                   \
    X(ERANGE, "value out of range")                                                                \
    X(ECAPACITY, "configuration leaves no usable blocks")                                          \
    X(ELIVELOCK, "the livelock guard fired")                                                       \
    X(EINVARIANT, "an invariant was violated")                                                     \
    X(ENOPROG, "a program kvsim runs is not installed")                                            \
    X(ENOTSUP, "not built into this kvsim")

enum {
    KV_OK = 0,
#define X(code, text) KV_##code,
    KV__ERRNO_FIRST = 0,
    KV_ERRNO_MAP(X)
#undef X
};

/* Negative values are what functions return: -KV_EINVAL etc. */
const char *kv_strerror(int err); /* never NULL; accepts the code or its negation */

/* A diagnostic: one line, without the "kvsim: error: " prefix, e.g.
 * "conv.jsonl:42: 'output_length' must be a positive integer".
 *
 * Library messages name quantities, not command-line flags: a quantity that a front end
 * exposes as an option is written in braces, "{sample_every} must be at least 1", and the
 * front end renders it in its own spelling (the CLI: "--sample-every").  Braces that do not
 * enclose a known quantity name are printed as they are. */
typedef struct kv_diag {
    char msg[6144]; /* room for a message quoting a PATH_MAX path or two */
} kv_diag;

/* printf into diag (if non-NULL) and return err; for `return kv_diag_set(d, -KV_EPARSE, …)`. */
int kv_diag_set(kv_diag *diag, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
