/*
 * local1d_stream.h - the kernel lab's 1-D locally connected forward (seed 002) on a
 * caller's stream, with no backend context: what `ffnn bench local1d` times on the
 * GPU (bench/local1d_gpu.c) and tests/test_local1d.c checks. It is built from the
 * backend's own kernels and launch (src/backend/cuda/local1d_launch.cuh) into the
 * lab (local1d_stream.cu), so the library's CUDA module carries no such entry
 * point; only with nvcc (callers compile it under FFNN_HAVE_CUDA).
 */
#ifndef FFNN_LAB_LOCAL1D_STREAM_H
#define FFNN_LAB_LOCAL1D_STREAM_H

#include <stddef.h>

#include "ffnn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA forward on device pointers, queued on `stream` (a cudaStream_t passed as
 * void*, NULL = default stream); activation fused. variant: FFNN_LOCAL1D_GLOBAL or
 * FFNN_LOCAL1D_SHARED (src/backend/cuda/local1d.cu describes both). Errors:
 * FFNN_ERR_CUDA (message names file, line, call), FFNN_ERR_INVALID_ARGUMENT;
 * FFNN_ERR_UNSUPPORTED where the program has no CUDA backend (ffnn_has_cuda() 0).
 * Overlap (R <= 8, compute capability >= 9.0): the kernel is launched with
 * programmatic dependent launch, so it may start while the kernels queued before
 * it on `stream` still run, and it reads W and bias before waiting for them; it
 * reads x and writes z only after they have finished. So layers may be chained
 * freely (one call's z the next one's x, buffers reused), but W and bias must not
 * be written by a kernel queued on `stream` since the last copy, event wait or
 * synchronisation there (the benchmark uploads them with copies). The backend's
 * local1d_forward, used by the trainer, does not overlap. */
ffnn_status ffnn_lab_local1d_forward_stream(ffnn_local1d_variant variant, void *stream,
                                            const float *x, const float *W, const float *bias,
                                            float *z, size_t batch, size_t N, size_t R,
                                            ffnn_local1d_padding padding, ffnn_activation act);

#ifdef __cplusplus
}
#endif
#endif
