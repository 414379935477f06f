/* trace_internal.h: what src/trace.c shares with the two format families, trace_json.c
 * (kvsim JSONL, Mooncake) and trace_csv.c (kvsim CSV, Azure, length stats).
 *
 * trace.c owns the reader: the open file, the line counter, the request array and the
 * arena that holds every string, token and hash-id array.  A family reader pulls lines,
 * appends one kv_request_spec per data row with kv__push, and returns 0 or -KV_E*; the
 * final pass (Azure time zero, --time-scale, stable sort) stays in trace.c.
 */
#ifndef KVSIM_TRACE_INTERNAL_H
#define KVSIM_TRACE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kvsim/trace.h"

/* Bump allocator for the trace's strings and arrays: one free for everything, no
 * per-row malloc.  Memory is never reused; the arena lives as long as the kv_trace. */
typedef struct kv__arena kv__arena;
kv__arena *kv__arena_create(void);    /* cannot fail (kv_xmalloc) */
void kv__arena_destroy(kv__arena *a); /* NULL ok */
void *kv__arena_alloc(kv__arena *a, size_t n, size_t align);
char *kv__arena_strndup(kv__arena *a, const char *s, size_t n); /* NUL-terminated copy */

typedef struct kv__reader {
    /* configuration, normalised by kv_trace_load */
    const char *path;       /* as given by the caller; prefixes every message */
    kv_diag *diag;          /* may be NULL */
    kv_trace_format format; /* requested: KV_TRACE_AUTO until a family reader decides */
    uint32_t tb;            /* trace block size for hash_ids, ≥ 1 */
    uint64_t limit;         /* data rows to keep; 0 = all */
    double rate;            /* length stats only; validated there */
    uint64_t seed;

    /* input */
    FILE *f;
    char *in; /* read buffer: in[in_pos..in_len) not yet consumed */
    size_t in_pos, in_len;
    bool in_eof;          /* fread reached the end of the stream */
    char *buf;            /* the current line, terminator stripped, NUL-ended */
    size_t buf_cap;       /* bytes allocated for buf, ≤ max_line + 2 */
    size_t len;           /* bytes in buf */
    size_t max_line;      /* longest line (and CSV record) accepted, terminator excluded */
    const char *max_what; /* "a JSON Lines row" / "a CSV record", for the message */
    uint64_t lineno;      /* 1-based physical line number of buf; 0 before the first read */
    bool pending;         /* buf holds a line that kv__next_line must hand out again */

    /* output */
    kv__arena *arena;
    kv_request_spec *reqs; /* n rows in file order; .row == index */
    size_t n, cap;
    int64_t *abs_sec; /* Azure only: whole seconds since the civil epoch, per row; the row's
                         arrival_ns holds the sub-second part until trace.c makes it relative */
    size_t abs_cap;
} kv__reader;

/* The next physical line into r->buf / r->len (terminator "\n" or "\r\n" stripped, a
 * UTF-8 byte-order mark stripped from line 1).  1 = a line, 0 = end of file, or a negative
 * KV_E* with the diag set: a read error, a NUL byte, a line longer than r->max_line (found
 * once that many bytes are read: a longer line is never buffered), or no memory for the
 * line (-KV_ENOMEM). */
int kv__next_line(kv__reader *r);
/* True if the line holds only spaces, tabs, CR, VT or FF: such lines are skipped. */
bool kv__is_blank(const char *s, size_t n);
/* True once `limit` rows have been kept: the caller must stop reading. */
bool kv__limit_reached(const kv__reader *r);
/* Append a zeroed spec for the data row that starts on physical line `line`; sets .row
 * and .line.  -KV_ERANGE if the row count would overflow 32 bits. */
int kv__push(kv__reader *r, uint64_t line, kv_request_spec **out);

/* -KV_EPARSE "path:line: <what> is longer than the limit of N bytes" for the line or
 * record starting on `line`. */
int kv__too_long(kv__reader *r, uint64_t line);

/* "path:line: msg" (line 0: "path: msg") into the diag; returns err. */
int kv__fail(kv__reader *r, int err, uint64_t line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* A time value → integer ns as llround(value · ns_per_unit) in doubles, the one
 * conversion every format with fractional times uses (seconds: 1e9, Mooncake ms: 1e6).
 * Returns KV__TIME_OK or what is wrong; kv__time_fail turns that into the message, with
 * `shown` the value as the user wrote it (only computed on error). */
enum { KV__TIME_OK = 0, KV__TIME_NEGATIVE, KV__TIME_NONFINITE, KV__TIME_OVERFLOW };
int kv__time_to_ns(double value, double ns_per_unit, int64_t *out);
int kv__time_fail(kv__reader *r, uint64_t line, const char *field, int why, const char *shown);

/* ⌈prompt_len / tb⌉: the number of hash_ids a prompt needs. */
uint32_t kv__hash_blocks(uint32_t prompt_len, uint32_t tb);

/* Family readers.  On entry the first non-blank line is in r->buf with r->pending set;
 * r->format is the forced format or KV_TRACE_AUTO (the reader detects and stores it). */
int kv__read_jsonl(kv__reader *r);
int kv__read_csv(kv__reader *r);

#endif
