/* text: small string helpers shared by the spec parsers, and the one number grammar.
 *
 * Every floating-point value kvsim reads from text — option values (--gpu-util,
 * --watermark, --time-scale, --rate, …), SLO times and fractions, length specs,
 * time-model parameters, the number part of a size, CSV arrival times — goes through
 * kv_number_lex / kv_parse_number, so one grammar holds everywhere (README "Numbers"):
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

/* Strip spaces and tabs from both ends in place; returns the first kept character. */
char *kv_trim(char *s);

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
