/* update.c - the omp backend's parameter updates (backend.h optimizer_update,
 * grad_clip, ema_update) in fixed chunks of elements over the threads
 * (ffnn_omp_for_chunks); the per-element loops are elementwise.c's and cpu_math.h's. */
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend/cpu/cpu_math.h"
#include "backend/cpu/cpu_ops.h"
#include "core/error.h"
#include "omp_kernels.h"

typedef struct update_job {
    const ffnn_optimizer_step *step;
    float *a;          /* params, grads (clipping), ema */
    const float *b;    /* grads, params (ema)           */
    float *state;
    size_t n;
    float x, y;        /* max_value or coef; decay, one_minus_decay */
    double *part;      /* per-chunk sums of squares     */
} update_job;

static void optimizer_chunk(void *u, size_t c, size_t begin, size_t end)
{
    (void)c;
    const update_job *j = u;
    ffnn_omp_optimizer_update_range(j->step, j->a, j->b, j->state, j->n, begin, end);
}

static void clip_value_chunk(void *u, size_t c, size_t begin, size_t end)
{
    (void)c;
    const update_job *j = u;
    ffnn_cpu_grad_clip_value(j->a, begin, end, j->x);
}

static void sum_squares_chunk(void *u, size_t c, size_t begin, size_t end)
{
    const update_job *j = u;
    j->part[c] = ffnn_cpu_grad_clip_sum_squares(j->a, begin, end);
}

static void clip_scale_chunk(void *u, size_t c, size_t begin, size_t end)
{
    (void)c;
    const update_job *j = u;
    ffnn_cpu_grad_clip_scale(j->a, begin, end, j->x);
}

static void ema_chunk(void *u, size_t c, size_t begin, size_t end)
{
    (void)c;
    const update_job *j = u;
    ffnn_cpu_ema_update(j->a, j->b, begin, end, j->x, j->y);
}

ffnn_status ffnn_omp_optimizer_update(void *vctx, const ffnn_optimizer_step *step,
                                      float *params, const float *grads, float *state,
                                      size_t n)
{
    const ffnn_omp_ctx *ctx = vctx;
    if ((int)step->kind < FFNN_OPT_SGD || (int)step->kind > FFNN_OPT_ADAMW)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp optimizer_update: unknown optimizer %d", (int)step->kind);
    update_job j = {.step = step, .a = params, .b = grads, .state = state, .n = n};
    ffnn_omp_for_chunks(ctx, n, optimizer_chunk, &j);
    return FFNN_OK;
}

/* Clipping: clamp and scale in chunks; the norm's sum of squares per chunk in
 * double, the chunks' sums added in chunk order (the same for every thread count). */
ffnn_status ffnn_omp_grad_clip(void *vctx, float *grads, size_t n, float max_norm,
                               float max_value, float *norm_out)
{
    const ffnn_omp_ctx *ctx = vctx;
    update_job j = {.a = grads, .x = max_value};
    if (max_value > 0.0f)
        ffnn_omp_for_chunks(ctx, n, clip_value_chunk, &j);
    if (max_norm > 0.0f) {
        const long chunks = (long)ffnn_omp_ceil_div(n, FFNN_OMP_ELEMENTWISE_CHUNK);
        double *part = malloc((size_t)(chunks > 0 ? chunks : 1) * sizeof *part);
        if (!part)
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "omp grad_clip: out of memory");
        j.part = part;
        ffnn_omp_for_chunks(ctx, n, sum_squares_chunk, &j);
        double sum = 0.0;
        for (long c = 0; c < chunks; c++)
            sum += part[c];
        free(part);
        const float norm = (float)sqrt(sum);
        const float coef = ffnn_clip_coef(max_norm, norm);
        j.x = coef;
        ffnn_omp_for_chunks(ctx, n, clip_scale_chunk, &j);
        if (norm_out)
            *norm_out = norm;
    }
    return FFNN_OK;
}

ffnn_status ffnn_omp_ema_update(void *vctx, float *ema, const float *params, size_t n,
                                float decay, float one_minus_decay)
{
    const ffnn_omp_ctx *ctx = vctx;
    update_job j = {.a = ema, .b = params, .x = decay, .y = one_minus_decay};
    ffnn_omp_for_chunks(ctx, n, ema_chunk, &j);
    return FFNN_OK;
}
