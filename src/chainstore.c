/* chainstore: chain digests kept across the replays of one trace (include/kvsim/blockhash.h),
 * so a row's chain is hashed once, not once per replay.  Two kinds:
 *
 *   private (kvsim plan): rows in this process's heap, grown as replays ask for more;
 *   bound to the first identity (seed digest, shared prefix) it serves.
 *
 *   shared (kvsim sweep): one anonymous MAP_SHARED mapping made before the sweep forks its
 *   configurations, so what one configuration hashed the others copy.  KV_CHAIN_SLOTS
 *   identities (block sizes, models, dtypes, hash functions of one sweep), each bound by
 *   the first hasher that asks; per slot and row one 64-bit atomic word `desc`: the
 *   digests [0, n) of that row's chain are at arena[off, off + n).  A writer claims a row
 *   by setting its BUSY bit (compare-exchange), copies the chain it has into fresh arena
 *   space (a bump allocator, one atomic counter) and publishes the new (off, n) with a
 *   release store, which also clears BUSY; a reader's acquire load of desc gives it a
 *   region that was whole before it was published.  Regions are never reused or freed, so
 *   a region a reader holds stays valid while a longer one replaces it.  Nobody waits: a
 *   row or a slot another process is writing is computed locally (the digests are the
 *   same either way — the store only saves work), so a configuration killed mid-write
 *   costs its siblings nothing but that row.  Atomics on lock-free 64- and 32-bit words
 *   are address-free (C11 7.17.5), which is what makes them valid across processes.
 *
 * Invariants: every published region holds the chain's true digests [0, n); arena usage
 * ≤ max_bytes; a row's n only grows.  Complexity: O(to − from) per call.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "blockhash_internal.h"
#include "kvsim/mem.h"

/* desc: bit 63 BUSY, bits 24..62 the region's first digest, bits 0..23 its length. */
#define DESC_BUSY (UINT64_C(1) << 63)
#define DESC_N_BITS 24
#define DESC_N_MAX ((UINT64_C(1) << DESC_N_BITS) - 1)
#define DESC_OFF_MAX ((UINT64_C(1) << (63 - DESC_N_BITS)) - 1)

enum { SLOT_FREE = 0, SLOT_BINDING = 1, SLOT_BOUND = 2 };

typedef struct shm_slot {
    _Atomic uint32_t state; /* SLOT_* */
    uint32_t shared_prefix; /* the identity, once bound */
    kv_digest seed;
} shm_slot;

typedef struct shm_head {
    shm_slot slot[KV_CHAIN_SLOTS];
    _Atomic uint64_t used; /* digests handed out of the arena */
} shm_head;

typedef struct stored_chain {
    kv_digest *d; /* n digests of the row's chain, [0, n) */
    uint32_t n;
} stored_chain;

struct kv_chain_store {
    /* private */
    kv_digest seed; /* the identity it serves, once bound */
    uint32_t shared_prefix;
    bool bound;
    stored_chain *rows; /* by row, n_rows */
    size_t n_rows;
    size_t bytes, max_bytes;
    /* shared: NULL head for a private store */
    shm_head *head;
    _Atomic uint64_t *desc; /* KV_CHAIN_SLOTS × shm_rows */
    kv_digest *arena;       /* arena_n digests */
    size_t shm_rows, map_bytes;
    uint64_t arena_n;
};

kv_chain_store *kv_chain_store_create(size_t max_bytes)
{
    kv_chain_store *s = kv_xcalloc(1, sizeof *s);
    s->max_bytes = max_bytes;
    return s;
}

kv_chain_store *kv_chain_store_create_shared(size_t max_bytes, size_t n_rows)
{
    _Atomic uint64_t probe64;
    _Atomic uint32_t probe32;
    if (!atomic_is_lock_free(&probe64) || !atomic_is_lock_free(&probe32) || n_rows == 0 ||
        n_rows > SIZE_MAX / 8 / KV_CHAIN_SLOTS / 2)
        return NULL;
    size_t head = (sizeof(shm_head) + 63) & ~(size_t)63;
    size_t descs = KV_CHAIN_SLOTS * n_rows * sizeof(uint64_t);
    size_t arena_n = max_bytes / sizeof(kv_digest);
    if (arena_n > DESC_OFF_MAX)
        arena_n = DESC_OFF_MAX;
    if (arena_n > (SIZE_MAX - head - descs) / sizeof(kv_digest) / 2)
        return NULL;
    size_t bytes = head + descs + arena_n * sizeof(kv_digest);
    /* Address space only: pages are touched (and count) as rows are written. */
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    kv_chain_store *s = kv_xcalloc(1, sizeof *s);
    s->head = map; /* zero-filled: every slot free, every row empty */
    s->desc = (_Atomic uint64_t *)((char *)map + head);
    s->arena = (kv_digest *)((char *)map + head + descs);
    s->shm_rows = n_rows;
    s->map_bytes = bytes;
    s->arena_n = arena_n;
    s->max_bytes = max_bytes;
    return s;
}

void kv_chain_store_destroy(kv_chain_store *s)
{
    if (!s)
        return;
    if (s->head)
        munmap(s->head, s->map_bytes);
    for (size_t i = 0; i < s->n_rows; i++)
        free(s->rows[i].d);
    free(s->rows);
    free(s);
}

uint64_t kv_chain_store_bytes(const kv_chain_store *s)
{
    if (s->head) {
        uint64_t used = atomic_load(&s->head->used);
        return (used < s->arena_n ? used : s->arena_n) * sizeof(kv_digest);
    }
    return s->bytes;
}

bool kv__chain_copy_then_compute(kv_hasher *h, const kv_content *c, kv_digest *digests, uint32_t from,
                              uint32_t to, const kv_digest *stored, uint64_t n)
{
    uint32_t have = n < to ? (uint32_t)n : to;
    if (have > from)
        memcpy(&digests[from], &stored[from], (size_t)(have - from) * sizeof *digests);
    uint32_t start = have > from ? have : from;
    if (start >= to)
        return false;
    kv__chain_compute(h, c, digests, start, to);
    return true;
}

/* ---- private ------------------------------------------------------------------------- */

/* Copy what the store has of row c->row, compute the rest, keep it. */
static bool serve_private(kv_chain_store *s, kv_hasher *h, const kv_content *c, uint32_t sp,
                          kv_digest *digests, uint32_t from, uint32_t to)
{
    const kv_digest *seed = kv_hasher_seed(h);
    if (!s->bound) {
        s->seed = *seed;
        s->shared_prefix = sp;
        s->bound = true;
    }
    if (memcmp(s->seed.b, seed->b, KV_DIGEST_LEN) != 0 || (sp && sp != s->shared_prefix))
        return false; /* another identity: not this store's */
    if (c->row >= s->n_rows) {
        size_t n = s->n_rows ? s->n_rows : 1024;
        while (n <= c->row)
            n *= 2;
        s->rows = kv_xrealloc(s->rows, n * sizeof *s->rows);
        memset(s->rows + s->n_rows, 0, (n - s->n_rows) * sizeof *s->rows);
        s->n_rows = n;
    }
    stored_chain *r = &s->rows[c->row];
    kv__chain_copy_then_compute(h, c, digests, from, to, r->d, r->n);
    if (to > r->n && from <= r->n && s->bytes + (size_t)(to - r->n) * sizeof *digests <= s->max_bytes) {
        r->d = kv_xrealloc(r->d, (size_t)to * sizeof *r->d);
        memcpy(&r->d[r->n], &digests[r->n], (size_t)(to - r->n) * sizeof *digests);
        s->bytes += (size_t)(to - r->n) * sizeof *digests;
        r->n = to;
    }
    return true;
}

/* ---- shared -------------------------------------------------------------------------- */

/* The slot of this identity, binding a free one; NULL when all are bound to others (or
 * being bound right now). */
static shm_slot *find_slot(shm_head *head, const kv_digest *seed, uint32_t sp, size_t *index)
{
    for (size_t i = 0; i < KV_CHAIN_SLOTS; i++) {
        shm_slot *t = &head->slot[i];
        uint32_t st = atomic_load_explicit(&t->state, memory_order_acquire);
        if (st == SLOT_FREE) {
            uint32_t want = SLOT_FREE;
            if (atomic_compare_exchange_strong(&t->state, &want, SLOT_BINDING)) {
                t->seed = *seed;
                t->shared_prefix = sp;
                atomic_store_explicit(&t->state, SLOT_BOUND, memory_order_release);
                *index = i;
                return t;
            }
            st = want;
        }
        if (st == SLOT_BOUND && memcmp(t->seed.b, seed->b, KV_DIGEST_LEN) == 0 &&
            (!sp || sp == t->shared_prefix)) {
            *index = i;
            return t;
        }
    }
    return NULL;
}

/* Publish digests [0, to) as row desc's chain, unless someone else is writing it or a
 * longer one is there already, or the arena is full. */
static void publish(kv_chain_store *s, _Atomic uint64_t *desc, const kv_digest *digests,
                    uint32_t to)
{
    uint64_t old = atomic_load_explicit(desc, memory_order_relaxed);
    if ((old & DESC_BUSY) || (old & DESC_N_MAX) >= to || to > DESC_N_MAX ||
        !atomic_compare_exchange_strong(desc, &old, old | DESC_BUSY))
        return;
    uint64_t off = atomic_fetch_add(&s->head->used, to);
    if (off > s->arena_n || s->arena_n - off < to) {
        atomic_store_explicit(desc, old, memory_order_release); /* full: as it was */
        return;
    }
    memcpy(&s->arena[off], digests, (size_t)to * sizeof *digests);
    atomic_store_explicit(desc, off << DESC_N_BITS | to, memory_order_release);
}

static bool serve_shared(kv_chain_store *s, kv_hasher *h, const kv_content *c, uint32_t sp,
                         kv_digest *digests, uint32_t from, uint32_t to)
{
    size_t k;
    if (c->row >= s->shm_rows || !find_slot(s->head, kv_hasher_seed(h), sp, &k))
        return false;
    _Atomic uint64_t *desc = &s->desc[k * s->shm_rows + c->row];
    uint64_t d = atomic_load_explicit(desc, memory_order_acquire);
    uint64_t n = d & DESC_N_MAX, off = (d & ~DESC_BUSY) >> DESC_N_BITS;
    if (kv__chain_copy_then_compute(h, c, digests, from, to, &s->arena[off], n))
        publish(s, desc, digests, to);
    return true;
}

bool kv__chain_store_serve(kv_chain_store *s, kv_hasher *h, const kv_content *c,
                           kv_digest *digests, uint32_t from, uint32_t to)
{
    uint32_t sp = c->kind == KV_CONTENT_NONE ? c->shared_prefix : 0;
    return s->head ? serve_shared(s, h, c, sp, digests, from, to)
                   : serve_private(s, h, c, sp, digests, from, to);
}
