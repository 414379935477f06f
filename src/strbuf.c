/* strbuf: the growable byte string (include/kvsim/strbuf.h). */
#include "kvsim/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"

void kv_buf_grow(kv_buf *b, size_t extra)
{
    void *p = b->s;
    kv_grow(&p, &b->cap, b->len + extra + 1, 1);
    b->s = p;
}

/* Rows append a few bytes at a time: the check is inline, the growth is not. */
static inline void reserve(kv_buf *b, size_t extra)
{
    if (b->len + extra + 1 > b->cap)
        kv_buf_grow(b, extra);
}

void kv_buf_put(kv_buf *b, const char *data, size_t n)
{
    reserve(b, n);
    memcpy(b->s + b->len, data, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void kv_buf_puts(kv_buf *b, const char *str)
{
    kv_buf_put(b, str, strlen(str));
}

void kv_buf_printf(kv_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* The digits of v written ending at end (exactly n10(v) of them, end excluded), in
 * 32-bit arithmetic once v fits (most row values). */
static void digits_before(char *end, uint64_t v)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    char *p = end;
    for (; v > UINT32_MAX; v /= 100) {
        unsigned r = (unsigned)(v % 100);
        *--p = pairs[2 * r + 1];
        *--p = pairs[2 * r];
    }
    uint32_t w = (uint32_t)v;
    for (; w >= 100; w /= 100) {
        unsigned r = w % 100;
        *--p = pairs[2 * r + 1];
        *--p = pairs[2 * r];
    }
    if (w >= 10) {
        *--p = pairs[2 * w + 1];
        *--p = pairs[2 * w];
    } else {
        *--p = (char)('0' + w);
    }
}

/* How many decimal digits v has (1 to 20): ⌊log10 2^bits⌋ from the bit length
 * (1233/4096 ≈ log10 2), one comparison to correct it. */
static unsigned n10(uint64_t v)
{
    static const uint64_t pow10[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};
    uint64_t w = v | 1;
    unsigned t = ((64u - (unsigned)__builtin_clzll(w)) * 1233u) >> 12;
    return t + (w >= pow10[t]);
}

/* Rows of numbers are the hot use: the digits go straight into the buffer. */
void kv_buf_u64(kv_buf *b, uint64_t v)
{
    unsigned n = n10(v);
    reserve(b, n);
    digits_before(b->s + b->len + n, v);
    b->len += n;
    b->s[b->len] = '\0';
}

/* "." and the low prec digits of f (f < 10^prec), zero-padded. */
static void put_frac(kv_buf *b, uint64_t f, int prec)
{
    reserve(b, (size_t)prec + 1);
    char *p = b->s + b->len;
    p[0] = '.';
    for (int i = prec; i >= 1; i--) {
        p[i] = (char)('0' + f % 10);
        f /= 10;
    }
    b->len += (size_t)prec + 1;
    b->s[b->len] = '\0';
}

void kv_buf_ns(kv_buf *b, int64_t ns)
{
    kv_buf_u64(b, (uint64_t)(ns / 1000000000));
    put_frac(b, (uint64_t)(ns % 1000000000), 9);
}

/* "%.6f" and "%.9f" by hand, exactly: v = M · 2^-s with M < 2^53, so v · 10^p = M · 10^p / 2^s is
 * rounded to the nearest integer, ties to even, in 128-bit integers, which is what glibc's
 * printf does with the exact binary value in the default rounding mode.  Negative, huge
 * (≥ 2^53), NaN and infinite values go to printf itself. */
__extension__ typedef unsigned __int128 u128;

static void fixed(kv_buf *b, double v, int prec)
{
    static const uint64_t pow10[10] = {1,      10,      100,      1000,      10000,
                                       100000, 1000000, 10000000, 100000000, 1000000000};
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    unsigned ex = (unsigned)(bits >> 52) & 0x7ff;
    uint64_t m = bits & ((1ull << 52) - 1);
    if ((bits >> 63) || ex == 0x7ff || ex >= 1075) {
        kv_buf_printf(b, "%.*f", prec, v);
        return;
    }
    unsigned sh = ex ? 1075 - ex : 1074; /* v = m · 2^-sh */
    if (ex)
        m |= 1ull << 52;
    uint64_t q = 0;
    if (sh < 100) { /* else v < 2^-47: rounds to 0 */
        u128 n = (u128)m * pow10[prec];
        u128 rem = n & (((u128)1 << sh) - 1), half = (u128)1 << (sh - 1);
        q = (uint64_t)(n >> sh);
        if (rem > half || (rem == half && (q & 1)))
            q++;
    }
    kv_buf_u64(b, q / pow10[prec]);
    put_frac(b, q % pow10[prec], prec);
}

void kv_buf_f6(kv_buf *b, double v)
{
    fixed(b, v, 6);
}

void kv_buf_f9(kv_buf *b, double v)
{
    fixed(b, v, 9);
}

void kv_buf_reset(kv_buf *b)
{
    b->len = 0;
    if (b->s)
        b->s[0] = '\0';
}

void kv_buf_release(kv_buf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}
