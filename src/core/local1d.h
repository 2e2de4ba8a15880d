/*
 * local1d.h - the 1-D locally connected layer (seed 002): every output neuron m has
 * its own R weights (no sharing, unlike a convolution) and its own bias.
 *
 *   valid:  M = N - R + 1,   z[b,m] = sum_{r<R} W[m,r] x[b, m + r]          + bias[m]
 *   same :  M = N, R odd,    z[b,m] = sum_{r<R} W[m,r] x[b, m + r - (R-1)/2] + bias[m]
 *           (x outside [0, N) reads as 0: the seed's centred stencil)
 *
 * Shapes: x [batch, N], W [M, R], bias [M] or NULL, z [batch, M].
 * Backward, given dz [batch, M]:
 *   dW[m,r] = sum_b dz[b,m] x[b, m + r - pad]      db[m] = sum_b dz[b,m]
 *   dx[b,n] = sum_{m,r : m + r - pad = n} dz[b,m] W[m,r]
 *
 * These entry points are shared by the trainer's backends and by the seed-002
 * benchmark (`ffnn bench local1d`, whose GPU part runs the kernel lab's
 * lab/local1d_stream.h). CUDA variants: global (operands from global
 * memory) and shared (a block's input tile plus its halo of R-1 values staged in
 * shared memory); src/backend/cuda/local1d.cu describes both. Output counts are 64-bit
 * (seed 002's int counter overflowed at K = 4000).
 */
#ifndef FFNN_LOCAL1D_H
#define FFNN_LOCAL1D_H

#include <stddef.h>

#include "ffnn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ffnn_local1d_padding {
    FFNN_LOCAL1D_VALID = 0, /* M = N - R + 1 */
    FFNN_LOCAL1D_SAME = 1   /* M = N, (R-1)/2 zeros each side, R odd */
} ffnn_local1d_padding;

typedef enum ffnn_local1d_variant {
    FFNN_LOCAL1D_GLOBAL = 0, /* one thread per output, operands from global memory */
    FFNN_LOCAL1D_SHARED = 1  /* input tile + halo in shared memory                  */
} ffnn_local1d_variant;

/* Output width M for input width N (0 when the combination is invalid). */
size_t ffnn_local1d_output_size(size_t N, size_t R, ffnn_local1d_padding padding);

/* FFNN_OK when the combination has outputs; else FFNN_ERR_INVALID_ARGUMENT, "WHO:
 * N=.. R=.. same|valid has no outputs" (who: the op, e.g. "cpu local1d_forward"). */
ffnn_status ffnn_local1d_check_outputs(const char *who, size_t N, size_t R,
                                       ffnn_local1d_padding padding);

/* Zero inputs a local1d layer reads before x[0]: (R-1)/2 for same, 0 for valid.
 * Input n = m + r - pad feeds output m through W[m, r]. */
size_t ffnn_local1d_pad(size_t R, ffnn_local1d_padding padding);

/* CPU reference (single thread): z = local1d(x) then a = act(z) in place when act
 * is not identity (fused for the benchmark; the trainer passes identity). */
void ffnn_cpu_local1d_forward(const float *x, const float *W, const float *bias, float *z,
                              size_t batch, size_t N, size_t R, ffnn_local1d_padding padding,
                              ffnn_activation act);
/* OpenMP version of the same (threads <= 0: all); deterministic. */
void ffnn_omp_local1d_forward_threads(const float *x, const float *W, const float *bias, float *z,
                              size_t batch, size_t N, size_t R, ffnn_local1d_padding padding,
                              ffnn_activation act, int threads);

#ifdef __cplusplus
}
#endif
#endif
