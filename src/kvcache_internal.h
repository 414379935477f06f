/* kvcache_internal: the layout behind kvcache.h's opaque kv_seq, for kvcache.c and for
 * tests that corrupt a table on purpose to prove kv_cache_check notices.  No other
 * module includes this file. */
#ifndef KVSIM_KVCACHE_INTERNAL_H
#define KVSIM_KVCACHE_INTERNAL_H

#include "kvsim/kvcache.h"

/* Private slots come in chunks that never move (the pool keeps their addresses). */
#define KV__PRIV_CHUNK 64

struct kv_seq {
    kv_block_id *table;  /* block table, len entries (cap allocated) */
    uint32_t len, cap;   /* len ≥ num_cached */
    uint32_t num_cached; /* table[0..num_cached) are hashed (from hits or cached here) */
    kv_digest *hashes;   /* the chain: n_hashes digests computed so far; every one below
                            min(num_cached, first_private) at least */
    uint32_t n_hashes, cap_hashes;
    uint32_t max_tokens; /* most tokens it will ever hold (0 = unknown) */
    kv_block_id **priv;  /* private head slots: block j ≥ f (the cache's first private
                            block of this content, DESIGN §9) has its head in
                            priv[k / KV__PRIV_CHUNK][k % KV__PRIV_CHUNK], k = j − f */
    uint32_t n_priv_chunks;
    kv_pool *pool;       /* set with the first private slot: detached at destroy */
    kv_content content;
};

#endif
