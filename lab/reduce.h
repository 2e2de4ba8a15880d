/*
 * reduce.h - the reduction lab (reduce.cu, `ffnn bench modular` part c): the softmax
 * cross-entropy of logits [B, C] against labels [B], summed over the batch, by three
 * variants: atomic (per-row loss, atomicAdd into *out after a cudaMemsetAsync), tree
 * (one block of 1024 threads, shared-memory tree), shuffle (one block of 1024
 * threads, warp shuffles). The names are inline (every build); the sum needs CUDA
 * (FFNN_HAVE_CUDA).
 */
#ifndef FFNN_LAB_REDUCE_H
#define FFNN_LAB_REDUCE_H

#include <stdint.h>

#include "ffnn.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { FFNN_REDUCE_ATOMIC = 0, FFNN_REDUCE_TREE = 1, FFNN_REDUCE_SHUFFLE = 2,
       FFNN_REDUCE_VARIANTS = 3 };

static inline const char *ffnn_reduce_lab_name(int variant)
{
    static const char *const names[FFNN_REDUCE_VARIANTS] = {"atomic", "shared_tree",
                                                            "warp_shuffle"};
    return variant >= 0 && variant < FFNN_REDUCE_VARIANTS ? names[variant] : "?";
}

/* *out (device float) = sum over b < B of the softmax cross-entropy of logits [B, C]
 * (device) against labels [B] (device uint8) by `variant`, queued on stream. */
ffnn_status ffnn_reduce_lab_ce_sum(int variant, const float *logits, const uint8_t *labels,
                                   int B, int C, float *out, void *stream);

#ifdef __cplusplus
}
#endif
#endif
