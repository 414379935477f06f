/* text: trimming, shell words, digit grouping, the comma-list splitter and the number
 * grammar (include/kvsim/text.h has the grammar).
 *
 * kv_kvlist keeps two copies of the spec with the same offsets: `text` is cut only at
 * the commas, so an item's text stays whole for messages; `pairs` is also cut at each
 * item's first '=' and gives out the key and the value.  One pass, O(length); nothing is
 * allocated per item.
 *
 * Numbers: lexing is a hand-written scan of the grammar, so what is a number is decided
 * here and nowhere else; the value is then strtod's correctly rounded conversion of
 * exactly the lexed characters.  strtod alone is not the grammar: it skips leading blanks
 * and accepts hexadecimal floats and inf/nan words, which is why every caller used to
 * differ.  strtod is given a NUL-terminated copy of the lexed text only, so it cannot read
 * further than the grammar allows (a "0x10" lexes as "0" and strtod never sees the "x").
 * kvsim never calls setlocale, so strtod runs in the C locale and the point is '.'.  Cost:
 * O(n) in the text; one allocation only for numbers longer than 127 characters.
 */
#include "kvsim/text.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
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

void kv_shell_word(kv_buf *b, const char *w)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789_./:,+-=@%";
    if (*w && strspn(w, safe) == strlen(w)) {
        kv_buf_puts(b, w);
        return;
    }
    kv_buf_putc(b, '\'');
    for (; *w; w++) {
        if (*w == '\'')
            kv_buf_puts(b, "'\\''");
        else
            kv_buf_putc(b, *w);
    }
    kv_buf_putc(b, '\'');
}

const char *kv_grouped(char *buf, size_t n, double v)
{
    char raw[32];
    snprintf(raw, sizeof raw, "%.0f", v);
    size_t len = strlen(raw), o = 0;
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        buf[o++] = raw[i];
        size_t left = len - i - 1;
        if (left > 0 && left % 3 == 0 && raw[i] != '-')
            buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}

void kv_kvlist_init(kv_kvlist *l, const char *spec, unsigned flags, const char *hint)
{
    l->text = kv_xstrdup(spec);
    l->pairs = kv_xstrdup(spec);
    l->at = 0;
    l->spec = spec;
    l->hint = hint;
    l->flags = flags;
}

void kv_kvlist_release(kv_kvlist *l)
{
    free(l->text);
    free(l->pairs);
    l->text = l->pairs = NULL;
    l->at = SIZE_MAX;
}

/* Cut the item at l->at out of both copies; its offset, and l->at moved past it. */
static size_t cut(kv_kvlist *l)
{
    size_t start = l->at, len = strcspn(l->text + start, ",");
    bool last = l->text[start + len] == '\0';
    l->text[start + len] = l->pairs[start + len] = '\0';
    l->at = last ? SIZE_MAX : start + len + 1;
    return start;
}

int kv_kvlist_next(kv_kvlist *l, kv_kvitem *item, kv_diag *diag)
{
    bool trim = l->flags & KV_KVLIST_TRIM;
    for (;;) {
        if (l->at == SIZE_MAX)
            return 0;
        size_t off = cut(l);
        char *text = l->text + off, *pair = l->pairs + off;
        if (trim) {
            text = kv_trim(text);
            pair = kv_trim(pair);
        }
        *item = (kv_kvitem){text, NULL, NULL};
        if (*text == '\0' && (l->flags & KV_KVLIST_SKIP_EMPTY))
            continue;
        if (*text == '\0' && (l->flags & KV_KVLIST_TRAILING) && l->at == SIZE_MAX)
            return 0;
        if (*text == '\0') {
            l->at = SIZE_MAX;
            char sb[KV_SHOWN_MAX];
            return kv_diag_set(diag, -KV_EINVAL, "empty entry in '%s'", kv_shown(l->spec, sb));
        }
        if (!(l->flags & KV_KVLIST_PAIRS))
            return 1;
        char *eq = strchr(pair, '=');
        if (!eq) {
            l->at = SIZE_MAX;
            char tb[KV_SHOWN_MAX];
            const char *shown = kv_shown(text, tb);
            if (l->hint)
                return kv_diag_set(diag, -KV_EINVAL, "'%s' is not KEY=VALUE (%s)", shown, l->hint);
            return kv_diag_set(diag, -KV_EINVAL, "'%s' is not KEY=VALUE", shown);
        }
        *eq = '\0';
        item->key = trim ? kv_trim(pair) : pair;
        item->value = trim ? kv_trim(eq + 1) : eq + 1;
        return 1;
    }
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
