/* kvcache_internal: the layout behind kvcache.h's opaque kv_seq, for kvcache.c and for
 * tests that corrupt a table on purpose to prove kv_cache_check notices.  No other
 * module includes this file. */
#ifndef KVSIM_KVCACHE_INTERNAL_H
#define KVSIM_KVCACHE_INTERNAL_H

#include "kvsim/kvcache.h"

/* One holder of a private identity, in insertion order (pool.h "Private identities"). */
typedef struct kv__priv_rec {
    kv_block_id b; /* KV_NO_BLOCK: none yet */
    uint32_t tag;  /* kv_pool_cache_private's answer; the record holds while b's tag is it */
    uint32_t more; /* the identity's next holder: an index into extra, or UINT32_MAX */
} kv__priv_rec;

struct kv_seq {
    kv_block_id *table;  /* block table, len entries (cap allocated) */
    uint32_t len, cap;   /* len ≥ num_cached */
    uint32_t num_cached; /* table[0..num_cached) are hashed (from hits or cached here) */
    kv_digest *hashes;   /* the chain: n_hashes digests computed so far; every one below
                            min(num_cached, first_private) at least */
    uint32_t n_hashes, cap_hashes;
    uint32_t max_tokens; /* most tokens it will ever hold (0 = unknown) */
    kv__priv_rec *priv;  /* private block j ≥ f (the cache's first private block of this
                            content, DESIGN §9): its first holder is priv[j − f] */
    uint32_t n_priv, cap_priv;
    kv__priv_rec *extra; /* later holders (re-admissions), chained through .more */
    uint32_t n_extra, cap_extra;
    kv_content content;
};

#endif
