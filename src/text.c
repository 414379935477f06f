/* text: string helpers shared by the spec parsers, and the number grammar
 * (include/kvsim/text.h has the grammar).
 *
 * Lexing is a hand-written scan of the grammar, so what is a number is decided here and
 * nowhere else; the value is then strtod's correctly rounded conversion of exactly the
 * lexed characters.  strtod alone is not the grammar: it skips leading blanks and accepts
 * hexadecimal floats and inf/nan words, which is why every caller used to differ.  strtod
 * is given a NUL-terminated copy of the lexed text only, so it cannot read further than the
 * grammar allows (a "0x10" lexes as "0" and strtod never sees the "x").  kvsim never calls
 * setlocale, so strtod runs in the C locale and the point is '.'.
 *
 * Cost: O(n) in the text; one allocation only for numbers longer than 127 characters.
 */
#include "kvsim/text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/error.h"
#include "kvsim/mem.h"

char *kv_trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

const char *kv_shown(const char *s, char buf[KV_SHOWN_MAX])
{
    size_t n = strnlen(s, KV_SHOWN_MAX);
    if (n < KV_SHOWN_MAX)
        return s;
    memcpy(buf, s, KV_SHOWN_MAX - 4);
    memcpy(buf + KV_SHOWN_MAX - 4, "...", 4);
    return buf;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static size_t count_digits(const char *s, size_t i, size_t n)
{
    size_t k = i;
    while (k < n && is_digit(s[k]))
        k++;
    return k - i;
}

bool kv_number_lex(const char *s, size_t n, kv_number_parts *out)
{
    size_t i = 0;
    memset(out, 0, sizeof *out);
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        out->negative = s[i] == '-';
        i++;
    }
    out->int_digits = s + i;
    out->n_int = count_digits(s, i, n);
    i += out->n_int;
    if (i < n && s[i] == '.') {
        size_t nf = count_digits(s, i + 1, n);
        if (out->n_int > 0 || nf > 0) { /* "5." and ".5", never a lone "." */
            out->frac_digits = s + i + 1;
            out->n_frac = nf;
            i += 1 + nf;
        }
    }
    if (out->n_int == 0 && out->n_frac == 0)
        return false;
    /* An exponent counts only when complete: "1e" and "1e+" lex as "1" and leave the rest
     * to the caller (who then reports it as trailing text). */
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        bool neg = false;
        if (j < n && (s[j] == '+' || s[j] == '-')) {
            neg = s[j] == '-';
            j++;
        }
        size_t nd = count_digits(s, j, n);
        if (nd > 0) {
            long e = 0;
            for (size_t k = j; k < j + nd; k++)
                e = e >= KV_NUMBER_EXP_SAT / 10 ? KV_NUMBER_EXP_SAT : e * 10 + (s[k] - '0');
            if (e > KV_NUMBER_EXP_SAT)
                e = KV_NUMBER_EXP_SAT;
            out->exponent = neg ? -e : e;
            i = j + nd;
        }
    }
    out->len = i;
    return true;
}

int kv_parse_number(const char *s, size_t n, double *out)
{
    kv_number_parts lx;
    if (!kv_number_lex(s, n, &lx) || lx.len != n)
        return -KV_EINVAL;
    char small[128];
    char *buf = n < sizeof small ? small : kv_xmalloc(n + 1);
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    double v = strtod(buf, &end);
    bool whole = end == buf + n; /* always: strtod accepts every decimal the grammar does */
    if (buf != small)
        free(buf);
    if (!whole)
        return -KV_EINVAL;
    if (isinf(v))
        return -KV_ERANGE;
    *out = v == 0 ? 0.0 : v; /* -0 → +0 */
    return 0;
}
