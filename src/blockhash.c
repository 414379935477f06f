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
 * buffer (grown when a long adapter name needs it), so every block is one update.  The EVP context
 * and the fetched SHA-256 implementation are created once and reused (no per-hash fetch).
 */
#include "kvsim/blockhash.h"

#include <assert.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/error.h"
#include "kvsim/mem.h"

struct kv_hasher {
    EVP_MD_CTX *ctx;
    EVP_MD *md;
    kv_digest seed;
    uint32_t block_size;
    uint8_t *buf; /* encoding buffer: worst case every position its own run */
    size_t buf_cap;
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

static void digest_bytes(kv_hasher *h, const uint8_t *data, size_t n, kv_digest *out)
{
    unsigned int len = 0;
    int ok = EVP_DigestInit_ex2(h->ctx, h->md, NULL);
    ok &= EVP_DigestUpdate(h->ctx, data, n);
    ok &= EVP_DigestFinal_ex(h->ctx, out->b, &len);
    if (!ok || len != KV_DIGEST_LEN) {
        fputs("kvsim: fatal: SHA-256 failed in libcrypto\n", stderr);
        abort();
    }
}

int kv_hasher_create(kv_hasher **out, const char *model_name, const char *kv_dtype,
                     uint32_t block_size)
{
    *out = NULL;
    if (block_size == 0)
        return -KV_EINVAL;
    kv_hasher *h = kv_xcalloc(1, sizeof *h);
    h->ctx = EVP_MD_CTX_new();
    h->md = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (!h->ctx || !h->md) {
        EVP_MD_CTX_free(h->ctx);
        EVP_MD_free(h->md);
        free(h);
        return -KV_ENOMEM;
    }
    h->block_size = block_size;
    /* Worst case: one 17-byte run per position (hash_ids with tb = 1), or 4 bytes a token
     * plus a header; either way ≤ 32 + 17·b + 9. */
    h->buf_cap = KV_DIGEST_LEN + 17 * (size_t)block_size + 64;
    h->buf = kv_xmalloc(h->buf_cap);

    /* Run seed: a canonical encoding of what makes blocks of two runs comparable. */
    static const char tag[] = "kvsim-block-hash-v1";
    size_t nm = strlen(model_name), nd = strlen(kv_dtype);
    size_t n = sizeof tag + 4 + nm + 4 + nd + 4;
    uint8_t *seed = kv_xmalloc(n), *p = seed;
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
    return h->hashed;
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
            h->buf = kv_xrealloc(h->buf, need);
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

void kv_hasher_chain(kv_hasher *h, const kv_content *c, kv_digest *digests, uint32_t from,
                     uint32_t to)
{
    for (uint32_t j = from; j < to; j++)
        kv_hasher_block(h, j ? &digests[j - 1] : &h->seed, c, j, &digests[j]);
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
