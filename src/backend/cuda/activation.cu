/*
 * activation.cu - the element-wise ops: activations (forward and backward side by
 * side, fp32 and bf16), the fp32 -> bf16 conversion and dropout; the gather is in
 * gather.cu, the optimizer updates in update.cu. Each is one
 * grid-stride kernel with ctx->block_1d threads per block (FFNN_CUDA_BLOCK unless
 * ffnn_cuda_set_launch; see ffnn_cuda_grid_1d_for), one thread per element (the
 * bf16 backward's f' step: eight per thread, 16-byte accesses), so the block size
 * changes no arithmetic; n may be any size_t.
 *
 * The float expressions are device_math.cuh's (the one copy; the CPU reference's
 * formulas): results agree with the CPU to an ulp or two (CUDA's expf/tanhf against
 * the C library's), and bit for bit where no libm call is involved.
 */
#include "common.cuh"
#include "core/activation.h"
#include "core/dropout.h"
#include "device_math.cuh"
#include "bf16.cuh"

/* ------------------------------------------------------------------ activations */

/* a = f(z) (ffnn_dev_act_forward, param the activation's parameter). z [n], a [n]
 * (may alias), T float or bf16 (bf16.cuh: fp32 arithmetic, one rounding on the
 * store). The identity never comes here (a copy). */
template <typename T>
static __global__ void activation_forward_kernel(ffnn_activation act, float param,
                                                 const T *z, T *a, size_t n)
{
    FFNN_CUDA_GRID_STRIDE(i, n)
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
    FFNN_CUDA_GRID_STRIDE(i, n)
        ffnn_st(dz, i, ffnn_dev_act_backward(act, param, ffnn_ld(da, i), ffnn_ld(saved, i)));
}

static ffnn_status check_activation(const char *op, ffnn_activation act)
{
    switch (act) {
    case FFNN_ACT_IDENTITY:
    case FFNN_ACT_RELU:
    case FFNN_ACT_SIGMOID:
    case FFNN_ACT_TANH:
    FFNN_ACT_CASES_AFTER_TANH:
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
    FFNN_CUDA_GRID_STRIDE(i, n) {
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
    FFNN_CUDA_GRID_STRIDE(i, n)
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
