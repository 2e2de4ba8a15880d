/*
 * loss.cu - the three losses, each one kernel that writes the per-row loss, the
 * per-row "classified right" flag and (unless dout is NULL) the gradient of the
 * batch-mean loss. One warp per row: lanes stride over the row's width, then
 * fixed xor-shuffle trees combine the lanes (deterministic, no atomics). Blocks
 * of FFNN_CUDA_BLOCK threads = 8 rows; gridDim.x = ceil(batch / 8).
 *
 * Targets (backend.h): softmax_ce takes y as the class index; mse and sigmoid_bce
 * take one-hot(y) when width > 1 and y itself when width == 1, or, when the
 * float targets [batch, width] are given, those (y is then not read).
 * "Correct" (ffnn.h): argmax == y with ties to the first index; for width 1,
 * (logit > 0) == (y != 0) for softmax_ce and sigmoid_bce, (output > 0.5) == (y != 0)
 * for mse. With float targets: every output on its target's side, (logit > 0) ==
 * (t > 0.5) resp. (output > 0.5) == (t > 0.5) for all j (a warp vote).
 * The per-element float expressions are device_math.cuh's (the CPU reference's,
 * src/backend/cpu/loss.c, products rounded before sums as there), so only the
 * summation order differs.
 */
#include <limits.h>
#include <math.h>

#include "common.cuh"
#include "device_math.cuh"

#define WARP 32
#define FULL_MASK 0xffffffffu
#define ROWS_PER_BLOCK (FFNN_CUDA_BLOCK / WARP)

/* Sum of v over the warp; every lane gets the same bits (fixed butterfly). */
static __device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int off = WARP / 2; off > 0; off /= 2) v += __shfl_xor_sync(FULL_MASK, v, off);
    return v;
}

/* Max of row[0..width) and its first index, over the warp; every lane gets both.
 * Matches the CPU's "start at row[0], take j when row[j] > best". */
static __device__ __forceinline__ void warp_argmax(const float *row, int width, int lane,
                                                   float *best_out, int *index_out)
{
    float best = -INFINITY;
    int index = INT_MAX; /* "nothing yet": loses every tie */
    for (int j = lane; j < width; j += WARP) {
        const float v = row[j];
        if (index == INT_MAX || v > best) {
            best = v;
            index = j;
        }
    }
#pragma unroll
    for (int off = WARP / 2; off > 0; off /= 2) {
        const float ob = __shfl_xor_sync(FULL_MASK, best, off);
        const int oi = __shfl_xor_sync(FULL_MASK, index, off);
        if (oi != INT_MAX && (index == INT_MAX || ob > best || (ob == best && oi < index))) {
            best = ob;
            index = oi;
        }
    }
    *best_out = best;
    *index_out = index;
}

/* Target of output j of a row for sigmoid_bce and mse: the float target tr[j] when
 * tr is given, else one-hot(label) for width > 1, else label itself (width 1). */
static __device__ __forceinline__ float row_target(const float *tr, int j, int width,
                                                   int label)
{
    return tr != NULL ? tr[j] : width > 1 ? (j == label ? 1.0f : 0.0f) : (float)label;
}

/* Softmax cross-entropy on logits z, fused with its gradient:
 *   m = max_j z_j, s = sum_j exp(z_j - m), row_loss = m + log(s) - z_y,
 *   dout_j = (exp(z_j - m) / s - [j == y]) * (1/batch),
 *   correct = argmax z == y; for width 1 (degenerate) (z_0 > 0) == (y != 0).
 * z [batch,width], y class indices (a y >= width gives a NaN loss), dout
 * [batch,width] or NULL, row_loss [batch], row_correct [batch]. The rows are
 * groups of `group` (one model's batch over a model axis, ffnn_cuda_loss_models;
 * else group = batch): "batch" in dout's scale is the group's rows, and row r's
 * label is y[(r / group) * y_stride + r % group] (y_stride = group: y [batch];
 * 0: every group reads the same labels [group]). */
static __global__ void softmax_ce_kernel(const float *__restrict__ z,
                                         const int32_t *__restrict__ y, int batch, int width,
                                         int group, int y_stride, float *__restrict__ dout,
                                         float *__restrict__ row_loss,
                                         uint8_t *__restrict__ row_correct)
{
    const int lane = threadIdx.x % WARP;
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / WARP;
    if (row >= batch) return; /* whole warps leave together */
    const float *zr = z + (size_t)row * width;
    const int label = y[(row / group) * y_stride + row % group];

    float m;
    int arg;
    warp_argmax(zr, width, lane, &m, &arg);
    float part = 0.0f;
    for (int j = lane; j < width; j += WARP) part += ffnn_dev_softmax_term(zr[j], m);
    const float s = warp_sum(part);

    if (lane == 0) {
        row_loss[row] = label < width ? ffnn_dev_softmax_ce_loss(m, s, zr[label]) : NAN;
        /* one output: the CPU's rule for every loss, (z_0 > 0) == (y != 0) */
        row_correct[row] = (uint8_t)(width == 1 ? (zr[0] > 0.0f) == (label != 0) : arg == label);
    }
    if (dout != NULL) {
        const float scale = 1.0f / (float)group;
        float *dr = dout + (size_t)row * width;
        for (int j = lane; j < width; j += WARP)
            dr[j] = ffnn_dev_softmax_ce_grad(zr[j], m, s, j == label, scale);
    }
}

/* The two losses of one output against its target t (float targets, or one-hot(y)
 * for width > 1, y itself for width 1), one kernel: MSE false, sigmoid binary
 * cross-entropy on logits z, stable form:
 *   l_j = max(z_j,0) - z_j t_j + log1p(exp(-|z_j|)), row_loss = mean_j l_j,
 *   dout_j = (sigmoid(z_j) - t_j) * (1 / (batch * width)),
 *   correct = (z_0 > 0) == (y != 0) for width 1, else argmax z == y; with float
 *   targets, (z_j > 0) == (t_j > 0.5) for every j.
 * MSE true, mean squared error of outputs o:
 *   row_loss = mean_j (o_j - t_j)^2, dout_j = 2 (o_j - t_j) * (1 / (batch * width)),
 *   correct = (o_0 > 0.5) == (y != 0) for width 1, else argmax o == y; with float
 *   targets, (o_j > 0.5) == (t_j > 0.5) for every j.
 * z [batch, width] (logits or outputs), the rest as softmax_ce_kernel; targets
 * [batch, width] or NULL (then t from y). */
template <bool MSE>
static __global__ void pointwise_loss_kernel(const float *__restrict__ z,
                                             const int32_t *__restrict__ y,
                                             const float *__restrict__ targets, int batch,
                                             int width, int group, int y_stride,
                                             float *__restrict__ dout,
                                             float *__restrict__ row_loss,
                                             uint8_t *__restrict__ row_correct)
{
    const float side = MSE ? 0.5f : 0.0f; /* an output's decision threshold */
    const int lane = threadIdx.x % WARP;
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / WARP;
    if (row >= batch) return;
    const float *zr = z + (size_t)row * width;
    const float *tr = targets != NULL ? targets + (size_t)row * width : NULL;
    const int label = tr != NULL ? 0 : y[(row / group) * y_stride + row % group];
    const float scale = 1.0f / ((float)group * (float)width);

    float part = 0.0f;
    int ok = 1; /* float targets: this lane's outputs are on their targets' side */
    for (int j = lane; j < width; j += WARP) {
        const float v = zr[j];
        const float t = row_target(tr, j, width, label);
        if (MSE) {
            const float d = v - t;
            part += ffnn_dev_mse_term(d);
            if (dout != NULL) dout[(size_t)row * width + j] = ffnn_dev_mse_grad(d, scale);
        } else {
            part += ffnn_dev_bce_term(v, t);
            if (dout != NULL) dout[(size_t)row * width + j] = ffnn_dev_bce_grad(v, t, scale);
        }
        ok &= (v > side) == (t > 0.5f);
    }
    const float sum = warp_sum(part);

    int correct;
    if (tr != NULL) {
        correct = __all_sync(FULL_MASK, ok);
    } else if (width == 1) {
        correct = (zr[0] > side) == (label != 0);
    } else {
        float best;
        int arg;
        warp_argmax(zr, width, lane, &best, &arg);
        correct = arg == label;
    }
    if (lane == 0) {
        row_loss[row] = sum / (float)width;
        row_correct[row] = (uint8_t)correct;
    }
}

/* The loss kernels over rows in groups (softmax_ce_kernel's comment). */
static ffnn_status loss_launch(ffnn_cuda_ctx *ctx, const char *what, ffnn_loss loss,
                               const float *out, const int32_t *y, const float *targets,
                               size_t batch, size_t width, size_t group, size_t y_stride,
                               float *dout, float *row_loss, uint8_t *row_correct)
{
    if (batch == 0) return FFNN_OK;
    if (width == 0 || width > FFNN_CUDA_MAX_DIM || batch > FFNN_CUDA_MAX_DIM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda %s: batch=%zu width=%zu: each must be in 1..%zu", what, batch,
                         width, (size_t)FFNN_CUDA_MAX_DIM);
    if (out == NULL || (y == NULL && targets == NULL) || row_loss == NULL ||
        row_correct == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda %s: out, y (or targets), row_loss and row_correct must not "
                         "be NULL", what);
    if (targets != NULL && loss == FFNN_LOSS_SOFTMAX_CE)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda %s: softmax_ce takes class labels, not float targets", what);
    const unsigned grid = (unsigned)((batch + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    const int b = (int)batch, w = (int)width, g = (int)group, ys = (int)y_stride;
    switch (loss) {
    case FFNN_LOSS_SOFTMAX_CE:
        softmax_ce_kernel<<<grid, FFNN_CUDA_BLOCK, 0, ctx->stream>>>(out, y, b, w, g, ys, dout,
                                                                     row_loss, row_correct);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "softmax_ce_kernel");
        return FFNN_OK;
    case FFNN_LOSS_SIGMOID_BCE:
        pointwise_loss_kernel<false><<<grid, FFNN_CUDA_BLOCK, 0, ctx->stream>>>(
            out, y, targets, b, w, g, ys, dout, row_loss, row_correct);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "pointwise_loss_kernel<sigmoid_bce>");
        return FFNN_OK;
    case FFNN_LOSS_MSE:
        pointwise_loss_kernel<true><<<grid, FFNN_CUDA_BLOCK, 0, ctx->stream>>>(
            out, y, targets, b, w, g, ys, dout, row_loss, row_correct);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "pointwise_loss_kernel<mse>");
        return FFNN_OK;
    }
    return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda %s: unknown loss %d (expected 0..2)",
                     what, (int)loss);
}

extern "C" ffnn_status ffnn_cuda_loss(void *vctx, ffnn_loss loss, const float *out,
                                      const int32_t *y, const float *targets, size_t batch,
                                      size_t width, float *dout, float *row_loss,
                                      uint8_t *row_correct)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "loss");
    return loss_launch(ctx, "loss", loss, out, y, targets, batch, width, batch, batch, dout,
                       row_loss, row_correct);
}

/* backend.h ffnn_ops_models loss: count models' batches of `batch` rows each. */
extern "C" ffnn_status ffnn_cuda_loss_models(void *vctx, ffnn_loss loss, const float *out,
                                             const int32_t *y, size_t y_stride, size_t batch,
                                             size_t width, size_t count, float *dout,
                                             float *row_loss, uint8_t *row_correct)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "loss_models");
    if (count == 0 || batch == 0 || count * batch > FFNN_CUDA_MAX_DIM || y == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda loss_models: labels y and %zu "
                         "models x %zu rows (at most %zu rows) are needed", count, batch,
                         (size_t)FFNN_CUDA_MAX_DIM);
    return loss_launch(ctx, "loss_models", loss, out, y, NULL, count * batch, width, batch,
                       y_stride, dout, row_loss, row_correct);
}
