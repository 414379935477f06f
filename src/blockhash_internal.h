/* blockhash_internal: what the chain store (src/chainstore.c) and the hasher
 * (src/blockhash.c) need of each other; not part of the library's interface. */
#ifndef KVSIM_BLOCKHASH_INTERNAL_H
#define KVSIM_BLOCKHASH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "kvsim/blockhash.h"

/* Compute digests [from, to) of c's chain given [0, from), without a store (the memo
 * still applies). */
void kv__chain_compute(kv_hasher *h, const kv_content *c, kv_digest *digests, uint32_t from,
                       uint32_t to);

/* Serve digests [from, to) of c's chain through s: copied where s has them, computed
 * (and kept) where not.  false when s does not serve h's identity (nothing done). */
bool kv__chain_store_serve(kv_chain_store *s, kv_hasher *h, const kv_content *c,
                           kv_digest *digests, uint32_t from, uint32_t to);

/* Digests [from, to) of c's chain: [from, min(n, to)) copied from stored (the first n of
 * the chain), the rest computed.  Whether any was computed (src/chainstore.c). */
bool kv__chain_copy_then_compute(kv_hasher *h, const kv_content *c, kv_digest *digests,
                                 uint32_t from, uint32_t to, const kv_digest *stored, uint64_t n);

/* Hashing ahead (src/hashahead.c).  start: a producer thread hashing every row of trace
 * with twin (which it then owns), at most max_bytes of digests waiting; NULL when the
 * thread cannot be had (twin is then the caller's).  serve: digests [from, to) of c's
 * chain through a, false when a has nothing for c (nothing done).  stop: join the thread
 * and free everything, twin included (NULL ok).  hashed: blocks the producer hashed. */
typedef struct kv_ahead kv_ahead;
kv_ahead *kv__ahead_start(kv_hasher *twin, const kv_trace *trace, uint32_t shared_prefix,
                          size_t max_bytes);
bool kv__ahead_serve(kv_ahead *a, kv_hasher *h, const kv_content *c, kv_digest *digests,
                     uint32_t from, uint32_t to);
void kv__ahead_stop(kv_ahead *a);
uint64_t kv__ahead_hashed(const kv_ahead *a);

#endif
