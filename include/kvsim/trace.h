/* trace: request traces in, validated request stream out (DESIGN §7).
 *
 * Formats (auto-detected from content, or forced): kvsim JSONL, kvsim CSV, Mooncake JSONL,
 * Azure LLM CSV, length-stats CSV (arrivals drawn from a seeded Poisson process).  Columns
 * and keys are read by name.  Every error names file and line:
 *   "conv.jsonl:42: 'output_length' must be a positive integer"
 * The loaded trace is ordered by arrival, ties in file order, and owns all its memory.
 */
#ifndef KVSIM_TRACE_H
#define KVSIM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kvsim/error.h"

/* Longest prompt or output a row may state; longer is "absurd" and an error. */
#define KV_TRACE_MAX_LEN 16777216u

/* Longest line of a JSON Lines trace, in bytes, its terminator excluded: 16 bytes per token
 * of the longest prompt (256 MiB), room for a full `tokens` array of ten-digit ids written
 * with ", " and the row's other fields.  A longer line is an error found after reading
 * that many bytes, never buffered whole, and never handed to the JSON parser. */
#define KV_TRACE_MAX_JSON_LINE ((size_t)16 * KV_TRACE_MAX_LEN)
/* Longest record of a CSV trace (a quoted field's line breaks included): 1 MiB.  CSV rows
 * carry no arrays; real ones are under 200 bytes. */
#define KV_TRACE_MAX_CSV_RECORD ((size_t)1 << 20)

typedef enum kv_trace_format {
    KV_TRACE_AUTO = 0,
    KV_TRACE_KVSIM_JSONL,
    KV_TRACE_KVSIM_CSV,
    KV_TRACE_MOONCAKE,
    KV_TRACE_AZURE,
    KV_TRACE_LENGTHS,
} kv_trace_format;

/* "auto", "jsonl", "csv", "mooncake", "azure", "lengths" → 0 or -KV_EINVAL. */
int kv_trace_format_parse(const char *s, kv_trace_format *out);
/* The same, filling diag on failure:
 * "unknown trace format 'xml' (expected one of: auto, jsonl, csv, mooncake, azure, lengths)" */
int kv_trace_format_parse_diag(const char *s, kv_trace_format *out, kv_diag *diag);
#define KV_TRACE_FORMAT_NAMES "auto, jsonl, csv, mooncake, azure, lengths"
const char *kv_trace_format_name(kv_trace_format f);

/* Where a request's prompt content comes from (DESIGN §3 "Content sources"). */
typedef enum kv_content_kind {
    KV_CONTENT_NONE = 0, /* no content: unique per request, or --shared-prefix */
    KV_CONTENT_TOKENS,   /* explicit token ids */
    KV_CONTENT_HASH_IDS, /* Mooncake-style hash_ids, trace block size tb */
} kv_content_kind;

/* Fields are ordered so the struct has no padding but 4 bytes at the end: 104 bytes a
 * request (issue 9). */
typedef struct kv_request_spec {
    int64_t arrival_ns;  /* ≥ 0, after --time-scale; for a closed-loop client's later row,
                            the earliest send (a replay's copy holds the actual send) */
    int64_t think_ns;    /* ≥ 0: a closed-loop row is sent this long after the client
                            received its previous reply; 0 if absent (not time-scaled) */
    uint32_t prompt_len; /* 1..KV_TRACE_MAX_LEN */
    uint32_t output_len; /* 1..KV_TRACE_MAX_LEN */
    uint32_t row;        /* 0-based index among the file's non-empty data rows */
    uint32_t line;       /* 1-based physical line where the row starts (for messages) */
    int32_t priority;    /* lower = more important; 0 if absent */
    kv_content_kind content;
    const char *id;      /* the trace's id, or NULL (then the row index is the id) */
    const char *adapter; /* LoRA name, NULL = none (an empty string means none) */
    const char *salt;    /* cache salt, NULL = none (empty means none) */
    const char *session; /* conversation key for --router session (DESIGN §10 C3), NULL =
                            none (empty means none); only the kvsim formats carry it */
    const char *client;  /* closed-loop client (issue 11): the row is sent when the client's
                            previous row has been answered (arrivals.h); NULL = open loop */
    const uint32_t *tokens;   /* prompt_len ids when content == TOKENS */
    const uint64_t *hash_ids; /* n_hash_ids = ⌈prompt_len/tb⌉ ids when content == HASH_IDS */
    uint32_t n_hash_ids;
} kv_request_spec;

typedef struct kv_trace_options {
    kv_trace_format format;    /* KV_TRACE_AUTO: detect */
    uint32_t trace_block_size; /* tb for hash_ids; 0 means the default 512 */
    uint64_t limit;            /* keep the first N non-empty data rows; 0 = all */
    double time_scale;         /* arrivals × F, every format; 0 means 1; else > 0, finite */
    double rate;               /* requests/s for length-stats files (required there,
                                  ignored by formats that carry times) */
    uint64_t seed;             /* for length-stats Poisson arrivals */
    size_t max_line;           /* bytes per line (JSONL) or record (CSV); 0 = the format's
                                  limit above.  A smaller value lowers both: for tests */
} kv_trace_options;

typedef struct kv_trace {
    kv_request_spec *reqs; /* n requests, by arrival, ties in file order */
    size_t n;
    kv_trace_format format;    /* what was read (detected or forced) */
    uint32_t trace_block_size; /* tb in effect */
    char *path;
    void *arena__; /* private: owns ids, strings, tokens, hash_ids */
} kv_trace;

/* Load a trace.  0, or a negative KV_E* with the diag naming file and line:
 * -KV_ENOENT / -KV_EIO (cannot open or read), -KV_EPARSE (malformed, missing or ill-typed
 * data, undetectable format, empty trace, a line or record over the limit), -KV_ERANGE (a
 * value out of range: length, time, token or hash id, priority), -KV_EINVAL (bad options:
 * time_scale, rate), -KV_ENOMEM (a line too long for the memory left; other allocations go
 * to the out-of-memory handler, include/kvsim/mem.h).  opt may be
 * NULL (all defaults).  Never leaves *out half-built: on error *out is NULL. */
int kv_trace_load(kv_trace **out, const char *path, const kv_trace_options *opt, kv_diag *diag);
/* The same from an open stream (a pipe, an fmemopen buffer), read to the end or to the first
 * error and not closed; `name` stands for the file in messages and in kv_trace.path. */
int kv_trace_load_stream(kv_trace **out, FILE *f, const char *name, const kv_trace_options *opt,
                         kv_diag *diag);
void kv_trace_free(kv_trace *t); /* NULL ok */
/* Whether two option sets read a file into the same trace: every field equal (a compile-
 * time check in trace.c fails when a field is added and not compared here). */
bool kv_trace_options_equal(const kv_trace_options *a, const kv_trace_options *b);

#endif
