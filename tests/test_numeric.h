/* test_numeric.h - the shared numeric helpers of the kernel tests: a small seeded
 * generator for fresh random inputs, NaN-poisoned output buffers (an element the
 * code under test forgets to write fails the comparison) and one comparison with
 * absolute + relative tolerance that reports the first fault. */
#ifndef FFNN_TEST_NUMERIC_H
#define FFNN_TEST_NUMERIC_H

#include <stddef.h>
#include <stdint.h>

typedef struct rng {
    uint64_t state; /* xorshift64*; any non-zero seed */
} rng;

uint64_t rng_next(rng *r);
/* Uniform in [lo, hi) with 24 random bits. */
float rng_uniform(rng *r, float lo, float hi);
/* Uniform integer in [lo, hi]. */
size_t rng_between(rng *r, size_t lo, size_t hi);
void fill_uniform(rng *r, float *v, size_t n, float lo, float hi);
/* n floats of 0xFF bytes (NaN), malloc'd (caller frees); NULL when out of memory. */
float *poisoned(size_t n);
/* 1 when |got - want| <= atol + rtol |want| everywhere (NaN fails); else prints how
 * many differ, the first index with both values and the largest difference. */
int close_f32(const char *what, const float *got, const float *want, size_t n, double atol,
              double rtol);

#endif
