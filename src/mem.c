/* mem: allocation wrappers whose failure goes to one out-of-memory handler
 * (include/kvsim/mem.h).
 *
 * The handler pointer is the process's only global: allocation is process-wide, and the
 * handler has to be reachable from every allocation site without threading a context
 * through them.  It is set once at startup (by the CLI) and only read afterwards.
 */
#include "kvsim/mem.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void default_oom(size_t n)
{
    fprintf(stderr, "kvsim: fatal: out of memory allocating %zu bytes\n", n);
    abort();
}

static kv_oom_handler oom_handler = default_oom;

kv_oom_handler kv_mem_set_oom_handler(kv_oom_handler h)
{
    kv_oom_handler old = oom_handler;
    oom_handler = h ? h : default_oom;
    return old;
}

void kv_mem_oom(size_t n)
{
    oom_handler(n);
    abort(); /* a handler that returns has broken its contract */
}

void *kv_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        kv_mem_oom(n);
    return p;
}

void *kv_xcalloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        kv_mem_oom(SIZE_MAX);
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        kv_mem_oom(count * size);
    return p;
}

void *kv_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        kv_mem_oom(n);
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
    while (c < need) {
        if (c > SIZE_MAX / 2)
            kv_mem_oom(SIZE_MAX);
        c *= 2;
    }
    if (elem && c > SIZE_MAX / elem)
        kv_mem_oom(SIZE_MAX);
    *arr = kv_xrealloc(*arr, c * elem);
    *cap = c;
}

void kv_mem_route_json(void)
{
    json_set_alloc_funcs(kv_xmalloc, free);
}
