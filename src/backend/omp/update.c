/* update.c - the omp backend's parameter updates (backend.h optimizer_update,
 * grad_clip, ema_update) in fixed chunks of elements over the threads
 * (FFNN_OMP_FOR_CHUNKS); the per-element loops are elementwise.c's and cpu_math.h's. */
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend/cpu/cpu_math.h"
#include "backend/cpu/cpu_ops.h"
#include "core/error.h"
#include "omp_kernels.h"

ffnn_status ffnn_omp_optimizer_update(void *vctx, const ffnn_optimizer_step *step,
                                      float *params, const float *grads, float *state,
                                      size_t n)
{
    const ffnn_omp_ctx *ctx = vctx;
    if ((int)step->kind < FFNN_OPT_SGD || (int)step->kind > FFNN_OPT_ADAMW)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp optimizer_update: unknown optimizer %d", (int)step->kind);
    FFNN_OMP_FOR_CHUNKS(ctx, n, c, begin, end,
                        ffnn_omp_optimizer_update_range(step, params, grads, state, n, begin,
                                                        end));
    return FFNN_OK;
}

/* Clipping: clamp and scale in chunks; the norm's sum of squares per chunk in
 * double, the chunks' sums added in chunk order (the same for every thread count). */
ffnn_status ffnn_omp_grad_clip(void *vctx, float *grads, size_t n, float max_norm,
                               float max_value, float *norm_out)
{
    const ffnn_omp_ctx *ctx = vctx;
    if (max_value > 0.0f)
        FFNN_OMP_FOR_CHUNKS(ctx, n, c, begin, end,
                            ffnn_cpu_grad_clip_value(grads, begin, end, max_value));
    if (max_norm > 0.0f) {
        const long chunks = (long)ffnn_omp_ceil_div(n, FFNN_OMP_ELEMENTWISE_CHUNK);
        double *part = malloc((size_t)(chunks > 0 ? chunks : 1) * sizeof *part);
        if (!part)
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "omp grad_clip: out of memory");
        FFNN_OMP_FOR_CHUNKS(ctx, n, c, begin, end,
                            part[c] = ffnn_cpu_grad_clip_sum_squares(grads, begin, end));
        double sum = 0.0;
        for (long c = 0; c < chunks; c++)
            sum += part[c];
        free(part);
        const float norm = (float)sqrt(sum);
        const float coef = ffnn_clip_coef(max_norm, norm);
        FFNN_OMP_FOR_CHUNKS(ctx, n, c, begin, end,
                            ffnn_cpu_grad_clip_scale(grads, begin, end, coef));
        if (norm_out)
            *norm_out = norm;
    }
    return FFNN_OK;
}

ffnn_status ffnn_omp_ema_update(void *vctx, float *ema, const float *params, size_t n,
                                float decay, float one_minus_decay)
{
    const ffnn_omp_ctx *ctx = vctx;
    FFNN_OMP_FOR_CHUNKS(ctx, n, c, begin, end,
                        ffnn_cpu_ema_update(ema, params, begin, end, decay, one_minus_decay));
    return FFNN_OK;
}
