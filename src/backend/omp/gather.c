/* gather.c - the omp backend's batch gather (backend.h gather), rows over the
 * threads; each row elementwise.c's ffnn_omp_gather_rows. */
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend/cpu/cpu_math.h"
#include "backend/cpu/cpu_ops.h"
#include "core/error.h"
#include "omp_kernels.h"

typedef struct gather_job {
    const ffnn_gather_source *src;
    const int32_t *index;
    float *x;
    int32_t *y;
    float *t;
} gather_job;

static void gather_range(void *u, size_t begin, size_t end, size_t id)
{
    (void)id;
    const gather_job *j = u;
    for (size_t b = begin; b < end; b++)
        ffnn_omp_gather_rows(j->src, j->index, j->x, j->y, j->t, b, b + 1);
}

ffnn_status ffnn_omp_gather(void *vctx, const ffnn_gather_source *src, const int32_t *index,
                            size_t batch, float *x, int32_t *y, float *t)
{
    const ffnn_omp_ctx *ctx = vctx;
    if (!src || (!src->images == !src->values) || (src->labels && !y) || (src->targets && !t))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp gather: expected one of images/values, and y (t) with labels "
                         "(targets)");
    const int nt = ffnn_omp_team(ctx, batch * src->features, FFNN_OMP_GATHER_MIN_PARALLEL);
    gather_job j = {src, index, x, y, t};
    ffnn_omp_run(ctx, nt, batch, gather_range, &j);
    return FFNN_OK;
}
