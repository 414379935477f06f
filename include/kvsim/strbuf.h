/* strbuf: a growable byte string, the one text buffer every module builds output in.
 *
 * The string is always NUL-terminated once anything was added (s is NULL while empty), so
 * it can be handed to stdio or a parser as it is.  Appends are amortised O(1); allocation
 * goes through kv_xmalloc and cannot fail.  Number formatting by hand (kv_buf_u64,
 * kv_buf_ns) prints exactly what "%llu" and "%lld.%09lld" would, without stdio's cost.
 */
#ifndef KVSIM_STRBUF_H
#define KVSIM_STRBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct kv_buf {
    char *s; /* NUL-terminated; NULL while nothing was ever added */
    size_t len, cap;
} kv_buf;

void kv_buf_put(kv_buf *b, const char *data, size_t n);
void kv_buf_puts(kv_buf *b, const char *str);
/* Room for extra more bytes and the NUL (kv_buf_putc's growth, out of line). */
void kv_buf_grow(kv_buf *b, size_t extra);
/* One byte: inline, as rows append a separator per field. */
static inline void kv_buf_putc(kv_buf *b, char c)
{
    if (b->len + 2 > b->cap)
        kv_buf_grow(b, 1);
    b->s[b->len++] = c;
    b->s[b->len] = '\0';
}
void kv_buf_printf(kv_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Decimal digits of v. */
void kv_buf_u64(kv_buf *b, uint64_t v);
/* Integer nanoseconds ns ≥ 0 as seconds with 9 decimals: "12.000000500". */
void kv_buf_ns(kv_buf *b, int64_t ns);
/* v as "%.6f" prints it (exactly, by hand for 0 ≤ v < 2^53). */
void kv_buf_f6(kv_buf *b, double v);
void kv_buf_f9(kv_buf *b, double v); /* the same for "%.9f" */
/* Empty it, keeping the storage. */
void kv_buf_reset(kv_buf *b);
/* Free the storage; b is empty again. */
void kv_buf_release(kv_buf *b);

#endif
