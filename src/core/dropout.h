/* dropout.h - the dropout mask generator, shared by every backend (a header of
 * static inline integer functions, so that the CUDA kernels use the same code):
 * counter-based, keyed by (seed, optimizer step, layer), counter = element.
 *
 *   key(seed, t, layer) = mix(mix(seed ^ mix(t + 1)) + layer + 1)   (host, once per
 *                                                                     step and layer)
 *   bits(key, i)        = mix(key + (i + 1) * 0x9E3779B97F4A7C15) >> 32
 *   keep(i)             = bits(key, i) >= threshold,  threshold = round(p 2^32)
 *
 * mix is SplitMix64's finaliser (Steele, Lea, Flood 2014; the output function of
 * java.util.SplittableRandom): bits(key, i) is SplitMix64's (i+1)-th output from
 * state key. Element i of a layer's output [batch, width] is i = b width + j. So a
 * mask depends on nothing but the seed, the step, the layer and the element: cpu,
 * omp and cuda draw the same one (PyTorch's masks come from its own generator). */
#ifndef FFNN_CORE_DROPOUT_H
#define FFNN_CORE_DROPOUT_H

#include <stdint.h>

#if defined(__CUDACC__)
#define FFNN_DROPOUT_FN static __host__ __device__ __forceinline__
#else
#define FFNN_DROPOUT_FN static inline
#endif

/* SplitMix64's finaliser (a bijection of 64-bit words). */
FFNN_DROPOUT_FN uint64_t ffnn_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The stream of one layer's mask at optimizer step t (1-based). */
FFNN_DROPOUT_FN uint64_t ffnn_dropout_key(uint64_t seed, uint64_t t, int layer)
{
    return ffnn_mix64(ffnn_mix64(seed ^ ffnn_mix64(t + 1)) + (uint64_t)layer + 1);
}

/* The stream `key` advanced by `offset` elements: keep(ffnn_dropout_key_at(key, o), i)
 * is keep(key, o + i) (SplitMix64's state steps by its gamma). */
FFNN_DROPOUT_FN uint64_t ffnn_dropout_key_at(uint64_t key, uint64_t offset)
{
    return key + offset * 0x9E3779B97F4A7C15ULL;
}

/* 1 when element i is kept (not dropped). */
FFNN_DROPOUT_FN int ffnn_dropout_keep(uint64_t key, uint64_t i, uint32_t threshold)
{
    return (uint32_t)(ffnn_mix64(key + (i + 1) * 0x9E3779B97F4A7C15ULL) >> 32) >= threshold;
}

/* threshold = round(p 2^32) for p in [0, 1): the probability of a drop is
 * threshold / 2^32, within 2^-33 of p. */
FFNN_DROPOUT_FN uint32_t ffnn_dropout_threshold(double p)
{
    const double t = p * 4294967296.0 + 0.5;
    return t >= 4294967295.0 ? 4294967295u : (uint32_t)t;
}

/* The kept values' scale 1 / (1 - p), in float as PyTorch: 1.0f / (float)(1 - p). */
FFNN_DROPOUT_FN float ffnn_dropout_scale(double p) { return 1.0f / (float)(1.0 - p); }

#endif
