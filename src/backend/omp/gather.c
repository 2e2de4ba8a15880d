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

ffnn_status ffnn_omp_gather(void *vctx, const ffnn_gather_source *src, const int32_t *index,
                            size_t batch, float *x, int32_t *y, float *t)
{
    const ffnn_omp_ctx *ctx = vctx;
    if (!src || (!src->images == !src->values) || (src->labels && !y) || (src->targets && !t))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp gather: expected one of images/values, and y (t) with labels "
                         "(targets)");
    const long rows = (long)batch;
    const int nt = ffnn_omp_team(ctx, batch * src->features, FFNN_OMP_GATHER_MIN_PARALLEL);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long b = 0; b < rows; b++)
        ffnn_omp_gather_rows(src, index, x, y, t, (size_t)b, (size_t)b + 1);
    return FFNN_OK;
}
