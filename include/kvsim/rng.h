/* rng: the one seeded random source (xoshiro256**, seeded through splitmix64).
 *
 * No globals: every consumer owns a kv_rng seeded from --seed, so equal seeds give
 * byte-identical traces and runs on every machine (integer arithmetic, then doubles from
 * the top 53 bits).
 */
#ifndef KVSIM_RNG_H
#define KVSIM_RNG_H

#include <stdint.h>

typedef struct kv_rng {
    uint64_t s[4];
} kv_rng;

void kv_rng_seed(kv_rng *r, uint64_t seed);
uint64_t kv_rng_next(kv_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double kv_rng_uniform(kv_rng *r);
/* Uniform in (0, 1]: safe for log(). */
double kv_rng_uniform_pos(kv_rng *r);
/* Exponential with the given rate (mean 1/rate), by inversion. */
double kv_rng_exponential(kv_rng *r, double rate);
/* Standard normal (Box–Muller, one value per call; deterministic). */
double kv_rng_normal(kv_rng *r);
/* Gamma(shape k, scale θ), Marsaglia–Tsang; k < 1 by the k+1 boost. */
double kv_rng_gamma(kv_rng *r, double shape, double scale);
/* Uniform integer in [0, n), n ≥ 1 (unbiased rejection). */
uint64_t kv_rng_below(kv_rng *r, uint64_t n);

/* One SplitMix64 draw (Steele, Lea & Flood), advancing *state: state += 0x9E3779B97F4A7C15,
 * then the two xor-shift-multiply rounds and a final xor-shift, all mod 2^64.  The
 * cluster router's tie-break stream (DESIGN §10 C8: state = --seed; seed 0 draws
 * 0xE220A8397B1DCDAF first), and the seeding of kv_rng. */
uint64_t kv_splitmix64(uint64_t *state);

#endif
