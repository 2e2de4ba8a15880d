/* loss.c - the omp backend's loss (backend.h loss) in chunks of rows over the
 * threads, each row the reference's (cpu/loss.c ffnn_cpu_loss_rows), and its
 * "weights" extension (the reference's, on the calling thread). */
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend/cpu/cpu_math.h"
#include "backend/cpu/cpu_ops.h"
#include "core/error.h"
#include "omp_kernels.h"

typedef struct loss_job {
    ffnn_loss loss;
    const float *out;
    const int32_t *y;
    const float *targets;
    size_t batch, width;
    float *dout, *row_loss;
    uint8_t *row_correct;
} loss_job;

/* Rows [begin, end) of block c. */
static void loss_block(void *u, size_t c, size_t begin, size_t end)
{
    (void)c;
    const loss_job *j = u;
    ffnn_cpu_loss_rows(j->loss, j->out, j->y, j->targets, j->batch, j->width, j->dout,
                       j->row_loss, j->row_correct, begin, end);
}

ffnn_status ffnn_omp_loss(void *vctx, ffnn_loss loss, const float *out, const int32_t *y,
                          const float *targets, size_t batch, size_t width, float *dout,
                          float *row_loss, uint8_t *row_correct)
{
    if (targets && loss == FFNN_LOSS_SOFTMAX_CE)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp loss: softmax_ce takes class labels, not float targets");
    if (!targets && !y)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "omp loss: neither labels nor targets");
    const ffnn_omp_ctx *ctx = vctx;
    /* chunks of rows, about FFNN_OMP_ELEMENTWISE_CHUNK / 4 values each */
    const size_t quarter = FFNN_OMP_ELEMENTWISE_CHUNK / 4;
    const size_t per = width >= quarter ? 1 : quarter / width;
    const int nt = ffnn_omp_team(ctx, batch * width, FFNN_OMP_LOSS_MIN_PARALLEL);
    loss_job j = {loss, out, y, targets, batch, width, dout, row_loss, row_correct};
    ffnn_omp_for_blocks(ctx, nt, batch, per, loss_block, &j);
    return FFNN_OK;
}

ffnn_status ffnn_omp_loss_weights(void *ctx, const float *weights, const int32_t *index,
                                  size_t batch, size_t width, float *dout)
{
    (void)ctx;
    ffnn_cpu_loss_weights(weights, index, batch, width, dout);
    return FFNN_OK;
}
