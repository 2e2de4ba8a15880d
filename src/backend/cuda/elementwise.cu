/*
 * elementwise.cu - the memory-bound ops: batch gather (uint8 images or float rows,
 * labels, float targets), a transpose, activations (forward and backward side by side); the
 * optimizer updates are in optim.cu. Each is one
 * grid-stride kernel with ctx->block_1d threads per block (FFNN_CUDA_BLOCK unless
 * ffnn_cuda_set_launch; see ffnn_cuda_grid_1d_for), one thread per element (the
 * bf16 backward's f' step: eight per thread, 16-byte accesses; the gather: a row
 * per block row, four values per thread where the rows allow), so the block size
 * changes no arithmetic; n may be any size_t.
 *
 * The float expressions are device_math.cuh's (the one copy; the CPU reference's
 * formulas): results agree with the CPU to an ulp or two (CUDA's expf/tanhf against
 * the C library's), and bit for bit where no libm call is involved.
 */
#include "common.cuh"
#include "core/dropout.h"
#include "device_math.cuh"
#include "bf16.cuh"

/* ------------------------------------------------------------------ gather */

/* One sample row's features as float: a uint8 pixel p as p / 255
 * (ffnn_dev_u8_to_unit), a float value as it is. */
static __device__ __forceinline__ float gather_value(uint8_t p) { return ffnn_dev_u8_to_unit(p); }
static __device__ __forceinline__ float gather_value(float v) { return v; }

/* V values of type S loaded at once (V 1, or 4 when the rows allow it: gather's
 * launch), and V values of T stored at once. */
template <typename S, int V> struct gather_vec;
template <typename S> struct gather_vec<S, 1> { S v[1]; };
template <> struct __align__(4) gather_vec<uint8_t, 4> { uint8_t v[4]; };
template <> struct __align__(16) gather_vec<float, 4> { float v[4]; };
template <typename T, int V> struct gather_out;
template <typename T> struct gather_out<T, 1> { T v[1]; };
template <> struct __align__(16) gather_out<float, 4> { float v[4]; };
template <> struct __align__(8) gather_out<__nv_bfloat16, 4> { __nv_bfloat16 v[4]; };

/* dst[b, j] = value(src[index[b], j]) for b < batch, j < width (value: gather_value,
 * then ffnn_st's rounding into T: float, or bf16 to nearest even), and y[b] =
 * labels[index[b]] when labels is set. src S [n, width] (uint8 pixels or float
 * values), index int32 [batch], dst T [batch, width], labels int32 [n] or NULL,
 * y int32 [batch]. Rows of the grid's y dimension (a grid-stride loop over the
 * batch), V consecutive values per thread along the row (the x dimension): no
 * division per element, and with V = 4 one 4- or 16-byte load and one 8- or
 * 16-byte store per thread (gather: width % 4 == 0 and aligned rows). */
template <typename S, typename T, int V>
static __global__ void gather_rows_kernel(const S *__restrict__ src,
                                          const int32_t *__restrict__ labels,
                                          const int32_t *__restrict__ index, size_t batch,
                                          unsigned width, T *__restrict__ dst,
                                          int32_t *__restrict__ y)
{
    const unsigned j0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    const unsigned jstride = gridDim.x * blockDim.x * V;
    for (size_t b = blockIdx.y; b < batch; b += gridDim.y) {
        const size_t from = (size_t)index[b];
        const gather_vec<S, V> *in = (const gather_vec<S, V> *)(src + from * width);
        gather_out<T, V> *out = (gather_out<T, V> *)(dst + b * width);
        for (unsigned j = j0; j < width; j += jstride) {
            const gather_vec<S, V> v = in[j / V];
            gather_out<T, V> o;
#pragma unroll
            for (int k = 0; k < V; k++) ffnn_st(o.v, (size_t)k, gather_value(v.v[k]));
            out[j / V] = o;
        }
        if (labels != NULL && j0 == 0) y[b] = labels[from];
    }
}

/* Queue gather_rows_kernel for rows of width values: V = 4 when the width and
 * the three base addresses allow 4-value accesses, else V = 1. */
template <typename S, typename T>
static void gather_rows(ffnn_cuda_ctx *ctx, const S *src, const int32_t *labels,
                        const int32_t *index, size_t batch, size_t width, T *dst, int32_t *y)
{
    const int vec4 = width % 4 == 0 && (uintptr_t)src % sizeof(gather_vec<S, 4>) == 0 &&
                     (uintptr_t)dst % sizeof(gather_out<T, 4>) == 0;
    const size_t per_thread = vec4 ? 4 : 1;
    const unsigned block = (unsigned)ctx->block_1d;
    /* threads along a row: enough for one pass over it, in whole blocks */
    const size_t xs = ((width + per_thread - 1) / per_thread + block - 1) / block;
    /* rows at once: the rest loops (4096 keeps a few blocks per SM busy) */
    const dim3 grid((unsigned)(xs < 65535 ? xs : 65535), (unsigned)(batch < 4096 ? batch : 4096));
    if (vec4)
        gather_rows_kernel<S, T, 4><<<grid, block, 0, ctx->stream>>>(src, labels, index, batch,
                                                                      (unsigned)width, dst, y);
    else
        gather_rows_kernel<S, T, 1><<<grid, block, 0, ctx->stream>>>(src, labels, index, batch,
                                                                      (unsigned)width, dst, y);
}

/* gather (T float) and gather_bf16 (T bf16): x of type T. */
template <typename T>
static ffnn_status gather(void *vctx, const ffnn_gather_source *src, const int32_t *index,
                          size_t batch, T *x, int32_t *y, float *t)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "gather");
    if (src == NULL) return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda gather: src is NULL");
    if (batch == 0) return FFNN_OK;
    const size_t features = src->features, width = src->target_width;
    if (features == 0 || features > FFNN_CUDA_MAX_DIM || batch > SIZE_MAX / features ||
        (src->targets != NULL &&
         (width == 0 || width > FFNN_CUDA_MAX_DIM || batch > SIZE_MAX / width)))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda gather: batch=%zu features=%zu target_width=%zu: widths must "
                         "be in 1..%zu and batch*width must fit size_t", batch, features, width,
                         (size_t)FFNN_CUDA_MAX_DIM);
    if ((src->images == NULL) == (src->values == NULL))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda gather: expected exactly one of images and values");
    if (index == NULL || x == NULL || (src->labels != NULL && y == NULL) ||
        (src->targets != NULL && t == NULL))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda gather: a NULL pointer");
    /* the labels ride along with the features (as before float data existed) */
    if (src->images != NULL) {
        gather_rows<uint8_t, T>(ctx, src->images, src->labels, index, batch, features, x, y);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "gather_rows_kernel (images)");
    } else {
        gather_rows<float, T>(ctx, src->values, src->labels, index, batch, features, x, y);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "gather_rows_kernel (values)");
    }
    if (src->targets != NULL) {
        gather_rows<float, float>(ctx, src->targets, NULL, index, batch, width, t, NULL);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "gather_rows_kernel (targets)");
    }
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_cuda_gather(void *vctx, const ffnn_gather_source *src,
                                        const int32_t *index, size_t batch, float *x,
                                        int32_t *y, float *t)
{
    return gather<float>(vctx, src, index, batch, x, y, t);
}

extern "C" ffnn_status ffnn_cuda_gather_bf16(void *vctx, const ffnn_gather_source *src,
                                             const int32_t *index, size_t batch, uint16_t *x16,
                                             int32_t *y, float *t)
{
    return gather<__nv_bfloat16>(vctx, src, index, batch, (__nv_bfloat16 *)x16, y, t);
}

/* ------------------------------------------------------------------ transpose */

/* dst [cols, rows] = src^T (backend.h prepare_xt outside tf32x3, K-major operands):
 * 32 x 32 tiles through shared memory (rows padded by one: no bank conflicts),
 * blocks of 32 x 8 threads, each thread 4 rows of its tile, so that the loads
 * and the stores are 128-byte rows. Grid: x the column tiles, y the row tiles
 * (a grid-stride loop past 65535). A copy, exact. As fast as cuBLAS's geam at
 * 1024 x 1024 on an H200 (3.04-3.40 against 3.10-3.31 us, git show 6b96639:bench/lt_survey.cu,
 * docs/RESULTS.md history); ours because it runs on the second stream, where the
 * cuBLAS handle (bound to the ops' stream) does not. */
#define TR_TILE 32
#define TR_ROWS 8
static __global__ void __launch_bounds__(TR_TILE *TR_ROWS)
transpose_kernel(const float *__restrict__ src, unsigned rows, unsigned cols,
                 float *__restrict__ dst)
{
    __shared__ float tile[TR_TILE][TR_TILE + 1];
    const unsigned tiles_y = (rows + TR_TILE - 1) / TR_TILE;
    const unsigned c = blockIdx.x * TR_TILE + threadIdx.x; /* the column loaded   */
    for (unsigned ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
        const unsigned r0 = ty * TR_TILE;
        for (unsigned k = threadIdx.y; k < TR_TILE; k += TR_ROWS)
            if (r0 + k < rows && c < cols) tile[k][threadIdx.x] = src[(size_t)(r0 + k) * cols + c];
        __syncthreads();
        const unsigned r = r0 + threadIdx.x; /* the row stored, as dst's column   */
        for (unsigned k = threadIdx.y; k < TR_TILE; k += TR_ROWS) {
            const unsigned cc = blockIdx.x * TR_TILE + k;
            if (cc < cols && r < rows) dst[(size_t)cc * rows + r] = tile[threadIdx.x][k];
        }
        __syncthreads(); /* the tile is reused by the next round */
    }
}

extern "C" ffnn_status ffnn_cuda_transpose(void *vctx, const float *src, size_t rows,
                                           size_t cols, float *dst)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "transpose");
    if (rows == 0 || cols == 0 || rows > FFNN_CUDA_MAX_DIM || cols > FFNN_CUDA_MAX_DIM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda transpose: rows=%zu cols=%zu: each must be in 1..%zu", rows,
                         cols, (size_t)FFNN_CUDA_MAX_DIM);
    if (src == NULL || dst == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda transpose: a NULL pointer");
    const size_t tiles_x = (cols + TR_TILE - 1) / TR_TILE, tiles_y = (rows + TR_TILE - 1) / TR_TILE;
    if (tiles_x > 0x7fffffffu)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda transpose: cols=%zu too wide", cols);
    const dim3 grid((unsigned)tiles_x, (unsigned)(tiles_y < 65535 ? tiles_y : 65535));
    transpose_kernel<<<grid, dim3(TR_TILE, TR_ROWS), 0, ctx->stream>>>(src, (unsigned)rows,
                                                                        (unsigned)cols, dst);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "transpose_kernel");
    return FFNN_OK;
}

/* ------------------------------------------------------------------ activations */

/* a = f(z) (ffnn_dev_act_forward, param the activation's parameter). z [n], a [n]
 * (may alias), T float or bf16 (bf16.cuh: fp32 arithmetic, one rounding on the
 * store). The identity never comes here (a copy). */
template <typename T>
static __global__ void activation_forward_kernel(ffnn_activation act, float param,
                                                 const T *z, T *a, size_t n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        ffnn_st(a, i, ffnn_dev_act_forward(act, param, ffnn_ld(z, i)));
}

/* dz = da * f'(z) from the saved value (ffnn_dev_act_backward: a = f(z), or z for
 * gelu, gelu_tanh, silu, mish, hardswish). saved [n], da [n], dz [n] (may alias da),
 * T as above. The identity never comes here (a copy). */
template <typename T>
static __global__ void activation_backward_kernel(ffnn_activation act, float param,
                                                  const T *saved, const T *da, T *dz,
                                                  size_t n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        ffnn_st(dz, i, ffnn_dev_act_backward(act, param, ffnn_ld(da, i), ffnn_ld(saved, i)));
}

static ffnn_status check_activation(const char *op, ffnn_activation act)
{
    switch (act) {
    case FFNN_ACT_IDENTITY:
    case FFNN_ACT_RELU:
    case FFNN_ACT_SIGMOID:
    case FFNN_ACT_TANH:
    case FFNN_ACT_LEAKY_RELU:
    case FFNN_ACT_ELU:
    case FFNN_ACT_SOFTPLUS:
    case FFNN_ACT_GELU:
    case FFNN_ACT_GELU_TANH:
    case FFNN_ACT_SILU:
    case FFNN_ACT_MISH:
    case FFNN_ACT_HARDSWISH:
        return FFNN_OK;
    }
    return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                     "cuda %s: unknown activation %d (expected 0..11)", op, (int)act);
}

extern "C" ffnn_status ffnn_cuda_activation_forward(void *vctx, ffnn_activation act,
                                                    float param, const float *z, float *a,
                                                    size_t n)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "activation_forward");
    ffnn_status st = check_activation("activation_forward", act);
    if (st != FFNN_OK) return st;
    if (n == 0) return FFNN_OK;
    if (z == NULL || a == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda activation_forward: a NULL pointer");
    if (act == FFNN_ACT_IDENTITY) {
        if (a != z)
            FFNN_CUDA_CHECK(ctx, cudaMemcpyAsync(a, z, n * sizeof(float),
                                                 cudaMemcpyDeviceToDevice, ctx->stream));
        return FFNN_OK;
    }
    activation_forward_kernel<float><<<ffnn_cuda_grid_1d_for(n, ctx->block_1d), ctx->block_1d, 0, ctx->stream>>>(
        act, param, z, a, n);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "activation_forward_kernel");
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_cuda_activation_backward(void *vctx, ffnn_activation act,
                                                     float param, const float *saved,
                                                     const float *da, float *dz, size_t n)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "activation_backward");
    ffnn_status st = check_activation("activation_backward", act);
    if (st != FFNN_OK) return st;
    if (n == 0) return FFNN_OK;
    if (da == NULL || dz == NULL || (saved == NULL && act != FFNN_ACT_IDENTITY))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda activation_backward: a NULL pointer");
    if (act == FFNN_ACT_IDENTITY) {
        if (dz != da)
            FFNN_CUDA_CHECK(ctx, cudaMemcpyAsync(dz, da, n * sizeof(float),
                                                 cudaMemcpyDeviceToDevice, ctx->stream));
        return FFNN_OK;
    }
    activation_backward_kernel<float><<<ffnn_cuda_grid_1d_for(n, ctx->block_1d), ctx->block_1d, 0, ctx->stream>>>(
        act, param, saved, da, dz, n);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "activation_backward_kernel");
    return FFNN_OK;
}

/* The same two kernels on bf16 tensors (the mixed-precision pipeline, cublas.cu):
 * act 1..3 (relu, sigmoid, tanh; the identity is nothing to do in place). */
extern "C" ffnn_status ffnn_cuda_activation_forward_bf16(ffnn_cuda_ctx *ctx, ffnn_activation act,
                                                         uint16_t *a16, size_t n)
{
    if (act == FFNN_ACT_IDENTITY || n == 0) return FFNN_OK;
    __nv_bfloat16 *a = (__nv_bfloat16 *)a16;
    activation_forward_kernel<__nv_bfloat16><<<ffnn_cuda_grid_1d_for(n, ctx->block_1d),
                                               ctx->block_1d, 0, ctx->stream>>>(act, 0.0f, a,
                                                                                a, n);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "activation_forward_kernel<bf16>");
    return FFNN_OK;
}

/* activation_backward_kernel<bf16> in place (dz = da) with 16-byte accesses: each
 * thread reads eight bf16 of saved and of dz per uint4 load and writes eight back
 * (bf16.cuh ffnn_unpack8 / ffnn_pack8), grid-stride over the n / 8 words; the last
 * n % 8 elements one per thread. ACT (relu, sigmoid or tanh) is a template
 * argument, so the switch of ffnn_dev_act_backward folds away; per element the
 * same widening, the same ffnn_dev_act_backward and the same rounding as the scalar
 * kernel, so the same bits (tests/test_mixed.c checks them against the host).
 * saved and dz [n] bf16, both 16-byte aligned (the entry point checks). The scalar
 * kernel on an H200 ran at 1.9 TB/s on 4096 x 4096 (52 us; 2-byte accesses). */
template <int ACT>
static __global__ void activation_backward_bf16x8_kernel(const uint4 *__restrict__ saved,
                                                         uint4 *__restrict__ dz, size_t n)
{
    const size_t words = n / 8, stride = (size_t)gridDim.x * blockDim.x;
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (size_t w = t; w < words; w += stride) {
        float v[8], g[8], r[8];
        ffnn_unpack8(saved[w], v);
        ffnn_unpack8(dz[w], g);
#pragma unroll
        for (int k = 0; k < 8; k++)
            r[k] = ffnn_dev_act_backward((ffnn_activation)ACT, 0.0f, g[k], v[k]);
        dz[w] = ffnn_pack8(r);
    }
    const __nv_bfloat16 *s1 = (const __nv_bfloat16 *)saved;
    __nv_bfloat16 *d1 = (__nv_bfloat16 *)dz;
    for (size_t i = words * 8 + t; i < n; i += stride) /* the tail: fewer than 8 */
        ffnn_st(d1, i, ffnn_dev_act_backward((ffnn_activation)ACT, 0.0f, ffnn_ld(d1, i),
                                             ffnn_ld(s1, i)));
}

/* dz16 = bf16(dz16 * f'(saved16)) in place: the 16-byte kernel above where both
 * pointers are 16-byte aligned (ffnn's buffers are: cudaMalloc'ed, offsets of
 * whole rows), else activation_backward_kernel<bf16> (one element per thread). */
extern "C" ffnn_status ffnn_cuda_activation_backward_bf16(ffnn_cuda_ctx *ctx, ffnn_activation act,
                                                          const uint16_t *saved16,
                                                          uint16_t *dz16, size_t n)
{
    if (act == FFNN_ACT_IDENTITY || n == 0) return FFNN_OK;
    __nv_bfloat16 *dz = (__nv_bfloat16 *)dz16;
    const unsigned block = (unsigned)ctx->block_1d;
    if ((((uintptr_t)saved16 | (uintptr_t)dz16) & 15u) == 0 &&
        (act == FFNN_ACT_RELU || act == FFNN_ACT_SIGMOID || act == FFNN_ACT_TANH)) {
        const size_t words = n / 8;
        const unsigned grid = ffnn_cuda_grid_1d_for(words > 0 ? words : 1, block);
        const uint4 *s4 = (const uint4 *)saved16;
        uint4 *d4 = (uint4 *)dz16;
        if (act == FFNN_ACT_RELU)
            activation_backward_bf16x8_kernel<FFNN_ACT_RELU><<<grid, block, 0, ctx->stream>>>(
                s4, d4, n);
        else if (act == FFNN_ACT_SIGMOID)
            activation_backward_bf16x8_kernel<FFNN_ACT_SIGMOID>
                <<<grid, block, 0, ctx->stream>>>(s4, d4, n);
        else
            activation_backward_bf16x8_kernel<FFNN_ACT_TANH><<<grid, block, 0, ctx->stream>>>(
                s4, d4, n);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "activation_backward_bf16x8_kernel");
        return FFNN_OK;
    }
    activation_backward_kernel<__nv_bfloat16><<<ffnn_cuda_grid_1d_for(n, block), block, 0,
                                                ctx->stream>>>(
        act, 0.0f, (const __nv_bfloat16 *)saved16, dz, dz, n);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "activation_backward_kernel<bf16>");
    return FFNN_OK;
}

/* ------------------------------------------------------------------ bf16 copies */

/* dst[r * ld + c] = bf16(src[i]), i = r * cols + c (round to nearest even).
 * src [n = rows * cols], dst [rows, ld]. */
static __global__ void to_bf16_copy_kernel(const float *__restrict__ src,
                                           __nv_bfloat16 *__restrict__ dst, size_t n,
                                           size_t cols, size_t ld)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const size_t r = i / cols;
        ffnn_st(dst, i + r * (ld - cols), src[i]);
    }
}

extern "C" ffnn_status ffnn_cuda_to_bf16(void *vctx, const float *src, uint16_t *dst16,
                                         size_t rows, size_t cols, size_t ld)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "to_bf16");
    if (rows == 0 || cols == 0) return FFNN_OK;
    if (src == NULL || dst16 == NULL || ld < cols || rows > SIZE_MAX / ld)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda to_bf16: rows=%zu cols=%zu ld=%zu (ld >= cols, non-NULL "
                         "pointers)", rows, cols, ld);
    const size_t n = rows * cols;
    to_bf16_copy_kernel<<<ffnn_cuda_grid_1d_for(n, ctx->block_1d), (unsigned)ctx->block_1d, 0,
                          ctx->stream>>>(src, (__nv_bfloat16 *)dst16, n, cols, ld);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "to_bf16_copy_kernel");
    return FFNN_OK;
}

/* ------------------------------------------------------------------ dropout */

/* out[i] = keep(i) ? in[i] * scale : 0, the mask from core/dropout.h (the same
 * integer code as the CPU's: the same mask). in [n], out [n] (may equal in). */
static __global__ void dropout_kernel(const float *in, float *out, size_t n, uint64_t key,
                                      uint32_t threshold, float scale)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = ffnn_dropout_keep(key, i, threshold) ? __fmul_rn(in[i], scale) : 0.0f;
}

extern "C" ffnn_status ffnn_cuda_dropout(void *vctx, const float *in, float *out, size_t n,
                                         uint64_t key, uint32_t threshold, float scale)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "dropout");
    if (n == 0)
        return FFNN_OK;
    dropout_kernel<<<ffnn_cuda_grid_1d_for(n, ctx->block_1d), (unsigned)ctx->block_1d, 0,
                     ctx->stream>>>(in, out, n, key, threshold, scale);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "dropout_kernel");
    return FFNN_OK;
}
