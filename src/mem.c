/* mem: allocation wrappers that abort with a message on exhaustion (include/kvsim/mem.h). */
#include "kvsim/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t n)
{
    fprintf(stderr, "kvsim: fatal: out of memory allocating %zu bytes\n", n);
    abort();
}

void *kv_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *kv_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        out_of_memory(count * size);
    return p;
}

void *kv_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n);
    return q;
}

char *kv_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = kv_xmalloc(n);
    memcpy(d, s, n);
    return d;
}

void kv_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 8;
    while (c < need)
        c *= 2;
    *arr = kv_xrealloc(*arr, c * elem);
    *cap = c;
}
