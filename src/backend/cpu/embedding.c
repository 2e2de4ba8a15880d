/* embedding.c - the embedding layer (core/embedding.h), forward and backward, CPU
 * reference: a gather of table rows by the codes, and its scatter-add.
 *
 *   forward   a[b, :P] = x[b, :P];  a[b, out_at_j + e] = W[weight_at_j + c d_j + e]
 *             (c = x[b, P + j]; zeros when c is not a level)
 *   backward  dW[weight_at_j + c d_j + e] = sum_{b : code c} dz[b, out_at_j + e]
 *
 * Summation order: each dW value over b ascending, starting from 0 (the omp and
 * cuda kernels follow it, so they give these bits). */
#include <string.h>

#include "cpu_ops.h"

void ffnn_cpu_embedding_forward_rows(const float *x, const float *W, float *a, size_t b0,
                                     size_t b1, const ffnn_embedding_spec *s)
{
    for (size_t b = b0; b < b1; b++) {
        const float *xb = x + b * s->in; /* [in]  */
        float *ab = a + b * s->out;      /* [out] */
        memcpy(ab, xb, s->passed * sizeof *ab);
        for (size_t j = 0; j < s->count; j++) {
            const ffnn_embedding_table *t = &s->table[j];
            size_t c = 0;
            if (ffnn_embedding_row(xb[s->passed + j], t->levels, &c))
                memcpy(ab + t->out_at, W + t->weight_at + c * t->dim, t->dim * sizeof *ab);
            else
                memset(ab + t->out_at, 0, t->dim * sizeof *ab);
        }
    }
}

void ffnn_cpu_embedding_forward(const float *x, const float *W, float *a, size_t batch,
                                const ffnn_embedding_spec *s)
{
    ffnn_cpu_embedding_forward_rows(x, W, a, 0, batch, s);
}

void ffnn_cpu_embedding_backward_column(const float *x, const float *dz, float *dW,
                                        size_t batch, const ffnn_embedding_spec *s, size_t j,
                                        size_t e)
{
    const ffnn_embedding_table *t = &s->table[j];
    float *col = dW + t->weight_at + e; /* rows t->dim apart */
    for (size_t c = 0; c < t->levels; c++)
        col[c * t->dim] = 0.0f;
    for (size_t b = 0; b < batch; b++) {
        size_t c = 0;
        if (ffnn_embedding_row(x[b * s->in + s->passed + j], t->levels, &c))
            col[c * t->dim] += dz[b * s->out + t->out_at + e];
    }
}

void ffnn_cpu_embedding_backward(const float *x, const float *dz, float *dW, size_t batch,
                                 const ffnn_embedding_spec *s)
{
    for (size_t j = 0; j < s->count; j++)
        for (size_t e = 0; e < s->table[j].dim; e++)
            ffnn_cpu_embedding_backward_column(x, dz, dW, batch, s, j, e);
}
