/* embedding.c - the embedding layer (core/embedding.h) on the pool's threads: the
 * omp backend's embedding_forward / embedding_backward.
 *
 * Work split (ffnn_omp_run, static): the forward pass by rows of the batch (a
 * row's copies: the reference's ffnn_cpu_embedding_forward_rows); the backward
 * pass by table columns (j, e), each zeroed and summed over the batch in order by
 * one thread (ffnn_cpu_embedding_backward_column). Every value is the reference's
 * bits for any thread count: copies, and the same additions in the same order. */
#include "backend/cpu/cpu_ops.h"
#include "core/error.h"
#include "omp_kernels.h"

enum { EMBEDDING_MIN_PARALLEL = 1 << 15 }; /* values moved worth a team */

typedef struct embedding_job {
    const float *x, *W, *dz;
    float *a, *dW;
    size_t batch;
    const ffnn_embedding_spec *s;
} embedding_job;

static void forward_rows(void *u, size_t b0, size_t b1, size_t id)
{
    (void)id;
    const embedding_job *j = u;
    ffnn_cpu_embedding_forward_rows(j->x, j->W, j->a, b0, b1, j->s);
}

/* Columns [c0, c1) of all the tables' columns (table 0's d_0, then table 1's, ...). */
static void backward_columns(void *u, size_t c0, size_t c1, size_t id)
{
    (void)id;
    const embedding_job *job = u;
    const ffnn_embedding_spec *s = job->s;
    size_t j = 0, first = 0; /* table j's columns start at first */
    for (size_t c = c0; c < c1; c++) {
        while (c >= first + s->table[j].dim)
            first += s->table[j++].dim;
        ffnn_cpu_embedding_backward_column(job->x, job->dz, job->dW, job->batch, s, j,
                                           c - first);
    }
}

ffnn_status ffnn_omp_embedding_forward(void *vctx, const float *x, const float *W, float *a,
                                       size_t batch, const ffnn_embedding_spec *spec)
{
    const ffnn_omp_ctx *ctx = vctx;
    embedding_job job = {x, W, NULL, a, NULL, batch, spec};
    ffnn_omp_run(ctx, ffnn_omp_team(ctx, batch * spec->out, EMBEDDING_MIN_PARALLEL), batch,
                 forward_rows, &job);
    return FFNN_OK;
}

ffnn_status ffnn_omp_embedding_backward(void *vctx, const float *x, const float *dz, float *dW,
                                        size_t batch, const ffnn_embedding_spec *spec)
{
    const ffnn_omp_ctx *ctx = vctx;
    embedding_job job = {x, NULL, dz, NULL, dW, batch, spec};
    const size_t columns = spec->out - spec->passed;
    ffnn_omp_run(ctx,
                 ffnn_omp_team(ctx, batch * columns + spec->weights, EMBEDDING_MIN_PARALLEL),
                 columns, backward_columns, &job);
    return FFNN_OK;
}
