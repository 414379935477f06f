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

#endif
