/* trace_csv: the CSV readers: kvsim CSV, Azure LLM inference CSV, length-stats CSV
 * (DESIGN §7).
 *
 * Records follow RFC 4180: fields separated by commas, a field in double quotes may hold
 * commas, "" for a quote, and line breaks (the record then spans physical lines; messages
 * name the line where it starts, and an embedded CRLF is kept as LF).  Lines may end in
 * LF or CRLF, the last one may lack it.  Spaces and tabs around a field (outside its
 * quotes) are trimmed; text after a closing quote is an error, while a quote inside an
 * unquoted field is kept as a literal character (as Python's csv does).  Records that are blank
 * (only white space) are skipped and not counted.  The first non-blank record is the
 * header: columns are found by exact, case-sensitive name, any order, unknown columns
 * ignored; a column the format uses may appear only once.  Every data record must have
 * as many fields as the header.
 *
 * Detection (no --format): TIMESTAMP + ContextTokens → Azure; num_prefill_tokens →
 * length stats; arrival + prompt_len → kvsim CSV; several or none → an error.
 *
 * Values.  Integers are optional sign and decimal digits (no "2.0", no spaces inside).
 * Seconds are a number in kvsim's one grammar (kvsim/text.h: [+-]digits[.digits][e±digits],
 * ".5" and "5." too); inf/nan words are reported as non-finite, not as syntax errors.  Azure
 * TIMESTAMPs are parsed in exact integers: a proleptic-Gregorian civil date → days (Hinnant's
 * days_from_civil; no time zones, no mktime), whole seconds, and a fraction of 1..9 digits
 * scaled to nanoseconds; trace.c subtracts the earliest one.  Length-stats rows get
 * arrivals t_i = t_{i−1} + Exp(rate) (t_{−1} = 0, so the first row arrives one gap in),
 * drawn from a kv_rng seeded with the seed, one draw per row in file order, summed in
 * doubles and converted with llround(t · 1e9).
 *
 * Cost: one pass, fields copied into one reused buffer; no per-row allocation besides the
 * arena copies of id/adapter/salt/session/client strings.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/rng.h"
#include "kvsim/text.h"
#include "trace_internal.h"

#define SHOWN_MAX 48

/* One parsed record: field i is the NUL-terminated string at text + off[i]. */
typedef struct record {
    char *text;
    size_t len, cap;
    size_t *off;
    size_t nf, off_cap;
    uint64_t line; /* physical line where the record starts */
} record;

static void put(record *c, const char *s, size_t n)
{
    void *p = c->text;
    kv_grow(&p, &c->cap, c->len + n + 1, 1);
    c->text = p;
    memcpy(c->text + c->len, s, n);
    c->len += n;
}

static void begin_field(record *c)
{
    void *p = c->off;
    kv_grow(&p, &c->off_cap, c->nf + 1, sizeof *c->off);
    c->off = p;
    c->off[c->nf++] = c->len;
}

static void end_field(record *c)
{
    put(c, "", 1); /* the NUL */
}

static const char *field(const record *c, size_t i)
{
    return c->text + c->off[i];
}

static bool is_blank_char(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* The next non-blank record: 1, 0 at end of file, or a negative KV_E*. */
static int next_record(kv__reader *r, record *c)
{
    int rc;
    do {
        if ((rc = kv__next_line(r)) <= 0)
            return rc;
    } while (kv__is_blank(r->buf, r->len));
    c->line = r->lineno;
    c->len = c->nf = 0;
    size_t raw = r->len; /* bytes of the record's lines, for the record limit */
    const char *p = r->buf, *end = r->buf + r->len;
    for (;;) {
        begin_field(c);
        while (p < end && is_blank_char(*p))
            p++;
        if (p < end && *p == '"') {
            p++;
            for (;;) {
                if (p == end) { /* the line ends inside quotes: the field goes on */
                    if ((rc = kv__next_line(r)) < 0)
                        return rc;
                    if (rc == 0)
                        return kv__fail(r, -KV_EPARSE, c->line,
                                        "unterminated quoted field in column %zu", c->nf);
                    /* The record, not only each line, is bounded: an unbalanced quote
                     * must not gather the rest of a huge file into one field. */
                    raw += 1 + r->len;
                    if (raw > r->max_line)
                        return kv__too_long(r, c->line);
                    put(c, "\n", 1);
                    p = r->buf;
                    end = r->buf + r->len;
                } else if (*p != '"') {
                    const char *s = p;
                    while (p < end && *p != '"')
                        p++;
                    put(c, s, (size_t)(p - s));
                } else if (p + 1 < end && p[1] == '"') {
                    put(c, "\"", 1);
                    p += 2;
                } else {
                    p++;
                    break;
                }
            }
            while (p < end && is_blank_char(*p))
                p++;
            if (p < end && *p != ',')
                return kv__fail(r, -KV_EPARSE, c->line,
                                "malformed quoted field in column %zu: text after the closing "
                                "quote",
                                c->nf);
        } else {
            const char *s = p;
            while (p < end && *p != ',')
                p++;
            const char *e = p;
            while (e > s && is_blank_char(e[-1]))
                e--;
            put(c, s, (size_t)(e - s));
        }
        end_field(c);
        if (p == end)
            return 1;
        p++; /* the comma */
    }
}

/* The field as the user wrote it, single-quoted and truncated, for messages. */
static const char *shown(const char *s, char *buf)
{
    if (strlen(s) > SHOWN_MAX - 6)
        snprintf(buf, SHOWN_MAX, "'%.*s...'", SHOWN_MAX - 7, s);
    else
        snprintf(buf, SHOWN_MAX, "'%s'", s);
    return buf;
}

static bool is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

/* Optional sign and decimal digits.  false if that is not the syntax; *mag saturates at
 * UINT64_MAX / 10 so any huge value stays "huge". */
static bool parse_int(const char *s, bool *neg, uint64_t *mag)
{
    *neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (!is_digit(*s))
        return false;
    uint64_t v = 0;
    for (; is_digit(*s); s++)
        v = v >= UINT64_MAX / 100 ? UINT64_MAX / 10 : v * 10 + (uint64_t)(*s - '0');
    *mag = v;
    return *s == '\0';
}

static int csv_len(kv__reader *r, uint64_t line, const char *name, const char *s, uint32_t *out)
{
    char sb[SHOWN_MAX];
    bool neg;
    uint64_t v;
    if (!parse_int(s, &neg, &v))
        return kv__fail(r, -KV_EPARSE, line, "'%s' must be a positive integer, got %s", name,
                        shown(s, sb));
    if (neg || v == 0)
        return kv__fail(r, -KV_ERANGE, line, "'%s' must be a positive integer, got %s", name,
                        shown(s, sb));
    if (v > KV_TRACE_MAX_LEN)
        return kv__fail(r, -KV_ERANGE, line, "'%s' is %s, above the maximum length %u", name, s,
                        (unsigned)KV_TRACE_MAX_LEN);
    *out = (uint32_t)v;
    return 0;
}

/* An inf/nan word, optionally signed: not a number in the grammar, but reported as
 * non-finite rather than as a syntax error. */
static bool is_nonfinite_word(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    static const char *const words[] = {"inf", "infinity", "nan"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        size_t k = 0;
        while (words[i][k] && (s[k] | 0x20) == words[i][k])
            k++;
        if (!words[i][k] && !s[k])
            return true;
    }
    return false;
}

/* Seconds: a number in the one grammar (kvsim/text.h). */
static int csv_seconds(kv__reader *r, uint64_t line, const char *name, const char *s, int64_t *out)
{
    char sb[SHOWN_MAX];
    double v;
    int rc = kv_parse_number(s, strlen(s), &v);
    int why;
    if (rc == 0)
        why = kv__time_to_ns(v, 1e9, out);
    else if (is_nonfinite_word(s))
        why = KV__TIME_NONFINITE;
    else if (rc == -KV_ERANGE) /* a decimal like 1e999 overflows the double */
        why = *s == '-' ? KV__TIME_NEGATIVE : KV__TIME_OVERFLOW;
    else
        return kv__fail(r, -KV_EPARSE, line, "'%s' must be a number of seconds, got %s", name,
                        shown(s, sb));
    return why ? kv__time_fail(r, line, name, why, shown(s, sb)) : 0;
}

/* A non-empty field copied to the arena; empty = NULL. */
static const char *csv_name(kv__reader *r, const char *s)
{
    size_t n = strlen(s);
    return n ? kv__arena_strndup(r->arena, s, n) : NULL;
}

/* ---- Azure TIMESTAMP --------------------------------------------------------------- */

/* Days from 1970-01-01 to the proleptic Gregorian date y-m-d (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static bool digits_at(const char *s, size_t n, unsigned *out)
{
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* "YYYY-MM-DD HH:MM:SS[.f…]" (a 'T' may replace the space; 1..9 fraction digits) → whole
 * seconds since 1970-01-01 00:00:00 and nanoseconds. */
static bool parse_datetime(const char *s, int64_t *sec, int64_t *ns)
{
    static const unsigned mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    unsigned y, mo, d, h, mi, se;
    if (strlen(s) < 19 || !digits_at(s, 4, &y) || s[4] != '-' || !digits_at(s + 5, 2, &mo) ||
        s[7] != '-' || !digits_at(s + 8, 2, &d) || (s[10] != ' ' && s[10] != 'T') ||
        !digits_at(s + 11, 2, &h) || s[13] != ':' || !digits_at(s + 14, 2, &mi) || s[16] != ':' ||
        !digits_at(s + 17, 2, &se))
        return false;
    bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap) || h > 23 || mi > 59 ||
        se > 59)
        return false;
    int64_t frac = 0;
    const char *p = s + 19;
    if (*p == '.') {
        size_t n = 0;
        for (p++; is_digit(*p); p++, n++) {
            if (n == 9)
                return false;
            frac = frac * 10 + (*p - '0');
        }
        if (n == 0)
            return false;
        for (; n < 9; n++)
            frac *= 10;
    }
    if (*p != '\0')
        return false;
    *sec = days_from_civil(y, mo, d) * 86400 + (int64_t)(h * 3600 + mi * 60 + se);
    *ns = frac;
    return true;
}

/* ---- header and rows --------------------------------------------------------------- */

enum {
    C_ARRIVAL,
    C_PROMPT,
    C_OUTPUT,
    C_ID,
    C_ADAPTER,
    C_SALT,
    C_PRIORITY,
    C_SESSION,
    C_CLIENT,
    C_THINK,
    NUM_COLS
};

typedef struct layout {
    const char *name[NUM_COLS]; /* column names the format uses; NULL = none */
    unsigned required;          /* bit i set: name[i] must be present */
} layout;

static const layout layouts[] = {
    [KV_TRACE_KVSIM_CSV] = {{"arrival", "prompt_len", "output_len", "id", "adapter", "salt",
                             "priority", "session", "client", "think"},
                            0x7},
    [KV_TRACE_AZURE] = {{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}, 0x7},
    [KV_TRACE_LENGTHS] = {{NULL, "num_prefill_tokens", "num_decode_tokens"}, 0x6},
};

/* Index of column `name` in the header, −1 if absent, −2 (diag set) if repeated. */
static long find_col(kv__reader *r, const record *h, const char *name)
{
    long at = -1;
    for (size_t i = 0; i < h->nf; i++) {
        if (strcmp(field(h, i), name) != 0)
            continue;
        if (at >= 0) {
            kv__fail(r, -KV_EPARSE, h->line, "duplicate column '%s' in the CSV header", name);
            return -2;
        }
        at = (long)i;
    }
    return at;
}

static bool has_col(const record *h, const char *name)
{
    for (size_t i = 0; i < h->nf; i++) {
        if (strcmp(field(h, i), name) == 0)
            return true;
    }
    return false;
}

static int detect(kv__reader *r, const record *h)
{
    bool azure = has_col(h, "TIMESTAMP") && has_col(h, "ContextTokens");
    bool lengths = has_col(h, "num_prefill_tokens");
    bool kvsim = has_col(h, "arrival") && has_col(h, "prompt_len");
    if (azure + lengths + kvsim > 1)
        return kv__fail(r, -KV_EPARSE, h->line,
                        "cannot detect the trace format: the CSV header fits more than one "
                        "format; use --format csv, azure or lengths");
    if (!azure && !lengths && !kvsim)
        return kv__fail(r, -KV_EPARSE, h->line,
                        "cannot detect the trace format: expected a CSV header with "
                        "arrival,prompt_len (kvsim CSV), TIMESTAMP,ContextTokens (Azure) or "
                        "num_prefill_tokens (length stats), or JSON Lines; or force one with --format");
    r->format = azure ? KV_TRACE_AZURE : lengths ? KV_TRACE_LENGTHS : KV_TRACE_KVSIM_CSV;
    return 0;
}

static int check_rate(kv__reader *r)
{
    if (r->rate == 0)
        return kv__fail(r, -KV_EINVAL, 0,
                        "a length-stats trace has no arrival times: give --rate R (requests "
                        "per second)");
    if (!(r->rate > 0) || !isfinite(r->rate))
        return kv__fail(r, -KV_EINVAL, 0,
                        "--rate must be a positive finite number of requests per second, got %g",
                        r->rate);
    return 0;
}

typedef struct row_ctx {
    long col[NUM_COLS]; /* header index per column, −1 absent */
    kv_rng rng;         /* length stats: Poisson arrivals */
    double t;           /* length stats: last arrival, seconds */
} row_ctx;

/* The two lengths every CSV format has, under the format's own column names. */
static int parse_lengths(kv__reader *r, row_ctx *x, const record *c, kv_request_spec *q)
{
    const layout *lay = &layouts[r->format];
    int rc = csv_len(r, c->line, lay->name[C_PROMPT], field(c, (size_t)x->col[C_PROMPT]),
                     &q->prompt_len);
    if (rc < 0)
        return rc;
    return csv_len(r, c->line, lay->name[C_OUTPUT], field(c, (size_t)x->col[C_OUTPUT]),
                   &q->output_len);
}

static int kvsim_row(kv__reader *r, row_ctx *x, const record *c, kv_request_spec *q)
{
    uint64_t line = c->line;
    char sb[SHOWN_MAX];
    int rc;
    if ((rc = csv_seconds(r, line, "arrival", field(c, (size_t)x->col[C_ARRIVAL]),
                          &q->arrival_ns)) < 0 ||
        (rc = parse_lengths(r, x, c, q)) < 0)
        return rc;
    if (x->col[C_ID] >= 0)
        q->id = csv_name(r, field(c, (size_t)x->col[C_ID]));
    if (x->col[C_ADAPTER] >= 0)
        q->adapter = csv_name(r, field(c, (size_t)x->col[C_ADAPTER]));
    if (x->col[C_SALT] >= 0)
        q->salt = csv_name(r, field(c, (size_t)x->col[C_SALT]));
    if (x->col[C_PRIORITY] >= 0 && *field(c, (size_t)x->col[C_PRIORITY])) {
        const char *s = field(c, (size_t)x->col[C_PRIORITY]);
        bool neg;
        uint64_t v;
        if (!parse_int(s, &neg, &v))
            return kv__fail(r, -KV_EPARSE, line, "'priority' must be an integer, got %s",
                            shown(s, sb));
        if (v > (neg ? (uint64_t)INT32_MAX + 1 : (uint64_t)INT32_MAX))
            return kv__fail(r, -KV_ERANGE, line, "'priority' must be a 32-bit integer, got %s",
                            shown(s, sb));
        q->priority = neg ? (int32_t)(-(int64_t)v) : (int32_t)v;
    }
    if (x->col[C_SESSION] >= 0)
        q->session = csv_name(r, field(c, (size_t)x->col[C_SESSION]));
    if (x->col[C_CLIENT] >= 0)
        q->client = csv_name(r, field(c, (size_t)x->col[C_CLIENT]));
    if (x->col[C_THINK] < 0 || !*field(c, (size_t)x->col[C_THINK]))
        return 0;
    if (!q->client)
        return kv__fail(r, -KV_EPARSE, line, "'think' needs a 'client' (a closed-loop row)");
    return csv_seconds(r, line, "think", field(c, (size_t)x->col[C_THINK]), &q->think_ns);
}

static int azure_row(kv__reader *r, row_ctx *x, const record *c, kv_request_spec *q)
{
    char sb[SHOWN_MAX];
    const char *s = field(c, (size_t)x->col[C_ARRIVAL]);
    int64_t sec, ns;
    if (!parse_datetime(s, &sec, &ns))
        return kv__fail(r, -KV_EPARSE, c->line,
                        "'TIMESTAMP' must be a date-time YYYY-MM-DD HH:MM:SS[.fffffff], got %s",
                        shown(s, sb));
    void *p = r->abs_sec;
    kv_grow(&p, &r->abs_cap, r->n, sizeof *r->abs_sec);
    r->abs_sec = p;
    r->abs_sec[q->row] = sec;
    q->arrival_ns = ns; /* the fraction until trace.c subtracts the earliest TIMESTAMP */
    return parse_lengths(r, x, c, q);
}

static int lengths_row(kv__reader *r, row_ctx *x, const record *c, kv_request_spec *q)
{
    int rc = parse_lengths(r, x, c, q);
    if (rc < 0)
        return rc;
    x->t += kv_rng_exponential(&x->rng, r->rate);
    if (kv__time_to_ns(x->t, 1e9, &q->arrival_ns) != KV__TIME_OK)
        return kv__fail(r, -KV_ERANGE, c->line,
                        "Poisson arrival %g s at --rate %g is too large for 64-bit nanoseconds",
                        x->t, r->rate);
    return 0;
}

int kv__read_csv(kv__reader *r)
{
    record h = {0}, c = {0};
    row_ctx x = {.t = 0};
    if (r->max_line > KV_TRACE_MAX_CSV_RECORD)
        r->max_line = KV_TRACE_MAX_CSV_RECORD;
    r->max_what = "a CSV record";
    int rc = 0;
    if (r->len > r->max_line) { /* the first line, read before the format was known */
        rc = kv__too_long(r, r->lineno);
        goto out;
    }
    rc = next_record(r, &h);
    if (rc <= 0) /* 0 cannot happen: trace.c saw a non-blank line */
        goto out;
    if (r->format == KV_TRACE_AUTO && (rc = detect(r, &h)) < 0)
        goto out;
    const layout *lay = &layouts[r->format];
    for (int i = 0; i < NUM_COLS; i++) {
        x.col[i] = lay->name[i] ? find_col(r, &h, lay->name[i]) : -1;
        if (x.col[i] == -2) {
            rc = -KV_EPARSE;
            goto out;
        }
        if (x.col[i] < 0 && (lay->required >> i & 1)) {
            rc = kv__fail(r, -KV_EPARSE, h.line, "missing column '%s' in the CSV header",
                          lay->name[i]);
            goto out;
        }
    }
    if (r->format == KV_TRACE_LENGTHS) {
        if ((rc = check_rate(r)) < 0)
            goto out;
        kv_rng_seed(&x.rng, r->seed);
    }
    while (!kv__limit_reached(r) && (rc = next_record(r, &c)) == 1) {
        if (c.nf != h.nf) {
            rc = kv__fail(r, -KV_EPARSE, c.line, "row has %zu columns, the header has %zu", c.nf,
                          h.nf);
            break;
        }
        kv_request_spec *q;
        if ((rc = kv__push(r, c.line, &q)) < 0)
            break;
        rc = r->format == KV_TRACE_KVSIM_CSV ? kvsim_row(r, &x, &c, q)
             : r->format == KV_TRACE_AZURE   ? azure_row(r, &x, &c, q)
                                             : lengths_row(r, &x, &c, q);
        if (rc < 0)
            break;
    }
out:
    free(h.text);
    free(h.off);
    free(c.text);
    free(c.off);
    return rc < 0 ? rc : 0;
}
