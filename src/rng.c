/* rng: xoshiro256** (Blackman & Vigna), seeded by splitmix64, plus the few distributions
 * kvsim draws from.  Deterministic across platforms: only integer ops and IEEE doubles
 * through libm's log/sqrt/cos, which glibc rounds correctly for these uses. */
#include "kvsim/rng.h"

#include <math.h>

uint64_t kv_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void kv_rng_seed(kv_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = kv_splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t kv_rng_next(kv_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double kv_rng_uniform(kv_rng *r)
{
    return (double)(kv_rng_next(r) >> 11) * 0x1.0p-53;
}

double kv_rng_uniform_pos(kv_rng *r)
{
    return ((double)(kv_rng_next(r) >> 11) + 1.0) * 0x1.0p-53;
}

double kv_rng_exponential(kv_rng *r, double rate)
{
    return -log(kv_rng_uniform_pos(r)) / rate;
}

double kv_rng_normal(kv_rng *r)
{
    double u1 = kv_rng_uniform_pos(r), u2 = kv_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

double kv_rng_gamma(kv_rng *r, double shape, double scale)
{
    if (shape < 1.0) {
        double u = kv_rng_uniform_pos(r);
        return kv_rng_gamma(r, shape + 1.0, scale) * pow(u, 1.0 / shape);
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            x = kv_rng_normal(r);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        double u = kv_rng_uniform_pos(r);
        if (u < 1.0 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
            return d * v * scale;
    }
}

uint64_t kv_rng_below(kv_rng *r, uint64_t n)
{
    /* Rejection sampling on the largest multiple of n: unbiased, portable C11. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = kv_rng_next(r);
    while (x >= limit);
    return x % n;
}
