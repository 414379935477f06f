/* pool: physical KV blocks, refcounts, the free queue and the hash index.
 *
 * Semantics are vLLM v1's BlockPool, rule for rule (DESIGN §4):
 *
 *   R1  blocks 0..N−1 start at refcount 0, unhashed, queued in id order;
 *   R2  block 0 is the null block: popped at init, never queued, hashed or counted;
 *   R3  num_free = queue length, cached (hashed, refcount 0) blocks included;
 *   R4  allocation pops the head; a popped block that still has a hash is evicted then;
 *   R5  the index maps an identity to its holders in insertion order, lookup answers the
 *       first; a second block with a known identity is added alongside (no dedup);
 *   R6  touch unlinks a refcount-0 block from the queue, then refcount += 1;
 *   R7  free walks the given order (a table tail first); blocks reaching 0 are queued:
 *       split order prepends unhashed and appends hashed blocks, each group keeping the
 *       given order; append order appends all.  With caching off no block has a hash,
 *       so split prepends every freed block and append appends every one (§6.6).
 *
 * Identities.  A hashed block carries either a digest (ID_DIGEST, shareable by any
 * request) or a private identity (ID_PRIVATE, DESIGN §9: unique to one request by
 * construction, so only that request can look it up).  Both follow R4, R5 and R7 alike:
 * a private block is "hashed" for the free order, the cached-free count and evictions.
 * Digests are indexed by uthash.  A private identity needs neither a digest nor a table
 * operation: its owner (kvcache) records each holder as (block, tag) in insertion order,
 * the tag being the block's generation, which grows each time the block gets a private
 * identity, with the kind bits; a record is valid while the block's tag still equals it
 * (kv_pool_private_holds), and the first valid one answers a lookup (R5).  Eviction is
 * clearing the kind bits; nothing points into the owner, so nothing needs undoing when
 * it goes away (its blocks stay cached, unreachable, until evicted).  A stale record
 * could look valid again only after 2^30 private identities of one block within the
 * owner's lifetime, each an eviction cycle of the whole pool.
 *
 * Layout.  Two arrays of N structs, never moved, indexed by block id: `blocks`, the hot
 * half (refcount, queue position, identity tag: 12 bytes), and `ent`, the cold half
 * (digest, uthash handle, holder links), made when the first digest is cached (only
 * digest blocks read it).  The free queue is a ring of block ids (at least
 * 2N slots) between a head and a tail position: an append writes the tail, a prepend the
 * slot before the head, and taking a block off (a pop at the head, a touch anywhere)
 * empties its slot, which the head skips later; when the ring is full the queue is
 * compacted in order (O(ring), after at least ring − N links).  A pop of n blocks thus
 * reads ids in sequence instead of chasing n links through the hot array, and unlink
 * stays O(1).
 * The uthash table's entries are the cold halves themselves: the first holder of a
 * digest is in the table; later holders hang off it through dup_prev/dup_next, the head
 * remembering the last holder, so "first inserted still present" survives any removal
 * in O(1).  uthash hashes the digest's first bytes (SHA-256 output).
 *
 * Cheap index operations (issue 9).  The table is buckets only (no uthash application-
 * order list, whose upkeep wrote two random entries per eviction; see "hash index"
 * below).  The bucket array is sized for the pool at once (no rehash, chains < 1).  A
 * negative filter, one saturating byte counter per 2^k slots (k = index_log2 + 2, 8
 * slots a block) keyed by the digest's second word, counts the digests in the table: a
 * find whose counter is 0 is a miss without touching the bucket array, which is what
 * most finds are (a newly computed block, the end of a hit walk).  A counter at 255
 * sticks (never decremented), so the filter never says "absent" wrongly.  A pop of n
 * blocks prefetches, a few blocks ahead, the cold halves of the digest blocks it will
 * evict and, a few blocks later, their buckets and filter counters; callers prefetch the
 * buckets of digests they are about to cache or look up (kv_pool_prefetch).
 *
 * Invariants (kv_pool_check walks them, O(N)):
 *   refcount(b) == 0  ⇔  b is on the free queue            (b ≠ null block)
 *   b queued  ⇔  the ring's slot at b's position, in [head, tail), holds b
 *   queue length == num_free;  num_cached_free == #{queued b : hashed(b)}
 *   b in index under h  ⇔  digest(b) == h;  holders of h in insertion order
 *   filter[slot(h)] ≥ #{digests h in the table at that slot} (= unless saturated)
 *   num_refs == Σ refcounts;  num_used == (N − 1) − num_free == #{b : refcount(b) > 0}
 * State is a predicate, not a flag: "queued" is refcount == 0 (SQLite's PAGE_IS_PINNED).
 *
 * Out of scope: request tables (kvcache), hashing (blockhash), any policy choice beyond
 * the free order.
 */
#include "kvsim/pool.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/error.h"
#include "kvsim/mem.h"
#include "pool_internal.h"

int kv_free_order_parse(const char *s, kv_free_order *out)
{
    if (strcmp(s, "split") == 0)
        *out = KV_FREE_SPLIT;
    else if (strcmp(s, "append") == 0)
        *out = KV_FREE_APPEND;
    else
        return -KV_EINVAL;
    return 0;
}

const char *kv_free_order_name(kv_free_order o)
{
    return o == KV_FREE_APPEND ? "append" : "split";
}

/* ---- free queue ------------------------------------------------------------------- */

/* Whether the slot at position pos (in [q_head, q_tail)) holds a queued block: taking a
 * block off the queue empties its slot (block 0, the null block, is never queued). */
static bool queued_at(const kv_pool *p, uint32_t pos)
{
    return p->q[pos & p->q_mask] != KV_NULL_BLOCK;
}

/* Whether b is on the queue: its last position still holds it. */
static bool is_queued(const kv_pool *p, kv_block_id b)
{
    uint32_t pos = p->blocks[b].pos;
    return pos - p->q_head < p->q_tail - p->q_head && p->q[pos & p->q_mask] == b;
}

/* Squeeze the empty slots out of the ring, keeping the queue order. */
static __attribute__((noinline)) void compact(kv_pool *p)
{
    uint32_t w = p->q_head;
    for (uint32_t r = p->q_head; r != p->q_tail; r++) {
        kv_block_id b = p->q[r & p->q_mask];
        if (b == KV_NULL_BLOCK)
            continue;
        p->q[w & p->q_mask] = b;
        p->blocks[b].pos = w++;
    }
    p->q_tail = w;
    assert(w - p->q_head == p->num_free);
}

/* Queue b at the tail (front: at the head). */
static inline __attribute__((always_inline)) void link_block(kv_pool *p, kv_block_id b, bool front)
{
    assert(b != KV_NULL_BLOCK && p->blocks[b].ref == 0 && !is_queued(p, b));
    if (p->q_tail - p->q_head == p->q_mask + 1)
        compact(p);
    uint32_t pos = front ? --p->q_head : p->q_tail++;
    p->q[pos & p->q_mask] = b;
    p->blocks[b].pos = pos;
    p->num_free++;
    if (BLOCK_ID(&p->blocks[b]) != ID_NONE)
        p->num_cached_free++;
}

static void unlink_block(kv_pool *p, kv_block_id b)
{
    assert(b != KV_NULL_BLOCK && p->blocks[b].ref == 0 && is_queued(p, b));
    p->q[p->blocks[b].pos & p->q_mask] = KV_NULL_BLOCK;
    p->num_free--;
    if (BLOCK_ID(&p->blocks[b]) != ID_NONE)
        p->num_cached_free--;
}

/* The queue head, the empty slots before it dropped (the queue is not empty). */
static kv_block_id queue_head(kv_pool *p)
{
    while (!queued_at(p, p->q_head))
        p->q_head++;
    return p->q[p->q_head & p->q_mask];
}

/* ---- negative filter -------------------------------------------------------------- */

static uint32_t filter_slot(const kv_pool *p, const kv_digest *d)
{
    uint32_t w;
    memcpy(&w, d->b + 4, sizeof w); /* not the word uthash buckets by */
    return w & p->filter_mask;
}

static void filter_add(kv_pool *p, const kv_digest *d)
{
    uint8_t *c = &p->filter[filter_slot(p, d)];
    if (*c < UINT8_MAX)
        (*c)++;
}

static void filter_remove(kv_pool *p, const kv_digest *d)
{
    uint8_t *c = &p->filter[filter_slot(p, d)];
    assert(*c > 0 && "filter: removing a digest it does not count");
    if (*c < UINT8_MAX) /* a saturated counter no longer knows its count: it sticks */
        (*c)--;
}

/* The first holder of d, or NULL. */
static entry *index_find(const kv_pool *p, const kv_digest *d)
{
    entry *first = NULL;
    if (p->filter[filter_slot(p, d)] == 0)
        return NULL;
    HASH_FIND(hh, p->index, d->b, KV_DIGEST_LEN, first);
    return first;
}

/* ---- hash index ------------------------------------------------------------------- */

/* The table keeps uthash's buckets only.  HASH_ADD and HASH_DELETE also keep an
 * application-order list through every entry, and a delete writes both its neighbours
 * there (two more random cache lines per eviction); nothing here walks that order, so
 * the table's head is an anchor entry that is in no bucket, the list holds only it, and
 * entries enter and leave buckets by uthash's bucket macros (HASH_FIND, HASH_CLEAR and
 * bucket expansion work on buckets alone). */
static UT_hash_table *table(kv_pool *p)
{
    if (!p->index) { /* the table is made on first use: buckets sized for the pool */
        HASH_ADD(hh, p->index, digest, KV_DIGEST_LEN, &p->anchor);
        UT_hash_table *t = p->index->hh.tbl;
        HASH_DEL_IN_BKT(t->buckets[p->anchor.hh.hashv & (t->num_buckets - 1)],
                        &p->anchor.hh);
        t->num_items--;
    }
    return p->index->hh.tbl;
}

static void table_add(kv_pool *p, entry *e)
{
    UT_hash_table *t = table(p);
    unsigned hv, bkt;
    HASH_VALUE(e->digest.b, KV_DIGEST_LEN, hv);
    e->hh.tbl = t;
    e->hh.prev = e->hh.next = NULL;
    e->hh.key = e->digest.b;
    e->hh.keylen = KV_DIGEST_LEN;
    e->hh.hashv = hv;
    HASH_TO_BKT(hv, t->num_buckets, bkt);
    int oomed = 0; /* uthash_malloc never fails (kv_xmalloc) */
    (void)oomed;
    HASH_ADD_TO_BKT(t->buckets[bkt], hh, &e->hh, oomed);
    t->num_items++;
}

static void table_delete(kv_pool *p, entry *e)
{
    UT_hash_table *t = table(p);
    unsigned bkt;
    HASH_TO_BKT(e->hh.hashv, t->num_buckets, bkt);
    HASH_DEL_IN_BKT(t->buckets[bkt], &e->hh);
    t->num_items--;
}

static kv_block_id id_of(const kv_pool *p, const entry *e)
{
    return (kv_block_id)(e - p->ent);
}

/* Append b to the holder chain headed by first (NULL: b starts a new chain). */
static void chain_append(kv_pool *p, entry *first, kv_block_id b)
{
    entry *E = p->ent;
    E[b].dup_prev = E[b].dup_next = KV_NO_BLOCK;
    if (!first) {
        E[b].dup_last = b;
        return;
    }
    kv_block_id last = first->dup_last;
    E[last].dup_next = b;
    E[b].dup_prev = last;
    first->dup_last = b;
}

static void index_insert(kv_pool *p, kv_block_id b, const kv_digest *d)
{
    entry *e = &p->ent[b];
    entry *first = index_find(p, d);
    e->digest = *d;
    p->blocks[b].tag = (p->blocks[b].tag & ~3u) | ID_DIGEST;
    chain_append(p, first, b);
    if (!first) {
        table_add(p, e);
        filter_add(p, d);
    }
}

/* The first holder of b's identity, b being a later holder. */
static entry *first_holder(kv_pool *p, kv_block_id b)
{
    return index_find(p, &p->ent[b].digest);
}

/* Evict b's digest. */
static inline __attribute__((always_inline)) void index_remove(kv_pool *p, kv_block_id b)
{
    entry *E = p->ent;
    assert(BLOCK_ID(&p->blocks[b]) == ID_DIGEST);
    p->blocks[b].tag &= ~3u;
    kv_block_id pv = E[b].dup_prev, nx = E[b].dup_next;
    if (pv == KV_NO_BLOCK) {
        /* b is the first holder: the next one (if any) takes its place. */
        kv_block_id last = E[b].dup_last;
        if (nx != KV_NO_BLOCK) {
            E[nx].dup_prev = KV_NO_BLOCK;
            E[nx].dup_last = last;
        }
        table_delete(p, &E[b]);
        if (nx != KV_NO_BLOCK)
            table_add(p, &E[nx]);
        else
            filter_remove(p, &E[b].digest);
    } else {
        E[pv].dup_next = nx;
        if (nx != KV_NO_BLOCK) {
            E[nx].dup_prev = pv;
        } else {
            entry *first = first_holder(p, b);
            assert(first);
            first->dup_last = pv;
        }
    }
    E[b].dup_prev = E[b].dup_next = KV_NO_BLOCK;
}

/* ---- lifecycle -------------------------------------------------------------------- */

int kv_pool_create(kv_pool **out, uint32_t num_blocks, bool caching, kv_free_order order)
{
    *out = NULL;
    if (num_blocks < 2 || num_blocks > (uint32_t)INT32_MAX - 1)
        return -KV_EINVAL;
    kv_pool *p = kv_xcalloc(1, sizeof *p);
    p->n = num_blocks;
    p->caching = caching;
    p->order = order;
    p->blocks = kv_xcalloc(num_blocks, sizeof *p->blocks);
    p->index_log2 = 5;
    while (p->index_log2 < 22 && (1ull << p->index_log2) < 2ull * num_blocks)
        p->index_log2++;
    p->filter_mask = (1u << (p->index_log2 + 2)) - 1;
    p->filter = kv_xcalloc((size_t)p->filter_mask + 1, 1);
    /* A ring of at least 2N slots (at most 2^31): a compaction, O(ring), comes after at
     * least ring − N links, so links stay O(1) amortised. */
    uint64_t ring = 16;
    while (ring < 2ull * num_blocks && ring < (1ull << 31))
        ring <<= 1;
    p->q = kv_xcalloc((size_t)ring, sizeof *p->q);
    p->q_mask = (uint32_t)(ring - 1);
    /* R1 then R2: queue [0..N−1], then the null block is popped from the head for good
     * (the same as queueing [1..N−1]). */
    for (uint32_t i = 1; i < num_blocks; i++)
        link_block(p, (kv_block_id)i, false);
    *out = p;
    return 0;
}

void kv_pool_destroy(kv_pool *p)
{
    if (!p)
        return;
    assert(p->num_free == p->n - 1 && "kv_pool_destroy: blocks still referenced");
    HASH_CLEAR(hh, p->index);
    free(p->q);
    free(p->filter);
    free(p->ent);
    free(p->blocks);
    free(p);
}

/* ---- queries ---------------------------------------------------------------------- */

uint32_t kv_pool_num_blocks(const kv_pool *p)
{
    return p->n;
}

uint32_t kv_pool_usable(const kv_pool *p)
{
    return p->n - 1;
}

uint32_t kv_pool_num_free(const kv_pool *p)
{
    return p->num_free;
}

uint32_t kv_pool_num_cached_free(const kv_pool *p)
{
    return p->num_cached_free;
}

uint32_t kv_pool_num_used(const kv_pool *p)
{
    return p->n - 1 - p->num_free;
}

uint64_t kv_pool_num_refs(const kv_pool *p)
{
    return p->num_refs;
}

uint64_t kv_pool_evictions(const kv_pool *p)
{
    return p->evictions;
}

double kv_pool_usage(const kv_pool *p)
{
    return 1.0 - (double)p->num_free / (double)(p->n - 1);
}

bool kv_pool_caching(const kv_pool *p)
{
    return p->caching;
}

uint32_t kv_pool_refcount(const kv_pool *p, kv_block_id b)
{
    assert(b >= 0 && (uint32_t)b < p->n);
    return p->blocks[b].ref;
}

bool kv_pool_is_hashed(const kv_pool *p, kv_block_id b)
{
    assert(b >= 0 && (uint32_t)b < p->n);
    return BLOCK_ID(&p->blocks[b]) != ID_NONE;
}

kv_block_id kv_pool_lookup(const kv_pool *p, const kv_digest *d)
{
    const entry *first = index_find(p, d);
    return first ? id_of(p, first) : KV_NO_BLOCK;
}

void kv_pool_prefetch(const kv_pool *p, const kv_digest *d)
{
    uint32_t slot = filter_slot(p, d);
    __builtin_prefetch(&p->filter[slot]);
    if (p->index) {
        const UT_hash_table *t = p->index->hh.tbl;
        uint32_t hv;
        memcpy(&hv, d->b, sizeof hv);
        __builtin_prefetch(&t->buckets[hv & (t->num_buckets - 1)], 1);
    }
}

/* ---- verbs ------------------------------------------------------------------------ */

void kv_pool_touch(kv_pool *p, kv_block_id b)
{
    assert(b > KV_NULL_BLOCK && (uint32_t)b < p->n);
    if (p->blocks[b].ref == 0)
        unlink_block(p, b);
    p->blocks[b].ref++;
    p->num_refs++;
}

/* Batches pipeline their cache misses: entry i + 2·DIST is requested, then the bucket
 * and filter counter of entry i + DIST (whose halves have had DIST steps to arrive),
 * while entry i is processed. */
enum { DIST = 8 };

static inline __attribute__((always_inline)) void prefetch_entry(const kv_pool *p, kv_block_id b)
{
    /* An entry (sizeof entry bytes, unaligned) spans two or three lines: its first
     * byte's, the next, and its last byte's (often the next again). */
    const char *e = (const char *)&p->ent[b];
    __builtin_prefetch(e, 1);
    __builtin_prefetch(e + 64, 1);
    __builtin_prefetch(e + sizeof(entry) - 1, 1);
}

/* What evicting block b (a pop) will write: its bucket and its filter counter (the first
 * holder's lookup, when b is the last of several), its holder neighbours' entries.  Inlined
 * by force: GCC finds an out-of-line copy free of side effects (a prefetch is none to it)
 * and deletes its calls, prefetches and all. */
static inline __attribute__((always_inline)) void prefetch_eviction(const kv_pool *p, kv_block_id b)
{
    if (BLOCK_ID(&p->blocks[b]) != ID_DIGEST)
        return;
    const entry *e = &p->ent[b];
    kv_block_id pv = e->dup_prev, nx = e->dup_next;
    if (nx != KV_NO_BLOCK) /* it takes b's place, or b's predecessor links to it */
        prefetch_entry(p, nx);
    if (pv != KV_NO_BLOCK) {
        prefetch_entry(p, pv);
        if (nx != KV_NO_BLOCK)
            return; /* b is in the middle: the first holder is not needed */
    }
    const UT_hash_table *t = p->index->hh.tbl;
    uint32_t hv;
    memcpy(&hv, e->digest.b, sizeof hv); /* a later holder has no valid hh.hashv */
    __builtin_prefetch(&t->buckets[hv & (t->num_buckets - 1)], 1);
    __builtin_prefetch(&p->filter[filter_slot(p, &e->digest)], 1);
}

/* A popped block's eviction (R4), if hashed: a private identity is only its kind bits
 * (nothing indexes it: its owner's record just stops matching), a digest leaves the
 * index. */
static inline bool evict(kv_pool *p, kv_block_id b)
{
    uint32_t id = BLOCK_ID(&p->blocks[b]);
    if (id == ID_NONE)
        return false;
    if (id == ID_PRIVATE)
        p->blocks[b].tag &= ~3u;
    else
        index_remove(p, b);
    p->evictions++;
    return true;
}

/* One pop (R4): the queue head, evicted if hashed, at refcount 1. */
static kv_block_id pop_one(kv_pool *p)
{
    kv_block_id b = queue_head(p);
    unlink_block(p, b);
    evict(p, b);
    p->blocks[b].ref = 1;
    p->num_refs++;
    return b;
}

kv_block_id kv_pool_pop(kv_pool *p)
{
    assert(p->num_free > 0 && "kv_pool_pop on an empty free queue");
    return pop_one(p);
}

/* Prefetch what popping b will touch beyond the hot half (only a digest block has any). */
static void prefetch_pop(const kv_pool *p, kv_block_id b)
{
    if (BLOCK_ID(&p->blocks[b]) == ID_DIGEST)
        prefetch_entry(p, b);
}

/* Take the first n queued blocks off the ring, in queue order, into out (n ≤ num_free):
 * each slot is emptied as it is read, so the head ends past the last one.  The hot halves
 * of blocks a little ahead are prefetched, and the cold halves of the first digest blocks
 * (eviction's first misses).  The caller counts the hashed ones off num_cached_free (it
 * reads their hot halves anyway, once they have arrived). */
static void unlink_first_n(kv_pool *p, uint32_t n, kv_block_id *out, bool digests)
{
    uint32_t pos = p->q_head, mask = p->q_mask;
    kv_block_id *q = p->q;
    for (uint32_t i = 0; i < n; i++, pos++) {
        while (q[pos & mask] == KV_NULL_BLOCK)
            pos++;
        kv_block_id b = q[pos & mask];
        q[pos & mask] = KV_NULL_BLOCK;
        out[i] = b;
        /* Ids ahead (past the tail an old id or 0: harmless to prefetch). */
        __builtin_prefetch(&p->blocks[q[(pos + 2 * DIST) & mask]], 1);
        if (digests && i < 2 * DIST)
            prefetch_pop(p, b);
    }
    p->q_head = pos;
    p->num_free -= n;
}

void kv_pool_pop_n(kv_pool *p, uint32_t n, kv_block_id *out)
{
    assert(n <= p->num_free && "kv_pool_pop_n beyond the free queue");
    if (n == 1) { /* nothing to overlap */
        out[0] = pop_one(p);
        return;
    }
    /* The next n pops take the first n queued blocks in queue order (R4): unlink them all
     * first, then evict them in that order with their misses in flight. */
    bool digests = p->index != NULL; /* no table yet: no digest block to prefetch for */
    unlink_first_n(p, n, out, digests);
    block *B = p->blocks;
    uint32_t cached = 0;
    for (uint32_t i = 0; digests && i < n && i < DIST; i++)
        prefetch_eviction(p, out[i]);
    for (uint32_t i = 0; i < n; i++) {
        if (digests && i + 2 * DIST < n)
            prefetch_pop(p, out[i + 2 * DIST]);
        if (digests && i + DIST < n)
            prefetch_eviction(p, out[i + DIST]);
        kv_block_id b = out[i];
        cached += evict(p, b);
        B[b].ref = 1;
    }
    p->num_cached_free -= cached;
    p->num_refs += n;
}

/* The cold halves exist from the first digest on: a pool that never caches one (a
 * content-less trace's, DESIGN §9 "Private blocks") never touches their N entries. */
static void make_cold(kv_pool *p)
{
    if (p->ent)
        return;
    p->ent = kv_xcalloc(p->n, sizeof *p->ent);
    for (uint32_t i = 0; i < p->n; i++)
        p->ent[i].dup_prev = p->ent[i].dup_next = p->ent[i].dup_last = KV_NO_BLOCK;
}

void kv_pool_cache(kv_pool *p, kv_block_id b, const kv_digest *d)
{
    assert(b > KV_NULL_BLOCK && (uint32_t)b < p->n);
    make_cold(p);
    assert(p->blocks[b].ref > 0 && BLOCK_ID(&p->blocks[b]) == ID_NONE);
    index_insert(p, b, d);
}

void kv_pool_cache_n(kv_pool *p, const kv_block_id *blocks, const kv_digest *digests, uint32_t n)
{
    make_cold(p);
    for (uint32_t i = 0; i < n && i < DIST; i++)
        kv_pool_prefetch(p, &digests[i]);
    for (uint32_t i = 0; i < n; i++) {
        if (i + DIST < n) {
            kv_pool_prefetch(p, &digests[i + DIST]);
            prefetch_entry(p, blocks[i + DIST]);
        }
        kv_pool_cache(p, blocks[i], &digests[i]);
    }
}

uint32_t kv_pool_cache_private(kv_pool *p, kv_block_id b)
{
    assert(b > KV_NULL_BLOCK && (uint32_t)b < p->n);
    block *bl = &p->blocks[b];
    assert(bl->ref > 0 && BLOCK_ID(bl) == ID_NONE);
    bl->tag = ((bl->tag & ~3u) + 4u) | ID_PRIVATE; /* the next generation */
    return bl->tag;
}

bool kv_pool_private_holds(const kv_pool *p, kv_block_id b, uint32_t tag)
{
    assert(b > KV_NULL_BLOCK && (uint32_t)b < p->n);
    return p->blocks[b].tag == tag;
}

/* R7 over blocks[at(0)], blocks[at(1)], …, blocks[at(n − 1)], at(i) being i, or n − 1 − i
 * when tail_first (a table given head first, freed tail first). */
static inline __attribute__((always_inline)) void
free_in_order(kv_pool *p, const kv_block_id *blocks, size_t n, bool tail_first)
{
    block *B = p->blocks;
#define AT(i) blocks[tail_first ? n - 1 - (i) : (i)]
    /* Two passes: appends as refcounts reach 0, in the given order; then, walking back,
     * the blocks split order prepends (no hash; with caching off, every block), so the
     * first of them ends at the head and the others follow in the given order.  Only
     * positions [lo, hi] can hold a block to prepend (a block reaching 0 does so at its
     * last position), so the walk back covers them alone. */
    bool split = p->order == KV_FREE_SPLIT;
    size_t lo = SIZE_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        kv_block_id b = AT(i);
        if (i + 8 < n) /* table entries are scattered over the pool */
            __builtin_prefetch(&B[AT(i + 8)], 1);
        assert(b > KV_NULL_BLOCK && (uint32_t)b < p->n && B[b].ref > 0);
        if (--B[b].ref > 0)
            continue;
        if (split && BLOCK_ID(&B[b]) == ID_NONE) {
            lo = lo < i ? lo : i;
            hi = i;
        } else {
            link_block(p, b, false);
        }
    }
    p->num_refs -= n;
    for (size_t i = hi + 1; lo != SIZE_MAX && i-- > lo;) {
        kv_block_id b = AT(i);
        if (B[b].ref == 0 && BLOCK_ID(&B[b]) == ID_NONE && !is_queued(p, b))
            link_block(p, b, true);
    }
#undef AT
}

void kv_pool_free(kv_pool *p, const kv_block_id *blocks, size_t n)
{
    free_in_order(p, blocks, n, false);
}

void kv_pool_free_tail_first(kv_pool *p, const kv_block_id *table, size_t n)
{
    free_in_order(p, table, n, true);
}

size_t kv_pool_queue(const kv_pool *p, kv_block_id *out, size_t cap)
{
    size_t n = 0;
    for (uint32_t pos = p->q_head; pos != p->q_tail; pos++) {
        if (!queued_at(p, pos))
            continue;
        if (n < cap)
            out[n] = p->q[pos & p->q_mask];
        n++;
    }
    return n;
}

uint64_t kv_pool_refcount_sum(const kv_pool *p)
{
    uint64_t sum = 0;
    for (uint32_t i = 1; i < p->n; i++)
        sum += p->blocks[i].ref;
    return sum;
}

const kv_digest *kv_pool_digest(const kv_pool *p, kv_block_id b)
{
    assert(b >= 0 && (uint32_t)b < p->n);
    return BLOCK_ID(&p->blocks[b]) == ID_DIGEST ? &p->ent[b].digest : NULL;
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            rc = kv_diag_set(diag, -KV_EINVARIANT, "pool: " __VA_ARGS__);                          \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* The free queue walk: links, refcounts and the counters it must agree with. */
static int check_queue(const kv_pool *p, uint8_t *queued, kv_diag *diag)
{
    int rc = 0;
    const block *B = p->blocks;
    uint32_t qlen = 0, qcached = 0;
    CHECK(p->q_tail - p->q_head <= p->q_mask + 1, "free queue ring overfull");
    for (uint32_t pos = p->q_head; pos != p->q_tail; pos++) {
        kv_block_id b = p->q[pos & p->q_mask];
        if (b == KV_NULL_BLOCK)
            continue;
        CHECK(b > KV_NULL_BLOCK && (uint32_t)b < p->n, "queue holds bad id %d", b);
        CHECK(!queued[b], "block %d queued twice", b);
        CHECK(B[b].pos == pos, "queued block %d has a stale position", b);
        CHECK(B[b].ref == 0, "queued block %d has refcount %u", b, B[b].ref);
        queued[b] = 1;
        qlen++;
        qcached += BLOCK_ID(&B[b]) != ID_NONE;
    }
    CHECK(qlen == p->num_free, "queue length %u != num_free %u", qlen, p->num_free);
    CHECK(qcached == p->num_cached_free, "cached free %u != counter %u", qcached,
          p->num_cached_free);
done:
    return rc;
}

/* One holder chain from its first holder f: every holder carries f's identity, links are
 * consistent and f remembers the last.  Returns the chain length through *len. */
static int check_chain(const kv_pool *p, kv_block_id f, uint32_t *len, kv_diag *diag)
{
    int rc = 0;
    const block *B = p->blocks;
    const entry *E = p->ent;
    kv_block_id last = f;
    *len = 0;
    for (kv_block_id b = f; b != KV_NO_BLOCK; b = E[b].dup_next) {
        CHECK(BLOCK_ID(&B[b]) == ID_DIGEST, "block %d in a holder chain is not a digest block",
              b);
        CHECK(memcmp(E[b].digest.b, E[f].digest.b, KV_DIGEST_LEN) == 0,
              "block %d filed under another digest", b);
        CHECK(E[b].dup_next == KV_NO_BLOCK || E[E[b].dup_next].dup_prev == b,
              "holder chain of block %d broken", b);
        CHECK(*len < p->n, "holder chain loops");
        (*len)++;
        last = b;
    }
    CHECK(E[f].dup_last == last, "first holder %d has a stale last holder", f);
done:
    return rc;
}

/* The index walk: every first holder is what the table answers for its digest, with a
 * consistent chain, and the filter counts it; the table holds exactly the first holders;
 * exactly the digest blocks are in chains. */
static int check_index(const kv_pool *p, uint32_t n_digest, kv_diag *diag)
{
    int rc = 0;
    const block *B = p->blocks;
    uint32_t in_chains = 0, heads = 0, len;
    for (uint32_t i = 1; i < p->n; i++) {
        kv_block_id f = (kv_block_id)i;
        if (BLOCK_ID(&B[f]) != ID_DIGEST || p->ent[i].dup_prev != KV_NO_BLOCK)
            continue;
        const entry *first = &p->ent[i];
        CHECK(p->filter[filter_slot(p, &first->digest)] > 0,
              "the negative filter misses the digest of block %d", f);
        CHECK(index_find(p, &first->digest) == first, "index entry %d is not a first holder",
              f);
        if ((rc = check_chain(p, f, &len, diag)) != 0)
            goto done;
        heads++;
        in_chains += len;
    }
    unsigned items = p->index ? p->index->hh.tbl->num_items : 0;
    CHECK(heads == items, "%u first holders but %u index entries", heads, items);
    CHECK(in_chains == n_digest, "%u hashed blocks but %u in the index", n_digest, in_chains);
done:
    return rc;
}

int kv_pool_check(const kv_pool *p, kv_diag *diag)
{
    int rc = 0;
    const block *B = p->blocks;
    uint8_t *queued = kv_xcalloc(p->n, 1);
    uint32_t n_digest = 0;

    CHECK(B[KV_NULL_BLOCK].ref == 0 && BLOCK_ID(&B[KV_NULL_BLOCK]) == ID_NONE,
          "null block used or hashed");
    if ((rc = check_queue(p, queued, diag)) != 0)
        goto done;
    for (uint32_t i = 1; i < p->n; i++) {
        CHECK((B[i].ref == 0) == (queued[i] != 0), "block %u: refcount %u but %s", i, B[i].ref,
              queued[i] ? "queued" : "not queued");
        CHECK(p->caching || BLOCK_ID(&B[i]) == ID_NONE, "block %u hashed with caching off", i);
        n_digest += BLOCK_ID(&B[i]) == ID_DIGEST;
        if (BLOCK_ID(&B[i]) == ID_DIGEST)
            CHECK(kv_pool_lookup(p, &p->ent[i].digest) != KV_NO_BLOCK,
                  "hashed block %u not found", i);
    }
    CHECK(kv_pool_refcount_sum(p) == p->num_refs, "Σ refcounts %llu != counter %llu",
          (unsigned long long)kv_pool_refcount_sum(p), (unsigned long long)p->num_refs);
    rc = check_index(p, n_digest, diag);
done:
    free(queued);
    return rc;
}
