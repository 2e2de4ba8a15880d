/* rng.c - xoshiro256** seeded by splitmix64 (see rng.h). */
#include "core/rng.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void ffnn_rng_seed(ffnn_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xD1B54A32D192ED03ull);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ffnn_rng_next(ffnn_rng *r)
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

float ffnn_rng_uniform(ffnn_rng *r)
{
    return (float)(ffnn_rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

uint32_t ffnn_rng_below(ffnn_rng *r, uint32_t n)
{
    return (uint32_t)(((ffnn_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

void ffnn_rng_shuffle(ffnn_rng *r, int32_t *index, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        uint32_t j = ffnn_rng_below(r, (uint32_t)i);
        int32_t tmp = index[i - 1];
        index[i - 1] = index[j];
        index[j] = tmp;
    }
}
