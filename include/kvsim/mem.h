/* Allocation that cannot fail: out of memory prints one line and aborts (STYLE: one
 * kv_xmalloc).  Simulation state is sized by the trace and the pool; there is no useful
 * recovery from running out of it halfway through a replay. */
#ifndef KVSIM_MEM_H
#define KVSIM_MEM_H

#include <stddef.h>

void *kv_xmalloc(size_t n);
void *kv_xcalloc(size_t count, size_t size);
void *kv_xrealloc(void *p, size_t n);
char *kv_xstrdup(const char *s);

/* Grow *arr (element size elem) so it holds at least need elements; *cap is updated.
 * Doubling, so appends are amortised O(1). */
void kv_grow(void **arr, size_t *cap, size_t need, size_t elem);

#endif
