/*
 * optim.cu - the optimizer updates over the parameter arena (backend.h
 * optimizer_update): plain SGD, SGD with momentum (and Nesterov), Adam. Each is
 * one grid-stride kernel with ctx->block_1d threads per block, one thread per
 * parameter; n may be any size_t. The per-step scalars come from the host
 * (ffnn_optimizer_step, passed by value).
 *
 * Every float operation is spelled with its rounding (__fmul_rn, __fadd_rn,
 * __fdiv_rn, __fsqrt_rn, __fmaf_rn) in the order of the CPU reference
 * (src/cpu/update.c), so that nvcc cannot contract or reassociate: the GPU gives
 * the same bits as the CPU for the same inputs.
 *
 * Napkin math: per parameter sgd reads 2 and writes 1 float (12 bytes), momentum
 * 3 + 2 (20 bytes), adam 4 + 3 (28 bytes): memory-bound, ~6 us for 203,530
 * parameters at 1 TB/s.
 */
#include "common.cuh"

/* params[i] -= lr * grads[i] (product rounded first, as on the CPU).
 * params [n], grads [n]. */
static __global__ void sgd_update_kernel(float *__restrict__ params,
                                         const float *__restrict__ grads, size_t n, float lr)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        params[i] = __fsub_rn(params[i], __fmul_rn(lr, grads[i]));
}

/* buf = first_step ? g : momentum buf + g;  d = nesterov ? g + momentum buf : buf;
 * params -= lr d.  params [n], grads [n], buf [n]. */
static __global__ void momentum_update_kernel(ffnn_optimizer_step s,
                                              float *__restrict__ params,
                                              const float *__restrict__ grads,
                                              float *__restrict__ buf, size_t n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float g = grads[i];
        const float b = s.first_step ? g : __fadd_rn(__fmul_rn(buf[i], s.momentum), g);
        buf[i] = b;
        const float d = s.nesterov ? __fmaf_rn(s.momentum, b, g) : b;
        params[i] = __fmaf_rn(-s.lr, d, params[i]);
    }
}

/* PyTorch's lerp: a + w (b - a) for |w| < 0.5, else b - (1 - w)(b - a), one fma. */
static __device__ float lerp_torch(float a, float b, float w)
{
    const float diff = __fsub_rn(b, a);
    return fabsf(w) < 0.5f ? __fmaf_rn(w, diff, a) : __fmaf_rn(__fsub_rn(w, 1.0f), diff, b);
}

/* m = lerp(m, g, 1-beta1); v = beta2 v + ((1-beta2) g) g;
 * params += (-step_size m) / (sqrt(v) / bias_correction2_sqrt + eps).
 * params [n], grads [n], m [n], v [n]. */
static __global__ void adam_update_kernel(ffnn_optimizer_step s, float *__restrict__ params,
                                          const float *__restrict__ grads,
                                          float *__restrict__ m, float *__restrict__ v,
                                          size_t n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float g = grads[i];
        const float mi = lerp_torch(m[i], g, s.one_minus_beta1);
        const float vi =
            __fadd_rn(__fmul_rn(v[i], s.beta2), __fmul_rn(__fmul_rn(s.one_minus_beta2, g), g));
        m[i] = mi;
        v[i] = vi;
        const float denom =
            __fadd_rn(__fdiv_rn(__fsqrt_rn(vi), s.bias_correction2_sqrt), s.eps);
        params[i] = __fadd_rn(params[i], __fdiv_rn(__fmul_rn(-s.step_size, mi), denom));
    }
}

extern "C" ffnn_status ffnn_cuda_optimizer_update(void *vctx, const ffnn_optimizer_step *step,
                                                  float *params, const float *grads,
                                                  float *state, size_t n)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "optimizer_update");
    if (step == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda optimizer_update: step is NULL");
    if (step->kind != FFNN_OPT_SGD && step->kind != FFNN_OPT_MOMENTUM &&
        step->kind != FFNN_OPT_ADAM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda optimizer_update: unknown optimizer %d (expected 0..2)",
                         (int)step->kind);
    if (n == 0) return FFNN_OK;
    if (params == NULL || grads == NULL || (step->kind != FFNN_OPT_SGD && state == NULL))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda optimizer_update (%s): a NULL pointer",
                         ffnn_optimizer_name(step->kind));
    const unsigned blocks = ffnn_cuda_grid_1d_for(n, ctx->block_1d);
    const unsigned threads = (unsigned)ctx->block_1d;
    switch (step->kind) {
    case FFNN_OPT_SGD:
        sgd_update_kernel<<<blocks, threads, 0, ctx->stream>>>(params, grads, n,
                                                                        step->lr);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "sgd_update_kernel");
        break;
    case FFNN_OPT_MOMENTUM:
        momentum_update_kernel<<<blocks, threads, 0, ctx->stream>>>(*step, params,
                                                                             grads, state, n);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "momentum_update_kernel");
        break;
    case FFNN_OPT_ADAM:
        adam_update_kernel<<<blocks, threads, 0, ctx->stream>>>(
            *step, params, grads, state, state + n, n);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "adam_update_kernel");
        break;
    }
    return FFNN_OK;
}
