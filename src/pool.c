/* pool: physical KV blocks, refcounts, the free queue and the hash index.
 *
 * Semantics are vLLM v1's BlockPool, rule for rule (DESIGN §4):
 *
 *   R1  blocks 0..N−1 start at refcount 0, unhashed, queued in id order;
 *   R2  block 0 is the null block: popped at init, never queued, hashed or counted;
 *   R3  num_free = queue length, cached (hashed, refcount 0) blocks included;
 *   R4  allocation pops the head; a popped block that still has a hash is evicted then;
 *   R5  the index maps a digest to its holders in insertion order, lookup answers the
 *       first; a second block with a known digest is added alongside (no dedup);
 *   R6  touch unlinks a refcount-0 block from the queue, then refcount += 1;
 *   R7  free walks the given order (a table tail first); blocks reaching 0 are queued:
 *       split order prepends unhashed and appends hashed blocks, each group keeping the
 *       given order; append order appends all.  With caching off no block has a hash,
 *       so split prepends every freed block and append appends every one (§6.6).
 *
 * Layout.  One array of N + 1 `block` structs, never moved: slot N is the sentinel of the
 * circular, doubly linked free queue (intrusive: prev/next are indices, unlink is O(1)).
 * The index is a uthash table whose entries are the blocks themselves: the first holder
 * of a digest is in the table; later holders hang off it through dup_prev/dup_next, the
 * head remembering the last holder, so "first inserted still present" survives any
 * removal in O(1).  uthash hashes the digest's first bytes (they are SHA-256 output).
 *
 * Invariants (kv_pool_check walks them, O(N)):
 *   refcount(b) == 0  ⇔  b is on the free queue            (b ≠ null block)
 *   queue length == num_free;  num_cached_free == #{queued b : hashed(b)}
 *   b in index under h  ⇔  hashed(b) ∧ digest(b) == h;  holders of h in insertion order
 *   num_used == (N − 1) − num_free == #{b : refcount(b) > 0}
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

static kv_block_id sentinel(const kv_pool *p)
{
    return (kv_block_id)p->n;
}

static void link_after(kv_pool *p, kv_block_id at, kv_block_id b)
{
    block *B = p->blocks;
    assert(B[b].prev == KV_NO_BLOCK && B[b].next == KV_NO_BLOCK && "link: already queued");
    kv_block_id nx = B[at].next;
    B[b].prev = at;
    B[b].next = nx;
    B[at].next = b;
    B[nx].prev = b;
    p->num_free++;
    if (B[b].hashed)
        p->num_cached_free++;
}

static void unlink_block(kv_pool *p, kv_block_id b)
{
    block *B = p->blocks;
    assert(B[b].ref == 0 && b != KV_NULL_BLOCK);
    assert(B[b].prev != KV_NO_BLOCK && B[B[b].prev].next == b && "unlink: not queued");
    B[B[b].prev].next = B[b].next;
    B[B[b].next].prev = B[b].prev;
    B[b].prev = B[b].next = KV_NO_BLOCK;
    p->num_free--;
    if (B[b].hashed)
        p->num_cached_free--;
}

/* ---- hash index ------------------------------------------------------------------- */

static void index_insert(kv_pool *p, kv_block_id b, const kv_digest *d)
{
    block *B = p->blocks;
    block *first = NULL;
    B[b].digest = *d;
    B[b].hashed = true;
    B[b].dup_prev = B[b].dup_next = KV_NO_BLOCK;
    HASH_FIND(hh, p->index, d->b, KV_DIGEST_LEN, first);
    if (!first) {
        B[b].dup_last = b;
        HASH_ADD(hh, p->index, digest, KV_DIGEST_LEN, &B[b]);
        return;
    }
    kv_block_id last = first->dup_last;
    B[last].dup_next = b;
    B[b].dup_prev = last;
    first->dup_last = b;
}

static void index_remove(kv_pool *p, kv_block_id b)
{
    block *B = p->blocks;
    assert(B[b].hashed);
    kv_block_id pv = B[b].dup_prev, nx = B[b].dup_next;
    if (pv == KV_NO_BLOCK) {
        /* b is the first holder: the next one (if any) takes its place in the table. */
        kv_block_id last = B[b].dup_last;
        HASH_DELETE(hh, p->index, &B[b]);
        if (nx != KV_NO_BLOCK) {
            B[nx].dup_prev = KV_NO_BLOCK;
            B[nx].dup_last = last;
            HASH_ADD(hh, p->index, digest, KV_DIGEST_LEN, &B[nx]);
        }
    } else {
        B[pv].dup_next = nx;
        if (nx != KV_NO_BLOCK) {
            B[nx].dup_prev = pv;
        } else {
            block *first = NULL;
            HASH_FIND(hh, p->index, B[b].digest.b, KV_DIGEST_LEN, first);
            assert(first);
            first->dup_last = pv;
        }
    }
    B[b].hashed = false;
    B[b].dup_prev = B[b].dup_next = KV_NO_BLOCK;
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
    p->blocks = kv_xcalloc((size_t)num_blocks + 1, sizeof *p->blocks);
    p->index_log2 = 5;
    while (p->index_log2 < 22 && (1ull << p->index_log2) < 2ull * num_blocks)
        p->index_log2++;
    block *B = p->blocks;
    kv_block_id s = sentinel(p);
    B[s].prev = B[s].next = s;
    for (uint32_t i = 0; i < num_blocks; i++) {
        B[i].dup_prev = B[i].dup_next = B[i].dup_last = KV_NO_BLOCK;
        B[i].prev = B[i].next = KV_NO_BLOCK;
    }
    /* R1 then R2: queue [0..N−1], then the null block is popped from the head for good. */
    for (uint32_t i = 1; i < num_blocks; i++)
        link_after(p, B[s].prev, (kv_block_id)i);
    *out = p;
    return 0;
}

void kv_pool_destroy(kv_pool *p)
{
    if (!p)
        return;
    assert(p->num_free == p->n - 1 && "kv_pool_destroy: blocks still referenced");
    HASH_CLEAR(hh, p->index);
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
    return p->blocks[b].hashed;
}

kv_block_id kv_pool_lookup(const kv_pool *p, const kv_digest *d)
{
    block *first = NULL;
    HASH_FIND(hh, p->index, d->b, KV_DIGEST_LEN, first);
    return first ? (kv_block_id)(first - p->blocks) : KV_NO_BLOCK;
}

/* ---- verbs ------------------------------------------------------------------------ */

void kv_pool_touch(kv_pool *p, kv_block_id b)
{
    assert(b > KV_NULL_BLOCK && (uint32_t)b < p->n);
    if (p->blocks[b].ref == 0)
        unlink_block(p, b);
    p->blocks[b].ref++;
}

kv_block_id kv_pool_pop(kv_pool *p)
{
    assert(p->num_free > 0 && "kv_pool_pop on an empty free queue");
    kv_block_id b = p->blocks[sentinel(p)].next;
    /* The next pop will take b's successor: start loading it (and its index links) now,
     * so consecutive pops overlap their cache misses. */
    const block *nx = &p->blocks[p->blocks[b].next];
    __builtin_prefetch(nx);
    __builtin_prefetch(&nx->hh);
    unlink_block(p, b);
    if (p->blocks[b].hashed) {
        index_remove(p, b);
        p->evictions++;
    }
    p->blocks[b].ref = 1;
    return b;
}

void kv_pool_cache(kv_pool *p, kv_block_id b, const kv_digest *d)
{
    assert(b > KV_NULL_BLOCK && (uint32_t)b < p->n);
    assert(p->blocks[b].ref > 0 && !p->blocks[b].hashed);
    index_insert(p, b, d);
}

void kv_pool_free(kv_pool *p, const kv_block_id *blocks, size_t n)
{
    block *B = p->blocks;
    kv_block_id s = sentinel(p);
    /* Prepended blocks keep the given order: the first goes to the head, each next one
     * right after the previous (no buffer needed). */
    kv_block_id cursor = s;
    for (size_t i = 0; i < n; i++) {
        kv_block_id b = blocks[i];
        assert(b > KV_NULL_BLOCK && (uint32_t)b < p->n && B[b].ref > 0);
        if (--B[b].ref > 0)
            continue;
        bool prepend = p->order == KV_FREE_SPLIT && !B[b].hashed;
        if (prepend) {
            link_after(p, cursor, b);
            cursor = b;
        } else {
            link_after(p, B[s].prev, b);
        }
    }
}

size_t kv_pool_queue(const kv_pool *p, kv_block_id *out, size_t cap)
{
    size_t n = 0;
    kv_block_id s = sentinel(p);
    for (kv_block_id b = p->blocks[s].next; b != s; b = p->blocks[b].next) {
        if (n < cap)
            out[n] = b;
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
    return p->blocks[b].hashed ? &p->blocks[b].digest : NULL;
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
    kv_block_id s = sentinel(p);
    uint32_t qlen = 0, qcached = 0;
    for (kv_block_id b = B[s].next, prev = s; b != s; prev = b, b = B[b].next) {
        CHECK(b > KV_NULL_BLOCK && (uint32_t)b < p->n, "queue holds bad id %d", b);
        CHECK(!queued[b], "block %d queued twice", b);
        CHECK(B[b].prev == prev, "block %d has a broken prev link", b);
        CHECK(B[b].ref == 0, "queued block %d has refcount %u", b, B[b].ref);
        CHECK(qlen < p->n, "free queue longer than the pool");
        queued[b] = 1;
        qlen++;
        qcached += B[b].hashed;
    }
    CHECK(qlen == p->num_free, "queue length %u != num_free %u", qlen, p->num_free);
    CHECK(qcached == p->num_cached_free, "cached free %u != counter %u", qcached,
          p->num_cached_free);
done:
    return rc;
}

/* The index walk: every head is a first holder, chains are consistent, and exactly the
 * hashed blocks are in it. */
static int check_index(const kv_pool *p, uint32_t hashed, kv_diag *diag)
{
    int rc = 0;
    const block *B = p->blocks;
    uint32_t in_chains = 0;
    for (const block *first = p->index; first; first = first->hh.next) {
        kv_block_id f = (kv_block_id)(first - B);
        CHECK(first->hashed && first->dup_prev == KV_NO_BLOCK, "index head %d is not a head", f);
        kv_block_id last = f;
        for (kv_block_id b = f; b != KV_NO_BLOCK; b = B[b].dup_next) {
            CHECK(B[b].hashed, "unhashed block %d in the index", b);
            CHECK(memcmp(B[b].digest.b, first->digest.b, KV_DIGEST_LEN) == 0,
                  "block %d filed under another digest", b);
            CHECK(B[b].dup_next == KV_NO_BLOCK || B[B[b].dup_next].dup_prev == b,
                  "holder chain of block %d broken", b);
            CHECK(in_chains < p->n, "holder chain loops");
            in_chains++;
            last = b;
        }
        CHECK(first->dup_last == last, "index head %d has a stale last holder", f);
    }
    CHECK(in_chains == hashed, "%u hashed blocks but %u in the index", hashed, in_chains);
done:
    return rc;
}

int kv_pool_check(const kv_pool *p, kv_diag *diag)
{
    int rc = 0;
    const block *B = p->blocks;
    uint8_t *queued = kv_xcalloc(p->n, 1);
    uint32_t hashed = 0;

    CHECK(B[KV_NULL_BLOCK].ref == 0 && !B[KV_NULL_BLOCK].hashed, "null block used or hashed");
    if ((rc = check_queue(p, queued, diag)) != 0)
        goto done;
    for (uint32_t i = 1; i < p->n; i++) {
        CHECK((B[i].ref == 0) == (queued[i] != 0), "block %u: refcount %u but %s", i, B[i].ref,
              queued[i] ? "queued" : "not queued");
        CHECK(p->caching || !B[i].hashed, "block %u hashed with caching off", i);
        hashed += B[i].hashed;
        if (B[i].hashed)
            CHECK(kv_pool_lookup(p, &B[i].digest) != KV_NO_BLOCK, "hashed block %u not found", i);
    }
    rc = check_index(p, hashed, diag);
done:
    free(queued);
    return rc;
}
