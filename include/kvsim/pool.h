/* pool: physical KV blocks with vLLM v1 semantics, exactly (DESIGN §4, rules R1–R9).
 *
 * N blocks, block 0 the reserved null block (R2).  A block is either referenced
 * (refcount > 0, off the free queue) or free (refcount 0, on the free queue); free blocks
 * that still carry a hash are "cached": hittable until popped for reuse (lazy eviction,
 * R4).  The hash index maps a digest to every block holding it in insertion order and
 * answers with the first inserted (R5); a private identity (one request's own, DESIGN §9)
 * is recorded by its owner instead.  All operations are O(1) except free of a table
 * (O(table)) and kv_pool_check (O(N)).
 *
 * The pool does not know requests; kvcache owns block tables and calls these verbs.
 */
#ifndef KVSIM_POOL_H
#define KVSIM_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim/blockhash.h"
#include "kvsim/error.h"

typedef struct kv_pool kv_pool; /* opaque; see src/pool.c for invariants */
typedef int32_t kv_block_id;    /* index into the pool; 0 is the null block */

#define KV_NULL_BLOCK 0
#define KV_NO_BLOCK   (-1)

typedef enum kv_free_order {
    KV_FREE_SPLIT = 0, /* unhashed prepended, hashed appended (vLLM ≥ #42656, default) */
    KV_FREE_APPEND,    /* all appended, tail-first (older vLLM) */
} kv_free_order;

/* "split" / "append" → 0 or -KV_EINVAL. */
int kv_free_order_parse(const char *s, kv_free_order *out);
const char *kv_free_order_name(kv_free_order o);

/* num_blocks ≥ 2 (null block + one usable) or -KV_EINVAL; 0 on success.
 * With caching off no block is hashed: split prepends every freed block (LIFO reuse),
 * append appends every one (FIFO reuse, vLLM before PR #42656; DESIGN §6.6). */
int kv_pool_create(kv_pool **out, uint32_t num_blocks, bool caching, kv_free_order order);
void kv_pool_destroy(kv_pool *pool); /* NULL ok; asserts no block is referenced */

uint32_t kv_pool_num_blocks(const kv_pool *pool);      /* N */
uint32_t kv_pool_usable(const kv_pool *pool);          /* N − 1 */
uint32_t kv_pool_num_free(const kv_pool *pool);        /* free-queue length, cached included (R3) */
uint32_t kv_pool_num_cached_free(const kv_pool *pool); /* free blocks that still hold a hash */
uint32_t kv_pool_num_used(const kv_pool *pool);  /* refcount > 0 blocks = (N−1) − num_free */
uint64_t kv_pool_num_refs(const kv_pool *pool);  /* Σ refcounts, O(1): = Σ table lengths (R9) */
uint64_t kv_pool_evictions(const kv_pool *pool); /* cached blocks popped for reuse (R4) */
double kv_pool_usage(const kv_pool *pool);       /* 1 − num_free/(N−1) (R8) */
bool kv_pool_caching(const kv_pool *pool);

uint32_t kv_pool_refcount(const kv_pool *pool, kv_block_id b);
bool kv_pool_is_hashed(const kv_pool *pool, kv_block_id b);

/* R5: the first-inserted block holding d, or KV_NO_BLOCK.  No side effects. */
kv_block_id kv_pool_lookup(const kv_pool *pool, const kv_digest *d);

/* Start loading what a lookup or cache of d will touch (a hint; no effect on state). */
void kv_pool_prefetch(const kv_pool *pool, const kv_digest *d);

/* R6: take a reference on a hit; a block at refcount 0 leaves the free queue first. */
void kv_pool_touch(kv_pool *pool, kv_block_id b);

/* R4: pop the free-queue head, evicting its hash if it has one; refcount becomes 1.
 * Asserts num_free > 0: callers check capacity first (kvcache's need). */
kv_block_id kv_pool_pop(kv_pool *pool);
/* n pops into out[0..n), in order, with their cache misses overlapped.  n ≤ num_free. */
void kv_pool_pop_n(kv_pool *pool, uint32_t n, kv_block_id *out);

/* R5: give referenced, unhashed block b the hash d and append it to d's index entry
 * (alongside any existing holders: no deduplication). */
void kv_pool_cache(kv_pool *pool, kv_block_id b, const kv_digest *d);
/* kv_pool_cache of blocks[i] with digests[i], i = 0..n in order, misses overlapped. */
void kv_pool_cache_n(kv_pool *pool, const kv_block_id *blocks, const kv_digest *digests,
                     uint32_t n);

/* Private identities (DESIGN §9): an identity unique to one request by construction
 * needs no digest and no index.  Its owner records each holder as (b, tag) in insertion
 * order and answers its own lookups with the first record that still holds (R5).
 * kv_pool_cache_private gives referenced, unhashed block b a new private identity (b
 * counts as hashed for R4 and R7) and returns its tag; the record holds while b keeps
 * that identity, until b is evicted (R4). */
uint32_t kv_pool_cache_private(kv_pool *pool, kv_block_id b);
bool kv_pool_private_holds(const kv_pool *pool, kv_block_id b, uint32_t tag);

/* R7: drop one reference from each of blocks[0..n), given in the order to free
 * (a request's table tail first).  Blocks reaching 0 are queued per the free order. */
void kv_pool_free(kv_pool *pool, const kv_block_id *blocks, size_t n);
/* kv_pool_free of table[n − 1], …, table[0]: a request's table, given head first. */
void kv_pool_free_tail_first(kv_pool *pool, const kv_block_id *table, size_t n);

/* Free-queue contents head→tail into out (up to cap); returns the queue length.
 * For tests and debugging: O(num_free). */
size_t kv_pool_queue(const kv_pool *pool, kv_block_id *out, size_t cap);

/* The digest block b is indexed under, or NULL when it holds none (unhashed, private). */
const kv_digest *kv_pool_digest(const kv_pool *pool, kv_block_id b);

/* R9: full invariant walk (O(N)): refcount 0 ⇔ queued (null block excepted), queue length
 * = num_free, cached-free count, b indexed under h ⇔ b hashed with h, holders in order.
 * 0, or -KV_EINVARIANT with the first violation in diag (prints nothing). */
int kv_pool_check(const kv_pool *pool, kv_diag *diag);
/* Σ refcounts, for the cross-module invariant Σ refcounts = Σ table lengths. */
uint64_t kv_pool_refcount_sum(const kv_pool *pool);

#endif
