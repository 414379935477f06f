/* blockhash: the SHA-256 chain that gives full blocks their identity (DESIGN §3).
 *
 * Encoding of block j (positions [j·b, (j+1)·b)), all integers little-endian:
 *
 *   parent digest (32 bytes)
 *   runs, in position order, each maximal (source and key equal, offset stepping by 1):
 *     'T' u32 count, count × u32 token id             explicit tokens
 *     'H' u64 hash_id, u32 first offset, u32 count    Mooncake content (hash_id, p mod tb)
 *     'S' u32 first position, u32 count               --shared-prefix positions
 *     'U' u32 row, u32 first position, u32 count      content-less prompt positions
 *     'G' u32 row, u32 first output offset, u32 count generated tokens
 *   'A' u32 len, adapter bytes                       every block, when an adapter is set
 *   'L' u32 len, salt bytes                          block 0 only, when a salt is set
 *
 * The run decomposition of a position sequence is unique and every field has a fixed
 * width or a length prefix, so equal content + identity ⇔ equal bytes.  Runs of different
 * tags never merge, so the five sources never match one another.  Two adjacent Mooncake
 * trace blocks never merge either (the offset wraps from tb−1 to 0).
 *
 * Cost: a hash_ids, content-less or generated block of any size is one 17-byte run (two
 * when it straddles a trace block or the prompt end): 32 + 17 = 49 bytes, a single
 * SHA-256 compression.  Token blocks cost 4 bytes a token; extras are appended to the same
 * buffer (grown when a long adapter name needs it), so every block is one message.
 *
 * SHA-256 path.  The message is padded here (FIPS 180-4 §5.1.1: 0x80, zeros, the 64-bit
 * big-endian bit length) and fed block by block to libcrypto's SHA256_Transform, starting
 * from the standard initial hash value; the digest is the big-endian state.  That is the
 * SHA-256 function bit for bit (tests compare it with EVP on every length 0..300), without
 * EVP's per-call work: OpenSSL 3.0's EVP_DigestInit_ex2 frees and re-allocates the
 * provider context on every call.  A libcrypto built without the deprecated low-level
 * entry points (meson finds no SHA256_Transform) gets the EVP path instead, one reused
 * context as before.
 */
#include "kvsim/blockhash.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#ifdef KVSIM_HAVE_SHA256_TRANSFORM
/* SHA256_Transform and SHA256_CTX are deprecated in OpenSSL 3.0 but present: the fastest
 * SHA-256 this libcrypto offers (its assembly, SHA-NI where the CPU has it). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#endif
#include <openssl/evp.h>
#ifdef KVSIM_HAVE_XXHASH
#include <xxhash.h>
#endif

#include "blockhash_internal.h"
#include "kvsim/error.h"
#include "kvsim/mem.h"

/* Entries per set of the chain memo (a power of two). */
#define MEMO_WAYS 8

/* The padding written after a message: at most 72 bytes past its end. */
#define PAD_SLACK 72

/* One memo entry: the chain through one trace block (issue 9, lever 4). */
typedef struct memo_entry {
    kv_digest parent; /* digest before the trace block's first simulator block */
    uint64_t hash_id; /* the trace block's hash_id */
    uint32_t n;       /* digests filled, 0 = empty slot; ≤ per */
    uint32_t tb;      /* the trace block size it was made for */
    kv_digest d[];    /* per = tb / b digests, d[i] of the trace block's i-th block */
} memo_entry;

/* The lookup side of one memo entry, apart from it so that a set's are read together. */
typedef struct memo_way {
    uint64_t key;  /* the entry's slot key (memo_find), any value while it is empty */
    uint64_t used; /* the hasher's lookup count at its last use, 0 = empty (LRU in a set) */
} memo_way;

struct kv_hasher {
    kv_hash_algo algo;
    kv_chain_store *store; /* NULL: none */
    kv_ahead *ahead;       /* NULL: no hashing ahead (kv_hasher_ahead) */
    memo_entry *memo;      /* n_memo entries of memo_size bytes in sets of memo_ways; NULL = off */
    uint32_t n_memo;       /* a power of two */
    uint32_t memo_ways;    /* entries per set: MEMO_WAYS, fewer only when n_memo is smaller */
    memo_way *ways;        /* n_memo, parallel to memo: a set's keys read together */
    size_t memo_size;
    uint32_t memo_per; /* digests per entry: the largest tb / b it holds */
    uint64_t memo_hits, memo_misses;
    uint64_t memo_clock; /* lookups so far: the memo's LRU stamps */
    EVP_MD_CTX *ctx; /* the EVP path only (no SHA256_Transform): NULL otherwise */
    EVP_MD *md;
    kv_digest seed;
    uint32_t block_size;
    uint8_t *buf; /* encoding buffer: worst case every position its own run, + PAD_SLACK */
    size_t buf_cap; /* message bytes it holds (PAD_SLACK more are allocated) */
    uint64_t hashed; /* blocks hashed so far (kv_hasher_block calls) */
};

static uint8_t *put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    return p + 4;
}

static uint8_t *put_u64(uint8_t *p, uint64_t v)
{
    p = put_u32(p, (uint32_t)v);
    return put_u32(p, (uint32_t)(v >> 32));
}

#ifdef KVSIM_HAVE_SHA256_TRANSFORM
static const uint32_t sha256_iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

/* SHA-256 of data[0..n) by the compression function alone.  data must have 72 bytes of
 * writable slack after n (the padding is written in place: buf_cap reserves it). */
static void sha256_padded(uint8_t *data, size_t n, kv_digest *out)
{
    SHA256_CTX c;
    memcpy(c.h, sha256_iv, sizeof c.h);
    size_t full = n / 64 * 64;
    for (size_t off = 0; off < full; off += 64)
        SHA256_Transform(&c, data + off);
    uint8_t *tail = data + full;
    size_t rest = n - full, last = rest < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)n * 8;
    tail[rest] = 0x80;
    memset(tail + rest + 1, 0, last - rest - 9);
    for (int k = 0; k < 8; k++)
        tail[last - 1 - k] = (uint8_t)(bits >> (8 * k));
    SHA256_Transform(&c, tail);
    if (last == 128)
        SHA256_Transform(&c, tail + 64);
    for (int k = 0; k < 8; k++) {
        out->b[4 * k] = (uint8_t)(c.h[k] >> 24);
        out->b[4 * k + 1] = (uint8_t)(c.h[k] >> 16);
        out->b[4 * k + 2] = (uint8_t)(c.h[k] >> 8);
        out->b[4 * k + 3] = (uint8_t)c.h[k];
    }
}
#endif

static void digest_bytes(kv_hasher *h, uint8_t *data, size_t n, kv_digest *out)
{
#ifdef KVSIM_HAVE_XXHASH
    if (h->algo == KV_HASH_XXH3_128) {
        XXH128_canonical_t c;
        XXH128_canonicalFromHash(&c, XXH3_128bits(data, n));
        memcpy(out->b, c.digest, sizeof c.digest);
        memset(out->b + sizeof c.digest, 0, KV_DIGEST_LEN - sizeof c.digest);
        return;
    }
#endif
#ifdef KVSIM_HAVE_SHA256_TRANSFORM
    (void)h;
    sha256_padded(data, n, out);
#else
    unsigned int len = 0;
    int ok = EVP_DigestInit_ex2(h->ctx, h->md, NULL);
    ok &= EVP_DigestUpdate(h->ctx, data, n);
    ok &= EVP_DigestFinal_ex(h->ctx, out->b, &len);
    if (!ok || len != KV_DIGEST_LEN) {
        fputs("kvsim: fatal: SHA-256 failed in libcrypto\n", stderr);
        abort();
    }
#endif
}

int kv_hash_algo_parse(const char *s, kv_hash_algo *out)
{
    if (strcmp(s, "sha256") == 0)
        *out = KV_HASH_SHA256;
    else if (strcmp(s, "xxh3-128") == 0)
        *out = KV_HASH_XXH3_128;
    else
        return -KV_EINVAL;
#ifndef KVSIM_HAVE_XXHASH
    if (*out == KV_HASH_XXH3_128)
        return -KV_ENOTSUP;
#endif
    return 0;
}

const char *kv_hash_algo_name(kv_hash_algo a)
{
    return a == KV_HASH_XXH3_128 ? "xxh3-128" : "sha256";
}

int kv_hasher_create(kv_hasher **out, const char *model_name, const char *kv_dtype,
                     uint32_t block_size)
{
    return kv_hasher_create_algo(out, model_name, kv_dtype, block_size, KV_HASH_SHA256);
}

/* A hasher of algo and block size without its seed: its buffers (and EVP context). */
static kv_hasher *hasher_new(uint32_t block_size, kv_hash_algo algo)
{
    kv_hasher *h = kv_xcalloc(1, sizeof *h);
    h->algo = algo;
#ifndef KVSIM_HAVE_SHA256_TRANSFORM
    h->ctx = EVP_MD_CTX_new();
    h->md = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (!h->ctx || !h->md) {
        EVP_MD_CTX_free(h->ctx);
        EVP_MD_free(h->md);
        free(h);
        return NULL;
    }
#endif
    h->block_size = block_size;
    /* Worst case: one 17-byte run per position (hash_ids with tb = 1), or 4 bytes a token
     * plus a header; either way ≤ 32 + 17·b + 9. */
    h->buf_cap = KV_DIGEST_LEN + 17 * (size_t)block_size + 64;
    h->buf = kv_xmalloc(h->buf_cap + PAD_SLACK);
    return h;
}

int kv_hasher_create_algo(kv_hasher **out, const char *model_name, const char *kv_dtype,
                          uint32_t block_size, kv_hash_algo algo)
{
    *out = NULL;
    if (block_size == 0)
        return -KV_EINVAL;
#ifndef KVSIM_HAVE_XXHASH
    if (algo == KV_HASH_XXH3_128)
        return -KV_ENOTSUP;
#endif
    kv_hasher *h = hasher_new(block_size, algo);
    if (!h)
        return -KV_ENOMEM;

    /* Run seed: a canonical encoding of what makes blocks of two runs comparable. */
    static const char tag[] = "kvsim-block-hash-v1";
    size_t nm = strlen(model_name), nd = strlen(kv_dtype);
    size_t n = sizeof tag + 4 + nm + 4 + nd + 4;
    uint8_t *seed = kv_xmalloc(n + PAD_SLACK), *p = seed;
    memcpy(p, tag, sizeof tag); /* with its NUL */
    p += sizeof tag;
    p = put_u32(p, (uint32_t)nm);
    memcpy(p, model_name, nm);
    p += nm;
    p = put_u32(p, (uint32_t)nd);
    memcpy(p, kv_dtype, nd);
    p += nd;
    p = put_u32(p, block_size);
    digest_bytes(h, seed, (size_t)(p - seed), &h->seed);
    free(seed);
    *out = h;
    return 0;
}

void kv_hasher_destroy(kv_hasher *h)
{
    if (!h)
        return;
    kv__ahead_stop(h->ahead);
    free(h->memo);
    free(h->ways);
    EVP_MD_CTX_free(h->ctx);
    EVP_MD_free(h->md);
    free(h->buf);
    free(h);
}

const kv_digest *kv_hasher_seed(const kv_hasher *h)
{
    return &h->seed;
}

uint64_t kv_hasher_blocks_hashed(const kv_hasher *h)
{
    return h->hashed + (h->ahead ? kv__ahead_hashed(h->ahead) : 0);
}

bool kv_hasher_is_ahead(const kv_hasher *h)
{
    return h->ahead != NULL;
}

/* Give from's chain memo (entries, ways, geometry) to `to`; from has none after. */
static void memo_move(kv_hasher *to, kv_hasher *from)
{
    to->memo = from->memo;
    to->ways = from->ways;
    to->n_memo = from->n_memo;
    to->memo_ways = from->memo_ways;
    to->memo_size = from->memo_size;
    to->memo_per = from->memo_per;
    from->memo = NULL;
    from->ways = NULL;
    from->n_memo = 0;
}

int kv_hasher_ahead(kv_hasher *h, const kv_trace *trace, uint32_t shared_prefix, size_t max_bytes)
{
    if (h->ahead || h->store)
        return -KV_EINVAL;
    kv_hasher *twin = hasher_new(h->block_size, h->algo);
    if (!twin)
        return -KV_ENOMEM;
    twin->seed = h->seed;
    memo_move(twin, h); /* the memo goes where the hashing is */
    h->ahead = kv__ahead_start(twin, trace, shared_prefix, max_bytes);
    if (!h->ahead) {
        memo_move(h, twin);
        kv_hasher_destroy(twin);
        return -KV_ENOMEM;
    }
    return 0;
}

uint32_t kv_hasher_block_size(const kv_hasher *h)
{
    return h->block_size;
}

void kv_content_from_spec(kv_content *c, const kv_request_spec *r, uint32_t trace_block_size,
                          uint32_t shared_prefix)
{
    memset(c, 0, sizeof *c);
    c->kind = r->content;
    c->prompt_len = r->prompt_len;
    c->row = r->row;
    c->tokens = r->tokens;
    c->hash_ids = r->hash_ids;
    c->n_hash_ids = r->n_hash_ids;
    c->trace_block_size = trace_block_size;
    c->shared_prefix = r->content == KV_CONTENT_NONE ? shared_prefix : 0;
    c->adapter = r->adapter && r->adapter[0] ? r->adapter : NULL;
    c->salt = r->salt && r->salt[0] ? r->salt : NULL;
}

uint32_t kv_content_first_private(const kv_content *c, uint32_t block_size)
{
    /* The first U or G position: the prompt's end, or for a content-less prompt the end of
     * its shared prefix; the block holding it is the first private one. */
    uint32_t shared = c->prompt_len;
    if (c->kind == KV_CONTENT_NONE && c->shared_prefix < shared)
        shared = c->shared_prefix;
    return shared / block_size;
}

/* Encode the prompt positions [lo, hi) of c. */
static uint8_t *encode_prompt(uint8_t *p, const kv_content *c, uint32_t lo, uint32_t hi)
{
    switch (c->kind) {
    case KV_CONTENT_TOKENS:
        *p++ = 'T';
        p = put_u32(p, hi - lo);
        for (uint32_t i = lo; i < hi; i++)
            p = put_u32(p, c->tokens[i]);
        return p;
    case KV_CONTENT_HASH_IDS: {
        uint32_t tb = c->trace_block_size;
        for (uint32_t pos = lo; pos < hi;) {
            uint32_t k = pos / tb, off = pos % tb;
            uint32_t end = (k + 1) * tb < hi ? (k + 1) * tb : hi;
            assert(k < c->n_hash_ids);
            *p++ = 'H';
            p = put_u64(p, c->hash_ids[k]);
            p = put_u32(p, off);
            p = put_u32(p, end - pos);
            pos = end;
        }
        return p;
    }
    case KV_CONTENT_NONE:
    default:
        if (lo < c->shared_prefix) {
            uint32_t end = hi < c->shared_prefix ? hi : c->shared_prefix;
            *p++ = 'S';
            p = put_u32(p, lo);
            p = put_u32(p, end - lo);
            lo = end;
        }
        if (lo < hi) {
            *p++ = 'U';
            p = put_u32(p, c->row);
            p = put_u32(p, lo);
            p = put_u32(p, hi - lo);
        }
        return p;
    }
}

void kv_hasher_block(kv_hasher *h, const kv_digest *parent, const kv_content *c, uint32_t j,
                     kv_digest *out)
{
    uint32_t b = h->block_size;
    uint32_t lo = j * b, hi = lo + b;
    uint8_t *p = h->buf;
    h->hashed++;
    memcpy(p, parent->b, KV_DIGEST_LEN);
    p += KV_DIGEST_LEN;
    if (lo < c->prompt_len)
        p = encode_prompt(p, c, lo, hi < c->prompt_len ? hi : c->prompt_len);
    if (hi > c->prompt_len) {
        uint32_t g = lo > c->prompt_len ? lo : c->prompt_len;
        *p++ = 'G';
        p = put_u32(p, c->row);
        p = put_u32(p, g - c->prompt_len);
        p = put_u32(p, hi - g);
    }
    assert((size_t)(p - h->buf) <= h->buf_cap);
    if (c->adapter || (j == 0 && c->salt)) {
        size_t na = c->adapter ? strlen(c->adapter) : 0;
        size_t ns = j == 0 && c->salt ? strlen(c->salt) : 0;
        size_t used = (size_t)(p - h->buf), need = used + 10 + na + ns;
        if (need > h->buf_cap) {
            h->buf = kv_xrealloc(h->buf, need + PAD_SLACK);
            h->buf_cap = need;
            p = h->buf + used;
        }
        if (c->adapter) {
            *p++ = 'A';
            p = put_u32(p, (uint32_t)na);
            memcpy(p, c->adapter, na);
            p += na;
        }
        if (ns) {
            *p++ = 'L';
            p = put_u32(p, (uint32_t)ns);
            memcpy(p, c->salt, ns);
            p += ns;
        }
    }
    digest_bytes(h, h->buf, (size_t)(p - h->buf), out);
}

/* ---- the chain memo ----------------------------------------------------------------
 *
 * Many requests of a hash_ids trace repeat a (parent digest, hash_id) pair: a later turn
 * of a conversation re-sends the earlier turns' trace blocks after the same prefix.  With
 * b dividing tb, the tb/b simulator blocks of trace block k are a pure function of the
 * digest before them and hash_ids[k] (their content is ('H', hash_id, i·b, b)), so their
 * digests can be remembered per pair.  The memo is a cache of such pairs in sets of
 * MEMO_WAYS entries, the least recently used one of a full set replaced (a direct-mapped
 * memo of the same 64 MiB answered 26 % of the Mooncake conversation trace's lookups,
 * 8 ways 32 %, 36 % being all that repeat); the sets' keys and use stamps sit apart from
 * the digests (memo_way: 16 bytes an entry, a set read together).  It is bounded when made
 * (kv_hasher_memo, the keys included); an entry can be partly filled (a prompt that
 * ends inside the trace block) and is extended later.  Only rows without adapter and salt
 * use it (extras would be part of the key).  It caches a pure function: a replay gives
 * the same digests with it or without it, only faster. */

/* Bytes of one memo entry of per digests, and with its way (what the bound counts). */
static size_t memo_entry_bytes(uint32_t per)
{
    return sizeof(memo_entry) + (size_t)per * sizeof(kv_digest);
}

static size_t memo_each(uint32_t per)
{
    return memo_entry_bytes(per) + sizeof(memo_way);
}

size_t kv_hasher_memo_bytes(uint32_t per, uint64_t entries)
{
    uint64_t n = 1;
    while (n < entries && n < (1u << 30))
        n *= 2;
    return (size_t)n * memo_each(per);
}

int kv_hasher_memo(kv_hasher *h, size_t max_bytes, uint32_t per)
{
    free(h->memo);
    free(h->ways);
    h->memo = NULL;
    h->ways = NULL;
    h->n_memo = 0;
    if (per == 0 || max_bytes == 0)
        return 0;
    h->memo_per = per;
    h->memo_size = memo_entry_bytes(per);
    size_t each = memo_each(per);
    uint32_t n = 1;
    while ((size_t)n * 2 * each <= max_bytes && n < (1u << 30))
        n *= 2;
    if ((size_t)n * each > max_bytes)
        return 0; /* not even one entry fits: no memo */
    h->memo = calloc(n, h->memo_size); /* pages are touched only as entries fill */
    h->ways = calloc(n, sizeof *h->ways);
    if (!h->memo || !h->ways) {
        free(h->memo);
        free(h->ways);
        h->memo = NULL;
        h->ways = NULL;
        return -KV_ENOMEM;
    }
    h->n_memo = n;
    h->memo_ways = n < MEMO_WAYS ? n : MEMO_WAYS;
    return 0;
}

void kv_hasher_memo_stats(const kv_hasher *h, uint64_t *hits, uint64_t *misses)
{
    *hits = h->memo_hits;
    *misses = h->memo_misses;
}

static memo_entry *memo_at(const kv_hasher *h, uint32_t i)
{
    return (memo_entry *)((char *)h->memo + (size_t)i * h->memo_size);
}

/* The entry of (parent, tb, hash_id) in its set if there is one (*hit), else the set's
 * least recently used entry (an empty one first), to be refilled.  The set's keys are
 * compared first: only an entry whose key matches is read. */
static memo_entry *memo_find(kv_hasher *h, const kv_digest *parent, uint32_t tb, uint64_t hash_id,
                             bool *hit)
{
    uint64_t k;
    memcpy(&k, parent->b + 8, sizeof k);
    k ^= hash_id * 0x9e3779b97f4a7c15ull;
    k ^= k >> 29;
    uint32_t ways = h->memo_ways, set = (uint32_t)k & (h->n_memo - ways), victim = set;
    memo_way *W = h->ways;
    h->memo_clock++;
    for (uint32_t i = set; i < set + ways; i++) {
        memo_entry *e = memo_at(h, i);
        if (W[i].used && W[i].key == k && e->tb == tb && e->hash_id == hash_id &&
            memcmp(e->parent.b, parent->b, KV_DIGEST_LEN) == 0) {
            W[i].used = h->memo_clock;
            *hit = true;
            return e;
        }
        if (W[i].used < W[victim].used)
            victim = i;
    }
    W[victim].key = k;
    W[victim].used = h->memo_clock;
    *hit = false;
    return memo_at(h, victim);
}

void kv_hasher_use_store(kv_hasher *h, kv_chain_store *s)
{
    h->store = s;
}

void kv_hasher_chain(kv_hasher *h, const kv_content *c, kv_digest *digests, uint32_t from,
                     uint32_t to)
{
    if (h->store && kv__chain_store_serve(h->store, h, c, digests, from, to))
        return;
    if (h->ahead && kv__ahead_serve(h->ahead, h, c, digests, from, to))
        return;
    kv__chain_compute(h, c, digests, from, to);
}

void kv__chain_compute(kv_hasher *h, const kv_content *c, kv_digest *digests, uint32_t from,
                       uint32_t to)
{
    uint32_t b = h->block_size, tb = c->trace_block_size;
    bool memo = h->memo && c->kind == KV_CONTENT_HASH_IDS && !c->adapter && !c->salt &&
                tb % b == 0 && tb / b <= h->memo_per;
    uint32_t per = memo ? tb / b : 0;
    uint32_t end = memo ? c->prompt_len / b : 0; /* blocks wholly inside the prompt */
    for (uint32_t j = from; j < to;) {
        const kv_digest *parent = j ? &digests[j - 1] : &h->seed;
        if (!memo || j % per != 0 || j >= end) {
            kv_hasher_block(h, parent, c, j, &digests[j]);
            j++;
            continue;
        }
        /* j starts trace block k: its blocks [j, j + m) are memoisable. */
        uint32_t k = j / per, m = end - j < per ? end - j : per;
        uint32_t want = to - j < m ? to - j : m;
        bool hit;
        memo_entry *e = memo_find(h, parent, tb, c->hash_ids[k], &hit);
        uint32_t have = 0;
        if (hit) {
            have = e->n < want ? e->n : want;
            memcpy(&digests[j], e->d, have * sizeof *digests);
            h->memo_hits++;
        } else {
            e->parent = *parent;
            e->hash_id = c->hash_ids[k];
            e->tb = tb;
            e->n = 0;
            h->memo_misses++;
        }
        for (uint32_t i = have; i < want; i++)
            kv_hasher_block(h, i ? &digests[j + i - 1] : parent, c, j + i, &digests[j + i]);
        if (want > e->n) {
            memcpy(&e->d[e->n], &digests[j + e->n], (want - e->n) * sizeof *digests);
            e->n = want;
        }
        j += want;
    }
}

void kv_digest_hex(const kv_digest *d, char out[2 * KV_DIGEST_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < KV_DIGEST_LEN; i++) {
        out[2 * i] = hex[d->b[i] >> 4];
        out[2 * i + 1] = hex[d->b[i] & 15];
    }
    out[2 * KV_DIGEST_LEN] = '\0';
}
