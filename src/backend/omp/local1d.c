/* local1d.c - the 1-D locally connected layer on OpenMP threads: the omp
 * backend's local1d_forward / local1d_backward, on the context's threads, and
 * ffnn_omp_local1d_forward_threads / _backward_threads on a given number (the
 * benchmark's entry point of core/local1d.h).
 *
 * Work split: forward and dx into (row, chunk of LOCAL1D_CHUNK outputs) items,
 * dW and db into chunks of outputs m (each chunk loops over the whole batch), all
 * schedule(static). Every value is computed by one thread with the reference's
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
#ifdef _OPENMP
    if (threads <= 0)
        threads = omp_get_max_threads();
#endif
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

void ffnn_omp_local1d_forward_threads(const float *x, const float *W, const float *bias,
                                      float *z, size_t batch, size_t N, size_t R,
                                      ffnn_local1d_padding padding, ffnn_activation act,
                                      int threads)
{
    const size_t M = ffnn_local1d_output_size(N, R, padding);
    const size_t pad = ffnn_local1d_pad(R, padding);
    if (M == 0)
        return;
    const size_t chunks = ceil_div(M, LOCAL1D_CHUNK);
    const long items = (long)(batch * chunks);
    const int nt = team(batch * M * R, threads);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long i = 0; i < items; i++) {
        const size_t b = (size_t)i / chunks, c = (size_t)i % chunks;
        const size_t begin = c * LOCAL1D_CHUNK;
        const size_t end = M - begin < LOCAL1D_CHUNK ? M : begin + LOCAL1D_CHUNK;
        forward_chunk(x + b * N, W, bias, z + b * M, N, R, pad, act, begin, end);
    }
}

void ffnn_omp_local1d_backward_threads(const float *x, const float *W, const float *dz,
                                       float *dx, float *dW, float *db, size_t batch, size_t N,
                                       size_t R, ffnn_local1d_padding padding, int threads)
{
    const size_t M = ffnn_local1d_output_size(N, R, padding);
    const size_t pad = ffnn_local1d_pad(R, padding);
    if (M == 0)
        return;
    const size_t w_chunks = ceil_div(M, LOCAL1D_CHUNK), x_chunks = ceil_div(N, LOCAL1D_CHUNK);
    const long items = (long)(w_chunks + (dx ? batch * x_chunks : 0));
    const int nt = team(batch * M * R, threads);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long i = 0; i < items; i++) {
        if ((size_t)i < w_chunks) {
            const size_t begin = (size_t)i * LOCAL1D_CHUNK;
            const size_t end = M - begin < LOCAL1D_CHUNK ? M : begin + LOCAL1D_CHUNK;
            ffnn_cpu_local1d_weight_grad_range(x, dz, dW, db, batch, N, M, R, pad, begin, end);
        } else {
            const size_t j = (size_t)i - w_chunks, b = j / x_chunks, c = j % x_chunks;
            const size_t begin = c * LOCAL1D_CHUNK;
            const size_t end = N - begin < LOCAL1D_CHUNK ? N : begin + LOCAL1D_CHUNK;
            ffnn_cpu_local1d_input_grad_range(dz + b * M, W, dx + b * N, M, R, pad, begin,
                                              end);
        }
    }
}


/* ---- the table's entries (backend.h local1d_forward, local1d_backward) ---- */

/* The error of a shape with no outputs (ffnn_local1d_output_size 0), naming op. */
static ffnn_status no_outputs(const char *op, size_t N, size_t R, ffnn_local1d_padding padding)
{
    return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "omp %s: N=%zu R=%zu %s has no outputs", op, N,
                     R, padding == FFNN_LOCAL1D_SAME ? "same" : "valid");
}

ffnn_status ffnn_omp_local1d_forward(void *vctx, const float *x, const float *W,
                                     const float *b, float *z, size_t batch, size_t N,
                                     size_t R, ffnn_local1d_padding padding,
                                     ffnn_activation act)
{
    const ffnn_omp_ctx *ctx = vctx;
    if (ffnn_local1d_output_size(N, R, padding) == 0)
        return no_outputs("local1d_forward", N, R, padding);
    ffnn_omp_local1d_forward_threads(x, W, b, z, batch, N, R, padding, act, ctx->threads);
    return FFNN_OK;
}

ffnn_status ffnn_omp_local1d_backward(void *vctx, const float *x, const float *W,
                                      const float *dz, float *dx, float *dW, float *db,
                                      size_t batch, size_t N, size_t R,
                                      ffnn_local1d_padding padding)
{
    const ffnn_omp_ctx *ctx = vctx;
    if (ffnn_local1d_output_size(N, R, padding) == 0)
        return no_outputs("local1d_backward", N, R, padding);
    ffnn_omp_local1d_backward_threads(x, W, dz, dx, dW, db, batch, N, R, padding, ctx->threads);
    return FFNN_OK;
}
