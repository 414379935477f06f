/* kvcache: per-request block tables over the pool (DESIGN §5).
 *
 * A kv_seq is one request's cache state, opaque to every other module: its block table
 * (append-only while the request runs), how many leading entries are hashed and indexed,
 * and its lazily computed hash chain, which survives a preemption so a recomputed request
 * can hit its own old blocks.  The scheduler owns num_tokens (known tokens: prompt +
 * generated so far) and num_computed and passes them in; kvcache decides hits, need and
 * allocation.
 *
 * Contract of an admission:  lookup → need → (caller's gates) → allocate.
 * lookup has no side effects on the pool; allocate either succeeds completely or changes
 * nothing.
 */
#ifndef KVSIM_KVCACHE_H
#define KVSIM_KVCACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "kvsim/blockhash.h"
#include "kvsim/error.h"
#include "kvsim/pool.h"

typedef struct kv_cache kv_cache; /* opaque; see src/kvcache.c */
typedef struct kv_seq kv_seq;     /* opaque; one request's table and chain */

/* A lookup result: the hit blocks (a prefix of the request's chain). */
typedef struct kv_hits {
    kv_block_id *blocks;  /* the cache's scratch: valid until the next lookup or free on the
                             same cache (both reuse it) */
    uint32_t n;           /* hit blocks; hit tokens = n · b */
    uint32_t n_evictable; /* hits at refcount 0, which leave the free queue when touched */
} kv_hits;

typedef struct kv_prefix_stats {
    uint64_t queries, hits;                     /* tokens, first admissions */
    uint64_t preempted_queries, preempted_hits; /* tokens, re-admissions after preemption */
} kv_prefix_stats;

/* Can't fail (allocation aborts through kv_xmalloc). */
int kv_cache_create(kv_cache **out, kv_pool *pool, kv_hasher *hasher);
void kv_cache_destroy(kv_cache *c); /* NULL ok; after every seq it served */
/* Reference mode (tests): every full block hashed and indexed, private ones (DESIGN §9)
 * included.  Same outputs, slower; set before the first request. */
void kv_cache_hash_all(kv_cache *c, bool on);
kv_pool *kv_cache_pool(const kv_cache *c);
uint32_t kv_cache_block_size(const kv_cache *c);

/* A request's cache state for content c (copied; its pointers stay borrowed from the
 * trace).  max_tokens: the most tokens it will ever hold (0 = unknown), which sizes the
 * table and the chain with one allocation each.  Can't fail. */
kv_seq *kv_seq_create(const kv_content *c, uint32_t max_tokens);
/* Drop the table and the chain, and detach its private blocks from the pool (they stay
 * cached until evicted).  The table must already be freed (length 0), the pool still
 * alive.  NULL ok. */
void kv_seq_destroy(kv_seq *s);
uint32_t kv_seq_len(const kv_seq *s);             /* table entries */
const kv_block_id *kv_seq_table(const kv_seq *s); /* len entries; valid until the next
                                                     allocate or free of s */
const kv_content *kv_seq_content(const kv_seq *s);
/* Digests [0, n) of the chain, computed now where missing (a router asks before any
 * admission).  Valid until the next call on s. */
const kv_digest *kv_seq_chain(kv_seq *s, kv_hasher *h, uint32_t n);

/* Hit lookup (only meaningful with num_computed == 0; returns no hits with caching off):
 * walk the chain from block 0, stop at the first miss, at most ⌊(num_tokens−1)/b⌋ blocks.
 * Computes missing chain digests (which is not a pool side effect). */
void kv_cache_lookup(kv_cache *c, kv_seq *s, uint32_t num_tokens, kv_hits *out);

/* Blocks this allocation takes from the free queue:
 * ⌈(num_computed + hit_tokens + num_new)/b⌉ − (len + hits.n), floored at 0,
 * plus hits.n_evictable.  hits may be NULL (no hits). */
uint32_t kv_cache_need(const kv_cache *c, const kv_seq *s, uint32_t num_computed,
                       const kv_hits *hits, uint32_t num_new);

/* allocate_slots: if need > num_free return false with no state change.  Otherwise touch
 * the hits, append them, pop the new blocks, then hash and index every block now full up
 * to min(num_computed + hit_tokens + num_new, num_tokens) tokens.  hits may be NULL. */
bool kv_cache_allocate(kv_cache *c, kv_seq *s, uint32_t num_computed, const kv_hits *hits,
                       uint32_t num_new, uint32_t num_tokens);

/* Hash and index every block of s's table that is full within the first num_tokens
 * tokens (≤ the tokens its table holds) and not hashed yet: vLLM's cache_blocks, which
 * the async scheduler calls once a step's sampled tokens are known.  Nothing with caching
 * off.  Can't fail. */
void kv_cache_commit(kv_cache *c, kv_seq *s, uint32_t num_tokens);

/* Free the table tail first (R7); the chain is kept (a preempted request re-hits). */
void kv_cache_free(kv_cache *c, kv_seq *s);

/* Prefix statistics, once per admission (tokens); nothing with caching off. */
void kv_cache_record_admission(kv_cache *c, uint32_t num_tokens, uint32_t hit_tokens,
                               bool preempted_before);
const kv_prefix_stats *kv_cache_prefix_stats(const kv_cache *c);

/* Invariant walk over the live tables seqs[0..n) (R9 with §5), O(Σ len + N):
 *   every entry is a usable block with refcount ≥ 1, no table holds a block twice;
 *   entries [0, num_cached) are hashed under the table's own identities (chain digests,
 *   then from the first private block on the seq's own private slots);
 *   entries past num_cached are unhashed and private (refcount 1);
 *   Σ refcounts over the pool = Σ table lengths.
 * 0, or -KV_EINVARIANT with the first violation in diag. */
int kv_cache_check(const kv_cache *c, kv_seq *const *seqs, size_t n, kv_diag *diag);

#endif
