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
 * Private blocks (DESIGN §9).  Blocks from the content's first private block f on (the
 * first holding a content-less or generated position) are unique to the request by
 * construction: only the request itself, after a preemption, can ever hit them.  They get
 * no digest and no index entry: the seq records each holder as (block, tag) in insertion
 * order (kv_pool_cache_private gives the tag), and a lookup takes the first record the
 * pool says still holds (kv_pool_private_holds): R5's first holder still present.  Hit,
 * need, free order, eviction and counters are what the digest path gives (R4–R7 treat
 * both kinds alike): outputs are byte-identical, which the engine's randomized test
 * checks against the reference mode (kv_cache_hash_all: every full block hashed and
 * indexed).  Nothing in the pool points back, so a seq goes away without undoing
 * anything.
 *
 * Invariants per seq: table[0..num_cached) are hashed with the seq's own identities: the
 * chain digest below f (hits carry the same digest by construction), the seq's own slot
 * from f on; len ≥ num_cached; n_hashes ≥ min(num_cached, f).  The chain is computed
 * lazily, the whole shared prefix at the first lookup, and only once per request.
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
    bool hash_all;        /* reference mode: private blocks hashed and indexed too */
    kv_block_id *scratch; /* lookup hits */
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

void kv_cache_hash_all(kv_cache *c, bool on)
{
    c->hash_all = on;
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
    free(s->priv);
    free(s->extra);
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

/* Blocks ≥ this are private for c (never, in reference mode). */
static uint32_t private_from(const kv_cache *c, const kv_seq *s)
{
    return c->hash_all ? UINT32_MAX : kv_content_first_private(&s->content, c->block_size);
}

/* The holders of private block f + k, first inserted first (NULL: none ever). */
static const kv__priv_rec *priv_first(const kv_seq *s, uint32_t k)
{
    return k < s->n_priv && s->priv[k].b != KV_NO_BLOCK ? &s->priv[k] : NULL;
}

static const kv__priv_rec *priv_next(const kv_seq *s, const kv__priv_rec *r)
{
    return r->more == UINT32_MAX ? NULL : &s->extra[r->more];
}

/* R5 for a private identity: the first holder still present, or KV_NO_BLOCK. */
static kv_block_id priv_lookup(const kv_cache *c, const kv_seq *s, uint32_t k)
{
    for (const kv__priv_rec *r = priv_first(s, k); r; r = priv_next(s, r))
        if (kv_pool_private_holds(c->pool, r->b, r->tag))
            return r->b;
    return KV_NO_BLOCK;
}

/* Room for private records [0, k]: for every private block the request can hold when
 * its size is known (one allocation instead of a doubling series). */
static void priv_reserve(const kv_cache *c, kv_seq *s, uint32_t k)
{
    size_t cap = s->cap_priv, most = 0;
    if (s->max_tokens) {
        uint32_t bs = c->block_size, fp = private_from(c, s);
        uint32_t all = (uint32_t)(((uint64_t)s->max_tokens + bs - 1) / bs);
        most = all > fp ? all - fp : 0;
    }
    kv_grow((void **)&s->priv, &cap, (size_t)k + 1 > most ? (size_t)k + 1 : most, sizeof *s->priv);
    s->cap_priv = (uint32_t)cap;
}

/* Give block b the private identity f + k and record it as the identity's last holder. */
static void priv_cache(kv_cache *c, kv_seq *s, uint32_t k, kv_block_id b)
{
    kv__priv_rec rec = {b, kv_pool_cache_private(c->pool, b), UINT32_MAX};
    if (k >= s->n_priv) {
        if (k >= s->cap_priv)
            priv_reserve(c, s, k);
        for (; s->n_priv <= k; s->n_priv++)
            s->priv[s->n_priv] = (kv__priv_rec){KV_NO_BLOCK, 0, UINT32_MAX};
    }
    kv__priv_rec *r = &s->priv[k];
    if (r->b == KV_NO_BLOCK) {
        *r = rec;
        return;
    }
    size_t cap = s->cap_extra;
    kv_grow((void **)&s->extra, &cap, (size_t)s->n_extra + 1, sizeof *s->extra);
    s->cap_extra = (uint32_t)cap;
    r = &s->priv[k];
    while (r->more != UINT32_MAX)
        r = &s->extra[r->more];
    r->more = s->n_extra;
    s->extra[s->n_extra++] = rec;
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
    uint32_t fp = private_from(c, s);
    uint32_t n_dig = max_blocks < fp ? max_blocks : fp;
    /* The whole shared-kind prefix at once: it is cached block by block as the request
     * runs, so none of it is wasted, and the walk can prefetch ahead. */
    ensure_hashes(c->hasher, s, n_dig);
    enum { AHEAD = 4 };
    for (uint32_t j = 0; j < n_dig && j < AHEAD; j++)
        kv_pool_prefetch(c->pool, &s->hashes[j]);
    for (uint32_t j = 0; j < max_blocks; j++) {
        kv_block_id b;
        if (j < fp) {
            if (j + AHEAD < n_dig)
                kv_pool_prefetch(c->pool, &s->hashes[j + AHEAD]);
            b = kv_pool_lookup(c->pool, &s->hashes[j]);
        } else {
            b = priv_lookup(c, s, j - fp);
        }
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
    uint64_t have = (uint64_t)s->len + n_hits;
    /* Most calls (a decode step inside its last block) need no block: no division. */
    if (tokens <= have * c->block_size)
        return 0;
    return (uint32_t)((tokens + c->block_size - 1) / c->block_size - have);
}

uint32_t kv_cache_need(const kv_cache *c, const kv_seq *s, uint32_t num_computed,
                       const kv_hits *hits, uint32_t num_new)
{
    return new_blocks(c, s, num_computed, hits, num_new) + (hits ? hits->n_evictable : 0);
}

/* Room for `more` table entries. */
static void table_reserve(const kv_cache *c, kv_seq *s, uint32_t more)
{
    if ((size_t)s->len + more <= s->cap)
        return;
    size_t cap = s->cap;
    size_t most = ((size_t)s->max_tokens + c->block_size - 1) / c->block_size;
    size_t need = (size_t)s->len + more;
    kv_grow((void **)&s->table, &cap, need > most ? need : most, sizeof *s->table);
    s->cap = (uint32_t)cap;
}

/* Hash and index the blocks full up to num_tokens tokens beyond the num_cached ones
 * (commit's work once a block has filled). */
static __attribute__((noinline)) void commit_full(kv_cache *c, kv_seq *s, uint32_t num_tokens)
{
    uint32_t full = num_tokens / c->block_size;
    assert(full <= s->len && full > s->num_cached);
    uint32_t fp = private_from(c, s), j = s->num_cached;
    uint32_t dig_end = full < fp ? full : fp;
    if (dig_end > j) {
        ensure_hashes(c->hasher, s, dig_end);
        kv_pool_cache_n(c->pool, s->table + j, s->hashes + j, dig_end - j);
        j = dig_end;
    }
    for (; j < full; j++) {
        uint32_t k = j - fp;
        kv_block_id b = s->table[j];
        if (k == s->n_priv && k < s->cap_priv) /* the identity's first holder: the usual case */
            s->priv[s->n_priv++] = (kv__priv_rec){b, kv_pool_cache_private(c->pool, b), UINT32_MAX};
        else
            priv_cache(c, s, k, b);
    }
    s->num_cached = full;
}

/* Whether num_tokens tokens fill a block beyond the num_cached ones: most calls (a decode
 * step inside a block) fill none, and pay no division and no call for it. */
static inline bool fills_block(const kv_cache *c, const kv_seq *s, uint32_t num_tokens)
{
    return c->caching && (uint64_t)num_tokens >= ((uint64_t)s->num_cached + 1) * c->block_size;
}

/* kv_cache_allocate's general case: hits, or new blocks to pop. */
static __attribute__((noinline)) bool allocate(kv_cache *c, kv_seq *s, uint32_t num_computed,
                                               const kv_hits *hits, uint32_t num_new,
                                               uint32_t num_tokens)
{
    uint32_t n_new = new_blocks(c, s, num_computed, hits, num_new);
    uint32_t n_hits = hits ? hits->n : 0;
    uint32_t need = n_new + (hits ? hits->n_evictable : 0);
    if (need > 0 && need > kv_pool_num_free(c->pool))
        return false;
    table_reserve(c, s, n_hits + n_new);
    if (n_hits) {
        /* Hits only come with a fresh admission: an empty table, nothing computed. */
        assert(s->len == 0 && num_computed == 0);
        for (uint32_t i = 0; i < n_hits; i++) {
            kv_pool_touch(c->pool, hits->blocks[i]); /* the reference moves into the table */
            s->table[s->len++] = hits->blocks[i];
        }
        s->num_cached = s->len;
    }
    if (n_new > 0)
        kv_pool_pop_n(c->pool, n_new, s->table + s->len);
    s->len += n_new;

    uint64_t upto = (uint64_t)num_computed + (uint64_t)n_hits * c->block_size + num_new;
    uint32_t commit_to = upto < num_tokens ? (uint32_t)upto : num_tokens;
    if (fills_block(c, s, commit_to))
        commit_full(c, s, commit_to);
    return true;
}

bool kv_cache_allocate(kv_cache *c, kv_seq *s, uint32_t num_computed, const kv_hits *hits,
                       uint32_t num_new, uint32_t num_tokens)
{
    /* Most calls are a decode step inside the table's last block: nothing to pop, and at
     * most the commit's fill test, kept free of the general case's register spills. */
    uint64_t upto = (uint64_t)num_computed + num_new;
    if (hits || upto > (uint64_t)s->len * c->block_size)
        return allocate(c, s, num_computed, hits, num_new, num_tokens);
    uint32_t commit_to = upto < num_tokens ? (uint32_t)upto : num_tokens;
    if (fills_block(c, s, commit_to))
        commit_full(c, s, commit_to);
    return true;
}

void kv_cache_commit(kv_cache *c, kv_seq *s, uint32_t num_tokens)
{
    if (fills_block(c, s, num_tokens))
        commit_full(c, s, num_tokens);
}

void kv_cache_free(kv_cache *c, kv_seq *s)
{
    if (s->len == 0)
        return;
    kv_pool_free_tail_first(c->pool, s->table, s->len);
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
    uint32_t fp = private_from(c, s);
    if (s->num_cached > s->len || (s->num_cached < fp ? s->num_cached : fp) > s->n_hashes)
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
        if (j < s->num_cached && j < fp && (!dg || memcmp(dg, &s->hashes[j], sizeof *dg) != 0))
            return kv_diag_set(d, -KV_EINVARIANT,
                               "kvcache: table %zu entry %u: block %d is not hashed with the "
                               "chain's digest",
                               i, j, b);
        bool own = false;
        for (const kv__priv_rec *r = j >= fp ? priv_first(s, j - fp) : NULL; r && !own;
             r = priv_next(s, r))
            own = r->b == b && kv_pool_private_holds(c->pool, b, r->tag);
        if (j < s->num_cached && j >= fp && !own)
            return kv_diag_set(d, -KV_EINVARIANT,
                               "kvcache: table %zu entry %u: private block %d is not one of the "
                               "request's own holders",
                               i, j, b);
        if (j >= s->num_cached && (kv_pool_is_hashed(c->pool, b) || ref != 1))
            return kv_diag_set(d, -KV_EINVARIANT,
                               "kvcache: table %zu entry %u: uncached block %d is %s", i, j, b,
                               kv_pool_is_hashed(c->pool, b) ? "hashed" : "shared");
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
