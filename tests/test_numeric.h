/* test_numeric.h - the shared numeric helpers of the kernel tests: a small seeded
 * generator for fresh random inputs, NaN-poisoned output buffers (an element the
 * code under test forgets to write fails the comparison) and one comparison with
 * absolute + relative tolerance that reports the first fault. */
#ifndef FFNN_TEST_NUMERIC_H
#define FFNN_TEST_NUMERIC_H

#include <stddef.h>
#include <stdint.h>

#include "core/local1d.h"
#include "ffnn.h"

typedef struct rng {
    uint64_t state; /* xorshift64*; any non-zero seed */
} rng;

uint64_t rng_next(rng *r);
/* Uniform in [lo, hi) with 24 random bits. */
float rng_uniform(rng *r, float lo, float hi);
/* Uniform integer in [lo, hi]. */
size_t rng_between(rng *r, size_t lo, size_t hi);
/* Uniform integer in [0, n), n >= 1. */
size_t rng_below(rng *r, size_t n);
void fill_uniform(rng *r, float *v, size_t n, float lo, float hi);
/* n floats of 0xFF bytes (NaN), malloc'd (caller frees); NULL when out of memory. */
float *poisoned(size_t n);
/* 1 when |got - want| <= atol + rtol |want| everywhere (NaN fails); else prints how
 * many differ, the first index with both values and the largest difference. */
int close_f32(const char *what, const float *got, const float *want, size_t n, double atol,
              double rtol);
/* 1 when the bytes are the same (NaN payloads included); else prints the first
 * differing offset (and, for whole floats, both values there). */
int same_bits(const char *what, const void *got, const void *want, size_t bytes);
/* same_bits over n floats. */
int same_f32(const char *what, const float *got, const float *want, size_t n);
/* dst[i] = |src[i]| (dst may equal src). */
void abs_copy(float *dst, const float *src, size_t n);

/* The fp32 matmul tolerance of the kernel tests: |got - want| <= matmul_atol(K) +
 * MATMUL_RTOL |want|, K the summed length. Both sides sum fp32 products in fp32 in
 * another order (or with one fma per term); with inputs in [-1, 1] the difference
 * grows like eps sqrt(K) (measured at 64 x 784 x 256: at most 1.1e-5 on sums of ~7). */
double matmul_atol(size_t K);
#define MATMUL_RTOL 1e-4

/* f rounded to bfloat16 (to nearest even), as a float (finite f). */
float bf16_round(float f);
/* f rounded to TF32 (10 mantissa bits; to nearest, ties away: cvt.rna.tf32.f32). */
float tf32_round(float f);
/* The bf16 bits of f, rounded to nearest even; and the float of bf16 bits. */
uint16_t bf16_bits(float f);
float bf16_value(uint16_t v);

/* The dense shapes of the kernel tests (batch x in -> out): odd, tall-skinny (batch >>
 * width) and the seeds' layers (test_dense_fixed of them), then fresh random ones
 * (batch 1..300, in 1..900, out 1..300) drawn from r: shape i of test_dense_count. */
typedef struct dense_shape {
    size_t batch, in, out;
} dense_shape;
extern const size_t test_dense_fixed, test_dense_count;
dense_shape test_dense_shape(rng *r, size_t i);

/* The local1d shapes of the kernel tests (batch x N, receptive field R, padding):
 * test_l1d_fixed edge cases, then random ones (batch 1..9, R 1..9, odd for same,
 * N R..300): shape i of test_l1d_count. */
typedef struct l1d_shape {
    size_t batch, N, R;
    ffnn_local1d_padding padding;
} l1d_shape;
extern const size_t test_l1d_fixed, test_l1d_count;
l1d_shape test_l1d_shape(rng *r, size_t i);

/* ------------------------------------------------------------ gradient checks */

/* The cpu reference trainer of a finite-difference gradient check: model arch
 * initialised with seed, every parameter times scale (larger weights: sharper,
 * non-trivial gradients), loss, one batch (and evaluation batch) of all `count`
 * rows of ds. The losses at changed parameters come from ffnn_trainer_gradient, or
 * with dropout set from ffnn_trainer_gradient_dropout at step dstep. */
typedef struct test_gc {
    ffnn_model *m;
    ffnn_trainer *t;
    float *p;       /* the model's parameters [n]                      */
    size_t n;
    int32_t *rows;  /* 0 .. count-1 [count]                           */
    size_t count;
    float *grad;    /* [n], for the caller's analytic gradient         */
    int dropout;    /* 0 (the default) or 1, with the step dstep       */
    uint64_t dstep;
} test_gc;

/* Fills *g (on failure what was made is freed); FFNN_ERR_NO_MEMORY, or the
 * library's status (ffnn_last_error() says why). */
ffnn_status test_gc_create(const ffnn_dataset *ds, const char *arch, uint64_t seed,
                           float scale, ffnn_loss loss, test_gc *g);
/* The batch's loss with parameter i set to value (uploaded; p[i] restored after). */
ffnn_status test_gc_loss_at(const test_gc *g, size_t i, float value, double *loss);
/* Frees the trainer, the model, rows and grad (not ds). */
void test_gc_free(test_gc *g);

#endif
