/* pool: physical KV blocks with vLLM v1 semantics, exactly (DESIGN §4, rules R1–R9).
 *
 * N blocks, block 0 the reserved null block (R2).  A block is either referenced
 * (refcount > 0, off the free queue) or free (refcount 0, on the free queue); free blocks
 * that still carry a hash are "cached": hittable until popped for reuse (lazy eviction,
 * R4).  The hash index maps a digest to every block holding it in insertion order and
 * answers with the first inserted (R5).  All operations are O(1) except free of a table
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
uint64_t kv_pool_evictions(const kv_pool *pool); /* cached blocks popped for reuse (R4) */
double kv_pool_usage(const kv_pool *pool);       /* 1 − num_free/(N−1) (R8) */
bool kv_pool_caching(const kv_pool *pool);

uint32_t kv_pool_refcount(const kv_pool *pool, kv_block_id b);
bool kv_pool_is_hashed(const kv_pool *pool, kv_block_id b);

/* R5: the first-inserted block holding d, or KV_NO_BLOCK.  No side effects. */
kv_block_id kv_pool_lookup(const kv_pool *pool, const kv_digest *d);

/* R6: take a reference on a hit; a block at refcount 0 leaves the free queue first. */
void kv_pool_touch(kv_pool *pool, kv_block_id b);

/* R4: pop the free-queue head, evicting its hash if it has one; refcount becomes 1.
 * Asserts num_free > 0: callers check capacity first (kvcache's need). */
kv_block_id kv_pool_pop(kv_pool *pool);

/* R5: give referenced, unhashed block b the hash d and append it to d's index entry
 * (alongside any existing holders: no deduplication). */
void kv_pool_cache(kv_pool *pool, kv_block_id b, const kv_digest *d);

/* R7: drop one reference from each of blocks[0..n), given in the order to free
 * (a request's table tail first).  Blocks reaching 0 are queued per the free order. */
void kv_pool_free(kv_pool *pool, const kv_block_id *blocks, size_t n);

/* Free-queue contents head→tail into out (up to cap); returns the queue length.
 * For tests and debugging: O(num_free). */
size_t kv_pool_queue(const kv_pool *pool, kv_block_id *out, size_t cap);

/* The digest block b is indexed under, or NULL when it holds none. */
const kv_digest *kv_pool_digest(const kv_pool *pool, kv_block_id b);

/* R9: full invariant walk (O(N)): refcount 0 ⇔ queued (null block excepted), queue length
 * = num_free, cached-free count, b indexed under h ⇔ b hashed with h, holders in order.
 * 0, or -KV_EINVARIANT with the first violation in diag (prints nothing). */
int kv_pool_check(const kv_pool *pool, kv_diag *diag);
/* Σ refcounts, for the cross-module invariant Σ refcounts = Σ table lengths. */
uint64_t kv_pool_refcount_sum(const kv_pool *pool);

#endif
