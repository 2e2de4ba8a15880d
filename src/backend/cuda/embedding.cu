/* embedding.cu - the embedding layer (core/embedding.h) on the GPU: the cuda
 * backend's embedding_forward (a gather of table rows) and embedding_backward
 * (its scatter-add, deterministic).
 *
 * forward   one thread per output value a[b, c] (grid-stride over batch * out):
 *           c < P copies x[b, c]; else c is column e of table j (found by a scan
 *           of the tables' out_at) and reads W[weight_at_j + code d_j + e], or 0.
 * backward  dW zeroed (cudaMemsetAsync), then one thread per table column (j, e)
 *           walks the batch in order, b = 0, 1, ..., adding dz[b, out_at_j + e] to
 *           dW[weight_at_j + code_b d_j + e]. No atomics: each dW value is summed
 *           by one thread, from 0, in batch order - the cpu reference's additions
 *           in its order, so the result is its bits (tolerance 0; no products, so
 *           no contraction into fma either) and the same on every run. Threads of
 *           a warp take neighbouring columns of one table: coalesced reads of dz
 *           and writes of dW. Parallelism is the sum of the dims (a few hundred
 *           threads), each taking batch steps: cheap beside the dense layers.
 * The tables travel as a kernel argument (at most FFNN_EMBEDDING_MAX_TABLES), so
 * the ops queue nothing on the host and can be captured in a graph. */
#include "common.cuh"

typedef struct emb_args {
    unsigned count;                                /* k                          */
    unsigned levels[FFNN_EMBEDDING_MAX_TABLES];    /* n_j                        */
    unsigned dim[FFNN_EMBEDDING_MAX_TABLES];       /* d_j                        */
    unsigned out_at[FFNN_EMBEDDING_MAX_TABLES];    /* first output column        */
    unsigned col_at[FFNN_EMBEDDING_MAX_TABLES];    /* out_at - P: first of the
                                                      tables' columns            */
    unsigned long long weight_at[FFNN_EMBEDDING_MAX_TABLES]; /* first weight     */
} emb_args;

/* core/embedding.h ffnn_embedding_row on the device: 1 and *row when v is an
 * integer in [0, n). */
static __device__ __forceinline__ int emb_row(float v, unsigned n, unsigned *row)
{
    if (!(v >= 0.0f && v < (float)n) || (float)(unsigned)v != v)
        return 0;
    *row = (unsigned)v;
    return 1;
}

/* The table whose columns [first, first + d_j) hold column c (of the tables'
 * columns when col, else of the output), by a scan. */
static __device__ __forceinline__ unsigned emb_table_of(const emb_args *t, unsigned c, int col)
{
    unsigned j = 0;
    while (j + 1 < t->count && (col ? t->col_at[j + 1] : t->out_at[j + 1]) <= c)
        j++;
    return j;
}

static __global__ void embedding_forward_kernel(const float *__restrict__ x,
                                                const float *__restrict__ W,
                                                float *__restrict__ a, size_t batch,
                                                unsigned in, unsigned out, unsigned passed,
                                                emb_args t)
{
    FFNN_CUDA_GRID_STRIDE(i, batch * out) {
        const size_t b = i / out;
        const unsigned c = (unsigned)(i % out);
        if (c < passed) {
            a[i] = x[b * in + c];
            continue;
        }
        const unsigned j = emb_table_of(&t, c, 0), e = c - t.out_at[j];
        unsigned row = 0;
        a[i] = emb_row(x[b * in + passed + j], t.levels[j], &row)
                   ? W[t.weight_at[j] + (unsigned long long)row * t.dim[j] + e]
                   : 0.0f;
    }
}

static __global__ void embedding_backward_kernel(const float *__restrict__ x,
                                                 const float *__restrict__ dz,
                                                 float *__restrict__ dW, size_t batch,
                                                 unsigned in, unsigned out, unsigned passed,
                                                 unsigned columns, emb_args t)
{
    FFNN_CUDA_GRID_STRIDE(c, columns) {
        const unsigned j = emb_table_of(&t, (unsigned)c, 1);
        const unsigned e = (unsigned)c - t.col_at[j], d = t.dim[j];
        float *col = dW + t.weight_at[j] + e; /* rows d apart */
        const float *dzc = dz + t.out_at[j] + e;
        for (size_t b = 0; b < batch; b++) { /* in order: the reference's sums */
            unsigned row = 0;
            if (emb_row(x[b * in + passed + j], t.levels[j], &row))
                col[(unsigned long long)row * d] += dzc[b * out];
        }
    }
}

/* The spec as the kernels' argument; FFNN_ERR_INVALID_ARGUMENT beyond its limits. */
static ffnn_status emb_pack(const char *op, const ffnn_embedding_spec *s, size_t batch,
                            emb_args *t)
{
    if (s == NULL || s->table == NULL || s->count == 0 ||
        s->count > FFNN_EMBEDDING_MAX_TABLES || s->in > FFNN_CUDA_MAX_DIM ||
        s->out > FFNN_CUDA_MAX_DIM || batch > FFNN_CUDA_MAX_DIM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda %s: expected 1 to %d tables and widths up to %zu", op,
                         FFNN_EMBEDDING_MAX_TABLES, (size_t)FFNN_CUDA_MAX_DIM);
    memset(t, 0, sizeof *t);
    t->count = (unsigned)s->count;
    for (size_t j = 0; j < s->count; j++) {
        t->levels[j] = (unsigned)s->table[j].levels;
        t->dim[j] = (unsigned)s->table[j].dim;
        t->out_at[j] = (unsigned)s->table[j].out_at;
        t->col_at[j] = (unsigned)(s->table[j].out_at - s->passed);
        t->weight_at[j] = (unsigned long long)s->table[j].weight_at;
    }
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_cuda_embedding_forward(void *vctx, const float *x, const float *W,
                                                   float *a, size_t batch,
                                                   const ffnn_embedding_spec *spec)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "embedding_forward");
    emb_args t;
    ffnn_status st = emb_pack("embedding_forward", spec, batch, &t);
    if (st != FFNN_OK || batch == 0)
        return st;
    const size_t n = batch * spec->out;
    embedding_forward_kernel<<<ffnn_cuda_grid_1d_for(n, (unsigned)ctx->block_1d), ctx->block_1d, 0,
                               ctx->stream>>>(x, W, a, batch, (unsigned)spec->in,
                                              (unsigned)spec->out, (unsigned)spec->passed, t);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "embedding_forward_kernel");
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_cuda_embedding_backward(void *vctx, const float *x, const float *dz,
                                                    float *dW, size_t batch,
                                                    const ffnn_embedding_spec *spec)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "embedding_backward");
    emb_args t;
    ffnn_status st = emb_pack("embedding_backward", spec, batch, &t);
    if (st != FFNN_OK)
        return st;
    FFNN_CUDA_CHECK(ctx, cudaMemsetAsync(dW, 0, spec->weights * sizeof(float), ctx->stream));
    const size_t columns = spec->out - spec->passed;
    if (batch == 0 || columns == 0)
        return FFNN_OK;
    const unsigned blocks = ffnn_cuda_grid_1d_for(columns, (unsigned)ctx->block_1d);
    embedding_backward_kernel<<<blocks, ctx->block_1d, 0, ctx->stream>>>(
        x, dz, dW, batch, (unsigned)spec->in, (unsigned)spec->out, (unsigned)spec->passed,
        (unsigned)columns, t);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "embedding_backward_kernel");
    return FFNN_OK;
}
