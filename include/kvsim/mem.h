/* Allocation that cannot fail: out of memory goes to one handler (STYLE: one kv_xmalloc).
 * Simulation state is sized by the trace and the pool; there is no useful recovery from
 * running out of it halfway through a replay, so callers never see a NULL.
 *
 * The handler is the one piece of process-wide state kvsim has, because allocation is
 * process-wide: the core must not exit, so by default it prints one line and aborts; the
 * CLI installs a handler that reports "kvsim: error: out of memory (…)", cleans up and
 * exits 1.  jansson (JSON traces, config.json, the JSON writers) allocates through
 * kv_xmalloc too once kv_mem_route_json() has run, so its failures take the same path
 * instead of coming back as a parse error with no reason (or, inside its lexer, being
 * retried for every remaining byte of the input). */
#ifndef KVSIM_MEM_H
#define KVSIM_MEM_H

#include <stddef.h>

void *kv_xmalloc(size_t n);
void *kv_xcalloc(size_t count, size_t size);
void *kv_xrealloc(void *p, size_t n);
char *kv_xstrdup(const char *s);

/* Grow *arr (element size elem) so it holds at least need elements; *cap is updated.
 * Doubling, so appends are amortised O(1).  An element count whose byte size overflows
 * size_t is out of memory too. */
void kv_grow(void **arr, size_t *cap, size_t need, size_t elem);

/* Called with the size of the request that failed; must not return (if it does, kvsim
 * aborts).  It runs with the heap exhausted: it must not allocate. */
typedef void (*kv_oom_handler)(size_t bytes);
/* Install h (NULL: the default, print and abort); returns the previous handler. */
kv_oom_handler kv_mem_set_oom_handler(kv_oom_handler h);
/* Report an allocation failure of `bytes` the caller detected itself (a realloc it did not
 * make through kv_xrealloc); does not return. */
void kv_mem_oom(size_t bytes);

/* Make jansson allocate through kv_xmalloc.  Idempotent and cheap; every module that
 * parses JSON calls it before parsing. */
void kv_mem_route_json(void);

#endif
