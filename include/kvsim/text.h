/* text: the string helpers every spec and list parser shares — trimming, digit grouping,
 * and kv_kvlist, the one splitter of comma lists ("p50=1000,p99=8000", "16,32,64").
 *
 * Users: length specs (lengthdist.c), SLO specs (plan.c), the roofline and linear time
 * models (timing.c), and in the CLI the sweep lists, estimate's --lengths and hash's
 * tokens.  Each keeps its own wording for what an item means; the splitter owns what a
 * list is: items are cut at every comma, returned one at a time in order (so the first
 * bad item is reported before the next is looked at), optionally trimmed, optionally
 * split at their first '=' into KEY and VALUE.
 *
 * It also holds the one number grammar.  Every floating-point value kvsim reads from
 * text — option values (--gpu-util, --watermark, --time-scale, --rate, …), SLO times and
 * fractions, length specs, time-model parameters, the number part of a size, CSV arrival
 * times — goes through kv_number_lex / kv_parse_number, so one grammar holds everywhere
 * (README "Numbers"):
 *
 *   number   = [ "+" | "-" ] mantissa [ exponent ]
 *   mantissa = digits [ "." [ digits ] ]  |  "." digits
 *   exponent = ( "e" | "E" ) [ "+" | "-" ] digits
 *   digits   = one or more of 0-9
 *
 * Decimal only: no hexadecimal ("0x10"), no inf/nan spellings, no blanks before, inside or
 * after, no digit separators.  "1e3", ".5", "5." and "-0" are numbers ("-0" is 0); whether
 * a sign is meaningful is the caller's range check ("must not be negative").
 */
#ifndef KVSIM_TEXT_H
#define KVSIM_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "kvsim/error.h"
#include "kvsim/strbuf.h"

/* Strip spaces and tabs from both ends in place; returns the first kept character. */
char *kv_trim(char *s);

/* A POSIX shell word: w as it is when it holds only safe characters (letters, digits and
 * _./:,+-=@%), else single-quoted with each ' written '\''.  For command lines a user or a
 * scheduler runs (sweep --emit-jobs). */
void kv_shell_word(kv_buf *b, const char *w);

/* v rounded to a whole number with thousands separators, "1,234,567" (the human tables and
 * figure titles); truncated to fit n.  Returns buf. */
const char *kv_grouped(char *buf, size_t n, double v);

enum {
    KV_KVLIST_PAIRS = 1u << 0,      /* items are KEY=VALUE, split at the first '=' */
    KV_KVLIST_TRIM = 1u << 1,       /* blanks around items, keys and values are dropped */
    KV_KVLIST_SKIP_EMPTY = 1u << 2, /* an empty item is skipped, not an error */
    KV_KVLIST_TRAILING = 1u << 3,   /* an empty last item (after a final comma, or an empty
                                       text) ends the list instead of being an error */
};

typedef struct kv_kvlist {
    char *text;       /* owned copy of the spec, cut at commas: the items' text */
    char *pairs;      /* owned second copy, also cut at '=': keys and values */
    size_t at;        /* offset of the next item in both; SIZE_MAX after the last */
    const char *spec; /* as given, for messages (not owned) */
    const char *hint; /* the "not KEY=VALUE" message's parenthesis, or NULL (not owned) */
    unsigned flags;
} kv_kvlist;

/* The strings point into the list's copies: a caller may cut them further in place. */
typedef struct kv_kvitem {
    char *text;  /* the whole item ("" when empty), trimmed with KV_KVLIST_TRIM */
    char *key;   /* KV_KVLIST_PAIRS: the text before the first '=' */
    char *value; /* KV_KVLIST_PAIRS: the text after it */
} kv_kvitem;

/* Can't fail.  spec and hint must outlive the list. */
void kv_kvlist_init(kv_kvlist *l, const char *spec, unsigned flags, const char *hint);
/* The next item: 1 with *item set (its strings live until kv_kvlist_release); 0 at the
 * end; -KV_EINVAL for an empty item ("empty entry in 'SPEC'") or, with KV_KVLIST_PAIRS,
 * one without '=' ("'ITEM' is not KEY=VALUE (HINT)"), with item->text set so a caller
 * with its own wording can name it.  After an error the list is at its end. */
int kv_kvlist_next(kv_kvlist *l, kv_kvitem *item, kv_diag *diag);
void kv_kvlist_release(kv_kvlist *l);

/* A user's text as messages quote it: the text itself when short, else its first 60 bytes
 * and "...", so a diagnostic keeps its reason and hint whatever it quotes (kv_diag holds
 * 512 bytes).  Returns s or buf. */
#define KV_SHOWN_MAX 64
const char *kv_shown(const char *s, char buf[KV_SHOWN_MAX]);

/* A lexed number: the parts of the longest prefix of the text that is a number. */
typedef struct kv_number_parts {
    size_t len;             /* characters of the number, ≥ 1 */
    bool negative;          /* a leading '-' */
    const char *int_digits; /* the digits before the point (n_int may be 0) */
    size_t n_int;
    const char *frac_digits; /* the digits after the point (n_frac may be 0) */
    size_t n_frac;
    long exponent; /* the exponent's value, saturated at ±KV_NUMBER_EXP_SAT */
} kv_number_parts;

#define KV_NUMBER_EXP_SAT 100000000L

/* Lex the longest prefix of s[0..n) that is a number (the text need not be NUL-terminated
 * and may go on, e.g. with a unit: "100ms" lexes "100").  false if no prefix is a number;
 * then *out is unspecified.  Never reads past s[n−1]. */
bool kv_number_lex(const char *s, size_t n, kv_number_parts *out);

/* s[0..n) must be exactly a number.  0 with *out the correctly rounded double (−0 becomes
 * +0; a value too small for a double rounds to 0 or a subnormal), -KV_EINVAL when the text
 * is not exactly a number, -KV_ERANGE when its magnitude exceeds the largest double
 * ("1e999").  Can't fail otherwise (long texts take one allocation). */
int kv_parse_number(const char *s, size_t n, double *out);

#endif
