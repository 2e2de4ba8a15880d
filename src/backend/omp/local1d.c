/* local1d.c - the 1-D locally connected layer on the pool's threads: the omp
 * backend's local1d_forward / local1d_backward, on the context's threads, and
 * ffnn_omp_local1d_forward_threads / _backward_threads on a given number (the
 * benchmark's entry point of core/local1d.h; a pool started for the call).
 *
 * Work split: forward and dx into (row, chunk of LOCAL1D_CHUNK outputs) items,
 * dW and db into chunks of outputs m (each chunk loops over the whole batch), all
 * split statically (ffnn_omp_run). Every value is computed by one thread with the reference's
 * expression and summation order (src/backend/cpu/local1d.c: z over r ascending then the
 * bias, dW and db over b ascending, dx over r ascending), so the results are the
 * reference's bits for any thread count (no fma: this file is compiled without
 * contraction, see the Makefile).
 *
 * The forward pass splits each chunk into its edges (outputs whose window leaves
 * [0, N): 'same' padding only, at most pad outputs at each end), computed with
 * the reference's checked loop (ffnn_cpu_local1d_forward_range), and its interior,
 * computed r by r over a run of outputs, z[m] += W[m,r] x[m+r-pad] - the same
 * additions in the same order per output, in a loop over m that the compiler
 * vectorises. dW, db and dx are the reference's range functions on each chunk. */
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend/cpu/cpu_ops.h"
#include "core/activation.h"
#include "core/error.h"
#include "omp_kernels.h"

enum {
    LOCAL1D_CHUNK = 4096,           /* outputs per work item (16 KiB of z: stays in L1/L2) */
    LOCAL1D_MIN_PARALLEL = 1 << 15, /* multiply-adds (batch * M * R) worth a team          */
};

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

/* The team for work multiply-adds on at most `threads` threads. */
static int team(size_t work, int threads)
{
    return work >= LOCAL1D_MIN_PARALLEL && threads > 1 ? threads : 1;
}

/* Outputs [begin, end) of row xb [N] into zb [M], then act over them. */
static void forward_chunk(const float *xb, const float *W, const float *bias, float *zb,
                          size_t N, size_t R, size_t pad, ffnn_activation act, size_t begin,
                          size_t end)
{
    /* interior: m - pad >= 0 and m + R - 1 - pad < N, i.e. m in [pad, N + pad + 1 - R) */
    size_t lo = pad, hi = N + pad + 1 > R ? N + pad + 1 - R : 0;
    lo = lo < begin ? begin : lo > end ? end : lo;
    hi = hi > end ? end : hi < lo ? lo : hi;
    ffnn_cpu_local1d_forward_range(xb, W, bias, zb, N, R, pad, begin, lo);
    for (size_t m = lo; m < hi; m++)
        zb[m] = 0.0f;
    for (size_t r = 0; r < R; r++)
        for (size_t m = lo; m < hi; m++) /* m + r - pad in [0, N) for m in [lo, hi) */
            zb[m] += W[m * R + r] * xb[m + r - pad];
    for (size_t m = lo; m < hi; m++)
        zb[m] = zb[m] + (bias ? bias[m] : 0.0f);
    ffnn_cpu_local1d_forward_range(xb, W, bias, zb, N, R, pad, hi, end);
    if (act != FFNN_ACT_IDENTITY)
        ffnn_omp_activation_forward_range(act, ffnn_act_default_param(act), zb, zb, begin, end);
}

typedef struct local1d_job {
    const float *x, *W, *bias, *dz;
    float *z, *dx, *dW, *db;
    size_t batch, N, M, R, pad, chunks, w_chunks, x_chunks;
    ffnn_activation act;
} local1d_job;

static void forward_items(void *u, size_t i0, size_t i1, size_t id)
{
    (void)id;
    const local1d_job *j = u;
    for (size_t i = i0; i < i1; i++) {
        const size_t b = i / j->chunks, c = i % j->chunks;
        const size_t begin = c * LOCAL1D_CHUNK;
        const size_t end = j->M - begin < LOCAL1D_CHUNK ? j->M : begin + LOCAL1D_CHUNK;
        forward_chunk(j->x + b * j->N, j->W, j->bias, j->z + b * j->M, j->N, j->R, j->pad,
                      j->act, begin, end);
    }
}

static void backward_items(void *u, size_t i0, size_t i1, size_t id)
{
    (void)id;
    const local1d_job *j = u;
    const size_t M = j->M, N = j->N;
    for (size_t i = i0; i < i1; i++) {
        if (i < j->w_chunks) {
            const size_t begin = i * LOCAL1D_CHUNK;
            const size_t end = M - begin < LOCAL1D_CHUNK ? M : begin + LOCAL1D_CHUNK;
            ffnn_cpu_local1d_weight_grad_range(j->x, j->dz, j->dW, j->db, j->batch, N, M, j->R,
                                               j->pad, begin, end);
        } else {
            const size_t k = i - j->w_chunks, b = k / j->x_chunks, c = k % j->x_chunks;
            const size_t begin = c * LOCAL1D_CHUNK;
            const size_t end = N - begin < LOCAL1D_CHUNK ? N : begin + LOCAL1D_CHUNK;
            ffnn_cpu_local1d_input_grad_range(j->dz + b * M, j->W, j->dx + b * N, M, j->R,
                                              j->pad, begin, end);
        }
    }
}

static void local1d_forward_on(const ffnn_omp_ctx *ctx, const float *x, const float *W,
                               const float *bias, float *z, size_t batch, size_t N, size_t R,
                               ffnn_local1d_padding padding, ffnn_activation act)
{
    const size_t M = ffnn_local1d_output_size(N, R, padding);
    if (M == 0)
        return;
    local1d_job j = {.x = x, .W = W, .bias = bias, .z = z, .batch = batch, .N = N, .M = M,
                     .R = R, .pad = ffnn_local1d_pad(R, padding),
                     .chunks = ceil_div(M, LOCAL1D_CHUNK), .act = act};
    ffnn_omp_run(ctx, team(batch * M * R, ctx->threads), batch * j.chunks, forward_items, &j);
}

static void local1d_backward_on(const ffnn_omp_ctx *ctx, const float *x, const float *W,
                                const float *dz, float *dx, float *dW, float *db,
                                size_t batch, size_t N, size_t R, ffnn_local1d_padding padding)
{
    const size_t M = ffnn_local1d_output_size(N, R, padding);
    if (M == 0)
        return;
    local1d_job j = {.x = x, .W = W, .dz = dz, .dx = dx, .dW = dW, .db = db, .batch = batch,
                     .N = N, .M = M, .R = R, .pad = ffnn_local1d_pad(R, padding),
                     .w_chunks = ceil_div(M, LOCAL1D_CHUNK),
                     .x_chunks = ceil_div(N, LOCAL1D_CHUNK)};
    const size_t items = j.w_chunks + (dx ? batch * j.x_chunks : 0);
    ffnn_omp_run(ctx, team(batch * M * R, ctx->threads), items, backward_items, &j);
}

/* A context of `threads` (<= 0: all) with a pool of its own for one call (one
 * thread when the pool cannot start). */
static void temp_ctx(ffnn_omp_ctx *c, int threads)
{
    *c = (ffnn_omp_ctx){.threads = threads};
#ifdef _OPENMP
    if (c->threads <= 0)
        c->threads = omp_get_max_threads();
#endif
    if (c->threads > 1 && ffnn_pool_create(c->threads - 1, &c->pool) != FFNN_OK)
        c->threads = 1;
    if (c->threads < 1)
        c->threads = 1;
}

void ffnn_omp_local1d_forward_threads(const float *x, const float *W, const float *bias,
                                      float *z, size_t batch, size_t N, size_t R,
                                      ffnn_local1d_padding padding, ffnn_activation act,
                                      int threads)
{
    ffnn_omp_ctx c;
    temp_ctx(&c, threads);
    local1d_forward_on(&c, x, W, bias, z, batch, N, R, padding, act);
    ffnn_pool_free(c.pool);
}

void ffnn_omp_local1d_backward_threads(const float *x, const float *W, const float *dz,
                                       float *dx, float *dW, float *db, size_t batch, size_t N,
                                       size_t R, ffnn_local1d_padding padding, int threads)
{
    ffnn_omp_ctx c;
    temp_ctx(&c, threads);
    local1d_backward_on(&c, x, W, dz, dx, dW, db, batch, N, R, padding);
    ffnn_pool_free(c.pool);
}

/* ---- the table's entries (backend.h local1d_forward, local1d_backward) ---- */

ffnn_status ffnn_omp_local1d_forward(void *vctx, const float *x, const float *W,
                                     const float *b, float *z, size_t batch, size_t N,
                                     size_t R, ffnn_local1d_padding padding,
                                     ffnn_activation act)
{
    const ffnn_omp_ctx *ctx = vctx;
    ffnn_status st = ffnn_local1d_check_outputs("omp local1d_forward", N, R, padding);
    if (st == FFNN_OK)
        local1d_forward_on(ctx, x, W, b, z, batch, N, R, padding, act);
    return st;
}

ffnn_status ffnn_omp_local1d_backward(void *vctx, const float *x, const float *W,
                                      const float *dz, float *dx, float *dW, float *db,
                                      size_t batch, size_t N, size_t R,
                                      ffnn_local1d_padding padding)
{
    const ffnn_omp_ctx *ctx = vctx;
    ffnn_status st = ffnn_local1d_check_outputs("omp local1d_backward", N, R, padding);
    if (st == FFNN_OK)
        local1d_backward_on(ctx, x, W, dz, dx, dW, db, batch, N, R, padding);
    return st;
}
