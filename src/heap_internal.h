/* heap_internal: one binary min-heap, generated per element type.
 *
 * KV_HEAP_DEFINE(name, T, before) defines, for an array h of T holding *n elements ordered
 * by before(const T *, const T *) (a strict order; ties broken by the caller's keys, so the
 * order is a total one and every run pops the same sequence):
 *   name_push(h, n, v)   insert v (h has room for one more), O(log n);
 *   name_pop(h, n)       remove and return the first, O(log n); *n must be > 0.
 * The caller owns and sizes the array.  Used by the cluster's event queue, the arrival
 * stream's released sends and the benchmark reader's semaphore, which each had their own
 * copy of these lines.  static inline: each user gets code specialised to its type and
 * order, as the copies were.
 */
#ifndef KVSIM_HEAP_INTERNAL_H
#define KVSIM_HEAP_INTERNAL_H

#include <stddef.h>

#define KV_HEAP_DEFINE(name, T, before)                                                            \
    static inline void name##_push(T *h, size_t *n, T v)                                           \
    {                                                                                              \
        size_t i = (*n)++;                                                                         \
        while (i > 0 && before(&v, &h[(i - 1) / 2])) {                                             \
            h[i] = h[(i - 1) / 2];                                                                 \
            i = (i - 1) / 2;                                                                       \
        }                                                                                          \
        h[i] = v;                                                                                  \
    }                                                                                              \
    static inline T name##_pop(T *h, size_t *n)                                                    \
    {                                                                                              \
        T top = h[0], last = h[--*n];                                                              \
        size_t i = 0;                                                                              \
        for (;;) {                                                                                 \
            size_t c = 2 * i + 1;                                                                  \
            if (c >= *n)                                                                           \
                break;                                                                             \
            if (c + 1 < *n && before(&h[c + 1], &h[c]))                                            \
                c++;                                                                               \
            if (!before(&h[c], &last))                                                             \
                break;                                                                             \
            h[i] = h[c];                                                                           \
            i = c;                                                                                 \
        }                                                                                          \
        if (*n > 0)                                                                                \
            h[i] = last;                                                                           \
        return top;                                                                                \
    }

#endif
