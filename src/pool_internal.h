/* pool_internal: the layout behind pool.h's opaque kv_pool (DESIGN §4), for pool.c and
 * for tests that corrupt a pool on purpose to prove kv_pool_check notices.  No other
 * module includes this file. */
#ifndef KVSIM_POOL_INTERNAL_H
#define KVSIM_POOL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/pool.h"

/* The digest is already uniformly distributed: its first word is a perfect bucket key. */
#define HASH_FUNCTION(keyptr, keylen, hashv)                                                       \
    do {                                                                                           \
        (void)(keylen);                                                                            \
        memcpy(&(hashv), (keyptr), sizeof(hashv));                                                 \
    } while (0)
/* uthash allocates (its bucket array) through kv_xmalloc, which never returns NULL, so
 * uthash's own fatal path is unreachable. */
#include "kvsim/mem.h"
#define uthash_malloc(sz)    kv_xmalloc(sz)
#define uthash_free(ptr, sz) free(ptr)
#define uthash_fatal(msg)    abort()
#include <uthash.h>

/* Size the bucket array for the pool when the table is made (at its first HASH_ADD):
 * 2^index_log2 ≥ 2N buckets keep chains below one entry on average, so a find touches
 * about one entry instead of walking the ~5-entry chains uthash's grow-at-10 rule leaves
 * (each entry a cache miss).  uthash reads these macros where HASH_ADD expands, where `p`
 * is the pool. */
#undef HASH_INITIAL_NUM_BUCKETS
#undef HASH_INITIAL_NUM_BUCKETS_LOG2
#define HASH_INITIAL_NUM_BUCKETS      (1u << p->index_log2)
#define HASH_INITIAL_NUM_BUCKETS_LOG2 (p->index_log2)

/* What identity a block carries (DESIGN §3, §9 "Private blocks"). */
enum {
    ID_NONE = 0, /* unhashed */
    ID_DIGEST,   /* a digest, in the uthash index */
    ID_PRIVATE,  /* an identity unique to one request, recorded by its owner as (b, tag) */
};

/* Hot half of a block: what the free queue and refcounting touch (12 bytes, so the
 * queue's checks stay in a small array). */
typedef struct block {
    uint32_t ref; /* refcount; 0 ⇔ on the free queue (null block excepted) */
    uint32_t pos; /* while queued: its position in the queue ring (see kv_pool.q) */
    uint32_t tag; /* identity kind in bits 0–1 (ID_*; "hashed" ⇔ kind != ID_NONE), above
                     them a generation that grows each time b gets a private identity */
} block;

#define BLOCK_ID(bl) ((bl)->tag & 3u)

/* Cold half: the identity, touched only when a block is cached, looked up or evicted. */
typedef struct entry {
    kv_digest digest;     /* valid while the kind is ID_DIGEST */
    UT_hash_handle hh;    /* in the table iff ID_DIGEST and dup_prev == KV_NO_BLOCK */
    kv_block_id dup_prev; /* other holders of the same digest, insertion order; */
    kv_block_id dup_next; /*   KV_NO_BLOCK at either end; valid only while hashed */
    kv_block_id dup_last; /* valid in the first holder only: the last holder */
} entry;

struct kv_pool {
    block *blocks;            /* N entries, indexed by block id */
    entry *ent;               /* N entries, parallel to blocks; NULL until a digest is cached */
    kv_block_id *q;           /* the free queue: a ring of 2^k ≥ 2N slots, positions */
    uint32_t q_mask;          /*   [q_head, q_tail) (wrapping counters, slot = pos & q_mask) */
    uint32_t q_head;          /*   hold each queued block at its pos, and stale slots */
    uint32_t q_tail;          /*   (tombstones) of blocks unlinked since */
    uint32_t n;               /* N */
    uint32_t num_free;        /* queue length */
    uint32_t num_cached_free; /* queued blocks that are hashed */
    uint64_t num_refs;        /* Σ refcounts, kept as the verbs change them */
    uint64_t evictions;
    entry *index;        /* uthash head (&anchor once made); its buckets hold the first
                            holders of digests */
    entry anchor;        /* the table's head, in no bucket (pool.c, "hash index") */
    unsigned index_log2; /* initial bucket count 2^index_log2 ≥ 2N, at most 2^22 */
    uint8_t *filter;     /* negative filter: digests in the table per slot, saturating */
    uint32_t filter_mask; /* 2^(index_log2 + 2) − 1 */
    bool caching;
    kv_free_order order;
};

#endif
