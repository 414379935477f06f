/* blockhash: block identity as a SHA-256 chain (DESIGN §3).
 *
 *   h_j = SHA256(h_{j−1} ‖ content(block j) ‖ extra_j),   h_{−1} = run seed
 *
 * Only full blocks are hashed.  The run seed is SHA-256 of a canonical encoding of model
 * name, KV dtype and block size.  extra_j carries the adapter (LoRA name) on every block
 * and the salt on block 0 only; the chain carries both onwards.
 *
 * Content is a sequence of per-position items from distinct sources that never match one
 * another: explicit token ids; Mooncake (hash_id, offset) pairs; content-less prompt
 * positions (row, position) unique to a request; --shared-prefix positions (position);
 * generated tokens (row, output offset).  A block is encoded as its maximal runs (a run
 * continues while source and key stay equal and the offset steps by one), each run as
 * tag + fixed-width little-endian fields, so equal content and identity ⇔ equal bytes.
 * A 16-token block from hash_ids or a content-less prompt is 49 bytes + extras: one
 * SHA-256 compression.
 */
#ifndef KVSIM_BLOCKHASH_H
#define KVSIM_BLOCKHASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim/trace.h"

#define KV_DIGEST_LEN 32

typedef struct kv_digest {
    uint8_t b[KV_DIGEST_LEN];
} kv_digest;

/* What defines one request's token content; borrowed pointers, owned by the trace. */
typedef struct kv_content {
    kv_content_kind kind;
    uint32_t prompt_len;
    uint32_t row;             /* keys content-less and generated positions */
    uint32_t shared_prefix;   /* KV_CONTENT_NONE: first N prompt positions are shared */
    const uint32_t *tokens;   /* KV_CONTENT_TOKENS: prompt_len ids */
    const uint64_t *hash_ids; /* KV_CONTENT_HASH_IDS */
    uint32_t n_hash_ids;
    uint32_t trace_block_size; /* tb for hash_ids */
    const char *adapter;       /* NULL or "" = none */
    const char *salt;          /* NULL or "" = none */
} kv_content;

/* Fill c from a trace row (shared_prefix applies to content-less rows only). */
void kv_content_from_spec(kv_content *c, const kv_request_spec *r, uint32_t trace_block_size,
                          uint32_t shared_prefix);

/* The first private block of c at block size b (DESIGN §9): the first block holding a
 * content-less ('U') or generated ('G') position, whose encoding names the request's row,
 * so that it and every later block (chained on it) are unique to this request by
 * construction.  Blocks [0, f) are shared-kind: explicit tokens, hash_ids, --shared-prefix
 * positions. */
uint32_t kv_content_first_private(const kv_content *c, uint32_t block_size);

typedef struct kv_hasher kv_hasher; /* opaque: the run seed, buffers, the memo */

/* The function h is made of: SHA-256 (DESIGN §3, the default) or, optionally, XXH3-128
 * (libxxhash; its 16 bytes, then 16 zero bytes), vLLM's faster choice.  A different
 * function gives other digests but, barring collisions, the same simulation. */
typedef enum kv_hash_algo {
    KV_HASH_SHA256 = 0,
    KV_HASH_XXH3_128,
} kv_hash_algo;

/* "sha256", "xxh3-128" → 0; -KV_EINVAL unknown; -KV_ENOTSUP not built in. */
int kv_hash_algo_parse(const char *s, kv_hash_algo *out);
const char *kv_hash_algo_name(kv_hash_algo a);

/* 0, or -KV_ENOMEM.  block_size ≥ 1.  SHA-256. */
int kv_hasher_create(kv_hasher **out, const char *model_name, const char *kv_dtype,
                     uint32_t block_size);
/* The same with the hash function chosen; -KV_ENOTSUP when it is not built in. */
int kv_hasher_create_algo(kv_hasher **out, const char *model_name, const char *kv_dtype,
                          uint32_t block_size, kv_hash_algo algo);
void kv_hasher_destroy(kv_hasher *h); /* NULL ok */
const kv_digest *kv_hasher_seed(const kv_hasher *h);
uint32_t kv_hasher_block_size(const kv_hasher *h);
/* Blocks hashed since creation: with one hasher shared by a cluster's replicas this is
 * the run's SHA-256 work, the same whatever R and the router (DESIGN §9, §10). */
uint64_t kv_hasher_blocks_hashed(const kv_hasher *h);

/* Hash full block j of c (positions [j·b, (j+1)·b)) with parent digest `parent`
 * (the seed for j = 0).  Positions ≥ prompt_len are generated tokens.  Can't fail. */
void kv_hasher_block(kv_hasher *h, const kv_digest *parent, const kv_content *c, uint32_t j,
                     kv_digest *out);

/* Extend a chain: compute digests[from..to) given digests[0..from) (from may be 0).  With
 * a memo, trace blocks of hash_ids content seen before (same parent digest and hash_id)
 * are copied instead of hashed; the digests are the same either way. */
void kv_hasher_chain(kv_hasher *h, const kv_content *c, kv_digest *digests, uint32_t from,
                     uint32_t to);

/* A chain store: every row's shared-kind chain digests, kept across the replays of one
 * trace (kvsim plan's probes), so each is hashed once per plan, not once per probe.
 * Bound to the first hasher identity (seed digest) it serves; a hasher of another
 * identity does not use it.  At most max_bytes of digests; rows beyond are recomputed.
 * Digests are the same with or without a store (src/chainstore.c). */
typedef struct kv_chain_store kv_chain_store;
kv_chain_store *kv_chain_store_create(size_t max_bytes); /* can't fail */
/* A store in shared memory, for replays in processes forked after it was made (kvsim
 * sweep's configurations): what one hashed, the others copy.  Rows [0, n_rows) of one
 * trace, up to KV_CHAIN_SLOTS identities (each bound by the first hasher that asks), at
 * most max_bytes of digests.  NULL when shared memory cannot be had (replays then hash on
 * their own).  Lock-free: nobody waits for another process. */
enum { KV_CHAIN_SLOTS = 8 };
kv_chain_store *kv_chain_store_create_shared(size_t max_bytes, size_t n_rows);
void kv_chain_store_destroy(kv_chain_store *s);          /* NULL ok */
/* h's chains go through s (NULL: none) from now on. */
void kv_hasher_use_store(kv_hasher *h, kv_chain_store *s);
uint64_t kv_chain_store_bytes(const kv_chain_store *s);

/* Hashing ahead (src/hashahead.c; issue 9, lever 9): a second thread hashes every row of
 * trace's shared-kind chain (its rows' content under shared_prefix, in arrival order) and
 * h serves a request's chain from it when it is there, computing it itself when not, so
 * the digests — and every output of a replay — are the same with or without it.  At most
 * max_bytes of digests wait to be asked for; the thread sleeps when they would be more.
 * The thread takes h's chain memo (set it first).  It runs until kv_hasher_destroy.
 * kv_hasher_blocks_hashed counts both threads' blocks (which may then vary from run to
 * run: a row the replay reaches first is hashed here, not there).  h must not use a chain
 * store or hash ahead already (-KV_EINVAL); trace must outlive h.  0, or -KV_ENOMEM when
 * the thread cannot be had (h then hashes on its own as before). */
int kv_hasher_ahead(kv_hasher *h, const kv_trace *trace, uint32_t shared_prefix, size_t max_bytes);
bool kv_hasher_is_ahead(const kv_hasher *h); /* whether a thread hashes ahead for h */

/* The chain memo (src/blockhash.c): at most max_bytes for entries of up to `per` digests
 * (tb / b of the trace it will see); 0 turns it off (the default).  0 or -KV_ENOMEM (the
 * memo is then off).  Its hit counts are for benchmarks. */
int kv_hasher_memo(kv_hasher *h, size_t max_bytes, uint32_t per);
/* The max_bytes that gives a memo of `per` digests an entry each for at least `entries`
 * (trace, parent) pairs (a power of two of them), so a memo for a small trace is small. */
size_t kv_hasher_memo_bytes(uint32_t per, uint64_t entries);
void kv_hasher_memo_stats(const kv_hasher *h, uint64_t *hits, uint64_t *misses);

/* Lowercase hex, 64 chars + NUL. */
void kv_digest_hex(const kv_digest *d, char out[2 * KV_DIGEST_LEN + 1]);

#endif
