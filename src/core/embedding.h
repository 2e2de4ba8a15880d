/*
 * embedding.h - the embedding layer: learned vectors for the integer codes of a
 * table's high-cardinality categorical columns (the first layer only).
 *
 * The layer's input row x [in] holds P = in - k values passed through, then k
 * codes, one per embedded column j (its level id as a float). Table j has n_j
 * levels of d_j values each; the tables lie one after another in the weight
 * W [sum_j n_j d_j] (table j, row c at W + weight_at_j + c d_j). The output
 * row a [out], out = P + sum_j d_j:
 *
 *   a[b, p]                 = x[b, p]                          p < P
 *   a[b, out_at_j + e]      = W[weight_at_j + c d_j + e]       e < d_j, c = x[b, P + j]
 *                           = 0   when c is not an integer in [0, n_j) (an unseen or
 *                                 missing level, NaN: the one-hot's all-zero row)
 * Backward, given dz [batch, out] (no input gradient: the codes are not learnt):
 *   dW[weight_at_j + c d_j + e] = sum over b with code c, in order b = 0, 1, ...,
 *                                 of dz[b, out_at_j + e]          (overwritten)
 * Every backend sums in that order (the cuda kernel too: bit-equal to the cpu
 * reference). Shapes of W and the order of the tables: docs/FORMATS.md.
 */
#ifndef FFNN_EMBEDDING_H
#define FFNN_EMBEDDING_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many embedded columns in a layer (the cuda kernels take the
 * tables as a kernel argument). */
#define FFNN_EMBEDDING_MAX_TABLES 64

typedef struct ffnn_embedding_table {
    size_t levels;    /* n_j: rows of the table                          */
    size_t dim;       /* d_j: values per row                             */
    size_t weight_at; /* sum_{i<j} n_i d_i: the table's first weight     */
    size_t out_at;    /* P + sum_{i<j} d_i: its first output column      */
} ffnn_embedding_table;

typedef struct ffnn_embedding_spec {
    size_t in, out;              /* the layer's widths: in = passed + count     */
    size_t passed;               /* P: inputs passed through unchanged          */
    size_t count;                /* k in [1, FFNN_EMBEDDING_MAX_TABLES]         */
    size_t weights;              /* sum_j n_j d_j: the floats of W              */
    ffnn_embedding_table *table; /* [count], owned by the model's layer         */
} ffnn_embedding_spec;

/* The row of code v in a table of n levels into *row: 1, or 0 when v is not an
 * integer in [0, n) (NaN included): then the zero vector. */
static inline int ffnn_embedding_row(float v, size_t n, size_t *row)
{
    if (!(v >= 0.0f && v < (float)n) || (float)(size_t)v != v)
        return 0;
    *row = (size_t)v;
    return 1;
}

/* fastai's rule for a column of n levels: min(600, round(1.6 n^0.56)), at least
 * 1 (rounded half to even, as Python's round). */
size_t ffnn_embedding_dim_rule(size_t n);

/* Fill in in, out, passed, weights and each table's weight_at and out_at from
 * in and the tables' levels and dims (count, table set). 0, or -1 when P would
 * be negative. */
int ffnn_embedding_layout(ffnn_embedding_spec *s);

/* CPU reference (single thread), the formulas above: x [batch, in] -> a
 * [batch, out]; and dW [weights] from x and dz [batch, out]. */
void ffnn_cpu_embedding_forward(const float *x, const float *W, float *a, size_t batch,
                                const ffnn_embedding_spec *s);
void ffnn_cpu_embedding_backward(const float *x, const float *dz, float *dW, size_t batch,
                                 const ffnn_embedding_spec *s);

#ifdef __cplusplus
}
#endif
#endif
