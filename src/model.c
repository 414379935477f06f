/* model: the capacity model of DESIGN §2 — bytes per token, sharding, budget, ledgers.
 *
 * Everything here is arithmetic over plain structs (presets live in presets.c, the
 * config.json reader in hfconfig.c).  The seed formulas, exactly:
 *
 *   c        = 2 · L · H_kv · d · (s + S/G)          bytes per token, whole model
 *   c_rank   = 2 · ⌈L/PP⌉ · h_rank · d · (s + S/G)    h_rank = H_kv/TP, or ⌈H_kv/TP⌉
 *   block    = ⌈b · c_rank⌉                           bytes of one block on one rank
 *   budget   = ⌊util · mem⌋ − weights_rank − reserve  (or --kv-budget, or N · block)
 *   N        = ⌊budget / block⌋,  usable = N − 1      (block 0 is the null block, R2)
 *   max_tok  = ⌊budget / c_rank⌋
 *
 * Exactness.  c_rank is a rational number: int4 is half a byte and scale metadata adds S/G
 * bytes per element.  It is kept as a reduced fraction num/den (kv_shard.bpt_rank_*) so
 * block bytes and max_tokens are exact integer results, never the floor of a rounded
 * double; the 64×64→128-bit products that needs are done with a portable multiply and a
 * restoring division (ISO C11 has no 128-bit integer).  Doubles appear only where the
 * contract is a double (util · mem, the ledgers, which may be fractional bytes).
 *
 * Sizes.  kv_parse_size accepts binary units (KiB … PiB, powers of 1024) and decimal ones
 * (KB … PB, powers of 1000) and never guesses between them: a bare "G" is rejected as
 * ambiguous.  The number is kvsim's one grammar (kvsim/text.h: "1.5GiB", ".5GiB", "1e3MiB");
 * it is converted in exact integers (at most 19 significant digits) and the byte count is
 * rounded down.
 *
 * Out of scope: anything that needs a trace (that is kvsim run), sliding-window and MLA
 * attention (every layer is assumed to hold full-length K and V).
 */
#include "kvsim/model.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kvsim/text.h"

/* ---- exact 64-bit arithmetic with a 128-bit intermediate ------------------------------ */

static void mul_64x64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (p00 & 0xffffffffu) | (mid << 32);
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* ⌊a·b/c⌋ (or ⌈a·b/c⌉ when ceil), c > 0: false when the result exceeds 64 bits. */
static bool muldiv(uint64_t a, uint64_t b, uint64_t c, bool ceil, uint64_t *out)
{
    uint64_t hi, lo;
    mul_64x64(a, b, &hi, &lo);
    if (hi >= c)
        return false;
    /* Restoring division of hi:lo by c; rem < c holds before each shift, so a carry out
     * of bit 63 means rem ≥ 2^64 > c and the wrapped subtraction is still exact. */
    uint64_t rem = hi, quo = 0;
    for (int i = 63; i >= 0; i--) {
        bool carry = (rem >> 63) != 0;
        rem = (rem << 1) | ((lo >> i) & 1u);
        quo <<= 1;
        if (carry || rem >= c) {
            rem -= c;
            quo |= 1;
        }
    }
    if (ceil && rem != 0) {
        if (quo == UINT64_MAX)
            return false;
        quo++;
    }
    *out = quo;
    return true;
}

static bool mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a != 0 && b > UINT64_MAX / a)
        return false;
    *out = a * b;
    return true;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* ---- KV dtypes ------------------------------------------------------------------------ */

static const struct {
    const char *name;
    kv_dtype dtype;
} dtype_names[] = {
    {"fp16", KV_DTYPE_FP16},    {"bf16", KV_DTYPE_BF16},     {"fp8", KV_DTYPE_FP8},
    {"int8", KV_DTYPE_INT8},    {"int4", KV_DTYPE_INT4},     {"float16", KV_DTYPE_FP16},
    {"half", KV_DTYPE_FP16},    {"bfloat16", KV_DTYPE_BF16}, {"fp8_e4m3", KV_DTYPE_FP8},
    {"fp8_e5m2", KV_DTYPE_FP8},
};

int kv_dtype_parse(const char *s, kv_dtype *out)
{
    for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++)
        if (strcasecmp(s, dtype_names[i].name) == 0) {
            *out = dtype_names[i].dtype;
            return 0;
        }
    return -KV_EINVAL;
}

const char *kv_dtype_name(kv_dtype d)
{
    switch (d) {
    case KV_DTYPE_FP16:
        return "fp16";
    case KV_DTYPE_BF16:
        return "bf16";
    case KV_DTYPE_FP8:
        return "fp8";
    case KV_DTYPE_INT8:
        return "int8";
    case KV_DTYPE_INT4:
        return "int4";
    }
    return "?";
}

/* Twice the element size, an integer for every dtype (int4 = 1 half-byte·2). */
static uint64_t dtype_half_bytes(kv_dtype d)
{
    switch (d) {
    case KV_DTYPE_FP16:
    case KV_DTYPE_BF16:
        return 4;
    case KV_DTYPE_FP8:
    case KV_DTYPE_INT8:
        return 2;
    case KV_DTYPE_INT4:
        return 1;
    }
    return 4;
}

double kv_dtype_bytes(kv_dtype d)
{
    return (double)dtype_half_bytes(d) / 2.0;
}

/* Bytes per element as a fraction: s + S/G = (2s·G + 2S) / (2G). */
static void element_bytes(const kv_model *m, uint64_t *num, uint64_t *den)
{
    uint64_t s2 = dtype_half_bytes(m->kv_dtype);
    if (m->kv_scale_group > 0) {
        *num = s2 * m->kv_scale_group + 2u * (uint64_t)m->kv_scale_bytes;
        *den = 2u * (uint64_t)m->kv_scale_group;
    } else {
        *num = s2;
        *den = 2;
    }
}

/* c for `layers` layers and `heads` KV heads, as a reduced fraction; false on overflow. */
static bool bytes_per_token_frac(const kv_model *m, uint32_t layers, uint32_t heads, uint64_t *num,
                                 uint64_t *den)
{
    uint64_t en, ed, elems;
    element_bytes(m, &en, &ed);
    if (!mul_ok(2u * (uint64_t)layers, heads, &elems) || !mul_ok(elems, m->head_dim, &elems))
        return false;
    uint64_t g = gcd_u64(elems, ed);
    elems /= g;
    ed /= g;
    g = gcd_u64(en, ed);
    if (!mul_ok(elems, en / g, num))
        return false;
    *den = ed / g;
    return true;
}

double kv_model_bytes_per_token(const kv_model *m)
{
    uint64_t en, ed;
    element_bytes(m, &en, &ed);
    double elems = 2.0 * m->num_layers * (double)m->num_kv_heads * m->head_dim;
    return elems * (double)en / (double)ed;
}

/* ---- sharding ------------------------------------------------------------------------- */

int kv_shard_compute(const kv_model *m, uint32_t tp, uint32_t pp, kv_shard *out, kv_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (tp == 0 || pp == 0)
        return kv_diag_set(diag, -KV_EINVAL, "tensor and pipeline parallel degrees must be >= 1");
    if (m->num_layers == 0 || m->num_kv_heads == 0 || m->head_dim == 0)
        return kv_diag_set(diag, -KV_EINVAL, "model '%s' has no layers, KV heads or head dim",
                           m->name);
    uint32_t h = m->num_kv_heads;
    out->tp = tp;
    out->pp = pp;
    out->layers_per_rank = m->num_layers / pp + (m->num_layers % pp != 0);
    out->kv_heads_per_rank = h / tp + (h % tp != 0);
    out->kv_replicated = tp > h;
    out->kv_indivisible = h % tp != 0 && tp % h != 0;
    out->kv_replication = out->kv_replicated ? tp / h + (tp % h != 0) : 1;
    out->bytes_per_token = kv_model_bytes_per_token(m);
    if (!bytes_per_token_frac(m, out->layers_per_rank, out->kv_heads_per_rank, &out->bpt_rank_num,
                              &out->bpt_rank_den))
        return kv_diag_set(diag, -KV_ERANGE,
                           "KV bytes per token overflow (%u layers, %u KV heads, head dim %u)",
                           m->num_layers, h, m->head_dim);
    out->bytes_per_token_rank = (double)out->bpt_rank_num / (double)out->bpt_rank_den;
    double weights = ceil((double)m->num_params * m->weight_bytes);
    out->weight_bytes_rank = (uint64_t)ceil(weights / ((double)tp * pp));
    return 0;
}

uint64_t kv_block_bytes(const kv_shard *s, uint32_t block_size)
{
    uint64_t v;
    if (s->bpt_rank_den == 0 || !muldiv(block_size, s->bpt_rank_num, s->bpt_rank_den, true, &v))
        return UINT64_MAX;
    return v;
}

/* ---- capacity ------------------------------------------------------------------------- */

int kv_capacity_from_budget(const kv_shard *s, uint64_t kv_budget_bytes, uint32_t block_size,
                            kv_capacity *out, kv_diag *diag)
{
    char a[64], b[64];
    memset(out, 0, sizeof *out);
    if (block_size == 0)
        return kv_diag_set(diag, -KV_EINVAL, "block size must be >= 1");
    uint64_t block = kv_block_bytes(s, block_size);
    if (block == UINT64_MAX)
        return kv_diag_set(diag, -KV_ERANGE, "one block of %u tokens overflows 64-bit bytes",
                           block_size);
    uint64_t n = kv_budget_bytes / block;
    kv_format_size(a, sizeof a, (double)kv_budget_bytes);
    kv_format_size(b, sizeof b, (double)block);
    if (n < 2)
        return kv_diag_set(diag, -KV_ECAPACITY,
                           "KV budget %s holds %llu blocks of %s; at least 2 are needed "
                           "(block 0 is the null block)",
                           a, (unsigned long long)n, b);
    if (n > UINT32_MAX)
        return kv_diag_set(diag, -KV_ERANGE, "KV budget %s holds %llu blocks of %s, more than %lu",
                           a, (unsigned long long)n, b, (unsigned long)UINT32_MAX);
    out->kv_budget_bytes = kv_budget_bytes;
    out->block_bytes = block;
    out->num_blocks = (uint32_t)n;
    out->usable_blocks = (uint32_t)n - 1;
    /* c_rank ≥ 1 byte (2 elements of at least half a byte), so this never overflows. */
    muldiv(kv_budget_bytes, s->bpt_rank_den, s->bpt_rank_num, false, &out->max_tokens);
    return 0;
}

int kv_capacity_from_gpu(const kv_shard *s, const kv_gpu *g, double util, uint64_t reserve_bytes,
                         uint32_t block_size, kv_capacity *out, kv_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (!(util > 0.0 && util <= 1.0))
        return kv_diag_set(diag, -KV_EINVAL, "GPU memory utilisation %g is not in (0, 1]", util);
    uint64_t usable = (uint64_t)floor(util * (double)g->mem_bytes);
    uint64_t taken = s->weight_bytes_rank + reserve_bytes;
    if (taken < reserve_bytes || usable <= taken) {
        char u[64], w[64], r[64];
        kv_format_size(u, sizeof u, (double)usable);
        kv_format_size(w, sizeof w, (double)s->weight_bytes_rank);
        kv_format_size(r, sizeof r, (double)reserve_bytes);
        return kv_diag_set(diag, -KV_ECAPACITY,
                           "no memory left for the KV cache on %s: %g x memory = %s, minus "
                           "weights %s per rank, minus reserve %s",
                           g->name, util, u, w, r);
    }
    return kv_capacity_from_budget(s, usable - taken, block_size, out, diag);
}

int kv_capacity_from_blocks(const kv_shard *s, uint32_t num_blocks, uint32_t block_size,
                            kv_capacity *out, kv_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (block_size == 0)
        return kv_diag_set(diag, -KV_EINVAL, "block size must be >= 1");
    if (num_blocks < 2)
        return kv_diag_set(diag, -KV_ECAPACITY,
                           "%u blocks leave none usable (block 0 is the null block)", num_blocks);
    uint64_t block = kv_block_bytes(s, block_size), budget;
    if (block == UINT64_MAX || !mul_ok(block, num_blocks, &budget))
        return kv_diag_set(diag, -KV_ERANGE, "%u blocks of %u tokens overflow 64-bit bytes",
                           num_blocks, block_size);
    return kv_capacity_from_budget(s, budget, block_size, out, diag);
}

/* ---- ledgers -------------------------------------------------------------------------- */

void kv_ledgers_compute(double bytes_per_token, const uint64_t *lengths, size_t n,
                        uint32_t block_size, uint64_t shared_prefix, kv_ledgers *out)
{
    memset(out, 0, sizeof *out);
    uint64_t b = block_size ? block_size : 1, max_len = 0, max_shared = 0, private_blocks = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t t = lengths[i], blocks = t / b + (t % b != 0);
        /* Full blocks lying wholly inside the common prefix: the pool shares only full
         * blocks (a partial block is never hashed), so these are one physical copy. */
        uint64_t shared = (t < shared_prefix ? t : shared_prefix) / b;
        out->effective_tokens += t;
        out->logical_blocks += blocks;
        private_blocks += blocks - shared;
        if (shared > max_shared)
            max_shared = shared;
        if (t > max_len)
            max_len = t;
    }
    out->padded_tokens = (uint64_t)n * max_len;
    out->allocated_tokens = b * out->logical_blocks;
    out->tail_waste_tokens = out->allocated_tokens - out->effective_tokens;
    out->physical_blocks = max_shared + private_blocks;
    double c = bytes_per_token;
    out->effective_bytes = c * (double)out->effective_tokens;
    out->padded_bytes = c * (double)out->padded_tokens;
    out->paged_bytes = c * (double)out->allocated_tokens;
    out->tail_waste_bytes = c * (double)out->tail_waste_tokens;
    out->physical_bytes = c * (double)b * (double)out->physical_blocks;
}

/* ---- sizes ---------------------------------------------------------------------------- */

static const struct {
    const char *unit;
    uint64_t mult;
} size_units[] = {
    {"B", 1},
    {"KiB", 1ull << 10},
    {"MiB", 1ull << 20},
    {"GiB", 1ull << 30},
    {"TiB", 1ull << 40},
    {"PiB", 1ull << 50},
    {"KB", 1000ull},
    {"kB", 1000ull},
    {"MB", 1000000ull},
    {"GB", 1000000000ull},
    {"TB", 1000000000000ull},
    {"PB", 1000000000000000ull},
};

#define SIZE_UNITS_HELP "B, KiB, MiB, GiB, TiB, PiB (x1024) or KB, MB, GB, TB, PB (x1000)"

/* 10^k for k ≤ 19, the powers that fit 64 bits. */
static uint64_t pow10_u64(unsigned k)
{
    uint64_t p = 1;
    while (k--)
        p *= 10;
    return p;
}

enum { SIZE_OK, SIZE_TOO_LARGE, SIZE_TOO_PRECISE };

/* ⌊D · 10^e · mult⌋ for the lexed number, D its significant digits as an integer and e
 * the power of ten of the last one, in exact integers.  SIZE_TOO_LARGE when the result
 * exceeds 64 bits, SIZE_TOO_PRECISE when D has more than 19 significant digits (it would
 * not fit 64 bits) yet the value is small enough ("1.00000000000000000001GiB"). */
static int exact_size(const kv_number_parts *lx, uint64_t mult, uint64_t *out)
{
    /* Significant digits: leading zeros dropped, trailing zeros moved into e; at most 20
     * are kept (20 already means too many). */
    char dig[20];
    size_t k = 0, more = 0; /* more: significant digits past dig[] (each ×10) */
    long e = lx->exponent - (long)lx->n_frac;
    size_t zeros = 0; /* zeros seen since the last non-zero digit, not yet stored */
    for (size_t i = 0; i < lx->n_int + lx->n_frac; i++) {
        char c = i < lx->n_int ? lx->int_digits[i] : lx->frac_digits[i - lx->n_int];
        if (c == '0') {
            if (k > 0)
                zeros++;
            continue;
        }
        for (; zeros > 0; zeros--) { /* the zeros were inside the number: they count */
            if (k < sizeof dig)
                dig[k++] = '0';
            else
                more++;
        }
        if (k < sizeof dig)
            dig[k++] = c;
        else
            more++;
    }
    e += (long)zeros; /* trailing zeros */
    if (k == 0) {
        *out = 0;
        return SIZE_OK;
    }
    /* The value has (k + more + e) digits before the point; ≥ 20 is at least 10^19. */
    long int_len = (long)(k + more) + e;
    if (int_len > 19)
        return SIZE_TOO_LARGE;
    if (k + more > 19)
        return SIZE_TOO_PRECISE;
    uint64_t d = 0;
    for (size_t i = 0; i < k; i++)
        d = d * 10 + (uint64_t)(dig[i] - '0');
    uint64_t v;
    if (e >= 0) {
        if (!mul_ok(d, pow10_u64((unsigned)e), &v) || !mul_ok(v, mult, &v))
            return SIZE_TOO_LARGE;
        *out = v;
        return SIZE_OK;
    }
    /* ⌊d·mult / 10^−e⌋, dividing by at most 10^19 at a time: ⌊⌊x/a⌋/b⌋ = ⌊x/(ab)⌋. */
    uint64_t neg = (uint64_t)-e;
    unsigned first = neg > 19 ? 19 : (unsigned)neg;
    if (!muldiv(d, mult, pow10_u64(first), false, &v))
        return SIZE_TOO_LARGE;
    neg -= first;
    *out = neg > 19 ? 0 : v / pow10_u64((unsigned)neg);
    return SIZE_OK;
}

/* SIZE = number [" "] [unit]: the number in the one grammar (kvsim/text.h), converted
 * exactly; the byte count is rounded down. */
static int parse_size(const char *text, bool allow_zero, uint64_t *out, kv_diag *diag)
{
    char sb[KV_SHOWN_MAX], ub[KV_SHOWN_MAX];
    const char *s = kv_shown(text, sb); /* as messages quote it */
    kv_number_parts lx;
    if (!kv_number_lex(text, strlen(text), &lx))
        return kv_diag_set(diag, -KV_EINVAL,
                           "invalid size '%s' (expected a number and a unit: " SIZE_UNITS_HELP ")",
                           s);
    const char *p = text + lx.len;
    if (*p == ' ')
        p++;
    uint64_t mult = 0;
    if (*p == '\0') {
        mult = 1;
    } else {
        for (size_t i = 0; i < sizeof size_units / sizeof size_units[0]; i++)
            if (strcmp(p, size_units[i].unit) == 0)
                mult = size_units[i].mult;
    }
    if (mult == 0) {
        char u = (char)toupper((unsigned char)*p);
        if (*p && strchr("KMGTP", u) && (p[1] == '\0' || strcmp(p + 1, "i") == 0))
            return kv_diag_set(diag, -KV_EINVAL,
                               "ambiguous unit '%s' in size '%s' (use %ciB for powers of 1024 "
                               "or %cB for powers of 1000)",
                               kv_shown(p, ub), s, u, u);
        return kv_diag_set(diag, -KV_EINVAL,
                           "unknown unit '%s' in size '%s' (known: " SIZE_UNITS_HELP ")",
                           kv_shown(p, ub), s);
    }
    uint64_t v = 0;
    int why = exact_size(&lx, mult, &v);
    if (lx.negative && (why != SIZE_OK || v > 0))
        return kv_diag_set(diag, -KV_ERANGE, "size '%s' must not be negative", s);
    if (why == SIZE_TOO_PRECISE)
        return kv_diag_set(diag, -KV_EINVAL, "size '%s' has more than 19 significant digits", s);
    if (why == SIZE_TOO_LARGE || v > (uint64_t)INT64_MAX)
        return kv_diag_set(diag, -KV_ERANGE, "size '%s' is too large (the limit is 8 EiB)", s);
    if (v == 0 && !allow_zero)
        return kv_diag_set(diag, -KV_ERANGE, "size '%s' must be at least 1 byte", s);
    *out = v;
    return 0;
}

int kv_parse_size(const char *s, uint64_t *out, kv_diag *diag)
{
    return parse_size(s, false, out, diag);
}

int kv_parse_size_or_zero(const char *s, uint64_t *out, kv_diag *diag)
{
    return parse_size(s, true, out, diag);
}

void kv_format_size(char *buf, size_t n, double bytes)
{
    static const char *bin[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    static const char *dec[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    if (!(bytes >= 1000.0)) {
        if (bytes == floor(bytes))
            snprintf(buf, n, "%.0f B", bytes);
        else
            snprintf(buf, n, "%.2f B", bytes);
        return;
    }
    int bi = 0, di = 0;
    double bv = bytes, dv = bytes;
    while (bv >= 1024.0 && bi < 5) {
        bv /= 1024.0;
        bi++;
    }
    while (dv >= 1000.0 && di < 5) {
        dv /= 1000.0;
        di++;
    }
    if (bi == 0)
        snprintf(buf, n, "%.0f B (%.2f %s)", bytes, dv, dec[di]);
    else
        snprintf(buf, n, "%.2f %s (%.2f %s)", bv, bin[bi], dv, dec[di]);
}
