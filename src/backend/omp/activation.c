/* activation.c - the omp backend's activations (backend.h activation_forward,
 * activation_backward) and dropout, in fixed chunks of elements over the threads
 * (FFNN_OMP_FOR_CHUNKS); the per-element loops are elementwise.c's (compiled per
 * instruction set) and cpu_math.h's. */
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend/cpu/cpu_math.h"
#include "backend/cpu/cpu_ops.h"
#include "core/error.h"
#include "omp_kernels.h"

ffnn_status ffnn_omp_activation_forward(void *vctx, ffnn_activation act, float param,
                                        const float *z, float *a, size_t n)
{
    const ffnn_omp_ctx *ctx = vctx;
    FFNN_OMP_FOR_CHUNKS(ctx, n, c, begin, end,
                        ffnn_omp_activation_forward_range(act, param, z, a, begin, end));
    return FFNN_OK;
}

ffnn_status ffnn_omp_activation_backward(void *vctx, ffnn_activation act, float param,
                                         const float *saved, const float *da, float *dz,
                                         size_t n)
{
    const ffnn_omp_ctx *ctx = vctx;
    FFNN_OMP_FOR_CHUNKS(ctx, n, c, begin, end,
                        ffnn_omp_activation_backward_range(act, param, saved, da, dz, begin,
                                                           end));
    return FFNN_OK;
}

ffnn_status ffnn_omp_dropout(void *vctx, const float *in, float *out, size_t n, uint64_t key,
                             uint32_t threshold, float scale)
{
    const ffnn_omp_ctx *ctx = vctx;
    FFNN_OMP_FOR_CHUNKS(ctx, n, c, begin, end,
                        ffnn_cpu_dropout(in, out, begin, end, key, threshold, scale));
    return FFNN_OK;
}
