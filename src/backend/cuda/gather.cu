/*
 * gather.cu - the batch gather (backend.h gather; uint8 images or float rows, labels,
 * float targets), its bf16 form (the "bf16" extension's gather_bf16) and the
 * transpose that makes x^T for the "xt" extension. The gather is a grid-stride
 * kernel over rows with ctx->block_1d threads per block (a row per block row, four
 * values per thread where the rows allow); the values are copied (uint8 scaled by
 * device_math.cuh's ffnn_dev_u8_to_unit, the CPU reference's formula), so the bits
 * are the CPU's.
 */
#include "common.cuh"
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
