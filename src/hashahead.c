/* hashahead: a second thread that hashes a trace's prompt chains before the replay asks
 * for them (issue 9, lever 9; include/kvsim/blockhash.h, kv_hasher_ahead).
 *
 * The producer walks the trace in arrival order and computes each row's shared-kind
 * chain, digests [0, first private block) (DESIGN §9: private blocks are never hashed),
 * with a twin of the replay's hasher (same identity, its own buffers and the chain memo).
 * It keeps each chain in that row's entry until the replay has taken it; the replay's
 * hasher serves a chain from the entry (copied) or, when the producer has not reached the
 * row, computes it itself as before.  Digests are the same either way, so the replay's
 * outputs do not depend on how far ahead the producer is: only its wall time does.
 *
 * Entry states (one atomic word per row; the producer writes EMPTY → WRITING → READY, the
 * replay EMPTY → TAKEN and READY → DONE, nobody else):
 *   EMPTY    nothing yet
 *   WRITING  the producer is computing it (the replay waits: the work is under way)
 *   READY    digests [0, n) in d (release store; the replay's acquire load sees them whole)
 *   TAKEN    the replay got there first and computed it itself: the producer skips it
 *   DONE     the replay has copied all n digests and freed them
 * A READY row's memory is freed when the replay has copied all of it, so what waits is
 * bounded: the producer sleeps while max_bytes of digests are waiting (rows the replay
 * never asks for, such as rejected requests, stay until the end and count against it).
 *
 * Invariants: every READY entry holds the true digests [0, n) of its row's chain;
 * waiting bytes ≤ max_bytes.  Complexity: the producer O(blocks) in all, a serve O(to − from).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "blockhash_internal.h"
#include "kvsim/mem.h"

enum { ROW_EMPTY = 0, ROW_WRITING, ROW_READY, ROW_TAKEN, ROW_DONE };

typedef struct ahead_row {
    _Atomic uint32_t state;
    uint32_t n;                   /* digests in d (READY) */
    kv_digest *d;                 /* n digests, the producer's allocation (READY) */
    const kv_request_spec *spec;  /* the trace's row, NULL if none */
} ahead_row;

struct kv_ahead {
    kv_hasher *twin; /* the producer's hasher */
    const kv_trace *trace;
    uint32_t shared_prefix;
    ahead_row *rows; /* by row (kv_request_spec.row), n_rows */
    size_t n_rows;
    size_t max_bytes;
    _Atomic size_t waiting; /* bytes of READY digests */
    _Atomic uint64_t hashed; /* blocks the producer hashed */
    _Atomic bool stop;
    _Atomic bool asleep; /* the producer waits for room */
    pthread_mutex_t mu;
    pthread_cond_t room;
    pthread_t thread;
};

/* Row e's content, as the replay's requests get theirs (kv_content_from_spec). */
static void row_content(const kv_ahead *a, const ahead_row *e, kv_content *c)
{
    kv_content_from_spec(c, e->spec, a->trace->trace_block_size, a->shared_prefix);
}

static bool same_content(const kv_content *a, const kv_content *b)
{
    return a->kind == b->kind && a->prompt_len == b->prompt_len && a->row == b->row &&
           a->shared_prefix == b->shared_prefix && a->tokens == b->tokens &&
           a->hash_ids == b->hash_ids && a->n_hash_ids == b->n_hash_ids &&
           a->trace_block_size == b->trace_block_size && a->adapter == b->adapter &&
           a->salt == b->salt;
}

/* Sleep until `need` more bytes fit or the replay ends; whether they fit. */
static bool wait_for_room(kv_ahead *a, size_t need)
{
    if (atomic_load(&a->waiting) + need <= a->max_bytes)
        return true;
    pthread_mutex_lock(&a->mu);
    atomic_store(&a->asleep, true);
    while (!atomic_load(&a->stop) && atomic_load(&a->waiting) + need > a->max_bytes)
        pthread_cond_wait(&a->room, &a->mu);
    atomic_store(&a->asleep, false);
    pthread_mutex_unlock(&a->mu);
    return !atomic_load(&a->stop);
}

static void *produce(void *arg)
{
    kv_ahead *a = arg;
    uint32_t b = kv_hasher_block_size(a->twin);
    for (size_t i = 0; i < a->trace->n && !atomic_load_explicit(&a->stop, memory_order_relaxed);
         i++) {
        uint32_t row = a->trace->reqs[i].row;
        if (row >= a->n_rows)
            continue;
        ahead_row *e = &a->rows[row];
        kv_content c;
        row_content(a, e, &c);
        uint32_t n = kv_content_first_private(&c, b);
        size_t need = (size_t)n * sizeof(kv_digest);
        if (n == 0 || need > a->max_bytes || !wait_for_room(a, need))
            continue;
        uint32_t want = ROW_EMPTY;
        if (!atomic_compare_exchange_strong(&e->state, &want, ROW_WRITING))
            continue; /* the replay computed it already */
        e->d = malloc(need);
        if (!e->d) {
            atomic_store(&e->state, ROW_EMPTY); /* the replay computes it */
            continue;
        }
        uint64_t before = kv_hasher_blocks_hashed(a->twin);
        kv__chain_compute(a->twin, &c, e->d, 0, n);
        e->n = n;
        atomic_fetch_add(&a->waiting, need);
        atomic_fetch_add_explicit(&a->hashed, kv_hasher_blocks_hashed(a->twin) - before,
                                  memory_order_relaxed);
        atomic_store_explicit(&e->state, ROW_READY, memory_order_release);
    }
    return NULL;
}

kv_ahead *kv__ahead_start(kv_hasher *twin, const kv_trace *trace, uint32_t shared_prefix,
                          size_t max_bytes)
{
    kv_ahead *a = kv_xcalloc(1, sizeof *a);
    a->twin = twin;
    a->trace = trace;
    a->shared_prefix = shared_prefix;
    a->n_rows = trace->n;
    a->max_bytes = max_bytes;
    a->rows = kv_xcalloc(trace->n ? trace->n : 1, sizeof *a->rows);
    for (size_t i = 0; i < trace->n; i++)
        if (trace->reqs[i].row < a->n_rows)
            a->rows[trace->reqs[i].row].spec = &trace->reqs[i];
    if (pthread_mutex_init(&a->mu, NULL) != 0)
        goto fail_mu;
    if (pthread_cond_init(&a->room, NULL) != 0)
        goto fail_cond;
    if (pthread_create(&a->thread, NULL, produce, a) != 0)
        goto fail_thread;
    return a;
fail_thread:
    pthread_cond_destroy(&a->room);
fail_cond:
    pthread_mutex_destroy(&a->mu);
fail_mu:
    free(a->rows);
    free(a);
    return NULL;
}

void kv__ahead_stop(kv_ahead *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    atomic_store(&a->stop, true);
    pthread_cond_broadcast(&a->room);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    for (size_t i = 0; i < a->n_rows; i++)
        if (atomic_load(&a->rows[i].state) == ROW_READY)
            free(a->rows[i].d);
    pthread_cond_destroy(&a->room);
    pthread_mutex_destroy(&a->mu);
    free(a->rows);
    kv_hasher_destroy(a->twin);
    free(a);
}

uint64_t kv__ahead_hashed(const kv_ahead *a)
{
    return atomic_load_explicit(&a->hashed, memory_order_relaxed);
}

/* The replay has copied all of e: free it and wake the producer if it waits for room. */
static void release(kv_ahead *a, ahead_row *e)
{
    size_t bytes = (size_t)e->n * sizeof(kv_digest);
    free(e->d);
    e->d = NULL;
    atomic_store_explicit(&e->state, ROW_DONE, memory_order_relaxed);
    atomic_fetch_sub(&a->waiting, bytes);
    if (atomic_load(&a->asleep)) {
        pthread_mutex_lock(&a->mu);
        pthread_cond_signal(&a->room);
        pthread_mutex_unlock(&a->mu);
    }
}

bool kv__ahead_serve(kv_ahead *a, kv_hasher *h, const kv_content *c, kv_digest *digests,
                     uint32_t from, uint32_t to)
{
    if (c->row >= a->n_rows || !a->rows[c->row].spec)
        return false; /* not a row of this trace */
    ahead_row *e = &a->rows[c->row];
    kv_content mine;
    row_content(a, e, &mine);
    if (!same_content(c, &mine))
        return false;
    uint32_t st = atomic_load_explicit(&e->state, memory_order_acquire);
    if (st == ROW_EMPTY &&
        atomic_compare_exchange_strong_explicit(&e->state, &st, ROW_TAKEN, memory_order_acquire,
                                                memory_order_acquire))
        return false; /* ours now: computed here, skipped there */
    while (st == ROW_WRITING) { /* under way over there: no sooner done here */
        sched_yield();
        st = atomic_load_explicit(&e->state, memory_order_acquire);
    }
    if (st != ROW_READY)
        return false;
    kv__chain_copy_then_compute(h, c, digests, from, to, e->d, e->n);
    if (to >= e->n)
        release(a, e);
    return true;
}
