/* trace_json: the JSON Lines readers, kvsim JSONL and Mooncake (DESIGN §7).
 *
 * One JSON object per non-blank line, parsed with jansson's json_loadb (duplicate keys
 * rejected, so a row means one thing; any JSON value accepted at top level so a stray
 * number is reported as "not a JSON object" rather than as a syntax error).  Keys are read
 * by name, unknown keys are ignored, and an optional key whose value is null counts as
 * absent.  The first data row decides the format when none is forced: 'arrival' or
 * 'prompt_len' → kvsim JSONL, 'timestamp' or 'input_length' → Mooncake, both or neither →
 * an error asking for --format.
 *
 * Typing is strict, as the design asks, so two readers agree on every file: lengths,
 * token ids, hash ids and priority must be JSON integers (2.0 and "8" are ill-typed);
 * times may be any JSON number.  Checks run in a fixed order, so the first problem of a row
 * is the one reported: kvsim JSONL arrival, prompt_len, output_len, id, tokens, hash_ids,
 * adapter, salt, priority, session and client (strings, like adapter and salt), think
 * (seconds, with a client); Mooncake timestamp, input_length, output_length, hash_ids.  An
 * array's length is checked before its elements.
 *
 * Cost: one json_loadb and one json_decref per row (jansson allocates a node per value,
 * which dominates for hash_id-heavy rows); ids, tokens and hash_ids are copied into the
 * trace's arena.  No per-row work grows with the row count.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_internal.h"

#define SHOWN_MAX 48

/* The value as compact JSON for messages, ASCII only, truncated with "...". */
static const char *shown(const json_t *v, char *buf)
{
    char *d =
        json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));
    if (!d) {
        snprintf(buf, SHOWN_MAX, "?");
        return buf;
    }
    if (strlen(d) >= SHOWN_MAX)
        snprintf(buf, SHOWN_MAX, "%.*s...", SHOWN_MAX - 4, d);
    else
        snprintf(buf, SHOWN_MAX, "%s", d);
    free(d);
    return buf;
}

static int missing(kv__reader *r, uint64_t line, const char *key)
{
    return kv__fail(r, -KV_EPARSE, line, "missing field '%s'", key);
}

/* An optional key: NULL when absent or null. */
static json_t *optional(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_null(v) ? NULL : v;
}

static int get_len(kv__reader *r, uint64_t line, json_t *o, const char *key, uint32_t *out)
{
    char sb[SHOWN_MAX];
    json_t *v = json_object_get(o, key);
    if (!v)
        return missing(r, line, key);
    if (!json_is_integer(v))
        return kv__fail(r, -KV_EPARSE, line, "'%s' must be a positive integer, got %s", key,
                        shown(v, sb));
    json_int_t i = json_integer_value(v);
    if (i <= 0)
        return kv__fail(r, -KV_ERANGE, line, "'%s' must be a positive integer, got %s", key,
                        shown(v, sb));
    if (i > (json_int_t)KV_TRACE_MAX_LEN)
        return kv__fail(r, -KV_ERANGE, line,
                        "'%s' is %" JSON_INTEGER_FORMAT ", above the maximum length %u", key, i,
                        (unsigned)KV_TRACE_MAX_LEN);
    *out = (uint32_t)i;
    return 0;
}

/* A time field: any JSON number in `unit`s (ns_per_unit), converted by kv__time_to_ns.
 * Mooncake integer milliseconds convert exactly, in integers. */
static int get_time(kv__reader *r, uint64_t line, json_t *o, const char *key, const char *unit,
                    double ns_per_unit, bool exact_int, int64_t *out)
{
    char sb[SHOWN_MAX];
    json_t *v = json_object_get(o, key);
    if (!v)
        return missing(r, line, key);
    if (!json_is_number(v))
        return kv__fail(r, -KV_EPARSE, line, "'%s' must be a number of %s, got %s", key, unit,
                        shown(v, sb));
    if (exact_int && json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        int64_t per = (int64_t)ns_per_unit;
        int why = i < 0 ? KV__TIME_NEGATIVE : i > INT64_MAX / per ? KV__TIME_OVERFLOW : 0;
        if (why)
            return kv__time_fail(r, line, key, why, shown(v, sb));
        *out = (int64_t)i * per;
        return 0;
    }
    int why = kv__time_to_ns(json_number_value(v), ns_per_unit, out);
    return why ? kv__time_fail(r, line, key, why, shown(v, sb)) : 0;
}

/* hash_ids: an array of ⌈prompt_len/tb⌉ non-negative integers.  Stored as the row's
 * content only when `store` (a row with tokens validates them and drops them). */
static int get_hash_ids(kv__reader *r, uint64_t line, json_t *v, const char *len_key,
                        uint32_t prompt_len, bool store, kv_request_spec *q)
{
    char sb[SHOWN_MAX];
    if (!json_is_array(v))
        return kv__fail(r, -KV_EPARSE, line,
                        "'hash_ids' must be an array of non-negative integers, got %s",
                        shown(v, sb));
    size_t n = json_array_size(v);
    uint32_t need = kv__hash_blocks(prompt_len, r->tb);
    if (n != need)
        return kv__fail(r, -KV_EPARSE, line,
                        "'hash_ids' has %zu ids, expected %u = ceil(%s %u / trace block size %u)",
                        n, need, len_key, prompt_len, r->tb);
    uint64_t *ids = store ? kv__arena_alloc(r->arena, n * sizeof *ids, sizeof *ids) : NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_integer(e) || json_integer_value(e) < 0)
            return kv__fail(r, json_is_integer(e) ? -KV_ERANGE : -KV_EPARSE, line,
                            "'hash_ids'[%zu] must be a non-negative integer, got %s", i,
                            shown(e, sb));
        if (ids)
            ids[i] = (uint64_t)json_integer_value(e);
    }
    if (store) {
        q->content = KV_CONTENT_HASH_IDS;
        q->hash_ids = ids;
        q->n_hash_ids = (uint32_t)n;
    }
    return 0;
}

static int get_tokens(kv__reader *r, uint64_t line, json_t *v, kv_request_spec *q)
{
    char sb[SHOWN_MAX];
    if (!json_is_array(v))
        return kv__fail(r, -KV_EPARSE, line, "'tokens' must be an array of token ids, got %s",
                        shown(v, sb));
    size_t n = json_array_size(v);
    if (n != q->prompt_len)
        return kv__fail(r, -KV_EPARSE, line, "'tokens' has %zu ids but 'prompt_len' is %u", n,
                        q->prompt_len);
    uint32_t *toks = kv__arena_alloc(r->arena, n * sizeof *toks, sizeof *toks);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_integer(e))
            return kv__fail(r, -KV_EPARSE, line,
                            "'tokens'[%zu] must be an integer token id, got %s", i, shown(e, sb));
        json_int_t t = json_integer_value(e);
        if (t < 0 || t > (json_int_t)UINT32_MAX)
            return kv__fail(r, -KV_ERANGE, line,
                            "'tokens'[%zu] must be a token id in 0..4294967295, got %s", i,
                            shown(e, sb));
        toks[i] = (uint32_t)t;
    }
    q->content = KV_CONTENT_TOKENS;
    q->tokens = toks;
    return 0;
}

/* adapter / salt / session: a string; empty means none (NULL). */
static int get_name(kv__reader *r, uint64_t line, json_t *o, const char *key, const char **out)
{
    char sb[SHOWN_MAX];
    json_t *v = optional(o, key);
    if (!v)
        return 0;
    if (!json_is_string(v))
        return kv__fail(r, -KV_EPARSE, line, "'%s' must be a string, got %s", key, shown(v, sb));
    size_t n = json_string_length(v);
    *out = n ? kv__arena_strndup(r->arena, json_string_value(v), n) : NULL;
    return 0;
}

static int kvsim_row(kv__reader *r, uint64_t line, json_t *o, kv_request_spec *q)
{
    char sb[SHOWN_MAX];
    int rc;
    if ((rc = get_time(r, line, o, "arrival", "seconds", 1e9, false, &q->arrival_ns)) < 0 ||
        (rc = get_len(r, line, o, "prompt_len", &q->prompt_len)) < 0 ||
        (rc = get_len(r, line, o, "output_len", &q->output_len)) < 0)
        return rc;

    json_t *v = optional(o, "id");
    if (json_is_string(v)) {
        size_t n = json_string_length(v);
        q->id = n ? kv__arena_strndup(r->arena, json_string_value(v), n) : NULL;
    } else if (json_is_integer(v)) {
        char num[32];
        int n = snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        q->id = kv__arena_strndup(r->arena, num, (size_t)n);
    } else if (v) {
        return kv__fail(r, -KV_EPARSE, line, "'id' must be a string or an integer, got %s",
                        shown(v, sb));
    }

    json_t *toks = optional(o, "tokens"), *hids = optional(o, "hash_ids");
    if (toks && (rc = get_tokens(r, line, toks, q)) < 0)
        return rc;
    if (hids && (rc = get_hash_ids(r, line, hids, "prompt_len", q->prompt_len, !toks, q)) < 0)
        return rc;
    if ((rc = get_name(r, line, o, "adapter", &q->adapter)) < 0 ||
        (rc = get_name(r, line, o, "salt", &q->salt)) < 0)
        return rc;

    v = optional(o, "priority");
    if (v && !json_is_integer(v))
        return kv__fail(r, -KV_EPARSE, line, "'priority' must be an integer, got %s", shown(v, sb));
    if (v) {
        json_int_t p = json_integer_value(v);
        if (p < INT32_MIN || p > INT32_MAX)
            return kv__fail(r, -KV_ERANGE, line,
                            "'priority' must be a 32-bit integer, got %" JSON_INTEGER_FORMAT, p);
        q->priority = (int32_t)p;
    }
    if ((rc = get_name(r, line, o, "session", &q->session)) < 0 ||
        (rc = get_name(r, line, o, "client", &q->client)) < 0)
        return rc;
    if (!optional(o, "think"))
        return 0;
    if (!q->client)
        return kv__fail(r, -KV_EPARSE, line, "'think' needs a 'client' (a closed-loop row)");
    return get_time(r, line, o, "think", "seconds", 1e9, false, &q->think_ns);
}

static int mooncake_row(kv__reader *r, uint64_t line, json_t *o, kv_request_spec *q)
{
    int rc;
    if ((rc = get_time(r, line, o, "timestamp", "milliseconds", 1e6, true, &q->arrival_ns)) < 0 ||
        (rc = get_len(r, line, o, "input_length", &q->prompt_len)) < 0 ||
        (rc = get_len(r, line, o, "output_length", &q->output_len)) < 0)
        return rc;
    json_t *v = json_object_get(o, "hash_ids");
    if (!v)
        return missing(r, line, "hash_ids");
    return get_hash_ids(r, line, v, "input_length", q->prompt_len, true, q);
}

static int detect(kv__reader *r, uint64_t line, json_t *o)
{
    bool kvsim = json_object_get(o, "arrival") || json_object_get(o, "prompt_len");
    bool moon = json_object_get(o, "timestamp") || json_object_get(o, "input_length");
    if (kvsim && moon)
        return kv__fail(r, -KV_EPARSE, line,
                        "cannot detect the trace format: the object has both kvsim keys "
                        "('arrival'/'prompt_len') and Mooncake keys ('timestamp'/"
                        "'input_length'); use --format jsonl or --format mooncake");
    if (!kvsim && !moon)
        return kv__fail(r, -KV_EPARSE, line,
                        "cannot detect the trace format: expected JSON objects with 'arrival' "
                        "and 'prompt_len' (kvsim JSONL) or 'timestamp' and 'input_length' "
                        "(Mooncake); or force one with --format");
    r->format = kvsim ? KV_TRACE_KVSIM_JSONL : KV_TRACE_MOONCAKE;
    return 0;
}

int kv__read_jsonl(kv__reader *r)
{
    int rc = 0;
    while (!kv__limit_reached(r) && (rc = kv__next_line(r)) != 0) {
        if (rc < 0)
            return rc;
        if (kv__is_blank(r->buf, r->len))
            continue;
        uint64_t line = r->lineno;
        json_error_t e;
        json_t *o = json_loadb(r->buf, r->len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
        if (!o) {
            if (e.column < 1 || !e.text[0]) /* jansson names no place (never seen) */
                return kv__fail(r, -KV_EPARSE, line, "malformed JSON%s%s", e.text[0] ? ": " : "",
                                e.text);
            return kv__fail(r, -KV_EPARSE, line, "malformed JSON at column %d: %s", e.column,
                            e.text);
        }
        if (!json_is_object(o)) {
            char sb[SHOWN_MAX];
            rc = kv__fail(r, -KV_EPARSE, line, "row is not a JSON object, got %s", shown(o, sb));
        } else if (r->format != KV_TRACE_AUTO || (rc = detect(r, line, o)) == 0) {
            kv_request_spec *q;
            if ((rc = kv__push(r, line, &q)) == 0)
                rc = r->format == KV_TRACE_MOONCAKE ? mooncake_row(r, line, o, q)
                                                    : kvsim_row(r, line, o, q);
        }
        json_decref(o);
        if (rc < 0)
            return rc;
    }
    return 0;
}
