/* activation.c - the omp backend's activations (backend.h activation_forward,
 * activation_backward) and dropout, in fixed chunks of elements over the threads
 * (ffnn_omp_for_chunks); the per-element loops are elementwise.c's (compiled per
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

typedef struct act_job {
    ffnn_activation act;
    float param;
    const float *in, *da;
    float *out;
    uint64_t key;
    uint32_t threshold;
    float scale;
} act_job;

static void act_forward_chunk(void *u, size_t c, size_t begin, size_t end)
{
    (void)c;
    const act_job *j = u;
    ffnn_omp_activation_forward_range(j->act, j->param, j->in, j->out, begin, end);
}

static void act_backward_chunk(void *u, size_t c, size_t begin, size_t end)
{
    (void)c;
    const act_job *j = u;
    ffnn_omp_activation_backward_range(j->act, j->param, j->in, j->da, j->out, begin, end);
}

static void dropout_chunk(void *u, size_t c, size_t begin, size_t end)
{
    (void)c;
    const act_job *j = u;
    ffnn_cpu_dropout(j->in, j->out, begin, end, j->key, j->threshold, j->scale);
}

ffnn_status ffnn_omp_activation_forward(void *vctx, ffnn_activation act, float param,
                                        const float *z, float *a, size_t n)
{
    act_job j = {.act = act, .param = param, .in = z, .out = a};
    ffnn_omp_for_chunks(vctx, n, act_forward_chunk, &j);
    return FFNN_OK;
}

ffnn_status ffnn_omp_activation_backward(void *vctx, ffnn_activation act, float param,
                                         const float *saved, const float *da, float *dz,
                                         size_t n)
{
    act_job j = {.act = act, .param = param, .in = saved, .da = da, .out = dz};
    ffnn_omp_for_chunks(vctx, n, act_backward_chunk, &j);
    return FFNN_OK;
}

ffnn_status ffnn_omp_dropout(void *vctx, const float *in, float *out, size_t n, uint64_t key,
                             uint32_t threshold, float scale)
{
    act_job j = {.in = in, .out = out, .key = key, .threshold = threshold, .scale = scale};
    ffnn_omp_for_chunks(vctx, n, dropout_chunk, &j);
    return FFNN_OK;
}
