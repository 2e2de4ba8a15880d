/* rng.h - ffnn's documented random generator: xoshiro256** (Blackman & Vigna,
 * https://prng.di.unimi.it/) with its state filled from the seed by splitmix64.
 * Used for initial weights and for the per-epoch permutation, so runs are
 * reproducible from the seed alone. */
#ifndef FFNN_RNG_H
#define FFNN_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct ffnn_rng {
    uint64_t s[4];
} ffnn_rng;

/* Streams derived from one user seed (so init and shuffling are independent);
 * the synthetic data sets (src/data/synth.c) draw their training set from
 * FFNN_STREAM_SYNTH_TRAIN and their test set from FFNN_STREAM_SYNTH_TEST. */
enum {
    FFNN_STREAM_INIT = 0,
    FFNN_STREAM_SHUFFLE = 1,
    FFNN_STREAM_SYNTH_TRAIN = 2,
    FFNN_STREAM_SYNTH_TEST = 3,
    FFNN_STREAM_SPLIT = 4  /* ffnn_dataset_split's permutation (src/data/split.c) */
};

void ffnn_rng_seed(ffnn_rng *r, uint64_t seed, uint64_t stream);
uint64_t ffnn_rng_next(ffnn_rng *r);
/* Uniform float in [0, 1) with 24 random bits. */
float ffnn_rng_uniform(ffnn_rng *r);
/* Uniform integer in [0, n) (n >= 1), by Lemire's multiply-shift (bias < 2^-32 * n). */
uint32_t ffnn_rng_below(ffnn_rng *r, uint32_t n);
/* Fisher-Yates shuffle of index[0..n): for i = n-1 .. 1, swap(i, below(i+1)). */
void ffnn_rng_shuffle(ffnn_rng *r, int32_t *index, size_t n);

#endif
