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

typedef struct kv_hasher kv_hasher; /* opaque: a reused EVP_MD_CTX and the run seed */

/* 0, or -KV_ENOMEM.  block_size ≥ 1. */
int kv_hasher_create(kv_hasher **out, const char *model_name, const char *kv_dtype,
                     uint32_t block_size);
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

/* Extend a chain: compute digests[from..to) given digests[0..from) (from may be 0). */
void kv_hasher_chain(kv_hasher *h, const kv_content *c, kv_digest *digests, uint32_t from,
                     uint32_t to);

/* Lowercase hex, 64 chars + NUL. */
void kv_digest_hex(const kv_digest *d, char out[2 * KV_DIGEST_LEN + 1]);

#endif
