/* kvcache: per-request block tables, hit lookup and allocate_slots (DESIGN §5).
 *
 * vLLM v1's KVCacheManager for one full-attention group:
 *
 *   lookup    walk the request's chain from block 0, stop at the first miss, at most
 *             ⌊(num_tokens − 1)/b⌋ blocks: a fully cached prompt that is a multiple of b
 *             recomputes its whole last block.  No pool side effects.
 *   need      ⌈(computed + hit_tokens + new)/b⌉ − (len(table) + len(hits)), floored at 0,
 *             plus the hits at refcount 0 (touching takes them off the free queue).
 *   allocate  need > num_free → false, nothing changed.  Else touch the hits (before any
 *             pop, so a request never evicts its own hits), append them, pop the new
 *             blocks, then hash and index every block that is now full up to
 *             min(computed + hit_tokens + new, num_tokens) tokens: at schedule time, so
 *             a later request in the same step can hit them; decode blocks included.
 *   commit    hash and index the blocks full up to a token count (the allocate's last
 *             stage alone; async scheduling calls it when sampled tokens arrive).
 *   free      the table tail first (R7); the chain survives for a preempted request.
 *
 * Invariants per seq: table[0..num_cached) are hashed with the seq's own chain digests
 * (hits carry the same digest by construction); len ≥ num_cached; n_hashes ≥ num_cached.
 * The chain is computed lazily and only once per request (DESIGN §9).
 *
 * Complexity: lookup O(hit blocks + newly hashed), allocate O(new blocks + newly hashed),
 * free O(len).
 */
#include "kvsim/kvcache.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "kvcache_internal.h"
#include "kvsim/error.h"
#include "kvsim/mem.h"

struct kv_cache {
    kv_pool *pool;
    kv_hasher *hasher;
    uint32_t block_size;
    bool caching;
    kv_block_id *scratch; /* lookup hits, then reversed tables for free */
    size_t scratch_cap;
    kv_prefix_stats stats;
};

int kv_cache_create(kv_cache **out, kv_pool *pool, kv_hasher *hasher)
{
    kv_cache *c = kv_xcalloc(1, sizeof *c);
    c->pool = pool;
    c->hasher = hasher;
    c->block_size = kv_hasher_block_size(hasher);
    c->caching = kv_pool_caching(pool);
    *out = c;
    return 0;
}

void kv_cache_destroy(kv_cache *c)
{
    if (!c)
        return;
    free(c->scratch);
    free(c);
}

kv_pool *kv_cache_pool(const kv_cache *c)
{
    return c->pool;
}

uint32_t kv_cache_block_size(const kv_cache *c)
{
    return c->block_size;
}

kv_seq *kv_seq_create(const kv_content *content, uint32_t max_tokens)
{
    kv_seq *s = kv_xcalloc(1, sizeof *s);
    s->content = *content;
    s->max_tokens = max_tokens;
    return s;
}

void kv_seq_destroy(kv_seq *s)
{
    if (!s)
        return;
    assert(s->len == 0 && "kv_seq_destroy: table not freed");
    free(s->table);
    free(s->hashes);
    free(s);
}

uint32_t kv_seq_len(const kv_seq *s)
{
    return s->len;
}

const kv_block_id *kv_seq_table(const kv_seq *s)
{
    return s->table;
}

const kv_content *kv_seq_content(const kv_seq *s)
{
    return &s->content;
}

static void scratch_reserve(kv_cache *c, size_t n)
{
    kv_grow((void **)&c->scratch, &c->scratch_cap, n, sizeof *c->scratch);
}

/* Make sure digests [0, n) of the chain exist. */
static void ensure_hashes(kv_hasher *h, kv_seq *s, uint32_t n)
{
    if (n <= s->n_hashes)
        return;
    size_t cap = s->cap_hashes;
    uint32_t most = s->max_tokens / kv_hasher_block_size(h);
    kv_grow((void **)&s->hashes, &cap, n > most ? n : most, sizeof *s->hashes);
    s->cap_hashes = (uint32_t)cap;
    kv_hasher_chain(h, &s->content, s->hashes, s->n_hashes, n);
    s->n_hashes = n;
}

const kv_digest *kv_seq_chain(kv_seq *s, kv_hasher *h, uint32_t n)
{
    ensure_hashes(h, s, n);
    return s->hashes;
}

void kv_cache_lookup(kv_cache *c, kv_seq *s, uint32_t num_tokens, kv_hits *out)
{
    out->n = out->n_evictable = 0;
    out->blocks = c->scratch;
    if (!c->caching || num_tokens == 0)
        return;
    uint32_t max_blocks = (num_tokens - 1) / c->block_size;
    scratch_reserve(c, max_blocks);
    out->blocks = c->scratch;
    for (uint32_t j = 0; j < max_blocks; j++) {
        ensure_hashes(c->hasher, s, j + 1);
        kv_block_id b = kv_pool_lookup(c->pool, &s->hashes[j]);
        if (b == KV_NO_BLOCK)
            break;
        c->scratch[out->n++] = b;
        out->n_evictable += kv_pool_refcount(c->pool, b) == 0;
    }
}

static uint32_t new_blocks(const kv_cache *c, const kv_seq *s, uint32_t num_computed,
                           const kv_hits *hits, uint32_t num_new)
{
    uint32_t n_hits = hits ? hits->n : 0;
    uint64_t tokens = (uint64_t)num_computed + (uint64_t)n_hits * c->block_size + num_new;
    uint64_t want = (tokens + c->block_size - 1) / c->block_size;
    uint64_t have = (uint64_t)s->len + n_hits;
    return want > have ? (uint32_t)(want - have) : 0;
}

uint32_t kv_cache_need(const kv_cache *c, const kv_seq *s, uint32_t num_computed,
                       const kv_hits *hits, uint32_t num_new)
{
    return new_blocks(c, s, num_computed, hits, num_new) + (hits ? hits->n_evictable : 0);
}

static void table_push(const kv_cache *c, kv_seq *s, kv_block_id b)
{
    if (s->len == s->cap) {
        size_t cap = s->cap;
        size_t most = ((size_t)s->max_tokens + c->block_size - 1) / c->block_size;
        size_t need = (size_t)s->len + 1;
        kv_grow((void **)&s->table, &cap, need > most ? need : most, sizeof *s->table);
        s->cap = (uint32_t)cap;
    }
    s->table[s->len++] = b;
}

bool kv_cache_allocate(kv_cache *c, kv_seq *s, uint32_t num_computed, const kv_hits *hits,
                       uint32_t num_new, uint32_t num_tokens)
{
    uint32_t need = kv_cache_need(c, s, num_computed, hits, num_new);
    if (need > kv_pool_num_free(c->pool))
        return false;
    uint32_t n_new = new_blocks(c, s, num_computed, hits, num_new);
    uint32_t n_hits = hits ? hits->n : 0;
    if (n_hits) {
        /* Hits only come with a fresh admission: an empty table, nothing computed. */
        assert(s->len == 0 && num_computed == 0);
        for (uint32_t i = 0; i < n_hits; i++) {
            kv_pool_touch(c->pool, hits->blocks[i]); /* the reference moves into the table */
            table_push(c, s, hits->blocks[i]);
        }
        s->num_cached = s->len;
    }
    for (uint32_t i = 0; i < n_new; i++)
        table_push(c, s, kv_pool_pop(c->pool));

    uint64_t upto = (uint64_t)num_computed + (uint64_t)n_hits * c->block_size + num_new;
    kv_cache_commit(c, s, upto < num_tokens ? (uint32_t)upto : num_tokens);
    return true;
}

void kv_cache_commit(kv_cache *c, kv_seq *s, uint32_t num_tokens)
{
    if (!c->caching)
        return;
    uint32_t full = num_tokens / c->block_size;
    assert(full <= s->len);
    if (full <= s->num_cached)
        return;
    ensure_hashes(c->hasher, s, full);
    for (uint32_t j = s->num_cached; j < full; j++)
        kv_pool_cache(c->pool, s->table[j], &s->hashes[j]);
    s->num_cached = full;
}

void kv_cache_free(kv_cache *c, kv_seq *s)
{
    if (s->len == 0)
        return;
    scratch_reserve(c, s->len);
    for (uint32_t i = 0; i < s->len; i++)
        c->scratch[i] = s->table[s->len - 1 - i];
    kv_pool_free(c->pool, c->scratch, s->len);
    s->len = 0;
    s->num_cached = 0;
}

void kv_cache_record_admission(kv_cache *c, uint32_t num_tokens, uint32_t hit_tokens,
                               bool preempted_before)
{
    if (!c->caching)
        return;
    if (preempted_before) {
        c->stats.preempted_queries += num_tokens;
        c->stats.preempted_hits += hit_tokens;
    } else {
        c->stats.queries += num_tokens;
        c->stats.hits += hit_tokens;
    }
}

const kv_prefix_stats *kv_cache_prefix_stats(const kv_cache *c)
{
    return &c->stats;
}

/* ---- invariants --------------------------------------------------------------------- */

static int check_seq(const kv_cache *c, const kv_seq *s, size_t i, uint8_t *held, kv_diag *d)
{
    uint32_t n = kv_pool_num_blocks(c->pool);
    if (s->num_cached > s->len || s->num_cached > s->n_hashes)
        return kv_diag_set(d, -KV_EINVARIANT,
                           "kvcache: table %zu caches %u entries of %u with %u digests", i,
                           s->num_cached, s->len, s->n_hashes);
    for (uint32_t j = 0; j < s->len; j++) {
        kv_block_id b = s->table[j];
        if (b <= KV_NULL_BLOCK || (uint32_t)b >= n)
            return kv_diag_set(d, -KV_EINVARIANT, "kvcache: table %zu entry %u holds bad id %d", i,
                               j, b);
        if (held[b])
            return kv_diag_set(d, -KV_EINVARIANT, "kvcache: table %zu holds block %d twice", i, b);
        held[b] = 1;
        uint32_t ref = kv_pool_refcount(c->pool, b);
        const kv_digest *dg = kv_pool_digest(c->pool, b);
        if (ref == 0)
            return kv_diag_set(d, -KV_EINVARIANT,
                               "kvcache: table %zu entry %u: block %d has refcount 0", i, j, b);
        if (j < s->num_cached && (!dg || memcmp(dg, &s->hashes[j], sizeof *dg) != 0))
            return kv_diag_set(d, -KV_EINVARIANT,
                               "kvcache: table %zu entry %u: block %d is not hashed with the "
                               "chain's digest",
                               i, j, b);
        if (j >= s->num_cached && (dg || ref != 1))
            return kv_diag_set(d, -KV_EINVARIANT,
                               "kvcache: table %zu entry %u: uncached block %d is %s", i, j, b,
                               dg ? "hashed" : "shared");
    }
    for (uint32_t j = 0; j < s->len; j++)
        held[s->table[j]] = 0;
    return 0;
}

int kv_cache_check(const kv_cache *c, kv_seq *const *seqs, size_t n, kv_diag *diag)
{
    uint8_t *held = kv_xcalloc(kv_pool_num_blocks(c->pool), 1);
    uint64_t logical = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = check_seq(c, seqs[i], i, held, diag);
        logical += seqs[i]->len;
    }
    free(held);
    if (rc != 0)
        return rc;
    uint64_t refs = kv_pool_refcount_sum(c->pool);
    if (refs != logical)
        return kv_diag_set(diag, -KV_EINVARIANT, "R9: Σ refcounts %llu != Σ table lengths %llu",
                           (unsigned long long)refs, (unsigned long long)logical);
    return 0;
}
