/* kvcache: per-request block tables over the pool (DESIGN §5).
 *
 * A kv_seq is one request's cache state: its block table (append-only while it runs),
 * how many table entries are hashed and indexed, and its lazily computed hash chain.
 * The scheduler owns num_tokens (known tokens: prompt + generated so far) and
 * num_computed and passes them in; kvcache decides hits, need and allocation.
 *
 * Contract of an admission:  lookup → need → (caller's gates) → allocate.
 * lookup has no side effects; allocate either succeeds completely or changes nothing.
 */
#ifndef KVSIM_KVCACHE_H
#define KVSIM_KVCACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "kvsim/blockhash.h"
#include "kvsim/pool.h"

typedef struct kv_cache kv_cache; /* opaque */

typedef struct kv_seq {
    kv_block_id *table; /* block table, len entries */
    uint32_t len, cap;
    uint32_t num_cached; /* table[0..num_cached) are hashed (from hits or cached here) */
    kv_digest *hashes;   /* the request's chain, n_hashes computed so far */
    uint32_t n_hashes, cap_hashes;
    kv_content content;
    uint32_t max_tokens; /* most tokens it will ever hold (0 = unknown): sizes the table
                            and chain with one allocation each */
} kv_seq;

/* A lookup result: the hit blocks (a prefix of the request's chain). */
typedef struct kv_hits {
    kv_block_id *blocks;  /* owned by the cache's scratch; valid until the next lookup */
    uint32_t n;           /* hit blocks; hit tokens = n · b */
    uint32_t n_evictable; /* hits at refcount 0, which leave the free queue when touched */
} kv_hits;

typedef struct kv_prefix_stats {
    uint64_t queries, hits;                     /* tokens, first admissions */
    uint64_t preempted_queries, preempted_hits; /* tokens, re-admissions after preemption */
} kv_prefix_stats;

int kv_cache_create(kv_cache **out, kv_pool *pool, kv_hasher *hasher);
void kv_cache_destroy(kv_cache *c); /* NULL ok */
kv_pool *kv_cache_pool(const kv_cache *c);
uint32_t kv_cache_block_size(const kv_cache *c);

void kv_seq_init(kv_seq *s, const kv_content *content);
/* Drop the hash chain and table storage; the table must already be freed (len 0). */
void kv_seq_release(kv_seq *s);

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

/* Free the table tail first (R7); the chain is kept (a preempted request re-hits). */
void kv_cache_free(kv_cache *c, kv_seq *s);

/* Prefix statistics, once per admission (tokens). */
void kv_cache_record_admission(kv_cache *c, uint32_t num_tokens, uint32_t hit_tokens,
                               bool preempted_before);
const kv_prefix_stats *kv_cache_prefix_stats(const kv_cache *c);

#endif
