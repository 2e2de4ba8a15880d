/*
 * update.cu - the parameter updates: the optimizer step over the parameter arena
 * (backend.h optimizer_update, and the "bf16" extension's optimizer_update_bf16),
 * grad_clip and ema_update. The optimizers: plain SGD, SGD with momentum (and
 * Nesterov), Adam; with weight decay, and AdamW, one kernel of the per-element
 * step for all. Each is one grid-stride kernel with ctx->block_1d threads per
 * block, one thread per parameter; n may be any size_t. The per-step scalars come
 * from the host (ffnn_optimizer_step, passed by value); Adam's two that change
 * with t from device memory when step.device_scalars is set (a replayed graph:
 * graph.c).
 *
 * The per-parameter formulas are device_math.cuh's (every float operation spelled
 * with its rounding, in the order of the CPU reference src/backend/cpu/cpu_math.h):
 * the GPU gives the same bits as the CPU for the same inputs.
 *
 * Napkin math: per parameter sgd reads 2 and writes 1 float (12 bytes), momentum
 * 3 + 2 (20 bytes), adam 4 + 3 (28 bytes): memory-bound, ~6 us for 203,530
 * parameters at 1 TB/s.
 */
#include "common.cuh"
#include "device_math.cuh"
#include "bf16.cuh"

/* The bf16 shadow of an updated parameter (mixed precision: backend.h
 * optimizer_update_bf16): shadow[i] = bf16(p), written by the thread that wrote
 * p, in the same pass; nothing when shadow is NULL (plain optimizer_update). */
static __device__ __forceinline__ void shadow_store(__nv_bfloat16 *shadow, size_t i, float p)
{
    if (shadow != NULL) ffnn_st(shadow, i, p);
}

/* params[i] -= lr * grads[i] (ffnn_dev_sgd: product rounded first, as on the CPU).
 * params [n], grads [n], shadow [n] bf16 or NULL (every kernel below: its
 * shadow_store). */
static __global__ void sgd_update_kernel(float *__restrict__ params,
                                         const float *__restrict__ grads, size_t n, float lr,
                                         __nv_bfloat16 *__restrict__ shadow)
{
    FFNN_CUDA_GRID_STRIDE(i, n) {
        const float p = ffnn_dev_sgd(params[i], lr, grads[i]);
        params[i] = p;
        shadow_store(shadow, i, p);
    }
}

/* Adam's step_size and bias_correction2_sqrt from s.device_scalars when set (the
 * values the host computed for this step, uploaded before the graph's launch). */
static __device__ __forceinline__ void adam_scalars_load(ffnn_optimizer_step &s)
{
    if (s.device_scalars != NULL) {
        s.step_size = s.device_scalars[0];
        s.bias_correction2_sqrt = s.device_scalars[1];
    }
}

/* buf = first_step ? g : momentum buf + g;  d = nesterov ? g + momentum buf : buf;
 * params -= lr d (ffnn_dev_momentum_buf, ffnn_dev_momentum_param).
 * params [n], grads [n], buf [n] (not read at the first step). */
static __global__ void momentum_update_kernel(ffnn_optimizer_step s,
                                              float *__restrict__ params,
                                              const float *__restrict__ grads,
                                              float *__restrict__ buf, size_t n,
                                              __nv_bfloat16 *__restrict__ shadow)
{
    FFNN_CUDA_GRID_STRIDE(i, n) {
        const float g = grads[i];
        const float b = ffnn_dev_momentum_buf(&buf[i], g, s.momentum, s.first_step);
        buf[i] = b;
        const float p = ffnn_dev_momentum_param(params[i], g, b, s.momentum, s.lr, s.nesterov);
        params[i] = p;
        shadow_store(shadow, i, p);
    }
}

/* m = lerp(m, g, 1-beta1); v = beta2 v + ((1-beta2) g) g;
 * params += (-step_size m) / (sqrt(v) / bias_correction2_sqrt + eps)
 * (ffnn_dev_adam_m, ffnn_dev_adam_v, ffnn_dev_adam_param).
 * params [n], grads [n], m [n], v [n]. */
static __global__ void adam_update_kernel(ffnn_optimizer_step s, float *__restrict__ params,
                                          const float *__restrict__ grads,
                                          float *__restrict__ m, float *__restrict__ v,
                                          size_t n, __nv_bfloat16 *__restrict__ shadow)
{
    adam_scalars_load(s);
    FFNN_CUDA_GRID_STRIDE(i, n) {
        const float g = grads[i];
        const float mi = ffnn_dev_adam_m(m[i], g, s.one_minus_beta1);
        const float vi = ffnn_dev_adam_v(v[i], g, s.beta2, s.one_minus_beta2);
        m[i] = mi;
        v[i] = vi;
        const float p = ffnn_dev_adam_param(params[i], mi, vi, s.step_size,
                                            s.bias_correction2_sqrt, s.eps);
        params[i] = p;
        shadow_store(shadow, i, p);
    }
}

/* Weight decay (any optimizer) and adamw: ffnn_dev_optimizer_element per parameter.
 * params [n], grads [n], s0 [n] (buf or m; NULL for sgd), s1 [n] (v; NULL unless
 * adam(w)). */
static __global__ void decay_update_kernel(ffnn_optimizer_step s, float *__restrict__ params,
                                           const float *__restrict__ grads,
                                           float *__restrict__ s0, float *__restrict__ s1,
                                           size_t n, __nv_bfloat16 *__restrict__ shadow)
{
    adam_scalars_load(s);
    FFNN_CUDA_GRID_STRIDE(i, n) {
        ffnn_dev_optimizer_element(s, &params[i], grads[i], s0 ? &s0[i] : NULL,
                                   s1 ? &s1[i] : NULL);
        shadow_store(shadow, i, params[i]);
    }
}

/* optimizer_update, with the bf16 shadow written in the same kernel when shadow16
 * is not NULL (optimizer_update_bf16). */
static ffnn_status update(void *vctx, const ffnn_optimizer_step *step, float *params,
                          const float *grads, float *state, size_t n, uint16_t *shadow16)
{
    __nv_bfloat16 *shadow = (__nv_bfloat16 *)shadow16;
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "optimizer_update");
    if (step == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda optimizer_update: step is NULL");
    if ((int)step->kind < FFNN_OPT_SGD || (int)step->kind > FFNN_OPT_ADAMW)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda optimizer_update: unknown optimizer %d (expected 0..3)",
                         (int)step->kind);
    if (n == 0) return FFNN_OK;
    if (params == NULL || grads == NULL || (step->kind != FFNN_OPT_SGD && state == NULL))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda optimizer_update (%s): a NULL pointer",
                         ffnn_optimizer_name(step->kind));
    const unsigned blocks = ffnn_cuda_grid_1d_for(n, ctx->block_1d);
    const unsigned threads = (unsigned)ctx->block_1d;
    const size_t stride = step->state_stride ? step->state_stride : n; /* m to v */
    if (step->weight_decay != 0.0f || step->kind == FFNN_OPT_ADAMW) {
        const int two = step->kind == FFNN_OPT_ADAM || step->kind == FFNN_OPT_ADAMW;
        decay_update_kernel<<<blocks, threads, 0, ctx->stream>>>(
            *step, params, grads, step->kind == FFNN_OPT_SGD ? NULL : state,
            two ? state + stride : NULL, n, shadow);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "decay_update_kernel");
        return FFNN_OK;
    }
    switch (step->kind) {
    case FFNN_OPT_ADAMW: break; /* above */
    case FFNN_OPT_SGD:
        sgd_update_kernel<<<blocks, threads, 0, ctx->stream>>>(params, grads, n,
                                                                        step->lr, shadow);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "sgd_update_kernel");
        break;
    case FFNN_OPT_MOMENTUM:
        momentum_update_kernel<<<blocks, threads, 0, ctx->stream>>>(*step, params,
                                                                             grads, state, n,
                                                                             shadow);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "momentum_update_kernel");
        break;
    case FFNN_OPT_ADAM:
        adam_update_kernel<<<blocks, threads, 0, ctx->stream>>>(
            *step, params, grads, state, state + stride, n, shadow);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "adam_update_kernel");
        break;
    }
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_cuda_optimizer_update(void *vctx, const ffnn_optimizer_step *step,
                                                  float *params, const float *grads,
                                                  float *state, size_t n)
{
    return update(vctx, step, params, grads, state, n, NULL);
}

extern "C" ffnn_status ffnn_cuda_optimizer_update_bf16(void *vctx,
                                                       const ffnn_optimizer_step *step,
                                                       float *params, const float *grads,
                                                       float *state, size_t n,
                                                       uint16_t *shadow16)
{
    if (shadow16 == NULL && n > 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda optimizer_update_bf16: shadow16 is NULL");
    return update(vctx, step, params, grads, state, n, shadow16);
}

/* ------------------------------------------------------------------ clipping, ema */

enum { CLIP_THREADS = 1024 };

/* Clipping in one block (no host round trip, capturable): clamp by value, then
 * the norm: each thread sums g^2 of its grid-stride elements in double, a fixed
 * tree adds the 1024 partial sums (deterministic), thread 0 rounds the norm to
 * float and the coefficient (ffnn_dev_clip_coef), every thread scales its
 * elements. grads [n]; norm_out: one float or NULL. ~n / 1024 elements per thread:
 * 200 for the 203,530 parameters of seed 000's net, a few microseconds. */
static __global__ void __launch_bounds__(CLIP_THREADS)
    clip_kernel(float *__restrict__ grads, size_t n, float max_norm, float max_value,
                float *__restrict__ norm_out)
{
    __shared__ double part[CLIP_THREADS];
    __shared__ float coef;
    const unsigned t = threadIdx.x;
    double sum = 0.0;
    for (size_t i = t; i < n; i += CLIP_THREADS) {
        float g = grads[i];
        if (max_value > 0.0f) {
            g = ffnn_dev_clip_value(g, max_value);
            grads[i] = g;
        }
        sum += (double)g * (double)g;
    }
    if (!(max_norm > 0.0f))
        return;
    part[t] = sum;
    __syncthreads();
    for (unsigned half = CLIP_THREADS / 2; half > 0; half /= 2) {
        if (t < half)
            part[t] += part[t + half];
        __syncthreads();
    }
    if (t == 0) {
        const float norm = (float)sqrt(part[0]);
        coef = ffnn_dev_clip_coef(max_norm, norm);
        if (norm_out)
            *norm_out = norm;
    }
    __syncthreads();
    for (size_t i = t; i < n; i += CLIP_THREADS)
        grads[i] = __fmul_rn(grads[i], coef);
}

extern "C" ffnn_status ffnn_cuda_grad_clip(void *vctx, float *grads, size_t n, float max_norm,
                                           float max_value, float *norm_out)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "grad_clip");
    if (n == 0 || (!(max_norm > 0.0f) && !(max_value > 0.0f)))
        return FFNN_OK;
    clip_kernel<<<1, CLIP_THREADS, 0, ctx->stream>>>(grads, n, max_norm, max_value, norm_out);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "clip_kernel");
    return FFNN_OK;
}

/* ema = ema decay + (1 - decay) p (ffnn_dev_ema). ema [n], params [n]. */
static __global__ void ema_kernel(float *__restrict__ ema, const float *__restrict__ params,
                                  size_t n, float decay, float one_minus_decay)
{
    FFNN_CUDA_GRID_STRIDE(i, n)
        ema[i] = ffnn_dev_ema(ema[i], params[i], decay, one_minus_decay);
}

extern "C" ffnn_status ffnn_cuda_ema_update(void *vctx, float *ema, const float *params,
                                            size_t n, float decay, float one_minus_decay)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "ema_update");
    if (n == 0)
        return FFNN_OK;
    ema_kernel<<<ffnn_cuda_grid_1d_for(n, ctx->block_1d), (unsigned)ctx->block_1d, 0,
                 ctx->stream>>>(ema, params, n, decay, one_minus_decay);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "ema_kernel");
    return FFNN_OK;
}
